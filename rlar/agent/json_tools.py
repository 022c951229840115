"""The tool protocol over a model backend: every forced tool call comes back parsed and validated, or refused.

Callers (the router, the synthesizer) force one tool per request and read its input. A hosted model calls it
natively; a small local model often cannot (vLLM answers a forced tool with text unless it runs a tool-call
parser, and a 135M model writes prose or broken JSON). :class:`ToolProtocolAgent` wraps a model backend and
makes the contract the same for both:

- ``native``: the tools go to the API as tools; the reply's call of the forced tool is validated.
- ``json``: no tools go to the API; the system prompt asks for one JSON object of the tool's input schema
  (``AgentRequest.response_schema`` carries the schema, which a server with structured outputs enforces while
  decoding: see :mod:`rlar.agent.openai_agent`), and the object is read from the reply's text — a code fence,
  prose around it and a ``{"name": ..., "arguments": {...}}`` wrapper are tolerated.
- ``auto``: ``native``, repaired in the ``json`` protocol; a server that refuses tool requests (a 4xx, as vLLM
  without ``--tool-call-parser``) switches the agent to ``json`` for good (``native_refused`` says why), the
  refused request included.

Validation is the tool's JSON schema (``jsonschema``, draft 2020-12). A reply that fails it is repaired once
(``repair``): the model sees its own reply and the schema errors and is asked for the object again; a
second failure is refused — status ``error``, reason ``malformed tool call after one repair: <why>`` — so an
actor falls back as for any failed call and never crashes. Transport failures (timeouts, HTTP errors other than
a refused tool request) are passed through unrepaired. Usage, latency and attempts are summed over the calls.
Earlier turns' ``tool_use`` / ``tool_result`` blocks are written as text in the ``json`` protocol (the assistant's
JSON, then the user's error message), so a synthesis retry reads the same history either way.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections import Counter
from typing import Any, Literal

# jsonschema is imported where used: it comes with the agents extra, and this module with every run config
from rlar.agent.base import Agent, AgentReply, AgentRequest, AgentTool, ToolCall, Usage

__all__ = ["MISSING_CALL", "ToolProtocolAgent", "json_request", "read_tool_input", "validate_input"]

MISSING_CALL = "the reply did not call the required tool"
"""How a backend's reason starts when a forced tool was not called (a content failure: repairable)."""

Mode = Literal["native", "json", "auto"]

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)


def validate_input(data: Any, tool: AgentTool) -> str:
    """``""`` when ``data`` is a valid input of ``tool``, else its first three schema errors (``path: message``)."""
    import jsonschema

    if not isinstance(data, dict):
        return f"the tool input is a {type(data).__name__}, not a JSON object"
    validator = jsonschema.Draft202012Validator(tool.input_schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if not errors:
        return ""
    shown = [f"{'/'.join(str(p) for p in e.absolute_path) or '(top level)'}: {e.message}" for e in errors[:3]]
    more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
    return ("; ".join(shown) + more)[:400]


def _objects(text: str) -> list[Any]:
    """JSON objects found in ``text``: fenced blocks first, then every ``{`` that starts a decodable value."""
    decoder = json.JSONDecoder()
    found: list[Any] = []
    for chunk in [*_FENCE.findall(text), text]:
        i = chunk.find("{")
        while i >= 0:
            try:
                obj, end = decoder.raw_decode(chunk, i)
            except ValueError:
                i = chunk.find("{", i + 1)
                continue
            found.append(obj)
            i = chunk.find("{", end)
    return found


def _unwrapped(obj: Any, tool: AgentTool) -> list[Any]:
    """``obj`` and, when it wraps the input (``{"name": tool, "arguments"|"input"|"parameters": {...}}``), the
    wrapped object — models trained on tool calling write the call, not the input."""
    out = [obj]
    if isinstance(obj, dict):
        for key in ("arguments", "input", "parameters", tool.name):
            inner = obj.get(key)
            if isinstance(inner, str):
                try:
                    inner = json.loads(inner)
                except ValueError:
                    continue
            if isinstance(inner, dict):
                out.append(inner)
    return out


def read_tool_input(text: str, tool: AgentTool) -> tuple[dict[str, Any] | None, str]:
    """(input, "") for the first JSON object in ``text`` that is a valid input of ``tool``; else (None, why)."""
    objects = _objects(text)
    if not objects:
        tail = text.strip()[-160:]
        return None, f"no JSON object in the reply ({tail!r})" if tail else "the reply is empty"
    first_error = ""
    for obj in objects:
        for candidate in _unwrapped(obj, tool):
            problem = validate_input(candidate, tool)
            if not problem:
                return candidate, ""
            first_error = first_error or problem
    return None, f"the JSON does not fit the schema of {tool.name}: {first_error}"


def _text_history(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``tool_use`` / ``tool_result`` blocks written as text (the json protocol has no tool turns)."""
    out = []
    for m in messages:
        content = m.get("content")
        if not isinstance(content, list):
            out.append(m)
            continue
        parts = []
        for b in content:
            if not isinstance(b, dict):
                continue
            kind = b.get("type")
            if kind == "text":
                parts.append(str(b.get("text", "")))
            elif kind == "tool_use":
                parts.append(json.dumps(b.get("input", {}), ensure_ascii=False))
            elif kind == "tool_result":
                body = b.get("content", "")
                if isinstance(body, list):
                    body = "".join(str(x.get("text", "")) for x in body if isinstance(x, dict))
                parts.append(("That answer was rejected: " if b.get("is_error") else "") + str(body))
        out.append({"role": m.get("role", "user"), "content": "\n".join(parts)})
    return out


def json_request(request: AgentRequest, tool: AgentTool) -> AgentRequest:
    """``request`` in the json protocol: no API tools; the schema in the system prompt and ``response_schema``."""
    schema = json.dumps(tool.input_schema, ensure_ascii=False)
    system = (
        f"{request.system}\n\nAnswer with one JSON object and nothing else: the input of `{tool.name}`"
        f" ({tool.description}). It must match this JSON schema:\n{schema}"
    ).strip()
    return dataclasses.replace(
        request,
        system=system,
        messages=_text_history(request.messages),
        tools=[],
        tool_choice=None,
        response_schema=tool.input_schema,
    )


def _repair_request(base: AgentRequest, tool: AgentTool, bad_text: str, why: str) -> AgentRequest:
    messages = [
        *base.messages,
        {"role": "assistant", "content": bad_text[-2000:] or "(empty)"},
        {
            "role": "user",
            "content": (
                f"That reply cannot be used: {why}. Reply again with only the JSON object for {tool.name},"
                " matching the schema."
            ),
        },
    ]
    return dataclasses.replace(base, messages=messages)


def _merge(replies: list[AgentReply], **final: Any) -> AgentReply:
    """One reply for several calls: the last one's fields, usage/cost/latency summed, attempts joined."""
    last = replies[-1]
    usage = Usage()
    for r in replies:
        usage.add(r.usage)
    fields = {
        "usage": usage,
        "cost_usd": sum(r.cost_usd for r in replies),
        "latency_s": sum(r.latency_s for r in replies),
        "attempts": [a for r in replies for a in r.attempts],
        "prompt_hash": replies[0].prompt_hash,
        **final,
    }
    return dataclasses.replace(last, **fields)


class ToolProtocolAgent:
    """An ``Agent`` over a model backend whose forced tool calls are validated (see the module docstring)."""

    def __init__(self, inner: Agent, mode: Mode = "auto", *, repair: bool = True) -> None:
        self.inner = inner
        self.mode: Mode = mode
        self.repair = repair
        self.backend = inner.backend
        self.model = inner.model
        self.native_refused = ""
        """In ``auto`` mode: why the server refused a native tool request (then every later request uses the
        json protocol); ``""`` while it has not."""
        self.totals: Counter[str] = Counter()

    @staticmethod
    def _content_failure(reply: AgentReply) -> bool:
        """The model answered but not with the call (as opposed to a transport failure)."""
        return reply.status == "ok" or (reply.status == "error" and reply.reason.startswith(MISSING_CALL))

    @staticmethod
    def _refused_tools(reply: AgentReply) -> bool:
        """The server refused the native tool request (e.g. vLLM without a tool-call parser: HTTP 400)."""
        return (
            reply.status == "error"
            and reply.reason.startswith("HTTP 4")
            and not reply.reason.startswith("HTTP 429")
        )

    def _read(self, reply: AgentReply, tool: AgentTool, native: bool) -> tuple[dict[str, Any] | None, str]:
        """(input, "") or (None, why not) for a reply in which the model answered."""
        if native:
            call = reply.call(tool.name)
            if call is not None:
                problem = validate_input(call.input, tool)
                return (call.input, "") if not problem else (None, f"the call's input is invalid: {problem}")
            if not reply.text.strip():
                return None, reply.reason or MISSING_CALL
            # Some servers leave the call in the text: read it there before calling it a failure.
        data, why = read_tool_input(reply.text, tool)
        if data is None and reply.stop_reason in ("length", "max_tokens"):
            why = f"the reply stopped at its token limit before a valid JSON object ended ({why})"
        return data, why

    def _ok(
        self, request: AgentRequest, replies: list[AgentReply], tool: AgentTool, data: dict[str, Any]
    ) -> AgentReply:
        digest = hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:12]
        native = replies[-1].call(tool.name)
        calls = [
            ToolCall(id=native.id if native is not None else f"call_{digest}", name=tool.name, input=data)
        ]
        self.totals["valid_calls"] += 1
        self.totals[f"valid_calls_{request.purpose or 'other'}"] += 1
        return _merge(replies, status="ok", reason="", tool_calls=calls, prompt_hash=request.prompt_hash())

    def _refuse(self, request: AgentRequest, replies: list[AgentReply], reason: str) -> AgentReply:
        self.totals["refused_malformed"] += 1
        self.totals[f"refused_malformed_{request.purpose or 'other'}"] += 1
        return _merge(
            replies, status="error", reason=reason[:500], tool_calls=[], prompt_hash=request.prompt_hash()
        )

    async def ask(self, request: AgentRequest) -> AgentReply:
        tool = next((t for t in request.tools if t.name == request.tool_choice), None)
        if tool is None:
            return await self.inner.ask(request)
        self.totals["tool_requests"] += 1
        as_json = json_request(request, tool)
        replies: list[AgentReply] = []
        first_req = (
            request if self.mode == "native" or (self.mode == "auto" and not self.native_refused) else as_json
        )
        first = await self.inner.ask(first_req)
        replies.append(first)
        if first_req.tools and self.mode == "auto" and self._refused_tools(first):
            # The server does not take tool requests: the json protocol from now on, this request included.
            self.native_refused = first.reason[:300]
            self.totals["native_refused"] += 1
            first_req = as_json
            first = await self.inner.ask(first_req)
            replies.append(first)
        if not self._content_failure(first):
            return _merge(replies, prompt_hash=request.prompt_hash())  # a transport failure, as it came
        data, why = self._read(first, tool, native=bool(first_req.tools))
        if data is not None:
            return self._ok(request, replies, tool, data)
        if not self.repair:
            return self._refuse(request, replies, f"malformed tool call: {why}")
        self.totals["repairs"] += 1
        base = request if first_req.tools and self.mode == "native" else as_json
        second = await self.inner.ask(_repair_request(base, tool, first.text, why))
        replies.append(second)
        if not self._content_failure(second):
            return _merge(replies, prompt_hash=request.prompt_hash())
        data, why2 = self._read(second, tool, native=bool(base.tools))
        if data is not None:
            self.totals["repaired"] += 1
            return self._ok(request, replies, tool, data)
        return self._refuse(
            request, replies, f"malformed tool call after one repair: {why2} (first reply: {why})"
        )

    def metrics(self) -> dict[str, Any]:
        return {
            **self.inner.metrics(),
            "tool_calling": self.mode,
            **({"native_refused": self.native_refused} if self.native_refused else {}),
            **{f"protocol_{k}": v for k, v in self.totals.items()},
        }

    async def aclose(self) -> None:
        await self.inner.aclose()
