"""The sandbox actor's limits: the operator's caps apply to every limit and the defaults fill the rest (the
actor is built, not started)."""

from __future__ import annotations

from pathlib import Path

from rlar.sandbox import Limits
from tests.support.actors import sandbox_actor


def test_operator_caps_apply_to_every_limit_and_defaults_fill_the_rest(tmp_path: Path) -> None:
    actor = sandbox_actor(
        "nats://127.0.0.1:1",
        tmp_path,
        default_limits={"memory_mb": 256},
        max_limits={"test_s": 2.0, "wall_s": 5.0, "memory_mb": 512},
    )
    lim = actor.effective_limits({"test_s": 100, "memory_mb": 4096}, jobs=10)
    assert (lim.test_s, lim.memory_mb, lim.wall_s) == (2.0, 512, 5.0)
    assert actor.effective_limits({}, jobs=1).memory_mb == 256
    assert actor.effective_limits({}, jobs=1).wall_s == Limits(test_s=2.0).wall_for(1)
