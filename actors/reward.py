"""Reward workers: score ``ScoreRequest``s with registered tools and publish ``Reward``s.

One worker serves the tool kinds in ``kinds`` (``rlar up --actors reward-model=2,reward-sandbox=8`` starts
workers for one kind each). For each kind it pulls from the durable ``reward-<kind>`` on the SCORE stream —
the kind's queue group: every request goes to one worker, and one that dies without acking has its requests
redelivered to the others after the consumer's ack-wait. While a request is being scored the worker tells
the server it is still in progress, so a slow tool is not redelivered to a second worker.

Per request:

1. Resolve the tool through the registry (``ToolRegistry.resolve``; the request's version, or the latest
   usable one for version 0). Resolutions are cached for ``spec_ttl_s`` and dropped when a
   ``ToolRegistered`` announces a change. Unknown, disabled or quarantined tools, and a tool of another kind
   than the subject's, give ``abstain`` with the reason.
2. Score through a ``ToolExecutor`` per kind: CPU tools in killable worker processes, with a hard deadline
   per call (``params.deadline_s``, else ``timeout_s``; at most ``max_timeout_s``) enforced by killing the
   process. A timeout is ``abstain`` "timeout after Xs"; a tool that raises, returns NaN/inf or a score
   outside its declared range is ``error`` with the reason; in-range float noise is clipped. The worker
   keeps serving after any of these. Results are cached by (tool version and content hash, query,
   response, reference). The code tool runs programs on the sandbox actor over the bus
   (``rlar.sandbox_client``), never in a local jail.
3. Batching: tools that batch for real in a worker process (reward models: ``batched`` and not
   ``in_process``) get the requests that arrive together (one fetch) collected for ``batch_wait_s`` into
   one call of up to ``max_batch``; the deadline scales with the number of model batches.
4. Publish ``Reward`` (status ok | abstain | error, score, reason, latency, worker id, the tool version
   actually used, cached flag, the request's weight) with ``Nats-Msg-Id = <sample_id>/<tool>``, so a
   request redelivered after a crash cannot add a second reward to the REWARDS stream; then ack.
5. Per-tool stats (calls, ok/abstain/error, latency, score histogram, reasons) are merged into the
   registry every ``stats_flush_s`` and at stop.

A failure of our own infrastructure (registry unreachable, publish refused) fails the handler: the request
is nak'ed and redelivered, and dead-lettered after ``max_deliver`` attempts — never a silent 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from nats.aio.msg import Msg
from pydantic import Field, field_validator

from actors.runtime import Actor, ActorConfig
from bus import subjects, topology
from bus.messages import Reward, ScoreRequest, ToolRegistered
from rlar.registry import ToolRegistry
from rlar.sandbox_client import run_tests_over_bus
from rlar.synthesis.runner import bus_runner
from rlar.tools import ToolExecutor, ToolInput, ToolResult, ToolSpec, resolve_tool_class
from rlar.tools.stats import StatsDelta

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
    """Requests in flight per kind (defaults: rule 8, metric 4, sandbox 16, model 32, judge 32)."""
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
    """Module prefixes a spec's dotted ``impl`` may be imported from."""
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
        self._stats: dict[tuple[str, int], StatsDelta] = {}
        self._ack_wait: dict[str, float] = {}
        self._inflight: dict[str, int] = dict.fromkeys(config.kinds, 0)

    def _per_kind(self, table: dict[str, int], defaults: dict[str, int], kind: str) -> int:
        return max(1, int(table.get(kind, defaults[kind])))

    # -- life -------------------------------------------------------------------------------------
    async def setup(self) -> None:
        cfg = self.config
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
                ScoreRequest,
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

    async def score(self, kind: str, spec: ToolSpec, inp: ToolInput) -> ToolResult:
        """Score one input with ``spec`` on this worker's executor for ``kind`` (batched where it pays)."""
        ex = self.executors[kind]
        try:
            cls = resolve_tool_class(spec, allowed_prefixes=self.config.allowed_prefixes)
        except Exception as exc:
            return ToolResult.error(f"cannot resolve tool: {type(exc).__name__}: {exc}"[:2000])
        deadline = self._deadline(spec, cls.self_timed)
        if cls.batched and not cls.in_process:
            key = (kind, spec.name, spec.version)
            batcher = self._batchers.get(key)
            if batcher is None:

                async def run(inputs: list[ToolInput], spec: ToolSpec = spec) -> list[ToolResult]:
                    return await ex.score_batch(spec, inputs, timeout_s=deadline)

                batcher = _Batcher(run, self.config.max_batch, self.config.batch_wait_s)
                self._batchers[key] = batcher
            return await batcher.submit(inp)
        return await ex.score(spec, inp, timeout_s=deadline)

    # -- requests ---------------------------------------------------------------------------------
    async def _keepalive(self, kind: str, raw: Msg) -> None:
        # Tell the server we are still working, so a slow tool is not handed to a second worker.
        period = max(0.2, self._ack_wait.get(kind, 30.0) / 3)
        while True:
            await asyncio.sleep(period)
            with contextlib.suppress(Exception):
                await raw.in_progress()

    async def _handle(self, kind: str, req: ScoreRequest, raw: Msg) -> None:
        t0 = time.perf_counter()
        self._inflight[kind] += 1
        keepalive = asyncio.create_task(self._keepalive(kind, raw))
        try:
            spec, why = await self.resolve(req.tool.tool, req.tool.version)
            if spec is not None and not why and str(spec.kind) != kind:
                why = f"tool {spec.name} is a {spec.kind} tool; this request came on {subjects.score(kind)}"
            if spec is None or why:
                result = ToolResult.abstain(why)
            else:
                inp = ToolInput(query=req.query, response=req.response, reference=req.reference,
                                metadata=dict(req.metadata))  # fmt: skip
                result = await self.score(kind, spec, inp)
            latency = time.perf_counter() - t0
            cached = bool(result.details.get("cached", False))
            version = spec.version if spec is not None else req.tool.version
            reward = Reward(
                sample_id=req.sample_id,
                prompt_id=req.prompt_id,
                task=req.task,
                tool=req.tool.tool,
                tool_version=version,
                status=result.status,
                score=result.score if result.status == "ok" else None,
                weight=req.tool.weight,
                reason=result.reason,
                latency_s=round(latency, 6),
                worker=self.instance,
                cached=cached,
                details=result.details,
            )
            await self.bus.js_publish(
                subjects.rewards(subjects.safe_token(req.task)),
                reward,
                msg_id=f"{req.sample_id}/{req.tool.tool}",
            )
        finally:
            keepalive.cancel()
            self._inflight[kind] -= 1
        self.counters["rewards"] += 1
        self.counters[f"{kind}.{result.status}"] += 1
        if cached:
            self.counters["cached"] += 1
        if spec is not None:
            delta = self._stats.get((spec.name, spec.version))
            if delta is None:
                delta = self._stats[(spec.name, spec.version)] = StatsDelta(spec.score_range)
            delta.add(result.status, result.score, latency, cached=cached, reason=result.reason)

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
