"""A constraint family: the rules of one subject with everything the system does with them, in one module.

A family module (``rlar/constraints/families/<name>.py``) defines its constraint types (subclasses of
:class:`rlar.constraints.model.Constraint`), their checks (standard-library functions ``(c, text) -> score``,
embedded in every composed verifier with the module-level names they use), its reading (the wordings of the
rules, as :class:`rlar.constraints.reading.Phrase` tables where they are data), a builder of a response that
holds a set of its rules, and near misses that each break one rule; and it ends with its :class:`Family` record,
which also names instructions the family reads whole (its examples). The registry :mod:`rlar.constraints.families`
lists the families in the order the reader reads them and the builder tries them; the vocabulary, the checks, the
reader, the builder and the near-miss maker take every family from there. The second reading
(:mod:`rlar.synthesis.second`) reads apart by design and is not part of a family.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rlar.constraints.model import Constraint
from rlar.constraints.reading import WorkingClause

__all__ = ["Family"]

Cons = Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class Family:
    """One rule family (module docstring)."""

    name: str
    types: tuple[type[Constraint], ...]
    """Its constraint types; each names the rules it covers (``RULES``)."""
    checks: Mapping[str, Callable[[Any, Any], float]]
    """Rule -> score of a text in [0, 1], 1.0 exactly when the rule holds: standard-library code only, since it is
    embedded in verifiers with the module-level names it uses (and the shared check modules' names)."""
    read: Callable[[WorkingClause, str, str], None]
    """Reads the family's wordings in one clause: ``read(cl, sentence, whole)``."""
    build: Callable[[Cons], str | None]
    """A response meant to hold a set of constraints in which the family lays out the whole answer, or None when
    the set holds none of its rules."""
    near_misses: Callable[[Mapping[str, Any], str, Cons], list[tuple[str, str]]]
    """``(why, response)`` pairs for one of its constraints ``c``, each breaking ``c`` in the good response ``good``
    built for the set ``cons``: ``near_misses(c, good, cons)``."""
    examples: tuple[str, ...]
    """Instructions the family reads whole (tests/unit/test_constraint_families.py reads, checks, builds and breaks
    each)."""

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(rule for t in self.types for rule in t.RULES)
