"""The instruction reader: classes of phrasings (comparators, number words, negations, scopes, quantifiers, JSON
with types, positions, case, language), clause coverage, and the checks that give the constraints meaning.

Fast: pure Python, no sandbox. The labelled instruction set (data/instructions_labelled.jsonl) is measured by
``rlar bench synthesis``; here a few of its dev records guard the reader against regressions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rlar.constraints.checks import check, detect_language, holds, syllables
from rlar.constraints.vocabulary import canonical, describe, from_metadata, valid_only
from rlar.synthesis.builder import build, violations
from rlar.synthesis.second_route import second_reading, write_probes
from rlar.tasks.reading import read_instruction
from tests.support.env import REPO

DATA = REPO / "data" / "instructions_labelled.jsonl"

# (instruction, exactly the constraints it states)
PHRASINGS: list[tuple[str, list[dict[str, Any]]]] = [
    # comparators before and after the number, number words, ranges
    ("Answer in 20 words or fewer.", [{"rule": "words", "max": 20}]),
    ("Your answer must be 150 words max.", [{"rule": "words", "max": 150}]),
    ("Keep it under twenty-five words.", [{"rule": "words", "max": 24}]),
    ("Write 5+ sentences.", [{"rule": "sentences", "min": 5}]),
    ("Use 3 or 4 bullet points.", [{"rule": "bullets", "min": 3, "max": 4}]),
    ("Keep it between ten and twenty lines.", [{"rule": "lines", "min": 10, "max": 20}]),
    ("Respond in about 100 words.", [{"rule": "words", "min": 80, "max": 120}]),
    ("Write a sentence or two.", [{"rule": "sentences", "min": 1, "max": 2}]),
    ("Limit your response to 50 words.", [{"rule": "words", "max": 50}]),
    ("Give a dozen bullet points.", [{"rule": "bullets", "min": 12, "max": 12}]),
    # a list form named without a count: a list (two or more), none when negated, the count of what it holds
    ("Use bullet points.", [{"rule": "bullets", "min": 2}]),
    ("Answer as a numbered list.", [{"rule": "numbered", "min": 2}]),
    ("Reply in bullet form.", [{"rule": "bullets", "min": 2}]),
    ("Do not use bullet points.", [{"rule": "bullets", "max": 0}]),
    ("List 4 fruits as numbered items.", [{"rule": "numbered", "min": 4, "max": 4}]),
    # negations turn the comparator around
    ("Do not write fewer than 50 words.", [{"rule": "words", "min": 50}]),
    ("The response must not exceed 40 words.", [{"rule": "words", "max": 40}]),
    ("Don't write more than 2 paragraphs.", [{"rule": "paragraphs", "max": 2}]),
    # scopes: per sentence / bullet / paragraph / line / word, pronouns, "each" after the unit
    (
        "Give exactly three bullet points, and make sure no bullet is longer than ten words.",
        [{"rule": "bullets", "min": 3, "max": 3}, {"rule": "words", "per": "item", "max": 10}],
    ),
    (
        "Present exactly 4 bullets; none of them may exceed 6 words.",
        [{"rule": "bullets", "min": 4, "max": 4}, {"rule": "words", "per": "item", "max": 6}],
    ),
    ("Each bullet should be under eight words.", [{"rule": "words", "per": "item", "max": 7}]),
    ("Sentences of at most 12 words.", [{"rule": "words", "per": "sentence", "max": 12}]),
    (
        "Write 2 paragraphs with 3 sentences each.",
        [
            {"rule": "paragraphs", "min": 2, "max": 2},
            {"rule": "sentences", "per": "paragraph", "min": 3, "max": 3},
        ],
    ),
    ("No word in your answer may be longer than 7 letters.", [{"rule": "letters", "per": "word", "max": 7}]),
    (
        "Each line must have exactly five syllables.",
        [{"rule": "syllables", "per": "line", "min": 5, "max": 5}],
    ),
    ("Keep each line under 40 characters.", [{"rule": "chars", "per": "line", "max": 39}]),
    # occurrences, letters, include / exclude
    ("Use the word 'blue' at least twice.", [{"rule": "occurs", "text": "blue", "min": 2}]),
    ("Mention 'Paris' no more than once.", [{"rule": "occurs", "text": "Paris", "max": 1}]),
    ("The letter 'z' should appear at least 3 times.", [{"rule": "letter", "letter": "z", "min": 3}]),
    ("Avoid the letter 'e' entirely.", [{"rule": "letter", "letter": "e", "max": 0}]),
    (
        'Never use the words "simply", "just" or "obviously".',
        [{"rule": "exclude", "words": ["simply", "just", "obviously"]}],
    ),
    ("Include the keywords river and stone.", [{"rule": "include", "words": ["river", "stone"]}]),
    # positions
    ("Never start a sentence with 'I'.", [{"rule": "not_starts_with", "text": "I", "per": "sentence"}]),
    ("Start each sentence with 'We'.", [{"rule": "starts_with", "text": "We", "per": "sentence"}]),
    ("Your first word must be 'Yes'.", [{"rule": "starts_with", "text": "Yes"}]),
    ("Conclude your answer with a question.", [{"rule": "ends_with", "text": "?"}]),
    ("End every sentence with an exclamation mark.", [{"rule": "ends_with", "text": "!", "per": "sentence"}]),
    # case, punctuation, digits
    ("Answer in ALL CAPS.", [{"rule": "uppercase"}]),
    ("Please reply without capital letters.", [{"rule": "lowercase"}]),
    ("Include at least 4 words in all caps.", [{"rule": "capital_words", "min": 4}]),
    ("Capitalize the first letter of every word.", [{"rule": "title_case"}]),
    ("Refrain from using commas.", [{"rule": "commas", "max": 0}]),
    (
        "Use at least 3 commas and no more than 2 exclamation marks.",
        [{"rule": "commas", "min": 3}, {"rule": "exclamations", "max": 2}],
    ),
    ("Include at least one digit in your reply.", [{"rule": "numbers", "min": 1}]),
    # structure and language
    (
        "Return a JSON object with keys 'name' (a string) and 'age' (an integer).",
        [
            {"rule": "json_keys", "keys": ["name", "age"], "types": {"name": "string", "age": "integer"}},
            {"rule": "json"},
        ],
    ),
    (
        "Give me a JSON object with precisely two keys: 'lat' (a number) and 'lon' (a number).",
        [
            {
                "rule": "json_keys",
                "keys": ["lat", "lon"],
                "types": {"lat": "number", "lon": "number"},
                "exact": True,
            },
            {"rule": "json"},
        ],
    ),
    (
        "Reply with one of the following: 'yes', 'no', or 'maybe'.",
        [{"rule": "one_of", "options": ["yes", "no", "maybe"]}],
    ),
    ("Reply with a number only.", [{"rule": "only", "what": "number"}]),
    ("Wrap your entire response in double quotation marks.", [{"rule": "quoted"}]),
    ("Finish your response with a postscript starting with P.S.", [{"rule": "postscript", "text": "P.S."}]),
    (
        "Separate the paragraphs with the markdown divider ***.",
        [{"rule": "paragraphs", "min": 1, "separator": "***"}],
    ),
    ("Respond in German.", [{"rule": "language", "lang": "de"}]),
    ("Follow the record's format rules (sentence or word counts, lowercase, JSON keys, ...).", []),
    ("Translate the sentence into natural German.", [{"rule": "language", "lang": "de"}]),
    (
        "Reply with three capital letters and nothing else.",
        [{"rule": "capitals", "min": 3, "max": 3}, {"rule": "only", "what": "capitals"}],
    ),
]


@pytest.mark.parametrize(("text", "expected"), PHRASINGS, ids=[t for t, _ in PHRASINGS])
def test_the_reader_reads_each_class_of_phrasing(text: str, expected: list[dict[str, Any]]) -> None:
    reading = read_instruction(text)
    assert reading.constraints == canonical(expected)


@pytest.mark.parametrize(
    ("text", "unread"),
    [
        ("Write a haiku about autumn.", "haiku"),
        ("Make the answer short.", "short"),
        ("Translate the sentence into Swahili.", "swahili"),
        ("Give two short bullet points about the moon.", "vague: short"),
        ("Explain photosynthesis in a friendly tone.", "friendly"),
        ("First repeat the request word for word without change, then give your answer.", "word"),
    ],
)
def test_what_the_reader_does_not_understand_is_listed_not_dropped(text: str, unread: str) -> None:
    reading = read_instruction(text)
    assert not reading.full and reading.unchecked
    assert any(unread in " ".join(c.unread) for c in reading.unchecked), reading.to_dict()


def test_content_is_a_requirement_a_rule_cannot_check_and_context_is_not_one() -> None:
    reading = read_instruction(
        "I am planning a trip. Write a packing list for Japan. Use exactly 5 bullet points."
    )
    assert [c.status for c in reading.clauses] == ["context", "unchecked", "checked"]
    assert reading.constraints == [{"rule": "bullets", "min": 5, "max": 5}]
    assert "content" in reading.unchecked[0].note and reading.coverage == 0.5 and not reading.full
    full = read_instruction("Reply with exactly 2 sentences. Do not use the word 'very'.")
    assert full.full and full.coverage == 1.0 and not full.unchecked


def test_quoted_text_is_never_read_as_an_instruction() -> None:
    reading = read_instruction("End with the phrase 'use at most 3 words and no commas'.")
    assert reading.constraints == [{"rule": "ends_with", "text": "use at most 3 words and no commas"}]


def test_checks_give_the_vocabulary_its_meaning() -> None:
    assert holds({"rule": "words", "per": "item", "max": 3}, "- one two three\n- four five")
    assert check({"rule": "words", "per": "item", "max": 3}, "- one two three four\n- five") == 0.5
    assert holds({"rule": "words", "max": 3}, "1. one\n2. two\n3. three"), "list markers are not words"
    assert holds({"rule": "not_starts_with", "text": "I", "per": "sentence"}, "Ice melts. It rains.")
    assert not holds({"rule": "not_starts_with", "text": "I", "per": "sentence"}, "It rains. I stay.")
    types = {
        "rule": "json_keys",
        "keys": ["a", "b"],
        "types": {"a": "integer", "b": "list_of_strings"},
        "exact": True,
    }
    assert holds(types, '{"a": 1, "b": ["x"]}') and not holds(types, '{"a": true, "b": ["x"]}')
    assert not holds(types, '{"a": 1, "b": ["x"], "c": 0}') and holds(
        types, '```json\n{"a": 1, "b": []}\n```'
    )
    assert holds({"rule": "one_of", "options": ["yes", "no"]}, " Yes. ") and not holds(
        {"rule": "one_of", "options": ["yes"]}, "yes sir"
    )
    assert [syllables(w) for w in ("cat", "river", "table", "fire", "beautiful")] == [1, 2, 2, 1, 3]
    assert detect_language("Ich habe heute leider keine Zeit, aber morgen gern.") == "de"
    assert detect_language("Je suis content de te voir aujourd'hui.") == "fr"
    assert detect_language("Hi.") is None, "too short to tell"


def test_metadata_rules_in_the_old_spellings_are_rewritten_and_bad_ones_dropped() -> None:
    meta = {"format_rules": [{"rule": "item_words", "max": 9}, {"rule": "no_commas"}, {"rule": "bogus"}]}
    assert from_metadata(meta) == [{"rule": "commas", "max": 0}, {"rule": "words", "max": 9, "per": "item"}]
    assert valid_only([{"rule": "words", "max": 3}, {"rule": "words", "colour": "red"}, "nope"]) == [
        {"rule": "words", "max": 3}
    ]
    assert describe({"rule": "words", "per": "item", "max": 10}) == "each item: at most 10 words"
    with pytest.raises(ValueError, match="unknown constraint rule"):
        canonical([{"rule": "nonsense"}])


@pytest.mark.parametrize(("text", "_"), PHRASINGS[:30], ids=[t for t, _ in PHRASINGS[:30]])
def test_built_probes_hold_and_violations_break_their_target(text: str, _: Any) -> None:
    cons = read_instruction(text).constraints
    good = build(cons, "Write about the sea")
    assert all(holds(c, good) for c in cons), (good, cons)
    broken: set[str] = set()
    for why, bad in violations(cons, "Write about the sea"):
        target = why.split(":")[0]
        hit = [c for c in cons if target == c["rule"] + (f"/{c['per']}" if c.get("per") else "")]
        assert hit, why
        if not all(holds(c, bad) for c in hit):
            broken.add(target)
    assert broken == {c["rule"] + (f"/{c['per']}" if c.get("per") else "") for c in cons}, "one breaks each"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Give numbered steps for resetting a password.", [{"rule": "numbered", "min": 2}]),
        ("What should I pack? Use bullet points.", [{"rule": "bullets", "min": 2}]),
        ("Explain tides. Do not use bullet points.", [{"rule": "bullets", "max": 0}]),
        ("Each bullet should be under eight words.", [{"rule": "words", "per": "item", "max": 7}]),
        ("Write a packing list for Japan.", []),
    ],
)
def test_both_readers_read_a_list_form_without_a_count(text: str, expected: list[dict[str, Any]]) -> None:
    assert second_reading(text) == canonical(expected)
    assert read_instruction(text).constraints == canonical(expected)
    if expected:  # and probes can be built for it, whichever way it goes
        good = build(expected, text)
        assert all(holds(c, good) for c in expected), good


def test_the_second_route_reads_independently_and_disagrees_with_a_misreading() -> None:
    text = "Answer in 20 words or fewer."
    assert second_reading(text) == [{"rule": "words", "max": 20}]
    probes = write_probes(text)
    misread = [{"rule": "words", "min": 20, "max": 20}]  # the bug issue 13 found
    goods = [p["response"] for p in probes if p["label"] == "good"]
    assert goods and not all(holds(c, goods[0]) for c in misread), "a wrong verifier fails the good probe"
    assert write_probes("Make it sound friendly.") == [], "silent where it reads nothing"


def test_the_dev_split_of_the_labelled_set_is_read_as_labelled() -> None:
    """Regression guard on the dev split (the held-out split is measured by `rlar bench synthesis` only)."""
    right = total = 0
    for line in DATA.read_text().splitlines():
        rec = json.loads(line)
        if rec["split"] != "dev":
            continue
        reading = read_instruction(rec["instruction"])
        assert reading.full == rec["checkable"], rec["instruction"]
        if reading.full:
            for a in rec["answers"]:
                total += 1
                right += all(holds(c, a["text"]) for c in reading.constraints) == a["ok"]
    assert total >= 100 and right == total


# per-unit letter tests and per-word letter bounds, read by both readers
UNIT_LETTER_PHRASINGS: list[tuple[str, list[dict[str, Any]]]] = [
    (
        "Write 5 words, each of which ends with the letter s.",
        [
            {"rule": "each", "unit": "word", "test": "ends_with", "arg": "s"},
            {"rule": "words", "min": 5, "max": 5},
        ],
    ),
    (
        "List 4 words that contain the letter r.",
        [
            {"rule": "each", "unit": "word", "test": "contains", "arg": "r"},
            {"rule": "words", "min": 4, "max": 4},
        ],
    ),
    (
        "Give three lines, each one beginning with a capital letter.",
        [{"rule": "each", "unit": "line", "test": "starts_upper"}, {"rule": "lines", "min": 3, "max": 3}],
    ),
    (
        "Give 3 perfect squares, comma separated.",
        [{"rule": "each", "unit": "number", "test": "square"}, {"rule": "numbers", "min": 3, "max": 3}],
    ),
    (
        "Give 4 prime numbers, each on its own line.",
        [
            {"rule": "each", "unit": "number", "test": "prime"},
            {"rule": "lines", "min": 4, "max": 4},  # the layout is checked, not dropped
            {"rule": "numbers", "min": 4, "max": 4},
            {"rule": "numbers", "per": "line", "min": 1, "max": 1},
        ],
    ),
    (
        "Write 3 words, each exactly 6 letters long.",
        [{"rule": "letters", "per": "word", "min": 6, "max": 6}, {"rule": "words", "min": 3, "max": 3}],
    ),
    (
        "Give 5 words of no more than 4 letters each.",
        [{"rule": "letters", "per": "word", "max": 4}, {"rule": "words", "min": 5, "max": 5}],
    ),
    (
        "Give 4 multiples of 7, separated by commas.",
        [
            {"rule": "each", "unit": "number", "test": "divisible", "arg": 7},
            {"rule": "numbers", "min": 4, "max": 4},
        ],
    ),
    (
        "Write four words with 5 letters or fewer each.",
        [{"rule": "letters", "per": "word", "max": 5}, {"rule": "words", "min": 4, "max": 4}],
    ),
]


@pytest.mark.parametrize(("text", "expected"), UNIT_LETTER_PHRASINGS)
def test_both_readers_read_letter_tests_on_every_unit_and_letter_bounds_per_word(
    text: str, expected: list[dict[str, Any]]
) -> None:
    reading = read_instruction(text)
    assert reading.full, [c.to_dict() for c in reading.clauses]
    assert canonical(reading.constraints) == canonical(expected)
    assert second_reading(text) == canonical(expected)


@pytest.mark.parametrize(
    "text",
    [
        "Write 4 words, none of which contain the letter a.",
        "Write one sentence of 8 words that does not contain the letter a.",
    ],
)
def test_a_negated_letter_is_never_read_as_a_letter_every_unit_must_contain(text: str) -> None:
    for c in [*read_instruction(text).constraints, *second_reading(text)]:
        assert c.get("test") != "contains", c


def test_starting_with_a_capital_letter_is_not_the_letter_a() -> None:
    text = "Write 3 lines, each starting with a capital letter."
    for c in [*read_instruction(text).constraints, *second_reading(text)]:
        assert c.get("arg") != "a", c


def test_the_new_unit_tests_judge_units() -> None:
    from rlar.constraints.checks import unit_test

    assert unit_test("contains", "z", "pizza") and not unit_test("contains", "z", "pasta")
    assert unit_test("starts_upper", None, "- Morning light") and not unit_test("starts_upper", None, "birds")
    assert unit_test("square", None, "49") and not unit_test("square", None, "50")
    assert unit_test("ends_with", "y", "happy,") and not unit_test(
        "ends_with", "y", "yes,"
    )  # a letter: the last


def test_the_number_words_are_one_table_that_both_readers_read_alike() -> None:
    from rlar.number_words import NUMBER_WORDS
    from rlar.tasks.phrasings import numbers

    for word, n in NUMBER_WORDS.items():
        assert numbers(f"write {word} words") == f"write {n} words"
        if n:  # "zero words" is no count the second reading takes
            want = {"rule": "words", "min": n, "max": n}
            assert read_instruction(f"Write {word} words.").constraints == [want], word
            assert second_reading(f"Write {word} words.") == [want], word


# Clause checks held to what the instruction says: each has an answer that keeps it and a near miss a lenient
# check would pass.
@pytest.mark.parametrize(
    ("c", "good", "near_miss"),
    [
        # postscript: the marker as written (not a variant) ...
        (
            {"rule": "postscript", "text": "P.S."},
            "We met at six.\n\nP.S. The cake was great.",
            "We met at six.\n\nPS: The cake was great.",
        ),
        (
            {"rule": "postscript", "text": "P.S."},
            "We met at six.\nP.S. Thanks.",
            "We met at six.\np.s. Thanks.",
        ),
        ({"rule": "postscript", "text": "P.P.S"}, "We met.\nP.P.S Thanks.", "We met.\nP.S. Thanks."),
        ({"rule": "postscript", "text": "P.S."}, "We met.\nP.S. Thanks.", "We met.\nP.P.S. Thanks."),
        # ... at the end: after the body, and no paragraph after it
        (
            {"rule": "postscript", "text": "P.S."},
            "Lunch is at one.\n\nP.S. Bring a hat.",
            "P.S. Bring a hat.\n\nLunch is at one.",
        ),
        ({"rule": "postscript", "text": "P.S."}, "Lunch is at one.\nP.S. Bring a hat.", "P.S. Bring a hat."),
        (
            {"rule": "postscript", "text": "P.S."},
            "Lunch is at one.\nP.S. Bring a hat.",
            "Lunch is at one. P.S. bring a hat.",
        ),
        # no marker named: any postscript mark, still at the end
        (
            {"rule": "postscript"},
            "Lunch is at one.\n\nPS: bring a hat.",
            "PS: bring a hat.\n\nLunch is at one.",
        ),
        # sections: a marker that was given keeps its case; numbered 1..N in order
        (
            {"rule": "sections", "marker": "PART", "min": 2, "max": 2},
            "PART 1\nSoup.\nPART 2\nBread.",
            "Part 1\nSoup.\nPart 2\nBread.",
        ),
        (
            {"rule": "sections", "marker": "PART", "min": 2, "max": 2},
            "PART 1\nSoup.\nPART 2\nBread.",
            "PART 1\nSoup.\nPART 1\nBread.",
        ),
        (
            {"rule": "sections", "marker": "PART", "min": 2, "max": 2},
            "PART I\nSoup.\nPART II\nBread.",
            "PART 2\nSoup.\nPART 1\nBread.",
        ),
        (
            {"rule": "sections", "min": 2, "max": 2},
            "## section 1\nSoup.\n## section 2\nBread.",
            "Section 2\nSoup.\nSection 3\nBread.",
        ),
        # numbered items: 1..N in order, not N lines that each carry a number
        (
            {"rule": "numbered", "min": 3, "max": 3},
            "1. Oats\n2. Milk\n3. Honey",
            "1. Oats\n1. Milk\n1. Honey",
        ),
        (
            {"rule": "numbered", "min": 3, "max": 3},
            "1) Oats\n2) Milk\n3) Honey",
            "2. Oats\n3. Milk\n4. Honey",
        ),
        # a start or an end quoted in capitals is that literal; one in lower case is a word in any case
        ({"rule": "starts_with", "text": "NOTE:"}, "NOTE: the shop is shut.", "Note: the shop is shut."),
        (
            {"rule": "ends_with", "text": "OVER AND OUT"},
            "We are done here. OVER AND OUT.",
            "We are done here. Over and out.",
        ),
        ({"rule": "starts_with", "text": "sure"}, "Sure, here it is.", "Surely, here it is."),
    ],
)
def test_a_fixed_check_keeps_what_was_asked_and_fails_its_near_miss(
    c: dict[str, Any], good: str, near_miss: str
) -> None:
    assert holds(c, good), (c, good)
    assert not holds(c, near_miss), (c, near_miss)


def test_an_option_in_capitals_is_that_literal_and_one_in_lower_case_any_case() -> None:
    caps = {"rule": "one_of", "options": ["AGREE", "DISAGREE"]}
    assert holds(caps, "AGREE.") and not holds(caps, "Agree.")
    assert holds({"rule": "one_of", "options": ["agree", "disagree"]}, "Agree.")


def test_a_ban_on_a_start_in_capitals_still_matches_any_case() -> None:
    ban = {"rule": "not_starts_with", "text": "NOTE"}
    assert holds(ban, "The shop is shut.") and not holds(ban, "Note the shop is shut.")


def test_a_bare_postscript_names_no_marker_in_either_reading() -> None:
    text = "Write two sentences and add a postscript."
    main = [c for c in read_instruction(text).constraints if c["rule"] == "postscript"]
    second = [c for c in second_reading(text) if c["rule"] == "postscript"]
    assert main == second == [{"rule": "postscript"}]
    named = [
        c
        for c in read_instruction("Close with a P.S. for the reader.").constraints
        if c["rule"] == "postscript"
    ]
    assert named == [{"rule": "postscript", "text": "P.S."}]


def test_an_order_whose_requirement_words_are_not_read_is_unread_not_context() -> None:
    reading = read_instruction("Label every part with a short heading.")
    assert [c.status for c in reading.clauses] == ["unchecked"], reading.clauses
    # a marker in capitals with its number is read: sections marked PIECE 1, PIECE 2, ...
    marked = read_instruction("Label every part with PIECE N, where N counts up from one.")
    assert marked.full and marked.constraints == [{"rule": "sections", "min": 1, "marker": "PIECE"}]
    described = read_instruction("Strings of letters in a format that each prompt states.")
    assert [c.status for c in described.clauses] == ["context"]
