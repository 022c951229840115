"""DeepSpeed learner for GRPO: teacher-forced log-probs, one update per batch, checkpoints, weight export.

``DeepSpeedPolicyTrainer`` wraps a local Hugging Face causal-LM directory in a DeepSpeed engine (ZeRO
stage 0-3, torch AdamW by default, gradient clipping, fp32 or bf16) and knows nothing about the bus: it
takes a ``PolicyBatch`` of token ids, behaviour log-probs and advantages and returns metrics.

One ``step(batch)``:
1. (multi-rank) keep this rank's rows ``rank::world`` of the global batch;
2. compute proximal log-probs (and reference log-probs when KL is on) once, without grad, with the
   weights as they are before the update — with one minibatch these are the update's own forward pass,
   detached, so no extra pass is made;
3. for each of ``minibatches_per_step`` minibatches: forward/backward in micro-batches of at most
   ``micro_batch_size`` rows, each contributing ``sum / global_count`` so that the accumulated gradient
   equals the full-batch mean across micro-batches and ranks, then one optimizer step.

With one minibatch the ratio π_θ/π_prox is exactly 1 at the update, so clipping never triggers and the
loss is the truncated-IS policy gradient; with several, later minibatches are clipped around the
proximal policy (decoupled PPO).

Distributed: the process group is initialised on first use (gloo on CPU with ``DS_ACCELERATOR=cpu``,
nccl on GPU). Launch several ranks with ``torchrun --nproc_per_node N`` or ``deepspeed --num_gpus N``
(the latter appends ``--local_rank=N`` to the script's argv; entry scripts must accept it). Every
collective method (``step``, ``save_checkpoint``, ``load_latest``, ``export_named_tensors``,
``save_hf``) must be called on all ranks in the same order.

Not covered: tensor/pipeline/sequence parallelism, LoRA, sequence packing, LR schedules beyond a
linear warm-up.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch
import torch.distributed as dist
import torch.nn.functional as F
from pydantic import BaseModel, ConfigDict, Field

from rlar.learn.distributed import import_deepspeed, init_distributed
from rlar.learn.grpo import GRPOConfig, grpo_token_loss

log = logging.getLogger(__name__)


class TrainerConfig(BaseModel):
    """Learner settings: optimiser, DeepSpeed, batching, and the GRPO objective."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    model_dir: Path
    """Local Hugging Face checkpoint directory (config + weights) of the policy to train."""

    ref_model_dir: Path | None = None
    """Frozen reference policy for the KL term; only loaded when grpo.kl_coef > 0. None means the
    starting policy (model_dir)."""

    lr: float = Field(1e-4, gt=0.0)
    """AdamW learning rate (constant after warm-up). On the tiny demo policy after a supervised warm-up,
    1e-4 learns (bench/learn_offline.py); 5e-4 lost most of the warm-up's accuracy in its first steps."""

    warmup_steps: int = Field(0, ge=0)
    """Linear learning-rate warm-up: update k (0-based) runs at lr · min(1, (k+1)/warmup_steps). Adam's
    first updates move every weight by about lr whatever the gradient's size; on noisy RL gradients a
    warm-up softens those first steps."""

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

    dtype: Literal["fp32", "bf16"] = "fp32"
    """Training precision. bf16 keeps fp32 master weights in the optimizer."""

    optimizer: Literal["torch_adamw", "deepspeed_adam"] = "torch_adamw"
    """torch.optim.AdamW needs no compilation; DeepSpeed's (CPU or fused) Adam JIT-compiles a C++/CUDA
    extension on first use (~25-50 s on CPU, cached under ~/.cache/torch_extensions)."""

    micro_batch_size: int = Field(64, ge=1)
    """Most rows per forward/backward on one rank; larger batches are split and gradients accumulated."""

    minibatches_per_step: int = Field(1, ge=1)
    """Optimizer updates per batch. Proximal log-probs are taken once before the first, so from the
    second update on the clip range around the proximal policy is active."""

    grpo: GRPOConfig = GRPOConfig()
    """The objective: clip range, IS cap, aggregation, KL coefficient."""

    torch_threads: int | None = Field(1, ge=1)
    """torch intra-op threads set at construction (one per busy process held up on shared CPUs); None
    leaves torch's setting alone."""

    seed: int = 0
    """Seed for torch's RNG at construction."""

    dist_backend: Literal["auto", "gloo", "nccl"] = "auto"
    """Process-group backend; auto picks nccl when CUDA is available, else gloo."""


@dataclass(frozen=True, slots=True)
class PolicyBatch:
    """Right-padded prompt+response token ids with everything the GRPO loss needs, aligned per position.

    ``input_ids``/``attention_mask``/``response_mask``/``behav_logprobs`` are [B, T]; position t of
    ``behav_logprobs`` holds log μ(input_ids[t] | input_ids[<t]) where ``response_mask[t]`` is true
    (ignored elsewhere). ``advantages`` [B]; ``seq_weights`` [B] or None (staleness weights; they scale
    a row's terms but not the loss denominator, so leave dropped rows out of the batch). The first token
    of a row is never a response token (it has no context).
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    response_mask: torch.Tensor
    behav_logprobs: torch.Tensor
    advantages: torch.Tensor
    seq_weights: torch.Tensor | None = None

    def __post_init__(self) -> None:
        shape = self.input_ids.shape
        if self.input_ids.dim() != 2:
            raise ValueError(f"input_ids must be [B, T], got {tuple(shape)}")
        for name in ("attention_mask", "response_mask", "behav_logprobs"):
            if getattr(self, name).shape != shape:
                raise ValueError(f"{name} shape {tuple(getattr(self, name).shape)} != {tuple(shape)}")
        if self.advantages.shape != shape[:1]:
            raise ValueError(f"advantages must be [B]={shape[0]}, got {tuple(self.advantages.shape)}")
        if self.seq_weights is not None and self.seq_weights.shape != shape[:1]:
            raise ValueError(f"seq_weights must be [B]={shape[0]}, got {tuple(self.seq_weights.shape)}")
        if shape[1] > 0 and bool(self.response_mask[:, 0].any()):
            raise ValueError("response_mask[:, 0] must be False: the first token has no context")

    def __len__(self) -> int:
        return int(self.input_ids.shape[0])

    def select(self, rows: torch.Tensor | slice) -> PolicyBatch:
        """The sub-batch of the given rows (index tensor or slice)."""
        return PolicyBatch(
            input_ids=self.input_ids[rows],
            attention_mask=self.attention_mask[rows],
            response_mask=self.response_mask[rows],
            behav_logprobs=self.behav_logprobs[rows],
            advantages=self.advantages[rows],
            seq_weights=None if self.seq_weights is None else self.seq_weights[rows],
        )

    def to(self, device: torch.device | str) -> PolicyBatch:
        return PolicyBatch(
            input_ids=self.input_ids.to(device),
            attention_mask=self.attention_mask.to(device),
            response_mask=self.response_mask.to(device),
            behav_logprobs=self.behav_logprobs.to(device),
            advantages=self.advantages.to(device),
            seq_weights=None if self.seq_weights is None else self.seq_weights.to(device),
        )

    @classmethod
    def from_samples(
        cls,
        prompt_ids: Sequence[Sequence[int]],
        response_ids: Sequence[Sequence[int]],
        behav_logprobs: Sequence[Sequence[float]],
        advantages: Sequence[float],
        seq_weights: Sequence[float] | None = None,
        pad_id: int = 0,
    ) -> PolicyBatch:
        """Pack per-sample lists (one behaviour log-prob per response token) into a right-padded batch.

        Every prompt needs at least one token; a response may be empty (the row then contributes
        nothing). Lengths of ``response_ids[i]`` and ``behav_logprobs[i]`` must match.
        """
        n = len(prompt_ids)
        if not (len(response_ids) == len(behav_logprobs) == len(advantages) == n):
            raise ValueError("prompt_ids, response_ids, behav_logprobs, advantages differ in length")
        if seq_weights is not None and len(seq_weights) != n:
            raise ValueError("seq_weights length differs from the batch")
        lengths = []
        for i, (p, r, lp) in enumerate(zip(prompt_ids, response_ids, behav_logprobs, strict=True)):
            if len(p) == 0:
                raise ValueError(f"sample {i}: empty prompt")
            if len(r) != len(lp):
                raise ValueError(f"sample {i}: {len(r)} response tokens but {len(lp)} log-probs")
            lengths.append(len(p) + len(r))
        t = max(lengths) if lengths else 0
        ids = torch.full((n, t), pad_id, dtype=torch.long)
        attn = torch.zeros((n, t), dtype=torch.long)
        resp = torch.zeros((n, t), dtype=torch.bool)
        blp = torch.zeros((n, t), dtype=torch.float32)
        for i, (p, r, lp) in enumerate(zip(prompt_ids, response_ids, behav_logprobs, strict=True)):
            lp_, lr_ = len(p), len(r)
            ids[i, :lp_] = torch.as_tensor(list(p), dtype=torch.long)
            if lr_:
                ids[i, lp_ : lp_ + lr_] = torch.as_tensor(list(r), dtype=torch.long)
                blp[i, lp_ : lp_ + lr_] = torch.as_tensor(list(lp), dtype=torch.float32)
                resp[i, lp_ : lp_ + lr_] = True
            attn[i, : lp_ + lr_] = 1
        return cls(
            input_ids=ids,
            attention_mask=attn,
            response_mask=resp,
            behav_logprobs=blp,
            advantages=torch.as_tensor(list(advantages), dtype=torch.float32),
            seq_weights=None
            if seq_weights is None
            else torch.as_tensor(list(seq_weights), dtype=torch.float32),
        )


def token_logprobs(
    model: torch.nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    *,
    with_entropy: bool = False,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Teacher-forced log π(input_ids[t] | input_ids[<t]) per position, [B, T] (position 0 is 0).

    With ``with_entropy``, also the (detached) entropy of the predictive distribution at each position
    that predicts a token, [B, T]. Gradients flow through the log-probs when grad is enabled. Right
    padding only: pads after a row's tokens do not affect its earlier positions (causal attention).
    """
    out = model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False)
    logits = out.logits[:, :-1, :].float()
    logp = F.log_softmax(logits, dim=-1)
    tok = torch.gather(logp, -1, input_ids[:, 1:, None]).squeeze(-1)
    zeros = torch.zeros_like(tok[:, :1])
    lp = torch.cat([zeros, tok], dim=1)
    ent: torch.Tensor | None = None
    if with_entropy:
        with torch.no_grad():
            e = -(logp.exp() * logp).sum(-1)
            ent = torch.cat([torch.zeros_like(e[:, :1]), e], dim=1)
    return lp, ent


class DeepSpeedPolicyTrainer:
    """A GRPO learner over one local HF causal-LM checkpoint (see the module docstring)."""

    def __init__(self, cfg: TrainerConfig) -> None:
        from transformers import AutoModelForCausalLM

        self.cfg = cfg
        if cfg.torch_threads is not None:
            torch.set_num_threads(cfg.torch_threads)
        torch.manual_seed(cfg.seed)
        deepspeed = import_deepspeed()
        self.rank, self.world_size = init_distributed(cfg.dist_backend)
        from deepspeed.accelerator import get_accelerator

        accel = get_accelerator()
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        self.device = torch.device(accel.device_name(local_rank) if accel.device_name() != "cpu" else "cpu")
        if self.device.type == "cuda":
            torch.cuda.set_device(self.device)

        model = AutoModelForCausalLM.from_pretrained(cfg.model_dir, dtype=torch.float32)
        self._hf_config = model.config
        model.train()
        optimizer: torch.optim.Optimizer | None = None
        if cfg.optimizer == "torch_adamw":
            optimizer = torch.optim.AdamW(
                model.parameters(),
                lr=cfg.lr,
                betas=cfg.betas,
                eps=cfg.adam_eps,
                weight_decay=cfg.weight_decay,
            )
        warmup = cfg.warmup_steps

        def schedule(opt: torch.optim.Optimizer) -> torch.optim.lr_scheduler.LRScheduler:
            # Step k (0-based) runs at lr * min(1, (k + 1) / warmup): the first update is already non-zero.
            # DeepSpeed steps it after every optimizer step and keeps its state in checkpoints.
            return torch.optim.lr_scheduler.LambdaLR(
                opt, lambda k: min(1.0, (k + 1) / warmup) if warmup else 1.0
            )

        self.engine, *_ = deepspeed.initialize(
            model=model, optimizer=optimizer, lr_scheduler=schedule, config=self.ds_config()
        )
        self.ref_model: torch.nn.Module | None = None
        if cfg.grpo.kl_coef > 0.0:
            ref: torch.nn.Module = AutoModelForCausalLM.from_pretrained(
                cfg.ref_model_dir or cfg.model_dir, dtype=torch.float32
            )
            ref.eval().requires_grad_(False)
            self.ref_model = ref.to(self.device)
        self.resumed_step: int | None = None

    def ds_config(self) -> dict[str, Any]:
        """The DeepSpeed config this trainer runs with (generated from ``cfg``)."""
        c = self.cfg
        conf: dict[str, Any] = {
            # Batch sizes are bookkeeping only: the trainer owns accumulation boundaries
            # (managed_gradient_accumulation=False) because GRPO batches vary in size.
            "train_micro_batch_size_per_gpu": 1,
            "gradient_accumulation_steps": 1,
            "managed_gradient_accumulation": False,
            "gradient_clipping": c.grad_clip,
            "zero_optimization": {"stage": c.zero_stage},
            "steps_per_print": 1 << 30,
            "wall_clock_breakdown": False,
        }
        if c.dtype == "bf16":
            conf["bf16"] = {"enabled": True}
        if c.optimizer == "deepspeed_adam":
            conf["optimizer"] = {
                "type": "AdamW",
                "params": {
                    "lr": c.lr,
                    "betas": list(c.betas),
                    "eps": c.adam_eps,
                    "weight_decay": c.weight_decay,
                },
            }
        return conf

    @property
    def module(self) -> torch.nn.Module:
        """The underlying HF model (parameters partitioned under ZeRO-3)."""
        return self.engine.module  # type: ignore[no-any-return]

    @property
    def global_step(self) -> int:
        """Optimizer steps taken (restored by ``load_latest``)."""
        return int(self.engine.global_steps)

    # ---- log-probs and the update -------------------------------------------------------------

    @torch.no_grad()
    def logprobs(self, batch: PolicyBatch) -> torch.Tensor:
        """Teacher-forced log-probs of the current weights, [B, T] on CPU, 0 outside response tokens.

        Local: no sharding across ranks (under ZeRO-3 every rank must still call it together).
        """
        b = batch.to(self.device)
        lp, _ = token_logprobs(self.engine, b.input_ids, b.attention_mask)
        return (lp * b.response_mask).cpu()

    def _local_rows(self, batch: PolicyBatch) -> PolicyBatch:
        if self.world_size == 1:
            return batch
        if len(batch) % self.world_size:
            raise ValueError(f"global batch of {len(batch)} rows does not split over {self.world_size} ranks")
        return batch.select(slice(self.rank, None, self.world_size))

    def _all_sum(self, values: list[float]) -> list[float]:
        if self.world_size == 1:
            return values
        t = torch.tensor(
            values, dtype=torch.float64, device=self.device if self.device.type != "cpu" else "cpu"
        )
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        return [float(x) for x in t.cpu()]

    def step(self, batch: PolicyBatch, *, shard: bool = True) -> dict[str, float]:
        """One learner update on ``batch``; returns metrics averaged over all ranks' response tokens.

        With ``shard`` (default) ``batch`` is the global batch, identical on every rank, and each rank
        trains on rows ``rank::world`` (its row count must divide evenly); without it each rank passes
        its own rows, and all ranks must pass the same number of rows. Metrics: loss, pg_loss,
        clip_frac, ratio_mean, is_weight_mean, is_trunc_frac, entropy, kl (if KL is on), grad_norm, lr
        (of the last update), tokens, sequences, step, step_s. grad_norm is the pre-clip norm, NaN at
        ZeRO-0 with several ranks (DeepSpeed does not report it there).
        """
        t0 = time.perf_counter()
        g = self.cfg.grpo
        local = self._local_rows(batch) if shard else batch
        local = local.to(self.device)
        n_rows = len(local)
        mb_bounds = _split_bounds(n_rows, self.cfg.minibatches_per_step)
        with torch.no_grad():
            # With one update per batch the proximal policy is the current one: its log-probs are the
            # update's own forward, detached (bit-identical), so the extra forward pass is skipped.
            prox: torch.Tensor | None = None
            if len(mb_bounds) > 1:
                prox, _ = token_logprobs(self.engine, local.input_ids, local.attention_mask)
            ref: torch.Tensor | None = None
            if self.ref_model is not None:
                ref, _ = token_logprobs(self.ref_model, local.input_ids, local.attention_mask)

        totals: dict[str, float] = {}
        weight_sum = 0.0
        loss_sum = 0.0
        grad_norms: list[float] = []
        lr_used = 0.0
        for lo, hi in mb_bounds:
            mb_mask = local.response_mask[lo:hi]
            seq_has = mb_mask.any(dim=1)
            local_count = float(mb_mask.sum()) if g.loss_agg == "token-mean" else float(seq_has.sum())
            (global_count,) = self._all_sum([local_count])
            # DeepSpeed averages gradients over ranks; scale back up so the result is sum / global_count.
            normalizer = max(global_count, 1.0) / self.world_size
            n_micro = max(1, math.ceil((hi - lo) / self.cfg.micro_batch_size))
            for mlo, mhi in _split_bounds(hi - lo, n_micro):
                rows = slice(lo + mlo, lo + mhi)
                mb = local.select(rows)
                new, ent = token_logprobs(self.engine, mb.input_ids, mb.attention_mask, with_entropy=True)
                out = grpo_token_loss(
                    new,
                    prox[rows] if prox is not None else new.detach(),
                    mb.behav_logprobs,
                    mb.advantages,
                    mb.response_mask,
                    clip_eps_low=g.clip_eps_low,
                    clip_eps_high=g.clip_eps_high,
                    is_cap=g.is_cap,
                    loss_agg=g.loss_agg,
                    ref_logprobs=None if ref is None else ref[rows],
                    kl_coef=g.kl_coef,
                    seq_weights=mb.seq_weights,
                    normalizer=normalizer,
                    entropy=ent,
                )
                self.engine.backward(out.loss, scale_wrt_gas=False)
                loss_sum += float(out.loss.detach()) / self.world_size
                for k, v in out.metrics.items():
                    totals[k] = totals.get(k, 0.0) + v * out.tokens
                weight_sum += out.tokens
            gn: float | None = None
            if self.cfg.zero_stage == 0 and self.world_size == 1:
                # DeepSpeed reports no norm at stage 0; on one rank the local gradient is the global one.
                grads = [p.grad for p in self.module.parameters() if p.grad is not None]
                gn = float(torch.nn.utils.get_total_norm(grads)) if grads else 0.0
            lr_used = float(self.engine.get_lr()[0])
            self.engine.step()
            if gn is None:
                ds_norm = self.engine.get_global_grad_norm()
                gn = float(ds_norm) if ds_norm is not None else None
            if gn is not None:
                grad_norms.append(gn)

        keys = sorted(totals)
        reduced = self._all_sum([totals[k] for k in keys] + [weight_sum, loss_sum, float(n_rows)])
        tok = reduced[len(keys)]
        metrics = {k: reduced[i] / max(tok, 1.0) for i, k in enumerate(keys)}
        metrics["loss"] = reduced[len(keys) + 1] / len(mb_bounds)
        metrics["tokens"] = tok
        metrics["sequences"] = reduced[len(keys) + 2]
        metrics["grad_norm"] = sum(grad_norms) / len(grad_norms) if grad_norms else float("nan")
        metrics["lr"] = lr_used
        metrics["step"] = float(self.global_step)
        metrics["step_s"] = time.perf_counter() - t0
        return metrics

    # ---- checkpoints and weights --------------------------------------------------------------

    def save_checkpoint(
        self, ckpt_dir: str | Path, step: int, extra: dict[str, Any], keep_last: int | None = None
    ) -> Path:
        """Save a DeepSpeed checkpoint (weights, optimizer state, engine counters) tagged ``step{step}``.

        ``extra`` (e.g. policy version, data cursor) must be torch-picklable and is returned by
        ``load_latest``. The ``latest`` file is updated, and with ``keep_last`` older tags are deleted
        (by rank 0, after every rank has written). Collective. Returns the tag directory.
        """
        d = Path(ckpt_dir)
        tag = f"step{step:08d}"
        self.engine.save_checkpoint(str(d), tag=tag, client_state={"rlar": {"step": step, "extra": extra}})
        if self.world_size > 1:
            dist.barrier()
        if keep_last is not None and self.rank == 0:
            tags = sorted(p for p in d.glob("step*") if p.is_dir())
            for old in tags[: max(0, len(tags) - keep_last)]:
                shutil.rmtree(old, ignore_errors=True)
        return d / tag

    def load_latest(self, ckpt_dir: str | Path) -> dict[str, Any] | None:
        """Restore the newest checkpoint in ``ckpt_dir`` (per its ``latest`` file): weights, optimizer
        state, step counters. Returns the saved ``extra`` dict, or None if there is no checkpoint (the
        trainer is then unchanged). Sets ``resumed_step`` to the saved step. Collective.
        """
        d = Path(ckpt_dir)
        if not (d / "latest").is_file():
            return None
        path, client = self.engine.load_checkpoint(str(d))
        if path is None:
            return None
        state = client.get("rlar") if client else None
        if not isinstance(state, dict):
            raise ValueError(f"checkpoint {path} has no rlar client state")
        self.resumed_step = int(state["step"])
        extra = state["extra"]
        return dict(extra)

    def export_named_tensors(
        self, dtype: torch.dtype | None = torch.float32
    ) -> Iterator[tuple[str, torch.Tensor]]:
        """Yield (HF parameter name, detached CPU tensor) for every parameter, for weight sync.

        Names are the HF model's ``named_parameters`` (tied weights appear once, under the embedding's
        name). Under ZeRO-3 each parameter is gathered, so every rank must iterate to the end; tensors
        are yielded on rank 0 only (other ranks yield nothing). ``dtype`` casts (None keeps the
        training dtype). The tensors are copies, safe to keep after further steps.
        """
        gather: Any = None
        if self.cfg.zero_stage == 3:
            deepspeed = import_deepspeed()
            gather = deepspeed.zero.GatheredParameters
        for name, p in self.module.named_parameters():
            if gather is not None:
                with gather([p], modifier_rank=None):
                    t = p.detach().to("cpu", copy=True)
            else:
                t = p.detach().to("cpu", copy=True)
            if self.rank == 0:
                yield name, (t if dtype is None else t.to(dtype))

    def save_hf(self, out_dir: str | Path, tokenizer_dir: str | Path | None = None) -> Path:
        """Write the current weights as an HF checkpoint dir (config, safetensors, tokenizer files).

        Collective (ZeRO-3 gathers); rank 0 writes. Tokenizer files are copied from ``tokenizer_dir``
        (default: the model dir).
        """
        from transformers import AutoTokenizer

        out = Path(out_dir)
        state = dict(self.export_named_tensors())
        if self.rank == 0:
            from transformers import AutoModelForCausalLM

            out.mkdir(parents=True, exist_ok=True)
            model = AutoModelForCausalLM.from_config(self._hf_config, dtype=torch.float32)
            missing, unexpected = model.load_state_dict(state, strict=False)
            # Tied heads are not separate parameters; anything else missing is a bug.
            missing = [
                m for m in missing if not (self._hf_config.tie_word_embeddings and m == "lm_head.weight")
            ]
            if missing or unexpected:
                raise RuntimeError(f"export mismatch: missing {missing}, unexpected {unexpected}")
            model.save_pretrained(out, safe_serialization=True)
            AutoTokenizer.from_pretrained(tokenizer_dir or self.cfg.model_dir).save_pretrained(out)
        if self.world_size > 1:
            dist.barrier()
        return out


def _split_bounds(n: int, parts: int) -> list[tuple[int, int]]:
    """Split range(n) into ``min(parts, n)`` contiguous, near-equal (lo, hi) pieces (at least one)."""
    parts = max(1, min(parts, n))
    base, rem = divmod(n, parts)
    bounds = []
    lo = 0
    for i in range(parts):
        hi = lo + base + (1 if i < rem else 0)
        bounds.append((lo, hi))
        lo = hi
    return bounds
