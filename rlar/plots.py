"""Reward curves from a run's ``metrics.jsonl`` (matplotlib, headless)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# matplotlib is imported where used: heavy and optional (rlar --help imports this module).


def read_metrics(path: str | Path) -> list[dict[str, Any]]:
    p = Path(path)
    if not p.exists():
        return []
    out = []
    for line in p.read_text().splitlines():
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a line being written right now
    return out


def task_names(records: list[dict[str, Any]]) -> list[str]:
    return sorted({k.split("/", 1)[1] for r in records for k in r if k.startswith("reward/")})


def _smooth(values: list[float], window: int) -> list[float]:
    out, acc = [], []
    for v in values:
        acc.append(v)
        if len(acc) > window:
            acc.pop(0)
        out.append(sum(acc) / len(acc))
    return out


def plot_reward_curves(metrics_path: str | Path, out_dir: str | Path, window: int = 10) -> list[Path]:
    """Write ``reward_<task>.png`` per task (raw and moving average per learner step); return the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = read_metrics(metrics_path)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for task in task_names(records):
        pts = [(r["step"], r[f"reward/{task}"]) for r in records if f"reward/{task}" in r]
        if not pts:
            continue
        steps, vals = zip(*pts, strict=True)
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.plot(steps, vals, alpha=0.35, label="per step")
        ax.plot(steps, _smooth(list(vals), window), label=f"moving mean ({window})")
        ax.set_xlabel("learner step")
        ax.set_ylabel("mean reward")
        ax.set_title(f"reward: {task}")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right")
        fig.tight_layout()
        path = out / f"reward_{task}.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    return written
