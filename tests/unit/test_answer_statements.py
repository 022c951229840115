"""The reference-comparing tools read the answer a chat response states (issue 39 item 2): answer statements,
a first sentence that restates the question, choice letters and option texts, alias lists as alternatives, "name
two" pools, lists in sentences, bullets and JSON, quantities in sentences — each both ways, with the hedges and
contradictions that must not get full marks."""

from __future__ import annotations

from typing import Any

import pytest

from rlar.tools import ToolInput, builtin_specs, make_tool
from rlar.tools.answer_text import (
    asked_count,
    asks_for_one,
    chosen_letters,
    explicit_statement,
    lettered_options,
    listed_items,
    restated_answer,
    statements,
)
from rlar.tools.base import RewardTool
from rlar.tools.item_sets import list_reading
from rlar.tools.rules import normalize_text

_TOOLS: dict[str, RewardTool] = {}


async def score(name: str, reference: Any, response: str, query: str = "") -> tuple[str, float | None, str]:
    if name not in _TOOLS:
        _TOOLS[name] = make_tool(next(s for s in builtin_specs() if s.name == name))
    res = await _TOOLS[name].score(ToolInput(query=query, response=response, reference=reference))
    return res.status, res.score, res.reason


@pytest.mark.parametrize(
    ("response", "first"),
    [
        ("The answer is Paris.", "Paris"),
        ("**Answer:** Paris", "Paris"),
        ("Let me think. So the final answer is: George W.B. Harrison.", "George W.B. Harrison"),
        ("The answer to this question is 6, as there are 7 continents.", "6"),
        ("Therefore \\boxed{Au}.", "Au"),
        ("Some working.\n\n**Canberra**", "Canberra"),
        ("The capital of Canada is Ottawa, Canada.", "Ottawa"),
        ("The chemical symbol for gold is `Au`.", "Au"),
        ("The boiling point at sea level (101.325 kPa) is 100°C. Water boils.", "100°C"),
    ],
)
def test_what_a_response_states_comes_first_among_its_statements(response: str, first: str) -> None:
    assert statements(response)[0] == first
    assert statements(response)[-1] == response.strip(), "the whole response is always tried last"


def test_a_hedging_but_takes_the_first_sentence_s_answer_back() -> None:
    assert statements("The smallest prime is 2, but it's not necessarily the smallest.")[0] != "2"
    assert (
        restated_answer(
            "The Mona Lisa is attributed to Leonardo, but it's also believed to be X's.",
            "Who painted the Mona Lisa?",
        )
        == []
    )
    assert restated_answer("The capital of Canada is Ottawa, a city.", "What is the capital of Canada?") == [
        "Ottawa",
        "Ottawa, a city",
    ]
    assert restated_answer("This is a classic problem.", "What is the capital of Canada?") is None


def test_choice_letters_and_lettered_options_are_read_as_written() -> None:
    assert chosen_letters("(B) Mercury") == ["B"]
    assert chosen_letters("A) feathers\n\nThe answer is C) feathers") == ["A", "C"]
    assert chosen_letters("I pick option d.") == ["D"]
    assert chosen_letters("A train travels far.") == [], "an article is not a letter chosen"
    assert lettered_options("Which?\nA) 54\nB) 56") == {"A": "54", "B": "56"}
    assert lettered_options("Closest? (A) Venus (B) Mercury") == {"A": "Venus", "B": "Mercury"}
    assert explicit_statement("Paris is nice.") is None


@pytest.mark.parametrize(
    ("response", "items"),
    [
        ("The three states of matter are solid, liquid, and gas.", ["solid", "liquid", "gas"]),
        ("The planets are:\n\n1. Mercury\n2. Venus (hot)\n3. Earth - home", ["Mercury", "Venus", "Earth"]),
        ("Primary colours:\n\nRed (R)\nBlue (B)\n\nThat is all.", ["Red", "Blue"]),
        ('```json\n["helium", "neon"]\n```', ["helium", "neon"]),
        ('{"answer": ["x", "y"]}', ["x", "y"]),
        ("There are two noble gases: Argon (Ar) and Krypton (Kr).", ["Argon", "Krypton"]),
        ("- red\n- blue", ["red", "blue"]),
        ("The answer is red and blue.", ["red", "blue"]),
    ],
)
def test_lists_are_read_from_sentences_bullets_numbered_lines_and_json(
    response: str, items: list[str]
) -> None:
    assert listed_items(response) == items


@pytest.mark.parametrize(
    ("query", "count", "one"),
    [
        ("Name two noble gases.", 2, False),
        ("List the first four planets from the Sun.", 4, False),
        ("What are the first three prime numbers?", 3, False),
        ("What is the capital of France?", 0, True),
        ("Who wrote Hamlet?", 0, True),
        ("What are the primary colours?", 0, False),
    ],
)
def test_a_query_says_how_many_items_it_asks_for(query: str, count: int, one: bool) -> None:
    assert asked_count(query) == count
    assert asks_for_one(query) is one


def test_a_plain_list_is_aliases_items_a_pool_or_ambiguous_by_what_names_and_the_query_say() -> None:
    assert list_reading(["Paris", "Paris, France", "City of Paris"]).alternatives == [
        ["Paris"],
        ["Paris, France"],
        ["City of Paris"],
    ]
    assert list_reading(["7", "seven"]).alternatives == [["7"], ["seven"]]
    assert list_reading(["USA", "United States of America"]).alternatives == [
        ["USA"],
        ["United States of America"],
    ]
    assert list_reading(["carbon dioxide", "CO2"], "What gas do plants absorb?").alternatives == [
        ["carbon dioxide"],
        ["CO2"],
    ]
    assert list_reading(["red", "blue"], "Which two colours make green?").alternatives == [["red", "blue"]]
    pool = list_reading(["helium", "neon", "argon"], "Name two noble gases.")
    assert (pool.alternatives, pool.pick) == ([["helium", "neon", "argon"]], 2)
    assert list_reading(["red", "blue"]).ambiguous


def test_normalisation_keeps_the_sign_and_the_decimal_point_of_a_number() -> None:
    assert normalize_text("–3") == "-3" != normalize_text("3")
    assert normalize_text("3.5") == "3.5" != normalize_text("3 5")
    assert normalize_text("1,000 m") == "1000 m"
    assert normalize_text("COVID-19") == "covid 19", "a hyphen inside a word is punctuation"
    assert normalize_text("100°C") == normalize_text("100 °C")


TEXT_CASES = [
    # exact_match: the statement, exactly
    ("exact_match", "Paris", "The answer is Paris.", "", 1.0),
    ("exact_match", "Paris", "**Answer:** Paris", "", 1.0),
    ("exact_match", "Paris", "The answer is paris.", "", 0.0),  # case still matters
    ("exact_match", "Paris", "Paris.", "", 1.0),  # one final full stop is the sentence's, not the answer's
    ("exact_match", "Paris", "Paris..", "", 0.0),
    ("exact_match", "St. Louis", "St.", "", 0.0),
    ("exact_match", "B", "Answer: (B) Jupiter", "", 1.0),
    ("exact_match", "B", "A) feathers\n\nThe answer is B) feathers", "", 0.0),
    ("exact_match", "B", "The closest planet to the Sun is Mercury.", "Which? (A) Venus (B) Mercury", 1.0),
    ("exact_match", "B", "The closest planet to the Sun is Venus.", "Which? (A) Venus (B) Mercury", 0.0),
    # normalized_match
    ("normalized_match", "Canberra", "The capital of Australia is Canberra.", "", 1.0),
    ("normalized_match", "Canberra", "The capital of Australia is Sydney, not Canberra.", "", 0.0),
    (
        "normalized_match",
        ["Nile", "Nile River"],
        "The longest river is the Nile River, which runs north.",
        "",
        1.0,
    ),
    ("normalized_match", "yes", "Yes, it is.", "", 1.0),
    ("normalized_match", "yes", "No, it is not.", "", 0.0),
    ("normalized_match", "3", "The slope is –3.", "", 0.0),
    ("normalized_match", "3", "It is 3.5.", "", 0.0),
    ("normalized_match", "Paris", "The answer is Paris or Lyon.", "", 0.0),
    # contains_match
    ("contains_match", "3", "The slope is –3.", "", 0.0),
    ("contains_match", "3", "The answer is 3.5 metres.", "", 0.0),
    ("contains_match", "Paris", "The answer is Lyon. Paris is lovely.", "", 0.0),
    (
        "contains_match",
        "Washington",
        "The first president was John Adams. Washington came later.",
        "Who was the first president?",
        0.0,
    ),
    (
        "contains_match",
        "France",
        "The Eiffel Tower is located in Paris, France.",
        "In which country is the Eiffel Tower?",
        1.0,
    ),
    (
        "contains_match",
        "Ottawa",
        "The capital of Canada is Ottawa, known for culture, history, and parks.",
        "What is the capital of Canada?",
        1.0,
    ),
    (
        "contains_match",
        "Jupiter",
        "The largest planet is Jupiter, but it could also be Saturn.",
        "Which is the largest planet?",
        0.0,
    ),
    (
        "contains_match",
        "carbon dioxide",
        "Plants absorb many gases, including carbon dioxide, nitrogen oxides, and other gases. They grow.",
        "",
        0.0,
    ),
    # set_f1: aliases, items, pools, readings
    ("set_f1", ["Paris", "Paris, France", "City of Paris"], "Paris", "", 1.0),
    ("set_f1", ["Paris", "Paris, France", "City of Paris"], "The answer is Paris.", "", 1.0),
    ("set_f1", ["Paris", "Paris, France", "City of Paris"], "The answer is Lyon.", "", 0.0),
    ("set_f1", ["Paris", "City of Paris"], "Paris or Lyon", "", 0.0),
    ("set_f1", ["carbon dioxide", "CO2"], "Plants absorb CO2.", "What gas do plants absorb?", 0.0),
    ("set_f1", ["carbon dioxide", "CO2"], "The gas plants absorb is CO2.", "What gas do plants absorb?", 1.0),
    (
        "set_f1",
        ["solid", "liquid", "gas"],
        "The three states are solid, liquid, and gas.",
        "Name the three states of matter.",
        1.0,
    ),
    (
        "set_f1",
        ["helium", "neon", "argon", "krypton"],
        "Two noble gases: argon and neon.",
        "Name two noble gases.",
        1.0,
    ),
    (
        "set_f1",
        ["helium", "neon", "argon", "krypton"],
        "Argon, neon, and krypton.",
        "Name two noble gases.",
        0.8,
    ),
    (
        "set_f1",
        ["2", "3", "5"],
        "The first three primes are 2, 3, and 5.",
        "What are the first three prime numbers?",
        1.0,
    ),
    (
        "set_f1",
        ["2", "3", "5"],
        "The first three primes are -2, 3, and 5.",
        "What are the first three prime numbers?",
        0.666667,
    ),
    # quantity_match
    ("quantity_match", "40 cm^2", "The area is 8 * 5 = 40 square centimeters.", "", 1.0),
    ("quantity_match", "180 km", "60 km/h * 3 h = 180 km. The train goes 180 km at 60 km/h.", "", 1.0),
    ("quantity_match", "150 min", "2.5 hours is equal to 0.5 minutes.", "", 0.0),
    ("quantity_match", "150 min", "2.5 hours is equal to 150 minutes.", "", 1.0),
    ("quantity_match", "15 m/s", "The final answer is 15 m/s.", "", 1.0),
    ("quantity_match", "15 m/s", "It is between 10 m/s and 15 m/s.", "", 0.0),
    ("quantity_match", "1.5e-3 m", "The gap is 1.5×10⁻³ m.", "", 1.0),
    ("quantity_match", "1234 m", "The distance is 1\u2009234 m.", "", 1.0),
    # Answer objects with their aliases (WebQSP / ComplexWebQuestions, TriviaQA): every alias is an answer.
    (
        "normalized_match",
        [{"answer": "Lima", "answer_id": "m.0x", "aliases": ["Ciudad de los Reyes"]}],
        "Lima",
        "",
        1.0,
    ),
    (
        "normalized_match",
        [{"answer": "Lima", "answer_id": "m.0x", "aliases": ["Ciudad de los Reyes"]}],
        "Ciudad de los Reyes.",
        "",
        1.0,
    ),
    (
        "normalized_match",
        [{"answer": "Lima", "answer_id": "m.0x", "aliases": ["Ciudad de los Reyes"]}],
        "Cusco",
        "",
        0.0,
    ),
    ("exact_match", {"value": "Au", "aliases": ["Gold"]}, "Gold", "", 1.0),
    ("exact_match", {"value": "Au", "aliases": ["Gold"]}, "Silver", "", 0.0),
    # A degree adverb before the answer; a decimal of zeros; a name the first sentence gives without a query.
    (
        "normalized_match",
        ["Spanish"],
        "The language spoken in Chile is predominantly Spanish, with others.",
        "",
        1.0,
    ),
    (
        "normalized_match",
        ["0", "0 degrees Celsius"],
        "The freezing point of water is approximately 0.0 degrees Celsius.",
        "",
        1.0,
    ),
    ("normalized_match", ["3.10"], "The version is 3.1.", "", 0.0),
    (
        "contains_match",
        {"value": "Everest", "aliases": ["Mount Everest"]},
        "The highest is K2; Everest is second.",
        "",
        0.0,
    ),
    (
        "contains_match",
        {"value": "Everest", "aliases": ["Mount Everest"]},
        "The highest is Mount Everest.",
        "",
        1.0,
    ),
    # A later sentence that puts the answer in doubt; a response that answers "no one".
    (
        "contains_match",
        ["Everest"],
        "The tallest mountain is Everest. However, the tallest mountain cannot be determined exactly.",
        "What is the tallest mountain?",
        0.0,
    ),
    (
        "contains_match",
        ["Vermeer"],
        "No one, it was a print. The Girl with a Pearl Earring is by Vermeer.",
        "Who painted it?",
        0.0,
    ),
    (
        "contains_match",
        ["Vermeer"],
        "It was painted by Vermeer. However, it is not his largest work.",
        "Who painted it?",
        1.0,
    ),
]


@pytest.mark.parametrize(("tool", "reference", "response", "query", "expected"), TEXT_CASES)
async def test_the_text_tools_score_what_the_response_states(
    tool: str, reference: Any, response: str, query: str, expected: float
) -> None:
    status, got, reason = await score(tool, reference, response, query)
    assert status == "ok" and got == pytest.approx(expected, abs=1e-6), (reason, got)


async def test_an_ambiguous_plain_list_abstains_where_its_readings_disagree_on_full_marks() -> None:
    status, _, reason = await score("set_f1", ["red", "blue"], "red")
    assert status == "abstain" and "aliases" in reason and "items" in reason
    assert (await score("set_f1", ["red", "blue"], "red and blue"))[:2] == ("ok", 1.0), "both readings agree"
    assert (await score("set_f1", ["red", "blue"], "green"))[:2] == ("ok", 0.0)
