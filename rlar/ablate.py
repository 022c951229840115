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

The feeder chooses the tools in the last three: they set ``[feeder] routing = "static"`` and drop the router,
synthesizer and retriever actors (a config that routes by the router, like the demo, would otherwise send
every prompt to a router that is not there, or keep agent actors idling).

For every mode and every seed in ``seeds``: a copy of the config with the mode's overrides, ``learner.max_steps``
and ``train.max_minutes`` set to the same budget, ``[feeder] seed`` (the prompt order) and the rollout
engine's sampling seed set to the seed, trained with ``rlar train`` in its own process and run directory
``<out>/<mode>-seed<N>``; then (unless ``eval_suite`` is empty) ``rlar eval`` of the run's final weights on the
suite. ``[policy]`` is the same for every run, so every run starts from the same cached initial policy.

Per mode and eval metric (``task/metric``) the runs' values are summarised as the mean with a 95% interval
(Student's t over the seeds: mean ± t(0.975, n-1) · sd / √n; n = 1 gives no interval). Written to ``<out>``:
``comparison.json`` (every run and the summary), ``comparison.md`` (one row per metric, one column per mode)
and ``comparison.png`` (smoothed mean-reward curve per run, and the eval means with their intervals).

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

from rlar.learn.distributed import child_env
from rlar.runconfig import load_run_config

__all__ = ["ablate", "budget_note", "interval", "mode_overrides", "summarize_runs"]


def mode_overrides(mode: str, doc: dict[str, Any]) -> dict[str, Any]:
    """A copy of the run document set up for ``mode`` (see the module docstring). Raises ``ValueError``."""
    out = copy.deepcopy(doc)
    feeder = out.setdefault("feeder", {})
    actors = out.setdefault("train", {}).setdefault("actors", {})
    if mode in ("agentic", "no-synthesis"):
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
    elif mode in ("default", "random") or (mode.startswith("static:") and len(mode) > 7):
        # the feeder chooses the tools: a config that routes by the router (the demo) is switched to static
        # routing, and the agent actors, which would only idle, are not started
        feeder["reward_mode"] = mode
        feeder["routing"] = "static"
        for name in ("router", "synthesizer", "retriever"):
            actors.pop(name, None)
    else:
        raise ValueError(
            f"unknown reward mode {mode!r}: agentic | no-synthesis | random | static:<tool> | default"
        )
    return out


# Student's t, 0.975 quantile, by degrees of freedom (1-30); beyond 30 the normal 1.96 is close enough.
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]  # fmt: skip


def interval(values: list[float]) -> dict[str, Any]:
    """Mean, sample sd, n and the 95% t-interval of ``values`` (no interval for fewer than 2)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return {"mean": round(mean, 4), "sd": None, "n": n, "lo": None, "hi": None}
    sd = (sum((v - mean) ** 2 for v in values) / (n - 1)) ** 0.5
    half = (_T975[n - 2] if n - 1 <= len(_T975) else 1.96) * sd / n**0.5
    return {
        "mean": round(mean, 4),
        "sd": round(sd, 4),
        "n": n,
        "lo": round(mean - half, 4),
        "hi": round(mean + half, 4),
    }


def summarize_runs(rows: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """``{mode: {metric: interval}}`` over the runs of each mode that have that eval metric."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for mode in dict.fromkeys(r["mode"] for r in rows):
        runs = [r for r in rows if r["mode"] == mode]
        metrics = sorted({k for r in runs for k, v in r.get("eval", {}).items() if v is not None})
        out[mode] = {m: interval([float(r["eval"][m]) for r in runs if r.get("eval", {}).get(m) is not None])
                     for m in metrics}  # fmt: skip
    return out


def budget_note(rows: list[dict[str, Any]], max_steps: int, max_minutes: float) -> dict[str, Any]:
    """Whether the runs compare at equal steps (every run reached ``max_steps``) or were cut by the clock."""
    steps = {f"{r['mode']} s{r['seed']}": r.get("steps") for r in rows}
    equal = bool(rows) and all(v == max_steps for v in steps.values())
    if equal:
        note = f"Equal steps: every run trained all {max_steps} learner steps (the {max_minutes}-minute bound never cut in)."
    else:
        short = ", ".join(f"{k}: {v}" for k, v in steps.items() if v != max_steps)
        note = (
            f"NOT an equal-steps comparison: runs stopped short of {max_steps} steps ({short}) — the "
            f"{max_minutes}-minute bound or a failure cut them; raise --max-minutes to compare at equal steps."
        )
    return {"equal_steps": equal, "steps": steps, "note": note}


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


def _plot(
    summary: dict[str, dict[str, dict[str, Any]]], curves: dict[str, list[tuple[int, float]]], path: Path
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 4.8))
    for label, pts in curves.items():
        if not pts:
            continue
        ys = [y for _, y in pts]
        w = max(1, min(10, len(ys) // 5))
        smooth = [
            sum(ys[max(0, i - w + 1) : i + 1]) / len(ys[max(0, i - w + 1) : i + 1]) for i in range(len(ys))
        ]
        a1.plot([x for x, _ in pts], smooth, label=label, alpha=0.8)
    a1.set_xlabel("learner step")
    a1.set_ylabel("mean training reward (own tools; smoothed)")
    a1.grid(alpha=0.3)
    a1.legend(fontsize=7)
    metrics = sorted({m for per in summary.values() for m in per})
    width = 0.8 / max(1, len(summary))
    for i, (mode, per) in enumerate(summary.items()):
        means = [per.get(m, {}).get("mean") or 0.0 for m in metrics]
        errs = [
            (per[m]["mean"] - per[m]["lo"]) if m in per and per[m]["lo"] is not None else 0.0 for m in metrics
        ]
        a2.bar([j + i * width for j in range(len(metrics))], means, width, yerr=errs, capsize=3, label=mode)
    a2.set_xticks([j + 0.4 - width / 2 for j in range(len(metrics))], metrics, rotation=30, ha="right")
    a2.set_ylabel("eval (held-out), mean and 95% interval over seeds")
    a2.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _table(rows: list[dict[str, Any]], summary: dict[str, dict[str, dict[str, Any]]]) -> str:
    modes = list(summary)
    lines = ["| metric | " + " | ".join(modes) + " |", "|---|" + "---|" * len(modes)]
    for m in sorted({m for per in summary.values() for m in per}):
        cells = []
        for mode in modes:
            iv = summary[mode].get(m)
            if iv is None:
                cells.append("-")
            elif iv["lo"] is None:
                cells.append(f"{iv['mean']:.3f} (n=1)")
            else:
                cells.append(f"{iv['mean']:.3f} [{iv['lo']:.3f}, {iv['hi']:.3f}] (n={iv['n']})")
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "| mode | seed | steps | minutes | reward first10 | reward last10 |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        fl = r.get("reward_all", {})
        lines.append(f"| {r['mode']} | {r['seed']} | {r.get('steps', '-')} | {r.get('minutes', '-')} | "
                     f"{fl['first']:.3f} | {fl['last']:.3f} |" if fl else f"| {r['mode']} | {r['seed']} | "
                     f"{r.get('steps', '-')} | {r.get('minutes', '-')} | - | - |")  # fmt: skip
    return "\n".join(lines)


def ablate(
    config: str, *, modes: list[str], overrides: list[str] | None = None, max_steps: int = 40,
    max_minutes: float = 7.0, out: str | None = None, eval_suite: str = "agentic", eval_limit: int | None = None,
    seeds: list[int] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Train and evaluate once per mode and seed; write the comparison (see the module docstring)."""
    base = load_run_config(config, overrides)  # paths made absolute: the per-mode copies live elsewhere
    docs = {m: mode_overrides(m, base) for m in modes}  # validates every mode before anything runs
    seeds = list(seeds if seeds is not None else [int(base.get("feeder", {}).get("seed", 0))])
    root = Path(out) if out else Path("runs") / f"ablate-{time.strftime('%Y%m%d-%H%M%S')}"
    root.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    curves: dict[str, list[tuple[int, float]]] = {}
    for mode, mode_doc in docs.items():
        for seed in seeds:
            doc = copy.deepcopy(mode_doc)
            doc.setdefault("learner", {})["max_steps"] = max_steps
            doc["train"]["max_minutes"] = max_minutes
            doc["train"]["name"] = f"ablate-{_safe(mode)}-seed{seed}"
            doc.setdefault("feeder", {})["seed"] = seed
            engine = doc.setdefault("rollout", {}).get("engine")
            if isinstance(engine, dict):
                engine["seed"] = seed
            run_dir = root / f"{_safe(mode)}-seed{seed}"
            cfg = root / f"{_safe(mode)}-seed{seed}.toml"
            cfg.write_text(tomli_w.dumps(doc))
            print(
                f"== {mode} seed {seed}: training ≤{max_steps} steps / ≤{max_minutes} min → {run_dir}",
                flush=True,
            )
            t0 = time.time()
            proc = subprocess.run([sys.executable, "-m", "rlar.app.cli", "--log-level", "WARNING", "train", "--config",
                                   str(cfg), "--run-dir", str(run_dir)], env=child_env(), check=False)  # fmt: skip
            row: dict[str, Any] = {"mode": mode, "seed": seed, "run_dir": str(run_dir), "train_rc": proc.returncode,
                                   "wall_s": round(time.time() - t0, 1)}  # fmt: skip
            summary_path = run_dir / "summary.json"
            if summary_path.exists():
                summary = json.loads(summary_path.read_text())
                row.update(steps=summary["steps"], minutes=summary["minutes"], reason=summary["reason"],
                           crashes=summary["crashes"], tasks=summary.get("tasks"))  # fmt: skip
            curves[f"{mode} s{seed}"] = _curve(run_dir)
            pts = [y for _, y in curves[f"{mode} s{seed}"]]
            if pts:
                n = max(1, min(10, len(pts) // 2))
                row["reward_all"] = {"first": sum(pts[:n]) / n, "last": sum(pts[-n:]) / n}
            if eval_suite and (run_dir / "policy" / "init").exists():
                from rlar.eval import run_eval

                ev = run_eval(str(run_dir), eval_suite, limit=eval_limit, seed=seed)
                row["eval_label"] = ev["result"]["label"]
                row["eval"] = {f"{t}/{m}": v for t, ms in ev["result"]["metrics"].items() for m, v in ms.items()
                               if m not in ("avg_len", "judge_abstained", "sandbox_abstained")}  # fmt: skip
            rows.append(row)
            (root / "comparison.json").write_text(
                json.dumps({"runs": rows, "summary": summarize_runs(rows)}, indent=2) + "\n"
            )
    summary_by_mode = summarize_runs(rows)
    table = _table(rows, summary_by_mode)
    budget = budget_note(rows, max_steps, max_minutes)
    (root / "comparison.json").write_text(
        json.dumps({"runs": rows, "summary": summary_by_mode, "budget": budget}, indent=2) + "\n"
    )
    (root / "comparison.md").write_text(
        f"Reward-mode ablation of `{config}`: seeds {seeds}, ≤{max_steps} steps and ≤{max_minutes} min per run; "
        f"eval suite `{eval_suite or '-'}` (limit {eval_limit}); cells: mean [95% interval] over seeds.\n\n"
        f"{budget['note']}\n\n{table}\n"
    )
    _plot(summary_by_mode, curves, root / "comparison.png")
    from rlar.observe.report import write_ablation_report

    write_ablation_report(root, rows, curves, title=f"{config}: seeds {seeds}, ≤{max_steps} steps per run")
    return {"out": str(root), "runs": rows, "summary": summary_by_mode, "table": table, "budget": budget,
            "files": [str(root / n) for n in ("comparison.json", "comparison.md", "comparison.png", "report.html")]}  # fmt: skip
