"""The retrieval tests' demo checkpoints, built once per test session and shared by its xdist workers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DEMO_STEPS = 300


def session_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test session's RLAR cache (``RLAR_CACHE_DIR`` of the docs' commands), under the session's base temp
    dir: with pytest-xdist the dir all workers share (each worker's own is ``<base>/popen-gwN``)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    cache = base / "rlar-cache"
    cache.mkdir(exist_ok=True)
    return cache


def trained_demo_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo checkpoints with the reward model trained (``steps=300``; 15-50 s on a busy core), built by
    the first test (or docs command: ``rlar retrieve --mirror`` builds them in ``<cache>/mirror-models``) that
    asks, in the session cache; the others wait on the builder's lock, then reuse them."""
    from rlar.standins.hub.models import build_demo_models

    cache = session_cache(tmp_path_factory) / "mirror-models"
    build_demo_models(cache, steps=DEMO_STEPS)
    return cache
