"""Client side of the sandbox actor: run code remotely over ``rlar.sandbox.exec`` and get a ``RunResult``.

``sandbox_run(bus, request, timeout_s, queue_timeout_s=...)`` never raises for the remote side's failures; it
returns a result with a status, like the local sandbox does:

- the actor's verdict (ok / failed / timeout / oom / crashed / rejected) with its ``RunResult``;
- ``rejected`` "no sandbox actor is listening" when nobody serves the subject (answered at once);
- ``rejected`` "no reply from the sandbox ..." when the actor does not answer in time. A bus timeout is not a
  verdict on the code (the actor enforces the code's own limits and answers ``timeout`` itself), so it is
  reported as an infrastructure failure: a reward tool abstains rather than scoring 0;
- ``rejected`` for a reply that does not decode.

Deadlines count from the start of execution, not from the request: the actor says ``started`` when a run gets
its slot, and ``timeout_s`` runs from then. Waiting for the slot (other runs ahead in the actor's queue) is
bounded separately by ``queue_timeout_s``, so a denial-of-service program queued behind slow ones still gets
its own verdict (a timeout, scored 0) instead of being dropped as a bus timeout. While queued, the actor says
``queued`` every few seconds; a request nothing is heard about for ``alive_s`` died with its actor (SIGKILL, a
lost connection, a bus restart) and is answered ``rejected`` then, not after the whole queue bound.

A synthesised verifier's code reaches the sandbox through an injectable ``RunCode`` callable, ``async (program,
stdin, limits) -> RunResult`` (or its dict): ``local_runner(config)`` runs ``rlar.sandbox.run_code_async`` in a
bubblewrap jail on this host (tests, the CLI, single-host runs); ``bus_runner(bus, timeout_s)`` sends it to the
sandbox actor with ``sandbox_run``, so actors without bubblewrap can still validate and score (no reply: a
``rejected`` result, not the candidate's fault). Either way the candidate runs in a jail, never in the caller.

``run_tests_over_bus(bus)`` adapts it to the code reward tool's ``run_tests`` resource
(``rlar.tools.code.CodeTestsTool``): ``(program, tests, limits=None) -> RunResult``.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from nats.aio.msg import Msg

from bus import subjects
from bus.client import Bus, RequestTimeout
from bus.codec import DecodeError, decode, encode
from bus.messages import SandboxReply, SandboxRequest
from rlar.sandbox import run_code_async
from rlar.sandbox.schema import CodeTests, Limits, RunResult, SandboxConfig

__all__ = [
    "ALIVE_S",
    "QUEUE_TIMEOUT_S",
    "RunCode",
    "as_run_result",
    "bus_runner",
    "local_runner",
    "reply_timeout_s",
    "run_tests_over_bus",
    "sandbox_run",
]

# Transport slack on top of the run's own wall-clock limit, counted from the start of execution.
SLACK_S = 10.0
# How long a request may wait for a free jail slot before the client gives up (an overloaded sandbox).
QUEUE_TIMEOUT_S = 600.0
# How long a request may go unheard of before it started (the actor says "queued" every few seconds meanwhile).
ALIVE_S = 60.0


def reply_timeout_s(limits: Limits, jobs: int) -> float:
    """How long to wait for a run with these limits once it started: its whole-jail wall clock plus slack."""
    return limits.wall_for(jobs) + SLACK_S


async def sandbox_run(
    bus: Bus,
    request: SandboxRequest,
    timeout_s: float,
    *,
    queue_timeout_s: float = QUEUE_TIMEOUT_S,
    alive_s: float = ALIVE_S,
) -> RunResult:
    """Send ``request`` to a sandbox actor (queue group "sandbox"); wait up to ``queue_timeout_s`` for it to
    start (hearing from the actor at least every ``alive_s``) and then up to ``timeout_s`` for its result."""
    if not request.request_id:
        request.request_id = uuid.uuid4().hex
    replies: asyncio.Queue[Msg] = asyncio.Queue()

    async def on_reply(msg: Msg) -> None:
        replies.put_nowait(msg)

    inbox = bus.nc.new_inbox()
    sub = await bus.nc.subscribe(inbox, cb=on_reply)
    try:
        await bus.nc.publish(subjects.SANDBOX_EXEC, encode(request), reply=inbox)
        started = False
        loop = asyncio.get_running_loop()
        queue_deadline = loop.time() + queue_timeout_s
        while True:
            wait = timeout_s if started else max(0.0, min(alive_s, queue_deadline - loop.time()))
            try:
                raw = await asyncio.wait_for(replies.get(), wait)
            except TimeoutError:
                if started:
                    reason = f"no reply from the sandbox within {wait:g}s after the run started"
                elif loop.time() >= queue_deadline:
                    reason = f"the sandbox did not start the run within {queue_timeout_s:g}s"
                else:
                    reason = (
                        f"nothing heard from the sandbox for {alive_s:g}s before the run started (the "
                        "request died with its actor or the connection)"
                    )
                return RunResult(status="rejected", reason=reason)
            if raw.headers and raw.headers.get("Status") == "503":
                return RunResult(
                    status="rejected", reason=f"no sandbox actor is listening on {subjects.SANDBOX_EXEC}"
                )
            try:
                reply = decode(raw.data, SandboxReply)
                if reply.status == "queued":  # still waiting for a slot at a live actor
                    continue
                if reply.status == "started":  # the actor's own wall clock for this run, plus slack
                    started = True
                    timeout_s = max(timeout_s, float(reply.result.get("wall_s") or 0.0) + SLACK_S)
                    continue
                return RunResult.from_dict(dict(reply.result))
            except (DecodeError, ValueError, TypeError) as exc:
                return RunResult(status="rejected", reason=f"undecodable sandbox reply: {exc}"[:500])
    finally:
        with contextlib.suppress(Exception):
            await sub.unsubscribe()


def run_tests_over_bus(
    bus: Bus, *, max_timeout_s: float = 300.0, queue_timeout_s: float = QUEUE_TIMEOUT_S
) -> Callable[..., Awaitable[RunResult]]:
    """A ``run_tests(program, tests, limits=None)`` for the code reward tool that runs on a sandbox actor."""

    async def run_tests(program: str, tests: CodeTests, limits: Limits | None = None, **_: Any) -> RunResult:
        lim = limits or Limits()
        request = SandboxRequest(
            code=program, tests=tests.to_dict(), style="tests", limits=lim.to_dict() if limits else {}
        )
        timeout = min(reply_timeout_s(lim, len(tests)), max_timeout_s)
        return await sandbox_run(bus, request, timeout, queue_timeout_s=queue_timeout_s)

    return run_tests


RunCode = Callable[[str, str, Limits | None], Awaitable[Any]]


def as_run_result(raw: Any) -> RunResult:
    """A ``RunResult`` from what a runner returned (a RunResult, its dict, or a SandboxReply-like object)."""
    if isinstance(raw, RunResult):
        return raw
    if isinstance(raw, dict):
        return RunResult.from_dict(raw)
    result = getattr(raw, "result", None)
    if isinstance(result, dict) and result:
        return RunResult.from_dict(result)
    raise TypeError(f"sandbox runner returned {type(raw).__name__}, expected a RunResult or its dict")


def local_runner(config: SandboxConfig | None = None) -> RunCode:
    """Run in a jail on this host."""

    async def run(program: str, stdin: str, limits: Limits | None) -> RunResult:
        return await run_code_async(program, stdin, limits, config)

    return run


def bus_runner(bus: Any, timeout_s: float = 30.0) -> RunCode:
    """Run through the sandbox actor (``rlar.sandbox_client.sandbox_run``) over ``bus``."""

    async def run(program: str, stdin: str, limits: Limits | None) -> RunResult:
        req = SandboxRequest(
            code=program,
            style="script",
            stdin=stdin,
            limits=limits.to_dict() if limits is not None else {},
            request_id=uuid.uuid4().hex,
        )
        try:
            raw = await sandbox_run(bus, req, timeout_s)
        except RequestTimeout as exc:
            return RunResult(status="rejected", reason=f"sandbox actor unreachable: {exc}")
        return as_run_result(raw)

    return run
