"""Supervised warm-up: teach a fresh policy the answer format so GRPO starts with a usable success rate.

GRPO learns only from groups whose rewards differ; a random policy scores 0 everywhere and a perfect
one 1 everywhere, so on the tiny demo policy RL needs a start at roughly 30-50 % greedy accuracy. The
warm-up trains on (prompt, answer) pairs with cross-entropy on the answer tokens plus EOS (so the model
learns to stop), and can stop early once greedy accuracy on held-out pairs reaches a target.

Plain torch on one process (no DeepSpeed): the warm-up is short and runs before the learner exists.
Prompts are encoded without special tokens; the tokenizer's EOS is appended after each answer.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F

# transformers is imported where used: heavy and optional (the CLI starts without it).

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

log = logging.getLogger(__name__)

Pair = tuple[str, str]


def encode_pairs(
    tokenizer: PreTrainedTokenizerBase, pairs: Sequence[Pair]
) -> tuple[list[list[int]], list[list[int]]]:
    """(prompt ids without special tokens, answer ids + EOS) for each pair."""
    eos = int(tokenizer.eos_token_id)
    prompts = [list(tokenizer(p, add_special_tokens=False).input_ids) for p, _ in pairs]
    answers = [[*tokenizer(a, add_special_tokens=False).input_ids, eos] for _, a in pairs]
    return prompts, answers


def left_pad(seqs: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Left-pad token lists to [B, T] ids and attention mask (for generation)."""
    t = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), t), pad_id, dtype=torch.long)
    attn = torch.zeros((len(seqs), t), dtype=torch.long)
    for i, s in enumerate(seqs):
        if s:
            ids[i, t - len(s) :] = torch.as_tensor(list(s), dtype=torch.long)
            attn[i, t - len(s) :] = 1
    return ids, attn


@torch.no_grad()
def greedy_answers(
    model: torch.nn.Module,
    tokenizer: PreTrainedTokenizerBase,
    prompts: Sequence[str],
    *,
    max_new_tokens: int = 8,
    batch: int = 64,
) -> list[str]:
    """Greedy completions (up to EOS or ``max_new_tokens``), decoded without special tokens."""
    enc = tokenizer
    pad = int(enc.pad_token_id)
    eos = int(enc.eos_token_id)
    was_training = model.training
    model.eval()
    out: list[str] = []
    for i in range(0, len(prompts), batch):
        chunk = prompts[i : i + batch]
        ids_list = [list(enc(p, add_special_tokens=False).input_ids) for p in chunk]
        ids, attn = left_pad(ids_list, pad)
        gen = model.generate(  # type: ignore[operator]
            input_ids=ids,
            attention_mask=attn,
            do_sample=False,
            max_new_tokens=max_new_tokens,
            eos_token_id=eos,
            pad_token_id=pad,
        )
        for row in gen[:, ids.shape[1] :].tolist():
            cut = row.index(eos) if eos in row else len(row)
            out.append(str(enc.decode(row[:cut], skip_special_tokens=True)))
    model.train(was_training)
    return out


def greedy_accuracy(
    model: torch.nn.Module,
    tokenizer: PreTrainedTokenizerBase,
    pairs: Sequence[Pair],
    *,
    max_new_tokens: int = 8,
) -> float:
    """Fraction of pairs whose greedy completion equals the answer exactly."""
    if not pairs:
        return 0.0
    got = greedy_answers(model, tokenizer, [p for p, _ in pairs], max_new_tokens=max_new_tokens)
    return sum(g == a for g, (_, a) in zip(got, pairs, strict=True)) / len(pairs)


def sft_warmup(
    model_dir: str | Path,
    pairs: Sequence[Pair] | Mapping[str, Sequence[Pair]],
    steps: int,
    lr: float = 1e-3,
    batch: int = 32,
    seed: int = 0,
    *,
    out_dir: str | Path | None = None,
    eval_pairs: Sequence[Pair] | Mapping[str, Sequence[Pair]] | None = None,
    target_accuracy: float | None = None,
    eval_every: int = 10,
    max_new_tokens: int = 8,
) -> Path:
    """Fine-tune ``model_dir`` on ``pairs`` for at most ``steps`` AdamW steps; save an HF dir; return it.

    Each step draws ``batch`` pairs (seeded) and minimises the mean cross-entropy of the answer tokens +
    EOS given the prompt. With ``target_accuracy``, greedy accuracy on ``eval_pairs`` is measured every
    ``eval_every`` steps and training stops at the first check where it is at or above the target, so
    the policy lands just past it (e.g. 0.3 for a 30-50 % start).

    Groups (tasks): ``eval_pairs`` may map group names to pairs; then every group must reach the target,
    so an easy task cannot carry a hard one. ``pairs`` may also be such a mapping (same keys as a
    mapping ``eval_pairs``): rows are then drawn group-uniformly, and only from groups still below the
    target at the last check, so easy tasks stop training while hard ones catch up instead of
    saturating. Without ``eval_pairs``, each training group's first 200 pairs are the evaluation set.

    ``out_dir`` defaults to ``<model_dir>-sft``. The saved dir holds the model, the tokenizer and
    ``sft.json``: steps taken, final greedy accuracy (overall and per group), seconds.
    """

    from transformers import AutoModelForCausalLM, AutoTokenizer

    train = {k: list(v) for k, v in pairs.items()} if isinstance(pairs, Mapping) else {"all": list(pairs)}
    if not train or not all(train.values()):
        raise ValueError("sft_warmup needs at least one pair in every group")
    if eval_pairs is None:
        groups: dict[str, list[Pair]] = {k: v[:200] for k, v in train.items()}
    elif isinstance(eval_pairs, Mapping):
        groups = {k: list(v) for k, v in eval_pairs.items()}
    else:
        groups = {"all": list(eval_pairs)}
    per_group = len(train) > 1 or "all" not in train
    if per_group and set(groups) != set(train):
        raise ValueError(
            f"grouped pairs need eval groups with the same names: {sorted(train)} vs {sorted(groups)}"
        )
    src = Path(model_dir)
    out = Path(out_dir) if out_dir is not None else src.with_name(src.name + "-sft")
    tok = AutoTokenizer.from_pretrained(src)
    torch.manual_seed(seed)
    rng = random.Random(seed)
    model = AutoModelForCausalLM.from_pretrained(src, dtype=torch.float32)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    encoded = {k: encode_pairs(tok, v) for k, v in train.items()}
    pad = int(tok.pad_token_id)
    active = sorted(train)

    def evaluate() -> dict[str, float]:
        return {k: greedy_accuracy(model, tok, v, max_new_tokens=max_new_tokens) for k, v in groups.items()}

    def draw() -> tuple[list[int], list[int]]:
        g = active[rng.randrange(len(active))] if len(active) > 1 else active[0]
        ps, ans = encoded[g]
        i = rng.randrange(len(ps))
        return ps[i], ans[i]

    accs: dict[str, float] = {}
    acc_step = -1
    t0 = time.perf_counter()
    done = 0
    for step in range(1, steps + 1):
        rows = [draw() for _ in range(batch)]
        t = max(len(p) + len(a) for p, a in rows)
        ids = torch.full((batch, t), pad, dtype=torch.long)
        attn = torch.zeros((batch, t), dtype=torch.long)
        labels = torch.full((batch, t), -100, dtype=torch.long)
        for row, (p, a) in enumerate(rows):
            ids[row, : len(p) + len(a)] = torch.as_tensor(p + a)
            attn[row, : len(p) + len(a)] = 1
            labels[row, len(p) : len(p) + len(a)] = torch.as_tensor(a)
        logits = model(input_ids=ids, attention_mask=attn, use_cache=False).logits
        # Position t predicts token t+1; only answer tokens and the EOS carry a label.
        loss = F.cross_entropy(
            logits[:, :-1].reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1), ignore_index=-100
        )
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        done = step
        if target_accuracy is not None and step % eval_every == 0:
            accs, acc_step = evaluate(), step
            log.info("sft step %d loss %.3f greedy acc %s", step, float(loss.detach()), accs)
            if min(accs.values()) >= target_accuracy:
                break
            if per_group:
                active = sorted(k for k, v in accs.items() if v < target_accuracy)
    if acc_step != done:
        accs = evaluate()
    n_eval = sum(len(v) for v in groups.values())
    overall = sum(accs[k] * len(v) for k, v in groups.items()) / max(n_eval, 1)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)
    info = {
        "steps": done,
        "greedy_accuracy": overall,
        "greedy_accuracy_by_group": accs,
        "lr": lr,
        "batch": batch,
        "seed": seed,
        "seconds": time.perf_counter() - t0,
    }
    (out / "sft.json").write_text(json.dumps(info))
    return out
