"""Tables for ``rlar eval``: one checkpoint, or two side by side with deltas marked ↑/↓ (the paper's Table 2).

Rows are (task, metric); ``None`` values print as "no judge" for judge metrics and "-" otherwise. Counters
that are not quality metrics (``judge_abstained``, ``sandbox_abstained``, ``ifeval_abstained``,
``score_abstained``, ``score_errors``) are kept in the JSON only; the tools each task's ``score`` came from
follow the table, one line per task (with its error count when a tool failed).
A delta is ``new - base``; ↑ marks an increase of a higher-is-better metric, ↓ a decrease, = no change
(``avg_len`` has no better direction and gets none). Where both results hold the metric per record (the same
records: ``per_record``), the delta gets a paired bootstrap 95% interval (:func:`paired_bootstrap`: records
resampled with replacement, both checkpoints' values of a record kept together; records either abstained on are
left out and counted), shown as ``[lo, hi]`` and starred when it excludes 0: a gain or loss beyond the noise of
this many prompts.
"""

from __future__ import annotations

import random
from typing import Any

__all__ = [
    "comparison_rows",
    "markdown_table",
    "metric_rows",
    "paired_bootstrap",
    "terminal_table",
    "tool_lines",
]

BOOTSTRAP_SAMPLES = 4000

HIDDEN = {"judge_abstained", "sandbox_abstained", "ifeval_abstained", "score_abstained", "score_errors"}
NO_DIRECTION = {"avg_len"}


def _fmt(metric: str, value: float | None) -> str:
    if value is None:
        return "no judge" if metric == "judge" else "-"
    if metric in ("bleu2", "avg_len"):
        return f"{value:.2f}"
    return f"{value:.3f}"


def metric_rows(doc: dict[str, Any]) -> list[tuple[str, str, float | None]]:
    """(task, metric, value) for every shown metric of an eval result document."""
    return [
        (task, metric, value)
        for task, ms in doc["metrics"].items()
        for metric, value in ms.items()
        if metric not in HIDDEN
    ]


def paired_bootstrap(
    base: list[float], new: list[float], samples: int = BOOTSTRAP_SAMPLES, seed: int = 0
) -> tuple[float, float]:
    """The 95% percentile interval of ``mean(new) - mean(base)`` over records resampled with replacement, the
    two values of a record kept together (a paired bootstrap). Needs two or more pairs."""

    if len(base) != len(new) or len(base) < 2:
        raise ValueError(f"a paired bootstrap needs two or more pairs, got {len(base)} and {len(new)}")
    diffs = [n - b for b, n in zip(base, new, strict=True)]
    rng = random.Random(seed)
    k = len(diffs)
    means = sorted(sum(diffs[rng.randrange(k)] for _ in range(k)) / k for _ in range(samples))
    return means[int(0.025 * samples)], means[min(samples - 1, int(0.975 * samples))]


def _paired(base: dict[str, Any], new: dict[str, Any], task: str, metric: str) -> dict[str, Any]:
    """``ci`` (paired bootstrap), ``pairs`` and ``left_out`` for a metric both results hold per record."""
    b, n = (base.get("per_record") or {}).get(task) or {}, (new.get("per_record") or {}).get(task) or {}
    if metric not in b or metric not in n or b.get("ids") != n.get("ids"):
        return {}
    pairs = [(x, y) for x, y in zip(b[metric], n[metric], strict=True) if x is not None and y is not None]
    if len(pairs) < 2:
        return {"pairs": len(pairs), "left_out": len(b[metric]) - len(pairs)}
    lo, hi = paired_bootstrap([x for x, _ in pairs], [y for _, y in pairs])
    return {"ci": [lo, hi], "pairs": len(pairs), "left_out": len(b[metric]) - len(pairs)}


def comparison_rows(base: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of ``task, metric, base, new, delta, arrow`` for metrics present in both documents, with ``ci``,
    ``pairs`` and ``left_out`` where both hold the metric per record (see the module docstring)."""
    rows = []
    for task, metric, b in metric_rows(base):
        if task not in new["metrics"] or metric not in new["metrics"][task]:
            continue
        n = new["metrics"][task][metric]
        delta = None if (b is None or n is None) else n - b
        arrow = ""
        if delta is not None and metric not in NO_DIRECTION:
            arrow = "↑" if delta > 1e-12 else "↓" if delta < -1e-12 else "="
        row = {"task": task, "metric": metric, "base": b, "new": n, "delta": delta, "arrow": arrow}
        row.update(_paired(base, new, task, metric))
        rows.append(row)
    return rows


def _delta_text(row: dict[str, Any]) -> str:
    if row["delta"] is None:
        return "no judge" if row["metric"] == "judge" else "-"
    digits = 2 if row["metric"] in ("bleu2", "avg_len") else 3
    text = f"{row['delta']:+.{digits}f} {row['arrow']}".rstrip()
    if "ci" in row:
        lo, hi = row["ci"]
        star = " *" if lo > 0 or hi < 0 else ""
        text += f" [{lo:+.{digits}f}, {hi:+.{digits}f}]{star}"
    return text


def _grid(header: list[str], body: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in body]
    return "\n".join(lines)


def tool_lines(doc: dict[str, Any]) -> list[str]:
    """One line per task with a ``score``: the tools it came from (``name vN xW (origin)``), why they were
    chosen (``run-router``, ``run-learner``, ``default_tools``) and, if any, how many tool results were errors."""
    lines = []
    for task, tools in (doc.get("tools") or {}).items():
        names = (
            ", ".join(f"{t['tool']} v{t['version']} x{t['weight']:g} ({t['origin']})" for t in tools) or "-"
        )
        why = "/".join(dict.fromkeys(t["source"] for t in tools))
        errors = int((doc["metrics"].get(task) or {}).get("score_errors") or 0)
        lines.append(f"score of {task}: {names} [{why}]" + (f"; {errors} tool errors" if errors else ""))
    return lines


def terminal_table(doc: dict[str, Any], base: dict[str, Any] | None = None) -> str:
    """A plain-text table of one result, or of ``base`` vs ``doc`` with deltas; then :func:`tool_lines`."""
    if base is None:
        body = [[t, m, _fmt(m, v)] for t, m, v in metric_rows(doc)]
        head = f"{doc['suite']} on {doc['label']} (judge: {doc['judge']}, {doc['seconds']:.0f}s)"
        return "\n".join([head, _grid(["task", "metric", doc["label"]], body), *tool_lines(doc)])
    rows = comparison_rows(base, doc)
    body = [
        [r["task"], r["metric"], _fmt(r["metric"], r["base"]), _fmt(r["metric"], r["new"]), _delta_text(r)]
        for r in rows
    ]
    head = f"{doc['suite']}: {doc['label']} vs {base['label']} (judge: {doc['judge']})"
    return "\n".join(
        [head, _grid(["task", "metric", base["label"], doc["label"], "Δ"], body), *tool_lines(doc)]
    )


def markdown_table(doc: dict[str, Any], base: dict[str, Any] | None = None) -> str:
    """The same table in Markdown."""
    if base is None:
        lines = [f"| task | metric | {doc['label']} |", "|---|---|---:|"]
        lines += [f"| {t} | {m} | {_fmt(m, v)} |" for t, m, v in metric_rows(doc)]
    else:
        lines = [f"| task | metric | {base['label']} | {doc['label']} | Δ |", "|---|---|---:|---:|---:|"]
        lines += [
            f"| {r['task']} | {r['metric']} | {_fmt(r['metric'], r['base'])} | {_fmt(r['metric'], r['new'])} "
            f"| {_delta_text(r)} |"
            for r in comparison_rows(base, doc)
        ]
    note = f"\n\nSuite `{doc['suite']}`, judge: {doc['judge']}."
    if tool_lines(doc):
        note += "\n\n" + "\n".join(f"- {x}" for x in tool_lines(doc))
    return "\n".join(lines) + note + "\n"
