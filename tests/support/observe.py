"""What the observation tests publish: a small, varied stretch of a run as real wire messages on a real bus
(learner steps, samples with their rewards, routing decisions, tool registrations, events, a dead letter),
and readers of what the tracking libraries wrote, with the libraries' own formats."""

from __future__ import annotations

import asyncio
import random
import struct
from pathlib import Path
from typing import Any

from bus import subjects
from bus.client import Bus
from bus.messages import (
    Completion,
    DeadLetter,
    Event,
    Metrics,
    RewardGroup,
    RouteDecision,
    SampleGroup,
    ScoredItem,
    ScoreGroup,
    ScoreItem,
    ToolKind,
    ToolRef,
    ToolRegistered,
)
from rlar.observe.config import TrackingConfig
from rlar.observe.feed import Feed
from rlar.observe.tracking import Tracker

TASKS = ("arith", "copy", "translate")
TOOLS = {
    "arith": ("math_verify", ToolKind.RULE),
    "copy": ("exact_match", ToolKind.RULE),
    "translate": ("chrf", ToolKind.METRIC),
}


def sample_messages(task: str, prompt_id: str, version: int, responses: list[str]) -> list[SampleGroup]:
    """The prompt group carrying ``responses`` of one prompt."""
    tool, kind = TOOLS[task]
    completions = [
        Completion(index=i, token_ids=[1, 2], logprobs=[-0.1, -0.2], text=r) for i, r in enumerate(responses)
    ]
    return [
        SampleGroup(
            prompt_id=prompt_id,
            generation="g0",
            task=task,
            group_size=len(responses),
            prompt_token_ids=[5, 6],
            completions=completions,
            policy_version=version,
            tools=[ToolRef(tool=tool, kind=kind, version=1)],
            query=f"{task} prompt {prompt_id}",
        )
    ]


def reward_messages(
    task: str, prompt_id: str, results: list[tuple[str, float | None, float]]
) -> list[RewardGroup]:
    """One tool's ``(status, score, latency_s)`` per response of one prompt."""
    items = [
        ScoredItem(index=i, status=st, score=sc, latency_s=lat) for i, (st, sc, lat) in enumerate(results)
    ]
    return [
        RewardGroup(
            prompt_id=prompt_id, generation="g0", task=task, tool=TOOLS[task][0], tool_version=1, items=items
        )
    ]


async def publish_run(
    bus: Bus, steps: int, *, seed: int = 0, group: int = 4, settle: Any = None
) -> dict[str, Any]:
    """Publish ``steps`` learner steps of a made-up run; return what was published (for the assertions).

    As in a real run, a step's metrics go out after its rewards have arrived (the learner waits for them):
    ``settle(n)`` is awaited before each step's metrics with the number of samples and rewards published so
    far (an observer under test returns once it has seen them)."""
    rng = random.Random(seed)
    sent: dict[str, Any] = {"rewards": {t: {} for t in TASKS}, "responses": [], "latency": {}, "abstain": 0}
    await bus.publish(
        subjects.TOOLS_REGISTERED, ToolRegistered(name="chrf", version=1, kind="metric", by="test")
    )
    await bus.publish(
        subjects.TOOLS_DECISIONS,
        RouteDecision(
            signature="sig-translate",
            task="translate",
            tools=[ToolRef(tool="chrf", kind=ToolKind.METRIC, version=1)],
            backend="offline",
            confidence=0.82,
            reason="reference translations: a chrF match",
        ),
    )
    for step in range(1, steps + 1):
        per_task: dict[str, list[float]] = {}
        for task in TASKS:
            pid = f"{task}/e0/{step}"
            responses = [f"{task}-answer-{step}-{i}-{rng.randint(0, 999)}" for i in range(group)]
            sent["responses"] += responses
            for m in sample_messages(task, pid, step - 1, responses):
                await bus.publish(subjects.samples(task), m)
            results: list[tuple[str, float | None, float]] = []
            for _ in responses:
                if rng.random() < 0.15:
                    results.append(("abstain", None, 0.002))
                    sent["abstain"] += 1
                else:
                    results.append(("ok", round(rng.random(), 3), round(rng.uniform(0.001, 0.05), 4)))
            for m in reward_messages(task, pid, results):
                await bus.publish(subjects.rewards(task), m)
            sent["views"] = sent.get("views", 0) + 2 * len(responses)  # one sample and one reward each
            sent["latency"].setdefault(TOOLS[task][0], []).extend(lat for st, _, lat in results if st == "ok")
            per_task[task] = [s for st, s, _ in results if st == "ok" and s is not None]
        values: dict[str, Any] = {
            "version": step,
            "samples": group * len(TASKS),
            "step_s": 0.5 + rng.random(),
            "loss": 1.0 / step,
            "reward_mean": sum(sum(v) for v in per_task.values())
            / max(1, sum(len(v) for v in per_task.values())),
            "staleness_hist": {"0": 8, "1": 4},
            "staleness_max": 1,
            "t_start": 1.0,
            "t_end": 2.0,
            **{f"reward/{t}": sum(v) / len(v) for t, v in per_task.items() if v},
            "tools": {t: [f"{TOOLS[t][0]} v1"] for t in TASKS},
        }
        for t in TASKS:
            if f"reward/{t}" in values:
                sent["rewards"][t][step] = values[f"reward/{t}"]
        if settle is not None:
            await bus.nc.flush()
            await settle(sent["views"])
        await bus.publish(subjects.metrics("learner"), Metrics(actor="learner", step=step, values=values))
        if step == 2:
            await bus.publish(
                subjects.events("supervisor"),
                Event(actor="supervisor", kind="crash", level="error", message="rollout-0 exited with 1"),
            )
            await bus.publish(
                subjects.dlq(subjects.samples("arith")),
                DeadLetter(
                    subject=subjects.samples("arith"),
                    reason="not valid MessagePack",
                    payload=b"\xc1garbage",
                    actor="learner",
                ),
            )
    await bus.nc.flush()
    return sent


def wandb_records(run_file: Path) -> list[Any]:
    """The protobuf records of a ``.wandb`` transaction log: a 7-byte header (``:W&B``, magic, version), then
    LevelDB-log framing (32 KiB blocks; each chunk: crc32c, length, type FULL/FIRST/MIDDLE/LAST)."""
    from wandb.proto import wandb_internal_pb2 as pb

    data = run_file.read_bytes()
    assert data[:4] == b":W&B", "not a wandb transaction log"
    out, pos, block, pending = [], 7, 32768, b""
    while pos + 7 <= len(data):
        left = block - pos % block
        if left < 7:
            pos += left
            continue
        length, kind = struct.unpack("<HB", data[pos + 4 : pos + 7])
        chunk = data[pos + 7 : pos + 7 + length]
        pos += 7 + length
        if kind == 0 and length == 0:  # zero padding
            continue
        pending = chunk if kind in (1, 2) else pending + chunk
        if kind in (1, 4):  # FULL or LAST
            rec = pb.Record()
            rec.ParseFromString(pending)
            out.append(rec)
            pending = b""
    return out


def wandb_history(run_file: Path) -> list[dict[str, Any]]:
    """The ``wandb.log`` rows of a run, as ``{key: json value}`` (``_step`` included)."""
    import json

    rows = []
    for rec in wandb_records(run_file):
        if rec.WhichOneof("record_type") == "history":
            rows.append(
                {(i.key or "/".join(i.nested_key)): json.loads(i.value_json) for i in rec.history.item}
            )
    return rows


def score_messages(
    task: str, prompt_id: str, tool: str, kind: str, responses: list[str], reference: Any
) -> list[ScoreGroup]:
    """The score request for ``responses`` of one prompt with one tool."""
    items = [ScoreItem(index=i, response=r) for i, r in enumerate(responses)]
    return [
        ScoreGroup(
            prompt_id=prompt_id,
            generation="g0",
            task=task,
            tools=[ToolRef(tool=tool, kind=kind, version=0)],
            query="q",
            items=items,
            reference=reference,
        )
    ]


STEPS = 5


class FeedCount:
    """A sink that lets the test wait until the feed has delivered what was published (no sleeps)."""

    def __init__(self) -> None:
        self.seen = 0
        self.steps = 0
        self.changed = asyncio.Event()

    def observe(self, kind: str, item: Any) -> None:
        if kind == "metrics":
            self.steps += 1
        elif kind in ("sample", "reward"):
            self.seen += 1
        self.changed.set()

    async def _until(self, done: Any) -> None:
        async with asyncio.timeout(60):
            while not done():
                self.changed.clear()
                await self.changed.wait()

    async def reach(self, messages: int) -> None:
        await self._until(lambda: self.seen >= messages)

    async def reach_steps(self, steps: int) -> None:
        await self._until(lambda: self.steps >= steps)


async def track(
    bus: Bus, run: Path, report_to: list[str], cfg: TrackingConfig
) -> tuple[Tracker, dict[str, Any]]:
    tracker = Tracker(run, report_to, cfg, {"train": {"name": "t"}, "learner": {"max_steps": STEPS}})
    tracker.start()
    feed = Feed(bus, [tracker])
    await feed.start()
    await feed.flush()
    counter = FeedCount()
    feed.add(counter)
    sent = await publish_run(bus, STEPS, settle=counter.reach)
    await counter.reach_steps(STEPS)
    await feed.stop()
    await asyncio.to_thread(tracker.close)
    assert tracker.logged_steps == STEPS
    assert tracker.errors == {}
    return tracker, sent
