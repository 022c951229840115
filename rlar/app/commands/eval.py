"""``rlar eval``, ``rlar ablate``, ``rlar bench pipeline``, ``rlar bench preference``."""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

# rlar.eval, rlar.app, rlar.benchmarks and rlar.resources are imported where used: a command's implementation
# loads when the command runs, so rlar --help stays instant.


def _config_policy(config: str | None) -> str:
    """The checkpoint a run config trains from (``[policy] source = "path"``); ValueError otherwise."""

    if not config:
        raise ValueError("give --checkpoint (a run directory or a Hugging Face checkpoint directory)")
    policy = tomllib.loads(Path(config).read_text()).get("policy", {}) if Path(config).is_file() else {}
    if policy.get("source") != "path" or not policy.get("path"):
        raise ValueError(
            f"{config} builds its policy ([policy] source = {policy.get('source', 'tiny')!r}): give "
            "--checkpoint RUN_DIR, the run whose weights to evaluate"
        )
    path = Path(policy["path"]).expanduser()
    return str(path if path.is_absolute() else Path(config).absolute().parent / path)


def cmd_eval(a: argparse.Namespace) -> int:

    from rlar.eval import run_eval

    tasks = [t for item in a.task for t in item.split(",") if t] or None
    options = {"direction": a.direction} if a.direction else None
    overrides = {"max_new_tokens": a.max_new_tokens, "n_samples": a.samples, "temperature": a.temperature}
    try:
        checkpoint = a.checkpoint or _config_policy(a.config)
        doc = run_eval(
            checkpoint,
            a.suite,
            compare=a.compare,
            out=a.out,
            limit=a.limit,
            tasks=tasks,
            seed=a.seed,
            judge_url=a.judge_url,
            device=a.device,
            data=a.data,
            config=a.config,
            split=a.split,
            engine=a.engine,
            dtype=a.dtype,
            options=options,
            overrides=overrides,
            threads=a.threads,
        )
    except (ValueError, FileNotFoundError) as exc:
        print(f"rlar eval: error: {exc}", file=sys.stderr)
        return 2
    if a.json:
        print(json.dumps({k: v for k, v in doc.items() if k != "table"}, ensure_ascii=False), flush=True)
    else:
        print(doc["table"])
        print("written: " + ", ".join(doc["files"]), flush=True)
    return 0


def cmd_ablate(a: argparse.Namespace) -> int:
    from rlar.app.ablate import ablate

    seeds = [int(x) for x in a.seeds.split(",")] if a.seeds else None
    doc = ablate(
        a.config,
        modes=a.modes.split(",") if a.modes else None,
        overrides=a.set,
        max_steps=a.max_steps,
        max_minutes=a.max_minutes,
        out=a.out,
        eval_suite=a.eval_suite,
        eval_limit=a.eval_limit,
        seeds=seeds,
    )
    print(doc["budget"]["note"])
    print(doc["table"])
    print(json.dumps({k: v for k, v in doc.items() if k != "table"}), flush=True)
    return 0


def cmd_bench_pipeline(a: argparse.Namespace) -> int:
    from rlar.app.benchmarks.pipeline import PipelineSettings, run

    settings = PipelineSettings(
        steps=a.steps,
        warmup_steps=a.warmup,
        prompts=a.prompts,
        group_size=a.group_size,
        max_new_tokens=a.max_new_tokens,
        reward=a.reward,
        rule_tool=a.rule_tool,
        judge_latency_ms=a.judge_latency_ms,
        judge_concurrency=a.judge_concurrency,
        baseline=a.baseline,
        trl_threads=a.trl_threads,
        quick=a.quick,
        model_dir=a.model_dir,
        data=a.data,
        temperature=a.temperature,
        dtype=a.dtype,
        lr=a.lr,
        engine=a.engine,
        device=a.device,
        weight_sync=a.weight_sync,
        keep_freed_memory=a.malloc == "keep",
    )
    doc = run(settings)
    if not a.json:
        for k, v in doc.items():
            print(f"{k:>34}: {v}")
    print(json.dumps(doc), flush=True)
    return 0


def cmd_bench_preference(a: argparse.Namespace) -> int:
    from rlar.benchmarks.preference import run
    from rlar.resources import packaged

    doc = run(
        str(packaged(a.data)),
        limit=a.limit,
        seed=a.seed,
        judge_url=a.judge_url,
        tools=a.tools.split(",") if a.tools else None,
    )
    if not a.json:
        print(doc.pop("table"))
    else:
        doc.pop("table")
    print(json.dumps(doc), flush=True)
    return 0


def register(sub: Any, bench: Any) -> None:
    p = sub.add_parser(
        "eval", help="evaluate a checkpoint on held-out splits or data files (the paper's metrics)"
    )
    p.add_argument(
        "--checkpoint",
        help="run directory (newest weights) or HF checkpoint dir (default with --config: its [policy] path)",
    )
    p.add_argument(
        "--compare", help="baseline run directory or HF dir: prints deltas (checkpoint - baseline)"
    )
    p.add_argument(
        "--suite",
        help="built-in: demo (default) | humaneval | math | learnable; with --data: gsm8k | "
        "math | humaneval | mbpp | ifeval | wmt | chat",
    )
    p.add_argument(
        "--data",
        help="a dataset file (JSONL/parquet as published; FLORES: files or their directory): "
        "evaluated in the --suite's format, or the format detected",
    )
    p.add_argument(
        "--task",
        "--tasks",
        dest="task",
        action="append",
        default=[],
        metavar="NAME[,NAME]",
        help="tasks of the run's config (--config, or the checkpoint run's config.toml) on their "
        "held-out split or on --data; with a built-in --suite: that subset of the suite",
    )
    p.add_argument(
        "--config", help="run config that defines the --task (default: <checkpoint run>/config.toml)"
    )
    p.add_argument("--split", default="test", help="held-out split of a --task (default: test)")
    p.add_argument(
        "--direction",
        help="translation direction SRC-TGT, e.g. de-en or eng_Latn-deu_Latn "
        "(default: English -> the other language)",
    )
    p.add_argument("--limit", type=int, help="at most N records per task (default: all)")
    p.add_argument("--samples", type=int, help="samples per prompt (default: the suite's; code: 10)")
    p.add_argument(
        "--temperature", type=float, help="sampling temperature (default: the suite's; 0 = greedy)"
    )
    p.add_argument("--max-new-tokens", type=int, help="answer budget in tokens (default: the suite's)")
    p.add_argument("--seed", type=int, default=0, help="sampling seed (default: 0)")
    p.add_argument(
        "--judge-url", help="Messages-API base URL for the judge (default: ANTHROPIC_BASE_URL/key)"
    )
    p.add_argument(
        "--engine",
        default="transformers",
        choices=["transformers", "vllm"],
        help="generation engine (default: transformers)",
    )
    p.add_argument(
        "--dtype",
        default="float32",
        choices=["float32", "bfloat16", "float16"],
        help="compute dtype (default: float32; vLLM on CPU needs float32)",
    )
    p.add_argument("--device", default="cpu", help="cpu | cuda | cuda:N (default: cpu)")
    p.add_argument(
        "--threads", type=int, help="CPU threads of the engine (default: every core this process may use)"
    )
    p.add_argument("--out", help="output directory (default: <run dir>/eval)")
    p.add_argument("--json", action="store_true", help="print the result document as JSON")
    p.set_defaults(fn=cmd_eval)

    p = sub.add_parser("ablate", help="train once per reward mode (same seeds, budget); compare")
    p.add_argument(
        "--config", default="deploy/configs/demo.toml", help="run config TOML the modes start from"
    )
    p.add_argument(
        "--modes",
        default=None,
        help="comma-separated: agentic, no-synthesis, random, static:<tool>, default (default: the "
        "config's [ablate] modes, else agentic,static:exact_match)",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key for every mode (repeatable; default: none)",
    )
    p.add_argument(
        "--max-steps",
        type=int,
        default=None,
        help="learner steps per mode (default: [ablate] max_steps, else [learner] max_steps, else 40)",
    )
    p.add_argument(
        "--max-minutes", type=float, default=None, help="per mode (default: [ablate] max_minutes, else 7)"
    )
    p.add_argument(
        "--seeds",
        default="",
        help="comma-separated seeds, one run per mode and seed (default: the "
        "config's [ablate] seeds, else its feeder seed); 3 or more give 95%% intervals",
    )
    p.add_argument(
        "--eval-suite",
        default=None,
        help="suite evaluated after each run ('' to skip; 'tasks': the config's tasks' held-out splits with "
        "their true metrics and hack rates; default: [ablate] eval_suite, else 'tasks' with an [ablate] "
        "table, else 'agentic')",
    )
    p.add_argument(
        "--eval-limit", type=int, default=None, help="records per eval task (default: the suite's)"
    )
    p.add_argument(
        "--out",
        help="output directory (default runs/ablate-<timestamp>); an existing one is resumed: "
        "finished runs are kept, interrupted ones start over",
    )
    p.set_defaults(fn=cmd_ablate)

    p = bench.add_parser(
        "pipeline", help="TRL vs sync (generate→score→train) vs async over the bus, same work"
    )
    p.add_argument(
        "--baseline",
        default="none",
        choices=["none", "trl", "trl-async", "trl,trl-async"],
        help="trl: also run TRL's GRPOTrainer on the same work (pip install 'rlar[bench]'); trl-async: TRL's "
        "AsyncGRPOTrainer with its vLLM server (GPUs only: on a machine without them the report says what is "
        "missing and skips it)",
    )
    p.add_argument(
        "--reward",
        default="judge",
        choices=["rule", "judge"],
        help="rule: a built-in rule tool (--rule-tool); judge: the local judge endpoint",
    )
    p.add_argument("--rule-tool", default="contains_match", help="built-in rule tool for --reward rule")
    p.add_argument(
        "--judge-latency-ms", type=float, default=50.0, help="the judge endpoint's latency per call"
    )
    p.add_argument("--judge-concurrency", type=int, default=64, help="judge calls in flight (every way)")
    p.add_argument("--trl-threads", type=int, default=2, help="torch threads of the TRL process")
    p.add_argument("--steps", type=int, default=12, help="measured steps per way")
    p.add_argument(
        "--warmup",
        type=int,
        default=4,
        help="steps left out of the measurement (>= max_staleness + 1, so the async way's initial "
        "buffer is used up before timing starts)",
    )
    p.add_argument("--prompts", type=int, default=8, help="prompts per step")
    p.add_argument("--group-size", type=int, default=8, help="samples per prompt")
    p.add_argument("--max-new-tokens", type=int, default=16, help="tokens generated per sample")
    p.add_argument("--quick", action="store_true", help="fewer steps (tests)")
    p.add_argument(
        "--model-dir",
        help="local HF checkpoint (default: the tiny Llama, hidden 64, built here); the real model: "
        "--model-dir $(rlar models prepare smollm2)",
    )
    p.add_argument(
        "--data",
        help="JSONL task every way trains on (prompt/reference or question/answer fields; its train split), "
        "e.g. data/mix/arith_words.jsonl (default: the built-in arith mix)",
    )
    p.add_argument("--temperature", type=float, default=1.0, help="sampling temperature of every way")
    p.add_argument(
        "--dtype", default="fp32", choices=["fp32", "bf16"], help="training precision of every way"
    )
    p.add_argument("--lr", type=float, default=1e-4, help="learning rate of every way")
    p.add_argument(
        "--engine", default="transformers", choices=["transformers", "vllm"], help="generation engine"
    )
    p.add_argument("--device", default="cpu", help="cpu | cuda")
    p.add_argument(
        "--weight-sync",
        default="filesystem",
        choices=["filesystem", "objstore", "http"],
        help="the async way's weight route (learner.weight_sync)",
    )
    p.add_argument(
        "--malloc",
        default="keep",
        choices=["keep", "system"],
        help="keep: every way's torch processes keep freed memory for the next step (rlar.malloc); "
        "system: glibc's usual malloc in every way",
    )
    p.add_argument("--json", action="store_true", help="only the JSON line")
    p.set_defaults(fn=cmd_bench_pipeline)

    p = bench.add_parser("preference", help="the reward system as a judge, RewardBench-2 format and scoring")
    p.add_argument("--data", default="data/preference_sample.jsonl", help="RewardBench 2 JSONL or parquet")
    p.add_argument("--limit", type=int, help="at most N records (default: all)")
    p.add_argument("--seed", type=int, default=0, help="seed of the record order and ties")
    p.add_argument(
        "--judge-url", help="Messages-API base URL for llm_judge (default: ANTHROPIC_BASE_URL/key)"
    )
    p.add_argument("--tools", help="comma-separated built-in tools (default: all)")
    p.add_argument("--json", action="store_true", help="only the JSON line")
    p.set_defaults(fn=cmd_bench_preference)
