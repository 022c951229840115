"""Client side of the sandbox actor: run code remotely over ``rlar.sandbox.exec`` and get a ``RunResult``.

``sandbox_run(bus, request, timeout_s)`` never raises for the remote side's failures; it returns a result
with a status, like the local sandbox does:

- the actor's verdict (ok / failed / timeout / oom / crashed / rejected) with its ``RunResult``;
- ``rejected`` "no sandbox actor is listening" when nobody serves the subject (answered at once);
- ``rejected`` "no reply from the sandbox within Xs" when the request times out. A bus timeout is not a
  verdict on the code (the actor enforces the code's own limits and answers ``timeout`` itself), so it is
  reported as an infrastructure failure: a reward tool abstains rather than scoring 0;
- ``rejected`` for a reply that does not decode.

``run_tests_over_bus(bus)`` adapts it to the code reward tool's ``run_tests`` resource
(``rlar.tools.code.CodeTestsTool``): ``(program, tests, limits=None) -> RunResult``.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import nats.errors

from bus import subjects
from bus.client import Bus
from bus.codec import DecodeError, decode, encode
from bus.messages import SandboxReply, SandboxRequest
from rlar.sandbox.schema import CodeTests, Limits, RunResult

__all__ = ["reply_timeout_s", "run_tests_over_bus", "sandbox_run"]

# Queueing and transport slack on top of the run's own wall-clock limit.
SLACK_S = 10.0


def reply_timeout_s(limits: Limits, jobs: int) -> float:
    """How long to wait for a run with these limits: its whole-jail wall clock plus slack."""
    return limits.wall_for(jobs) + SLACK_S


async def sandbox_run(bus: Bus, request: SandboxRequest, timeout_s: float) -> RunResult:
    """Send ``request`` to a sandbox actor (queue group "sandbox") and wait up to ``timeout_s`` for its result."""
    if not request.request_id:
        request.request_id = uuid.uuid4().hex
    try:
        raw = await bus.nc.request(subjects.SANDBOX_EXEC, encode(request), timeout=timeout_s)
    except nats.errors.NoRespondersError:
        return RunResult(
            status="rejected", reason=f"no sandbox actor is listening on {subjects.SANDBOX_EXEC}"
        )
    except (TimeoutError, nats.errors.TimeoutError):
        return RunResult(status="rejected", reason=f"no reply from the sandbox within {timeout_s:g}s")
    try:
        reply = decode(raw.data, SandboxReply)
        return RunResult.from_dict(dict(reply.result))
    except (DecodeError, ValueError, TypeError) as exc:
        return RunResult(status="rejected", reason=f"undecodable sandbox reply: {exc}"[:500])


def run_tests_over_bus(bus: Bus, *, max_timeout_s: float = 300.0) -> Callable[..., Awaitable[RunResult]]:
    """A ``run_tests(program, tests, limits=None)`` for the code reward tool that runs on a sandbox actor."""

    async def run_tests(program: str, tests: CodeTests, limits: Limits | None = None, **_: Any) -> RunResult:
        lim = limits or Limits()
        request = SandboxRequest(
            code=program, tests=tests.to_dict(), style="tests", limits=lim.to_dict() if limits else {}
        )
        return await sandbox_run(bus, request, min(reply_timeout_s(lim, len(tests)), max_timeout_s))

    return run_tests
