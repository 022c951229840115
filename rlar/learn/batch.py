"""What the learner trains on: a padded batch of samples, its teacher-forced log-probs, and its micro-batches.

- :class:`PolicyBatch`: right-padded prompt + response token ids with behaviour log-probs, advantages and
  the temperature each row was sampled at, aligned per position.
- :func:`token_logprobs`: log π(token | prefix) per position at a per-row temperature (the policy the
  learner trains is the tempered one, ``softmax(logits / T)``; see :mod:`rlar.learn.trainer`). Given the
  positions it needs (the response tokens), it applies the output head to those positions only: a real
  vocabulary's logits (SmolLM2: 49,152 per position) for every prompt and padding position would cost more
  time and memory than the rest of the step.
- :func:`micro_batches`: rows grouped by a row count and a token budget (rows × longest row), each group
  cut to its own length, so activation memory is bounded whatever the response lengths.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

__all__ = ["PolicyBatch", "micro_batches", "split_bounds", "token_logprobs"]


@dataclass(frozen=True, slots=True)
class PolicyBatch:
    """Right-padded prompt+response token ids with everything the GRPO loss needs, aligned per position.

    ``input_ids``/``attention_mask``/``response_mask``/``behav_logprobs`` are [B, T]; position t of
    ``behav_logprobs`` holds log μ(input_ids[t] | input_ids[<t]) where ``response_mask[t]`` is true
    (ignored elsewhere). ``advantages`` [B]; ``seq_weights`` [B] or None (staleness weights; they scale
    a row's terms but not the loss denominator, so leave dropped rows out of the batch); ``temperature``
    [B] or None (1 for every row): the temperature each row was sampled at, at which the learner
    recomputes its log-probs. The first token of a row is never a response token (it has no context).
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    response_mask: torch.Tensor
    behav_logprobs: torch.Tensor
    advantages: torch.Tensor
    seq_weights: torch.Tensor | None = None
    temperature: torch.Tensor | None = None

    def __post_init__(self) -> None:
        shape = self.input_ids.shape
        if self.input_ids.dim() != 2:
            raise ValueError(f"input_ids must be [B, T], got {tuple(shape)}")
        for name in ("attention_mask", "response_mask", "behav_logprobs"):
            if getattr(self, name).shape != shape:
                raise ValueError(f"{name} shape {tuple(getattr(self, name).shape)} != {tuple(shape)}")
        for name in ("advantages", "seq_weights", "temperature"):
            t = getattr(self, name)
            if t is not None and t.shape != shape[:1]:
                raise ValueError(f"{name} must be [B]={shape[0]}, got {tuple(t.shape)}")
        if self.temperature is not None and not bool((self.temperature > 0).all()):
            raise ValueError("temperature must be > 0 in every row (greedy rows are recomputed at 1)")
        if shape[1] > 0 and bool(self.response_mask[:, 0].any()):
            raise ValueError("response_mask[:, 0] must be False: the first token has no context")

    def __len__(self) -> int:
        return int(self.input_ids.shape[0])

    @property
    def lengths(self) -> torch.Tensor:
        """Tokens per row (prompt + response), [B]."""
        return self.attention_mask.sum(dim=1)

    def select(self, rows: torch.Tensor | slice, width: int | None = None) -> PolicyBatch:
        """The sub-batch of the given rows (index tensor or slice), cut to ``width`` columns if given."""
        cols = slice(None) if width is None else slice(0, width)

        def pick(t: torch.Tensor | None, two_d: bool = False) -> torch.Tensor | None:
            return None if t is None else (t[rows][:, cols] if two_d else t[rows])

        return PolicyBatch(
            input_ids=self.input_ids[rows][:, cols],
            attention_mask=self.attention_mask[rows][:, cols],
            response_mask=self.response_mask[rows][:, cols],
            behav_logprobs=self.behav_logprobs[rows][:, cols],
            advantages=self.advantages[rows],
            seq_weights=pick(self.seq_weights),
            temperature=pick(self.temperature),
        )

    def to(self, device: torch.device | str) -> PolicyBatch:
        def move(t: torch.Tensor | None) -> torch.Tensor | None:
            return None if t is None else t.to(device)

        return PolicyBatch(
            input_ids=self.input_ids.to(device),
            attention_mask=self.attention_mask.to(device),
            response_mask=self.response_mask.to(device),
            behav_logprobs=self.behav_logprobs.to(device),
            advantages=self.advantages.to(device),
            seq_weights=move(self.seq_weights),
            temperature=move(self.temperature),
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
        temperatures: Sequence[float] | None = None,
    ) -> PolicyBatch:
        """Pack per-sample lists (one behaviour log-prob per response token) into a right-padded batch.

        Every prompt needs at least one token; a response may be empty (the row then contributes
        nothing). Lengths of ``response_ids[i]`` and ``behav_logprobs[i]`` must match.
        """
        n = len(prompt_ids)
        if not (len(response_ids) == len(behav_logprobs) == len(advantages) == n):
            raise ValueError("prompt_ids, response_ids, behav_logprobs, advantages differ in length")
        for name, extra in (("seq_weights", seq_weights), ("temperatures", temperatures)):
            if extra is not None and len(extra) != n:
                raise ValueError(f"{name} length differs from the batch")
        lengths = []
        for i, (p, r, lp) in enumerate(zip(prompt_ids, response_ids, behav_logprobs, strict=True)):
            if len(p) == 0:
                raise ValueError(f"sample {i}: empty prompt")
            if len(r) != len(lp):
                raise ValueError(f"sample {i}: {len(r)} response tokens but {len(lp)} log-probs")
            lengths.append(len(p) + len(r))
        t = max(lengths) if lengths else 0
        # Filled row by row in numpy (a slice assignment from a list there costs a microsecond; in torch each
        # one is an operator call), then handed to torch without a copy.
        ids = np.full((n, t), pad_id, dtype=np.int64)
        attn = np.zeros((n, t), dtype=np.int64)
        resp = np.zeros((n, t), dtype=np.bool_)
        blp = np.zeros((n, t), dtype=np.float32)
        for i, (p, r, lp) in enumerate(zip(prompt_ids, response_ids, behav_logprobs, strict=True)):
            lp_, lr_ = len(p), len(r)
            ids[i, :lp_] = p
            if lr_:
                ids[i, lp_ : lp_ + lr_] = r
                blp[i, lp_ : lp_ + lr_] = lp
                resp[i, lp_ : lp_ + lr_] = True
            attn[i, : lp_ + lr_] = 1

        def floats(xs: Sequence[float] | None) -> torch.Tensor | None:
            return None if xs is None else torch.as_tensor(list(xs), dtype=torch.float32)

        return cls(
            input_ids=torch.from_numpy(ids),
            attention_mask=torch.from_numpy(attn),
            response_mask=torch.from_numpy(resp),
            behav_logprobs=torch.from_numpy(blp),
            advantages=torch.as_tensor(list(advantages), dtype=torch.float32),
            seq_weights=floats(seq_weights),
            temperature=floats(temperatures),
        )


# Architectures whose causal-LM logits are exactly ``output_embeddings(decoder(x).last_hidden_state)``: no final
# logit soft-capping or scaling (Gemma 2/3, Cohere and Granite have them), so the head can be applied to chosen
# positions only.
_PLAIN_HEAD_MODELS = frozenset(
    {"llama", "mistral", "qwen2", "qwen3", "phi3", "olmo", "olmo2", "stablelm", "starcoder2", "smollm3"}
)


def _decoder_and_head(model: torch.nn.Module) -> tuple[torch.nn.Module, torch.nn.Module] | None:
    """The decoder stack and the output head of a plain-head causal LM (through a DeepSpeed engine or a PEFT
    wrapper), or None when the model is not known to be one."""
    inner: Any = getattr(model, "module", model)  # a DeepSpeed engine wraps the module
    if hasattr(inner, "get_base_model"):  # PEFT: the base model with its adapters injected
        inner = inner.get_base_model()
    config = getattr(inner, "config", None)
    if getattr(config, "model_type", None) not in _PLAIN_HEAD_MODELS:
        return None
    get_decoder: Any = getattr(inner, "get_decoder", None)
    get_head: Any = getattr(inner, "get_output_embeddings", None)
    if get_decoder is None or get_head is None:
        return None
    decoder, head = get_decoder(), get_head()
    return (decoder, head) if decoder is not None and head is not None else None


def token_logprobs(
    model: torch.nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    *,
    temperature: torch.Tensor | float | None = None,
    with_entropy: bool = False,
    positions: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Teacher-forced log π_T(input_ids[t] | input_ids[<t]) per position, [B, T] (position 0 is 0), where
    π_T = softmax(logits / T) with ``temperature`` T per row ([B] tensor) or for all rows (float; None: 1).

    With ``with_entropy``, also the (detached) entropy of π_T at each position that predicts a token,
    [B, T]. Gradients flow through the log-probs when grad is enabled. Right padding only: pads after a
    row's tokens do not affect its earlier positions (causal attention).

    ``positions`` ([B, T] bool, e.g. the response mask): the positions whose log-probs are needed. For a
    plain-head architecture (:data:`_PLAIN_HEAD_MODELS`) only those get logits; the others are 0 in both
    outputs. The values at ``positions`` are those of the full computation (same operations on the same hidden
    states).
    """
    split = _decoder_and_head(model) if positions is not None else None
    if split is not None:
        assert positions is not None
        return _chosen_logprobs(split, input_ids, attention_mask, positions, temperature, with_entropy)
    out = model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False)
    logits = out.logits[:, :-1, :].float()
    if isinstance(temperature, torch.Tensor):
        logits = logits / temperature.to(logits)[:, None, None]
    elif temperature is not None and temperature != 1.0:
        logits = logits / temperature
    logp = F.log_softmax(logits, dim=-1)
    tok = torch.gather(logp, -1, input_ids[:, 1:, None]).squeeze(-1)
    zeros = torch.zeros_like(tok[:, :1])
    lp = torch.cat([zeros, tok], dim=1)
    ent: torch.Tensor | None = None
    if with_entropy:
        with torch.no_grad():  # row by row: p·log p of the whole batch would double the head's memory
            e = torch.stack([-(row.exp() * row).sum(-1) for row in logp]) if len(logp) else logp.sum(-1)
            ent = torch.cat([torch.zeros_like(e[:, :1]), e], dim=1)
    return lp, ent


def _chosen_logprobs(
    split: tuple[torch.nn.Module, torch.nn.Module],
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    positions: torch.Tensor,
    temperature: torch.Tensor | float | None,
    with_entropy: bool,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """:func:`token_logprobs` with the head applied at ``positions`` only (see there)."""
    decoder, head = split
    hidden = decoder(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).last_hidden_state
    want = positions[:, 1:].bool()  # position t is predicted from the hidden state at t - 1
    rows, cols = want.nonzero(as_tuple=True)
    logits = head(hidden[:, :-1][want]).float()  # [N, V]
    if isinstance(temperature, torch.Tensor):
        logits = logits / temperature.to(logits)[rows, None]
    elif temperature is not None and temperature != 1.0:
        logits = logits / temperature
    logp = F.log_softmax(logits, dim=-1)
    tok = torch.gather(logp, -1, input_ids[:, 1:][want][:, None]).squeeze(-1)
    b, t = input_ids.shape
    lp = torch.zeros(b, t, dtype=tok.dtype, device=tok.device).index_put((rows, cols + 1), tok)
    ent: torch.Tensor | None = None
    if with_entropy:
        with torch.no_grad():
            e = -(logp.exp() * logp).sum(-1)
            ent = torch.zeros(b, t, dtype=e.dtype, device=e.device).index_put((rows, cols + 1), e)
    return lp, ent


def split_bounds(n: int, parts: int) -> list[tuple[int, int]]:
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


def micro_batches(lengths: Sequence[int], max_rows: int, max_tokens: int | None = None) -> list[list[int]]:
    """Group row indices into micro-batches for forward/backward.

    Without ``max_tokens``: consecutive groups of at most ``max_rows`` rows, near-equal in size (the
    batch's order). With it: rows longest first, each group growing while it has fewer than ``max_rows``
    rows and ``rows × its longest row <= max_tokens``; a row longer than the budget goes alone. Every
    row is in exactly one group. Gradients are sums over rows, so grouping does not change the update.
    """
    n = len(lengths)
    if n == 0:
        return []
    if max_tokens is None:
        return [list(range(lo, hi)) for lo, hi in split_bounds(n, -(-n // max_rows))]
    order = sorted(range(n), key=lambda i: -lengths[i])
    groups: list[list[int]] = []
    for i in order:
        g = groups[-1] if groups else None
        # Longest first: the group's first row is its longest.
        if g is not None and len(g) < max_rows and (len(g) + 1) * lengths[g[0]] <= max_tokens:
            g.append(i)
        else:
            groups.append([i])
    return groups
