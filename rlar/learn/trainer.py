"""DeepSpeed learner for GRPO: teacher-forced log-probs, one update per batch, checkpoints, weight export.

``DeepSpeedPolicyTrainer`` wraps a local Hugging Face causal-LM directory in a DeepSpeed engine (ZeRO
stage 0-3, torch AdamW by default, gradient clipping; fp32, or bf16/fp16 mixed precision with fp32 master
weights; optional gradient checkpointing and LoRA adapters through peft) and knows nothing about the
bus: it takes a :class:`~rlar.learn.batch.PolicyBatch` of token ids, behaviour log-probs, advantages and
sampling temperatures and returns metrics. Its settings: :class:`rlar.learn.config.TrainerConfig`.

One ``step(batch)``:
1. (multi-rank) keep this rank's rows ``rank::world`` of the global batch;
2. compute proximal log-probs (and reference log-probs when KL is on) once, without grad, with the
   weights as they are before the update — with one minibatch these are the update's own forward pass,
   detached, so no extra pass is made;
3. for each of ``minibatches_per_step`` minibatches: forward/backward in micro-batches (at most
   ``micro_batch_size`` rows, and with ``micro_batch_tokens`` at most that many padded tokens, each cut to
   its own length; :func:`~rlar.learn.batch.micro_batches`), each contributing ``sum / global_count`` so
   that the accumulated gradient equals the full-batch mean across micro-batches and ranks, then one
   optimizer step (the learning rate follows :meth:`TrainerConfig.lr_factor`).

With one minibatch the ratio π_θ/π_prox is exactly 1 at the update, so clipping never triggers and the
loss is the truncated-IS policy gradient; with several, later minibatches are clipped around the
proximal policy (decoupled PPO).

What the importance weight means under the rollout's sampling settings (they travel with every sample
group, :class:`bus.messages.Sampling`): the policy trained is the tempered one, π_θ = softmax(z_θ / T) at
the temperature T the row was sampled at (greedy rows: T = 1), so proximal, current and reference
log-probs are all taken at T. The behaviour log-prob log μ is that of the distribution the token was
actually drawn from: π at T restricted to the top-k tokens, then to the top-p nucleus, renormalised. The
weight π_prox/μ therefore equals, for a token sampled on-policy, the probability mass Z ≤ 1 that the
truncation kept at that position: truncation down-weights positions where it cut much, and tokens outside
the kept set are never sampled, so their gradient is missing — the update ascends the tempered policy's
objective on the kept support only (a bias of at most 1 − Z per position; none without truncation).
Off-policy the weight is the usual ratio on top of that, truncated at ``is_cap``.

Distributed: the process group is initialised on first use (gloo on CPU with ``DS_ACCELERATOR=cpu``,
nccl on GPU). Launch several ranks with ``torchrun --nproc_per_node N`` or ``deepspeed --num_gpus N``
(the latter appends ``--local_rank=N`` to the script's argv; entry scripts must accept it). Every
collective method (``step``, ``save_checkpoint``, ``load_latest``, ``export_named_tensors``,
``save_hf``) must be called on all ranks in the same order; ranks run the same number of forward and
backward passes (micro-batches are split until the counts agree).

Not covered: tensor/pipeline/sequence parallelism, sequence packing, LoRA with ZeRO-3.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from rlar.learn.batch import PolicyBatch, micro_batches, split_bounds, token_logprobs
from rlar.learn.config import DType, TrainerConfig
from rlar.learn.distributed import import_deepspeed, init_distributed
from rlar.learn.grpo import grpo_token_loss
from rlar.learn.memory import BUCKET_MAX
from rlar.malloc import keep_freed_memory
from rlar.policy.lora import PREFIX, merge_adapter

# deepspeed, transformers and peft are imported where used: heavy and optional (the CLI starts without them).

__all__ = ["DeepSpeedPolicyTrainer", "PolicyBatch", "PrecisionUnsupported", "TrainerConfig", "token_logprobs"]

log = logging.getLogger(__name__)

TORCH_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


class PrecisionUnsupported(ValueError):
    """The accelerator DeepSpeed runs on cannot train in the requested dtype."""


def check_precision(dtype: DType) -> None:
    """Raise :class:`PrecisionUnsupported` when DeepSpeed's accelerator cannot train in ``dtype``."""
    if dtype == "fp32":
        return
    import_deepspeed()
    from deepspeed.accelerator import get_accelerator

    accel = get_accelerator()
    ok = accel.is_fp16_supported() if dtype == "fp16" else accel.is_bf16_supported()
    if not ok:
        raise PrecisionUnsupported(
            f"dtype = {dtype!r} is not supported by DeepSpeed's {accel.device_name()!r} accelerator on this "
            "machine (CPU: fp16 needs oneDNN fp16 support, torch.ops.mkldnn._is_mkldnn_fp16_supported()); "
            "use 'bf16' or 'fp32' here, or train on a GPU"
        )


class DeepSpeedPolicyTrainer:
    """A GRPO learner over one local HF causal-LM checkpoint (see the module docstring).

    ``total_updates`` stands in for ``cfg.decay_steps`` when that is None (the learner passes its step
    budget), so a linear or cosine schedule ends with the run.
    """

    def __init__(self, cfg: TrainerConfig, *, total_updates: int | None = None) -> None:
        from transformers import AutoModelForCausalLM

        self.cfg = cfg
        if cfg.torch_threads is not None:
            torch.set_num_threads(cfg.torch_threads)
        if cfg.keep_freed_memory:
            keep_freed_memory()
        torch.manual_seed(cfg.seed)
        deepspeed = import_deepspeed()
        check_precision(cfg.dtype)
        self.rank, self.world_size = init_distributed(cfg.dist_backend)
        from deepspeed.accelerator import get_accelerator

        accel = get_accelerator()
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        self.device = torch.device(accel.device_name(local_rank) if accel.device_name() != "cpu" else "cpu")
        if self.device.type == "cuda":
            torch.cuda.set_device(self.device)

        # Loaded in the training dtype: DeepSpeed's optimizer makes the fp32 master copies itself.
        dtype = TORCH_DTYPES[cfg.dtype]
        model: Any = AutoModelForCausalLM.from_pretrained(cfg.model_dir, dtype=dtype)
        self._hf_config = model.config
        if cfg.gradient_checkpointing:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if cfg.lora is not None:
            from peft import LoraConfig, get_peft_model

            lc = cfg.lora
            target = lc.target_modules if isinstance(lc.target_modules, str) else list(lc.target_modules)
            model = get_peft_model(
                model,
                LoraConfig(
                    r=lc.r,
                    lora_alpha=lc.alpha,
                    target_modules=target,
                    lora_dropout=lc.dropout,
                    use_rslora=lc.rslora,
                    bias="none",
                    task_type="CAUSAL_LM",
                ),
            )
        model.train()
        trainable = [p for p in model.parameters() if p.requires_grad]
        self.trainable_params = sum(p.numel() for p in trainable)
        optimizer: torch.optim.Optimizer | None = None
        if cfg.optimizer == "torch_adamw":
            optimizer = torch.optim.AdamW(
                trainable, lr=cfg.lr, betas=cfg.betas, eps=cfg.adam_eps, weight_decay=cfg.weight_decay
            )

        def schedule(opt: torch.optim.Optimizer) -> torch.optim.lr_scheduler.LRScheduler:
            # DeepSpeed steps it after every optimizer step and keeps its state in checkpoints.
            return torch.optim.lr_scheduler.LambdaLR(opt, lambda k: cfg.lr_factor(k, total_updates))

        self.engine, *_ = deepspeed.initialize(
            model=model,
            optimizer=optimizer,
            model_parameters=trainable if optimizer is None else None,
            lr_scheduler=schedule,
            config=self.ds_config(),
        )
        self.ref_model: torch.nn.Module | None = None
        if cfg.grpo.kl_coef > 0.0 and not (cfg.lora is not None and cfg.ref_model_dir is None):
            ref: torch.nn.Module = AutoModelForCausalLM.from_pretrained(
                cfg.ref_model_dir or cfg.model_dir, dtype=dtype
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
        if c.zero_stage in (1, 2):
            # DeepSpeed allocates its reduce bucket in full (default 5e8 elements: 2 GB in fp32) whatever the
            # model's size; a bucket the size of the trainable parameters holds every gradient already.
            n = max(1, min(BUCKET_MAX, getattr(self, "trainable_params", BUCKET_MAX)))
            conf["zero_optimization"].update(reduce_bucket_size=n, allgather_bucket_size=n)
        if c.dtype == "bf16":
            conf["bf16"] = {"enabled": True}
        elif c.dtype == "fp16":
            conf["fp16"] = {"enabled": True, "loss_scale": 0, "initial_scale_power": 16, "hysteresis": 2}
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
        """The underlying HF model (a peft model with LoRA; parameters partitioned under ZeRO-3)."""
        return self.engine.module  # type: ignore[no-any-return]

    @property
    def global_step(self) -> int:
        """Optimizer steps taken (restored by ``load_latest``)."""
        return int(self.engine.global_steps)

    # ---- log-probs and the update -------------------------------------------------------------

    def _groups(self, batch: PolicyBatch) -> list[list[int]]:
        """Micro-batches of ``batch``'s rows, as many on every rank (split further where fewer)."""
        groups = micro_batches(batch.lengths.tolist(), self.cfg.micro_batch_size, self.cfg.micro_batch_tokens)
        if self.world_size > 1:
            (most,) = self._all_max([len(groups)])
            while len(groups) < most:  # rows per rank are equal, so some group has two rows to split
                big = max(range(len(groups)), key=lambda i: len(groups[i]))
                g = groups.pop(big)
                groups[big:big] = [g[: len(g) // 2], g[len(g) // 2 :]]
        return groups

    def _sub(self, batch: PolicyBatch, rows: list[int]) -> tuple[torch.Tensor, PolicyBatch]:
        idx = torch.tensor(rows, dtype=torch.long, device=batch.input_ids.device)
        width = int(batch.lengths[idx].max()) if rows else 0
        return idx, batch.select(idx, width)

    @torch.no_grad()
    def _frozen_logprobs(self, batch: PolicyBatch, reference: bool) -> torch.Tensor:
        """Log-probs [B, T] of the weights before the update (or of the reference policy), no grad."""
        out = torch.zeros(batch.input_ids.shape, dtype=torch.float32, device=batch.input_ids.device)
        for rows in self._groups(batch):
            idx, mb = self._sub(batch, rows)
            temp, want = mb.temperature, mb.response_mask
            if not reference:
                lp, _ = token_logprobs(
                    self.engine, mb.input_ids, mb.attention_mask, temperature=temp, positions=want
                )
            elif self.ref_model is not None:
                lp, _ = token_logprobs(
                    self.ref_model, mb.input_ids, mb.attention_mask, temperature=temp, positions=want
                )
            else:  # LoRA: the base model is the adapters switched off
                with self.module.disable_adapter():  # type: ignore[operator]
                    lp, _ = token_logprobs(
                        self.engine, mb.input_ids, mb.attention_mask, temperature=temp, positions=want
                    )
            out[idx, : lp.shape[1]] = lp.float()
        return out

    def logprobs(self, batch: PolicyBatch) -> torch.Tensor:
        """Teacher-forced log-probs of the current weights at each row's temperature, [B, T] on CPU, 0
        outside response tokens. Local: no sharding across ranks (under ZeRO-3 every rank must still call
        it together)."""
        b = batch.to(self.device)
        return (self._frozen_logprobs(b, reference=False) * b.response_mask).cpu()

    def _local_rows(self, batch: PolicyBatch) -> PolicyBatch:
        if self.world_size == 1:
            return batch
        if len(batch) % self.world_size:
            raise ValueError(f"global batch of {len(batch)} rows does not split over {self.world_size} ranks")
        return batch.select(slice(self.rank, None, self.world_size))

    def _reduce(self, values: list[float], op: Any) -> list[float]:
        if self.world_size == 1:
            return values
        t = torch.tensor(
            values, dtype=torch.float64, device=self.device if self.device.type != "cpu" else "cpu"
        )
        dist.all_reduce(t, op=op)
        return [float(x) for x in t.cpu()]

    def _all_sum(self, values: list[float]) -> list[float]:
        return self._reduce(values, dist.ReduceOp.SUM)

    def _all_max(self, values: list[int]) -> list[int]:
        return [int(v) for v in self._reduce([float(v) for v in values], dist.ReduceOp.MAX)]

    def step(self, batch: PolicyBatch, *, shard: bool = True) -> dict[str, float]:
        """One learner update on ``batch``; returns metrics averaged over all ranks' response tokens.

        With ``shard`` (default) ``batch`` is the global batch, identical on every rank, and each rank
        trains on rows ``rank::world`` (its row count must divide evenly); without it each rank passes
        its own rows, and all ranks must pass the same number of rows. Metrics: loss, pg_loss,
        clip_frac, ratio_mean, is_weight_mean, is_trunc_frac, entropy, kl (if KL is on), grad_norm, lr
        (of the last update), tokens, sequences, micro_batches, step, step_s. grad_norm is the pre-clip
        norm, NaN at ZeRO-0 with several ranks (DeepSpeed does not report it there).
        """
        t0 = time.perf_counter()
        g = self.cfg.grpo
        local = self._local_rows(batch) if shard else batch
        local = local.to(self.device)
        mb_bounds = split_bounds(len(local), self.cfg.minibatches_per_step)
        # With one update per batch the proximal policy is the current one: its log-probs are the update's own
        # forward, detached (bit-identical), so the extra forward pass is skipped.
        prox = self._frozen_logprobs(local, reference=False) if len(mb_bounds) > 1 else None
        ref = self._frozen_logprobs(local, reference=True) if g.kl_coef > 0.0 else None

        totals: dict[str, float] = {}
        weight_sum = loss_sum = lr_used = 0.0
        n_micro = 0
        grad_norms: list[float] = []
        for lo, hi in mb_bounds:
            part = local.select(slice(lo, hi))
            seq_has = part.response_mask.any(dim=1)
            local_count = (
                float(part.response_mask.sum()) if g.loss_agg == "token-mean" else float(seq_has.sum())
            )
            (global_count,) = self._all_sum([local_count])
            # DeepSpeed averages gradients over ranks; scale back up so the result is sum / global_count.
            normalizer = max(global_count, 1.0) / self.world_size
            for rows in self._groups(part):
                idx, mb = self._sub(part, rows)
                w = mb.input_ids.shape[1]
                at = idx + lo
                new, ent = token_logprobs(
                    self.engine,
                    mb.input_ids,
                    mb.attention_mask,
                    temperature=mb.temperature,
                    with_entropy=True,
                    positions=mb.response_mask,
                )
                new = new.float()
                old = new.detach() if prox is None else prox[at, :w]
                out = grpo_token_loss(
                    new,
                    old,
                    mb.behav_logprobs,
                    mb.advantages,
                    mb.response_mask,
                    clip_eps_low=g.clip_eps_low,
                    clip_eps_high=g.clip_eps_high,
                    is_cap=g.is_cap,
                    loss_agg=g.loss_agg,
                    ref_logprobs=None if ref is None else ref[at, :w],
                    kl_coef=g.kl_coef,
                    seq_weights=mb.seq_weights,
                    normalizer=normalizer,
                    entropy=ent,
                )
                self.engine.backward(out.loss, scale_wrt_gas=False)
                n_micro += 1
                loss_sum += float(out.loss.detach()) / self.world_size
                for k, v in out.metrics.items():
                    totals[k] = totals.get(k, 0.0) + v * out.tokens
                weight_sum += out.tokens
            gn: float | None = None
            if self.cfg.zero_stage == 0 and self.world_size == 1:
                # DeepSpeed reports no norm at stage 0; on one rank the local gradient is the global one.
                grads = [p.grad.float() for p in self.module.parameters() if p.grad is not None]
                gn = float(torch.nn.utils.get_total_norm(grads)) if grads else 0.0
            lr_used = float(self.engine.get_lr()[0])
            self.engine.step()
            if gn is None:
                ds_norm = self.engine.get_global_grad_norm()
                gn = float(ds_norm) if ds_norm is not None else None
            if gn is not None:
                grad_norms.append(gn)

        keys = sorted(totals)
        reduced = self._all_sum([totals[k] for k in keys] + [weight_sum, loss_sum, float(len(local))])
        tok = reduced[len(keys)]
        metrics = {k: reduced[i] / max(tok, 1.0) for i, k in enumerate(keys)}
        metrics["loss"] = reduced[len(keys) + 1] / len(mb_bounds)
        metrics["tokens"] = tok
        metrics["sequences"] = reduced[len(keys) + 2]
        metrics["micro_batches"] = float(n_micro)
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

    def adapter_config(self) -> dict[str, Any] | None:
        """With LoRA, the PEFT ``LoraConfig`` as a JSON-able dict (it travels with the adapter tensors, see
        :mod:`rlar.policy.lora`); None for full fine-tuning."""
        if self.cfg.lora is None:
            return None
        peft_cfg: Any = self.module.peft_config["default"]  # type: ignore[index]
        return dict(
            json.loads(
                json.dumps(peft_cfg.to_dict(), default=lambda v: sorted(v) if isinstance(v, set) else str(v))
            )
        )

    def export_named_tensors(
        self, dtype: torch.dtype | None = torch.float32
    ) -> Iterator[tuple[str, torch.Tensor]]:
        """Yield (name, detached CPU tensor) of what a rollout needs to serve the current policy.

        Full fine-tuning: every parameter under its HF name (``named_parameters``; tied weights once,
        under the embedding's name). LoRA: only the adapter tensors, under PEFT's saved names
        (``base_model.model.<module>.lora_[AB].weight``; see :meth:`adapter_config`). Under ZeRO-3 each
        parameter is gathered, so every rank must iterate to the end; tensors are yielded on rank 0 only
        (other ranks yield nothing). ``dtype`` casts (None keeps the training dtype). The tensors are
        copies, safe to keep after further steps.
        """
        if self.cfg.lora is not None:
            from peft import get_peft_model_state_dict

            for name, t in get_peft_model_state_dict(self.module).items():
                if self.rank == 0:
                    c = t.detach().to("cpu", copy=True)
                    yield name, (c if dtype is None else c.to(dtype))
            return
        gather: Any = None
        if self.cfg.zero_stage == 3:
            gather = import_deepspeed().zero.GatheredParameters
        for name, p in self.module.named_parameters():
            if gather is not None:
                with gather([p], modifier_rank=None):
                    t = p.detach().to("cpu", copy=True)
            else:
                t = p.detach().to("cpu", copy=True)
            if self.rank == 0:
                yield name, (t if dtype is None else t.to(dtype))

    def _full_state(self) -> dict[str, torch.Tensor]:
        """Every weight under its HF name, in float32 on CPU (LoRA: the adapters merged into the base)."""
        if self.cfg.lora is None:
            return dict(self.export_named_tensors())

        base = {}
        for name, p in self.module.named_parameters():
            if "lora_" not in name:
                base[name.removeprefix(PREFIX).replace(".base_layer.", ".")] = p.detach().to(
                    "cpu", torch.float32
                )
        cfg = self.adapter_config()
        assert cfg is not None
        return {**base, **merge_adapter(base, dict(self.export_named_tensors()), cfg)}

    def save_hf(self, out_dir: str | Path, tokenizer_dir: str | Path | None = None) -> Path:
        """Write the current weights as an HF checkpoint dir (config, safetensors, tokenizer files); with
        LoRA, the adapters merged into the base weights.

        Collective (ZeRO-3 gathers); rank 0 writes. Tokenizer files are copied from ``tokenizer_dir``
        (default: the model dir).
        """
        from transformers import AutoModelForCausalLM, AutoTokenizer

        out = Path(out_dir)
        state = self._full_state()
        if self.rank == 0:
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
