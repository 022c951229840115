"""Which agent a config describes: :func:`make_agent` builds it, :func:`default_agent_config` picks one from the
environment. The contract and the configs are :mod:`rlar.agent.base`; the backends sit between the two."""

from __future__ import annotations

import os

from rlar.agent.anthropic_agent import AnthropicAgent
from rlar.agent.base import Agent, AnthropicAgentConfig, OfflineAgentConfig, OpenAIAgentConfig
from rlar.agent.json_tools import ToolProtocolAgent
from rlar.agent.offline import OfflineAgent
from rlar.agent.openai_agent import OpenAIAgent

__all__ = ["default_agent_config", "make_agent"]


def default_agent_config() -> AnthropicAgentConfig | OfflineAgentConfig:
    """``anthropic`` when a key or a base URL is in the environment, else ``offline``."""
    if os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_BASE_URL"):
        return AnthropicAgentConfig()
    return OfflineAgentConfig()


def make_agent(config: AnthropicAgentConfig | OpenAIAgentConfig | OfflineAgentConfig | None = None) -> Agent:
    """Build the agent a config describes (None: ``default_agent_config()``); a model backend comes wrapped in
    the tool protocol (:class:`~rlar.agent.json_tools.ToolProtocolAgent`). The model SDKs load at a backend's
    first call."""
    cfg = config or default_agent_config()
    if isinstance(cfg, OfflineAgentConfig):
        return OfflineAgent(cfg)
    inner: Agent
    if isinstance(cfg, OpenAIAgentConfig):
        inner = OpenAIAgent(cfg)
    else:
        inner = AnthropicAgent(cfg)
    return ToolProtocolAgent(inner, cfg.tool_calling, repair=cfg.repair)
