"""The second reading's measured and related units, read by keywords apart from
:mod:`rlar.tasks.reading_relations`: a count measured in every unit (prime, even, odd, a multiple, equal across
units), a staircase of leading spaces, one first word for every unit, each unit opening with the last word of the
one before, a line of words reversed, each number the sum of the two before, the first or last number's value, a
quoted start per unit, a unit ending or starting with an emoji / time / number / link or being one link, a capital
first and a final mark per unit, positive integers, consecutive words with different initials.

:func:`_relations` reads one sentence (lowercased; ``low``: the whole instruction) and returns what it read and
the sentence with the phrases it used blanked.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rlar.synthesis.second.vocab import _value

_UNITS = {
    "sentence": "sentence",
    "line": "line",
    "row": "line",
    "paragraph": "paragraph",
    "bullet": "item",
    "item": "item",
    "stanza": "paragraph",
}
_UNIT = r"(sentence|line|row|paragraph|bullet|item|stanza)s?"
_MEASURE = {
    "word": "words",
    "letter": "letters",
    "character": "chars",
    "sentence": "sentences",
    "syllable": "syllables",
}
_N = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten)"


def _blank(sentence: str, m: re.Match[str]) -> str:
    return sentence[: m.start()] + " " * (m.end() - m.start()) + sentence[m.end() :]


def _counted(low: str) -> str | None:
    kinds = {_UNITS[u] for u in re.findall(rf"\b(?:{_N})\s+(?:\w+\s+)?{_UNIT}\b", low)}
    return kinds.pop() if len(kinds) == 1 else None


def _named(sentence: str) -> str | None:
    found = re.findall(
        rf"\b(?:each|every|all)\s+(?:{_N}\s+)?(?:of\s+(?:the|your)\s+)?(?:new\s+)?{_UNIT}\b", sentence
    )
    return _UNITS[found[0]] if found else None


@dataclass
class _Said:
    """One sentence being read (``low``: the whole instruction; the phrases read are blanked from ``sentence``)
    and the constraints read from it."""

    sentence: str
    low: str
    raw: str
    out: list[dict[str, Any]] = field(default_factory=list)

    def take(self, rx: str, make: Callable[[re.Match[str]], list[dict[str, Any]]]) -> None:
        """Every match of ``rx`` that ``make`` turns into constraints is read: they are kept, the match blanked."""
        for m in list(re.finditer(rx, self.sentence)):
            made = make(m)
            if made:
                self.out.extend(made)
                self.sentence = _blank(self.sentence, m)


def _measured(s: _Said) -> None:
    """A measure of every unit."""
    low = s.low

    def measured(m: re.Match[str]) -> list[dict[str, Any]]:
        unit = (
            _UNITS.get(m.group("u") or "", "")
            or _named(s.sentence[: m.end()])
            or ("answer" if not m.group("u") else "")
        )
        if unit == "answer" and re.search(r"\beach\s+\w*\s*$", s.sentence[: m.start()]):
            unit = _counted(low) or ""  # "each having ...": the units counted
        meas = _MEASURE[m.group("m")]
        prop = m.group("p")
        if not unit:
            return []
        c: dict[str, Any] = {"rule": "each", "unit": unit, "of": meas, "test": prop}
        if prop == "multiple":
            c.update({"test": "divisible", "arg": _value(m.group("k") or "") or 0})
        if prop == "perfect":
            c["test"] = "square"
        return [c]

    s.take(
        rf"\bnumber\s+of\s+(?P<m>word|letter|character|sentence|syllable)s?\s+in\s+(?:each"
        rf"|every)\s+{_UNIT.replace('(', '(?P<u>', 1)}\s+"
        r"(?:must|should|has to)?\s*(?:be|is)\s+(?:a\s+|an\s+)?(?P<p>prime|even|odd|perfect"
        r"|multiple)(?:\s+square)?(?:\s+of\s+(?P<k>\w+))?(?:\s+number)?",
        measured,
    )
    s.take(
        rf"\b(?:each|every)\s+{_UNIT.replace('(', '(?P<u>', 1)}'s\s+(?P<m>word|letter|character|sentence"
        rf"|syllable)\s+count\s+"
        r"(?:must|should|has to)?\s*(?:be|is)\s+(?:a\s+|an\s+)?(?P<p>prime|even|odd|perfect"
        r"|multiple)(?:\s+square)?(?:\s+of\s+(?P<k>\w+))?(?:\s+number)?",
        measured,
    )
    s.take(
        r"\b(?:an?\s+)?(?P<p>prime|even|odd)\s+number\s+of\s+(?P<m>word|letter|character|sentence"
        r"|syllable)s\b(?P<u>)(?P<k>)",
        measured,
    )

    def equal_after(m: re.Match[str]) -> list[dict[str, Any]]:
        named = re.findall(rf"{_UNIT}\s+$", s.sentence[: m.start()])
        if not named:
            return []
        return [{"rule": "order", "unit": _UNITS[named[-1]], "rel": "equal", "of": _MEASURE[m.group("m")]}]

    s.take(
        r"(?<=\s)(?:that|which)\s+(?:all\s+)?(?:have|has|contain)\s+the\s+same\s+number\s+of\s+"
        r"(?P<m>word|letter|character|sentence|syllable)s\b",
        equal_after,
    )
    s.take(
        rf"\b(?:all|every|each)\s+(?:of\s+the\s+)?{_UNIT.replace('(', '(?P<u>', 1)}\s+(?:must\s+|should\s+)?(?:have"
        rf"|has|contain)\s+"
        r"the\s+same\s+number\s+of\s+(?P<m>word|letter|character|sentence|syllable)s\b",
        lambda m: [
            {"rule": "order", "unit": _UNITS[m.group("u")], "rel": "equal", "of": _MEASURE[m.group("m")]}
        ],
    )


def _staircase(s: _Said) -> None:
    """Staircases of leading spaces."""
    low, out = s.low, s.out
    if re.search(r"\bindent|\bleading spaces|\bstaircase", low):
        s.take(
            rf"\bindented\s+(?:by\s+)?(?P<n>{_N})?\s*more\s+spaces?\s+than\s+the\s+(?:line|row|one)\s+(?:before"
            rf"|above)\b|\bindented\s+(?:by\s+)?"
            rf"(?P<n2>{_N})?\s*more\s+spaces?\s+than\s+the\s+previous(?:\s+line)?\b",
            lambda m: [
                {
                    "rule": "order",
                    "unit": "line",
                    "rel": "step",
                    "arg": _value(m.group("n") or m.group("n2") or "one"),
                    "of": "indent",
                }
            ],
        )
        s.take(
            rf"\bindent\s+each\s+line\s+by\s+(?P<n>{_N})\s+more\s+spaces?\s+than\s+the\s+previous(?:\s+line)?\b",
            lambda m: [
                {"rule": "order", "unit": "line", "rel": "step", "arg": _value(m.group("n")), "of": "indent"}
            ],
        )
        s.take(
            r"\bstarting\s+with\s+no\s+indentation\s+on\s+the\s+first\s+line\b",
            lambda m: [{"rule": "indent", "per": "line", "index": 1, "max": 0}],
        )
        s.take(
            r"\b(?:begin|start)s?\s+with\s+more\s+(?:leading\s+)?spaces\s+than\s+the\s+(?:line|row)\s+(?:above"
            r"|before)\b",
            lambda m: [{"rule": "order", "unit": "line", "rel": "increasing", "of": "indent"}],
        )
        stairs = re.search(
            rf"\bline\s+(?:1|one)\s+has\s+no\s+leading\s+spaces?\s*,\s*line\s+(?:2"
            rf"|two)\s+has\s+(?P<a>{_N})\s*,\s*line\s+(?:3|three)\s+has\s+(?P<b>{_N})",
            s.sentence,
        )
        if stairs:
            a, b = _value(stairs.group("a")), _value(stairs.group("b"))
            if a and b and b - a == a:
                out += [
                    {"rule": "order", "unit": "line", "rel": "step", "arg": a, "of": "indent"},
                    {"rule": "indent", "per": "line", "index": 1, "max": 0},
                ]
                s.sentence = _blank(s.sentence, stairs)
                more = re.search(r"\band so on\b(?:\s*\(\s*\w+\s+more\s+each\s+line\s*\))?", s.sentence)
                if more:
                    s.sentence = _blank(s.sentence, more)
        s.take(
            r"\b(?:the\s+)?first\s+line\s+(?:starts|begins|has)\s+(?:with\s+)?no\s+(?:leading\s+)?(?:spaces?"
            r"|indentation)\b",
            lambda m: [{"rule": "indent", "per": "line", "index": 1, "max": 0}],
        )


def _same_first(s: _Said) -> None:
    """One first word for every unit."""
    low = s.low
    s.take(
        r"\b(?:start|begin|open)\w*\s+(?:(?:each|every|all)\s+(?:of\s+the\s+)?(?P<u>paragraph|line|sentence|bullet"
        r"|item)s?\s+)?with\s+"
        r"(?:one\s+and\s+the|the|an)\s+(?:same|identical)(?:\s+first)?\s+word\b",
        lambda m: (
            [
                {
                    "rule": "order",
                    "unit": _UNITS.get(m.group("u") or "", "") or _named(s.sentence) or _counted(low) or "",
                    "rel": "same_first",
                }
            ]
            if (_UNITS.get(m.group("u") or "", "") or _named(s.sentence) or _counted(low))
            else []
        ),
    )


def _last_first(s: _Said) -> None:
    """Each unit opening with the last word of the one before."""
    low, out = s.low, s.out
    s.take(
        rf"\bthe\s+(?:last|final)\s+word\s+of\s+each\s+{_UNIT.replace('(', '(?P<u>', 1)}\s+is\s+"
        rf"the\s+first\s+word\s+of\s+the\s+next\b"
        rf"|\beach\s+(?:new\s+)?(?P<u2>sentence"
        rf"|line)\s+must\s+begin\s+with\s+the\s+word\s+that\s+ended\s+the\s+(?:sentence|line)\s+before\s+it\b",
        lambda m: [{"rule": "order", "unit": _UNITS[m.group("u") or m.group("u2")], "rel": "last_first"}],
    )
    s.take(
        rf"\b(?:begin|start)\s+each\s+{_UNIT.replace('(', '(?P<u>', 1)}\s+(?:after the first\s+)?with\s+the\s+"
        rf"(?:last|final)\s+word\s+of\s+the\s+"
        r"(?:sentence|line)\s+before\s+it\b",
        lambda m: [{"rule": "order", "unit": _UNITS[m.group("u")], "rel": "last_first"}],
    )
    told = re.findall(r"\b(sentence|line) (\w+) starts with the final word of (?:sentence|line) (\w+)", low)
    total = _counted(low)
    if told and total:
        steps = sorted((_value(b) or 0, _value(a) or 0) for _, b, a in told)
        count = re.search(rf"\b({_N})\s+{told[0][0]}s\b", low)
        n = _value(count.group(1)) if count else None
        if n and steps == [(k, k - 1) for k in range(2, n + 1)]:
            s.take(
                r"\b(?:and\s+)?(?:sentence|line) \w+ starts with the final word of (?:sentence|line) \w+",
                lambda m: [{"rule": "order", "unit": told[0][0], "rel": "last_first"}],
            )
    if any(c.get("rel") == "last_first" for c in out):
        s.take(r"\bmake\s+a\s+chain\s+of\s+(?:sentences|lines)\b", lambda m: [])


def _final_mark(s: _Said) -> None:
    """The answer's final mark."""
    s.take(
        r"\b(?:the\s+)?(?:reply|answer|response|text)\s+(?:must|should"
        r"|has to)\s+end\s+with\s+an?\s+(?P<k>question mark|period|full stop|exclamation mark)\b",
        lambda m: [
            {
                "rule": "ends_with",
                "text": {"question mark": "?", "exclamation mark": "!"}.get(m.group("k"), "."),
            }
        ],
    )


def _line_of_words(s: _Said) -> None:
    """ "first write a line of six words": every line (the second repeats the first's words)"""
    low = s.low
    s.take(
        rf"\ba\s+(?:line|sentence)\s+of\s+(?P<n>{_N})\s+words\b",
        lambda m: (
            [{"rule": "words", "per": "line", "min": _value(m.group("n")), "max": _value(m.group("n"))}]
            if re.search(r"backwards|reverse", low)
            else []
        ),
    )


def _reversed(s: _Said) -> None:
    """A line's words reversed."""

    def reversed_words(m: re.Match[str]) -> list[dict[str, Any]]:
        got: list[dict[str, Any]] = [{"rule": "order", "unit": "line", "rel": "reversed"}]
        n = _value(m.group("n") or "")
        if n:
            got.append({"rule": "words", "per": "line", "min": n, "max": n})
        return got

    s.take(
        r"\b(?:the\s+same|those|the"
        r"|the\s+first\s+line's)\s+(?:(?P<n>\w+)\s+)?words(?:\s+of\s+the\s+first\s+line)?,?\s+"
        r"(?:in\s+reverse\s+order|backwards|reversed)\b"
        r"(?:\s*\(last word first\))?",
        reversed_words,
    )


def _sums(s: _Said) -> None:
    """Sums of the two before."""
    low, out = s.low, s.out
    s.take(
        r"\bthe\s+sum\s+of\s+the\s+(?:two|2)\s+(?:numbers|terms|lines)?\s*(?:before\s+it|above\s+it|preceding\s*\w*"
        r"|previous\s*\w*)",
        lambda m: [{"rule": "order", "unit": "number", "rel": "sum_prev2"}],
    )
    if any(c.get("rel") == "sum_prev2" for c in out) or "sum of the two" in low:
        s.take(
            r"\bfrom\s+the\s+third\s+(?:line|number|term)?\s*on(?:ward)?\b|\bfrom\s+the\s+third\s+onward\b"
            r"|\bafter\s+the\s+first\s+two\b",
            lambda m: [],
        )
        s.take(r"\ba\s+sequence\s+of\b", lambda m: [])


def _first_or_last_value(s: _Said) -> None:
    """The first or last number's value."""

    def value(m: re.Match[str]) -> list[dict[str, Any]]:
        n = _value(m.group("n"))
        if n is None:
            return []
        word = m.group("cmp")
        if word in ("greater than", "more than", "above", "over"):
            b = {"min": n + 1}
        elif word in ("less than", "smaller than", "below", "under"):
            b = {"max": n - 1}
        elif word == "at least":
            b = {"min": n}
        elif word == "at most":
            b = {"max": n}
        else:
            return []
        return [
            {"rule": "total", "unit": "number", "agg": "first" if m.group("o") == "first" else "last", **b}
        ]

    s.take(
        rf"\bthe\s+(?P<o>first|last|final)\s+number\s+(?:must|should)?\s*be\s+(?P<cmp>greater than|more than|above"
        rf"|over|less than|smaller than|"
        rf"below|under|at least|at most)\s+(?P<n>{_N}|\d+)\b",
        value,
    )


def _quoted_start(s: _Said) -> None:
    """A quoted start per unit."""
    low, raw, out = s.low, s.raw, s.out

    def start(m: re.Match[str]) -> list[dict[str, Any]]:
        unit = _UNITS.get(m.group("u") or "", "") or _counted(low) or ""
        q = m.group("q")
        if not unit or not q.strip():
            return []
        if q.strip() in ("-", "*", "- [ ]", "- [x]", "+"):
            unit = "line"
        written = re.search("'(" + re.escape(q) + ")'", raw, re.I)
        return [{"rule": "starts_with", "text": written.group(1) if written else q, "per": unit}]

    s.take(
        rf"\b(?:each|every)\s+(?:{_UNIT.replace('(', '(?P<u>', 1)}\s+)?(?:begins|starts|starting"
        rf"|beginning)\s+with\s+'(?P<q>[^']+)'",
        start,
    )
    if any(c["rule"] == "starts_with" and c.get("per") for c in out):
        s.take(r"\bfollowed\s+by\s+(?:a\s+space\s+and\s+)?(?:the|a)\s+task\b", lambda m: [])


def _kind_at_ends(s: _Said) -> None:
    """A unit ending or starting with an emoji, a time, a number; one link per unit."""
    low = s.low
    kinds = {"emoji": "emoji", "time": "time", "number": "number", "link": "link"}

    def kind(m: re.Match[str]) -> list[dict[str, Any]]:
        unit = _UNITS.get(m.group("u") or "", "") or _counted(low) or ""
        if not unit:
            return []
        side = "starts_with_kind" if m.group("v").startswith(("start", "begin")) else "ends_with_kind"
        if unit == "sentence" and m.group("k") == "emoji":
            return []
        return [{"rule": "each", "unit": unit, "test": side, "arg": kinds[m.group("k")]}]

    s.take(
        rf"\b(?:each|every)\s+{_UNIT.replace('(', '(?P<u>', 1)}\s+(?:must|should|has to|needs to)?\s*(?P<v>end|start"
        rf"|begin)s?\s+with\s+an?\s+"
        r"(?:24-hour\s+)?(?P<k>emoji|time|number|link)\b",
        kind,
    )

    def kind_counted(m: re.Match[str]) -> list[dict[str, Any]]:
        got = kind(m)
        n = _value(m.group("n") or "")
        if got and n:
            count = {"line": "lines", "item": "items", "paragraph": "paragraphs", "sentence": "sentences"}[
                got[0]["unit"]
            ]
            got.append({"rule": count, "min": n, "max": n})
        return got

    s.take(
        rf"\b(?P<v>end|start|begin|finish)\s+(?:each|every"
        rf"|all)\s+(?:of\s+your\s+)?(?:(?P<n>{_N})\s+)?{_UNIT.replace('(', '(?P<u>', 1)}\s+with\s+an?\s+"
        r"(?P<k>emoji|time|number|link)\b",
        kind_counted,
    )

    def link(m: re.Match[str]) -> list[dict[str, Any]]:
        named = re.findall(rf"\b(?:each|every)\s+{_UNIT}\b", s.sentence[: m.start() + 1])
        unit = _UNITS[named[-1]] if named else (_counted(low) or "")
        return [{"rule": "each", "unit": unit, "test": "is_link"}] if unit in ("line", "item") else []

    s.take(r"\bconsists?\s+of\s+nothing\s+but\s+a\s+markdown\s+link\b", link)


def _capital_and_mark(s: _Said) -> None:
    """A capital first and a final mark per unit."""
    marks = {"full stop": ".", "period": ".", "question mark": "?", "exclamation mark": "!"}

    def case(m: re.Match[str]) -> list[dict[str, Any]]:
        unit = _UNITS[m.group("u")]
        got: list[dict[str, Any]] = [{"rule": "each", "unit": unit, "test": "starts_upper"}]
        if m.group("mark"):
            end = marks[m.group("mark")]
            got.append(
                {"rule": "ends_with", "text": end, "per": unit}
                if unit in ("item", "paragraph")
                else {"rule": "each", "unit": unit, "test": "ends_with", "arg": end}
            )
        return got

    s.take(
        rf"\b(?:each|every)\s+{_UNIT.replace('(', '(?P<u>', 1)}\s+(?:text\s+)?begins\s+with\s+a\s+capital\s+letter"
        rf"(?:\s+and\s+ends\s+with\s+a\s+"
        r"(?P<mark>full stop|period|question mark|exclamation mark)(?:\s+inside\s+the\s+tag)?)?",
        case,
    )


def _integers_and_initials(s: _Said) -> None:
    """Positive integers; different initials of neighbouring words."""

    def positive(m: re.Match[str]) -> list[dict[str, Any]]:
        n = _value(m.group("n"))
        if n is None:
            return []
        return [
            {"rule": "numbers", "min": n, "max": n},
            {"rule": "each", "unit": "number", "test": "range", "arg": [1, None]},
            {"rule": "each", "unit": "number", "test": "integer"},
        ]

    s.take(rf"\b(?P<n>{_N})\s+positive\s+(?:integers|whole\s+numbers)\b", positive)
    s.take(
        r"\bno\s+two\s+(?:consecutive|adjacent)\s+words\s+(?:may\s+|can\s+)?(?:share|have"
        r"|start with)\s+the\s+same\s+(?:first|initial)\s+letter\b",
        lambda m: [{"rule": "order", "unit": "word", "rel": "initials_differ"}],
    )


def _word_classes(s: _Said) -> None:
    """IFBench's word classes."""
    s.take(
        r"\b(?:each|every) word (?:in (?:your|the) (?:answer|response|reply) )?(?:must |should )?(?:start"
        r"|begin)s? with the next letter of the alphabet"
        r"(?:,? (?:looping|wrapping) back to \S+ after \S+)?",
        lambda m: [{"rule": "order", "unit": "word", "rel": "alphabet_next"}],
    )
    s.take(
        r"\b(?:use only|only use) words (?:with|whose) lengths? (?:that )?(?:are|is) (?:a )?prime(?: numbers?)?\b",
        lambda m: [{"rule": "each", "unit": "word", "test": "prime", "of": "letters"}],
    )
    s.take(
        r"\b(?:each|every) word (?:must |should )?(?:have|has|contain) (?:at least one "
        r"|a )?consonant cluster(?:\s*\([^)]*\))?",
        lambda m: [{"rule": "each", "unit": "word", "test": "consonant_cluster"}],
    )
    s.take(
        r"\b(?:each|every) paragraph (?:must|should) end with the (?:same )?word it (?:started|starts|began"
        r"|begins) with\b"
        r"|\b(?:begin|start) and end (?:each|every) paragraph with the same word\b",
        lambda m: [{"rule": "each", "unit": "paragraph", "test": "bookended"}],
    )
    s.take(
        r"\b(?:do not|don't|never) (?:repeat|use) any (?:single )?word more than (?P<n>\w+) times\b"
        r"|\bno word (?:may|should|can) (?:appear|occur|be used) more than (?P<n2>\w+) times\b",
        lambda m: (
            [{"rule": "word_repeats", "max": _value(m.group("n") or m.group("n2"))}]
            if _value(m.group("n") or m.group("n2") or "")
            else []
        ),
    )


_READERS = (
    _measured,
    _staircase,
    _same_first,
    _last_first,
    _final_mark,
    _line_of_words,
    _reversed,
    _sums,
    _first_or_last_value,
    _quoted_start,
    _kind_at_ends,
    _capital_and_mark,
    _integers_and_initials,
    _word_classes,
)


def _relations(sentence: str, low: str, raw: str = "") -> tuple[list[dict[str, Any]], str]:
    s = _Said(sentence, low, raw)
    for read in _READERS:
        read(s)
    return s.out, s.sentence
