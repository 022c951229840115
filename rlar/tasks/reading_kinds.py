"""A unit's start or end of a kind, its case, and IFBench's word classes, read by the main
reader (the second reading reads them apart, :mod:`rlar.synthesis.second.relations`):

- a unit's end or start of a kind: ``each line has to end with an emoji``, ``end each of your 3 lines with an
  emoji``, ``every line must start with a time``, ``each bullet consists of nothing but a Markdown link``
  (``ends_with_kind`` / ``starts_with_kind`` / ``is_link``; a sentence's closing emoji is left unread: where a
  sentence ends around an emoji is not a rule's to say);
- a quoted start per unit (``each line begins with '- [ ]'``; a list marker is the line's) and what follows it;
- a capital first and a final mark per unit (``every item begins with a capital letter and ends with a full stop``);
- positive integers (``7 positive integers``: a count, each at least 1, whole);
- IFBench's word classes: consecutive words with different initials, initials in alphabet order, prime word
  lengths, a consonant cluster in every word, a paragraph ending with the word it started with, a cap on how often
  any word repeats (``word_repeats``).
"""

from __future__ import annotations

import re

from rlar.tasks.phrasings import CMP_ALL, ClauseText, Q, cmp_kind, to_bounds
from rlar.tasks.reading_relations import _COUNT_NOUN, _SCOPE_RX, _counted_unit, _negated, _scope

__all__ = ["read_kinds"]


def read_kinds(cl: ClauseText, sentence: str, whole: str) -> None:
    """Read the phrasings of the module docstring in one clause (``sentence`` / ``whole``: the clause's sentence and
    the whole instruction, lowercased with digits)."""
    _read_unit_starts(cl, sentence, whole)
    _read_kinds(cl, sentence, whole)
    _read_initials(cl)
    _read_unit_case(cl)
    _read_positive(cl)
    _read_word_classes(cl, whole)


_KINDS = {
    "emojis?": "emoji",
    "(?:24-hour\\s+|hh:mm\\s+)?times?": "time",
    "numbers?": "number",
    "(?:markdown\\s+)?links?": "link",
}


_MARKERS = {"- ", "* ", "- [ ]", "- [x]", "- [ ] ", "- [x] ", "+ ", "• "}


def _read_unit_starts(cl: ClauseText, sentence: str, whole: str) -> None:
    """``each line begins with '- [ ]'``, ``every bullet starts with '- '``: a start of any text per unit (a list
    marker is the line's: the bullet unit's text comes after its marker)."""

    def start(m: re.Match[str]) -> bool:
        text = cl.q(m.group("q"))
        unit = _scope(m.group("scope") or "") or _counted_unit(whole) or ""
        if not text.strip() or unit not in ("line", "item", "sentence", "paragraph") or _negated(cl, m):
            return False
        if text in _MARKERS or text.strip() in {x.strip() for x in _MARKERS}:
            unit = "line"
        cl.add({"rule": "starts_with", "text": text, "per": unit})
        cl.memory["unit_start"] = unit
        return True

    cl.each(
        rf"\b(?:(?:each|every|all)\s+(?:of\s+the\s+)?(?P<scope>{_SCOPE_RX})\s+|each\s+(?:of\s+them\s+|1\s+)?)"
        rf"(?:must\s+|should\s+|has\s+to\s+)?(?:starts?|starting|begins?|beginning|opens?|opening)\s+with\s+(?P<q>{Q})",
        start,
    )
    if cl.memory.get("unit_start"):
        unit = cl.memory["unit_start"]

        def followed(m: re.Match[str]) -> bool:
            if m.group("n"):
                b = to_bounds(cmp_kind(m), int(m.group("n")), None, False)
                if b is None:
                    return False
                cl.add({"rule": "words", "per": unit, **b})
            return True

        cl.each(
            rf"\b(?:and\s+)?followed\s+by\s+(?:a\s+space\s+and\s+)?(?:the|a|its)\s+(?:task|text|item|entry|note)"
            rf"(?:\s+of\s+(?:(?:{CMP_ALL})\s+)?(?P<n>\d+)\s+words?)?\b",
            followed,
        )


def _read_kinds(cl: ClauseText, sentence: str, whole: str) -> None:
    def kind(m: re.Match[str]) -> bool:
        unit = _scope(m.group("scope") or "") or (_counted_unit(whole) or "")
        if unit not in ("line", "sentence", "item", "paragraph") or _negated(cl, m):
            return False
        what = next(v for k, v in _KINDS.items() if re.fullmatch(k, m.group("kind")))
        if what == "emoji" and unit == "sentence":
            return False  # where a sentence ends around an emoji ("tea 🍵." or "tea. 🍵") is not for a rule to say
        side = (
            "starts_with_kind" if m.group("verb").startswith(("start", "begin", "open")) else "ends_with_kind"
        )
        cl.add({"rule": "each", "unit": unit, "test": side, "arg": what})
        cl.memory["ends_kind"] = unit
        return True

    kinds = "|".join(_KINDS)
    cl.each(
        rf"\b(?:(?:each|every|all)\s+(?:of\s+the\s+)?(?P<scope>{_SCOPE_RX})\s+|each\s+(?:of\s+them\s+|1\s+)?)?"
        rf"(?:must|should|has\s+to|have\s+to|needs\s+to|need\s+to)?\s*(?P<verb>ends?|ending|finish(?:es)?|starts?"
        rf"|starting|begins?|"
        rf"beginning|opens?)\s+with\s+(?:an?\s+)?(?P<kind>{kinds})\b",
        kind,
    )

    def verb_first(m: re.Match[str]) -> bool:
        unit = _scope(m.group("scope") or "")
        if unit not in ("line", "item", "paragraph") or _negated(cl, m):
            return False
        what = next(v for k, v in _KINDS.items() if re.fullmatch(k, m.group("kind")))
        side = (
            "starts_with_kind" if m.group("verb").startswith(("start", "begin", "open")) else "ends_with_kind"
        )
        cl.add({"rule": "each", "unit": unit, "test": side, "arg": what})
        cl.memory["ends_kind"] = unit
        if m.group("n"):  # "each of your 3 lines": how many, too
            cl.add({"rule": _COUNT_NOUN[unit], "min": int(m.group("n")), "max": int(m.group("n"))})
        return True

    # "end each of your 3 lines with an emoji", "start every bullet with a number"
    cl.each(
        rf"\b(?P<verb>end|finish|close|start|begin|open)\s+(?:each|every|all)\s+(?:of\s+(?:your"
        rf"|the)\s+)?(?:(?P<n>\d+)\s+)?"
        rf"(?P<scope>{_SCOPE_RX})\s+with\s+(?:an?\s+)?(?P<kind>{kinds})\b",
        verb_first,
    )

    def only_link(m: re.Match[str]) -> bool:
        named = re.findall(rf"\b(?:each|every)\s+({_SCOPE_RX})\b", cl.orig[: m.start() + 1])
        unit = (
            _scope(m.group("scope") or "")
            or (_scope(named[-1]) if named else "")
            or (_counted_unit(whole) or "")
        )
        if unit not in ("line", "item") or _negated(cl, m):
            return False
        cl.add({"rule": "each", "unit": unit, "test": "is_link"})
        return True

    cl.each(
        rf"\b(?:and\s+)?(?:(?:each|every)\s+(?P<scope>{_SCOPE_RX})\s+|each\s+(?:1\s+)?)?(?:consists?|is\s+made)\s+of\s+"
        rf"(?:nothing\s+but|only)\s+(?:an?\s+|1\s+)(?:single\s+)?(?:markdown\s+)?link\b"
        rf"|\b(?:(?:each|every)\s+(?P<scope2>{_SCOPE_RX})\s+)(?:is|must\s+be|should\s+be)\s+(?:only\s+"
        rf"|just\s+)?an?\s+(?:markdown\s+)?link\b",
        lambda m: only_link(m) if not m.group("scope2") else _only_link2(cl, m),
    )


def _only_link2(cl: ClauseText, m: re.Match[str]) -> bool:
    unit = _scope(m.group("scope2") or "")
    if unit not in ("line", "item"):
        return False
    cl.add({"rule": "each", "unit": unit, "test": "is_link"})
    return True


def _read_initials(cl: ClauseText) -> None:
    cl.each(
        r"\b(?:no|never)\s+(?:2|two)\s+(?:consecutive|adjacent|neighbouring|neighboring)\s+words\s+(?:may\s+|can\s+"
        r"|should\s+)?"
        r"(?:share|have|start\s+with|begin\s+with)\s+the\s+same\s+(?:first|initial|starting)\s+letter\b",
        lambda m: cl.add({"rule": "order", "unit": "word", "rel": "initials_differ"}),
    )


_MARKS = {
    "full stop": ".",
    "period": ".",
    "question mark": "?",
    "exclamation mark": "!",
    "exclamation point": "!",
}


def _read_unit_case(cl: ClauseText) -> None:
    """``every item begins with a capital letter and ends with a full stop``: a capital first and a final mark per
    unit (an item's or paragraph's end is ``ends_with`` per unit, a line's or sentence's an ``each`` test)."""

    def case(m: re.Match[str]) -> bool:
        unit = _scope(m.group("scope"))
        if not unit or _negated(cl, m):
            return False
        cl.add({"rule": "each", "unit": unit, "test": "starts_upper"})
        mark = m.group("mark")
        if mark:
            end = _MARKS[re.sub(r"\s+", " ", mark)]
            if unit in ("item", "paragraph"):
                cl.add({"rule": "ends_with", "text": end, "per": unit})
            else:
                cl.add({"rule": "each", "unit": unit, "test": "ends_with", "arg": end})
        return True

    cl.each(
        rf"\b(?:where\s+)?(?:each|every|all)\s+(?:of\s+the\s+)?(?P<scope>{_SCOPE_RX})\s+(?:must\s+"
        rf"|should\s+)?(?:begins?|starts?)\s+"
        rf"with\s+an?\s+(?:capital|upper\s?case|upper-case)(?:\s+letter)?"
        rf"(?:\s+and\s+(?:must\s+|should\s+)?ends?\s+with\s+an?\s+(?P<mark>full\s+stop|period|question\s+mark"
        rf"|exclamation\s+(?:mark|point))"
        rf"(?:\s+inside\s+the\s+tag)?)?\b",
        case,
    )


def _read_positive(cl: ClauseText) -> None:
    """``7 positive integers``: a count of numbers, each at least 1, whole."""

    def positive(m: re.Match[str]) -> bool:
        n = int(m.group("n"))
        cl.add({"rule": "numbers", "min": n, "max": n})
        cl.add({"rule": "each", "unit": "number", "test": "range", "arg": [1, None]})
        cl.add({"rule": "each", "unit": "number", "test": "integer"})
        return True

    cl.each(r"\b(?:of\s+)?(?:exactly\s+)?(?P<n>\d+)\s+positive\s+(?:integers|whole\s+numbers)\b", positive)


def _read_word_classes(cl: ClauseText, whole: str) -> None:
    """IFBench's word classes: initials in alphabet order (``each word starts with the next letter of the
    alphabet``), prime word lengths (``use only words whose lengths are prime numbers``), a consonant cluster in every
    word, a paragraph ending with the word it started with, a cap on how often any word repeats."""
    cl.each(
        r"\b(?:each|every)\s+word\s+(?:in\s+(?:your|the)\s+(?:answer|response|reply)\s+)?(?:must\s+"
        r"|should\s+)?(?:starts?|begins?)\s+with\s+"
        r"the\s+next\s+letter\s+of\s+the\s+alphabet(?:\s*,?\s*(?:looping"
        r"|wrapping)\s+(?:back\s+)?(?:around\s+)?(?:to\s+\S+\s+after\s+\S+)?)?",
        lambda m: cl.add({"rule": "order", "unit": "word", "rel": "alphabet_next"}),
    )
    cl.each(
        r"\b(?:use\s+only|only\s+use)\s+words\s+(?:with|whose)\s+(?:lengths?|letter\s+counts?)\s+(?:that\s+)?(?:are"
        r"|is)\s+(?:a\s+)?prime(?:\s+numbers?)?\b"
        r"|\b(?:every|each)\s+word's\s+length\s+(?:must|should)\s+be\s+(?:a\s+)?prime(?:\s+number)?\b",
        lambda m: cl.add({"rule": "each", "unit": "word", "test": "prime", "of": "letters"}),
    )
    cl.each(
        r"\b(?:each|every)\s+word\s+(?:in\s+(?:your|the)\s+(?:answer|response|reply)\s+)?(?:must\s+"
        r"|should\s+)?(?:have|has|contain)\s+"
        r"(?:at\s+least\s+(?:1|one)\s+|a\s+)?consonant\s+cluster(?:\s*\(\s*(?:2"
        r"|two)\s+or\s+more\s+consonants\s+(?:together|in\s+a\s+row)\s*\))?",
        lambda m: cl.add({"rule": "each", "unit": "word", "test": "consonant_cluster"}),
    )
    cl.each(
        r"\b(?:each|every)\s+paragraph\s+(?:must|should)\s+end\s+with\s+the\s+(?:same\s+)?word\s+it\s+(?:started"
        r"|starts|began|begins)\s+with\b"
        r"|\b(?:begin|start)\s+and\s+end\s+(?:each|every)\s+paragraph\s+with\s+the\s+same\s+word\b",
        lambda m: cl.add({"rule": "each", "unit": "paragraph", "test": "bookended"}),
    )

    def repeats(m: re.Match[str]) -> bool:
        n = int(m.group("n"))
        cl.add({"rule": "word_repeats", "max": n})
        return True

    cl.each(
        r"\b(?:do\s+not|don't|never|should\s+not|must\s+not)\s+(?:repeat|use)\s+any\s+(?:single\s+"
        r"|1\s+)?word\s+more\s+than\s+(?P<n>\d+)\s+times\b"
        r"|\bno\s+word\s+(?:may|should|can|must)\s+(?:appear|occur|be\s+used)\s+more\s+than\s+(?P<n2>\d+)\s+times\b",
        lambda m: repeats(m) if m.group("n") else _repeats2(cl, m),
    )


def _repeats2(cl: ClauseText, m: re.Match[str]) -> bool:
    cl.add({"rule": "word_repeats", "max": int(m.group("n2"))})
    return True
