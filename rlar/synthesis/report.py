"""The synthesis report: what was asked for, what came out, and why the rest did not (the paper's Tables 8-10).

One row per request (``outcome_row``): the request id and task, how it ended (``category``: registered_full,
registered_partial, refused_partial, refused_unvouched, no_probes, no_draft, rejected_<check>,
infrastructure), ``unread`` (the clauses no verifier checks, or the constraints no independent route vouched
for), the attempts and
the reason of each rejected attempt, the coverage (clauses checked of the instruction's requirement clauses),
the independent probes the validation used, the wall time and the agent's tokens and cost.

``summarize(rows)`` gives the table: requests, valid (registered), full and partial among them, refused and
rejected by reason (per check, counting every rejected attempt as well as the final outcome), attempts (mean,
total, per valid tool), and time per request (mean, median, max). ``to_markdown`` renders it.
``read_run(run_dir)`` collects the rows the synthesizer wrote under ``<run>/synthesis/``. ``unvouched(rows,
decisions)`` says, per task no registered verifier fully checks, where its samples went (``judge``: the
router's declared fallback, named; ``abstain``: masked) and which clauses nobody read — the lines ``rlar
train`` prints as warnings; ``where_to(...)`` is that destination for one request.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["OUTCOMES_FILE", "outcome_row", "read_run", "summarize", "to_markdown", "unvouched", "where_to"]

OUTCOMES_FILE = "outcomes.jsonl"


def outcome_row(outcome: Any, *, request_id: str = "", task: str = "") -> dict[str, Any]:
    """A report row from a :class:`rlar.synthesis.loop.SynthesisOutcome`."""
    spec = outcome.spec
    validation = dict(spec.validation) if spec is not None else {}
    return {
        "request_id": request_id,
        "task": task,
        "category": outcome.category,
        "registered": spec is not None,
        "tool": f"{spec.name} v{spec.version}" if spec is not None else "",
        "attempts": len(outcome.attempts),
        "rejections": [r.reason.split(":")[0] for r in outcome.attempts if not r.passed],
        "reasons": [r.reason[:300] for r in outcome.attempts if not r.passed],
        "reason": outcome.reason[:500],
        "coverage": dict(outcome.coverage),
        "unread": [u["clause"] for u in outcome.coverage.get("unchecked", [])]
        + list(outcome.coverage.get("unvouched", [])),
        "independent": dict(validation.get("independent", {})),
        "wall_s": round(float(outcome.wall_s), 3),
        "tokens": outcome.usage.input_tokens + outcome.usage.output_tokens,
        "cost_usd": round(float(outcome.cost_usd), 6),
    }


def summarize(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    rows = list(rows)
    valid = [r for r in rows if r.get("registered")]
    final = Counter(str(r.get("category", "")) for r in rows if not r.get("registered"))
    per_attempt = Counter(reason for r in rows for reason in r.get("rejections", []))
    times = [float(r.get("wall_s", 0.0)) for r in rows]
    attempts = [int(r.get("attempts", 0)) for r in rows]
    refused = [r for r in rows if str(r.get("category", "")).startswith("refused")]
    return {
        "requests": len(rows),
        "valid": len(valid),
        "refused": len(refused),
        "refused_then": dict(sorted(Counter(str(r.get("then") or "fallback") for r in refused).items())),
        "refused_detail": [
            {
                "task": r.get("task"),
                "category": r.get("category"),
                "then": r.get("then") or "fallback",
                "unread": list(r.get("unread") or [])[:5],
            }
            for r in refused
        ],
        "valid_full": sum(1 for r in valid if r.get("category") == "registered_full"),
        "valid_partial": sum(1 for r in valid if r.get("category") == "registered_partial"),
        "failed_by_reason": dict(sorted(final.items())),
        "rejected_attempts_by_check": dict(sorted(per_attempt.items())),
        "attempts_total": sum(attempts),
        "attempts_mean": round(sum(attempts) / len(rows), 3) if rows else 0.0,
        "attempts_per_valid": round(sum(attempts) / len(valid), 3) if valid else None,
        "time_s_mean": round(statistics.fmean(times), 3) if times else 0.0,
        "time_s_median": round(statistics.median(times), 3) if times else 0.0,
        "time_s_max": round(max(times), 3) if times else 0.0,
        "coverage_mean": round(
            statistics.fmean(float(r.get("coverage", {}).get("coverage", 0.0)) for r in valid), 4
        )
        if valid
        else None,
        "tokens": sum(int(r.get("tokens", 0)) for r in rows),
        "cost_usd": round(sum(float(r.get("cost_usd", 0.0)) for r in rows), 6),
    }


def to_markdown(summary: Mapping[str, Any], title: str = "Synthesis") -> str:
    fail = ", ".join(f"{k} {v}" for k, v in summary["failed_by_reason"].items()) or "-"
    rej = ", ".join(f"{k} {v}" for k, v in summary["rejected_attempts_by_check"].items()) or "-"
    lines = [
        f"| {title} | value |",
        "|---|---|",
        f"| requests | {summary['requests']} |",
        f"| valid (registered) | {summary['valid']} (full {summary['valid_full']}, "
        f"partial {summary['valid_partial']}) |",
        f"| refused (no verifier checks every clause, or none vouched for), then | {summary.get('refused', 0)}"
        f" ({', '.join(f'{k} {v}' for k, v in summary.get('refused_then', {}).items()) or '-'}) |",
        f"| failed, by final reason | {fail} |",
        f"| rejected attempts, by check | {rej} |",
        f"| attempts (total / mean per request / per valid tool) | {summary['attempts_total']} / "
        f"{summary['attempts_mean']} / "
        f"{summary['attempts_per_valid'] if summary['attempts_per_valid'] is not None else '-'} |",
        f"| time per request, s (mean / median / max) | {summary['time_s_mean']} / {summary['time_s_median']} / "
        f"{summary['time_s_max']} |",
        f"| coverage of valid tools (mean share of clauses checked) | "
        f"{summary['coverage_mean'] if summary['coverage_mean'] is not None else '-'} |",
        f"| agent tokens / cost | {summary['tokens']} / ${summary['cost_usd']} |",
    ]
    for r in summary.get("refused_detail", []):
        unread = "; ".join(repr(u) for u in r["unread"]) or "-"
        lines.append(f"| refused: {r['task']} ({r['category']}) → {r['then']} | not read: {unread} |")
    return "\n".join(lines)


def read_run(run_dir: str | Path) -> list[dict[str, Any]]:
    """The outcome rows the synthesizer wrote to ``<run_dir>/synthesis/outcomes.jsonl`` (none: empty)."""
    path = Path(run_dir) / "synthesis" / OUTCOMES_FILE
    if not path.exists():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue
    return rows


def where_to(row: Mapping[str, Any], decisions: Iterable[Any] = ()) -> str:
    """Where a request's samples went: ``registered`` (a verifier), ``judge: <tools>`` / ``fallback: <tools>``
    (refused or failed; the router's declared fallback, named), ``abstain`` (refused, no fallback: masked),
    ``dead-lettered``, or ``fallback`` when no decision says. ``decisions``: ``RouteDecision`` messages (the
    request id is ``<signature>.<time>``; the state is the ``[state]`` prefix of ``reason``) or dicts with
    ``request_id``/``signature``, ``state`` or ``reason``, and ``tools``; the last one that matches counts."""
    if row.get("registered"):
        return "registered"
    rid = str(row.get("request_id") or "")
    state, tools = "", []
    for d in decisions:
        get = d.get if isinstance(d, Mapping) else (lambda k, _d=d: getattr(_d, k, None))
        sig = str(get("signature") or "")
        if not (get("request_id") == rid or (sig and rid.startswith(sig + "."))):
            continue
        found = get("state")
        if not found:
            m = re.match(r"\[(\w+)\]", str(get("reason") or ""))
            found = m.group(1) if m else ""
        if found in ("pending", "canary", "synthesized"):
            continue
        state = str(found)
        tools = [
            str(t.get("tool") if isinstance(t, Mapping) else getattr(t, "tool", t))
            for t in get("tools") or []
        ]
    if state == "fallback" and tools:
        return ("judge: " if any("judge" in t for t in tools) else "fallback: ") + ", ".join(tools)
    if state == "abstain":
        return "abstain"
    if state == "unroutable":
        return "dead-lettered"
    return str(row.get("then") or "fallback")


def unvouched(rows: Iterable[Mapping[str, Any]], decisions: Iterable[Any] = ()) -> list[str]:
    """One warning per task with requests (kinds of its queries) that no registered verifier serves: how many,
    where their samples went and the clauses nobody read (each once)."""
    decisions = list(decisions)
    by_task: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        if not r.get("registered"):
            by_task.setdefault(str(r.get("task") or r.get("request_id")), []).append(r)
    out = []
    for task, refused in by_task.items():
        thens = list(dict.fromkeys(where_to(r, decisions) for r in refused))
        unread = list(dict.fromkeys(u for r in refused for u in r.get("unread") or []))
        cats = ", ".join(sorted({str(r.get("category")) for r in refused}))
        dest = "; ".join(
            "its samples ABSTAIN (masked, no reward)" if t == "abstain" else f"its samples go to {t}"
            for t in thens
        )
        shown = "; ".join(repr(u) for u in unread[:8]) + (
            f" (+{len(unread) - 8} more)" if len(unread) > 8 else ""
        )
        out.append(
            f"task {task!r}: no synthesised verifier checks every clause for {len(refused)} kind(s) of its queries"
            f" ({cats}); {dest}; clauses nobody read: {shown or '-'}"
        )
    return out
