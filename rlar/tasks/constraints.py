"""Checkable output constraints: the vocabulary, and reading them from task text or record metadata.

A constraint is a dict ``{"rule": name, ...params}`` in the vocabulary of ``rlar.tasks.FORMAT_RULES`` (the one
chat records use in ``metadata["format_rules"]``) plus three rules the task vocabulary lacks: ``item_words``
(word count of every bullet / numbered item / line), ``chars`` (character count) and ``paragraphs`` (blocks
separated by blank lines). Counts are inclusive bounds.

``extract_constraints(text)`` reads explicit, countable constraints from English text with patterns: counts of
bullets, numbered items, words, sentences, lines, paragraphs and characters with their comparators
("exactly three", "under ten" = at most nine, "between 20 and 40", "at least 2"), per-item word limits ("each
under ten words"), quoted words to include or avoid, lowercase / uppercase, no commas, start / end phrases and
JSON keys. It is a pattern reader, not a language model: paraphrases outside its patterns are missed (then the
task looks constraint-free), and it never guesses a number that is not written. ``canonical`` orders and merges
constraints so equal sets compare equal (a synthesised tool's constraints are matched against a task's).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from rlar.tasks.builtin import FORMAT_RULES

__all__ = [
    "RULES",
    "canonical",
    "constraints_key",
    "extract_constraints",
    "from_metadata",
    "merge_constraints",
]

RULES: dict[str, frozenset[str]] = {
    **FORMAT_RULES,
    "item_words": frozenset({"min", "max"}),
    "chars": frozenset({"min", "max"}),
    "paragraphs": frozenset({"min", "max"}),
    "uppercase": frozenset(),
}

_NUMBER_WORDS = {
    "zero": 0, "one": 1, "a single": 1, "single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100,
    "a hundred": 100, "one hundred": 100,
}  # fmt: skip
_NUM = r"(?:\d+|" + "|".join(sorted((re.escape(w) for w in _NUMBER_WORDS), key=len, reverse=True)) + r")"
_CMP = (
    r"(?:exactly|precisely|at most|at least|no more than|no fewer than|not more than|not less than|fewer than"
    r"|less than|under|below|over|more than|up to|a maximum of|maximum of|max(?:imum)?|a minimum of"
    r"|minimum of|min(?:imum)?|between|no longer than|not exceeding|within)"
)
_UNIT = (
    r"(?:bullet[- ]?points?|bullets?|bulleted items?|numbered (?:items?|steps?|points?|list items?)|steps?|items?"
    r"|points?|words?|sentences?|lines?|paragraphs?|characters?|chars?)"
)
_QTY = re.compile(
    rf"(?P<cmp>{_CMP})?\s*(?P<n>{_NUM})(?:\s*(?:and|to|-|–)\s*(?P<n2>{_NUM}))?\s+(?:\w+\s+){{0,2}}?(?P<unit>{_UNIT})\b",
    re.IGNORECASE,
)
_EACH = re.compile(r"\b(each|every|per|apiece)\b", re.IGNORECASE)
_QUOTED = r"[\"“'‘]([^\"”'’]{1,40})[\"”'’]"
_INCLUDE = re.compile(
    rf"\b(?:include|includes|including|contain|contains|containing|mention|mentions|use|using|with)\s+(?:the\s+)?"
    rf"(?:words?|phrases?|terms?|keywords?)\s+((?:{_QUOTED}(?:\s*(?:,|and|or)\s*)?)+)",
    re.IGNORECASE,
)
_EXCLUDE = re.compile(
    rf"\b(?:do not|don't|never|must not|without|avoid|avoiding|no)\s+(?:use|using|say|saying|mention|mentioning|"
    rf"include|including|contain|containing)?\s*(?:the\s+)?(?:words?|phrases?|terms?)\s+((?:{_QUOTED}(?:\s*(?:,|and|or)\s*)?)+)",
    re.IGNORECASE,
)
_STARTS = re.compile(
    rf"\b(?:start|starts|begin|begins|starting|beginning|open|opens)\s+(?:\w+\s+){{0,3}}?with\s+{_QUOTED}",
    re.IGNORECASE,
)
_ENDS = re.compile(
    rf"\b(?:end|ends|ending|finish|finishes|close|closes)\s+(?:\w+\s+){{0,3}}?with\s+{_QUOTED}", re.IGNORECASE
)
_ENDS_QUESTION = re.compile(
    r"\b(?:end|ends|ending|finish)\s+(?:\w+\s+){0,3}?with\s+a\s+question(?:\s+mark)?\b", re.I
)
_LOWER = re.compile(r"\b(?:all\s+)?lower[- ]?case\b|\bno (?:capital|uppercase) letters\b", re.IGNORECASE)
_UPPER = re.compile(r"\b(?:all\s+)?(?:upper[- ]?case|capital letters|all caps)\b", re.IGNORECASE)
_NO_COMMAS = re.compile(
    r"\b(?:no|without|avoid(?:ing)?|do not use|don't use|never use)\s+(?:any\s+)?commas?\b", re.I
)
_JSON_KEYS = re.compile(
    r"\bjson\b[^.]*?\bkeys?\b\s*:?\s*((?:[\"'`]?[A-Za-z_][A-Za-z0-9_]*[\"'`]?(?:\s*(?:,|and)\s*)?)+)",
    re.IGNORECASE,
)
_QUOTED_RX = re.compile(_QUOTED)
_NOT_UPPER_CONTEXT = re.compile(r"\b(?:no|not|without|avoid)\s+(?:\w+\s+){0,2}$", re.IGNORECASE)


def _num(text: str) -> int:
    t = text.strip().lower()
    return int(t) if t.isdigit() else _NUMBER_WORDS[t]


def _unit_rule(unit: str, text: str) -> str:
    u = unit.lower()
    if u.startswith("bullet"):
        return "bullets"
    if u.startswith("numbered"):
        return "numbered"
    if u.startswith(("step", "item", "point")):
        return "numbered" if re.search(r"\bnumbered\b", text, re.IGNORECASE) else "bullets"
    if u.startswith("word"):
        return "words"
    if u.startswith("sentence"):
        return "sentences"
    if u.startswith("line"):
        return "lines"
    if u.startswith("paragraph"):
        return "paragraphs"
    return "chars"


def _bounds(cmp: str | None, n: int, n2: int | None, rule: str, prefix: str) -> dict[str, int]:
    c = (cmp or "").lower()
    if n2 is not None or c == "between":
        hi = n2 if n2 is not None else n
        return {"min": min(n, hi), "max": max(n, hi)}
    if c in ("at most", "no more than", "not more than", "up to", "a maximum of", "maximum of", "max", "maximum",
             "no longer than", "not exceeding", "within"):  # fmt: skip
        return {"max": n}
    if c in ("fewer than", "less than", "under", "below"):
        return {"max": max(0, n - 1)}
    if c in ("at least", "no fewer than", "not less than", "a minimum of", "minimum of", "min", "minimum"):
        return {"min": n}
    if c in ("over", "more than"):
        return {"min": n + 1}
    if c in ("exactly", "precisely"):
        return {"min": n, "max": n}
    # A bare count: "in one sentence" / "in 20 words" bound the length; "three bullet points" is a count.
    if rule in ("words", "sentences", "chars") and re.search(r"\bin\s*$", prefix, re.IGNORECASE):
        return {"max": n}
    return {"min": n, "max": n}


def extract_constraints(text: str) -> list[dict[str, Any]]:
    """Explicit countable constraints found in ``text`` (see the module docstring), canonical order."""
    found: list[dict[str, Any]] = []
    if not text:
        return found
    for m in _QTY.finditer(text):
        try:
            n = _num(m.group("n"))
            n2 = _num(m.group("n2")) if m.group("n2") else None
        except KeyError:
            continue
        rule = _unit_rule(m.group("unit"), text)
        prefix = text[max(0, m.start() - 30) : m.start()]
        if rule == "words" and _EACH.search(
            text[max(0, m.start() - 40) : m.start()] + " " + (m.group("cmp") or "")
        ):
            rule = "item_words"
        bounds = _bounds(m.group("cmp"), n, n2, rule, prefix)
        found.append({"rule": rule, **bounds})
    for rx, rule in ((_INCLUDE, "include"), (_EXCLUDE, "exclude")):
        for m in rx.finditer(text):
            words = [w.strip() for w in _QUOTED_RX.findall(m.group(1)) if w.strip()]
            if words:
                found.append({"rule": rule, "words": words})
    # "include" matches also fire inside "do not use the word 'x'"; an excluded word is never required.
    excluded = {w.lower() for c in found if c["rule"] == "exclude" for w in c["words"]}
    for c in found:
        if c["rule"] == "include":
            c["words"] = [w for w in c["words"] if w.lower() not in excluded]
    found = [c for c in found if c["rule"] != "include" or c["words"]]
    start = _STARTS.search(text)
    if start:
        found.append({"rule": "starts_with", "text": start.group(1)})
    end = _ENDS.search(text)
    if end:
        found.append({"rule": "ends_with", "text": end.group(1)})
    elif _ENDS_QUESTION.search(text):
        found.append({"rule": "ends_with", "text": "?"})
    if _LOWER.search(text):
        found.append({"rule": "lowercase"})
    else:
        for m in _UPPER.finditer(text):
            if not _NOT_UPPER_CONTEXT.search(text[max(0, m.start() - 25) : m.start()]):
                found.append({"rule": "uppercase"})
                break
    if _NO_COMMAS.search(text):
        found.append({"rule": "no_commas"})
    jk = _JSON_KEYS.search(text)
    if jk:
        keys = [k.strip("\"'` ") for k in re.split(r"\s*(?:,|\band\b)\s*", jk.group(1)) if k.strip("\"'` ")]
        if keys:
            found.append({"rule": "json_keys", "keys": keys})
    return canonical(found)


def from_metadata(metadata: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Constraints a record declares in ``metadata["format_rules"]`` (unknown rules are dropped)."""
    rules = (metadata or {}).get("format_rules")
    if not isinstance(rules, list):
        return []
    out = []
    for r in rules:
        if isinstance(r, Mapping) and r.get("rule") in RULES:
            out.append({k: v for k, v in r.items() if k == "rule" or k in RULES[str(r["rule"])]})
    return canonical(out)


def merge_constraints(*groups: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return canonical([dict(c) for g in groups for c in g])


def canonical(constraints: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Merge bounds of the same rule (tightest wins), union word lists, sort by rule name."""
    merged: dict[str, dict[str, Any]] = {}
    for c in constraints:
        rule = str(c["rule"])
        if rule not in RULES:
            raise ValueError(f"unknown constraint rule {rule!r}")
        cur = merged.setdefault(rule, {"rule": rule})
        for key, value in c.items():
            if key == "rule":
                continue
            if key == "min":
                cur["min"] = max(int(value), int(cur.get("min", value)))
            elif key == "max":
                cur["max"] = min(int(value), int(cur.get("max", value)))
            elif key in ("words", "keys"):
                seen = list(cur.get(key, []))
                seen += [str(v) for v in value if str(v) not in seen]
                cur[key] = seen
            else:
                cur[key] = value
    return [merged[k] for k in sorted(merged)]


def constraints_key(constraints: Iterable[Mapping[str, Any]]) -> str:
    """A stable string for a constraint set (equal sets give equal keys)."""
    return json.dumps(canonical(constraints), sort_keys=True, separators=(",", ":"))
