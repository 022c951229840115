"""Experiment tracking from the bus: a Feed subscribed to a real nats-server, the Tracker logging through the
libraries themselves, and what they wrote read back with their own readers (TensorBoard's EventAccumulator,
the wandb transaction log's protobuf records, MLflow's client)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bus.client import Bus
from rlar.observe.config import TrackingConfig
from tests.support.observe import STEPS, TASKS, TOOLS, track


async def test_tensorboard_event_files_hold_every_metric_table_and_histogram(
    bus: Bus, tmp_path: Path
) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    _, sent = await track(bus, tmp_path, ["tensorboard"], TrackingConfig(samples_every=2, samples_rows=5))
    acc = EventAccumulator(
        str(tmp_path / "tensorboard"), size_guidance={"scalars": 0, "tensors": 0, "histograms": 0}
    )
    acc.Reload()
    tags = acc.Tags()
    # every learner metric per step, reward per task as sent
    assert [e.step for e in acc.Scalars("learner/loss")] == list(range(1, STEPS + 1))
    assert acc.Scalars("learner/loss")[-1].value == pytest.approx(1 / STEPS)
    for task in TASKS:
        got = {e.step: e.value for e in acc.Scalars(f"reward/{task}")}
        assert got == pytest.approx(sent["rewards"][task])
    # abstain rate and latency per tool, from the rewards that went over the bus
    abstain = [e.value for t in TOOLS.values() for e in acc.Scalars(f"tool/{t[0]} v1/abstain_rate")]
    assert max(abstain) > 0 and all(0 <= a <= 1 for a in abstain)
    lat = acc.Scalars("tool/chrf v1/latency_mean_s")
    assert len(lat) == STEPS and 0 < lat[0].value < 0.06
    assert not any(t.startswith("tools") for t in tags["scalars"])  # the routes are no scalar
    assert acc.Scalars("bus/dead_letters")[-1].value == 1
    # staleness histogram: 8 samples at lag 0, 4 at lag 1
    hist = acc.Histograms("learner/staleness")[0].histogram_value
    assert hist.num == 12 and hist.max == 1 and sum(hist.bucket) == 12
    # the samples table (text plugin, markdown) every 2 steps and at step 1; rows carry the real responses
    samples = acc.Tensors("samples")
    assert [s.step for s in samples] == [1, 2, 4]
    text = samples[-1].tensor_proto.string_val[0].decode()
    assert "| step | task | prompt | response | reward | status | tools | policy_version |" in text
    assert sum(r in text for r in sent["responses"]) == 5
    decisions = acc.Tensors("routing/decisions")[-1].tensor_proto.string_val[0].decode()
    assert "translate" in decisions and "chrf v1" in decisions and "reference translations" in decisions
    assert "chrf" in acc.Tensors("tools/registered")[-1].tensor_proto.string_val[0].decode()
    assert "rollout-0 exited" in acc.Tensors("events")[-1].tensor_proto.string_val[0].decode()
