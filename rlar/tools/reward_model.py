"""Learned reward model: any local ``AutoModelForSequenceClassification`` checkpoint, via transformers.

The model reads (query, response) and its logit is mapped to the declared range by ``params["transform"]``:

- ``sigmoid`` (default): sigmoid((logit - shift) / temperature), in [0, 1];
- ``tanh01``: (tanh((logit - shift) / temperature) + 1) / 2, in [0, 1];
- ``softmax``: for classifiers with several labels, the probability of ``label_index``;
- ``identity``: the raw logit; the spec's ``score_range`` must then bound it (finalize reports outliers).

Input text: ``format="chat"`` applies the tokenizer's chat template to a user/assistant pair, ``pair``
encodes (query, response) as a sentence pair, ``concat`` joins them with a newline; ``auto`` = chat when the
tokenizer has a template, else pair. Long inputs are truncated on the left (``truncation_side``) so the end
of the response — where sequence-classification heads on decoders read — survives.

Batched: inputs go through the model ``batch_size`` at a time, in float32 on CPU with ``num_threads``
torch threads (1 by default: this machine has 2 shared cores).

Option not implemented here: on a GPU, vLLM's pooling runner (``LLM(model=path, runner="pooling")`` and
``llm.classify`` / ``llm.reward``) serves the same checkpoints with continuous batching; a worker can swap
it in behind the same ``RewardTool`` interface.

``build_tiny_reward_model(out_dir)`` writes a tiny randomly initialised Llama reward model with a ByT5
byte tokenizer (no vocabulary files, nothing downloaded), for tests and the demo.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from rlar.tools.base import Outcome, RewardTool, ToolInput, ToolKind, ToolSpec

__all__ = ["RewardModelTool", "build_tiny_reward_model"]

_TRANSFORMS = ("sigmoid", "tanh01", "softmax", "identity")


def build_tiny_reward_model(out_dir: str | Path, *, seed: int = 0) -> Path:
    """Write a tiny random Llama ``ForSequenceClassification`` (num_labels=1) + ByT5 tokenizer (idempotent).

    Hidden 64, 2 layers, 2 heads of dim 32; ~0.1M parameters. Its preferences are random.
    """
    import torch
    from transformers import ByT5Tokenizer, LlamaConfig, LlamaForSequenceClassification

    out = Path(out_dir)
    if (out / "config.json").exists() and any(out.glob("*.safetensors")):
        return out
    out.mkdir(parents=True, exist_ok=True)
    tok = ByT5Tokenizer()
    # Passed as a dict: LlamaConfig takes the generic PretrainedConfig kwargs (num_labels, dtype) via **kwargs.
    kwargs: dict[str, Any] = dict(
        vocab_size=len(tok),
        hidden_size=64,
        intermediate_size=176,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        num_labels=1,
        bos_token_id=None,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        dtype="float32",
    )
    config = LlamaConfig(**kwargs)
    torch.manual_seed(seed)
    model = LlamaForSequenceClassification(config)
    model.save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)
    return out


class RewardModelTool(RewardTool):
    """Scores (query, response) pairs with a local sequence-classification reward model, in batches."""

    batched: ClassVar[bool] = True
    default_spec: ClassVar[ToolSpec] = ToolSpec(
        name="reward_model",
        kind=ToolKind.MODEL,
        description=(
            "Learned reward model: a local sequence-classification checkpoint (params.path) reads the query"
            " and response and outputs a scalar preference score, mapped to [0,1] by a sigmoid of the logit."
            " Reference-free. Captures helpfulness/quality as learned from preference data; use for open-"
            " ended chat, writing and instruction following where no checkable answer exists. Subject to"
            " reward hacking; combine with rule checks."
        ),
        task_types=["chat", "open_ended", "writing", "instruction_following", "helpfulness"],
        answer_formats=["free_text", "paragraph", "any"],
        params={
            "path": "",
            "transform": "sigmoid",
            "temperature": 1.0,
            "shift": 0.0,
            "label_index": 0,
            "format": "auto",
            "max_length": 512,
            "batch_size": 8,
            "truncation_side": "left",
            "num_threads": 1,
            "deadline_s": 60,
        },
    )

    def __init__(self, spec: ToolSpec, **resources: Any) -> None:
        super().__init__(spec, **resources)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        p = spec.params
        path = p.get("path")
        if not path:
            raise ValueError("reward_model needs params.path (a local checkpoint directory)")
        self.transform = p.get("transform", "sigmoid")
        if self.transform not in _TRANSFORMS:
            raise ValueError(f"reward_model transform must be one of {_TRANSFORMS}, got {self.transform!r}")
        self.temperature = float(p.get("temperature", 1.0))
        self.shift = float(p.get("shift", 0.0))
        self.label_index = int(p.get("label_index", 0))
        self.max_length = int(p.get("max_length", 512))
        self.batch_size = int(p.get("batch_size", 8))
        torch.set_num_threads(int(p.get("num_threads", 1)))
        self.tok = AutoTokenizer.from_pretrained(path)
        self.tok.padding_side = "right"
        self.tok.truncation_side = p.get("truncation_side", "left")
        self.model = AutoModelForSequenceClassification.from_pretrained(path, dtype=torch.float32).eval()
        if self.model.config.pad_token_id is None and self.tok.pad_token_id is not None:
            self.model.config.pad_token_id = self.tok.pad_token_id
        fmt = p.get("format", "auto")
        if fmt == "auto":
            fmt = "chat" if getattr(self.tok, "chat_template", None) else "pair"
        if fmt not in ("chat", "pair", "concat"):
            raise ValueError(f"reward_model format must be auto|chat|pair|concat, got {fmt!r}")
        self.format = fmt

    def _encode(self, batch: Sequence[ToolInput]) -> Any:
        kw: dict[str, Any] = dict(
            padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        )
        if self.format == "pair":
            return self.tok([x.query for x in batch], [x.response for x in batch], **kw)
        if self.format == "concat":
            return self.tok([f"{x.query}\n{x.response}" for x in batch], **kw)
        texts = [
            self.tok.apply_chat_template(
                [{"role": "user", "content": x.query}, {"role": "assistant", "content": x.response}],
                tokenize=False,
            )
            for x in batch
        ]
        return self.tok(texts, add_special_tokens=False, **kw)

    def _map(self, logits: list[float]) -> float:
        if self.transform == "softmax":
            m = max(logits)
            exps = [math.exp(v - m) for v in logits]
            return exps[self.label_index] / sum(exps)
        x = logits[self.label_index]
        if self.transform == "identity":
            return x
        z = (x - self.shift) / self.temperature
        if self.transform == "tanh01":
            return (math.tanh(z) + 1.0) / 2.0
        return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))

    async def _score_batch(self, inputs: Sequence[ToolInput]) -> list[Outcome]:
        import torch

        outs: list[Outcome] = []
        with torch.inference_mode():
            for i in range(0, len(inputs), self.batch_size):
                chunk = inputs[i : i + self.batch_size]
                logits = self.model(**self._encode(chunk)).logits.float().tolist()
                for row in logits:
                    outs.append(self.ok(self._map(row), "", logit=row[self.label_index]))
        return outs
