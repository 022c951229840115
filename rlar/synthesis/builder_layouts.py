"""Responses laid out as a whole: the layouts of the constraint families first (HTML, task and nested lists,
figures, question/answer pairs: each family builds its own, :mod:`rlar.constraints.families`), then a fenced block,
repeated units, a staircase, a list on one line with an exact separator, lines that are times, prices, bit strings
or links, a pangram, and units measured and related (units of a prime / even / odd number of words or sentences,
one first word, sentences chained by their last words, lines in reverse word order, sums of the two numbers before).

:func:`build_layout` returns a response for a set it knows how to lay out, else None (the general builder then
builds it); the marks put on an answer are :mod:`rlar.synthesis.builder_marks`'s, the near misses
:mod:`rlar.synthesis.builder_misses`'s. Nothing here is trusted: callers check every response with
:func:`rlar.constraints.checks.holds`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from rlar.constraints.checks import measure_ok
from rlar.constraints.families import FAMILIES
from rlar.constraints.responses import (
    EMOJI,
    WORDS,
    count_wanted,
    one_rule,
    per_rule,
    phrase,
    pick,
    relation_rule,
    rules_of,
    test_rule,
)

__all__ = ["build_layout"]

_PANGRAMS = (
    "Pack my box with five dozen liquor jugs.",
    "The quick brown fox jumps over the lazy dog.",
    "Sphinx of black quartz, judge my vow.",
)


def _cased(text: str, cons: Sequence[Mapping[str, Any]]) -> str:
    rules = {c.get("rule") for c in cons}
    if "lowercase" in rules:
        return text.lower()
    if "uppercase" in rules:
        return text.upper()
    if "title_case" in rules:
        return re.sub(r"(?<![\w'])([a-z])", lambda m: m.group(1).upper(), text)
    return text


# -- layouts ---------------------------------------------------------------------------------------------------------
def _fence(c: Mapping[str, Any], cons: Sequence[Mapping[str, Any]]) -> str:
    n = count_wanted(cons, "code_lines", count_wanted(cons, "lines", 3))
    body = "\n".join(f"step_{i + 1} = {i + 1}" for i in range(n))
    return f"```{c['lang']}\n{body}\n```"


def _staircase(cons: Sequence[Mapping[str, Any]]) -> str | None:
    order = next(
        (c for c in rules_of(cons, "order") if c.get("unit") == "line" and c.get("of") == "indent"), None
    )
    if order is None:
        return None
    n = count_wanted(cons, "lines", 4)
    first = next((c for c in rules_of(cons, "indent") if c.get("index") == 1), None)
    start = pick(first, 0) if first else 0
    step = int(order["arg"]) if order.get("rel") == "step" else 1
    if order.get("rel") == "decreasing":
        start, step = max(start, n - 1), -1
    k = pick(per_rule(cons, "words", "line"), 3)
    return "\n".join(" " * (start + step * i) + phrase(i, k).capitalize() for i in range(n))


def _measured(cons: Sequence[Mapping[str, Any]]) -> str | None:
    """Units whose measure passes every ``each ... of`` test (a prime number of words per sentence, an odd number of
    sentences per paragraph, ...) and the ``equal`` relation, within the per-unit bounds of that measure."""
    tests = [c for c in rules_of(cons, "each") if c.get("of")]
    equal = [c for c in rules_of(cons, "order") if c.get("rel") == "equal" and c.get("of")]
    if not tests and not equal:
        return None
    unit = str((tests or equal)[0]["unit"])
    of = str((tests or equal)[0]["of"])
    if unit == "word" and of == "letters":  # words whose letters pass the tests
        n = count_wanted(cons, "words", 5)
        pool = [
            w
            for w in [*sorted(set(WORDS), key=len), "ox", "sun", "tree", "in", "cat"]
            if all(measure_ok(c["test"], c.get("arg"), len(w)) for c in tests)
        ]
        return " ".join(pool[i % len(pool)] for i in range(n)).capitalize() + "." if pool else None
    if of not in ("words", "sentences") or any(c["unit"] != unit or c["of"] != of for c in tests + equal):
        return None
    scope = {
        "answer": None,
        "sentence": "sentence",
        "line": "line",
        "paragraph": "paragraph",
        "item": "item",
    }.get(unit, "?")
    if scope == "?":
        return None
    bound = per_rule(cons, of, scope) if scope else one_rule(cons, of, per=None)
    lo, hi = (bound or {}).get("min") or 1, (bound or {}).get("max") or 16
    sizes = [
        k for k in range(max(1, lo), hi + 1) if all(measure_ok(c["test"], c.get("arg"), k) for c in tests)
    ]
    if not sizes:
        return None
    if equal:
        sizes = sizes[:1]
    if unit == "answer":
        return phrase(0, sizes[0]).capitalize() + "."
    n = count_wanted(
        cons, {"sentence": "sentences", "line": "lines", "paragraph": "paragraphs", "item": "items"}[unit], 3
    )
    parts = []
    for i in range(n):
        k = sizes[i % len(sizes)]
        if of == "sentences":
            parts.append(" ".join(phrase(i * 5 + j, 3).capitalize() + "." for j in range(k)))
        else:
            parts.append(phrase(i, k).capitalize() + ("." if unit in ("sentence", "paragraph") else ""))
    joiner = {"sentence": " ", "line": "\n", "paragraph": "\n\n", "item": "\n"}[unit]
    return joiner.join(f"- {p}" if unit == "item" else p for p in parts)


def _same_first(cons: Sequence[Mapping[str, Any]], unit: str) -> str:
    n = count_wanted(cons, {"paragraph": "paragraphs", "line": "lines", "sentence": "sentences"}[unit], 3)
    parts = [f"Today the {phrase(i, 3)} waits." for i in range(n)]
    return ("\n\n" if unit == "paragraph" else "\n" if unit == "line" else " ").join(parts)


def _last_first(cons: Sequence[Mapping[str, Any]], unit: str) -> str:
    n = count_wanted(cons, "sentences" if unit == "sentence" else "lines", 3)
    keys = [WORDS[(i * 4) % len(WORDS)] for i in range(n + 1)]
    parts = [f"{keys[i].capitalize()} sits near the {keys[i + 1]}." for i in range(n)]
    return (" " if unit == "sentence" else "\n").join(parts)


def _reversed_lines(cons: Sequence[Mapping[str, Any]]) -> str:
    n = count_wanted(cons, "lines", 2)
    first = next((c for c in rules_of(cons, "words") if c.get("per") == "line"), None)
    k = pick(first, 4)
    words = [WORDS[j] for j in range(k)]
    return "\n".join(" ".join(words if i % 2 == 0 else words[::-1]) for i in range(n))


def _initials(cons: Sequence[Mapping[str, Any]]) -> str:
    """Words whose first letters differ from the word before (or follow the alphabet)."""
    n = count_wanted(cons, "words", 6)
    alphabet = relation_rule(cons, "word", "alphabet_next") is not None
    out: list[str] = []
    pool = sorted(set(WORDS))
    for i in range(n):
        if alphabet:
            ch = chr(ord("a") + (ord(out[-1][0]) - ord("a") + 1) % 26) if out else "a"
            out.append(next((w for w in pool if w[0] == ch and w not in out), ch + "ve"))
        else:
            out.append(next(w for w in WORDS[i:] + WORDS if not out or w[0] != out[-1][0]))
    return " ".join(out).capitalize() + "."


def _same(cons: Sequence[Mapping[str, Any]]) -> str | None:
    same = rules_of(cons, "same")
    unit = str(same[0]["unit"])
    count_rule = {"line": "lines", "paragraph": "paragraphs", "sentence": "sentences", "item": "items"}.get(
        unit
    )
    if count_rule is None:
        return None
    need = max(max(abs(int(c["index"])), abs(int(c["as"]))) for c in same)
    n = max(need, count_wanted(cons, count_rule, need + 1))
    parts = [
        f"The {phrase(i, 2)} rests here." if unit != "paragraph" else f"The {phrase(i, 4)} rests."
        for i in range(n)
    ]

    def pos(k: int) -> int:
        return k - 1 if k > 0 else n + k

    for c in same:
        parts[pos(int(c["index"]))] = parts[pos(int(c["as"]))]
    joiner = {"line": "\n", "paragraph": "\n\n", "sentence": " ", "item": "\n"}[unit]
    body = joiner.join(parts)
    return "\n".join(f"- {p}" for p in parts) if unit == "item" else body


def _fibonacci(cons: Sequence[Mapping[str, Any]]) -> str:
    n = count_wanted(cons, "numbers", count_wanted(cons, "lines", 6))
    seq = [2, 3]
    first = next((c for c in rules_of(cons, "total") if c.get("agg") == "first"), None)
    if first is not None and first.get("min") is not None:
        seq[0] = int(first["min"])
    while len(seq) < n:
        seq.append(seq[-1] + seq[-2])
    last = next((c for c in rules_of(cons, "total") if c.get("agg") == "last"), None)
    while last is not None and last.get("min") is not None and seq[-1] < int(last["min"]):
        seq = [seq[0] + 1, seq[1] + 1]
        while len(seq) < n:
            seq.append(seq[-1] + seq[-2])
    delim = next(iter(rules_of(cons, "delimited")), None)
    if delim is not None:
        sep = str(delim["text"])
        joiner = sep if delim.get("exact") or sep == " " else sep + " "
    else:
        joiner = "\n" if one_rule(cons, "lines", per=None) or per_rule(cons, "numbers", "line") else ", "
    return joiner.join(str(v) for v in seq[:n])


def _pangram(cons: Sequence[Mapping[str, Any]]) -> str:
    letters = one_rule(cons, "distinct_letters", per=None) or {}
    if letters.get("max") is not None and letters["max"] < 26:  # a near miss: a letter short
        text = "The quick brown fox jumped over the lazy dog."
    else:
        text = _PANGRAMS[0]
    if count_wanted(cons, "sentences", 1) > 1:
        text += " It was fast."
    words = one_rule(cons, "words", per=None)
    want = pick(words, len(text.split())) if words else len(text.split())
    if want > len(text.split()):
        text = text.rstrip(".") + " " + " ".join(WORDS[: want - len(text.split())]) + "."
    if one_rule(cons, "punctuation", per=None, max=0):
        text = text.rstrip(".").replace(",", "")
    return _cased(text, cons)


def _pieces(cons: Sequence[Mapping[str, Any]], c: Mapping[str, Any]) -> str | None:
    """A list on one line split by an exact separator: words (a style's case), times or bit strings."""
    unit = c.get("unit")
    n = pick(c, count_wanted(cons, {"word": "words", "number": "numbers"}.get(str(unit), "items"), 3))
    if unit == "time":
        rng = next((x for x in rules_of(cons, "each") if x.get("test") == "range"), None)
        lo = _minutes((rng or {}).get("arg", [None])[0]) if rng else None
        start = lo if lo is not None else 360
        items = [f"{(start + 15 * i) // 60:02d}:{(start + 15 * i) % 60:02d}" for i in range(n)]
    elif unit == "number" and test_rule(cons, "number", "binary"):
        return None
    elif unit == "word":
        items = [WORDS[i] for i in range(n)]
    else:
        return None
    return _cased(str(c["text"]).join(items), cons)


def _minutes(t: Any) -> int | None:
    m = re.fullmatch(r"(\d{1,2}):(\d{2})", str(t or ""))
    return int(m.group(1)) * 60 + int(m.group(2)) if m else None


def _line_kinds(cons: Sequence[Mapping[str, Any]]) -> str | None:
    """Lines that are each a time, a price, a bit string or a link (or the whole answer one such)."""
    if test_rule(cons, "answer", "binary"):
        k = count_wanted(cons, "chars", 8)
        if test_rule(cons, "answer", "no_adjacent_repeat"):
            return ("01" * k)[:k]
        return format(5, f"0{k}b")[-k:]
    price = test_rule(cons, "answer", "price")
    if price:
        return str(price["arg"]).replace("#", "4.50")
    n = count_wanted(cons, "lines", count_wanted(cons, "items", count_wanted(cons, "bullets", 3)))
    for unit in ("line", "item"):
        if test_rule(cons, unit, "time24"):
            rng = next(
                (x for x in rules_of(cons, "each") if x.get("test") == "range" and x.get("unit") == "time"),
                None,
            )
            lo, hi = (rng["arg"][0], rng["arg"][1]) if rng else (None, None)
            a = (_minutes(lo) if lo else None) or 6 * 60
            b = (_minutes(hi) if hi else None) or a + 10 * n
            step = max(1, (b - a) // max(1, n))
            times = [a + step * i for i in range(n)]
            lead = test_rule(cons, unit, "starts_with_kind")
            return "\n".join(f"{t // 60:02d}:{t % 60:02d}" + (" Walk outside" if lead else "") for t in times)
        price = test_rule(cons, unit, "price")
        if price:
            rng = next((x for x in rules_of(cons, "each") if x.get("test") == "range"), None)
            lo = float(rng["arg"][0]) if rng and rng["arg"][0] is not None else 1.0
            return "\n".join(str(price["arg"]).replace("#", f"{lo + 0.25 * (i + 1):.2f}") for i in range(n))
        if test_rule(cons, unit, "binary"):
            width = per_rule(cons, "chars", unit) or per_rule(cons, "chars", "line")
            k = pick(width, 8)
            return "\n".join(format((i * 37 + 5) % (2**k), f"0{k}b") for i in range(n))
        kind = test_rule(cons, unit, "ends_with_kind") or test_rule(cons, unit, "starts_with_kind")
        if kind and kind.get("arg") == "emoji":
            k = pick(per_rule(cons, "words", unit), 3)
            extra = max(0, pick(per_rule(cons, "emojis", unit), 1) - 1)
            first = kind.get("test") == "starts_with_kind"
            return "\n".join(
                (f"{EMOJI[i % len(EMOJI)]} " if first else "")
                + phrase(i, k).capitalize()
                + "".join(f" {EMOJI[(i + j + 3) % len(EMOJI)]} {WORDS[j]}" for j in range(extra))
                + ("" if first else f" {EMOJI[i % len(EMOJI)]}")
                for i in range(n)
            )
        if test_rule(cons, unit, "is_link"):
            marker = "- " if unit == "item" or one_rule(cons, "bullets", per=None) else ""
            return "\n".join(
                f"{marker}[{WORDS[i].capitalize()}](https://example.com/{WORDS[i]})" for i in range(n)
            )
    return None


def build_layout(cons: Sequence[Mapping[str, Any]]) -> str | None:
    """A response for a set this module lays out (module docstring), or None."""
    cons = list(cons)
    for (
        family
    ) in FAMILIES:  # a layout of a constraint family: HTML and task lists, nested lists, figures, pairs
        laid = family.build(cons)
        if laid is not None:
            return laid
    fence = next((c for c in rules_of(cons, "code_block") if c.get("lang")), None)
    if fence is not None:
        return _fence(fence, cons)
    if rules_of(cons, "same"):
        return _same(cons)
    stairs = _staircase(cons)
    if stairs is not None:
        return stairs
    if relation_rule(cons, "number", "sum_prev2") or relation_rule(cons, "line", "sum_prev2"):
        return _fibonacci(cons)
    measured = _measured(cons)
    if measured is not None:
        return _cased(measured, cons)
    for unit in ("paragraph", "line", "sentence"):
        if relation_rule(cons, unit, "same_first"):
            return _cased(_same_first(cons, unit), cons)
    for unit in ("sentence", "line"):
        if relation_rule(cons, unit, "last_first"):
            return _cased(_last_first(cons, unit), cons)
    if relation_rule(cons, "line", "reversed"):
        return _cased(_reversed_lines(cons), cons)
    if test_rule(cons, "paragraph", "bookended"):
        n = count_wanted(cons, "paragraphs", 2)
        return "\n\n".join(f"Rain {phrase(i, 3)} rain." for i in range(n))
    if test_rule(cons, "word", "consonant_cluster"):
        n = count_wanted(cons, "words", 4)
        return (
            " ".join(
                w for w in ["strong", "bright", "storm", "crisp", "frost", "blend", "trick", "plant"][:n]
            ).capitalize()
            + "."
        )
    if relation_rule(cons, "word", "initials_differ") or relation_rule(cons, "word", "alphabet_next"):
        return _cased(_initials(cons), cons)
    if one_rule(cons, "distinct_letters", per=None):
        return _pangram(cons)
    delim = next((c for c in rules_of(cons, "delimited") if c.get("exact") or c.get("unit") == "time"), None)
    if delim is not None:
        return _pieces(cons, delim)
    return _line_kinds(cons)
