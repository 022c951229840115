"""The repository root, the environment of child processes that import the project, and the chromium skip."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rlar.learn.distributed import child_env

REPO = Path(__file__).resolve().parents[2]


def actor_env() -> dict[str, str]:
    """Environment for subprocesses that import the project from the repo root."""
    env = child_env()
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


CHROMIUM = Path("/usr/bin/chromium")
needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian chromium at /usr/bin/chromium (apt install chromium)"
)
