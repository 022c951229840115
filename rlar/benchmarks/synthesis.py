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

Records may name their ``task`` (a kind of instruction with several prompts: ``data/synthesis/*.jsonl``); then
``tasks`` reports per task: prompts, prompts with a registered verifier, prompts whose verifier is whole (checks
every clause), and labels right among the answers scored; and ``overall``: ``precision`` (labels right among
the answers a registered verifier scored), ``tasks_whole`` (the share of tasks with a whole verifier for every
prompt), ``tasks_with_verifier`` and the refusals by category. Synthesis runs with ``partial`` (default
``refuse``: a verifier that cannot check every clause is refused), so a refused prompt's answers are not
scored — they would go to a judge or abstain.
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
from rlar.tools import ToolInput, make_tool
from rlar.tools.base import ToolSpec

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

    tool = make_tool(ToolSpec.from_dict(dict(spec)))
    results = await tool.score_batch([ToolInput(instruction, a, None) for a in answers])
    return [r.score if r.status == "ok" else None for r in results]


def _accuracy(rows: list[tuple[bool, bool]]) -> dict[str, Any]:
    return {
        "answers": len(rows),
        "correct": sum(p == y for p, y in rows),
        "accuracy": round(sum(p == y for p, y in rows) / len(rows), 4) if rows else None,
    }


def by_task(per: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per task (records grouped by ``task``) and overall figures: see the module docstring."""
    tasks: dict[str, dict[str, Any]] = {}
    for p in per:
        t = tasks.setdefault(
            str(p.get("task") or p["id"]),
            {
                "prompts": 0,
                "verifier": 0,
                "whole": 0,
                "scored": 0,
                "right": 0,
                "categories": {},
                "unread": [],
            },
        )
        t["prompts"] += 1
        t["verifier"] += int(bool(p["registered"]))
        t["whole"] += int(bool(p["full"]))
        cat = str(p["report"].get("category", ""))
        t["categories"][cat] = t["categories"].get(cat, 0) + 1
        t["unread"] += [u for u in p["report"].get("unread", []) if u not in t["unread"]][:3]
        scored = [a for a in p["answers"] if a["predicted"] is not None]
        t["scored"] += len(scored)
        t["right"] += sum(1 for a in scored if a["predicted"] == a["ok"])
    for t in tasks.values():
        t["has_verifier"] = t["verifier"] == t["prompts"]
        t["has_whole"] = t["whole"] == t["prompts"]
    scored = sum(t["scored"] for t in tasks.values())
    right = sum(t["right"] for t in tasks.values())
    cats: dict[str, int] = {}
    for t in tasks.values():
        for k, v in t["categories"].items():
            cats[k] = cats.get(k, 0) + v
    overall = {
        "tasks": len(tasks),
        "prompts": len(per),
        "answers": sum(len(p["answers"]) for p in per),
        "scored": scored,
        "right": right,
        "precision": round(right / scored, 4) if scored else None,
        "tasks_with_verifier": round(sum(t["has_verifier"] for t in tasks.values()) / len(tasks), 4)
        if tasks
        else 0.0,
        "tasks_whole": round(sum(t["has_whole"] for t in tasks.values()) / len(tasks), 4) if tasks else 0.0,
        "prompts_whole": round(sum(1 for p in per if p["full"]) / len(per), 4) if per else 0.0,
        "categories": dict(sorted(cats.items())),
    }
    return {"tasks": tasks, "overall": overall}


async def run(
    data: str | Path, split: str, agent: Agent, *, max_attempts: int = 3, partial: str = "refuse"
) -> dict[str, Any]:
    t0 = time.perf_counter()
    records = _load(data, split)
    per: list[dict[str, Any]] = []
    for rec in records:
        kind = {
            rec["id"]: [
                {"task": rec.get("task") or rec["id"], "query": rec["instruction"], "reference": None}
            ]
        }
        (res,) = await synthesize_records(kind, agent, max_attempts=max_attempts, partial=partial)
        answers = [a["text"] for a in rec["answers"]]
        scores: list[float | None] = [None] * len(answers)
        if res["spec"] is not None:
            scores = await _score(res["spec"], rec["instruction"], answers)
            hi = float(res["spec"]["score_range"][1])
        predicted = (
            [None if s is None else s >= hi - 1e-9 for s in scores] if res["spec"] else [None] * len(answers)
        )
        per.append(
            {
                "id": rec["id"],
                "task": rec.get("task") or rec["id"],
                "split": rec["split"],
                "instruction": rec["instruction"],
                "checkable": rec["checkable"],
                "registered": res["spec"] is not None,
                "full": res["full"] and res["spec"] is not None,
                "coverage": res["coverage"],
                "report": res["report"],
                "answers": [
                    {"ok": a["ok"], "predicted": p, "score": s}
                    for a, p, s in zip(rec["answers"], predicted, scores, strict=True)
                ],
            }
        )
    out: dict[str, Any] = {
        "data": str(data),
        "split": split,
        "agent": getattr(agent, "model", ""),
        "partial": partial,
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
        partly = [
            (a["predicted"], a["ok"])
            for p in rows
            if p["registered"] and not p["full"]
            for a in p["answers"]
            if a["predicted"] is not None
        ]
        judged = full + partly
        claims = [(p["full"], bool(p["checkable"])) for p in rows]
        out["splits"][name] = {
            "instructions": len(rows),
            "answers": sum(len(p["answers"]) for p in rows),
            "judged": len(judged),
            "full": _accuracy(full),
            "partial": _accuracy(partly),
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
        out["splits"][name].update(by_task(rows))
    out["wall_s"] = round(time.perf_counter() - t0, 2)
    out["instructions"] = per
    return out
