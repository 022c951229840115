"""Answer forms (wrappers, separators, lists on one line, JSON arrays, section markers, one unit's start or end,
closing hashtags, a repeated request, unquoted options), letter classes and number properties per unit, and the
IFEval / COLLIE wordings — read by both readers apart, checked strictly, and built into passing responses and near
misses."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from rlar.constraints.checks import check, holds
from rlar.constraints.vocabulary import canonical
from rlar.synthesis.builder import build, violations
from rlar.synthesis.second_route import constraint_key, second_reading
from rlar.tasks.reading import read_instruction
from tests.support.env import REPO

W = lambda n: {"rule": "words", "min": n, "max": n}  # noqa: E731
S = lambda n: {"rule": "sentences", "min": n, "max": n}  # noqa: E731

CASES: list[tuple[str, list[dict[str, Any]]]] = [
    # wrappers
    (
        "Enclose the whole reply in <result></result> tags.",
        [{"rule": "wrap", "open": "<result>", "close": "</result>"}],
    ),
    (
        "Surround your output with <out> and </out> tags; use exactly 4 words.",
        [{"rule": "wrap", "open": "<out>", "close": "</out>"}, W(4)],
    ),
    (
        "Put everything between <reply> and </reply>, and write two sentences in between.",
        [S(2), {"rule": "wrap", "open": "<reply>", "close": "</reply>"}],
    ),
    # postscripts and closing lines
    ("Add a postscript at the end that begins with 'P.P.S.'", [{"rule": "postscript", "text": "P.P.S."}]),
    (
        "Write two sentences and then a postscript starting with P.S.",
        [{"rule": "postscript", "text": "P.S."}, {**S(2), "body": True}],
    ),
    (
        "Close your message with a line that starts with 'NB:'",
        [{"rule": "nth", "unit": "line", "index": -1, "side": "start", "text": "NB:"}],
    ),
    # placeholders, hashtags, punctuation marks
    (
        "Write one sentence that contains at least two placeholders such as [city].",
        [{"rule": "placeholders", "min": 2}, S(1)],
    ),
    (
        "Finish the reply with three hashtags and nothing after them.",
        [{"rule": "trailing", "what": "hashtags", "min": 3, "max": 3}],
    ),
    ("Include exactly three semicolons.", [{"rule": "semicolons", "min": 3, "max": 3}]),
    ("Do not use any semicolons.", [{"rule": "semicolons", "max": 0}]),
    ("Use exactly one question mark in your reply.", [{"rule": "questions", "min": 1, "max": 1}]),
    # letter classes
    (
        "List 3 words that each start with a vowel.",
        [{"rule": "each", "unit": "word", "test": "starts_in", "arg": "aeiou"}, W(3)],
    ),
    (
        "Give five words, all beginning with a consonant.",
        [{"rule": "each", "unit": "word", "test": "starts_in", "arg": "bcdfghjklmnpqrstvwxyz"}, W(5)],
    ),
    (
        "Give 3 words, each with a double letter.",
        [{"rule": "each", "unit": "word", "test": "double_letter"}, W(3)],
    ),
    (
        "Give 5 words, no two of them beginning with the same letter.",
        [{"rule": "order", "unit": "word", "rel": "distinct_initials"}, W(5)],
    ),
    # numbers
    (
        "Write 4 numbers, each one triple the previous one, starting at 2.",
        [
            {"rule": "numbers", "min": 4, "max": 4},
            {"rule": "order", "unit": "number", "rel": "ratio", "arg": 3},
            {"rule": "total", "unit": "number", "agg": "first", "min": 2, "max": 2},
        ],
    ),
    (
        "Give 3 integers between 20 and 30, separated by commas.",
        [
            {"rule": "delimited", "text": ",", "unit": "number"},
            {"rule": "each", "unit": "number", "test": "integer"},
            {"rule": "each", "unit": "number", "test": "range", "arg": [20, 30]},
            {"rule": "numbers", "min": 3, "max": 3},
        ],
    ),
    (
        "Write four numbers greater than 50, one per line.",
        [
            {"rule": "each", "unit": "number", "test": "range", "arg": [51, None]},
            {"rule": "lines", "min": 4, "max": 4},
            {"rule": "numbers", "min": 4, "max": 4},
            {"rule": "numbers", "per": "line", "min": 1, "max": 1},
        ],
    ),
    # JSON arrays
    (
        "Reply with a JSON array of 4 integers and nothing else.",
        [{"rule": "json_array", "min": 4, "max": 4, "type": "integer"}],
    ),
    (
        "Give a JSON array whose items are all numbers; it should have 3 items.",
        [{"rule": "json_array", "min": 3, "max": 3, "type": "number"}],
    ),
    # section markers and headings
    (
        "Split your reply into 3 sections and start each with 'Step 1:', 'Step 2:' and 'Step 3:' respectively.",
        [{"rule": "sections", "min": 3, "max": 3, "marker": "Step", "suffix": ":"}],
    ),
    ("Use exactly 2 Markdown headings.", [{"rule": "headings", "min": 2, "max": 2}]),
    (
        "Begin each section with PART N, where N is the part number. Write 2 sections.",
        [{"rule": "sections", "min": 2, "max": 2, "marker": "PART"}],
    ),
    # separators
    (
        "Write two different answers separated by a line of five equals signs: =====.",
        [{"rule": "paragraphs", "min": 2, "max": 2, "separator": "=====", "distinct": True}],
    ),
    (
        "List 4 options on a single line, separated by slashes.",
        [
            {"rule": "delimited", "text": "/", "unit": "item", "min": 4, "max": 4},
            {"rule": "lines", "min": 1, "max": 1},
        ],
    ),
    # options
    ("Answer with either Yes or No.", [{"rule": "one_of", "options": ["Yes", "No"]}]),
    (
        "Pick one of Red, Green or Blue and reply with that word only.",
        [{"rule": "one_of", "options": ["Red", "Green", "Blue"]}],
    ),
    # one unit's start or end
    (
        "Write 3 paragraphs; the second paragraph must start with the word 'Meanwhile'.",
        [
            {"rule": "nth", "unit": "paragraph", "index": 2, "side": "start", "text": "Meanwhile"},
            {"rule": "paragraphs", "min": 3, "max": 3},
        ],
    ),
    (
        "Write 2 sentences that end in 'sky' and 'sea' respectively.",
        [
            {"rule": "nth", "unit": "sentence", "index": 1, "side": "end", "text": "sky"},
            {"rule": "nth", "unit": "sentence", "index": 2, "side": "end", "text": "sea"},
            S(2),
        ],
    ),
    # IFEval templates
    (
        "In your response, words with all capital letters should appear at least 3 times.",
        [{"rule": "capital_words", "min": 3}],
    ),
    (
        "Give two different responses. Responses and only responses should be separated by 6 asterisk symbols: ******.",
        [{"rule": "paragraphs", "min": 2, "max": 2, "separator": "******", "distinct": True}],
    ),
    (
        "There should be 2 paragraphs. Paragraphs and only paragraphs are separated with each other by two new "
        "lines as if it was '\\n\\n' in python. Paragraph 2 must start with word However.",
        [
            {"rule": "nth", "unit": "paragraph", "index": 2, "side": "start", "text": "However"},
            {"rule": "paragraphs", "min": 2, "max": 2},
        ],
    ),
    (
        "Answer with one of the following options: ('My answer is yes.', 'My answer is no.', 'My answer is maybe.')",
        [{"rule": "one_of", "options": ["My answer is yes.", "My answer is no.", "My answer is maybe."]}],
    ),
    (
        "Your response should contain 3 paragraphs. You separate paragraphs using the markdown divider: * * *",
        [{"rule": "paragraphs", "min": 3, "max": 3, "separator": "* * *"}],
    ),
    # COLLIE
    (
        "Generate a word with 7 letters, where letter 1 is 's' and letter 3 is 'r'.",
        [
            {"rule": "at", "unit": "letter", "index": 1, "text": "s"},
            {"rule": "at", "unit": "letter", "index": 3, "text": "r"},
            {"rule": "letters", "min": 7, "max": 7},
            W(1),
        ],
    ),
    (
        "Generate a sentence with 8 words, where word 2 is 'quick' and word 5 is 'over'.",
        [
            {"rule": "at", "unit": "word", "index": 2, "text": "quick"},
            {"rule": "at", "unit": "word", "index": 5, "text": "over"},
            S(1),
            W(8),
        ],
    ),
    (
        "Please generate a sentence with exactly 40 characters.",
        [{"rule": "chars", "min": 40, "max": 40}, S(1)],
    ),
    # IFEval types in other wordings (misreadings both readers once shared are among them: "a single comma" read as
    # exactly one comma, "two line breaks" as two lines)
    ("Do not include a single comma in your reply.", [{"rule": "commas", "max": 0}]),
    (
        "Write 3 paragraphs separated by two line breaks; paragraph 3 must begin with the word 'Overall'.",
        [
            {"rule": "nth", "unit": "paragraph", "index": 3, "side": "start", "text": "Overall"},
            {"rule": "paragraphs", "min": 3, "max": 3},
        ],
    ),
    (
        "Your response must contain at least 2 highlighted sections, such as *important*.",
        [{"rule": "highlights", "min": 2}],
    ),
    ("Emphasize at least 2 parts with markdown italics, like *this*.", [{"rule": "highlights", "min": 2}]),
    (
        "Respond with 'Yes', 'No', or 'Not sure' and nothing else.",
        [{"rule": "one_of", "options": ["Yes", "No", "Not sure"]}],
    ),
    ("Use fewer than 3 words written entirely in capitals.", [{"rule": "capital_words", "max": 2}]),
    (
        "Divide the response into 4 sections and mark each with 'Part N', where N is its number.",
        [{"rule": "sections", "min": 4, "max": 4, "marker": "Part"}],
    ),
    ("End with a postscript marked 'PS:'.", [{"rule": "postscript", "text": "PS:"}]),
    ("Your last words must be 'Thanks for reading.'", [{"rule": "ends_with", "text": "Thanks for reading."}]),
    (
        "Write five lines, and start every line with a dash.",
        [{"rule": "lines", "min": 5, "max": 5}, {"rule": "starts_with", "text": "-", "per": "line"}],
    ),
    (
        "Start each of your 3 paragraphs with the word 'First', 'Second' and 'Third' respectively.",
        [
            {"rule": "nth", "unit": "paragraph", "index": 1, "side": "start", "text": "First"},
            {"rule": "nth", "unit": "paragraph", "index": 2, "side": "start", "text": "Second"},
            {"rule": "nth", "unit": "paragraph", "index": 3, "side": "start", "text": "Third"},
            {"rule": "paragraphs", "min": 3, "max": 3},
        ],
    ),
    (
        "Write exactly two paragraphs, and the first one must end with the word 'night'.",
        [
            {"rule": "nth", "unit": "paragraph", "index": 1, "side": "end", "text": "night"},
            {"rule": "paragraphs", "min": 2, "max": 2},
        ],
    ),
    (
        "Your answer must start with 'Dear Sir' and end with 'Regards'.",
        [{"rule": "ends_with", "text": "Regards"}, {"rule": "starts_with", "text": "Dear Sir"}],
    ),
    (
        "Use the word 'because' at least once and at most twice.",
        [{"rule": "occurs", "text": "because", "min": 1, "max": 2}],
    ),
    ("Wrap the entire response in square brackets.", [{"rule": "wrap", "open": "[", "close": "]"}]),
    (
        "Separate your three paragraphs with the marker '---'.",
        [{"rule": "paragraphs", "min": 3, "max": 3, "separator": "---"}],
    ),
    ("Do not mention the word 'sun' or the word 'moon'.", [{"rule": "exclude", "words": ["sun", "moon"]}]),
    (
        "Give me three numbers that are all odd, separated by commas.",
        [
            {"rule": "delimited", "text": ",", "unit": "number"},
            {"rule": "each", "unit": "number", "test": "odd"},
            {"rule": "numbers", "min": 3, "max": 3},
        ],
    ),
    (
        "Write 5 words in which each word is longer than the previous one.",
        [{"rule": "order", "unit": "word", "rel": "longer"}, W(5)],
    ),
    (
        "Write a sentence in which the 5th word is 'blue' and no word has more than 6 letters.",
        [
            {"rule": "at", "unit": "word", "index": 5, "text": "blue"},
            {"rule": "letters", "per": "word", "max": 6},
            S(1),
        ],
    ),
    # the kinds in more wordings
    (
        "Make a word ladder of 4 words, each differing from the one before by exactly one letter.",
        [{"rule": "order", "unit": "word", "rel": "one_letter"}, W(4)],
    ),
    (
        "Give a palindrome word of 7 letters.",
        [
            {"rule": "each", "unit": "answer", "test": "palindrome"},
            {"rule": "letters", "min": 7, "max": 7},
            W(1),
        ],
    ),
    (
        "Compose an acrostic of 3 lines spelling CAT, with every line under 20 characters.",
        [
            {"rule": "chars", "per": "line", "max": 19},
            {"rule": "lines", "min": 3, "max": 3},
            {"rule": "spell", "unit": "line", "text": "cat"},
        ],
    ),
    (
        "Write 2 paragraphs separated by two line breaks, and the second one must start with the word 'Still'.",
        [
            {"rule": "nth", "unit": "paragraph", "index": 2, "side": "start", "text": "Still"},
            {"rule": "paragraphs", "min": 2, "max": 2},
        ],
    ),
    (
        "Add no fewer than two hashtags at the end of the text.",
        [{"rule": "trailing", "what": "hashtags", "min": 2}],
    ),
    ("Use between 2 and 4 exclamation marks.", [{"rule": "exclamations", "min": 2, "max": 4}]),
    # more wordings (the train prompts t25e-*)
    (
        "Compose a 4-word sentence in which each word contains a pair of identical adjacent letters.",
        [{"rule": "each", "unit": "word", "test": "double_letter"}, S(1), W(4)],
    ),
    (
        "Write 6 words whose first letters are all different.",
        [{"rule": "order", "unit": "word", "rel": "distinct_initials"}, W(6)],
    ),
    (
        "Put five numbers on separate lines so that every number equals two times the previous number.",
        [
            {"rule": "lines", "min": 5, "max": 5},
            {"rule": "numbers", "min": 5, "max": 5},
            {"rule": "numbers", "per": "line", "min": 1, "max": 1},
            {"rule": "order", "unit": "number", "rel": "ratio", "arg": 2},
        ],
    ),
    (
        "Using commas between them, list three integers that lie between 20 and 30.",
        [
            {"rule": "delimited", "text": ",", "unit": "number"},
            {"rule": "each", "unit": "number", "test": "integer"},
            {"rule": "each", "unit": "number", "test": "range", "arg": [20, 30]},
            {"rule": "numbers", "min": 3, "max": 3},
        ],
    ),
    (
        "Compose two stanzas, 3 lines apiece, and separate the stanzas with a line containing only ---.",
        [
            {"rule": "lines", "per": "paragraph", "min": 3, "max": 3, "separator": "---"},
            {"rule": "paragraphs", "min": 2, "max": 2, "separator": "---"},
        ],
    ),
    (
        "Your reply must end with exactly three hashtags, with nothing after the last one.",
        [{"rule": "trailing", "what": "hashtags", "min": 3, "max": 3}],
    ),
    (
        "Write one sentence, then add a postscript that starts with P.P.S at the end.",
        [{"rule": "postscript", "text": "P.P.S"}, {**S(1), "body": True}],
    ),
    (
        "Give me 4 words that all finish with a vowel.",
        [{"rule": "each", "unit": "word", "test": "ends_in", "arg": "aeiou"}, W(4)],
    ),
    (
        "Write an acrostic of 4 lines whose first letters spell RAIN, each line at most 25 characters long.",
        [
            {"rule": "chars", "per": "line", "max": 25},
            {"rule": "lines", "min": 4, "max": 4},
            {"rule": "spell", "unit": "line", "text": "rain"},
        ],
    ),
    (
        "Generate a paragraph with exactly 3 sentences, each with between 5 and 10 words.",
        [
            {"rule": "paragraphs", "min": 1, "max": 1},
            S(3),
            {"rule": "words", "per": "sentence", "min": 5, "max": 10},
        ],
    ),
]


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[t[:60] for t, _ in CASES])
def test_the_main_reader_reads_each_class_whole(text: str, expected: list[dict[str, Any]]) -> None:
    reading = read_instruction(text)
    assert reading.full, [c.to_dict() for c in reading.clauses]
    assert reading.constraints == canonical(expected)


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[t[:60] for t, _ in CASES])
def test_the_second_reading_reads_the_same_rules_apart(text: str, expected: list[dict[str, Any]]) -> None:
    assert {constraint_key(c) for c in second_reading(text)} == {
        constraint_key(c) for c in canonical(expected)
    }


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[t[:60] for t, _ in CASES])
def test_the_builder_writes_a_passing_response_and_near_misses(
    text: str, expected: list[dict[str, Any]]
) -> None:
    cons = canonical(expected)
    good = build(cons)
    assert all(holds(c, good) for c in cons), (good, [c for c in cons if not holds(c, good)])
    bad = [t for _, t in violations(cons)]
    assert bad and any(not all(holds(c, t) for c in cons) for t in bad)


@pytest.mark.parametrize(
    "text",
    [
        "Put two hashtags in the middle of the answer.",  # where "in the middle" is: no rule reads it
        "Put a smiley at the end of the text.",  # "at the end" is a requirement word, not context
        "Write a social media post of at most 20 words with at least 2 hashtags.",  # what a post is: a judge
        "Do not wrap your answer in <x> tags.",  # a negated wrapper is not read the other way round
        "The second paragraph must not start with the word 'However'.",
        "Write 3 words, each with a double letter that is not a vowel.",
        "Give the numbers from 1 to 5 in any order you like.",  # a sequence, not a range; "any order" unread
    ],
)
def test_what_a_rule_cannot_check_stays_unread(text: str) -> None:
    assert not read_instruction(text).full


def test_the_numbers_from_a_to_b_are_a_sequence_and_a_count_from_a_to_b_a_range() -> None:
    seq = read_instruction("Write the numbers from 3 to 6, one per line.").constraints
    assert not any(c.get("test") == "range" for c in seq)
    rng = read_instruction("Write 3 numbers from 3 to 60, one per line.").constraints
    assert {"rule": "each", "unit": "number", "test": "range", "arg": [3, 60]} in rng


# -- the checks: a passing answer and a near miss per check ----------------------------------------------------
NEAR: list[tuple[dict[str, Any], str, str]] = [
    (
        {"rule": "wrap", "open": "<summary>", "close": "</summary>"},
        "<summary>Rain fell.</summary>",
        "<Summary>Rain fell.</Summary>",
    ),
    (
        {"rule": "wrap", "open": "<note>", "close": "</note>"},
        "<note>Buy milk</note>",
        "<note>Buy milk</note>\nThanks!",
    ),
    ({"rule": "wrap", "open": "<a>", "close": "</a>"}, "<a>one</a>", "<a>one</a><a>two</a>"),
    (
        {"rule": "nth", "unit": "paragraph", "index": 2, "side": "start", "text": "However"},
        "A b.\n\nHowever, c.",
        "A b.\n\nHow c.",
    ),
    (
        {"rule": "nth", "unit": "line", "index": -1, "side": "start", "text": "P.P.S"},
        "Done.\nP.P.S Call me.",
        "P.P.S Call me.\nDone.",
    ),
    (
        {"rule": "nth", "unit": "sentence", "index": 2, "side": "end", "text": "sea"},
        "I saw the sky. I saw the sea.",
        "I saw the sea. I saw the sky.",
    ),
    ({"rule": "delimited", "text": ",", "unit": "word"}, "ant, elbow, ink", "ant elbow ink"),
    ({"rule": "delimited", "text": ",", "unit": "word"}, "ant, elbow, ink", "ant, elbow ink, oven"),
    ({"rule": "delimited", "text": " ", "unit": "number"}, "1 4 6 8", "1, 4, 6, 8"),
    (
        {"rule": "delimited", "text": "|", "unit": "item", "min": 3, "max": 3},
        "Blue | Azure | Navy",
        "Blue / Azure / Navy",
    ),
    (
        {"rule": "paragraphs", "separator": "******", "min": 2, "max": 2, "distinct": True},
        "Yes.\n******\nSure.",
        "Yes.\n*****\nSure.",
    ),
    (
        {"rule": "paragraphs", "separator": "******", "min": 2, "max": 2, "distinct": True},
        "Yes.\n******\nSure.",
        "Yes.\n******\nYes.",
    ),
    ({"rule": "json_array", "min": 3, "max": 3, "type": "string"}, '["a", "b", "c"]', '["a", "b", "c",]'),
    ({"rule": "json_array", "min": 2, "max": 2, "type": "boolean"}, "[true, false]", "[True, False]"),
    ({"rule": "json_array", "min": 2, "max": 2, "type": "integer"}, "[1, 2]", '["1", "2"]'),
    (
        {"rule": "trailing", "what": "hashtags", "min": 2, "max": 2},
        "Great game #football #win",
        "#football #win Great game",
    ),
    (
        {"rule": "trailing", "what": "hashtags", "min": 2, "max": 2},
        "Great game #football #win",
        "Great game #football",
    ),
    ({"rule": "repeat", "text": "Name a colour."}, "Name a colour.\nBlue.", "Blue."),
    (
        {"rule": "each", "unit": "word", "test": "starts_in", "arg": "aeiou"},
        "apple eagle umbrella",
        "apple yellow umbrella",
    ),
    (
        {"rule": "each", "unit": "word", "test": "starts_in", "arg": "aeiou"},
        "Every owl eats",
        "ant hour oven",
    ),
    ({"rule": "each", "unit": "word", "test": "double_letter"}, "sheep hill moon", "sheep hill mono"),
    ({"rule": "each", "unit": "word", "test": "double_letter"}, "coffee letter", "coffee banana"),
    ({"rule": "order", "unit": "word", "rel": "distinct_initials"}, "apple bread cloud", "apple bread Arrow"),
    ({"rule": "each", "unit": "number", "test": "range", "arg": [10, 50]}, "12, 25, 50", "12, 25, 57"),
    ({"rule": "each", "unit": "number", "test": "integer"}, "150\n201\n999", "150\n201.5\n999"),
    ({"rule": "order", "unit": "number", "rel": "ratio", "arg": 2}, "3, 6, 12, 24, 48", "3, 6, 12, 24, 46"),
    ({"rule": "order", "unit": "number", "rel": "distinct"}, "1 4 6 8 9", "1 4 4 8 9"),
    ({"rule": "order", "unit": "word", "rel": "longer"}, "ox ant bird stone", "ox ant bird cat"),
    ({"rule": "wrap", "open": "[", "close": "]"}, "[Yes, it is.]", "Yes, [it] is."),
    (
        {"rule": "sections", "marker": "Part", "suffix": ":", "min": 2, "max": 2},
        "Part 1: Mix.\nPart 2: Bake.",
        "Part 1 Mix.\nPart 2 Bake.",
    ),
    (
        {"rule": "sections", "marker": "## Section", "min": 2, "max": 2},
        "## Section 1\nA.\n## Section 2\nB.",
        "Section 1\nA.\nSection 2\nB.",
    ),
    ({"rule": "headings", "min": 2, "max": 2}, "# One\nText.\n## Two\nText.", "# One\nText.\n#Two\nText."),
    ({"rule": "semicolons", "max": 1}, "I was tired; I went home.", "I was tired; I went home; I slept."),
    (
        {"rule": "sentences", "min": 2, "max": 2, "body": True},
        "A b. C d.\n\nP.S. Thanks.",
        "A b.\n\nP.S. Thanks.",
    ),
    ({"rule": "numbers", "min": 5, "max": 5}, "3,6,12,24,48", "3,6,12,24"),
]


@pytest.mark.parametrize(
    ("c", "good", "near"), NEAR, ids=[f"{c['rule']}-{i}" for i, (c, _, _) in enumerate(NEAR)]
)
def test_each_check_passes_the_answer_and_fails_the_near_miss(
    c: dict[str, Any], good: str, near: str
) -> None:
    assert canonical([c])
    assert holds(c, good), (c, good)
    assert not holds(c, near) and check(c, near) < 1.0, (c, near)


def test_markup_tags_are_not_words_but_a_title_is() -> None:
    assert check({"rule": "words", "min": 3, "max": 3}, "<note> Buy more milk </note>") == 1.0
    assert check({"rule": "words", "min": 2, "max": 2}, "<<Joy>> Hello") == 1.0  # "<<Joy>>" is a word


# -- the second reading is written apart ---------------------------------------------------------------------------
def test_the_second_reading_imports_none_of_the_main_readers_modules() -> None:
    main = {
        "rlar.tasks.reading",
        "rlar.tasks.phrasings",
        "rlar.tasks.phrasing_families",
        "rlar.tasks.reading_shapes",
        "rlar.tasks.reading_compose",
        "rlar.tasks.reading_forms",
        "rlar.tasks.reading_units",
        "rlar.tasks.reading_layouts",
        "rlar.tasks.reading_marks",
        "rlar.tasks.reading_relations",
        "rlar.tasks.reading_lists",
        "rlar.tasks.reading_kinds",
    }
    root = REPO / "rlar" / "synthesis"
    for path in [*sorted((root / "second").glob("*.py")), root / "second_route.py"]:
        tree = ast.parse(path.read_text())
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert not imported & main, (path.name, imported & main)
        # the families' modules hold the main reader's wordings too (rlar/constraints/families/)
        wordings = [
            m for m in imported if m.startswith(("rlar.constraints.families", "rlar.constraints.reading"))
        ]
        assert not wordings, (path.name, wordings)
