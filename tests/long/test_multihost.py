"""Three hosts in network namespaces run a short GRPO training over a three-node NATS cluster; mid-run one
NATS node is cut off the network and a reward-worker host is killed, and no prompt or reward is lost.

Hosts (each a namespace with a veth into a private bridge the test creates; nothing else is reachable):
- h1: NATS node n1, ``rlar up --actors feeder,rollout,learner``
- h2: NATS node n2, ``rlar up --actors reward=2`` — the reward host that fails
- h3: NATS node n3, ``rlar up --actors sandbox,reward`` — a second reward worker keeps scoring
- ctl: the test's own vantage point (bootstrap, counting); the test thread joins it with setns.

Every connection uses its role's credentials (rlar.deploy.auth), streams are R3. Once a third of the
expected rewards are in, h2's link goes down (n2 and its workers are partitioned: clients elsewhere that
were on n2 must notice by pings and fail over; R3 streams re-elect leaders on n1/n3), then every process
on h2 is SIGKILLed; their unacked score requests are redelivered to h3's worker after the ack-wait.

Counted end to end from the streams and the learner: prompt ids sent (PROMPTS), samples (SAMPLES), samples
rewarded (REWARDS, de-duplicated by sample and tool), prompts trained or dropped as stale (learner progress);
every sent prompt must have all its samples rewarded and be accounted for by the learner, and every work
consumer must end with nothing pending. No actor may log a permission violation.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from nats.js.errors import NotFoundError

from bus.client import Bus
from bus.codec import decode
from bus.config import NatsConfig
from bus.messages import LearnerProgress, Prompt, RewardGroup, SampleGroup
from bus.topology import PROGRESS, PROMPTS, REWARDS, SAMPLES, TopologyConfig, declare
from rlar.deploy import netns
from rlar.deploy.auth import generate_credentials
from rlar.deploy.natsconf import accounts_block, node_config
from rlar.deploy.servers import ServerProcess
from tests.support.env import REPO, actor_env

pytestmark = [pytest.mark.slow, pytest.mark.netns, pytest.mark.timeout(600)]

# Large enough that the faults land mid-run even on a quiet machine (the run takes seconds there).
N_PROMPTS = 64
GROUP = 4
PER_STEP = 4
TOPOLOGY = TopologyConfig(
    replicas=3, score_ack_wait_s=10, prompt_ack_wait_s=20, learner_ack_wait_s=30, tool_request_ack_wait_s=10
)
BUDGET_S = 480.0


def _overrides() -> list[str]:
    tasks = [
        {"name": "arith", "weight": 1.0},
        {"name": "copy", "weight": 1.0},
        {"name": "reverse", "weight": 1.0},
    ]
    sets = {
        **{f"topology.{k}": v for k, v in TOPOLOGY.model_dump().items()},
        "nats.ping_interval_s": 1.0,
        "nats.max_outstanding_pings": 2,
        "nats.connect_timeout_s": 1.0,
        "nats.initial_attempts": 10,
        "feeder.tasks": tasks,
        "feeder.routing": "static",  # no router actor here: each task's own rule tools
        "feeder.epoch_size": N_PROMPTS,
        "feeder.max_epochs": 1,
        "rollout.group_size": GROUP,
        "rollout.batch_prompts": PER_STEP,
        "rollout.max_new_tokens": 6,
        "learner.prompts_per_step": PER_STEP,
        "learner.max_steps": 1000,
        "learner.checkpoint_every": 1000,
        "learner.trainer.grpo.group_size": GROUP,
        "reward.kinds": ["rule"],
        "reward.executor_workers": {"rule": 1},
    }
    return [f"{k}={json.dumps(v)}" for k, v in sets.items()]


async def _read(bus: Bus, stream: str, msg_type: type[Any]) -> list[Any]:
    info = await bus.js.stream_info(stream)
    out: list[Any] = []
    if not info.state.messages:
        return out
    for seq in range(info.state.first_seq, info.state.last_seq + 1):
        try:
            raw = await bus.js.get_msg(stream, seq)
        except NotFoundError:
            continue
        if msg_type is Prompt and not (raw.subject or "").startswith("rlar.routed."):
            continue
        out.append(decode(raw.data or b"", msg_type))
    return out


async def _counts(bus: Bus) -> dict[str, Any]:
    # The learner's progress first: everything it counts was published to the append-only streams before it
    # was trained on, so the stream reads that follow see at least that much. (Read the other way round, a
    # step landing during the slow stream reads would count prompts trained that the reads had missed.)
    try:
        progress = decode(
            (await bus.js.get_last_msg(PROGRESS, "rlar.learner.progress")).data or b"", LearnerProgress
        )
    except NotFoundError:
        progress = None
    prompts = await _read(bus, PROMPTS, Prompt)
    groups = await _read(bus, SAMPLES, SampleGroup)
    rewards = await _read(bus, REWARDS, RewardGroup)
    # a sample is (prompt, generation, index); a prompt regenerated after a fault has two generations
    reward_keys = Counter((r.prompt_id, r.generation, it.index, r.tool) for r in rewards for it in r.items)
    rewarded_samples = {k[:3] for k in reward_keys}
    sample_ids = {(g.prompt_id, g.generation, c.index) for g in groups for c in g.completions}
    per_generation = Counter(k[:2] for k in sample_ids)
    full = {pid for (pid, _), n in per_generation.items() if n >= GROUP}
    return {
        "prompts_sent": len({p.prompt_id for p in prompts}),
        "prompt_ids": {p.prompt_id for p in prompts},
        "samples": len({(pid, i) for pid, _, i in sample_ids if pid in full}),
        "prompts_with_full_groups": len(full),
        "samples_rewarded": len({(pid, i) for pid, _, i in rewarded_samples & sample_ids if pid in full}),
        "prompts_rewarded": len({pid for pid, _, _ in rewarded_samples & sample_ids}),
        "reward_messages": len(rewards),
        "duplicate_rewards": sum(n - 1 for n in reward_keys.values()),
        "trained": progress.consumed_prompts if progress else 0,
        "dropped_stale": progress.dropped_prompts if progress else 0,
        "learner_step": progress.step if progress else 0,
        "rewards_by_worker": dict(Counter(r.worker for r in rewards)),
    }


async def _snapshot(bus: Bus) -> dict[str, int]:
    """Reward messages (one per scored prompt generation) stored and prompts trained so far (retried while
    the cluster fails over)."""
    for _ in range(60):
        try:
            rewards = (await bus.js.stream_info(REWARDS)).state.messages
            try:
                raw = await bus.js.get_last_msg(PROGRESS, "rlar.learner.progress")
                trained = decode(raw.data or b"", LearnerProgress).consumed_prompts
            except NotFoundError:
                trained = 0
            return {"reward_messages": rewards, "trained": trained}
        except Exception:
            await asyncio.sleep(0.5)
    raise AssertionError("the cluster did not answer for 30 s")


async def _pending(bus: Bus) -> dict[str, tuple[int, int, int]]:
    out = {}
    for c in declare(TOPOLOGY).consumers:
        if c.durable in ("router", "synthesizer", "retriever") or (
            c.durable.startswith("reward-") and c.durable != "reward-rule"
        ):
            continue
        ci = await bus.js.consumer_info(c.stream, c.durable)
        out[c.durable] = (ci.num_pending, ci.num_ack_pending, ci.num_redelivered)
    return out


def test_training_survives_a_cut_nats_node_and_a_killed_reward_host(tmp_path: Path) -> None:
    reason = netns.available()
    if reason:
        pytest.skip(reason)
    from rlar.app.commands.deploy import bootstrap
    from rlar.app.train import PolicySection, prepare_policy

    t0 = time.monotonic()
    creds = tmp_path / "creds"
    passwords = generate_credentials(creds)
    hosts = ("h1", "h2", "h3")
    lab = netns.Lab([*hosts, "ctl"])
    with lab:
        ips = [lab.address(h) for h in hosts]
        routes = [f"nats-route://{ip}:6222" for ip in ips]
        url = ",".join(f"nats://{ip}:4222" for ip in ips)
        nodes = []
        for i, h in enumerate(hosts):
            text = node_config(
                f"n{i + 1}",
                routes=routes,
                store_dir=str(tmp_path / f"n{i + 1}-js"),
                auth=accounts_block(passwords),
                ping_interval_s=1.0,
                ping_max=2,
            )
            node = ServerProcess(
                f"n{i + 1}", text, tmp_path, monitor_url=f"http://{ips[i]}:8222", wrap=lab.command(h, [])
            )
            nodes.append(node.start(wait=False))

        def all_healthy() -> None:
            for n in nodes:
                n.wait_healthy(60)

        lab.call_in("ctl", all_healthy)

        run_dirs = {h: tmp_path / f"run-{h}" for h in hosts}
        prepare_policy(PolicySection(sft_steps=0), run_dirs["h1"], tmp_path / "cache")
        doc = {
            "nats": {"user": "admin", "password": passwords["admin"], "connect_timeout_s": 1.0},
            "topology": TOPOLOGY.model_dump(),
        }
        booted = lab.call_in("ctl", lambda: asyncio.run(bootstrap(url, doc, builtins=True)))
        assert booted["replicas"] == 3 and "exact_match" in booted["builtin_tools"]

        actors = {"h1": "feeder=1,rollout=1,learner=1", "h2": "reward=2", "h3": "sandbox=1,reward=1"}
        env = {k: v for k, v in actor_env().items() if not k.startswith("RLAR_NATS")}
        env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", TORCH_NUM_THREADS="1")
        for h in hosts:
            env["RLAR_HOST_ID"] = h  # all namespaces share one hostname; instance ids become "h2-reward-1"
            cmd = [
                sys.executable,
                "-m",
                "rlar.app.cli",
                "up",
                "--actors",
                actors[h],
                "--nats",
                url,
                "--config",
                str(REPO / "deploy/configs/demo.toml"),
                "--creds-dir",
                str(creds),
                "--run-dir",
                str(run_dirs[h]),
            ]
            for o in _overrides():
                cmd += ["--set", o]
            lab.popen(h, cmd, log=tmp_path / f"up-{h}.log", env=env, cwd=REPO)

        expected_samples = N_PROMPTS * GROUP
        events: dict[str, float] = {}
        snapshots: dict[str, dict[str, int]] = {}

        async def drive() -> dict[str, Any]:
            bus = await Bus.connect(
                NatsConfig(
                    url=url,
                    user="observer",
                    password=passwords["observer"],
                    ping_interval_s=1.0,
                    max_outstanding_pings=2,
                ),
                name="ctl",
            )
            try:
                deadline = t0 + BUDGET_S
                # Cut as soon as the first groups are scored and h2's workers have scored some of them
                # (they hold work when they die), then kill the host right after, so most of the run
                # happens after the faults.
                while time.monotonic() < deadline:
                    try:
                        if (await bus.js.stream_info(REWARDS)).state.messages >= 2 and any(
                            r.worker.startswith("h2-") for r in await _read(bus, REWARDS, RewardGroup)
                        ):
                            break
                    except Exception:
                        pass
                    await asyncio.sleep(0.2)
                snapshots["at_cut"] = await _snapshot(bus)
                lab.link_down("h2")
                events["cut"] = time.monotonic() - t0
                await asyncio.sleep(0.2)
                events["killed_pids"] = len(lab.kill_host("h2"))
                events["killed"] = time.monotonic() - t0
                snapshots["at_kill"] = await _snapshot(bus)
                counts: dict[str, Any] = {}
                while time.monotonic() < deadline:
                    try:
                        counts = await _counts(bus)
                    except Exception as exc:  # a leader election in progress: ask again
                        counts = {**counts, "error": repr(exc)}
                        await asyncio.sleep(0.5)
                        continue
                    if counts["trained"] + counts["dropped_stale"] >= N_PROMPTS:
                        break
                    await asyncio.sleep(1.0)
                # Acks are asynchronous (and replicated on R3): the last ones may land a moment after the
                # learner has trained on the samples they cover, so give the consumers' state time to settle.
                for _ in range(30):
                    counts["pending"] = await _pending(bus)
                    if all(p == 0 and a == 0 for p, a, _ in counts["pending"].values()):
                        break
                    await asyncio.sleep(0.5)
                return counts
            finally:
                await bus.close()

        counts = lab.call_in("ctl", lambda: asyncio.run(drive()))
        elapsed = time.monotonic() - t0
        logs = {
            p.name: p.read_text(errors="replace")
            for d in run_dirs.values()
            for p in (d / "logs").glob("*.log")
        }
        summary = {k: v for k, v in counts.items() if k != "prompt_ids"}
        print(f"\nmultihost: {json.dumps(summary)} events={events} {snapshots} elapsed={elapsed:.0f}s")
        for name in ("learner-0.log", "reward-0.log"):
            print(f"--- tail of {name}:\n" + "\n".join(logs.get(name, "(none)").splitlines()[-15:]))

        assert "cut" in events and "killed" in events, f"the run never got its first rewards: {summary}"
        # The faults hit a run in progress, and h2's workers (reward-1 exists only there) had been working.
        assert (
            snapshots["at_cut"]["trained"] < N_PROMPTS and snapshots["at_cut"]["reward_messages"] < N_PROMPTS
        )
        # instance ids are "<host>-<kind>-<i>": h2's workers scored before they died, h3's after
        by_host = Counter({h: 0 for h in hosts})
        for worker, n in counts["rewards_by_worker"].items():
            by_host[worker.split("-")[0]] += n
        assert by_host["h2"] > 0 and by_host["h3"] > 0, counts["rewards_by_worker"]
        assert counts["prompts_sent"] == N_PROMPTS
        assert counts["samples"] == expected_samples and counts["prompts_with_full_groups"] == N_PROMPTS
        assert counts["samples_rewarded"] == expected_samples, "a sample was never rewarded"
        assert counts["prompts_rewarded"] == N_PROMPTS
        assert counts["trained"] + counts["dropped_stale"] == N_PROMPTS, "the learner lost prompts"
        assert counts["trained"] > 0
        for durable, (pending, ack_pending, _redelivered) in counts["pending"].items():
            assert (pending, ack_pending) == (0, 0), f"{durable} still holds work: {counts['pending']}"
        violations = [n for n, text in logs.items() if "permission violation" in text.lower()]
        assert not violations, f"permission violations logged by {violations}"
        assert elapsed < 570
