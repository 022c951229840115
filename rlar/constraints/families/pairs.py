"""Question/answer pairs on lines: line 2k-1 starts with a question marker and line 2k with an answer marker.

Rule: ``pairs`` (``first`` / ``second`` markers exactly as written, ``{n}`` in a marker the pair's number,
``first_end``: the mark every question ends with; pairs ``min`` / ``max``); each marker is followed by text.

Wordings: ``N question-and-answer pairs``, ``N questions with answers``, ``each question on a line starting with
'Q: ' and its answer on the next line starting with 'A: '``, numbered markers (``format: a line 'Question 1:'
followed by the question, the next line 'Answer 1:' followed by the answer, then 'Question 2:' and 'Answer 2:' the
same way``), ``every question must end with a question mark``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rlar.constraints.checks.units import within
from rlar.constraints.family import Family
from rlar.constraints.model import Constraint
from rlar.constraints.reading import Q, WorkingClause, quoted
from rlar.constraints.responses import WORDS, pick

__all__ = ["FAMILY", "Pairs"]


@dataclass(frozen=True, kw_only=True)
class Pairs(Constraint):
    """Line pairs starting ``first`` and ``second`` (``{n}``: the pair's number), every first line ending with
    ``first_end``; ``min`` / ``max`` pairs."""

    RULES = ("pairs",)
    first: str | None = None
    second: str | None = None
    first_end: str | None = None
    min: int | None = None
    max: int | None = None

    def _check(self) -> None:
        if not (str(self.first or "").strip() and str(self.second or "").strip()):
            raise ValueError(f"rule 'pairs' needs a first and a second marker, got {self.to_dict()!r}")

    def describe(self) -> str:
        return f"{self._bounds()} line pairs {self.first!r} / {self.second!r}"


# -- the check (embedded in verifiers) ----------------------------------------------------------------------------
def _marker(template, n):
    return str(template).replace("{n}", str(n))


def pairs_score(c, text):
    """Question/answer pairs on lines: line 2k-1 starts with ``first`` and line 2k with ``second`` (``{n}`` in a
    marker is the pair's number), each followed by text, exactly as written; a ``first_end`` every first line
    ends with; ``min``..``max`` pairs."""
    ls = [x for x in text.split("\n") if x.strip()]
    if not ls or len(ls) % 2:
        return 0.0
    for i, line in enumerate(ls):
        k = i // 2 + 1
        mark = _marker(c["first"] if i % 2 == 0 else c["second"], k)
        if not line.startswith(mark):
            return 0.0
        rest = line[len(mark) :]
        if not rest.strip() or (not mark.endswith(" ") and not rest.startswith(" ")) or rest.startswith("  "):
            return 0.0
        if mark.endswith(" ") and rest[:1].isspace():
            return 0.0
        if i % 2 == 0 and c.get("first_end") and not line.rstrip().endswith(str(c["first_end"])):
            return 0.0
    return 1.0 if within(len(ls) // 2, c) else 0.0


# -- reading ------------------------------------------------------------------------------------------------------
_COUNTED = (
    r"\b(?:write\s+)?(?:an\s+faq\s+with\s+)?(?:exactly\s+)?(?P<n>\d+)\s+question-and-answer\s+pairs\b"
    r"|\b(?:give\s+)?(?P<n2>\d+)\s+questions\s+with\s+answers\b"
)
_MARKERS = (
    rf"\b(?:put\s+|write\s+)?(?:each|every)\s+question\s+on\s+(?:a|its\s+own)\s+line\s+(?:starting"
    rf"|beginning)\s+with\s+{Q}\s*,?\s*(?:and|followed\s+by)\s+"
    rf"(?:its|each|the)\s+answer\s+on\s+the\s+(?:next|following)\s+line\s+(?:starting|beginning)\s+with\s+{Q}"
)
_NUMBERED = (
    rf"\bformat:\s*a\s+line\s+{Q}\s+followed\s+by\s+the\s+question\s*,?\s*the\s+next\s+line\s+{Q}\s+followed\s+by"
    rf"\s+the\s+answer(?:\s*,?\s*then\s+{Q}\s+and\s+{Q}\s+the\s+same\s+way)?"
)
_NEXT_NUMBERED = rf"^\s*(?:and\s+)?then\s+{Q}\s+and\s+{Q}\s+the\s+same\s+way\b"
_QUESTION_MARK = r"\b(?:every|each)\s+question\s+(?:must|should)\s+end\s+with\s+a\s+question\s+mark\b"


def _counted(cl: WorkingClause, m: re.Match[str]) -> bool:
    if m.group("n"):
        c = cl.memory.get("pairs")
        if c is None:
            c = {"rule": "pairs", "first": "Q: ", "second": "A: "}
            cl.memory["pairs"] = c
            cl.memory["pairs_pending"] = True
        c["min"] = c["max"] = int(m.group("n"))
        return True
    c = cl.memory.get("pairs") or {"rule": "pairs", "first": "Q: ", "second": "A: "}
    cl.memory["pairs"] = c
    c["min"] = c["max"] = int(m.group("n2"))
    return True


def _with_markers(cl: WorkingClause, first: str, second: str) -> None:
    c = cl.memory.get("pairs") or {"rule": "pairs"}
    c.update({"first": first, "second": second})
    cl.memory["pairs"] = c
    if c not in cl.found:
        cl.add(c)


def _markers(cl: WorkingClause, m: re.Match[str]) -> bool:
    q, a = quoted(cl, m.group(0))[:2]
    _with_markers(cl, q, a)
    return True


def _numbered(cl: WorkingClause, m: re.Match[str]) -> bool:
    qs = quoted(cl, m.group(0))
    if len(qs) < 2:
        return False
    first, second = (re.sub(r"\b1\b", "{n}", x) for x in qs[:2])
    if "{n}" not in first or "{n}" not in second:
        return False
    _with_markers(cl, first, second)
    return True


def _question_mark(cl: WorkingClause) -> bool:
    c = cl.memory["pairs"]
    c["first_end"] = "?"
    if c not in cl.found:
        cl.add(c)
    return True


def read(cl: WorkingClause, sentence: str, whole: str) -> None:
    if not re.search(r"question|\bq:|\bfaq\b", whole):
        return
    cl.each(_COUNTED, lambda m: _counted(cl, m))
    cl.each(_MARKERS, lambda m: _markers(cl, m))
    cl.each(_NUMBERED, lambda m: _numbered(cl, m))
    said = cl.memory.get("pairs")
    if said and "{n}" in str(said.get("first", "")):
        cl.each(
            _NEXT_NUMBERED,
            lambda m: (
                [x.replace("2", "{n}") for x in quoted(cl, m.group(0))] == [said["first"], said["second"]]
            ),
        )
    if cl.memory.get("pairs"):
        cl.each(_QUESTION_MARK, lambda m: _question_mark(cl))


# -- a response that holds it -------------------------------------------------------------------------------------
def build(cons: Sequence[Mapping[str, Any]]) -> str | None:
    c = next((x for x in cons if x.get("rule") == "pairs"), None)
    if c is None:
        return None
    rows = []
    for i in range(1, pick(c, 2) + 1):
        q = f"Is the {WORDS[i]} near the {WORDS[i + 5]}" + str(c.get("first_end") or "?")
        rows.append(
            str(c["first"]).replace("{n}", str(i)) + ("" if str(c["first"]).endswith(" ") else " ") + q
        )
        rows.append(
            str(c["second"]).replace("{n}", str(i))
            + ("" if str(c["second"]).endswith(" ") else " ")
            + f"Yes, it is {WORDS[i + 9]}."
        )
    return "\n".join(rows)


# -- near misses --------------------------------------------------------------------------------------------------
def near_misses(c: Mapping[str, Any], good: str, cons: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    rows = good.split("\n")
    first = str(c["first"]).replace("{n}", "1").rstrip()
    return [
        ("pairs: a marker without its space", good.replace(first, first + "x", 1)),
        ("pairs: a pair missing", "\n".join(rows[:-2])),
    ]


FAMILY = Family(
    name="pairs",
    types=(Pairs,),
    checks={"pairs": pairs_score},
    read=read,
    build=build,
    near_misses=near_misses,
    examples=(
        "Write 3 question-and-answer pairs. Put each question on a line starting with 'Q: ' and its answer on the"
        " next line starting with 'A: '.",
    ),
)
