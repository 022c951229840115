"""Bus overhead per sample, as a share of a learner step: what the asynchronous design costs on the wire.

Per sample the actors do: rollout publishes a ``Sample`` (JetStream, de-duplicated) and one ``ScoreRequest``;
a reward worker pulls the request from its durable, publishes a ``Reward`` and acks; the learner pulls the
sample and the reward from its two durables and acks both. This script runs exactly that message path with
the real consumers on an embedded nats-server (no tool, no model: only the bus), for ``--samples`` samples of
demo size (prompt 20 tokens, response 16 tokens with log-probs), and divides the wall time by the count.
The step time it is compared with is one real GRPO step of the demo's tiny policy on a batch of
``--batch`` samples (DeepSpeed, one CPU thread), or ``--step-s`` if given.

Prints a human summary, then one JSON line (last).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from bus import subjects, topology
from bus.client import Bus
from bus.config import NatsConfig
from bus.embedded import serve
from bus.messages import Reward, Sample, ScoreRequest, ToolKind, ToolRef
from bus.topology import declare, ensure_topology

EXACT = ToolRef(tool="exact_match", version=1, kind=ToolKind.RULE, needs_reference=True)


def _sample(i: int, tag: str) -> Sample:
    return Sample(sample_id=f"{tag}/{i // 8}#{i % 8}", prompt_id=f"{tag}/{i // 8}", task="arith", index=i % 8,
                  group_size=8, prompt_token_ids=list(range(20)), response_token_ids=list(range(16)),
                  behaviour_logprobs=[-0.5] * 16, response_text="12345678", policy_version=0,
                  tools=[EXACT], query="12+7=")  # fmt: skip


async def _bus_path(url: str, n: int) -> float:
    bus = await Bus.connect(NatsConfig(url=url), name="bench-bus-overhead")
    await ensure_topology(bus.js, declare(topology.TopologyConfig()))
    tag = f"b{int(time.time())}"
    got_samples, got_rewards = asyncio.Event(), asyncio.Event()
    counts = {"s": 0, "r": 0}

    async def on_score(req: ScoreRequest, raw: Any) -> None:  # the reward worker's part, minus the tool
        reward = Reward(sample_id=req.sample_id, prompt_id=req.prompt_id, task=req.task, tool=req.tool.tool,
                        tool_version=req.tool.version, status="ok", score=1.0, weight=req.tool.weight)  # fmt: skip
        await bus.js_publish(subjects.rewards(req.task), reward, msg_id=f"{req.sample_id}/{req.tool.tool}")

    async def on_sample(s: Sample, raw: Any) -> None:
        counts["s"] += 1
        if counts["s"] >= n:
            got_samples.set()

    async def on_reward(r: Reward, raw: Any) -> None:
        counts["r"] += 1
        if counts["r"] >= n:
            got_rewards.set()

    bus.consume(topology.SCORE, "reward-rule", ScoreRequest, on_score, batch=16, concurrency=8)
    bus.consume(topology.SAMPLES, topology.LEARNER_SAMPLES, Sample, on_sample, batch=256)
    bus.consume(topology.REWARDS, topology.LEARNER_REWARDS, Reward, on_reward, batch=256)
    t0 = time.perf_counter()
    for i in range(n):  # the rollout's part
        s = _sample(i, tag)
        await bus.js_publish(subjects.samples("arith"), s, msg_id=s.sample_id)
        req = ScoreRequest(sample_id=s.sample_id, prompt_id=s.prompt_id, task="arith", tool=EXACT,
                           query=s.query, response=s.response_text, reference="19")  # fmt: skip
        await bus.js_publish(subjects.score("rule"), req, msg_id=f"{s.sample_id}/exact_match")
    await asyncio.wait_for(asyncio.gather(got_samples.wait(), got_rewards.wait()), 300)
    elapsed = time.perf_counter() - t0
    await bus.close()
    return elapsed


def _step_seconds(batch: int, work: Path) -> float:
    import torch

    from rlar.learn.trainer import DeepSpeedPolicyTrainer, PolicyBatch, TrainerConfig
    from rlar.policy.model import build_tiny_policy

    torch.set_num_threads(1)
    model = build_tiny_policy(work / "policy")
    trainer = DeepSpeedPolicyTrainer(TrainerConfig(model_dir=model, micro_batch_size=batch, torch_threads=1))
    pb = PolicyBatch.from_samples([list(range(3, 23))] * batch, [list(range(3, 19))] * batch,
                                  [[-0.5] * 16] * batch, [1.0 if i % 2 else -1.0 for i in range(batch)])  # fmt: skip
    trainer.step(pb)  # first call pays one-off costs
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        trainer.step(pb)
        list(trainer.export_named_tensors())
        times.append(time.perf_counter() - t0)
    return sorted(times)[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=64, help="samples per learner step")
    ap.add_argument("--step-s", type=float, help="use this step time instead of measuring one")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="rlar-bench-busoh-") as tmp:
        with serve("embedded", tmp) as url:
            elapsed = asyncio.run(_bus_path(url, a.samples))
        step_s = a.step_s or _step_seconds(a.batch, Path(tmp))
    per_sample_ms = 1000 * elapsed / a.samples
    share = per_sample_ms / 1000 * a.batch / step_s
    doc = {"bench": "bus_overhead", "samples": a.samples, "per_sample_ms": round(per_sample_ms, 4),
           "samples_per_s_bus_only": round(a.samples / elapsed, 1), "batch": a.batch, "step_s": round(step_s, 4),
           "bus_share_of_step": round(share, 4)}  # fmt: skip
    print(
        f"bus path: {per_sample_ms:.3f} ms/sample ({a.samples / elapsed:.0f} samples/s, one process); "
        f"learner step of {a.batch} samples: {step_s:.3f}s; bus share of a step: {100 * share:.1f}%"
    )
    print(json.dumps(doc), flush=True)


if __name__ == "__main__":
    main()
