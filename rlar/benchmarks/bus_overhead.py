"""Bus overhead per sample, as a share of a learner step: what the asynchronous design costs on the wire.

Per prompt group (G = ``--group-size`` samples) the actors do what the real ones do, with the same calls
(``encode_parts`` + ``Bus.js_publish_many``, ``Bus.consume``, confirmed ``Bus.ack``): the rollout publishes,
for a batch of ``--batch-prompts`` prompts at once with acks awaited together, one ``SampleGroup`` and one
``ScoreGroup`` per prompt (JetStream, de-duplicated); a reward worker pulls each request from its durable,
publishes one ``RewardGroup`` and acks; the learner pulls the samples and the rewards from its two durables,
holds them until the group's both halves are in, then acks both with server confirmation. Demo-sized
samples: prompt 20 tokens, response 16 tokens with log-probs. No tool, no model: only the bus, on an embedded
nats-server, one process. The wall time divided by the sample count is the bus cost per sample.

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
from bus.codec import encode_parts
from bus.config import NatsConfig
from bus.embedded import serve
from bus.messages import (
    Completion,
    RewardGroup,
    SampleGroup,
    ScoredItem,
    ScoreGroup,
    ScoreItem,
    ToolKind,
    ToolRef,
)
from bus.topology import declare, ensure_topology
from rlar.policy.model import build_tiny_policy

# torch and rlar.learn are imported where used: heavy and optional (only the step time needs them; the CLI
# starts without them).

EXACT = ToolRef(tool="exact_match", version=1, kind=ToolKind.RULE, needs_reference=True)


def _group(tag: str, p: int, g: int) -> SampleGroup:
    return SampleGroup(
        prompt_id=f"{tag}/{p}",
        generation="g",
        task="arith",
        group_size=g,
        prompt_token_ids=list(range(20)),
        policy_version=0,
        tools=[EXACT],
        query="12+7=",
        completions=[
            Completion(index=i, token_ids=list(range(16)), logprobs=[-0.5] * 16, text="12345678")
            for i in range(g)
        ],
    )


async def _bus_path(url: str, n_prompts: int, g: int, batch_prompts: int, metrics: Any = None) -> float:
    """Seconds for ``n_prompts`` groups. ``metrics`` (an ``rlar.observe.prom.ActorMetrics``): also call the
    actors' Prometheus hooks where they do (``rlar bench tracking-overhead --hooks`` compares)."""
    bus = await Bus.connect(NatsConfig(url=url), name="bench-bus-overhead")
    bus.observer = metrics
    await ensure_topology(bus.js, declare(topology.TopologyConfig()))
    tag = f"b{int(time.time())}"
    done = asyncio.Event()
    held: dict[str, list[Any]] = {}
    finished = {"groups": 0}

    async def on_score(req: ScoreGroup, raw: Any) -> None:  # the reward worker's part, minus the tool
        reward = RewardGroup(
            prompt_id=req.prompt_id,
            generation=req.generation,
            task=req.task,
            tool=EXACT.tool,
            tool_version=EXACT.version,
            weight=EXACT.weight,
            items=[ScoredItem(index=it.index, status="ok", score=1.0) for it in req.items],
        )
        if metrics is not None:
            for _ in reward.items:
                metrics.reward(EXACT.tool, "ok", 0.001)
        await bus.js_publish_many(
            [
                (
                    subjects.rewards(req.task),
                    data,
                    f"{req.prompt_id}/{req.generation}/{EXACT.tool}#{part.items[0].index}",
                )
                for part, data in encode_parts(reward, "items", bus.max_payload)
            ]
        )

    async def hold(prompt_id: str, raw: Any) -> None:  # the learner's part: a group is retired once complete
        msgs = held.setdefault(prompt_id, [])
        msgs.append(raw)
        if len(msgs) == 2:
            await asyncio.gather(*(bus.ack(m) for m in held.pop(prompt_id)))
            finished["groups"] += 1
            if metrics is not None and finished["groups"] % 8 == 0:  # a learner step of 8 groups
                metrics.learner_step(
                    {"step_s": 0.2, "samples": 8 * g, "staleness_hist": {"0": 6 * g, "1": 2 * g}}
                )
            if finished["groups"] >= n_prompts:
                done.set()

    async def on_samples(m: SampleGroup, raw: Any) -> None:
        await hold(m.prompt_id, raw)

    async def on_rewards(m: RewardGroup, raw: Any) -> None:
        await hold(m.prompt_id, raw)

    bus.consume(topology.SCORE, "reward-rule", ScoreGroup, on_score, batch=16, concurrency=8)
    bus.consume(
        topology.SAMPLES, topology.LEARNER_SAMPLES, SampleGroup, on_samples, auto_ack=False, batch=256
    )
    bus.consume(
        topology.REWARDS, topology.LEARNER_REWARDS, RewardGroup, on_rewards, auto_ack=False, batch=256
    )
    t0 = time.perf_counter()
    limit = bus.max_payload
    for start in range(0, n_prompts, batch_prompts):  # the rollout's part
        out: list[tuple[str, bytes, str]] = []
        for p in range(start, min(n_prompts, start + batch_prompts)):
            grp = _group(tag, p, g)
            if metrics is not None:
                metrics.samples(grp.task, g)
            key = f"{grp.prompt_id}/{grp.generation}"
            out += [
                (subjects.samples("arith"), data, f"{key}#{part.completions[0].index}")
                for part, data in encode_parts(grp, "completions", limit)
            ]
            req = ScoreGroup(
                prompt_id=grp.prompt_id,
                generation=grp.generation,
                task="arith",
                tools=[EXACT],
                query=grp.query,
                reference="19",
                items=[ScoreItem(index=c.index, response=c.text) for c in grp.completions],
            )
            out += [
                (subjects.score("rule"), data, f"{key}/rule#{part.items[0].index}")
                for part, data in encode_parts(req, "items", limit)
            ]
        await bus.js_publish_many(out)
    await asyncio.wait_for(done.wait(), 300)
    elapsed = time.perf_counter() - t0
    await bus.close()
    return elapsed


def _step_seconds(batch: int, work: Path) -> float:
    import torch

    from rlar.learn.trainer import DeepSpeedPolicyTrainer, PolicyBatch, TrainerConfig

    torch.set_num_threads(1)
    model = build_tiny_policy(work / "policy")
    trainer = DeepSpeedPolicyTrainer(TrainerConfig(model_dir=model, micro_batch_size=batch, torch_threads=1))
    pb = PolicyBatch.from_samples(
        [list(range(3, 23))] * batch,
        [list(range(3, 19))] * batch,
        [[-0.5] * 16] * batch,
        [1.0 if i % 2 else -1.0 for i in range(batch)],
    )
    trainer.step(pb)  # first call pays one-off costs
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        trainer.step(pb)
        list(trainer.export_named_tensors())
        times.append(time.perf_counter() - t0)
    return sorted(times)[1]


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=2048)
    ap.add_argument("--group-size", type=int, default=8, help="samples per prompt group (G)")
    ap.add_argument("--batch-prompts", type=int, default=8, help="prompts the rollout publishes together")
    ap.add_argument("--batch", type=int, default=64, help="samples per learner step")
    ap.add_argument("--step-s", type=float, help="use this step time instead of measuring one")
    a = ap.parse_args(argv)
    n_prompts = max(1, a.samples // a.group_size)
    samples = n_prompts * a.group_size
    with tempfile.TemporaryDirectory(prefix="rlar-bench-busoh-") as tmp:
        with serve("embedded", tmp) as url:
            elapsed = asyncio.run(_bus_path(url, n_prompts, a.group_size, a.batch_prompts))
        step_s = a.step_s or _step_seconds(a.batch, Path(tmp))
    per_sample_ms = 1000 * elapsed / samples
    share = per_sample_ms / 1000 * a.batch / step_s
    doc = {
        "bench": "bus_overhead",
        "samples": samples,
        "group_size": a.group_size,
        "batch_prompts": a.batch_prompts,
        "per_sample_ms": round(per_sample_ms, 4),
        "samples_per_s_bus_only": round(samples / elapsed, 1),
        "batch": a.batch,
        "step_s": round(step_s, 4),
        "bus_share_of_step": round(share, 4),
    }
    print(
        f"bus path: {per_sample_ms:.3f} ms/sample ({samples / elapsed:.0f} samples/s, one process); "
        f"learner step of {a.batch} samples: {step_s:.3f}s; bus share of a step: {100 * share:.1f}%"
    )
    print(json.dumps(doc), flush=True)


if __name__ == "__main__":
    main()
