"""The tiny policy's transformers engine and teacher-forced reference log-probs (the engine tests' helpers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM, PreTrainedModel

from rlar.policy.engines import (
    Completion,
    TransformersEngineConfig,
    make_engine,
    sampling_log_probs,
)
from rlar.policy.engines.hf import TransformersEngine

EOS = 1

PROMPTS = ["hi", "The quick brown fox", "2+2="]


def transformers_engine(policy_dir: Path, **kw: Any) -> TransformersEngine:
    cfg = TransformersEngineConfig(model=str(policy_dir), **{"max_model_len": 128, **kw})
    engine = make_engine(cfg)
    assert isinstance(engine, TransformersEngine)
    return engine


def reference_model(policy_dir: Path) -> PreTrainedModel:
    model = AutoModelForCausalLM.from_pretrained(policy_dir, dtype=torch.float32)
    return model.eval()


def teacher_forced(
    model: PreTrainedModel,
    prompt: list[int],
    completion: list[int],
    temperature: float = 1.0,
    top_p: float = 1.0,
) -> list[float]:
    """Log-probs of ``completion`` given ``prompt`` from one full forward pass."""
    ids = torch.tensor([prompt + completion])
    with torch.no_grad():
        logits = model(ids).logits[0].float()
    if temperature == 1.0 and top_p == 1.0:
        logp = torch.log_softmax(logits, dim=-1)
    else:
        logp = sampling_log_probs(logits, temperature, top_p)
    return [logp[len(prompt) - 1 + k, tok].item() for k, tok in enumerate(completion)]


def max_logprob_error(
    model: PreTrainedModel,
    prompts: list[list[int]],
    out: list[list[Completion]],
    temperature: float = 1.0,
    top_p: float = 1.0,
) -> float:
    err = 0.0
    for prompt, samples in zip(prompts, out, strict=True):
        for c in samples:
            ref = teacher_forced(model, prompt, c.token_ids, temperature, top_p)
            err = max(err, *(abs(a - b) for a, b in zip(ref, c.logprobs, strict=True)))
    return err


def train_towards_eos(model: PreTrainedModel, min_p_eos: float = 0.1) -> dict[str, torch.Tensor]:
    """A few SGD steps that raise p(EOS) at every position to >= ``min_p_eos``; returns the new weights.

    Gives a policy that stops on its own (~1 in 5 tokens) and whose distribution clearly moved."""
    g = torch.Generator().manual_seed(0)
    batch = torch.randint(3, 259, (16, 24), generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=0.03)
    model.train()
    for _ in range(20):
        logp_eos = torch.log_softmax(model(batch).logits.float(), dim=-1)[..., EOS]
        if logp_eos.exp().mean().item() >= min_p_eos:
            break
        opt.zero_grad()
        (-logp_eos.mean()).backward()
        opt.step()
    else:
        raise AssertionError("p(EOS) did not rise")
    model.eval()
    return {k: v.detach().clone() for k, v in model.state_dict().items()}
