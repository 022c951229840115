"""``rlar bench answers``: the reference-comparing tools on answers written as chat models write them.

Records are JSONL ``{"id", "tool", "reference", "response", "label"}`` (optionally ``"note"``): ``tool`` names a
built-in tool, ``reference`` is in the shape datasets ship (a string, an alias list, a ``{"value", "aliases"}``
object, a span object, a tag sequence, a quantity with a unit), ``label`` says whether a correct reward gives the
response full marks (true) or not (false). A tool's verdict is "full marks" when it scores ``ok`` at the top of
its declared range (within 1e-9); an abstain or an error is "not full marks" — an abstain on a true record is a
miss, never a false positive.

Reported: accuracy, false positives (a wrong answer given full marks: the dangerous kind), false negatives,
abstains, per tool, and each miss with the tool's score and status. The shipped set is
``data/answers_heldout.jsonl`` (written blind, see data/HELDOUT_BLIND.md), kept out of the tools' tuning.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from rlar.tools import ToolInput, builtin_specs, make_tool

#: Tolerance of "the top of the declared range".
FULL_MARKS_EPS = 1e-9


def load_records(path: str | Path) -> list[dict[str, Any]]:
    """Read labelled records; ``ValueError`` naming the line for a malformed one."""
    records = []
    for lineno, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{path}, line {lineno}: invalid JSON: {exc}") from None
        if not isinstance(rec, dict) or not {"tool", "reference", "response", "label"} <= set(rec):
            raise ValueError(f"{path}, line {lineno}: needs tool, reference, response and label")
        if not isinstance(rec["label"], bool):
            raise ValueError(f"{path}, line {lineno}: label must be true or false")
        rec.setdefault("id", f"line{lineno}")
        records.append(rec)
    if not records:
        raise ValueError(f"{path}: no records")
    return records


def verdicts(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each record scored by its built-in tool: ``{"full": bool, "status", "score", "reason"}``."""

    specs = {s.name: s for s in builtin_specs()}
    unknown = sorted({str(r["tool"]) for r in records} - set(specs))
    if unknown:
        raise ValueError(f"unknown tools {unknown}; built-in: {sorted(specs)}")
    tools = {name: make_tool(specs[name]) for name in {str(r["tool"]) for r in records}}

    async def score_all() -> list[dict[str, Any]]:
        out = []
        for r in records:
            tool = tools[str(r["tool"])]
            top = tool.spec.score_range[1]
            res = await tool.score(
                ToolInput(
                    query=str(r.get("query", "")), response=str(r["response"]), reference=r["reference"]
                )
            )
            full = res.ok and res.score is not None and res.score >= top - FULL_MARKS_EPS
            out.append({"full": full, "status": res.status, "score": res.score, "reason": res.reason[:200]})
        return out

    return asyncio.run(score_all())


def run(path: str | Path) -> dict[str, Any]:
    records = load_records(path)
    t0 = time.perf_counter()
    got = verdicts(records)
    wall = time.perf_counter() - t0
    by_tool: dict[str, dict[str, int]] = {}
    misses = []
    for rec, v in zip(records, got, strict=True):
        row = by_tool.setdefault(str(rec["tool"]), {"records": 0, "right": 0, "false_pos": 0, "false_neg": 0})
        row["records"] += 1
        right = v["full"] == rec["label"]
        row["right"] += int(right)
        if not right:
            row["false_pos" if v["full"] else "false_neg"] += 1
            misses.append({"id": rec["id"], "tool": rec["tool"], "label": rec["label"], **v})
    n = len(records)
    right = sum(r["right"] for r in by_tool.values())
    return {
        "data": str(path),
        "records": n,
        "accuracy": round(right / n, 4),
        "correct": right,
        "false_positives": sum(r["false_pos"] for r in by_tool.values()),
        "false_negatives": sum(r["false_neg"] for r in by_tool.values()),
        "abstains": sum(v["status"] == "abstain" for v in got),
        "errors": sum(v["status"] == "error" for v in got),
        "by_tool": by_tool,
        "misses": misses,
        "wall_s": round(wall, 3),
    }
