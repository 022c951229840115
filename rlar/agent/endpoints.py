"""``[llm]``: the language-model endpoints of a run and which role uses which — one block for every actor.

A run names its model servers once and gives each role one of them::

    [llm]
    router = "local"          # the router's agent
    synthesizer = "local"     # the synthesizer's agent (verifier code, probes)
    judge = "local"           # llm_judge

    [llm.endpoints.local]
    api = "openai"            # POST /v1/chat/completions (vLLM, SGLang, llama.cpp, Ollama, OpenAI)
    base_url = "http://127.0.0.1:8000/v1"
    model = "smollm2"         # the server's model name
    api_key_env = "LOCAL_LLM_KEY"   # optional: the variable holding a key
    timeout_s = 120
    max_concurrency = 2

An endpoint with ``[llm.endpoints.NAME.serve]`` is started by ``rlar train`` (``rlar serve-model`` on a local
checkpoint, :mod:`rlar.agent.serve`) and stopped at the end; its ``base_url`` is then the server's.

How the roles reach the actors: :func:`agent_config_for` is the ``agent`` config of the router and the
synthesizer (filled into their sections when the run document is read, :func:`rlar.runconfig.actor_config_dict`;
a section that also sets ``agent`` is refused as ambiguous); :func:`judge_params` is the ``llm_judge`` spec's
endpoint parameters, registered by ``rlar train`` as the version of ``llm_judge`` the run uses. No environment
variable switches a role: without ``[llm]`` the old defaults stand (``ANTHROPIC_API_KEY`` /
``ANTHROPIC_BASE_URL`` for the Messages API, else the offline agent, and a judge that abstains).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["ROLES", "LLMSection", "ModelEndpoint", "ServeSpec", "agent_config_for", "judge_params"]

ROLES = ("router", "synthesizer", "judge")


class ServeSpec(BaseModel):
    """Start the endpoint's server for the run (``rlar serve-model``)."""

    model_config = ConfigDict(extra="forbid")

    checkpoint: str = Field(min_length=1)
    """A packaged model's name (``smollm2``: ``rlar models list``) or a local Hugging Face checkpoint
    directory."""
    port: int = Field(0, ge=0, le=65535)
    """Port on 127.0.0.1 (0: a free one, chosen when the run starts)."""
    device: Literal["auto", "cpu", "cuda"] = "auto"
    """``auto``: CUDA when a GPU is visible, else CPU (float32, eager)."""
    threads: int = Field(1, ge=1)
    """CPU threads of the server's engine (pinned to the last cores), so it leaves the others to the run."""
    max_model_len: int = Field(8192, ge=256)
    """Context length the server allocates for."""
    startup_timeout_s: float = Field(600.0, gt=0)
    """How long to wait for the server to answer ``/health``."""
    extra_args: list[str] = Field(default_factory=list)
    """More arguments for vLLM's OpenAI server (``--enable-auto-tool-choice``, ``--tool-call-parser``, ...)."""


class ModelEndpoint(BaseModel):
    """One language-model server and the model it serves."""

    model_config = ConfigDict(extra="forbid")

    api: Literal["openai", "anthropic"] = "openai"
    """``openai``: ``POST /v1/chat/completions``; ``anthropic``: ``POST /v1/messages`` (the Messages API)."""
    base_url: str | None = None
    """API root, with or without ``/v1`` (``http://127.0.0.1:8000/v1``); None only with ``serve``."""
    model: str = Field(min_length=1)
    """The model name the server knows (vLLM: ``--served-model-name``)."""
    api_key_env: str | None = None
    """Name of the environment variable holding the key (keys never live in configs; None: no key)."""
    timeout_s: float = Field(120.0, gt=0)
    """Wall-clock limit of one call."""
    max_retries: int = Field(2, ge=0, le=20)
    """Retries after 429, 5xx and connection errors (backoff with jitter); timeouts are not retried."""
    max_concurrency: int = Field(2, ge=1)
    """Calls in flight at once per process (per agent, per judge tool)."""
    max_tokens: int = Field(1024, ge=1)
    """Upper bound on the tokens of one reply."""
    judge_max_tokens: int = Field(256, ge=1)
    """The judge's reply budget (its reasoning and the ``Score: N`` line)."""
    temperature: float | None = Field(0.0, ge=0)
    """Sampling temperature (None: the server's default)."""
    tool_calling: Literal["native", "json", "auto"] = "auto"
    """How the agents' forced tools are called (:mod:`rlar.agent.json_tools`)."""
    constrained_json: bool = True
    """In the json protocol, ask the server to decode under the tool's schema (``response_format``;
    ``openai`` only)."""
    repair: bool = True
    """Ask once more when a tool input (or a judge's score) cannot be read, else refuse at once."""
    serve: ServeSpec | None = None
    """Start this endpoint's server for the run (``rlar train``)."""

    @model_validator(mode="after")
    def _reachable(self) -> ModelEndpoint:
        if self.base_url is None and self.serve is None:
            raise ValueError("an endpoint needs base_url, or serve = {checkpoint = ...} to start one")
        if self.serve is not None and self.api != "openai":
            raise ValueError('serve starts vLLM\'s OpenAI server: use api = "openai" (it serves both shapes)')
        return self

    def url(self) -> str:
        if self.base_url is None:
            raise ValueError("the endpoint's server has not been started (no base_url yet)")
        return self.base_url


class LLMSection(BaseModel):
    """``[llm]``: model endpoints and the role each serves (see :mod:`rlar.agent.endpoints`)."""

    model_config = ConfigDict(extra="forbid")

    endpoints: dict[str, ModelEndpoint] = Field(default_factory=dict)
    """Named endpoints (``[llm.endpoints.NAME]``)."""
    router: str | None = None
    """Endpoint of the router's agent (None: ``[router] agent``, else the default)."""
    synthesizer: str | None = None
    """Endpoint of the synthesizer's agent (None: ``[synthesizer] agent``, else the default)."""
    judge: str | None = None
    """Endpoint of ``llm_judge`` (None: the built-in spec: the Messages API with a key, else it abstains)."""

    @model_validator(mode="after")
    def _roles_name_endpoints(self) -> LLMSection:
        for role in ROLES:
            name = getattr(self, role)
            if name is not None and name not in self.endpoints:
                known = ", ".join(sorted(self.endpoints)) or "none defined"
                raise ValueError(f"{role} = {name!r} names no endpoint ([llm.endpoints.*]: {known})")
        return self

    def endpoint_for(self, role: str) -> ModelEndpoint | None:
        name = getattr(self, role)
        return self.endpoints[name] if name is not None else None


def agent_config_for(endpoint: ModelEndpoint) -> dict[str, Any]:
    """The agent config (``backend`` openai or anthropic) an endpoint gives the router or the synthesizer."""
    common: dict[str, Any] = {
        "model": endpoint.model,
        "base_url": endpoint.url(),
        "timeout_s": endpoint.timeout_s,
        "max_retries": endpoint.max_retries,
        "max_concurrency": endpoint.max_concurrency,
        "max_tokens": endpoint.max_tokens,
        "tool_calling": endpoint.tool_calling,
        "repair": endpoint.repair,
    }
    if endpoint.api == "openai":
        return {
            "backend": "openai",
            **common,
            "api_key_env": endpoint.api_key_env,
            "temperature": endpoint.temperature,
            "constrained_json": endpoint.constrained_json,
        }
    return {"backend": "anthropic", **common, "api_key_env": endpoint.api_key_env or "ANTHROPIC_API_KEY"}


def judge_params(endpoint: ModelEndpoint) -> dict[str, Any]:
    """The ``llm_judge`` spec parameters that point it at ``endpoint`` (the rest keep the built-in defaults)."""
    return {
        "api": endpoint.api,
        "base_url": endpoint.url(),
        "model": endpoint.model,
        "api_key_env": endpoint.api_key_env or "",
        "timeout_s": endpoint.timeout_s,
        "max_retries": endpoint.max_retries,
        "max_concurrency": endpoint.max_concurrency,
        "max_tokens": endpoint.judge_max_tokens,
        "temperature": endpoint.temperature,
        "repair": endpoint.repair,
        "deadline_s": max(120.0, 2 * endpoint.timeout_s),
    }
