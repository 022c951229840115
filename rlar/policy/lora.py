"""LoRA adapters as they travel from the learner to the rollouts: names, config, merging, a PEFT directory.

When the learner trains adapters (``[learner] trainer.lora``), only the adapters are published: tensors
named as PEFT saves them (``base_model.model.<module path>.lora_A.weight`` [r, in] and ``…lora_B.weight``
[out, r]) with the PEFT ``LoraConfig`` as a plain dict in the announcement (``WeightsAnnounce.adapter``).
A rollout then either

- merges them into its base weights: ``W = W_base + s · B @ A`` per adapted module (:func:`merge_adapter`,
  s = lora_alpha / r, or lora_alpha / sqrt(r) with ``use_rslora``) — the transformers engine; or
- serves them through vLLM's LoRA support: the tensors and config written as a PEFT adapter directory
  (:func:`write_peft_dir`) and passed with every generate call — the vLLM engine.

Only tensors; no peft import here (the learner uses peft to train, the rollouts do not need it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

# torch and safetensors are imported where used: heavy and optional (rlar --help imports this module).

if TYPE_CHECKING:
    import torch

PREFIX = "base_model.model."
_A, _B = ".lora_A.weight", ".lora_B.weight"


def scaling(config: Mapping[str, Any]) -> float:
    """The adapter update's scale s from a PEFT LoraConfig dict."""
    r = int(config["r"])
    alpha = float(config["lora_alpha"])
    return alpha / (r**0.5 if config.get("use_rslora") else r)


def adapter_pairs(names: Iterable[str]) -> dict[str, tuple[str, str]]:
    """``{base weight name: (A name, B name)}`` for adapter tensor names; ValueError for anything else
    (a name outside the PEFT layout, an A without its B)."""
    names = list(names)
    pairs: dict[str, tuple[str, str]] = {}
    for name in names:
        if not name.startswith(PREFIX) or not name.endswith((_A, _B)):
            raise ValueError(
                f"adapter tensor {name!r} is not a PEFT LoRA name (base_model.model.*.lora_[AB].weight)"
            )
        module = name[len(PREFIX) : -len(_A)]
        pairs[f"{module}.weight"] = (f"{PREFIX}{module}{_A}", f"{PREFIX}{module}{_B}")
    given = set(names)
    for weight, (a, b) in pairs.items():
        if a not in given or b not in given:
            raise ValueError(f"adapter for {weight} lacks {'lora_A' if a not in given else 'lora_B'}")
    return pairs


def merge_adapter(
    base: Mapping[str, torch.Tensor], adapter: Mapping[str, torch.Tensor], config: Mapping[str, Any]
) -> dict[str, torch.Tensor]:
    """The merged weight ``W_base + s · B @ A`` of every adapted module, by base parameter name, in the base
    weight's dtype (computed in float32). Checks names and shapes first (ValueError, nothing computed)."""
    import torch

    pairs = adapter_pairs(adapter)
    r = int(config["r"])
    for weight, (a, b) in pairs.items():
        if weight not in base:
            raise ValueError(f"adapter targets {weight}, which the model does not have")
        out_f, in_f = base[weight].shape
        if tuple(adapter[a].shape) != (r, in_f) or tuple(adapter[b].shape) != (out_f, r):
            raise ValueError(
                f"adapter for {weight} {tuple(base[weight].shape)}: A {tuple(adapter[a].shape)}, "
                f"B {tuple(adapter[b].shape)}, expected A ({r}, {in_f}) and B ({out_f}, {r})"
            )
    s = scaling(config)
    merged = {}
    for weight, (a, b) in pairs.items():
        w = base[weight]
        delta = adapter[b].to(torch.float32) @ adapter[a].to(torch.float32)
        merged[weight] = (w.to(torch.float32) + s * delta.to(w.device)).to(w.dtype)
    return merged


def write_peft_dir(
    out_dir: str | Path, tensors: Mapping[str, torch.Tensor], config: Mapping[str, Any]
) -> Path:
    """Write ``adapter_config.json`` + ``adapter_model.safetensors`` (what PEFT and vLLM load)."""
    from safetensors.torch import save_file

    adapter_pairs(tensors)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    save_file(
        {k: v.detach().contiguous().cpu() for k, v in tensors.items()}, str(out / "adapter_model.safetensors")
    )
    (out / "adapter_config.json").write_text(json.dumps(dict(config), indent=1))
    return out
