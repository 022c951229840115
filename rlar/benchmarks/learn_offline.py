"""Offline GRPO learning check: generate → score → update in one process, no bus.

Algorithm (all seeded, one torch thread):
1. Build the tiny demo policy (rlar.policy.model) and warm it up with supervised steps on the chosen
   task(s) until greedy accuracy on each task's held-out prompts reaches ``--sft-target`` (checked
   every ``--sft-eval-every`` steps; a task that has reached it stops drawing warm-up rows).
2. Loop until ``--steps`` or ``--minutes``: draw ``--prompts`` prompts, sample ``--samples`` completions
   each (temperature 1, full distribution, ≤ ``--max-new-tokens`` tokens, behaviour log-probs recorded),
   reward 1 for an exact answer else 0, group-relative advantages, one DeepSpeedPolicyTrainer.step.
3. Report, per task, the mean sample reward of the first and last 10 steps and greedy accuracy on the
   held-out prompts before and after; the last line printed is one JSON object. The exit status is 1
   when the overall last-10 mean does not exceed the first-10 mean by ``--min-gain``.

Tasks: ``add`` ("12+7=" → "19", operands 0-19), ``copy`` ("c:abc=" → "abc"), ``reverse``
("r:abc=" → "cba"), strings of 3-5 letters a-z; ``mix`` draws a task per prompt.

Run: ``DS_ACCELERATOR=cpu rlar bench learn-offline --task add`` (accepts the deepspeed
launcher's ``--local_rank``; single process only).
"""

from __future__ import annotations

import argparse
import json
import random
import string
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rlar.policy.model import build_tiny_policy

if TYPE_CHECKING:
    import torch

# torch, transformers and rlar.learn are imported where used: heavy and optional (the CLI starts without them).

TASKS = ("add", "copy", "reverse")


def make_pair(task: str, rng: random.Random) -> tuple[str, str]:
    """One (prompt, answer) of ``task``."""
    if task == "add":
        a, b = rng.randrange(20), rng.randrange(20)
        return f"{a}+{b}=", str(a + b)
    s = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 5)))
    if task == "copy":
        return f"c:{s}=", s
    if task == "reverse":
        return f"r:{s}=", s[::-1]
    raise ValueError(f"unknown task {task!r}")


def task_sampler(task: str) -> Callable[[random.Random], tuple[str, str, str]]:
    """Returns rng → (task, prompt, answer); "mix" picks a task uniformly per call."""

    def draw(rng: random.Random) -> tuple[str, str, str]:
        t = rng.choice(TASKS) if task == "mix" else task
        p, a = make_pair(t, rng)
        return t, p, a

    return draw


def sample(
    model: torch.nn.Module,
    prompt_ids: list[list[int]],
    max_new_tokens: int,
    eos: int,
    pad: int,
    gen: torch.Generator,
) -> tuple[list[list[int]], list[list[float]]]:
    """Sample one completion per prompt from the full distribution (temperature 1) with a KV cache.

    Returns (token lists up to and including EOS, the behaviour log-prob of each token).
    """
    import torch
    import torch.nn.functional as F

    from rlar.learn.sft import left_pad

    ids, attn = left_pad(prompt_ids, pad)
    pos = (attn.cumsum(-1) - 1).clamp(min=0)
    out = model(input_ids=ids, attention_mask=attn, position_ids=pos, use_cache=True)
    n = ids.shape[0]
    toks: list[list[int]] = [[] for _ in range(n)]
    lps: list[list[float]] = [[] for _ in range(n)]
    done = torch.zeros(n, dtype=torch.bool)
    for _ in range(max_new_tokens):
        logp = F.log_softmax(out.logits[:, -1].float(), dim=-1)
        tok = torch.multinomial(logp.exp(), 1, generator=gen).squeeze(1)
        lp = logp.gather(1, tok[:, None]).squeeze(1)
        for i in range(n):
            if not done[i]:
                toks[i].append(int(tok[i]))
                lps[i].append(float(lp[i]))
        done |= tok == eos
        if bool(done.all()):
            break
        attn = torch.cat([attn, torch.ones((n, 1), dtype=attn.dtype)], dim=1)
        pos = pos[:, -1:] + 1
        out = model(
            input_ids=tok[:, None],
            attention_mask=attn,
            position_ids=pos,
            past_key_values=out.past_key_values,
            use_cache=True,
        )
    return toks, lps


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--task", choices=[*TASKS, "mix"], default="add")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--prompts", type=int, default=8, help="prompts per step")
    ap.add_argument("--samples", type=int, default=8, help="samples per prompt (group size)")
    ap.add_argument("--max-new-tokens", type=int, default=8)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--warmup-steps", type=int, default=0, help="linear LR warm-up (optimizer steps)")
    ap.add_argument("--steps", type=int, default=100_000, help="GRPO steps at most")
    ap.add_argument("--minutes", type=float, default=3.0, help="GRPO wall-clock budget")
    ap.add_argument("--sft-target", type=float, default=0.3, help="stop warm-up at this greedy accuracy")
    ap.add_argument("--sft-max-steps", type=int, default=3000)
    ap.add_argument("--sft-lr", type=float, default=1e-3)
    ap.add_argument("--sft-batch", type=int, default=32)
    ap.add_argument("--sft-eval-every", type=int, default=10, help="warm-up steps between accuracy checks")
    ap.add_argument("--eval-size", type=int, default=200, help="held-out prompts per task")
    ap.add_argument("--zero-stage", type=int, default=0, choices=[0, 1, 2])
    ap.add_argument("--loss-agg", choices=["token-mean", "seq-mean-token-mean"], default="token-mean")
    ap.add_argument("--min-gain", type=float, default=0.1, help="required last-10 minus first-10 reward")
    ap.add_argument("--work-dir", type=Path, default=Path("runs/learn_offline"))
    ap.add_argument("--local_rank", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    from rlar.learn.grpo import GRPOConfig, group_advantages
    from rlar.learn.sft import greedy_answers, sft_warmup
    from rlar.learn.trainer import DeepSpeedPolicyTrainer, PolicyBatch, TrainerConfig

    t_start = time.perf_counter()
    tasks = list(TASKS) if args.task == "mix" else [args.task]
    work = args.work_dir / f"{args.task}-s{args.seed}"
    base = build_tiny_policy(work / "base")

    # Held-out evaluation prompts and warm-up pairs come from separate seeded streams.
    eval_rng = random.Random(10_000 + args.seed)
    evals = {t: [make_pair(t, eval_rng) for _ in range(args.eval_size)] for t in tasks}
    train_rng = random.Random(args.seed)
    sft_pairs = {t: [make_pair(t, train_rng) for _ in range(4000)] for t in tasks}
    t0 = time.perf_counter()
    sft_dir = sft_warmup(
        base,
        sft_pairs,
        steps=args.sft_max_steps,
        lr=args.sft_lr,
        batch=args.sft_batch,
        seed=args.seed,
        out_dir=work / "sft",
        eval_pairs=evals,
        target_accuracy=args.sft_target,
        eval_every=args.sft_eval_every,
    )
    sft_info = json.loads((sft_dir / "sft.json").read_text())
    sft_s = time.perf_counter() - t0
    print(
        f"sft: {sft_info['steps']} steps, greedy acc {sft_info['greedy_accuracy_by_group']}, {sft_s:.1f}s",
        flush=True,
    )

    grpo = GRPOConfig(group_size=args.samples, kl_coef=0.0, loss_agg=args.loss_agg)
    trainer = DeepSpeedPolicyTrainer(
        TrainerConfig(
            model_dir=sft_dir,
            lr=args.lr,
            warmup_steps=args.warmup_steps,
            zero_stage=args.zero_stage,
            grpo=grpo,
            seed=args.seed,
        )
    )
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(sft_dir)
    eos, pad = int(tok.eos_token_id), int(tok.pad_token_id)
    model = trainer.module

    def greedy_acc() -> dict[str, float]:
        accs = {}
        for t in tasks:
            got = greedy_answers(model, tok, [p for p, _ in evals[t]], max_new_tokens=args.max_new_tokens)
            accs[t] = sum(g == a for g, (_, a) in zip(got, evals[t], strict=True)) / len(got)
        return accs

    acc_before = greedy_acc()
    draw = task_sampler(args.task)
    prompt_rng = random.Random(20_000 + args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    # Per step and task: (sum of rewards, sample count).
    history: list[dict[str, tuple[float, int]]] = []
    t_rl = time.perf_counter()
    step = 0
    while step < args.steps and time.perf_counter() - t_rl < args.minutes * 60:
        drawn = [draw(prompt_rng) for _ in range(args.prompts)]
        prompt_ids = [list(tok(p, add_special_tokens=False).input_ids) for _, p, _ in drawn]
        rows = [i for i in range(len(drawn)) for _ in range(args.samples)]
        model.eval()
        with torch.no_grad():
            resp, lps = sample(model, [prompt_ids[i] for i in rows], args.max_new_tokens, eos, pad, gen)
        model.train()
        rewards = []
        for r, i in zip(resp, rows, strict=True):
            cut = r.index(eos) if eos in r else len(r)
            text = tok.decode(r[:cut], skip_special_tokens=True)
            rewards.append(1.0 if eos in r and text == drawn[i][2] else 0.0)
        rw = torch.tensor(rewards).view(args.prompts, args.samples)
        adv = torch.cat([group_advantages(g, normalize_std=grpo.normalize_std, eps=grpo.adv_eps) for g in rw])
        batch = PolicyBatch.from_samples([prompt_ids[i] for i in rows], resp, lps, adv.tolist(), pad_id=pad)
        m = trainer.step(batch)
        per_task: dict[str, tuple[float, int]] = {}
        for k, (task, _, _) in enumerate(drawn):
            s, c = per_task.get(task, (0.0, 0))
            per_task[task] = (s + float(rw[k].sum()), c + args.samples)
        history.append(per_task)
        step += 1
        if step % 50 == 0:
            recent = _window(history[-10:], None)
            print(
                f"step {step} reward(last10) {recent:.3f} loss {m['loss']:+.4f} entropy {m['entropy']:.3f} "
                f"is_w {m['is_weight_mean']:.3f} {m['step_s'] * 1000:.0f}ms",
                flush=True,
            )
    rl_s = time.perf_counter() - t_rl
    acc_after = greedy_acc()

    first, last = history[:10], history[-10:]
    per_task_out = {
        t: {
            "reward_first10": round(_window(first, t), 4),
            "reward_last10": round(_window(last, t), 4),
            "greedy_acc_before": round(acc_before[t], 4),
            "greedy_acc_after": round(acc_after[t], 4),
        }
        for t in tasks
    }
    r_first, r_last = _window(first, None), _window(last, None)
    ok = step >= 20 and r_last - r_first >= args.min_gain
    result = {
        "task": args.task,
        "ok": ok,
        "reward_first10": round(r_first, 4),
        "reward_last10": round(r_last, 4),
        "gain": round(r_last - r_first, 4),
        "per_task": per_task_out,
        "grpo_steps": step,
        "grpo_seconds": round(rl_s, 1),
        "sft_steps": sft_info["steps"],
        "sft_greedy_acc": {k: round(v, 4) for k, v in sft_info["greedy_accuracy_by_group"].items()},
        "sft_seconds": round(sft_s, 1),
        "total_seconds": round(time.perf_counter() - t_start, 1),
        "settings": {
            "seed": args.seed,
            "prompts": args.prompts,
            "samples": args.samples,
            "max_new_tokens": args.max_new_tokens,
            "lr": args.lr,
            "warmup_steps": args.warmup_steps,
            "kl_coef": 0.0,
            "loss_agg": args.loss_agg,
            "zero_stage": args.zero_stage,
            "sft_target": args.sft_target,
            "sft_lr": args.sft_lr,
            "sft_batch": args.sft_batch,
            "temperature": 1.0,
        },
    }
    print(json.dumps(result), flush=True)
    return 0 if ok else 1


def _window(steps: list[dict[str, tuple[float, int]]], task: str | None) -> float:
    """Mean sample reward over ``steps``, for one task or (None) all."""
    s = c = 0.0
    for per_task in steps:
        for t, (rs, n) in per_task.items():
            if task is None or t == task:
                s += rs
                c += n
    return s / c if c else float("nan")


if __name__ == "__main__":
    sys.exit(main())
