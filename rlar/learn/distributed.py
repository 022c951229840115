"""The torch.distributed process group of a learner process, and what its children must not inherit.

A process started by a launcher (torchrun, deepspeed) finds RANK/WORLD_SIZE/MASTER_* in its environment;
one started without (an actor under ``rlar up``, a test, a benchmark) makes itself a 1-rank group on a free
loopback port and marks the variables as its own, so the child processes it starts do not inherit them
(:func:`child_env`). Light to import: torch and DeepSpeed are imported by the functions that need them.
"""

from __future__ import annotations

import importlib
import logging
import os
import socket
from collections.abc import Mapping
from typing import Any, Literal

# torch and deepspeed are imported where used: heavy and optional (the CLI starts without them).


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` now (the 1-rank group's MASTER_PORT)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


DIST_ENV = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
SELF_DIST_MARK = "RLAR_SELF_DIST"
"""Set (with :data:`DIST_ENV`) by :func:`init_distributed` when a process without a
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


def import_deepspeed() -> Any:
    """``import deepspeed``, with the CPU accelerator chosen where there is no GPU."""
    import torch

    # The accelerator is chosen when deepspeed is first imported; without a GPU it must be told "cpu".
    if "DS_ACCELERATOR" not in os.environ and not torch.cuda.is_available():
        os.environ["DS_ACCELERATOR"] = "cpu"
    import deepspeed

    logging.getLogger("DeepSpeed").setLevel(logging.WARNING)
    return deepspeed


def _forget_stale_deepspeed_groups() -> None:
    """Drop DeepSpeed's cached process groups before a new default group is made.

    Another library can destroy the default group under DeepSpeed (vLLM's engine shutdown does, in a
    process that also trains); DeepSpeed's module-level caches then point at a dead group and its next
    ``initialize`` fails with "Group … is not registered".
    """
    groups: Any = importlib.import_module("deepspeed.utils.groups")
    for name in (
        "_WORLD_GROUP",
        "_ZERO_PARAM_INTRA_PARALLEL_GROUP",
        "_TENSOR_MODEL_PARALLEL_GROUP",
        "_MODEL_PARALLEL_GROUP",
        "_DATA_PARALLEL_GROUP",
    ):
        if hasattr(groups, name):
            setattr(groups, name, None)
    for name in (
        "_EXPERT_PARALLEL_GROUP",
        "_EXPERT_PARALLEL_GROUP_RANKS",
        "_EXPERT_DATA_PARALLEL_GROUP",
        "_EXPERT_DATA_PARALLEL_GROUP_RANKS",
        "_ALL_TO_ALL_GROUP",
    ):
        cache = getattr(groups, name, None)
        if isinstance(cache, dict):
            cache.clear()


def init_distributed(backend: Literal["auto", "gloo", "nccl"] = "auto") -> tuple[int, int]:
    """Initialise the default process group if needed; returns (rank, world_size).

    A process started without a launcher (no RANK/WORLD_SIZE in the environment) becomes a 1-rank
    group on a free loopback port.
    """
    import torch
    import torch.distributed as dist

    deepspeed = import_deepspeed()
    if not dist.is_initialized():
        _forget_stale_deepspeed_groups()
        if "RANK" not in os.environ and "WORLD_SIZE" not in os.environ:
            os.environ.update(
                MASTER_ADDR="127.0.0.1",
                MASTER_PORT=str(free_port()),
                RANK="0",
                WORLD_SIZE="1",
                LOCAL_RANK="0",
                **{SELF_DIST_MARK: "1"},
            )
        if backend == "auto":
            backend = "nccl" if torch.cuda.is_available() else "gloo"
        # DeepSpeed's CPU backend JIT-compiles a shared-memory all-reduce kernel at init (~55 s on a
        # cold cache) that only its inference all-reduce uses; training collectives go through
        # torch.distributed, so the build is skipped.
        # import_module, not "import deepspeed.comm.torch": the package re-exports torch under that name.
        ds_comm_torch: Any = importlib.import_module("deepspeed.comm.torch")
        build = getattr(ds_comm_torch, "build_shm_op", None)
        if build is not None:
            ds_comm_torch.build_shm_op = lambda: None
        try:
            deepspeed.init_distributed(dist_backend=backend)
        finally:
            if build is not None:
                ds_comm_torch.build_shm_op = build
    elif "LOCAL_RANK" not in os.environ:
        # Another library made the default group in this process without a launcher (vLLM's in-process engine
        # does, world size 1): DeepSpeed's sanity check wants LOCAL_RANK, which is only known for one process.
        if dist.get_world_size() != 1:
            raise RuntimeError(
                f"torch.distributed was initialised without a launcher ({dist.get_world_size()} ranks, no"
                " LOCAL_RANK): start the ranks with torchrun or the deepspeed launcher"
            )
        os.environ["LOCAL_RANK"] = "0"
    return dist.get_rank(), dist.get_world_size()
