"""The synthesis report: what was asked for, what came out, and why the rest did not (the paper's Tables 8-10).

One row per request (``outcome_row``): the request id and task, how it ended (``category``: registered_full,
registered_partial, refused_partial, no_probes, no_draft, rejected_<check>, infrastructure), the attempts and
the reason of each rejected attempt, the coverage (clauses checked of the instruction's requirement clauses),
the independent probes the validation used, the wall time and the agent's tokens and cost.

``summarize(rows)`` gives the table: requests, valid (registered), full and partial among them, refused and
rejected by reason (per check, counting every rejected attempt as well as the final outcome), attempts (mean,
total, per valid tool), and time per request (mean, median, max). ``to_markdown`` renders it.
``read_run(run_dir)`` collects the rows the synthesizer wrote under ``<run>/synthesis/``.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["OUTCOMES_FILE", "outcome_row", "read_run", "summarize", "to_markdown"]

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
    return {
        "requests": len(rows),
        "valid": len(valid),
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
        f"| valid (registered) | {summary['valid']} (full {summary['valid_full']}, partial {summary['valid_partial']}) |",
        f"| failed, by final reason | {fail} |",
        f"| rejected attempts, by check | {rej} |",
        f"| attempts (total / mean per request / per valid tool) | {summary['attempts_total']} / "
        f"{summary['attempts_mean']} / {summary['attempts_per_valid'] if summary['attempts_per_valid'] is not None else '-'} |",
        f"| time per request, s (mean / median / max) | {summary['time_s_mean']} / {summary['time_s_median']} / "
        f"{summary['time_s_max']} |",
        f"| coverage of valid tools (mean share of clauses checked) | "
        f"{summary['coverage_mean'] if summary['coverage_mean'] is not None else '-'} |",
        f"| agent tokens / cost | {summary['tokens']} / ${summary['cost_usd']} |",
    ]
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
