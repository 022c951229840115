"""Reward routing: which registered tools score a query, asked of the agent client (:mod:`rlar.agent`).

- :mod:`rlar.routing.query`: ``RoutingQuery`` (one query as the router sees it) and its signature;
- :mod:`rlar.routing.request`: the ``choose_reward_tools`` request either backend answers, and its parsing;
- :mod:`rlar.routing.decision`: ``Decision``, what the router caches, announces and copies into prompts;
- :mod:`rlar.routing.matching`: the offline router's method (rules, embeddings);
- :mod:`rlar.routing.offline`: the offline backend's handler for ``choose_reward_tools``;
- :mod:`rlar.routing.health`: tool health verdicts from live stats.

Import the names below from ``rlar.routing``; the module layout inside may change. Nothing heavy (torch) is
imported here.
"""

from rlar.routing.decision import Decision
from rlar.routing.health import HealthPolicy, HealthWatch, Verdict, assess
from rlar.routing.matching import Match, OfflineRouter, needs_reference, tool_ready, usable_candidates
from rlar.routing.query import RoutingQuery
from rlar.routing.request import CHOOSE_TOOL, RouteAnswer, parse_route, routing_request

__all__ = [
    "CHOOSE_TOOL",
    "Decision",
    "HealthPolicy",
    "HealthWatch",
    "Match",
    "OfflineRouter",
    "RouteAnswer",
    "RoutingQuery",
    "Verdict",
    "assess",
    "needs_reference",
    "parse_route",
    "routing_request",
    "tool_ready",
    "usable_candidates",
]
