"""The retrieval tests' demo checkpoints, built once per test session and shared by its xdist workers."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

DEMO_STEPS = 300


def trained_demo_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo checkpoints with the reward model trained (``steps=300``; 15-50 s on a busy core), built by
    the first test that asks, in a cache under the session's base temp dir: with pytest-xdist the dir all
    workers share (each worker's own is ``<base>/popen-gwN``), and the others wait on a lock, then reuse it."""
    from rlar.testing.hub.models import build_demo_models

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    cache = base / "retrieval-demo-trained"
    with open(base / "retrieval-demo-trained.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        build_demo_models(cache, steps=DEMO_STEPS)
    return cache
