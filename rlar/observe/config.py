"""Settings of experiment tracking (``[train] report_to`` and ``[train.tracking]``) and of an actor's
Prometheus endpoint (``[metrics]``, or ``metrics = {...}`` in an actor's own section)."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rlar.config import ConfigError

Backend = Literal["tensorboard", "wandb", "mlflow"]
"""A tracking library ``[train] report_to`` may name."""


def check_report_to(names: Sequence[str]) -> None:
    """Raise :class:`ConfigError` naming the ``report_to`` libraries that are not installed."""
    absent = [n for n in names if importlib.util.find_spec(n) is None]
    if absent:
        raise ConfigError(
            f"[train] report_to names {', '.join(absent)}, which is not installed here: "
            "pip install 'rlar[train]'"
        )


class TrackingConfig(BaseModel):
    """How ``rlar train`` logs to the libraries of ``[train] report_to``."""

    model_config = ConfigDict(extra="forbid")

    samples_every: int = Field(10, ge=1)
    """Log a table of recent samples (task, prompt, response, reward, tool, policy version) every N learner
    steps (and at the first step)."""
    samples_rows: int = Field(24, ge=1, le=1000)
    """Rows of that table: the newest samples whose rewards are all in."""
    project: str = "rlar"
    """Weights & Biases project and MLflow experiment name."""
    wandb_mode: Literal["offline", "online"] = "offline"
    """``offline`` (default: no network; ``wandb sync <run dir>/wandb/offline-run-*`` uploads it later) or
    ``online`` (needs ``WANDB_API_KEY`` and network)."""
    mlflow_uri: str = ""
    """MLflow tracking URI; empty: the local file store ``file:<run dir>/mlruns`` (``mlflow ui
    --backend-store-uri <run dir>/mlruns``). MLflow 3 keeps the file store in maintenance mode and refuses
    it unless ``MLFLOW_ALLOW_FILE_STORE=true``, which rlar sets for its own file store; give a
    ``sqlite:///…`` URI for the database backend."""
    queue_limit: int = Field(10_000, ge=100)
    """Most log records waiting for the writer thread; beyond it new tables, histograms and rows are dropped
    (counted in the tracker's ``dropped``; the step scalars are always kept), so a slow backend never holds
    the run back."""


class MetricsEndpoint(BaseModel):
    """An actor's Prometheus ``/metrics`` endpoint (prometheus-client's text format)."""

    model_config = ConfigDict(extra="forbid")

    port: int | None = Field(None, ge=0, le=65535)
    """None: no endpoint; 0: a free port (its URL is in the actor's heartbeat, ``info.metrics_url``);
    N: that port (one actor per host and port, e.g. a Kubernetes pod)."""
    host: str = "127.0.0.1"
    """Interface to bind; ``0.0.0.0`` where Prometheus scrapes from another host (a pod)."""
    refresh_s: float = Field(5.0, gt=0)
    """How often the backlog of the durable consumers this actor reads is refreshed (``rlar_consumer_*``)."""
