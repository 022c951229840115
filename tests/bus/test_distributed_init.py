"""rlar.learn.distributed.init_distributed when another library already made the default process group."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch.distributed as dist

from rlar.learn.distributed import init_distributed

# In the bus tier: importing DeepSpeed runs `uname -p`.


def test_a_group_made_in_process_without_a_launcher_gets_the_local_rank_deepspeed_asks_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """vLLM's in-process engine makes a one-rank gloo group and sets no LOCAL_RANK; DeepSpeed's initialize then
    asserts LOCAL_RANK is set (what `rlar bench pipeline --engine vllm` met in its sync way)."""
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(var, raising=False)
    # Under xdist an earlier test in this worker (a DeepSpeed learner) may have left its one-rank group, which is
    # the state under test too: a group exists and the environment names no launcher. Only a group made here is
    # destroyed here.
    made_here = not dist.is_initialized()
    if made_here:
        dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        assert init_distributed("gloo") == (0, 1)
        assert os.environ["LOCAL_RANK"] == "0"
    finally:
        if made_here:
            dist.destroy_process_group()
