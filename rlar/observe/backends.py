"""Experiment-tracking backends: TensorBoard, Weights & Biases and MLflow, through the libraries themselves.

Each backend has the same five calls, made from the tracker's writer thread only (never from the event
loop), in step order:

- ``scalars(step, {tag: value})`` — one point per tag;
- ``histogram(step, tag, values)`` — a distribution (staleness of a step's samples, a tool's latencies);
- ``table(step, tag, columns, rows)`` — a snapshot table (the sampled completions every N steps);
- ``row(step, tag, columns, row)`` — one more row of a table that grows as things happen (routing
  decisions, tool registrations, tool requests, events);
- ``close()``.

Where they write (``<run>`` is the run directory):

- TensorBoard: event files in ``<run>/tensorboard`` (``tensorboard --logdir <run>/tensorboard``), written
  with tensorboard's own event writer and protos (scalars, histograms, and the text plugin's markdown
  tables);
- Weights & Biases: ``wandb.init(mode="offline", dir=<run>)`` → ``<run>/wandb/offline-run-*``, which
  ``wandb sync`` uploads later; tables are ``wandb.Table`` (a growing table is re-logged whole);
- MLflow: a run in experiment ``project`` of the tracking URI (default the file store ``<run>/mlruns``);
  metrics by step, the config as params, tables as ``log_table`` artifacts, histograms as quantiles.
"""

from __future__ import annotations

import bisect
import math
import os
import re
import time
import warnings
from pathlib import Path
from typing import Any, Protocol

import tomli_w

from rlar.observe.config import TrackingConfig

# tensorboard, wandb and mlflow are imported where used: heavy and optional (rlar --help imports this module).

__all__ = ["Backend", "MlflowBackend", "TensorBoardBackend", "WandbBackend", "make_backend"]

MAX_ROWS = 500
"""Rows kept of a growing table (the newest)."""


class Backend(Protocol):
    name: str

    def scalars(self, step: int, values: dict[str, float]) -> None: ...

    def histogram(self, step: int, tag: str, values: list[float]) -> None: ...

    def table(self, step: int, tag: str, columns: list[str], rows: list[list[Any]]) -> None: ...

    def row(self, step: int, tag: str, columns: list[str], row: list[Any]) -> None: ...

    def close(self) -> None: ...


def buckets(values: list[float], n: int = 30) -> tuple[list[float], list[int]]:
    """Histogram of ``values``: (``len(counts) + 1`` edges, counts); a bucket holds (lower, upper].
    Integers over a short range get one bucket each."""
    lo, hi = min(values), max(values)
    if all(float(v).is_integer() for v in values) and hi - lo <= 64:
        edges = [lo - 0.5 + i for i in range(int(hi - lo) + 2)]
    else:
        width = (hi - lo) / n if hi > lo else 1.0
        edges = [lo + width * i for i in range(n + 1)]
        edges[0], edges[-1] = lo - 1e-12, max(hi, edges[-1])
    counts = [0] * (len(edges) - 1)
    for v in values:
        counts[min(max(bisect.bisect_left(edges, v) - 1, 0), len(counts) - 1)] += 1
    return edges, counts


def _cell(v: Any) -> str:
    text = "" if v is None else (f"{v:.4g}" if isinstance(v, float) else str(v))
    return text.replace("|", "\\|").replace("\n", " ⏎ ")


def markdown_table(columns: list[str], rows: list[list[Any]]) -> str:
    head = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n"
    return head + "".join("| " + " | ".join(_cell(c) for c in r) + " |\n" for r in rows)


class TensorBoardBackend:
    """Event files under ``<run>/tensorboard`` via ``tensorboard.summary.writer.EventFileWriter``."""

    name = "tensorboard"

    def __init__(self, run_dir: Path, cfg: TrackingConfig, config_doc: dict[str, Any]) -> None:
        from tensorboard.summary.writer.event_file_writer import EventFileWriter

        self.logdir = run_dir / "tensorboard"
        self.writer = EventFileWriter(str(self.logdir))
        self.rows: dict[str, list[list[Any]]] = {}
        self._text(0, "config", "```toml\n" + _toml(config_doc) + "\n```")

    def _write(self, step: int, values: list[Any]) -> None:
        from tensorboard.compat.proto import event_pb2, summary_pb2

        event = event_pb2.Event(wall_time=time.time(), step=step, summary=summary_pb2.Summary(value=values))
        self.writer.add_event(event)

    def scalars(self, step: int, values: dict[str, float]) -> None:
        from tensorboard.compat.proto import summary_pb2

        self._write(
            step, [summary_pb2.Summary.Value(tag=k, simple_value=float(v)) for k, v in values.items()]
        )

    def histogram(self, step: int, tag: str, values: list[float]) -> None:
        from tensorboard.compat.proto import summary_pb2

        edges, counts = buckets(values)
        hist = summary_pb2.HistogramProto(
            min=min(values),
            max=max(values),
            num=len(values),
            sum=sum(values),
            sum_squares=sum(v * v for v in values),
            bucket_limit=edges[1:],
            bucket=[float(c) for c in counts],
        )
        self._write(step, [summary_pb2.Summary.Value(tag=tag, histo=hist)])

    def _text(self, step: int, tag: str, text: str) -> None:
        from tensorboard.compat.proto import summary_pb2, tensor_pb2, tensor_shape_pb2
        from tensorboard.plugins.text.metadata import create_summary_metadata

        tensor = tensor_pb2.TensorProto(
            dtype=7,
            string_val=[text.encode()],  # 7: DT_STRING
            tensor_shape=tensor_shape_pb2.TensorShapeProto(dim=[]),
        )
        value = summary_pb2.Summary.Value(tag=tag, tensor=tensor, metadata=create_summary_metadata(tag, ""))
        self._write(step, [value])

    def table(self, step: int, tag: str, columns: list[str], rows: list[list[Any]]) -> None:
        self._text(step, tag, markdown_table(columns, rows))

    def row(self, step: int, tag: str, columns: list[str], row: list[Any]) -> None:
        # The text plugin shows one value per step: write the table so far, newest last.
        rows = self.rows.setdefault(tag, [])
        rows.append(row)
        del rows[:-MAX_ROWS]
        self._text(step, tag, markdown_table(columns, rows))

    def close(self) -> None:
        self.writer.close()


class WandbBackend:
    """An offline (by default) Weights & Biases run in ``<run>/wandb``."""

    name = "wandb"

    def __init__(self, run_dir: Path, cfg: TrackingConfig, config_doc: dict[str, Any]) -> None:
        import wandb

        self.wandb: Any = wandb
        settings = wandb.Settings(
            silent=True,
            console="off",
            x_disable_stats=True,
            save_code=False,
            disable_git=True,
            disable_job_creation=True,
        )
        self.run = wandb.init(
            mode=cfg.wandb_mode,
            dir=str(run_dir),
            project=cfg.project,
            name=run_dir.name,
            config=config_doc,
            settings=settings,
            reinit="create_new",
        )
        self.rows: dict[str, list[list[Any]]] = {}
        self.dir = Path(self.run.dir).parent

    def scalars(self, step: int, values: dict[str, float]) -> None:
        self.run.log(dict(values), step=step)

    def histogram(self, step: int, tag: str, values: list[float]) -> None:
        edges, counts = buckets(values)
        self.run.log({tag: self.wandb.Histogram(np_histogram=(counts, edges))}, step=step)

    def table(self, step: int, tag: str, columns: list[str], rows: list[list[Any]]) -> None:
        self.run.log(
            {tag: self.wandb.Table(columns=columns, data=[[_plain(c) for c in r] for r in rows])}, step=step
        )

    def row(self, step: int, tag: str, columns: list[str], row: list[Any]) -> None:
        rows = self.rows.setdefault(tag, [])
        rows.append(row)
        del rows[:-MAX_ROWS]
        self.table(step, tag, columns, rows)

    def close(self) -> None:
        self.run.finish()


_MLFLOW_BAD = re.compile(r"[^A-Za-z0-9_\-. /]")


class MlflowBackend:
    """An MLflow run (local file store ``<run>/mlruns`` unless ``mlflow_uri`` says otherwise)."""

    name = "mlflow"

    def __init__(self, run_dir: Path, cfg: TrackingConfig, config_doc: dict[str, Any]) -> None:
        uri = cfg.mlflow_uri or (run_dir.resolve() / "mlruns").as_uri()
        if uri.startswith("file:"):
            os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")  # see TrackingConfig.mlflow_uri
        from mlflow.entities import Param
        from mlflow.tracking import MlflowClient

        self.client = MlflowClient(tracking_uri=uri)
        self.uri = uri
        exp = self.client.get_experiment_by_name(cfg.project)
        exp_id = exp.experiment_id if exp else self.client.create_experiment(cfg.project)
        self.run_id = self.client.create_run(
            exp_id, run_name=run_dir.name, tags={"rlar.run_dir": str(run_dir.resolve())}
        ).info.run_id
        params = [
            Param(_MLFLOW_BAD.sub("_", k)[:250], str(v)[:6000]) for k, v in _flatten(config_doc).items()
        ]
        for i in range(0, len(params), 100):
            self.client.log_batch(self.run_id, params=params[i : i + 100])

    def scalars(self, step: int, values: dict[str, float]) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        metrics = [
            Metric(_MLFLOW_BAD.sub("_", k), float(v), now, step)
            for k, v in values.items()
            if math.isfinite(float(v))
        ]
        for i in range(0, len(metrics), 1000):
            self.client.log_batch(self.run_id, metrics=metrics[i : i + 1000])

    def histogram(self, step: int, tag: str, values: list[float]) -> None:
        ordered = sorted(values)
        q = {p: ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] for p in (50, 90, 99)}
        self.scalars(step, {f"{tag}/p{p}": v for p, v in q.items()} | {f"{tag}/max": ordered[-1]})

    def table(self, step: int, tag: str, columns: list[str], rows: list[list[Any]]) -> None:
        data = {c: [_plain(r[i]) for r in rows] for i, c in enumerate(columns)}
        self._log_table(data, f"{tag}/step_{step:06d}.json")

    def row(self, step: int, tag: str, columns: list[str], row: list[Any]) -> None:
        # log_table appends to an existing table file.
        self._log_table({c: [_plain(v)] for c, v in zip(columns, row, strict=True)}, f"{tag}.json")

    def _log_table(self, data: dict[str, list[Any]], artifact_file: str) -> None:
        with warnings.catch_warnings():  # pandas deprecation notices from inside mlflow's table code
            warnings.simplefilter("ignore")
            self.client.log_table(self.run_id, data=data, artifact_file=artifact_file)

    def close(self) -> None:
        self.client.set_terminated(self.run_id)


def _plain(v: Any) -> Any:
    """A table cell every library takes: str, int, float, bool or None."""
    return v if v is None or isinstance(v, (str, int, float, bool)) else str(v)


def _flatten(doc: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in doc.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict) and v:
            out.update(_flatten(v, key))
        else:
            out[key] = v
    return out


def _toml(doc: dict[str, Any]) -> str:

    try:
        return tomli_w.dumps(doc)
    except (TypeError, ValueError):
        return repr(doc)


BACKENDS: dict[str, type[Any]] = {
    "tensorboard": TensorBoardBackend,
    "wandb": WandbBackend,
    "mlflow": MlflowBackend,
}


def make_backend(name: str, run_dir: Path, cfg: TrackingConfig, config_doc: dict[str, Any]) -> Backend:
    backend: Backend = BACKENDS[name](run_dir, cfg, config_doc)
    return backend
