"""What the builders of responses share: finding the constraints of a set, a count to write within its bounds, and
the words and emojis a built response is made of.

A response builder (a family's ``build``, :mod:`rlar.synthesis.builder_layouts`) writes a response meant to hold
a set of constraints in their dict form; nothing it writes is trusted (callers check it with
:func:`rlar.constraints.checks.holds`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "EMOJI",
    "WORDS",
    "count_wanted",
    "one_rule",
    "per_rule",
    "phrase",
    "pick",
    "relation_rule",
    "rules_of",
    "test_rule",
]

EMOJI = ("🌞", "🌲", "🍞", "🚲", "🎉", "🌙", "🍎", "🚗", "🏠", "🐕")
WORDS = (
    "river stone garden window morning candle harbor meadow lantern valley orchard pebble thunder silver "
    "forest castle bridge market violin ribbon copper marble feather compass blanket pepper cinnamon "
    "ladder pencil rocket saddle tunnel wagon anchor basket cactus desert island jungle"
).split()


def rules_of(cons: Sequence[Mapping[str, Any]], rule: str) -> list[dict[str, Any]]:
    """The constraints of ``rule`` in ``cons`` (copies)."""
    return [dict(c) for c in cons if c.get("rule") == rule]


def one_rule(cons: Sequence[Mapping[str, Any]], rule: str, **where: Any) -> dict[str, Any] | None:
    """The first constraint of ``rule`` whose parameters are ``where`` (``per=None``: a whole-answer one)."""
    return next((c for c in rules_of(cons, rule) if all(c.get(k) == v for k, v in where.items())), None)


def pick(c: Mapping[str, Any] | None, default: int) -> int:
    """A count within the bounds of ``c`` (``default`` when it has none, or is None)."""
    if not c:
        return default
    lo, hi = c.get("min"), c.get("max")
    if lo is not None and hi is not None:
        return lo if lo == hi else min(hi, lo + 1)
    if lo is not None:
        return max(lo, default) if default <= lo + 1 else lo + 1
    if hi is not None:
        return min(hi, default)
    return default


def count_wanted(cons: Sequence[Mapping[str, Any]], rule: str, default: int) -> int:
    """How many of a count unit to write for the whole-answer count ``rule`` of ``cons``."""
    return pick(one_rule(cons, rule, per=None), default)


def per_rule(cons: Sequence[Mapping[str, Any]], rule: str, per: str) -> dict[str, Any] | None:
    """The count ``rule`` that holds in every ``per`` unit (not one indexed unit)."""
    return next((c for c in rules_of(cons, rule) if c.get("per") == per and c.get("index") is None), None)


def test_rule(cons: Sequence[Mapping[str, Any]], unit: str, test: str) -> dict[str, Any] | None:
    """The ``each`` constraint of ``unit`` and ``test``."""
    return next((c for c in rules_of(cons, "each") if c.get("unit") == unit and c.get("test") == test), None)


def relation_rule(cons: Sequence[Mapping[str, Any]], unit: str, rel: str) -> dict[str, Any] | None:
    """The ``order`` constraint of ``unit`` and ``rel``."""
    return next((c for c in rules_of(cons, "order") if c.get("unit") == unit and c.get("rel") == rel), None)


def phrase(i: int, k: int) -> str:
    """``k`` words of the vocabulary, starting at the ``i``-th."""
    return " ".join(WORDS[(i * 3 + j) % len(WORDS)] for j in range(k))
