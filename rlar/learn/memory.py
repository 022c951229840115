"""How much memory a learner (and a vLLM rollout) needs for a model and a config, before anything is loaded.

:func:`estimate_learner` adds up, per rank, in bytes (b = 4 for fp32, 2 for bf16/fp16; P parameters, T of
them trainable — all, or the LoRA adapters; W ranks):

- weights: b·P (÷W at ZeRO-3); a frozen reference policy for the KL term adds b·P (not with LoRA, whose
  reference is the base model with the adapters switched off);
- gradients: b·T (÷W from ZeRO-2);
- fp32 master weights: 4·T with mixed precision, and also in fp32 from ZeRO-1 (DeepSpeed keeps an fp32
  partition of the flat parameters); fp32 gradient partition: 4·T with mixed precision (÷W from ZeRO-1);
- Adam: 8·T (two fp32 moments; ÷W from ZeRO-1);
- ZeRO-1/2 bucket: b·min(T, 5e8) (DeepSpeed's gradient-reduction buffer; the trainer caps its size at T);
- activations of one micro-batch of N tokens (S the longest row): per token and decoder layer
  b·(6h + 2·a·d + 2·kv·d + 4i + a + 2) for a Llama-style layer (RMSNorm, rotary attention through SDPA,
  SwiGLU MLP; h hidden, i intermediate, a/kv heads of dim d), plus (4−b)·(2h+2) in mixed precision (the
  norms save fp32 copies) and r·b per LoRA-adapted linear; with gradient checkpointing only b·h per layer
  (its input) plus one layer's worth, recomputed in the backward pass; the final norm and head input
  (4+b)·h per token;
- the output head: N·V·4 saved (fp32 log-softmax) and N·V·(8 + b) more in its backward pass (gradients of
  the log-probs and logits) — with a large vocabulary the largest single term, which
  ``micro_batch_tokens`` bounds.

How it was checked (tests/bus/test_trainer_scale.py): the saved-activation bytes that autograd actually keeps
(counted with ``torch.autograd.graph.saved_tensors_hooks``) on the tiny Llama, fp32 and bf16, with and
without checkpointing (within 2%); parameter counts against the model (built on the meta device here:
exact for any architecture transformers knows); LoRA's trainable count against peft's. Other layer types
(MoE, sliding-window, extra norms) are estimated with the Llama formula. Not included: the CUDA context and
allocator fragmentation (keep a margin), DeepSpeed's temporary buffers, ZeRO-3's gathered layers.

:func:`estimate_rollout` gives a vLLM engine's weights and KV cache bytes per token (2·L·kv·d·b).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

# torch and transformers are imported where used: heavy and optional (rlar --help imports this module).

if TYPE_CHECKING:
    from rlar.learn.config import TrainerConfig

GIB = 1024**3
BUCKET_MAX = 500_000_000
"""DeepSpeed's default ZeRO-1/2 reduce bucket, in elements."""
_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "float32": 4, "bfloat16": 2, "float16": 2}


def fmt_bytes(n: float) -> str:
    for unit, size in (("GiB", GIB), ("MiB", 1024**2), ("KiB", 1024)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"


@dataclass(frozen=True, slots=True)
class ModelShape:
    """What the estimates need from a checkpoint's config: sizes, and every linear layer (for LoRA)."""

    params: int
    hidden: int
    layers: int
    intermediate: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    linears: tuple[tuple[str, int, int], ...] = field(default=())
    """(module name, in_features, out_features) of every nn.Linear but the output head."""

    @classmethod
    def from_config(cls, config: str | Path | dict[str, Any]) -> ModelShape:
        """From a checkpoint directory, a config.json path, or its dict. Counts parameters exactly by building
        the model on the meta device (no memory, no weights read; needs torch and transformers)."""
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM

        if isinstance(config, dict):
            hf = AutoConfig.for_model(**config)
        else:
            path = Path(config)
            hf = AutoConfig.from_pretrained(path.parent if path.is_file() else path)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(hf)
        params = sum(p.numel() for p in model.parameters())
        head = model.get_output_embeddings()
        linears = tuple(
            (name, m.in_features, m.out_features)
            for name, m in model.named_modules()
            if isinstance(m, torch.nn.Linear) and m is not head
        )
        text = hf.get_text_config() if hasattr(hf, "get_text_config") else hf
        heads = int(text.num_attention_heads)
        return cls(
            params=params,
            hidden=int(text.hidden_size),
            layers=int(text.num_hidden_layers),
            intermediate=int(getattr(text, "intermediate_size", 4 * text.hidden_size)),
            heads=heads,
            kv_heads=int(getattr(text, "num_key_value_heads", None) or heads),
            head_dim=int(getattr(text, "head_dim", None) or text.hidden_size // heads),
            vocab=int(text.vocab_size),
            linears=linears,
        )

    def lora_params(self, r: int, targets: list[str] | str) -> tuple[int, int]:
        """(adapter parameters, adapted linears per decoder layer) for rank ``r`` on ``targets`` (module-name
        suffixes, or "all-linear")."""
        chosen = [
            (n, i, o)
            for n, i, o in self.linears
            if targets == "all-linear" or n.rsplit(".", 1)[-1] in targets
        ]
        return sum(r * (i + o) for _, i, o in chosen), len(chosen) // max(1, self.layers)


@dataclass(frozen=True, slots=True)
class MemoryEstimate:
    """Bytes per rank, by part (see the module docstring); ``tokens`` = micro-batch tokens the activations
    are for (None: given per 1,000 tokens)."""

    parts: dict[str, int]
    params: int
    trainable: int
    tokens: int | None
    dtype: str

    @property
    def total(self) -> int:
        return sum(self.parts.values())

    def summary(self) -> str:
        what = "" if self.tokens else " (activations per 1,000 tokens)"
        parts = ", ".join(f"{k} {fmt_bytes(v)}" for k, v in self.parts.items() if v)
        return (
            f"memory estimate per rank{what}: {fmt_bytes(self.total)} = {parts}; {self.params / 1e6:.1f}M "
            f"parameters, {self.trainable / 1e6:.2f}M trainable, {self.dtype}"
        )


def saved_activation_bytes(
    shape: ModelShape, dtype: str, *, checkpointing: bool, lora_per_layer: int = 0, lora_r: int = 0
) -> tuple[float, float]:
    """(bytes per token kept for the backward pass by the decoder stack and final norm, bytes per token of
    one decoder layer's full activations) — the formula of the module docstring, without the head."""
    b = _BYTES[dtype]
    h, d = shape.hidden, shape.head_dim
    elems = 6 * h + 2 * shape.heads * d + 2 * shape.kv_heads * d + 4 * shape.intermediate + shape.heads + 2
    layer = b * elems + (4 - b) * (2 * h + 2) + lora_per_layer * lora_r * b
    final = (4 + b) * h
    if checkpointing:
        return shape.layers * b * h + final, layer
    return shape.layers * layer + final, layer


def estimate_learner(
    cfg: TrainerConfig,
    *,
    world_size: int = 1,
    tokens: int | None = None,
    shape: ModelShape | None = None,
) -> MemoryEstimate:
    """Per-rank memory of a learner with ``cfg`` on ``world_size`` ranks, for micro-batches of ``tokens``
    tokens (default: ``cfg.micro_batch_tokens``; None: activations per 1,000 tokens)."""
    shape = shape or ModelShape.from_config(cfg.model_dir)
    b = _BYTES[cfg.dtype]
    mixed = cfg.dtype != "fp32"
    z, w = cfg.zero_stage, max(1, world_size)
    p = shape.params
    lora_per_layer = 0
    if cfg.lora is not None:
        t, lora_per_layer = shape.lora_params(cfg.lora.r, cfg.lora.target_modules)
        p += t
    else:
        t = p
    parts = {
        "weights": b * p // (w if z == 3 else 1),
        "gradients": b * t // (w if z >= 2 else 1),
        "master_weights": (4 * t if (mixed or z >= 1) else 0) // (w if z >= 1 else 1),
        "grad_fp32": (4 * t if mixed else 0) // (w if z >= 1 else 1),
        "optimizer": 8 * t // (w if z >= 1 else 1),
        "zero_bucket": b * min(t, BUCKET_MAX) if z in (1, 2) else 0,
        "reference": b * shape.params if cfg.grpo.kl_coef > 0 and cfg.lora is None else 0,
    }
    n = tokens or cfg.micro_batch_tokens or 1000
    saved, layer = saved_activation_bytes(
        shape,
        cfg.dtype,
        checkpointing=cfg.gradient_checkpointing,
        lora_per_layer=lora_per_layer,
        lora_r=cfg.lora.r if cfg.lora else 0,
    )
    parts["activations"] = int(n * (saved + (layer if cfg.gradient_checkpointing else 0)))
    parts["head"] = int(n * shape.vocab * (12 + (b if mixed else 0)))
    return MemoryEstimate(
        parts=parts, params=p, trainable=t, tokens=tokens or cfg.micro_batch_tokens, dtype=cfg.dtype
    )


def estimate_line(cfg: TrainerConfig, world_size: int = 1) -> str:
    """:meth:`MemoryEstimate.summary` of ``cfg``, or why there is none (an estimate never stops a run)."""
    try:
        return estimate_learner(cfg, world_size=world_size).summary()
    except Exception as exc:  # loading the model reports real errors
        return f"no memory estimate ({type(exc).__name__}: {exc})"


@dataclass(frozen=True, slots=True)
class RolloutMemory:
    weights: int
    kv_per_token: int


def estimate_rollout(shape: ModelShape, dtype: str, tensor_parallel: int = 1) -> RolloutMemory:
    """A vLLM engine's weights and KV-cache bytes per token, per GPU (sharded ``tensor_parallel`` ways)."""
    b = _BYTES[dtype]
    tp = max(1, tensor_parallel)
    kv = 2 * shape.layers * shape.kv_heads * shape.head_dim * b
    return RolloutMemory(weights=b * shape.params // tp, kv_per_token=kv // tp)
