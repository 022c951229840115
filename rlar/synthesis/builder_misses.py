"""Near misses of layouts, marks and composed rules: ``(why, response)`` pairs, each breaking one rule of a set (the
rules of a constraint family by its own ``near_misses``; here another fence tag, a repeated unit changed, a relation
broken at the last unit, a unit of the wrong kind, a value out of its range, a separator with a space added, a count
of marks off by one in one unit). Nothing here is trusted: callers check every response with
:func:`rlar.constraints.checks.holds`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rlar.constraints.checks import holds
from rlar.constraints.checks.marks import emojis, links
from rlar.constraints.families import family_of
from rlar.constraints.responses import rules_of
from rlar.synthesis.builder_layouts import _minutes

__all__ = ["layout_violations"]


def layout_violations(
    cons: Sequence[Mapping[str, Any]], good: str, rebuild: Callable[[Sequence[Mapping[str, Any]]], str]
) -> list[tuple[str, str]]:
    """(why, response) pairs, each breaking one rule of ``cons``: ``rebuild`` builds a changed set."""
    out: list[tuple[str, str]] = []
    rows = good.split("\n")
    for c in cons:
        rule = c.get("rule")
        family = family_of(str(rule))
        if family is not None:  # a rule of a constraint family
            out += family.near_misses(c, good, cons)
        elif rule == "code_block" and c.get("lang"):
            out.append(
                (
                    "code_block: another tag",
                    good.replace(f"```{c['lang']}", f"```{str(c['lang']).upper()}x", 1),
                )
            )
            out.append(("code_block: text after it", good + "\nDone."))
        elif rule == "delimited" and c.get("exact"):
            sep = str(c["text"])
            out.append(("delimited: a space added at a separator", good.replace(sep, sep.rstrip() + "  ", 1)))
            out.append(("delimited: a mark after the last piece", good + "."))
        elif rule == "same":
            out.append(("same: the copy changed", _break_same(good, c)))
        elif rule == "total" and re.search(r"\d", good):
            nums = list(re.finditer(r"\d+", good))
            m = nums[0] if c.get("agg") == "first" else nums[-1]
            off = int(c["min"]) - 1 if c.get("min") is not None else int(c.get("max") or 0) + 1
            out.append((f"total: {c.get('agg')} off", good[: m.start()] + str(max(0, off)) + good[m.end() :]))
        elif rule == "delimited" and not c.get("exact") and rules_of(cons, "order"):
            sep = str(c["text"])
            out.append(("delimited: another separator", good.replace(sep, ";" if sep != ";" else "|")))
        elif rule == "numbers" and c.get("per") == "line" and len(rows) >= 2:
            out.append(("numbers: two on one line", rows[0] + " " + "\n".join(rows[1:])))
        elif rule == "indent" and c.get("index") is not None:
            out.append(("indent: every line one space further in", "\n".join(" " + r for r in rows)))
        elif rule == "lines" and c.get("max") == 1 and "\n" not in good.strip():
            cut = good.find(" ", len(good) // 2)
            if cut > 0:
                out.append(("lines: the answer on two lines", good[:cut] + "\n" + good[cut + 1 :]))
        elif rule == "each" and c.get("unit") == "url":
            out.append(
                (
                    "each: a URL otherwise",
                    good.replace("](https://", "](http://", 1).replace(
                        "](" + str(c.get("arg")), "](ftp://", 1
                    ),
                )
            )
        elif rule == "each" and c.get("unit") == "link_text" and c.get("test") == "equals":
            out.append(
                (
                    "each: a link text otherwise",
                    good.replace(f"[{c['arg']}]", f"[{str(c['arg']).title()} link]", 1),
                )
            )
        elif rule == "each" and c.get("test") == "range" and c.get("unit") in ("time", "number", "price"):
            out.append(("each: one value out of range", _out_of_range(good, c)))
        elif rule == "each" and c.get("unit") == "item" and c.get("test") == "starts_upper":
            out.append(
                (
                    "each: an item in lowercase",
                    re.sub(r"<li>(\w)", lambda m: "<li>" + m.group(1).lower(), good, count=1)
                    if "<li>" in good
                    else re.sub(
                        r"^(- )?(\w)", lambda m: (m.group(1) or "") + m.group(2).lower(), good, count=1
                    ),
                )
            )
        elif rule == "ends_with" and c.get("per") == "item" and "</li>" in good:
            out.append(
                (
                    "ends_with: a mark outside an item",
                    good.replace(str(c["text"]) + "</li>", "</li>" + str(c["text"]), 1),
                )
            )
        elif rule == "distinct_words" and c.get("min"):
            ws = good.split()
            out.append(("distinct_words: a word repeated", " ".join([ws[0]] * len(ws))))
        elif (rule == "order" and c.get("rel") in _LAYOUT_RELS) or (rule == "order" and c.get("of")):
            out.append(("order: the relation broken", _break_order(good, c)))
        elif rule == "each" and (c.get("of") or c.get("test") in _LAYOUT_TESTS or c.get("unit") == "word"):
            bad = _break_each(good, c)
            if bad is not None:
                out.append((f"each: one {c['unit']} fails {c['test']}", bad))
    return [(w, t) for w, t in out if t.strip() and t != good]


_LAYOUT_RELS = ("same_first", "last_first", "reversed", "sum_prev2", "initials_differ", "alphabet_next")
_LAYOUT_TESTS = (
    "time24",
    "binary",
    "price",
    "is_link",
    "ends_with_kind",
    "starts_with_kind",
    "equals",
    "no_adjacent_repeat",
)


def _break_same(good: str, c: Mapping[str, Any]) -> str:
    unit = c.get("unit")
    sep = {"paragraph": "\n\n", "sentence": " "}.get(str(unit), "\n")
    parts = good.split(sep)
    k = int(c["index"])
    i = k - 1 if k > 0 else len(parts) + k
    if 0 <= i < len(parts):
        parts[i] = parts[i].rstrip().rstrip(".") + " too."
    return sep.join(parts)


def _out_of_range(good: str, c: Mapping[str, Any]) -> str:
    lo, hi = [*list(c.get("arg") or []), None, None][:2]
    if c.get("unit") == "time":
        found = list(re.finditer(r"\d{1,2}:\d{2}", good))
        if not found:
            return good
        bound = (_minutes(hi) if hi is not None else None) or (_minutes(lo) or 60) - 2
        t = (bound + 1) if hi is not None else max(0, bound)
        m = found[-1]
        return good[: m.start()] + f"{t // 60 % 24:02d}:{t % 60:02d}" + good[m.end() :]
    found = list(re.finditer(r"\d+(?:\.\d+)?", good))
    if not found:
        return good
    m = found[0]
    value = (float(hi) + 1) if hi is not None else (float(lo) - 1)
    text = str(int(value)) if value == int(value) and "." not in m.group(0) else f"{value:.2f}"
    return good[: m.start()] + text + good[m.end() :]


def _break_order(good: str, c: Mapping[str, Any]) -> str:
    unit = c.get("unit")
    if unit == "word":
        ws = good.rstrip(".").split()
        if len(ws) >= 2:
            ws[-1] = ws[-2][0].lower() + "oat"  # the initial of the word before it
            return " ".join(ws) + "."
    joiner = {"paragraph": "\n\n", "sentence": " "}.get(str(unit), "\n")
    if unit == "number":
        nums = re.findall(r"\d+", good)
        return good[: good.rfind(nums[-1])] + str(int(nums[-1]) + 1) if nums else good + " 1"
    parts = [
        p
        for p in re.split(
            r"\n\s*\n" if unit == "paragraph" else r"(?<=[.!?])\s+" if unit == "sentence" else r"\n", good
        )
        if p.strip()
    ]
    if len(parts) < 2:
        return good + joiner + good
    if c.get("rel") == "same_first":
        parts[-1] = "Zebra " + parts[-1]
    elif c.get("rel") == "reversed":
        ws = parts[-1].split()
        parts[-1] = " ".join(ws[1:] + ws[:1])
    elif c.get("of") == "indent":
        parts[-1] = parts[-1].strip()
    else:
        parts[-1] = "Zebra " + parts[-1][:1].lower() + parts[-1][1:]
    return joiner.join(parts)


def _break_each(good: str, c: Mapping[str, Any]) -> str | None:
    test = c.get("test")
    if c.get("unit") == "word":
        ws = good.rstrip(".").split()
        for cand in ("rain", "fog", "sea", "apple", "tree", "moon", "ox", "eel"):
            if not holds({**c, "unit": "answer"}, cand):
                return " ".join([*ws[:-1], cand]) + ("." if good.endswith(".") else "")
        return None
    if c.get("of") and c.get("unit") == "answer":
        for extra in range(1, 4):
            longer = good.rstrip(".") + " too" * extra + "."
            if not holds(c, longer):
                return longer
        return None
    if c.get("of") == "sentences" and c.get("unit") == "paragraph":
        parts = good.split("\n\n")
        for extra in range(1, 4):
            parts0 = parts[0] + " It rained." * extra
            if not holds({**c, "unit": "answer"}, parts0):
                return "\n\n".join([parts0, *parts[1:]])
        return None
    if c.get("of") and c.get("unit") in ("sentence", "line"):
        parts = re.split(r"(?<=[.!?])\s+" if c["unit"] == "sentence" else r"\n", good)
        for extra in range(1, 4):
            longer = parts[0].rstrip(".!?") + " too" * extra + ("." if c["unit"] == "sentence" else "")
            if not holds({**c, "unit": "answer"}, longer):
                return (" " if c["unit"] == "sentence" else "\n").join([longer, *parts[1:]])
        return None
    if test == "ends_with_kind":
        found = emojis(good)
        return good.replace(found[-1], "", 1).rstrip() + "." if found else None
    if test == "is_link" and links(good):
        return good.replace("](", "] (", 1)
    if test in ("time24", "starts_with_kind"):
        return (
            re.sub(r"\b0(\d):", r"\1:", good, count=1)
            if re.search(r"\b0\d:", good)
            else good.replace(":", ".", 1)
        )
    if test == "price":
        return re.sub(r"\.(\d)\d", r".\1", good, count=1)
    if test == "binary":
        return good.replace("1", "2", 1)
    return None
