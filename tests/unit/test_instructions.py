"""IFEval's verifiable instructions: every instruction id holds for one response and fails for another."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rlar.tools import ToolInput, builtin_specs, make_tool
from rlar.tools.instructions import INSTRUCTIONS, count_sentences, follows

CASES: list[tuple[str, dict[str, Any], str, str]] = [
    ("keywords:existence", {"keywords": ["Umbrella", "puddle"]}, "An umbrella over a puddle.", "Only rain."),
    (
        "keywords:frequency",
        {"keyword": "tea", "frequency": 2, "relation": "at least"},
        "Tea, more TEA.",
        "Tea once.",
    ),
    (
        "keywords:frequency",
        {"keyword": "tea", "frequency": 2, "relation": "less than"},
        "Tea once.",
        "tea tea",
    ),
    ("keywords:forbidden_words", {"forbidden_words": ["bad"]}, "A badge is fine.", "That was Bad."),
    (
        "keywords:letter_frequency",
        {"letter": "z", "let_frequency": 3, "let_relation": "at least"},
        "Zizzy",
        "zoo",
    ),
    (
        "language:response_language",
        {"language": "de"},
        "Das ist ein kurzer Satz auf Deutsch, mein Freund.",
        "This is a short sentence written in English, my friend.",
    ),
    (
        "length_constraints:number_sentences",
        {"num_sentences": 3, "relation": "less than"},
        "Mr. Smith paid 3.5 dollars. He left.",
        "One. Two. Three.",
    ),
    (
        "length_constraints:number_paragraphs",
        {"num_paragraphs": 2},
        "First part.\n***\nSecond part.",
        "First.\n***\n\n***\nThird.",
    ),
    (
        "length_constraints:number_words",
        {"num_words": 5, "relation": "at least"},
        "one two three four five",
        "one two three",
    ),
    (
        "length_constraints:nth_paragraph_first_word",
        {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "however"},
        'Tea is old.\n\n"However, coffee is newer.',
        "Tea is old.\n\nCoffee is newer.",
    ),
    (
        "detectable_content:number_placeholders",
        {"num_placeholders": 2},
        "Dear [name], at [address].",
        "Dear [name].",
    ),
    (
        "detectable_content:postscript",
        {"postscript_marker": "P.S."},
        "Hello.\n\nP.S. Bring snacks.",
        "Hello.",
    ),
    (
        "detectable_content:postscript",
        {"postscript_marker": "P.P.S"},
        "Hi.\nP.P.S. Later.",
        "Hi.\nP.S. Later.",
    ),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "* one\n- two", "* one\n* two\n* three"),
    ("detectable_format:constrained_response", {}, "My answer is yes.", "Yes."),
    (
        "detectable_format:number_highlighted_sections",
        {"num_highlights": 2},
        "*one* and **two**",
        "*one* only",
    ),
    (
        "detectable_format:multiple_sections",
        {"section_spliter": "Section", "num_sections": 2},
        "Section 1\nIntro\nSection 2\nBody",
        "Section 1\nIntro only",
    ),
    ("detectable_format:json_format", {}, '```json\n{"a": 1}\n```', "{'a': 1}"),
    ("detectable_format:title", {}, "<<A Poem>>\nRoses.", "<< >> Roses."),
    ("combination:two_responses", {}, "First answer.\n******\nSecond answer.", "Same.\n******\nSame."),
    ("combination:repeat_prompt", {"prompt_to_repeat": "Say hi."}, "say hi. Hi!", "Hi! Say hi."),
    (
        "startend:end_checker",
        {"end_phrase": "Any other questions?"},
        "Done. Any other questions?",
        "Any other questions? Done.",
    ),
    ("startend:quotation", {}, '"All quoted."', '"Half quoted.'),
    (
        "change_case:capital_word_frequency",
        {"capital_frequency": 2, "capital_relation": "at least"},
        "THIS is VERY loud",
        "Only ONE here",
    ),
    (
        "change_case:english_capital",
        {},
        "THIS IS AN ANSWER WRITTEN IN CAPITAL LETTERS.",
        "This Is Mixed Case.",
    ),
    ("change_case:english_lowercase", {}, "this is an answer written in lowercase letters.", "this Is not."),
    ("punctuation:no_comma", {}, "No commas here.", "One, two."),
]


def test_every_instruction_id_is_covered() -> None:
    assert {c[0] for c in CASES} == set(INSTRUCTIONS)


@pytest.mark.parametrize(("instruction", "kwargs", "good", "bad"), CASES)
def test_instruction_holds_for_the_good_response_and_fails_for_the_bad(
    instruction: str, kwargs: dict[str, Any], good: str, bad: str
) -> None:
    assert follows(good, [instruction], [kwargs])[0][0] is True
    assert follows(bad, [instruction], [kwargs])[0][0] is False


def test_sentences_skip_abbreviations_initials_and_decimals() -> None:
    assert count_sentences("Dr. J. Smith paid 3.50 dollars. Then he left! Did he?") == 3
    assert count_sentences("no end mark") == 1 and count_sentences("   ") == 0


def test_loose_reading_forgives_a_chatty_first_line_and_markdown_stars() -> None:
    kw = [{"end_phrase": "Is there anything else?"}]
    response = "Sure! Here it is:\n**Done.** Is there anything else?\nHope this helps"
    assert follows(response, ["startend:end_checker"], kw) == [(False, True)]
    assert follows("**wrapped in stars**", ["punctuation:no_comma"], [{}]) == [(True, True)]


def test_the_tool_scores_prompt_level_or_instruction_fraction_and_abstains_without_instructions() -> None:
    spec = next(s for s in builtin_specs() if s.name == "ifeval")
    reference = {
        "instruction_id_list": ["punctuation:no_comma", "change_case:english_lowercase"],
        "kwargs": [{}, {}],
    }
    inp = ToolInput(query="q", response="all lowercase, but a comma", reference=reference)
    strict = asyncio.run(make_tool(spec).score(inp))
    assert strict.ok and strict.score == 0.0 and strict.details["strict"] == [False, True]
    fraction = asyncio.run(make_tool(spec.replace(params={"scoring": "fraction"})).score(inp))
    assert fraction.score == pytest.approx(0.5)
    assert (
        asyncio.run(make_tool(spec).score(ToolInput(query="q", response="x", reference="plain"))).status
        == "abstain"
    )
    bad = {"instruction_id_list": ["nope:nope"], "kwargs": [{}]}
    assert (
        asyncio.run(make_tool(spec).score(ToolInput(query="q", response="x", reference=bad))).status
        == "abstain"
    )


@pytest.mark.parametrize("empty", ["", "   ", "\n\n"])
def test_an_empty_response_follows_no_instruction_even_those_it_would_satisfy_vacuously(empty: str) -> None:
    spec = next(s for s in builtin_specs() if s.name == "ifeval")
    reference = {
        "instruction_id_list": ["length_constraints:number_words", "punctuation:no_comma"],
        "kwargs": [{"relation": "less than", "num_words": 12}, {}],
    }
    got = asyncio.run(
        make_tool(spec).score(ToolInput(query="Describe the sea.", response=empty, reference=reference))
    )
    assert got.ok and got.score == 0.0 and "empty" in got.reason
    short = asyncio.run(
        make_tool(spec).score(ToolInput(query="q", response="The sea is calm.", reference=reference))
    )
    assert short.score == 1.0
