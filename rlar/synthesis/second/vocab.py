"""The second reading's vocabulary and token windows: number words, count units, scopes, comparator words, and
the helpers that read a bound from the words around a number. Written apart from :mod:`rlar.tasks.phrasings`
(it shares only the number-word table, :mod:`rlar.number_words`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from rlar.number_words import NUMBER_WORDS

_NUMS = {
    **{w: n for w, n in NUMBER_WORDS.items() if n},  # "zero" is left to the count words ("no commas")
    "hundred": 100,
    "once": 1,
    "twice": 2,
    "thrice": 3,
    "single": 1,
    "dozen": 12,
}
_UNIT = {
    "word": "words",
    "sentence": "sentences",
    "paragraph": "paragraphs",
    "stanza": "paragraphs",
    "line": "lines",
    "bullet": "bullets",
    "character": "chars",
    "letter": "letters",
    "syllable": "syllables",
    "comma": "commas",
    "placeholder": "placeholders",
    "section": "sections",
    "item": "items",
    "point": "items",
    "step": "items",
}
_SCOPE = {
    "sentence": "sentence",
    "bullet": "item",
    "item": "item",
    "point": "item",
    "step": "item",
    "line": "line",
    "paragraph": "paragraph",
    "stanza": "paragraph",
    "word": "word",
}
_UP = {
    "most",
    "max",
    "maximum",
    "fewer",
    "less",
    "under",
    "below",
    "exceed",
    "exceeding",
    "up",
    "limit",
    "within",
    "shorter",
    "cap",
    "keep",
}
_DOWN = {"least", "minimum", "more", "over", "above", "longer", "min"}
_STRICT = {"fewer", "less", "under", "below", "shorter", "more", "over", "above", "longer"}
_NOT = {"no", "not", "never", "don't", "none", "nor", "cannot", "mustn't", "shouldn't"}
_LANG = {
    "english": "en",
    "german": "de",
    "french": "fr",
    "spanish": "es",
    "italian": "it",
    "portuguese": "pt",
    "dutch": "nl",
    "russian": "ru",
    "japanese": "ja",
    "chinese": "zh",
    "korean": "ko",
    "greek": "el",
}
_INCLUDE = {"include", "use", "mention", "contain", "with", "feature", "incorporate"}
_EXCLUDE = {"avoid", "without", "never", "not", "don't", "no", "refrain"}


def _tokens(sentence: str) -> list[str]:
    return re.findall(r"\"[^\"]*\"|'[^']*'(?=\W|$)|[a-z']+|\d+", sentence)


def _value(tok: str) -> int | None:
    if tok.isdigit():
        return int(tok)
    return _NUMS.get(tok)


def _unit(tok: str) -> str | None:
    base = tok[:-1] if tok.endswith("s") else tok
    return _UNIT.get(base)


def _direction(before: list[str], after: list[str]) -> tuple[str, bool]:
    """("max" | "min" | "exact", strict) from the words around a number; a negation earlier in the clause
    turns the direction around ("no bullet longer than 10 words" is at most 10)."""
    near = before[-4:]
    joined = " ".join(near)
    tail = " ".join(after[:3])
    if re.search(
        r"\b(?:no|not|never) (?:more|longer|greater)\b|\bnot exceed|\bno more\b", joined
    ) or re.search(r"\bor (?:fewer|less)\b", tail):
        return "max", False
    if re.search(r"\b(?:no|not) (?:fewer|less|shorter)\b", joined) or re.search(r"\bor more\b", tail):
        return "min", False
    up = [w for w in near if w in _UP] + [w for w in after[:3] if w in ("max", "maximum", "tops")]
    down = [w for w in near if w in _DOWN] + [w for w in after[:3] if w in ("minimum", "min")]
    if up and not down:
        kind, strict = "max", up[-1] in _STRICT
    elif down and not up:
        kind, strict = "min", down[-1] in _STRICT
    else:
        return "exact", False
    if set(before) & _NOT:
        return ("min" if kind == "max" else "max"), not strict
    return kind, strict


def _bounded(rule: str, n: int, kind: str, strict: bool) -> dict[str, Any]:
    if kind == "max":
        return {"rule": rule, "max": n - 1 if strict else n}
    if kind == "min":
        return {"rule": rule, "min": n + 1 if strict else n}
    return {"rule": rule, "min": n, "max": n}


_SMALL = {**{w: n for w, n in NUMBER_WORDS.items() if 1 <= n <= 10}, "a": 1, "single": 1}


def _num(tok: str) -> int | None:
    return int(tok) if tok.isdigit() else _SMALL.get(tok)


def _num_after(words: list[str], *keys: str, within: int = 4) -> int | None:
    """The first number within ``within`` tokens after any of ``keys``."""
    for i, w in enumerate(words):
        if w in keys:
            for t in words[i + 1 : i + 1 + within]:
                if _num(t) is not None and t not in ("a", "single"):
                    return _num(t)
    return None


def _blanked(sentence: str, patterns: Sequence[str]) -> str:
    for p in patterns:
        sentence = re.sub(p if any(ch in p for ch in "\\(?[") else re.escape(p), " ", sentence)
    return sentence
