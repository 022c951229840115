"""``math_verify`` on answers as chat models write them (issue 39): characters beyond ASCII (minus signs and dashes,
full-width digits, thin spaces, superscripts, vulgar fractions, radicals), stray markup, sign words, decimal commas,
and the notations of ``rlar.tools.math_notations`` (clock times, bases, residues, angles, ratios, money, vectors,
polar complex numbers), each both ways: the right answer in the notation scores 1, a wrong one of the same form 0,
and what reads two ways or holds a character no rule reads abstains with the reason."""

from __future__ import annotations

from typing import Any

import pytest

from rlar.tools import ToolInput, builtin_specs, make_tool
from rlar.tools.answer_chars import read_chars, unknown_chars
from rlar.tools.base import RewardTool


@pytest.fixture(scope="module")
def math_tool() -> RewardTool:
    return make_tool(next(s for s in builtin_specs() if s.name == "math_verify"))


async def score(
    tool: RewardTool, reference: Any, response: str, query: str = ""
) -> tuple[str, float | None, str]:
    res = await tool.score(ToolInput(query=query, response=response, reference=reference))
    return res.status, res.score, res.reason


async def assert_scores(
    tool: RewardTool, reference: Any, response: str, expected: float, query: str = ""
) -> None:
    """The tool scores ``response`` ``expected`` (not an abstain), and says why when it does not."""
    status, got, reason = await score(tool, reference, response, query)
    assert (status, got) == ("ok", expected), reason


async def assert_scores_or_abstains(
    tool: RewardTool, reference: Any, response: str, expected: float | None
) -> None:
    """As :func:`assert_scores`; ``expected`` None: the tool abstains (and says why when it does not)."""
    if expected is None:
        status, _, why = await score(tool, reference, response)
        assert status == "abstain", why
    else:
        await assert_scores(tool, reference, response, expected)


SIGNS_AND_CHARACTERS = [
    ("-3", "The slope is −3.", 1.0),  # U+2212 minus sign
    ("3", "The slope is −3.", 0.0),
    ("-3", "The slope is –3.", 1.0),  # en dash as the sign
    ("3", "The slope is –3.", 0.0),  # the filer's false positive: a dropped dash read as 3
    ("-3", "x = —3", 1.0),  # em dash
    ("3", "x = —3", 0.0),
    ("-5", "The temperature is now ‒5 degrees.", 1.0),  # figure dash
    ("5", "The temperature is now ﹣5 degrees.", 0.0),  # small hyphen-minus
    ("-5", "negative five", 1.0),
    ("5", "negative five", 0.0),
    ("5", "The answer is minus 5.", 0.0),
    ("9", "19 minus 10 is 9.", 1.0),  # a subtraction, not a sign
    ("42", "The answer is ４２.", 1.0),  # full-width digits
    ("43", "The answer is ４２.", 0.0),
    ("42", "The answer is ٤٢.", 1.0),  # Arabic-Indic digits
    ("1234567", "The population is 1\u2009234\u2009567.", 1.0),  # thin spaces
    ("1234567", "The population is 1\u202f234\u202f567.", 1.0),  # narrow no-break spaces
    ("1234", "The population is 1\u202f234\u202f567.", 0.0),
    ("42", "The answer is 4\u200b2.", 1.0),  # a zero-width space is invisible
    ("\\frac{1}{2}", "½", 1.0),
    ("\\frac{7}{2}", "3½", 1.0),  # a mixed number
    ("3", "3½", 0.0),
    ("8", "2³", 1.0),
    ("6", "2³", 0.0),
    ("x^2+1", "x²+1", 1.0),
    ("1.5\\times 10^{-8}", "1.5 × 10⁻⁸", 1.0),
    ("1.5\\times 10^{-8}", "1.5 × 10⁸", 0.0),  # the exponent's sign
    ("1.5\\times 10^{-8}", "1.5·10^-8", 1.0),
    ("1.5\\times 10^{-8}", "1.5 x 10^-8", 1.0),
    ("2\\sqrt{3}", "2√3", 1.0),
    ("2\\sqrt{3}", "√12", 1.0),
    ("2\\sqrt{3}", "3√2", 0.0),
    ("(-\\infty, 3]", "(−∞, 3]", 1.0),
    ("(-\\infty, 3]", "(−∞, 3)", 0.0),
    ("5", "It takes 3–5 days.", 0.0),  # an en dash between digits is a range: two values
]


@pytest.mark.parametrize(("reference", "response", "expected"), SIGNS_AND_CHARACTERS)
async def test_characters_beyond_ascii_are_read_for_what_they_mean(
    math_tool: RewardTool, reference: str, response: str, expected: float
) -> None:
    await assert_scores(math_tool, reference, response, expected)


MARKUP_AND_FORMS = [
    ("5", "<b>5</b>", 1.0),
    ("5", "The answer is `5`.", 1.0),
    ("5", "The answer is *5*.", 1.0),
    ("8", "2<sup>3</sup>", 1.0),
    ("5", "**Answer:** \\textbf{5}", 1.0),
    ("3.5", "3,5", 1.0),  # a decimal comma
    ("35", "3,5", 0.0),
    ("1234.5", "1.234,5", 1.0),
    ("1000", "1,000", 1.0),  # three digits after a comma are thousands
    ("120", "\\binom{10}{3}", 1.0),
    ("3", "\\log_2 8", 1.0),
    ("7", "3 + 4", 1.0),  # arithmetic left undone is worked out (not when the query holds it: below)
    ("8", "3 + 4", 0.0),
    ("5", "It is probably 5, but it could be 6.", 0.0),
    ("6", "It is probably 5, but it could be 6.", 0.0),
]


@pytest.mark.parametrize(("reference", "response", "expected"), MARKUP_AND_FORMS)
async def test_markup_is_removed_and_written_forms_of_a_number_are_evaluated(
    math_tool: RewardTool, reference: str, response: str, expected: float
) -> None:
    await assert_scores(math_tool, reference, response, expected)


NOTATIONS = [
    # clock times
    ("15:45", "The train leaves at 3:45 p.m.", 1.0),
    ("15:45", "The train leaves at 3:45 AM.", 0.0),
    ("3:45 PM", "15:45", 1.0),
    ("09:30", "9:30 am", 1.0),
    ("12:00", "noon", 1.0),
    ("15:45", "It is 3:45 PM or 4:45 PM.", 0.0),
    # number bases
    ("1011_2", "1011₂", 1.0),
    ("1011_2", "The answer is 1011.", 1.0),
    ("1011_2", "11", 1.0),  # the same number in decimal
    ("1011_2", "1101_2", 0.0),
    ("31", "0x1F", 1.0),
    ("31", "0x1E", 0.0),
    ("1F_{16}", "31", 1.0),
    # residues
    ("4", "x ≡ 4 (mod 9)", 1.0),
    ("4", "x \\equiv 13 \\pmod{9}", 0.0),  # unreduced: not the remainder asked for
    ("4", "13 mod 9 = 4", 1.0),
    ("x \\equiv 4 \\pmod{9}", "x ≡ 13 (mod 9)", 1.0),  # against a modulus, a congruent value
    ("x \\equiv 4 \\pmod{9}", "x ≡ 4 (mod 7)", 0.0),
    # angles
    ("\\frac{\\pi}{6}", "30°", 1.0),
    ("\\frac{\\pi}{6}", "30 rad", 0.0),
    ("30^\\circ", "\\frac{\\pi}{6}", 1.0),
    ("30^\\circ", "The angle is \\frac{\\pi}{3} radians.", 0.0),
    ("30^\\circ", "-30°", 0.0),
    ("30.5^\\circ", "30°30′", 1.0),  # degrees and minutes
    ("30.5^\\circ", "30°20′", 0.0),
    ("\\frac{\\pi}{6}", "0.5236 rad", 1.0),  # a decimal at the precision it is written to
    ("\\frac{\\pi}{6}", "0.53 rad", 0.0),
    # ratios
    ("3:4", "The ratio is 3 : 4.", 1.0),
    ("3:4", "6:8", 1.0),
    ("3:4", "4:3", 0.0),
    ("3:4", "3 to 4", 1.0),
    ("2:3:4", "4:6:8", 1.0),
    ("2:3:4", "2:4:3", 0.0),
    # money
    ("\\$4.50", "450 cents", 1.0),
    ("\\$4.50", "45 cents", 0.0),
    ("75 cents", "$0.75", 1.0),
    ("0.75", "75¢", 1.0),
    # vectors
    ("\\langle 1, 2 \\rangle", "⟨1, 2⟩", 1.0),
    ("\\langle 1, 2 \\rangle", "⟨2, 1⟩", 0.0),
    ("\\langle 1, 2 \\rangle", "1.2", 0.0),  # the library alone reads the brackets as 1.2
    ("\\langle 3, -4 \\rangle", "3i - 4j", 1.0),
    ("\\langle 3, -4 \\rangle", "3\\mathbf{i} + 4\\mathbf{j}", 0.0),
    ("\\langle 2, 4 \\rangle", "2\\langle 1, 2 \\rangle", 1.0),
    ("(1, 2, 3)", "⟨1, 2, 3⟩", 1.0),
    ("\\begin{pmatrix} 3 \\\\ -4 \\end{pmatrix}", "⟨3, -4⟩", 1.0),
    # complex numbers
    ("5i", "5e^{i\\pi/2}", 1.0),
    ("5i", "5e^{-i\\pi/2}", 0.0),
    ("1+i", "\\sqrt{2}\\operatorname{cis}\\frac{\\pi}{4}", 1.0),
    ("3+4i", "3 + 4j", 1.0),
    ("3+4i", "3 - 4j", 0.0),
]


@pytest.mark.parametrize(("reference", "response", "expected"), NOTATIONS)
async def test_notations_the_library_does_not_read_are_compared_by_meaning(
    math_tool: RewardTool, reference: str, response: str, expected: float
) -> None:
    await assert_scores(math_tool, reference, response, expected)


ABSTAINS = [
    ("42", "The answer is 42 🤔", "U+1F914"),  # a face that doubts the answer says something
    ("42", "The answer is 42🎉", "U+1F389"),  # a pictograph against a number is not apart from it
    ("24", "The answer is \u202e42", "U+202E RIGHT-TO-LEFT OVERRIDE"),
    ("3", "The answer is ③.", "U+2462"),
    ("120", "The answer is 5!", "factorial or an exclamation"),
    ("5", "The answer is 5!", "factorial or an exclamation"),
    ("15:45", "3:45", "12-hour time"),
    ("\\langle 1, 2 \\rangle", "\\langle 1, 2 \\rangle + 1", "a vector inside a longer expression"),
]


@pytest.mark.parametrize(("reference", "response", "why"), ABSTAINS)
async def test_what_no_rule_reads_or_what_reads_two_ways_abstains_and_names_why(
    math_tool: RewardTool, reference: str, response: str, why: str
) -> None:
    status, got, reason = await score(math_tool, reference, response)
    assert status == "abstain" and got is None
    assert why in reason


async def test_a_factorial_that_is_wrong_either_way_scores_zero(math_tool: RewardTool) -> None:
    assert (await score(math_tool, "7", "The answer is 5!"))[:2] == ("ok", 0.0)


async def test_a_reference_with_an_unknown_character_abstains(math_tool: RewardTool) -> None:
    status, _, reason = await score(math_tool, "Ⅳ", "4")  # a Roman numeral character
    assert status == "abstain" and "reference" in reason and "U+2163" in reason


QUERY = "What is 7 x 8?\nA) 54\nB) 56\nC) 58\nD) 64\nAnswer with the letter."


@pytest.mark.parametrize(
    ("reference", "response", "expected"),
    [
        ("B", "7 x 8 = 56", 1.0),  # the value of option B
        ("B", "7 x 8 = 54", 0.0),
        ("56", "B", 1.0),  # the letter of the option whose value is the reference
        ("56", "(A)", 0.0),
        ("B", "A) 54\n\nThe answer is B) 56", 0.0),  # two different options chosen
    ],
)
async def test_an_option_letter_answers_for_its_value_and_a_value_for_its_letter(
    math_tool: RewardTool, reference: str, response: str, expected: float
) -> None:
    await assert_scores(math_tool, reference, response, expected, QUERY)


async def test_arithmetic_the_query_holds_is_no_answer(math_tool: RewardTool) -> None:
    await assert_scores(math_tool, "19", "12 + 7", 0.0, "What is 12 + 7?")
    await assert_scores(math_tool, "71", "It is 30 + 41.", 0.0, "What is 30 plus 41?")
    await assert_scores(math_tool, "19", "12 + 7 = 19", 1.0, "What is 12 + 7?")


def test_read_chars_names_what_it_does_not_read_and_keeps_it_in_place() -> None:
    text = read_chars("x = −3 🤔 ①")
    assert text.startswith("x = -3")
    assert unknown_chars(text) == ["U+1F914 THINKING FACE", "U+2460 CIRCLED DIGIT ONE"]
    assert read_chars("🎯 x = 3 🙂") == "  x = 3  ", "pictographs apart from any word or number decorate"
    assert unknown_chars(read_chars("x = 3🙂")) == ["U+1F642 SLIGHTLY SMILING FACE"], (
        "against a number: unknown"
    )
    assert unknown_chars(read_chars("½ · π ≤ ∞ °")) == []
    assert read_chars("x² – 3", latex=False) == "x² - 3", "text checkers keep the symbols as written"


def test_read_chars_writes_unit_glyphs_as_letters_and_a_calculators_exponent_as_e() -> None:
    assert read_chars("12 ㎝, 5 ㎏, 9.8 ㎨, 300 \u212a") == "12 cm, 5 kg, 9.8 m/s^{2}, 300 K"
    assert read_chars("20 ㎡") == "20 m^{2}", "the power of a squared unit is an exponent, not a number"
    assert read_chars("1.2ᴇ⁻⁴ and 3ᴇ5") == "1.2e-4 and 3e5"
    assert read_chars("x ⩾ 2, y ⩽ 1, 30˚") == "x \\ge  2, y \\le  1, 30^\\circ "
    assert unknown_chars(read_chars("㎝ ㎧ ⩾ ˚ ᴇ")) == []


QUANTITIES = [
    # A reference with a physical unit against an answer with one: compared in SI units, never read past.
    ("36 \\text{ cm}^2", "So the area is $\\boxed{36\\ \\mathrm{mm}^2}$.", 0.0),  # the digits, another unit
    ("36 \\text{ cm}^2", "So the area is 36 cm².", 1.0),
    ("36 \\text{ cm}^2", "The area is 3600 mm^2.", 1.0),
    ("150 \\text{ cm}", "The board is 1.5 m long.", 1.0),
    ("150 \\text{ cm}", "The board is 1.5 cm long.", 0.0),
    ("150 \\text{ cm}", "The board is 150 g.", 0.0),  # another dimension
    ("2 \\text{ km}", "The path is 2000 meters long, i.e. $2000\\,\\text{m}$.", 1.0),
    (
        "2.25 \\text{ hours}",
        "It takes 2 hours 15 minutes to fill the pool.",
        1.0,
    ),  # one quantity in two units
    ("2.25 \\text{ hours}", "It takes 2 hours 25 minutes to fill the pool.", 0.0),
    ("150 \\text{ minutes}", "The whole trip takes 2 h 30 min.", 1.0),
    (
        "180 km",
        "60 km/hr * 3 hours = 180 km. The train travels 180 km at 180 km/hr.",
        1.0,
    ),  # a speed after it
    ("20 \\text{ m}", "It is between 10 m and 20 m.", 0.0),  # two values of what the reference measures
    ("150 \\text{ cm}", "150", 1.0),  # a bare number: read as the number, as before
]


@pytest.mark.parametrize(("reference", "response", "expected"), QUANTITIES)
async def test_a_reference_with_a_unit_is_compared_as_a_quantity(
    math_tool: RewardTool, reference: str, response: str, expected: float
) -> None:
    await assert_scores(math_tool, reference, response, expected)


ANSWERS_IN_SENTENCES = [
    # A precision stated beside the answer is not a second value.
    ("2.24", "So d = √5 ≈ 2.236, which is 2.24 (rounded to 2 d.p.).", 1.0),
    ("2.24", "So d = √5 ≈ 2.236, which is 2.23 (rounded to 2 d.p.).", 0.0),
    ("7.1", "The height is about 7.1 m to one decimal place.", 1.0),
    ("0.67", "It comes to 0.67, correct to 2 significant figures.", 1.0),
    # A check after the answer is not the answer; a check that states an answer of its own is read.
    ("5", "So $y = 5$.\n\nCheck: $3(5) + 1 = 16$ ✓", 1.0),
    ("16", "So $y = 5$.\n\nCheck: $3(5) + 1 = 16$ ✓", 0.0),
    ("9", "So m = 8. Verification: 8 + 3 = 11, not 12. Redoing it, m = 9. Check: 9 + 3 = 12 ✓", 1.0),
    # Scale letters on a number.
    ("4200", "About 4.2k people came.", 1.0),
    ("4200000", "The budget is $4.2M.", 1.0),
    ("4200", "The budget is $4.2M.", 0.0),
    ("300", "It is kept at 300K.", 1.0),  # a capital K is a temperature, not thousands
    # Sizing commands, implication arrows, ordinal suffixes, a pronoun "one".
    ("-7", "Substituting, $g(2) = \\left( -7 \\right)$.", 1.0),
    ("-3", "Since $y < 0$: y^2 = 9 ⇒ y = -3", 1.0),
    ("-3", "Since $y < 0$: y^2 = 9 ⇒ y = 3", 0.0),
    ("#### 36", "6 rows × 6 seats → 36 seats", 1.0),
    ("15", "The $15^{\\text{th}}$ term is the first one above 100.", 1.0),
    # A conditional aside that gives another value is a hedge.
    ("6", "It is the 7th digit (if you count from 0 it would be position 6).", 0.0),
    ("7", "It is the 7th digit (if you count from 0 it would be position 6).", 0.0),
    # A sentence's mathematics after its lead-in.
    ("3\\sqrt{2}", "The side length is √18.", 1.0),
    ("3\\sqrt{2}", "The side length is √19.", 0.0),
    ("x^2 - 4x + 4", "The expansion is x² − 4x + 4.", 1.0),
    ("x^2 - 4x + 4", "The expansion is x² + 4x + 4.", 0.0),
]


@pytest.mark.parametrize(("reference", "response", "expected"), ANSWERS_IN_SENTENCES)
async def test_the_answer_a_sentence_states_is_read_and_what_surrounds_it_is_not(
    math_tool: RewardTool, reference: str, response: str, expected: float
) -> None:
    await assert_scores(math_tool, reference, response, expected)


TRUTH_VALUES = [
    (
        "True",
        "The function is continuous and changes sign, so such a point exists. The claim is true.",
        "ok",
        1.0,
    ),
    ("True", "Some steps hold, but in the end:\n\n**Answer: False**", "ok", 0.0),
    ("False", "No. The series diverges.\n\nAnswer: False", "ok", 1.0),
    ("False", "Yes, it converges.", "ok", 0.0),
    ("True", "It is not true that the map is onto.", "abstain", None),  # a negation: reads two ways
    ("True", "Part (a) is true and part (b) is false.", "abstain", None),
    ("False", "The series diverges.", "ok", 0.0),  # no truth value stated
]


@pytest.mark.parametrize(("reference", "response", "status", "expected"), TRUTH_VALUES)
async def test_a_truth_value_reference_is_compared_with_the_truth_value_stated(
    math_tool: RewardTool, reference: str, response: str, status: str, expected: float | None
) -> None:
    got_status, got, reason = await score(math_tool, reference, response)
    assert (got_status, got) == (status, expected), reason


@pytest.mark.parametrize(("reference", "expected"), [("5", 0.0), ("6", 1.0)])
async def test_a_check_that_changes_the_answer_is_read_as_written(
    math_tool: RewardTool, reference: str, expected: float
) -> None:
    response = "So x = 5.\n\nCheck: 2(5) + 1 = 11, not 13, so actually x = 6."
    await assert_scores(math_tool, reference, response, expected)


# Forms chat models write an answer in, each with a wrong answer of the same form (the fourth blind set's classes).
WRITTEN_FORMS = [
    # HTML character references are their characters; one HTML does not define is not read.
    ("-7", "Solving gives x = &minus;7", 1.0),
    ("7", "Solving gives x = &minus;7", 0.0),
    ("\\frac{1}{2}", "The probability is <strong>&frac12;</strong>.", 1.0),
    # A coefficient is no number of its own: "5x^2y" is not 5.
    ("5x^2y", "The answer is 5.", 0.0),
    ("5x^2y", "$\\frac{10x^3y^2}{2xy} = 5xy^2$", 0.0),
    ("5x^2y", "$\\frac{10x^3y^2}{2xy} = 5x^2y$", 1.0),
    # Numbers inside a power are not values: the power is evaluated.
    ("9", "So the value is 27^(2/3).", 1.0),
    ("27", "So the value is 27^(2/3).", 0.0),
    ("\\frac{1}{27}", "$(\\frac{1}{3})^3 = 3^{-3}$", 1.0),
    ("3", "$(\\frac{1}{3})^3 = 3^{-3}$", 0.0),
    # Therefore signs and LaTeX's \therefore lead to the conclusion.
    ("31", "Apples = 4 × 9 = 36\nEaten = 5\n∴ Apples left = 36 − 5 = 31", 1.0),
    ("36", "Apples = 4 × 9 = 36\nEaten = 5\n∴ Apples left = 36 − 5 = 31", 0.0),
    ("7\\sqrt{3}", "$$\\therefore \\text{height} = 7\\sqrt3$$", 1.0),
    # MathQA's lower-case option letter, named as a choice.
    ("d", "speed = 240 / 8 = 30 km / hr\nanswer : d ) 30", 1.0),
    ("d", "speed = 240 / 8 = 30 km / hr\nanswer : b ) 30", 0.0),
    # Set-builder notation over the reals is its condition.
    ("(4, \\infty)", "The domain is $$\\{x \\in \\mathbb{R} \\mid x > 4\\}$$", 1.0),
    ("[-2,2]", "Domain: $\\{\\,x : -2 \\le x \\le 2\\,\\}$", 1.0),
    ("[-2,2]", "Domain: $\\{x \\mid -2 < x < 2\\}$", 0.0),
    ("\\{x \\mid x \\geq 3\\}", "That is the interval $[3, \\infty)$.", 1.0),
    # Function names without their backslash, Python's ** and nested lists as matrices.
    ("\\frac{1}{2}xy\\cos B", "Value = (1/2)·x·y·cos(B)", 1.0),
    ("-9*x**2 + 2", "$$\\frac{d}{dx}(-3x^3 + 2x) = -9x^2 + 2$$", 1.0),
    ("-9*x**2 + 2", "The derivative is $-9x^2 + 2x$", 0.0),
    ("\\begin{pmatrix} 5 & 6 \\\\ 7 & 8 \\end{pmatrix}", "M = [[5, 6], [7, 8]]", 1.0),
    ("\\begin{pmatrix} 5 & 6 \\\\ 7 & 8 \\end{pmatrix}", "M = [[5, 7], [6, 8]]", 0.0),
    ("\\begin{pmatrix} 2 \\\\ -5 \\end{pmatrix}", "So the vector is [[2], [-5]].", 1.0),
    ("\\begin{pmatrix} 1 & -\\frac{1}{2} \\end{pmatrix}", "B^-1 = [[1, -0.5]]", 1.0),
    # Emphasis around braces.
    ("\\frac{4}{5}", "Therefore the ratio is $\\mathbf{\\frac{4}{5}}$.", 1.0),
    ("\\frac{4}{5}", "Therefore the ratio is $\\mathbf{\\frac{5}{4}}$.", 0.0),
    # A reference rounded to its decimals against an exact form.
    ("1.5708", "The angle is $\\frac{\\pi}{2}$ radians.", 1.0),
    ("1.5708", "The angle is $\\frac{\\pi}{3}$ radians.", 0.0),
    ("2.236", "So the norm is $\\sqrt{5}$.", 1.0),
    ("2", "So the norm is $\\sqrt{5}$.", 0.0),  # no decimals: no rounding
    # Pictographs that decorate are spaces.
    ("9", "Nine friends came. 👉 9 friends! 🎂", 1.0),
    ("8", "Nine friends came. 👉 9 friends! 🎂", 0.0),
    # A list of solutions introduced as such; a list of steps ends with its answer.
    ("2, 7", "The solutions are:\n- $x = 2$\n- $x = 7$", 1.0),
    ("2, 7", "The solutions are:\n- $x = 2$\n- $x = 7$\n- $x = -7$", 0.0),
    ("30", "Steps:\n- 5 boxes\n- 6 each\n- Total: 30 pens", 1.0),
    # Lead-ins: "we get", "so".
    ("(4,-3)", "Substituting back, we get x = 4, y = −3", 1.0),
    ("(4,-3)", "Substituting back, we get y = 4, x = −3", 0.0),
    ("(-\\infty,1)\\cup(5,\\infty)", "It is positive outside its roots, so x < 1 or x > 5", 1.0),
    # An aligned chain ends with its answer.
    (
        "3\\sqrt{2}",
        "\\begin{aligned}\nd &= \\sqrt{3^2 + 3^2} \\\\\n  &= \\sqrt{18} \\\\\n  &= 3\\sqrt{2}\n\\end{aligned}",
        1.0,
    ),
    ("3\\sqrt{2}", "\\begin{aligned}\nd &= \\sqrt{18} \\\\\n  &= 2\\sqrt{3}\n\\end{aligned}", 0.0),
    # Struck-through text is withdrawn; a remark in brackets is no answer.
    ("51", "~~50~~ **51** marbles (I forgot the last 1 marble)", 1.0),
    ("50", "~~50~~ **51** marbles (I forgot the last 1 marble)", 0.0),
    # Units named in other languages; money in words.
    ("3\\text{ hours}", "Total time = 100 + 80 = 180 Minuten.", 1.0),
    ("4\\text{ m}", "The pole is 4 centímetros tall.", 0.0),
    ("3\\text{ kg}", "The mass is 3 gramos.", 0.0),
    ("8.25", "She paid eight dollars and twenty-five cents.", 1.0),
    ("8.25", "She paid eight dollars and five cents.", 0.0),
    ("\\$0.45", "Each pencil costs forty-five cents.", 1.0),
    ("\\$0.45", "Each pencil costs forty-five dollars.", 0.0),
    # A number that multiplies a constant, a root or a variable is no value of its own (these were full marks).
    ("3", "So the area is 3\\pi square units.", 0.0),
    ("3\\pi", "So the area is 3\\pi square units.", 1.0),
    ("4", "x = \\sqrt{4}\\pi", 0.0),
    ("3", "The height is $2\\sqrt{3}$ cm.", 0.0),
    ("2", "The angle is $\\frac{\\pi}{2}$ radians.", 0.0),
    # An angle is what it equals; radians and degrees compared; a vector in a sentence's mathematics.
    ("\\frac{\\pi}{4}", "So the angle is \\theta = 45^\\circ.", 1.0),
    ("\\frac{\\pi}{4}", "So the angle is \\theta = 60^\\circ.", 0.0),
    ("180^\\circ", "Hence $\\angle PQR = \\pi$ radians", 1.0),
    ("\\begin{pmatrix} 5 \\\\ -2 \\end{pmatrix}", "Therefore $u = 5i - 2j$", 1.0),
    ("\\begin{pmatrix} 5 \\\\ -2 \\end{pmatrix}", "Therefore $u = -2i + 5j$", 0.0),
    # CJK punctuation, infinity in words and signs, a point named by its letter or written the French way.
    ("#### 17", "所以答案是 17。", 1.0),
    ("#### 17", "所以答案是 16。", 0.0),
    ("-\\infty", "lim = -infinity", 1.0),
    ("-\\infty", "The limit diverges to positive infinity.", 0.0),
    ("\\infty", "The sum diverges to +∞.", 1.0),
    ("(3, -4)", "The two lines meet at Q(3, −4).", 1.0),
    ("(3, -4)", "Le point d'intersection est (3 ; −4).", 1.0),
    ("(3, -4)", "Le point d'intersection est (−4 ; 3).", 0.0),
    # A restatement in other units; not a comparison nor a price.
    ("#### 150", "It takes 2 hours and 30 minutes, which is 150 minutes in total.", 1.0),
    ("#### 9", "Ann has 9 pears, which is 4 fewer than Bo's 13.", 1.0),
    ("#### 96", "The total is $96, which is the price of 4 tickets at $24 each.", 1.0),
    # Mathematics said in words (these two were full marks against 2 and 4).
    ("5\\sqrt{3}", "The diagonal is five root three.", 1.0),
    ("5", "The diagonal is five root three.", 0.0),
    ("\\frac{\\pi}{6}", "So the angle is pi over six radians.", 1.0),
    ("6", "So the angle is pi over six radians.", 0.0),
    ("y^2-4", "It simplifies to y squared minus four.", 1.0),
    ("y^2+4", "It simplifies to y squared minus four.", 0.0),
    # The answer first, then the working announced as such.
    ("#### 31", "31 cars are left. Here's how: 50 cars came and 19 drove away, so subtract 19 from 50.", 1.0),
    ("#### 19", "31 cars are left. Here's how: 50 cars came and 19 drove away, so subtract 19 from 50.", 0.0),
    # These were full marks: a double negative, a JSON object's other field, a printed list, square feet.
    ("-7", "Simplifying the double negative, the answer is $-(-7)$.", 0.0),
    ("7", "Simplifying the double negative, the answer is $-(-7)$.", 1.0),
    ("3000", '{"total_before": 3000, "spent": 900, "answer": 2100}', 0.0),
    ("2100", '{"total_before": 3000, "spent": 900, "answer": 2100}', 1.0),
    ("6", "```output\n[-2, 6]\n```\nThe solutions are [-2, 6].", 0.0),
    ("81\\text{ square inches}", "The area is 81 sq ft.", 0.0),
    ("81\\text{ square inches}", "The area is 81 square inches.", 1.0),
    # A number followed by a sentence holding other numbers is no single value ("2 of the 3 cases ...").
    ("\\frac{3}{5}", "Three of the five draws are red, so the probability is three-fifths.", 1.0),
    ("3", "Three of the five draws are red, so the probability is three-fifths.", 0.0),
    # Fractions and chances in words.
    ("0.75", "She has eaten three quarters of the cake.", 1.0),
    ("1.5", "The ratio is one and a half.", 1.0),
    ("\\frac{5}{6}", "Each friend gets five eighths of a cake.", 0.0),
    ("\\frac{1}{5}", "Only one of the five keys fits, so there is a 1 in 5 chance.", 1.0),
    ("\\frac{2}{9}", "Of 9 equally likely draws, 2 are blue - 2 out of 9.", 1.0),
    ("3", "She won 3 out of 8 games.", 1.0),
    # Arithmetic left undone is worked out, unless it is the query's own.
    ("#### 61", "So the total number of cards is 7 × 8 + 5.", 1.0),
    ("#### 61", "So the total number of cards is 7 × 8 + 6.", 0.0),
    ("\\frac{2}{5}", "P = 2 ÷ 5", 1.0),
    # Roman numerals of two letters or more.
    ("14", "Subtracting, the answer is XIV.", 1.0),
    ("14", "Subtracting, the answer is XVI.", 0.0),
    ("90", "The number of the missing page is **XC**.", 1.0),
    ("\\text{XIX}", "So the chapter we want is number 19.", 1.0),
    ("\\text{XIX}", "So the chapter we want is number 21.", 0.0),
    # SI prefixes on derived units, LaTeX unit signs, scientific notation in a quantity reference.
    ("3300~\\Omega", "Using $R = V/I$: $R = 3.3\\,\\mathrm{k\\Omega}$", 1.0),
    ("3300~\\Omega", "Using $R = V/I$: $R = 3.3\\,\\mathrm{M\\Omega}$", 0.0),
    ("4.7 \\times 10^{-6}\\text{ F}", "The capacitance is C = 4.7 μF.", 1.0),
    ("4.7 \\times 10^{-6}\\text{ F}", "The capacitance is C = 4.7 nF.", 0.0),
    ("2 \\times 10^{8}\\ \\mathrm{Hz}", "Final Answer: The final answer is 200 MHz.", 1.0),
    # Numbers as code prints them; a bare pi; function names; the imaginary unit's forms; the empty set.
    ("\\frac{2}{7}", "The probability is Rational(2, 7).", 1.0),
    ("\\frac{2}{7}", "The probability is Rational(7, 2).", 0.0),
    ("\\frac{\\pi}{6}", "The area of the region is pi/6.", 1.0),
    ("3\\sqrt{3}", "Simplifying by hand, the distance is `sqrt(3)**3`.", 1.0),
    ("e^{3}", "The exponent tends to 3, so the limit is exp(3).", 1.0),
    ("e^{3}", "The exponent tends to 3, so the limit is exp(2).", 0.0),
    ("5-2i", "The impedance is Z = 5 - 2j.", 1.0),
    ("5-2i", "The impedance is Z = 5 + 2j.", 0.0),
    ("3i", "$\\boxed{3\\sqrt{-1}}$", 1.0),
    ("\\emptyset", "Both cases contradict, so $\\boxed{\\varnothing}$.", 1.0),
    ("\\emptyset", "Squaring gives a contradiction. **No solution.**", 1.0),
    ("\\{2\\}", "Squaring gives a contradiction. **No solution.**", 0.0),
    # Chinese exam phrasing chooses the option.
    ("B", "当 x=0 时 f(0)=1，排除 A；C 中 f(0)=0，排除 C。\n故选：B．", 1.0),
    ("C", "当 x=0 时 f(0)=1，排除 A；C 中 f(0)=0，排除 C。\n故选：B．", 0.0),
    ("D", "【答案】D", 1.0),
    # A later answer on the same line is the answer; answers that go back and forth are a loop.
    ("8", "So the answer is 9. Wait, I misread it. So the answer is 8.", 1.0),
    ("9", "So the answer is 9. Wait, I misread it. So the answer is 8.", 0.0),
    (
        "4",
        "So the answer is 4. Wait, check again. So the answer is 5. Wait, check again. So the answer is 4.",
        0.0,
    ),
    ("0.\\overline{3}", "The answer is 0.333...", 1.0),
    # What comes after the generation should have ended is not the answer.
    ("#### 12", "He has 7 + 5 = 12 apples.\nThe answer is 12.<|im_end|>\nThe answer is 13.", 0.0),
    ("#### 12", "He has 7 + 5 = 12 apples.\nThe answer is 12.<|im_end|>\nYes, 12 apples.", 1.0),
    (
        "#### 30",
        "He has 20 + 5 = 25 cows.\nThe answer is 25.\n\nQuestion: Tim has 40 and loses 10?\nAnswer: 30.",
        0.0,
    ),
    (
        "#### 25",
        "He has 20 + 5 = 25 cows.\nThe answer is 25.\n\nQuestion: Tim has 40 and loses 10?\nAnswer: 30.",
        1.0,
    ),
    # Per mille, a cancelled value, ± against one value, a mixed number with a fraction slash.
    ("30\\%", "12 ÷ 40 = 0.3, so 12 is 30 per mille of 40.", 0.0),
    ("3\\%", "12 ÷ 400 = 0.03, so 12 is 30 per mille of 400.", 1.0),
    ("14", "Wait, I misread: $x = \\cancel{14}\\ 17$", 0.0),
    ("17", "Wait, I misread: $x = \\cancel{14}\\ 17$", 1.0),
    ("5", "x² = 25 has two solutions, so x = ±5.", 0.0),
    ("\\frac{15}{2}", "Final answer: x = 1 1⁄2", 0.0),
    ("\\frac{3}{2}", "Final answer: x = 1 1⁄2", 1.0),
    # Temperatures on different scales.
    ("30^\\circ\\text{C}", "Answer: 30 °F", 0.0),
    ("30^\\circ\\text{C}", "Answer: 86 °F", 1.0),
    ("30^\\circ\\text{C}", "The temperature is 30 °C.", 1.0),
    # Option letters in brackets and after "option:"; several correct options as a set.
    ("D", "So the train runs at 54 km/hr.\n\nCorrect option: D)", 1.0),
    ("c", "the answer is option ( c )", 1.0),
    ("B", "**Answer: [B]**", 1.0),
    ("AC", "A: true. B: false. C: true. D: false.\nTherefore the correct statements are A and C.", 1.0),
    ("AC", "A: true. B: false. C: true. D: true.\nTherefore the correct statements are A, C and D.", 0.0),
    ("BCD", "故选：B、C、D", 1.0),
    ("AD", "Answer: D, A", 1.0),
    ("AD", "Answer: A", 0.0),
    # Options the response copies out: the value stated chooses one.
    ("B", "Options: A) 10 km/h B) 12 km/h C) 14 km/h\nSpeed = 60 / 5 = 12\nThe answer is 12 km/h.", 1.0),
    ("d", "options : a ) 120 , b ) 150 , c ) 180 , d ) 200\nsum = 40 * 5 = 200\nso the total is 200 .", 1.0),
    ("d", "options : a ) 120 , b ) 150 , c ) 180 , d ) 200\nsum = 30 * 5 = 150\nso the total is 150 .", 0.0),
    # Decimals said digit by digit, old counting words, a Hindi full stop, a boxed factorial, a check mark.
    ("0.75", "The probability is zero point seven five.", 1.0),
    ("0.12", "The probability is zero point seven five.", 0.0),
    ("#### 24", "8 × 3 = 24. That's two dozen cupcakes.", 1.0),
    ("87", "Grandpa is four score and seven years old.", 1.0),
    ("12", "She bought a baker's dozen.", 0.0),
    ("#### 90", "दूरी = 45 × 2 = 90 किलोमीटर। अतः उत्तर 90 है।", 1.0),
    ("6", "The arrangements are all permutations of 3 letters: $\\boxed{3!}$", 1.0),
    ("3", "The arrangements are all permutations of 3 letters: $\\boxed{3!}$", 0.0),
    ("7", "$x = 12 - 5$\n$\\textcolor{green}{x = 7}$ ✓", 1.0),
    ("-4", "⌊−3.5⌋ = −4", 1.0),
    ("\\frac{3}{4}", "$1 - {1 \\over 4} = {3 \\over 4}$", 1.0),
    ("\\frac{1}{2}", "$\\frac{7}{14} = \\nicefrac{1}{2}$", 1.0),
    ("-2", "Final answer: [[-2]]", 1.0),
    ("-4", "Minimum value: -4 (at x = 2)", 1.0),
    # Units written as compounds, in brackets (ASDiv), with feet and inches primes.
    ("2300 (grams)", "Total = 2300 g = 2 kg 300 g\nAnswer: 2 kg 300 g", 1.0),
    ("52 (ounces)", "The puppy now weighs 3 lb 4 oz.", 1.0),
    ("52 (ounces)", "The puppy now weighs 3 lb 2 oz.", 0.0),
    ("70\\text{ inches}", "Jake is now 5′10″.", 1.0),
    # What follows the end of the turn: not read, but a different answer there is a second reading.
    (
        "6",
        "<|assistant|>\n10 - 4 = 6\nShe has 6 left.<|eot_id|><|start_header_id|>user<|end_header_id|>\nthanks",
        1.0,
    ),
    ("4", "From x^2 = 16, x = 4.<|im_end|>\n<|im_start|>assistant\nCorrection: x = -4.<|im_end|>", 0.0),
    # Chinese numerals: 十五, 三千, 一百零八, 四分之三, 二点五, 负七; "一共" (altogether) is no 1.
    ("15", "小红原来有八本书，又买了七本。答：小红一共有十五本书。", 1.0),
    ("16", "小红原来有八本书，又买了七本。答：小红一共有十五本书。", 0.0),
    ("\\frac{3}{4}", "平均分成四份，涂了三份，所以涂色部分占整体的四分之三。", 1.0),
    ("\\frac{4}{3}", "平均分成四份，涂了三份，所以涂色部分占整体的四分之三。", 0.0),
    ("3000", "答：还剩三千元。", 1.0),
    ("108", "答：一共有一百零八本书。", 1.0),
    ("2.5", "答：每人分到二点五米。", 1.0),
    ("-7", "答：温度是负七度。", 1.0),
    # Thousands grouped as other regions write them; in English a dot stays a decimal point.
    ("250000", "So the family pays ₹2,50,000.", 1.0),
    ("2500", "Die Antwort lautet 2.500 €.", 1.0),
    ("2.5", "The answer is 2.500 metres.", 1.0),
    ("7500", "So the account holds CHF 7'500.", 1.0),
    ("7500", "So the account holds CHF 7'050.", 0.0),
    # Antiderivatives up to a constant; days and months by name; a loss for a negative reference.
    ("\\frac{x^4}{4} + C", "$$\\int x^3\\,dx = \\frac{1}{4}x^4 + K$$", 1.0),
    ("\\frac{x^4}{4} + C", "$$\\int x^3\\,dx = \\frac{1}{4}x^4 + x + K$$", 0.0),
    ("\\ln|x| + C", "Substituting $u = 3x$, we get $\\ln|3x| + C$.", 1.0),
    ("\\text{Friday}", "Counting three days forward from Tuesday we land on Fri.", 1.0),
    ("\\text{Friday}", "Counting three days forward from Tuesday we land on Thu.", 0.0),
    ("\\text{May}", "It happens in month 5, which is May.", 1.0),
    ("-80", "She took in $120 and spent $200, so overall she has a loss of $80.", 1.0),
    ("80", "She took in $120 and spent $200, so overall she has a loss of $80.", 1.0),
    ("-80", "She took in $200 and spent $120, so overall she made a profit of $80.", 0.0),
]


@pytest.mark.parametrize(("reference", "response", "expected"), WRITTEN_FORMS)
async def test_answers_written_in_the_forms_chat_models_use(
    math_tool: RewardTool, reference: str, response: str, expected: float
) -> None:
    await assert_scores(math_tool, reference, response, expected)


@pytest.mark.parametrize(
    ("reference", "response", "reason"),
    [
        (
            "5\\text{ m}",
            "Длина 5 метров",
            "метров",
        ),  # a unit word no table reads: the number alone is not compared
        ("42", "The answer is 4&bogus;2", "U+FFFD"),  # a character reference HTML does not define
        ("42", "The answer is 42 ❌", "U+274C"),  # a mark that says something about the answer
        ("#### 45", "9 × 5 = 45, so she spends 45¢.", "names no unit"),  # 45 cents, or the 45 dollars asked?
    ],
)
async def test_what_is_not_read_in_a_written_form_abstains(
    math_tool: RewardTool, reference: str, response: str, reason: str
) -> None:
    status, _, why = await score(math_tool, reference, response)
    assert status == "abstain" and reason in why, why


# Fourth round of issue 39: each class read both ways, a right answer in the form and a wrong one of the same form.
LAYOUTS_AND_FAMILIES = [
    # French interval brackets
    ("(1,4)", "L'ensemble des solutions est $S = ]1\\,;4[$.", 1.0),
    ("(1,4)", "L'ensemble des solutions est $S = ]1\\,;4]$.", 0.0),
    ("[0, 2)", "Donc $x \\in [0 ; 2[$ (fermé en $0$).", 1.0),
    ("[0, 2)", "Donc $x \\in ]0 ; 2[$.", 0.0),
    # no solution / the empty set, and "does not exist"
    ("\\emptyset", "Both conditions cannot hold at once, so there are no real solutions.", 1.0),
    ("\\text{no solution}", "The solution set is $\\varnothing$.", 1.0),
    ("\\text{no solution}", "Solving gives $x = 0$.", 0.0),
    ("\\emptyset", "The intersection is $\\{0\\}$.", 0.0),
    ("\\text{DNE}", "The left and right limits differ, so the limit doesn't exist.", 1.0),
    ("\\text{DNE}", "The limit is $1$.", 0.0),
    ("0", "The limit does not exist.", 0.0),
    # multiplicities and repeated roots
    ("-2, 5", "The roots are $x = -2$ (a double root) and $x = 5$.", 1.0),
    ("-2, 5", "The roots are $x = 2$ (a double root) and $x = 5$.", 0.0),
    ("x=4", "**Solution:** $x = 4, 4$ (repeated root).", 1.0),
    ("x=4", "**Solution:** $x = 4, 4, 1$.", 0.0),
    # program output: Wolfram Language, Python number types, printed output
    ("\\frac{\\sqrt{3}}{2}", "```\nIn[1]:= Sin[Pi/3]\nOut[1]= Sqrt[3]/2\n```", 1.0),
    ("\\frac{\\sqrt{3}}{2}", "```\nIn[1]:= Cos[Pi/3]\nOut[1]= 1/2\n```", 0.0),
    ("2, -5", "```\n{{x -> -5}, {x -> 2}}\n```", 1.0),
    ("2, -5", "```\n{{x -> 5}, {x -> 2}}\n```", 0.0),
    ("\\frac{5}{6}", "The result is `Fraction(5, 6)`.", 1.0),
    ("\\frac{5}{6}", "The result is `Fraction(6, 5)`.", 0.0),
    ("3.75", "It prints `Decimal('3.750')`.", 1.0),
    ("12", "```python\nprint(3 * 4)\n```\nOutput:\n```\n12\n```", 1.0),
    ("12", "```python\nanswer = 3 * 4\nprint(answer + 1)\n```\nOutput:\n```\n13\n```", 0.0),
    # LaTeX escaped twice, proof end marks, notes after the answer
    ("\\frac{2}{3}", "So \\\\(x = \\\\frac{2}{3}\\\\).", 1.0),
    ("\\frac{2}{3}", "So \\\\(x = \\\\frac{3}{2}\\\\).", 0.0),
    ("7", "Hence $k = 7$. $\\blacksquare$", 1.0),
    ("7", "Hence $k = 8$. ∎", 0.0),
    ("5", "The maximum is $5$.\n\n(Note: some texts claim $4$, but that bound is not sharp.)", 1.0),
    ("4", "The maximum is $5$.\n\n(Note: some texts claim $4$, but that bound is not sharp.)", 0.0),
    ("5", "The maximum is $5$.\n\nNote: actually I made a mistake above; the maximum is $4$.", 0.0),
    # scale words of other number systems
    ("2500000", "The total is ₹25 lakh.", 1.0),
    ("2500000", "The total is ₹2.5 lakh.", 0.0),
    ("50000", "答：一共卖出5万张票。", 1.0),
    ("50000", "答：一共卖出5千张票。", 0.0),
    ("2.4", "答：两地相距2.4千米。", 1.0),
    ("18", "答：一共要18角。", None),  # 18 jiao (1.8 yuan), or the 18 yuan asked? The reference names no unit
    # stacked fractions, table rows, radicals and inverse functions
    ("\\frac{5}{8}", "```\n    5\nx = ---\n    8\n```", 1.0),
    ("\\frac{5}{8}", "```\n    8\nx = ---\n    5\n```", 0.0),
    ("\\frac{1}{4}", "$$\\begin{array}{l|l} \\text{ways} & 9 \\\\ P & \\tfrac{1}{4} \\end{array}$$", 1.0),
    ("\\frac{\\sqrt{3}}{3}", "$$\\tfrac{1}{\\sqrt 3}.$$", 1.0),
    ("\\frac{\\sqrt{3}}{3}", "$$\\tfrac{1}{\\sqrt 2}.$$", 0.0),
    ("\\arctan(3)", "So $\\theta = \\tan^{-1} 3$.", 1.0),
    ("\\arctan(3)", "So $\\theta = \\tan^{-1} 2$.", 0.0),
    ("\\begin{pmatrix} 2 \\\\ -3 \\end{pmatrix}", "The answer is $2\\hat\\imath - 3\\hat\\jmath$.", 1.0),
    ("\\begin{pmatrix} 2 \\\\ -3 \\end{pmatrix}", "The answer is $3\\hat\\imath - 2\\hat\\jmath$.", 0.0),
    # words for values, and a unit of the wrong dimension
    ("0", "No pair works, so the answer is **none**.", 1.0),
    ("1", "Apart from the trivial pair there are none. The answer is: none.", 0.0),
    ("\\frac{1}{2}", "**Answer:** The new volume is half the original.", 1.0),
    ("3", "So the tank fills twice as fast.", 0.0),
    ("64", "The cube's volume is $4^3 = 64$.\n\n**Answer:** 64 square units", 0.0),
    ("64", "The cube's volume is $4^3 = 64$.\n\n**Answer:** 64 cubic units", 1.0),
    # families of solutions over an integer parameter
    (
        "x = \\frac{\\pi}{3} + k\\pi, k \\in \\mathbb{Z}",
        "So $x = \\frac{\\pi}{3} + m\\pi$, $m \\in \\mathbb{Z}$.",
        1.0,
    ),
    (
        "x = \\frac{\\pi}{3} + k\\pi, k \\in \\mathbb{Z}",
        "So $x = \\frac{\\pi}{3} + 2m\\pi$, $m \\in \\mathbb{Z}$.",
        0.0,
    ),
    ("x = \\frac{\\pi}{3} + k\\pi, k \\in \\mathbb{Z}", "So $x = \\frac{\\pi}{3}$.", 0.0),
    (
        "\\frac{\\pi}{4} + 2k\\pi, \\frac{3\\pi}{4} + 2k\\pi",
        "$$x = (-1)^n\\frac{\\pi}{4} + n\\pi,\\quad n \\in \\mathbb{Z}$$",
        1.0,
    ),
    (
        "\\frac{\\pi}{4} + 2k\\pi, \\frac{3\\pi}{4} + 2k\\pi",
        "$$x = \\pm\\frac{\\pi}{4} + 2n\\pi,\\quad n \\in \\mathbb{Z}$$",
        0.0,
    ),
    ("x = k\\pi + \\frac{\\pi}{2}", "We get $x = \\frac{(2n+1)\\pi}{2}$ for any integer $n$.", 1.0),
    # general solutions of differential equations, constants renamed
    ("y = Ce^{3x}", "Separating variables,\n$$y = Be^{3x},$$\nwhere $B$ is an arbitrary constant.", 1.0),
    ("y = Ce^{3x}", "Separating variables, $y = e^{3x} + B$.", 0.0),
    ("y = C_1 e^{2x} + C_2 e^{-2x}", "So $y = p\\cosh 2x + q\\sinh 2x$.", 1.0),
    ("y = C_1 e^{2x} + C_2 e^{-2x}", "So $y = p\\cos 2x + q\\sin 2x$.", 0.0),
    ("y = Ce^{-x} + x - 1", "**General solution:** $y = x - 1 + \\dfrac{D}{e^{x}}$", 1.0),
    ("y = Ce^{-x} + x - 1", "**General solution:** $y = x + 1 + \\dfrac{D}{e^{x}}$", 0.0),
]


@pytest.mark.parametrize(("reference", "response", "expected"), LAYOUTS_AND_FAMILIES)
async def test_layouts_outputs_and_families_of_solutions(
    math_tool: RewardTool, reference: str, response: str, expected: float | None
) -> None:
    await assert_scores_or_abstains(math_tool, reference, response, expected)


@pytest.mark.parametrize(
    ("reference", "response", "expected"),
    [
        ("①③", "① 正确；② 错误；③ 正确；④ 错误。\n所以正确的是①③。", 1.0),
        ("①③", "① 正确；② 错误；③ 正确；④ 正确。\n所以正确的是①③④。", 0.0),
        ("②④", "Statements (2) and (4) are correct.", 1.0),
        ("②④", "Statements (2) and (3) are correct.", 0.0),
        ("②", "故答案为：②", 1.0),
    ],
)
async def test_numbered_statements_are_chosen_as_a_set(
    math_tool: RewardTool, reference: str, response: str, expected: float
) -> None:
    await assert_scores(math_tool, reference, response, expected)


@pytest.mark.parametrize(
    ("reference", "response", "expected"),
    [
        ("\\text{May 9}", "Counting forward 128 days lands on 2023-05-09.", 1.0),
        ("\\text{May 9}", "Counting forward 128 days lands on 2023-05-10.", 0.0),
        ("\\text{March 14}", "Le jour cherché est le 14/03/2024.", 1.0),  # day/month: 3/14 reads no other way
        ("\\text{March 14}", "Le jour cherché est le 15/03/2024.", 0.0),
        ("\\text{March 2}", "Der gesuchte Tag ist der 2. März (02.03.2024).", 1.0),
        ("\\text{March 2}", "Der gesuchte Tag ist der 3. März (03.03.2024).", 0.0),
        ("\\text{August 15}", "El día es el 15 de agosto.", 1.0),
        ("\\text{August 15}", "El día es el 16 de agosto.", 0.0),
        ("\\text{Sunday}", "Der 1. Mai fällt auf einen Sonntag.", 1.0),
        ("\\text{Sunday}", "Le 1er mai tombe un lundi.", 0.0),
        ("x = 3\\sqrt{2}", "Taking square roots of both sides, x = √18.", 1.0),
        ("x = 3\\sqrt{2}", "Taking square roots of both sides, x = √12.", 0.0),
    ],
)
async def test_dates_in_numeric_and_foreign_forms_and_answers_after_a_clause(
    math_tool: RewardTool, reference: str, response: str, expected: float
) -> None:
    await assert_scores(math_tool, reference, response, expected)


async def test_a_slashed_date_that_reads_both_ways_abstains(math_tool: RewardTool) -> None:
    status, _, why = await score(math_tool, "\\text{March 4}", "The date is 3/4/2024.")  # March 4 or April 3
    assert status == "abstain" and "day/month" in why, why


@pytest.mark.parametrize(
    ("response", "expected"), [("It takes **42 seconds**.", 1.0), ("It takes 40 seconds.", 0.0)]
)
async def test_a_worked_reference_without_a_marker_is_read_at_its_stated_answer(
    math_tool: RewardTool, response: str, expected: float
) -> None:
    reference = (
        "Speed = 120 / 12 = 10 m/s.\nDistance = 120 + 300 = 420 m.\n"
        "Time = 420 / 10 = 42 s.\nSo it takes 42 seconds."
    )
    await assert_scores(math_tool, reference, response, expected)


# Markup and layouts a model writes for a renderer, the parts of a question answered in order, a domain said after
# an expression, and matter after the answer that is not the answer (examples of our own, one per way it can go).
MARKUP_PARTS_AND_TRAILING_MATTER = [
    # MathML and Typst
    ("\\frac{2}{5}", "In MathML:\n<math><mfrac><mn>2</mn><mn>5</mn></mfrac></math>", 1.0),
    ("\\frac{2}{5}", "<math><mfrac><mn>5</mn><mn>2</mn></mfrac></math>", 0.0),
    ("3\\sqrt{5}", '<math display="inline"><mn>3</mn><msqrt><mn>5</mn></msqrt></math>', 1.0),
    ("\\sqrt[4]{3}", "So $ x = root(4, 3) $", 1.0),
    ("\\sqrt[4]{3}", "So $ x = root(3, 4) $", 0.0),
    ("\\frac{5}{9}", "The probability is $ frac(5, 9) $.", 1.0),
    # Julia rationals only where Julia is shown; Python's // is floor division
    ("\\frac{5}{6}", "```julia\njulia> 1//2 + 1//3\n5//6\n```", 1.0),
    ("\\frac{7}{2}", "```python\n>>> 7//2\n3\n```\nThe result is 3.", 0.0),
    # digit-group underscores, frames, spoilers
    ("3600000", "```python\nprint(f'{3_600_000:_}')\n```\nOutput: 3_600_000", 1.0),
    ("3600000", "The total is 360_000.", 0.0),
    ("15", "┌────────────┐\n│  Answer: 15 │\n└────────────┘", 1.0),
    ("15", "╔══════╗\n║ x = 51 ║\n╚══════╝", 0.0),
    ("81", "There are 3⁴ outcomes.\n\nAnswer: >!81!<", 1.0),
    # footnotes and sources after the answer
    ("24", "She reads **24 pages**.[^a]\n\n[^a]: Counting 3 pages for each of the 8 days.", 1.0),
    ("24", "She reads **25 pages**.[^a]\n\n[^a]: Counting 3 pages for each of the 8 days, 24 in all.", 0.0),
    ("8", "An octagon has 8 sides [1].\n\nSources:\n[1] Geometry for Everyone, p. 12", 1.0),
    ("6", "**y = 6**²\n\n---\n² Check: 3 · 6 = 18 ✓", 1.0),
    # sign-offs, counterfactual asides, proofs, checks phrased as an invitation
    ("14", "So 14 birds are left.\n\nLet me know if you'd like 2 or 3 more examples like this!", 1.0),
    ("14", "So 41 birds are left.\n\nLet me know if you'd like 14 more examples!", 0.0),
    (
        "B",
        "Counting from 1, it is option B.\n\n(If counting started at 0 it would be 7, option D.)\n\nAnswer: B",
        1.0,
    ),
    ("B", "It is option B, or maybe option D.", 0.0),
    (
        "5",
        "**Claim.** The least such n is $n = 5$.\n\n**Proof.** For n = 1, 2, 3, 4 the sums are 1, 3, 6, 10."
        " $\\blacksquare$",
        1.0,
    ),
    ("5", "**Claim.** The least such n is $n = 4$.\n\n**Proof.** For n = 5 the sum is 15, and so on. ∎", 0.0),
    ("9", "So x = 9.\n\nYou can check it: 2(9) + 1 = 19 ✓", 1.0),
    # the same value in two forms is one answer; two values are a hedge
    ("\\frac{1}{4}", "The probability is 0.25 or 25%.", 1.0),
    ("\\frac{1}{4}", "The probability is 0.25 or 0.5.", 0.0),
    # a spreadsheet cell is not an option letter
    ("350", "B7 evaluates to **$350.00**, the total cost.", 1.0),
    # an arrow before the option chosen
    ("D", "~~A) 1~~ ~~B) 2~~ ~~C) 3~~ → **D) 4**", 1.0),
    # the parts of a question, in order
    (
        "$4$, $9$",
        "(a) The least value is 4.\n(b) The greatest is 9.\n\nSo the answers are (a) $4$ and (b) $9$.",
        1.0,
    ),
    ("$4$, $9$", "**Answers:** (a) $9$, (b) $4$", 0.0),
    ("12, 35", "Answers: (i) 12 cm, (ii) 35 cm²", 1.0),
    ("$3$, $-2$", "Answer: a) $p = 3$; b) $q = -2$.", 1.0),
    ("$3$, $-2$", "Answer: a) $p = 3$; b) $q = 2$.", 0.0),
    # a domain said after an expression; a condition after a relation is part of the answer
    ("x - 3", "Simplified: $x - 3$ (for $x \\neq -3$)", 1.0),
    ("x - 3", "Simplified: $x + 3$ (for $x \\neq 3$)", 0.0),
    (
        "\\frac{x+1}{x-2}",
        "$$\\frac{(x+1)(x+5)}{(x-2)(x+5)} = \\frac{x+1}{x-2}, \\qquad x \\neq 2,\\ -5$$",
        1.0,
    ),
    ("x^2 - 3", "$$g^{-1}(x) = x^2 - 3, \\quad x \\geq 0$$", 1.0),
    ("x < 4", "The solution is $x < 4, x \\neq 1$.", 0.0),
    # quadrant bearings, discounts and rates in tenths
    ("\\text{N}30^\\circ\\text{W}", "The bearing is 330°.", 1.0),
    ("\\text{N}30^\\circ\\text{W}", "The bearing is 30°.", 0.0),
    ("135^\\circ", "So the ship sails S 45° E.", 1.0),
    ("80\\%", "答：商品打了八折。", 1.0),
    ("80\\%", "答：商品打了七折。", 0.0),
    ("0.275", "打率は2割7分5厘です。", 1.0),
]


@pytest.mark.parametrize(("reference", "response", "expected"), MARKUP_PARTS_AND_TRAILING_MATTER)
async def test_markup_parts_domains_and_matter_after_the_answer(
    math_tool: RewardTool, reference: str, response: str, expected: float
) -> None:
    await assert_scores(math_tool, reference, response, expected)


# Wrong answers that a lenient reader would take for right ones (examples of our own for each way it can happen),
# beside a right answer of the same form.
WRONG_ANSWERS_THAT_LOOK_RIGHT = [
    # the reference's value only in a check of the answer, however the check is introduced
    (
        "-3",
        "So $k = -\\frac13$.\n\nCheck with the other order: $\\frac{3}{-1} = -3$, negative either way ✓",
        0.0,
    ),
    ("-3", "So $k = -3$.\n\nCheck by substituting back: $2(-3) + 6 = 0$ ✓", 1.0),
    # a sign in a group of its own is kept
    ("7", "Hence $y = \\mathord{-}\\,7$.", 0.0),
    ("-7", "So $y = \\boxed{\\color{red}{-}7}$.", 1.0),
    # a percent below 1 against the same bare number: 0.3% is not a probability of 0.3
    ("0.3", "The probability is 0.3%.", 0.0),
    ("0.3", "The probability is 30%.", 1.0),
    ("45", "The answer is 45%.", 1.0),
    # an aside in brackets after the answer is working, not the answer
    ("3^x", "$x^3$ (check: at $x = 3$ both give 27, the same as $3^x$)", 0.0),
    ("(x-2)^2", "$x^2 - 4x + 4$ (at $x = 2$ both give 0)", 1.0),
    ("(x-4)(x+4)", "It factors as (x-4)(x+4)", 1.0),
    # an operation on a number is not the number
    ("\\frac{4}{5}", "It is the reciprocal of 4/5.", None),
    ("12", "Row 12 is the first row that holds a multiple of 7.", 1.0),
    # "1,500" in a language that writes a decimal comma reads two ways
    ("1500", "Die Antwort ist 1,500.", None),
    ("1500", "The answer is 1,500.", 1.0),
]


@pytest.mark.parametrize(("reference", "response", "expected"), WRONG_ANSWERS_THAT_LOOK_RIGHT)
async def test_wrong_answers_that_look_right_get_no_marks(
    math_tool: RewardTool, reference: str, response: str, expected: float | None
) -> None:
    await assert_scores_or_abstains(math_tool, reference, response, expected)


# A number read from a sentence with another role, a point, sizes, characters with two readings: what is not the
# answer is never scored as it, and what reads two ways abstains.
ROLES_SIZES_AND_TWO_READINGS = [
    # a condition on a variable gives its number, it does not state the answer
    ("6", "The area is 6 when w = 3.", 1.0),
    ("3", "The area is 6 when w = 3.", None),  # the question may ask for w
    ("9", "As $n \\to \\infty$, the sequence tends to 9.", 1.0),
    ("4", "So $g(t) \\to 9$ as $t \\to 4$.", None),
    ("9", "So $g(t) \\to 9$ as $t \\to 4$.", 1.0),
    ("11", "For k = 2 the total is 11.", 1.0),
    # a point against one number: an intercept named by its axis, else two readings
    ("-7", "So the graph meets the y-axis at (0, -7).", 1.0),
    ("5", "The x-intercept is $(5, 0)$.", 1.0),
    ("0", "The x-intercept is $(5, 0)$.", 0.0),
    ("-2", "The centre of the circle is (4, -2).", None),
    ("1200", "Total attendance: (1,200).", 1.0),  # a number with a thousands comma, not a point
    # sizes: a product of bare numbers as a reference
    ("4 \\times 5", "The product $AB$ is a $5 \\times 4$ matrix.", 0.0),
    ("4 \\times 5", "So $AB$ is 4-by-5.", 1.0),
    ("4 \\times 5", "It has 20 entries.", None),
    ("9 \\text{ m} \\times 2 \\text{ m}", "The patio is 2 m by 9 m.", 1.0),
    ("9 \\text{ m} \\times 2 \\text{ m}", "The patio is 3 m by 6 m.", 0.0),
    ("2 \\times 10^{5}", "200000", 1.0),  # scientific notation is a number
    # a unit in brackets after the quantity's name
    ("20 \\mathrm{~m/s}", "a = g sin θ\n\nv [km/h] = 20", 0.0),
    ("2500 \\mathrm{~W}", "P [kW] = 2.5", 1.0),
    # keycap digits, digits under a combining overline, a combining mark on a digit
    ("31", "Total: 3️⃣1️⃣ stickers 🎉", 1.0),
    ("1", "Total: 3️⃣1️⃣ stickers 🎉", 0.0),
    ("\\frac{2}{3}", "x = 0.6̅", 1.0),
    ("7", "x = 7̶ 9", None),
    # a middle dot between digits: a decimal point or a product; both readings must agree
    ("0.8", "P = 1 − 0·2 = 0·8", 1.0),
    ("0", "P = 1 − 0·2 = 0·8", 0.0),
    ("4.25", "Each costs £17 ÷ 4 = £4·25.", 1.0),
    ("17.5", "Average = 70 ÷ 4 = 17·5 kg", None),
    ("10", "2·5 = 10", 1.0),
    ("3 \\times 10^{8}", "c ≈ 3.00·10⁸ m/s", 1.0),
    # notes set under or over a term
    (
        "36",
        "$$T = \\underbrace{6 + 6 + 6}_{3 \\text{ rows}} \\cdot 2 = \\underbrace{36}_{\\text{seats}}$$",
        1.0,
    ),
    (
        "3",
        "$$T = \\underbrace{6 + 6 + 6}_{3 \\text{ rows}} \\cdot 2 = \\underbrace{36}_{\\text{seats}}$$",
        0.0,
    ),
    # a brace or a dollar sign not closed
    ("\\frac{3}{4}", "So the answer is $\\boxed{\\frac{3}{4}$.", 1.0),
    ("(5, -3)", "The solution is $(5, -3).", 1.0),
    ("12.50", "The total cost is $\\boxed{\\$12.50}$.", 1.0),
    # a condition on one variable after words, and a remark in brackets after it
    ("(-\\infty, 1) \\cup (5, \\infty)", "The quadratic is positive for x < 1 or x > 5.", 1.0),
    ("(-\\infty, 1) \\cup (5, \\infty)", "The quadratic is positive for x < -1 or x > 5.", 0.0),
    ("[0, 3)", "So 0 ≤ x < 3 (x = 3 would make the denominator zero).", 1.0),
    ("(2, 6)", "It is negative exactly when 2 < x < 6.", 1.0),
    # fractions said denominator first (Japanese, Korean), per mille
    ("\\frac{3}{7}", "答え：7分の3", 1.0),
    ("\\frac{7}{3}", "答え：7分の3", 0.0),
    ("\\frac{4}{9}", "따라서 확률은 9분의 4입니다.", 1.0),
    ("1.5\\%", "答：比例是 15‰。", 1.0),
    # assignment arrows
    ("42", "Answer: total ← 42", 1.0),
    ("8", "Then `k ≔ 8`.", 1.0),
    # the reference's number as a strict bound, an end of a range, or one of several unknowns: not the answer
    ("4", "Fewer than 4 seats are left.", None),
    ("4", "x < 4", None),
    ("12", "y ≥ 12", None),
    ("14", "Prices run from 9 to 14 dollars.", None),
    ("8", "So a = 5 and b = 8.", None),
    ("6", "You need at least 6 buses.", 1.0),  # the least number needed is a value
    ("12", "Her score rose from 8 to 12.", 1.0),  # a change told: the new value
    ("8", "Her score rose from 8 to 12.", 0.0),
    ("26", "She has 6 more than 20, so 26.", 1.0),  # a bound in the working, not on the answer's number
    ("\\frac{1}{2}", '<speak>It is <say-as interpret-as="fraction">1/2</say-as>.</speak>', 1.0),
    # a quantity in several units against a bare number: its total in one of them, never its last part
    ("45", "It takes 2 hours 45 minutes.", 0.0),
    ("165", "It takes 2 hours 45 minutes.", 1.0),
    ("2.75", "It takes 2 hours and 45 minutes.", 1.0),
    ("7", "The shelf is 3 feet 7 inches long.", 0.0),
    ("43", "The shelf is 3 feet 7 inches long.", 1.0),
    ("12", "He earns $12 per hour.", 1.0),
    # a program's printout of a double
    ("\\frac{2}{3}", "print(2/3) shows 0.6666666666666666", 1.0),
    ("0.7", "0.7000000000000001", 1.0),
    ("0.7", "0.7000001", 0.0),
    ("123456789012345", "123456789012346", 0.0),  # an integer is exact, however long
]


@pytest.mark.parametrize(("reference", "response", "expected"), ROLES_SIZES_AND_TWO_READINGS)
async def test_roles_sizes_and_two_readings(
    math_tool: RewardTool, reference: str, response: str, expected: float | None
) -> None:
    await assert_scores_or_abstains(math_tool, reference, response, expected)


GLYPHS_REGIONAL_FORMS_AND_PRINTOUTS = [
    # coordinates separated by a semicolon: a comma inside one is a decimal comma (with or without the point's name)
    ("(1.5, -2)", "Подставим: x = 1,5, y = −2.\n\nОтвет: A(1,5; −2).", 1.0),
    ("(1.5, -2)", "Also: P(1,5; 2).", 0.0),
    ("(0.25, 4)", "Der Punkt ist Q(0,25; 4).", 1.0),
    ("(0.25, 4)", "Der Punkt ist (4; 0,25).", 0.0),
    # trigonometric names of European textbooks
    ("\\frac{\\pi}{3}", "So x = arctg √3 = π/3.", 1.0),
    ("\\frac{\\pi}{4}", "Hence x = arctg 1 = π/3.", 0.0),
    ("\\sqrt{3}", "Ответ: tg(π/3).", 1.0),
    ("1", "So the value is ctg(π/4).", 1.0),
    ("-1", "So the value is ctg(π/4).", 0.0),
    # intervals typed in ASCII: a capital U between intervals is a union, inf is infinity
    ("(-\\infty, 2) \\cup (5, \\infty)", "So the solution set is (-inf, 2) U (5, inf)", 1.0),
    ("(-\\infty, 2) \\cup (5, \\infty)", "So the solution set is (-inf, 2] U (5, inf)", 0.0),
    ("(-\\infty, 2) \\cup (5, \\infty)", "So the solution set is (-inf, 2) U (6, inf)", 0.0),
    # slanted inequality signs, degree look-alikes, unit glyphs, a calculator's exponent
    ("[3, \\infty)", "So x ⩾ 3.", 1.0),
    ("[3, \\infty)", "So x ⩽ 3.", 0.0),
    ("45^\\circ", "The angle is 45˚.", 1.0),
    ("45^\\circ", "The angle is 54˚.", 0.0),
    ("5 \\text{ km}", "距離は 5 ㎞ です。", 1.0),
    ("5 \\text{ km}", "距離は 50 ㎞ です。", 0.0),
    ("2", "The area is 20 ㎡.", 0.0),  # the squared metre's 2 is an exponent, not a number
    ("0.0035", "My calculator shows 3.5ᴇ-3.", 1.0),
    ("0.0035", "My calculator shows 3.5ᴇ⁻³.", 1.0),
    ("0.0035", "My calculator shows 3.5ᴇ3.", 0.0),
    # a program's printout whose last line is a status line after the printed value: neither is stated
    ("1", "I ran it:\n```\n$ python count.py\n0\nDone in 1 s\n```\nSo nobody passed.", 0.0),
    ("0", "I ran it:\n```\n$ python count.py\n0\nDone in 1 s\n```\nSo nobody passed.", 0.0),
    ("42", "Running it:\n```\n42\n```\nThat total is the answer.", 1.0),
    ("120", "```r\n> factorial(5)\n[1] 120\n```", 1.0),
    ("27", "```yaml\nsteps:\n  - days: 3\nfinal_answer: 27\n```", 1.0),
    # an answer taken back after it is stated: the revision is the answer
    ("12", "The answer is 12. Actually, it's 15.", 0.0),
    ("15", "The answer is 12. Wait, I made an error: it should be 15.", 1.0),
    ("12", "The answer is 12. Oops, sorry — it is 15.", 0.0),
    ("12", "The answer is 12. Hmm, let me double-check: 3 × 5 = 15, so it's 15.", 0.0),
    ("12", "The answer is 12. Wait — no, it's 15.", 0.0),
    ("12", "The answer is 12. Actually, that is the number of months in a year too.", 1.0),
    # citation marks after an answer with sources are not numbers of the answer
    ("17", "The answer is 17.[2]", 1.0),
    ("2", "The answer is 17.[2]", 0.0),
    ("17", "The answer is 17 [1][3].", 1.0),
]


@pytest.mark.parametrize(("reference", "response", "expected"), GLYPHS_REGIONAL_FORMS_AND_PRINTOUTS)
async def test_glyphs_regional_forms_and_printouts(
    math_tool: RewardTool, reference: str, response: str, expected: float | None
) -> None:
    await assert_scores_or_abstains(math_tool, reference, response, expected)
