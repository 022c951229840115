"""What each constraint rule means, as standard-library Python: the checks every composed verifier embeds.

The modules below import only the standard library and each other, and define only functions and constants, so
:func:`embedded_source` can copy them, in this order, into one namespace of the verifier that runs in the sandbox;
the host uses the same functions to label probes built from a reading and to check the reader against
hand-labelled answers:

- :mod:`~rlar.constraints.checks.numbers`: number tests (primes, parity, squares, digit sums, ranges of counts);
- :mod:`~rlar.constraints.checks.marks`: marks in a text (emojis, bold, links, parentheses, task boxes, times,
  prices, leading spaces);
- :mod:`~rlar.constraints.checks.units`: the units every check counts in and the count of each count unit;
- :mod:`~rlar.constraints.checks.language`: the language of a text;
- :mod:`~rlar.constraints.checks.structured`: JSON, YAML, tables, wrappers and delimited lists;
- :mod:`~rlar.constraints.checks.layout`: unit kinds, measured relations and whole-answer layouts;
- :mod:`~rlar.constraints.checks.rules`: ``check(c, text)`` and ``holds(c, text)`` for every rule.

Because they share one namespace in a verifier, no two of these modules define the same top-level name.
"""

from __future__ import annotations

import ast
import inspect
from types import ModuleType

from rlar.constraints.checks import language, layout, marks, numbers, rules, structured, units
from rlar.constraints.checks.rules import (
    COUNT_UNITS,
    LANGUAGES,
    MEASURED_TESTS,
    check,
    detect_language,
    holds,
    measure_ok,
    syllables,
    unit_test,
)

__all__ = [
    "COUNT_UNITS",
    "EMBEDDED_MODULES",
    "LANGUAGES",
    "MEASURED_TESTS",
    "check",
    "detect_language",
    "embedded_source",
    "holds",
    "measure_ok",
    "syllables",
    "unit_test",
]

EMBEDDED_MODULES: tuple[ModuleType, ...] = (numbers, marks, units, language, structured, layout, rules)


def _body(mod: ModuleType) -> str:
    """A module's source without its docstring, its imports and its ``__all__`` (the verifier's prelude imports
    the standard library; the other check modules are in the same namespace)."""
    src = inspect.getsource(mod)
    drop: set[int] = set()
    body = ast.parse(src).body
    for k, node in enumerate(body):
        doc = k == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if (
            isinstance(node, ast.Import)
            or (isinstance(node, ast.ImportFrom) and str(node.module or "").startswith("rlar."))
            or doc
            or (isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets))
        ):
            drop |= set(range(node.lineno, int(node.end_lineno or node.lineno) + 1))
    return "\n".join(line for i, line in enumerate(src.splitlines(), 1) if i not in drop)


def embedded_source() -> str:
    """The source of the check modules as one namespace, for a composed verifier."""
    return "\n\n".join(_body(mod) for mod in EMBEDDED_MODULES)
