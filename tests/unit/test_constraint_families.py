"""Every constraint family (rlar/constraints/families/) as the system uses it: the reader reads its examples whole,
the builder writes a response that holds them, the verifier that embeds its checks scores as the host does, and
each of its near misses breaks the rule it names."""

from __future__ import annotations

import pytest

from rlar.constraints import describe, holds
from rlar.constraints.families import FAMILIES, family_of
from rlar.constraints.vocabulary import RULE_TYPES
from rlar.synthesis.blocks import render_module
from rlar.synthesis.builder import build, violations
from rlar.tasks.reading import read_instruction

CASES = [(f.name, example) for f in FAMILIES for example in f.examples]


def test_the_families_are_named_once_and_own_their_rules() -> None:
    assert len({f.name for f in FAMILIES}) == len(FAMILIES)
    for family in FAMILIES:
        assert family.examples, family.name
        for rule in family.rules:
            assert family_of(rule) is family and RULE_TYPES[rule] in family.types
            assert set(family.checks) <= set(family.rules)


@pytest.mark.parametrize("name,example", CASES)
def test_a_family_reads_checks_builds_and_breaks_its_examples(name: str, example: str) -> None:
    reading = read_instruction(example)
    assert reading.full, reading.to_dict()
    cons = reading.constraints
    mine = [
        c for c in cons if family_of(str(c["rule"])) is not None and family_of(str(c["rule"])).name == name
    ]
    assert mine, cons
    good = build(cons)
    assert all(holds(c, good) for c in cons), (cons, good)
    ns: dict[str, object] = {}
    exec(compile(render_module(cons, None, aggregate="mean", header=example), "verifier", "exec"), ns)
    assert ns["reward"]("", good, None, {}) == 1.0  # type: ignore[operator]
    broken = [(why, text) for why, text in violations(cons) if why.split(":")[0] in {c["rule"] for c in mine}]
    assert broken
    for why, text in broken:
        target = [c for c in mine if c["rule"] == why.split(":")[0]]
        assert not all(holds(c, text) for c in target), why
        assert ns["reward"]("", text, None, {}) < 1.0, why  # type: ignore[operator]
    assert all(describe(c) for c in mine)
