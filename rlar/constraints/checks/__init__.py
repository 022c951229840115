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

The checks of the constraint families (:mod:`rlar.constraints.families`) follow them, each with the module-level
names it uses, and ``FAMILY_CHECKS``, the rule -> check table ``check`` consults. Because they share one namespace
in a verifier, no two of these modules or family checks define the same top-level name.
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
from rlar.constraints.families import FAMILIES, FAMILY_CHECKS
from rlar.constraints.family import Family

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


def _family_checks(family: Family) -> str:
    """The source of a family's check functions and of the module-level names they use, in the module's order
    (the imported names are the check modules' and in the namespace already)."""
    mod = inspect.getmodule(next(iter(family.checks.values())))
    assert mod is not None
    src = inspect.getsource(mod)
    body = ast.parse(src).body
    top: dict[str, ast.stmt] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            top[node.name] = node
        elif isinstance(node, ast.Assign):
            top.update({t.id: node for t in node.targets if isinstance(t, ast.Name)})
    wanted: set[str] = set()
    todo = [fn.__name__ for fn in family.checks.values()]
    while todo:
        name = todo.pop()
        if name in wanted or name not in top:
            continue
        wanted.add(name)
        todo += [n.id for n in ast.walk(top[name]) if isinstance(n, ast.Name) and n.id in top]
    nodes = [node for node in body if any(top.get(name) is node for name in wanted)]
    return "\n\n\n".join(str(ast.get_source_segment(src, node)) for node in nodes)


def embedded_source() -> str:
    """The source of the check modules and of the families' checks as one namespace, for a composed verifier."""
    parts = [_body(mod) for mod in EMBEDDED_MODULES]
    parts += [_family_checks(family) for family in FAMILIES]
    table = ", ".join(f"{rule!r}: {fn.__name__}" for rule, fn in FAMILY_CHECKS.items())
    parts.append(f"FAMILY_CHECKS = {{{table}}}\n")
    return "\n\n".join(parts)
