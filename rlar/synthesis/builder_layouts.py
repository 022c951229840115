"""Responses to order for the seventh round's layouts (issue 25): the whole answer laid out (a figure, a nested
list, an HTML list, question/answer pairs, a task list, a fenced block, repeated units, a staircase, a list on one
line with an exact separator, lines that are times, prices, bit strings or links, a pangram) and units measured and
related (units of a prime / even / odd number of words or sentences, one first word, sentences chained by their
last words, lines in reverse word order, sums of the two numbers before).

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

__all__ = ["build_layout"]

_EMOJI = ("🌞", "🌲", "🍞", "🚲", "🎉", "🌙", "🍎", "🚗", "🏠", "🐕")
_WORDS = (
    "river stone garden window morning candle harbor meadow lantern valley orchard pebble thunder silver "
    "forest castle bridge market violin ribbon copper marble feather compass blanket pepper cinnamon "
    "ladder pencil rocket saddle tunnel wagon anchor basket cactus desert island jungle"
).split()
_PANGRAMS = (
    "Pack my box with five dozen liquor jugs.",
    "The quick brown fox jumps over the lazy dog.",
    "Sphinx of black quartz, judge my vow.",
)


def _by(cons: Sequence[Mapping[str, Any]], rule: str) -> list[dict[str, Any]]:
    return [dict(c) for c in cons if c.get("rule") == rule]


def _one(cons: Sequence[Mapping[str, Any]], rule: str, **where: Any) -> dict[str, Any] | None:
    return next((c for c in _by(cons, rule) if all(c.get(k) == v for k, v in where.items())), None)


def _pick(c: Mapping[str, Any] | None, default: int) -> int:
    if not c:
        return default
    lo, hi = c.get("min"), c.get("max")
    if lo is not None and hi is not None:
        return lo if lo == hi else min(hi, lo + 1)
    if lo is not None:
        return max(lo, default) if default <= lo + 1 else lo + 1
    if hi is not None:
        return min(hi, default)
    return default


def _count(cons: Sequence[Mapping[str, Any]], rule: str, default: int) -> int:
    return _pick(_one(cons, rule, per=None), default)


def _per(cons: Sequence[Mapping[str, Any]], rule: str, per: str) -> dict[str, Any] | None:
    return next((c for c in _by(cons, rule) if c.get("per") == per and c.get("index") is None), None)


def _has_test(cons: Sequence[Mapping[str, Any]], unit: str, test: str) -> dict[str, Any] | None:
    return next((c for c in _by(cons, "each") if c.get("unit") == unit and c.get("test") == test), None)


def _rel(cons: Sequence[Mapping[str, Any]], unit: str, rel: str) -> dict[str, Any] | None:
    return next((c for c in _by(cons, "order") if c.get("unit") == unit and c.get("rel") == rel), None)


def _phrase(i: int, k: int) -> str:
    """``k`` words of the vocabulary, starting at the ``i``-th."""
    return " ".join(_WORDS[(i * 3 + j) % len(_WORDS)] for j in range(k))


def _cased(text: str, cons: Sequence[Mapping[str, Any]]) -> str:
    rules = {c.get("rule") for c in cons}
    if "lowercase" in rules:
        return text.lower()
    if "uppercase" in rules:
        return text.upper()
    if "title_case" in rules:
        return re.sub(r"(?<![\w'])([a-z])", lambda m: m.group(1).upper(), text)
    return text


# -- layouts -----------------------------------------------------------------------------------------------------
def _figure(c: Mapping[str, Any]) -> str:
    n = _pick(c, 4)
    ch = str(c.get("char") or "*")
    shape = c.get("shape")
    if shape == "inverted":
        return "\n".join(ch * (n - i) for i in range(n))
    if shape == "pyramid":
        return "\n".join(" " * (n - i) + ch * (2 * i - 1) for i in range(1, n + 1))
    return "\n".join(ch * i for i in range(1, n + 1))


def _outline(c: Mapping[str, Any]) -> str:
    n = _pick(c, 3)
    k = _pick({"min": c.get("sub_min"), "max": c.get("sub_max")}, 2)
    top, sub = str(c.get("marker") or "-"), str(c.get("sub_marker") or c.get("marker") or "-")
    pad = " " * int(c.get("indent") or 2)
    rows = []
    for i in range(n):
        rows.append(f"{top} {_WORDS[i].capitalize()}")
        rows += [f"{pad}{sub} {_WORDS[(i * 5 + j + 7) % len(_WORDS)]}" for j in range(k)]
    return "\n".join(rows)


def _item_texts(cons: Sequence[Mapping[str, Any]], n: int) -> list[str]:
    """Item texts that keep the per-item rules (words per item, a capital first, a final mark)."""
    k = _pick(_per(cons, "words", "item"), 2)
    end = next((str(c["text"]) for c in _by(cons, "ends_with") if c.get("per") == "item"), "")
    out = []
    for i in range(n):
        text = _phrase(i, k)
        if _has_test(cons, "item", "starts_upper") or end or not _has_test(cons, "item", "lowercase"):
            text = text.capitalize()
        out.append(text + end)
    return out


def _html_list(c: Mapping[str, Any], cons: Sequence[Mapping[str, Any]]) -> str:
    tag = str(c.get("tag") or "ul")
    items = "".join(f"<li>{t}</li>" for t in _item_texts(cons, _pick(c, 3)))
    return f"<{tag}>{items}</{tag}>"


def _pairs(c: Mapping[str, Any]) -> str:
    rows = []
    for i in range(1, _pick(c, 2) + 1):
        q = f"Is the {_WORDS[i]} near the {_WORDS[i + 5]}" + str(c.get("first_end") or "?")
        rows.append(
            str(c["first"]).replace("{n}", str(i)) + ("" if str(c["first"]).endswith(" ") else " ") + q
        )
        rows.append(
            str(c["second"]).replace("{n}", str(i))
            + ("" if str(c["second"]).endswith(" ") else " ")
            + f"Yes, it is {_WORDS[i + 9]}."
        )
    return "\n".join(rows)


def _task_list(cons: Sequence[Mapping[str, Any]]) -> str:
    ticked = _one(cons, "checked", per=None)
    open_ = _one(cons, "unchecked", per=None)
    n = _count(cons, "items", _count(cons, "lines", _count(cons, "bullets", 0)))
    x = _pick(ticked, 0 if open_ else (n or 3))
    o = _pick(open_, max(0, (n or 3) - x))
    if n and x + o != n:
        if ticked is not None and open_ is None:
            o = max(0, n - x)
        elif open_ is not None and ticked is None:
            x = max(0, n - o)
    k = _pick(_per(cons, "words", "item") or _per(cons, "words", "line"), 2)
    rows = [f"- [x] {_phrase(i, k).capitalize()}" for i in range(x)]
    rows += [f"- [ ] {_phrase(i + x, k).capitalize()}" for i in range(o)]
    return "\n".join(rows)


def _fence(c: Mapping[str, Any], cons: Sequence[Mapping[str, Any]]) -> str:
    n = _count(cons, "code_lines", _count(cons, "lines", 3))
    body = "\n".join(f"step_{i + 1} = {i + 1}" for i in range(n))
    return f"```{c['lang']}\n{body}\n```"


def _staircase(cons: Sequence[Mapping[str, Any]]) -> str | None:
    order = next((c for c in _by(cons, "order") if c.get("unit") == "line" and c.get("of") == "indent"), None)
    if order is None:
        return None
    n = _count(cons, "lines", 4)
    first = next((c for c in _by(cons, "indent") if c.get("index") == 1), None)
    start = _pick(first, 0) if first else 0
    step = int(order["arg"]) if order.get("rel") == "step" else 1
    if order.get("rel") == "decreasing":
        start, step = max(start, n - 1), -1
    k = _pick(_per(cons, "words", "line"), 3)
    return "\n".join(" " * (start + step * i) + _phrase(i, k).capitalize() for i in range(n))


def _measured(cons: Sequence[Mapping[str, Any]]) -> str | None:
    """Units whose measure passes every ``each ... of`` test (a prime number of words per sentence, an odd number of
    sentences per paragraph, ...) and the ``equal`` relation, within the per-unit bounds of that measure."""
    tests = [c for c in _by(cons, "each") if c.get("of")]
    equal = [c for c in _by(cons, "order") if c.get("rel") == "equal" and c.get("of")]
    if not tests and not equal:
        return None
    unit = str((tests or equal)[0]["unit"])
    of = str((tests or equal)[0]["of"])
    if unit == "word" and of == "letters":  # words whose letters pass the tests
        n = _count(cons, "words", 5)
        pool = [
            w
            for w in [*sorted(set(_WORDS), key=len), "ox", "sun", "tree", "in", "cat"]
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
    bound = _per(cons, of, scope) if scope else _one(cons, of, per=None)
    lo, hi = (bound or {}).get("min") or 1, (bound or {}).get("max") or 16
    sizes = [
        k for k in range(max(1, lo), hi + 1) if all(measure_ok(c["test"], c.get("arg"), k) for c in tests)
    ]
    if not sizes:
        return None
    if equal:
        sizes = sizes[:1]
    if unit == "answer":
        return _phrase(0, sizes[0]).capitalize() + "."
    n = _count(
        cons, {"sentence": "sentences", "line": "lines", "paragraph": "paragraphs", "item": "items"}[unit], 3
    )
    parts = []
    for i in range(n):
        k = sizes[i % len(sizes)]
        if of == "sentences":
            parts.append(" ".join(_phrase(i * 5 + j, 3).capitalize() + "." for j in range(k)))
        else:
            parts.append(_phrase(i, k).capitalize() + ("." if unit in ("sentence", "paragraph") else ""))
    joiner = {"sentence": " ", "line": "\n", "paragraph": "\n\n", "item": "\n"}[unit]
    return joiner.join(f"- {p}" if unit == "item" else p for p in parts)


def _same_first(cons: Sequence[Mapping[str, Any]], unit: str) -> str:
    n = _count(cons, {"paragraph": "paragraphs", "line": "lines", "sentence": "sentences"}[unit], 3)
    parts = [f"Today the {_phrase(i, 3)} waits." for i in range(n)]
    return ("\n\n" if unit == "paragraph" else "\n" if unit == "line" else " ").join(parts)


def _last_first(cons: Sequence[Mapping[str, Any]], unit: str) -> str:
    n = _count(cons, "sentences" if unit == "sentence" else "lines", 3)
    keys = [_WORDS[(i * 4) % len(_WORDS)] for i in range(n + 1)]
    parts = [f"{keys[i].capitalize()} sits near the {keys[i + 1]}." for i in range(n)]
    return (" " if unit == "sentence" else "\n").join(parts)


def _reversed_lines(cons: Sequence[Mapping[str, Any]]) -> str:
    n = _count(cons, "lines", 2)
    first = next((c for c in _by(cons, "words") if c.get("per") == "line"), None)
    k = _pick(first, 4)
    words = [_WORDS[j] for j in range(k)]
    return "\n".join(" ".join(words if i % 2 == 0 else words[::-1]) for i in range(n))


def _initials(cons: Sequence[Mapping[str, Any]]) -> str:
    """Words whose first letters differ from the word before (or follow the alphabet)."""
    n = _count(cons, "words", 6)
    alphabet = _rel(cons, "word", "alphabet_next") is not None
    out: list[str] = []
    pool = sorted(set(_WORDS))
    for i in range(n):
        if alphabet:
            ch = chr(ord("a") + (ord(out[-1][0]) - ord("a") + 1) % 26) if out else "a"
            out.append(next((w for w in pool if w[0] == ch and w not in out), ch + "ve"))
        else:
            out.append(next(w for w in _WORDS[i:] + _WORDS if not out or w[0] != out[-1][0]))
    return " ".join(out).capitalize() + "."


def _same(cons: Sequence[Mapping[str, Any]]) -> str | None:
    same = _by(cons, "same")
    unit = str(same[0]["unit"])
    count_rule = {"line": "lines", "paragraph": "paragraphs", "sentence": "sentences", "item": "items"}.get(
        unit
    )
    if count_rule is None:
        return None
    need = max(max(abs(int(c["index"])), abs(int(c["as"]))) for c in same)
    n = max(need, _count(cons, count_rule, need + 1))
    parts = [
        f"The {_phrase(i, 2)} rests here." if unit != "paragraph" else f"The {_phrase(i, 4)} rests."
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
    n = _count(cons, "numbers", _count(cons, "lines", 6))
    seq = [2, 3]
    first = next((c for c in _by(cons, "total") if c.get("agg") == "first"), None)
    if first is not None and first.get("min") is not None:
        seq[0] = int(first["min"])
    while len(seq) < n:
        seq.append(seq[-1] + seq[-2])
    last = next((c for c in _by(cons, "total") if c.get("agg") == "last"), None)
    while last is not None and last.get("min") is not None and seq[-1] < int(last["min"]):
        seq = [seq[0] + 1, seq[1] + 1]
        while len(seq) < n:
            seq.append(seq[-1] + seq[-2])
    delim = next(iter(_by(cons, "delimited")), None)
    if delim is not None:
        sep = str(delim["text"])
        joiner = sep if delim.get("exact") or sep == " " else sep + " "
    else:
        joiner = "\n" if _one(cons, "lines", per=None) or _per(cons, "numbers", "line") else ", "
    return joiner.join(str(v) for v in seq[:n])


def _pangram(cons: Sequence[Mapping[str, Any]]) -> str:
    letters = _one(cons, "distinct_letters", per=None) or {}
    if letters.get("max") is not None and letters["max"] < 26:  # a near miss: a letter short
        text = "The quick brown fox jumped over the lazy dog."
    else:
        text = _PANGRAMS[0]
    if _count(cons, "sentences", 1) > 1:
        text += " It was fast."
    words = _one(cons, "words", per=None)
    want = _pick(words, len(text.split())) if words else len(text.split())
    if want > len(text.split()):
        text = text.rstrip(".") + " " + " ".join(_WORDS[: want - len(text.split())]) + "."
    if _one(cons, "punctuation", per=None, max=0):
        text = text.rstrip(".").replace(",", "")
    return _cased(text, cons)


def _pieces(cons: Sequence[Mapping[str, Any]], c: Mapping[str, Any]) -> str | None:
    """A list on one line split by an exact separator: words (a style's case), times or bit strings."""
    unit = c.get("unit")
    n = _pick(c, _count(cons, {"word": "words", "number": "numbers"}.get(str(unit), "items"), 3))
    if unit == "time":
        rng = next((x for x in _by(cons, "each") if x.get("test") == "range"), None)
        lo = _minutes((rng or {}).get("arg", [None])[0]) if rng else None
        start = lo if lo is not None else 360
        items = [f"{(start + 15 * i) // 60:02d}:{(start + 15 * i) % 60:02d}" for i in range(n)]
    elif unit == "number" and _has_test(cons, "number", "binary"):
        return None
    elif unit == "word":
        items = [_WORDS[i] for i in range(n)]
    else:
        return None
    return _cased(str(c["text"]).join(items), cons)


def _minutes(t: Any) -> int | None:
    m = re.fullmatch(r"(\d{1,2}):(\d{2})", str(t or ""))
    return int(m.group(1)) * 60 + int(m.group(2)) if m else None


def _line_kinds(cons: Sequence[Mapping[str, Any]]) -> str | None:
    """Lines that are each a time, a price, a bit string or a link (or the whole answer one such)."""
    if _has_test(cons, "answer", "binary"):
        k = _count(cons, "chars", 8)
        if _has_test(cons, "answer", "no_adjacent_repeat"):
            return ("01" * k)[:k]
        return format(5, f"0{k}b")[-k:]
    price = _has_test(cons, "answer", "price")
    if price:
        return str(price["arg"]).replace("#", "4.50")
    n = _count(cons, "lines", _count(cons, "items", _count(cons, "bullets", 3)))
    for unit in ("line", "item"):
        if _has_test(cons, unit, "time24"):
            rng = next(
                (x for x in _by(cons, "each") if x.get("test") == "range" and x.get("unit") == "time"), None
            )
            lo, hi = (rng["arg"][0], rng["arg"][1]) if rng else (None, None)
            a = (_minutes(lo) if lo else None) or 6 * 60
            b = (_minutes(hi) if hi else None) or a + 10 * n
            step = max(1, (b - a) // max(1, n))
            times = [a + step * i for i in range(n)]
            lead = _has_test(cons, unit, "starts_with_kind")
            return "\n".join(f"{t // 60:02d}:{t % 60:02d}" + (" Walk outside" if lead else "") for t in times)
        price = _has_test(cons, unit, "price")
        if price:
            rng = next((x for x in _by(cons, "each") if x.get("test") == "range"), None)
            lo = float(rng["arg"][0]) if rng and rng["arg"][0] is not None else 1.0
            return "\n".join(str(price["arg"]).replace("#", f"{lo + 0.25 * (i + 1):.2f}") for i in range(n))
        if _has_test(cons, unit, "binary"):
            width = _per(cons, "chars", unit) or _per(cons, "chars", "line")
            k = _pick(width, 8)
            return "\n".join(format((i * 37 + 5) % (2**k), f"0{k}b") for i in range(n))
        kind = _has_test(cons, unit, "ends_with_kind") or _has_test(cons, unit, "starts_with_kind")
        if kind and kind.get("arg") == "emoji":
            k = _pick(_per(cons, "words", unit), 3)
            extra = max(0, _pick(_per(cons, "emojis", unit), 1) - 1)
            first = kind.get("test") == "starts_with_kind"
            return "\n".join(
                (f"{_EMOJI[i % len(_EMOJI)]} " if first else "")
                + _phrase(i, k).capitalize()
                + "".join(f" {_EMOJI[(i + j + 3) % len(_EMOJI)]} {_WORDS[j]}" for j in range(extra))
                + ("" if first else f" {_EMOJI[i % len(_EMOJI)]}")
                for i in range(n)
            )
        if _has_test(cons, unit, "is_link"):
            marker = "- " if unit == "item" or _one(cons, "bullets", per=None) else ""
            return "\n".join(
                f"{marker}[{_WORDS[i].capitalize()}](https://example.com/{_WORDS[i]})" for i in range(n)
            )
    return None


def build_layout(cons: Sequence[Mapping[str, Any]]) -> str | None:
    """A response for a set this module lays out (module docstring), or None."""
    cons = list(cons)
    for rule, make in (
        ("figure", lambda c: _figure(c)),
        ("outline", lambda c: _outline(c)),
        ("html_list", lambda c: _html_list(c, cons)),
        ("pairs", lambda c: _pairs(c)),
    ):
        c = _one(cons, rule)
        if c is not None:
            return make(c)
    if _one(cons, "task_list") or _one(cons, "checked", per=None) or _one(cons, "unchecked", per=None):
        return _task_list(cons)
    fence = next((c for c in _by(cons, "code_block") if c.get("lang")), None)
    if fence is not None:
        return _fence(fence, cons)
    if _by(cons, "same"):
        return _same(cons)
    stairs = _staircase(cons)
    if stairs is not None:
        return stairs
    if _rel(cons, "number", "sum_prev2") or _rel(cons, "line", "sum_prev2"):
        return _fibonacci(cons)
    measured = _measured(cons)
    if measured is not None:
        return _cased(measured, cons)
    for unit in ("paragraph", "line", "sentence"):
        if _rel(cons, unit, "same_first"):
            return _cased(_same_first(cons, unit), cons)
    for unit in ("sentence", "line"):
        if _rel(cons, unit, "last_first"):
            return _cased(_last_first(cons, unit), cons)
    if _rel(cons, "line", "reversed"):
        return _cased(_reversed_lines(cons), cons)
    if _has_test(cons, "paragraph", "bookended"):
        n = _count(cons, "paragraphs", 2)
        return "\n\n".join(f"Rain {_phrase(i, 3)} rain." for i in range(n))
    if _has_test(cons, "word", "consonant_cluster"):
        n = _count(cons, "words", 4)
        return (
            " ".join(
                w for w in ["strong", "bright", "storm", "crisp", "frost", "blend", "trick", "plant"][:n]
            ).capitalize()
            + "."
        )
    if _rel(cons, "word", "initials_differ") or _rel(cons, "word", "alphabet_next"):
        return _cased(_initials(cons), cons)
    if _one(cons, "distinct_letters", per=None):
        return _pangram(cons)
    delim = next((c for c in _by(cons, "delimited") if c.get("exact") or c.get("unit") == "time"), None)
    if delim is not None:
        return _pieces(cons, delim)
    return _line_kinds(cons)
