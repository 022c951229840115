"""Responses to order for the forms of a whole answer: a wrapper, one unit's start or end,
hashtags that close it, the request repeated first, a JSON array; and responses that break each of them.

:func:`rlar.synthesis.builder.build` builds the body, then :func:`apply_forms` puts these forms on it in a fixed
order (the ``nth`` starts and ends, the closing hashtags, the repeated request, the wrapper outermost);
:func:`form_hints` gives the count a body needs so the unit an ``nth`` rule names exists (a second paragraph
needs two). A JSON array is a whole answer of its own (:func:`json_array_text`). :func:`form_violations` gives
``(why, response)`` pairs, each breaking one of these rules. Nothing here is trusted: callers check every
response with :func:`rlar.constraints.checks.holds`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["FORM_RULES", "apply_forms", "form_hints", "form_violations", "json_array_text"]

FORM_RULES = ("nth", "wrap", "trailing", "repeat")
_TAGS = ("news", "today", "life", "fun", "now", "daily", "home")
_COUNT_OF = {"paragraph": "paragraphs", "sentence": "sentences", "line": "lines", "item": "bullets"}


def form_hints(constraints: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Counts the body needs for the ``nth`` rules (at least as many units as the highest index; a last line
    that opens a closing line needs a body line before it), unless a count of that unit is already given."""
    out: list[dict[str, Any]] = []
    for c in constraints:
        if c.get("rule") != "nth":
            continue
        rule = _COUNT_OF[str(c["unit"])]
        if c["unit"] == "item" and any(x.get("rule") in ("items", "numbered") for x in constraints):
            continue
        if any(x.get("rule") == rule and not x.get("per") for x in constraints):
            continue
        k = int(c["index"])
        need = k if k > 0 else 2
        if not any(x["rule"] == rule and x.get("min", 0) >= need for x in out):
            out = [x for x in out if x["rule"] != rule] + [{"rule": rule, "min": need}]
    return out


def _pieces(
    text: str, unit: str, separator: str | None = None
) -> tuple[list[str], Callable[[list[str]], str]]:
    """The text split into ``unit`` pieces and the separators between them, and how to join them back."""
    if unit == "paragraph":
        rx = r"(\n[ \t]*" + re.escape(separator) + r"[ \t]*\n)" if separator else r"(\n[ \t]*\n)"
    elif unit == "sentence":
        rx = r"((?<=[.!?])[ \t]+|\n+)"
    else:
        rx = r"(\n+)"
    parts = re.split(rx, text)
    return parts, "".join


def _edit(piece: str, c: Mapping[str, Any]) -> str:
    text = str(c["text"])
    if c.get("side") == "end":
        if re.search(r"\w$", text):
            return f"{piece.rstrip().rstrip('.!?')} {text}."
        return f"{piece.rstrip().rstrip('.!?')} {text}"
    marker = re.match(r"^([ \t]*(?:[-*\u2022]|\d{1,3}[.)])[ \t]+)", piece)
    lead = marker.group(1) if marker else ""
    rest = piece[len(lead) :]
    return f"{lead}{text} {rest[:1].lower()}{rest[1:]}"


def place_nth(text: str, c: Mapping[str, Any]) -> str:
    """``text`` with the ``index``-th unit starting (ending) with the rule's text."""
    parts, join = _pieces(text, str(c["unit"]), c.get("separator"))
    spots = [i for i in range(0, len(parts), 2) if parts[i].strip()]
    k = int(c["index"])
    i = k - 1 if k > 0 else len(spots) + k
    if not 0 <= i < len(spots):
        return text
    j = spots[i]
    parts[j] = _edit(parts[j], c)
    return join(parts)


def apply_forms(text: str, constraints: Sequence[Mapping[str, Any]]) -> str:
    """The body with the forms of the module docstring put on it."""
    for c in constraints:
        if c.get("rule") == "nth":
            text = place_nth(text, c)
    for c in constraints:
        if c.get("rule") == "trailing":
            n = int(c.get("min") or c.get("max") or 1)
            text = f"{text.rstrip()} {' '.join('#' + t for t in _TAGS[:n])}"
    for c in constraints:
        if c.get("rule") == "repeat":
            text = f"{c['text']}\n{text}"
    for c in constraints:
        if c.get("rule") == "wrap":
            text = f"{c['open']}{text}{c['close']}"
    return text


_VALUES: dict[str, Callable[[int], Any]] = {
    "string": lambda i: ("alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta")[i % 8],
    "integer": lambda i: 3 + 4 * i,
    "number": lambda i: 1.5 + 2 * i,
    "boolean": lambda i: i % 2 == 0,
    "object": lambda i: {"id": i + 1},
}
_WRONG = {"string": 7, "integer": "seven", "number": "2.5", "boolean": "true", "object": "x"}


def json_array_text(c: Mapping[str, Any], n: int | None = None, wrong: bool = False) -> str:
    lo, hi = c.get("min"), c.get("max")
    if n is None:
        n = lo if lo is not None else (min(3, hi) if hi is not None else 3)
    kind = str(c.get("type") or "string")
    values = [_VALUES.get(kind, _VALUES["string"])(i) for i in range(max(0, n))]
    if wrong and values:
        values[-1] = _WRONG.get(kind, None)
    return json.dumps(values)


def form_violations(
    constraints: Sequence[Mapping[str, Any]], good: str, rebuild: Callable[[Sequence[Mapping[str, Any]]], str]
) -> list[tuple[str, str]]:
    """(why, response) pairs, each breaking one form rule: ``rebuild`` builds a response for a changed set."""
    out: list[tuple[str, str]] = []
    for c in constraints:
        rule = c.get("rule")
        others = [x for x in constraints if x is not c]
        if rule == "wrap":
            out.append(("wrap: no closing tag", good.rstrip()[: -len(str(c["close"]))]))
            out.append(("wrap: text outside it", f"Here it is: {good}"))
        elif rule == "nth":
            other = "Zebra" if str(c["text"]).lower() != "zebra" else "Yak"
            out.append(
                (
                    f"nth: the {c['index']} {c['unit']} {c.get('side')}s otherwise",
                    rebuild([*others, {**c, "text": other}]),
                )
            )
        elif rule == "trailing":
            n = int(c.get("min") or 1)
            body = rebuild(others)
            tags = " ".join("#" + t for t in _TAGS[:n])
            out.append(("trailing: the hashtags first", f"{tags} {body}"))
            if n >= 1:
                out.append(
                    (
                        "trailing: one hashtag fewer",
                        f"{body} {' '.join('#' + t for t in _TAGS[: n - 1])}".rstrip(),
                    )
                )
        elif rule == "repeat":
            out.append(("repeat: the request not repeated", rebuild(others)))
        elif rule == "json_array":
            lo = int(c["min"]) if c.get("min") is not None else 3
            out.append(("json_array: one item more", json_array_text(c, lo + 1)))
            if c.get("type"):
                out.append(("json_array: an item of the wrong type", json_array_text(c, wrong=True)))
            out.append(("json_array: not JSON", json_array_text(c)[:-1] + ",]"))
    return out
