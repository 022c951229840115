"""Figures of one character: a right triangle (row k holds k of them), an inverted one (one fewer each row, the
last row one) or a centred pyramid (row k: 2k-1 of them after the spaces that centre it over the bottom row).

Rule: ``figure`` (``shape`` right | inverted | pyramid, ``char``, rows ``min`` / ``max``); nothing else on a row,
no trailing space.

Wordings: ``a right triangle of asterisks with between 4 and 6 rows``, ``an inverted triangle made of the character
#``, ``a centred pyramid of lowercase x``, and the rows they describe (``the first row has one asterisk``, ``each row
below has one fewer``, ``row k has 2k-1 x's``); ``a triangle`` with no shape is left unread.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rlar.constraints.checks.units import within
from rlar.constraints.family import Family
from rlar.constraints.model import Constraint
from rlar.constraints.reading import WorkingClause
from rlar.constraints.responses import pick

__all__ = ["FAMILY", "FIGURES", "Figure"]

FIGURES = ("right", "inverted", "pyramid")


@dataclass(frozen=True, kw_only=True)
class Figure(Constraint):
    """A triangle (``shape`` right | inverted | pyramid) of one ``char``, ``min`` / ``max`` rows."""

    RULES = ("figure",)
    shape: str | None = None
    char: str | None = None
    min: int | None = None
    max: int | None = None

    def _check(self) -> None:
        if self.shape not in FIGURES or len(str(self.char or "")) != 1:
            raise ValueError(
                f"rule 'figure' needs a shape {FIGURES} and one character, got {self.to_dict()!r}"
            )

    def describe(self) -> str:
        return f"a {self.shape} triangle of {self.char!r}, {self._bounds()} rows"


# -- the check (embedded in verifiers) ----------------------------------------------------------------------------
def _rows(text):
    return text.strip("\n").split("\n")


def figure_ok(c, text):
    """Whether ``text`` is the figure of ``c``: every row exactly as the shape makes it, ``min``..``max`` rows."""
    rows = _rows(text)
    n = len(rows)
    ch = str(c.get("char") or "*")
    if not within(n, c) or n == 0:
        return False
    shape = c.get("shape", "right")
    for i, row in enumerate(rows, 1):
        if shape == "right":
            want = ch * i
        elif shape == "inverted":
            want = ch * (n - i + 1)
        else:
            want = " " * (n - i) + ch * (2 * i - 1)
        if row != want:
            return False
    return True


def figure_score(c, text):
    return 1.0 if figure_ok(c, text) else 0.0


# -- reading ------------------------------------------------------------------------------------------------------
_CHARS = {"asterisks": "*", "asterisk": "*", "stars": "*", "hashes": "#", "hash": "#"}
_NAMED = (
    r"\b(?:draw|print|make)?\s*an?\s+(?:(?P<inv>inverted|upside-down)\s+|right\s+|centred\s+"
    r"|centered\s+)?(?P<kind>triangle|pyramid)\s+"
    r"(?:made\s+)?of\s+(?:the\s+character\s+|lowercase\s+)?(?P<char>asterisks?|stars|hashes|hash"
    r"|[#*x+o@=])(?=[\s,.;]|$)"
)
_ROWS = r"\bwith\s+(?:between\s+(?P<a>\d+)\s+(?:and|or|to)\s+(?P<b>\d+)|(?P<n>\d+))\s+rows\b"
_ROWS_EITHER = r"\bwith\s+(?P<a>\d+)\s+or\s+(?P<b>\d+)\s+rows\b(?P<n>)"


def _described(shape: str, char: str) -> list[str]:
    """The wordings that describe the rows of a figure of ``shape`` made of ``char`` (a pattern)."""
    return {
        "right": [
            r"\bthe\s+first\s+row\s+has\s+(?:1|one)\s+(?:asterisks?|stars?|" + char + r"|character)\b",
            r"\b(?:and\s+)?each\s+(?:following|next)\s+row\s+has\s+(?:1|one)\s+more\s+than\s+the\s+(?:row\s+above"
            r"|one\s+before|previous\s+row)\b",
            r"\buse\s+no\s+other\s+characters\b",
        ],
        "inverted": [
            r"\bthe\s+top\s+row\s+may\s+have\s+(?P<a>\d+)\s*,\s*(?P<m>\d+)\s*,?\s*or\s+(?P<b>\d+)\s+" + char,
            r"\b(?:and\s+)?each\s+row\s+below\s+has\s+(?:exactly\s+)?(?:1|one)\s+fewer\b",
            r"\b(?:and\s+)?the\s+last\s+row\s+has\s+(?:a\s+|just\s+|only\s+)?(?:1|one)\s+" + char,
            r"\buse\s+no\s+other\s+characters\b",
        ],
        "pyramid": [
            r"\brow\s+k\s+has\s+2k-1\s+" + char + r"'?s?",
            r"\bled\s+by\s+spaces\s+so\s+(?:that\s+)?the\s+bottom\s+row\s+starts\s+at\s+the\s+left\s+edge\b",
            r"\b(?:and\s+)?each\s+row\s+is\s+cent(?:red|ered)\s+over\s+it\b",
            r"\b(?:and\s+)?no\s+(?:line|row)\s+has\s+trailing\s+spaces\b",
        ],
    }[shape]


def _named(cl: WorkingClause, m: re.Match[str]) -> bool:
    shape = "pyramid" if m.group("kind") == "pyramid" else ("inverted" if m.group("inv") else "right")
    if shape == "right" and "right" not in m.group(0):
        return False  # "a triangle" names no shape the checks know (right? centred?)
    char = m.group("char") or ""
    char = _CHARS.get(char, char)
    if len(char) != 1:
        return False
    c = {"rule": "figure", "shape": shape, "char": char}
    cl.add(c)
    cl.memory["figure"] = c
    return True


def _rows_said(cl: WorkingClause, c: dict[str, Any], m: re.Match[str]) -> bool:
    if m.group("a") and m.group("b"):
        c["min"], c["max"] = sorted((int(m.group("a")), int(m.group("b"))))
    elif m.group("n"):
        c["min"] = c["max"] = int(m.group("n"))
    cl.add(dict(c))
    return True


def _rows_described(cl: WorkingClause, c: dict[str, Any], m: re.Match[str]) -> bool:
    if c["shape"] == "inverted" and m.groupdict().get("a"):
        c["min"], c["max"] = int(m.group("a")), int(m.group("b"))
        cl.add(dict(c))
    return True


def read(cl: WorkingClause, sentence: str, whole: str) -> None:
    """The figure named in one clause, or the rows of the figure an earlier clause named."""
    if not re.search(r"\btriangle\b|\bpyramid\b", whole):
        return
    cl.each(_NAMED, lambda m: _named(cl, m))
    c = cl.memory.get("figure")
    if c is None:
        return
    cl.each(_ROWS, lambda m: _rows_said(cl, c, m))
    for rx in _described(str(c["shape"]), re.escape(str(c["char"]))):
        cl.each(rx, lambda m: _rows_described(cl, c, m))
    cl.each(_ROWS_EITHER, lambda m: _rows_said(cl, c, m))


# -- a response that holds it -------------------------------------------------------------------------------------
def build(cons: Sequence[Mapping[str, Any]]) -> str | None:
    c = next((x for x in cons if x.get("rule") == "figure"), None)
    if c is None:
        return None
    n = pick(c, 4)
    ch = str(c.get("char") or "*")
    shape = c.get("shape")
    if shape == "inverted":
        return "\n".join(ch * (n - i) for i in range(n))
    if shape == "pyramid":
        return "\n".join(" " * (n - i) + ch * (2 * i - 1) for i in range(1, n + 1))
    return "\n".join(ch * i for i in range(1, n + 1))


# -- near misses --------------------------------------------------------------------------------------------------
def near_misses(c: Mapping[str, Any], good: str, cons: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    rows = good.split("\n")
    return [
        ("figure: a trailing space", rows[0] + " \n" + "\n".join(rows[1:])),
        ("figure: a row dropped", "\n".join(rows[:-2] + rows[-1:])),
    ]


FAMILY = Family(
    name="figure",
    types=(Figure,),
    checks={"figure": figure_score},
    read=read,
    build=build,
    near_misses=near_misses,
    examples=(
        "Draw a right triangle of asterisks with 5 rows.",
        "Print an inverted triangle made of the character # with between 3 and 4 rows.",
    ),
)
