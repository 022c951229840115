"""How synthesised code reaches the sandbox: an injectable ``RunCode`` callable, local or over the bus.

``RunCode`` is ``async (program: str, stdin: str, limits: Limits | None) -> RunResult`` (or its dict). Two
implementations:

- ``local_runner(config)``: ``rlar.sandbox.run_code_async`` in this process's host (a bubblewrap jail per
  call). For tests, the CLI and single-host runs.
- ``bus_runner(bus, timeout_s)``: the sandbox actor over request/reply (``rlar.sandbox_client.sandbox_run`` on
  ``rlar.sandbox.exec``), so actors without bubblewrap can still validate and score. A request that gets no
  reply comes back as a ``rejected`` result (the sandbox was not reachable; not the candidate's fault).

Either way the candidate runs in a jail; nothing in this package executes it in the caller's process.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from rlar.sandbox.schema import Limits, RunResult, SandboxConfig

__all__ = ["RunCode", "as_run_result", "bus_runner", "local_runner"]

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
        from rlar.sandbox import run_code_async

        return await run_code_async(program, stdin, limits, config)

    return run


def bus_runner(bus: Any, timeout_s: float = 30.0) -> RunCode:
    """Run through the sandbox actor (``rlar.sandbox_client.sandbox_run``) over ``bus``."""

    async def run(program: str, stdin: str, limits: Limits | None) -> RunResult:
        from bus.client import RequestTimeout
        from bus.messages import SandboxRequest
        from rlar.sandbox_client import sandbox_run

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
