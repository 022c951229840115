"""summary.json of a resumed run counts the routing decisions announced before the resume (an embedded
nats-server)."""

from __future__ import annotations

from pathlib import Path

from bus import subjects
from rlar.tool_summary import tasks_summary
from tests.support.summary import step_record


async def test_a_resumed_runs_summary_counts_the_routing_decisions_announced_before_it(
    tmp_path: Path,
) -> None:
    """The router of a resumed run reads its decisions back from KV and announces none: the summary's routing
    comes from the TOOLS stream (the whole run), not only from what the resuming process received."""
    from bus.client import Bus
    from bus.config import NatsConfig
    from bus.embedded import EmbeddedServer
    from bus.messages import RouteDecision, ToolKind, ToolRef
    from bus.topology import declare, ensure_topology
    from rlar.app.train import run_decisions

    ref = ToolRef(tool="capitalised", kind=ToolKind.RULE, version=1)
    with EmbeddedServer(tmp_path / "nats") as server:
        first = await Bus.connect(NatsConfig(url=server.url), name="first-process")
        await ensure_topology(first.js, declare())
        for state in ("pending", "synthesized"):
            await first.publish(
                subjects.TOOLS_DECISIONS,
                RouteDecision(
                    signature="sig-cap",
                    task="capitalize",
                    tools=[ref] if state != "pending" else [],
                    backend="offline",
                    reason=f"[{state}] best match capitalised",
                ),
            )
        await first.nc.flush()
        await first.close()
        resumed = await Bus.connect(NatsConfig(url=server.url), name="resumed-process")
        try:
            decisions = await run_decisions(resumed, seen=[])
        finally:
            await resumed.close()
    assert [d.reason.split("]")[0] for d in decisions] == ["[pending", "[synthesized"]
    routing = tasks_summary([step_record(1, task="capitalize")], decisions)["capitalize"]["routing"]
    assert routing["decisions"] == 2 and routing["states"] == {"pending": 1, "synthesized": 1}
    assert routing["last"]["tools"] == ["capitalised v1 x1"]
