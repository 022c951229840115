"""The second reading's letter classes, number properties and punctuation counts, read by
keywords apart from :mod:`rlar.tasks.reading_units`: vowels or consonants at a word's start or end, doubled
letters, different initials, a constant ratio between numbers, bounds on every number, whole numbers, numbers
not repeated, the first number, and counts of semicolons, colons, question and exclamation marks and hashtags.

:func:`_units` reads one sentence (lowercased; ``low``: the whole instruction) and returns what it read and the
sentence with the phrases it used blanked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rlar.synthesis.second.vocab import _NOT, _SMALL, _num

_NUMWORD = "|".join(["\\d+", *sorted((w for w in _SMALL if w not in ("a", "single")), key=len, reverse=True)])
_NUMBERS = r"(?:numbers?|integers?|numerals?|values?|terms?)"
_MULTIPLE = {"double": 2, "twice": 2, "triple": 3, "thrice": 3, "quadruple": 4}
_MARKS = {
    "semicolon": "semicolons",
    "colon": "colons",
    "question mark": "questions",
    "exclamation mark": "exclamations",
    "exclamation point": "exclamations",
    "hashtag": "hashtags",
    "comma": "commas",
}


def _unit_of(sentence: str, low: str) -> str | None:
    """What the units are: the one ``each`` / ``every`` names, else the one the instruction counts, else the
    noun the sentence names."""
    marked = re.findall(r"\b(?:each|every|all)\s+(word|line|sentence)s?\b", sentence)
    if marked:
        return marked[0]
    counted = set(re.findall(r"\b(?:" + _NUMWORD + r")\s+(?:[a-z]+\s+)?(word|line|sentence)s\b", low))
    if len(counted) == 1:
        return counted.pop()
    named = re.findall(r"\b(word|line|sentence)s?\b", sentence)
    return named[-1] if named else None


@dataclass
class _Sentence:
    """One sentence (``low``: the whole instruction lowercased) and what its readers found in it: ``out`` the
    constraints, ``used`` the patterns of the phrases they read (blanked at the end)."""

    sentence: str
    low: str
    out: list[dict[str, Any]]
    used: list[str]
    words: set[str]
    neg: bool


def _letter_classes(s: _Sentence) -> None:
    """Letter classes at a word's start or end."""
    sentence, low, out, used, neg = s.sentence, s.low, s.out, s.used, s.neg
    cls = re.search(
        r"\b(start|starts|starting|begin|begins|beginning|end|ends|ending|finish|finishes|finishing)\s+(?:with|in)\s+an?\s+"
        r"(vowel|consonant)\b",
        sentence,
    )
    if cls and not neg:
        unit = _unit_of(sentence, low)
        if unit:
            letters = "aeiou" if cls.group(2) == "vowel" else "bcdfghjklmnpqrstvwxyz"
            test = "ends_in" if cls.group(1).startswith(("end", "finish")) else "starts_in"
            out.append({"rule": "each", "unit": unit, "test": test, "arg": letters})
            used.append(re.escape(cls.group(0)))


def _doubled_letters(s: _Sentence) -> None:
    """A doubled letter in every word."""
    sentence, low, out, used, neg = s.sentence, s.low, s.out, s.used, s.neg
    if (
        not neg
        and (
            re.search(r"\bdoubled?\s+letters?\b", sentence)
            or re.search(
                r"\b(?:two|2)\s+identical\s+letters\s+(?:side by side|next to each other|in a row)\b",
                sentence,
            )
            or re.search(r"\bpair of (?:identical|matching) (?:adjacent |consecutive )?letters\b", sentence)
            or re.search(r"\b(?:adjacent|consecutive) (?:identical|matching) letters\b", sentence)
            or re.search(r"\bsame letter\s+(?:twice|two times|2 times)\s+in a row\b", sentence)
        )
        and _unit_of(sentence, low) == "word"
    ):
        out.append({"rule": "each", "unit": "word", "test": "double_letter"})
        used += [
            r"\bdoubled?\s+letters?\b",
            r"\b(?:pair of )?(?:identical|matching|adjacent|consecutive)\s+"
            r"(?:(?:identical|matching|adjacent)\s+)?letters\b",
            r"\bsame letter\b.*?\bin a row\b",
            r"'book'",
        ]


def _different_initials(s: _Sentence) -> None:
    """Different initials."""
    sentence, low, out, used = s.sentence, s.low, s.out, s.used
    if re.search(
        r"\bno (?:two|2)\b[^.]*\b(?:start|begin)\w*\s+with\s+the\s+same\s+letter\b"
        r"|\b(?:start|begin)\w*\s+with\s+a\s+different\s+letter\b|\bdifferent\s+(?:first|initial)\s+letters\b"
        r"|\b(?:first|initial) letters (?:are|must be|should be) (?:all )?(?:different|distinct)\b",
        sentence,
    ):
        unit = _unit_of(sentence, low) or "word"
        out.append({"rule": "order", "unit": unit, "rel": "distinct_initials"})
        used.append(
            r"\b(?:first|initial) letters (?:are|must be|should be) (?:all )?(?:different|distinct)\b"
        )
        used += [
            r"\bno (?:two|2)\b",
            r"\bsame letter\b",
            r"\bdifferent letter\b",
            r"\bdifferent\s+(?:first|initial)\s+letters\b",
        ]


def _ratio(s: _Sentence) -> None:
    """A constant ratio: "double the previous one", "twice the number before it", "3 times the one before"."""
    sentence, out, used, neg = s.sentence, s.out, s.used, s.neg
    ratio = re.search(
        r"\b(double|twice|triple|thrice|quadruple|(\d+|two|three|four|five)\s+times)\s+(?:the\s+)?(?:previous|preceding|prior|"
        r"(?:one|number|term)\s+before)\b|\bprevious\s+(?:one|number|term)?\s*(?:multiplied|times)\s+by\s+(\d+)\b",
        sentence,
    )
    if ratio and not neg:
        k = _MULTIPLE.get(ratio.group(1)) or _num(ratio.group(2) or ratio.group(3) or "")
        if k and k >= 2:
            out.append({"rule": "order", "unit": "number", "rel": "ratio", "arg": int(k)})
            used.append(re.escape(ratio.group(0)))


def _kind_after_noun(s: _Sentence) -> None:
    """The kind said after the noun: "three numbers that are all odd"."""
    sentence, out, used, neg = s.sentence, s.out, s.used, s.neg
    said_kind = re.search(
        r"\b(?:numbers|integers) (?:that|which) (?:are|must be|should be) (?:all )?(odd|even|prime)\b",
        sentence,
    )
    if said_kind and not neg:
        out.append({"rule": "each", "unit": "number", "test": said_kind.group(1)})
        used.append(r"\b(?:that|which) (?:are|must be|should be) (?:all )?(?:odd|even|prime)\b")


def _longer_words(s: _Sentence) -> None:
    """Each word longer than the one before."""
    sentence, out, used = s.sentence, s.out, s.used
    if re.search(
        r"\b(?:each|every) word (?:is|must be|should be) longer than the (?:previous|one before)\b"
        r"|\bincreasing length\b",
        sentence,
    ):
        out.append({"rule": "order", "unit": "word", "rel": "longer"})
        used.append(r"\blonger than the (?:previous|one before)(?: one| word)?\b|\bincreasing length\b")


def _first_number(s: _Sentence) -> None:
    """The first number."""
    sentence, low, out, used = s.sentence, s.low, s.out, s.used
    first = re.search(
        r"\b(?:beginning|starting|begin|start)\s+with\s+(\d+)\b(?!\s*(?:words?|lines?|letters?))", sentence
    )
    if first and re.search(r"\b" + _NUMBERS + r"\b", low):
        n = int(first.group(1))
        out.append({"rule": "total", "unit": "number", "agg": "first", "min": n, "max": n})
        used.append(re.escape(first.group(0)))


def _number_bounds(s: _Sentence) -> None:
    """Bounds on every number: "4 numbers between 10 and 50", "whole numbers greater than 100"."""
    sentence, out, used = s.sentence, s.out, s.used
    bound = re.search(
        r"\b(?:(?P<count>"
        + _NUMWORD
        + r")\s+)?(?:whole\s+|positive\s+)?"
        + _NUMBERS
        + r"\s+(?P<tail>(?:(?:that are|that lie|which lie|lying|each|all)\s+)?"
        r"(?:between\s+(?P<a>\d+)\s+and\s+(?P<b>\d+)|from\s+(?P<f>\d+)\s+to\s+(?P<t>\d+)"
        r"|in\s+the\s+range\s+(?:of\s+|from\s+)?(?P<ra>\d+)\s*(?:-|to)\s*(?P<rb>\d+)"
        r"|(?:greater|larger|bigger|more|higher)\s+than\s+(?P<gt>\d+)|(?:less|smaller|lower|fewer)\s+than\s+(?P<lt>\d+)"
        r"|at\s+least\s+(?P<ge>\d+)|at\s+most\s+(?P<le>\d+)))\b"
        r"(?!\s+(?:words?|sentences?|lines?|characters?|letters?|paragraphs?|items?|bullets?))",
        sentence,
    )
    if bound and not (bound.group("f") and not bound.group("count")):  # "the numbers from 1 to 5": a sequence
        lo: int | None = None
        hi: int | None = None
        if bound.group("a"):
            lo, hi = sorted((int(bound.group("a")), int(bound.group("b"))))
        elif bound.group("f"):
            lo, hi = sorted((int(bound.group("f")), int(bound.group("t"))))
        elif bound.group("ra"):
            lo, hi = sorted((int(bound.group("ra")), int(bound.group("rb"))))
        elif bound.group("gt"):
            lo = int(bound.group("gt")) + 1
        elif bound.group("lt"):
            hi = int(bound.group("lt")) - 1
        elif bound.group("ge"):
            lo = int(bound.group("ge"))
        else:
            hi = int(bound.group("le"))
        out.append({"rule": "each", "unit": "number", "test": "range", "arg": [lo, hi]})
        used.append(re.escape(bound.group("tail")))
        used.append(r"\(\s*inclusive\s*\)|\binclusive\b")
        if re.search(
            r"\bno number\s+(?:is\s+)?repeated\b|\b(?:different|distinct)\s+(?:numbers|integers)\b|\bno repeats\b",
            sentence,
        ):
            out.append({"rule": "order", "unit": "number", "rel": "distinct"})
            used.append(r"\bno number\s+(?:is\s+)?repeated\b")
        if re.search(r"\b(?:whole\s+numbers?|integers?)\b", sentence):
            out.append({"rule": "each", "unit": "number", "test": "integer"})


def _capital_words(s: _Sentence) -> None:
    """Words in capitals counted: "words with all capital letters should appear at least 3 times"."""
    sentence, out, used = s.sentence, s.out, s.used
    capw = re.search(
        r"\bwords?\s+(?:with|in)\s+(?:all\s+)?(?:capital letters|capitals|caps|upper\s?case letters)\s+(?:\w+\s+)?"
        r"(?:appear|occur|be used)\s+(at least|at most|less than|fewer than|more than|exactly)?\s*("
        + _NUMWORD
        + r")\s+times\b",
        sentence,
    )
    if capw and _num(capw.group(2)) is not None:
        n = int(_num(capw.group(2)) or 0)
        kind = capw.group(1) or "exactly"
        bounds = {
            "at least": {"min": n},
            "at most": {"max": n},
            "less than": {"max": max(0, n - 1)},
            "fewer than": {"max": max(0, n - 1)},
            "more than": {"min": n + 1},
        }.get(kind, {"min": n, "max": n})
        out.append({"rule": "capital_words", **bounds})
        used.append(re.escape(capw.group(0)))


def _highlighted_parts(s: _Sentence) -> None:
    """Highlighted parts counted: "emphasize at least 2 parts with markdown italics"."""
    sentence, out, used, neg = s.sentence, s.out, s.used, s.neg
    hl = re.search(
        r"\b(?:highlight|emphasi[sz]e|italici[sz]e|bold)\w*\s+(at least|at most|exactly|no more than)?\s*("
        + _NUMWORD
        + r")\s+(?:parts|part|sections?|phrases?|words?|passages?)\b",
        sentence,
    )
    if hl and _num(hl.group(2)) is not None and not neg:
        n = int(_num(hl.group(2)) or 0)
        kind = hl.group(1) or "exactly"
        hb = (
            {"min": n}
            if kind == "at least"
            else {"max": n}
            if kind in ("at most", "no more than")
            else {"min": n, "max": n}
        )
        out.append({"rule": "highlights", **hb})
        used.append(re.escape(hl.group(0)))


def _mark_counts(s: _Sentence) -> None:
    """Counts of one punctuation mark (or hashtags)"""
    sentence, out, used = s.sentence, s.out, s.used
    for noun, rule in _MARKS.items():
        banned = re.search(
            r"\b(?:(?:do not|don't|never)\s+(?:use|include|have)\s+(?:any\s+|a single\s+|one\s+|even one\s+)?"
            r"|without\s+(?:using\s+)?(?:any\s+)?"
            r"|avoid\s+(?:using\s+)?(?:any\s+)?)" + noun + r"s?\b",
            sentence,
        )
        if banned:
            out.append({"rule": rule, "max": 0})
            used.append(re.escape(banned.group(0)))
            continue
        m = re.search(
            r"\b(not\s+(?:use\s+)?more\s+than|no\s+more\s+than|at\s+most|at\s+least|exactly|no\s+(?:fewer|less)\s+than|"
            r"not\s+(?:fewer|less)\s+than|more\s+than|fewer\s+than|between\s+\w+\s+and)?\s*("
            + _NUMWORD
            + r"|no|zero)\s+"
            + noun
            + r"s?\b",
            sentence,
        )
        if m is None:
            continue
        word = m.group(2)
        found = 0 if word in ("no", "zero") else _num(word)
        if found is None:
            continue
        n = int(found)
        cmp = (m.group(1) or "").replace("  ", " ")
        if word in ("no", "zero"):
            c = {"rule": rule, "max": 0}
        elif re.match(r"(?:not\s+(?:use\s+)?more|no\s+more)\s+than|at\s+most", cmp):
            c = {"rule": rule, "max": n}
        elif cmp.startswith("at least") or re.match(r"(?:no|not)\s+(?:fewer|less)", cmp):
            c = {"rule": rule, "min": n}
        elif cmp.startswith("between") and _num(cmp.split()[1]) is not None:
            c = {"rule": rule, "min": int(_num(cmp.split()[1]) or 0), "max": n}
        elif cmp.startswith("more than"):
            c = {"rule": rule, "min": n + 1}
        elif cmp.startswith("fewer than"):
            c = {"rule": rule, "max": max(0, n - 1)}
        else:
            c = {"rule": rule, "min": n, "max": n}
        if rule == "hashtags" and re.search(
            r"\b(?:at|to) the (?:very )?(?:end|bottom)\b", sentence[m.end() : m.end() + 30]
        ):  # "N hashtags at the end": they close the answer
            c = {**c, "rule": "trailing", "what": "hashtags"}
        out.append(c)
        used.append(re.escape(m.group(0).strip()))


_READERS = (
    _letter_classes,
    _doubled_letters,
    _different_initials,
    _ratio,
    _kind_after_noun,
    _longer_words,
    _first_number,
    _number_bounds,
    _capital_words,
    _highlighted_parts,
    _mark_counts,
)


def _units(sentence: str, low: str) -> tuple[list[dict[str, Any]], str]:
    out: list[dict[str, Any]] = []
    used: list[str] = []
    words = set(re.findall(r"[a-z']+", sentence))
    neg = bool(words & (_NOT - {"no"})) or "n't" in sentence
    s = _Sentence(sentence, low, out, used, words, neg)
    for read in _READERS:
        read(s)
    for p in used:
        sentence = re.sub(p, " ", sentence)
    return out, sentence
