"""Responses to order for composed constraints: units that pass tests, keep relations, hit totals.

:func:`rlar.synthesis.builder.build` hands a constraint set that holds a composed rule (``each``, ``order``,
``total``, ``spell``, ``table``, ``yaml_keys``; :mod:`rlar.constraints.vocabulary`) to :func:`build_shaped`, and
:func:`rlar.synthesis.builder.violations` adds :func:`shaped_violations`. The response is a list of units of
one kind (words, lines, sentences, numbers, or the whole answer) joined the way the instruction implies
(spaces, new lines, or ``", "`` between numbers):

1. the unit and how many: the composed rules' ``unit``, the count rule of that unit (``words``, ``lines``,
   ``sentences``, ``numbers``, ``items``) one step inside its bounds, or what a rule fixes (the letters a
   ``spell`` spells, the list of ``word_counts``, the span of a ``step`` from its first to its last number);
2. units drawn to pass every ``each`` test: numbers searched upwards (primes, digit sums, divisibility, parity)
   or laid out by the ``step`` / ``total`` rules; words from a small vocabulary filtered by their tests and the
   letter rules, lines and sentences made of such words (to a width, a word count, a final mark), dates and
   hex colours generated; then ordered (increasing, decreasing, alphabetical, chronological), cased
   (alternating), or chained (a word ladder from a fixed chain);
3. tables and YAML mappings are written directly from their columns, keys and types.

Shaped violations (:mod:`rlar.synthesis.shapes_violations`) break one composed rule each. Nothing here is
trusted: callers check every response with :func:`rlar.constraints.checks.holds`, and a combination this cannot
satisfy gives a response that fails, which the caller reports.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rlar.constraints.checks import unit_test
from rlar.constraints.vocabulary import COMPOSED_RULES

__all__ = ["build_shaped", "is_shaped"]

_WORDS = (
    "apple amber arch ant art bake bear bird blue boat bread brook calm card cave cedar cloud coal cold cord "
    "crane dawn deer desk dove dune dusk eagle earth echo elm ember fawn fern field fig fire fjord flint frog "
    "gate glen gold grape grass gulf hail harp hawk hill honey hut iris iron isle ivy jade jar jay jewel kale "
    "kelp kite knot lake lamp lark leaf lily lime moon moss mud nest night north nut oak oat ocean olive opal "
    "owl palm path pear pine plum pond quail quartz quill rain reed river road rock rose sage salt sand sea "
    "seed shell sky snow soil star stone sun swan tide toad tree tulip umber urn vale vine violet wave wind "
    "wolf wood wren yak yard yarn yew zinc zone"
).split()
_PALINDROMES = ("level", "radar", "civic", "kayak", "refer", "rotor", "noon", "deed", "racecar", "madam")
_LONGER = (
    "ox",
    "ant",
    "bird",
    "stone",
    "forest",
    "blanket",
    "mountain",
    "sunflower",
    "waterfalls",
    "wanderlusts",
)
_LADDER = ("cold", "cord", "card", "ward", "warm", "worm", "word", "wore", "core", "care", "dare", "date")
_UNIT_COUNT = {
    "word": "words",
    "line": "lines",
    "sentence": "sentences",
    "number": "numbers",
    "item": "items",
}


def is_shaped(constraints: Sequence[Mapping[str, Any]]) -> bool:
    """A composed rule, or lines of a fixed width (which the general builder cannot size)."""
    return any(str(c.get("rule")) in COMPOSED_RULES or _fixed_width(c) is not None for c in constraints)


def _fixed_width(c: Mapping[str, Any]) -> int | None:
    if (
        c.get("rule") == "chars"
        and c.get("per") == "line"
        and c.get("min") is not None
        and c.get("min") == c.get("max")
    ):
        return int(c["min"])
    return None


def _by(constraints: Sequence[Mapping[str, Any]], rule: str) -> list[dict[str, Any]]:
    return [dict(c) for c in constraints if c.get("rule") == rule]


def _unit(constraints: Sequence[Mapping[str, Any]]) -> str:
    if any(_fixed_width(c) is not None for c in constraints):
        return "line"
    for rule in ("spell", "order", "each", "total", "delimited"):
        for c in _by(constraints, rule):
            if c.get("unit"):
                return str(c["unit"])
    return "number" if _by(constraints, "total") else "word"


def _pick(lo: int | None, hi: int | None, default: int) -> int:
    if lo is not None and hi is not None:
        return lo if lo == hi else min(hi, lo + 1)
    if lo is not None:
        return lo + 1
    if hi is not None:
        return max(1, min(hi, default) - (0 if hi <= 2 else 1))
    return default


def _count(constraints: Sequence[Mapping[str, Any]], unit: str, default: int = 4) -> int:
    if unit == "number" and any(
        c.get("rule") == "only" and c.get("what") in ("integer", "number") for c in constraints
    ):
        return 1
    for c in _by(constraints, "order"):
        if c.get("rel") == "word_counts" and isinstance(c.get("arg"), list):
            return len(c["arg"])
    for c in _by(constraints, "spell"):
        return len(str(c["text"]))
    name = _UNIT_COUNT.get(unit)
    for k in constraints:
        if k.get("rule") == name and not k.get("per"):
            return _pick(k.get("min"), k.get("max"), default)
    for k in _by(constraints, "delimited"):
        if k.get("min") is not None or k.get("max") is not None:
            return _pick(k.get("min"), k.get("max"), default)
    if unit == "line":
        for k in constraints:
            if k.get("rule") in ("items", "bullets", "numbered") and not k.get("per"):
                return _pick(k.get("min"), k.get("max"), default)
    return default


def _tests(constraints: Sequence[Mapping[str, Any]], unit: str) -> list[tuple[str, Any]]:
    return [(c["test"], c.get("arg")) for c in _by(constraints, "each") if c.get("unit") == unit]


def _rels(constraints: Sequence[Mapping[str, Any]], unit: str) -> dict[str, Any]:
    return {c["rel"]: c.get("arg") for c in _by(constraints, "order") if c.get("unit") == unit}


def _totals(constraints: Sequence[Mapping[str, Any]]) -> dict[str, tuple[int | None, int | None]]:
    return {c["agg"]: (c.get("min"), c.get("max")) for c in _by(constraints, "total")}


def _letter_ok(word: str, constraints: Sequence[Mapping[str, Any]]) -> bool:
    """The word keeps the letter rules that forbid letters (``letter`` at most 0) and per-word letter counts."""
    for c in constraints:
        if (
            c.get("rule") == "letter"
            and c.get("max") == 0
            and set(str(c["letter"]).lower()) & set(word.lower())
        ):
            return False
        if c.get("rule") in ("letters", "chars") and c.get("per") == "word":
            lo, hi = c.get("min"), c.get("max")
            if (lo is not None and len(word) < lo) or (hi is not None and len(word) > hi):
                return False
    return True


def _numbers(constraints: Sequence[Mapping[str, Any]], n: int) -> list[int]:
    tests = _tests(constraints, "number")
    rels = _rels(constraints, "number") | _rels(constraints, "line")
    totals = _totals(constraints)

    def ok(v: int) -> bool:
        return all(unit_test(t, a, str(v)) for t, a in tests)

    first = totals.get("first", (None, None))[0]
    last = totals.get("last", (None, None))[0]
    if "ratio" in rels:
        k = int(rels["ratio"])
        start = first if first is not None else 1
        return [start * k**i for i in range(max(1, n))]
    if "step" in rels:
        step = int(rels["step"])
        if first is None and last is not None:
            first = last - step * (n - 1)
        if first is not None and last is not None and step and (last - first) % step == 0:
            n = (last - first) // step + 1
        start = first if first is not None else (10 + step * -(n - 1) if step < 0 else 1)
        if step < 0 and first is None:
            start = abs(step) * n + 1
        return [start + step * i for i in range(max(1, n))]
    low = max([int(a[0]) for t, a in tests if t == "range" and a and a[0] is not None] or [1])
    if first is not None and ("increasing" in rels or "decreasing" not in rels):
        low = max(low, first)
    pool = [v for v in range(max(1, low), max(1, low) + 5000) if ok(v)][: max(n * 4, 40)]
    if "sum" in totals and totals["sum"][0] is not None:
        target = int(totals["sum"][0])
        chosen = _sum_to(pool, n, target)
        if chosen is not None:
            pool = chosen
    out = pool[:n]
    if first is not None and out:
        out[0] = first
    if last is not None and out:
        out[-1] = last
    if "decreasing" in rels:
        out = sorted(out, reverse=True)
    elif "increasing" in rels:
        out = sorted(out)
    return out


def _sum_to(pool: list[int], n: int, target: int) -> list[int] | None:
    """``n`` distinct values of ``pool`` (increasing) that sum to ``target``, found by a small search."""
    pool = sorted(set(pool))

    def search(start: int, k: int, left: int) -> list[int] | None:
        if k == 0:
            return [] if left == 0 else None
        for i in range(start, len(pool)):
            v = pool[i]
            if v * k > left:
                break
            rest = search(i + 1, k - 1, left - v)
            if rest is not None:
                return [v, *rest]
        return None

    return search(0, n, target) if n > 0 else None


def _words(constraints: Sequence[Mapping[str, Any]], n: int, unit: str = "word") -> list[str]:
    tests = _tests(constraints, unit)
    rels = _rels(constraints, unit)
    if "one_letter" in rels:
        return list(_LADDER[:n])
    spell = next((str(c["text"]) for c in _by(constraints, "spell") if c.get("unit") == unit), None)
    pool = list(_PALINDROMES) if any(t == "palindrome" for t, _ in tests) else list(_WORDS)
    shaped = [(t, a) for t, a in tests if t not in ("lowercase", "uppercase", "capitalized")]
    kept = [w for w in pool if all(unit_test(t, a, w) for t, a in shaped) and _letter_ok(w, constraints)]
    if not kept:  # a rare letter to start, end or contain: the vocabulary's words with it added
        letters = [
            str(a) for t, a in shaped if t in ("starts_with", "ends_with", "contains") and len(str(a)) == 1
        ]
        variants = [v for w in pool for ch in letters for v in (w + ch, ch + w, w[:1] + ch + w[1:])]
        kept = [
            w for w in variants if all(unit_test(t, a, w) for t, a in shaped) and _letter_ok(w, constraints)
        ]
    pool = list(dict.fromkeys(kept))
    if spell:
        out = []
        for ch in spell.lower():
            out.append(next((w for w in pool if w.startswith(ch) and w not in out), ch + "ee"))
        pool = out
    else:
        pool = pool[:n] if len(pool) >= n else (pool * n)[:n]
    if "alphabetical" in rels:
        pool = sorted(pool)
    if "longer" in rels:  # one word of each length, shortest first
        pool = [
            w for w in _LONGER if _letter_ok(w, constraints) and all(unit_test(t, a, w) for t, a in shaped)
        ][:n]
    if "distinct_initials" in rels:
        seen: list[str] = []
        for w in kept or list(_WORDS):
            if w[0] not in {x[0] for x in seen}:
                seen.append(w)
        pool = seen[:n]
    if "chain" in rels:
        pool = _chain(kept or list(_WORDS), n)
    cases = [t for t, _ in tests if t in ("lowercase", "uppercase", "capitalized")]
    if "alternating_case" in rels:
        start = str(rels["alternating_case"] or "lower")
        pool = [w.lower() if (i % 2 == 0) == (start == "lower") else w.upper() for i, w in enumerate(pool)]
    elif "uppercase" in cases:
        pool = [w.upper() for w in pool]
    elif "capitalized" in cases:
        pool = [w.capitalize() for w in pool]
    return pool


def _chain(pool: list[str], n: int) -> list[str]:
    """``n`` words, each starting with the last letter of the one before (the first chain found)."""
    for start in pool:
        out = [start]
        while len(out) < n:
            nxt = next((w for w in pool if w[0] == out[-1][-1] and w not in out), None)
            if nxt is None:
                break
            out.append(nxt)
        if len(out) == n:
            return out
    return pool[:n]


def _line(
    words: list[str], tests: list[tuple[str, Any]], n_words: int | None, index: int, first: str | None
) -> str:
    k = n_words or 3
    picked = words[:k]
    if first is not None:
        picked = [first, *[w for w in words if w != first][: k - 1]]
    text = " ".join(picked)
    for t, a in tests:
        if t == "width":
            width = int(a)
            text = (text + " " + " ".join(_WORDS))[:width].rstrip()
            text = text + "x" * (width - len(text))
        elif t == "ends_punct" and not text.endswith((".", "!", "?")):
            text += "."
        elif t == "ends_with":
            text += str(a)
    return text[:1].upper() + text[1:] if not any(t in ("lowercase",) for t, _ in tests) else text


def _lines(constraints: Sequence[Mapping[str, Any]], n: int) -> list[str]:
    tests = _tests(constraints, "line")
    tests += [("width", w) for w in (_fixed_width(c) for c in constraints) if w is not None]
    rels = _rels(constraints, "line")
    kinds = {t for t, _ in tests}
    if "date" in kinds or "chronological" in rels:
        return [f"{2001 + 3 * i:04d}-{1 + i % 12:02d}-{10 + i:02d}" for i in range(n)]
    if "hex_colour" in kinds:
        return [f"#{(0x1A2B3C + 0x111111 * i) % 0xFFFFFF:06X}" for i in range(n)]
    if kinds & {"prime", "even", "odd", "divisible", "digit_sum"} or rels.keys() & {
        "step",
        "increasing",
        "decreasing",
    }:
        return [
            str(v)
            for v in _numbers([*constraints, *[{**c, "unit": "number"} for c in _by(constraints, "each")]], n)
        ]
    if "one_letter" in rels:
        return list(_LADDER[:n])
    counts = rels.get("word_counts")
    spell = next((str(c["text"]) for c in _by(constraints, "spell") if c.get("unit") == "line"), None)
    per_words = next(
        (c for c in constraints if c.get("rule") == "words" and c.get("per") in ("line", "item")), None
    )
    per_chars = next(
        (c for c in constraints if c.get("rule") == "chars" and c.get("per") in ("line", "item")), None
    )
    pool = [w for w in _WORDS if _letter_ok(w, constraints)]
    out = []
    for i in range(n):
        k = (
            int(counts[min(i, len(counts) - 1)])  # more lines than counts: a violation asked for them
            if counts
            else (_pick(per_words.get("min"), per_words.get("max"), 3) if per_words else 3)
        )
        if per_chars and per_chars.get("max") is not None:
            k = min(k, max(1, int(per_chars["max"]) // 7))
        first = None
        if spell and i < len(spell):
            first = next((w for w in pool if w.startswith(spell[i].lower())), spell[i].lower() + "ee")
        words = pool[(i * 5) % len(pool) :] + pool
        out.append(_line(words, tests, k, i, first))
    return out


def _sentences(constraints: Sequence[Mapping[str, Any]], n: int) -> list[str]:
    rels = _rels(constraints, "sentence")
    grow = int(rels["word_growth"]) if "word_growth" in rels and rels["word_growth"] is not None else None
    pool = [w for w in _WORDS if _letter_ok(w, constraints)]
    # a final mark every sentence must end with ("every sentence must be a question"), else a period
    mark = next(
        (
            str(a)
            for t, a in _tests(constraints, "sentence")
            if t == "ends_with" and str(a) in ("?", "!", ".")
        ),
        ".",
    )
    out = []
    for i in range(n):
        k = 2 + (grow * i if grow is not None else 2)
        words = (pool[(i * 7) % len(pool) :] + pool)[:k]
        out.append(" ".join(words).capitalize() + mark)
    return out


def _table(c: Mapping[str, Any]) -> str:
    cols = list(c.get("columns") or ["Name", "Value"])
    types = {str(k).lower(): v for k, v in (c.get("types") or {}).items()}
    rows = _pick(c.get("min"), c.get("max"), 3)

    def cell(col: str, i: int) -> str:
        kind = types.get(col.lower())
        if kind == "integer":
            return str(10 + 7 * i)
        if kind == "number":
            return f"{1.5 + i:.1f}"
        return _WORDS[(i * 3 + len(col)) % len(_WORDS)].capitalize()

    body = [[cell(col, i) for col in cols] for i in range(rows)]
    if c.get("format") == "csv":
        return "\n".join(",".join(r) for r in [cols, *body])
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in body])


_YAML_VALUES = {
    "string": "sample text",
    "integer": "7",
    "number": "2.5",
    "boolean": "true",
    "list": None,
    "list_of_strings": None,
    "list_of_numbers": "[1, 2]",
    "null": "null",
}
_YAML_WRONG = {
    "string": "[1, 2]",
    "integer": "seven",
    "number": "many",
    "boolean": "maybe",
    "list": "one",
    "list_of_strings": "one",
    "list_of_numbers": "one",
    "null": "x",
}


def _yaml(
    c: Mapping[str, Any], wrong: str | None = None, drop: str | None = None, extra: bool = False
) -> str:
    types = c.get("types") or {}
    lines = []
    for k in c["keys"]:
        if k == drop:
            continue
        kind = str(types.get(k, "string"))
        if k == wrong:
            lines.append(f"{k}: {_YAML_WRONG.get(kind, '[1, 2]')}")
        elif _YAML_VALUES.get(kind, "sample") is None:
            lines += [f"{k}:", "  - first", "  - second"]
        else:
            lines.append(f"{k}: {_YAML_VALUES.get(kind, 'sample')}")
    if extra:
        lines.append("extra_key: 1")
    return "\n".join(lines)


def _units(constraints: Sequence[Mapping[str, Any]], unit: str, n: int) -> list[str]:
    if unit == "number":
        return [str(v) for v in _numbers(constraints, n)]
    if unit == "item" and _by(constraints, "delimited"):  # short pieces on one line
        return [f"{_WORDS[3 * i].capitalize()} {_WORDS[3 * i + 1]}" for i in range(n)]
    if unit == "line" or unit == "item":
        return _lines([{**c, "unit": "line"} if c.get("unit") == "item" else c for c in constraints], n)
    if unit == "sentence":
        return _sentences(constraints, n)
    if unit == "answer":
        letters = next((c for c in constraints if c.get("rule") == "letters" and not c.get("per")), None)
        k = _pick(letters.get("min"), letters.get("max"), 5) if letters else 5
        half = "".join(chr(ord("a") + (i * 7) % 26) for i in range((k + 1) // 2))
        return [half + half[: k // 2][::-1]]
    return _words(constraints, n, unit)


_JOINS = {",": ", ", ";": "; ", "|": " | ", "/": " / ", " ": " "}


def _joiner(constraints: Sequence[Mapping[str, Any]], unit: str) -> str:
    for c in _by(constraints, "delimited"):
        sep = str(c["text"])
        return _JOINS.get(sep, f" {sep} " if sep.strip() else sep)
    if unit in ("line", "item"):
        return "\n"
    if unit == "sentence":
        return " "
    one_per_line = any(c.get("rule") == "lines" and not c.get("per") for c in constraints) or any(
        c.get("rule") == "numbers" and c.get("per") == "line" for c in constraints
    )
    if unit == "number":
        return "\n" if one_per_line else ", "
    many_lines = any(
        c.get("rule") == "lines" and not c.get("per") and (c.get("min") or 0) > 1 for c in constraints
    )
    return "\n" if many_lines else " "


def _render(constraints: Sequence[Mapping[str, Any]], units: list[str], unit: str) -> str:
    text = _joiner(constraints, unit).join(units)
    rules = {str(c.get("rule")) for c in constraints}
    if "uppercase" in rules:
        text = text.upper()
    elif "lowercase" in rules:
        text = text.lower()
    return text


def build_shaped(constraints: Sequence[Mapping[str, Any]], query: str = "") -> str:
    """A response meant to satisfy ``constraints`` (module docstring); check it with ``holds``."""
    table = next(iter(_by(constraints, "table")), None)
    if table is not None:
        return _table(table)
    yaml = next(iter(_by(constraints, "yaml_keys")), None)
    if yaml is not None:
        return _yaml(yaml)
    unit = _unit(constraints)
    return _render(constraints, _units(constraints, unit, _count(constraints, unit)), unit)
