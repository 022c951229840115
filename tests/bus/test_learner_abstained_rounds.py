"""A learner step whose every sample abstained trains nothing and is not a training step.

When no tool could vouch for any reward of the groups a step took (every result ``abstain``), the learner records
the round (``all_abstained``, ``abstained_rounds``), says so on its events subject, and does not count it towards
``max_steps``: such rounds take no time and would otherwise spend a run's budget of steps on nothing.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from actors.launch import make_actor
from bus import subjects, topology
from bus.client import Bus, wait_for
from bus.config import NatsConfig
from bus.embedded import EmbeddedServer
from bus.messages import Completion, Event, RewardGroup, SampleGroup, ScoredItem, ToolKind, ToolRef
from tests.support.servers import TEST_TOPOLOGY

GROUP = 2
TOOL = ToolRef(tool="exact_match", version=1, kind=ToolKind.RULE)


async def _publish_group(bus: Bus, prompt_id: str, scores: list[float | None], version: int = 0) -> None:
    for i, score in enumerate(scores):
        c = Completion(
            index=i,
            token_ids=[8 + i, 9],
            logprobs=[-1.0, -1.5],
            text=str(i),
            finish_reason="length" if i else "stop",
        )
        await bus.js_publish(
            subjects.samples("arith"),
            SampleGroup(
                prompt_id=prompt_id,
                generation="g0",
                task="arith",
                group_size=GROUP,
                prompt_token_ids=[5, 6, 7],
                completions=[c],
                policy_version=version,
                tools=[TOOL],
            ),
        )
        item = (
            ScoredItem(index=i, status="abstain", reason="cannot read it")
            if score is None
            else ScoredItem(index=i, status="ok", score=score)
        )
        await bus.js_publish(
            subjects.rewards("arith"),
            RewardGroup(
                prompt_id=prompt_id,
                generation="g0",
                task="arith",
                tool="exact_match",
                tool_version=1,
                items=[item],
            ),
        )


async def test_an_all_abstained_round_is_recorded_and_said_but_not_counted_as_a_training_step(
    tmp_path: Path,
) -> None:
    from rlar.app.train import PolicySection, prepare_policy

    run = tmp_path / "run"
    prepare_policy(PolicySection(sft_steps=0), run, tmp_path / "cache")
    with EmbeddedServer(tmp_path / "nats") as srv:
        bus = await Bus.connect(NatsConfig(url=srv.url), "test")
        await topology.ensure_topology(bus.js, topology.declare(TEST_TOPOLOGY))
        events: list[Event] = []

        async def on_event(msg: Event, raw: object) -> None:
            events.append(msg)

        await bus.subscribe(subjects.events("learner"), Event, on_event)
        doc = {
            "nats": {"url": srv.url},
            "topology": TEST_TOPOLOGY.model_dump(),
            "run": {"dir": str(run)},
            "learner": {
                "prompts_per_step": 1,
                "max_steps": 1,
                "keepalive_s": 1.0,
                "trainer": {
                    "model_dir": "{run_dir}/policy/init",
                    "micro_batch_size": 4,
                    "grpo": {"group_size": GROUP, "max_staleness": 4},
                },
            },
        }
        learner = make_actor("learner", doc, instance="l0")
        task = asyncio.create_task(learner.run(bus))
        try:
            assert await wait_for(lambda: learner.state == "running", 120), learner.state
            await _publish_group(bus, "p-abstained", [None, None])
            assert await wait_for(lambda: learner.abstained_rounds == 1, 120)
            assert learner.training_steps == 0 and learner.version == 0  # nothing trained, the run goes on
            assert await wait_for(lambda: any(e.kind == "all_abstained" for e in events), 30), events
            await _publish_group(bus, "p-scored", [1.0, 0.0])
            assert await wait_for(lambda: learner.training_steps == 1, 120)
            assert await wait_for(lambda: any(e.kind == "finished" for e in events), 30), events
            lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
            assert [
                (r["step"], r["training_steps"], r["all_abstained"], r["abstained_rounds"]) for r in lines
            ] == [
                (1, 0, True, 1),
                (2, 1, False, 1),
            ]
            assert lines[0]["abstain/arith"] == 1.0 and lines[1]["trained_rows"] == 2
            assert lines[1]["truncated/arith"] == 0.5  # sample 1 of each group was cut at the length limit
        finally:
            await learner.stop()
            task.cancel()
            await bus.close()
