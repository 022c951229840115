"""Letter classes and number properties of every unit, read by the main reader (the second
reading reads them apart, :mod:`rlar.synthesis.second.units`).

:func:`read_units` runs on a clause before the other families and blanks what it used:

- a letter class at a word's start or end: ``each beginning with a vowel``, ``every word starts with a
  consonant``, ``words that end in a vowel`` (``each`` test ``starts_in`` / ``ends_in`` with the letters);
- a doubled letter: ``each containing a double letter (the same letter twice in a row)``, ``two identical letters
  side by side``, ``a doubled letter`` (``each`` test ``double_letter``);
- different initials: ``no two of which start with the same letter``, ``each starting with a different
  letter``, ``every word begins with a different letter`` (``order`` relation ``distinct_initials``);
- numbers in a range: ``4 numbers between 10 and 50``, ``greater than 100``, ``from 1 to 9 (inclusive)``, ``in the
  range 1-100``, ``no smaller than 5`` (``each`` test ``range`` with [lo, hi], bounds inclusive, ``greater than``
  strict), whole numbers (``each`` test ``integer``) and no number repeated (``order`` relation ``distinct``);
- a constant ratio: ``each number double the previous one``, ``twice the number before it``, ``3 times the one
  before``, ``triple the previous``, ``each term is the previous multiplied by 4`` (``order`` relation
  ``ratio``).

The unit is the one the clause (or, for a pronoun, the instruction) names; a negated phrase is left unread.
"""

from __future__ import annotations

import re
from typing import Any

from rlar.tasks.phrasings import ClauseText

__all__ = ["read_units"]

_VOWELS = "aeiou"
_CONSONANTS = "bcdfghjklmnpqrstvwxyz"
_UNIT_NOUNS = {"word": r"words?", "line": r"lines?", "sentence": r"sentences?"}
_NUM = r"(?:(?:whole|positive)\s+)?(?:numbers?|integers?|numerals?|values?|terms?)"


def read_units(cl: ClauseText, sentence: str, whole: str) -> None:
    """Read the phrasings of the module docstring in one clause (``sentence`` / ``whole``: the clause's sentence
    and the whole instruction, lowercased with digits)."""
    clause = cl.w
    _read_letter_classes(cl, clause, whole)
    _read_double_letters(cl, clause, whole)
    _read_initials(cl, clause, whole)
    _read_ratio(cl, sentence)
    _read_number_kinds(cl)
    _read_longer(cl, clause, whole)
    _read_first_number(cl, whole)
    _read_ranges(cl, clause, sentence)


def _negated(text: str) -> bool:
    return bool(re.search(r"\b(?:not|never|no|none|without)\b|n't\b", text))


def _unit(clause: str, at: int, whole: str) -> str | None:
    """The unit a test at ``at`` is about: the nearest unit noun before it in the clause, else the instruction's
    last unit noun before the clause's text."""
    found: list[tuple[int, str]] = []
    for unit, rx in _UNIT_NOUNS.items():
        found += [(m.start(), unit) for m in re.finditer(rf"\b{rx}\b", clause[:at])]
    if found:
        return max(found)[1]
    counted = [
        unit
        for unit, rx in _UNIT_NOUNS.items()
        if re.search(rf"\b\d+\s+(?:(?!per\b|on\b|a\b|each\b|every\b)\w+\s+)?{rx}\b", whole)
    ]  # "List 4 words, one per line, each ...": the counted unit is what "each" is
    if len(counted) == 1:
        return counted[0]
    found = []
    for unit, rx in _UNIT_NOUNS.items():
        found += [(m.start(), unit) for m in re.finditer(rf"\b{rx}\b", whole)]
    return max(found)[1] if len(found) and len({u for _, u in found}) == 1 else None


def _unit_here(m: re.Match[str], clause: str, whole: str) -> str | None:
    """The unit the phrase names itself (``each word contains ...``), else the one before it (:func:`_unit`)."""
    named = re.search(r"\b(?:each|every|all)\s+(word|line|sentence)s?\b", m.group(0))
    return named.group(1) if named else _unit(clause, m.start(), whole)


def _each(cl: ClauseText, unit: str, test: str, arg: Any = None) -> None:
    c: dict[str, Any] = {"rule": "each", "unit": unit, "test": test}
    if arg is not None:
        c["arg"] = arg
    cl.add(c)


# -- letters -------------------------------------------------------------------------------------------------
def _read_letter_classes(cl: ClauseText, clause: str, whole: str) -> None:
    def letters(m: re.Match[str]) -> bool:
        if _negated(m.group(0)) or _negated(clause[max(0, m.start() - 12) : m.start()]):
            return False
        unit = _unit_here(m, clause, whole)
        if unit is None:
            return False
        cls = _VOWELS if m.group("cls").startswith("vowel") else _CONSONANTS
        test = "ends_in" if re.match(r"(?:end|finish)", m.group("verb")) else "starts_in"
        _each(cl, unit, test, cls)
        return True

    cl.each(
        r"\b(?:(?:each|every|all)\s+(?:(?:of\s+them|one|1|word|line|sentence)\s+)?)?(?:that\s+|which\s+)?(?:must\s+|should\s+)?"
        r"(?:all\s+)?(?P<verb>begin\w*|start\w*|end\w*|finish\w*)\s+(?:with|in)\s+an?\s+(?P<cls>vowels?|consonants?)"
        r"(?:\s+(?:letter|sound))?\b",
        letters,
    )


def _read_double_letters(cl: ClauseText, clause: str, whole: str) -> None:
    def double(m: re.Match[str]) -> bool:
        if _negated(m.group(0)) or _negated(clause[max(0, m.start() - 12) : m.start()]):
            return False
        unit = _unit_here(m, clause, whole)
        if unit != "word":
            return False
        _each(cl, "word", "double_letter")
        return True

    cl.each(
        r"\b(?:(?:each|every|all)\s+(?:(?:of\s+them|one|1|word)\s+)?)?(?:that\s+|which\s+)?(?:each\s+)?"
        r"(?:contain\w*|ha(?:s|ve|ving)|with|includ\w*|show\w*)\s+(?:at\s+least\s+(?:one|1)\s+|an?\s+|1\s+)?"
        r"(?:double(?:d)?\s+letters?|repeated\s+letter\s+pair|(?:(?:a\s+)?pair\s+of|2)\s+(?:identical|same|matching)\s+"
        r"(?:adjacent\s+|consecutive\s+)?letters?(?:\s+(?:side\s+by\s+side|next\s+to\s+each\s+other|in\s+a\s+row))?"
        r"|(?:(?:a\s+)?pair\s+of\s+|2\s+)?(?:adjacent|consecutive)\s+(?:identical|matching)\s+letters|letter\s+(?:that\s+is\s+)?doubled)\b"
        r"(?:\s*\(?\s*(?:the\s+same\s+letter\s+(?:2\s+times|twice)\s+in\s+a\s+row|2\s+identical\s+letters\s+side\s+by\s+"
        r"side)(?:\s*,?\s*(?:as|like)\s+in\s+\S+)?\s*\)?)?",
        double,
    )


def _read_initials(cl: ClauseText, clause: str, whole: str) -> None:
    def initials(m: re.Match[str]) -> bool:
        unit = _unit_here(m, clause, whole) or "word"
        if unit not in ("word", "line", "sentence"):
            return False
        cl.add({"rule": "order", "unit": unit, "rel": "distinct_initials"})
        return True

    cl.each(
        r"\b(?:with\s+)?no\s+2\s+(?:of\s+(?:which|them|the\s+words)\s+|words\s+|lines\s+|sentences\s+)?(?:may\s+|should\s+|can\s+)?"
        r"(?:start\w*|begin\w*)\s+with\s+the\s+same\s+letter\b"
        r"|\b(?:with\s+)?no\s+2\s+(?:words|lines)\s+(?:share|sharing|having|with)\s+(?:the\s+same\s+|a\s+)?(?:first|initial|"
        r"starting)\s+letter\b"
        r"|\b(?:(?:each|every|all)\s+(?:(?:of\s+them|one|1|word|line|sentence)\s+)?)?(?:that\s+|which\s+)?(?:must\s+)?"
        r"(?:start\w*|begin\w*)\s+with\s+a\s+different\s+letter\b"
        r"|\b(?:all\s+)?with\s+different\s+(?:first|initial|starting)\s+letters\b"
        r"|\b(?:whose|with|where\s+the|and\s+their)\s+(?:first|initial|starting)\s+letters\s+(?:are|must\s+be|should\s+be)\s+"
        r"(?:all\s+)?(?:different|distinct)\b",
        initials,
    )


# -- numbers -------------------------------------------------------------------------------------------------
def _read_ratio(cl: ClauseText, sentence: str) -> None:
    def ratio(m: re.Match[str]) -> bool:
        if _negated(m.group(0)):
            return False
        word = m.group("k") or m.group("w")
        k = {"double": 2, "twice": 2, "triple": 3, "thrice": 3, "quadruple": 4}.get(word or "")
        if k is None:
            k = int(word)
        if k < 2:
            return False
        cl.add({"rule": "order", "unit": "number", "rel": "ratio", "arg": k})
        return True

    prev = (
        r"(?:the\s+)?(?:previous(?:\s+(?:one|1|number|term))?|(?:one|1|number|term)\s+before(?:\s+it)?|preceding"
        r"(?:\s+(?:one|1|number|term))?|last\s+(?:one|1)|prior(?:\s+(?:one|1|number))?)"
    )
    cl.each(
        rf"\b(?:in\s+which\s+|where\s+|so\s+that\s+)?(?:(?:each|every)\s+(?:(?:number|term|value|one|1)\s+)?)?"
        rf"(?:(?:is|being|must\s+be|should\s+be|equals|is\s+equal\s+to|must\s+equal)\s+)?"
        rf"(?:(?P<w>double|twice|triple|thrice|quadruple)|(?P<k>\d+)\s+times)\s+{prev}\b"
        rf"|\b(?:(?:each|every)\s+(?:number|term|value|one|1)\s+)?(?:is\s+)?(?:the\s+)?{prev}\s+(?:multiplied|times)\s+by\s+(?P<k2>\d+)\b",
        lambda m: ratio(m) if not m.groupdict().get("k2") else _ratio_k2(cl, m),
    )


def _read_number_kinds(cl: ClauseText) -> None:
    """``three numbers that are all odd``: the kind said after the noun."""

    def kind(m: re.Match[str]) -> bool:
        _each(cl, "number", m.group("k"))
        cl.blank(m.start("rest"), m.end("rest"))
        return False

    cl.each(
        rf"\b{_NUM}\s+(?P<rest>(?:that|which)\s+(?:are|must\s+be|should\s+be)\s+(?:all\s+)?(?P<k>odd|even|prime)(?:\s+numbers)?)\b",
        kind,
    )


def _read_longer(cl: ClauseText, clause: str, whole: str) -> None:
    """``each word is longer than the previous one``, ``words of increasing length``: every word has more
    letters than the one before."""

    def longer(m: re.Match[str]) -> bool:
        unit = _unit_here(m, clause, whole) or "word"
        if unit != "word":
            return False
        cl.add({"rule": "order", "unit": "word", "rel": "longer"})
        return True

    cl.each(
        r"\b(?:in\s+which\s+|where\s+|so\s+that\s+)?(?:each|every)\s+(?:word\s+|(?:one|1)\s+)?(?:is|must\s+be|should\s+be)\s+longer\s+than\s+"
        r"the\s+(?:previous(?:\s+(?:one|1|word))?|(?:one|1|word)\s+before(?:\s+it)?)\b"
        r"|\b(?:of\s+)?(?:strictly\s+)?increasing\s+length\b",
        longer,
    )


def _read_first_number(cl: ClauseText, whole: str) -> None:
    """``..., beginning with 1`` / ``the first number is 5`` in a list of numbers: the first number."""
    if not re.search(rf"\b{_NUM}\b", whole):
        return

    def first(m: re.Match[str]) -> bool:
        if _negated(cl.w[max(0, m.start() - 10) : m.start()]):
            return False
        n = int(m.group("n"))
        cl.add({"rule": "total", "unit": "number", "agg": "first", "min": n, "max": n})
        return True

    cl.each(
        r"\b(?:(?:and\s+)?(?:beginning|starting|begin|start)\s+with\s+(?:the\s+number\s+)?"
        r"|(?:the\s+)?first\s+(?:number|term|value|one)\s+(?:is|being|must\s+be|should\s+be|has\s+to\s+be)\s+)"
        r"(?P<n>-?\d+)\b(?!\s*(?:words?|sentences?|lines?|letters?|characters?|%|\.\d))",
        first,
    )


def _ratio_k2(cl: ClauseText, m: re.Match[str]) -> bool:
    k = int(m.group("k2"))
    if k < 2:
        return False
    cl.add({"rule": "order", "unit": "number", "rel": "ratio", "arg": k})
    return True


def _read_ranges(cl: ClauseText, clause: str, sentence: str) -> None:
    """Bounds on every number of a list: the noun names the numbers (``4 numbers between 10 and 50``, ``whole
    numbers greater than 100``). ``from A to B`` is a range only after a count (``5 integers from 1 to 9``): ``the
    numbers from 1 to 5`` is a sequence, read with the relations."""
    if not re.search(rf"\b{_NUM}\b", clause):
        return

    def bounds(m: re.Match[str]) -> bool:
        lo = hi = None
        a, b = m.group("a") or m.group("a2") or m.group("a3"), m.group("b") or m.group("b2") or m.group("b3")
        if m.group("a3") and not m.group("count"):
            return False  # "the numbers from 1 to 5": a sequence
        if a is not None and b is not None:
            lo, hi = sorted((int(a), int(b)))
        elif m.group("gt") is not None:
            lo = int(m.group("gt")) + (0 if m.group("ge") else 1)
        elif m.group("lt") is not None:
            hi = int(m.group("lt")) - (0 if m.group("le") else 1)
        else:
            return False
        _each(cl, "number", "range", [lo, hi])
        cl.blank(m.start("rest"), m.end("rest"))
        return False  # the noun (and its count) stay for the count readers

    cl.each(
        rf"(?P<count>\b\d+\s+(?:\w+\s+)?)?\b{_NUM}\s+(?P<rest>(?:(?:that\s+are|which\s+are|that|which|each|all|every\s+one)\s+)?"
        rf"(?:(?:are|is|must\s+be|should\s+be|lying|falling|chosen|lie|fall)\s+)?"
        rf"(?:between\s+(?P<a>\d+)\s+and\s+(?P<b>\d+)"
        rf"|from\s+(?P<a3>\d+)\s+to\s+(?P<b3>\d+)"
        rf"|in\s+the\s+range\s+(?:of\s+|from\s+)?(?P<a2>\d+)\s*(?:-|to|and)\s*(?P<b2>\d+)"
        rf"|(?:(?P<ge>no\s+(?:less|smaller|lower)\s+than|not\s+(?:less|smaller|lower)\s+than|at\s+least)|greater\s+than|"
        rf"larger\s+than|bigger\s+than|higher\s+than|more\s+than|above|over)\s+(?P<gt>\d+)"
        rf"|(?:(?P<le>no\s+(?:greater|larger|bigger|higher|more)\s+than|not\s+(?:greater|larger|more)\s+than|at\s+most)|"
        rf"less\s+than|smaller\s+than|lower\s+than|below|under)\s+(?P<lt>\d+))\b"
        rf"(?!\s+(?:words?|sentences?|lines?|characters?|letters?|paragraphs?|items?|bullets?|digits?)\b)"
        rf"(?:\s*\(?\s*(?:both\s+)?inclusive\s*\)?)?)",
        bounds,
    )
    if any(c.get("test") == "range" for c in cl.found):
        cl.each(
            r"\b(?:with\s+)?no\s+(?:number|value|integer)\s+(?:is\s+|being\s+)?(?:repeated|used\s+(?:more\s+than\s+once|"
            r"twice|2\s+times|more\s+than\s+1\s+times))\b|\ball\s+(?:of\s+them\s+)?(?:different|distinct)\b"
            r"|\b(?:different|distinct)\s+(?=(?:numbers|integers)\b)",
            lambda m: cl.add({"rule": "order", "unit": "number", "rel": "distinct"}),
        )
        if re.search(r"\b(?:whole\s+numbers?|integers?)\b", clause):
            _each(cl, "number", "integer")
