"""Routing helpers shared by the unit and bus routing tests: the built-in specs and the queries they read."""

from __future__ import annotations

from rlar.routing import RoutingQuery
from rlar.routing.rules import eligibility
from rlar.tools import builtin_specs
from rlar.tools.base import ToolSpec

SPECS = builtin_specs()


def eligible(query: str, reference: object, metadata: dict[str, object] | None = None) -> set[str]:
    q = RoutingQuery("t", query, reference, metadata=metadata or {})
    f = q.features()
    return {s.name for s in SPECS if not eligibility(s, q, f)}


def format_chat(text: str, rules: list[dict[str, object]]) -> RoutingQuery:
    return RoutingQuery(
        "house", text, None, metadata={"format_rules": rules}, messages=[{"role": "user", "content": text}]
    )


def builtin_spec(name: str) -> ToolSpec:
    return next(s for s in builtin_specs() if s.name == name)


SUMS = [
    RoutingQuery(task="s", query="What is 17 + 7?", reference="24"),
    RoutingQuery(task="s", query="What is 2 - 5?", reference="-3"),
    RoutingQuery(task="s", query="What is 6 * 7?", reference="42"),
]
