"""``rlar bench math``: the ``math_verify`` tool's accuracy next to the math-verify library alone, same pairs.

Pairs are JSONL records ``{"id", "source", "reference", "response", "label"}`` (``label``: whether the
response's final answer is equivalent to the reference), optionally ``"class"`` (the kind of equivalence or near
miss the pair tests; reported as ``by_class``). The tool is the built-in ``math_verify`` spec run in
this process; the library alone is ``math_verify.verify(parse(reference), parse(response))`` with its default
extraction, which is what wrapping the library directly gives. A prediction is "equivalent" when the score is 1
(an abstain counts as "not equivalent"). Reported: accuracy of each, the pairs each gets right that the other
misses, accuracy per source, and the ids of each side's misses, false positives (a wrong answer given 1), the
tool's right answers scored 0 and its abstains.

The shipped sets: ``data/math_pairs.jsonl`` (333 pairs written from the public formats of GSM8K, MATH, AIME, SVAMP
and multiple-choice sets; 166 of them by class: intervals and inequalities, solution sets, named components,
``\\pm``, repeating decimals, polynomial forms, scalar-factor matrices, GSM8K sentences, multi-answer refusal),
``data/math_pairs_heldout.jsonl`` (60 more), ``data/math_pairs_heldout2.jsonl`` (80 by the same classes)
and ``data/math_pairs_heldout3.jsonl`` (36 more by class), kept out of the tool's tuning.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from rlar.tools import ToolInput, builtin_specs, make_tool

# math_verify is imported where used: heavy and optional (rlar --help imports this module).


def load_pairs(path: str | Path) -> list[dict[str, Any]]:
    """Read labelled pairs; ``ValueError`` naming the line for a malformed one."""
    pairs = []
    for lineno, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{path}, line {lineno}: invalid JSON: {exc}") from None
        if not isinstance(rec, dict) or not {"reference", "response", "label"} <= set(rec):
            raise ValueError(f"{path}, line {lineno}: needs reference, response and label")
        if not isinstance(rec["label"], bool):
            raise ValueError(f"{path}, line {lineno}: label must be true or false")
        rec.setdefault("id", f"line{lineno}")
        rec.setdefault("source", "")
        pairs.append(rec)
    if not pairs:
        raise ValueError(f"{path}: no pairs")
    return pairs


def library_alone(reference: str, response: str) -> bool:
    """The math-verify library used directly: default extraction on both sides, ``verify(gold, answer)``."""
    from math_verify import parse, verify

    return bool(verify(parse(reference), parse(response)))


def tool_results(pairs: list[dict[str, Any]]) -> list[tuple[bool, bool]]:
    """The built-in ``math_verify`` tool on each pair: (scored 1.0, abstained or failed)."""

    tool = make_tool(next(s for s in builtin_specs() if s.name == "math_verify").sealed())

    async def score_all() -> list[tuple[bool, bool]]:
        out = []
        for p in pairs:
            res = await tool.score(ToolInput(query="", response=str(p["response"]), reference=p["reference"]))
            out.append((res.ok and res.score == 1.0, not res.ok))
        return out

    return asyncio.run(score_all())


def run(path: str | Path) -> dict[str, Any]:
    pairs = load_pairs(path)
    t0 = time.perf_counter()
    results = tool_results(pairs)
    tool = [equal for equal, _ in results]
    t_tool = time.perf_counter() - t0
    t0 = time.perf_counter()
    lib = [library_alone(str(p["reference"]), str(p["response"])) for p in pairs]
    t_lib = time.perf_counter() - t0
    labels = [bool(p["label"]) for p in pairs]
    tool_ok = [t == y for t, y in zip(tool, labels, strict=True)]
    lib_ok = [v == y for v, y in zip(lib, labels, strict=True)]
    by_source: dict[str, dict[str, Any]] = {}
    for p, t, v in zip(pairs, tool_ok, lib_ok, strict=True):
        row = by_source.setdefault(str(p["source"]), {"pairs": 0, "tool": 0, "library": 0})
        row["pairs"] += 1
        row["tool"] += int(t)
        row["library"] += int(v)
    by_class: dict[str, dict[str, Any]] = {}
    for p, t, v in zip(pairs, tool_ok, lib_ok, strict=True):
        if "class" in p:
            row = by_class.setdefault(str(p["class"]), {"pairs": 0, "tool": 0, "library": 0})
            row["pairs"] += 1
            row["tool"] += int(t)
            row["library"] += int(v)
    n = len(pairs)
    return {
        "data": str(path),
        "pairs": n,
        "tool_accuracy": round(sum(tool_ok) / n, 4),
        "library_accuracy": round(sum(lib_ok) / n, 4),
        "tool_correct": sum(tool_ok),
        "library_correct": sum(lib_ok),
        "tool_right_library_wrong": sum(t and not v for t, v in zip(tool_ok, lib_ok, strict=True)),
        "library_right_tool_wrong": sum(v and not t for t, v in zip(tool_ok, lib_ok, strict=True)),
        "by_source": by_source,
        "by_class": by_class,
        # A false positive is a wrong answer given full marks: the error a reward must never make.
        "tool_false_positives": [p["id"] for p, t, y in zip(pairs, tool, labels, strict=True) if t and not y],
        "library_false_positives": [
            p["id"] for p, v, y in zip(pairs, lib, labels, strict=True) if v and not y
        ],
        # Right answers not given 1: scored 0, or abstained (an abstain trains nothing; a 0 trains against it).
        "tool_right_scored_0": [
            p["id"]
            for p, t, (_, a), y in zip(pairs, tool, results, labels, strict=True)
            if y and not t and not a
        ],
        "tool_abstains": [p["id"] for p, (_, a) in zip(pairs, results, strict=True) if a],
        "tool_misses": [p["id"] for p, ok in zip(pairs, tool_ok, strict=True) if not ok],
        "library_misses": [p["id"] for p, ok in zip(pairs, lib_ok, strict=True) if not ok],
        "tool_s": round(t_tool, 3),
        "library_s": round(t_lib, 3),
    }
