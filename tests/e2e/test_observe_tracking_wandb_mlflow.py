"""Experiment tracking from the bus into wandb (offline) and MLflow (file store), read back with the libraries'
own readers (the wandb transaction log's protobuf records, MLflow's client)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bus.client import Bus
from rlar.observe.config import TrackingConfig
from tests.support.observe import STEPS, TASKS, track, wandb_history


@pytest.mark.slow
async def test_wandb_offline_run_and_mlflow_file_store_hold_the_logged_metrics(
    bus: Bus, tmp_path: Path
) -> None:
    from mlflow.tracking import MlflowClient

    tracker, sent = await track(bus, tmp_path, ["wandb", "mlflow"], TrackingConfig(samples_every=2))
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
