"""Routing as an agent question: the task signature, the request the agent reads, and the decision it returns.

``RoutingQuery`` is one kind of query: the task's domain, type, answer format, description and data source,
plus one sample (query text, reference, metadata) to show the shape of the reference. ``signature()`` hashes
the fields that define the kind — domain, task type, answer format, data source and the description (which
carries the constraints) — so the agent is asked once per kind, not per sample; the task name joins only when
all of them are empty.

For a query without a reference, the checkable constraints read from the query text and the record's
``format_rules`` join the signature too: IFEval-style data states different constraints per prompt, and each
set needs its own verifier.

``routing_request(query, candidates)`` builds the :class:`~rlar.agent.base.AgentRequest`: a system prompt, a
user message listing the candidate reward tools and the task, and the forced tool ``choose_reward_tools``
whose input is the decision. ``context`` carries the same facts as data for the offline backend.
``parse_route(reply, candidates)`` turns either backend's reply into a :class:`RouteAnswer`, keeping only
registered tool names, normalising weights to sum to 1 and recording provenance (backend, model, prompt hash,
confidence, cost).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rlar.agent.base import AgentReply, AgentRequest, AgentTool
from rlar.tasks.base import query_text
from rlar.tasks.constraints import canonical, constraints_key, extract_constraints, from_metadata
from rlar.tools.base import ToolSpec

__all__ = [
    "CHOOSE_TOOL",
    "Decision",
    "RouteAnswer",
    "RoutingQuery",
    "parse_route",
    "routing_request",
]


@dataclass(slots=True)
class RoutingQuery:
    task: str
    query: str
    reference: Any = None
    domain: str = ""
    task_type: str = ""
    answer_format: str = ""
    description: str = ""
    data_source: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_prompt(cls, p: Any) -> RoutingQuery:
        """From a ``bus.messages.Prompt``."""
        return cls(
            task=p.task,
            query=query_text(p.prompt),
            reference=p.reference,
            domain=p.domain,
            task_type=p.task_type,
            answer_format=p.answer_format,
            description=p.description,
            data_source=p.data_source,
            metadata=dict(p.metadata),
        )

    @classmethod
    def from_record(cls, r: Mapping[str, Any]) -> RoutingQuery:
        """From a JSON record ``{task, query, reference, metadata, domain?, task_type?, answer_format?,
        description?, data_source?}`` (missing type fields may also sit inside ``metadata``)."""
        meta = dict(r.get("metadata") or {})

        def pick(key: str) -> str:
            return str(r.get(key) or meta.get(key) or "")

        return cls(
            task=str(r.get("task") or ""),
            query=query_text(r.get("query", r.get("prompt", ""))),
            reference=r.get("reference"),
            domain=pick("domain"),
            task_type=pick("task_type"),
            answer_format=pick("answer_format"),
            description=pick("description"),
            data_source=pick("data_source"),
            metadata=meta,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "query": self.query,
            "reference": self.reference,
            "domain": self.domain,
            "task_type": self.task_type,
            "answer_format": self.answer_format,
            "description": self.description,
            "data_source": self.data_source,
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RoutingQuery:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})  # type: ignore[attr-defined]

    def signature_fields(self) -> dict[str, str]:
        fields = {
            "domain": self.domain,
            "task_type": self.task_type,
            "answer_format": self.answer_format,
            "data_source": self.data_source,
            "description": self.description,
        }
        if not any(fields.values()):
            fields["task"] = self.task
        if self.reference is None:
            # Without a reference the score comes from checkable constraints; when the query or the record
            # states its own (IFEval-style data), each distinct set is its own kind and needs its own verifier.
            own = canonical([*extract_constraints(self.query), *from_metadata(self.metadata)])
            if own:
                fields["constraints"] = constraints_key(own)
        return fields

    def signature(self) -> str:
        """sha256 (24 hex chars) of ``signature_fields()``: one routing decision per kind of query."""
        text = json.dumps(self.signature_fields(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


CHOOSE_TOOL = AgentTool(
    name="choose_reward_tools",
    description=(
        "Record which registered reward tools should score responses to this kind of query, with weights, or"
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
                    ' {"rule": "bullets", "min": 3, "max": 3} or {"rule": "item_words", "max": 9}.'
                ),
                "items": {"type": "object"},
            },
        },
        "required": ["tools", "none_fit", "confidence", "reason"],
    },
)

_SYSTEM = (
    "You route training queries of a reinforcement-learning run to reward tools. For one kind of query you"
    " choose the registered tool (or a weighted set) that scores responses most reliably, given the task's"
    " description, answer format and the shape of its reference. Prefer deterministic verifiers over judges"
    " when they can check the answer. A tool that needs a reference cannot score a task without one. If no"
    " candidate can check what the task demands (for example explicit format constraints no tool is configured"
    " for), set none_fit and list the checkable constraints. Answer only by calling choose_reward_tools."
)


def _describe(spec: ToolSpec) -> str:
    needs = spec.params.get("needs_reference")
    extra = "" if needs is None else f"; needs a reference: {'yes' if needs else 'no'}"
    return (
        f"- {spec.name} (v{spec.version}, kind {spec.kind}): {spec.description} Task types:"
        f" {', '.join(spec.task_types) or '-'}; answer formats: {', '.join(spec.answer_formats) or '-'}{extra}"
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
        q.reference
        if isinstance(q.reference, str)
        else json.dumps(q.reference, ensure_ascii=False, default=str)
    )
    meta = {k: v for k, v in q.metadata.items() if k not in ("canonical_solution",)}
    user = "\n".join(
        [
            "# Candidate reward tools",
            *(_describe(s) for s in candidates),
            "",
            "# The kind of query",
            f"task: {q.task}; domain: {q.domain or '-'}; task type: {q.task_type or '-'}; answer format:"
            f" {q.answer_format or '-'}; data source: {q.data_source or '-'}",
            f"description: {q.description or '-'}",
            f"example query: {q.query[:1500]}",
            f"example reference: {(ref or 'none')[:800]}",
            f"example metadata: {json.dumps(meta, ensure_ascii=False, default=str)[:800]}",
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
    """A routing decision. ``tools`` entries: ``{"tool", "version", "kind", "weight"}`` (weights sum to 1)."""

    ok: bool
    tools: list[dict[str, Any]]
    none_fit: bool
    confidence: float
    reason: str
    constraints: list[dict[str, Any]] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "tools": list(self.tools),
            "none_fit": self.none_fit,
            "confidence": self.confidence,
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
    chosen: list[dict[str, Any]] = []
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
        if weight > 0 and all(c["tool"] != name for c in chosen):
            chosen.append(
                {"tool": spec.name, "version": spec.version, "kind": str(spec.kind), "weight": weight}
            )
    total = sum(c["weight"] for c in chosen)
    for c in chosen:
        c["weight"] = round(c["weight"] / total, 6)
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
    return RouteAnswer(True, chosen, none_fit, confidence, reason, cons, prov)


@dataclass(slots=True)
class Decision:
    """One routing decision for one signature: what the router stores in KV ``rlar_decisions`` (key = the
    signature), publishes as a ``RouteDecision`` and copies into each routed prompt's ``route``.

    ``state``: ``routed`` (tools chosen by the agent), ``pending`` (no tool fits; a new tool was requested
    and prompts wait for it), ``synthesized`` (routed to the tool made for the request), ``fallback`` (the
    wait ended without a tool; routed to the declared fallback), ``unroutable`` (no tool and no fallback:
    prompts are dead-lettered). ``expires_at`` (0: never) makes a decision taken without the agent (it
    failed) be asked again later.
    """

    signature: str
    task: str
    state: str
    tools: list[dict[str, Any]] = field(default_factory=list)
    reason: str = ""
    confidence: float = 0.0
    backend: str = ""
    model: str = ""
    prompt_hash: str = ""
    cost: dict[str, Any] = field(default_factory=dict)
    constraints: list[dict[str, Any]] = field(default_factory=list)
    request_id: str = ""
    requested_at: float = 0.0
    decided_at: float = 0.0
    expires_at: float = 0.0
    fields: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}  # type: ignore[attr-defined]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Decision:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})  # type: ignore[attr-defined]

    def to_json(self) -> bytes:
        return json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes) -> Decision:
        return cls.from_dict(json.loads(data))

    def route_info(self) -> dict[str, Any]:
        """Provenance copied into ``Prompt.route``."""
        return {
            "signature": self.signature,
            "state": self.state,
            "backend": self.backend,
            "model": self.model,
            "prompt_hash": self.prompt_hash,
            "confidence": self.confidence,
            "cost": dict(self.cost),
            "reason": self.reason,
            "request_id": self.request_id,
            "decided_at": self.decided_at,
        }

    def uses(self, name: str, version: int | None = None) -> bool:
        return any(
            t["tool"] == name and (version is None or int(t["version"]) == int(version)) for t in self.tools
        )
