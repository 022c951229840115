"""Scope x predicate readings: both readers, the checks they compose into, and the
responses built for them."""

from __future__ import annotations

from typing import Any

import pytest

from rlar.constraints.checks import check, holds
from rlar.constraints.vocabulary import canonical
from rlar.synthesis.builder import build, violations
from rlar.synthesis.second_route import second_reading
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
        [
            {"rule": "delimited", "text": " ", "unit": "word"},  # the separator is checked
            {"rule": "uppercase"},
            {"rule": "words", "min": 4, "max": 4},
        ],
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
    # bans, word lists, repeats, chains, character ranges and words in capitals (train ids t25d-*)
    (
        "Write 4 bullet points, each at most 6 words, none of them containing the word 'really'.",
        [
            {"rule": "bullets", "min": 4, "max": 4},
            {"rule": "exclude", "words": ["really"]},
            {"rule": "words", "per": "item", "max": 6},
        ],
    ),
    (
        "Write one sentence using every one of the words lamp, desk and chair.",
        [{"rule": "include", "words": ["lamp", "desk", "chair"]}, {"rule": "sentences", "min": 1, "max": 1}],
    ),
    (
        "Write 7 words, with no word being used more than once.",
        [{"rule": "order", "unit": "word", "rel": "distinct"}, {"rule": "words", "min": 7, "max": 7}],
    ),
    (
        "Write 5 words, each beginning with the letter that ended the previous word.",
        [{"rule": "order", "unit": "word", "rel": "chain"}, {"rule": "words", "min": 5, "max": 5}],
    ),
    (
        "Write a sentence between 20 and 40 characters long.",
        [{"rule": "chars", "min": 20, "max": 40}, {"rule": "sentences", "min": 1, "max": 1}],
    ),
    ("Answer with no fewer than 10 and no more than 20 words.", [{"rule": "words", "min": 10, "max": 20}]),
    (
        "Write one sentence with exactly two fully capitalized words.",
        [{"rule": "capital_words", "min": 2, "max": 2}, {"rule": "sentences", "min": 1, "max": 1}],
    ),
    (
        "Write two sentences using the word 'blue' exactly 3 times.",
        [{"rule": "occurs", "text": "blue", "min": 3, "max": 3}, {"rule": "sentences", "min": 2, "max": 2}],
    ),
    (
        "Give one word of exactly 7 letters that begins with 're'.",
        [
            {"rule": "at", "unit": "letter", "index": 1, "text": "r"},
            {"rule": "at", "unit": "letter", "index": 2, "text": "e"},
            {"rule": "letters", "min": 7, "max": 7},
            {"rule": "words", "min": 1, "max": 1},
        ],
    ),
    (
        "Reply with one word of 8 letters that ends in 'ness'.",
        [
            {"rule": "ends_with", "text": "ness"},
            {"rule": "letters", "min": 8, "max": 8},
            {"rule": "words", "min": 1, "max": 1},
        ],
    ),
    (
        "Write a countdown of 5 numbers starting at 9, one per line.",
        [
            {"rule": "lines", "min": 5, "max": 5},
            {"rule": "numbers", "min": 5, "max": 5},
            {"rule": "numbers", "per": "line", "min": 1, "max": 1},
            {"rule": "order", "unit": "number", "rel": "step", "arg": -1},
            {"rule": "total", "unit": "number", "agg": "first", "min": 9, "max": 9},
        ],
    ),
    (
        "Count down from 8 to 4 with one number per line.",
        [
            {"rule": "numbers", "per": "line", "min": 1, "max": 1},
            {"rule": "order", "unit": "number", "rel": "step", "arg": -1},
            {"rule": "total", "unit": "number", "agg": "first", "min": 8, "max": 8},
            {"rule": "total", "unit": "number", "agg": "last", "min": 4, "max": 4},
        ],
    ),
    (
        "Write 4 words that alternate between lowercase and uppercase, starting with a lowercase word.",
        [
            {"rule": "order", "unit": "word", "rel": "alternating_case", "arg": "lower"},
            {"rule": "words", "min": 4, "max": 4},
        ],
    ),
    (
        "Write in lowercase with no commas, and use at least 8 words.",
        [{"rule": "commas", "max": 0}, {"rule": "lowercase"}, {"rule": "words", "min": 8}],
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


def test_none_of_them_using_a_word_is_a_ban_in_both_readers() -> None:
    text = "Answer in 3 bullet points, each under 9 words, none using the word 'maybe'."
    for cons in (read_instruction(text).constraints, second_reading(text)):
        assert {"rule": "exclude", "words": ["maybe"]} in cons
        assert not any(c["rule"] == "include" for c in cons)  # it used to be read as a required word


def test_a_negation_turns_around_only_the_counts_of_its_own_part() -> None:
    # "no commas" must not make "at most 10 words" at least 11 in the second reading
    cons = second_reading("Reply in lowercase with no commas, in at most 10 words.")
    assert {"rule": "words", "max": 10} in cons and {"rule": "commas", "max": 0} in cons
    assert {"rule": "words", "min": 11} in second_reading("Do not write fewer than 11 words.")


def test_a_quoted_word_at_most_once_is_not_a_rule_on_every_word() -> None:
    text = "Say the word 'milk' no more than once, and write exactly 3 sentences."
    for cons in (read_instruction(text).constraints, second_reading(text)):
        assert {"rule": "occurs", "text": "milk", "max": 1} in cons
        assert not any(c.get("rel") == "distinct" for c in cons)


def test_only_lowercase_letters_beside_sentences_is_the_case_of_the_letters() -> None:
    cons = second_reading("Use only lowercase letters; write exactly 2 sentences.")
    assert {"rule": "lowercase"} in cons and not any(c["rule"] == "only" for c in cons)
    assert {"rule": "only", "what": "lowercase_letters"} in second_reading(
        "Answer with lowercase letters only."
    )


def test_fully_capitalized_words_are_counted_not_a_capital_initial() -> None:
    text = "Give a sentence with at most one fully capitalized word."
    for cons in (read_instruction(text).constraints, second_reading(text)):
        assert {"rule": "capital_words", "max": 1} in cons
        assert not any(c.get("test") == "capitalized" or c["rule"] == "words" for c in cons)
    assert read_instruction(text).full


def test_one_number_per_line_is_a_layout_not_a_required_number() -> None:
    for text in (
        "Count down from 6 to 2 with one number per line.",
        "Count down from 6 to 2, one number per line.",
    ):
        cons = read_instruction(text).constraints
        assert {"rule": "numbers", "per": "line", "min": 1, "max": 1} in cons, text
        assert {"rule": "numbers", "min": 1} not in cons
        good = build(cons)
        assert good.splitlines() == ["6", "5", "4", "3", "2"]
        assert not all(holds(c, "6 5 4 3 2") for c in cons)


def test_a_one_word_prefix_is_its_letters_not_a_start_word() -> None:
    text = "Give one word that has at least 8 letters and starts with 'dis'."
    cons = read_instruction(text).constraints
    assert not any(c["rule"] == "starts_with" for c in cons)  # the word 'dis' is not asked for
    assert all(holds(c, "disappear") for c in cons)
    assert not all(holds(c, "disarm") for c in cons) and not all(holds(c, "misplaced") for c in cons)
    good = build(cons)
    assert good.lower().startswith("dis") and all(holds(c, good) for c in cons)


def test_a_closing_sentence_counts_among_the_sentences_the_builder_writes() -> None:
    cons = [{"rule": "ends_with", "text": "Any questions?"}, {"rule": "sentences", "min": 1, "max": 2}]
    good = build(cons)
    assert all(holds(c, good) for c in cons), good


def test_between_two_words_joined_by_and_stays_one_clause() -> None:
    reading = read_instruction("Write 6 words that alternate between lowercase and uppercase.")
    assert reading.full and len(reading.requirements) == 1
    assert {"rule": "order", "unit": "word", "rel": "alternating_case", "arg": "lower"} in reading.constraints


def test_every_sentence_a_question_is_a_final_mark_per_sentence_in_both_readers() -> None:
    text = "Write 3 sentences. Every sentence must be a question."
    want = {"rule": "each", "unit": "sentence", "test": "ends_with", "arg": "?"}
    assert want in read_instruction(text).constraints and want in second_reading(text)
    cons = read_instruction(text).constraints
    good = build(cons)
    assert all(holds(c, good) for c in cons), good
    assert not all(holds(c, "Where are you? When will you come? I can help.") for c in cons)


def test_the_second_reading_reads_a_final_mark_and_an_unquoted_letter_count() -> None:
    assert {"rule": "ends_with", "text": "!"} in second_reading(
        "Answer in 2 sentences. End with an exclamation mark."
    )
    assert {"rule": "letter", "letter": "q", "min": 2} in second_reading("Use the letter q at least twice.")
    each = second_reading("Write 3 lines, each ending with a question mark.")
    assert {"rule": "ends_with", "text": "?"} not in each  # per line, not the answer's alone
