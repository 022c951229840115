"""Nested lists: top items and sub-items with their markers, how many top items and how many sub-items under each.

Rule: ``outline`` (``marker`` of a top item, ``sub_marker`` and ``indent`` of a sub-item — any indentation when none
is given —, top items ``min`` / ``max``, ``sub_min`` / ``sub_max`` sub-items under each); every line is a top item
or a sub-item, the first a top item.

Wordings: the markers quoted (``'- '`` a top item, ``'  - '`` a sub-item and its indent) or ``denoted by *``, how many
top items (``three bullet points``, ``exactly four top-level bullets``, ``2 main items``) and sub-items under each
(``under each one exactly two sub-bullets``, ``each followed by 3 sub-items``, ``at least one sub-bullet beneath
it``), ``indented by 4 spaces``. Each clause adds what it read to one ``outline`` rule of the instruction (merged).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from rlar.constraints.checks.units import within
from rlar.constraints.family import Family
from rlar.constraints.model import Constraint, bounds_text
from rlar.constraints.reading import Q, WorkingClause, quoted
from rlar.constraints.responses import WORDS, pick

__all__ = ["FAMILY", "Outline"]


@dataclass(frozen=True, kw_only=True)
class Outline(Constraint):
    """A nested list: ``min`` / ``max`` top items marked ``marker``, each with ``sub_min`` / ``sub_max``
    sub-items marked ``sub_marker`` and indented ``indent`` spaces."""

    RULES = ("outline",)
    marker: str | None = None
    sub_marker: str | None = None
    indent: int | None = None
    min: int | None = None
    max: int | None = None
    sub_min: int | None = None
    sub_max: int | None = None

    def describe(self) -> str:
        given = self.sub_min is not None or self.sub_max is not None
        subs = bounds_text(self.sub_min, self.sub_max) if given else "any number of"
        marker = self.marker if self.marker is not None else "-"
        return f"a nested list of {self._bounds()} {marker!r} items, each with {subs} sub-items"


# -- the check (embedded in verifiers) ----------------------------------------------------------------------------
def outline_score(c, text):
    """A nested list: every line a top item (``marker`` and a space at the line start) or a sub-item (``indent``
    spaces — any indentation when none is given — then ``sub_marker`` and a space); the first line a top item;
    ``min``..``max`` top items, each with ``sub_min``..``sub_max`` sub-items."""
    top_rx = re.compile(re.escape(str(c.get("marker") or "-")) + r" (?=\S)")
    sub = re.escape(str(c.get("sub_marker") or c.get("marker") or "-")) + r" (?=\S)"
    indent = c.get("indent")
    sub_rx = re.compile((" " * int(indent) if indent else r"[ ]+") + sub)
    counts = []
    for line in [x for x in text.split("\n") if x.strip()]:
        if top_rx.match(line):
            counts.append(0)
        elif sub_rx.match(line) and counts:
            counts[-1] += 1
        else:
            return 0.0
    if not counts or not within(len(counts), c):
        return 0.0
    lo, hi = c.get("sub_min"), c.get("sub_max")
    good = [(lo is None or k >= lo) and (hi is None or k <= hi) for k in counts]
    return 1.0 if all(good) else 0.5 * sum(good) / len(good)


# -- reading ------------------------------------------------------------------------------------------------------
_SUB = r"\bsub-?(?:bullets?|items?|points?)\b"
_MARKERS_QUOTED = (
    rf"\(\s*(?:lines\s+starting\s+with\s+)?{Q}\s*\)|\buse\s+{Q}\s+for\s+(?:the\s+)?(?:main|top-level)\s+items\b"
    rf"|\b(?:marked|starting|beginning|written)\s+(?:with\s+)?{Q}"
)


def _each_has_one(c: dict[str, Any], m: re.Match[str]) -> None:
    c["sub_min"] = 1
    if m.group("mark"):
        c["sub_marker"] = m.group("mark")


def _denoted(c: dict[str, Any], m: re.Match[str]) -> None:
    c["sub_marker" if m.group("sub") else "marker"] = m.group("mark")


def _indent(c: dict[str, Any], m: re.Match[str]) -> None:
    c["indent"] = int(m.group("n"))


def _bounded(c: dict[str, Any], m: re.Match[str], lo: str, hi: str, n: int) -> None:
    cmp = m.group("cmp") or ""
    if "least" in cmp:
        c[lo] = n
    elif "most" in cmp:
        c[hi] = n
    else:
        c[lo] = c[hi] = n


Sets = Callable[[dict[str, Any], re.Match[str]], None]
# (pattern, what a match sets in the outline rule), in reading order
_WORDINGS: tuple[tuple[str, Sets], ...] = (
    (
        r"\b(?:and\s+)?(?:at\s+least\s+(?:1|one)\s+)(?:sub-?bullet(?:\s+points?)?)\s*(?:(?:denoted"
        r"|marked)\s+by\s+(?P<mark>[-*+])\s+)?"
        r"for\s+each\s+(?:bullet(?:\s+point)?|top-level\s+item|main\s+item)\b",
        _each_has_one,
    ),
    (  # "bullet points denoted by * and at least one sub-bullet denoted by - for each bullet point"
        r"\b(?:(?P<sub>sub-?bullet(?:\s+points?)?s?|sub-?items?)|bullet(?:\s+points?)?s?|(?:main"
        r"|top-level)\s+items?)\s+"
        r"(?:denoted|marked|written)\s+(?:by|with)\s+(?P<mark>[-*+])(?=\s|$)",
        _denoted,
    ),
    (
        r",?\s*\b(?:and\s+)?(?:indented|indent\s+(?:the\s+)?sub-?(?:items|bullets|points))\s+(?:by"
        r"|with)\s+(?P<n>\d+)\s+spaces\b",
        _indent,
    ),
    (
        r"\b(?:(?:give|write|make|produce)\s+)?(?:an?\s+(?:nested\s+)?list\s+with\s+)?(?P<cmp>exactly\s+"
        r"|at\s+least\s+|at\s+most\s+)?(?P<n>\d+)\s+"
        r"(?:top-level\s+bullets?|bullet\s+points|bullets|main\s+items|top-level\s+items|main\s+bullets)\b",
        lambda c, m: _bounded(c, m, "min", "max", int(m.group("n"))),
    ),
    (
        r",?\s*\b(?:and\s+)?(?:under\s+each\s+(?:1|one)\s*,?\s*|(?:where\s+)?each\s+(?:top-level\s+bullet"
        r"|main\s+item|bullet)\s+has\s+"
        r"|each\s+followed\s+by\s+)(?P<cmp>exactly\s+|at\s+least\s+|at\s+most\s+)?(?P<k>\d+)\s+sub-?(?:bullets?"
        r"|items?|points?)"
        r"(?:\s+beneath\s+it)?\b",
        lambda c, m: _bounded(c, m, "sub_min", "sub_max", int(m.group("k"))),
    ),
)
_IMPLIED = (  # the list named: read, nothing more to check
    r"\b(?:make|produce|give|write)\s+an?\s+(?:nested\s+)?list\s+with\b|\ban?\s+nested\s+list\b",
    r"\b(?:include|use|contain)\s+bullet\s+points\b(?!\s+(?:denoted|marked))",
)


def _quoted_markers(cl: WorkingClause, c: dict[str, Any]) -> None:
    """Markers quoted in the clause: ``'- '`` a top item's, ``'  - '`` a sub-item's and its indent."""
    for token in re.findall(Q, cl.w):
        mk = re.fullmatch(r"( *)([-*+\u2022]) ?", cl.q(token))
        if mk is None:
            continue
        if mk.group(1):
            c["sub_marker"], c["indent"] = mk.group(2), len(mk.group(1))
        elif re.search(_SUB, cl.w[cl.w.find(token) - 40 : cl.w.find(token)]):
            c["sub_marker"] = mk.group(2)
        else:
            c["marker"] = mk.group(2)


def _set(c: dict[str, Any], m: re.Match[str], sets: Sets) -> bool:
    sets(c, m)
    return True


def read(cl: WorkingClause, sentence: str, whole: str) -> None:
    if not re.search(rf"{_SUB}|\bnested\s+list\b", whole):
        return
    c: dict[str, Any] = cl.memory.setdefault("outline", {"rule": "outline"})
    before = dict(c)
    _quoted_markers(cl, c)
    cl.each(
        _MARKERS_QUOTED, lambda m: all(re.fullmatch(r" *[-*+\u2022] ?", q) for q in quoted(cl, m.group(0)))
    )
    for pattern, sets in _WORDINGS:
        cl.each(pattern, partial(_set, c, sets=sets))
    for pattern in _IMPLIED:
        cl.each(pattern, lambda m: True)
    if c != before:
        cl.add({k: v for k, v in c.items() if v is not None})


# -- a response that holds it -------------------------------------------------------------------------------------
def build(cons: Sequence[Mapping[str, Any]]) -> str | None:
    c = next((x for x in cons if x.get("rule") == "outline"), None)
    if c is None:
        return None
    n = pick(c, 3)
    k = pick({"min": c.get("sub_min"), "max": c.get("sub_max")}, 2)
    top, sub = str(c.get("marker") or "-"), str(c.get("sub_marker") or c.get("marker") or "-")
    pad = " " * int(c.get("indent") or 2)
    rows = []
    for i in range(n):
        rows.append(f"{top} {WORDS[i].capitalize()}")
        rows += [f"{pad}{sub} {WORDS[(i * 5 + j + 7) % len(WORDS)]}" for j in range(k)]
    return "\n".join(rows)


# -- near misses --------------------------------------------------------------------------------------------------
def near_misses(c: Mapping[str, Any], good: str, cons: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    rows = good.split("\n")
    if c.get("sub_min"):
        tops = [i for i, r in enumerate(rows) if not r.startswith(" ")]
        return [("outline: a top item without sub-items", "\n".join(rows[: tops[-1] + 1]))]
    return [
        ("outline: a sub-item indented otherwise", re.sub(r"^( +)", r"\1  ", good, count=1, flags=re.M)),
        ("outline: a sub-item more", good + "\n" + rows[-1]),
    ]


FAMILY = Family(
    name="outline",
    types=(Outline,),
    checks={"outline": outline_score},
    read=read,
    build=build,
    near_misses=near_misses,
    examples=("Give a nested list with exactly 3 top-level bullets, each followed by 2 sub-items.",),
)
