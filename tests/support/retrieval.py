"""Where the retrieval tests' demo checkpoints are built."""

from __future__ import annotations

from pathlib import Path

import pytest


def trained_demo_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the demo checkpoints with the reward model trained (``steps=300``) are built, once per session
    (15-50 s on a busy core): a cache under the session's base temp dir that the retrieval tests share."""
    return tmp_path_factory.getbasetemp() / "retrieval-demo-trained"
