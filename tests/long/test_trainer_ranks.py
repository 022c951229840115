"""DeepSpeedPolicyTrainer on two gloo ranks matches one rank on the same global batch (the real tiny policy)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from bus.embedded import free_port
from rlar.learn.trainer import DeepSpeedPolicyTrainer, TrainerConfig
from rlar.policy.model import build_tiny_policy
from tests.support.env import REPO
from tests.support.trainer import flat_weights, make_batch


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch.set_num_threads(1)
    return build_tiny_policy(tmp_path_factory.mktemp("tiny"))


WORKER = textwrap.dedent(
    """
    import argparse, sys, torch
    sys.path.insert(0, {repo!r})
    from rlar.learn.trainer import DeepSpeedPolicyTrainer, TrainerConfig
    from tests.support.trainer import make_batch, flat_weights

    ap = argparse.ArgumentParser()
    ap.add_argument("--local_rank", type=int, default=0)
    ap.add_argument("--out", required=True)
    ap.add_argument("--model", required=True)
    args = ap.parse_args()
    torch.set_num_threads(1)
    result = {{}}
    for stage in (1, 2):
        tr = DeepSpeedPolicyTrainer(TrainerConfig(model_dir=args.model, zero_stage=stage, micro_batch_size=4))
        metrics = [tr.step(make_batch(12, seed=s)) for s in range(2)]
        tr.save_checkpoint(args.out + f"/ckpt{{stage}}", step=2, extra={{"stage": stage}})
        result[stage] = (flat_weights(tr), metrics) if tr.rank == 0 else None
        cfg = TrainerConfig(model_dir=args.model, zero_stage=stage, micro_batch_size=4)
        again = DeepSpeedPolicyTrainer(cfg)
        assert again.load_latest(args.out + f"/ckpt{{stage}}") == {{"stage": stage}}
        tr.step(make_batch(12, seed=9))
        again.step(make_batch(12, seed=9))
        same = torch.equal(flat_weights(tr), flat_weights(again)) if tr.rank == 0 else True
        assert same, "resumed trainer diverged"
        # Every rank's own full parameters (ZeRO-1/2 keep them whole) must agree across ranks.
        mine = torch.cat([p.detach().flatten() for p in tr.module.parameters()])
        torch.save(mine, args.out + f"/rank{{tr.rank}}_stage{{stage}}.pt")
    if tr.rank == 0:
        torch.save(result, args.out + "/weights.pt")
    """
)


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_two_gloo_ranks_match_one_rank_on_the_same_global_batch(tiny: Path, tmp_path: Path) -> None:
    script = tmp_path / "worker.py"
    script.write_text(WORKER.format(repo=str(REPO)))
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"}
    }
    env.update(DS_ACCELERATOR="cpu", OMP_NUM_THREADS="1", PYTHONPATH=str(REPO))
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nnodes=1",
        "--nproc_per_node=2",
        f"--master_port={free_port()}",
        str(script),
        "--out",
        str(tmp_path),
        "--model",
        str(tiny),
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=170, cwd=REPO)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for stage in (1, 2):
        r0, r1 = (
            torch.load(tmp_path / f"rank0_stage{stage}.pt"),
            torch.load(tmp_path / f"rank1_stage{stage}.pt"),
        )
        assert torch.equal(r0, r1), f"ranks differ at stage {stage}"
    two_rank = torch.load(tmp_path / "weights.pt")

    # One rank, same global batches: DeepSpeed's rank averaging and our global normaliser must give
    # the full-batch token mean. Adam and clipping hide the gradient's scale from the weights, so the
    # (pre-clip) gradient norm and the loss are compared too.
    for stage in (1, 2):
        one = DeepSpeedPolicyTrainer(TrainerConfig(model_dir=tiny, zero_stage=stage, micro_batch_size=4))
        metrics = [one.step(make_batch(12, seed=s)) for s in range(2)]
        weights2, metrics2 = two_rank[stage]
        assert torch.allclose(flat_weights(one), weights2, atol=1e-5), f"stage {stage}"
        for m1, m2 in zip(metrics, metrics2, strict=True):
            for key in ("grad_norm", "loss", "tokens", "entropy"):
                assert m1[key] == pytest.approx(m2[key], rel=1e-4, abs=1e-6), (stage, key)
