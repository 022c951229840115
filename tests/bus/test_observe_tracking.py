"""Experiment tracking from the bus: a Feed subscribed to a real nats-server, the Tracker logging through the
libraries themselves, and what they wrote read back with their own readers (TensorBoard's EventAccumulator,
the wandb transaction log's protobuf records, MLflow's client)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bus.client import Bus
from rlar.observe.config import TrackingConfig
from rlar.observe.feed import Feed
from rlar.observe.tracking import Tracker
from tests.support.observe import TASKS, TOOLS, publish_run, wandb_history

STEPS = 5


class _Count:
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


async def _track(
    bus: Bus, run: Path, report_to: list[str], cfg: TrackingConfig
) -> tuple[Tracker, dict[str, Any]]:
    tracker = Tracker(run, report_to, cfg, {"train": {"name": "t"}, "learner": {"max_steps": STEPS}})
    tracker.start()
    feed = Feed(bus, [tracker])
    await feed.start()
    await feed.flush()
    counter = _Count()
    feed.add(counter)
    sent = await publish_run(bus, STEPS, settle=counter.reach)
    await counter.reach_steps(STEPS)
    await feed.stop()
    await asyncio.to_thread(tracker.close)
    assert tracker.logged_steps == STEPS
    assert tracker.errors == {}
    return tracker, sent


async def test_tensorboard_event_files_hold_every_metric_table_and_histogram(
    bus: Bus, tmp_path: Path
) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    _, sent = await _track(bus, tmp_path, ["tensorboard"], TrackingConfig(samples_every=2, samples_rows=5))
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


@pytest.mark.slow
async def test_wandb_offline_run_and_mlflow_file_store_hold_the_logged_metrics(
    bus: Bus, tmp_path: Path
) -> None:
    from mlflow.tracking import MlflowClient

    tracker, sent = await _track(bus, tmp_path, ["wandb", "mlflow"], TrackingConfig(samples_every=2))
    # wandb: an offline run directory whose transaction log holds every step's metrics
    (run_dir,) = (tmp_path / "wandb").glob("offline-run-*")
    (log,) = run_dir.glob("run-*.wandb")
    rows = wandb_history(log)
    by_step = {r["_step"]: r for r in rows}
    for task in TASKS:
        assert {s: by_step[s][f"reward/{task}"] for s in sent["rewards"][task]} == pytest.approx(
            sent["rewards"][task]
        )
    assert by_step[STEPS]["learner/loss"] == pytest.approx(1 / STEPS)
    assert by_step[2]["samples/_type"] == "table-file" and by_step[4]["samples/nrows"] > 0
    table = json.loads(next((run_dir / "files").rglob("samples_*.table.json")).read_text())
    assert table["columns"][:4] == ["step", "task", "prompt", "response"]
    assert {r[3] for r in table["data"]} <= set(sent["responses"])
    # `wandb sync` recognises it as a run it can upload later
    dry = subprocess.run(
        [sys.executable, "-m", "wandb", "sync", "--dry-run", str(run_dir)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert log.name in dry.stdout + dry.stderr
    # mlflow: the local file store under the run directory
    where = tracker.where()["mlflow"]
    assert where == (tmp_path / "mlruns").resolve().as_uri()
    client = MlflowClient(tracking_uri=where)
    (run,) = client.search_runs([client.get_experiment_by_name("rlar").experiment_id])
    for task in TASKS:
        hist = {m.step: m.value for m in client.get_metric_history(run.info.run_id, f"reward/{task}")}
        assert hist == pytest.approx(sent["rewards"][task])
    assert run.data.params["learner.max_steps"] == str(STEPS)
    arts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"samples", "routing", "tools", "events.json"} <= arts
    decisions = json.loads(
        Path(client.download_artifacts(run.info.run_id, "routing/decisions.json", str(tmp_path))).read_text()
    )
    assert decisions["data"][0][decisions["columns"].index("task")] == "translate"
    assert run.info.status == "FINISHED"
