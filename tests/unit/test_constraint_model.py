"""The typed constraint vocabulary (rlar/constraints/model.py): one class per kind of rule, its dict form as the
serialization, validation on construction, and the vocabulary functions built on it."""

from __future__ import annotations

import dataclasses

import pytest

from rlar.constraints import model
from rlar.constraints.checks.rules import check, holds
from rlar.constraints.families.figure import Figure
from rlar.constraints.families.outline import Outline
from rlar.constraints.families.task_list import TaskList
from rlar.constraints.model import At, Count, Each, Keys, Same, Sections
from rlar.constraints.vocabulary import RULE_TYPES, RULES, canonical, describe, from_metadata, parse


def test_every_rule_has_one_class_and_its_parameters_are_the_class_fields() -> None:
    claimed = [rule for kind in {*RULE_TYPES.values()} for rule in kind.RULES]
    assert len(claimed) == len(set(claimed)) == len(RULE_TYPES)
    assert RULES["same"] == {"unit", "index", "as"}  # a field named as_ is the parameter "as"
    assert RULES["words"] == {"min", "max", "per", "separator", "body", "index"}
    assert RULES["paragraphs"] == {"min", "max", "per", "separator", "distinct", "body"}
    assert RULES["task_list"] == frozenset()


def test_typed_constraints_serialize_to_the_dict_form_and_back() -> None:
    made = [
        Count(rule="words", per="item", max=10),
        Each(unit="sentence", test="prime", of="words", rule="each"),
        Same(rule="same", unit="line", index=-1, as_=1),
        Keys(rule="yaml_keys", keys=["a", "b"], types={"a": "integer"}, exact=True),
        Figure(rule="figure", shape="pyramid", char="x", min=3, max=3),
        TaskList(rule="task_list"),
    ]
    assert made[0].to_dict() == {"rule": "words", "max": 10, "per": "item"}
    assert made[2].to_dict() == {"rule": "same", "unit": "line", "index": -1, "as": 1}
    for c in made:
        assert parse(c.to_dict()) == c
        assert canonical([c.to_dict()]) == [c.to_dict()]


@pytest.mark.parametrize(
    "bad,message",
    [
        ({"rule": "poem"}, "unknown constraint rule 'poem'"),
        ({"rule": "words", "colour": "red"}, "unknown parameters \\['colour'\\]"),
        ({"rule": "words", "per": "chapter"}, "per must be one of"),
        ({"rule": "words", "index": 2}, "index needs a per scope"),
        ({"rule": "words", "min": -1}, "min must be a non-negative integer"),
        ({"rule": "at", "unit": "word", "index": 0, "text": "cat"}, "rule 'at' needs"),
        ({"rule": "figure", "shape": "square", "char": "*"}, "rule 'figure' needs"),
        ({"rule": "each", "unit": "line", "test": "prime", "of": "furlongs"}, "of must be a count unit"),
        ({"rule": "only", "what": "poem"}, "what must be one of"),
        ({"rule": "same", "unit": "line", "index": 1}, "two non-zero indexes"),
    ],
)
def test_a_constraint_outside_the_vocabulary_is_refused_with_what_is_wrong(bad: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse(bad)
    with pytest.raises(ValueError, match=message):
        canonical([bad])


def test_typed_fields_are_frozen_and_keyword_only() -> None:
    c = At(rule="at", unit="word", index=2, text="cat")
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.text = "dog"  # type: ignore[misc]
    with pytest.raises(TypeError):
        model.Letter("letter", "e")  # type: ignore[misc]


def test_a_typed_constraint_scores_and_says_itself_as_the_dict_form_does() -> None:
    # the checks read the dict form (a verifier embeds them as standard-library code)
    c = Count(rule="words", per="sentence", max=3)
    assert holds(c.to_dict(), "One two three. Four five.") and not holds(c.to_dict(), "One two three four.")
    assert check(c.to_dict(), "One two three four. Five.") == 0.5
    assert c.describe() == describe(c.to_dict()) == "each sentence: at most 3 words"
    assert Sections(rule="sections", marker="Part", suffix=":", min=2, max=2).describe() == (
        "exactly 2 sections marked Part N:"
    )
    assert Outline(rule="outline", min=3, max=3, sub_min=2).describe() == (
        "a nested list of exactly 3 '-' items, each with at least 2 sub-items"
    )
    assert At(rule="at", unit="word", index=-1, text="end").describe() == "the last word is 'end'"


def test_merging_keeps_the_tightest_bounds_and_unites_lists() -> None:
    got = canonical(
        [
            {"rule": "words", "min": 3, "max": 9},
            {"rule": "words", "max": 6},
            {"rule": "include", "words": ["a"]},
            {"rule": "include", "words": ["b", "a"]},
            {"rule": "words", "per": "line", "max": 2},
        ]
    )
    assert got == [
        {"rule": "include", "words": ["a", "b"]},
        {"rule": "words", "min": 3, "max": 6},
        {"rule": "words", "per": "line", "max": 2},
    ]


def test_a_record_declares_only_rules_and_parameters_of_the_vocabulary() -> None:
    md = {"format_rules": [{"rule": "item_words", "max": 5}, {"rule": "words", "max": 9, "tone": "dry"}, "x"]}
    assert from_metadata(md) == [{"rule": "words", "max": 9}, {"rule": "words", "max": 5, "per": "item"}]
