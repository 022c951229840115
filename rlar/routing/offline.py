"""The offline answer to ``choose_reward_tools``: the handler the offline agent backend calls for routing.

``answer(context, embed)`` reads the query and the candidate tools from the request's ``context`` and returns
the tool-call input of :class:`rlar.routing.matching.OfflineRouter`'s decision. One router is kept per
embedding model, so tool-description vectors are computed once.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

from rlar.agent.base import Embed
from rlar.routing.matching import OfflineRouter, coerce_specs
from rlar.routing.query import RoutingQuery
from rlar.routing.training import shipped_router

__all__ = ["answer", "router_for"]

_ROUTERS: weakref.WeakKeyDictionary[Any, OfflineRouter] = weakref.WeakKeyDictionary()


def router_for(embed: Embed) -> OfflineRouter:
    """The offline router that uses ``embed`` (built on first use; readiness is the caller's filter)."""
    router = _ROUTERS.get(embed)
    if router is None:
        router = _ROUTERS[embed] = shipped_router(embed)
    return router


def answer(context: Mapping[str, Any], embed: Embed) -> dict[str, Any]:
    q = RoutingQuery.from_dict(context["query"])
    return router_for(embed).decide(q, coerce_specs(context["candidates"])).tool_input()
