"""The life of a routing decision as pure transitions: a :class:`~rlar.routing.Decision` and an event in,
the next decision and what to do about it (a :class:`Transition`) out.

Nothing here does I/O. The router (:mod:`actors.router`) asks the agent, the registry, the hack prober and
the KV bucket, feeds what they said to the transition of the event, and performs the transition's
actions (:meth:`actors.router.Router._apply`): store the decision in KV (or keep it in memory only), count
it, announce it, send a tool request, release the prompts held for its signature.

States (``Decision.state``) and the events that move them::

    (no decision)  --answer: tools chosen-->            routed
                   --answer: none fits, tools asked-->  pending      (request_tool)
                   --answer: none fits, none asked-->   fallback | abstain | unroutable
                   --calibrated answer below the
                     selective threshold-->             fallback | abstain, memory only (see below)
                   --agent failed-->                    fallback, memory only, expires after agent_retry_s
                                                        (no fallback declared: NoFallback, nothing kept)
    pending        --a tool made for its request-->     synthesized | canary (shadow beside the fallback)
                   --the probes refuse that tool-->     fallback | abstain | unroutable
                   --wait_s passed / synthesis failed-> fallback | abstain | unroutable
    fallback       --a tool made for its request-->     synthesized | canary
    canary         --promoted-->                        synthesized
    any            --a tool it uses quarantined-->      dropped (the next prompt decides afresh)
    unroutable     --expires_at (wait_s) passed-->      dropped (decided afresh)

A fallback decision's state depends on what the task declares: ``fallback`` (its fallback tools),
``abstain`` (none, and synthesis refused because no verifier checks every clause: its samples abstain),
``unroutable`` (none: the prompts are dead-lettered, and the kind is decided afresh after ``wait_s``).

Selective routing (:func:`unsure`): an answer that chooses tools, whose confidence is calibrated (the offline
router's, :mod:`rlar.routing.confidence`) and below the threshold (``Policy.min_confidence``, else the one the answer
carries: its correctness model's) is not taken. The router first asks its model agent, when one is configured
(its answer is then decided as any other; :func:`escalated`); else :func:`on_agent_answer` routes the kind to the
task's declared fallback, or with none its samples abstain — a decision kept in memory only, so that a restarted
router with a fallback declared since routes the kind there — and the decision's reason names the confidence,
the threshold, the nearest labelled formats and the line of config that declares a tool for the task
(:func:`pin_line`).

The quarantine policy of a suspect tool (:func:`suspect_action`) is here too: what the router does when
:mod:`rlar.routing.health` finds a tool in use suspect.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from bus.messages import RouteDecision, ToolRef, ToolRequest
from rlar.agent.base import AgentReply
from rlar.routing.decision import Decision
from rlar.routing.query import RoutingQuery
from rlar.routing.request import RouteAnswer
from rlar.tools.base import ToolSpec

__all__ = [
    "AWAITING",
    "NoFallback",
    "Policy",
    "Transition",
    "announcement",
    "awaiting_tool",
    "delivery",
    "escalated",
    "fall_back",
    "in_canary_for",
    "is_live",
    "made_for",
    "needs_canary_check",
    "needs_fallback",
    "on_agent_answer",
    "on_tool_made",
    "on_tool_refused",
    "on_wait_over",
    "overdue",
    "pin_line",
    "prompt_action",
    "suspect_action",
    "synthesis_failed",
    "tool_request",
    "unsure",
    "unsure_reason",
    "using",
]

AWAITING = ("pending", "fallback")
"""States a tool made for the decision's request resolves."""

PromptAction = Literal["route", "dead_letter", "hold", "expire"]
SuspectAction = Literal["quarantine", "warn"]


@dataclass(frozen=True, slots=True)
class Policy:
    """The router settings the transitions read."""

    wait_s: float
    """How long prompts of a pending kind wait for a new tool; also when an unroutable kind is retried."""
    agent_retry_s: float
    """How long a fallback taken because the agent failed lasts before the agent is asked again."""
    request_tools: bool
    """Whether a kind no tool fits gets a tool request (synthesis or retrieval on)."""
    min_confidence: float | None = None
    """Selective routing's threshold on calibrated confidences (None: the one each answer carries)."""


@dataclass(frozen=True, slots=True)
class Transition:
    """The next decision and the actions it asks for, in the order the router performs them: store (or
    remember), count, announce, request a tool, release the held prompts."""

    decision: Decision
    store: bool = True
    """Write it to KV ``rlar_decisions`` (False: keep it in memory only; it expires)."""
    count: str = ""
    """The counter to add one to ("" for none)."""
    request_tool: bool = False
    """Send the tool request for its signature (a new ``pending`` decision)."""
    release: bool = False
    """Route (or dead-letter) the prompts held for its signature."""


class NoFallback(RuntimeError):
    """The agent failed and the task declares no fallback: nothing is decided, the prompt is redelivered."""


# -- reading a decision -----------------------------------------------------------------------------------
def is_live(d: Decision, now: float) -> bool:
    """Not expired (``expires_at`` 0 never expires)."""
    return not (d.expires_at and d.expires_at <= now)


def overdue(d: Decision, now: float, policy: Policy) -> bool:
    """A pending decision whose tool did not come within ``wait_s`` of the request."""
    return d.state == "pending" and now >= d.requested_at + policy.wait_s


def delivery(d: Decision) -> Literal["route", "dead_letter"]:
    """What a prompt of a decided kind gets: dead-lettered when unroutable, else routed (with no tool when
    it abstains)."""
    return "dead_letter" if d.state == "unroutable" else "route"


def prompt_action(d: Decision, now: float, policy: Policy) -> PromptAction:
    """What the router does with a prompt whose kind has decision ``d``: ``expire`` the decision first (its
    wait is over; then :func:`delivery` of the new one), ``hold`` the prompt (pending), or :func:`delivery`."""
    if overdue(d, now, policy):
        return "expire"
    if d.state == "pending":
        return "hold"
    return delivery(d)


def made_for(spec: ToolSpec, d: Decision) -> bool:
    """Whether ``spec`` was made for ``d``'s tool request (its provenance names the request, or its params
    the signature)."""
    return spec.provenance.get("request_id") == d.request_id or spec.params.get("signature") == d.signature


def awaiting_tool(decisions: Iterable[Decision]) -> list[Decision]:
    """Decisions a newly registered tool may resolve: pending ones, and fallbacks taken while waiting (the
    tool made for the request replaces the fallback)."""
    return [d for d in decisions if d.state in AWAITING and d.request_id]


def in_canary_for(decisions: Iterable[Decision], name: str, version: int) -> list[Decision]:
    """Decisions shadowing tool ``name`` ``version`` in its canary (its promotion routes them to it)."""
    return [d for d in decisions if d.state == "canary" and d.uses(name, version)]


def using(decisions: Iterable[Decision], name: str, version: int | None) -> list[Decision]:
    """Decisions routing to ``name`` (``version``, or any): dropped when it is quarantined or disabled."""
    return [d for d in decisions if d.uses(name, version)]


def synthesis_failed(d: Decision | None, request_id: Any) -> bool:
    """Whether a ``synthesis_failed`` event for ``request_id`` ends ``d``'s wait."""
    return d is not None and d.state == "pending" and request_id == d.request_id


# -- transitions ------------------------------------------------------------------------------------------
def fall_back(d: Decision, why: str, tools: Sequence[ToolRef], policy: Policy, now: float) -> Decision:
    """``d`` (pending) given up on for ``why``: routed to the task's resolved fallback ``tools``; without
    any, its samples abstain after a refusal (``": refused: "`` in ``why``: no verifier checks every
    clause; the prompts still train) or its prompts are dead-lettered and the kind is decided afresh after
    ``wait_s``."""
    tools = list(tools)
    refused = ": refused: " in why
    state = "fallback" if tools else ("abstain" if refused else "unroutable")
    if tools:
        outcome = f"fallback to {', '.join(t.tool for t in tools)}"
    elif refused:
        outcome = "no fallback declared: its samples abstain"
    else:
        outcome = "no fallback declared"
    return Decision(
        signature=d.signature,
        task=d.task,
        state=state,
        tools=tools,
        reason=f"{why}; {outcome} ({d.reason})"[:500],
        confidence=0.0,
        backend=d.backend,
        model=d.model,
        prompt_hash=d.prompt_hash,
        cost=d.cost,
        constraints=d.constraints,
        request_id=d.request_id,
        requested_at=d.requested_at,
        decided_at=now,
        # Without any tool, ask again later (a new request may succeed where this one did not).
        expires_at=0.0 if tools or refused else now + policy.wait_s,
        fields=d.fields,
        probes=d.probes,
    )


def unsure(ans: RouteAnswer, policy: Policy) -> float | None:
    """The threshold that ``ans`` falls below (selective routing: it is not taken as it is), or None. Only a
    calibrated confidence is compared, and only for an answer that chooses tools: a failed one has its own path,
    and "no tool fits" gives no reward of its own (a tool made for it is vouched for and probed before it scores;
    without one the kind takes the fallback or gets none)."""
    if not ans.ok or not ans.calibrated or ans.none_fit:
        return None
    threshold = policy.min_confidence if policy.min_confidence is not None else ans.threshold
    return threshold if threshold is not None and ans.confidence < threshold else None


def pin_line(task: str, tool: str) -> str:
    """The line of config (in ``[router]``) that declares ``tool`` for ``task``: its kinds the router is
    unsure of are scored with it."""
    return f'fallback.{json.dumps(task)} = [{{ tool = "{tool}" }}]'


def unsure_reason(ans: RouteAnswer, threshold: float, task: str, outcome: str) -> str:
    """Why an unsure answer (one that chose tools) was not taken, where its kind goes (``outcome``), the line of
    config that declares the tool it chose for ``task``, the confidence in words, and what it chose — in that
    order, so that a shortened reason keeps the first parts."""
    choice = ", ".join(t.tool for t in ans.tools)
    return (
        f"low confidence {ans.confidence:.2f} < threshold {threshold:.2f}: {outcome}; to declare a tool for"
        f" this task, in [router]: {pin_line(task, ans.tools[0].tool)}; {ans.why}; it would have chosen {choice}"
    )


def escalated(model_answer: RouteAnswer, offline: RouteAnswer, threshold: float) -> RouteAnswer:
    """The model agent's answer, asked because ``offline`` was unsure: its reason says so."""
    note = f"asked the model agent: offline confidence {offline.confidence:.2f} < {threshold:.2f} ({offline.why})"
    return dataclasses.replace(model_answer, reason=f"{model_answer.reason} [{note}]"[:500])


def needs_fallback(ans: RouteAnswer, policy: Policy) -> bool:
    """Whether :func:`on_agent_answer` needs the task's fallback tools for ``ans`` (the router resolves
    them in the registry only then)."""
    return not ans.ok or (ans.none_fit and not policy.request_tools) or unsure(ans, policy) is not None


def on_agent_answer(
    ans: RouteAnswer,
    *,
    signature: str,
    task: str,
    fields: Mapping[str, str],
    reply: AgentReply,
    probes: Sequence[Mapping[str, Any]],
    fallback: Sequence[ToolRef],
    policy: Policy,
    now: float,
) -> Transition:
    """The first decision of a signature, from the agent's (probed) answer. ``fallback``: the task's
    resolved fallback tools, needed only when :func:`needs_fallback`. Raises :class:`NoFallback` when the
    agent failed and there is none. An :func:`unsure` answer is not taken: its kind goes to ``fallback``, or
    its samples abstain (in memory only; counted as ``decisions_unsure``)."""
    base: dict[str, Any] = dict(
        signature=signature,
        task=task,
        backend=reply.backend,
        model=reply.model,
        prompt_hash=reply.prompt_hash,
        cost=ans.provenance.get("cost", {}),
        decided_at=now,
        fields=dict(fields),
        probes=[dict(p) for p in probes],
    )
    if not ans.ok:
        if not fallback:
            raise NoFallback(f"agent failed and task {task!r} declares no fallback: {ans.reason}")
        # Memory only, and it expires: the agent is asked again later.
        d = Decision(
            **base,
            state="fallback",
            tools=list(fallback),
            reason=f"agent failed ({ans.reason}); fallback",
            expires_at=now + policy.agent_retry_s,
        )
        return Transition(d, store=False)
    threshold = unsure(ans, policy)
    if threshold is not None:
        outcome = (
            f"fallback to {', '.join(t.tool for t in fallback)}"
            if fallback
            else "no fallback declared: its samples ABSTAIN (masked, no reward)"
        )
        d = Decision(
            **base,
            state="fallback" if fallback else "abstain",
            tools=list(fallback),
            reason=unsure_reason(ans, threshold, task, outcome)[:1000],
            confidence=ans.confidence,
            why=ans.why,
        )
        return Transition(d, store=False, count="decisions_unsure")
    if not ans.none_fit:
        d = Decision(
            **base, state="routed", tools=ans.tools, reason=ans.reason, confidence=ans.confidence, why=ans.why
        )
        return Transition(d, count="decisions")
    if policy.request_tools:
        d = Decision(
            **base,
            state="pending",
            reason=ans.reason,
            confidence=ans.confidence,
            why=ans.why,
            constraints=ans.constraints,
            request_id=f"{signature}.{int(now)}",
            requested_at=now,
        )
        return Transition(d, count="decisions", request_tool=True)
    pending = Decision(**base, state="pending", reason=ans.reason, confidence=ans.confidence)
    return Transition(
        fall_back(pending, "no tool fits and synthesis is off", fallback, policy, now), count="decisions"
    )


def on_wait_over(
    d: Decision, why: str, fallback: Sequence[ToolRef], policy: Policy, now: float
) -> Transition:
    """A pending decision's wait ended without a tool (``wait_s`` passed, or the synthesizer failed)."""
    new = fall_back(d, why, fallback, policy, now)
    return Transition(new, count=f"decisions_{new.state}", release=True)


def on_tool_refused(
    d: Decision,
    spec: ToolSpec,
    refusal: str,
    probes: Sequence[Mapping[str, Any]],
    fallback: Sequence[ToolRef],
    policy: Policy,
    now: float,
) -> Transition:
    """The tool made for ``d``'s request gave a hack probe its maximum (``refusal``: which, as
    :meth:`~rlar.routing.probes.ProbeReport.short`): it is not eligible, the kind falls back."""
    why = (
        f"tool {spec.name} v{spec.version} made for request {d.request_id} is not eligible:"
        f" hack probes got its maximum ({refusal})"
    )
    new = dataclasses.replace(fall_back(d, why, fallback, policy, now), probes=[dict(p) for p in probes])
    return Transition(new, count=f"decisions_{new.state}", release=True)


def on_tool_made(
    d: Decision, spec: ToolSpec, *, shadow_beside: Sequence[ToolRef] | None, now: float
) -> Transition:
    """A tool made for ``d``'s request arrived (or its canary passed): ``synthesized`` (it alone), or with
    ``shadow_beside`` (the task's fallback tools; still in canary) ``canary``: those tools score and the
    new one scores beside them with weight 0."""
    validation = spec.validation or {}
    if shadow_beside is None:
        state, tools = "synthesized", [spec.ref()]
    else:
        state, tools = "canary", [*shadow_beside, spec.ref(0.0)]
    new = Decision(
        signature=d.signature,
        task=d.task,
        state=state,
        tools=tools,
        reason=f"tool {spec.name} v{spec.version} made for request {d.request_id}: {validation.get('reason', '')}"[
            :500
        ],
        confidence=float(validation.get("pairwise") or 0.0),
        backend=str(spec.provenance.get("author", d.backend)),
        model=str(spec.provenance.get("model", d.model)),
        prompt_hash=str(spec.provenance.get("prompt_hash", d.prompt_hash)),
        cost=d.cost,
        constraints=d.constraints,
        request_id=d.request_id,
        requested_at=d.requested_at,
        decided_at=now,
        fields=d.fields,
        probes=d.probes,
    )
    return Transition(new, count="synthesized_routes", release=True)


# -- what the actions send --------------------------------------------------------------------------
def announcement(d: Decision) -> RouteDecision:
    """The ``RouteDecision`` announcing ``d`` on ``rlar.tools.decisions`` (its reason prefixed with the
    state)."""
    return RouteDecision(
        signature=d.signature,
        task=d.task,
        tools=list(d.tools),
        backend=d.backend,
        confidence=d.confidence,
        model=d.model,
        prompt_hash=d.prompt_hash,
        cost=dict(d.cost),
        reason=f"[{d.state}] {d.reason}"[:500],
        fallback=d.state == "fallback",
        probes=list(d.probes),
    )


def tool_request(d: Decision, q: RoutingQuery, held: Sequence[RoutingQuery]) -> ToolRequest:
    """The ``ToolRequest`` of pending ``d``: what the task declares (from ``q``, the query that made the
    decision), the constraints the agent read, and as examples the ``held`` queries (``q`` alone when none
    is held)."""
    examples = [{"query": ex.query, "reference": ex.reference, "metadata": ex.metadata} for ex in held or [q]]
    return ToolRequest(
        request_id=d.request_id,
        signature=d.signature,
        task=q.task,
        description=q.description or q.query,
        domain=q.domain,
        task_type=q.task_type,
        answer_format=q.answer_format,
        examples=examples,
        constraints={"rules": d.constraints, "reason": d.reason, "data_source": q.data_source},
    )


# -- the quarantine policy ------------------------------------------------------------------------------
def needs_canary_check(*, builtin: bool, kind: str) -> bool:
    """Whether :func:`suspect_action` needs to know if the tool passed its canary (the router asks the
    registry only then): for a synthesised or retrieved tool whose scores collapsed onto one value."""
    return kind == "collapsed" and not builtin


def suspect_action(
    *, builtin: bool, kind: str, canary_passed: bool, quarantine_builtins: bool
) -> SuspectAction:
    """What the router does with a tool in use that :mod:`rlar.routing.health` found suspect (``kind``:
    the verdict's kind). ``quarantine`` it in the registry (its decisions are then dropped and their
    kinds re-routed), or only ``warn``: a built-in (unless ``quarantine_builtins``: their collapse is
    usually the policy's), and a tool that passed its canary on live samples whose scores merely collapsed
    (the policy settled; ``canary_passed`` is read only when :func:`needs_canary_check`)."""
    settled = needs_canary_check(builtin=builtin, kind=kind) and canary_passed
    if (builtin and not quarantine_builtins) or settled:
        return "warn"
    return "quarantine"
