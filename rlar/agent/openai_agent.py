"""The OpenAI chat-completions backend: any server that speaks ``POST /v1/chat/completions``.

vLLM, SGLang, llama.cpp's server, Ollama and the hosted OpenAI API all serve this shape; a local model served
with ``rlar serve-model`` is one. Per call: one ``POST {base_url}/v1/chat/completions`` (a ``base_url`` that
already ends in ``/v1`` is used as is) on a pooled aiohttp client (:class:`rlar.tools.http.HttpClient`), bounded
as a whole by ``timeout_s``, with ``Authorization: Bearer <key>`` when the variable named by ``api_key_env``
is set. At most ``max_concurrency`` calls are in flight.

The request is translated from the agent contract's Messages-API shape: the system prompt becomes the first
message; ``tool_use`` blocks become the assistant's ``tool_calls`` (arguments as a JSON string) and
``tool_result`` blocks become ``role: "tool"`` messages; the request's tools become ``tools`` entries of type
``function`` and a forced tool ``tool_choice: {"type": "function", "function": {"name": ...}}``. A request with
a ``response_schema`` (the JSON tool protocol's answer: :mod:`rlar.agent.json_tools`) asks for it with
``response_format: {"type": "json_schema", ...}`` when ``constrained_json`` is on — servers with structured
outputs (vLLM, SGLang, llama.cpp) then decode only JSON of that schema.

Retries: 429, 5xx and connection errors up to ``max_retries`` times with exponential backoff and full jitter,
waiting at least the server's ``retry-after``; a timeout is not retried; other 4xx are configuration errors.
Either way the reply has a status and the attempts, never an exception. Usage is the response's
``usage.prompt_tokens`` / ``completion_tokens``.

The reply's ``tool_calls`` become :class:`~rlar.agent.base.ToolCall` (arguments that are not a JSON object
keep the raw text in ``{"_raw": ...}``, for the tool protocol to repair or refuse). A forced tool the reply
did not call gives status ``error`` with the reply's text kept.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

from rlar.agent.base import (
    AgentReply,
    AgentRequest,
    OpenAIAgentConfig,
    RemoteAgentAccounts,
    ReplyStatus,
    ToolCall,
    Usage,
)
from rlar.tools.http import HttpClient
from rlar.tools.judge import retry_after_seconds

__all__ = ["OpenAIAgent", "chat_completions_url", "to_chat_messages"]


def chat_completions_url(base_url: str) -> str:
    """``{base}/v1/chat/completions`` (a base ending in ``/v1`` gets ``/chat/completions`` only)."""
    base = base_url.rstrip("/")
    return base + ("/chat/completions" if base.endswith("/v1") else "/v1/chat/completions")


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return str(content or "")


def to_chat_messages(system: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages-API shaped messages as chat-completions messages (see the module docstring)."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for m in messages:
        role, content = m.get("role", "user"), m.get("content", "")
        if isinstance(content, str):
            out.append({"role": role, "content": content})
            continue
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        calls = [
            {
                "id": str(b.get("id", "")),
                "type": "function",
                "function": {
                    "name": str(b.get("name", "")),
                    "arguments": json.dumps(b.get("input", {}), ensure_ascii=False),
                },
            }
            for b in blocks
            if b.get("type") == "tool_use"
        ]
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if calls:
            out.append({"role": "assistant", "content": text or None, "tool_calls": calls})
        elif text or not results:
            out.append({"role": role, "content": text})
        for r in results:
            body = _block_text(r.get("content", ""))
            if r.get("is_error"):
                body = f"Error: {body}"
            out.append({"role": "tool", "tool_call_id": str(r.get("tool_use_id", "")), "content": body})
    return out


class OpenAIAgent(RemoteAgentAccounts):
    """``Agent`` over ``/v1/chat/completions``. See the module docstring."""

    backend = "openai"
    config: OpenAIAgentConfig

    def __init__(self, config: OpenAIAgentConfig) -> None:
        self.config = config
        self.model = config.model
        self.base_url = config.base_url
        self.url = chat_completions_url(config.base_url)
        self.api_key = os.environ.get(config.api_key_env) if config.api_key_env else None
        self._sem = asyncio.Semaphore(config.max_concurrency)
        self._http = HttpClient(config.max_concurrency)
        self._start_accounts()

    def _headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def body(self, request: AgentRequest) -> dict[str, Any]:
        """The JSON body of one call for ``request``."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": to_chat_messages(request.system, request.messages),
            "max_tokens": min(request.max_tokens, self.config.max_tokens),
        }
        if self.config.temperature is not None:
            body["temperature"] = self.config.temperature
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.input_schema},
                }
                for t in request.tools
            ]
            if request.tool_choice:
                body["tool_choice"] = {"type": "function", "function": {"name": request.tool_choice}}
        if request.response_schema is not None and self.config.constrained_json:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": request.response_schema, "strict": True},
            }
        return body

    async def ask(self, request: AgentRequest) -> AgentReply:
        """One question, with retries; see the module docstring. Never raises for the remote side."""
        t0 = time.perf_counter()
        attempts: list[str] = []
        body = self.body(request)

        def failed(status: ReplyStatus, reason: str) -> AgentReply:
            return self._reply(
                request, status, reason=reason, attempts=attempts, latency_s=time.perf_counter() - t0
            )

        for attempt in range(self.config.max_retries + 1):
            server_wait: float | None = None
            try:
                async with self._sem:
                    reply = await self._http.post_json(self.url, body, self._headers(), self.config.timeout_s)
            except TimeoutError:
                attempts.append("timeout")
                return failed("timeout", f"no reply within {self.config.timeout_s:g}s")
            except ConnectionError as exc:
                attempts.append(f"connection error: {exc}"[:200])
            else:
                code = reply.status
                if code == 200:
                    attempts.append("ok")
                    try:
                        data = reply.json()
                    except ValueError as exc:
                        return failed("error", f"the reply is not JSON: {exc}"[:300])
                    return self._parse(request, data, attempts, time.perf_counter() - t0)
                attempts.append(f"HTTP {code}")
                if code != 429 and code < 500:
                    detail = reply.body[:300].decode("utf-8", "replace")
                    return failed("error", f"HTTP {code}: {detail}")
                server_wait = retry_after_seconds(reply.headers)
            if attempt < self.config.max_retries:
                await asyncio.sleep(self._backoff(attempt, server_wait))
        return failed("error", f"gave up after {len(attempts)} attempts: {attempts[-1]}")

    def _parse(self, request: AgentRequest, data: Any, attempts: list[str], latency_s: float) -> AgentReply:
        choices = data.get("choices") if isinstance(data, dict) else None
        if not choices or not isinstance(choices[0], dict):
            return self._reply(
                request,
                "error",
                reason=f"the reply has no choices: {json.dumps(data)[:200]}",
                attempts=attempts,
                latency_s=latency_s,
            )
        choice = choices[0]
        message = choice.get("message") or {}
        calls: list[ToolCall] = []
        for i, c in enumerate(message.get("tool_calls") or []):
            fn = c.get("function") or {} if isinstance(c, dict) else {}
            raw = fn.get("arguments", "")
            try:
                parsed = json.loads(raw) if isinstance(raw, str) else raw
            except ValueError:
                parsed = None
            calls.append(
                ToolCall(
                    id=str(c.get("id") or f"call_{i}"),
                    name=str(fn.get("name", "")),
                    input=parsed if isinstance(parsed, dict) else {"_raw": raw},
                )
            )
        raw_usage = data.get("usage") or {}
        usage = Usage(
            input_tokens=int(raw_usage.get("prompt_tokens", 0) or 0),
            output_tokens=int(raw_usage.get("completion_tokens", 0) or 0),
        )
        status: ReplyStatus = "ok"
        reason = ""
        if request.tool_choice and not any(c.name == request.tool_choice for c in calls):
            status, reason = "error", f"the reply did not call the required tool {request.tool_choice!r}"
        return self._reply(
            request,
            status,
            model=str(data.get("model", "") or self.model),
            text=str(message.get("content") or ""),
            tool_calls=calls,
            stop_reason=str(choice.get("finish_reason") or ""),
            usage=usage,
            cost_usd=self._cost(usage),
            latency_s=latency_s,
            attempts=attempts,
            reason=reason,
        )

    def metrics(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "model": self.model,
            **dict(self.totals),
            **self.usage.to_dict(),
            "cost_usd": round(self.cost_usd, 6),
            "latency_s": round(self.latency_s, 4),
        }

    async def aclose(self) -> None:
        await self._http.aclose()
