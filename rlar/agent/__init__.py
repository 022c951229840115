"""The agent client: one async interface ("ask the agent with tools") with a model and an offline backend.

See :mod:`rlar.agent.base` for the contract, :mod:`rlar.agent.anthropic_agent` (Messages API with tool use)
and :mod:`rlar.agent.offline` (embeddings + rules + building blocks, no network). Routing questions are built
and read by :mod:`rlar.agent.routing`; the offline router's method is :mod:`rlar.agent.matching`; tool health
checks are :mod:`rlar.agent.health`. Heavy libraries (anthropic, torch) load only when a backend is built.
"""

# The package's names are the contract module's (``rlar.agent.base.__all__``) and the factory's.
from rlar.agent import base, factory
from rlar.agent.base import *  # noqa: F403
from rlar.agent.factory import default_agent_config as default_agent_config
from rlar.agent.factory import make_agent as make_agent

__all__ = [*base.__all__, *factory.__all__]
