"""The router: chooses the reward tool(s) of every prompt before generation, once per kind of query.

Flow per prompt (durable ``router`` on ``rlar.prompts.>``, explicit acks, ``concurrency`` handlers at once):

1. Signature (:meth:`rlar.routing.RoutingQuery.signature`): what the task declares (domain, task type, answer
   format, data source, description) and what the router reads from this query (reference shape and its
   relation to the query, reference-free constraints, form, metadata keys) — so queries of one task that
   differ get their own decisions, and alike ones share one. The decision for it comes from memory, else the
   KV bucket ``rlar_decisions`` (so a restarted or second router reuses it), else the agent — asked once per
   signature even when many prompts of a new kind arrive together (one call in flight per signature; the
   prompts are kept in progress meanwhile). The agent sees the registry's tools that can score here
   (``require_ready``).
   Selective routing (:func:`rlar.routing.lifecycle.unsure`): an answer whose confidence is calibrated (the
   offline backend's) and below ``min_confidence`` (default: the threshold fitted with it) is not taken: the
   ``model_agent`` is asked instead when one is configured; else the kind goes to the task's fallback, or its
   samples abstain — in memory only, with a warning (log and ``Event`` ``low_confidence``) naming why and the
   line of config that declares a tool for the task.
   Hack probes (:mod:`rlar.routing.probes`, ``probes``): before the decision is taken, each tool the agent
   chose scores degenerate responses built from the query (empty, the query echoed, a derivation's bare
   target, every option, a list of candidates, another record's reference) in the router's own tool
   executor; a tool that gives one its maximum is dropped, and when every chosen tool is, the agent is asked
   once more among the candidates the probes leave (else no tool fits). The verdicts, once per signature and
   tool version, go into the decision (``probes``).
2. A decision with tools: the prompt is published to ``rlar.routed.<task>`` with ``tools`` = its
   :class:`~bus.messages.ToolRef` list and ``route`` = the decision's provenance (signature, backend,
   model, prompt hash, confidence, cost, reason), ``Nats-Msg-Id = prompt_id``, then acked.
3. No tool fits: the decision is ``pending``; once ``examples`` prompts of the kind are held, or after
   ``request_delay_s``, a ``ToolRequest`` (description, those prompts as examples, the constraints the agent
   read) goes to ``rlar.tools.request.synthesize`` (and ``…retrieve`` with ``retrieval``), de-duplicated by
   request id (sent again, and dropped as a duplicate, when a restarted router adopts the pending decision).
   Prompts of that signature are held unacked, kept alive with ``in_progress()``, until a tool made for the
   request is registered (``ToolRegistered`` on
   ``rlar.tools.registered``; the tool's provenance names the request) — then they are routed to it — or
   until ``wait_s`` passes or the synthesizer reports failure (``Event`` kind ``synthesis_failed``), when
   they go to the task's declared ``fallback`` tools (replaced by the new tool if it arrives later); with no
   fallback they are dead-lettered with the reason and the kind is decided afresh after another ``wait_s`` —
   except after a refusal (no verifier checks every clause): then they are routed with no tool (state
   ``abstain``), so their samples abstain.
   A restart loses nothing: held prompts are redelivered, the pending decision and its deadline are in KV.
4. Every new or changed decision is published as a ``RouteDecision`` on ``rlar.tools.decisions`` (visible in
   ``rlar tail`` and ``rlar tools decisions``).

Judge vouching (:mod:`rlar.routing.judge_vouch`, ``judge_vouch``): before a judge-kind tool rewards a signature
— chosen by the agent or declared as the task's fallback — it grades labelled pairs (the task's ``[[tasks]]
examples``, then the signature's references against wrong answers of their form, the empty response and the
query echoed) in the router's tool executor; one whose agreement's Wilson lower bound is under the threshold is
refused for the signature like a tool the hack probes refuse (its report, with the agreement and interval, is in
the decision's ``probes``), the verdict is kept in the registry (``rlar tools list|show``), and an ``Event``
``judge_refused`` (warning) names the figure and the config lines that change it. A refused fallback judge is
left out of the fallback: after a refused synthesis the kind abstains. Verdicts are cached per signature and
tool version.

Canary: a synthesised tool whose spec carries ``params["canary"]`` first routes in shadow — the task's declared
fallback tools plus the new tool with weight 0, decision state ``canary`` — until the synthesizer judges its
live scores (:mod:`rlar.synthesis.canary`): ``ToolRegistered(action="promoted")`` (also read back from the
registry's canary stage after a restart) routes to it alone; a failed canary quarantines it (below).

Continuous evolution: when a tool version is quarantined or disabled, decisions using it are dropped (memory
and KV) and the next prompt of that kind is routed afresh. Every ``health_interval_s`` the router reads the
stats of the tools its decisions use and judges the window since the last read (:mod:`rlar.routing.health`): a
suspect version is quarantined in the registry (synthesised or retrieved tools; built-ins only with
``quarantine_builtins``, else an ``Event`` warns; a synthesised tool that passed its canary only warns when its
scores merely collapsed onto one value — the policy settled), which re-routes its task.

If the agent fails (API down), the prompt goes to the fallback with a decision that expires after
``agent_retry_s``, so the agent is asked again later; without a fallback the prompt is nak'ed for redelivery.
The router never imports the synthesizer: they meet on the bus and in the registry.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import logging
import time
from typing import Any

import nats.js.errors
from nats.aio.msg import Msg
from nats.js.kv import KeyValue
from pydantic import BaseModel, ConfigDict, Field

from actors.runtime import Actor, ActorConfig
from bus import subjects, topology
from bus.client import KEEPALIVE_MIN_S, keep_in_progress, mark_in_progress
from bus.codec import encode
from bus.messages import Event, Metrics, Prompt, ToolRef, ToolRegistered
from rlar.agent.base import Agent, AgentConfig
from rlar.agent.factory import make_agent
from rlar.registry import ToolRegistry
from rlar.routing import (
    Decision,
    HealthPolicy,
    HealthWatch,
    RoutingQuery,
    lifecycle,
    parse_route,
    routing_request,
    usable_candidates,
)
from rlar.routing.judge_vouch import JudgeVouchPolicy, VouchReport, grade_pairs, judge_agreement, vouch_pairs
from rlar.routing.probes import ProbePolicy, Prober, ProbeReport, probed_answer
from rlar.sandbox_client import bus_runner, run_tests_over_bus
from rlar.tools.base import ToolResult, ToolSpec
from rlar.tools.executor import ToolExecutor

log = logging.getLogger(__name__)

BUILTIN_ORIGIN = "built-in"
ROUTED_MEMORY = 100_000
"""How many routed prompt ids the router remembers, to ack a late redelivery without publishing it again."""


class FallbackTool(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str
    weight: float = Field(1.0, gt=0)


class RouterConfig(ActorConfig):
    agent: AgentConfig | None = None
    """Agent backend (``anthropic``, ``openai`` or ``offline``); None: the ``[llm] router`` endpoint, else
    anthropic when a key is set, else offline."""
    min_confidence: float | None = Field(None, ge=0, le=1)
    """Selective routing: a decision whose calibrated confidence (the offline backend's, the probability that
    it is right) is below this is not taken — the kind goes to ``model_agent``, else to the task's
    ``fallback``, else its samples abstain (with a warning naming why and the line of config that declares a
    tool for the task). None: the threshold fitted with the confidence (``data/routing/model.json``: the lowest
    confidence at which decisions on formats held out of the fit were right 95% of the time)."""
    model_agent: AgentConfig | None = None
    """A language-model agent (``anthropic`` or ``openai``) asked instead when the offline backend is below
    ``min_confidence``; its answer is taken as any agent's (hack probes and judge vouching included). None: none
    is asked."""
    fallback: dict[str, list[FallbackTool]] = Field(default_factory=dict)
    """Declared fallback tools per task name (``"*"`` for any task): used when no tool arrives in time."""
    synthesis: bool = True
    """Ask the synthesizer for a verifier when no tool fits."""
    retrieval: bool = False
    """Also ask the retriever (a reward model from the hub) when no tool fits."""
    wait_s: float = Field(300.0, gt=0)
    """How long prompts of a pending kind wait for a new tool before the fallback."""
    examples: int = Field(4, ge=1, le=16)
    """Prompts of the kind sent with a tool request as examples."""
    request_delay_s: float = Field(5.0, ge=0)
    """A tool request waits until ``examples`` prompts of the kind are held, or this long, so that synthesis
    sees several examples rather than the first."""
    concurrency: int = Field(16, ge=1)
    """Prompts handled at once (a new kind waits for its decision without blocking other kinds)."""
    fetch_batch: int = Field(32, ge=1)
    agent_retry_s: float = Field(60.0, gt=0)
    """After the agent failed, ask it again for that kind after this long."""
    health_interval_s: float = Field(30.0, gt=0)
    health: HealthPolicy = Field(default_factory=HealthPolicy)
    require_ready: bool = True
    """Offer the agent only tools that can score here (not a judge without an endpoint, nor a reward model
    without a checkpoint)."""
    quarantine_builtins: bool = False
    """Quarantine built-in tools found suspect (default: only warn; their collapse is usually the policy's)."""
    probes: ProbePolicy = Field(default_factory=ProbePolicy)
    """Hack probes (:mod:`rlar.routing.probes`): degenerate responses each chosen tool must not give its
    maximum; a tool that does is not eligible for the signature and the agent is asked again without it."""
    judge_vouch: JudgeVouchPolicy = Field(default_factory=JudgeVouchPolicy)
    """Judges grade labelled pairs before they reward a task (:mod:`rlar.routing.judge_vouch`); one that does
    not order them above the threshold is refused for the task, loudly."""
    labelled: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    """The user's labelled examples per task name (``{response, ok, query?}``), filled from ``[[tasks]]
    examples`` / ``examples_file`` when the run config is loaded: the judges' strongest vouching pairs."""
    metrics_interval_s: float = Field(10.0, gt=0)


class Router(Actor[RouterConfig]):
    kind = "router"
    Config = RouterConfig

    def __init__(
        self, config: RouterConfig, *, agent: Agent | None = None, model_agent: Agent | None = None
    ) -> None:
        super().__init__(config)
        self.agent: Agent | None = agent
        self.model_agent: Agent | None = model_agent
        self.decisions: dict[str, Decision] = {}
        self.inflight: dict[str, asyncio.Future[Decision]] = {}
        self.held: dict[str, list[tuple[Prompt, Msg]]] = {}
        # Prompts being decided, each with its latest delivery: a redelivery that arrives meanwhile (the
        # loop starved past the ack-wait on a loaded host) replaces the delivery the first handler acks.
        self._deciding: dict[str, Msg] = {}
        # Prompts routed lately (their routed copy stored, then acked): a redelivery whose ack crossed it is
        # acked again, not published again.
        self._routed: collections.OrderedDict[str, None] = collections.OrderedDict()
        self.health = HealthWatch(config.health)
        self._kv: KeyValue | None = None
        self._registry: ToolRegistry | None = None
        self._ack_wait_s = config.topology.prompt_ack_wait_s
        self._lock = asyncio.Lock()
        self._tasks: list[asyncio.Task[Any]] = []
        self._enough: dict[str, asyncio.Event] = {}
        self._queries: dict[str, list[RoutingQuery]] = {}
        self._executor: ToolExecutor | None = None
        self.prober: Prober | None = None
        self._vouches: dict[tuple[str, str, int, str], VouchReport] = {}
        # Vouch reports of fallback judges, merged into the signature's next decision (``_apply``).
        self._fallback_vouches: dict[str, list[dict[str, Any]]] = {}
        self.policy = lifecycle.Policy(
            wait_s=config.wait_s,
            agent_retry_s=config.agent_retry_s,
            request_tools=config.synthesis or config.retrieval,
            min_confidence=config.min_confidence,
        )

    # -- life -------------------------------------------------------------------------------------
    @property
    def registry(self) -> ToolRegistry:
        assert self._registry is not None
        return self._registry

    @property
    def kv(self) -> KeyValue:
        assert self._kv is not None
        return self._kv

    async def setup(self) -> None:
        if self.agent is None:
            self.agent = make_agent(self.config.agent)
        if self.model_agent is None and self.config.model_agent is not None:
            self.model_agent = make_agent(self.config.model_agent)
        self._registry = ToolRegistry(self.bus)
        self._kv = await self.bus.js.key_value(topology.DECISIONS_BUCKET)
        info = await self.bus.js.consumer_info(topology.PROMPTS, topology.ROUTER)
        self._ack_wait_s = float(info.config.ack_wait or self._ack_wait_s)
        await self.bus.subscribe(subjects.TOOLS_REGISTERED, ToolRegistered, self._on_tool_change)
        await self.bus.subscribe(subjects.events("synthesizer"), Event, self._on_synth_event)
        if self.config.probes.enabled or self.config.judge_vouch.enabled:
            # The reward workers' executor: tool worker processes with hard deadlines; code runs on the sandbox.
            self._executor = ToolExecutor(
                workers=1,
                timeout_s=self.config.probes.timeout_s,
                cache_size=4096,
                allowed_prefixes=list(self.config.probes.allowed_prefixes),
                resources={
                    "run_tests": run_tests_over_bus(self.bus, max_timeout_s=self.config.probes.timeout_s),
                    "run_code": bus_runner(self.bus, self.config.probes.timeout_s),
                },
            )
            if self.config.probes.enabled:
                self.prober = Prober(self.config.probes, self._executor)

    async def main(self) -> None:
        stop = asyncio.Event()
        consumer = self.bus.consume(
            topology.PROMPTS,
            topology.ROUTER,
            Prompt,
            self._on_prompt,
            batch=self.config.fetch_batch,
            concurrency=self.config.concurrency,
            auto_ack=False,
            stop=stop,
            fetch_timeout_s=0.5,
        )
        self._tasks = [
            asyncio.create_task(self._keepalive_loop(), name="router:keepalive"),
            asyncio.create_task(self._health_loop(), name="router:health"),
            asyncio.create_task(self._metrics_loop(), name="router:metrics"),
        ]
        await self.stopping.wait()
        stop.set()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.wait_for(consumer, 10)
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        # Held prompts stay unacked: JetStream redelivers them to a router after the ack-wait.

    async def teardown(self) -> None:
        if self.agent is not None:
            await self.agent.aclose()
        if self.model_agent is not None:
            await self.model_agent.aclose()
        if self._executor is not None:
            await self._executor.close()

    def info(self) -> dict[str, Any]:
        agent = self.agent
        return {
            "backend": agent.backend if agent else "",
            "model": agent.model if agent else "",
            "decisions": len(self.decisions),
            "pending_kinds": sum(1 for d in self.decisions.values() if d.state == "pending"),
            "held_prompts": sum(len(v) for v in self.held.values()),
            "agent": agent.metrics() if agent else {},
        }

    # -- decisions --------------------------------------------------------------------------------
    async def _kv_get(self, sig: str) -> Decision | None:
        try:
            entry = await self.kv.get(sig)
        except nats.js.errors.KeyNotFoundError:
            return None
        if not entry.value:
            return None
        return Decision.from_json(entry.value)

    async def _store(self, d: Decision, *, create: bool = False) -> Decision:
        """Write a decision; with ``create``, adopt another router's if it won the race."""
        if create:
            try:
                await self.kv.create(d.signature, d.to_json())
            except nats.js.errors.KeyWrongLastSequenceError:
                theirs = await self._kv_get(d.signature)
                if theirs is not None:
                    self.decisions[d.signature] = theirs
                    return theirs
                await self.kv.put(d.signature, d.to_json())
        else:
            await self.kv.put(d.signature, d.to_json())
        self.decisions[d.signature] = d
        return d

    async def _announce(self, d: Decision) -> None:
        await self.bus.publish(subjects.TOOLS_DECISIONS, lifecycle.announcement(d))

    async def decision_for(self, q: RoutingQuery) -> Decision:
        """The decision for ``q``'s signature (memory, KV, else the agent — one call per signature)."""
        sig = q.signature()
        self._note_reference(sig, q)
        now = time.time()
        d = self.decisions.get(sig)
        if d is not None and lifecycle.is_live(d, now):
            self.counters["cache_hits"] += 1
            return d
        fut = self.inflight.get(sig)
        if fut is not None:
            self.counters["cache_hits"] += 1
            return await asyncio.shield(fut)
        fut = asyncio.get_running_loop().create_future()
        self.inflight[sig] = fut
        try:
            d = await self._kv_get(sig)
            if d is not None and lifecycle.is_live(d, now):
                self.counters["kv_hits"] += 1
                self.decisions[sig] = d
                if d.state == "pending":
                    d = await self._adopt_registered(d) or d
                elif d.state == "canary":  # promoted while no router was listening?
                    d = await self._adopt_registered(d) or d
                if d.state == "pending":  # sent before a restart, or never: the bus drops a duplicate
                    self._spawn(self._request_when_ready(d, q))
            else:
                d = await self._decide(sig, q, replace=d is not None)
            fut.set_result(d)
            return d
        except asyncio.CancelledError:
            fut.cancel()
            raise
        except Exception as exc:
            fut.set_exception(exc)
            fut.exception()  # retrieved here, so an unawaited future does not warn
            raise
        finally:
            self.inflight.pop(sig, None)

    async def _fallback_refs(self, task: str, sig: str = "") -> list[ToolRef]:
        """The task's declared fallback tools (``"*"``: any task's) as resolved in the registry; weights sum
        to 1 over the declared ones, and a tool the registry does not have is left out (with a warning). With
        ``sig``, a judge among them is vouched for that signature first and left out when refused (its report
        goes into the signature's next decision)."""
        wanted = list(self.config.fallback.get(task) or self.config.fallback.get("*") or [])
        out = []
        total = sum(w.weight for w in wanted) or 1.0
        for w in wanted:
            spec = await self.registry.get(w.tool)
            if spec is None:
                log.warning("fallback tool %s is not usable in the registry", w.tool)
                continue
            if sig and self._vouches_judges(spec):
                report = await self._vouch(sig, task, spec)
                self._fallback_vouches.setdefault(sig, []).append(self._vouch_probe(spec, report).to_dict())
                if report.refused:
                    continue
            out.append(spec.ref(round(w.weight / total, 6)))
        return out

    # -- judge vouching ---------------------------------------------------------------------------
    def _vouches_judges(self, spec: ToolSpec) -> bool:
        return self.config.judge_vouch.enabled and str(spec.kind) == "judge" and self._executor is not None

    def _records(self, sig: str) -> list[RoutingQuery]:
        return list(self._queries.get(sig, []))

    @staticmethod
    def _vouch_probe(spec: ToolSpec, report: VouchReport, base: ProbeReport | None = None) -> ProbeReport:
        """A probe report carrying a judge's vouching (refused: the figure is the reason)."""
        if base is None:
            base = ProbeReport(spec.name, spec.version, "skipped", spec.score_range[1], reason="not probed")
        if report.refused:
            return dataclasses.replace(
                base, verdict="refused", reason=f"judge not vouched: {report.reason}", vouch=report.to_dict()
            )
        return dataclasses.replace(base, vouch=report.to_dict())

    async def _vouch(self, sig: str, task: str, spec: ToolSpec) -> VouchReport:
        """The judge's vouching for ``sig`` (cached per signature and version): graded on labelled pairs in the
        router's executor; kept in the registry; a refusal is announced as a warning event."""
        key = (sig, spec.name, spec.version, spec.content_hash)
        hit = self._vouches.get(key)
        if hit is not None:
            return hit
        policy = self.config.judge_vouch
        if spec.name in policy.trusted:
            report = VouchReport(
                spec.name, spec.version, "trusted", reason="named in [router] judge_vouch.trusted: not graded"
            )
        else:
            assert self._executor is not None
            executor = self._executor
            pairs = vouch_pairs(
                self._records(sig), self.config.labelled.get(task, []), max_pairs=policy.max_pairs
            )
            limit = min(policy.timeout_s, float(spec.params.get("deadline_s") or policy.timeout_s))

            async def score(inputs: list[Any]) -> Any:
                try:
                    return await asyncio.wait_for(
                        executor.score_batch(spec, inputs, timeout_s=limit),
                        limit * (len(inputs) + 1) + executor.load_timeout_s,
                    )
                except TimeoutError:
                    return [ToolResult.error("judge calls timed out while vouching") for _ in inputs]

            scores = await grade_pairs(pairs, score)
            report = judge_agreement(
                spec.name,
                spec.version,
                scores,
                threshold=policy.threshold,
                confidence=policy.confidence,
                min_pairs=policy.min_pairs,
            )
        self._vouches[key] = report
        self.counters[f"judge_{report.verdict}"] += 1
        with contextlib.suppress(Exception):  # the registry may be briefly unreachable: the decision keeps it
            await self.registry.record_vouch(
                spec.name, spec.version, task, {**report.to_dict(), "signature": sig}
            )
        if report.refused:
            log.warning("router: judge %s refused for task %s: %s", spec.name, task, report.reason)
            await self.bus.publish(
                subjects.events(self.kind),
                Event(
                    actor=f"{self.kind}/{self.instance}",
                    kind="judge_refused",
                    level="warning",
                    message=(
                        f"judge {spec.name} v{spec.version} may not reward task {task!r}: {report.reason}. It is"
                        f" left out of this kind's tools (no other tool: its samples abstain). To change that,"
                        f" give the task labelled examples the judge orders ([[tasks]] examples), or pin the"
                        f' judge: [router] judge_vouch.trusted = ["{spec.name}"]'
                    ),
                    data={"signature": sig, "task": task, "tool": spec.name, **report.to_dict()},
                ),
            )
        return report

    def _note_reference(self, sig: str, q: RoutingQuery) -> None:
        """Remember the first few records of each signature: the hack probes are built from them (another
        record's reference is one), and a probe must get the maximum on most of them to refuse a tool; a judge
        is vouched for on pairs made from them."""
        if not (self.config.probes.enabled or self.config.judge_vouch.enabled):
            return
        seen = self._queries.setdefault(sig, [])
        if len(seen) < self.config.probes.references and all(
            (x.query, x.reference) != (q.query, q.reference) for x in seen
        ):
            seen.append(q)

    async def _probe(self, sig: str, q: RoutingQuery, specs: list[ToolSpec]) -> list[ProbeReport]:
        """The hack probes' verdicts on ``specs`` (when on), and a judge's vouching (a refused judge is
        ``refused``)."""
        records = [q, *(x for x in self._queries.get(sig, []) if x is not q)][: self.config.probes.references]
        if self.prober is not None:
            prober = self.prober
            reports = list(await asyncio.gather(*(prober.check(sig, records, s) for s in specs)))
        else:
            reports = [
                ProbeReport(s.name, s.version, "skipped", s.score_range[1], reason="hack probes are off")
                for s in specs
            ]
        for i, spec in enumerate(specs):
            if self._vouches_judges(spec) and not reports[i].refused:
                reports[i] = self._vouch_probe(spec, await self._vouch(sig, q.task, spec), reports[i])
        for r in reports:
            self.counters[f"probes_{r.verdict}"] += 1
            if r.errors:
                await self.bus.publish(
                    subjects.events(self.kind),
                    Event(
                        actor=f"{self.kind}/{self.instance}",
                        kind="probe_error",
                        level="warning",
                        message=f"hack probes of {r.tool} v{r.version} for task {q.task} errored: {r.errors[0]}",
                        data={"signature": sig, "task": q.task, "tool": r.tool, "version": r.version},
                    ),
                )
        return reports

    async def _ask(self, q: RoutingQuery, candidates: list[ToolSpec], agent: Agent | None = None) -> Any:
        agent = agent or self.agent
        assert agent is not None
        reply = await agent.ask(routing_request(q, candidates))
        self.counters["agent_calls" if agent is self.agent else "model_agent_calls"] += 1
        self.counters["agent_input_tokens"] += reply.usage.input_tokens
        self.counters["agent_output_tokens"] += reply.usage.output_tokens
        return reply, parse_route(reply, candidates)

    async def _decide(self, sig: str, q: RoutingQuery, *, replace: bool) -> Decision:
        candidates, _ = usable_candidates(await self.registry.list(), require_ready=self.config.require_ready)
        reply, ans = await self._ask(q, candidates)
        threshold = lifecycle.unsure(ans, self.policy)
        if threshold is not None and self.model_agent is not None:
            # Selective routing: the offline router is out of its depth here; the model agent decides.
            model_reply, model_ans = await self._ask(q, candidates, self.model_agent)
            if model_ans.ok:
                reply, ans = model_reply, lifecycle.escalated(model_ans, ans, threshold)
                self.counters["escalated"] += 1
            else:  # the unsure offline answer stays: its kind goes to the fallback or abstains
                log.warning("router: the model agent failed for task %s: %s", q.task, model_ans.reason)
        probes: list[ProbeReport] = []
        if self._gated() and ans.ok and not ans.none_fit and lifecycle.unsure(ans, self.policy) is None:
            # Hack probes: a chosen tool that gives a degenerate response its maximum is dropped; when every
            # chosen tool is, the agent chooses again among the candidates the probes leave (all probed first).
            ans, probes, again = await probed_answer(
                ans, candidates, q, lambda specs: self._probe(sig, q, specs)
            )
            if again is not None:
                reply, second = await self._ask(q, again)
                ans, probes, _ = await probed_answer(
                    second, again, q, lambda specs: self._probe(sig, q, specs), reports=probes, final=True
                )
        fallback = (
            await self._fallback_refs(q.task, sig) if lifecycle.needs_fallback(ans, self.policy) else []
        )
        try:
            t = lifecycle.on_agent_answer(
                ans,
                signature=sig,
                task=q.task,
                fields=q.signature_fields(),
                reply=reply,
                probes=[r.to_dict() for r in probes],
                fallback=fallback,
                policy=self.policy,
                now=time.time(),
            )
        except lifecycle.NoFallback as exc:
            refused = [
                p["tool"] for p in self._fallback_vouches.get(sig, []) if p.get("verdict") == "refused"
            ]
            if not refused:
                # Not cached: the handler fails, the prompt is redelivered and the agent asked again.
                raise RuntimeError(str(exc)) from None
            # The agent failed and the declared fallback is a judge nobody vouched for: the kind abstains
            # (memory only) until the agent is asked again after agent_retry_s.
            now = time.time()
            d = Decision(
                signature=sig,
                task=q.task,
                state="abstain",
                reason=f"declared fallback {', '.join(refused)} not vouched for: its samples abstain; agent"
                f" failed ({ans.reason})"[:500],
                backend=reply.backend,
                model=reply.model,
                prompt_hash=reply.prompt_hash,
                cost=ans.provenance.get("cost", {}),
                decided_at=now,
                expires_at=now + self.config.agent_retry_s,
                fields=dict(q.signature_fields()),
                probes=[r.to_dict() for r in probes],
            )
            t = lifecycle.Transition(d, store=False, count="decisions_abstain")
        if t.count == "decisions_unsure":
            await self._warn_unsure(t.decision)
        return await self._apply(t, q, create=not replace)

    def _gated(self) -> bool:
        """Chosen tools are checked before a decision: hack probes, or judge vouching."""
        return self.prober is not None or (self.config.judge_vouch.enabled and self._executor is not None)

    async def _warn_unsure(self, d: Decision) -> None:
        """Say loudly (log and an ``Event`` ``low_confidence``, which ``rlar train`` prints and keeps in the
        run's warnings) that a kind was not routed as the offline router would have: why, and the line of
        config that declares a tool for the task."""
        log.warning("router: task %s (%s): [%s] %s", d.task, d.signature, d.state, d.reason)
        await self.bus.publish(
            subjects.events(self.kind),
            Event(
                actor=f"{self.kind}/{self.instance}",
                kind="low_confidence",
                level="warning",
                message=f"task {d.task!r}: {d.reason}"[:1000],
                data={
                    "signature": d.signature,
                    "task": d.task,
                    "state": d.state,
                    "confidence": d.confidence,
                    "tools": [t.tool for t in d.tools],
                },
            ),
        )

    async def _apply(
        self, t: lifecycle.Transition, q: RoutingQuery | None = None, *, create: bool = False
    ) -> Decision:
        """Perform a transition's actions but the release (the caller releases, where it holds no lock):
        store (with ``create``, another router's decision may have won the race: then it is adopted and
        nothing else is done), count, announce, request a tool. Returns the decision now in force. The vouch
        reports of fallback judges resolved for its signature go into the decision's ``probes``."""
        d = t.decision
        vouched = self._fallback_vouches.pop(d.signature, [])
        if vouched:
            names = {(p["tool"], p["version"]) for p in vouched}
            probes = [p for p in d.probes if (p.get("tool"), p.get("version")) not in names]
            d = dataclasses.replace(d, probes=[*probes, *vouched])
            refused = [p["tool"] for p in vouched if p.get("verdict") == "refused"]
            if d.state == "unroutable" and not d.tools and refused:
                # The task declared a judge and it is not vouched for: the kind abstains (kept, loudly),
                # rather than being dead-lettered and retried with the same judge.
                why = f"declared fallback {', '.join(refused)} not vouched for: its samples abstain"
                d = dataclasses.replace(d, state="abstain", expires_at=0.0, reason=f"{why}; {d.reason}"[:500])
            t = dataclasses.replace(t, decision=d)
        if t.store:
            stored = await self._store(d, create=create)
            if stored is not d:  # another router's (a fallback decision taken here has a later decided_at)
                return stored
        else:
            self.decisions[d.signature] = d
        if t.count:
            self.counters[t.count] += 1
        await self._announce(d)
        if t.request_tool:
            assert q is not None, "a tool request needs the query"
            self._spawn(self._request_when_ready(d, q))
        return d

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.append(task)
        task.add_done_callback(lambda t: self._tasks.remove(t) if t in self._tasks else None)

    async def _request_when_ready(self, d: Decision, q: RoutingQuery) -> None:
        """Send the tool request once ``examples`` prompts of the kind are held or ``request_delay_s`` passed."""
        enough = self._enough.setdefault(d.signature, asyncio.Event())
        if len(self.held.get(d.signature, [])) >= self.config.examples:
            enough.set()
        waits = [asyncio.ensure_future(e.wait()) for e in (enough, self.stopping)]
        try:
            await asyncio.wait(
                waits, timeout=self.config.request_delay_s, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for w in waits:
                w.cancel()
        self._enough.pop(d.signature, None)
        if self.stopping.is_set():
            # The decision stays pending in the bucket and its prompts unacked: the next router adopts it and
            # sends the request (the bus drops a duplicate). Sent now, it would reach a synthesizer and sandbox
            # that are stopping too, and its failure would dead-letter the prompts.
            log.info("router: stopping; the tool request %s is left to the next router", d.request_id)
            return
        try:
            await self._request_tool(d, q)
        except Exception as exc:  # the bus may be briefly unreachable: the wait_s deadline still applies
            log.warning("router: could not send tool request %s: %s", d.request_id, exc)

    async def _request_tool(self, d: Decision, q: RoutingQuery) -> None:
        held = [
            RoutingQuery.from_prompt(p) for p, _ in self.held.get(d.signature, [])[: self.config.examples]
        ]
        req = lifecycle.tool_request(d, q, held)
        targets = ([subjects.TOOLS_REQUEST_SYNTH] if self.config.synthesis else []) + (
            [subjects.TOOLS_REQUEST_RETRIEVE] if self.config.retrieval else []
        )
        for subject in targets:
            await self.bus.js_publish(subject, req, msg_id=f"{subject}/{d.request_id}")
        self.counters["tool_requests"] += 1
        log.info("router: no tool fits %s (%s); requested %s", q.task, d.reason, d.request_id)

    async def _adopt_registered(self, d: Decision) -> Decision | None:
        """A pending decision whose tool is already registered (the router was down when it arrived)."""
        for spec in await self.registry.list():
            if lifecycle.made_for(spec, d):
                return await self._resolve_pending(d, spec)
        return None

    async def _in_canary(self, spec: ToolSpec) -> bool:
        """A new tool that must first score live samples in shadow (:mod:`rlar.synthesis.canary`)."""
        if not spec.params.get("canary"):
            return False
        status = await self.registry.status(spec.name, spec.version)
        return status.get("canary", {}).get("state") != "passed"

    async def _resolve_pending(self, d: Decision, spec: ToolSpec) -> Decision:
        """Route ``d``'s kind to ``spec``, made for its request (or promoted from its canary), unless the hack
        probes refuse it; then release the prompts held for it."""
        seen = self._queries.get(d.signature)
        if self._gated() and seen:
            q = seen[0]
            # The tool made for the request meets the same probes before it scores the signature.
            (report,) = await self._probe(d.signature, q, [spec])
            probes = [*(p for p in d.probes if p.get("tool") != spec.name), report.to_dict()]
            if report.refused:
                fallback = await self._fallback_refs(d.task, d.signature)
                t = lifecycle.on_tool_refused(
                    d, spec, report.short(), probes, fallback, self.policy, time.time()
                )
                new = await self._apply(t)
                await self._release(new)
                return new
            d = dataclasses.replace(d, probes=probes)
        # In canary the new tool scores with weight 0 beside the task's fallback (none: the samples abstain).
        shadow = await self._fallback_refs(d.task, d.signature) if await self._in_canary(spec) else None
        new = await self._apply(lifecycle.on_tool_made(d, spec, shadow_beside=shadow, now=time.time()))
        await self._release(new)
        return new

    # -- prompts ----------------------------------------------------------------------------------
    async def _route(self, prompt: Prompt, raw: Msg, d: Decision) -> None:
        prompt.tools = list(d.tools)
        prompt.route = d.route_info()
        await self.bus.js_publish(subjects.routed(prompt.task), prompt, msg_id=prompt.prompt_id)
        self._routed[prompt.prompt_id] = None
        while len(self._routed) > ROUTED_MEMORY:
            self._routed.popitem(last=False)
        await raw.ack()
        self.counters["routed"] += 1
        self.counters[f"routed_{d.state}"] += 1

    async def _dead_letter(self, prompt: Prompt, raw: Msg, d: Decision) -> None:
        await self.bus.dead_letter(raw.subject, encode(prompt), f"unroutable: {d.reason}")
        with contextlib.suppress(Exception):
            await raw.term()
        self.counters["dead_lettered"] += 1

    async def _on_prompt(self, prompt: Prompt, raw: Msg) -> None:
        pid = prompt.prompt_id
        if pid in self._routed:
            await raw.ack()
            self.counters["redelivered_routed"] += 1
            return
        if pid in self._deciding:
            self._deciding[pid] = raw
            self.counters["redelivered_deciding"] += 1
            return
        q = RoutingQuery.from_prompt(prompt)
        # A first decision can take longer than the ack-wait on a loaded host: the marks keep the prompt from
        # being redelivered, and a redelivery that comes all the same (marks late) is taken over, not decided
        # and routed a second time.
        self._deciding[pid] = raw
        try:
            async with keep_in_progress(lambda: (self._deciding[pid],), self._ack_wait_s):
                d = await self.decision_for(q)
        finally:
            raw = self._deciding.pop(pid)
        action = lifecycle.prompt_action(d, time.time(), self.policy)
        if action == "hold":
            held = self.held.setdefault(d.signature, [])
            again = [i for i, (p, _) in enumerate(held) if p.prompt_id == prompt.prompt_id]
            if (
                again
            ):  # redelivered while held (a late keep-alive on a loaded host): hold the live delivery once
                held[again[0]] = (prompt, raw)
                self.counters["redelivered_held"] += 1
                return
            held.append((prompt, raw))
            self.counters["held"] += 1
            enough = self._enough.get(d.signature)
            if enough is not None and len(self.held[d.signature]) >= self.config.examples:
                enough.set()
            # The decision may have been resolved while we were adding: release if so.
            if self.decisions.get(d.signature, d).state != "pending":
                await self._release(self.decisions[d.signature])
            return
        if action == "expire":
            d = await self._expire(d, "waited too long for a new tool")
        await self._deliver(prompt, raw, d)

    async def _deliver(self, prompt: Prompt, raw: Msg, d: Decision) -> None:
        if lifecycle.delivery(d) == "dead_letter":
            await self._dead_letter(prompt, raw, d)
        else:
            await self._route(prompt, raw, d)

    async def _release(self, d: Decision) -> None:
        """Route (or dead-letter) every prompt held for ``d``'s signature."""
        held = self.held.pop(d.signature, [])
        for prompt, raw in held:
            try:
                await self._deliver(prompt, raw, d)
            except Exception as exc:  # leave it unacked: JetStream redelivers it
                log.warning("could not release %s: %s", prompt.prompt_id, exc)

    async def _expire(self, d: Decision, why: str) -> Decision:
        async with self._lock:
            cur = self.decisions.get(d.signature, d)
            if cur.state != "pending":
                return cur
            fallback = await self._fallback_refs(cur.task, cur.signature)
            new = await self._apply(lifecycle.on_wait_over(cur, why, fallback, self.policy, time.time()))
        await self._release(new)
        return new

    async def _keepalive_loop(self) -> None:
        interval = max(KEEPALIVE_MIN_S, self._ack_wait_s / 3)
        while True:
            await asyncio.sleep(interval)
            now = time.time()
            for sig in list(self.held):
                d = self.decisions.get(sig)
                if d is not None and lifecycle.overdue(d, now, self.policy):
                    await self._expire(d, f"no tool registered within {self.config.wait_s:g}s")
                    continue
                await mark_in_progress(raw for _, raw in self.held.get(sig, []))

    # -- registry events --------------------------------------------------------------------------
    async def _on_tool_change(self, msg: ToolRegistered, raw: Msg) -> None:
        if msg.action == "registered":
            # A tool made for a request also replaces the fallback its prompts got while waiting.
            pending = lifecycle.awaiting_tool(self.decisions.values())
            if not pending:
                return
            spec = await self.registry.get(msg.name, msg.version)
            if spec is None:
                return
            for d in pending:
                if lifecycle.made_for(spec, d):
                    async with self._lock:
                        if self.decisions.get(d.signature, d).state in lifecycle.AWAITING:
                            await self._resolve_pending(d, spec)
        elif msg.action == "promoted":  # its canary passed: it rewards from now on
            for d in lifecycle.in_canary_for(self.decisions.values(), msg.name, msg.version):
                spec = await self.registry.get(msg.name, msg.version)
                if spec is not None:
                    async with self._lock:
                        await self._resolve_pending(d, spec)
        elif msg.action in ("quarantined", "disabled"):
            await self.invalidate(msg.name, msg.version or None, f"{msg.name} v{msg.version} {msg.action}")

    async def invalidate(self, name: str, version: int | None, why: str) -> int:
        """Drop every decision that routes to ``name`` (``version``, or any); the next prompt re-routes."""
        gone = lifecycle.using(list(self.decisions.values()), name, version)
        for d in gone:
            self.decisions.pop(d.signature, None)
            with contextlib.suppress(Exception):
                await self.kv.delete(d.signature)
            self.counters["rerouted_kinds"] += 1
            await self.bus.publish(
                subjects.events(self.kind),
                Event(
                    actor=f"{self.kind}/{self.instance}",
                    kind="reroute",
                    level="warning",
                    message=f"re-routing task {d.task} ({d.signature}): {why}",
                    data={"signature": d.signature, "task": d.task, "tool": name, "version": version or 0},
                ),
            )
        return len(gone)

    async def _on_synth_event(self, msg: Event, raw: Msg) -> None:
        if msg.kind != "synthesis_failed" or self.stopping.is_set():
            return  # stopping: the held prompts stay unacked for the next router, which decides again
        sig = str(msg.data.get("signature", ""))
        d = self.decisions.get(sig)
        if d is not None and lifecycle.synthesis_failed(d, msg.data.get("request_id")):
            await self._expire(d, f"synthesis failed: {msg.message}")

    # -- health and metrics -----------------------------------------------------------------------
    async def check_health(self) -> list[tuple[str, int, str]]:
        """Judge the tools in use; quarantine suspects (see the module docstring). Returns what was flagged."""
        flagged = []
        in_use = {(t.tool, t.version) for d in self.decisions.values() for t in d.tools}
        for name, version in sorted(in_use):
            verdict = self.health.observe(name, version, await self.registry.stats(name, version))
            if not verdict.suspect:
                continue
            spec = await self.registry.get(name, version)
            builtin = spec is not None and spec.provenance.get("origin") == BUILTIN_ORIGIN
            flagged.append((name, version, verdict.reason))
            self.counters["suspect_tools"] += 1
            passed = lifecycle.needs_canary_check(
                builtin=builtin, kind=verdict.kind
            ) and await self._canary_passed(name, version)
            action = lifecycle.suspect_action(
                builtin=builtin,
                kind=verdict.kind,
                canary_passed=passed,
                quarantine_builtins=self.config.quarantine_builtins,
            )
            if action == "warn":
                await self.bus.publish(
                    subjects.events(self.kind),
                    Event(
                        actor=f"{self.kind}/{self.instance}",
                        kind="suspect_tool",
                        level="warning",
                        message=f"{'built-in' if builtin else 'canary-passed'} {name} v{version} looks suspect:"
                        f" {verdict.reason}",
                        data={"tool": name, "version": version, "window": verdict.window},
                    ),
                )
                continue
            log.warning("router: quarantining %s v%d: %s", name, version, verdict.reason)
            await self.registry.quarantine(name, version, verdict.reason, by=f"{self.kind}/{self.instance}")
            await self.invalidate(name, version, f"quarantined: {verdict.reason}")
        return flagged

    async def _canary_passed(self, name: str, version: int) -> bool:
        try:
            status = await self.registry.status(name, version)
        except Exception:
            return False
        return (status.get("canary") or {}).get("state") == "passed"

    async def _health_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.health_interval_s)
            try:
                await self.check_health()
            except Exception as exc:  # the registry may be briefly unreachable; try again next round
                log.warning("router: health check failed: %s", exc)

    async def _metrics_loop(self) -> None:
        step = 0
        while True:
            await asyncio.sleep(self.config.metrics_interval_s)
            step += 1
            values: dict[str, Any] = {**dict(self.counters), **self.info()}
            with contextlib.suppress(Exception):
                await self.bus.publish(
                    subjects.metrics(self.kind), Metrics(actor=self.kind, step=step, values=values)
                )
