"""The learner's settings: the GRPO objective, LoRA, and the DeepSpeed trainer — pydantic only, no torch.

Importable without torch or DeepSpeed, so that validating a run config (``rlar train``)
does not pay for them. :mod:`rlar.learn.trainer` runs what :class:`TrainerConfig` describes, and
:mod:`rlar.learn.memory` estimates what it needs.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

LossAgg = Literal["token-mean", "seq-mean-token-mean"]
StalenessMode = Literal["drop", "decay"]
DType = Literal["fp32", "bf16", "fp16"]
Schedule = Literal["constant", "linear", "cosine"]


class GRPOConfig(BaseModel):
    """Hyper-parameters of the GRPO objective (advantages, clipping, off-policy handling)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    group_size: int = Field(8, ge=2)
    """Samples generated per prompt; advantages are relative within one group."""

    normalize_std: bool = True
    """Divide centred rewards by the group's standard deviation (GRPO); False gives Dr. GRPO's centring
    only, which does not up-weight groups whose rewards barely differ."""

    adv_eps: float = Field(1e-6, gt=0.0)
    """Added to the group std before dividing; a group whose std is at most this counts as all-equal
    and gets zero advantages."""

    clip_eps_low: float = Field(0.2, ge=0.0, lt=1.0)
    """Lower clip range: the ratio π_θ/π_prox is clipped at 1 − clip_eps_low."""

    clip_eps_high: float = Field(0.2, ge=0.0)
    """Upper clip range: the ratio is clipped at 1 + clip_eps_high (DAPO's clip-higher uses 0.28)."""

    is_cap: float | None = Field(2.0, ge=1.0)
    """Truncation of the behaviour importance weight π_prox/μ (verl's TIS cap). None turns the
    correction off (weight 1: the sample is treated as if the proximal policy had generated it)."""

    kl_coef: float = Field(0.0, ge=0.0)
    """Coefficient of the k3 KL estimate to a frozen reference policy; 0 needs no reference model."""

    loss_agg: LossAgg = "token-mean"
    """How token losses become one number: "token-mean" averages over every response token of the
    batch (long answers weigh more); "seq-mean-token-mean" averages within each sequence, then over
    sequences (every sample weighs the same)."""

    max_staleness: int = Field(4, ge=0)
    """Largest accepted lag, in policy versions, between the weights that generated a sample and the
    learner's current version."""

    staleness_mode: StalenessMode = "drop"
    """What happens to lagging samples: "drop" keeps every sample within max_staleness at full weight
    and discards the rest; "decay" also scales accepted samples down linearly with their lag."""

    @model_validator(mode="after")
    def _clip_range_is_sane(self) -> GRPOConfig:
        if self.clip_eps_low == 0.0 and self.clip_eps_high == 0.0:
            raise ValueError("clip_eps_low and clip_eps_high are both 0: the ratio would be frozen at 1")
        return self


class LoraSettings(BaseModel):
    """Low-rank adapters (peft) instead of full fine-tuning: the base weights stay frozen, only the adapters
    train and travel to the rollouts (which merge them into their weights, or serve them through vLLM's LoRA
    support)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    r: int = Field(16, ge=1)
    """Adapter rank."""

    alpha: int = Field(32, ge=1)
    """Scaling numerator: the update is (alpha / r) · B·A (alpha / sqrt(r) with ``rslora``)."""

    target_modules: list[str] | Literal["all-linear"] = "all-linear"
    """Module names (suffixes such as ``q_proj``) that get adapters; "all-linear": every linear layer but
    the output head."""

    dropout: float = Field(0.0, ge=0.0, lt=1.0)
    """Dropout on the adapter input while training. Above 0 the learner's log-probs are noisy, and so are
    its importance ratios; keep 0 for RL."""

    rslora: bool = False
    """Rank-stabilised scaling alpha / sqrt(r)."""

    @property
    def scaling(self) -> float:
        return self.alpha / (self.r**0.5 if self.rslora else self.r)


class TrainerConfig(BaseModel):
    """Learner settings: precision, memory, optimiser and schedule, DeepSpeed, batching, the GRPO objective."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    model_dir: Path
    """Local Hugging Face checkpoint directory (config + weights) of the policy to train."""

    ref_model_dir: Path | None = None
    """Frozen reference policy for the KL term; only used when grpo.kl_coef > 0. None means the starting
    policy: with LoRA, the base model with its adapters switched off (no second copy in memory);
    otherwise a second, frozen copy of model_dir in the training dtype."""

    dtype: DType = "fp32"
    """Training precision. "bf16"/"fp16": DeepSpeed mixed precision — weights, activations and gradients
    in 16 bits, fp32 master weights and Adam state in the optimizer; "fp16" adds dynamic loss scaling.
    DeepSpeed's CPU accelerator runs bf16; fp16 only where the accelerator supports it (a clear error
    otherwise)."""

    gradient_checkpointing: bool = False
    """Recompute each decoder layer's activations in the backward pass instead of keeping them: activation
    memory drops to about one hidden state per layer and token, for ~30% more compute."""

    lora: LoraSettings | None = None
    """Train low-rank adapters instead of every weight (None: full fine-tuning)."""

    lr: float = Field(1e-4, gt=0.0)
    """AdamW peak learning rate. On the tiny demo policy after a supervised warm-up, 1e-4 learns
    (rlar bench learn-offline); 5e-4 lost most of the warm-up's accuracy in its first steps."""

    lr_schedule: Schedule = "constant"
    """After the warm-up: "constant" keeps lr; "linear" and "cosine" decay it to min_lr_ratio · lr at
    decay_steps (and hold it there)."""

    warmup_steps: int = Field(0, ge=0)
    """Linear learning-rate warm-up: update k (0-based) runs at lr · min(1, (k+1)/warmup_steps). Adam's
    first updates move every weight by about lr whatever the gradient's size; on noisy RL gradients a
    warm-up softens those first steps."""

    decay_steps: int | None = Field(None, ge=1)
    """Update at which a linear/cosine decay reaches its floor (warm-up included). None: the learner's
    max_steps × minibatches_per_step."""

    min_lr_ratio: float = Field(0.0, ge=0.0, le=1.0)
    """Floor of the decay, as a fraction of lr."""

    weight_decay: float = Field(0.0, ge=0.0)
    """AdamW decoupled weight decay."""

    betas: tuple[float, float] = (0.9, 0.999)
    """AdamW betas."""

    adam_eps: float = Field(1e-8, gt=0.0)
    """AdamW epsilon."""

    grad_clip: float = Field(1.0, ge=0.0)
    """Global gradient-norm clip; 0 disables clipping."""

    zero_stage: Literal[0, 1, 2, 3] = 1
    """DeepSpeed ZeRO stage. 1 shards optimizer state, 2 also gradients, 3 also parameters."""

    optimizer: Literal["torch_adamw", "deepspeed_adam"] = "torch_adamw"
    """torch.optim.AdamW needs no compilation; DeepSpeed's (CPU or fused) Adam JIT-compiles a C++/CUDA
    extension on first use (~25-50 s on CPU, cached under ~/.cache/torch_extensions)."""

    micro_batch_size: int = Field(64, ge=1)
    """Most rows per forward/backward on one rank; larger batches are split and gradients accumulated."""

    micro_batch_tokens: int | None = Field(None, ge=1)
    """Token budget per forward/backward on one rank: rows (longest first) are grouped so that rows ×
    longest row ≤ this (a longer row goes alone), each group cut to its own length. Bounds activation
    memory whatever the response lengths; None: micro_batch_size rows, padded to the batch's longest."""

    minibatches_per_step: int = Field(1, ge=1)
    """Optimizer updates per batch. Proximal log-probs are taken once before the first, so from the
    second update on the clip range around the proximal policy is active."""

    grpo: GRPOConfig = GRPOConfig()
    """The objective: clip range, IS cap, aggregation, KL coefficient."""

    torch_threads: int | None = Field(1, ge=1)
    """torch intra-op threads set at construction (one per busy process held up on shared CPUs); None
    leaves torch's setting alone."""

    keep_freed_memory: bool = True
    """Keep memory freed by one step in the process for the next (glibc; :mod:`rlar.malloc`): a CPU step
    frees and re-allocates the same large tensors, which otherwise come back from the kernel as fresh pages,
    a page fault each 4 KiB. The process stays at its peak memory. False leaves malloc as it is."""

    seed: int = 0
    """Seed for torch's RNG at construction."""

    dist_backend: Literal["auto", "gloo", "nccl"] = "auto"
    """Process-group backend; auto picks nccl when CUDA is available, else gloo."""

    @model_validator(mode="after")
    def _lora_fits(self) -> TrainerConfig:
        if self.lora is not None and self.zero_stage == 3:
            raise ValueError(
                "lora with zero_stage = 3 is not supported: use ZeRO 0-2 (the frozen base is small "
                "next to full fine-tuning's optimizer state)"
            )
        return self

    def lr_factor(self, update: int, total: int | None = None) -> float:
        """Multiplier of lr at optimizer update ``update`` (0-based): the warm-up, then the schedule.
        ``total`` stands in for decay_steps when that is None (the learner passes its step budget)."""

        w = self.warmup_steps
        if w and update < w:
            return (update + 1) / w
        end = self.decay_steps or total
        if self.lr_schedule == "constant" or not end or end <= w:
            return 1.0
        frac = min(1.0, (update - w) / (end - w))
        floor = self.min_lr_ratio
        if self.lr_schedule == "linear":
            return floor + (1.0 - floor) * (1.0 - frac)
        return floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * frac))
