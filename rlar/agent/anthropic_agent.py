"""The model backend: the Anthropic SDK's Messages API with tool use, against any compatible base URL.

Per call: ``anthropic.AsyncAnthropic(base_url, api_key, timeout, max_retries=0)`` (one client per agent; the
retry loop is ours so it is bounded and observable), wrapped in ``asyncio.timeout(timeout_s)`` because httpx
timeouts are per operation, not per request. At most ``max_concurrency`` calls are in flight.

Retries: 429, 5xx (529 overloaded included) and connection errors are retried up to ``max_retries`` times with
exponential backoff and full jitter, waiting at least the server's ``retry-after-ms`` / ``retry-after``. A
timeout is not retried (the caller's latency budget is spent); other 4xx are configuration errors. Either way
the reply has a status (``timeout`` / ``error``) and the attempts made, never an exception.

Token accounting: ``usage.input_tokens`` and ``usage.output_tokens`` of every successful response (failed
attempts report no usage), per reply and as running totals in ``metrics()``, with a cost when prices are set.

Keys come from the environment variable named by ``api_key_env``; a base URL without a key (a local gateway)
is allowed, and the SDK is then given a placeholder.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from rlar.agent.base import (
    AgentReply,
    AgentRequest,
    AnthropicAgentConfig,
    RemoteAgentAccounts,
    ReplyStatus,
    ToolCall,
    Usage,
)
from rlar.tools.judge import retry_after_seconds

# anthropic is imported where used: heavy and optional (the CLI starts without it).

__all__ = ["AnthropicAgent"]


class AnthropicAgent(RemoteAgentAccounts):
    """``Agent`` over the Messages API. See the module docstring for the retry and accounting contract."""

    backend = "anthropic"
    config: AnthropicAgentConfig

    def __init__(self, config: AnthropicAgentConfig) -> None:
        self.config = config
        self.model = config.model
        self.base_url = config.base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        self.api_key = os.environ.get(config.api_key_env) or None
        self._sem = asyncio.Semaphore(config.max_concurrency)
        self._client: Any = None
        self._start_accounts()

    @property
    def configured(self) -> bool:
        return bool(self.api_key or self.base_url)

    def _get_client(self) -> Any:
        if self._client is None:
            import anthropic

            self._client = anthropic.AsyncAnthropic(
                base_url=self.base_url,
                api_key=self.api_key or "unused",
                timeout=self.config.timeout_s,
                max_retries=0,
            )
        return self._client

    async def _create(self, request: AgentRequest) -> Any:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": min(request.max_tokens, self.config.max_tokens),
            "messages": request.messages,
        }
        if request.system:
            kwargs["system"] = request.system
        if request.tools:
            kwargs["tools"] = [t.to_api() for t in request.tools]
        if request.tool_choice:
            kwargs["tool_choice"] = {"type": "tool", "name": request.tool_choice}
        async with asyncio.timeout(self.config.timeout_s):
            return await self._get_client().messages.create(**kwargs)

    async def ask(self, request: AgentRequest) -> AgentReply:
        """One question, with retries; see the module docstring. Never raises for the remote side."""
        import anthropic

        t0 = time.perf_counter()
        if not self.configured:
            return self._reply(
                request, "error", reason=f"no API key in ${self.config.api_key_env} and no base_url"
            )
        attempts: list[str] = []

        def failed(status: ReplyStatus, reason: str) -> AgentReply:
            return self._reply(
                request, status, reason=reason, attempts=attempts, latency_s=time.perf_counter() - t0
            )

        for attempt in range(self.config.max_retries + 1):
            server_wait: float | None = None
            try:
                async with self._sem:
                    msg = await self._create(request)
            except (TimeoutError, anthropic.APITimeoutError):
                attempts.append("timeout")
                return failed("timeout", f"no reply within {self.config.timeout_s:g}s")
            except anthropic.APIStatusError as exc:
                code = exc.status_code
                attempts.append(f"HTTP {code}")
                if code != 429 and code < 500:
                    return failed("error", f"HTTP {code}: {str(exc)[:300]}")
                server_wait = retry_after_seconds(exc.response.headers)
            except anthropic.APIConnectionError as exc:
                attempts.append(f"connection error: {exc}"[:200])
            else:
                attempts.append("ok")
                return self._parse(request, msg, attempts, time.perf_counter() - t0)
            if attempt < self.config.max_retries:
                await asyncio.sleep(self._backoff(attempt, server_wait))
        return failed("error", f"gave up after {len(attempts)} attempts: {attempts[-1]}")

    def _parse(self, request: AgentRequest, msg: Any, attempts: list[str], latency_s: float) -> AgentReply:
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in getattr(msg, "content", None) or []:
            kind = getattr(block, "type", "")
            if kind == "text":
                texts.append(str(getattr(block, "text", "")))
            elif kind == "tool_use":
                data = getattr(block, "input", None)
                calls.append(
                    ToolCall(
                        id=str(getattr(block, "id", "")),
                        name=str(getattr(block, "name", "")),
                        input=dict(data) if isinstance(data, dict) else {"_raw": data},
                    )
                )
        raw_usage = getattr(msg, "usage", None)
        usage = Usage(
            input_tokens=int(getattr(raw_usage, "input_tokens", 0) or 0),
            output_tokens=int(getattr(raw_usage, "output_tokens", 0) or 0),
        )
        status: ReplyStatus = "ok"
        reason = ""
        if request.tool_choice and not any(c.name == request.tool_choice for c in calls):
            status, reason = "error", f"the reply did not call the required tool {request.tool_choice!r}"
        return self._reply(
            request,
            status,
            model=str(getattr(msg, "model", "") or self.model),
            text="".join(texts),
            tool_calls=calls,
            stop_reason=str(getattr(msg, "stop_reason", "") or ""),
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
        if self._client is not None:
            await self._client.close()
            self._client = None
