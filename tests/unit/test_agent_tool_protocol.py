"""The tool protocol (rlar.agent.json_tools): a forced tool's input is parsed, validated, repaired once, or
refused with the reason — here over the Messages-API stand-in (the paid API's shape; the real local model is
tests/test_local_model.py)."""

from __future__ import annotations

from typing import Any

import pytest

from rlar.agent import AnthropicAgentConfig, OpenAIAgentConfig, make_agent
from rlar.agent.json_tools import ToolProtocolAgent, json_request, read_tool_input, validate_input
from rlar.agent.openai_agent import chat_completions_url, to_chat_messages
from rlar.routing import CHOOSE_TOOL, RoutingQuery, parse_route, routing_request
from rlar.standins.anthropic_server import MessagesServer
from rlar.tools import builtin_specs

QUERY = RoutingQuery(task="arith", query="12+7=", reference="19", answer_format="number")
VALID = {
    "tools": [{"name": "math_verify", "weight": 1}],
    "none_fit": False,
    "confidence": 0.8,
    "reason": "a number",
}


@pytest.fixture(autouse=True)
def _no_env(no_ambient_anthropic: None) -> None:
    return None


def agent_for(server: MessagesServer, mode: str, **kw: Any) -> Any:
    cfg = AnthropicAgentConfig(
        model="m", base_url=server.url, timeout_s=5.0, max_retries=0, tool_calling=mode, **kw
    )  # type: ignore[arg-type]
    return make_agent(cfg)


def test_the_first_valid_object_is_read_through_fences_prose_and_call_wrappers() -> None:
    text = 'Sure!\n```json\n{"name": "choose_reward_tools", "arguments": ' + _json(VALID) + "}\n```\nDone."
    data, why = read_tool_input(text, CHOOSE_TOOL)
    assert data == VALID and why == ""
    data, why = read_tool_input('{"tools": [], "none_fit": "yes"}', CHOOSE_TOOL)
    assert data is None and "none_fit" in why and "boolean" in why
    assert read_tool_input("I think math_verify.", CHOOSE_TOOL)[1].startswith("no JSON object")
    assert "weight" in validate_input({**VALID, "tools": [{"name": "x", "weight": -1}]}, CHOOSE_TOOL)


def test_json_protocol_moves_the_schema_into_the_prompt_and_tool_turns_into_text() -> None:
    req = routing_request(QUERY, builtin_specs())
    req.messages += [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "choose_reward_tools", "input": VALID}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": True, "content": "no"}],
        },
    ]
    js = json_request(req, CHOOSE_TOOL)
    assert js.tools == [] and js.tool_choice is None and js.response_schema == CHOOSE_TOOL.input_schema
    assert '"none_fit"' in js.system and js.system.startswith(req.system)
    assert js.messages[1]["content"] == _json(VALID) and js.messages[2]["content"].startswith(
        "That answer was rejected"
    )
    # The chat-completions shape of the native protocol: tool calls and tool results as their own messages.
    chat = to_chat_messages(req.system, req.messages)
    assert (
        chat[0]["role"] == "system" and chat[2]["tool_calls"][0]["function"]["name"] == "choose_reward_tools"
    )
    assert chat[3] == {"role": "tool", "tool_call_id": "t1", "content": "Error: no"}
    assert chat_completions_url("http://h:8000/v1/") == "http://h:8000/v1/chat/completions"
    assert chat_completions_url("http://h:8000") == "http://h:8000/v1/chat/completions"


async def test_json_mode_repairs_a_malformed_reply_once_with_the_schema_error(
    messages_server: MessagesServer,
) -> None:
    bad = '{"tools": "math_verify", "none_fit": false, "confidence": 1, "reason": "x"}'
    messages_server.script.extend([{"text": bad}, {"text": "Here: " + _json(VALID)}])
    agent = agent_for(messages_server, "json")
    reply = await agent.ask(routing_request(QUERY, builtin_specs()))
    assert reply.ok and reply.call(CHOOSE_TOOL.name).input == VALID  # type: ignore[union-attr]
    assert parse_route(reply, builtin_specs()).tools[0].tool == "math_verify"
    first, second = messages_server.requests
    assert "tools" not in first and "tools" not in second  # no API tools in the json protocol
    assert second["messages"][-2] == {"role": "assistant", "content": bad}
    assert "is not of type 'array'" in second["messages"][-1]["content"]
    assert reply.usage.input_tokens == 20 and len(reply.attempts) == 2  # summed over both calls
    assert agent.metrics()["protocol_repaired"] == 1
    await agent.aclose()


async def test_a_second_malformed_reply_is_refused_with_the_reason(messages_server: MessagesServer) -> None:
    messages_server.script.extend([{"text": "math_verify, I think"}, {"text": '{"none_fit": false}'}])
    agent = agent_for(messages_server, "json")
    reply = await agent.ask(routing_request(QUERY, builtin_specs()))
    assert reply.status == "error" and reply.tool_calls == []
    assert (
        reply.reason.startswith("malformed tool call after one repair:")
        and "'tools' is a required" in reply.reason
    )
    route = parse_route(reply, builtin_specs())
    assert not route.ok and "malformed tool call" in route.reason
    assert len(messages_server.requests) == 2 and agent.metrics()["protocol_refused_malformed"] == 1
    await agent.aclose()


async def test_native_mode_validates_the_call_and_auto_repairs_in_json(
    messages_server: MessagesServer,
) -> None:
    bad = {"content": [{"type": "tool_use", "id": "c1", "name": CHOOSE_TOOL.name, "input": {"tools": []}}]}
    messages_server.script.extend([bad, {"text": _json(VALID)}])
    agent = agent_for(messages_server, "auto")
    reply = await agent.ask(routing_request(QUERY, builtin_specs()))
    assert reply.ok and reply.call(CHOOSE_TOOL.name).input == VALID  # type: ignore[union-attr]
    first, second = messages_server.requests
    assert first["tool_choice"] == {"type": "tool", "name": CHOOSE_TOOL.name} and "tools" not in second
    assert "the call's input is invalid" in second["messages"][-1]["content"]
    await agent.aclose()


async def test_a_server_refusing_tool_requests_switches_auto_to_json_for_good(
    messages_server: MessagesServer,
) -> None:
    messages_server.script.extend([{"status": 400, "etype": "invalid_request_error"}, {"text": _json(VALID)}])
    agent = agent_for(messages_server, "auto")
    assert isinstance(agent, ToolProtocolAgent)
    first = await agent.ask(routing_request(QUERY, builtin_specs()))
    messages_server.script.append({"text": _json(VALID)})
    again = await agent.ask(routing_request(QUERY, builtin_specs()))
    assert first.ok and again.ok and agent.native_refused.startswith("HTTP 400")
    assert ["tools" in r for r in messages_server.requests] == [True, False, False]
    await agent.aclose()


async def test_transport_failures_pass_through_unrepaired(messages_server: MessagesServer) -> None:
    messages_server.script.append({"status": 500})
    agent = agent_for(messages_server, "json")
    reply = await agent.ask(routing_request(QUERY, builtin_specs()))
    assert reply.status == "error" and reply.reason.startswith("gave up after 1 attempts")
    assert len(messages_server.requests) == 1
    await agent.aclose()


def test_the_openai_backend_builds_a_schema_constrained_json_request() -> None:
    from rlar.agent.openai_agent import OpenAIAgent

    agent = OpenAIAgent(OpenAIAgentConfig(model="local", base_url="http://127.0.0.1:1/v1", max_tokens=64))
    native = agent.body(routing_request(QUERY, builtin_specs()))
    assert native["tool_choice"] == {"type": "function", "function": {"name": CHOOSE_TOOL.name}}
    assert (
        native["max_tokens"] == 64
        and native["temperature"] == 0.0
        and native["messages"][0]["role"] == "system"
    )
    js = agent.body(json_request(routing_request(QUERY, builtin_specs()), CHOOSE_TOOL))
    assert "tools" not in js and js["response_format"]["json_schema"]["schema"] == CHOOSE_TOOL.input_schema


async def test_an_unreachable_openai_endpoint_is_an_error_status_not_an_exception() -> None:
    from bus.embedded import free_port

    cfg = OpenAIAgentConfig(
        model="m", base_url=f"http://127.0.0.1:{free_port()}", max_retries=1, backoff_base_s=0.01
    )
    agent = make_agent(cfg)
    reply = await agent.ask(routing_request(QUERY, builtin_specs()))
    assert reply.status == "error" and "connection error" in reply.attempts[0] and len(reply.attempts) == 2
    await agent.aclose()


def _json(obj: Any) -> str:
    import json

    return json.dumps(obj)
