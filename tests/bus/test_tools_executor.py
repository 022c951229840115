"""ToolExecutor: hard deadlines by killing worker processes, error reporting, validation, cache.

The misbehaving tools below are real RewardTool subclasses loaded by dotted path in the worker process
(this module is importable there because the executor hands its sys.path to the worker).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any, ClassVar

import pytest

from rlar.tools import ToolExecutor, ToolInput, ToolKind, ToolResult, ToolSpec
from rlar.tools.base import RewardTool, builtin_specs

# Whatever pytest names this module (tests.test_tools_executor with tests/__init__.py), the worker imports it.
ALLOWED = ("rlar.", __name__)


class MisbehavingTool(RewardTool):
    """Behaviour chosen by the response text; anything else scores len(response)/100."""

    async def _score(self, inp: ToolInput) -> Any:
        r = inp.response
        if r == "hang":
            time.sleep(3600)
        if r == "throw":
            raise RuntimeError("boom from tool")
        if r == "nan":
            return float("nan")
        if r == "huge":
            return 1e9
        if r == "raw-huge":
            return ToolResult("ok", 1e9)  # bypasses finalize inside the tool
        if r == "exit":
            print("dying on purpose", file=sys.stderr, flush=True)
            os._exit(7)
        if r == "print":
            print("noise on stdout that must not corrupt the protocol", flush=True)
            return 0.25
        return min(len(r), 100) / 100


class HangingBatchTool(RewardTool):
    batched: ClassVar[bool] = True

    async def _score_batch(self, inputs: Any) -> list[Any]:
        if any(x.response == "hang" for x in inputs):
            while True:
                pass
        return [0.5 for _ in inputs]


class SlowBuildTool(RewardTool):
    def __init__(self, spec: ToolSpec, **resources: Any) -> None:
        super().__init__(spec, **resources)
        time.sleep(float(spec.params.get("build_sleep_s", 0)))
        if spec.params.get("fail"):
            raise ValueError("bad params for this tool")

    async def _score(self, inp: ToolInput) -> float:
        return 1.0


class AsyncHangTool(RewardTool):
    in_process: ClassVar[bool] = True

    async def _score(self, inp: ToolInput) -> float:
        if inp.response == "hang":
            await asyncio.sleep(3600)
        return 0.75


def spec_for(cls: type, **params: Any) -> ToolSpec:
    return ToolSpec(
        name=cls.__name__.lower(),
        kind=ToolKind.RULE,
        description="test tool",
        impl=f"{__name__}:{cls.__name__}",
        params=params,
    ).sealed()


def inp(response: str) -> ToolInput:
    return ToolInput(query="q", response=response, reference="ref")


@pytest.fixture
async def executor():
    # Short per-call deadlines for the hang tests; a load deadline only a hang misses (a fresh worker's imports
    # alone take seconds on a busy machine).
    ex = ToolExecutor(timeout_s=1.0, load_timeout_s=120.0, allowed_prefixes=ALLOWED)
    yield ex
    await ex.close()


async def test_hanging_tool_is_killed_and_abstains_then_executor_keeps_serving(executor):
    spec = spec_for(MisbehavingTool)
    first = await executor.score(spec, inp("abcd"))
    assert first.score == pytest.approx(0.04), first
    pid_before = executor._workers[0].proc.pid
    t0 = time.perf_counter()
    res = await executor.score(spec, inp("hang"))
    elapsed = time.perf_counter() - t0
    assert res.status == "abstain" and res.reason == "timeout after 1s" and res.score is None
    assert elapsed < 5
    after = await executor.score(spec, inp("abcdef"))
    assert after.status == "ok" and after.score == pytest.approx(0.06)
    assert executor._workers[0].proc.pid != pid_before
    assert executor.stats.timeouts == 1


async def test_one_hanging_input_costs_only_its_own_result(executor):
    spec = spec_for(MisbehavingTool)
    results = await executor.score_batch(spec, [inp("a"), inp("hang"), inp("abc"), inp("ab")])
    assert [r.status for r in results] == ["ok", "abstain", "ok", "ok"]
    assert [r.score for r in results] == [pytest.approx(0.01), None, pytest.approx(0.03), pytest.approx(0.02)]


async def test_throwing_nan_and_out_of_range_tools_are_errors_with_reasons(executor):
    spec = spec_for(MisbehavingTool)
    throw, nan, huge, raw_huge, ok = await executor.score_batch(
        spec, [inp("throw"), inp("nan"), inp("huge"), inp("raw-huge"), inp("fine")]
    )
    assert throw.status == "error" and "RuntimeError: boom from tool" in throw.reason
    assert nan.status == "error" and nan.reason == "score is NaN"
    assert huge.status == "error" and "outside declared range" in huge.reason and huge.score is None
    assert raw_huge.status == "error" and "outside declared range" in raw_huge.reason
    assert ok.status == "ok" and ok.score == pytest.approx(0.04)


async def test_worker_that_exits_is_reported_and_replaced(executor):
    spec = spec_for(MisbehavingTool)
    died, after = await executor.score_batch(spec, [inp("exit"), inp("xy")])
    assert died.status == "error" and "worker died (exit code 7)" in died.reason
    assert "dying on purpose" in died.details["stderr_tail"]
    assert after.status == "ok" and after.score == pytest.approx(0.02)
    assert executor.stats.worker_deaths == 1


async def test_tool_prints_do_not_corrupt_the_protocol(executor):
    res = await executor.score_batch(spec_for(MisbehavingTool), [inp("print"), inp("abc")])
    assert [r.score for r in res] == [pytest.approx(0.25), pytest.approx(0.03)]


async def test_hanging_batched_tool_abstains_whole_batch(executor):
    spec = spec_for(HangingBatchTool)
    res = await executor.score_batch(spec, [inp("x"), inp("hang")])
    assert [r.status for r in res] == ["abstain", "abstain"]
    # A batched request's deadline scales with ceil(n / batch_size): 2 inputs, batch_size 1 → 2 s.
    assert all(r.reason == "timeout after 2s" for r in res)
    res = await executor.score_batch(spec, [inp("x"), inp("y")])
    assert [r.score for r in res] == [0.5, 0.5]


async def test_build_failure_and_load_timeout_are_reported(executor):
    bad = await executor.score(spec_for(SlowBuildTool, fail=True), inp("x"))
    assert bad.status == "error" and "could not build tool: ValueError: bad params" in bad.reason
    short = ToolExecutor(timeout_s=1.0, load_timeout_s=0.5, allowed_prefixes=ALLOWED)
    try:
        slow = await short.score(spec_for(SlowBuildTool, build_sleep_s=3600), inp("x"))
        assert slow.status == "abstain" and "tool load timed out" in slow.reason
        # The executor serves on after a load timeout. (A fresh worker's imports alone can take seconds on
        # a busy machine, so the next load and call get deadlines that only a hang would miss.)
        short.load_timeout_s = 120.0
        fast = await short.score(spec_for(SlowBuildTool), inp("x"), timeout_s=60.0)
        assert fast.status == "ok" and fast.score == 1.0
    finally:
        await short.close()


async def test_cancelled_caller_kills_the_busy_worker_and_the_next_call_works(executor):
    spec = spec_for(MisbehavingTool)
    task = asyncio.create_task(executor.score(spec, inp("hang"), timeout_s=60))
    await asyncio.sleep(1.0)  # let it reach the hanging call
    busy = executor._workers[0].proc
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert busy.returncode is not None  # killed, not left spinning
    res = await executor.score(spec, inp("abc"))
    assert res.status == "ok" and res.score == pytest.approx(0.03)


async def test_dotted_path_outside_allowed_prefixes_is_refused():
    ex = ToolExecutor()  # default: only rlar.* modules
    try:
        res = await ex.score(spec_for(MisbehavingTool), inp("x"))
        assert res.status == "error" and "not under an allowed prefix" in res.reason
    finally:
        await ex.close()


async def test_in_process_tool_times_out_by_cancellation(executor):
    spec = spec_for(AsyncHangTool)
    hang, fine = await executor.score_batch(spec, [inp("hang"), inp("x")])
    assert hang.status == "abstain" and hang.reason == "timeout after 1s"
    assert fine.status == "ok" and fine.score == 0.75


async def test_catastrophic_regex_in_a_builtin_is_killed(executor):
    spec = next(s for s in builtin_specs() if s.name == "format_rules")
    spec = spec.replace(params={**spec.params, "required_patterns": [r"^(a+)+$"]}).sealed()
    evil = "a" * 40 + "b"
    res, ok = await executor.score_batch(spec, [inp(evil), inp("aaaa")])
    assert res.status == "abstain" and res.reason.startswith("timeout after")
    assert ok.status == "ok" and ok.score == 1.0


async def test_math_verify_runs_in_worker_main_thread_with_its_own_limits(executor):
    spec = next(s for s in builtin_specs() if s.name == "math_verify")
    res = await executor.score_batch(
        spec,
        [
            ToolInput("q", "so the answer is \\boxed{\\frac{1}{2}}", "0.5"),
            ToolInput("q", "The total is 1,000 dollars.", "1000"),
            ToolInput("q", "I get 7.", "8"),
        ],
    )
    assert [r.score for r in res] == [1.0, 1.0, 0.0]


async def test_ok_results_are_cached_by_tool_version_and_inputs(executor):
    spec = spec_for(MisbehavingTool)
    first = await executor.score(spec, inp("abcd"))
    again = await executor.score(spec, inp("abcd"))
    assert "cached" not in first.details and again.details.get("cached") is True
    assert again.score == first.score and executor.stats.cache_hits == 1
    other_ref = await executor.score(spec, ToolInput("q", "abcd", "other reference"))
    assert "cached" not in other_ref.details
    bumped = await executor.score(spec.replace(version=2).sealed(), inp("abcd"))
    assert "cached" not in bumped.details
    failing = [await executor.score(spec, inp("throw")) for _ in range(2)]
    assert executor.stats.cache_hits == 1 and all(r.status == "error" for r in failing)


async def test_two_workers_split_a_request_and_both_survive_a_timeout():
    ex = ToolExecutor(workers=2, timeout_s=1.0, allowed_prefixes=ALLOWED)
    try:
        spec = spec_for(MisbehavingTool)
        res = await ex.score_batch(spec, [inp("a"), inp("hang"), inp("abc"), inp("ab")])
        assert [r.status for r in res] == ["ok", "abstain", "ok", "ok"]
        assert ex.stats.spawns == 2
        res = await ex.score_batch(spec, [inp("z" * k) for k in (5, 6, 7, 8)])  # not cached
        assert [r.score for r in res] == [pytest.approx(k / 100) for k in (5, 6, 7, 8)]
        assert ex.stats.spawns == 3  # the killed worker was replaced on demand
    finally:
        await ex.close()


async def test_rule_tool_throughput_through_the_executor(executor):
    spec = next(s for s in builtin_specs() if s.name == "normalized_match")
    inputs = [ToolInput("q", f"The answer {i}", f"the answer {i % 7}") for i in range(2000)]
    await executor.prepare(spec)
    t0 = time.perf_counter()
    res = await executor.score_batch(spec, inputs)
    rate = len(inputs) / (time.perf_counter() - t0)
    assert sum(r.score == 1.0 for r in res if r.score is not None) == sum(i % 7 == i for i in range(2000))
    print(f"normalized_match via executor: {rate:.0f} scores/s")
    assert rate > 200  # generous: per-input frames cost tens of microseconds


async def test_a_tool_with_its_own_concurrency_times_out_its_hung_inputs_together_on_its_own_workers():
    ex = ToolExecutor(workers=1, timeout_s=1.0, allowed_prefixes=ALLOWED)
    try:
        spec = spec_for(MisbehavingTool).replace(params={"concurrency": 4})
        assert await ex.prepare(spec) is None and ex.stats.spawns == 4  # its pool, not the shared worker
        t0 = time.perf_counter()
        res = await ex.score_batch(
            spec, [inp("hang"), inp("a"), inp("hang"), inp("hang"), inp("abc"), inp("hang")]
        )
        wall = time.perf_counter() - t0
        assert [r.status for r in res] == ["abstain", "ok", "abstain", "abstain", "ok", "abstain"]
        assert {r.reason for r in res if r.status == "abstain"} == {"timeout after 1s"}
        # Four hung inputs on four workers: about one deadline (serialised on one worker: 4 s and 4 respawns).
        assert wall < 3.5, f"{wall:.1f}s"
        assert (
            ex.capacity(spec, MisbehavingTool) == 4
            and ex.capacity(spec_for(MisbehavingTool), MisbehavingTool) == 1
        )
        shared = await ex.score(spec_for(MisbehavingTool), inp("abcd"))
        assert shared.score == pytest.approx(0.04) and ex._workers[0].alive
    finally:
        await ex.close()
    assert not any(w.alive for w in ex._all_workers())
