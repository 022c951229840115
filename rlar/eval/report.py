"""Tables for ``rlar eval``: one checkpoint, or two side by side with deltas marked ↑/↓ (the paper's Table 2).

Rows are (task, metric); ``None`` values print as "no judge" for judge metrics and "-" otherwise. Counters
that are not quality metrics (``judge_abstained``, ``sandbox_abstained``, ``ifeval_abstained``,
``score_abstained``, ``score_errors``) are kept in the JSON only; the tools each task's ``score`` came from
follow the table, one line per task (with its error count when a tool failed).
A delta is ``new - base``; ↑ marks an increase of a higher-is-better metric, ↓ a decrease, = no change
(``avg_len`` has no better direction and gets none).
"""

from __future__ import annotations

from typing import Any

__all__ = ["comparison_rows", "markdown_table", "metric_rows", "terminal_table", "tool_lines"]

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


def comparison_rows(base: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of ``task, metric, base, new, delta, arrow`` for metrics present in both documents."""
    rows = []
    for task, metric, b in metric_rows(base):
        if task not in new["metrics"] or metric not in new["metrics"][task]:
            continue
        n = new["metrics"][task][metric]
        delta = None if (b is None or n is None) else n - b
        arrow = ""
        if delta is not None and metric not in NO_DIRECTION:
            arrow = "↑" if delta > 1e-12 else "↓" if delta < -1e-12 else "="
        rows.append({"task": task, "metric": metric, "base": b, "new": n, "delta": delta, "arrow": arrow})
    return rows


def _delta_text(row: dict[str, Any]) -> str:
    if row["delta"] is None:
        return "no judge" if row["metric"] == "judge" else "-"
    digits = 2 if row["metric"] in ("bleu2", "avg_len") else 3
    return f"{row['delta']:+.{digits}f} {row['arrow']}".rstrip()


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
