"""The write → validate → retry loop of the code agent, independent of the bus (the synthesizer actor wraps it).

``synthesize(task, agent, run_code)``:

1. reads which clauses of the task's instruction can be checked (:meth:`SynthesisTask.coverage`); with
   ``partial = "refuse"`` (the default) a task with clauses nobody understood fails at once, naming them
   (``refused_partial``): nothing rewards training that the system cannot vouch for;
2. asks the agent for probes written from the task description alone (the second route,
   :mod:`rlar.synthesis.second_route`), then builds the probe set once (:func:`rlar.synthesis.probes.make_probes`:
   dataset probes, probes from our reading, the second route's); a task whose probes cannot be built fails at
   once with the reason (nothing could be validated). With ``refuse``, every constraint of our reading must also
   be vouched for by a route that is not that reading: the offline second reading read the same rule
   (``rule/per``), or a model wrote the probes, or the user gave labelled examples (``task.labelled``, which
   the validation requires the verifier to score exactly as labelled); else ``refused_unvouched``, naming the
   constraints only our reading saw;
3. up to ``max_attempts`` times: asks the agent for a draft (with every earlier rejection as feedback), and
   validates it in the sandbox (:func:`rlar.synthesis.validate.validate`);
4. returns a :class:`SynthesisOutcome` holding the sealed spec of the first draft that passed (its validation
   record in ``spec.validation``, how it was made in ``spec.provenance``, its coverage in
   ``spec.params["coverage"]``: ``full`` or the clauses it does not check) — or none — and every attempt with
   its code and the reason it was rejected.

A validation that failed for infrastructure reasons (sandbox unreachable) ends the loop without counting
against the candidate. The agent's token usage and cost are summed into the provenance.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bus.subjects import safe_token
from rlar.agent.base import Agent, Usage
from rlar.constraints.vocabulary import describe, from_metadata
from rlar.sandbox_client import RunCode
from rlar.synthesis.compose import SynthesisTask
from rlar.synthesis.drafting import Attempt, parse_draft, synthesis_request
from rlar.synthesis.probes import make_probes
from rlar.synthesis.second_route import constraint_key, parse_probes, probes_request, vouched_keys
from rlar.synthesis.validate import ValidationPolicy, validate
from rlar.tools.base import ToolSpec
from rlar.tools.synthesized import synthesized_spec

__all__ = ["AttemptRecord", "SynthesisOutcome", "synthesize", "tool_name_for"]


@dataclass(slots=True)
class AttemptRecord:
    attempt: int
    passed: bool
    reason: str
    code: str = ""
    code_sha256: str = ""
    rationale: str = ""
    validation: dict[str, Any] = field(default_factory=dict)
    agent: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "attempt": self.attempt,
            "passed": self.passed,
            "reason": self.reason,
            "code": self.code,
            "code_sha256": self.code_sha256,
            "rationale": self.rationale,
            "validation": self.validation,
            "agent": self.agent,
        }


@dataclass(slots=True)
class SynthesisOutcome:
    spec: ToolSpec | None
    attempts: list[AttemptRecord]
    reason: str
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    wall_s: float = 0.0
    coverage: dict[str, Any] = field(default_factory=dict)
    category: str = ""
    """Why it ended (the synthesis report's columns): registered_full | registered_partial | refused_partial |
    refused_unvouched | no_probes | no_draft | rejected_<check> | infrastructure."""

    @property
    def ok(self) -> bool:
        return self.spec is not None


def tool_name_for(task: SynthesisTask) -> str:
    """``synth-<task>-<signature prefix>``: stable per kind of query, so a re-synthesis is a new version."""
    base = safe_token(task.task or task.task_type or "task")[:40]
    sig = (task.signature or hashlib.sha256(task.description.encode()).hexdigest())[:10]
    return f"synth-{base}-{sig}"


def _coverage_note(coverage: dict[str, Any]) -> str:
    if coverage.get("full"):
        return " Checks every clause of the instruction."
    left = "; ".join(repr(u["clause"]) for u in coverage.get("unchecked", []))
    return f" PARTIAL: checks {coverage.get('checked', 0)} of {coverage.get('clauses', 0)} clauses; not checked: {left}"


async def synthesize(
    task: SynthesisTask,
    agent: Agent,
    run_code: RunCode,
    *,
    max_attempts: int = 3,
    policy: ValidationPolicy | None = None,
    on_attempt: Callable[[AttemptRecord], Awaitable[None]] | None = None,
    prior: Sequence[Attempt] = (),
    partial: str = "refuse",
    extra_params: Mapping[str, Any] | None = None,
) -> SynthesisOutcome:
    """See the module docstring. ``prior``: earlier rejections to start from (e.g. a verifier that was
    registered before and then quarantined), shown to the agent like its own failed attempts. ``partial``:
    ``refuse`` (default) a verifier that leaves clauses unchecked or that no independent route vouches for, or
    ``register`` it marked partial (with its coverage)."""
    t0 = time.perf_counter()
    usage = Usage()
    cost = 0.0
    records: list[AttemptRecord] = []
    constraints = task.all_constraints()
    coverage = task.coverage()

    def done(spec: ToolSpec | None, reason: str, category: str) -> SynthesisOutcome:
        return SynthesisOutcome(
            spec, records, reason, usage, cost, time.perf_counter() - t0, coverage, category
        )

    if not coverage["full"] and partial == "refuse":
        why = "; ".join(f"{u['clause']!r} ({u['why']})" for u in coverage["unchecked"]) or "nothing checkable"
        return done(None, f"refused: the verifier would not check every clause: {why}", "refused_partial")
    independent: list[dict[str, Any]] = []
    vouched: set[str] | None = None
    if not task.reference_based:
        req = probes_request(task.instruction(), task.examples)
        req.context["primary"] = constraints  # the offline route defers to it only where it reads nothing
        reply = await agent.ask(req)
        usage.add(reply.usage)
        cost += reply.cost_usd
        src = "agent" if reply.backend != "offline" else "second_route"
        independent = [{**p, "source": src} for p in parse_probes(reply)]
        vouched = vouched_keys(reply) if src == "second_route" else None
    if partial == "refuse" and vouched is not None and not task.labelled:
        # Rules the records declare themselves (``format_rules``) are the data's word, not our reading's.
        declared = {constraint_key(c) for c in from_metadata((task.examples or [{}])[0].get("metadata"))}
        alone = [c for c in constraints if constraint_key(c) not in vouched | declared]
        if alone:
            coverage["unvouched"] = [describe(c) for c in alone]
            why = "; ".join(describe(c) for c in alone)
            return done(
                None,
                "refused: no reading independent of the verifier's own (second reading, model probes, labelled"
                f" examples) vouches for: {why}",
                "refused_unvouched",
            )
    probes = make_probes(
        task.examples,
        constraints,
        description=task.description,
        reference_based=task.reference_based,
        independent=independent,
        labelled=task.labelled,
    )
    if not probes.usable:
        reason = "cannot build probes: " + ("; ".join(probes.problems) or "no examples")
        return done(None, reason, "no_probes")
    history: list[Attempt] = list(prior)
    for attempt in range(max_attempts):
        reply = await agent.ask(synthesis_request(task, history))
        usage.add(reply.usage)
        cost += reply.cost_usd
        draft, why, call_id = parse_draft(reply)
        prov = reply.provenance()
        if draft is None:
            rec = AttemptRecord(attempt, False, f"no draft: {why}", agent=prov)
            records.append(rec)
            if on_attempt:
                await on_attempt(rec)
            if reply.status in ("error", "unsupported") and not reply.tool_calls:
                # The agent cannot answer (offline composer has no plan, remote API failing): stop here.
                break
            history.append(Attempt(draft={}, reason=why, call_id=call_id))
            continue
        result = await validate(draft.code, draft.score_range, probes, run_code, policy)
        rec = AttemptRecord(
            attempt,
            result.passed,
            result.reason,
            code=draft.code,
            code_sha256=hashlib.sha256(draft.code.encode()).hexdigest(),
            rationale=draft.rationale,
            validation=result.to_dict(),
            agent=prov,
        )
        records.append(rec)
        if on_attempt:
            await on_attempt(rec)
        if result.infrastructure:
            return done(None, f"validation impossible: {result.reason}", "infrastructure")
        if result.passed:
            checks = (
                draft.blocks.get("checks") if isinstance(draft.blocks.get("checks"), list) else constraints
            )
            spec = synthesized_spec(
                name=tool_name_for(task),
                description=(
                    f"Synthesised verifier for {task.task or task.task_type or 'a task'}: {task.description[:300]}"
                    f" Written by the {reply.backend} agent ({reply.model}); {draft.rationale[:200]}"
                    + _coverage_note(coverage)
                ),
                code=draft.code,
                score_range=draft.score_range,
                task_types=[t for t in (task.task_type, task.task) if t],
                answer_formats=[task.answer_format] if task.answer_format else [],
                params={
                    "needs_reference": draft.needs_reference,
                    "signature": task.signature,
                    "constraints": checks or [],
                    "coverage": coverage,
                    **{k: v for k, v in (extra_params or {}).items() if v is not None},
                },
                provenance={
                    "origin": "synthesized",
                    "author": reply.backend,
                    "model": reply.model,
                    "source": f"request {task.request_id}",
                    "request_id": task.request_id,
                    "signature": task.signature,
                    "task": task.task,
                    "instruction": task.instruction()[:2000],
                    "attempts": attempt + 1,
                    "prompt_hash": reply.prompt_hash,
                    "usage": usage.to_dict(),
                    "cost_usd": round(cost, 6),
                    "rejected": [
                        {"attempt": r.attempt, "reason": r.reason, "code_sha256": r.code_sha256}
                        for r in records[:-1]
                    ],
                    "rationale": draft.rationale[:500],
                },
                validation=result.to_dict(),
            )
            kind = "registered_full" if coverage["full"] else "registered_partial"
            return done(spec, result.reason, kind)
        history.append(Attempt(draft=draft.to_tool_input(), reason=result.reason, call_id=call_id))
    last = records[-1].reason if records else "no attempt"
    drafted = [r for r in records if r.code]
    category = "rejected_" + drafted[-1].reason.split(":")[0] if drafted else "no_draft"
    return done(None, f"no candidate passed after {len(records)} attempt(s); last: {last}", category)
