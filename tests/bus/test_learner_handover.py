"""A learner's successor and the groups its predecessor retired.

The predecessor trained on a group, saved its counters and the group's prompt id, and died before its acks
reached the server (or they were lost in a failover): the samples come back, but their rewards were acked.
The successor must recognise the group as retired and ack it, not hold it forever waiting for rewards;
then it trains on a fresh group, counts it, and saves it for its own successor — all confirmed on the
server's consumers.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

from actors.launch import make_actor
from actors.learner import STATE_KEY
from bus import subjects, topology
from bus.client import Bus, wait_for
from bus.codec import encode
from bus.config import NatsConfig
from bus.embedded import EmbeddedServer
from bus.messages import Completion, LearnerProgress, RewardGroup, SampleGroup, ScoredItem, ToolKind, ToolRef
from tests.support.servers import TEST_TOPOLOGY

GROUP = 2
TOOL = ToolRef(tool="exact_match", version=1, kind=ToolKind.RULE)


def _sample(prompt_id: str, i: int, generation: str = "g0", version: int = 0) -> SampleGroup:
    """Sample i of the group, in a message of its own (the learner joins the parts)."""
    c = Completion(index=i, token_ids=[8 + i, 9], logprobs=[-1.0, -1.5], text=str(i))
    return SampleGroup(
        prompt_id=prompt_id,
        generation=generation,
        task="arith",
        group_size=GROUP,
        prompt_token_ids=[5, 6, 7],
        completions=[c],
        policy_version=version,
        tools=[TOOL],
    )


def _reward(prompt_id: str, i: int, generation: str = "g0") -> RewardGroup:
    return RewardGroup(
        prompt_id=prompt_id,
        generation=generation,
        task="arith",
        tool="exact_match",
        tool_version=1,
        items=[ScoredItem(index=i, status="ok", score=float(i))],
    )


def _learner_doc(url: str, run: Path, max_steps: int) -> dict[str, object]:
    """A learner of one prompt a step on the tiny policy prepared in ``run``."""
    return {
        "nats": {"url": url},
        "topology": TEST_TOPOLOGY.model_dump(),
        "run": {"dir": str(run)},
        "learner": {
            "prompts_per_step": 1,
            "max_steps": max_steps,
            "keepalive_s": 1.0,
            "trainer": {
                "model_dir": "{run_dir}/policy/init",
                "micro_batch_size": 4,
                "grpo": {"group_size": GROUP, "max_staleness": 0},
            },
        },
    }


async def _consumer(bus: Bus, stream: str, durable: str) -> tuple[int, int]:
    ci = await bus.js.consumer_info(stream, durable)
    return ci.num_pending, ci.num_ack_pending


async def test_a_successor_acks_the_redelivered_groups_its_predecessor_retired(tmp_path: Path) -> None:
    from rlar.app.train import PolicySection, prepare_policy

    run = tmp_path / "run"
    prepare_policy(PolicySection(sft_steps=0), run, tmp_path / "cache")
    with EmbeddedServer(tmp_path / "nats") as srv:
        bus = await Bus.connect(NatsConfig(url=srv.url), "test")
        await topology.ensure_topology(bus.js, topology.declare(TEST_TOPOLOGY))
        predecessor = {"consumed": 7, "dropped": 1, "recent": [["p-old"]]}
        await bus.kv_put(topology.STATE_BUCKET, STATE_KEY, json.dumps(predecessor).encode())
        for i in range(GROUP):  # the retired group: samples back, rewards long acked
            await bus.js_publish(subjects.samples("arith"), _sample("p-old", i))
        learner = make_actor("learner", _learner_doc(srv.url, run, max_steps=3), instance="successor")
        task = asyncio.create_task(learner.run(bus))
        try:
            assert await wait_for(lambda: learner.state == "running", 120), learner.state
            assert await _wait_async(
                lambda: _consumer(bus, topology.SAMPLES, topology.LEARNER_SAMPLES), (0, 0)
            )
            assert not learner.groups and learner.consumed == 7  # acked, not trained, not counted

            for i in range(GROUP):  # a fresh group: trained on, counted, remembered
                await bus.js_publish(subjects.samples("arith"), _sample("p-new", i))
                await bus.js_publish(subjects.rewards("arith"), _reward("p-new", i))
            assert await wait_for(lambda: learner.counters["steps"] == 1, 120), learner.step
            for stream, durable in (
                (topology.SAMPLES, topology.LEARNER_SAMPLES),
                (topology.REWARDS, topology.LEARNER_REWARDS),
            ):
                # confirmed acks: nothing pending the moment the step is done
                assert await _consumer(bus, stream, durable) == (0, 0), durable
            kv = await bus.js.key_value(topology.STATE_BUCKET)
            saved = json.loads((await kv.get(STATE_KEY)).value or b"{}")
            assert saved == {"consumed": 8, "dropped": 1, "recent": [["p-old"], ["p-new"]]}

            # A prompt generated twice (a rollout died after publishing part of its first attempt): the
            # first attempt's sample and the second's rewards never mix; the complete attempt is trained on
            # once and the other's messages are acked with it.
            await bus.js_publish(subjects.samples("arith"), _sample("p-twice", 0, "first"))
            await bus.js_publish(subjects.rewards("arith"), _reward("p-twice", 1, "first"))
            for i in range(GROUP):
                await bus.js_publish(
                    subjects.samples("arith"), _sample("p-twice", i, "second", learner.version)
                )
                await bus.js_publish(subjects.rewards("arith"), _reward("p-twice", i, "second"))
            assert await wait_for(lambda: learner.counters["steps"] == 2, 120), learner.step
            for stream, durable in (
                (topology.SAMPLES, topology.LEARNER_SAMPLES),
                (topology.REWARDS, topology.LEARNER_REWARDS),
            ):
                assert await _consumer(bus, stream, durable) == (0, 0), durable
            assert not learner.groups and learner.consumed == 9

            # A stale group is dropped, and the progress says so at once, not at the next step: the feeder paces
            # on retired prompts, and drops that filled its bound would otherwise stall the run.
            progress: list[LearnerProgress] = []

            async def on_progress(msg: LearnerProgress, raw: object) -> None:
                progress.append(msg)

            await bus.subscribe(subjects.LEARNER_PROGRESS, LearnerProgress, on_progress)
            for i in range(GROUP):
                await bus.js_publish(
                    subjects.samples("arith"), _sample("p-stale", i, version=learner.version - 1)
                )
                await bus.js_publish(subjects.rewards("arith"), _reward("p-stale", i))
            assert await wait_for(lambda: any(p.dropped_prompts == 2 for p in progress), 120), progress
            assert learner.counters["steps"] == 2 and learner.consumed == 9

            # Garbage published over the progress (a last-value subject): the learner announces its state again
            # within its keepalive, so a feeder starting later does not wait for a step that cannot come.
            for garbage in (b"\xc1 not MessagePack", encode(_reward("p-x", 0))):
                await bus.js.publish(subjects.LEARNER_PROGRESS, garbage)

            async def newest() -> tuple[int, int] | None:
                last = await bus.last_valid(
                    topology.PROGRESS, subjects.LEARNER_PROGRESS, LearnerProgress, scan=1
                )
                return None if last is None else (last.consumed_prompts, last.dropped_prompts)

            assert await _wait_async(newest, (9, 2))
        finally:
            await learner.stop()
            task.cancel()
            await bus.close()


async def _wait_async(
    probe: Callable[[], Awaitable[tuple[int, int] | None]], want: tuple[int, int], timeout_s: float = 60.0
) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while loop.time() < deadline:
        if await probe() == want:
            return True
        await asyncio.sleep(0.2)
    return False


async def test_a_successor_acks_a_group_retired_long_before_its_redelivery(tmp_path: Path) -> None:
    """A nats-server killed before it stored a learner's ack redelivers the group after its ack-wait, many steps
    later: a learner restarted since then finds the prompt in its run's journal (not only in the last steps it
    keeps in the state key) and acks the group instead of training on it twice."""
    from actors.learner import LearnerConfig
    from rlar.app.train import PolicySection, prepare_policy
    from rlar.wire.groups import JOURNAL

    run = tmp_path / "run"
    prepare_policy(PolicySection(sft_steps=0), run, tmp_path / "cache")
    remember = LearnerConfig.model_fields["remember_steps"].default
    steps = [["p-long-ago"], *[[f"p-{k}"] for k in range(remember + 2)]]
    with open(run / JOURNAL, "w") as f:
        for k, ids in enumerate(steps, 1):
            f.write(
                json.dumps(
                    {
                        "t": 0.0,
                        "step": k,
                        "version": 0,
                        "outcome": "trained",
                        "prompt_ids": ids,
                        "consumed": k,
                        "dropped": 0,
                    }
                )
                + "\n"
            )
    with EmbeddedServer(tmp_path / "nats") as srv:
        bus = await Bus.connect(NatsConfig(url=srv.url), "test")
        await topology.ensure_topology(bus.js, topology.declare(TEST_TOPOLOGY))
        recent = {"consumed": len(steps), "dropped": 0, "recent": steps[-remember:]}
        await bus.kv_put(topology.STATE_BUCKET, STATE_KEY, json.dumps(recent).encode())
        for i in range(GROUP):  # the group retired at step 1, redelivered with its rewards
            await bus.js_publish(subjects.samples("arith"), _sample("p-long-ago", i))
            await bus.js_publish(subjects.rewards("arith"), _reward("p-long-ago", i))
        learner = make_actor("learner", _learner_doc(srv.url, run, max_steps=40), instance="successor")
        task = asyncio.create_task(learner.run(bus))
        try:
            assert await wait_for(lambda: learner.state == "running", 120), learner.state
            for stream, durable in (
                (topology.SAMPLES, topology.LEARNER_SAMPLES),
                (topology.REWARDS, topology.LEARNER_REWARDS),
            ):
                assert await _wait_async(lambda s=stream, d=durable: _consumer(bus, s, d), (0, 0)), durable
            assert not learner.groups and learner.counters["steps"] == 0 and learner.consumed == len(steps)
        finally:
            await learner.stop()
            task.cancel()
            await bus.close()
