"""The synthesizer (code agent): turns a ``ToolRequest`` into a validated, registered verifier.

Consumes the durable ``synthesizer`` on ``rlar.tools.request.synthesize`` (explicit acks; the message is kept
alive with ``in_progress()`` while the agent writes and the sandbox validates, which can take minutes).

Per request (:func:`rlar.synthesis.loop.synthesize`): build probes from the request's examples and
constraints; ask the agent (``agent`` config: Messages API or the offline block composer) for a
``reward(query, response, reference, metadata)`` module with a declared range; validate it in the sandbox —
executes, stays in range, deterministic, within the time budget, good probes above bad ones; on rejection give
the agent the reason and retry, at most ``max_attempts`` times. The first candidate that passes is
registered (``ToolRegistry.register``, which announces it on ``rlar.tools.registered``) as a ``sandbox`` tool
whose spec holds the code, the validation record and the provenance (backend, model, prompt hash, tokens,
cost, request id, rejected attempts).

Before it is written, the task's instruction is read clause by clause (:mod:`rlar.tasks.reading`): with
``partial = "refuse"`` (the default) a verifier that leaves clauses unchecked, or whose constraints no route
independent of that reading vouches for, is not registered (the request fails with ``refused_partial`` /
``refused_unvouched`` and the clauses; the router sends the task to its declared fallback — a judge — or lets
its samples abstain); ``partial = "register"`` registers it marked partial (its spec's ``params["coverage"]``
and description name those clauses). Validation needs probes independent of that reading: the agent's second
route writes some from the task description (:mod:`rlar.synthesis.second_route`), and the user's labelled
examples of the task (``labelled``, filled from ``[[tasks]] examples`` / ``examples_file``) must each be scored
as labelled.

A registered tool carries ``params["canary"]``: the router routes it in shadow (weight 0) and this actor
watches its live scores (:mod:`rlar.synthesis.canary`), then marks it ``passed`` in the registry (announced as
``promoted``: it rewards from then on) or quarantines it with the reason. Watches interrupted by a restart
start again.

Every request ends as a row of ``<run dir>/synthesis/outcomes.jsonl`` (the synthesis report,
``rlar synthesis report``), every canary verdict as a row of ``canaries.jsonl``. Every candidate — kept or
not — is appended with its code, reason and validation record to ``<run dir>/synthesis/<request id>.jsonl``;
each rejection is also an ``Event`` (``candidate_rejected``) on ``rlar.events.synthesizer``; a request that
ends without a tool is an ``Event`` ``synthesis_failed`` (the router
then falls back at once instead of waiting).

Candidate code runs only in the sandbox: the sandbox actor over the bus (``sandbox = "bus"``, default) or a
local bubblewrap jail (``sandbox = "local"``); never in this process.

A redelivered request whose tool already exists is acknowledged without work. If the registry hands back an
existing version that was quarantined (the same code was tried and failed in training), the quarantine reason
is fed back to the agent and it tries again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from pathlib import Path
from typing import Any, Literal, NamedTuple

from nats.aio.msg import Msg
from pydantic import BaseModel, ConfigDict, Field

from actors.runtime import Actor, ActorConfig
from bus import subjects, topology
from bus.client import keep_in_progress
from bus.codec import DecodeError, decode
from bus.messages import Event, RewardGroup, SampleGroup, ToolRegistered, ToolRequest
from rlar.agent.base import Agent, AgentConfig
from rlar.agent.factory import make_agent
from rlar.registry import ToolRegistry
from rlar.sandbox.schema import Limits
from rlar.sandbox_client import RunCode, bus_runner, local_runner
from rlar.synthesis.canary import Canary, CanaryPolicy, canary_params, independent_labeller, read_canary
from rlar.synthesis.compose import SynthesisTask
from rlar.synthesis.drafting import Attempt
from rlar.synthesis.loop import AttemptRecord, SynthesisOutcome, synthesize
from rlar.synthesis.report import OUTCOMES_FILE, outcome_row
from rlar.synthesis.second_route import independent_constraints
from rlar.synthesis.validate import ValidationPolicy
from rlar.tools.base import ToolSpec

log = logging.getLogger(__name__)


class ValidationConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    runs: int = Field(2, ge=1, le=5)
    repeats: int = Field(2, ge=1, le=5)
    case_timeout_s: float = Field(1.0, gt=0)
    budget_ms: float = Field(100.0, gt=0)
    min_pairwise: float = Field(0.9, ge=0, le=1)
    min_gap: float = Field(0.25, ge=0, le=1)
    require_independent: bool = True
    """Reject a candidate that no probe independent of its own reading of the task could test."""
    wall_s: float = Field(60.0, gt=0)
    """Sandbox wall clock per validation run."""

    def policy(self) -> ValidationPolicy:
        return ValidationPolicy(
            runs=self.runs,
            repeats=self.repeats,
            case_timeout_s=self.case_timeout_s,
            budget_ms=self.budget_ms,
            min_pairwise=self.min_pairwise,
            min_gap=self.min_gap,
            require_independent=self.require_independent,
            limits=Limits(test_s=self.wall_s, cpu_s=int(self.wall_s), memory_mb=512),
        )


class SynthesizerConfig(ActorConfig):
    agent: AgentConfig | None = None
    """Agent backend (``anthropic``, ``openai`` or ``offline``); None: the ``[llm] synthesizer`` endpoint,
    else anthropic when a key is set, else offline (building blocks)."""
    max_attempts: int = Field(3, ge=1, le=10)
    """Candidates per request (each rejection is fed back to the agent)."""
    sandbox: Literal["bus", "local"] = "bus"
    """Where candidates run: the sandbox actor over the bus, or a local bubblewrap jail."""
    sandbox_timeout_s: float = Field(90.0, gt=0)
    """Reply timeout for one run on the sandbox actor."""
    validation: ValidationConfig = Field(default_factory=ValidationConfig)
    concurrency: int = Field(1, ge=1)
    """Requests worked on at once."""
    partial: Literal["register", "refuse"] = "refuse"
    """A verifier that leaves clauses of the instruction unchecked (or that no independent route vouches for):
    ``refuse`` it (the router falls back to the task's declared fallback, e.g. a judge, else its samples
    abstain), or ``register`` it marked partial (its spec lists the clauses it does not check)."""
    labelled: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    """The user's labelled examples per task name (``{response, ok, why?}``); filled from ``[[tasks]] examples``
    / ``examples_file`` when the run config is loaded. A verifier must score every one as labelled."""
    canary: CanaryPolicy = Field(default_factory=CanaryPolicy)
    """Shadow stage on live samples before a new tool rewards (``samples = 0``: none)."""


class Synthesizer(Actor[SynthesizerConfig]):
    kind = "synthesizer"
    Config = SynthesizerConfig

    def __init__(
        self, config: SynthesizerConfig, *, agent: Agent | None = None, run_code: RunCode | None = None
    ) -> None:
        super().__init__(config)
        self.agent: Agent | None = agent
        self.run_code: RunCode | None = run_code
        self._registry: ToolRegistry | None = None
        self._ack_wait_s = config.topology.tool_request_ack_wait_s
        self.canaries: dict[tuple[str, int], asyncio.Task[None]] = {}

    @property
    def registry(self) -> ToolRegistry:
        assert self._registry is not None
        return self._registry

    async def setup(self) -> None:
        if self.agent is None:
            self.agent = make_agent(self.config.agent)
        if self.run_code is None:
            self.run_code = (
                bus_runner(self.bus, self.config.sandbox_timeout_s)
                if self.config.sandbox == "bus"
                else local_runner()
            )
        self._registry = ToolRegistry(self.bus)
        info = await self.bus.js.consumer_info(topology.TOOLS, topology.SYNTHESIZER)
        self._ack_wait_s = float(info.config.ack_wait or self._ack_wait_s)
        # Canaries that were watching when a synthesizer stopped start again (their clock restarts).
        for spec in await self._registry.list():
            if read_canary(spec.params) is not None and spec.provenance.get("origin") == "synthesized":
                st = await self._registry.status(spec.name, spec.version)
                if st.get("canary", {}).get("state") == "shadow":
                    self._start_canary(spec, str(spec.provenance.get("task", "")))

    async def main(self) -> None:
        stop = asyncio.Event()
        consumer = self.bus.consume(
            topology.TOOLS,
            topology.SYNTHESIZER,
            ToolRequest,
            self._on_request,
            batch=1,
            concurrency=self.config.concurrency,
            stop=stop,
            fetch_timeout_s=0.5,
        )
        await self.stopping.wait()
        stop.set()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.wait_for(consumer, 600)

    async def teardown(self) -> None:
        for t in self.canaries.values():
            t.cancel()
        for t in self.canaries.values():
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        if self.agent is not None:
            await self.agent.aclose()

    def info(self) -> dict[str, Any]:
        return {"agent": self.agent.metrics() if self.agent else {}}

    # -- work -------------------------------------------------------------------------------------
    def _log_path(self, request_id: str) -> Path:
        d = self.run_dir / "synthesis"
        d.mkdir(parents=True, exist_ok=True)
        return d / f"{request_id.replace('/', '_')}.jsonl"

    async def _event(self, kind: str, message: str, level: str, data: dict[str, Any]) -> None:
        await self.bus.publish(
            subjects.events(self.kind),
            Event(
                actor=f"{self.kind}/{self.instance}", kind=kind, message=message[:500], level=level, data=data
            ),
        )

    async def _on_request(self, req: ToolRequest, raw: Msg) -> None:
        existing = [s for s in await self.registry.list() if s.provenance.get("request_id") == req.request_id]
        if existing:
            log.info(
                "synthesizer: %s already served by %s v%d",
                req.request_id,
                existing[0].name,
                existing[0].version,
            )
            self.counters["duplicates"] += 1
            return
        async with keep_in_progress(raw, self._ack_wait_s):
            await self.serve(req)

    async def serve(self, req: ToolRequest) -> SynthesisOutcome:
        """Synthesise, validate and register a tool for ``req`` (the handler minus bus bookkeeping)."""
        assert self.agent is not None and self.run_code is not None
        task = SynthesisTask.from_request(req)
        task.labelled = [dict(e) for e in self.config.labelled.get(req.task, [])]
        path = self._log_path(req.request_id)
        t0 = time.time()

        async def record(rec: AttemptRecord) -> None:
            with path.open("a", encoding="utf-8") as fh:
                fh.write(
                    json.dumps(
                        {"request_id": req.request_id, "at": time.time(), **rec.to_dict()}, default=str
                    )
                    + "\n"
                )
            if not rec.passed:
                self.counters["rejected"] += 1
                await self._event(
                    "candidate_rejected",
                    f"{req.request_id} attempt {rec.attempt + 1}: {rec.reason}",
                    "warning",
                    {
                        "request_id": req.request_id,
                        "signature": req.signature,
                        "attempt": rec.attempt,
                        "reason": rec.reason,
                        "code_sha256": rec.code_sha256,
                    },
                )

        prior: list[Attempt] = []
        outcome = SynthesisOutcome(None, [], "not attempted")
        for _ in range(2):  # a second try only when the registry returned a quarantined twin
            outcome = await synthesize(
                task,
                self.agent,
                self.run_code,
                max_attempts=self.config.max_attempts,
                policy=self.config.validation.policy(),
                on_attempt=record,
                prior=prior,
                partial=self.config.partial,
                extra_params={"canary": canary_params(self.config.canary)},
            )
            if outcome.spec is None:
                break
            spec = await self.registry.register(outcome.spec, by=f"{self.kind}/{self.instance}")
            status = await self.registry.status(spec.name, spec.version)
            if status["state"] == "enabled":
                self.counters["registered"] += 1
                if spec.provenance.get("request_id") != req.request_id:
                    # The registry returned an existing version with the same content (made for an earlier
                    # request) and announced nothing: tell the router this request is served.
                    await self.bus.publish(
                        subjects.TOOLS_REGISTERED,
                        ToolRegistered(
                            name=spec.name,
                            version=spec.version,
                            kind=str(spec.kind),
                            action="registered",
                            by=f"{self.kind}/{self.instance}",
                        ),
                    )
                cov = outcome.coverage
                note = (
                    "checks every clause"
                    if cov.get("full")
                    else (
                        f"PARTIAL, {cov.get('checked', 0)} of {cov.get('clauses', 0)} clauses; not checked: "
                        + "; ".join(repr(u["clause"]) for u in cov.get("unchecked", []))
                    )
                )
                await self._event(
                    "synthesized",
                    f"registered {spec.name} v{spec.version} for {req.request_id} ({note})",
                    "info",
                    {
                        "request_id": req.request_id,
                        "signature": req.signature,
                        "tool": spec.name,
                        "version": spec.version,
                        "attempts": len(outcome.attempts),
                        "wall_s": round(time.time() - t0, 3),
                        "coverage": cov,
                    },
                )
                outcome.spec = spec
                self._write_outcome(outcome, req)
                if read_canary(spec.params) is not None:
                    await self.registry.set_canary(
                        spec.name,
                        spec.version,
                        "shadow",
                        {"task": req.task},
                        by=f"{self.kind}/{self.instance}",
                    )
                    self._start_canary(spec, req.task)
                return outcome
            why = (
                f"separates (in training): identical verifier {spec.name} v{spec.version} is "
                f"{status['state']}: {status['reason']}"
            )
            prior = [*prior, Attempt(draft={"code": spec.code}, reason=why)]
            outcome = SynthesisOutcome(
                None,
                outcome.attempts,
                why,
                outcome.usage,
                outcome.cost_usd,
                outcome.wall_s,
                outcome.coverage,
                "rejected_quarantined_twin",
            )
        self.counters["failed"] += 1
        self._write_outcome(outcome, req)
        await self._event(
            "synthesis_failed",
            f"{req.request_id}: {outcome.reason}",
            "error",
            {
                "request_id": req.request_id,
                "signature": req.signature,
                "task": req.task,
                "attempts": len(outcome.attempts),
                "reason": outcome.reason[:500],
                "category": outcome.category,
                "unread": [u["clause"] for u in outcome.coverage.get("unchecked", [])],
            },
        )
        return outcome

    # -- report and canary ------------------------------------------------------------------------
    def _write_outcome(self, outcome: SynthesisOutcome, req: ToolRequest) -> None:
        row = outcome_row(outcome, request_id=req.request_id, task=req.task)
        (self.run_dir / "synthesis").mkdir(parents=True, exist_ok=True)
        with (self.run_dir / "synthesis").joinpath(OUTCOMES_FILE).open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"at": time.time(), **row}, default=str) + "\n")

    def _start_canary(self, spec: ToolSpec, task: str) -> None:
        key = (spec.name, spec.version)
        if key not in self.canaries and task:
            self.canaries[key] = asyncio.create_task(self._watch(spec, task), name=f"canary:{spec.name}")

    async def _watch(self, spec: ToolSpec, task: str) -> None:
        """Judge one tool's shadow scores (:mod:`rlar.synthesis.canary`), then promote or quarantine it."""
        policy = read_canary(spec.params) or self.config.canary
        instruction = str(spec.provenance.get("instruction", ""))
        labeller = independent_labeller(
            independent_constraints(instruction, spec.params.get("constraints") or [])
        )
        canary = Canary(spec.name, spec.version, spec.score_range, policy, labeller)

        async def on_sample(raw: Msg) -> None:
            # Any wire type on the samples subject (one sample, or a group); what is not one is ignored.
            with contextlib.suppress(DecodeError):
                for sample_id, query, response in _sample_texts(decode(raw.data)):
                    canary.observe_sample(sample_id, query, response)

        async def on_reward(msg: RewardGroup, raw: Msg) -> None:
            for it in msg.items:
                canary.observe_reward(
                    _Result(
                        msg.sample_id(it.index),
                        msg.tool,
                        msg.tool_version,
                        msg.weight,
                        it.status,
                        it.score,
                        it.latency_s,
                    )
                )

        subs = [
            await self.bus.nc.subscribe(subjects.samples(task), cb=on_sample),
            await self.bus.subscribe(subjects.rewards(subjects.safe_token(task)), RewardGroup, on_reward),
        ]
        by = f"{self.kind}/{self.instance}"
        try:
            while (verdict := canary.verdict()) is None:
                await asyncio.sleep(1.0)
            with (self.run_dir / "synthesis" / "canaries.jsonl").open("a", encoding="utf-8") as fh:
                fh.write(
                    json.dumps(
                        {
                            "at": time.time(),
                            "tool": spec.name,
                            "version": spec.version,
                            "task": task,
                            "passed": verdict.passed,
                            "reason": verdict.reason,
                            **verdict.figures,
                        }
                    )
                    + "\n"
                )
            if verdict.passed:
                await self.registry.set_canary(spec.name, spec.version, "passed", verdict.figures, by=by)
                self.counters["canary_passed"] += 1
                await self._event(
                    "canary_passed",
                    f"{spec.name} v{spec.version}: {verdict.reason}",
                    "info",
                    {"tool": spec.name, "version": spec.version, **verdict.figures},
                )
            else:
                await self.registry.set_canary(spec.name, spec.version, "failed", verdict.figures, by=by)
                await self.registry.quarantine(spec.name, spec.version, verdict.reason, by=by)
                self.counters["canary_failed"] += 1
                await self._event(
                    "canary_failed",
                    f"{spec.name} v{spec.version}: {verdict.reason}",
                    "warning",
                    {"tool": spec.name, "version": spec.version, **verdict.figures},
                )
        finally:
            for sub in subs:
                with contextlib.suppress(Exception):
                    await sub.unsubscribe()
            self.canaries.pop((spec.name, spec.version), None)


class _Result(NamedTuple):
    """One sample's result from a ``RewardGroup``, as :meth:`Canary.observe_reward` reads it."""

    sample_id: str
    tool: str
    tool_version: int
    weight: float
    status: str
    score: float | None
    latency_s: float


def _sample_texts(msg: Any) -> list[tuple[str, str, str]]:
    """(sample id, query, response) of each sample of a ``SampleGroup`` (nothing for any other message)."""
    if not isinstance(msg, SampleGroup):
        return []
    return [(msg.sample_id(c.index), msg.query, c.text) for c in msg.completions]
