"""Scope x predicate readings (issue 25, third round): both readers, the checks they compose into, and the
responses built for them."""

from __future__ import annotations

from typing import Any

import pytest

from rlar.synthesis.builder import build, violations
from rlar.synthesis.checks import check, holds
from rlar.synthesis.second_route import second_reading
from rlar.tasks.constraints import canonical
from rlar.tasks.reading import read_instruction

CASES: list[tuple[str, list[dict[str, Any]]]] = [
    (
        "Write a sentence of exactly 7 words in which the fourth word is 'green'.",
        [
            {"rule": "at", "unit": "word", "index": 4, "text": "green"},
            {"rule": "sentences", "min": 1, "max": 1},
            {"rule": "words", "min": 7, "max": 7},
        ],
    ),
    (
        "Give me one sentence of 6 words whose first word is 'Maybe'.",
        [
            {"rule": "sentences", "min": 1, "max": 1},
            {"rule": "starts_with", "text": "Maybe"},
            {"rule": "words", "min": 6, "max": 6},
        ],
    ),
    ("The last word of your answer must be 'soon'.", [{"rule": "ends_with", "text": "soon"}]),
    (
        "Write 3 paragraphs and make every paragraph end with the word 'light'.",
        [
            {"rule": "ends_with", "text": "light", "per": "paragraph"},
            {"rule": "paragraphs", "min": 3, "max": 3},
        ],
    ),
    (
        "Give a word of exactly 8 letters whose third letter is 'a'.",
        [
            {"rule": "at", "unit": "letter", "index": 3, "text": "a"},
            {"rule": "letters", "min": 8, "max": 8},
            {"rule": "words", "min": 1, "max": 1},
        ],
    ),
    (
        "Write a sentence that uses the words sun, sand and wave.",
        [{"rule": "include", "words": ["sun", "sand", "wave"]}, {"rule": "sentences", "min": 1, "max": 1}],
    ),
    (
        "Write a sentence of 5 words with no letter a in it.",
        [
            {"rule": "letter", "letter": "a", "max": 0},
            {"rule": "sentences", "min": 1, "max": 1},
            {"rule": "words", "min": 5, "max": 5},
        ],
    ),
    (
        "Give 4 uppercase words separated by spaces.",
        [{"rule": "uppercase"}, {"rule": "words", "min": 4, "max": 4}],
    ),
    (
        "Write 5 words, one on each line.",
        [
            {"rule": "lines", "min": 5, "max": 5},
            {"rule": "words", "min": 5, "max": 5},
            {"rule": "words", "per": "line", "min": 1, "max": 1},
        ],
    ),
    ("Include exactly 3 words written in capital letters.", [{"rule": "capital_words", "min": 3, "max": 3}]),
    (
        "Write 4 words in which each word starts with the last letter of the previous word.",
        [{"rule": "order", "unit": "word", "rel": "chain"}, {"rule": "words", "min": 4, "max": 4}],
    ),
    (
        "Give 6 words, one per line, and no word is repeated.",
        [
            {"rule": "lines", "min": 6, "max": 6},
            {"rule": "order", "unit": "word", "rel": "distinct"},
            {"rule": "words", "min": 6, "max": 6},
            {"rule": "words", "per": "line", "min": 1, "max": 1},
        ],
    ),
    (
        "Write 3 sentences, each starting with the word 'We'.",
        [{"rule": "sentences", "min": 3, "max": 3}, {"rule": "starts_with", "text": "We", "per": "sentence"}],
    ),
    (
        "Respond with exactly four bullet points; no bullet may contain the word 'also'.",
        [{"rule": "bullets", "min": 4, "max": 4}, {"rule": "exclude", "words": ["also"]}],
    ),
    (
        "Give a one-word answer that ends in 'ly'.",
        [{"rule": "ends_with", "text": "ly"}, {"rule": "words", "min": 1, "max": 1}],
    ),
    (
        "Give 3 bullet points, each ending with a period.",
        [{"rule": "bullets", "min": 3, "max": 3}, {"rule": "ends_with", "text": ".", "per": "item"}],
    ),
    ("Write 4 words in all capital letters.", [{"rule": "uppercase"}, {"rule": "words", "min": 4, "max": 4}]),
    (
        "Answer in exactly 12 words, none of which may be longer than 6 letters.",
        [{"rule": "letters", "per": "word", "max": 6}, {"rule": "words", "min": 12, "max": 12}],
    ),
    (
        "Give exactly 3 sentences and finish the response with the word Done.",
        [{"rule": "ends_with", "text": "done"}, {"rule": "sentences", "min": 3, "max": 3}],
    ),
]


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[t for t, _ in CASES])
def test_the_main_reader_reads_scope_and_predicate_whole(text: str, expected: list[dict[str, Any]]) -> None:
    reading = read_instruction(text)
    assert reading.full, reading.to_dict()
    assert reading.constraints == canonical(expected)


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[t for t, _ in CASES])
def test_the_second_reading_reads_the_same_constraints_apart(
    text: str, expected: list[dict[str, Any]]
) -> None:
    got = {(c["rule"], c.get("per"), c.get("index")) for c in second_reading(text)}
    assert {(c["rule"], c.get("per"), c.get("index")) for c in expected} <= got


@pytest.mark.parametrize(
    "text",
    [
        "The last word of your answer must not be 'soon'.",  # a negation is not read the other way round
        "Write 6 words that rhyme with each other.",  # no rule for rhymes: refused
        "Give three reasons to read, one per line.",  # what a reason is needs a judge
    ],
)
def test_what_cannot_be_read_leaves_the_reading_partial(text: str) -> None:
    assert not read_instruction(text).full


def test_a_word_at_a_position_is_checked_by_its_place_not_its_presence() -> None:
    c = {"rule": "at", "unit": "word", "index": 2, "text": "cat"}
    assert holds(c, "The cat slept on the warm red mat.")
    assert not holds(c, "The dog and the cat slept on mats.")
    last = {"rule": "at", "unit": "word", "index": -1, "text": "today"}
    assert holds(last, "We will go swimming today.") and not holds(last, "Today I feel very happy.")
    letter = {"rule": "at", "unit": "letter", "index": 2, "text": "r"}
    assert holds(letter, "problem") and not holds(letter, "pattern")


def test_a_word_ending_allows_closing_punctuation_but_not_a_longer_word() -> None:
    c = {"rule": "ends_with", "text": "home", "per": "paragraph"}
    assert holds(c, "We came home.\n\nShe was glad to be home!")
    assert check(c, "We came home.\n\nHome is where we rest.") == 0.5
    assert holds({"rule": "ends_with", "text": "ly"}, "happily") and not holds(
        {"rule": "ends_with", "text": "ly"}, "happy"
    )
    assert not holds({"rule": "ends_with", "text": "Any other questions?"}, "Any other questions? Thanks.")


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[t for t, _ in CASES])
def test_the_builder_writes_a_passing_response_and_ones_that_break_each_rule(
    text: str, expected: list[dict[str, Any]]
) -> None:
    cons = canonical(expected)
    good = build(cons)
    assert all(holds(c, good) for c in cons), (good, [c for c in cons if not holds(c, good)])
    for rule in {"at", "ends_with"} & {c["rule"] for c in cons}:
        bad = [t for why, t in violations(cons) if why.startswith(rule)]
        assert bad and any(not all(holds(c, t) for c in cons) for t in bad)


def test_relations_between_words_hold_over_all_of_them() -> None:
    chain = {"rule": "order", "unit": "word", "rel": "chain"}
    assert holds(chain, "apple egg goat tiger rabbit") and not holds(chain, "apple egg goat tiger lion")
    distinct = {"rule": "order", "unit": "word", "rel": "distinct"}
    assert holds(distinct, "sun moon star sky") and not holds(distinct, "Sun moon star sun.")
    assert not holds(distinct, "sun moon sun star")  # a repeat that is not next to its twin


def test_a_word_count_one_per_line_is_checked_as_lines() -> None:
    reading = read_instruction("Write 5 words, one on each line.")
    cons = reading.constraints
    assert all(holds(c, "tree\nrock\nlake\nhill\nsand") for c in cons)
    assert not all(holds(c, "tree rock lake hill sand") for c in cons)
