"""Routing as an agent question: the request the agent reads and the decision it returns.

``routing_request(query, candidates)`` builds the :class:`~rlar.agent.base.AgentRequest`: a system prompt, a
user message listing the candidate reward tools (with what each needs as a reference), the tools the rules rule
out for this query and why, the query with its reference and metadata as the dataset gives them, and the
features the router read (:meth:`~rlar.routing.query.QueryFeatures.describe`: reference shape, its relation to
the query, stated constraints, form) — the same facts the offline backend decides from — and the forced tool
``choose_reward_tools`` whose input is the decision. ``context`` carries the query and candidates as data for
the offline backend, which answers with :func:`rlar.routing.offline.answer` (the tool's offline handler).
``parse_route(reply, candidates)`` turns either backend's reply into a :class:`RouteAnswer`, keeping only
registered tool names, normalising weights to sum to 1 and recording provenance (backend, model, prompt hash,
confidence, cost).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bus.messages import ToolRef
from rlar.agent.base import AgentReply, AgentRequest, AgentTool
from rlar.routing.offline import answer as offline_answer
from rlar.routing.query import RoutingQuery
from rlar.routing.rules import eligibility, needs_reference
from rlar.tools.base import ToolSpec

__all__ = ["CHOOSE_TOOL", "RouteAnswer", "parse_route", "routing_request"]

CHOOSE_TOOL = AgentTool(
    name="choose_reward_tools",
    description=(
        "Record which registered reward tools should score responses to this query, with weights, or"
        " that none of them fits (then a new verifier will be written). Call exactly once."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "tools": {
                "type": "array",
                "description": "Chosen tools (names from the candidate list) with positive weights.",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "weight": {"type": "number", "exclusiveMinimum": 0},
                    },
                    "required": ["name", "weight"],
                },
            },
            "none_fit": {
                "type": "boolean",
                "description": "True when no candidate can score this task reliably.",
            },
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "reason": {"type": "string", "description": "One or two sentences: why these tools."},
            "constraints": {
                "type": "array",
                "description": (
                    "When none fits: the checkable requirements a new verifier must test, as objects such as"
                    ' {"rule": "bullets", "min": 3, "max": 3} or {"rule": "words", "per": "item", "max": 9}.'
                ),
                "items": {"type": "object"},
            },
        },
        "required": ["tools", "none_fit", "confidence", "reason"],
    },
    offline=offline_answer,
)

_SYSTEM = (
    "You route training queries of a reinforcement-learning run to reward tools. For one query you choose the"
    " registered tool (or a weighted set) that scores responses to it most reliably, given what the task"
    " declares, the query itself, the shape of its reference as the dataset gives it and the features read from"
    " them. Prefer deterministic verifiers over judges when they can check the answer. A tool that needs a"
    ' reference cannot score a query without one; an empty reference ("") is no reference. The tools the rules'
    " rule out are listed with the reason. If no candidate can check what the query demands (for example"
    " constraints written in its text that no tool is configured for), set none_fit and list the checkable"
    " constraints. Answer only by calling choose_reward_tools."
)

_NEEDS = {
    "text": "a reference answer",
    "tests": "code tests as the reference",
    "instructions": "IFEval instructions (instruction ids and kwargs) as the reference",
    "none": "no reference (optional)",
}


def _describe(spec: ToolSpec) -> str:
    return (
        f"- {spec.name} (v{spec.version}, kind {spec.kind}; needs {_NEEDS[needs_reference(spec)]}):"
        f" {spec.description} Task types: {', '.join(spec.task_types) or '-'}; answer formats:"
        f" {', '.join(spec.answer_formats) or '-'}"
    )


def _candidate_context(spec: ToolSpec) -> dict[str, Any]:
    d = spec.to_dict()
    d.pop("code", None)  # the matcher never needs the source; keep requests small
    d.pop("validation", None)
    return d


def routing_request(
    q: RoutingQuery, candidates: Sequence[ToolSpec], *, max_tokens: int = 512
) -> AgentRequest:
    ref = (
        json.dumps(q.reference, ensure_ascii=False, default=str)
        if q.reference is not None and not isinstance(q.reference, str)
        else q.reference
    )
    meta = {k: v for k, v in q.metadata.items() if k not in ("canonical_solution",)}
    f = q.features()
    ruled_out = [f"- {s.name}: {why}" for s in candidates if (why := eligibility(s, q, f))]
    query = q.query if q.messages is None else json.dumps(q.messages, ensure_ascii=False)
    user = "\n".join(
        [
            "# Candidate reward tools",
            *(_describe(s) for s in candidates),
            *(["", "# Ruled out for this query", *ruled_out] if ruled_out else []),
            "",
            "# The query",
            f"task: {q.task}; domain: {q.domain or '-'}; task type: {q.task_type or '-'}; answer format:"
            f" {q.answer_format or '-'}; data source: {q.data_source or '-'}",
            f"description: {q.description or '-'}",
            f"query: {query[:1500]}",
            f"reference: {ref[:800] if ref is not None else 'none (missing)'}",
            f"metadata: {json.dumps(meta, ensure_ascii=False, default=str)[:800]}",
            "",
            "# Features read from it",
            f.describe(),
        ]
    )
    return AgentRequest(
        system=_SYSTEM,
        messages=[{"role": "user", "content": user}],
        tools=[CHOOSE_TOOL],
        tool_choice=CHOOSE_TOOL.name,
        max_tokens=max_tokens,
        context={"query": q.to_dict(), "candidates": [_candidate_context(s) for s in candidates]},
        purpose="route",
    )


@dataclass(slots=True)
class RouteAnswer:
    """A routing decision: the chosen tools (weights sum to 1)."""

    ok: bool
    tools: list[ToolRef]
    none_fit: bool
    confidence: float
    reason: str
    constraints: list[dict[str, Any]] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)
    calibrated: bool = False
    """``confidence`` is the offline router's calibrated probability that the decision is right
    (:mod:`rlar.routing.confidence`), not a language model's own say: selective routing reads it."""
    why: str = ""
    """The offline router's confidence in words (the nearest labelled formats, what lowers it)."""
    threshold: float | None = None
    """Selective routing's threshold fitted with the calibrated confidence (its correctness model's)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "tools": [t.to_dict() for t in self.tools],
            "none_fit": self.none_fit,
            "confidence": self.confidence,
            "calibrated": self.calibrated,
            "why": self.why,
            "threshold": self.threshold,
            "reason": self.reason,
            "constraints": list(self.constraints),
            "provenance": dict(self.provenance),
        }


def parse_route(reply: AgentReply, candidates: Sequence[ToolSpec]) -> RouteAnswer:
    """The decision in ``reply``; ``ok=False`` (with the reason) when there is no usable one."""
    prov = reply.provenance()
    if not reply.ok:
        return RouteAnswer(False, [], False, 0.0, f"agent {reply.status}: {reply.reason}", provenance=prov)
    call = reply.call(CHOOSE_TOOL.name)
    if call is None:
        return RouteAnswer(
            False, [], False, 0.0, "the agent did not call choose_reward_tools", provenance=prov
        )
    data = call.input
    by_name = {s.name: s for s in candidates}
    chosen: list[ToolRef] = []
    unknown: list[str] = []
    for item in data.get("tools") or []:
        if not isinstance(item, Mapping):
            continue
        name = str(item.get("name", ""))
        spec = by_name.get(name)
        try:
            weight = float(item.get("weight", 1.0))
        except (TypeError, ValueError):
            weight = 0.0
        if spec is None:
            unknown.append(name)
            continue
        if weight > 0 and all(c.tool != name for c in chosen):
            chosen.append(spec.ref(weight))
    total = sum(c.weight for c in chosen)
    chosen = [dataclasses.replace(c, weight=round(c.weight / total, 6)) for c in chosen]
    try:
        confidence = min(1.0, max(0.0, float(data.get("confidence", 0.0))))
    except (TypeError, ValueError):
        confidence = 0.0
    reason = str(data.get("reason", ""))[:500]
    if unknown:
        reason += f" (ignored unregistered tools: {', '.join(unknown)[:200]})"
    none_fit = bool(data.get("none_fit")) or not chosen
    if none_fit:
        chosen = []
    cons = [dict(c) for c in data.get("constraints") or [] if isinstance(c, Mapping) and "rule" in c]
    prov["confidence"] = confidence
    # Only the offline router's confidence is calibrated; a model may say anything about its own.
    offline = reply.backend == "offline"
    calibrated = offline and bool(data.get("calibrated"))
    why = str(data.get("why", ""))[:500] if offline else ""
    threshold = data.get("threshold") if calibrated else None
    threshold = float(threshold) if isinstance(threshold, int | float) and 0 <= threshold <= 1 else None
    return RouteAnswer(True, chosen, none_fit, confidence, reason, cons, prov, calibrated, why, threshold)
