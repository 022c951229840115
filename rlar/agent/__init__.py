"""The agent client: one async interface ("ask the agent with tools") with a model and an offline backend.

See :mod:`rlar.agent.base` for the contract, :mod:`rlar.agent.anthropic_agent` (Messages API with tool use)
and :mod:`rlar.agent.offline` (embeddings + rules + building blocks, no network). Routing questions are built
and read by :mod:`rlar.agent.routing`; the offline router's method is :mod:`rlar.agent.matching`; tool health
checks are :mod:`rlar.agent.health`. Heavy libraries (anthropic, torch) load only when a backend is built.
"""

# The package's names are the contract module's (one list, in ``rlar.agent.base.__all__``).
from rlar.agent.base import *  # noqa: F403
from rlar.agent.base import __all__ as __all__
