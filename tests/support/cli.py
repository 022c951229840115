"""`rlar` run as a child process from the repository root, as an operator runs it."""

from __future__ import annotations

import subprocess
import sys

from tests.support.env import REPO, actor_env


def rlar_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rlar.app.cli", "--log-level", "WARNING", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=actor_env(),
        cwd=REPO,
    )
