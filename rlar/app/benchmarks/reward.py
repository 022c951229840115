"""``rlar bench reward``: reward-service figures on an embedded nats-server, in one run (< 2 minutes).

1. Sandbox executions/s with 1 and 2 sandbox actors (in this process; each jail is its own process tree),
   ``concurrency = 1`` per actor so the worker count is the parallelism: requests of a small program with
   three assert tests, all sent at once through ``rlar.sandbox_client.sandbox_run``.
2. Rule-tool scores/s: one reward worker (in this process, one tool worker process) scoring
   ``exact_match`` requests end to end — publish ``ScoreGroup`` (one response each) → executor →
   ``RewardGroup`` published and received — with distinct responses so nothing comes from the cache.
3. I/O-bound scaling: an LLM-judge tool pointed at a local Messages-API endpoint with a fixed latency
   (``rlar.standins.anthropic_server``), served by 1, 2, 4 and 8 reward-worker *processes*
   (``python -m actors reward-judge``), each with ``judge_concurrency`` calls in flight. Workers are warmed
   up (every one has served a request) before the timed batch. Reported: rewards/s per worker count and the
   ratio to linear scaling, ``rate(n) / (n * rate(1))`` (target >= 0.8).

Not measured: reward models (CPU-bound model forward passes; their throughput is the model's) and the real
remote judge API.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from actors.reward import RewardConfig, RewardWorker
from actors.runtime import in_process
from actors.sandbox import SandboxActor, SandboxActorConfig
from bus import subjects
from bus.client import Bus
from bus.codec import encode
from bus.config import NatsConfig
from bus.embedded import serve
from bus.messages import (
    Heartbeat,
    RewardGroup,
    SandboxRequest,
    ScoreGroup,
    ScoreItem,
    ToolKind,
    ToolRef,
)
from bus.topology import ensure_topology
from rlar.registry import ToolRegistry
from rlar.sandbox import SandboxConfig, check_sandbox
from rlar.sandbox_client import sandbox_run
from rlar.standins.anthropic_server import MessagesServer
from rlar.tools import builtin_specs

log = logging.getLogger("rlar.bench.reward")

REPO = Path(__file__).resolve().parents[3]
_PROGRAM = "def add(a, b):\n    return a + b\n"
_TESTS = ["assert add(1, 2) == 3", "assert add(-1, 1) == 0", "assert add(2, 2) == 4"]
START_TIMEOUT_S = 300.0
"""How long the in-process sandbox and reward workers may take to start (a cold machine)."""


async def _sandbox_rate(bus: Bus, url: str, run_dir: Path, workers: int, n: int, mode: str) -> float:

    actors = [
        SandboxActor(
            SandboxActorConfig(
                nats=NatsConfig(url=url),
                run_dir=str(run_dir),
                mode=mode,  # type: ignore[arg-type]
                concurrency=1,
            )
        )
        for _ in range(workers)
    ]
    async with in_process(*actors, timeout_s=START_TIMEOUT_S, check=False):

        def req() -> SandboxRequest:
            return SandboxRequest(code=_PROGRAM, tests=_TESTS, style="asserts")

        warm = await asyncio.gather(*(sandbox_run(bus, req(), 60) for _ in range(2 * workers)))
        if any(r.status != "ok" for r in warm):
            raise RuntimeError(f"sandbox warm-up failed: {[r.reason for r in warm if r.status != 'ok']}")
        t0 = time.perf_counter()
        results = await asyncio.gather(*(sandbox_run(bus, req(), 120) for _ in range(n)))
        elapsed = time.perf_counter() - t0
        bad = [r for r in results if r.status != "ok"]
        if bad:
            raise RuntimeError(f"{len(bad)} sandbox runs failed: {bad[0].reason}")
        return n / elapsed


def _request(tok: str, i: int | str, tool: ToolRef, query: str, response: str, reference: str) -> ScoreGroup:
    """A request of one response (so requests/s = scores/s, as the worker's concurrency counts requests)."""
    return ScoreGroup(
        prompt_id=f"{tok}-{i}",
        generation="g",
        task=tok,
        tools=[tool],
        query=query,
        items=[ScoreItem(index=0, response=response)],
        reference=reference,
    )


async def collect_rewards(
    bus: Bus, task: str, reqs: list[ScoreGroup], timeout_s: float
) -> tuple[float, list[RewardGroup]]:
    """Publish ``reqs`` (one tool and a distinct prompt id each) and wait for all their rewards; (seconds from
    first publish to last reward, one ``RewardGroup`` per request)."""
    want = {r.prompt_id for r in reqs}
    got: dict[str, RewardGroup] = {}
    done = asyncio.Event()

    async def on_reward(msg: RewardGroup, raw: object) -> None:
        if msg.prompt_id in want and msg.prompt_id not in got and msg.items:
            got[msg.prompt_id] = msg
            if len(got) == len(want):
                done.set()

    sub = await bus.subscribe(subjects.rewards(task), RewardGroup, on_reward)
    t0 = time.perf_counter()
    acks = [
        bus.js.publish(
            subjects.score(r.tools[0].kind), _encode(r), headers={"Nats-Msg-Id": f"{r.prompt_id}/q"}
        )
        for r in reqs
    ]
    await asyncio.gather(*acks)
    try:
        await asyncio.wait_for(done.wait(), timeout_s)
    finally:
        await sub.unsubscribe()
    return time.perf_counter() - t0, list(got.values())


def _require_ok(rewards: list[RewardGroup], what: str) -> None:
    """Raise ``RuntimeError("<what> failed: <first failure's reason>")`` when any reward is not ok."""
    failure = next((it for r in rewards for it in r.items if it.status != "ok"), None)
    if failure is not None:
        raise RuntimeError(f"{what} failed: {failure.reason}")


def _encode(msg: Any) -> bytes:

    return encode(msg)


async def _rule_rate(bus: Bus, url: str, run_dir: Path, n: int) -> float:

    worker = RewardWorker(
        RewardConfig(
            nats=NatsConfig(url=url),
            run_dir=str(run_dir),
            kinds=["rule"],
            concurrency={"rule": 32},
            fetch={"rule": 64},
        )
    )
    async with in_process(worker, timeout_s=START_TIMEOUT_S, check=False):
        tok = f"bench_rule_{uuid.uuid4().hex[:6]}"

        def reqs(k: int, tag: str) -> list[ScoreGroup]:
            tool = ToolRef(tool="exact_match", kind=ToolKind.RULE)
            return [_request(tok, f"{tag}{i}", tool, "copy:abc=", f"r{tag}{i}", "rw1") for i in range(k)]

        await collect_rewards(bus, tok, reqs(50, "w"), 60)  # warm-up: tool worker process started, tool built
        elapsed, rewards = await collect_rewards(bus, tok, reqs(n, "m"), 120)
        _require_ok(rewards, "rule scoring")
        return n / elapsed


def _spawn_judge_worker(url: str, run_dir: Path, instance: str, concurrency: int) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["NO_PROXY"] = "127.0.0.1,localhost"
    env.pop("ANTHROPIC_API_KEY", None)
    logf = open(run_dir / f"{instance}.log", "wb")
    try:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "actors",
                "reward-judge",
                "--nats",
                url,
                "--instance",
                instance,
                "--set",
                f"run.dir={run_dir}",
                "--set",
                f"reward.concurrency.judge={concurrency}",
                "--set",
                f"reward.fetch.judge={concurrency}",
                "--set",
                "reward.heartbeat_s=0.25",
                "--set",
                "reward.register_builtins=false",
                "--log-level",
                "WARNING",
            ],
            env=env,
            cwd=REPO,
            stdout=logf,
            stderr=subprocess.STDOUT,
        )
    finally:
        logf.close()


async def _judge_rate(
    bus: Bus, url: str, run_dir: Path, workers: int, tool: str, concurrency: int, per_worker: int
) -> float:
    instances = [f"bj{workers}-{i}-{uuid.uuid4().hex[:4]}" for i in range(workers)]
    beats: dict[str, Heartbeat] = {}

    async def on_hb(msg: Heartbeat, raw: object) -> None:
        if msg.instance in instances:
            beats[msg.instance] = msg

    sub = await bus.subscribe("rlar.heartbeat.reward.>", Heartbeat, on_hb)
    procs = [_spawn_judge_worker(url, run_dir, inst, concurrency) for inst in instances]
    try:
        deadline = time.monotonic() + 90
        while len([b for b in beats.values() if b.state == "running"]) < workers:
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                raise RuntimeError(f"judge workers did not start; see {run_dir}/*.log")
            await asyncio.sleep(0.05)
        tok = f"bench_judge_{workers}_{uuid.uuid4().hex[:6]}"

        def reqs(k: int, tag: str) -> list[ScoreGroup]:
            ref = ToolRef(tool=tool, kind=ToolKind.JUDGE)
            return [_request(tok, f"{tag}{i}", ref, "What is 2+2?", f"4 ({tag}{i})", "4") for i in range(k)]

        # Warm up until every worker has built the judge (imported the SDK) and served a request.
        for round_ in range(10):
            _, warm = await collect_rewards(bus, tok, reqs(2 * workers * concurrency, f"w{round_}-"), 60)
            _require_ok(warm, "judge warm-up")
            await asyncio.sleep(0.6)  # a heartbeat with the executor's counts
            served = {
                i for i, b in beats.items() if (b.info.get("executors", {}).get("judge", {}).get("inputs", 0))
            }
            if len(served) == workers:
                break
        n = per_worker * workers
        elapsed, rewards = await collect_rewards(bus, tok, reqs(n, "m"), 180)
        _require_ok(rewards, "judge scoring")
        return n / elapsed
    finally:
        await sub.unsubscribe()
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                await asyncio.to_thread(p.wait, 20)
            except subprocess.TimeoutExpired:
                p.kill()


async def run(
    *, quick: bool = False, judge_latency_s: float = 0.05, judge_concurrency: int = 2
) -> dict[str, Any]:
    """All figures in one run on a fresh embedded server; returns the JSON document."""

    t_start = time.perf_counter()
    doc: dict[str, Any] = {"cpu_count": os.cpu_count(), "quick": quick}
    with tempfile.TemporaryDirectory(prefix="rlar-bench-reward-") as tmp:
        run_dir = Path(tmp)
        with (
            serve("embedded", run_dir) as url,
            MessagesServer(delay_s=judge_latency_s, record=False) as judge,
        ):
            bus = await Bus.connect(NatsConfig(url=url), name="bench-reward")
            try:
                await ensure_topology(bus.js)
                reg = ToolRegistry(bus)
                await reg.ensure_builtins(by="bench")

                mode = "bwrap" if check_sandbox(SandboxConfig()) is None else "rlimit-only"
                doc["sandbox_mode"] = mode
                n_sb = 24 if quick else 80
                s1 = await _sandbox_rate(bus, url, run_dir, 1, n_sb, mode)
                s2 = await _sandbox_rate(bus, url, run_dir, 2, n_sb, mode)
                doc.update(
                    sandbox_exec_per_s_1_worker=round(s1, 1),
                    sandbox_exec_per_s_2_workers=round(s2, 1),
                    sandbox_scaling_2_vs_linear=round(s2 / (2 * s1), 3),
                )

                n_rule = 300 if quick else 3000
                doc["rule_scores_per_s"] = round(await _rule_rate(bus, url, run_dir, n_rule), 1)
                doc["rule_requests"] = n_rule

                base = next(s for s in builtin_specs() if s.name == "llm_judge")
                tool = await reg.register(
                    base.replace(
                        name="bench_judge",
                        impl="llm_judge",
                        params={
                            **base.params,
                            "model": "bench-judge",
                            "base_url": judge.url,
                            "api_key_env": "RLAR_BENCH_NO_KEY",
                            "max_concurrency": judge_concurrency,
                            "max_retries": 0,
                            "timeout_s": 30,
                            "deadline_s": 60,
                        },
                    ),
                    by="bench",
                )
                per_slot_s = 1.0 if quick else 3.0  # seconds of ideal work per worker in the timed batch
                per_worker = max(4, int(per_slot_s * judge_concurrency / judge_latency_s))
                counts = (1, 2) if quick else (1, 2, 4, 8)
                rates: dict[str, float] = {}
                for w in counts:
                    rates[str(w)] = round(
                        await _judge_rate(bus, url, run_dir, w, tool.name, judge_concurrency, per_worker), 1
                    )
                ratios = {k: round(v / (int(k) * rates["1"]), 3) for k, v in rates.items()}
                doc.update(
                    judge_latency_s=judge_latency_s,
                    judge_concurrency_per_worker=judge_concurrency,
                    judge_ideal_per_worker_per_s=round(judge_concurrency / judge_latency_s, 1),
                    judge_requests_per_worker=per_worker,
                    judge_rewards_per_s=rates,
                    judge_scaling_vs_linear=ratios,
                    judge_min_scaling_vs_linear=min(ratios.values()),
                    judge_meets_0_8_linear=min(ratios.values()) >= 0.8,
                    judge_endpoint_requests=judge.count,
                )
            finally:
                with contextlib.suppress(Exception):
                    await bus.close()
    doc["elapsed_s"] = round(time.perf_counter() - t_start, 1)
    return doc
