"""Run directories as `rlar train` leaves them, on the tiny policy (the eval and export tests' inputs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def eval_run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run directory: the tiny policy as policy/init and one set of learner weights (perturbed) as v3."""
    import torch

    from rlar.policy.model import build_tiny_policy
    from rlar.policy.weights import write_weights_dir

    torch.set_num_threads(1)
    run = tmp_path_factory.mktemp("run")
    init = build_tiny_policy(run / "policy" / "init")
    from safetensors.torch import load_file

    tensors = load_file(str(next(init.glob("*.safetensors"))))
    gen = torch.Generator().manual_seed(1)
    perturbed = {k: v + 0.05 * torch.randn(v.shape, generator=gen) for k, v in tensors.items()}
    write_weights_dir(run / "weights", 3, perturbed)
    return run


def exported_run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run directory as `rlar train` leaves it: the initial policy, two weight versions, a summary."""
    import torch

    from rlar.policy.model import build_tiny_policy
    from rlar.policy.weights import write_weights_dir

    run = tmp_path_factory.mktemp("run")
    init = build_tiny_policy(run / "policy" / "init")
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(init)
    gen = torch.Generator().manual_seed(0)
    for version in (3, 4):
        with torch.no_grad():
            for p in model.parameters():
                p.add_(torch.randn(p.shape, generator=gen) * 0.05)
        write_weights_dir(run / "weights", version, dict(model.named_parameters()))
    (run / "config.toml").write_text(
        '[feeder]\ntasks = [{ name = "arith", weight = 2.0 }]\n'
        "[learner]\nprompts_per_step = 8\ntrainer = { lr = 1e-4 }\n"
    )
    summary = {
        "reason": "finished",
        "steps": 12,
        "updates": 11,
        "minutes": 1.5,
        "tasks": {
            "arith": {
                "reward": {"first": 0.2, "last": 0.4, "steps": 12},
                "abstain": {"mean": 0.05},
                "tools": [
                    {"tool": "math_verify", "version": 1, "origin": "built-in", "steps": 12, "shadow": False}
                ],
            }
        },
    }
    (run / "summary.json").write_text(json.dumps(summary))
    torch.save(model.state_dict(), run / "v4_state.pt")
    return run
