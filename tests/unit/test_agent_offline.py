"""The offline backend: a dispatcher to each forced tool's own offline handler, with honest provenance."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rlar.agent.base import AgentRequest, AgentTool, Embed, OfflineAgentConfig, OfflineRefusal
from rlar.agent.offline import OfflineAgent
from rlar.synthesis.compose import SynthesisTask
from rlar.synthesis.drafting import parse_draft, synthesis_request

BULLETS = "Answer must contain exactly three bullet points, each under ten words."
SCHEMA = {"type": "object", "properties": {}}


def ask(tool: AgentTool, context: dict[str, Any] | None = None) -> AgentRequest:
    return AgentRequest(
        system="s",
        messages=[{"role": "user", "content": "hi"}],
        tools=[tool],
        tool_choice=tool.name,
        context=context or {},
    )


async def test_only_tools_with_an_offline_handler_are_answered_and_refusals_are_errors() -> None:
    seen: list[Mapping[str, Any]] = []

    def echo(context: Mapping[str, Any], embed: Embed) -> dict[str, Any]:
        seen.append(context)
        if context.get("refuse"):
            raise OfflineRefusal("nothing to build from")
        return {"echo": context["x"]}

    agent = OfflineAgent(OfflineAgentConfig(), embedder=lambda texts: [[1.0] for _ in texts])  # type: ignore[arg-type]
    plain = await agent.ask(ask(AgentTool("write_poem", "Write a poem", SCHEMA)))
    assert plain.status == "unsupported" and not plain.tool_calls and "write_poem" in plain.reason
    ok = await agent.ask(ask(AgentTool("echo", "Echo", SCHEMA, offline=echo), {"x": 3}))
    assert ok.ok and ok.call("echo") is not None and ok.call("echo").input == {"echo": 3}  # type: ignore[union-attr]
    refused = await agent.ask(ask(AgentTool("echo", "Echo", SCHEMA, offline=echo), {"refuse": True}))
    assert refused.status == "error" and refused.reason == "nothing to build from" and len(seen) == 2
    m = agent.metrics()
    assert m["status_unsupported"] == 1 and m["status_ok"] == 1 and m["status_error"] == 1
    assert m["input_tokens"] == 0 and ok.model == "offline:all-MiniLM-L6-v2+rules"


async def test_synthesis_is_answered_by_its_own_handler() -> None:
    agent = OfflineAgent(OfflineAgentConfig(), embedder=lambda texts: [[1.0] for _ in texts])  # type: ignore[arg-type]
    reply = await agent.ask(synthesis_request(SynthesisTask(description=BULLETS, examples=[{"query": "x"}])))
    draft, why, _ = parse_draft(reply)
    assert draft is not None and not why and "no language model wrote this code" in draft.code
