"""GRPO maths: group-relative advantages, the decoupled-PPO token loss, staleness weights, the config.

Pure torch and pydantic; no distributed state, no model. The trainer feeds these functions per-token
tensors aligned with the input ids; the tests check them against hand-computed values.

The loss is the decoupled PPO objective (AReaL, "proximal policy") with truncated importance sampling
for the behaviour policy (verl's TIS). Three policies are involved:

- behaviour ``μ``: the weights that generated the sample (an inference engine, possibly stale);
- proximal ``π_prox``: the learner's weights just before this update (detached);
- current ``π_θ``: the weights being optimised.

Per response token, with advantage ``A``::

    r     = exp(log π_θ − log π_prox)                   # trust-region ratio, carries the gradient
    w     = min(exp(log π_prox − log μ), is_cap)        # off-policy correction, detached, truncated
    L_tok = −w · min(r·A, clip(r, 1−ε_low, 1+ε_high)·A)  [+ β · k3(π_θ ‖ π_ref)]

Clipping is taken around the proximal policy rather than the (possibly much older) behaviour policy, so
the trust region does not shrink with staleness; the truncated weight keeps the gradient unbiased-ish
while bounding its variance.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from rlar.learn.config import GRPOConfig, LossAgg, StalenessMode

__all__ = [
    "GRPOConfig",
    "LossOutput",
    "advantages",
    "group_advantages",
    "grpo_token_loss",
    "k3_kl",
    "staleness_weight",
]


def advantages(
    rewards: Sequence[float],
    mask: Sequence[bool] | None = None,
    *,
    normalize_std: bool = True,
    eps: float = 1e-6,
) -> list[float]:
    """:func:`group_advantages` on plain lists (what the learner has; a group is a handful of numbers, so Python
    floats — float64 — beat a dozen tiny tensor ops). The values are rounded to float32, as the tensor form's."""
    n = len(rewards)
    valid = [True] * n if mask is None else [bool(m) for m in mask]
    if len(valid) != n:
        raise ValueError(f"mask shape ({len(valid)},) != rewards shape ({n},)")
    out = [0.0] * n
    vals = [float(r) for r, ok in zip(rewards, valid, strict=True) if ok]
    if len(vals) < 2:
        return out
    if not all(math.isfinite(x) for x in vals):
        raise ValueError(f"non-finite reward among valid group members: {vals}")
    if all(x == vals[0] for x in vals):
        return out
    mean = math.fsum(vals) / len(vals)
    std = math.sqrt(math.fsum((x - mean) ** 2 for x in vals) / (len(vals) - 1))
    if std <= eps:
        return out
    it = iter(vals)
    for i, ok in enumerate(valid):
        if ok:
            centred = next(it) - mean
            out[i] = centred / (std + eps) if normalize_std else centred
    return array("f", out).tolist()


def group_advantages(
    rewards: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    normalize_std: bool = True,
    eps: float = 1e-6,
) -> torch.Tensor:
    """Group-relative advantages for one group of samples of the same prompt.

    ``rewards``: float [G]. ``mask``: bool [G], False for members whose reward abstained or errored;
    they neither enter the mean/std nor receive an advantage (0). The std is the sample std
    (Bessel-corrected, as TRL and verl compute it). A group with fewer than two valid members, or whose
    valid rewards are all equal or have std ≤ ``eps``, gets all zeros: it carries no learning signal. A
    non-finite valid reward is a bug upstream (mask it instead): ValueError. Computed in float64 (the
    float32 mean of equal values is not always that value: an all-equal group of large rewards got a
    spurious common advantage); returns float32 [G]. (:func:`advantages` is the same on lists.)
    """
    if rewards.dim() != 1:
        raise ValueError(f"rewards must be 1-D [G], got shape {tuple(rewards.shape)}")
    if mask is not None and mask.shape != rewards.shape:
        raise ValueError(f"mask shape {tuple(mask.shape)} != rewards shape {tuple(rewards.shape)}")
    adv = advantages(
        rewards.to(torch.float64).tolist(),
        None if mask is None else mask.to(torch.bool).tolist(),
        normalize_std=normalize_std,
        eps=eps,
    )
    return torch.tensor(adv, dtype=torch.float32)


def staleness_weight(staleness: int, max_staleness: int, mode: StalenessMode = "drop") -> float:
    """Loss weight of a sample generated ``staleness`` policy versions ago.

    "drop": 1 if staleness ≤ max_staleness else 0. "decay": 1 − staleness/(max_staleness + 1) within
    the bound (1 for on-policy, 1/(max+1) at the bound), 0 beyond. Negative staleness means a sample
    from a version the learner has not produced yet, which is a bug upstream: ValueError.
    """
    if staleness < 0:
        raise ValueError(f"negative staleness {staleness}: sample claims a future policy version")
    if max_staleness < 0:
        raise ValueError(f"max_staleness must be >= 0, got {max_staleness}")
    if staleness > max_staleness:
        return 0.0
    if mode == "drop":
        return 1.0
    if mode == "decay":
        return 1.0 - staleness / (max_staleness + 1)
    raise ValueError(f"unknown staleness mode {mode!r}")


def k3_kl(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    """Schulman's k3 estimate of KL(π_θ ‖ π_ref) per sampled token: exp(d) − d − 1, d = ref − new.

    Non-negative, unbiased for samples from π_θ, and differentiable through ``logprobs``.
    """
    d = ref_logprobs - logprobs
    return torch.exp(d) - d - 1.0


@dataclass(frozen=True, slots=True)
class LossOutput:
    """The scalar to back-propagate and detached float metrics (means over this call's response tokens).

    ``tokens`` and ``sequences`` count what the metrics were averaged over, so callers can combine
    micro-batches and ranks by weighted averages.
    """

    loss: torch.Tensor
    metrics: dict[str, float]
    tokens: int
    sequences: int


def grpo_token_loss(
    logprobs: torch.Tensor,
    prox_logprobs: torch.Tensor,
    behav_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    response_mask: torch.Tensor,
    *,
    clip_eps_low: float = 0.2,
    clip_eps_high: float = 0.2,
    is_cap: float | None = 2.0,
    loss_agg: LossAgg = "token-mean",
    ref_logprobs: torch.Tensor | None = None,
    kl_coef: float = 0.0,
    seq_weights: torch.Tensor | None = None,
    normalizer: float | None = None,
    entropy: torch.Tensor | None = None,
) -> LossOutput:
    """Decoupled-PPO / truncated-IS GRPO loss over a padded batch (see the module docstring).

    Shapes: ``logprobs`` (with grad), ``prox_logprobs``, ``behav_logprobs``, ``response_mask`` and the
    optional ``ref_logprobs`` / ``entropy`` are [B, T]; ``advantages`` is [B] (one per sequence, the GRPO
    case) or [B, T]; ``seq_weights`` [B] multiplies each sequence's policy and KL terms (staleness
    decay) without changing the denominator, so a dropped sample should be left out of the batch.
    Only positions where ``response_mask`` is true count; values elsewhere are ignored, so padding may
    hold anything finite.

    ``normalizer`` replaces the local denominator — the response-token count for "token-mean", the
    count of sequences with any response token for "seq-mean-token-mean" — so that micro-batches and
    ranks can each contribute ``sum/global_count`` and the summed gradient equals the full-batch mean.
    ``kl_coef > 0`` requires ``ref_logprobs``. Returns the loss and metrics: pg_loss, kl, clip_frac
    (tokens where the clipped term was the active one), ratio_mean, is_weight_mean, is_trunc_frac
    (tokens whose weight hit the cap), entropy (if given).
    """
    if logprobs.dim() != 2:
        raise ValueError(f"logprobs must be [B, T], got {tuple(logprobs.shape)}")
    for name, t in (("prox_logprobs", prox_logprobs), ("behav_logprobs", behav_logprobs)):
        if t.shape != logprobs.shape:
            raise ValueError(f"{name} shape {tuple(t.shape)} != logprobs shape {tuple(logprobs.shape)}")
    if response_mask.shape != logprobs.shape:
        raise ValueError(f"response_mask shape {tuple(response_mask.shape)} != {tuple(logprobs.shape)}")
    if kl_coef > 0.0 and ref_logprobs is None:
        raise ValueError("kl_coef > 0 needs ref_logprobs")

    mask = response_mask.to(logprobs.dtype)
    adv = advantages.to(logprobs.dtype)
    if adv.dim() == 1:
        adv = adv[:, None]
    prox = prox_logprobs.detach().to(logprobs.dtype)
    behav = behav_logprobs.detach().to(logprobs.dtype)
    # Padding positions may hold arbitrary values; zero the log-ratio there so exp() cannot overflow.
    log_ratio = torch.where(mask > 0, logprobs - prox, torch.zeros_like(logprobs))
    ratio = torch.exp(log_ratio)
    clipped = ratio.clamp(1.0 - clip_eps_low, 1.0 + clip_eps_high)
    surr = ratio * adv
    surr_clipped = clipped * adv
    pg_obj = torch.minimum(surr, surr_clipped)
    with torch.no_grad():
        raw_w = torch.exp(torch.where(mask > 0, prox - behav, torch.zeros_like(prox)))
        is_w = raw_w if is_cap is None else raw_w.clamp(max=is_cap)
    per_tok = -is_w * pg_obj

    kl_tok: torch.Tensor | None = None
    if ref_logprobs is not None:
        ref = ref_logprobs.detach().to(logprobs.dtype)
        kl_tok = k3_kl(logprobs, torch.where(mask > 0, ref, logprobs.detach()))
        if kl_coef > 0.0:
            per_tok = per_tok + kl_coef * kl_tok

    if seq_weights is not None:
        per_tok = per_tok * seq_weights.to(logprobs.dtype)[:, None]

    tok_count = mask.sum()
    seq_tok = mask.sum(dim=1)
    has_tok = seq_tok > 0
    n_seq = int(has_tok.sum())
    if loss_agg == "token-mean":
        denom = float(normalizer) if normalizer is not None else max(float(tok_count), 1.0)
        loss = (per_tok * mask).sum() / denom
    elif loss_agg == "seq-mean-token-mean":
        seq_mean = (per_tok * mask).sum(dim=1) / seq_tok.clamp(min=1.0)
        denom = float(normalizer) if normalizer is not None else max(float(n_seq), 1.0)
        loss = (seq_mean * has_tok.to(seq_mean.dtype)).sum() / denom
    else:
        raise ValueError(f"unknown loss_agg {loss_agg!r}")

    with torch.no_grad():
        n_tok = max(float(tok_count), 1.0)

        def tmean(x: torch.Tensor) -> float:
            return float((x * mask).sum() / n_tok)

        metrics = {
            "pg_loss": tmean(-is_w * pg_obj),
            "clip_frac": tmean((surr_clipped < surr).to(mask.dtype)),
            "ratio_mean": tmean(ratio),
            "is_weight_mean": tmean(is_w),
            "is_trunc_frac": tmean((raw_w > is_cap).to(mask.dtype)) if is_cap is not None else 0.0,
        }
        if kl_tok is not None:
            metrics["kl"] = tmean(kl_tok)
        if entropy is not None:
            metrics["entropy"] = tmean(entropy.to(mask.dtype))
    return LossOutput(loss=loss, metrics=metrics, tokens=int(tok_count), sequences=n_seq)
