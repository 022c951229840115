"""Tiny policy batches and a trainer's weights as one vector (the trainer tests and their rank processes)."""

from __future__ import annotations

import torch

from rlar.learn.trainer import DeepSpeedPolicyTrainer, PolicyBatch


def make_batch(n: int = 12, seed: int = 0) -> PolicyBatch:
    """Random prompts and responses of varied lengths, advantages ±1, behaviour log-probs near −6."""
    g = torch.Generator().manual_seed(seed)
    prompts = [torch.randint(3, 259, (3 + i % 3,), generator=g).tolist() for i in range(n)]
    resps = [torch.randint(3, 259, (2 + i % 4,), generator=g).tolist() for i in range(n)]
    behav = [(-6.0 + 0.1 * torch.randn(len(r), generator=g)).tolist() for r in resps]
    adv = [1.0 if i % 2 else -1.0 for i in range(n)]
    return PolicyBatch.from_samples(prompts, resps, behav, adv)


def flat_weights(tr: DeepSpeedPolicyTrainer) -> torch.Tensor:
    return torch.cat([t.flatten() for _, t in tr.export_named_tensors()])
