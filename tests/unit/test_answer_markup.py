"""rlar.tools.answer_markup: markup written for a renderer, read before the characters are."""

from __future__ import annotations

import pytest

from rlar.tools.answer_markup import plain_markup


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<math><mfrac><mn>1</mn><mn>3</mn></mfrac></math>", " $\\frac{1}{3}$ "),
        ("<math><mroot><mn>8</mn><mn>3</mn></mroot></math>", " $\\sqrt[3]{8}$ "),
        ("<math><msup><mi>x</mi><mn>2</mn></msup><mo>−</mo><mn>1</mn></math>", " ${x}^{2}-1$ "),
        ("So $ y = frac(1, binom(4, 2)) $.", "So $ y = \\frac{1}{\\binom{4}{2}} $."),
        ("julia> 2//4\n1//2", "julia> \\frac{2}{4}\n\\frac{1}{2}"),
        ("The count is 1_048_576.", "The count is 1048576."),
        ("Answer: >!12!<", "Answer: 12"),
    ],
)
def test_markup_is_read_as_latex_or_plain_text(text: str, expected: str) -> None:
    assert plain_markup(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        # an element this reader does not know, and markup that is not well-formed: left for the checker to refuse
        "<math><mtable><mtr><mtd><mn>1</mn></mtd></mtr></mtable></math>",
        "<math><mfrac><mn>1</mn></math>",
        # outside mathematics, root(2, 3) is sympy's (the other order) and // is Python's floor division
        "```python\nroot(2, 3)\n7//2\n```",
        # a box character that is no frame (a pretty-printer's fraction bar), a lone [2], a variable x_1
        "√2\n──\n2",
        "The list is [2].",
        "x_100 = 5",
    ],
)
def test_what_is_not_such_markup_stays_as_written(text: str) -> None:
    assert plain_markup(text) == text
