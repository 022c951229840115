"""Run-level figures of ``summary.json`` and the "no reward signal" diagnosis (the per-task part — tools, origins,
routing, abstain rates — is :mod:`rlar.tool_summary`).

- :func:`unique_steps`: a learner that resumed from an older checkpoint writes the steps after it again to
  ``metrics.jsonl``; keeping the last record of each step counts every step once (200, not 215).
- :func:`run_totals`: steps, updates (steps that trained on at least one sample), steps whose groups carried
  signal, the first/last mean reward per task in every routing mode (``window`` = 10 steps, or half the task's
  steps when it has fewer than 20) and overall, and the largest staleness seen.
- :func:`no_signal_cause`: why a stretch of steps had no group with reward signal, per task, from the learner's
  ``reward/<task>``, ``abstain/<task>`` and ``tools`` metrics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["first_last", "no_signal_cause", "run_totals", "unique_steps"]


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
    return {"first": round(first, 4), "last": round(last, 4), "delta": round(last - first, 4),
            "steps": len(values), "window": window}  # fmt: skip


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
            why = ("every sample abstained or failed — the tool cannot judge them (no reference? no endpoint?); "
                   "see `rlar tools list` and `rlar tail 'rlar.rewards.>'`")  # fmt: skip
        elif reward and max(reward) == 0.0:
            why = ("every reward was 0 — the tool never accepts the answers: check the reference field, that the "
                   "tool fits the task (docs/reference/tools.md), or whether the task is too hard yet")  # fmt: skip
        elif reward and min(reward) == 1.0:
            why = "every reward was 1 — the tool accepts anything, or the task is too easy"
        else:
            why = (
                "rewards vary but never within a group — the group's samples may be identical (temperature?)"
            )
        clauses.append(f"task {task} ({', '.join(tools)}): {why}")
    return "; ".join(clauses) or "no rewards arrived for these steps"
