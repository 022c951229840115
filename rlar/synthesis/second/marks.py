"""The second reading's marks and measures of a whole answer, read by keywords and number
windows apart from :mod:`rlar.tasks.reading_marks`: counts of emojis, bold phrases and words, italics, Markdown
links, different words and letters, numbers in digits or in words, pronouns, lines of code, pairs of parentheses
and how deep they nest, leading spaces, checked boxes; bans (no italics, no number in words, no spaces, one emoji
per unit beside a unit's closing emoji); a pangram; a length with its tolerance.

:func:`_marks` reads one sentence (lowercased; ``low``: the whole instruction) and returns what it read and the
sentence with the phrases it used blanked, so the count windows that run after it do not read them again.
"""

from __future__ import annotations

import math
import re
from typing import Any

from rlar.synthesis.second.vocab import _value

_N = (
    r"(?:\d+|(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:-[a-z]+)?|[a-z]+teen|one|two|three|four"
    r"|five|six|seven|eight|nine|ten|eleven|twelve)"
)


def _num(tok: str) -> int | None:
    """A number token's value: digits, a number word, or a compound (``twenty-five``)."""
    if tok in ("a", "an"):
        return 1
    if "-" in tok:
        tens, _, ones = tok.partition("-")
        a, b = _value(tens), _value(ones)
        return a + b if a is not None and b is not None and a >= 20 and b < 10 else None
    return _value(tok)


# what a count names, as (pattern, rule): the longer names first
_COUNTED = [
    (r"emojis?|emoji\s+(?:icons?|symbols?|characters?)", "emojis"),
    (r"bold(?:ed)?\s+words?|words?\s+in\s+bold", "bold_words"),
    (
        r"bold(?:ed)?\s+(?:phrases?|terms?|key\s+terms?|parts?)|(?:key\s+)?(?:phrases?|terms?|parts?)\s+in\s+bold",
        "bold",
    ),
    (
        r"itali(?:c|cs|cized)\s+(?:words?|phrases?|terms?)|(?:words?|phrases?|terms?)\s+in\s+italics?",
        "italics",
    ),
    (r"(?:markdown\s+)?(?:hyper)?links?", "links"),
    (r"(?:different|distinct|unique)\s+words?", "distinct_words"),
    (r"(?:different|distinct|unique)\s+letters?", "distinct_letters"),
    (r"(?:personal\s+)?pronouns?", "pronouns"),
    (r"lines?\s+of\s+(?:code|python|javascript|js|bash|sql)|code\s+lines?", "code_lines"),
    (r"pairs?\s+of\s+parentheses", "parens"),
    (r"leading\s+spaces?", "indent"),
    (r"(?:checked|ticked)\s+(?:items?|tasks?|boxes?)", "checked"),
    (r"(?:unchecked|unticked)\s+(?:items?|tasks?|boxes?)", "unchecked"),
    (r"numbers?\s+(?:written|spelled|spelt)\s+(?:out\s+)?(?:as|in)\s+words", "number_words"),
    (r"numbers?\s+(?:written\s+)?(?:in|as|using|with)\s+(?:digits|numerals)|numerals", "numbers"),
]
_COMPARED_NUMBERS = (
    r"\b(?P<cmp>at least|at most|no more than|no fewer than|up to)\s+(?P<n>[a-z]+(?:-[a-z]+)?|\d+)\s+numbers\b"
    r"(?!\s+(?:between|from|greater|less|larger|smaller|above|below|under|over|in the range|that|which))"
)
_SCOPES = {"sentence": "sentence", "line": "line", "paragraph": "paragraph", "bullet": "item", "item": "item"}


def _blank(sentence: str, span: tuple[int, int]) -> str:
    return sentence[: span[0]] + " " * (span[1] - span[0]) + sentence[span[1] :]


def _bounds(words: str, n: int, after: str = "") -> dict[str, int]:
    """The bounds a count's comparator words give (the few words before it, ``or more`` after it)."""
    w = " ".join(words.split()[-3:])
    if re.search(r"\bor\s+(?:more|above)\b", after) or re.search(
        r"\b(?:at least|no fewer than|no less than|minimum)$", w
    ):
        return {"min": n}
    if re.search(r"\bor\s+(?:fewer|less)\b", after) or re.search(
        r"\b(?:at most|no more than|up to|maximum|not more than)$", w
    ):
        return {"max": n}
    if re.search(r"\b(?:more than|over)$", w):
        return {"min": n + 1}
    if re.search(r"\b(?:fewer than|less than|under)$", w):
        return {"max": max(0, n - 1)}
    return {"min": n, "max": n}


def _scope(sentence: str, at: int) -> str | None:
    """The unit ``each`` / ``every`` / ``no`` names before a count (``every line must contain exactly one emoji``,
    ``no paragraph may contain more than 2 links``), or the unit counted before a bare ``each`` (``3 lines, each
    with at most two emojis``)."""
    found = re.findall(r"\b(?:each|every|per|no)\s+(sentence|line|paragraph|bullet|item)s?\b", sentence[:at])
    if not found:
        found = re.findall(r"\bin\s+(?:each|every)\s+(sentence|line|paragraph|bullet|item)\b", sentence[at:])
    if not found and re.search(
        r"\beach\s+(?:with|having|containing|of\s+them)?\s*(?:\w+\s+){0,3}$", sentence[:at]
    ):
        found = re.findall(r"\b(sentence|line|paragraph|bullet|item)s\b", sentence[:at])
    return _SCOPES[found[-1]] if found else None


def _negated_scope(before: str) -> bool:
    return (
        re.search(r"\bno\s+(?:sentence|line|paragraph|bullet|item)s?\s+(?:\w+\s+){0,5}$", before) is not None
    )


def _counts(sentence: str) -> tuple[list[dict[str, Any]], str]:
    out: list[dict[str, Any]] = []
    names = "|".join(f"(?:{p})" for p, _ in _COUNTED)
    for m in list(
        re.finditer(
            rf"\b(?P<n>{_N})\s+(?:(?:or\s+more|or\s+fewer|or\s+less)\s+)?(?P<what>{names})\b", sentence
        )
    ):
        what = m.group("what")
        rule = next(r for p, r in _COUNTED if re.fullmatch(p, what))
        n = _num(m.group("n"))
        if n is None:
            continue
        if rule == "distinct_words" and not re.search(
            r"\b(?:at least|no fewer than|more than|or more|uses?|using|contain\w*|includ\w*|with)\b",
            sentence[max(0, m.start() - 24) : m.end() + 10],
        ):
            continue  # "list 5 different words": five words, none repeated (read with the positions)
        b = _bounds(sentence[: m.start()], n, sentence[m.start() : m.end() + 9])
        if _negated_scope(sentence[: m.start()]):  # "no line may hold more than 2": at most 2 on every line
            b = {"max": b["min"] - 1} if "max" not in b else {"min": b["max"] + 1} if "min" not in b else b
        c: dict[str, Any] = {"rule": rule, **b}
        scope = _scope(sentence, m.start())
        if scope and rule not in ("distinct_letters", "code_lines", "checked", "unchecked"):
            c["per"] = scope
        out.append(c)
        sentence = _blank(sentence, m.span())
    for m in list(re.finditer(_COMPARED_NUMBERS, sentence)):
        n = _num(m.group("n"))
        if n is None:
            continue
        least = m.group("cmp") in ("at least", "no fewer than")
        out.append({"rule": "numbers", **({"min": n} if least else {"max": n})})
        sentence = _blank(sentence, m.span())
    # "bold exactly two phrases", "exactly one word is in bold"
    for m in list(
        re.finditer(
            rf"\b(?:bold|italici[sz]e)\s+(?P<cmp>exactly\s+|at\s+least\s+|at\s+most\s+)?(?P<n>{_N})\s+(?P<w>words?"
            rf"|phrases?|terms?)\b"
            rf"|(?P<cmp2>exactly\s+|at\s+least\s+|at\s+most\s+)?\b(?P<n2>{_N})\s+(?P<w2>words?"
            rf"|phrases?)\s+(?:of\s+your\s+(?:reply|answer)\s+)?(?:is|are"
            rf"|should\s+be|must\s+be)\s+in\s+(?P<v>bold|italics?)\b",
            sentence,
        )
    ):
        n = _num(m.group("n") or m.group("n2") or "")
        if n is None:
            continue
        kind = (m.group("cmp") or m.group("cmp2") or "").strip()
        b = {"min": n} if kind == "at least" else {"max": n} if kind == "at most" else {"min": n, "max": n}
        italic = m.group(0).startswith("italic") or (m.group("v") or "").startswith("italic")
        word = (m.group("w") or m.group("w2") or "").startswith("word")
        out.append({"rule": "italics" if italic else "bold_words" if word else "bold", **b})
        sentence = _blank(sentence, m.span())
    return out, sentence


def _bans(sentence: str, low: str) -> tuple[list[dict[str, Any]], str]:
    out: list[dict[str, Any]] = []
    checks = [
        (
            r"\bnothing\s+(?:is|may be|should be)\s+in\s+italics?\b|\bno\s+italics\b|\bwithout\s+(?:any\s+)?italics\b"
            r"|\b(?:do not|don't|never)\s+use\s+(?:any\s+)?italics\b",
            {"rule": "italics", "max": 0},
        ),
        (
            r"\bnever\s+(?:as|in)\s+words\b|\b(?:do not|don't|never)\s+spell\s+out\s+(?:any\s+)?numbers?\b"
            r"|\b(?:every|each|all)\s+numbers?\s+(?:as|in)\s+(?:digits|numerals)\b"
            r"|\b(?:do not|don't|never)\s+(?:write|spell|give)\s+(?:out\s+)?(?:any|a"
            r"|each)\s+numbers?\s+(?:out\s+)?(?:as|in)\s+(?:a\s+)?words?\b"
            r"|\bspell\s+out\s+no\s+numbers?\b|\(\s*digits,\s*not\s+words\s*\)",
            {"rule": "number_words", "max": 0},
        ),
        (
            r"\bno\s+bold(?:\s+(?:text|words?|phrases?))?\b|\bnothing\s+(?:is|may be)\s+in\s+bold\b|\b(?:do not"
            r"|don't)\s+use\s+bold\b",
            {"rule": "bold", "max": 0},
        ),
        (
            r"\bno\s+spaces\b|\bwithout\s+(?:any\s+)?spaces\b|\buse\s+no\s+spaces\b",
            {"rule": "spaces", "max": 0},
        ),
        (
            r"\bno\s+punctuation(?:\s+marks)?(?:\s+at\s+all)?\b|\bwithout\s+(?:any\s+)?punctuation\b",
            {"rule": "punctuation", "max": 0},
        ),
        (
            r"\b(?:a\s+)?pangram\b|\bevery\s+letter\s+of\s+the\s+(?:english\s+)?alphabet\b|\ball\s+26\s+letters\b",
            {"rule": "distinct_letters", "min": 26},
        ),
    ]
    for rx, c in checks:
        found = list(re.finditer(rx, sentence))
        if found:
            out.append(dict(c))
            for m in found:
                sentence = _blank(sentence, m.span())
    ends = re.search(
        r"\b(?:each|every)\s+(line|sentence|paragraph|bullet)\s+(?:\w+\s+){0,3}?(?:end|ends"
        r"|ending)\s+with\s+an?\s+emoji\b"
        r"|\bend\s+(?:each|every)\s+(?:of\s+your\s+)?(?:\w+\s+)?(line|paragraph|bullet)s?\s+with\s+an?\s+emoji\b",
        low,
    )
    other = re.search(r"\bno\s+other\s+emojis?\b", sentence)
    if ends and other:
        out.append({"rule": "emojis", "per": _SCOPES[ends.group(1) or ends.group(2)], "max": 1})
        sentence = _blank(sentence, other.span())
    return out, sentence


def _parens(sentence: str, low: str) -> tuple[list[dict[str, Any]], str]:
    out: list[dict[str, Any]] = []
    if "parenthes" not in low and "round brackets" not in low:
        return out, sentence
    deep = re.search(
        rf"\bnested\b.*?\b(?P<cmp>at least|at most|exactly)?\s*(?P<n>{_N})\s+(?:levels?|deep)\b", sentence
    )
    if deep and _num(deep.group("n")) is not None:
        n = int(_num(deep.group("n")) or 0)
        kind = deep.group("cmp") or ""
        b = {"min": n} if kind == "at least" else {"max": n} if kind == "at most" else {"min": n, "max": n}
        out.append({"rule": "paren_depth", **b})
        sentence = _blank(sentence, deep.span())
    inside = re.search(r"\b(?:one|1)\s+(?:pair\s+)?inside\s+the\s+other\b", sentence)
    if inside:
        out.append({"rule": "paren_depth", "min": 2, "max": 2})
        sentence = _blank(sentence, inside.span())
    nest = re.search(
        rf"\bnest\s+(?:round\s+brackets|parentheses)\s+to\s+a\s+depth\s+of\s+(?P<cmp>exactly|at least"
        rf"|at most)?\s*(?P<n>{_N})\b",
        sentence,
    )
    if nest and _num(nest.group("n")) is not None:
        n = int(_num(nest.group("n")) or 0)
        kind = nest.group("cmp") or "exactly"
        out.append(
            {
                "rule": "paren_depth",
                **(
                    {"min": n}
                    if kind == "at least"
                    else {"max": n}
                    if kind == "at most"
                    else {"min": n, "max": n}
                ),
            }
        )
        sentence = _blank(sentence, nest.span())
    closed = re.search(
        r"\bevery\s+opening\s+parenthesis\s+must\s+be\s+closed\b|\bnested\s+parentheses\b", sentence
    )
    if closed:
        sentence = _blank(sentence, closed.span())
    return out, sentence


def _tolerance(sentence: str) -> tuple[list[dict[str, Any]], str]:
    about = re.search(
        r"\b(?:about|around|approximately|roughly)\s+(?P<n>\d+|[a-z]+(?:-[a-z]+)?)\s+(?P<u>words?|characters?"
        r"|sentences?)\b",
        sentence,
    )
    if about is None:
        return [], sentence
    n = _value(about.group("n"))
    if n is None and "-" in about.group("n"):
        tens, ones = about.group("n").split("-")
        n = (_value(tens) or 0) + (_value(ones) or 0) or None
    if n is None:
        return [], sentence
    rule = {"w": "words", "c": "chars", "s": "sentences"}[about.group("u")[0]]
    rest = sentence[about.end() :]
    pct = re.search(r"(?:give or take|plus or minus|±|\+/-|within)\s*(\d+)\s*(?:%|percent)", rest)
    plain = re.search(
        r"(?:give or take|plus or minus|±|\+/-)\s*(\d+)\b(?!\s*(?:%|percent))|(?:no more than"
        r"|at most)\s+(\w+)\s+\w+\s+off\b",
        rest,
    )
    span = re.search(r"\b(?:anything|any length)\s+(?:from|between)\s+(\d+)\s+(?:to|and)\s+(\d+)\b", rest)
    if pct:
        p = int(pct.group(1))
        lo, hi = math.ceil(n * (100 - p) / 100 - 1e-9), math.floor(n * (100 + p) / 100 + 1e-9)
        used = pct
    elif plain:
        k = _value(plain.group(1) or plain.group(2) or "")
        if k is None:
            return [], sentence
        lo, hi, used = n - k, n + k, plain
    elif span:
        lo, hi = sorted((int(span.group(1)), int(span.group(2))))
        used = span
    else:
        return [], sentence
    sentence = _blank(sentence, about.span())
    at = about.end()
    sentence = _blank(sentence, (at + used.start(), at + used.end()))
    return [{"rule": rule, "min": lo, "max": hi}], sentence


def _marks(sentence: str, low: str) -> tuple[list[dict[str, Any]], str]:
    out: list[dict[str, Any]] = []
    for rx in (
        r"\(\s*(?:capitali[sz]ation|case)\s+does\s*(?:not|n't)\s+matter[^)]*\)",
        r",?\s*ignoring\s+(?:capitali[sz]ation|case)\b",
        r"\bemojis?\s+do\s+not\s+count\s+as\s+words\b",
        r",?\s*counting\s+spaces\s+and\s+punctuation\b",
    ):
        for m in list(re.finditer(rx, sentence)):
            sentence = _blank(sentence, m.span())
    for step in (_tolerance,):
        found, sentence = step(sentence)
        out += found
    found, sentence = _counts(sentence)
    out += found
    found, sentence = _bans(sentence, low)
    out += found
    found, sentence = _parens(sentence, low)
    out += found
    return out, sentence
