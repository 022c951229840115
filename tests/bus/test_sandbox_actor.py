"""The sandbox actor over a real bus, with the real sandbox: verdicts, limits it enforces, refusal without
bubblewrap unless the operator opts into the weaker mode."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from actors.sandbox import SandboxActorConfig
from bus import subjects
from bus.client import Bus
from bus.codec import decode, encode
from bus.config import NatsConfig
from bus.messages import SandboxReply, SandboxRequest
from rlar.sandbox import CodeTests
from rlar.sandbox_client import run_tests_over_bus, sandbox_run
from tests.support.actors import sandbox_actor
from tests.support.reward_tools import running

_no_bwrap = pytest.mark.skipif(not os.access("/usr/bin/bwrap", os.X_OK), reason="bubblewrap not installed")


def needs_bwrap(fn: Any) -> Any:
    return pytest.mark.sandbox(_no_bwrap(fn))


@needs_bwrap
async def test_a_program_and_its_tests_run_in_the_jail_over_the_bus(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    async with running(sandbox_actor(nats_url, tmp_path), bus) as actor:
        run_tests = run_tests_over_bus(bus)
        tests = CodeTests.asserts(["assert add(1, 2) == 3", "assert add(2, 2) == 5"])
        res = await run_tests("def add(a, b):\n    return a + b\n", tests)
        assert res.status == "failed" and res.isolation == "bwrap"
        assert [t.status for t in res.tests] == ["passed", "failed"]
        plain = await sandbox_run(bus, SandboxRequest(code="print(input()[::-1])", stdin="abc"), 30)
        assert plain.status == "ok" and plain.stdout.strip() == "cba"
        assert actor.counters["requests"] == 2 and actor.counters["ok"] == 1 and actor.counters["failed"] == 1


@needs_bwrap
async def test_an_infinite_loop_times_out_at_the_operators_cap(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    actor = sandbox_actor(nats_url, tmp_path, max_limits={"test_s": 1.0, "wall_s": 4.0, "cpu_s": 2})
    async with running(actor, bus):
        t0 = time.monotonic()
        res = await sandbox_run(
            bus,
            SandboxRequest(
                code="while True:\n    pass\n",
                tests=["assert True"],
                style="asserts",
                limits={"test_s": 600, "cpu_s": 600},
            ),
            timeout_s=30,
        )
        elapsed = time.monotonic() - t0
    assert res.status == "timeout", res
    assert elapsed < 8, f"the operator's 1 s test cap was not applied ({elapsed:.1f}s)"


async def test_without_bubblewrap_every_request_is_rejected_and_nothing_runs(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    marker = Path("/tmp") / f"rlar-sandbox-ran-{uuid.uuid4().hex}"
    program = f"open({str(marker)!r}, 'w').write('ran')\n"
    async with running(sandbox_actor(nats_url, tmp_path, bwrap="/nonexistent/bwrap"), bus) as actor:
        assert actor.unusable and "bwrap" in actor.unusable
        res = await sandbox_run(bus, SandboxRequest(code=program), 30)
        tests_res = await run_tests_over_bus(bus)(program, CodeTests.asserts(["assert True"]))
        assert actor.info()["usable"] is False
    assert (
        res.status == "rejected"
        and "unusable in bwrap mode" in res.reason
        and "/nonexistent/bwrap" in res.reason
    )
    assert tests_res.status == "rejected"
    assert not marker.exists()


async def test_the_weaker_mode_runs_only_when_the_operator_opts_in(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    async with running(
        sandbox_actor(nats_url, tmp_path, bwrap="/nonexistent/bwrap", mode="rlimit-only"), bus
    ) as actor:
        assert actor.unusable is None
        res = await sandbox_run(bus, SandboxRequest(code="print(6 * 7)"), 30)
    assert res.status == "ok" and res.stdout.strip() == "42" and res.isolation.startswith("rlimit-only")


async def test_a_malformed_request_is_rejected_with_the_reason(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    async with running(sandbox_actor(nats_url, tmp_path, mode="rlimit-only"), bus):
        bad_style = await sandbox_run(bus, SandboxRequest(code="x=1", tests=["assert x"], style="pytest"), 10)
        bad_limits = await sandbox_run(bus, SandboxRequest(code="x=1", limits={"bogus": 1}), 10)
    assert bad_style.status == "rejected" and "style 'pytest'" in bad_style.reason
    assert bad_limits.status == "rejected" and "bogus" in bad_limits.reason


async def test_with_no_sandbox_actor_the_client_gets_rejected_at_once(nats_url: str) -> None:
    b = await Bus.connect(NatsConfig(url=nats_url), name="lonely")
    try:
        t0 = time.monotonic()
        res = await sandbox_run(b, SandboxRequest(code="print(1)"), timeout_s=20)
        assert res.status == "rejected" and "no sandbox actor" in res.reason
        assert time.monotonic() - t0 < 5
    finally:
        await b.close()


async def test_a_request_that_died_with_its_actor_is_given_up_after_alive_s(nats_url: str) -> None:
    """An actor SIGKILLed (or cut off) with the request in its queue never answers: the client gives up once it
    has heard nothing for ``alive_s``, not after the whole queue bound (600 s)."""
    b = await Bus.connect(NatsConfig(url=nats_url), name="swallower")
    swallowed: list[object] = []

    async def swallow(msg: object) -> None:  # takes the request, then is "killed": never a word back
        swallowed.append(msg)

    sub = await b.nc.subscribe(subjects.SANDBOX_EXEC, queue="sandbox", cb=swallow)
    try:
        res = await sandbox_run(b, SandboxRequest(code="print(1)"), timeout_s=20, alive_s=1.0)
        assert (
            swallowed and res.status == "rejected" and "nothing heard from the sandbox for 1s" in res.reason
        )
    finally:
        await sub.unsubscribe()
        await b.close()


async def test_a_queued_request_hears_queued_until_its_run_starts(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    import asyncio

    from bus.client import wait_for

    async with running(
        sandbox_actor(nats_url, tmp_path, mode="rlimit-only", concurrency=1, queued_notice_s=0.1), bus
    ) as a:
        first = asyncio.create_task(sandbox_run(bus, SandboxRequest(code="import time\ntime.sleep(1)\n"), 60))
        assert await wait_for(a._sem.locked, 60), "the first run never took the only slot"
        replies: list[str] = []
        done = asyncio.Event()

        async def on_reply(msg: Any) -> None:
            replies.append(decode(msg.data, SandboxReply).status)
            if replies[-1] not in ("queued", "started"):
                done.set()

        inbox = bus.nc.new_inbox()
        sub = await bus.nc.subscribe(inbox, cb=on_reply)
        await bus.nc.publish(subjects.SANDBOX_EXEC, encode(SandboxRequest(code="print(2)")), reply=inbox)
        await asyncio.wait_for(done.wait(), 120)
        await sub.unsubscribe()
        assert (await first).status == "ok"
    # Queued behind the first run (at least one notice), then started, then the verdict.
    assert replies[0] == "queued" and replies[-2:] == ["started", "ok"] and set(replies[:-2]) == {"queued"}


@needs_bwrap
async def test_a_fork_bomb_queued_behind_slow_runs_is_scored_zero_not_dropped(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    """The client's deadline counts from the start of execution: time queued behind other runs is not the
    program's, so a denial-of-service program still gets its verdict (scored 0) instead of an abstain."""
    import asyncio

    from rlar.tools import ToolInput, builtin_specs, make_tool

    slow = SandboxRequest(code="import time\ntime.sleep(2)\n", limits={"test_s": 4.0})
    bomb = "import os\ndef add(a, b):\n    while True:\n        os.fork()\n"
    spec = next(s for s in builtin_specs() if s.name == "code_tests")
    spec = spec.replace(params={**spec.params, "limits": {"test_s": 0.5, "cpu_s": 1}}).sealed()
    async with running(sandbox_actor(nats_url, tmp_path, concurrency=1), bus) as actor:
        assert SandboxActorConfig().concurrency == (os.cpu_count() or 1)  # the default: one slot per core
        runs = [asyncio.create_task(sandbox_run(bus, slow, 30)) for _ in range(2)]
        while actor.counters["requests"] < 2:
            await asyncio.sleep(0.01)
        # Two seconds or more in the queue; the old rule (deadline from the request) gave up after one.
        direct = asyncio.create_task(
            sandbox_run(bus, SandboxRequest(code=bomb + "add(1, 2)\n", limits={"test_s": 0.5}), timeout_s=1.0)
        )
        tool = make_tool(spec, run_tests=run_tests_over_bus(bus, max_timeout_s=1.0))
        scored = await tool.score(ToolInput(query="", response=bomb, reference=["assert add(1, 2) == 3"]))
        verdict = await direct
        assert all(r.status == "ok" for r in await asyncio.gather(*runs))
    assert verdict.status in ("timeout", "failed", "crashed"), verdict.reason
    assert scored.ok and scored.score == 0.0 and scored.details["sandbox_status"] != "rejected", scored.reason
