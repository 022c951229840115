"""The marks put on a built answer: emojis, bold and italic spans, Markdown links, nested
parentheses, numbers spelled out, pronouns, distinct words — counted over the whole answer or per unit (every line
one emoji, every sentence a word in bold, no paragraph more than two links), and a unit that ends or starts with an
emoji, a number, a time or a link.

:func:`rlar.synthesis.builder.build` builds the body without these rules (with :func:`word_hints` so there are
words to mark), then :func:`decorate` puts the marks on it; an emoji is no word and bold wraps words already there,
so no word count changes. Nothing here is trusted: callers check every response with
:func:`rlar.constraints.checks.holds`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from rlar.constraints.checks import holds
from rlar.constraints.responses import EMOJI, WORDS, pick

__all__ = ["DECOR_UNITS", "MARKED_UNITS", "decorate", "marked", "word_hints"]

DECOR_UNITS = (
    "emojis",
    "bold",
    "bold_words",
    "italics",
    "links",
    "parens",
    "paren_depth",
    "number_words",
    "pronouns",
    "distinct_words",
    "distinct_letters",
)
MARKED_UNITS = ("url", "link_text", "link")  # ``each`` rules on units that :func:`decorate` puts in place
_KIND_TOKEN = {"emoji": "🌞", "number": "3", "time": "07:30", "link": "[site](https://example.com/site)"}
_PIECES = {
    "line": r"(\n)",
    "item": r"(\n)",
    "paragraph": r"(\n[ \t]*\n)",
    "sentence": r"((?<=[.!?])[ \t]+|\n+)",
}


def marked(c: Mapping[str, Any]) -> bool:
    """A rule :func:`decorate` puts on the built body: a count of marks (whole or per unit), a test of links, a
    unit's end or start of a kind."""
    if c.get("rule") in DECOR_UNITS and c.get("index") is None:
        return True
    if c.get("rule") == "each" and c.get("unit") in MARKED_UNITS:
        return True
    return (
        c.get("rule") == "each"
        and c.get("test") in ("ends_with_kind", "starts_with_kind")
        and c.get("unit") in _PIECES
        and c.get("arg") in _KIND_TOKEN
    )


def word_hints(cons: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Word counts the body needs before :func:`decorate` marks it (enough words to make distinct, pronouns of,
    nested parentheses around)."""
    need = 0
    for c in cons:
        if c.get("per"):
            continue
        if c.get("rule") == "distinct_words" and c.get("min"):
            need = max(need, int(c["min"]) + 1)
        elif c.get("rule") in ("pronouns", "bold", "bold_words", "links", "emojis", "number_words") and c.get(
            "min"
        ):
            need = max(need, 2 * int(c["min"]) + 2)
        elif c.get("rule") in ("parens", "paren_depth") and c.get("min"):
            need = max(need, int(c["min"]) + 3)
    return [{"rule": "words", "min": need}] if need else []


def _spots(text: str) -> list[tuple[int, int]]:
    """Spans of the plain words of a text (not markup, not in a fence)."""
    return [m.span() for m in re.finditer(r"(?<![\w*\[(#@])[A-Za-z][a-z]+(?![\w*\])])", text)]


def decorate(text: str, cons: Sequence[Mapping[str, Any]]) -> str:
    """``text`` with the marks of ``cons`` put on it: counts of :data:`DECOR_UNITS` over the whole answer, then per
    unit (each piece marked on its own), then the ends or starts of a kind per unit."""
    text = _marks(text, [c for c in cons if not c.get("per")])
    for scope, rx in _PIECES.items():
        per = [
            {k: v for k, v in c.items() if k != "per"}
            for c in cons
            if c.get("per") == scope and c.get("rule") in DECOR_UNITS
        ]
        kinds = [
            c
            for c in cons
            if c.get("rule") == "each"
            and c.get("unit") == scope
            and c.get("test") in ("ends_with_kind", "starts_with_kind")
        ]
        if not per and not kinds:
            continue
        parts = re.split(rx, text)
        for i in range(0, len(parts), 2):
            if not parts[i].strip():
                continue
            piece = _marks(parts[i], per) if per else parts[i]
            for c in kinds:
                if holds({**c, "unit": "answer"}, piece):
                    continue
                token = _KIND_TOKEN.get(str(c.get("arg")), "")
                if c["test"] == "ends_with_kind":
                    piece = piece.rstrip().rstrip(".!?,;:") + " " + token
                else:
                    found = re.match(r"^([ \t]*(?:[-*\u2022]|\d{1,3}[.)])[ \t]+)?", piece)
                    lead = found.group(0) if found else ""
                    piece = lead + token + " " + piece[len(lead) :]
            parts[i] = piece
        text = "".join(parts)
    return text


def _marks(text: str, cons: Sequence[Mapping[str, Any]]) -> str:
    """``text`` with the counted marks of ``cons`` (counts of :data:`DECOR_UNITS`, link tests) put on it."""
    want = {c["rule"]: c for c in cons if c.get("rule") in DECOR_UNITS and not c.get("per")}
    if not want and not any(c.get("rule") == "each" and c.get("unit") in MARKED_UNITS for c in cons):
        return text
    if "distinct_words" in want and want["distinct_words"].get("min"):
        seen: set[str] = set()
        fresh = iter(w for w in WORDS)

        def unique(m: re.Match[str]) -> str:
            w = m.group(0)
            if w.lower() in seen:
                w = next(fresh, w)
                while w.lower() in seen:
                    w = next(fresh, w)
                    if w == m.group(0):
                        break
            seen.add(w.lower())
            return w

        text = re.sub(r"(?<![\w*\[(#@])[a-z]+(?![\w*\])])", unique, text)
    if "number_words" in want and want["number_words"].get("min"):
        spots = _spots(text)[1:]
        for a, b in reversed(spots[: pick(want["number_words"], 1)]):
            text = text[:a] + "three" + text[b:]
    if "pronouns" in want and want["pronouns"].get("min"):
        spots = _spots(text)[1:]
        for a, b in reversed(spots[: int(want["pronouns"]["min"])]):
            text = text[:a] + "we" + text[b:]
    for rule, wrap in (("bold", "**"), ("bold_words", "**"), ("italics", "*")):
        k = pick(want.get(rule), 0) if rule in want else 0
        spots = [s for s in _spots(text)]
        chosen = spots[1 : 1 + k * 2 : 2] if len(spots) >= 2 * k + 1 else spots[:k]
        for a, b in reversed(chosen):
            text = text[:a] + wrap + text[a:b] + wrap + text[b:]
    k = pick(want.get("links"), 0) if "links" in want else 0
    if not k and any(c.get("rule") == "each" and c.get("unit") in ("url", "link_text", "link") for c in cons):
        k = 1
    label = next(
        (str(c["arg"]) for c in cons if c.get("unit") == "link_text" and c.get("test") == "equals"), None
    )
    scheme = next(
        (str(c["arg"]) for c in cons if c.get("unit") == "url" and c.get("test") == "starts_with"), "https://"
    )
    spots = _spots(text)
    for a, b in reversed(spots[-k:] if k else []):
        shown = label or text[a:b]
        text = text[:a] + f"[{shown}]({scheme}example.com/{text[a:b].lower()})" + text[b:]
    depth = pick(want.get("paren_depth"), 0) if "paren_depth" in want else 0
    pairs = pick(want.get("parens"), depth) if "parens" in want else depth
    if pairs:
        spots = _spots(text)
        if len(spots) > pairs:
            a = spots[1][0]
            b = spots[-1][1]
            nest = max(1, depth or pairs)
            text = text[:a] + "(" * nest + text[a:b] + ")" * nest + text[b:]
            for i in range(pairs - nest):
                text = text.rstrip(".") + f" (note {i + 1})."
    k = pick(want.get("emojis"), 0) if "emojis" in want else 0
    if k:
        spots = _spots(text)
        step = max(1, len(spots) // (k + 1))
        for j in reversed(range(k)):
            at = spots[min(len(spots) - 1, step * (j + 1))][1] if spots else len(text)
            text = text[:at] + " " + EMOJI[j % len(EMOJI)] + text[at:]
    return text
