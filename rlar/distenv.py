"""torch.distributed environment variables and the child processes that must not inherit them."""

from __future__ import annotations

import os
from collections.abc import Mapping

DIST_ENV = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
SELF_DIST_MARK = "RLAR_SELF_DIST"
"""Set (with :data:`DIST_ENV`) by :func:`rlar.learn.trainer.init_distributed` when a process without a
launcher makes itself a 1-rank torch.distributed group."""


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a child process (an actor, a run): this one's, minus the torch.distributed
    variables it set for its own 1-rank group — a child inheriting them would try to bind the same port.
    Variables that a launcher (torchrun, deepspeed) set are kept."""
    out = dict(os.environ if env is None else env)
    if out.pop(SELF_DIST_MARK, None):
        for k in DIST_ENV:
            out.pop(k, None)
    return out
