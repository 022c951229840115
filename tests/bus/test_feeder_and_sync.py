"""Feeder resume/pacing and weight sync, against a real nats-server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import torch

from actors.feeder import Feeder, FeederConfig
from bus import subjects, topology
from bus.client import Bus, wait_for
from bus.codec import decode, encode
from bus.config import NatsConfig
from bus.embedded import EmbeddedServer
from bus.messages import Heartbeat, LearnerProgress, Prompt
from rlar.tasks import TaskConfig, build_mix
from rlar.wire.weight_sync import fetch_weights, latest_announcement, publish_weights
from tests.support.servers import TEST_TOPOLOGY


async def _run_feeder_until(url: str, run_dir: Path, max_in_flight: int, published: int) -> Feeder:
    cfg = FeederConfig(
        nats=NatsConfig(url=url),
        topology=TEST_TOPOLOGY,
        run_dir=str(run_dir),
        max_in_flight=max_in_flight,
        tasks=[TaskConfig(name="copy", weight=1.0), TaskConfig(name="arith", weight=1.0)],
        epoch_size=40,
    )
    feeder = Feeder(cfg)
    task = asyncio.create_task(feeder.run())
    for _ in range(600):
        if feeder.published >= published:
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)  # it must not publish past the bound
    await feeder.stop()
    await asyncio.wait_for(task, 10)
    return feeder


async def test_a_restarted_feeder_continues_without_skipping_or_repeating_and_respects_the_bound(
    tmp_path: Path,
) -> None:
    with EmbeddedServer(tmp_path / "nats") as srv:
        first = await _run_feeder_until(srv.url, tmp_path, max_in_flight=7, published=7)
        assert first.published == 7  # paced: nothing consumed, so it stops at the bound
        second = await _run_feeder_until(srv.url, tmp_path, max_in_flight=19, published=19)
        assert second.published == 19
        bus = await Bus.connect(NatsConfig(url=srv.url), "check")
        info = await bus.js.stream_info(topology.PROMPTS)
        prompts = [
            decode((await bus.js.get_msg(topology.PROMPTS, s)).data or b"", Prompt)
            for s in range(1, info.state.last_seq + 1)
        ]
        await bus.close()
    expected = build_mix([TaskConfig(name="copy"), TaskConfig(name="arith")], epoch_size=40).take(19)
    assert [p.prompt_id for p in prompts] == [f"{i.task.name}/e{i.epoch}/{i.index}" for i in expected]
    assert len({p.prompt_id for p in prompts}) == 19
    assert all(p.tools and p.tools[0].kind in ("rule", "metric") for p in prompts)
    assert {p.task for p in prompts} == {"copy", "arith"}


async def test_weights_travel_through_the_filesystem_and_the_object_store(bus: Bus, tmp_path: Path) -> None:
    tensors = {"a.weight": torch.arange(6, dtype=torch.float32).reshape(2, 3), "b.bias": torch.ones(4)}
    for version, mode in ((1, "filesystem"), (2, "objstore")):
        announce = await publish_weights(
            bus,
            tensors.items(),
            version=version,
            step=version,
            mode=mode,  # type: ignore[arg-type]
            weights_dir=tmp_path / "w",
        )
        data = await fetch_weights(bus, announce)
        from rlar.policy.weights import safetensors_bytes_to_tensors

        back = safetensors_bytes_to_tensors(data)
        assert set(back) == set(tensors) and torch.equal(back["a.weight"], tensors["a.weight"])
        assert (await latest_announcement(bus)) == announce
    assert announce.uri.startswith("objstore://")
    bad = type(announce)(**{**{f: getattr(announce, f) for f in announce.__slots__}, "sha256": "0" * 64})
    try:
        await fetch_weights(bus, bad)
    except ValueError:
        pass
    else:
        raise AssertionError("a corrupted announcement must not load")
    assert subjects.WEIGHTS == "rlar.weights"


async def test_a_feeder_and_a_rollout_started_after_garbage_read_the_last_valid_progress_and_weights(
    tmp_path: Path,
) -> None:
    """Progress and weight announcements are last-value subjects read at start: garbage published after the
    real entry (malformed, truncated, wrong-typed) must not hide it."""
    with EmbeddedServer(tmp_path / "nats") as srv:
        bus = await Bus.connect(NatsConfig(url=srv.url), "test")
        await topology.ensure_topology(bus.js, topology.declare(TEST_TOPOLOGY))
        real = LearnerProgress(
            version=1, step=1, consumed_prompts=0, dropped_prompts=0, prompts_per_step=3, max_staleness=1
        )
        await bus.js_publish(subjects.LEARNER_PROGRESS, real)
        announce = await publish_weights(
            bus,
            {"w": torch.ones(2)}.items(),
            version=1,
            step=1,
            mode="filesystem",
            weights_dir=tmp_path / "w",
        )
        wrong = encode(Heartbeat(actor="x", instance="x", host="x", pid=1, uptime_s=0.0))
        for subject, valid in (
            (subjects.LEARNER_PROGRESS, encode(real)),
            (subjects.WEIGHTS, encode(announce)),
        ):
            for garbage in (b"\xc1\xc1 not MessagePack", valid[: len(valid) // 2], wrong):
                await bus.js.publish(subject, garbage)
        assert await bus.last_valid(topology.PROGRESS, subjects.LEARNER_PROGRESS, LearnerProgress) == real
        assert (
            await bus.last_valid(topology.PROGRESS, subjects.LEARNER_PROGRESS, LearnerProgress, scan=2)
            is None
        )
        assert await latest_announcement(bus) == announce

        cfg = FeederConfig(
            nats=NatsConfig(url=srv.url),
            topology=TEST_TOPOLOGY,
            run_dir=str(tmp_path),
            tasks=[TaskConfig(name="copy", weight=1.0)],
            epoch_size=40,
        )
        feeder = Feeder(cfg)
        task = asyncio.create_task(feeder.run())
        try:
            # paced by the real progress: (max_staleness + 1) * prompts_per_step in flight
            assert await wait_for(lambda: feeder.published >= 6, 60), feeder.published
            assert feeder.bound == 6
        finally:
            await feeder.stop()
            await asyncio.wait_for(task, 10)
            await bus.close()
