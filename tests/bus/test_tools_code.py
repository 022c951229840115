"""The code unit-test tool's real runs in the sandbox
(extraction, formats, pass@k: tests/unit/test_tools_code_without_sandbox.py)."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest

from rlar.tools import ToolExecutor, ToolInput, make_tool
from tests.support.code_tools import ADD_TESTS, HUMANEVAL, code_spec


def sandbox_problem() -> str | None:
    from rlar.sandbox import check_sandbox

    return check_sandbox()


SANDBOX_PROBLEM = sandbox_problem()  # once, at collection: None where bubblewrap works


@pytest.mark.sandbox
@pytest.mark.skipif(SANDBOX_PROBLEM is not None, reason=f"sandbox unavailable: {SANDBOX_PROBLEM}")
class TestInTheSandbox:
    async def test_correct_partial_and_broken_programs_score_their_pass_fraction(self):
        tool = make_tool(code_spec())
        good = "```python\ndef add(a, b):\n    return a + b\n```"
        partial = "```python\ndef add(a, b):\n    return abs(a) + b\n```"
        broken = "def add(a, b) return"
        results = await tool.score_batch([ToolInput("q", r, ADD_TESTS) for r in (good, partial, broken)])
        assert [r.status for r in results] == ["ok", "ok", "ok"]
        assert [r.score for r in results] == pytest.approx([1.0, 2 / 3, 0.0])
        assert results[0].details["sandbox_status"] == "ok" and results[0].details["n_tests"] == 3
        assert [t["status"] for t in results[1].details["tests"]] == ["passed", "failed", "passed"]

    async def test_humaneval_completion_is_appended_to_the_prompt(self):
        tool = make_tool(code_spec())
        body_only = "    return a + b\n"
        full = "def add(a, b):\n    return b + a\n"
        wrong = "    return a - b\n"
        res = await tool.score_batch(
            [ToolInput(HUMANEVAL["prompt"], r, HUMANEVAL) for r in (body_only, full, wrong)]
        )
        assert [r.score for r in res] == [1.0, 1.0, 0.0]

    async def test_stdio_program_and_an_infinite_loop(self):
        tool = make_tool(code_spec(limits={"test_s": 1.0}))
        ref = {"inputs": ["1 2\n", "5 7\n"], "outputs": ["3\n", "12\n"]}
        solver = "a, b = map(int, input().split())\nprint(a + b)\n"
        res = await tool.score_batch(
            [ToolInput("q", solver, ref), ToolInput("q", "while True:\n    pass\n", ref)]
        )
        assert res[0].score == 1.0
        assert res[1].status == "ok" and res[1].score == 0.0 and res[1].details["sandbox_status"] == "timeout"

    async def test_results_that_crossed_a_bus_as_dicts_are_understood(self):
        from rlar.sandbox import run_tests_async

        async def via_bus(program: str, tests: Any, **kw: Any) -> dict[str, Any]:
            wire = msgpack.packb({"program": program, "tests": tests.to_dict()})
            req = msgpack.unpackb(wire, raw=False)
            from rlar.sandbox import CodeTests

            result = await run_tests_async(req["program"], CodeTests.from_dict(req["tests"]))
            return msgpack.unpackb(msgpack.packb(result.to_dict()), raw=False)

        tool = make_tool(code_spec(), run_tests=via_bus)
        res = await tool.score(ToolInput("q", "def add(a, b):\n    return a * b\n", ADD_TESTS))
        assert res.score == pytest.approx(0.0) and res.details["passed"] == 0
        res = await tool.score(ToolInput("q", "def add(a, b):\n    return a + b\n", ADD_TESTS))
        assert res.score == 1.0

    async def test_a_rejected_run_abstains(self):
        from rlar.sandbox import SandboxConfig

        tool = make_tool(code_spec(), sandbox_config=SandboxConfig(bwrap="/nonexistent/bwrap"))
        res = await tool.score(ToolInput("q", "def add(a, b):\n    return a + b\n", ADD_TESTS))
        assert res.status == "abstain" and "rejected" in res.reason

    async def test_pass_at_k_for_a_group_of_samples(self):
        tool = make_tool(code_spec(pass_at_k=[1, 2, 8]))
        right = "def add(a, b):\n    return a + b\n"
        wrong = "def add(a, b):\n    return a\n"
        group = [ToolInput("q", r, ADD_TESTS) for r in (right, wrong, right, wrong)]
        other = ToolInput("other problem", right, ["assert add(0, 0) == 0"])
        res = await tool.score_batch([*group, other])
        for r in res[:4]:
            assert r.details["group_n"] == 4 and r.details["group_c"] == 2
            assert r.details["pass_at_k"] == pytest.approx({"1": 0.5, "2": 1 - 1 / 6})
        assert res[4].details["pass_at_k"] == {"1": 1.0}

    async def test_code_tool_runs_in_process_under_the_executor_with_injected_runner(self):
        from rlar.sandbox import run_tests_async

        seen = []

        async def runner(program: str, tests: Any, **kw: Any) -> Any:
            seen.append(program)
            return await run_tests_async(program, tests, **kw)

        sample = ToolInput("q", "def add(a, b):\n    return a + b\n", ADD_TESTS)
        async with ToolExecutor(resources={"run_tests": runner}) as ex:
            first = await ex.score(code_spec(), sample)
            again = await ex.score(code_spec(), sample)
            assert ex.stats.spawns == 0  # no worker process: the sandbox does the isolation
        assert first.score == again.score == 1.0
        assert again.details["cached"] is True and len(seen) == 1
