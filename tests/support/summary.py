"""A learner step record as the run summary reads it."""

from __future__ import annotations

from typing import Any


def step_record(
    step: int,
    *,
    task: str = "t",
    reward: float | None = 0.5,
    abstain: float = 0.0,
    signal: int = 1,
    trained: int = 8,
    tools: tuple[str, ...] = ("exact_match v1",),
) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "step": step,
        "version": step,
        "groups_with_signal": signal,
        "trained_rows": trained,
        "reward_mean": reward,
        f"abstain/{task}": abstain,
        "tools": {task: list(tools)},
    }
    if reward is not None:
        rec[f"reward/{task}"] = reward
    return rec
