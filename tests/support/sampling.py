"""Sampled completions as a learner batch, and the learner's and a top-k/top-p sampler's log-probs of them."""

from __future__ import annotations

from pathlib import Path

import torch
from transformers import AutoModelForCausalLM

from rlar.learn.trainer import DeepSpeedPolicyTrainer, PolicyBatch
from rlar.policy.engines import Completion

PROMPTS = ["The quick brown fox", "2+2=", "hello there"]
TEMPERATURES = (0.7, 1.3)


def completion_batch(
    prompts: list[list[int]], outs: list[list[Completion]], temperature: float | None
) -> PolicyBatch:
    rows = [(p, c) for p, cs in zip(prompts, outs, strict=True) for c in cs]
    return PolicyBatch.from_samples(
        [p for p, _ in rows],
        [c.token_ids for _, c in rows],
        [c.logprobs for _, c in rows],
        [1.0] * len(rows),
        temperatures=None if temperature is None else [temperature] * len(rows),
    )


def learner_minus_behaviour(trainer: DeepSpeedPolicyTrainer, batch: PolicyBatch) -> torch.Tensor:
    """log π_learner − log μ at every response token (flat)."""
    return (trainer.logprobs(batch) - batch.behav_logprobs)[batch.response_mask]


def kept_mass(policy: Path, batch: PolicyBatch, temperature: float, top_p: float, top_k: int) -> torch.Tensor:
    """Per response token: the tempered probability mass of the tokens a top-k-then-top-p sampler keeps
    (the smallest most-likely set reaching top_p within the top k; vLLM's rule), from one forward pass."""
    model = AutoModelForCausalLM.from_pretrained(policy, dtype=torch.float32).eval()
    out = []
    with torch.no_grad():
        for i in range(len(batch)):
            n = int(batch.attention_mask[i].sum())
            probs = torch.softmax(model(batch.input_ids[i : i + 1, :n]).logits[0].float() / temperature, -1)
            for t in range(1, n):
                if not batch.response_mask[i, t]:
                    continue
                p = probs[t - 1].sort(descending=True).values
                if top_k:
                    p = p[:top_k]
                cum = p.cumsum(0) / p.sum()
                keep = int((cum < top_p).sum()) + 1  # the smallest prefix whose share reaches top_p
                out.append(float(p[:keep].sum()))
    return torch.tensor(out)
