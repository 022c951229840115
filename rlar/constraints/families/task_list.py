"""Markdown task lists: every line a task item, ``- [ ] `` open or ``- [x] `` checked, and how many of each.

Rule: ``task_list`` (every non-empty line starts with ``- [ ] `` or ``- [x] `` and text; ``- [X]`` and ``[]`` are
no task boxes). How many boxes are checked or open are the count units ``checked`` / ``unchecked`` of the checks
(:mod:`rlar.constraints.checks.marks`), so they combine with every comparator and scope.

Wordings: ``a Markdown task list``, ``a to-do list in GitHub Markdown checkbox format``, ``a checklist``, with
``exactly two of them are checked``, ``3 of them ticked``, ``none of them ticked yet``, ``use '- [x]' for checked
items and '- [ ]' for unchecked ones`` (read, nothing more to check), ``with 5 tasks`` (the items).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rlar.constraints.checks.marks import TASK_RX
from rlar.constraints.family import Family
from rlar.constraints.model import Constraint, Count
from rlar.constraints.reading import Phrase, Q, WorkingClause, quoted, read_phrases
from rlar.constraints.responses import count_wanted, one_rule, per_rule, phrase, pick

__all__ = ["FAMILY", "TaskList"]


@dataclass(frozen=True, kw_only=True)
class TaskList(Constraint):
    """Every line a Markdown task item."""

    RULES = ("task_list",)

    def describe(self) -> str:
        return "every line a Markdown task item ('- [ ] ' or '- [x] ')"


# -- the check (embedded in verifiers) ----------------------------------------------------------------------------
def task_list_score(c, text):
    ls = [x for x in text.split("\n") if x.strip()]
    return 1.0 if ls and all(TASK_RX.match(x) for x in ls) else 0.0


# -- reading ------------------------------------------------------------------------------------------------------
_MENTIONED = r"\btask\s+list|checklist|to-do|\[x\]|\[ \]"
_NAMED = r"task\s+list|checklist"
_TICKED = r"(?:ticked|checked|done|completed)"


def _exactly_checked(m: re.Match[str], cl: WorkingClause) -> list[Constraint]:
    n = int(m.group("n"))
    return [Count(rule="checked", min=n, max=n)]


def _box_marks(m: re.Match[str], cl: WorkingClause) -> list[Constraint] | None:
    """The task boxes quoted as they are written: read, and nothing more to check."""
    return [] if [x.strip() for x in quoted(cl, m.group(0))] == ["- [x]", "- [ ]"] else None


def _tasks(m: re.Match[str], cl: WorkingClause) -> list[Constraint]:
    n = int(m.group("n"))
    return [Count(rule="items", min=n, max=n)]


PHRASES = (
    Phrase(
        r"\b(?:make|write|give)?\s*an?\s+to-do\s+list\s+in\s+(?:github\s+)?markdown\s+(?:checkbox|task(?:\s+list)?)"
        r"\s+(?:format|form|syntax)\b",
        lambda m, cl: [TaskList(rule="task_list")],
    ),
    Phrase(rf",?\s*\b(?P<n>\d+)\s+of\s+them\s+{_TICKED}\b", _exactly_checked),
    Phrase(
        r"\b(?:write|give\s+me|produce|make)?\s*an?\s+(?:markdown\s+|github\s+markdown\s+)?(?:task\s+list"
        r"|to-do\s+checklist|checklist|completed\s+checklist)(?:\s+in\s+github\s+markdown)?\b",
        lambda m, cl: [TaskList(rule="task_list")],
    ),
    Phrase(
        rf"\buse\s+{Q}\s+for\s+checked\s+(?:items|ones|tasks)\s+and\s+{Q}\s+for\s+unchecked\s+(?:ones|items"
        rf"|tasks)\b",
        _box_marks,
    ),
    Phrase(
        rf"\b(?:where\s+)?(?:exactly\s+)?(?P<n>\d+)\s+(?:of\s+them\s+)?(?:are|is)\s+{_TICKED}\b",
        _exactly_checked,
    ),
    Phrase(
        rf",?\s*\b(?:with\s+)?none\s+of\s+them\s+(?:is\s+|are\s+)?{_TICKED}(?:\s+yet)?\b",
        lambda m, cl: [Count(rule="checked", max=0)],
    ),
)
COUNTED = (Phrase(r"\b(?:with\s+)?(?P<n>\d+)\s+(?:tasks|entries)\b", _tasks),)  # once the list is named


def read(cl: WorkingClause, sentence: str, whole: str) -> None:
    if not re.search(_MENTIONED, whole):
        return
    read_phrases(cl, PHRASES)
    if any(c["rule"] == "task_list" for c in cl.found) or re.search(_NAMED, whole):
        read_phrases(cl, COUNTED)


# -- a response that holds it -------------------------------------------------------------------------------------
def build(cons: Sequence[Mapping[str, Any]]) -> str | None:
    ticked = one_rule(cons, "checked", per=None)
    open_ = one_rule(cons, "unchecked", per=None)
    if one_rule(cons, "task_list") is None and ticked is None and open_ is None:
        return None
    n = count_wanted(cons, "items", count_wanted(cons, "lines", count_wanted(cons, "bullets", 0)))
    x = pick(ticked, 0 if open_ else (n or 3))
    o = pick(open_, max(0, (n or 3) - x))
    if n and x + o != n:
        if ticked is not None and open_ is None:
            o = max(0, n - x)
        elif open_ is not None and ticked is None:
            x = max(0, n - o)
    k = pick(per_rule(cons, "words", "item") or per_rule(cons, "words", "line"), 2)
    rows = [f"- [x] {phrase(i, k).capitalize()}" for i in range(x)]
    rows += [f"- [ ] {phrase(i + x, k).capitalize()}" for i in range(o)]
    return "\n".join(rows)


# -- near misses --------------------------------------------------------------------------------------------------
def near_misses(c: Mapping[str, Any], good: str, cons: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    return [("task_list: a box in capitals", good.replace("[x]", "[X]", 1).replace("[ ]", "[]", 1))]


FAMILY = Family(
    name="task_list",
    types=(TaskList,),
    checks={"task_list": task_list_score},
    read=read,
    build=build,
    near_misses=near_misses,
    examples=(
        "Write a Markdown task list of five items where exactly two are checked.",
        "Make a checklist with 4 tasks, none of them ticked yet.",
    ),
)
