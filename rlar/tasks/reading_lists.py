"""Layouts of the whole answer, read by the main reader (the second reading reads them apart,
:mod:`rlar.synthesis.second.layouts`): the constraint families of :mod:`rlar.constraints.families` (HTML, task and
nested lists, figures, question/answer pairs: each family's module holds its wordings), then

- repeated units: ``whose first line and last line are identical``, ``the third paragraph repeats the first one
  word for word``, ``line 5 is the same as line 1``, ``the last line is identical to the first`` (``same``);
- links: ``each URL must start with https://``, ``whose link text is exactly the word 'here'`` (``each`` on the
  ``url`` / ``link_text`` units).

What is not read whole is left, so the clause stays partial and is refused.
"""

from __future__ import annotations

import re

from rlar.constraints.families import FAMILIES
from rlar.number_words import ORDINALS
from rlar.tasks.phrasings import ClauseText, Q

__all__ = ["read_lists"]

_ORD_RX = "|".join(sorted(ORDINALS, key=len, reverse=True))


def read_lists(cl: ClauseText, sentence: str, whole: str) -> None:
    """Read the phrasings of the module docstring in one clause (``sentence`` / ``whole``: the clause's sentence and
    the whole instruction, lowercased with digits)."""
    for family in FAMILIES:  # HTML and task lists, nested lists, figures, question/answer pairs
        family.read(cl, sentence, whole)
    _read_same(cl, whole)
    _read_link_forms(cl, whole)


def _quoted(cl: ClauseText, text: str) -> list[str]:
    return [cl.q(t) for t in re.findall(Q, text)]


def _read_same(cl: ClauseText, whole: str) -> None:
    units = r"lines?|paragraphs?|sentences?"

    def same(m: re.Match[str]) -> bool:
        unit = (m.group("u") or m.group("u2") or "").rstrip("s")
        if unit not in ("line", "paragraph", "sentence"):
            return False
        a = ORDINALS.get(m.group("a") or "", None) or (
            int(m.group("a")) if (m.group("a") or "").isdigit() else None
        )
        b = ORDINALS.get(m.group("b") or "", None) or (
            int(m.group("b")) if (m.group("b") or "").isdigit() else None
        )
        if a is None or b is None or a == b:
            return False
        cl.add({"rule": "same", "unit": unit, "index": b if b != 1 else a, "as": a if b != 1 else b})
        return True

    cl.each(
        rf"\b(?:whose|where\s+the|and\s+the"
        rf"|the)?\s*(?P<a>{_ORD_RX})\s+(?P<u>{units})?\s*and\s+(?:the\s+)?(?P<b>{_ORD_RX})\s+"
        rf"(?P<u2>{units})\s+are\s+identical\b",
        same,
    )
    cl.each(
        rf"\b(?:where\s+|and\s+)?(?:the\s+)?(?P<b>{_ORD_RX})\s+(?P<u>{units})\s+(?:repeats"
        rf"|copies)\s+the\s+(?P<a>{_ORD_RX})(?:\s+(?:1|one|(?P<u2>{units})))?"
        rf"(?:\s+word\s+for\s+word|\s+exactly)?\b",
        same,
    )
    cl.each(
        r"\b(?:in\s+which\s+|and\s+)?(?P<u>line|paragraph|sentence)\s+(?P<b>\d+)\s+is\s+(?:the\s+same\s+as"
        r"|identical\s+to)\s+(?:line|paragraph|sentence)\s+(?P<a>\d+)(?P<u2>)",
        same,
    )
    cl.each(
        rf"\b(?:where\s+|in\s+which\s+|and\s+)?the\s+(?P<b>{_ORD_RX})\s+(?P<u>{units})\s+(?:is|must\s+be"
        rf"|should\s+be)\s+"
        rf"(?:identical\s+to|the\s+same\s+as|an?\s+(?:exact\s+)?(?:copy"
        rf"|repeat)\s+of)\s+the\s+(?P<a>{_ORD_RX})(?:\s+(?:1|one|(?P<u2>{units})))?\b",
        same,
    )


def _read_link_forms(cl: ClauseText, whole: str) -> None:
    if not re.search(r"\blinks?\b|\burls?\b", whole):
        return

    def url(m: re.Match[str]) -> bool:
        scheme = m.group("s")
        cl.add({"rule": "each", "unit": "url", "test": "starts_with", "arg": scheme})
        return True

    cl.each(
        r",?\s*\b(?:and\s+)?(?:each|every|its|the|all|their)\s+urls?\s+(?:must|should|has\s+to|have\s+to)\s+(?:start"
        r"|begin)\s+with\s+(?P<s>https?://)",
        url,
    )
    cl.each(
        r",?\s*\b(?:pointing|linking|leading)\s+to\s+an?\s+(?:address|url|page)\s+(?:that\s+|which\s+)?(?:starts|begins)\s+with\s+"
        r"(?P<s>https?://)",
        url,
    )

    def text(m: re.Match[str]) -> bool:
        word = cl.q(m.group("q"))
        cl.add({"rule": "each", "unit": "link_text", "test": "equals", "arg": word})
        return True

    cl.each(rf"\bwhose\s+link\s+text\s+is\s+exactly\s+(?:the\s+word\s+)?(?P<q>{Q})", text)
