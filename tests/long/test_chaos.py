"""Chaos tier: a real run rides out killed actors, a restarted bus and hostile messages.

One ``rlar train`` run with every actor kind of a routed run (feeder, router, rollout, reward worker,
sandbox, learner) on a nats-server this test owns. A schedule drawn from a seed, keyed to the learner's
progress (fault k fires ``delay`` seconds after the learner first reports step ``at_step``):

- every actor kind is killed once, with SIGKILL or SIGTERM drawn from the seed (the supervisor restarts it);
  with ``RLAR_CHAOS_FULL=1`` (``make test-chaos``) twice, once with each signal, over a longer run;
- the nats-server is SIGKILLed once and started again on the same port with the same storage;
- twice, every subject an actor consumes gets malformed, truncated, oversized (a real message padded to
  ~900 KB), duplicated (a real message published again) and wrong-typed messages.

Then, from the streams and the learner's records (``groups.jsonl``, ``metrics.jsonl``):
no prompt lost (every prompt a stage acknowledged reached the next one, and every prompt is retired or
still in flight), none trained twice, learner steps contiguous (a restart resumes right after a
checkpoint), every dead-letter entry carries a reason, and the run finishes.

The seed and the schedule are printed; ``RLAR_CHAOS_SEED=<seed> pytest -m chaos`` replays a failure.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import functools
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from bus import subjects, topology
from bus.client import Bus
from bus.codec import decode, encode, unpack
from bus.config import NatsConfig
from bus.embedded import EmbeddedServer
from bus.messages import (
    Completion,
    DeadLetter,
    Event,
    Heartbeat,
    LearnerProgress,
    Metrics,
    Prompt,
    RewardGroup,
    SampleGroup,
    SandboxRequest,
    ScoredItem,
    ScoreGroup,
    ScoreItem,
    ToolRef,
    ToolRegistered,
    WeightsAnnounce,
)
from tests.support.env import actor_env

pytestmark = [pytest.mark.chaos, pytest.mark.slow]

KINDS = ("feeder", "router", "rollout", "reward", "sandbox", "learner")
TASKS = ("arith", "copy", "translate", "humaneval")
# `make test-long`'s run kills each actor kind once (the signal drawn from the seed, so runs cover both); the full
# schedule (each kind with each signal) over a longer run is `make test-chaos`'s.
FULL = os.environ.get("RLAR_CHAOS_FULL") == "1"
MAX_STEPS = 40 if FULL else 30
# Faults fire at steps 2..LAST_FAULT_STEP; the steps after it are a margin for the harness: a learner with a
# backlog of rewarded groups trains several steps in a second, so faults keyed near the last step could find
# the run already finished (a CI run reached step 28 while the fault due at step 24 was being applied).
LAST_FAULT_STEP = MAX_STEPS - 15
CHECKPOINT_EVERY = 5
GROUP = 4
GARBAGE = ("malformed", "truncated", "oversized", "duplicated", "wrong-typed")
STALL_S = 8 * 60.0  # longest wait for the learner's next awaited step

CONFIG = """
[train]
name = "chaos"
max_minutes = 20.0
plot_every = 1000
actors = {{ sandbox = 1, reward = 1, learner = 1, rollout = 1, feeder = 1, router = 1 }}
[nats]
url = "{url}"
[topology]
learner_ack_wait_s = 20.0
prompt_ack_wait_s = 10.0
score_ack_wait_s = 10.0
[policy]
source = "tiny"
sft_steps = 0
[feeder]
routing = "router"
tasks = [{{ name = "arith", weight = 2.0 }}, {{ name = "copy", weight = 1.0 }}, {{ name = "translate", weight = 1.0 }},
         {{ name = "humaneval", weight = 0.3 }}]
[router]
agent = {{ backend = "offline" }}
synthesis = false
wait_s = 5.0
fallback = {{ "*" = [{{ tool = "normalized_match" }}] }}
[rollout]
group_size = {group}
batch_prompts = 4
max_new_tokens = 6
engine = {{ kind = "transformers", model = "{{run_dir}}/policy/init" }}
[learner]
prompts_per_step = 4
max_steps = {max_steps}
checkpoint_every = {ckpt}
keepalive_s = 5.0
trainer = {{ model_dir = "{{run_dir}}/policy/init", lr = 1e-4, micro_batch_size = 32, \
grpo = {{ group_size = {group}, max_staleness = 2 }} }}
"""


# ---- the schedule ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Fault:
    at_step: int
    delay_s: float
    action: str  # kill | restart-bus | inject
    target: str = ""  # actor kind for kill
    sig: str = ""  # SIGKILL | SIGTERM

    def __str__(self) -> str:
        what = {
            "kill": f"{self.sig} {self.target}",
            "restart-bus": "SIGKILL + restart nats-server",
            "inject": "inject garbage on every consumed subject",
        }[self.action]
        return f"step {self.at_step:>2} +{self.delay_s:.1f}s: {what}"


def schedule(seed: int) -> list[Fault]:
    rng = random.Random(seed)
    if FULL:
        kills = [Fault(0, 0.0, "kill", kind, sig) for kind in KINDS for sig in ("SIGKILL", "SIGTERM")]
    else:
        kills = [Fault(0, 0.0, "kill", kind, rng.choice(("SIGKILL", "SIGTERM"))) for kind in KINDS]
    rng.shuffle(kills)
    others = [Fault(0, 0.0, "restart-bus"), Fault(0, 0.0, "inject"), Fault(0, 0.0, "inject")]
    faults = kills + others
    rng.shuffle(faults)
    steps = sorted(rng.sample(range(2, LAST_FAULT_STEP + 1), len(faults)))
    return [
        dataclasses.replace(f, at_step=s, delay_s=round(rng.uniform(0.0, 1.5), 2))
        for f, s in zip(faults, steps, strict=True)
    ]


class Stalled(AssertionError):
    """The run stopped making progress."""


# ---- watching the run -----------------------------------------------------------------------------------


class Watch:
    """What the test sees on the bus: live actor pids, the learner's step, real messages to replay."""

    def __init__(self) -> None:
        self.pids: dict[str, tuple[int, float]] = {}
        self.max_step = 0
        self.step = 0  # the current learner's step: its latest metrics, or where it resumed
        self.stepped = asyncio.Event()
        self.captured: dict[str, bytes] = {}
        # Each restarted learner in order: (the last step its predecessor reported, the step it resumed at).
        # The predecessor's own last step, not the run's highest: a learner stopped while redoing steps after
        # an earlier SIGKILL is behind the highest step the run reached.
        self.resumed: list[tuple[int, int]] = []
        self.learner_kills: list[tuple[str, int]] = []  # (signal, the run's highest step when it was sent)

    async def start(self, bus: Bus) -> None:
        async def on_hb(msg: Heartbeat, raw: object) -> None:
            if msg.state == "running":
                self.pids[msg.actor] = (msg.pid, time.monotonic())

        async def on_metrics(msg: Metrics, raw: object) -> None:
            self.max_step = max(self.max_step, msg.step)
            self.step = msg.step
            self.stepped.set()

        async def capture(raw: Any) -> None:
            if not raw.data or (raw.headers or {}).get("Chaos"):
                return
            self.captured[_family(raw.subject)] = raw.data

        await bus.subscribe(subjects.HEARTBEAT_ALL, Heartbeat, on_hb)

        async def on_event(msg: Event, raw: object) -> None:
            if msg.kind == "resumed":
                self.resumed.append((self.step, int(msg.data["step"])))
                self.step = int(msg.data["step"])

        await bus.subscribe(subjects.metrics("learner"), Metrics, on_metrics)
        await bus.subscribe(subjects.events("learner"), Event, on_event)
        for pattern in (
            subjects.PROMPTS_ALL,
            subjects.ROUTED_ALL,
            subjects.SAMPLES_ALL,
            subjects.SCORE_ALL,
            subjects.REWARDS_ALL,
            subjects.WEIGHTS,
            subjects.LEARNER_PROGRESS,
            subjects.TOOLS_REGISTERED,
            subjects.metrics("learner"),
        ):
            await bus.nc.subscribe(pattern, cb=capture)

    async def until_step(self, step: int, deadline: float) -> None:
        while self.max_step < step:
            self.stepped.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                raise Stalled(f"the learner never reached step {step} (at {self.max_step})")
            try:
                await asyncio.wait_for(self.stepped.wait(), min(left, 5.0))
            except TimeoutError:
                pass

    def dump_stacks(self) -> None:
        """Ask every live actor to log its threads' and tasks' stacks (SIGUSR1), for the failure report."""
        for kind, (pid, _) in self.pids.items():
            if _is_actor(pid, kind):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGUSR1)

    async def live_pid(self, kind: str, deadline: float) -> int:
        """The pid of the running ``kind`` replica (fresh heartbeat, process still there and still it)."""
        while time.monotonic() < deadline:
            if self.max_step >= MAX_STEPS:
                raise Stalled(
                    f"the run reached its last step {MAX_STEPS} before a {kind} replica could be killed"
                )
            pid, seen = self.pids.get(kind, (0, 0.0))
            if pid and time.monotonic() - seen < 10 and _is_actor(pid, kind):
                return pid
            await asyncio.sleep(0.2)
        raise AssertionError(f"no running {kind} replica to kill")


def _family(subject: str) -> str:
    """Subjects grouped by consumer: rlar.samples.arith -> rlar.samples."""
    for fixed in (subjects.WEIGHTS, subjects.LEARNER_PROGRESS, subjects.TOOLS_REGISTERED):
        if subject == fixed:
            return subject
    return subject.rsplit(".", 1)[0] + "."


def _is_actor(pid: int, kind: str) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"actors" in argv and kind.encode() in argv


# ---- hostile messages -----------------------------------------------------------------------------------

CONSUMED: list[tuple[str, type, bool]] = [
    # (subject, the type its consumer expects, published to a stream)
    *[(subjects.prompts(t), Prompt, True) for t in TASKS],
    *[(subjects.routed(t), Prompt, True) for t in TASKS],
    *[(subjects.samples(t), SampleGroup, True) for t in TASKS],
    *[(subjects.rewards(t), RewardGroup, True) for t in TASKS],
    *[(subjects.score(k), ScoreGroup, True) for k in ("rule", "metric", "sandbox")],
    (subjects.WEIGHTS, WeightsAnnounce, True),
    (subjects.LEARNER_PROGRESS, LearnerProgress, True),
    (subjects.TOOLS_REGISTERED, ToolRegistered, True),
    (subjects.metrics("learner"), Metrics, True),
    (subjects.events("synthesizer"), Event, True),
    (subjects.SANDBOX_EXEC, SandboxRequest, False),
]
DURABLE = ("rlar.prompts.", "rlar.routed.", "rlar.samples.", "rlar.rewards.", "rlar.score.")


def _template(cls: type, n: str) -> Any:
    """A valid message of ``cls`` about nothing real (ids start with ``chaos-``)."""
    ref = ToolRef(tool="exact_match", kind="rule")
    return {
        Prompt: lambda: Prompt(
            prompt_id=f"chaos-{n}", task="arith", prompt="1+1=", reference="2", tools=[ref]
        ),
        SampleGroup: lambda: SampleGroup(
            prompt_id=f"chaos-{n}",
            generation="g",
            task="arith",
            group_size=GROUP,
            prompt_token_ids=[5, 6],
            policy_version=0,
            tools=[ref],
            completions=[Completion(index=0, token_ids=[7], logprobs=[-1.0], text="x")],
        ),
        RewardGroup: lambda: RewardGroup(
            prompt_id=f"chaos-{n}",
            generation="g",
            task="arith",
            tool="exact_match",
            tool_version=1,
            items=[ScoredItem(index=0, status="ok", score=1.0)],
        ),
        ScoreGroup: lambda: ScoreGroup(
            prompt_id=f"chaos-{n}",
            generation="g",
            task="arith",
            tools=[ref],
            query="1+1=",
            items=[ScoreItem(index=0, response="2")],
            reference="2",
        ),
        WeightsAnnounce: lambda: WeightsAnnounce(
            version=0, uri="file:///nonexistent", sha256="0", size_bytes=0, step=0
        ),
        LearnerProgress: lambda: LearnerProgress(version=0, step=0, consumed_prompts=0, dropped_prompts=0),
        ToolRegistered: lambda: ToolRegistered(name="exact_match", version=1, kind="rule", by="chaos"),
        Metrics: lambda: Metrics(actor="chaos", step=0, values={}),
        Event: lambda: Event(actor="chaos", kind="chaos", message="chaos"),
        SandboxRequest: lambda: SandboxRequest(code="print(1)", request_id=f"chaos-{n}"),
    }[cls]()


def hostile(kind: str, cls: type, real: bytes | None) -> bytes:
    n = uuid.uuid4().hex[:8]
    valid = real if real is not None else encode(_template(cls, n))
    if kind == "malformed":
        return b"\xc1\xc1chaos: not MessagePack"
    if kind == "truncated":
        return valid[: max(1, len(valid) // 2)]
    if kind == "oversized":  # a real message with an unknown 900 KB field: valid, and huge
        import msgpack

        return msgpack.packb({**unpack(valid), "chaos_pad": "x" * 900_000}, use_bin_type=True)
    if kind == "duplicated":
        return valid
    wrong = Heartbeat(actor="chaos", instance=n, host="chaos", pid=1, uptime_s=0.0)
    return encode(wrong if cls is not Heartbeat else _template(RewardGroup, n))


async def inject(bus: Bus, captured: dict[str, bytes], log: list[str]) -> int:
    count = 0
    for subject, cls, stream in CONSUMED:
        for kind in GARBAGE:
            payload = hostile(kind, cls, captured.get(_family(subject)))
            if stream:  # retried through a bus that is still coming back (a restart just before)
                headers = {"Nats-Msg-Id": uuid.uuid4().hex, "Chaos": kind}
                publish = functools.partial(bus.js.publish, subject, payload, headers=headers)
                await bus.retrying(publish, f"inject on {subject}")
            else:
                await bus.nc.publish(subject, payload, headers={"Chaos": kind})
            count += 1
    log.append(f"injected {count} messages ({', '.join(GARBAGE)}) on {len(CONSUMED)} subjects")
    return count


# ---- the run --------------------------------------------------------------------------------------------


def _kill(pid: int, sig: str) -> None:
    os.kill(pid, getattr(signal, sig))


async def chaos_run(
    tmp: Path, seed: int, faults: list[Fault]
) -> tuple[subprocess.CompletedProcess[str], list[str], str]:
    run = tmp / "run"
    server = EmbeddedServer(tmp / "nats")
    server.start()
    cfg = tmp / "chaos.toml"
    cfg.write_text(CONFIG.format(url=server.url, group=GROUP, max_steps=MAX_STEPS, ckpt=CHECKPOINT_EVERY))
    out = open(tmp / "train.out", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "rlar.app.cli", "train", "--config", str(cfg), "--run-dir", str(run)],
        cwd=tmp,
        env={**actor_env(), "DS_ACCELERATOR": "cpu"},
        stdout=out,
        stderr=subprocess.STDOUT,
        text=True,
    )
    log: list[str] = []
    bus = await Bus.connect(NatsConfig(url=server.url), name="chaos")
    watch = Watch()
    await watch.start(bus)
    try:
        for f in faults:
            # A generous bound on each stretch between faults: restarts on a busy machine take minutes.
            deadline = time.monotonic() + STALL_S
            await watch.until_step(f.at_step, deadline)
            if watch.max_step <= f.at_step:  # behind schedule (a slow restart before): fire at once
                await asyncio.sleep(f.delay_s)
            t = f"[{time.strftime('%H:%M:%S')} step {watch.max_step}] {f}"
            if f.action == "kill":
                pid = await watch.live_pid(f.target, deadline)
                _kill(pid, f.sig)
                watch.pids.pop(f.target, None)
                log.append(f"{t}: pid {pid}")
                if f.target == "learner":
                    watch.learner_kills.append((f.sig, watch.max_step))
            elif f.action == "restart-bus":
                assert server.proc is not None
                server.proc.kill()
                server.proc.wait()
                server = EmbeddedServer(tmp / "nats", port=server.port, monitor_port=server.monitor_port)
                server.start()
                log.append(f"{t}: back up")
            else:
                await inject(bus, watch.captured, log)
                log.append(t)
        await watch.until_step(MAX_STEPS, time.monotonic() + STALL_S)
        rc = await asyncio.to_thread(proc.wait, STALL_S)
    except BaseException as exc:
        if isinstance(exc, (Stalled, subprocess.TimeoutExpired)):
            watch.dump_stacks()
            await asyncio.sleep(5)
        proc.kill()
        proc.wait()
        raise Stalled("\n".join([str(exc), *log])) from exc
    finally:
        out.close()
    try:
        problems = await check_invariants(bus, run, log, watch)
    finally:
        await bus.close()
        server.stop()
    done = subprocess.CompletedProcess(proc.args, rc, (tmp / "train.out").read_text(), "")
    return done, log, problems


# ---- the invariants -------------------------------------------------------------------------------------


async def _stream(bus: Bus, stream: str) -> list[tuple[int, str, bytes]]:
    info = await bus.js.stream_info(stream)
    out = []
    for seq in range(info.state.first_seq, info.state.last_seq + 1):
        try:
            m = await bus.js.get_msg(stream, seq)
        except Exception:
            continue
        if m.headers and m.headers.get("Chaos"):
            continue
        out.append((seq, m.subject or "", m.data or b""))
    return out


async def _ack_floor(bus: Bus, stream: str, durable: str) -> int:
    return int((await bus.js.consumer_info(stream, durable)).ack_floor.stream_seq)


async def check_invariants(bus: Bus, run: Path, log: list[str], watch: Watch) -> str:
    """Every violated invariant, one line each ('' when all hold); what held goes to ``log``."""
    from actors.learner import read_journal

    problems: list[str] = []
    journal = read_journal(run / "groups.jsonl")
    retired: collections.Counter[str] = collections.Counter(p for e in journal for p in e["prompt_ids"])
    twice = [p for p, n in retired.items() if n > 1]
    if twice:
        problems.append(f"retired (trained or dropped) more than once: {twice[:10]}")

    fed, routed = {}, {}
    for seq, subject, data in await _stream(bus, topology.PROMPTS):
        p = decode(data, Prompt)
        if p.prompt_id.startswith("chaos-"):
            continue
        (fed if subject.startswith("rlar.prompts.") else routed).setdefault(p.prompt_id, seq)
    # Per prompt: the stream sequences of its sample messages, and how many samples they carry per generation.
    samples: dict[str, list[int]] = collections.defaultdict(list)
    generated: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for seq, _, data in await _stream(bus, topology.SAMPLES):
        g = decode(data, SampleGroup)
        samples[g.prompt_id].append(seq)
        generated[g.prompt_id][g.generation] += len(g.completions)
    router_floor = await _ack_floor(bus, topology.PROMPTS, topology.ROUTER)
    rollout_floor = await _ack_floor(bus, topology.PROMPTS, topology.ROLLOUT)
    learner_floor = await _ack_floor(bus, topology.SAMPLES, topology.LEARNER_SAMPLES)
    phantom = [p for p in retired if not p.startswith("chaos-") and p not in routed]
    if phantom:
        problems.append(f"retired but never routed: {phantom[:10]}")
    lost = [
        f"{p} (router acked, never routed)"
        for p, seq in fed.items()
        if seq <= router_floor and p not in routed
    ]
    for p, seq in routed.items():
        if p in retired:
            continue
        if seq <= rollout_floor and max(generated[p].values(), default=0) < GROUP:
            lost.append(f"{p} (rollout acked, {dict(generated[p])} samples per generation)")
        elif samples.get(p) and max(samples[p]) <= learner_floor:
            lost.append(f"{p} (learner acked its samples, never retired)")
    if lost:
        problems.append(f"prompts lost: {lost[:10]} ({len(lost)} in all)")
    in_flight = len([p for p in routed if p not in retired])
    log.append(
        f"prompts: {len(fed)} fed, {len(routed)} routed, {len(retired)} retired once "
        f"({sum(e['outcome'] == 'dropped' for e in journal)} retirements as stale), {in_flight} in flight"
    )

    # Checkpoints: every CHECKPOINT_EVERY steps, and where a learner stopped by SIGTERM saved before leaving
    # (it loses no step); a SIGKILLed learner resumes at one of them, so its successor redoes the steps since.
    pairs = list(zip(watch.learner_kills, watch.resumed, strict=False))
    graceful = {resumed for (sig, _), (_, resumed) in pairs if sig == "SIGTERM"}
    ckpts = {0, *range(CHECKPOINT_EVERY, MAX_STEPS + 1, CHECKPOINT_EVERY), *graceful}
    if len(watch.resumed) != len(watch.learner_kills):
        problems.append(f"{len(watch.learner_kills)} learner kills but {len(watch.resumed)} resumes")
    for (sig, _), (at, resumed) in pairs:
        if sig == "SIGTERM" and resumed < at:
            problems.append(f"learner stopped by SIGTERM at step {at} resumed at {resumed}: steps lost")
        if sig == "SIGKILL" and (resumed > at + 1 or resumed not in ckpts):
            problems.append(f"learner SIGKILLed at step {at} resumed at {resumed}, not at a checkpoint")
    log.append(
        f"learner kills (signal, run's step) {watch.learner_kills} → (predecessor's last step, resumed "
        f"at) {watch.resumed}"
    )

    steps = [json.loads(x)["step"] for x in (run / "metrics.jsonl").read_text().splitlines()]
    bad = [(a, b) for a, b in itertools.pairwise(steps) if b != a + 1 and not (b - 1 <= a and b - 1 in ckpts)]
    if not steps or steps[0] != 1 or bad or steps[-1] != MAX_STEPS:
        problems.append(
            f"learner steps not contiguous from a checkpoint: first {steps[:1]}, jumps {bad}, "
            f"last {steps[-1:]}"
        )
    redone = [(a, b - 1) for a, b in itertools.pairwise(steps) if b != a + 1]
    log.append(
        f"learner steps 1..{steps[-1] if steps else 0}; redone after a resume (from → checkpoint): {redone}"
    )

    dead = await _stream(bus, topology.DLQ)
    reasons = collections.Counter()
    for _, subject, data in dead:
        d = decode(data, DeadLetter)
        if not d.reason.strip() or not d.subject:
            problems.append(f"dead letter without a reason on {subject}")
        reasons[_family(d.subject)] += 1
    for prefix in DURABLE:
        if not reasons.get(prefix):
            problems.append(f"no dead letter for the garbage injected on {prefix}*")
    log.append(f"dead letters, all with a reason: {dict(reasons)}")
    return "\n".join(problems)


@pytest.mark.timeout(60 * 60)
def test_a_run_rides_out_killed_actors_a_restarted_bus_and_hostile_messages(tmp_path: Path) -> None:
    seed = int(os.environ.get("RLAR_CHAOS_SEED") or random.SystemRandom().randrange(2**31))
    faults = schedule(seed)
    header = "\n".join(
        [f"chaos seed {seed} (replay: RLAR_CHAOS_SEED={seed} pytest -m chaos)", *map(str, faults)]
    )
    print(header, flush=True)
    t0 = time.monotonic()
    run = tmp_path / "run"

    def logs() -> str:
        return "".join(
            f"\n--- {p.name}\n" + p.read_text(errors="replace")[-6000:]
            for p in sorted((run / "logs").glob("*.log"))
        )

    try:
        done, log, problems = asyncio.run(chaos_run(tmp_path, seed, faults))
    except Stalled as exc:
        raise AssertionError(
            f"{header}\n--- stalled after {time.monotonic() - t0:.0f}s\n{exc}{logs()}"
        ) from None
    report = f"{header}\n--- what happened ({time.monotonic() - t0:.0f}s)\n" + "\n".join(log)
    print(report, flush=True)
    summary = json.loads((run / "summary.json").read_text())
    # The policy here is the untrained tiny model (no warm-up): in some runs no group of its steps gets a
    # reward signal, and `rlar train` then ends with its documented "NO UPDATES" verdict, exit 1. That verdict
    # is about learning, not about riding out faults; any other non-zero exit fails.
    no_updates = done.returncode == 1 and summary.get("updates") == 0 and not summary.get("fatal")
    assert done.returncode == 0 or no_updates, (
        f"{report}\n--- rlar train (exit {done.returncode})\n{done.stdout[-3000:]}{logs()}"
    )
    assert summary["reason"] == "finished", f"{report}\n{summary}"
    assert not problems, f"{report}\n--- violated\n{problems}{logs()}"
