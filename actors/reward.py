"""Reward workers: score ``ScoreGroup``s with registered tools and publish ``RewardGroup``s.

One worker serves the tool kinds in ``kinds`` (``rlar up --actors reward-model=2,reward-sandbox=8`` starts
workers for one kind each). For each kind it pulls from the durable ``reward-<kind>`` on the SCORE stream —
the kind's queue group: every request goes to one worker, and one that dies without acking has its requests
redelivered to the others after the consumer's ack-wait. While a request is being scored the worker tells
the server it is still in progress (one keep-alive per kind marks every request in hand), so a slow tool is not
redelivered to a second worker.

A request is one prompt generation's responses (or a part of them) and the prompt's tools of one kind. Per
request, for each of its tools (concurrently):

1. Resolve the tool through the registry (``ToolRegistry.resolve``; the request's version, or the latest
   usable one for version 0). Resolutions are cached for ``spec_ttl_s`` and dropped when a
   ``ToolRegistered`` announces a change. Unknown, disabled or quarantined tools, and a tool of another kind
   than the subject's, give ``abstain`` with the reason.
2. Score all the request's responses in one call of a ``ToolExecutor`` per kind: CPU tools in killable worker
   processes, with a hard deadline per call (``params.deadline_s``, else ``timeout_s``; at most
   ``max_timeout_s``) enforced by killing the process. A user's reward function (``params.concurrency``)
   has its own pool of that many processes, its samples spread over them, each with its own deadline, so
   hung samples time out together. A timeout is
   ``abstain`` "timeout after Xs"; a tool that raises (``raised ValueError: boom (at f.py:3 in fn)``, the
   traceback's first lines in the item's details), returns a refused type (a str, a bool, None where None
   is not "abstain"), NaN/inf or a score outside its declared range is ``error`` with the reason; in-range
   float noise is clipped. The worker keeps serving after any of these, and logs each kind of error (with
   the traceback the first time, then at its 10th, 100th … occurrence). Results are cached by (tool version
   and content hash, query, response, reference). The code tool runs programs on the sandbox actor over the
   bus (``rlar.sandbox_client``), never in a local jail.
3. Batching: tools that batch for real in a worker process (reward models: ``batched`` and not
   ``in_process``) get the requests that arrive together (one fetch) collected for ``batch_wait_s`` into
   one call of up to ``max_batch``; the deadline scales with the number of model batches. A user's batched
   or TRL function (``call_deadline``) gets one call per request, with one deadline per call. Tools scored
   one response at a time in the shared worker processes (rule and metric tools) get the calls made in one
   turn of the event loop — the requests of one fetch — merged into one executor call per tool: one round
   trip to a worker process for all of them, each response still with its own deadline and result.
4. Publish one ``RewardGroup`` per tool (per response: status ok | abstain | error, score, reason, latency,
   cached flag; the tool version actually used, the route's weight, worker id), split by response index if
   larger than the payload limit, with ``Nats-Msg-Id = <prompt>/<generation>/<tool>#<first index>`` — all
   of a request's publishes at once, acks awaited together — so a request redelivered after a crash cannot
   add second rewards to the REWARDS stream; then ack.
5. Per-tool stats (calls, ok/abstain/error, latency, score histogram, reasons, error reasons, timeouts,
   throughput warnings) are merged into the registry every ``stats_flush_s`` and at stop.
6. Throughput (:class:`rlar.tools.stats.ThroughputWatch`, per tool version): ``timeout_streak_warn``
   timeouts in a row, or a backlog that takes ``backlog_warn_s`` or more to score at the tool's p50 latency
   and concurrency, is a warning naming the tool — in this actor's log, as an ``Event`` (kind
   ``reward_slow``) on ``rlar.events.reward``, and in the tool's stats (``last_warning``), which the
   end-of-run summary and the dashboard show.

A failure of our own infrastructure (registry unreachable, publish refused) fails the handler: the request
is nak'ed and redelivered, and dead-lettered after ``max_deliver`` attempts — never a silent 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from nats.aio.msg import Msg
from pydantic import Field, field_validator

from actors.runtime import Actor, ActorConfig
from bus import subjects, topology
from bus.client import keep_in_progress
from bus.codec import encode_parts
from bus.messages import Event, RewardGroup, ScoredItem, ScoreGroup, ToolRef, ToolRegistered
from rlar.registry import ToolRegistry
from rlar.sandbox_client import bus_runner, run_tests_over_bus
from rlar.tools import ToolExecutor, ToolInput, ToolResult, ToolSpec, resolve_tool_class
from rlar.tools.stats import StatsDelta, ThroughputWatch

log = logging.getLogger(__name__)

# Per-kind defaults; the config's dicts override individual kinds.
DEFAULT_CONCURRENCY = {"rule": 8, "metric": 4, "sandbox": 16, "model": 32, "judge": 32}
DEFAULT_FETCH = {"rule": 16, "metric": 16, "sandbox": 16, "model": 32, "judge": 32}
DEFAULT_EXECUTOR_WORKERS = {"rule": 1, "metric": 1, "sandbox": 1, "model": 1, "judge": 1}


class RewardConfig(ActorConfig):
    """Settings of one reward worker."""

    kinds: list[str] = Field(default_factory=lambda: list(subjects.TOOL_KINDS))
    """Tool kinds served (rule, metric, sandbox, model, judge); each has its own queue group."""
    concurrency: dict[str, int] = Field(default_factory=dict)
    """Requests (prompt groups) in flight per kind (defaults: rule 8, metric 4, sandbox 16, model 32,
    judge 32). A judge tool's own ``max_concurrency`` bounds its HTTP calls across them."""
    fetch: dict[str, int] = Field(default_factory=dict)
    """Messages pulled per fetch per kind (defaults: rule/metric/sandbox 16, model/judge 32)."""
    executor_workers: dict[str, int] = Field(default_factory=dict)
    """Tool worker processes per kind (default 1; in-process tools — judge, code — use none)."""
    batch_wait_s: float = Field(0.01, ge=0)
    """How long a batched tool (reward model) waits for more requests before running a batch."""
    max_batch: int = Field(32, ge=1)
    """Most requests in one batched call."""
    timeout_s: float = Field(10.0, gt=0)
    """Per-call deadline for tools that declare no ``deadline_s``."""
    max_timeout_s: float = Field(120.0, gt=0)
    """Cap on any tool's per-call deadline (keep it below the SCORE consumer's ack-wait)."""
    load_timeout_s: float = Field(120.0, gt=0)
    """Deadline for building a tool in a worker process (loading a model)."""
    cache_size: int = Field(65536, ge=0)
    """Cached ok results per kind (0 disables the cache)."""
    allowed_prefixes: list[str] = Field(default_factory=lambda: ["rlar."])
    """Module prefixes a spec's dotted ``impl`` (or a user reward function, :mod:`rlar.tools.pyfunc`) may be
    imported from: adding a module here trusts it to run in this worker's tool processes."""
    python_path: list[str] = Field(default_factory=list)
    """Directories put first on the import path of this worker's tool processes (user reward modules)."""
    spec_ttl_s: float = Field(5.0, ge=0)
    """How long a tool resolution is reused (changes announced on the bus drop it sooner)."""
    stats_flush_s: float = Field(3.0, gt=0)
    """Seconds between merges of per-tool stats into the registry."""
    sandbox_timeout_s: float = Field(300.0, gt=0)
    """Longest wait for the sandbox actor on one program."""
    register_builtins: bool = True
    """Register the built-in tools at start (idempotent)."""
    max_deliver: int = Field(5, ge=1)
    """Deliveries of a request whose handling failed (infrastructure) before it is dead-lettered."""
    timeout_streak_warn: int = Field(3, ge=1)
    """Timeouts in a row of one tool that make a throughput warning naming it."""
    backlog_warn_s: float = Field(30.0, gt=0)
    """A tool whose samples in flight take this long to score (at its p50 latency and concurrency) makes a
    throughput warning naming it (at most once a minute per tool)."""

    @field_validator("kinds")
    @classmethod
    def _known_kinds(cls, v: list[str]) -> list[str]:
        bad = [k for k in v if k not in subjects.TOOL_KINDS]
        if bad or not v:
            raise ValueError(f"kinds must be a non-empty subset of {list(subjects.TOOL_KINDS)}, got {v}")
        return list(dict.fromkeys(v))


class _Batcher:
    """Collects inputs for one tool version for ``wait_s`` (or until ``max_batch``) and scores them together."""

    def __init__(
        self, run: Callable[[list[ToolInput]], Awaitable[list[ToolResult]]], max_batch: int, wait_s: float
    ) -> None:
        self.run = run
        self.max_batch = max_batch
        self.wait_s = wait_s
        self.items: list[tuple[ToolInput, asyncio.Future[ToolResult]]] = []
        self.timer: asyncio.TimerHandle | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        self.batches = 0

    async def submit(self, inp: ToolInput) -> ToolResult:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[ToolResult] = loop.create_future()
        self.items.append((inp, fut))
        if len(self.items) >= self.max_batch:
            self._flush()
        elif self.timer is None:
            self.timer = loop.call_later(self.wait_s, self._flush)
        return await fut

    def _flush(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        items, self.items = self.items, []
        if items:
            task = asyncio.create_task(self._run(items))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def _run(self, items: list[tuple[ToolInput, asyncio.Future[ToolResult]]]) -> None:
        self.batches += 1
        try:
            results = await self.run([inp for inp, _ in items])
        except Exception as exc:  # our bug (the executor never raises for a tool): fail the handlers
            for _, fut in items:
                if not fut.done():
                    fut.set_exception(exc)
            return
        for (_, fut), res in zip(items, results, strict=True):
            if not fut.done():
                fut.set_result(res)


class _Merger:
    """Calls of tools scored one response at a time in the shared worker processes, made in one turn of the
    event loop (the requests of one fetch start together), scored in one executor call per tool spec: one
    round trip to a worker process instead of one per request. The executor's per-sample path gives each
    response its own deadline and result, so a hung response still times out alone; a request's results
    come back when its merged call ends."""

    Call = tuple[ToolSpec, float, list[ToolInput], "asyncio.Future[list[ToolResult]]"]

    def __init__(
        self, run: Callable[[ToolSpec, list[ToolInput], float], Awaitable[list[ToolResult]]]
    ) -> None:
        self.run = run
        self.pending: list[_Merger.Call] = []
        self.tasks: set[asyncio.Task[None]] = set()
        self.calls = 0

    async def score(self, spec: ToolSpec, inputs: list[ToolInput], deadline: float) -> list[ToolResult]:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[list[ToolResult]] = loop.create_future()
        if not self.pending:
            loop.call_soon(self._flush)  # after every handler started in this turn has made its call
        self.pending.append((spec, deadline, inputs, fut))
        return await fut

    def _flush(self) -> None:
        pending, self.pending = self.pending, []
        by_spec: dict[tuple[int, float], list[_Merger.Call]] = {}
        for call in pending:
            by_spec.setdefault((id(call[0]), call[1]), []).append(call)
        for calls in by_spec.values():
            task = asyncio.create_task(self._run(calls))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def _run(self, calls: list[_Merger.Call]) -> None:
        self.calls += 1
        spec, deadline = calls[0][0], calls[0][1]
        try:
            results = await self.run(spec, [x for _, _, inputs, _ in calls for x in inputs], deadline)
        except BaseException as exc:  # our bug (the executor never raises for a tool), or a cancel: fail them
            for *_, fut in calls:
                if not fut.done():
                    fut.set_exception(exc if isinstance(exc, Exception) else asyncio.CancelledError())
            if not isinstance(exc, Exception):
                raise
            return
        start = 0
        for _, _, inputs, fut in calls:
            if not fut.done():
                fut.set_result(results[start : start + len(inputs)])
            start += len(inputs)


class RewardWorker(Actor[RewardConfig]):
    """Scores requests of its kinds with registered tools; see the module docstring."""

    kind = "reward"
    Config = RewardConfig

    def __init__(self, config: RewardConfig) -> None:
        super().__init__(config)
        self.registry: ToolRegistry | None = None
        self.executors: dict[str, ToolExecutor] = {}
        self._resolved: dict[tuple[str, int], tuple[float, ToolSpec | None, str]] = {}
        self._batchers: dict[tuple[str, str, int], _Batcher] = {}
        self._mergers: dict[str, _Merger] = {}
        # Per kind, the requests in hand: one keep-alive per kind marks them in progress while main() runs.
        self._held: dict[str, dict[int, Msg]] = {k: {} for k in config.kinds}
        self._stats: dict[tuple[str, int], StatsDelta] = {}
        self._watches: dict[tuple[str, int], ThroughputWatch] = {}
        self._errors_seen: dict[tuple[str, int, str], int] = {}
        self._ack_wait: dict[str, float] = {}
        self._inflight: dict[str, int] = dict.fromkeys(config.kinds, 0)
        self._busy_s = 0.0
        self._busy_since: float | None = None

    def _per_kind(self, table: dict[str, int], defaults: dict[str, int], kind: str) -> int:
        return max(1, int(table.get(kind, defaults[kind])))

    # -- life -------------------------------------------------------------------------------------
    async def setup(self) -> None:
        cfg = self.config
        # Tool processes inherit this process's import path (rlar.tools.executor).
        sys.path[:0] = [p for p in cfg.python_path if p not in sys.path]
        self.registry = ToolRegistry(self.bus)
        if cfg.register_builtins:
            await self.registry.ensure_builtins(by=f"{self.kind}/{self.instance}")
        # Untrusted code (code-task tests, synthesised verifiers) runs on the sandbox actor, never here.
        resources = {
            "run_tests": run_tests_over_bus(self.bus, max_timeout_s=cfg.sandbox_timeout_s),
            "run_code": bus_runner(self.bus, cfg.sandbox_timeout_s),
        }
        for kind in cfg.kinds:
            self.executors[kind] = ToolExecutor(
                workers=self._per_kind(cfg.executor_workers, DEFAULT_EXECUTOR_WORKERS, kind),
                timeout_s=min(cfg.timeout_s, cfg.max_timeout_s),
                load_timeout_s=cfg.load_timeout_s,
                cache_size=cfg.cache_size,
                resources=resources,
                allowed_prefixes=cfg.allowed_prefixes,
            )
            info = await self.bus.js.consumer_info(topology.SCORE, topology.reward_consumer(kind))
            self._ack_wait[kind] = float(info.config.ack_wait or cfg.topology.score_ack_wait_s)
        await self.bus.subscribe(subjects.TOOLS_REGISTERED, ToolRegistered, self._on_tool_change)

    async def main(self) -> None:
        cfg = self.config
        loops = [
            self.bus.consume(
                topology.SCORE,
                topology.reward_consumer(kind),
                ScoreGroup,
                functools.partial(self._handle, kind),
                batch=self._per_kind(cfg.fetch, DEFAULT_FETCH, kind),
                concurrency=self._per_kind(cfg.concurrency, DEFAULT_CONCURRENCY, kind),
                max_deliver=cfg.max_deliver,
                stop=self.stopping,
            )
            for kind in cfg.kinds
        ]
        flusher = asyncio.create_task(self._flush_loop())
        try:
            async with contextlib.AsyncExitStack() as held:
                # Tell the server the requests in hand are still being worked on, so a slow tool is not handed
                # to a second worker (every third of the kind's ack-wait, until the pull loops have ended).
                for kind in cfg.kinds:
                    await held.enter_async_context(
                        keep_in_progress(self._held[kind].values, self._ack_wait.get(kind, 30.0))
                    )
                await self.stopping.wait()
                # The pull loops finish the requests in hand, then return.
                await asyncio.gather(*loops, return_exceptions=True)
        finally:
            flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await flusher
            await self.flush_stats()

    async def teardown(self) -> None:
        for ex in self.executors.values():
            with contextlib.suppress(Exception):
                await ex.close()

    def info(self) -> dict[str, Any]:
        return {
            "kinds": list(self.config.kinds),
            "inflight": dict(self._inflight),
            "executors": {k: ex.stats.to_dict() for k, ex in self.executors.items()},
            "batches": sum(b.batches for b in self._batchers.values()),
            # executor calls made for merged requests of per-response tools (one per tool and fetch)
            "merged_calls": sum(m.calls for m in self._mergers.values()),
            # wall time with at least one request in flight (the stage's occupancy; over the counters' requests)
            "busy_s": round(
                self._busy_s + (time.perf_counter() - self._busy_since if self._busy_since else 0.0), 4
            ),
        }

    # -- tools ------------------------------------------------------------------------------------
    async def _on_tool_change(self, msg: ToolRegistered, raw: Msg) -> None:
        for key in [k for k in self._resolved if k[0] == msg.name]:
            self._resolved.pop(key, None)

    async def resolve(self, name: str, version: int) -> tuple[ToolSpec | None, str]:
        """(spec, "") or (spec or None, why it may not be used); cached for ``spec_ttl_s``."""
        assert self.registry is not None
        key = (name, int(version or 0))
        hit = self._resolved.get(key)
        now = time.monotonic()
        if hit is not None and hit[0] > now:
            return hit[1], hit[2]
        spec, why = await self.registry.resolve(name, version or None)
        self._resolved[key] = (now + self.config.spec_ttl_s, spec, why)
        return spec, why

    def _deadline(self, spec: ToolSpec, self_timed: bool = False) -> float:
        declared = spec.params.get("deadline_s") or self.config.timeout_s
        return float(declared) if self_timed else min(float(declared), self.config.max_timeout_s)

    async def score(self, kind: str, spec: ToolSpec, inputs: list[ToolInput]) -> list[ToolResult]:
        """Score ``inputs`` with ``spec`` on this worker's executor for ``kind``: one executor call for the
        whole list; reward models also batch across requests that arrive together."""
        ex = self.executors[kind]
        try:
            cls = resolve_tool_class(spec, allowed_prefixes=self.config.allowed_prefixes)
        except Exception as exc:
            return [
                ToolResult.error(f"cannot resolve tool: {type(exc).__name__}: {exc}"[:2000]) for _ in inputs
            ]
        deadline = self._deadline(spec, cls.self_timed)
        if cls.batched and not cls.in_process and not cls.call_deadline:
            key = (kind, spec.name, spec.version)
            batcher = self._batchers.get(key)
            if batcher is None:

                async def run(batch: list[ToolInput], spec: ToolSpec = spec) -> list[ToolResult]:
                    return await ex.score_batch(spec, batch, timeout_s=deadline)

                batcher = _Batcher(run, self.config.max_batch, self.config.batch_wait_s)
                self._batchers[key] = batcher
            return list(await asyncio.gather(*(batcher.submit(x) for x in inputs)))
        if not cls.batched and not cls.in_process and ex.concurrency(spec) is None:
            merger = self._mergers.get(kind)
            if merger is None:
                merger = self._mergers[kind] = _Merger(
                    lambda spec, batch, limit: ex.score_batch(spec, batch, timeout_s=limit)
                )
            return await merger.score(spec, inputs, deadline)
        return await ex.score_batch(spec, inputs, timeout_s=deadline)

    # -- requests ---------------------------------------------------------------------------------
    async def _handle(self, kind: str, req: ScoreGroup, raw: Msg) -> None:
        if self._busy_since is None:
            self._busy_since = time.perf_counter()
        self._inflight[kind] += 1
        held = self._held[kind]
        held[id(raw)] = raw  # marked in progress by main()'s keep-alive while it is in hand
        try:
            rewards = await asyncio.gather(*(self._score_tool(kind, req, tool) for tool in req.tools))
            limit = self.bus.max_payload
            key = f"{req.prompt_id}/{req.generation}"
            task = subjects.rewards(subjects.safe_token(req.task))
            await self.bus.js_publish_many(
                [
                    (task, data, f"{key}/{part.tool}#{part.items[0].index}")
                    for reward in rewards
                    if reward.items
                    for part, data in encode_parts(reward, "items", limit)
                ]
            )
        finally:
            held.pop(id(raw), None)
            self._inflight[kind] -= 1
            if self._busy_since is not None and not any(self._inflight.values()):
                self._busy_s += time.perf_counter() - self._busy_since
                self._busy_since = None
        self.counters["requests"] += 1

    async def _score_tool(self, kind: str, req: ScoreGroup, tool: ToolRef) -> RewardGroup:
        """One tool's results for every item of ``req`` (abstain for all when the tool may not be used)."""
        t0 = time.perf_counter()
        spec, why = await self.resolve(tool.tool, tool.version)
        if spec is not None and not why and spec.kind != kind:
            why = f"tool {spec.name} is a {spec.kind} tool; this request came on {subjects.score(kind)}"
        results: list[ToolResult] = []
        if spec is None or why:
            results = [ToolResult.abstain(why) for _ in req.items]
        else:
            metadata = dict(req.metadata)
            inputs = [
                ToolInput(query=req.query, response=it.response, reference=req.reference, metadata=metadata)
                for it in req.items
            ]
            watch = self._watch(kind, spec)
            warnings = watch.started(len(inputs)) if watch is not None else []
            try:
                results = await self.score(kind, spec, inputs)
            finally:
                if watch is not None:
                    warnings += watch.finished(results, n=len(inputs))
            self._log_errors(spec, results)
            for text in warnings:
                await self._warn(spec, text, watch.streak if watch is not None else 0)
        wall = time.perf_counter() - t0
        items = []
        delta = None
        if spec is not None:
            delta = self._stats.get((spec.name, spec.version))
            if delta is None:
                delta = self._stats[(spec.name, spec.version)] = StatsDelta(spec.score_range)
        for it, res in zip(req.items, results, strict=True):
            cached = bool(res.details.get("cached", False))
            latency = res.latency_s or wall
            items.append(
                ScoredItem(
                    index=it.index,
                    status=res.status,
                    score=res.score if res.ok else None,
                    reason=res.reason,
                    latency_s=round(latency, 6),
                    cached=cached,
                    details=res.details,
                )
            )
            self.counters["rewards"] += 1
            self.counters[f"{kind}.{res.status}"] += 1
            self.counters["cached"] += cached
            self.metrics.reward(tool.tool, res.status, latency, cached=cached)
            if delta is not None:
                delta.add(res.status, res.score, latency, cached=cached, reason=res.reason)
        return RewardGroup(
            prompt_id=req.prompt_id,
            generation=req.generation,
            task=req.task,
            tool=tool.tool,
            tool_version=spec.version if spec is not None else tool.version,
            items=items,
            weight=tool.weight,
            worker=self.instance,
            latency_s=round(wall, 6),
        )

    # -- errors and throughput ----------------------------------------------------------------------
    def _watch(self, kind: str, spec: ToolSpec) -> ThroughputWatch | None:
        key = (spec.name, spec.version)
        watch = self._watches.get(key)
        if watch is None:
            try:
                cls = resolve_tool_class(spec, allowed_prefixes=self.config.allowed_prefixes)
            except Exception:
                return None  # scored as an error by score(); nothing to watch
            # A reward model batching requests together has no per-request capacity to compare with.
            capacity = (
                None if cls.batched and not cls.call_deadline else self.executors[kind].capacity(spec, cls)
            )
            watch = self._watches[key] = ThroughputWatch(
                spec.name,
                spec.version,
                concurrency=capacity,
                deadline_s=self._deadline(spec, cls.self_timed),
                streak_warn=self.config.timeout_streak_warn,
                backlog_warn_s=self.config.backlog_warn_s,
                per_call=cls.batched,
            )
        return watch

    def _log_errors(self, spec: ToolSpec, results: list[ToolResult]) -> None:
        """Log each kind of error of a tool: with its traceback the first time, then at its 10th, 100th … time."""
        for res in results:
            if res.status != "error":
                continue
            # One kind per exception type and place (its message may differ per sample), else per reason.
            exc = res.details.get("exception")
            what = f"{exc}{res.reason.rpartition(' (at ')[2]}" if exc else res.reason[:120]
            key = (spec.name, spec.version, what)
            if len(self._errors_seen) > 10000:
                self._errors_seen.clear()
            n = self._errors_seen[key] = self._errors_seen.get(key, 0) + 1
            if n == 1:
                tb = str(res.details.get("traceback") or "")
                log.warning(
                    "tool %s v%d error: %s%s", spec.name, spec.version, res.reason, ("\n" + tb) if tb else ""
                )
            elif math.log10(n).is_integer():
                log.warning("tool %s v%d error (%d times so far): %s", spec.name, spec.version, n, res.reason)

    async def _warn(self, spec: ToolSpec, text: str, streak: int) -> None:
        """A throughput warning: the log, the tool's stats (summary, dashboard) and an ``Event``."""
        log.warning("%s", text)
        delta = self._stats.get((spec.name, spec.version))
        if delta is None:
            delta = self._stats[(spec.name, spec.version)] = StatsDelta(spec.score_range)
        delta.warn(text, streak)
        event = Event(
            actor=f"{self.kind}/{self.instance}",
            kind="reward_slow",
            level="warning",
            message=text,
            data={"tool": spec.name, "version": spec.version},
        )
        with contextlib.suppress(Exception):  # telemetry; the stats carry the warning too
            await self.bus.publish(subjects.events(self.kind), event)

    # -- stats ------------------------------------------------------------------------------------
    async def _flush_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.stats_flush_s)
            await self.flush_stats()

    async def flush_stats(self) -> None:
        """Merge the stats gathered since the last flush into the registry; keep them on failure."""
        if self.registry is None or not self._stats:
            return
        pending, self._stats = self._stats, {}
        for (name, version), delta in pending.items():
            try:
                await self.registry.record_stats(name, version, delta)
            except Exception as exc:
                log.warning("stats flush for %s v%d failed (kept for the next one): %s", name, version, exc)
                kept = self._stats.setdefault((name, version), StatsDelta(delta.score_range))
                kept.merge(delta)
