"""The Python half of ``rlar bench gpu`` (``rlar/benchmarks/gpu.sh``): GSM8K-format training data, the 30-step
run's config, and the summary.

- ``python -m rlar.benchmarks.gpu data FILE [--n N]``: GSM8K-format JSONL (``question``; ``answer`` with the
  worked steps and ``#### N``), two-step arithmetic word problems a ~0.5B instruct model solves part of the
  time, so GRPO groups carry signal. Written locally (the bench downloads nothing).
- ``python -m rlar.benchmarks.gpu config MODEL_DIR DATA [--steps 30]``: the run config (TOML) on stdout —
  vLLM rollout in bf16 on the GPU, bf16 learner, ``source = "gsm8k"`` task scored by math_verify.
- ``python -m rlar.benchmarks.gpu summarize OUT MODEL_DIR``: one JSON document from the pipeline bench and
  the run: learner tokens/s, an MFU estimate, weight-sync seconds, reward first/last steps.

MFU estimate: a training step costs about 6·P FLOPs per token it trains on (forward + backward; P the
model's parameters, counted exactly on the meta device), over prompt and response tokens; MFU = those
FLOPs per second of learner step time over the GPU's dense bf16 peak (:data:`PEAK_BF16_TFLOPS` by name, or
``--peak-tflops``). Response tokens are what the learner reports; prompt tokens are estimated as the
records' mean prompt length × sequences.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path
from typing import Any

import tomli_w

from rlar.learn.memory import ModelShape
from rlar.tasks.formats import load_format

PEAK_BF16_TFLOPS = {"H200": 989.0, "H100": 989.0, "A100": 312.0, "L40S": 362.0, "A10G": 70.0, "L4": 121.0}
"""Dense bf16 tensor-core peaks (vendor datasheets, no sparsity), by a substring of nvidia-smi's name."""

_NAMES = ["Ava", "Ben", "Chen", "Dara", "Eli", "Farah", "Goran", "Hana"]
_ITEMS = ["apples", "pencils", "stickers", "marbles", "books", "cards"]


def write_gsm8k(path: str | Path, n: int = 512, seed: int = 0) -> Path:
    """``n`` GSM8K-format records (two-step word problems) as JSONL at ``path``."""
    rng = random.Random(seed)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w") as f:
        for _ in range(n):
            who, item = rng.choice(_NAMES), rng.choice(_ITEMS)
            a, b, c = rng.randint(2, 40), rng.randint(2, 9), rng.randint(2, 12)
            total = a + b * c
            q = f"{who} has {a} {item}. {who} buys {b} packs with {c} {item} each. How many {item} does {who} have now?"
            ans = (
                f"{who} buys {b} * {c} = <<{b}*{c}={b * c}>>{b * c} {item}.\n"
                f"{a} + {b * c} = <<{a}+{b * c}={total}>>{total}.\n#### {total}"
            )
            f.write(json.dumps({"question": q, "answer": ans}) + "\n")
    return out


def render_config(
    model_dir: str | Path, data: str | Path, *, steps: int = 30, minutes: float = 4.0
) -> dict[str, Any]:
    """The run document of the bench's GRPO run (see the module docstring)."""
    return {
        "train": {
            "name": "gpu",
            "max_minutes": minutes,
            "actors": {"reward": 1, "learner": 1, "rollout": 1, "feeder": 1},
        },
        "nats": {"url": "embedded"},
        "policy": {"source": "path", "path": str(model_dir)},
        "tasks": [{"name": "gsm8k", "source": "gsm8k", "path": str(data)}],
        "rollout": {
            "group_size": 8,
            "batch_prompts": 16,
            "max_new_tokens": 256,
            "engine": {
                "kind": "vllm",
                "model": "{run_dir}/policy/init",
                "device": "cuda",
                "dtype": "bfloat16",
                "max_model_len": 1024,
                "gpu_memory_utilization": 0.3,
            },
        },
        "reward": {"kinds": ["rule"]},
        "learner": {
            "prompts_per_step": 16,
            "max_steps": steps,
            "checkpoint_every": 1000,
            "trainer": {
                "model_dir": "{run_dir}/policy/init",
                "lr": 1e-6,
                "zero_stage": 0,
                "dtype": "bf16",
                "gradient_checkpointing": True,
                "micro_batch_tokens": 16384,
                "torch_threads": 4,
                "grpo": {"group_size": 8, "max_staleness": 2},
            },
        },
    }


def peak_tflops(gpu_name: str) -> float | None:
    return next((v for k, v in PEAK_BF16_TFLOPS.items() if k.lower() in gpu_name.lower()), None)


def summarize(out: str | Path, model_dir: str | Path, peak: float | None = None) -> dict[str, Any]:
    """The bench's JSON document from ``out`` (pipeline.json, train.json, train/metrics.jsonl, gpu.txt)."""

    out = Path(out)
    pipe = json.loads((out / "pipeline.json").read_text())
    train = json.loads((out / "train.json").read_text())
    recs = [json.loads(x) for x in (out / "train" / "metrics.jsonl").read_text().splitlines() if x.strip()]
    gpu = (out / "gpu.txt").read_text().strip() if (out / "gpu.txt").exists() else ""
    params = ModelShape.from_config(model_dir).params
    trained = [r for r in recs if r.get("tokens") and r.get("tokens_per_s")]
    data = load_format("gsm8k", out / "gsm8k.jsonl")
    mean_prompt_chars = statistics.mean(len(str(r.prompt)) for r in data.records)
    # ~4 characters per token for English prose (the tokenizer's exact count would need it loaded here)
    prompt_tokens = sum(r.get("sequences", 0) for r in trained) * mean_prompt_chars / 4
    resp_tokens = sum(r["tokens"] for r in trained)
    step_s = sum(r["tokens"] / r["tokens_per_s"] for r in trained)  # the trainer's own time per step
    flops = 6 * params * (resp_tokens + prompt_tokens)
    peak = peak or peak_tflops(gpu)
    sync = [r["weights_s"] for r in recs if "weights_s" in r]
    return {
        "bench": "gpu",
        "gpu": gpu,
        "params": params,
        "pipeline": {
            **{
                k: pipe.get(k)
                for k in (
                    "sync_samples_per_s",
                    "async_samples_per_s",
                    "async_over_sync",
                    "trl_async_samples_per_s",
                    "async_over_trl_async",
                )
            },
            # where TRL's AsyncGRPOTrainer could not run (one GPU: its server and trainer need one each), why
            "trl_async_skipped": (pipe.get("trl_async") or {}).get("reason"),
        },
        "train_steps": train.get("steps"),
        "train_minutes": train.get("minutes"),
        "train_reason": train.get("reason"),
        "learner_tokens_per_s": round(resp_tokens / step_s, 1) if step_s else None,
        "learner_tflops": flops / step_s / 1e12 if step_s else None,
        "mfu": flops / step_s / (peak * 1e12) if step_s and peak else None,
        "peak_bf16_tflops": peak,
        "weight_sync_s_median": statistics.median(sync) if sync else None,
        "reward_first10_last10": train.get("reward_first10_last10"),
    }


def main(argv: list[str] | None = None) -> int:

    ap = argparse.ArgumentParser(prog="python -m rlar.benchmarks.gpu", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("data", help="write GSM8K-format JSONL")
    d.add_argument("file")
    d.add_argument("--n", type=int, default=512, help="records (default: 512)")
    c = sub.add_parser("config", help="print the run config (TOML)")
    c.add_argument("model_dir")
    c.add_argument("data")
    c.add_argument("--steps", type=int, default=30, help="learner steps (default: 30)")
    s = sub.add_parser("summarize", help="print the bench's JSON document")
    s.add_argument("out")
    s.add_argument("model_dir")
    s.add_argument("--peak-tflops", type=float, help="the GPU's dense bf16 peak (default: by its name)")
    a = ap.parse_args(argv)
    if a.cmd == "data":
        print(write_gsm8k(a.file, a.n))
    elif a.cmd == "config":
        sys.stdout.write(tomli_w.dumps(render_config(a.model_dir, a.data, steps=a.steps)))
    else:
        doc = summarize(a.out, a.model_dir, a.peak_tflops)
        (Path(a.out) / "gpu.json").write_text(json.dumps(doc, indent=2) + "\n")
        print(json.dumps(doc), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
