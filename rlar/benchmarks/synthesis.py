"""``rlar bench synthesis``: verifiers synthesised for labelled instructions, judged on hand-labelled answers.

The data (default ``data/instructions_labelled.jsonl``, written for this project) holds instructions in the
style of IFEval but in our own wording, each with ``checkable`` (every clause can be checked by rules: a hand
label) and answers labelled ``ok`` by hand against the *whole* instruction, split into ``dev`` (used while
building the reader) and ``heldout`` (not tuned on). Per instruction the benchmark:

1. synthesises a verifier exactly as the synthesizer would (the agent, the second route's probes, validation in
   a local bubblewrap jail; the labelled answers are NOT shown to synthesis);
2. scores every labelled answer with the registered verifier in the jail; an answer passes when it gets the top
   of the range;
3. compares: label accuracy on the answers of instructions whose verifier claims to check every clause
   (``full``), and of those registered as ``partial``; the honesty of the claim (claimed full vs the hand label
   ``checkable``); and the synthesis report (requests, valid, rejected by reason, attempts, time).

Answers of instructions without a registered verifier are counted as not judged (``judged`` says how many were).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rlar.agent.base import Agent
from rlar.synthesis.report import summarize
from rlar.synthesis.standalone import synthesize_records

__all__ = ["run"]


def _load(path: str | Path, split: str) -> list[dict[str, Any]]:
    out = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        rec = json.loads(line)
        for key in ("id", "instruction", "answers", "checkable", "split"):
            if key not in rec:
                raise ValueError(f"{path}:{n}: record without {key!r}")
        if split in ("all", rec["split"]):
            out.append(rec)
    if not out:
        raise ValueError(f"{path}: no records in split {split!r}")
    return out


async def _score(spec: Mapping[str, Any], instruction: str, answers: Sequence[str]) -> list[float | None]:
    from rlar.tools import ToolInput, make_tool
    from rlar.tools.base import ToolSpec

    tool = make_tool(ToolSpec.from_dict(dict(spec)))
    results = await tool.score_batch([ToolInput(instruction, a, None) for a in answers])
    return [r.score if r.status == "ok" else None for r in results]


def _accuracy(rows: list[tuple[bool, bool]]) -> dict[str, Any]:
    return {"answers": len(rows), "correct": sum(p == y for p, y in rows),
            "accuracy": round(sum(p == y for p, y in rows) / len(rows), 4) if rows else None}  # fmt: skip


async def run(data: str | Path, split: str, agent: Agent, *, max_attempts: int = 3) -> dict[str, Any]:
    t0 = time.perf_counter()
    records = _load(data, split)
    per: list[dict[str, Any]] = []
    for rec in records:
        kind = {rec["id"]: [{"task": rec["id"], "query": rec["instruction"], "reference": None}]}
        (res,) = await synthesize_records(kind, agent, max_attempts=max_attempts)
        answers = [a["text"] for a in rec["answers"]]
        scores: list[float | None] = [None] * len(answers)
        if res["spec"] is not None:
            scores = await _score(res["spec"], rec["instruction"], answers)
            hi = float(res["spec"]["score_range"][1])
        predicted = (
            [None if s is None else s >= hi - 1e-9 for s in scores] if res["spec"] else [None] * len(answers)
        )
        per.append({
            "id": rec["id"], "split": rec["split"], "instruction": rec["instruction"], "checkable": rec["checkable"],
            "registered": res["spec"] is not None, "full": res["full"] and res["spec"] is not None,
            "coverage": res["coverage"], "report": res["report"],
            "answers": [{"ok": a["ok"], "predicted": p, "score": s} for a, p, s in zip(rec["answers"], predicted, scores, strict=True)],
        })  # fmt: skip
    out: dict[str, Any] = {
        "data": str(data),
        "split": split,
        "agent": getattr(agent, "model", ""),
        "splits": {},
    }
    for name in sorted({p["split"] for p in per}):
        rows = [p for p in per if p["split"] == name]
        full = [
            (a["predicted"], a["ok"])
            for p in rows
            if p["full"]
            for a in p["answers"]
            if a["predicted"] is not None
        ]
        partial = [(a["predicted"], a["ok"]) for p in rows if p["registered"] and not p["full"]
                   for a in p["answers"] if a["predicted"] is not None]  # fmt: skip
        judged = full + partial
        claims = [(p["full"], bool(p["checkable"])) for p in rows]
        out["splits"][name] = {
            "instructions": len(rows),
            "answers": sum(len(p["answers"]) for p in rows),
            "judged": len(judged),
            "full": _accuracy(full),
            "partial": _accuracy(partial),
            "all_judged": _accuracy(judged),
            "claims": {
                "claimed_full": sum(1 for c, _ in claims if c),
                "claimed_full_and_checkable": sum(1 for c, y in claims if c and y),
                "claimed_full_not_checkable": sum(1 for c, y in claims if c and not y),
                "checkable_not_claimed_full": sum(1 for c, y in claims if y and not c),
                "checkable": sum(1 for _, y in claims if y),
            },
            "synthesis": summarize(p["report"] for p in rows),
            "errors": [
                {
                    "id": p["id"],
                    "instruction": p["instruction"],
                    "full": p["full"],
                    "wrong": [
                        a for a in p["answers"] if a["predicted"] is not None and a["predicted"] != a["ok"]
                    ],
                }
                for p in rows
                if any(a["predicted"] is not None and a["predicted"] != a["ok"] for a in p["answers"])
            ],
        }
    out["wall_s"] = round(time.perf_counter() - t0, 2)
    out["instructions"] = per
    return out
