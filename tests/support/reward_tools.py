"""Misbehaving and slow reward tools for the reward-worker tests (importable by worker processes as
``tests.support.reward_tools:Class``), and a helper to run an actor in-process for a test."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

from actors.runtime import Actor, in_process
from bus.client import Bus
from rlar.tools.base import Outcome, RewardTool, ToolInput, ToolKind, ToolSpec

PREFIX = "tests.support.reward_tools"


class HangTool(RewardTool):
    """Hangs in a C-level sleep (cannot be cancelled, only killed) when the response says "hang"."""

    def _score_sync(self, inp: ToolInput) -> float:
        if inp.response == "hang":
            time.sleep(3600)
        return 1.0

    async def _score(self, inp: ToolInput) -> Outcome:
        return self._score_sync(inp)


class ThrowTool(RewardTool):
    """Raises when the response says "throw"."""

    async def _score(self, inp: ToolInput) -> Outcome:
        if inp.response == "throw":
            raise RuntimeError("deliberate failure in ThrowTool")
        return 0.5


class DigitsTool(RewardTool):
    """1.0 when the response's digits are the reference's digits: it drops every other character — the sign, the
    decimal point, the words around — the kind of checker that gave "The slope is –3." full marks against "3"."""

    async def _score(self, inp: ToolInput) -> Outcome:
        digits = "".join(ch for ch in str(inp.response) if ch.isdigit())
        return float(bool(digits) and digits == "".join(ch for ch in str(inp.reference) if ch.isdigit()))


class ValueTool(RewardTool):
    """Returns the float written in the response ("nan", "1e9", "0.25" ...)."""

    async def _score(self, inp: ToolInput) -> Outcome:
        return float(inp.response)


class SlowTool(RewardTool):
    """Sleeps ``params["sleep_s"]`` then scores 1.0: slow but finite."""

    async def _score(self, inp: ToolInput) -> Outcome:
        time.sleep(float(self.params.get("sleep_s", 0.2)))
        return 1.0


class GatedTool(RewardTool):
    """Scores 1.0: at once for a response listed in ``params["free"]``, any other only once the file
    ``params["gate"]`` exists (a test holds a worker mid-batch for as long as it needs, whatever the load)."""

    async def _score(self, inp: ToolInput) -> Outcome:
        gate = Path(self.params["gate"])
        while inp.response not in self.params.get("free", []) and not gate.exists():
            time.sleep(0.05)
        return 1.0


class BatchSizeTool(RewardTool):
    """A batched (reward-model-like) tool that reports the size of the batch each input was scored in."""

    batched: ClassVar[bool] = True

    async def _score_batch(self, inputs: Sequence[ToolInput]) -> list[Outcome]:
        time.sleep(float(self.params.get("sleep_s", 0.05)))
        return [self.ok(1.0, "", batch=len(inputs), pid=os.getpid()) for _ in inputs]


# User reward functions (``[[tools]] python = "tests.support.reward_tools:<fn>"``).
def plural_reward(query: str, response: str, reference: Any, metadata: dict[str, Any]) -> float:
    """Raises on plurals, as a user's function with a bug would."""
    if response.endswith("s"):
        raise ValueError("boom")
    return 1.0


def sleepy_reward(query: str, response: str, reference: Any, metadata: dict[str, Any]) -> float:
    """Sleeps 30 s (uninterruptibly, in C) on a response starting with "slow"; else scores 1.0 at once."""
    if response.startswith("slow"):
        time.sleep(30)
    return 1.0


def spec(name: str, cls: str, kind: str = "rule", **params: Any) -> ToolSpec:
    return ToolSpec(
        name=name, kind=ToolKind(kind), description=f"test tool {cls}", impl=f"{PREFIX}:{cls}", params=params
    )


@contextlib.asynccontextmanager
async def running(actor: Actor[Any], bus: Bus | None = None, timeout_s: float = 30.0) -> AsyncIterator[Any]:
    """Run ``actor`` in this event loop until the block ends (:func:`actors.runtime.in_process`); yields it."""
    async with in_process(actor, bus=bus, timeout_s=timeout_s):
        yield actor
