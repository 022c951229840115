"""Property tests (hypothesis, issue 39 item 1): no perturbation of a written answer turns a wrong answer into full
marks, for every reference-comparing tool.

Perturbations are what chat output carries: the sign of a number written with U+2212, an en dash, an em dash, a
figure dash, a small or full-width hyphen-minus or a Unicode hyphen; full-width digits; thin or narrow no-break
spaces between thousands; zero-width characters anywhere; stray Markdown / HTML / LaTeX markup around the answer;
a superscript after the number; a character no rule reads (an emoji, a circled digit) inside it; the answer in a
sentence. Two kinds of properties:

- a wrong answer (another number, the sign flipped, another entity) under any mix of perturbations never gets the
  tool's maximum — it scores below it or abstains;
- where the perturbation is a legitimate notation of the right answer, the tools read it: the minus sign in any of
  the dash characters above before a number, full-width digits, thin and narrow no-break spaces between
  thousands, zero-width characters, markup, a sentence frame. An unknown character inside the right answer is
  not read: the tool abstains (math_verify) or scores below the maximum, never full marks by dropping it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rlar.tools import ToolInput, builtin_specs, make_tool
from rlar.tools.base import RewardTool

MINUS_SIGNS = ["-", "\u2212", "\u2013", "\u2014", "\u2012", "\ufe63", "\uff0d", "\u2010", "\u2011"]
THOUSANDS_SPACES = ["\u2009", "\u202f", "\u00a0"]
ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]
UNKNOWN = ["🙂", "🎉", "①", "⑦", "☃", "\u202e", "※"]
SUPERSCRIPTS = "⁰²³⁴⁵⁶⁷⁸⁹"
MARKUP = [
    "**{}**",
    "*{}*",
    "`{}`",
    "<b>{}</b>",
    "\\textbf{{{}}}",
    "${}$",
    "\\boxed{{{}}}",
    "\\({}\\)",
    "__{}__",
]
FRAMES = [
    "{}",
    "The answer is {}.",
    "**Answer:** {}",
    "So the result is {}.",
    "Final answer: {}",
    "{}.",
]
# Frames math_verify reads besides: a proof's end mark, a program's printed output, a closing note with numbers of
# its own.
MATH_FRAMES = [
    *FRAMES,
    "Therefore the answer is {}. $\\blacksquare$",
    "```python\nprint(answer)\n```\nOutput:\n```\n{}\n```",
    "The answer is {}.\n\n(Note: I checked it twice, with 7 and 11.)",
]

_TOOLS: dict[str, RewardTool] = {}


def tool(name: str) -> RewardTool:
    if name not in _TOOLS:
        _TOOLS[name] = make_tool(next(s for s in builtin_specs() if s.name == name))
    return _TOOLS[name]


def run(name: str, reference: Any, response: str, query: str = "") -> tuple[str, float | None]:
    res = asyncio.run(tool(name).score(ToolInput(query=query, response=response, reference=reference)))
    return res.status, res.score


def written(value: int, data: st.DataObject, *, legit: bool = True) -> str:
    """``value`` written with a mix of the legitimate perturbations (sign character, full-width digits, thin
    spaces between thousands, zero-width characters), drawn by ``data``."""
    digits = f"{abs(value):,}" if abs(value) >= 1000 else str(abs(value))
    sep = data.draw(st.sampled_from(["", ",", *THOUSANDS_SPACES]), label="thousands")
    digits = digits.replace(",", sep)
    if data.draw(st.booleans(), label="fullwidth"):
        digits = "".join(chr(ord(c) + 0xFEE0) if c.isdigit() else c for c in digits)
    if value < 0:
        digits = data.draw(st.sampled_from(MINUS_SIGNS), label="minus") + digits
    if data.draw(st.booleans(), label="zero-width"):
        at = data.draw(st.integers(0, len(digits)), label="where")
        digits = digits[:at] + data.draw(st.sampled_from(ZERO_WIDTH)) + digits[at:]
    return digits


def framed(text: str, data: st.DataObject, frames: list[str] = FRAMES) -> str:
    if data.draw(st.booleans(), label="markup"):
        text = data.draw(st.sampled_from(MARKUP)).format(text)
    return data.draw(st.sampled_from(frames)).format(text)


VALUES = st.integers(-99999, 99999).filter(lambda v: v != 0)
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(VALUES, st.data())
def test_math_verify_reads_the_right_number_in_every_legitimate_notation(
    value: int, data: st.DataObject
) -> None:
    response = framed(written(value, data), data, MATH_FRAMES)
    assert run("math_verify", str(value), response) == ("ok", 1.0), response


@SETTINGS
@given(VALUES, st.sampled_from(["flip", "shift"]), st.integers(1, 50), st.data())
def test_math_verify_never_gives_a_perturbed_wrong_number_full_marks(
    value: int, wrong: str, shift: int, data: st.DataObject
) -> None:
    other = -value if wrong == "flip" else value + shift
    response = framed(written(other, data), data, MATH_FRAMES)
    if data.draw(st.booleans(), label="superscript"):
        response = response.replace(".", "") + data.draw(st.sampled_from(SUPERSCRIPTS))
    assert run("math_verify", str(value), response) != ("ok", 1.0), response


@SETTINGS
@given(VALUES, st.sampled_from(UNKNOWN), st.data())
def test_an_unknown_character_inside_the_right_number_is_never_dropped(
    value: int, char: str, data: st.DataObject
) -> None:
    text = str(value)
    at = data.draw(st.integers(1, len(text)), label="where")
    response = framed(text[:at] + char + text[at:], data)
    status, score = run("math_verify", str(value), response)
    assert status == "abstain", (response, status, score)


@SETTINGS
@given(VALUES, st.sampled_from(MINUS_SIGNS[1:]), st.data())
def test_a_sign_written_with_a_dash_is_a_sign_for_the_text_tools_too(
    value: int, minus: str, data: st.DataObject
) -> None:
    """The filer's case: "The slope is –3." against "3" — the dash is a minus, never dropped."""
    magnitude = abs(value)
    response = data.draw(st.sampled_from(["The slope is {}.", "{}", "Answer: {}"])).format(
        f"{minus}{magnitude}"
    )
    for name in ("math_verify", "exact_match", "normalized_match", "contains_match", "set_f1"):
        assert run(name, str(magnitude), response) != ("ok", 1.0), (name, response)
    assert run("quantity_match", f"{magnitude} m/s", response + " m/s") != ("ok", 1.0)


ENTITIES = [
    "Paris",
    "Canberra",
    "Jupiter",
    "George Washington",
    "carbon dioxide",
    "Ottawa",
    "Leonardo da Vinci",
]


@SETTINGS
@given(st.sampled_from(ENTITIES), st.sampled_from(ENTITIES), st.data())
def test_another_entity_in_any_frame_and_markup_never_gets_full_marks(
    right: str, said: str, data: st.DataObject
) -> None:
    assume(right != said)
    response = framed(said, data)
    if data.draw(st.booleans(), label="zero-width"):
        at = data.draw(st.integers(0, len(response)))
        response = response[:at] + data.draw(st.sampled_from(ZERO_WIDTH)) + response[at:]
    for name in ("exact_match", "normalized_match", "contains_match", "set_f1", "chrf", "bleu2"):
        assert run(name, right, response) != ("ok", 1.0), (name, response)
    aliases = [right, f"the {right}", f"{right} (answer)"]
    for name in ("normalized_match", "set_f1"):
        assert run(name, aliases, response) != ("ok", 1.0), (name, response)


@SETTINGS
@given(st.sampled_from(ENTITIES), st.data())
def test_the_right_entity_in_a_sentence_or_markup_gets_full_marks_from_the_answer_tools(
    right: str, data: st.DataObject
) -> None:
    response = framed(right, data)
    assume(response.strip() != f"{right}.")  # a bare "Paris." is punctuation exact_match is strict about
    for name in ("normalized_match", "contains_match"):
        assert run(name, right, response) == ("ok", 1.0), (name, response)
    assert run("set_f1", [right, f"The {right}"], response) == ("ok", 1.0), response


@pytest.mark.parametrize("minus", MINUS_SIGNS)
def test_every_minus_sign_reads_as_the_sign_of_a_negative_reference(minus: str) -> None:
    assert run("math_verify", "-3", f"The slope is {minus}3.") == ("ok", 1.0)
    assert run("normalized_match", "-3", f"{minus}3") == ("ok", 1.0)
    assert run("quantity_match", "-3 m/s", f"The velocity is {minus}3 m/s.") == ("ok", 1.0)
