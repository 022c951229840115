"""The reward_model tool on the tiny reward model: its spec, inputs and score reader."""

from __future__ import annotations

from pathlib import Path

from rlar.tools import ToolInput, ToolResult, builtin_specs
from rlar.tools.base import ToolSpec


def ok_score(res: ToolResult) -> float:
    """The score of an ok result (fails the test otherwise)."""
    assert res.status == "ok" and res.score is not None, res
    return res.score


INPUTS = [
    ToolInput("What is 2+2?", "4"),
    ToolInput("What is 2+2?", "I think the answer is five, but I am not sure at all."),
    ToolInput("Name a colour.", "Blue."),
    ToolInput(
        "Summarise the plot of Hamlet in one line.", "A prince avenges his father and everyone dies." * 3
    ),
    ToolInput("Hi", ""),
]


def rm_spec(path: Path, **params) -> ToolSpec:
    base = next(s for s in builtin_specs() if s.name == "reward_model")
    return base.replace(params={**base.params, "path": str(path), **params}).sealed()
