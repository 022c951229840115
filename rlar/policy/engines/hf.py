"""The transformers engine: a batched, KV-cached sampling loop written out by hand.

Why not ``model.generate``: it draws from torch's global RNG, reports log-probs only through extra
score tensors, and hides padding and stopping rules that must match the learner. The loop is short:

1. expand the prompts ``n`` times, left-pad them into one batch (position ids count real tokens only,
   so a padded row computes exactly what it would alone) and prefill the KV cache;
2. per step, turn the last logits into the sampling distribution (:func:`sampling_log_probs`), draw
   with the call's own ``torch.Generator``, record the token and its behaviour log-prob;
3. a row finishes at a stop token (kept) or at its length limit; finished rows keep decoding padding,
   masked out, until every row of the chunk is done.

Limits: rows are decoded in chunks of ``max_num_seqs``; a chunk runs as long as its longest row (no
continuous batching, no prefix sharing between the ``n`` samples of a prompt), so vLLM wins for big
models and long outputs. Exactness: log-probs agree with a teacher-forced forward pass of the same model
to float32 rounding (~1e-6).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from rlar.malloc import keep_freed_memory
from rlar.policy.engines.base import (
    GREEDY_TEMPERATURE,
    Completion,
    GenerationEngine,
    TransformersEngineConfig,
    WeightsInput,
    sampling_log_probs,
    stop_token_ids,
)
from rlar.policy.lora import adapter_pairs, merge_adapter

# torch and transformers are imported where used: heavy and optional (rlar --help imports this module).

if TYPE_CHECKING:
    import torch


class TransformersEngine(GenerationEngine):
    """``AutoModelForCausalLM`` in eval mode on ``cfg.device``; see the module docstring."""

    def __init__(self, cfg: TransformersEngineConfig) -> None:
        import torch
        from transformers import AutoModelForCausalLM

        if cfg.num_threads is not None:
            torch.set_num_threads(cfg.num_threads)
        if cfg.keep_freed_memory:
            keep_freed_memory()
        super().__init__(cfg)
        self.cfg: TransformersEngineConfig = cfg
        self.device = torch.device(cfg.device)
        # Typed Any: transformers' decorated signatures confuse mypy, and only forward/params are used.
        self.model: Any = cast(
            Any,
            AutoModelForCausalLM.from_pretrained(
                cfg.model, dtype=getattr(torch, cfg.dtype), attn_implementation=cfg.attn_implementation
            ),
        )
        self.model.to(self.device).eval()
        self.stop_ids = stop_token_ids(cfg.model, self.tokenizer)
        self._special_ids = frozenset(self.tokenizer.all_special_ids)
        pad = self.tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else min(self.stop_ids))
        self._generator = torch.Generator(device=self.device).manual_seed(cfg.seed)
        self._lora_base: dict[str, torch.Tensor] | None = None
        self._closed = False
        # The implementation transformers actually loaded (it may fall back from the one asked for).
        self._decode_mask_4d = _plain_causal_sdpa(
            self.model.config, str(getattr(self.model.config, "_attn_implementation", ""))
        )

    def generate(
        self,
        prompt_ids: list[list[int]],
        *,
        n: int,
        max_new_tokens: int,
        temperature: float = 1.0,
        top_p: float = 1.0,
        top_k: int = 0,
        seed: int | None = None,
    ) -> list[list[Completion]]:
        import torch

        self._check_generate_args(prompt_ids, n, max_new_tokens, temperature, top_p, top_k)
        if self._closed:
            raise RuntimeError("engine is closed")
        gen = self._generator if seed is None else torch.Generator(device=self.device).manual_seed(seed)
        rows = [p for p in prompt_ids for _ in range(n)]
        done: list[Completion] = []
        chunk = self.cfg.max_num_seqs
        with torch.inference_mode():
            for start in range(0, len(rows), chunk):
                done.extend(
                    self._sample_chunk(
                        rows[start : start + chunk], max_new_tokens, temperature, top_p, top_k, gen
                    )
                )
        return [done[i * n : (i + 1) * n] for i in range(len(prompt_ids))]

    def _sample_chunk(
        self,
        rows: list[list[int]],
        max_new_tokens: int,
        temperature: float,
        top_p: float,
        top_k: int,
        gen: torch.Generator,
    ) -> list[Completion]:
        import torch
        from transformers import DynamicCache

        dev = self.device
        batch = len(rows)
        width = max(len(r) for r in rows)
        input_ids = torch.full((batch, width), self.pad_id, dtype=torch.long)
        attn = torch.zeros((batch, width), dtype=torch.long)
        for i, r in enumerate(rows):
            input_ids[i, width - len(r) :] = torch.tensor(r, dtype=torch.long)
            attn[i, width - len(r) :] = 1
        input_ids, attn = input_ids.to(dev), attn.to(dev)
        positions = (attn.cumsum(-1) - 1).clamp(min=0)
        limits = [min(max_new_tokens, self.cfg.max_model_len - len(r)) for r in rows]
        stop = torch.tensor(sorted(self.stop_ids), device=dev)

        tokens: list[list[int]] = [[] for _ in rows]
        logps: list[list[float]] = [[] for _ in rows]
        reasons: list[str | None] = [None] * batch
        cache = DynamicCache(config=self.model.config)
        out = self.model(
            input_ids=input_ids,
            attention_mask=attn,
            position_ids=positions,
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=1,
        )
        next_pos = positions[:, -1:] + 1
        for step in range(max(limits)):
            logits = out.logits[:, -1, :].float()
            tok, lp = self._sample(logits, temperature, top_p, gen, top_k)
            is_stop = torch.isin(tok, stop)
            tok_l, lp_l, stop_l = tok.tolist(), lp.tolist(), is_stop.tolist()
            for i in range(batch):
                if reasons[i] is not None:
                    continue
                tokens[i].append(tok_l[i])
                logps[i].append(lp_l[i])
                if stop_l[i]:
                    reasons[i] = "stop"
                elif step + 1 >= limits[i]:
                    reasons[i] = "length"
            if all(r is not None for r in reasons):
                break
            # Finished rows keep decoding (their outputs are ignored); their tokens stay attended but
            # only affect themselves, since each row attends to its own cache only.
            attn = torch.cat([attn, torch.ones((batch, 1), dtype=attn.dtype, device=dev)], dim=1)
            out = self.model(
                input_ids=tok[:, None],
                attention_mask=attn[:, None, None, :].bool() if self._decode_mask_4d else attn,
                position_ids=next_pos,
                past_key_values=cache,
                use_cache=True,
            )
            next_pos = next_pos + 1
        return [
            Completion(
                token_ids=tokens[i],
                logprobs=logps[i],
                # = decode(..., skip_special_tokens=True), without the tokenizer listing its special ids per call
                text=str(self.tokenizer.decode([t for t in tokens[i] if t not in self._special_ids])),
                finish_reason=str(reasons[i]),
            )
            for i in range(batch)
        ]

    def _sample(
        self, logits: torch.Tensor, temperature: float, top_p: float, gen: torch.Generator, top_k: int = 0
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Next tokens [B] and their behaviour log-probs [B] (see base.py for the two modes)."""
        import torch

        logp = sampling_log_probs(logits, temperature, top_p, top_k)
        if temperature < GREEDY_TEMPERATURE:
            tok = logits.argmax(dim=-1)
        else:
            # Gumbel-max: argmax(logp + Gumbel noise) is a draw from softmax(logp) (-inf stays impossible);
            # on CPU an order of magnitude cheaper than torch.multinomial for a batch of rows.
            u = torch.rand(logp.shape, generator=gen, device=logp.device).clamp_(min=1e-30)
            tok = (logp - torch.log(-torch.log(u))).argmax(dim=-1)
            if self.cfg.logprobs_mode == "raw":
                logp = torch.log_softmax(logits, dim=-1)
        return tok, logp.gather(-1, tok[:, None]).squeeze(-1)

    def load_weights(
        self, weights: WeightsInput, version: int, adapter: Mapping[str, Any] | None = None
    ) -> None:
        import torch

        params = dict(self.model.named_parameters())
        if adapter is None:
            update = self._normalize_weights(weights)  # validates everything before the first write
            self._lora_base = None
        else:
            tensors = self._normalize_adapter(weights, adapter)
            # The base weights of adapted modules, kept from before the first merge (a later adapter
            # version replaces the earlier one, never adds to it).
            base = self._lora_base if self._lora_base is not None else {}
            for name in adapter_pairs(tensors):
                if name not in base:
                    base[name] = params[name].detach().clone()
            self._lora_base = base
            merged = merge_adapter(base, tensors, adapter)
            update = [(n, merged.get(n, base[n])) for n in base]
        with torch.no_grad():
            for name, t in update:
                params[name].copy_(t.to(device=params[name].device, dtype=params[name].dtype))
        self.version = version

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            del self.model


def _plain_causal_sdpa(config: Any, attn_implementation: str) -> bool:
    """Whether a decode step's attention mask may be given as the boolean ``[batch, 1, 1, kv]`` form that
    transformers would build from the 2D mask: sdpa attention, every layer full causal (no sliding window,
    no chunked or local attention), in the config and in its text config (composite, e.g. multimodal, models);
    never for encoder-decoders. Building it here skips transformers' per-call mask construction."""
    if attn_implementation != "sdpa" or getattr(config, "is_encoder_decoder", False):
        return False
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    for c in (config, text):
        for key in ("sliding_window", "attention_chunk_size", "local_window"):
            if getattr(c, key, None):
                return False
        layer_types = getattr(c, "layer_types", None)
        if layer_types and any(t != "full_attention" for t in layer_types):
            return False
    return True
