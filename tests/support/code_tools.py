"""The code_tests tool's spec and the add() problem its tests share."""

from __future__ import annotations

from typing import Any

from rlar.tools import builtin_specs
from rlar.tools.base import ToolSpec


def code_spec(**params: Any) -> ToolSpec:
    base = next(s for s in builtin_specs() if s.name == "code_tests")
    return base.replace(params={**base.params, **params}).sealed()


ADD_TESTS = ["assert add(1, 2) == 3", "assert add(-1, 1) == 0", "assert add(10, 5) == 15"]
HUMANEVAL = {
    "prompt": 'def add(a, b):\n    """Return a + b."""\n',
    "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(0, 0) == 0\n",
    "entry_point": "add",
}
