"""``rlar bench NAME``: the benchmarks that are programs of their own, each with its own flags and help.

Each is a module with ``main(argv, prog)`` that parses its own flags, so ``rlar bench NAME --help`` prints them
and ``python -m MODULE`` runs the same program. Those that start no actors are in :mod:`rlar.benchmarks`, those
that do in :mod:`rlar.app.benchmarks` (the layer rule). ``rlar bench gpu`` runs ``rlar/benchmarks/gpu.sh``.
The other ``rlar bench`` commands are registered by the command groups whose code they measure.
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

# The benchmarks are imported where used: a command's implementation loads when the command runs, so rlar --help
# stays instant.

# name -> (module, one line of help)
PROGRAMS: dict[str, tuple[str, str]] = {
    "behaviour": (
        "rlar.benchmarks.behaviour",
        "every held-out figure of the reward-reading code at one commit (--out F.json), or the difference "
        "between two (--compare BEFORE AFTER)",
    ),
    "bus-overhead": (
        "rlar.benchmarks.bus_overhead",
        "the bus's cost per sample (the actors' message path on real durables) as a share of a learner step",
    ),
    "learn-offline": (
        "rlar.benchmarks.learn_offline",
        "offline GRPO learning check: generate, score, update in one process, no bus",
    ),
    "reward-deadlines": (
        "rlar.benchmarks.reward_deadlines",
        "per-sample deadlines of a reward function that hangs, per [[tools]] concurrency",
    ),
    "reward-scaling": (
        "rlar.app.benchmarks.reward_scaling",
        "an LLM judge on a fixed-latency endpoint served by 1, 2, 4 and 8 reward-worker processes",
    ),
    "routing-probes": (
        "rlar.benchmarks.routing_probes",
        "hack probes on a labelled routing file: which tools they refuse, the right ones and the wrong ones",
    ),
    "tracking-overhead": (
        "rlar.benchmarks.tracking_overhead",
        "experiment tracking's cost on a training step (--hooks: the actors' Prometheus hooks on the bus path)",
    ),
    "weight-sync": (
        "rlar.benchmarks.weight_sync",
        "weight-sync speed per route and size: filesystem, NATS object store, torch.distributed broadcast, HTTP",
    ),
}

GPU_SH = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu.sh"


def cmd_program(a: argparse.Namespace) -> int:
    module, _ = PROGRAMS[a.bench]
    return int(importlib.import_module(module).main(a.argv, prog=f"rlar bench {a.bench}") or 0)


def cmd_gpu(a: argparse.Namespace) -> int:
    env = {**os.environ, "PY": os.environ.get("PY", sys.executable)}
    if a.model_dir:
        env["MODEL_DIR"] = a.model_dir
    if a.out:
        env["OUT"] = a.out
    return subprocess.run(["bash", str(GPU_SH)], env=env, check=False).returncode


def register(sub: Any, bench: Any) -> None:
    for name, (module, text) in PROGRAMS.items():
        # The program parses its own flags: this parser takes every argument as they come (no prefix character
        # makes one an option here), --help included.
        p = bench.add_parser(
            name,
            help=text,
            description=f"{text[0].upper()}{text[1:]}. Runs python -m {module}; "
            f"rlar bench {name} --help lists its flags.",
            add_help=False,
            prefix_chars="\0",
        )
        p.add_argument("argv", nargs=argparse.REMAINDER, metavar="ARGS", help="the benchmark's own flags")
        p.set_defaults(fn=cmd_program)

    p = bench.add_parser(
        "gpu",
        help="on an NVIDIA GPU with vllm: the pipeline benchmark, then a 30-step GRPO run of a local ~0.5B model; "
        "learner tokens/s, MFU estimate, weight-sync time (rlar/benchmarks/gpu.sh)",
        description="Runs rlar/benchmarks/gpu.sh. Its environment: MODEL_DIR, OUT, PY (default: this "
        "interpreter), STEPS, PIPELINE_TIMEOUT_S, PIPELINE_BASELINE; the flags below set the first two.",
    )
    p.add_argument("--model-dir", help="a local Hugging Face checkpoint directory (default: $MODEL_DIR)")
    p.add_argument("--out", help="where the results go (default: $OUT, else runs/gpu-bench-<timestamp>)")
    p.set_defaults(fn=cmd_gpu)
