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

The ablation can be fixed in the config, before anything runs: an ``[ablate]`` table (``PLAN_KEYS``: modes, seeds,
max_steps, max_minutes, eval_suite, eval_limit, per-task eval settings ``eval`` and the ``hack_tools``) that
``rlar ablate`` reads and removes from the runs' copies; command-line values override it. With it the eval is
``tasks`` by default (:mod:`rlar.eval.hacks`): every training task's held-out split with its options, scored by
its true metric (``nem``, ``exact``, ``match``, ``format``, ``prompt_strict``, ``pass@1``; ``all/true`` their
mean), plus each hack tool's hack rate (``task/hack@tool``: outputs the tool scores >= 0.5 that fail the true
metric) and share scored high
(``task/high@tool``). Runs go seed by seed (every mode at seed 0, then at seed 1, ...), so an ablation cut
short compares every mode at the seeds it finished. It resumes: ``<out>/<mode>-seed<N>.row.json`` marks a
finished run (trained with exit status 0 and evaluated), which a second call with the same ``--out`` does not
run again; an interrupted run's directory is moved aside (``.interrupted``) and the run starts over.

Per mode and eval metric (``task/metric``) the runs' values are summarised as the mean with a 95% interval
(Student's t over the seeds: mean ± t(0.975, n-1) · sd / √n; n = 1 gives no interval). Written to ``<out>``:
``comparison.json`` (every run, the summary and the differences), ``comparison.md`` (one row per metric, one
column per mode; then each mode minus ``agentic`` with a 95% Welch interval, starred when it excludes 0: beyond
noise) and ``comparison.png`` (smoothed mean-reward curve per run, the true eval metrics and the hack rates with
their intervals).

Rewards of different modes are measured by different tools, so the training-reward columns are not
comparable across modes; the eval columns (same metrics for every mode) are.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import tomli_w

from rlar.eval import run_eval
from rlar.eval.ablation_stats import compare_modes, paired_by_prompt, sample_verdicts, summarize_runs
from rlar.eval.hacks import ablation_eval, ablation_tasks
from rlar.eval.runner import _spec
from rlar.learn.distributed import child_env
from rlar.observe.report import write_ablation_report
from rlar.plots import read_metrics
from rlar.runconfig import load_run_config

# matplotlib is imported where used: heavy and optional (the CLI starts without it).

__all__ = [
    "PLAN_KEYS",
    "ablate",
    "budget_note",
    "mode_overrides",
    "read_plan",
]


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


def budget_note(rows: list[dict[str, Any]], max_steps: int, max_minutes: float) -> dict[str, Any]:
    """Whether the runs compare at equal steps (every run reached ``max_steps``) or were cut by the clock."""
    steps = {f"{r['mode']} s{r['seed']}": r.get("steps") for r in rows}
    equal = bool(rows) and all(v == max_steps for v in steps.values())
    if equal:
        note = (
            f"Equal steps: every run trained all {max_steps} learner steps "
            f"(the {max_minutes}-minute bound never cut in)."
        )
    else:
        short = ", ".join(f"{k}: {v}" for k, v in steps.items() if v != max_steps)
        note = (
            f"NOT an equal-steps comparison: runs stopped short of {max_steps} steps ({short}) — the "
            f"{max_minutes}-minute bound or a failure cut them; raise --max-minutes to compare at equal steps."
        )
    return {"equal_steps": equal, "steps": steps, "note": note}


_CLI = "rlar.app.cli" if importlib.util.find_spec("rlar.app") else "rlar.cli"
"""The module ``rlar`` runs as (``python -m``): where the command-line entry point lives in this tree."""


def _safe(mode: str) -> str:
    return mode.replace(":", "-").replace("/", "_")


def _curve(run_dir: Path) -> list[tuple[int, float]]:

    path = run_dir / "metrics.jsonl"
    if not path.exists():
        return []
    return [
        (int(r["step"]), float(r["reward_mean"]))
        for r in read_metrics(path)
        if r.get("reward_mean") is not None
    ]


def _metric_order(metrics: set[str]) -> list[str]:
    """True metrics first (``all/true`` on top), then the hack rates, then the shares scored high."""
    kind = {"hack": 1, "high": 2}
    return sorted(
        metrics,
        key=lambda m: (
            kind.get(m.rsplit("/", 1)[-1].split("@")[0], 0) if "@" in m else 0,
            m != "all/true",
            m,
        ),
    )


def _plot(
    summary: dict[str, dict[str, dict[str, Any]]], curves: dict[str, list[tuple[int, float]]], path: Path
) -> None:
    """Smoothed training-reward curves per run; the true eval metrics and the hack rates, mean and 95% interval
    per mode."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = _metric_order({m for per in summary.values() for m in per})
    panels = [[m for m in metrics if "@" not in m], [m for m in metrics if "/hack@" in m]]
    panels = [p for p in panels if p]
    fig, axes = plt.subplots(1, 1 + len(panels), figsize=(6.5 * (1 + len(panels)), 4.8), squeeze=False)
    a1 = axes[0][0]
    modes = list(summary)
    colour = {m: f"C{i % 10}" for i, m in enumerate(modes)}
    for label, pts in curves.items():
        if not pts:
            continue
        ys = [y for _, y in pts]
        w = max(1, min(10, len(ys) // 5))
        smooth = [
            sum(ys[max(0, i - w + 1) : i + 1]) / len(ys[max(0, i - w + 1) : i + 1]) for i in range(len(ys))
        ]
        mode = label.rsplit(" s", 1)[0]
        a1.plot([x for x, _ in pts], smooth, label=label, alpha=0.8, color=colour.get(mode))
    a1.set_xlabel("learner step")
    a1.set_ylabel("mean training reward (own tools; smoothed)")
    a1.grid(alpha=0.3)
    a1.legend(fontsize=6, ncol=2)
    titles = [
        "eval (held-out): true metric",
        "eval (held-out): hack rate (high under the tool, fails the true metric)",
    ]
    for ax, shown, title in zip(axes[0][1:], panels, titles, strict=False):
        width = 0.8 / max(1, len(summary))
        for i, (mode, per) in enumerate(summary.items()):
            means = [per.get(m, {}).get("mean") or 0.0 for m in shown]
            errs = [
                (per[m]["mean"] - per[m]["lo"]) if m in per and per[m]["lo"] is not None else 0.0
                for m in shown
            ]
            ax.bar(
                [j + i * width for j in range(len(shown))],
                means,
                width,
                yerr=errs,
                capsize=3,
                label=mode,
                color=colour[mode],
            )
        ax.set_xticks(
            [j + 0.4 - width / 2 for j in range(len(shown))], shown, rotation=30, ha="right", fontsize=7
        )
        ax.set_title(title, fontsize=9)
        ax.set_ylabel("mean and 95% interval over seeds")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _table(rows: list[dict[str, Any]], summary: dict[str, dict[str, dict[str, Any]]]) -> str:
    modes = list(summary)
    lines = ["| metric | " + " | ".join(modes) + " |", "|---|" + "---|" * len(modes)]
    for m in _metric_order({m for per in summary.values() for m in per}):
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
        lines.append(
            f"| {r['mode']} | {r['seed']} | {r.get('steps', '-')} | {r.get('minutes', '-')} | "
            f"{fl['first']:.3f} | {fl['last']:.3f} |"
            if fl
            else f"| {r['mode']} | {r['seed']} | {r.get('steps', '-')} | {r.get('minutes', '-')} | - | - |"
        )
    return "\n".join(lines)


PLAN_KEYS = ("modes", "seeds", "max_steps", "max_minutes", "eval_suite", "eval_limit", "eval", "hack_tools")
"""Keys of a config's ``[ablate]`` table: the ablation fixed in the config (command-line values override them)."""


def read_plan(doc: dict[str, Any], where: str = "config") -> dict[str, Any]:
    """Remove and return the document's ``[ablate]`` table (``{}`` if none); ``ValueError`` on an unknown key."""
    plan = doc.pop("ablate", None) or {}
    if not isinstance(plan, dict):
        raise ValueError(f"{where}: [ablate] must be a table")
    unknown = sorted(set(plan) - set(PLAN_KEYS))
    if unknown:
        raise ValueError(f"{where}: [ablate] has unknown keys {unknown} (known: {', '.join(PLAN_KEYS)})")
    return dict(plan)


def compare_by_prompt(
    root: Path, rows: list[dict[str, Any]], against: str
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{mode: {metric: paired_by_prompt(against, mode)}}`` from the runs' sample verdicts, pooled over seeds."""
    verdicts: dict[str, dict[str, dict[tuple[int, str], float]]] = {}
    for r in rows:
        path = root / Path(r["run_dir"]).name / "eval" / "ablation.json"
        if not path.exists():
            continue
        for metric, by_sample in sample_verdicts(json.loads(path.read_text())).items():
            into = verdicts.setdefault(r["mode"], {}).setdefault(metric, {})
            into.update({(int(r["seed"]), sid): v for sid, v in by_sample.items()})
    base = verdicts.get(against, {})
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for mode, metrics in verdicts.items():
        if mode == against:
            continue
        for metric, values in sorted(metrics.items()):
            if metric in base and (diff := paired_by_prompt(base[metric], values)) is not None:
                out.setdefault(mode, {})[metric] = diff
    return out


def _eval_row(doc: dict[str, Any]) -> dict[str, float]:
    """An ablation eval document's metrics as the row's flat ``task/metric`` values: the true metric of every
    task, their mean (``all/true``) and each static tool's hack rate (``task/hack@tool``) and share scored high
    (``task/high@tool``)."""
    out: dict[str, float] = {}
    trues = []
    for task, ms in doc["metrics"].items():
        for m, v in ms.items():
            if v is None or m in ("avg_len", "judge_abstained", "sandbox_abstained", "ifeval_abstained"):
                continue
            if m.endswith("/abstain"):
                continue
            if "/" in m:  # "<tool>/hack" -> "hack@<tool>"
                tool, kind = m.rsplit("/", 1)
                out[f"{task}/{kind}@{tool}"] = float(v)
            else:
                out[f"{task}/{m}"] = float(v)
                if m in ("nem", "exact", "match", "format", "prompt_strict", "pass@1"):
                    trues.append(float(v))
    if trues:
        out["all/true"] = sum(trues) / len(trues)
    return out


def _run_row(root: Path, mode: str, seed: int) -> Path:
    return root / f"{_safe(mode)}-seed{seed}.row.json"


def _set_aside(run_dir: Path) -> Path:
    """Move an interrupted run's directory out of the way (kept, never deleted): ``<dir>.interrupted[-N]``."""
    n, dest = 1, run_dir.with_name(run_dir.name + ".interrupted")
    while dest.exists():
        n += 1
        dest = run_dir.with_name(f"{run_dir.name}.interrupted-{n}")
    run_dir.rename(dest)
    return dest


def ablate(
    config: str,
    *,
    modes: list[str] | None = None,
    overrides: list[str] | None = None,
    max_steps: int | None = None,
    max_minutes: float | None = None,
    out: str | None = None,
    eval_suite: str | None = None,
    eval_limit: int | None = None,
    seeds: list[int] | None = None,
) -> dict[str, Any]:
    """Train and evaluate once per mode and seed; write the comparison (see the module docstring).

    Arguments left None come from the config's ``[ablate]`` table (``PLAN_KEYS``), else the defaults: modes
    ``agentic`` and ``static:exact_match``, the feeder's seed, ``[learner] max_steps`` (else 40), 7 minutes, the
    ``agentic`` suite without an ``[ablate]`` table and ``tasks`` with one.

    Resumes: a run whose ``<mode>-seed<N>.row.json`` exists in ``out`` is not run again (its config must be the
    one this call would write, else ``ValueError``: ``out`` holds another ablation); a run directory left
    without one (interrupted) is moved aside to ``<dir>.interrupted`` and the run starts over.
    """
    base = load_run_config(config, overrides)  # paths made absolute: the per-mode copies live elsewhere
    plan = read_plan(base, config)
    modes = list(modes or plan.get("modes") or ["agentic", "static:exact_match"])
    docs = {m: mode_overrides(m, base) for m in modes}  # validates every mode before anything runs
    seeds = [
        int(s)
        for s in (
            seeds if seeds is not None else plan.get("seeds") or [int(base.get("feeder", {}).get("seed", 0))]
        )
    ]
    max_steps = int(max_steps or plan.get("max_steps") or base.get("learner", {}).get("max_steps") or 40)
    max_minutes = float(max_minutes or plan.get("max_minutes") or 7.0)
    eval_suite = (
        eval_suite if eval_suite is not None else plan.get("eval_suite", "tasks" if plan else "agentic")
    )
    eval_limit = eval_limit if eval_limit is not None else plan.get("eval_limit")
    hack_tools = list(
        plan.get("hack_tools") or [m.split(":", 1)[1] for m in modes if m.startswith("static:")]
    )
    eval_tasks = None
    if eval_suite == "tasks":
        for tool in hack_tools:
            _spec(tool)  # a name that is not a built-in tool fails here, before any run
        eval_tasks = ablation_tasks(
            list(base.get("feeder", {}).get("tasks") or []),
            max_new_tokens=int(base.get("rollout", {}).get("max_new_tokens", 12)),
            base_dir=str(Path(config).absolute().parent),
            settings=plan.get("eval"),
        )
        if eval_limit:
            eval_tasks = [replace(t, limit=min(t.limit or eval_limit, eval_limit)) for t in eval_tasks]
    root = Path(out) if out else Path("runs") / f"ablate-{time.strftime('%Y%m%d-%H%M%S')}"
    root.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    curves: dict[str, list[tuple[int, float]]] = {}
    # seed by seed, every mode once per seed: an ablation cut short has every mode at the seeds it finished
    for seed in seeds:
        for mode, mode_doc in docs.items():
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
            text = tomli_w.dumps(doc)
            done = _run_row(root, mode, seed)
            if done.exists():
                if not cfg.exists() or cfg.read_text() != text:
                    raise ValueError(
                        f"{root} holds a finished run {mode} seed {seed} of another ablation (its "
                        f"config {cfg} differs from this one's); use another --out"
                    )
                print(f"== {mode} seed {seed}: done before ({done.name}), not run again", flush=True)
                rows.append(json.loads(done.read_text()))
                curves[f"{mode} s{seed}"] = _curve(run_dir)
                continue
            if run_dir.exists():
                print(
                    f"== {mode} seed {seed}: an interrupted run, moved to {_set_aside(run_dir)}", flush=True
                )
            cfg.write_text(text)
            print(
                f"== {mode} seed {seed}: training ≤{max_steps} steps / ≤{max_minutes} min → {run_dir}",
                flush=True,
            )
            t0 = time.time()
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    _CLI,
                    "--log-level",
                    "WARNING",
                    "train",
                    "--config",
                    str(cfg),
                    "--run-dir",
                    str(run_dir),
                ],
                env=child_env(),
                check=False,
            )
            row: dict[str, Any] = {
                "mode": mode,
                "seed": seed,
                "run_dir": str(run_dir),
                "train_rc": proc.returncode,
                "wall_s": round(time.time() - t0, 1),
            }
            summary_path = run_dir / "summary.json"
            if summary_path.exists():
                summary = json.loads(summary_path.read_text())
                row.update(
                    steps=summary["steps"],
                    minutes=summary["minutes"],
                    reason=summary["reason"],
                    crashes=summary["crashes"],
                    tasks=summary.get("tasks"),
                )
            curves[f"{mode} s{seed}"] = _curve(run_dir)
            pts = [y for _, y in curves[f"{mode} s{seed}"]]
            if pts:
                n = max(1, min(10, len(pts) // 2))
                row["reward_all"] = {"first": sum(pts[:n]) / n, "last": sum(pts[-n:]) / n}
            t1 = time.time()
            if eval_tasks is not None and (run_dir / "policy" / "init").exists():
                ev = ablation_eval(run_dir, eval_tasks, hack_tools, seed=seed)
                row["eval_label"] = ev["label"]
                row["eval"] = _eval_row(ev)
            elif eval_suite and (run_dir / "policy" / "init").exists():
                ev = run_eval(str(run_dir), eval_suite, limit=eval_limit, seed=seed)
                row["eval_label"] = ev["result"]["label"]
                row["eval"] = {
                    f"{t}/{m}": v
                    for t, ms in ev["result"]["metrics"].items()
                    for m, v in ms.items()
                    if m not in ("avg_len", "judge_abstained", "sandbox_abstained")
                }
            row["eval_s"] = round(time.time() - t1, 1)
            rows.append(row)
            if proc.returncode == 0 and (row.get("eval") is not None or not eval_suite):
                done.write_text(json.dumps(row, indent=1, default=str) + "\n")  # finished: a resume skips it
            (root / "comparison.json").write_text(
                json.dumps({"runs": rows, "summary": summarize_runs(rows)}, indent=2, default=str) + "\n"
            )
    rows.sort(key=lambda r: (modes.index(r["mode"]), r["seed"]))
    return _write_comparison(
        root,
        config,
        rows,
        curves,
        modes=modes,
        seeds=seeds,
        max_steps=max_steps,
        max_minutes=max_minutes,
        eval_suite=eval_suite,
        eval_limit=eval_limit,
        hack_tools=hack_tools,
    )


def _write_comparison(
    root: Path,
    config: str,
    rows: list[dict[str, Any]],
    curves: dict[str, list[tuple[int, float]]],
    *,
    modes: list[str],
    seeds: list[int],
    max_steps: int,
    max_minutes: float,
    eval_suite: str,
    eval_limit: Any,
    hack_tools: list[str],
) -> dict[str, Any]:
    summary_by_mode = summarize_runs(rows)
    against = "agentic" if "agentic" in modes else modes[0]
    diffs = compare_modes(rows, against)
    by_prompt = compare_by_prompt(root, rows, against)
    table = _table(rows, summary_by_mode)
    budget = budget_note(rows, max_steps, max_minutes)
    (root / "comparison.json").write_text(
        json.dumps(
            {
                "runs": rows,
                "summary": summary_by_mode,
                "budget": budget,
                "against": against,
                "differences": diffs,
                "differences_by_prompt": by_prompt,
                "hack_tools": hack_tools,
            },
            indent=2,
            default=str,
        )
        + "\n"
    )
    (root / "comparison.md").write_text(
        f"Reward-mode ablation of `{config}`: seeds {seeds}, ≤{max_steps} steps and ≤{max_minutes} min per run; "
        f"eval `{eval_suite or '-'}` (limit {eval_limit}); cells: mean [95% interval] over seeds.\n\n"
        f"{budget['note']}\n\n{table}\n\n{_diff_table(diffs, against)}\n\n"
        f"{_diff_table(by_prompt, against, by_prompt=True)}\n"
    )
    _plot(summary_by_mode, curves, root / "comparison.png")

    write_ablation_report(root, rows, curves, title=f"{config}: seeds {seeds}, ≤{max_steps} steps per run")
    return {
        "out": str(root),
        "runs": rows,
        "summary": summary_by_mode,
        "table": table,
        "budget": budget,
        "differences": diffs,
        "differences_by_prompt": by_prompt,
        "files": [
            str(root / n) for n in ("comparison.json", "comparison.md", "comparison.png", "report.html")
        ],
    }


def _diff_table(diffs: dict[str, dict[str, dict[str, Any]]], against: str, *, by_prompt: bool = False) -> str:
    """Each mode minus ``against`` per metric: difference [95% interval], ``*`` when beyond noise — over seeds
    (Welch), or ``by_prompt`` (the samples paired by seed and prompt, prompts resampled)."""
    if not diffs:
        return ""
    modes = list(diffs)
    metrics = _metric_order({m for per in diffs.values() for m in per})
    how = (
        "paired by seed and prompt, 95% bootstrap over prompts — the prompts' noise, not the training runs' "
        "spread, which the table above holds"
        if by_prompt
        else "95% Welch interval over seeds"
    )
    lines = [
        f"Difference from `{against}` (mode − {against}; {how}; * = the interval excludes 0, beyond noise):",
        "",
        "| metric | " + " | ".join(modes) + " |",
        "|---|" + "---|" * len(modes),
    ]
    for m in metrics:
        cells = []
        for mode in modes:
            d = diffs[mode].get(m)
            if d is None:
                cells.append("-")
            elif d["lo"] is None:
                cells.append(f"{d['diff']:+.3f}")
            else:
                cells.append(
                    f"{d['diff']:+.3f} [{d['lo']:+.3f}, {d['hi']:+.3f}]" + (" *" if d["beyond_noise"] else "")
                )
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
