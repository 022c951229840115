"""The code unit-test tool without a sandbox: program extraction, test formats, pass@k, and abstentions when
there is nothing to run or no sandbox to reach."""

from __future__ import annotations

import asyncio
import socket
from math import comb
from typing import Any

import pytest

from rlar.tools import ToolInput, make_tool, pass_at_k
from rlar.tools.code import extract_code, reference_tests
from tests.support.code_tools import ADD_TESTS, HUMANEVAL, code_spec


def test_pass_at_k_matches_the_combinatorial_definition():
    for n in range(1, 12):
        for c in range(n + 1):
            for k in range(1, n + 1):
                expected = 1.0 - comb(n - c, k) / comb(n, k)
                assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


def test_extract_code_takes_the_last_python_block_or_an_unterminated_one():
    text = "Idea:\n```python\nx = 1\n```\nBetter:\n```py\ndef f():\n    return 2\n```\nDone."
    assert extract_code(text) == "def f():\n    return 2\n"
    assert extract_code("```python\ndef g():\n    return 3") == "def g():\n    return 3"
    assert extract_code("def h(): return 4") == "def h(): return 4"
    assert extract_code("```bash\nls\n```\n```\nprint(1)\n```") == "print(1)\n"


def test_reference_formats_become_sandbox_code_tests():
    assert reference_tests(ADD_TESTS)[0].style == "asserts"
    tests, prompt = reference_tests(HUMANEVAL, "ignored")
    assert tests.style == "humaneval" and tests.entry_point == "add" and prompt == HUMANEVAL["prompt"]
    mbpp, _ = reference_tests({"test_list": ADD_TESTS, "test_setup_code": "import math"})
    assert mbpp.setup == "import math" and len(mbpp) == 3
    stdio, _ = reference_tests({"inputs": ["1 2\n"], "outputs": ["3\n"]})
    assert stdio.style == "stdio"
    assert reference_tests(stdio.to_dict())[0] == stdio
    with pytest.raises(ValueError):
        reference_tests({"nothing": 1})


async def test_missing_tests_abstain_without_calling_the_sandbox():
    calls = []

    async def run(program: str, tests: Any, **kw: Any) -> Any:
        calls.append(program)
        raise AssertionError("must not be called")

    res = await make_tool(code_spec(), run_tests=run).score(ToolInput("q", "def f(): pass", None))
    assert res.status == "abstain" and "invalid tests" in res.reason and not calls


async def test_unreachable_sandbox_abstains():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    async def over_the_network(program: str, tests: Any, **kw: Any) -> Any:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.close()

    res = await make_tool(code_spec(), run_tests=over_the_network).score(ToolInput("q", "x", ADD_TESTS))
    assert res.status == "abstain" and res.reason.startswith("sandbox unavailable: ConnectionRefusedError")
