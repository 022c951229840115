"""Reward routing: which registered tools score a query, asked of the agent client (:mod:`rlar.agent`).

- :mod:`rlar.routing.query`: ``RoutingQuery`` (one query as the router sees it) and its signature;
- :mod:`rlar.routing.request`: the ``choose_reward_tools`` request either backend answers, and its parsing;
- :mod:`rlar.routing.decision`: ``Decision``, what the router caches, announces and copies into prompts;
- :mod:`rlar.routing.lifecycle`: a decision's states and the pure transitions between them (the router
  performs the actions they return), and the quarantine policy of a suspect tool;
- :mod:`rlar.routing.rules`: which tools can score a query at all (reference needs, readiness, coverage);
- :mod:`rlar.routing.matching`: the offline router's decision (rules, then the scorer);
- :mod:`rlar.routing.scorer`, :mod:`rlar.routing.exemplars`, :mod:`rlar.routing.training`: the scorer's
  features, the labelled exemplars it matches against, and its fitting and held-out evaluation;
- :mod:`rlar.routing.confidence` (with :mod:`rlar.routing.boosting`): each decision's evidence and the
  correctness model that turns it into a calibrated confidence, selective routing's threshold, risk–coverage;
- :mod:`rlar.routing.offline`: the offline backend's handler for ``choose_reward_tools``;
- :mod:`rlar.routing.health`: tool health verdicts from live stats.

Import the names below from ``rlar.routing``; the module layout inside may change. Nothing heavy (torch) is
imported here.
"""

from rlar.routing.decision import Decision
from rlar.routing.health import HealthPolicy, HealthWatch, Verdict, assess
from rlar.routing.matching import Match, OfflineRouter, tool_fit
from rlar.routing.query import RoutingQuery
from rlar.routing.request import CHOOSE_TOOL, RouteAnswer, parse_route, routing_request
from rlar.routing.rules import needs_reference, tool_ready, usable_candidates

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
    "tool_fit",
    "tool_ready",
    "usable_candidates",
]
