"""Compositional phrasings: what every unit must be, how units relate, totals, and output shapes.

:func:`read_shapes` runs on a clause before the other families of :mod:`rlar.tasks.phrasing_families` and
turns these phrasings into the composed rules of :mod:`rlar.constraints.vocabulary` (``each``, ``order``,
``total``, ``spell``, ``table``, ``yaml_keys``), blanking what it used so the clause's leftover shows what was
not understood:

- the unit a phrase talks about is the nearest unit noun (``words``, ``lines``, ``sentences``, ``numbers`` /
  ``integers``, ``dates`` and ``colour codes`` — which are lines), or the last one the instruction named
  (``every one of them``); ``one per line`` / ``on its own line`` makes numbers lines;
- per-unit tests: ``start(ing) with the letter b``, ``end(s) with a punctuation mark``, ``prime``, ``even`` /
  ``odd``, ``divisible by N``, ``digits sum to N`` / ``digit sum is N``, ``YYYY-MM-DD``, ``hex colour`` /
  ``#RRGGBB``, ``palindrome``, ``capitalized``, ``end(s) with the letter y`` / ``whose last letter is n``,
  ``contain(s) the letter z``, ``beginning with a capital letter``, ``perfect squares`` (a negated letter —
  ``none of which contain the letter a`` — is left unread); per-word letter bounds: ``exactly N letters long``,
  ``of no more than N letters each``, ``with N letters or fewer``, ``none of them longer than N letters``;
- relations: ``alphabetical order``, ``chronological order`` / ``earliest to latest``, ``increasing`` /
  ``ascending`` / ``decreasing`` / ``descending``, ``one less (more) than the previous`` and ``count down from
  A to B`` / ``from A down to B`` / ``starting at A`` (a step and the first / last number), ``alternate between
  lowercase and uppercase``, ``one more word than the one before`` / ``one word longer``, ``differs ... by
  exactly one letter`` (a word ladder), ``with 2, 4 and 6 words respectively`` / ``the first line has 3 words,
  the second 5 ...`` / ``1, 2, 3 and 4 words in that order``, ``first letters spell WORD`` / ``acrostic``;
- totals: ``whose sum is N`` / ``add up to N``;
- shapes: ``a Markdown table with the columns A, B and C`` / ``N rows``, ``a CSV with the header a,b,c``,
  ``a YAML mapping with (exactly) the keys a, b and c`` with ``where year is an integer`` or ``name (a
  string)`` and ``no other keys``; ``and nothing else`` after a list of numbers (only numbers and separators).

Counts of tested numbers (``4 prime numbers``, ``3 perfect squares``, ``5 multiples of 4``) are a count and a
test. Counts of a noun that is a line (``5 dates``, ``4 hex colour codes``, ``three colours``) become a line count.
It reads English only, and never a number that is not written.
"""

from __future__ import annotations

import re
from typing import Any

from rlar.tasks.phrasings import ClauseText, Q

__all__ = ["read_shapes"]

_UNIT_NOUNS = [
    (r"dates?", "line"),
    (r"(?:hex(?:adecimal)?\s+)?colou?r\s+codes?|hex\s+codes?|colou?rs", "line"),
    (r"words?", "word"),
    (r"lines?", "line"),
    (r"sentences?", "sentence"),
    (r"(?:whole\s+|prime\s+|even\s+|odd\s+)?(?:numbers?|integers?)", "number"),
]
_UNIT_RX = "|".join(p for p, _ in _UNIT_NOUNS)
_ONE = r"(?:one|1)"
_LINE_FORM = (
    rf"\b(?:{_ONE} (?:per|on each|on its own|a) line|(?:each|every {_ONE})? ?on (?:its|their) own line|"
    rf"{_ONE} on each line|(?:each\s+)?on\s+(?:a\s+)?separate\s+lines?)\b"
)


def _unit_of(noun: str) -> str:
    return next(u for p, u in _UNIT_NOUNS if re.fullmatch(p, noun.strip()))


def _unit(cl: ClauseText, sentence: str, at: int | None = None) -> str | None:
    """The unit a phrase at ``at`` talks about: the nearest unit noun before it in the clause, else the
    instruction's last one (memory)."""
    raw = str(cl.memory.get("shape_clause", cl.w))
    text = raw if at is None else raw[:at]
    found = list(re.finditer(rf"\b(?:{_UNIT_RX})\b", text))
    unit: str | None
    if found:
        unit = _unit_of(found[-1].group(0))
    else:
        after = re.search(rf"\b(?:{_UNIT_RX})\b", raw)
        unit = _unit_of(after.group(0)) if after else cl.memory.get("shape_unit")
    if unit == "number" and re.search(_LINE_FORM, sentence):
        return "number"
    return unit


def _list(text: str) -> list[str]:
    parts = re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", text.strip(" .,"))
    return [p.strip(" '\"") for p in parts if p.strip(" '\"")]


def _types(text: str, names: list[str]) -> dict[str, str]:
    kinds = {
        "integer": "integer",
        "whole number": "integer",
        "number": "number",
        "string": "string",
        "text": "string",
        "list": "list",
        "boolean": "boolean",
        "true or false": "boolean",
    }
    out: dict[str, str] = {}
    for name in names:
        n = re.escape(name.lower())
        m = re.search(
            rf"\b{n}\s*\((?:an?\s+)?(integer|whole number|number|string|text|list|boolean)\)", text
        ) or re.search(
            rf"\b{n}\s+(?:is|must be|should be|as)\s+(?:an?\s+)?(integer|whole number|number|string|text|"
            rf"list|boolean|true or false)\b",
            text,
        )
        if m:
            out[name] = kinds[m.group(1)]
    return out


def read_shapes(cl: ClauseText, sentence: str, whole: str) -> None:
    """Read the compositional phrasings of one clause (module docstring). ``sentence`` and ``whole``:
    the clause's sentence and the whole instruction, lowercased with digits."""
    cl.memory["shape_clause"] = cl.w  # the clause before anything is blanked: units are looked up here
    nouns = list(re.finditer(rf"\b(?:{_UNIT_RX})\b", cl.w))
    if nouns:
        cl.memory["shape_unit"] = _unit_of(nouns[-1].group(0))
    _read_tables(cl, whole)
    _read_yaml(cl, whole)
    _read_counts(cl)
    _read_tests(cl, sentence)
    _read_relations(cl, sentence)
    _read_layout(cl, sentence)


# -- shapes ----------------------------------------------------------------------------------------------------
def _read_tables(cl: ClauseText, whole: str) -> None:
    fmt = (
        "markdown"
        if re.search(r"\bmarkdown\s+table\b", whole)
        else "csv"
        if re.search(r"\bcsv\b", whole)
        else None
    )
    if fmt is None:
        return
    c: dict[str, Any] = {"rule": "table", "format": fmt}
    cols = re.search(
        r"\b(?:(?:with|whose|has|having)\s+)?(?:exactly\s+)?(?:the\s+)?(?:columns?|"
        r"header(?: row)?)\s*(?:are|is|named|called|of)?\s*:?\s*"
        r"((?:[a-z_][\w ]*?|[a-z_]\w*)(?:\s*,\s*(?:and\s+)?[a-z_][\w ]*?)*(?:\s*(?:,\s*)?and"
        r"\s+[a-z_]\w*)?)(?=\s*(?:,\s*(?:and|with|where)\b|\band\s+\d|\bwith\b|[.;]|$|"
        r"\s+and\s+(?:exactly\s+)?\d))",
        cl.w,
    )
    if cols:
        names = [n for n in _list(cols.group(1)) if n]
        c["columns"] = names
        types = _types(whole, names)
        if types:
            c["types"] = types
        cl.consume(cols)
    rows = re.search(r"\b(?:(?:exactly|with)\s+)?(\d+)\s+(?:data\s+)?rows?(?:\s+of\s+data)?\b", cl.w)
    if rows:
        c["min"] = c["max"] = int(rows.group(1))
        cl.consume(rows)
    if "columns" in c or rows or re.search(r"\b(?:markdown\s+table|csv)\b", cl.w):
        cl.each(
            r"\b(?:a|an|as a|in)?\s*(?:markdown\s+table|csv(?:\s+file)?)\b|\bwhose\b|\bwith\b", lambda m: True
        )
        cl.each(
            r"\bwhere\s+[a-z_]+\s+is\s+an?\s+(?:integer|number|string)\b|\bin that order\b", lambda m: True
        )
        if "columns" in c or rows:
            cl.add(c)


def _read_yaml(cl: ClauseText, whole: str) -> None:
    if not re.search(r"\byaml\b", whole):
        return
    # "..., and no other keys": said where the keys are read (``exact``); a clause of its own here
    cl.each(
        r"^\s*(?:and\s+)?(?:with\s+)?no\s+(?:other|extra|additional|further)\s+keys\s*\.?\s*$", lambda m: True
    )
    keys = re.search(
        r"\b(?:(?:with|mapping|maps?|mapping of)\s+)?(?:exactly\s+)?(?:the\s+)?keys?\s*:?\s*((?:[a-z_]\w*"
        r"(?:\s*\((?:an?\s+)?\w+\))?)(?:\s*,\s*(?:and\s+)?[a-z_]\w*(?:\s*\((?:an?\s+)?\w+\))?)*(?:\s*,?"
        r"\s*and\s+[a-z_]\w*(?:\s*\((?:an?\s+)?\w+\))?)?)",
        cl.w,
    )
    if not keys:
        if re.search(r"\byaml\b", cl.w):
            cl.each(
                r"\b(?:reply|answer|respond|write|produce)?\s*(?:in|as)?\s*(?:a\s+)?yaml(?:\s*:?\s*(?:an?\s+)?(?:mapping|document|object))?\b",
                lambda m: True,
            )
        return
    names = [re.sub(r"\s*\(.*\)$", "", n).strip() for n in _list(keys.group(1))]
    c: dict[str, Any] = {"rule": "yaml_keys", "keys": names}
    types = _types(whole, names)
    if types:
        c["types"] = types
    if re.search(
        r"\bexactly the keys\b|\bno other keys\b|\bno (?:extra|additional) keys\b|\bonly the keys\b", whole
    ):
        c["exact"] = True
    cl.consume(keys)
    cl.each(
        r"\b(?:reply|answer|respond|write|produce)?\s*(?:in|as)?\s*(?:a\s+)?yaml(?:\s*:?\s*(?:an?\s+)?(?:mapping|document|object))?\b",
        lambda m: True,
    )
    for name in names:
        cl.each(
            rf"\b(?:where\s+|and\s+)?{re.escape(name)}\s+is\s+an?\s+(?:integer|whole number|number|string|"
            rf"list|boolean)\b",
            lambda m: True,
        )
    cl.each(r"\b(?:and\s+)?(?:with\s+)?no other keys\b|\bwhere\b", lambda m: True)
    cl.add(c)


# -- counts of line-nouns -----------------------------------------------------------------------------------
def _read_counts(cl: ClauseText) -> None:
    def number_count(m: re.Match[str]) -> None:
        n = int(m.group("n"))
        cl.add({"rule": "numbers", "min": n, "max": n})

    cl.each(
        r"\b(?:list\s+|give\s+|write\s+)?(?:exactly\s+)?(?P<n>\d+)\s+(?:whole\s+numbers|integers)\b",
        number_count,
    )
    cl.each(r"\blist\s+(?=(?:exactly\s+)?\d)", lambda m: True)
    cl.each(
        r"\b(?:give|write|answer\s+with|reply\s+with|respond\s+with|output|return)\s+(?:only\s+|just\s+)?(?:a|an|1)\s+"
        r"(?:single\s+)?(?P<k>number|integer|whole\s+number)\b(?=\s+(?:that|which|whose|with)\b)",
        lambda m: cl.add({"rule": "only", "what": "integer"}),
    )

    def tested_count(m: re.Match[str]) -> None:  # "4 prime numbers", "3 perfect squares": a count and a test
        n = int(m.group("n"))
        cl.add({"rule": "numbers", "min": n, "max": n})
        cl.add({"rule": "each", "unit": "number", "test": "square" if "square" in m.group("k") else "prime"})

    cl.each(
        r"\b(?:exactly\s+)?(?P<n>\d+)\s+(?P<k>prime\s+(?:numbers|integers)|primes|perfect\s+squares|"
        r"square\s+(?:numbers|integers))\b",
        tested_count,
    )

    def multiples(m: re.Match[str]) -> None:  # "5 multiples of 4": a count and divisibility
        if m.group("n"):
            n = int(m.group("n"))
            cl.add({"rule": "numbers", "min": n, "max": n})
        cl.add({"rule": "each", "unit": "number", "test": "divisible", "arg": int(m.group("k"))})

    cl.each(r"\b(?:exactly\s+)?(?:(?P<n>\d+)\s+)?multiples\s+of\s+(?P<k>\d+)\b", multiples)

    def line_count(m: re.Match[str]) -> None:
        n = int(m.group("n"))
        cl.add({"rule": "lines", "min": n, "max": n})

    cl.each(
        r"\b(?:exactly\s+)?(?P<n>\d+)\s+(?:(?:hex(?:adecimal)?\s+)?colou?r(?:\s+codes?)?s?|hex\s+codes|colou?rs|dates)\b",
        line_count,
    )


# -- per-unit tests ---------------------------------------------------------------------------------------------
def _read_tests(cl: ClauseText, sentence: str) -> None:
    def add(unit: str | None, test: str, arg: Any = None) -> None:
        c: dict[str, Any] = {"rule": "each", "unit": unit or "word", "test": test}
        if arg is not None:
            c["arg"] = arg
        cl.add(c)

    def negated(m: re.Match[str]) -> bool:
        before = str(cl.memory["shape_clause"])[: m.start()]
        return bool(
            re.search(
                r"\b(?:not|no|none|never|without|nor|avoid\w*)\b(?:\s+\w+){0,3}\s*$|n't\s+\w*\s*$", before
            )
        )

    def starts_upper(m: re.Match[str]) -> bool:
        unit = "line" if m.group("line") else _unit(cl, sentence, m.start())
        if unit not in ("word", "line", "sentence") or negated(m):
            return False
        add(unit, "starts_upper")
        return True

    cl.each(
        r"\b(?:(?:each|every)\s+(?:1\s+|of\s+them\s+)?)?(?:that\s+|which\s+)?(?:must\s+)?(?:starting|starts?|beginning|begins?)\s+(?P<line>(?:each|every)\s+line\s+)?"
        r"with\s+an?\s+(?:capital|upper\s?case|upper-case)(?:\s+letter)?\b",
        starts_upper,
    )

    def starts(m: re.Match[str]) -> bool:
        letter = m.group("l") or (cl.q(m.group("q")) if m.group("q") else "")
        if len(letter) != 1 or not letter.isalpha() or (m.group("l") == "a" and "letter" not in m.group(0)):
            return False  # "starting with a capital" is not the letter a
        unit = _unit(cl, sentence, m.start())
        if unit not in ("word", "line", "sentence"):
            return False
        add(unit, "starts_with", letter.lower())
        return True

    cl.each(
        rf"\b(?:that\s+)?(?:all\s+|each\s+|every\s+)?(?:starting|start|starts|beginning|begin|begins)\s+with\s+"
        rf"(?:the\s+letter\s+|a\s+|an\s+)?(?:(?P<q>{Q})|(?P<l>[a-z])\b)",
        starts,
    )
    letter = rf"(?:the\s+letter\s+(?:(?P<q>{Q})|(?P<l>[a-z]))\b|(?P<q2>{Q}))"
    letter_opt = rf"(?:(?:the\s+letter\s+)?(?:(?P<q>{Q})|(?P<l>[a-z]))\b|(?P<q2>{Q}))"
    letter_bare = rf"(?:(?:(?P<q>{Q})|(?P<l>[a-z]))\b|(?P<q2>{Q}))"

    def named_letter(m: re.Match[str]) -> str:
        q = m.group("q") or m.group("q2")
        got = cl.q(q) if q else (m.group("l") or "")
        return got.lower() if len(got) == 1 and got.isalpha() else ""

    def ends_letter(m: re.Match[str]) -> bool:
        ch = named_letter(m)
        unit = _unit(cl, sentence, m.start())
        if not ch or unit not in ("word", "line", "sentence") or negated(m):
            return False
        add(unit, "ends_with", ch)
        return True

    cl.each(
        rf"\b(?:that\s+|which\s+)?(?:all\s+|each\s+)?(?:must\s+)?(?:ends?|ending|finish(?:es)?|finishing)\s+(?:with|in)\s+{letter}",
        ends_letter,
    )
    cl.each(rf"\bwhose\s+(?:last|final)\s+letter\s+is\s+{letter_opt}", ends_letter)

    def contains_letter(m: re.Match[str]) -> bool:
        ch = named_letter(m)
        unit = _unit(cl, sentence, m.start())
        if not ch or unit not in ("word", "line", "sentence") or negated(m):
            return False
        add(unit, "contains", ch)
        return True

    cl.each(
        rf"\b(?:that\s+|which\s+)?(?:each\s+|all\s+)?(?:contains?|containing|includes?|including|having|has|have|with)\s+"
        rf"(?:at\s+least\s+(?:one|1)\s+|(?:one|1)\s+|an?\s+)?(?:the\s+)?letter\s+"
        rf"{letter_bare}(?:\s+(?:somewhere|in\s+it|in\s+them))?",
        contains_letter,
    )

    def compared(m: re.Match[str]) -> bool:
        before = str(cl.memory["shape_clause"])[: m.start() + len(m.group(0)) - len(m.group(0).lstrip())]
        return bool(re.search(r"\b(?:than|most|least|to|under|over|fewer|less|more|within)\s*$", before))

    def long_letters(m: re.Match[str]) -> bool:
        if m.group("n2"):  # "of exactly 3 letters each"
            n2 = int(m.group("n2"))
            cl.add({"rule": "letters", "per": "word", "min": n2, "max": n2})
            return True
        if _unit(cl, sentence, m.start()) != "word" and not re.search(r"\bwords?\b", sentence):
            return False
        if compared(m):
            return False
        n = int(m.group("n"))
        cl.add({"rule": "letters", "per": "word", "min": n, "max": n})
        return True

    cl.each(
        r"\b(?:each|every\s+(?:one|word)|all)?\s*(?:of\s+them\s+)?(?:is\s+|being\s+)?(?:exactly\s+)?(?P<n>\d+)\s+letters?\s+"
        r"(?:long|each|in\s+length)\b|\bof\s+exactly\s+(?P<n2>\d+)\s+letters\s+each\b",
        long_letters,
    )

    def word_letters(m: re.Match[str]) -> bool:  # a bound on every word's letters
        if cl.memory.get("shape_unit") != "word" and not re.search(r"\bwords?\b", sentence):
            return False
        n = int(m.group("n") or m.group("n3"))
        low = bool(m.group("low") or (m.group("or") or "").endswith("more"))
        cl.add({"rule": "letters", "per": "word", **({"min": n} if low else {"max": n})})
        return True

    cl.each(
        r"\b(?:(?:none\s+of\s+(?:them|which|the\s+words)|no\s+word)\s+(?:is\s+|may\s+be\s+|being\s+|should\s+be\s+|can\s+be\s+)?longer\s+than"
        r"|(?:with|of|having|has|have)\s+(?:(?:at\s+most|no\s+more\s+than|up\s+to)|(?P<low>at\s+least|no\s+fewer\s+than)))"
        r"\s+(?P<n>\d+)\s+letters?(?:\s+each)?\b"
        r"|\b(?:with|of|having|has|have)\s+(?P<n3>\d+)\s+letters?\s+(?P<or>or\s+(?:fewer|less|more))(?:\s+each)?\b",
        word_letters,
    )
    cl.each(
        r"\b(?:all\s+(?:of\s+them\s+)?)?(?:are\s+|be\s+|is\s+)?(?:an?\s+)?(?:perfect\s+squares?|square\s+numbers?)\b",
        lambda m: add("number", "square"),
    )
    cl.each(
        r"\b(?:must\s+|should\s+)?(?:ends?|ending|finish(?:es)?|finishing)\s+(?:with|in)\s+a\s+punctuation\s+mark\b",
        lambda m: add(_unit(cl, sentence, m.start()) or "line", "ends_punct"),
    )
    marks = {"question mark": "?", "exclamation mark": "!", "period": ".", "full stop": "."}

    def ends_mark(m: re.Match[str]) -> bool:
        unit = _unit(cl, sentence, m.start())
        if unit not in ("line", "sentence") or not re.search(
            r"\b(?:every|each|all)\b", str(cl.memory["shape_clause"])
        ):
            return False
        add(unit, "ends_with", marks[m.group("mark")])
        return True

    cl.each(
        r"\b(?:must\s+|should\s+)?(?:ends?|ending|finish(?:es)?)\s+(?:with|"
        r"in)\s+an?\s+(?P<mark>question mark|exclamation mark|period|full stop)\b",
        ends_mark,
    )
    cl.each(
        r"\b(?:all\s+(?:of\s+them\s+)?)?(?:are\s+|be\s+|is\s+)?prime(?:\s+numbers?)?\b",
        lambda m: add("number", "prime"),
    )
    cl.each(
        r"\b(?P<k>even|odd)\s+(?=(?:numbers?|integers?)\b)",
        lambda m: add("number", m.group("k")),
    )
    cl.each(
        r"\b(?:that\s+|which\s+)?(?:is\s+|are\s+|be\s+)?(?:evenly\s+)?divisible\s+by\s+(?P<n>\d+)\b",
        lambda m: add("number", "divisible", int(m.group("n"))),
    )
    cl.each(
        r"\b(?:whose\s+|with\s+|its\s+|the\s+)?(?:digits\s+(?:sum|add up)\s+to|digit\s+sum\s+(?:is|of)|"
        r"sum of (?:its|the) digits is)\s+(?P<n>\d+)\b",
        lambda m: add("number", "digit_sum", int(m.group("n"))),
    )
    cl.each(
        r"\(?\b(?:in\s+(?:the\s+)?|as\s+|written\s+as\s+|format\s+|in\s+the\s+form\s+)?(?:format\s+)?yyyy-mm-dd(?:\s+format)?\)?",
        lambda m: add("line", "date"),
    )
    cl.each(
        r"\(?(?:\b(?:in\s+the\s+form|as)\s+)?#rrggbb\)?(?:\s+hex(?:adecimal)?(?:\s+codes?)?)?",
        lambda m: add("line", "hex_colour"),
    )
    cl.each(
        r"\b(?:hex(?:adecimal)?\s+)?colou?r\s+codes?\b|\bhex\s+codes?\b", lambda m: add("line", "hex_colour")
    )
    cl.each(
        r"\b(?:a\s+|that\s+is\s+a\s+|is\s+a\s+)?palindromes?\b",
        lambda m: add(
            "word"
            if re.search(r"\bwords?\b", sentence) and not re.search(r"\bletters?\b", sentence)
            else "answer",
            "palindrome",
        ),
    )
    cl.each(
        r"\b(?:each|every\s+word|all)?\s*(?:capitali[sz]ed|with\s+an?\s+(?:initial\s+)?capital(?:\s+letter)?)\b",
        lambda m: add(_unit(cl, sentence, m.start()) or "word", "capitalized"),
    )


# -- relations between units -----------------------------------------------------------------------------------
def _read_relations(cl: ClauseText, sentence: str) -> None:
    def add(unit: str | None, rel: str, arg: Any = None) -> None:
        c: dict[str, Any] = {"rule": "order", "unit": unit or "word", "rel": rel}
        if arg is not None:
            c["arg"] = arg
        cl.add(c)

    def unit_here(m: re.Match[str], default: str) -> str:
        u = _unit(cl, sentence, m.start()) or default
        if u == "number" and re.search(_LINE_FORM, sentence):
            return "number"
        return u

    cl.each(
        r"\b(?:(?:so\s+)?that\s+they\s+are\s+|which\s+are\s+)?(?:in\s+|sorted\s+(?:in\s+)?)?alphabetical(?:ly)?(?:\s+order)?\b|\bsorted\s+alphabetically\b",
        lambda m: add(unit_here(m, "word"), "alphabetical"),
    )
    cl.each(
        r"\b(?:sorted\s+|ordered\s+|listed\s+)?(?:in\s+)?chronological(?:ly)?(?:\s+order)?\b|"
        r"\b(?:ordered\s+|sorted\s+)?from\s+(?:the\s+)?(?:earliest|oldest)\s+to\s+(?:the\s+)?(?:latest|"
        r"newest|most recent)\b",
        lambda m: add("line", "chronological"),
    )

    cl.each(
        r"\b(?:in\s+)?(?:(?P<up>increasing|ascending)|decreasing|descending)(?:\s+order)?\b|\bfrom\s+(?:the\s+)?(?:(?P<up2>smallest|lowest)\s+to\s+(?:the\s+)?(?:largest|highest)|(?:largest|highest)\s+to\s+(?:the\s+)?(?:smallest|lowest))\b",
        lambda m: add("number", "increasing" if (m.group("up") or m.group("up2")) else "decreasing"),
    )

    def step(m: re.Match[str]) -> None:
        d = int(m.group("d") or 1)
        add("number", "step", -d if m.group("dir") in ("less", "lower", "smaller", "fewer") else d)

    cl.each(
        r"\b(?:with\s+)?(?:each\s+(?:number\s+|(?:one|1)\s+)?)?(?:is\s+|being\s+)?(?P<d>\d+)\s+(?P<dir>less|lower|smaller|more|greater|higher)\s+than\s+the\s+(?:(?:one|1)\s+before(?:\s+it)?|previous(?:\s+(?:one|1)|\s+number)?|number\s+before(?:\s+it)?|last\s+one)\b",
        step,
    )

    def countdown(m: re.Match[str]) -> None:
        a, b = int(m.group("a")), m.group("b")
        cl.add({"rule": "total", "unit": "number", "agg": "first", "min": a, "max": a})
        if b is not None:
            cl.add({"rule": "total", "unit": "number", "agg": "last", "min": int(b), "max": int(b)})
            if m.group("down") or int(b) < a:
                add("number", "step", -1)
            else:
                add("number", "step", 1)
        elif m.group("down"):
            add("number", "step", -1)

    def countdown_any(m: re.Match[str]) -> bool:
        if m.group("a2"):
            a, b = int(m.group("a2")), int(m.group("b2"))
            cl.add({"rule": "total", "unit": "number", "agg": "first", "min": a, "max": a})
            cl.add({"rule": "total", "unit": "number", "agg": "last", "min": b, "max": b})
            if m.group("down2") or b < a:
                add("number", "step", -1)
            return True
        if not re.search(r"\b(?:numbers?|count|countdown|integers?)\b", sentence):
            return False
        countdown(m)
        if m.group("cnt"):  # "a countdown of 4 numbers starting at 20": how many too
            cl.add({"rule": "numbers", "min": int(m.group("cnt")), "max": int(m.group("cnt"))})
        return True

    cl.each(
        r"\b(?:(?P<down>count(?:ing)?\s+down|a\s+countdown(?:\s+of\s+(?P<cnt>\d+)\s+numbers)?)\s+)?(?:starting\s+)?(?:from|at)\s+(?P<a>\d+)(?:\s+(?:down\s+)?to\s+(?P<b>\d+))?\b"
        r"|\b(?:the\s+numbers\s+)?from\s+(?P<a2>\d+)\s+(?P<down2>down\s+)?to\s+(?P<b2>\d+)\b",
        lambda m: countdown_any(m),
    )

    cl.each(r"\b(?:a\s+)?countdown(?:\s+of)?\b|\bcount\s+down\b", lambda m: True)

    def alternating(m: re.Match[str]) -> None:
        start = (
            "upper"
            if re.search(
                r"\bstart(?:ing)?\s+with\s+(?:an?\s+)?(?:upper\s?case|capitali[sz]ed|capital)", sentence
            )
            else "lower"
        )
        add("word", "alternating_case", start)

    cl.each(
        r"\b(?:that\s+|which\s+)?(?:alternate|alternates|alternating)\s+(?:between\s+)?(?:all[- ])?lower"
        r"\s?case\s+and\s+(?:all[- ])?upper\s?case\b"
        r"|\b(?:alternate|alternating)\s+(?:the\s+)?case\b|\bwhose\s+case\s+alternates\b|\bcase\s+alternates\b",
        alternating,
    )
    if any(c.get("rel") == "alternating_case" for c in cl.found):
        cl.each(
            r",?\s*(?:starting|beginning)\s+with\s+an?\s+(?:lower\s?case|upper\s?case|capitali[sz]ed)\s+word\b"
            r"|:?\s*(?:the\s+)?(?:1st|first)\s+word\s+in\s+(?:lower\s?case|capitals|upper\s?case)(?:,\s*the\s+(?:2nd|second)\s+in\s+(?:capitals|upper\s?case|lower\s?case))?(?:,?\s*and\s+so\s+on)?"
            r"|:\s*(?:(?:lower|upper)\s?case,?\s*)+",
            lambda m: True,
        )
    cl.each(
        r"\b(?:where\s+)?(?:each|every)\s+(?:sentence\s+|(?:one|1)\s+)?(?:has\s+)?(?:exactly\s+)?(?P<d>\d+)\s+(?:more\s+word|words?\s+(?:more|longer))\s+than\s+the\s+(?:(?:one|1)\s+before(?:\s+it)?|previous(?:\s+(?:one|1|sentence))?|sentence\s+before(?:\s+it)?)\b",
        lambda m: add("sentence", "word_growth", int(m.group("d"))),
    )
    cl.each(
        r"\b(?:where\s+)?(?:each|every)\s+(?:word\s+|(?:one|1)\s+|line\s+)?differ(?:s|ing)?\s+from\s+the\s+(?:previous|(?:one|1)\s+before)(?:\s+(?:one|1|word|line))?\s+by\s+(?:exactly\s+)?(?:1|a\s+single)\s+letter\b"
        r"|\b(?:changing|change)\s+(?:exactly\s+)?(?:1|a\s+single)\s+letter\s+(?:at\s+a\s+time|each\s+(?:time|step))\b",
        lambda m: add(
            "word" if re.search(r"\bword", m.group(0) + " " + sentence) else unit_here(m, "word"),
            "one_letter",
        ),
    )
    cl.each(r"\b(?:a\s+)?word\s+ladder(?:\s+of)?\b", lambda m: True)

    def counts(m: re.Match[str]) -> None:
        ns = [int(n) for n in re.findall(r"\d+", m.group("ns"))]
        add("line", "word_counts", ns)

    cl.each(
        r"\b(?:with|containing|contain|that\s+contain|having)\s+(?P<ns>\d+(?:\s*,\s*\d+)*\s*,?\s*and\s+\d+)\s+words\s+(?:respectively|in\s+that\s+order)\b",
        counts,
    )

    def ordinal_counts(m: re.Match[str]) -> None:
        ns = [int(n) for n in re.findall(r"\d+", m.group(0))]
        add("line", "word_counts", ns)

    cl.each(
        r"\b(?:the\s+)?first\s+line\s+has\s+\d+\s+words?(?:\s*,\s*(?:and\s+)?the\s+(?:second|third|fourth|fifth|next)(?:\s+line)?(?:\s+has)?\s+\d+(?:\s+words?)?)+",
        ordinal_counts,
    )

    def spell(m: re.Match[str]) -> bool:
        word = cl.q(m.group("q")) if m.group("q") else m.group("w")
        if not word or not word.isalpha():
            return False
        unit = (
            "word"
            if re.search(r"\bwords?\b", m.group(0)) and not re.search(r"\blines?\b", m.group(0))
            else "line"
        )
        cl.add({"rule": "spell", "unit": unit, "text": word.lower()})
        return True

    spelled = rf"(?:the\s+word\s+)?(?:(?P<q>{Q})|(?P<w>[a-z]{{2,}}))"
    for pattern in (
        rf"\b(?:(?:an?\s+)?(?:\d+-line\s+)?acrostic\s+)?(?:whose|where\s+the|with\s+the|so\s+that\s+the)?\s*"
        rf"(?:lines\s+start\s+with|first\s+letters\s+of\s+(?:the|its)\s+lines\s+spell(?:\s+out)?|lines'?\s+first\s+letters\s+spell)"
        rf"\s+(?:the\s+letters\s+of\s+)?{spelled}",
        rf"\b(?:an?\s+)?(?:\d+-line\s+)?acrostic\s+(?:spelling|of|for)(?:\s+out)?\s+{spelled}"
        rf"(?:\s+with\s+the\s+first\s+letters\s+of\s+its\s+lines)?",
    ):
        cl.each(pattern, spell)
    if re.search(r"\bacrostic\b", sentence):  # "an acrostic of 4 lines whose first letters spell RAIN"
        cl.each(
            rf"\b(?:whose|where\s+the|with\s+the|so\s+that\s+the|and\s+the)\s+(?:first|initial)\s+letters\s+spell(?:\s+out)?\s+{spelled}",
            spell,
        )
        cl.each(
            rf"(?<=lines\s)spelling(?:\s+out)?\s+{spelled}", spell
        )  # "an acrostic of 3 lines spelling CAT"
        if any(c["rule"] == "spell" for c in cl.found):
            cl.each(r"\b(?:an?\s+)?acrostic(?:\s+poem)?(?:\s+of)?\b", lambda m: True)


# -- layout words that the checks already imply ----------------------------------------------------------------
def _read_layout(cl: ClauseText, sentence: str) -> None:
    rules = {c["rule"] for c in cl.found}
    shaped = rules & {"each", "order", "total", "spell", "table", "yaml_keys", "lines"}
    cl.each(
        r"\b(?:whose|with a|with)\s+sum\s+(?:is|of|equal to)\s+(?P<n>\d+)\b|\b(?:that\s+|which\s+)?(?:add|"
        r"adds|sum|sums)\s+up\s+to\s+(?P<n2>\d+)\b|\bwhose\s+sum\s+is\s+(?P<n3>\d+)\b",
        lambda m: cl.add(
            {
                "rule": "total",
                "unit": "number",
                "agg": "sum",
                "min": int(m.group("n") or m.group("n2") or m.group("n3")),
                "max": int(m.group("n") or m.group("n2") or m.group("n3")),
            }
        ),
    )
    if shaped or re.search(r"\b(?:numbers?|integers?|words?)\b", cl.w):
        cl.each(
            r",?\s*\b(?:(?:and\s+)?(?:separated|separate)\s+by\s+(?:commas|spaces|a\s+comma|a\s+space)|"
            r"comma[- ]separated|space[- ]separated)\b",
            lambda m: True,
        )
        cl.each(rf"{_LINE_FORM}|\b(?:each\s+)?on\s+one\s+line\b", lambda m: True)
    elif cl.memory.get("shape_unit") in ("number", "line"):  # "..., each on its own line." as its own clause
        cl.each(rf",?\s*{_LINE_FORM}", lambda m: True)
    if re.search(r"\b(?:numbers?|integers?)\b", sentence) and re.search(
        r"\b(?:separated|comma|prime|even|odd)\b", sentence
    ):
        cl.each(
            r",?\s*\b(?:and\s+)?(?:with\s+)?nothing\s+else(?:\s+in\s+the\s+answer)?\b",
            lambda m: cl.add({"rule": "only", "what": "numbers"}),
        )
    if rules & {"each", "order", "total", "spell", "table", "yaml_keys"}:
        cl.each(r"^\s*(?:compose|create|produce|output|generate|return|make|list)\b", lambda m: True)
    if rules & {"each", "order"} and not re.search(r"\d", cl.w):  # nothing left that a scope could bound
        cl.each(
            r"\b(?:every|each|all)\s+(?:of\s+the\s+)?(?:lines?|words?|sentences?|numbers?)\b", lambda m: True
        )
    if any(c["rule"] == "letters" and c.get("per") == "word" for c in cl.found):  # "where every word has ..."
        cl.each(
            r"\b(?:where\s+|in\s+which\s+|and\s+)?(?:every|each|all|no)\s+(?:single\s+|1\s+of\s+the\s+)?words?\b"
            r"|\b(?:using\s+)?only\s+words\b",
            lambda m: True,
        )
    if rules & {"each", "order", "spell"}:
        cl.each(
            r"\b(?:every|each)\s+1\s+of(?:\s+which)?(?=\s|$)",
            lambda m: True,
        )
        cl.each(
            r"\b(?:(?:all|each|every)\s+)?(?:of\s+)?(?:them|(?:one|1)\s+of\s+them)\b|\b(?:so\s+)?that\s+they\b|\bwhere\s+the\s+lines(?:\s+contain)?\b|\bwhere\b",
            lambda m: True,
        )
