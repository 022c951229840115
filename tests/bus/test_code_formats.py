"""Every accepted code-test shape becomes CodeTests, and a right / wrong program scores 1 / 0 in the sandbox.

The records are written in each public dataset's own field layout (HumanEval, LeetCode, MBPP, APPS,
CodeContests, LiveCodeBench, bare asserts); unknown shapes raise an error that names the accepted ones.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from rlar.sandbox import (
    ACCEPTED_SHAPES,
    CodeTests,
    CodeTestsFormatError,
    check_sandbox,
    is_code_tests,
    parse_code_tests,
    run_tests,
)

SANDBOX_PROBLEM = check_sandbox()
needs_sandbox = pytest.mark.skipif(SANDBOX_PROBLEM is not None, reason=f"sandbox unusable: {SANDBOX_PROBLEM}")

_SORT_PROMPT = 'def sort_desc(xs: list) -> list:\n    """Sort a list of ints, largest first."""\n'

# (name, reference, right program, wrong program, expected style, number of tests)
CASES: list[tuple[str, Any, str, str, str, int]] = [
    (
        "humaneval",
        {
            "task_id": "X/1",
            "prompt": _SORT_PROMPT,
            "entry_point": "sort_desc",
            "canonical_solution": "    return sorted(xs, reverse=True)\n",
            "test": "METADATA = {}\n\ndef check(candidate):\n    assert candidate([1, 3, 2]) == [3, 2, 1]\n"
            "    assert candidate([]) == []\n",
        },
        "    return sorted(xs, reverse=True)\n",
        "    return sorted(xs)\n",
        "humaneval",
        1,
    ),
    (
        "humaneval_with_trailing_check_call",
        {"test": "def check(candidate):\n    assert candidate(4) == 16\n\ncheck(square)\n"},
        "def square(x):\n    return x * x\n",
        "def square(x):\n    return x + x\n",
        "humaneval",
        1,
    ),
    (
        "leetcode_method",
        {
            "entry_point": "Solution().twoSum",
            "test": "def check(candidate):\n    assert sorted(candidate(nums=[2, 7, 11, 15], target=9)) == [0, 1]\n"
            "    assert sorted(candidate(nums=[3, 3], target=6)) == [0, 1]\n",
        },
        "class Solution:\n    def twoSum(self, nums, target):\n        seen = {}\n"
        "        for i, x in enumerate(nums):\n            if target - x in seen:\n"
        "                return [seen[target - x], i]\n            seen[x] = i\n",
        "class Solution:\n    def twoSum(self, nums, target):\n        return [0, 0]\n",
        "humaneval",
        1,
    ),
    (
        "bare_asserts_in_test",
        {
            "test": "import math\nassert hyp(3, 4) == 5\nassert math.isclose(hyp(1, 1), 2 ** 0.5)\n",
            "entry_point": "hyp",
        },
        "def hyp(a, b):\n    return (a * a + b * b) ** 0.5\n",
        "def hyp(a, b):\n    return a + b\n",
        "asserts",
        2,
    ),
    (
        "list_of_asserts",
        ["assert rev('abc') == 'cba'", "assert rev('') == ''", "assert rev('ab') == 'ba'"],
        "def rev(s):\n    return s[::-1]\n",
        "def rev(s):\n    return s\n",
        "asserts",
        3,
    ),
    (
        "string_of_asserts",
        "assert count_vowels('banana') == 3\nassert count_vowels('xyz') == 0\n",
        "def count_vowels(s):\n    return sum(c in 'aeiou' for c in s)\n",
        "def count_vowels(s):\n    return len(s)\n",
        "asserts",
        2,
    ),
    (
        "mbpp",
        {
            "task_id": 11,
            "text": "Write a python function to remove first and last occurrence of a given character.",
            "code": "...",
            "test_list": [
                'assert remove_Occ("hello","l") == "heo"',
                'assert remove_Occ("abcda","a") == "bcd"',
                'assert remove_Occ("PHP","P") == "H"',
            ],
            "test_setup_code": "",
            "challenge_test_list": [],
        },
        "def remove_Occ(s, ch):\n    i = s.find(ch)\n    if i >= 0:\n        s = s[:i] + s[i + 1:]\n"
        "    j = s.rfind(ch)\n    if j >= 0:\n        s = s[:j] + s[j + 1:]\n    return s\n",
        "def remove_Occ(s, ch):\n    return s[1:-1]\n",
        "asserts",
        3,
    ),
    (
        "mbpp_sanitized_with_imports",
        {
            "source_file": "x",
            "prompt": "Write a function to find the gcd of a list.",
            "test_imports": ["import math"],
            "test_list": ["assert gcd_all([12, 18, 24]) == 6", "assert gcd_all([7]) == math.gcd(7, 0)"],
        },
        "import math\nfrom functools import reduce\ndef gcd_all(xs):\n    return reduce(math.gcd, xs)\n",
        "def gcd_all(xs):\n    return min(xs)\n",
        "asserts",
        2,
    ),
    (
        "apps_stdio",
        {
            "problem_id": 4000,
            "input_output": json.dumps({"inputs": ["3\n1 2 3\n", "2\n5 5\n"], "outputs": ["6\n", "10\n"]}),
        },
        "n = int(input())\nprint(sum(map(int, input().split())))\n",
        "n = int(input())\nprint(n)\n",
        "stdio",
        2,
    ),
    (
        "apps_fn_name",
        {"input_output": {"fn_name": "max_gap", "inputs": [[[1, 5, 2]], [[7]]], "outputs": [[3], [0]]}},
        "def max_gap(xs):\n    xs = sorted(xs)\n    return max([b - a for a, b in zip(xs, xs[1:])], default=0)\n",
        "def max_gap(xs):\n    return len(xs)\n",
        "calls",
        2,
    ),
    (
        "apps_fn_name_class_solution",
        {"input_output": {"fn_name": "addDigits", "inputs": [[38], [0]], "outputs": [2, 0]}},
        "class Solution:\n    def addDigits(self, num):\n        return 0 if num == 0 else 1 + (num - 1) % 9\n",
        "class Solution:\n    def addDigits(self, num):\n        return num\n",
        "calls",
        2,
    ),
    (
        "codecontests",
        {
            "name": "1000_A",
            "public_tests": {"input": ["2 3\n"], "output": ["5\n"]},
            "private_tests": {"input": ["10 -4\n", "0 0\n"], "output": ["6\n", "0\n"]},
            "generated_tests": {"input": ["1 1\n"], "output": ["2\n"]},
        },
        "a, b = map(int, input().split())\nprint(a + b)\n",
        "a, b = map(int, input().split())\nprint(a * b)\n",
        "stdio",
        3,
    ),
    (
        "livecodebench_stdin",
        {
            "question_title": "x",
            "public_test_cases": json.dumps(
                [
                    {"input": "abc\n", "output": "3\n", "testtype": "stdin"},
                    {"input": "\n", "output": "0\n", "testtype": "stdin"},
                ]
            ),
            "private_test_cases": "[]",
            "metadata": "{}",
        },
        "print(len(input().strip()))\n",
        "print(1)\n",
        "stdio",
        2,
    ),
    (
        "livecodebench_functional",
        {
            "starter_code": "class Solution:\n    def maxPair(self, nums: List[int], k: int) -> int:\n        ",
            "public_test_cases": [
                {"input": "[1, 2, 3]\n2", "output": "5", "testtype": "functional"},
                {"input": "[4]\n1", "output": "4", "testtype": "functional"},
            ],
            "metadata": json.dumps({"func_name": "maxPair"}),
        },
        "from typing import List\nclass Solution:\n    def maxPair(self, nums: List[int], k: int) -> int:\n"
        "        return sum(sorted(nums)[-k:])\n",
        "class Solution:\n    def maxPair(self, nums, k):\n        return 0\n",
        "calls",
        2,
    ),
    (
        "stdin_stdout_pairs",
        [{"input": "4\n", "output": "16\n"}, {"input": "0\n", "output": "0\n"}],
        "x = int(input())\nprint(x * x)\n",
        "print(input())\n",
        "stdio",
        2,
    ),
    (
        "verl_ground_truth_json",
        json.dumps({"inputs": ["1\n"], "outputs": ["2\n"]}),
        "print(int(input()) + 1)\n",
        "print(0)\n",
        "stdio",
        1,
    ),
    (
        "odex_test_start_and_lines",
        {
            "test_start": "\nimport re\n\ndef check(candidate):",
            "test": [
                "\n    assert candidate('a  b') == ['a', 'b']\n",
                "\n    assert candidate('x') == ['x']\n",
            ],
            "entry_point": "f_101",
        },
        "import re\n\ndef f_101(s):\n    return re.split(r'\\s+', s)\n",
        "def f_101(s):\n    return s.split(' ')\n",
        "humaneval",
        1,
    ),
    (
        "unittest_testcase_class",  # BigCodeBench: one check per test method
        "import unittest\n\nclass TestCases(unittest.TestCase):\n    def test_a(self):\n"
        "        self.assertEqual(task_func([3, 1, 2]), [1, 2, 3])\n    def test_b(self):\n"
        "        self.assertEqual(task_func([]), [])\n    def helper(self):\n        pass\n",
        "def task_func(xs):\n    return sorted(xs)\n",
        "def task_func(xs):\n    return [0]\n",
        "asserts",
        2,
    ),
    (
        "pytest_functions",
        "import math\n\ndef test_root():\n    assert math.isclose(root(9), 3)\n\n"
        "def test_zero():\n    assert root(0) == 0\n",
        "def root(x):\n    return x ** 0.5\n",
        "def root(x):\n    return x / 2\n",
        "asserts",
        2,
    ),
    (
        "pytest_module_importing_the_solution",  # KodCode: the tests import the function from `solution`
        "from solution import longest_run\n\ndef test_runs():\n    assert longest_run([1, 1, 2, 2, 2, 3]) == 3\n\n"
        "def test_empty():\n    assert longest_run([]) == 0\n",
        "def longest_run(xs):\n    best = cur = 0\n    prev = object()\n    for x in xs:\n"
        "        cur = cur + 1 if x == prev else 1\n        prev = x\n        best = max(best, cur)\n    return best\n",
        "def longest_run(xs):\n    return 1\n",
        "asserts",
        2,
    ),
    (
        "tests_wrapper",
        {"tests": ["assert twice(2) == 4"], "prompt": 'def twice(x):\n    """Double x."""\n'},
        "def twice(x):\n    return 2 * x\n",
        "def twice(x):\n    return x\n",
        "asserts",
        1,
    ),
]


@pytest.mark.parametrize("name,reference,right,wrong,style,n", CASES, ids=[c[0] for c in CASES])
def test_each_dataset_shape_parses_to_its_style(name, reference, right, wrong, style, n):
    tests = parse_code_tests(reference)
    assert tests.style == style
    assert len(tests) == n
    assert is_code_tests(reference)
    assert parse_code_tests(tests.to_dict()) == tests  # the wire form round-trips


@needs_sandbox
def test_right_programs_pass_and_wrong_ones_fail_in_every_shape():
    for name, reference, right, wrong, _, n in CASES:
        tests = parse_code_tests(reference)
        prefix = tests.prompt + "\n" if tests.style == "humaneval" and tests.prompt else ""
        good = run_tests(prefix + right, tests)
        assert good.status == "ok" and good.passed == n, (name, good.reason)
        bad = run_tests(prefix + wrong, tests)
        assert bad.passed < n and bad.status == "failed", (name, bad.reason)


@pytest.mark.parametrize(
    "reference",
    [
        {"nothing": 1},
        {"test": "x = 1\n"},
        {"test": "def check(candidate):\n    assert candidate(1)\n"},  # no entry point anywhere
        {"inputs": ["1"], "outputs": []},
        {"public_test_cases": "eJzLSM3JyQcABiwCFQ=="},  # compressed pickle: refused
        "just some prose about the answer",
        42,
        [],
        [{"input": "1", "output": "1", "testtype": "functional"}],  # functional without a func_name
        # Test files the jail's interpreter cannot run faithfully: a third-party import fails right programs too,
        # a mock patches the checker's modules, pytest fixtures and parametrize need pytest.
        "import numpy as np\n\ndef test_a():\n    assert f() == 1\n",
        "from unittest.mock import patch\nimport unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n"
        "        self.assertEqual(f(), 1)\n",
        "def test_a(tmp_path):\n    assert f() == 1\n",
    ],
)
def test_unknown_shapes_are_refused_naming_the_accepted_ones(reference):
    assert not is_code_tests(reference)
    with pytest.raises(CodeTestsFormatError) as err:
        parse_code_tests(reference)
    assert "MBPP" in str(err.value) and "APPS" in str(err.value) and ACCEPTED_SHAPES in str(err.value)


def test_calls_and_entry_points_are_validated():
    with pytest.raises(ValueError):
        CodeTests.call_cases([([1], 1)], "not valid()")
    with pytest.raises(ValueError):
        CodeTests.humaneval("def check(c): pass", "import")
    assert CodeTests.call_cases([([1], 1)], "Solution().f").entry_point == "Solution().f"
