"""The checks of the constraint model (rlar/constraints/checks/): one namespace embedded in every verifier, and one
definition of the number tests."""

from __future__ import annotations

import ast

import pytest

from rlar.constraints.checks import EMBEDDED_MODULES, check, embedded_source, measure_ok, unit_test
from rlar.constraints.checks.numbers import MEASURED_TESTS, number_test


def test_no_two_embedded_checks_define_the_same_name() -> None:
    # A verifier holds the check modules and the families' checks in one namespace: a second definition would
    # silently replace the first.
    seen: set[str] = set()
    for node in ast.parse(embedded_source()).body:
        names = []
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names = [node.name]
        elif isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        for name in names:
            assert name not in seen, name
            seen.add(name)
    assert {m.__name__.rsplit(".", 1)[-1] for m in EMBEDDED_MODULES} >= {"numbers", "rules", "layout"}


def test_the_embedded_source_runs_alone_and_scores_as_the_host_does() -> None:
    ns: dict[str, object] = {}
    exec(compile("import json, math, re, unicodedata\n" + embedded_source(), "verifier", "exec"), ns)
    cases = [
        ({"rule": "each", "unit": "number", "test": "prime"}, "2 3 5 7 9"),
        (
            {"rule": "each", "unit": "sentence", "test": "prime", "of": "words"},
            "One two. One two three four.",
        ),
        ({"rule": "task_list"}, "- [x] milk\n- [ ] eggs"),
        ({"rule": "words", "max": 3}, "one two three four five"),
    ]
    for c, text in cases:
        assert ns["check"](c, text) == check(c, text)  # type: ignore[operator]
    assert "prime_number" not in embedded_source()
    assert embedded_source().count("def is_prime(") == 1


@pytest.mark.parametrize(
    "test,arg",
    [("prime", None), ("even", None), ("odd", None), ("divisible", 3), ("square", None), ("digit_sum", 6)],
)
def test_a_number_unit_and_a_measured_count_use_the_same_number_test(test: str, arg: int | None) -> None:
    for n in range(0, 60):
        want = number_test(test, arg, n)
        assert unit_test(test, arg, str(n)) is want, (test, n)
        assert measure_ok(test, arg, n) is want, (test, n)


def test_a_measured_count_that_is_malformed_or_unknown_fails() -> None:
    assert measure_ok("prime", None, -1) is False and measure_ok("even", None, None) is False
    assert measure_ok("range", [2, 4], 3) and not measure_ok("range", [2, 4], 5)
    assert set(MEASURED_TESTS) == {"prime", "even", "odd", "divisible", "square", "range", "digit_sum"}
    with pytest.raises(ValueError, match="unknown measured test"):
        measure_ok("palindrome", None, 3)
