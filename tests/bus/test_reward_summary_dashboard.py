"""The dashboard's tools panel names a reward function's most frequent error and its last warning (a real bus)."""

from __future__ import annotations

import uuid

from bus.client import Bus
from rlar.observe.state import LiveState
from rlar.registry import ToolRegistry
from rlar.tools.base import ToolKind, ToolSpec
from rlar.tools.stats import StatsDelta

RAISED = "raised ValueError: boom (at plural_rewards.py:7 in plural_reward)"


async def test_the_dashboard_tools_panel_shows_the_most_frequent_error_and_the_last_warning(bus: Bus) -> None:
    reg = ToolRegistry(bus)
    name = f"plural_{uuid.uuid4().hex[:8]}"
    tool = await reg.register(
        ToolSpec(name=name, kind=ToolKind.RULE, description="d", impl="exact_match"), by="t"
    )
    delta = StatsDelta()
    for status, reason in [("error", RAISED), ("error", RAISED), ("ok", ""), ("abstain", "timeout after 2s")]:
        delta.add(status, 1.0 if status == "ok" else None, 0.1, reason=reason)
    delta.warn(f"{name} v1: 3 timeouts in a row at its 2s deadline", streak=3)
    await reg.record_stats(name, tool.version, delta)
    rows = [r for r in await LiveState(bus=bus).read_registry() if r["name"] == name]
    (stats,) = [r["stats"] for r in rows]
    assert stats["top_error"] == {"reason": RAISED, "count": 2} and stats["timeouts"] == 1
    assert stats["error_rate"] == 0.5 and stats["last_warning"].startswith(f"{name} v1: 3 timeouts in a row")
