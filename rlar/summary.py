"""Run-level figures of ``summary.json`` and the "no reward signal" diagnosis (the per-task part — tools, origins,
routing, abstain rates — is :mod:`rlar.tool_summary`).

- :func:`unique_steps`: a learner that resumed from an older checkpoint writes the steps after it again to
  ``metrics.jsonl``; keeping the last record of each step counts every step once (200, not 215).
- :func:`run_totals`: steps, training steps (steps not all-abstained: what ``max_steps`` counts) and the
  all-abstained rounds, updates (steps that trained on at least one sample), steps whose groups carried
  signal, the first/last mean reward per task in every routing mode (``window`` = 10 steps, or half the task's
  steps when it has fewer than 20) and overall, and the largest staleness seen.
- :func:`no_signal_cause`: why a stretch of steps had no group with reward signal, per task, from the learner's
  ``reward/<task>``, ``abstain/<task>`` and ``tools`` metrics.
- :func:`reward_health` / :func:`reward_warnings` (read with :func:`read_reward_health`): per tool version the
  reward workers' counts from the registry's stats — calls, ok, abstain, error, timeouts, the most frequent
  errors, the last throughput warning — and the ``warnings`` they make: ``plural_reward raised ValueError in
  15% of calls: boom (at my_rewards.py:7 in plural_reward)``, ``plural_reward failed in 100% of calls:
  my_rewards:plural_reward returned 39 scores for 40 completions``, a tool's throughput warning as the reward
  worker wrote it, and ``… timed out in N% of calls (K in a row at most)``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from rlar.registry import ToolRegistry

__all__ = [
    "first_last",
    "no_signal_cause",
    "read_reward_health",
    "reward_health",
    "reward_warnings",
    "run_totals",
    "unique_steps",
]


def unique_steps(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One record per learner step (the last one written for it), in step order."""
    by_step: dict[int, dict[str, Any]] = {}
    for r in records:
        if "step" in r:
            by_step[int(r["step"])] = dict(r)
    return [by_step[s] for s in sorted(by_step)]


def first_last(values: Sequence[float], n: int = 10) -> dict[str, float] | None:
    """Mean of the first and last ``window`` values (``window = min(n, len // 2)``); None below 2 values."""
    window = min(n, len(values) // 2)
    if window < 1:
        return None
    first, last = sum(values[:window]) / window, sum(values[-window:]) / window
    return {
        "first": round(first, 4),
        "last": round(last, 4),
        "delta": round(last - first, 4),
        "steps": len(values),
        "window": window,
    }


def run_totals(steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The run-level part of ``summary.json`` from :func:`unique_steps` records (see the module docstring)."""
    tasks = sorted({k.split("/", 1)[1] for r in steps for k in r if k.startswith("reward/")})
    rewards: dict[str, Any] = {}
    for key, name in [*((f"reward/{t}", t) for t in tasks), ("reward_mean", "all")]:
        row = first_last([float(r[key]) for r in steps if r.get(key) is not None])
        if row:
            rewards[name] = row
    return {
        "steps": len(steps),
        "training_steps": sum(1 for r in steps if not r.get("all_abstained")),
        "abstained_rounds": sum(1 for r in steps if r.get("all_abstained")),
        "updates": sum(1 for r in steps if r.get("trained_rows", 0) > 0),
        "steps_with_signal": sum(1 for r in steps if r.get("groups_with_signal")),
        "reward_first10_last10": rewards,
        "max_staleness_seen": max((r.get("staleness_max", 0) for r in steps), default=0),
    }


def no_signal_cause(recent: Sequence[Mapping[str, Any]]) -> str:
    """The likely reason why ``recent`` learner steps had no group with reward signal, per task and its tools:
    every sample abstained (the tool cannot judge them, or failed), every reward 0 (the tool never accepts the
    policy's answers: wrong reference field, wrong tool, or a task the policy cannot do yet), every reward 1
    (the tool accepts anything, or the task is too easy), or equal rewards within each group."""
    tasks = sorted({k.split("/", 1)[1] for r in recent for k in r if k.startswith(("reward/", "abstain/"))})
    clauses = []
    for task in tasks:
        tools = sorted({t for r in recent for t in (r.get("tools") or {}).get(task, [])}) or ["its tools"]
        abstain = [float(r[f"abstain/{task}"]) for r in recent if r.get(f"abstain/{task}") is not None]
        reward = [float(r[f"reward/{task}"]) for r in recent if r.get(f"reward/{task}") is not None]
        if abstain and min(abstain) >= 1.0:
            why = (
                "every sample abstained or failed — the tool cannot judge them (no reference? no endpoint?); "
                "see `rlar tools list` and `rlar tail 'rlar.rewards.>'`"
            )
        elif reward and max(reward) == 0.0:
            why = (
                "every reward was 0 — the tool never accepts the answers: check the reference field, that the "
                "tool fits the task (docs/reference/tools.md), or whether the task is too hard yet"
            )
        elif reward and min(reward) == 1.0:
            why = "every reward was 1 — the tool accepts anything, or the task is too easy"
        else:
            why = (
                "rewards vary but never within a group — the group's samples may be identical (temperature?)"
            )
        clauses.append(f"task {task} ({', '.join(tools)}): {why}")
    return "; ".join(clauses) or "no rewards arrived for these steps"


# -- reward tools' errors and throughput --------------------------------------------------------------------------
_RAISED = re.compile(r"raised ([\w.]+)(?:: (.*?))?(?: \((at [^()]*)\))?$")
TIMEOUT_WARN_SHARE = 0.1  # a tool timing out on this share of its calls is a warning even without a streak


def reward_health(
    stats: Mapping[tuple[str, int], Mapping[str, Any]], specs: Mapping[tuple[str, int], Any] | None = None
) -> list[dict[str, Any]]:
    """One row per tool version that scored anything (``stats``: the registry's ``derived_stats`` by (name,
    version)): counts, rates, mean latency, the five most frequent errors and the last throughput warning."""
    rows = []
    for (name, version), st in sorted(stats.items()):
        calls = int(st.get("calls", 0))
        if not calls:
            continue
        spec = (specs or {}).get((name, version))
        errors = sorted((st.get("error_reasons") or {}).items(), key=lambda kv: (-kv[1], kv[0]))[:5]
        rows.append(
            {
                "tool": name,
                "version": version,
                "origin": str((spec.provenance or {}).get("origin", "")) if spec is not None else "",
                "function": str((spec.params or {}).get("function", "")) if spec is not None else "",
                "calls": calls,
                "ok": int(st.get("ok", 0)),
                "abstain": int(st.get("abstain", 0)),
                "error": int(st.get("error", 0)),
                "error_rate": round(int(st.get("error", 0)) / calls, 4),
                "timeouts": int(st.get("timeouts", 0)),
                "timeout_streak": int(st.get("timeout_streak", 0)),
                "mean_latency_s": round(float(st.get("latency_sum_s", 0.0)) / calls, 6),
                "errors": [
                    {"reason": r, "count": int(n), "share": round(int(n) / calls, 4)} for r, n in errors
                ],
                "last_warning": str(st.get("last_warning") or ""),
            }
        )
    return rows


def _share(n: int, calls: int) -> str:
    share = n / calls if calls else 0.0
    return "<1%" if 0 < share < 0.01 else f"{share:.0%}"


def reward_warnings(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The end-of-run warnings of :func:`reward_health` rows (see the module docstring), most frequent error
    first per tool; a tool with several versions is named with its version."""
    names = [r["tool"] for r in rows]
    out = []
    for r in rows:
        tool = r["tool"] if names.count(r["tool"]) == 1 else f"{r['tool']} v{r['version']}"
        errors = list(r.get("errors") or [])
        if errors:
            top = errors[0]
            more = int(r["error"]) - int(top["count"])
            tail = f" (and {more} other errors)" if more > 0 else ""
            m = _RAISED.match(str(top["reason"]))
            if m:
                what, message, where = m.group(1), m.group(2) or "", m.group(3)
                out.append(
                    f"{tool} raised {what} in {_share(int(top['count']), int(r['calls']))} of calls"
                    + (f": {message}" if message else "")
                    + (f" ({where})" if where else "")
                    + tail
                )
            else:
                out.append(
                    f"{tool} failed in {_share(int(top['count']), int(r['calls']))} of calls: "
                    f"{top['reason']}{tail}"
                )
        if r["calls"] and r.get("timeouts", 0) / r["calls"] >= TIMEOUT_WARN_SHARE:
            streak = int(r.get("timeout_streak", 0))
            out.append(
                f"{tool} timed out in {_share(int(r['timeouts']), int(r['calls']))} of calls"
                + (f" ({streak} in a row at most)" if streak > 1 else "")
            )
        if r.get("last_warning"):
            out.append(str(r["last_warning"]))
    return out


async def read_reward_health(bus: Any, specs: Mapping[tuple[str, int], Any]) -> list[dict[str, Any]]:
    """:func:`reward_health` of every tool version in ``specs`` from the registry on ``bus`` (empty when the
    registry cannot be read: the summary is written without it)."""

    try:
        reg = ToolRegistry(bus, announce=False)
        stats = {key: await reg.stats(*key) for key in specs}
    except Exception as exc:
        logging.getLogger(__name__).warning("summary: could not read the tools' stats: %s", exc)
        return []
    return reward_health(stats, specs)
