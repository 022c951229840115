"""``rlar eval``, ``rlar ablate``, ``rlar bench pipeline``, ``rlar bench preference``."""

from __future__ import annotations

import argparse
import json
from typing import Any


def cmd_eval(a: argparse.Namespace) -> int:
    from rlar.eval import run_eval

    tasks = a.tasks.split(",") if a.tasks else None
    doc = run_eval(a.checkpoint, a.suite, compare=a.compare, out=a.out, limit=a.limit, tasks=tasks, seed=a.seed,
                   judge_url=a.judge_url, device=a.device)  # fmt: skip
    if a.json:
        print(json.dumps({k: v for k, v in doc.items() if k != "table"}, ensure_ascii=False), flush=True)
    else:
        print(doc["table"])
        print("written: " + ", ".join(doc["files"]), flush=True)
    return 0


def cmd_ablate(a: argparse.Namespace) -> int:
    from rlar.ablate import ablate

    doc = ablate(a.config, modes=a.modes.split(","), overrides=a.set, max_steps=a.max_steps,
                 max_minutes=a.max_minutes, out=a.out, eval_suite=a.eval_suite, eval_limit=a.eval_limit)  # fmt: skip
    print(doc["table"])
    print(json.dumps({k: v for k, v in doc.items() if k != "table"}), flush=True)
    return 0


def cmd_bench_pipeline(a: argparse.Namespace) -> int:
    from rlar.benchmarks.pipeline import PipelineSettings, run

    settings = PipelineSettings(steps=a.steps, warmup_steps=a.warmup, prompts=a.prompts, group_size=a.group_size,
                                max_new_tokens=a.max_new_tokens, quick=a.quick, model_dir=a.model_dir,
                                engine=a.engine, device=a.device)  # fmt: skip
    doc = run(settings)
    if not a.json:
        for k, v in doc.items():
            print(f"{k:>34}: {v}")
    print(json.dumps(doc), flush=True)
    return 0


def cmd_bench_preference(a: argparse.Namespace) -> int:
    from rlar.benchmarks.preference import run

    doc = run(a.data, limit=a.limit, seed=a.seed, judge_url=a.judge_url,
              tools=a.tools.split(",") if a.tools else None)  # fmt: skip
    if not a.json:
        print(doc.pop("table"))
    else:
        doc.pop("table")
    print(json.dumps(doc), flush=True)
    return 0


def register(sub: Any, bench: Any) -> None:
    p = sub.add_parser("eval", help="evaluate a checkpoint on held-out splits (the paper's metrics)")
    p.add_argument("--checkpoint", required=True, help="run directory (newest weights) or HF checkpoint dir")
    p.add_argument(
        "--compare", help="baseline run directory or HF dir: prints deltas (checkpoint - baseline)"
    )
    p.add_argument("--suite", default="demo", help="demo | humaneval | math | learnable")
    p.add_argument("--tasks", help="comma-separated subset of the suite's tasks")
    p.add_argument("--limit", type=int, help="at most N records per task")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--judge-url", help="Messages-API base URL for the judge (default: ANTHROPIC_BASE_URL/key)"
    )
    p.add_argument("--device", default="cpu")
    p.add_argument("--out", help="output directory (default: <run dir>/eval)")
    p.add_argument("--json", action="store_true", help="print the result document as JSON")
    p.set_defaults(fn=cmd_eval)

    p = sub.add_parser("ablate", help="train once per reward mode (same seeds, budget); compare")
    p.add_argument("--config", default="deploy/configs/demo.toml")
    p.add_argument("--modes", default="agentic,static:exact_match",
                   help="comma-separated: agentic, no-synthesis, random, static:<tool>, default")  # fmt: skip
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--max-steps", type=int, default=40)
    p.add_argument("--max-minutes", type=float, default=7.0, help="per mode")
    p.add_argument("--eval-suite", default="learnable", help="suite evaluated after each mode ('' to skip)")
    p.add_argument("--eval-limit", type=int, default=60)
    p.add_argument("--out", help="output directory (default runs/ablate-<timestamp>)")
    p.set_defaults(fn=cmd_ablate)

    p = bench.add_parser("pipeline", help="sync (generate→score→train) vs async over the bus, same work")
    p.add_argument("--steps", type=int, default=6, help="measured learner steps per mode")
    p.add_argument("--warmup", type=int, default=2, help="steps left out of the measurement")
    p.add_argument("--prompts", type=int, default=8, help="prompts per step")
    p.add_argument("--group-size", type=int, default=8)
    p.add_argument("--max-new-tokens", type=int, default=32)
    p.add_argument("--quick", action="store_true", help="fewer steps (tests)")
    p.add_argument("--model-dir", help="local HF checkpoint (default: a small Llama built here)")
    p.add_argument("--engine", default="transformers", choices=["transformers", "vllm"])
    p.add_argument("--device", default="cpu", help="cpu | cuda")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_bench_pipeline)

    p = bench.add_parser("preference", help="the reward system as a judge, RewardBench-2 format and scoring")
    p.add_argument("--data", default="data/preference_sample.jsonl", help="RewardBench 2 JSONL or parquet")
    p.add_argument("--limit", type=int)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--judge-url")
    p.add_argument("--tools", help="comma-separated built-in tools (default: all)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_bench_preference)
