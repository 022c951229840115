"""The model backend of the agent client through the real anthropic SDK, against a local Messages API server.

The server (``rlar.standins.anthropic_server``) stands in for the paid remote API only: the SDK, HTTP, tool-use
blocks, error statuses, retry-after headers and timeouts are all real; what answers is a script.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from bus.messages import ToolKind, ToolRef
from rlar.agent import AnthropicAgentConfig, OfflineAgentConfig, default_agent_config, make_agent
from rlar.agent.anthropic_agent import AnthropicAgent
from rlar.routing import CHOOSE_TOOL, RoutingQuery, parse_route, routing_request
from rlar.sandbox_client import local_runner
from rlar.standins.anthropic_server import MessagesServer
from rlar.synthesis.compose import SynthesisTask
from rlar.synthesis.loop import synthesize
from rlar.tools import builtin_specs

QUERY = RoutingQuery(
    task="arith",
    query="12+7=",
    reference="19",
    domain="math",
    task_type="arithmetic",
    answer_format="number",
    description="Evaluate the integer addition.",
)


@pytest.fixture(autouse=True)
def rlar_test_key(no_ambient_anthropic: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RLAR_TEST_KEY", "sk-test-agent")


def agent_for(server: MessagesServer, **overrides: object) -> AnthropicAgent:
    cfg = AnthropicAgentConfig(
        model="router-test",
        base_url=server.url,
        api_key_env="RLAR_TEST_KEY",
        timeout_s=5.0,
        backoff_base_s=0.05,
        backoff_max_s=0.2,
        input_usd_per_mtok=3.0,
        output_usd_per_mtok=15.0,
    ).model_copy(update=overrides)
    return AnthropicAgent(cfg)


def tool_use(name: str, data: dict[str, object], usage: dict[str, int] | None = None) -> dict[str, object]:
    return {
        "content": [
            {"type": "text", "text": "Looking at the candidates."},
            {"type": "tool_use", "id": "toolu_01", "name": name, "input": data},
        ],
        "usage": usage or {"input_tokens": 321, "output_tokens": 45},
    }


async def test_a_tool_use_reply_becomes_a_route_with_token_accounting(
    messages_server: MessagesServer,
) -> None:
    messages_server.script.append(
        tool_use(
            CHOOSE_TOOL.name,
            {
                "tools": [{"name": "math_verify", "weight": 3}, {"name": "no_such_tool", "weight": 1}],
                "none_fit": False,
                "confidence": 0.9,
                "reason": "numeric answer",
            },
        )
    )
    agent = agent_for(messages_server)
    specs = builtin_specs()
    try:
        reply = await agent.ask(routing_request(QUERY, specs))
    finally:
        await agent.aclose()
    assert reply.ok and reply.stop_reason == "tool_use" and reply.text == "Looking at the candidates."
    assert reply.usage.input_tokens == 321 and reply.usage.output_tokens == 45
    assert reply.cost_usd == pytest.approx((321 * 3.0 + 45 * 15.0) / 1e6)
    route = parse_route(reply, specs)
    assert route.ok and not route.none_fit
    assert route.tools == [
        ToolRef(tool="math_verify", version=1, kind=ToolKind.RULE, weight=1.0, needs_reference=True)
    ]
    assert "no_such_tool" in route.reason
    assert route.provenance["backend"] == "anthropic" and route.provenance["model"] == "router-test"
    assert route.provenance["cost"]["input_tokens"] == 321 and len(route.provenance["prompt_hash"]) == 16
    body = messages_server.requests[0]
    assert body["model"] == "router-test" and body["tool_choice"] == {
        "type": "tool",
        "name": CHOOSE_TOOL.name,
    }
    assert [t["name"] for t in body["tools"]] == [CHOOSE_TOOL.name] and "input_schema" in body["tools"][0]
    assert "math_verify" in body["messages"][0]["content"] and body["system"]
    sent = messages_server.headers_seen[0]
    assert "sk-test-agent" in (sent.get("x-api-key", "") + sent.get("authorization", ""))
    m = agent.metrics()
    assert m["calls"] == 1 and m["input_tokens"] == 321 and m["output_tokens"] == 45 and m["status_ok"] == 1


async def test_429_is_retried_after_the_servers_retry_after(messages_server: MessagesServer) -> None:
    messages_server.script.append(
        {"status": 429, "etype": "rate_limit_error", "headers": {"retry-after": "0.4"}}
    )
    messages_server.script.append(
        tool_use(CHOOSE_TOOL.name, {"tools": [], "none_fit": True, "confidence": 0.7, "reason": "x"})
    )
    agent = agent_for(messages_server)
    t0 = time.monotonic()
    reply = await agent.ask(routing_request(QUERY, builtin_specs()))
    elapsed = time.monotonic() - t0
    await agent.aclose()
    assert reply.ok and reply.attempts == ["HTTP 429", "ok"]
    assert elapsed >= 0.4, "the retry must wait at least the server's retry-after"
    assert messages_server.count == 2


async def test_5xx_is_retried_with_backoff_then_given_up(messages_server: MessagesServer) -> None:
    for _ in range(3):
        messages_server.script.append({"status": 529, "etype": "overloaded_error"})
    agent = agent_for(messages_server, max_retries=2)
    reply = await agent.ask(routing_request(QUERY, builtin_specs()))
    await agent.aclose()
    assert reply.status == "error" and reply.attempts == ["HTTP 529"] * 3
    assert "gave up after 3 attempts" in reply.reason and messages_server.count == 3
    assert reply.usage.input_tokens == 0


async def test_a_client_error_is_not_retried(messages_server: MessagesServer) -> None:
    messages_server.script.append({"status": 400, "etype": "invalid_request_error"})
    agent = agent_for(messages_server)
    reply = await agent.ask(routing_request(QUERY, builtin_specs()))
    await agent.aclose()
    assert reply.status == "error" and "HTTP 400" in reply.reason and messages_server.count == 1


async def test_a_slow_server_times_out_without_retrying(messages_server: MessagesServer) -> None:
    messages_server.script.append({"text": "late", "delay": 3.0})
    agent = agent_for(messages_server, timeout_s=0.4)
    reply = await agent.ask(routing_request(QUERY, builtin_specs()))
    await agent.aclose()
    # Had the client waited for the late answer, it would have it (status ok): no wall-clock bound needed.
    assert reply.status == "timeout" and reply.attempts == ["timeout"]


async def test_a_reply_without_the_required_tool_call_is_an_error(messages_server: MessagesServer) -> None:
    messages_server.script.append({"text": "I think math_verify."})
    agent = agent_for(messages_server)
    reply = await agent.ask(routing_request(QUERY, builtin_specs()))
    await agent.aclose()
    assert reply.status == "error" and "did not call" in reply.reason
    assert not parse_route(reply, builtin_specs()).ok


async def test_concurrency_is_capped(messages_server: MessagesServer) -> None:
    messages_server.default = tool_use(
        CHOOSE_TOOL.name, {"tools": [], "none_fit": True, "confidence": 0.5, "reason": "x"}
    )
    messages_server.delay_s = 0.15
    agent = agent_for(messages_server, max_concurrency=2)
    replies = await asyncio.gather(*(agent.ask(routing_request(QUERY, builtin_specs())) for _ in range(6)))
    await agent.aclose()
    assert all(r.ok for r in replies) and messages_server.max_in_flight == 2
    assert agent.metrics()["input_tokens"] == 6 * 321


async def test_without_key_or_base_url_nothing_is_sent(messages_server: MessagesServer) -> None:
    agent = AnthropicAgent(AnthropicAgentConfig(api_key_env="RLAR_NO_SUCH_KEY"))
    reply = await agent.ask(routing_request(QUERY, builtin_specs()))
    assert reply.status == "error" and "no API key" in reply.reason and messages_server.count == 0


def test_the_default_backend_is_offline_without_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(default_agent_config(), OfflineAgentConfig)
    assert make_agent().backend == "offline"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-x")
    assert isinstance(default_agent_config(), AnthropicAgentConfig)


async def test_the_code_agent_gets_its_rejection_back_as_a_tool_result_and_fixes_it(
    messages_server: MessagesServer,
) -> None:
    broken = "def reward(query, response, reference, metadata):\n    raise ValueError('not yet')\n"
    fixed = (
        "SCORE_RANGE = (0.0, 1.0)\n\n"
        "def reward(query, response, reference, metadata):\n"
        "    return 1.0 if response.strip() == str(reference).strip() else 0.0\n"
    )
    for code in (broken, fixed):
        messages_server.script.append(
            tool_use(
                "submit_reward_function",
                {"code": code, "score_range": [0, 1], "needs_reference": True, "rationale": "exact match"},
                {"input_tokens": 500, "output_tokens": 80},
            )
        )
    task = SynthesisTask(
        description="Repeat the letters exactly.",
        task="copy",
        task_type="copy",
        answer_format="text",
        examples=[{"query": "copy:abcd=", "reference": "abcd"}, {"query": "copy:xyz=", "reference": "xyz"}],
        signature="sig-copy",
        request_id="req-1",
    )
    agent = agent_for(messages_server)
    # The agent protocol under test, not the gate: this description is not one the instruction reader reads
    # (the default, partial = "refuse", would end here before any attempt; tests/test_synthesis_gate.py has that).
    out = await synthesize(task, agent, local_runner(), max_attempts=3, partial="register")
    await agent.aclose()
    assert out.ok and out.spec is not None and len(out.attempts) == 2
    assert out.attempts[0].reason.startswith("executes:") and "ValueError: not yet" in out.attempts[0].reason
    retry = messages_server.requests[1]["messages"]
    assert [m["role"] for m in retry] == ["user", "assistant", "user"]
    assert retry[1]["content"][0]["type"] == "tool_use" and retry[1]["content"][0]["input"]["code"] == broken
    result = retry[2]["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] is True and "not yet" in result["content"]
    assert out.spec.code == fixed and out.spec.provenance["author"] == "anthropic"
    assert out.spec.provenance["usage"] == {"input_tokens": 1000, "output_tokens": 160}
    assert out.spec.validation["passed"] and out.spec.provenance["rejected"][0]["reason"].startswith(
        "executes:"
    )
