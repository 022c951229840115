"""Shaped violations: responses that break one composed constraint each — one unit that fails its
test, the units reversed, a total off by one, a wrong first letter, a missing column or key, a value of the wrong
type, one unit more or fewer, another separator — built from :mod:`rlar.synthesis.shapes`' units. Nothing here
is trusted: callers check every response with :func:`rlar.constraints.checks.holds`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rlar.constraints.checks import unit_test
from rlar.synthesis.shapes import (
    _PALINDROMES,
    _UNIT_COUNT,
    _WORDS,
    _by,
    _count,
    _pick,
    _render,
    _table,
    _unit,
    _units,
    _yaml,
)

__all__ = ["shaped_violations"]


def _failing_unit(constraints: Sequence[Mapping[str, Any]], c: Mapping[str, Any], good: str) -> str | None:
    """A unit like ``good`` that fails ``c``'s test."""
    test, arg = c["test"], c.get("arg")
    candidates: list[str]
    if c["unit"] == "number" or test in ("prime", "even", "odd", "divisible", "digit_sum"):
        candidates = [str(v) for v in range(1, 400)]
    elif test == "integer":
        candidates = ["2.5", "7.25"]
    elif test == "date":
        candidates = ["14/03/2001", "2001/03/14"]
    elif test == "hex_colour":
        candidates = ["#12345", "#GG0000"]
    elif test == "width":
        candidates = [good + "x", good[:-1]]
    elif test in ("lowercase", "uppercase", "capitalized"):
        candidates = [good.upper(), good.lower(), good.capitalize()]
    elif test == "ends_punct":
        candidates = [good.rstrip(".!?,;:") or "word"]
    elif test == "ends_with" and str(arg) in ("?", "!", "."):  # another final mark: still a unit of its own
        candidates = [(good.rstrip(".!?") or "Word") + ("!" if str(arg) == "." else ".")]
    else:
        candidates = [w for w in (*_WORDS, *_PALINDROMES, "stone word") if w != good]
    return next((u for u in candidates if not unit_test(test, arg, u)), None)


def shaped_violations(constraints: Sequence[Mapping[str, Any]], query: str = "") -> list[tuple[str, str]]:
    """(why, response) pairs, each meant to break one composed constraint (module docstring)."""
    out: list[tuple[str, str]] = []
    for c in _by(constraints, "table"):
        cols = list(c.get("columns") or [])
        if len(cols) > 1:
            out.append(("table: a column missing", _table({**c, "columns": cols[:-1]})))
        rows = _pick(c.get("min"), c.get("max"), 3)
        out.append(("table: one row more", _table({**c, "min": rows + 1, "max": rows + 1})))
        out.append(("table: not a table", "Here is the data you asked for."))
    for c in _by(constraints, "yaml_keys"):
        keys = list(c["keys"])
        out.append(("yaml_keys: a key missing", _yaml(c, drop=keys[-1])))
        typed = [k for k in keys if k in (c.get("types") or {})]
        if typed:
            out.append(("yaml_keys: a value of the wrong type", _yaml(c, wrong=typed[0])))
        if c.get("exact"):
            out.append(("yaml_keys: an extra key", _yaml(c, extra=True)))
    if _by(constraints, "table") or _by(constraints, "yaml_keys"):
        return out
    unit = _unit(constraints)
    n = _count(constraints, unit)
    units = _units(constraints, unit, n)
    if not units:
        return out
    for c in map(dict, constraints):
        rule = c.get("rule")
        if rule == "each" and c.get("unit") == unit:
            bad = _failing_unit(constraints, c, units[len(units) // 2])
            if bad is not None:
                mid = len(units) // 2
                out.append(
                    (
                        f"each: one {unit} fails {c['test']}",
                        _render(constraints, [*units[:mid], bad, *units[mid + 1 :]], unit),
                    )
                )
        elif rule == "order":
            if c.get("rel") == "word_counts" and len(units) >= 2:
                out.append(
                    (
                        "order: one line a word short",
                        _render(constraints, [*units[:-1], " ".join(units[-1].split()[:-1]) or "x"], unit),
                    )
                )
            elif c.get("rel") == "alternating_case":
                out.append(
                    (
                        "order: the case does not alternate",
                        _render(constraints, [u.lower() for u in units], unit),
                    )
                )
            elif c.get("rel") == "one_letter":
                out.append(
                    (
                        "order: a word two letters off",
                        _render(constraints, [*units[:-1], "warm" if units[-1] != "warm" else "cold"], unit),
                    )
                )
            elif c.get("rel") == "chain" and len(units) >= 2:
                off = next(w for w in _WORDS if w[0] != units[-2][-1] and w not in units)
                out.append(("order: the chain breaks", _render(constraints, [*units[:-1], off], unit)))
            elif c.get("rel") == "distinct_initials" and len(units) >= 2:
                twin = next(
                    (w for w in _WORDS if w[0] == units[0][0].lower() and w != units[0].lower()), None
                )
                if twin is not None:
                    out.append(
                        ("order: two words with one initial", _render(constraints, [*units[:-1], twin], unit))
                    )
            elif c.get("rel") == "distinct" and len(units) >= 2:
                out.append(("order: a unit repeated", _render(constraints, [*units[:-1], units[0]], unit)))
            elif c.get("rel") == "word_growth" and len(units) >= 2:
                out.append(
                    (
                        "order: the last sentence does not grow",
                        _render(constraints, [*units[:-1], units[-2]], unit),
                    )
                )
            elif len(units) >= 2:
                out.append(("order: reversed", _render(constraints, units[::-1], unit)))
                swapped = [units[1], units[0], *units[2:]]
                out.append(("order: first two swapped", _render(constraints, swapped, unit)))
        elif rule == "total":
            nums = [int(u) for u in units if u.lstrip("-").isdigit()]
            if nums:
                changed = (
                    [*units[:-1], str(nums[-1] + 1)]
                    if c["agg"] != "first"
                    else [str(nums[0] + 1), *units[1:]]
                )
                out.append((f"total: {c['agg']} off by one", _render(constraints, changed, unit)))
        elif rule == "spell":
            first = units[0]
            out.append(
                ("spell: a wrong first letter", _render(constraints, ["x" + first[1:], *units[1:]], unit))
            )
        elif rule == _UNIT_COUNT.get(unit) and not c.get("per"):
            more = _units(constraints, unit, n + 2)
            if len(more) == n + 2 and not _by(constraints, "spell"):
                out.append((f"{rule}: {n + 2} (max {c.get('max')})", _render(constraints, more, unit)))
            if n >= 2:
                out.append((f"{rule}: {n - 1} (min {c.get('min')})", _render(constraints, units[:-1], unit)))
    for c in _by(constraints, "delimited"):
        if len(units) >= 2:
            other = " ; " if str(c["text"]) != ";" else " , "
            out.append(
                (
                    "delimited: another separator",
                    other.strip(" ").join(units) if c["text"] == " " else other.join(units),
                )
            )
            out.append(
                (
                    "delimited: one piece of two",
                    _render(constraints, [f"{units[0]} {units[1]}", *units[2:]], unit),
                )
            )
    return [(why, text) for why, text in out if text.strip()]
