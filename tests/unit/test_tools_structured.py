"""The structured-reference tools: set_f1 (span objects, keyphrase and answer lists), sequence_match (tag
sequences, grids), quantity_match (numbers with units) — on references as the datasets ship them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rlar.tools.base import ToolInput, builtin_specs, make_tool
from rlar.tools.structured import compound_quantities, parse_quantity, quantities

SPECS = {s.name: s for s in builtin_specs()}
CONLL = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]


def score(tool: str, response: str, reference: Any, metadata: dict[str, Any] | None = None) -> float | None:
    result = asyncio.run(
        make_tool(SPECS[tool]).score(
            ToolInput(query="q", response=response, reference=reference, metadata=metadata or {})
        )
    )
    return result.score


def test_set_f1_scores_drop_spans_as_a_set() -> None:
    ref = {"spans": ["Ahmed Pasha", "Mustafa Bey"], "types": ["span", "span"]}
    assert score("set_f1", "Mustafa Bey and Ahmed Pasha", ref) == 1.0
    assert score("set_f1", "Ahmed Pasha", ref) == pytest.approx(2 / 3)
    assert score("set_f1", "", ref) == 0.0


def test_set_f1_gives_a_long_list_of_candidates_less_than_the_right_items() -> None:
    ref = ["sparse coding", "dictionary learning", "image denoising"]
    right = score("set_f1", "sparse coding; dictionary learning; image denoising", ref)
    spray = score("set_f1", ", ".join([*ref, *(f"topic {i}" for i in range(20))]), ref)
    assert right == 1.0 and spray is not None and spray < 0.3


def test_set_f1_reads_coqa_and_squad_answers_as_alternatives() -> None:
    assert score("set_f1", "White", {"input_text": "white", "answer_start": 59, "answer_end": 93}) == 1.0
    squad = {"text": ["Denver Broncos", "the Denver Broncos"], "answer_start": [177, 173]}
    assert score("set_f1", "Denver Broncos", squad) == 1.0
    assert score("set_f1", "Carolina Panthers", squad) == 0.0


def test_set_f1_reads_answer_objects_as_items_each_given_by_any_of_its_names() -> None:
    ref = [
        {"answer_text": "Rhine", "aliases": ["Rhein"]},
        {"answer_text": "Moselle", "aliases": ["Mosel"]},
        {"answer_text": "Main", "aliases": []},
    ]
    assert score("set_f1", "Rhein, Mosel and Main", ref) == 1.0
    assert score("set_f1", "Rhine and Moselle", ref) == pytest.approx(0.8)
    assert score("set_f1", "Rhine, Danube and Elbe", ref) == pytest.approx(1 / 3)


def test_set_f1_reads_lists_of_synonyms_as_items_and_one_list_as_alternatives() -> None:
    ref = [["insulin"], ["glucagon", "GCG"], ["somatostatin", "SST", "growth hormone-inhibiting hormone"]]
    assert score("set_f1", "Insulin, GCG and SST.", ref) == 1.0
    assert score("set_f1", "insulin and glucagon", ref) == pytest.approx(0.8)
    one = [["tyrosine hydroxylase", "TH", "tyrosine 3-monooxygenase"]]
    assert score("set_f1", "The enzyme is tyrosine 3-monooxygenase.", one) == 1.0
    assert score("set_f1", "The enzyme is dopamine hydroxylase.", one) == 0.0


def test_set_f1_reads_words_joined_by_commas_as_items() -> None:
    assert score("set_f1", "apple, football", "football,apple") == 1.0
    assert score("set_f1", "football", "football,apple") == pytest.approx(2 / 3)


def test_sequence_match_reads_slot_tags_shipped_as_one_string() -> None:
    ref = "O O B-from.city O B-to.city"
    assert score("sequence_match", "O O B-from.city O B-to.city", ref) == 1.0
    assert score("sequence_match", "O O B-from.city O B-from.city", ref) == pytest.approx(0.8)


def test_sequence_match_reads_conll_tag_ids_with_their_names() -> None:
    ref = [3, 0, 7, 0, 0, 0, 7, 0, 0]
    meta = {"tag_names": CONLL}
    assert score("sequence_match", "B-ORG O B-MISC O O O B-MISC O O", ref, meta) == 1.0
    assert score("sequence_match", "O O O O O O O O O", ref, meta) == pytest.approx(6 / 9)
    assert score("sequence_match", "B-ORG O", ref, meta) == pytest.approx(2 / 9), (
        "a short answer loses positions"
    )


def test_sequence_match_compares_grids_cell_by_cell_whatever_the_layout() -> None:
    grid = "534678912672195348198342567859761423426853791713924856961537284287419635345286179"
    spaced = "\n".join(" ".join(grid[i : i + 9]) for i in range(0, 81, 9))
    assert score("sequence_match", f"Solution:\n{spaced}", grid) == 1.0
    wrong = grid[:-2] + "97"
    assert score("sequence_match", wrong, grid) == pytest.approx(79 / 81)
    assert score("sequence_match", "I could not solve it.", grid) == 0.0


@pytest.mark.parametrize(
    ("response", "reference", "expected"),
    [
        ("It is compressed by 0.04 m.", "4.0 cm", 1.0),
        ("a = 5 m/s^2", "5.0 m/s^2", 1.0),
        ("2.25 kilograms", "2250 g", 1.0),
        ("90 km/h is 25 m/s", "25 m/s", 1.0),
        ("30 km/s", "30 m/s", 0.0),
        ("30", "30 m/s", 0.0),
        ("4.0 s", "4.0 cm", 0.0),
    ],
)
def test_quantity_match_converts_units_and_refuses_other_dimensions_or_none(
    response: str, reference: str, expected: float
) -> None:
    assert score("quantity_match", response, reference) == expected


def test_quantity_match_abstains_on_a_reference_without_a_unit() -> None:
    assert score("quantity_match", "12 m", "twelve") is None
    assert parse_quantity("15 m/s to the east") is not None and parse_quantity("no numbers here") is None


def test_in_after_a_unit_is_the_preposition_and_compound_quantities_add_up() -> None:
    assert [(round(v, 6), u) for v, _, u in quantities("which is 90 minutes in total")] == [
        (5400.0, "minutes")
    ]
    assert [round(v, 4) for v, _, _ in compound_quantities("5 ft 3 in tall")] == [1.6002]
    assert [v for v, _, _ in compound_quantities("1 hour and 30 minutes")] == [5400.0]
    # Not a compound: the same unit twice, or a smaller unit first.
    assert [v for v, _, _ in compound_quantities("between 10 m and 20 m")] == [10.0, 20.0]
    assert [v for v, _, _ in compound_quantities("30 min 2 h")] == [1800.0, 7200.0]
