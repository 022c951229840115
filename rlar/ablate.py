"""``rlar ablate --config FILE``: one training run per reward mode, same seeds and budget, one comparison.

Reward modes (``[feeder] reward_mode``, consumed by the feeder; the router for the agentic ones):

- ``agentic``: the router chooses each kind of prompt's tools from the registry, asking the synthesizer
  (and retriever, if configured) for a verifier when none fits — the router and synthesizer actors are
  added to the run;
- ``no-synthesis``: the router alone (``[router] synthesis = false, retrieval = false``): only the existing
  toolset, falling back to declared fallbacks when nothing fits;
- ``static:<tool>``: that one tool for every task (the paper's static reward-model baselines);
- ``random``: a registered tool drawn per prompt with the feeder's seed;
- ``default``: each task's declared default tools (the demo's static routing).

For every mode: a copy of the config with the mode's overrides, ``learner.max_steps`` and
``train.max_minutes`` set to the same budget, trained with ``rlar train`` in its own process and run
directory ``<out>/<mode>``; then (unless ``eval_suite`` is empty) ``rlar eval`` of the run's final weights
on the suite. The same ``[feeder] seed`` and ``[policy]`` (hence the same cached initial policy) are used
for every mode. Written to ``<out>``: ``comparison.json``, ``comparison.md`` and ``comparison.png``
(smoothed mean-reward curve per mode, and the eval metrics per mode).

Rewards of different modes are measured by different tools, so the training-reward columns are not
comparable across modes; the eval columns (same metrics for every mode) are.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import tomli_w

from rlar.config import apply_overrides, load_toml
from rlar.learn.distributed import child_env

__all__ = ["ablate", "mode_overrides"]


def mode_overrides(mode: str, doc: dict[str, Any]) -> dict[str, Any]:
    """A copy of the run document set up for ``mode`` (see the module docstring). Raises ``ValueError``."""
    out = copy.deepcopy(doc)
    feeder = out.setdefault("feeder", {})
    actors = out.setdefault("train", {}).setdefault("actors", {})
    if mode == "default":
        feeder["reward_mode"] = "default"
    elif mode in ("agentic", "no-synthesis"):
        feeder["reward_mode"] = mode
        router = out.setdefault("router", {})
        actors.setdefault("router", 1)
        if mode == "agentic":
            router.setdefault("synthesis", True)
            actors.setdefault("synthesizer", 1)
        else:
            router["synthesis"] = False
            router["retrieval"] = False
            actors.pop("synthesizer", None)
            actors.pop("retriever", None)
    elif mode == "random" or (mode.startswith("static:") and len(mode) > 7):
        feeder["reward_mode"] = mode
    else:
        raise ValueError(
            f"unknown reward mode {mode!r}: agentic | no-synthesis | random | static:<tool> | default"
        )
    return out


def _safe(mode: str) -> str:
    return mode.replace(":", "-").replace("/", "_")


def _curve(run_dir: Path) -> list[tuple[int, float]]:
    from rlar.plots import read_metrics

    path = run_dir / "metrics.jsonl"
    if not path.exists():
        return []
    return [
        (int(r["step"]), float(r["reward_mean"]))
        for r in read_metrics(path)
        if r.get("reward_mean") is not None
    ]


def _plot(rows: list[dict[str, Any]], curves: dict[str, list[tuple[int, float]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.5))
    for mode, pts in curves.items():
        if not pts:
            continue
        ys = [y for _, y in pts]
        w = max(1, min(10, len(ys) // 5))
        smooth = [
            sum(ys[max(0, i - w + 1) : i + 1]) / len(ys[max(0, i - w + 1) : i + 1]) for i in range(len(ys))
        ]
        a1.plot([x for x, _ in pts], smooth, label=mode)
    a1.set_xlabel("learner step")
    a1.set_ylabel("mean training reward (own tools; smoothed)")
    a1.grid(alpha=0.3)
    a1.legend()
    metrics = sorted({k for r in rows for k, v in r.get("eval", {}).items() if v is not None})
    width = 0.8 / max(1, len(rows))
    for i, r in enumerate(rows):
        vals = [r.get("eval", {}).get(m) or 0.0 for m in metrics]
        a2.bar([j + i * width for j in range(len(metrics))], vals, width, label=r["mode"])
    a2.set_xticks([j + 0.4 - width / 2 for j in range(len(metrics))], metrics, rotation=30, ha="right")
    a2.set_ylabel("eval (held-out)")
    a2.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _table(rows: list[dict[str, Any]]) -> str:
    metrics = sorted({k for r in rows for k in r.get("eval", {})})
    head = ["mode", "steps", "minutes", "reward first10", "reward last10", *metrics]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        fl = r.get("reward_all", {})
        cells = [r["mode"], str(r.get("steps", "-")), str(r.get("minutes", "-")),
                 f"{fl['first']:.3f}" if fl else "-", f"{fl['last']:.3f}" if fl else "-"]  # fmt: skip
        for m in metrics:
            v = r.get("eval", {}).get(m)
            cells.append("-" if v is None else f"{v:.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ablate(
    config: str, *, modes: list[str], overrides: list[str] | None = None, max_steps: int = 40,
    max_minutes: float = 7.0, out: str | None = None, eval_suite: str = "learnable", eval_limit: int | None = 60,
) -> dict[str, Any]:  # fmt: skip
    """Train and evaluate once per mode; write the comparison (see the module docstring) and return it."""
    base = load_toml(config)
    apply_overrides(base, overrides)
    docs = {m: mode_overrides(m, base) for m in modes}  # validates every mode before anything runs
    root = Path(out) if out else Path("runs") / f"ablate-{time.strftime('%Y%m%d-%H%M%S')}"
    root.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    curves: dict[str, list[tuple[int, float]]] = {}
    for mode, doc in docs.items():
        doc.setdefault("learner", {})["max_steps"] = max_steps
        doc["train"]["max_minutes"] = max_minutes
        doc["train"]["name"] = f"ablate-{_safe(mode)}"
        run_dir = root / _safe(mode)
        cfg = root / f"{_safe(mode)}.toml"
        cfg.write_text(tomli_w.dumps(doc))
        print(f"== {mode}: training ≤{max_steps} steps / ≤{max_minutes} min → {run_dir}", flush=True)
        t0 = time.time()
        proc = subprocess.run([sys.executable, "-m", "rlar.cli", "--log-level", "WARNING", "train", "--config",
                               str(cfg), "--run-dir", str(run_dir)], env=child_env(), check=False)  # fmt: skip
        row: dict[str, Any] = {"mode": mode, "run_dir": str(run_dir), "train_rc": proc.returncode,
                               "wall_s": round(time.time() - t0, 1)}  # fmt: skip
        summary_path = run_dir / "summary.json"
        if summary_path.exists():
            summary = json.loads(summary_path.read_text())
            row.update(steps=summary["steps"], minutes=summary["minutes"], reason=summary["reason"],
                       crashes=summary["crashes"])  # fmt: skip
        curves[mode] = _curve(run_dir)
        pts = [y for _, y in curves[mode]]
        if pts:
            n = max(1, min(10, len(pts) // 2))
            row["reward_all"] = {"first": sum(pts[:n]) / n, "last": sum(pts[-n:]) / n}
        if eval_suite and (run_dir / "policy" / "init").exists():
            from rlar.eval import run_eval

            ev = run_eval(str(run_dir), eval_suite, limit=eval_limit)
            row["eval_label"] = ev["result"]["label"]
            row["eval"] = {f"{t}/{m}": v for t, ms in ev["result"]["metrics"].items() for m, v in ms.items()
                           if m not in ("avg_len", "judge_abstained", "sandbox_abstained")}  # fmt: skip
        rows.append(row)
        (root / "comparison.json").write_text(json.dumps({"modes": rows}, indent=2) + "\n")
    table = _table(rows)
    (root / "comparison.md").write_text(
        f"Reward-mode ablation of `{config}`: ≤{max_steps} steps, ≤{max_minutes} min per mode; eval suite "
        f"`{eval_suite or '-'}` (limit {eval_limit}).\n\n{table}\n"
    )
    _plot(rows, curves, root / "comparison.png")
    return {"out": str(root), "modes": rows, "table": table,
            "files": [str(root / n) for n in ("comparison.json", "comparison.md", "comparison.png")]}  # fmt: skip
