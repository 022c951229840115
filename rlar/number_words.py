"""Number words: the one table of English cardinals (and one of ordinals) the readers and the answer parsers
share.

``NUMBER_WORDS`` maps ``zero`` … ``nineteen`` and the tens ``twenty`` … ``ninety`` to their values; compounds
(``twenty-five``, ``three hundred``) are built from it by each user (:func:`rlar.tasks.phrasings.numbers`, the
second reading in :mod:`rlar.synthesis.second_route`, :mod:`rlar.tools.math_answer`), which add the words of
their own (``once``, ``a dozen``, ``thousand``). Standard library only, no imports, so any layer may use it.
"""

from __future__ import annotations

__all__ = ["NUMBER_WORDS", "ONES", "ORDINALS", "TENS"]

ONES: dict[str, int] = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
TENS: dict[str, int] = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
NUMBER_WORDS: dict[str, int] = {**ONES, **TENS}

ORDINALS: dict[str, int] = {
    **{w: i for i, w in enumerate(("first", "second", "third", "fourth", "fifth"), 1)},
    **{w: i for i, w in enumerate(("sixth", "seventh", "eighth", "ninth", "tenth"), 6)},
    **{f"{i}{'st' if i == 1 else 'nd' if i == 2 else 'rd' if i == 3 else 'th'}": i for i in range(1, 11)},
    "last": -1,
    "final": -1,
}
"""Ordinal words and numerals up to the tenth, and ``last``/``final`` as -1 (counted from the end)."""
