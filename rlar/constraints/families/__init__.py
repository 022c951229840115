"""The constraint families, in the order the reader reads them and the builder tries them (see
:mod:`rlar.constraints.family`; docs/architecture.md, "A new constraint family").

Each family's reading runs, in this order, where the reader reads the layouts of the whole answer
(:func:`rlar.tasks.reading_lists.read_lists`); the builder lays the whole answer out with the first family that
holds a rule of the set (:func:`rlar.synthesis.builder_layouts.build_layout`), and the near-miss maker asks each
constraint's family for its near misses (:func:`rlar.synthesis.builder_misses.layout_violations`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rlar.constraints.families import figure, html_list, outline, pairs, task_list
from rlar.constraints.family import Family

__all__ = ["FAMILIES", "FAMILY_CHECKS", "family_of"]

FAMILIES: tuple[Family, ...] = (
    html_list.FAMILY,
    task_list.FAMILY,
    outline.FAMILY,
    figure.FAMILY,
    pairs.FAMILY,
)
# rule -> its check, for rlar.constraints.checks.rules.check (a verifier embeds the same table)
FAMILY_CHECKS: Mapping[str, Callable[[Any, Any], float]] = {
    rule: fn for family in FAMILIES for rule, fn in family.checks.items()
}
_BY_RULE = {rule: family for family in FAMILIES for rule in family.rules}


def family_of(rule: str) -> Family | None:
    """The family a rule belongs to (None: a rule of the core vocabulary)."""
    return _BY_RULE.get(rule)
