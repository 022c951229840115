"""The sandbox actor: runs untrusted Python (and its tests) for anyone on the bus, request/reply.

Protocol: a ``SandboxRequest`` on ``rlar.sandbox.exec`` (core NATS, queue group ``sandbox``, so replicas
share the load); the reply is a ``SandboxReply`` whose ``result`` is ``rlar.sandbox.RunResult.to_dict()`` and
``status`` its status (ok | failed | timeout | oom | crashed | rejected). Clients use
``rlar.sandbox_client.sandbox_run``.

Request forms: ``tests`` None → ``run_code(code, stdin)`` (the program's exit status and output);
otherwise ``run_tests`` with ``tests`` in any shape ``rlar.sandbox.parse_code_tests`` accepts (a
``CodeTests`` dict, HumanEval, MBPP, APPS, ... records), or raw with ``style`` = ``humaneval`` (the check
source, with ``entry_point``), ``asserts`` (statements) or ``stdio`` (a list of [input, expected] pairs).
``limits`` are ``Limits`` fields; each is capped by the operator's ``max_limits`` and missing ones come from
``default_limits`` — the request cannot buy more than the
operator allows. A malformed request is answered ``rejected`` with the reason.

Isolation: ``mode = "bwrap"`` (default) runs every request in the bubblewrap jail described in
``rlar.sandbox``. At start the actor runs ``check_sandbox``; if the configured sandbox does not work here
(bubblewrap missing or broken), every request is answered ``rejected`` with the reason and nothing runs —
untrusted code never falls back to a weaker jail on its own. ``mode = "rlimit-only"`` is the explicit
operator opt-in for hosts without working bubblewrap (see ``rlar.sandbox`` for what it does not cover).
An unusable sandbox is re-checked at most every ``recheck_s`` seconds, on demand.

Load: at most ``concurrency`` jails at once (default: the number of cores); up to ``max_pending`` more wait
their turn; beyond that a request is answered ``rejected`` "busy" at once, so a client never waits on a hopeless
queue. When a run gets its slot the actor answers ``started`` (with the run's wall clock) before the result, so
the client's deadline counts from the start of execution, not from time spent queued. While a request waits
for its slot the actor answers ``queued`` every ``queued_notice_s``: a client that hears nothing for a while
knows its request died with an actor (SIGKILL, a lost connection) instead of waiting out the whole queue bound.
On stop: unsubscribe, finish the runs in hand, reply to each.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from typing import Any, Literal

from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from pydantic import Field

from actors.runtime import Actor, ActorConfig
from bus import subjects
from bus.codec import encode
from bus.messages import Event, SandboxReply, SandboxRequest
from rlar.sandbox import (
    CodeTests,
    Limits,
    RunResult,
    SandboxConfig,
    check_sandbox,
    parse_code_tests,
    run_code_async,
    run_tests_async,
)

log = logging.getLogger(__name__)

_DEFAULT_MAX_LIMITS: dict[str, float | int] = {
    "test_s": 30.0,
    "wall_s": 300.0,
    "cpu_s": 60,
    "memory_mb": 2048,
    "file_mb": 64,
    "nproc": 64,
    "nofile": 256,
    "tmpfs_mb": 256,
    "output_bytes": 1 << 20,
}


class SandboxActorConfig(ActorConfig):
    """Operator settings of one sandbox actor."""

    mode: Literal["bwrap", "rlimit-only"] = "bwrap"
    """bwrap: the full jail. rlimit-only: an explicit opt-in weaker mode (no filesystem/PID isolation)."""
    bwrap: str = "/usr/bin/bwrap"
    """Path of the bubblewrap binary."""
    python: str = "/usr/bin/python3"
    """Interpreter used inside the jail (system Python, not the project's venv)."""
    host_uid: int | None = 65534
    """When running as root, start the jail as this uid (None keeps root)."""
    host_gid: int = 65534
    ro_binds: list[str] = Field(default_factory=list)
    """Extra host paths bound read-only inside the jail."""
    concurrency: int = Field(default_factory=lambda: os.cpu_count() or 1, ge=1, le=256)
    """Jails running at once in this actor (default: the number of cores)."""
    max_pending: int = Field(256, ge=0)
    """Requests allowed to wait for a slot; beyond that they are answered rejected "busy"."""
    default_limits: dict[str, Any] = Field(default_factory=dict)
    """``Limits`` fields used when a request leaves them out (else the library defaults)."""
    max_limits: dict[str, Any] = Field(default_factory=lambda: dict(_DEFAULT_MAX_LIMITS))
    """Ceilings on every ``Limits`` field a request may ask for (``wall_s`` caps the whole jail)."""
    recheck_s: float = Field(30.0, gt=0)
    """An unusable sandbox is re-checked on demand at most this often."""
    queue: str = "sandbox"
    """Queue group on ``rlar.sandbox.exec``."""
    queued_notice_s: float = Field(5.0, gt=0)
    """While a request waits for a slot, tell its client this often that it is still queued here (clients give
    up on a request they hear nothing about for ``rlar.sandbox_client.ALIVE_S``)."""


class SandboxActor(Actor[SandboxActorConfig]):
    """Serves ``rlar.sandbox.exec`` requests with the configured sandbox; see the module docstring."""

    kind = "sandbox"
    Config = SandboxActorConfig

    def __init__(self, config: SandboxActorConfig) -> None:
        super().__init__(config)
        self.sandbox = SandboxConfig(
            mode=config.mode,
            bwrap=config.bwrap,
            python=config.python,
            host_uid=config.host_uid,
            host_gid=config.host_gid,
            ro_binds=tuple(config.ro_binds),
        )
        self.unusable: str | None = None
        self._checked_at = 0.0
        self._sem = asyncio.Semaphore(config.concurrency)
        self._inflight: set[asyncio.Task[None]] = set()
        self._sub: Subscription | None = None
        self._recheck_lock = asyncio.Lock()

    # -- life -------------------------------------------------------------------------------------
    async def setup(self) -> None:
        await self._check()
        if self.unusable:
            log.error("%s", self.unusable)
            await self.bus.publish(
                subjects.events(self.kind),
                Event(
                    actor=f"{self.kind}/{self.instance}",
                    kind="sandbox_unusable",
                    level="error",
                    message=self.unusable,
                    data={"mode": self.config.mode},
                ),
            )
        else:
            log.info("sandbox ready (mode %s)", self.config.mode)
        self._sub = await self.bus.subscribe(
            subjects.SANDBOX_EXEC, SandboxRequest, self._on_request, queue=self.config.queue
        )

    async def main(self) -> None:
        await self.stopping.wait()
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
        if self._inflight:
            await asyncio.gather(*list(self._inflight), return_exceptions=True)

    def info(self) -> dict[str, Any]:
        return {
            "mode": self.config.mode,
            "usable": self.unusable is None,
            "reason": self.unusable or "",
            "inflight": len(self._inflight),
            "concurrency": self.config.concurrency,
        }

    async def _check(self) -> None:
        problem = await asyncio.to_thread(check_sandbox, self.sandbox)
        self._checked_at = time.monotonic()
        self.unusable = None if problem is None else f"sandbox unusable in {self.config.mode} mode: {problem}"

    # -- requests ---------------------------------------------------------------------------------
    async def _on_request(self, req: SandboxRequest, raw: Msg) -> None:
        # Core subscriptions run callbacks one at a time: hand the work to a task at once.
        self.counters["requests"] += 1
        if len(self._inflight) >= self.config.concurrency + self.config.max_pending:
            self.counters["busy"] += 1
            await self._reply(raw, req, RunResult(status="rejected", reason="sandbox busy: queue full"))
            return
        task = asyncio.create_task(self._serve(req, raw))
        self._inflight.add(task)
        task.add_done_callback(self._inflight.discard)

    async def _serve(self, req: SandboxRequest, raw: Msg) -> None:
        try:
            result = await self._execute(req, raw)
        except Exception as exc:  # our bug: still answer, so the client does not wait for a timeout
            log.exception("sandbox request %s failed", req.request_id)
            result = RunResult(status="rejected", reason=f"sandbox actor error: {type(exc).__name__}: {exc}")
        await self._reply(raw, req, result)

    async def _execute(self, req: SandboxRequest, raw: Msg) -> RunResult:
        if self.unusable is not None:
            async with self._recheck_lock:
                if self.unusable is not None and time.monotonic() - self._checked_at >= self.config.recheck_s:
                    await self._check()
            if self.unusable is not None:
                return RunResult(status="rejected", reason=self.unusable)
        try:
            tests = tests_from_request(req)
            limits = self.effective_limits(req.limits, len(tests) if tests is not None else 1)
        except (ValueError, TypeError, KeyError) as exc:
            return RunResult(status="rejected", reason=f"bad request: {exc}"[:1000])
        notices = asyncio.create_task(self._tell_queued(raw, req)) if self._sem.locked() else None
        try:
            await self._sem.acquire()
        finally:
            if notices is not None:
                notices.cancel()
        try:
            # Tell the client its run starts now: its deadline counts from here, not from the queue.
            await self._reply(raw, req, None, started=limits.wall_for(len(tests) if tests is not None else 1))
            if tests is None:
                return await run_code_async(req.code, req.stdin, limits, self.sandbox)
            return await run_tests_async(req.code, tests, limits, self.sandbox)
        finally:
            self._sem.release()

    async def _tell_queued(self, raw: Msg, req: SandboxRequest) -> None:
        """Until cancelled (the run got its slot): answer ``queued`` every ``queued_notice_s``."""
        while True:
            await self._reply(raw, req, None, queued=True)
            await asyncio.sleep(self.config.queued_notice_s)

    def effective_limits(self, asked: dict[str, Any], jobs: int) -> Limits:
        """The request's limits, defaults filled in and every field capped by ``max_limits``."""
        fields = {**self.config.default_limits, **(asked or {})}
        base = Limits.from_dict(fields)  # validates names and ranges
        capped = base.to_dict()
        for key, ceiling in self.config.max_limits.items():
            if key == "wall_s" or key not in capped or ceiling is None:
                continue
            capped[key] = min(capped[key], ceiling)
        wall_cap = self.config.max_limits.get("wall_s")
        if wall_cap is not None:
            capped["wall_s"] = min(Limits.from_dict(capped).wall_for(jobs), float(wall_cap))
        return Limits.from_dict(capped)

    async def _reply(
        self,
        raw: Msg,
        req: SandboxRequest,
        result: RunResult | None,
        started: float = 0.0,
        queued: bool = False,
    ) -> None:
        """Send the run's result, or (``result`` None) the ``queued`` notice or the ``started`` notice with the
        run's wall clock."""
        if result is not None:
            self.counters[result.status] += 1
        if not raw.reply:
            if result is not None:
                self.counters["no_reply_subject"] += 1
            return
        if queued:
            reply = SandboxReply(request_id=req.request_id, status="queued")
        elif result is None:
            reply = SandboxReply(request_id=req.request_id, status="started", result={"wall_s": started})
        else:
            reply = SandboxReply(request_id=req.request_id, status=result.status, result=result.to_dict())
        try:
            await raw.respond(encode(reply))
        except Exception as exc:  # the requester is gone or the connection dropped: nothing to do
            log.warning("could not reply to sandbox request %s: %s", req.request_id, exc)


_REQUEST_STYLES = ("tests", "humaneval", "asserts", "stdio", "calls", "script", "run", "")


def tests_from_request(req: SandboxRequest) -> CodeTests | None:
    """The ``CodeTests`` a request asks for, None for a plain run; raises ValueError when malformed.

    ``tests`` in any shape ``parse_code_tests`` accepts; the legacy ``style`` = ``humaneval`` (with
    ``entry_point``), ``asserts`` or ``stdio`` still reads a bare check source, statement list or pair list."""
    t = req.tests
    if t is None:
        if req.style not in ("", "script", "run"):
            raise ValueError(f"style {req.style!r} needs tests")
        return None
    if req.style not in _REQUEST_STYLES:
        raise ValueError(
            f"cannot read tests of style {req.style!r} (expected one of {', '.join(_REQUEST_STYLES)})"
        )
    if req.style == "humaneval" and isinstance(t, str):
        return CodeTests.humaneval(t, req.entry_point)
    if req.style == "stdio" and isinstance(t, list | tuple):
        return CodeTests.stdio_cases([(str(i), str(o)) for i, o in t])
    if req.style == "asserts" and isinstance(t, str):
        t = [t]
    return parse_code_tests(t)
