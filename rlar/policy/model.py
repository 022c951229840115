"""Build the demo's tiny policy locally, so nothing is downloaded from a hub.

The demo policy is a small Llama (hidden 128, 4 layers, 4 heads of dim 32 — vLLM's CPU attention needs
head_dim >= 32) over byte ids from transformers' ``ByT5Tokenizer``, which needs no vocabulary file.
Any local Hugging Face checkpoint directory can replace it: everything downstream only needs
``AutoModelForCausalLM.from_pretrained(path)`` and ``AutoTokenizer.from_pretrained(path)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# torch and transformers are imported where used: heavy and optional (the CLI starts without them).


@dataclass(frozen=True, slots=True)
class TinyPolicySpec:
    hidden_size: int = 128
    intermediate_size: int = 352
    num_hidden_layers: int = 4
    num_attention_heads: int = 4
    max_position_embeddings: int = 512
    tie_word_embeddings: bool = True
    seed: int = 0


def build_tiny_policy(out_dir: str | Path, spec: TinyPolicySpec | None = None) -> Path:
    """Write a randomly initialised tiny Llama + ByT5 tokenizer to ``out_dir`` (idempotent)."""
    import torch
    from transformers import ByT5Tokenizer, LlamaConfig, LlamaForCausalLM

    spec = spec or TinyPolicySpec()
    out = Path(out_dir)
    if (out / "config.json").exists() and any(out.glob("*.safetensors")):
        return out
    out.mkdir(parents=True, exist_ok=True)
    tok = ByT5Tokenizer()
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_hidden_layers,
        num_attention_heads=spec.num_attention_heads,
        num_key_value_heads=spec.num_attention_heads,
        max_position_embeddings=spec.max_position_embeddings,
        tie_word_embeddings=spec.tie_word_embeddings,
        bos_token_id=None,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        dtype="float32",
    )
    torch.manual_seed(spec.seed)
    model = LlamaForCausalLM(config)
    model.save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)
    return out
