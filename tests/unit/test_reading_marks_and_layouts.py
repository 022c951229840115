"""Marks counted per unit (emojis, bold, italics, links, different words and letters, numbers in digits or words,
pronouns, parentheses, leading spaces, task boxes), measures of every unit (prime / even / odd counts, equal
lengths, staircases), relations (one first word, chained sentences, reversed lines, Fibonacci-like sums), layouts
(fenced blocks with a tag, identifier styles, exact separators, 24-hour times, prices, bit strings, HTML and
Markdown task lists, nested lists, figures, question/answer pairs, repeated units) and lengths with a tolerance —
read by both readers apart, checked strictly, built into passing answers and near misses. Several cases are
combinations no phrasing was written for (a unit x a predicate x a quantifier)."""

from __future__ import annotations

from typing import Any

import pytest

from rlar.constraints.checks import check, holds
from rlar.constraints.vocabulary import canonical
from rlar.synthesis.builder import build, violations
from rlar.synthesis.second_route import constraint_key, second_reading
from rlar.tasks.reading import read_instruction


def N(rule: str, lo: int | None = None, hi: int | None = None, **kw: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"rule": rule, **kw}
    if lo is not None:
        c["min"] = lo
    if hi is not None:
        c["max"] = hi
    return c


def E(unit: str, test: str, **kw: Any) -> dict[str, Any]:
    return {"rule": "each", "unit": unit, "test": test, **kw}


def O(unit: str, rel: str, **kw: Any) -> dict[str, Any]:  # noqa: E743
    return {"rule": "order", "unit": unit, "rel": rel, **kw}


CASES: list[tuple[str, list[dict[str, Any]]]] = [
    # marks counted, over the answer or per unit (the quantity grammar: no phrasing of their own)
    ("Put exactly five emojis somewhere in your reply.", [N("emojis", 5, 5)]),
    ("Every line must contain exactly one emoji.", [N("emojis", 1, 1, per="line")]),
    ("Write 3 lines, each with at most two emojis.", [N("lines", 3, 3), N("emojis", None, 2, per="line")]),
    ("No paragraph may contain more than 2 links.", [N("links", None, 2, per="paragraph")]),
    ("Use at least 4 pronouns in your answer.", [N("pronouns", 4)]),
    (
        "Include exactly 3 Markdown links, and every URL must begin with https://.",
        [N("links", 3, 3), E("url", "starts_with", arg="https://")],
    ),
    ("Your response should use 20 or more distinct words.", [N("distinct_words", 20)]),
    ("Write at most 30 words but at least 18 unique words.", [N("words", None, 30), N("distinct_words", 18)]),
    ("Mark exactly three phrases in bold.", [N("bold", 3, 3)]),
    ("Bold exactly 4 words and do not use italics.", [N("bold_words", 4, 4), N("italics", None, 0)]),
    ("Exactly two words should be in bold.", [N("bold_words", 2, 2)]),
    (
        "Give at least two key terms in bold, and write no more than 4 sentences.",
        [N("bold", 2), N("sentences", None, 4)],
    ),
    ("Each sentence needs at least one word in bold.", [N("bold_words", 1, per="sentence")]),
    # numbers in digits or in words
    ("Mention exactly 4 numbers written in digits.", [N("numbers", 4, 4)]),
    (
        "Use at least three numbers and never spell out any number.",
        [N("numbers", 3), N("number_words", None, 0)],
    ),
    ("Include exactly two numbers spelled out in words.", [N("number_words", 2, 2)]),
    # parentheses
    ("Include parentheses nested at least 5 levels deep.", [N("paren_depth", 5)]),
    ("Write exactly three pairs of parentheses.", [N("parens", 3, 3)]),
    # the alphabet
    (
        "Compose a single sentence that uses every letter of the alphabet.",
        [N("sentences", 1, 1), N("distinct_letters", 26)],
    ),
    ("Give a pangram in at most 12 words.", [N("distinct_letters", 26), N("words", None, 12)]),
    # a measure of every unit
    (
        "Write four lines; the number of words in each line must be even.",
        [N("lines", 4, 4), E("line", "even", of="words")],
    ),
    ("Every paragraph should contain an odd number of sentences.", [E("paragraph", "odd", of="sentences")]),
    ("Each line's word count must be a prime number.", [E("line", "prime", of="words")]),
    ("Your reply must contain a prime number of words.", [E("answer", "prime", of="words")]),
    ("All sentences must have the same number of words.", [O("sentence", "equal", of="words")]),
    # staircases
    (
        "Write five lines, each indented by two more spaces than the line before,"
        " and the first line has no leading spaces.",
        [N("lines", 5, 5), O("line", "step", arg=2, of="indent"), N("indent", None, 0, per="line", index=1)],
    ),
    (
        "Write 4 lines; every line must start with more leading spaces than the line above it.",
        [N("lines", 4, 4), O("line", "increasing", of="indent")],
    ),
    # one first word; chains; reversals; sums
    (
        "Write two paragraphs and begin every paragraph with the same word.",
        [N("paragraphs", 2, 2), O("paragraph", "same_first")],
    ),
    ("Write three lines that all start with the same word.", [N("lines", 3, 3), O("line", "same_first")]),
    (
        "Write three sentences where the last word of each sentence is the first word of the next sentence.",
        [N("sentences", 3, 3), O("sentence", "last_first")],
    ),
    (
        "Write two lines: the second line must hold exactly the words of the first line in reverse order.",
        [N("lines", 2, 2), O("line", "reversed")],
    ),
    (
        "List 8 positive integers separated by commas, where each number is the sum of the two numbers before it.",
        [
            N("numbers", 8, 8),
            E("number", "range", arg=[1, None]),
            E("number", "integer"),
            O("number", "sum_prev2"),
            {"rule": "delimited", "text": ",", "unit": "number"},
        ],
    ),
    (
        "Give 5 numbers, one per line, and the last number must be greater than 50.",
        [
            N("numbers", 5, 5),
            {"rule": "total", "unit": "number", "agg": "last", "min": 51},
            N("lines", 5, 5),
            N("numbers", 1, 1, per="line"),
        ],
    ),
    # a unit's end or start of a kind
    (
        "Write three lines, and every line must end with an emoji.",
        [N("lines", 3, 3), E("line", "ends_with_kind", arg="emoji")],
    ),
    ("Each bullet must start with a number.", [E("item", "starts_with_kind", arg="number")]),
    (
        "Write 4 lines where every line begins with a capital letter and ends with a question mark.",
        [N("lines", 4, 4), E("line", "starts_upper"), E("line", "ends_with", arg="?")],
    ),
    # layouts
    (
        "Answer with one ```sql fenced block holding exactly 2 lines of code, and no text outside the block.",
        [{"rule": "code_block", "lang": "sql"}, N("code_lines", 2, 2)],
    ),
    (
        "Respond with exactly 4 lowercase words joined by underscores and no spaces.",
        [
            {"rule": "delimited", "text": "_", "unit": "word", "exact": True, "min": 4, "max": 4},
            {"rule": "lowercase"},
            N("spaces", None, 0),
        ],
    ),
    (
        "List 3 times in 24-hour HH:MM format, one per line, each between 06:00 and 09:30.",
        [N("lines", 3, 3), E("line", "time24"), E("time", "range", arg=["06:00", "09:30"])],
    ),
    (
        "Reply with an HTML ordered list of 3 items and nothing outside the list.",
        [{"rule": "html_list", "tag": "ol", "min": 3, "max": 3}],
    ),
    (
        "Write a Markdown task list with 3 tasks where exactly 1 is checked.",
        [{"rule": "task_list"}, N("items", 3, 3), N("checked", 1, 1)],
    ),
    (
        "Write four lines where line 4 is the same as line 1.",
        [N("lines", 4, 4), {"rule": "same", "unit": "line", "index": 4, "as": 1}],
    ),
    (
        "Write 3 paragraphs; the third paragraph repeats the first one exactly.",
        [N("paragraphs", 3, 3), {"rule": "same", "unit": "paragraph", "index": 3, "as": 1}],
    ),
    (
        "Draw a right triangle of asterisks with 5 rows.",
        [{"rule": "figure", "shape": "right", "char": "*", "min": 5, "max": 5}],
    ),
    # IFBench's word classes
    (
        "Each word in your response must start with the next letter of the alphabet.",
        [O("word", "alphabet_next")],
    ),
    ("Use only words whose lengths are prime numbers.", [E("word", "prime", of="letters")]),
    ("Every word must contain a consonant cluster.", [E("word", "consonant_cluster")]),
    (
        "Write 2 paragraphs, and each paragraph must end with the same word it started with.",
        [N("paragraphs", 2, 2), E("paragraph", "bookended")],
    ),
    ("Do not repeat any word more than 2 times.", [N("word_repeats", None, 2)]),
    (
        "Your answer must include bullet points denoted by * and at least one sub-bullet denoted by -"
        " for each bullet point.",
        [{"rule": "outline", "marker": "*", "sub_marker": "-", "sub_min": 1}],
    ),
    # other wordings of the same classes
    ("Nest round brackets to a depth of exactly 2.", [N("paren_depth", 2, 2)]),
    (
        "Make a to-do list in Markdown checkbox format with 4 entries, 3 of them ticked.",
        [{"rule": "task_list"}, N("items", 4, 4), N("checked", 3, 3)],
    ),
    (
        "Write 5 words on one line, with a semicolon and no space between neighbours (like a;b).",
        [
            {"rule": "delimited", "text": ";", "unit": "word", "exact": True, "min": 5, "max": 5},
            N("lines", 1, 1),
        ],
    ),
    (
        "List four words separated by commas, and don't end with a period.",
        [
            {"rule": "delimited", "text": ",", "unit": "word", "min": 4, "max": 4},
            {"rule": "not_ends_with", "text": "."},
        ],
    ),
    ("Exactly three words of your reply must be in bold (**word**).", [N("bold_words", 3, 3)]),
    (
        "Give 4 clock times, one per line, in HH:MM 24-hour notation, all between 20:00 and 23:59.",
        [N("lines", 4, 4), E("line", "time24"), E("time", "range", arg=["20:00", "23:59"])],
    ),
    # lengths with a tolerance
    ("Write approximately 60 words, plus or minus 10 percent.", [N("words", 54, 66)]),
    ("Write roughly 200 characters, and no more than 10 characters off either way.", [N("chars", 190, 210)]),
    ("Write about 50 words; anything between 45 and 55 words is fine.", [N("words", 45, 55)]),
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
        "Write a short poem whose first and last lines are identical.",  # what a poem is: a judge
        "Do not start every paragraph with the same word.",  # a negated relation is not read the other way round
        "Draw a triangle of stars.",  # no shape and no rows: not a figure the checks know
        "Write about 40 words.",  # a bare 'about' keeps its reading (±20%); a topic would need a judge
        "Use a code block in Python.",  # a language named in prose is no fence tag
        "Put every number in bold.",  # which words are numbers in bold: no rule reads it
        "Every sentence must end with an emoji.",  # before or after its full stop? not a rule's to say
    ],
)
def test_what_a_rule_cannot_check_stays_unread(text: str) -> None:
    reading = read_instruction(text)
    if text == "Write about 40 words.":
        assert reading.constraints == [N("words", 32, 48)]
        return
    assert not reading.full, reading.constraints


# -- the checks: a passing answer and a near miss per check ------------------------------------------------------
NEAR: list[tuple[dict[str, Any], str, str]] = [
    (N("emojis", 2, 2), "Sun 🌞 and rain 🌧️ today.", "Sun :) and rain 🌧️ today."),
    (N("emojis", 1, 1, per="line"), "Tea 🍵\nCake 🍰", "Tea 🍵🍵\nCake 🍰"),
    (E("line", "ends_with_kind", arg="emoji"), "Tea time 🍵\nCake 🍰", "Tea time 🍵.\nCake 🍰"),
    (N("bold", 2, 2), "A **b** c **d e**.", "A **b** c __d e__."),
    (N("bold", 1, 1), "A **b** c *d*.", "A **b** c **d**."),
    (N("bold_words", 1, 1), "Go **now** please.", "Go **right now** please."),
    (N("italics", None, 0), "Go **now**.", "Go _now_."),
    (N("links", 1, 1), "See [docs](https://a.io).", "See [docs] (https://a.io)."),
    (
        E("url", "starts_with", arg="https://"),
        "[a](https://a.io) [b](https://b.io)",
        "[a](https://a.io) [b](http://b.io)",
    ),
    (E("link_text", "equals", arg="here"), "Click [here](https://a.io).", "Click [Here](https://a.io)."),
    (
        E("item", "is_link"),
        "- [A](https://a.io)\n- [B](https://b.io)",
        "- [A](https://a.io) docs\n- [B](https://b.io)",
    ),
    (N("distinct_words", 5), "The cat and the dog ran.", "The cat the cat the."),
    (
        N("distinct_letters", 26),
        "Sphinx of black quartz, judge my vow.",
        "Sphinx of black quarts, judge my vow.",
    ),
    (N("numbers", 2, 2), "I have 3 cats and 2 dogs.", "I have 3 cats and two dogs."),
    (N("number_words", None, 0), "I have 3 cats.", "I have three cats."),
    (N("pronouns", 2), "We saw them.", "Sam saw Kim."),
    (N("paren_depth", 2), "A (b (c)).", "A (b [c])."),
    (N("paren_depth", 2), "A (b (c)).", "A (b (c)."),
    (N("parens", 2, 2), "A (b) c (d).", "A (b) c (d (e))."),
    (N("spaces", None, 0), "snake_case_name", "snake_case name"),
    (N("code_lines", 2, 2), "```sh\nls\npwd\n```", "```sh\nls && pwd\n```"),
    ({"rule": "code_block", "lang": "python"}, "```python\nx = 1\n```", "```Python\nx = 1\n```"),
    ({"rule": "code_block", "lang": "python"}, "```python\nx = 1\n```", "Here:\n```python\nx = 1\n```"),
    ({"rule": "code_block", "lang": "js"}, "```js\nlet a;\n```", "```js\nlet a;"),
    (
        {"rule": "delimited", "text": "_", "unit": "word", "exact": True, "min": 3, "max": 3},
        "red_big_cat",
        "red_big_cat.",
    ),
    (
        {"rule": "delimited", "text": "_", "unit": "word", "exact": True, "min": 3, "max": 3},
        "red_big_cat",
        "red__big_cat",
    ),
    ({"rule": "delimited", "text": ";", "unit": "word", "exact": True}, "a;b;c", "a; b;c"),
    ({"rule": "delimited", "text": " | ", "unit": "item", "exact": True}, "Oslo | Rome", "Oslo|Rome"),
    ({"rule": "only", "what": "camel_case"}, "maxRetryCount", "max_retry_count"),
    (E("line", "time24"), "07:05\n13:40", "7:05\n13:40"),
    (E("time", "range", arg=["09:00", "12:00"]), "09:00 and 12:00", "09:00 and 12:01"),
    (E("line", "price", arg="$#"), "$3.50\n$10.00", "$3.5\n$10.00"),
    (E("line", "binary"), "0101\n1100", "0b01\n1100"),
    (E("answer", "no_adjacent_repeat"), "0101", "0110"),
    (E("sentence", "prime", of="words"), "Go now. We ran far.", "Go now. We ran far away."),
    (E("answer", "prime", of="words"), "One two three", "One two three four"),
    (O("sentence", "equal", of="words"), "I ran. We sat.", "I ran. We sat down."),
    (O("line", "step", arg=1, of="indent"), "a\n b\n  c", "a\n b\n   c"),
    (O("line", "increasing", of="indent"), "a\n  b\n   c", "a\n\tb\n   c"),
    (N("indent", None, 0, per="line", index=1), "a\n b", " a\n  b"),
    (O("paragraph", "same_first"), "Now we go.\n\nNow we rest.", "Now we go.\n\nNowhere to rest."),
    (O("sentence", "last_first"), "I like tea. Tea is hot.", "I like tea. Teas are hot."),
    (O("line", "reversed"), "red fox runs\nruns fox red", "red fox runs\nsnur xof der"),
    (O("number", "sum_prev2"), "1, 2, 3, 5, 8", "1, 2, 3, 5, 9"),
    (O("word", "initials_differ"), "big red cat", "big bad cat"),
    (
        {"rule": "same", "unit": "line", "index": -1, "as": 1},
        "Hi there\nok\nHi there",
        "Hi there\nok\nHi there!",
    ),
    ({"rule": "figure", "shape": "right", "char": "*", "min": 3, "max": 3}, "*\n**\n***", "*\n**\n*** "),
    ({"rule": "figure", "shape": "inverted", "char": "#", "min": 3, "max": 3}, "###\n##\n#", "###\n#\n#"),
    ({"rule": "figure", "shape": "pyramid", "char": "x", "min": 2, "max": 2}, " x\nxxx", "x\nxxx"),
    (
        {
            "rule": "outline",
            "marker": "-",
            "sub_marker": "-",
            "indent": 2,
            "min": 2,
            "max": 2,
            "sub_min": 1,
            "sub_max": 1,
        },
        "- a\n  - b\n- c\n  - d",
        "- a\n    - b\n- c\n    - d",
    ),
    (
        {"rule": "html_list", "tag": "ul", "min": 2, "max": 2},
        "<ul><li>A</li><li>B</li></ul>",
        "<ul><li>A</li><li>B</li></ul>.",
    ),
    (
        {"rule": "pairs", "first": "Q: ", "second": "A: ", "min": 1, "max": 1},
        "Q: Why?\nA: Because.",
        "Q:Why?\nA: Because.",
    ),
    ({"rule": "task_list"}, "- [ ] a\n- [x] b", "- [ ] a\n- [X] b"),
    (N("checked", 1, 1), "- [ ] a\n- [x] b", "- [x] a\n- [x] b"),
    ({"rule": "not_ends_with", "text": "."}, "a, b, c", "a, b, c."),
    (O("word", "alphabet_next"), "Ants bite cats daily", "Ants bite dogs daily"),
    (E("word", "prime", of="letters"), "The cat ate", "The cats ate"),
    (E("word", "consonant_cluster"), "Strong crisp frost", "Strong crisp rain"),
    (
        E("paragraph", "bookended"),
        "Rain fell all day, rain.\n\nSun came out, sun!",
        "Rain fell all day.\n\nSun came out, sun!",
    ),
    (N("word_repeats", None, 2), "the cat and the dog", "the cat and the dog and the bird"),
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


def test_a_task_box_and_a_list_marker_are_no_words() -> None:
    assert check(N("words", None, 2, per="item"), "- [x] Buy milk\n- [ ] Call Sam") == 1.0
    assert check(N("words", 3, 3), "- [x] Buy fresh milk") == 1.0


def test_html_list_items_are_the_item_unit() -> None:
    assert check(N("words", None, 2, per="item"), "<ol><li>Boil water</li><li>Add the pasta</li></ol>") == 0.5
