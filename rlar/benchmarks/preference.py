"""``rlar bench preference --data FILE``: the reward system as a judge, in RewardBench 2's format and scoring.

Data: RewardBench 2 records (JSONL, or parquet as published): ``id``, ``prompt``, ``chosen`` (list with one
response), ``rejected`` (list of three), ``subset`` (Factuality, Precise IF, Math, Safety, Focus; ``Ties`` is
left out — it has its own scoring). An optional ``reference`` field (not in the real dataset; present in
this project's sample) is handed to reference-based tools.

Scoring (RewardBench 2's best-of-4): each of the four responses gets a score; a record counts 1 when the
chosen response is strictly highest, ``1/k`` when it ties with ``k - 1`` others for the top, else 0. A
response a tool cannot score (abstain, error) gets no score and ranks below every scored one; when no
response is scored the four tie (0.25 — the random baseline). Accuracy is averaged per subset and over the
subsets.

Systems compared in one run (the shape of the paper's Table 3):

- ``agentic``: the routing agent (:mod:`rlar.routing`, Anthropic when a key is set, else the offline agent)
  chooses weighted tools per kind of record (subset) from the built-in toolset, as the router does in
  training; the tools' results are combined with :func:`rlar.tools.combine.combine`;
- ``static:<tool>``: every built-in tool alone;
- ``random``: one built-in tool drawn per record (seeded).

Tools run through a :class:`~rlar.tools.ToolExecutor`; the LLM judge needs ``ANTHROPIC_API_KEY`` or a base
URL (``judge_url``), else it abstains and contributes ties, never invented scores.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from rlar.agent.factory import make_agent
from rlar.routing import RoutingQuery, parse_route, routing_request, usable_candidates
from rlar.tasks import Rng
from rlar.tools import ToolExecutor, ToolInput, builtin_specs
from rlar.tools.combine import combine

# pyarrow is imported where used: heavy and optional (the CLI starts without it).

__all__ = ["SUBSETS", "load_records", "record_accuracy", "run"]

SUBSETS = ("Factuality", "Precise IF", "Math", "Safety", "Focus")

# How each subset is described to the routing agent (the fields a training task would declare).
_KIND: dict[str, dict[str, str]] = {
    "Factuality": {
        "domain": "factuality",
        "task_type": "open_qa",
        "answer_format": "free_text",
        "description": "Answer factual questions correctly; penalise false claims.",
    },
    "Precise IF": {
        "domain": "instruction_following",
        "task_type": "instruction_following",
        "answer_format": "any",
        "description": "Follow every explicit constraint of the instruction.",
    },
    "Math": {
        "domain": "math",
        "task_type": "word_problem",
        "answer_format": "number",
        "description": "Solve the math problem; the final answer must be correct.",
    },
    "Safety": {
        "domain": "safety",
        "task_type": "safety",
        "answer_format": "free_text",
        "description": "Refuse harmful requests, comply helpfully with benign ones.",
    },
    "Focus": {
        "domain": "chat",
        "task_type": "open_chat",
        "answer_format": "free_text",
        "description": "Stay on topic and answer the question that was asked, with quality.",
    },
}


def load_records(path: str | Path, limit: int | None = None) -> list[dict[str, Any]]:
    """RewardBench 2 records from JSONL or parquet, ``Ties`` left out; raises ``ValueError`` on bad rows."""
    p = Path(path)
    if p.suffix == ".parquet":
        import pyarrow.parquet as pq

        rows = pq.read_table(p).to_pylist()
    else:
        rows = [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
    out = []
    for i, r in enumerate(rows):
        if r.get("subset") == "Ties":
            continue
        if (
            not isinstance(r.get("chosen"), list)
            or not isinstance(r.get("rejected"), list)
            or not r["chosen"]
        ):
            raise ValueError(f"{p}: record {i} lacks chosen/rejected lists")
        out.append(r)
    return out[:limit] if limit else out


def record_accuracy(scores: list[float | None]) -> float:
    """Best-of-n credit for one record; ``scores[0]`` is the chosen response's (None: unscored)."""
    vals = [float("-inf") if s is None else float(s) for s in scores]
    top = max(vals)
    if vals[0] != top:
        return 0.0
    return 1.0 / sum(1 for v in vals if v == top)


async def _score_all(
    ex: Any,
    tools: list[dict[str, Any]],
    specs: dict[str, Any],
    rec: dict[str, Any],
    cache: dict[tuple[str, str], list[Any]],
) -> list[float | None]:

    responses = [*rec["chosen"][:1], *rec["rejected"]]
    per_tool = []
    for t in tools:
        key = (t["tool"], str(rec.get("id")))
        if key not in cache:
            inputs = [
                ToolInput(
                    query=str(rec["prompt"]),
                    response=str(r),
                    reference=rec.get("reference"),
                    metadata={"subset": rec.get("subset", "")},
                )
                for r in responses
            ]
            cache[key] = await ex.score_batch(specs[t["tool"]], inputs)
        per_tool.append((float(t["weight"]), cache[key]))
    out: list[float | None] = []
    for i in range(len(responses)):
        status, score = combine([(w, res[i].status, res[i].score) for w, res in per_tool])
        out.append(score if status == "ok" else None)
    return out


async def _agentic_routes(records: list[dict[str, Any]], specs: list[Any]) -> tuple[dict[str, Any], str]:

    agent = make_agent()
    specs, _ = usable_candidates(specs, require_ready=True)
    routes: dict[str, Any] = {}
    try:
        for rec in records:
            subset = str(rec.get("subset", ""))
            if subset in routes:
                continue
            kind = _KIND.get(subset, {})
            q = RoutingQuery(
                task=f"rewardbench2/{subset}",
                query=str(rec["prompt"]),
                reference=rec.get("reference"),
                domain=kind.get("domain", ""),
                task_type=kind.get("task_type", ""),
                answer_format=kind.get("answer_format", ""),
                description=kind.get("description", ""),
                data_source="rewardbench2",
            )
            answer = parse_route(await agent.ask(routing_request(q, specs)), specs)
            routes[subset] = [{"tool": t.tool, "weight": t.weight} for t in answer.tools]
    finally:
        await agent.aclose()
    return routes, type(agent).__name__


async def _run(
    path: str, limit: int | None, seed: int, judge_url: str | None, tools: list[str] | None
) -> dict[str, Any]:

    t0 = time.perf_counter()
    records = load_records(path, limit)
    specs_list = [
        s.replace(params={**s.params, "base_url": judge_url}).sealed()
        if s.name == "llm_judge" and judge_url
        else s
        for s in builtin_specs()
        if tools is None or s.name in tools
    ]
    specs = {s.name: s for s in specs_list}
    routes, agent_name = await _agentic_routes(records, specs_list)
    systems: dict[str, Any] = {"agentic": lambda rec: routes.get(str(rec.get("subset")), [])}
    for name in specs:
        systems[f"static:{name}"] = lambda rec, n=name: [{"tool": n, "weight": 1.0}]
    systems["random"] = lambda rec: [
        {"tool": Rng("pref", seed, str(rec.get("id"))).choice(sorted(specs)), "weight": 1.0}
    ]
    cache: dict[tuple[str, str], list[Any]] = {}
    acc: dict[str, dict[str, list[float]]] = {}
    async with ToolExecutor(workers=1, timeout_s=30.0) as ex:
        for system, route in systems.items():
            for rec in records:
                chosen_tools: list[dict[str, Any]] = route(rec)
                scores: list[float | None] = (
                    await _score_all(ex, chosen_tools, specs, rec, cache) if chosen_tools else [None] * 4
                )
                acc.setdefault(system, {}).setdefault(str(rec.get("subset")), []).append(
                    record_accuracy(scores)
                )
    table: dict[str, dict[str, float]] = {}
    for system, by_subset in acc.items():
        row = {s: sum(v) / len(v) for s, v in by_subset.items()}
        row["avg"] = sum(row.values()) / len(row) if row else 0.0
        table[system] = {k: round(v, 4) for k, v in row.items()}
    subsets = [s for s in SUBSETS if any(s in r for r in table.values())]
    lines = ["system".ljust(28) + "".join(s[:11].rjust(12) for s in [*subsets, "avg"])]
    for system, row in sorted(table.items(), key=lambda kv: -kv[1]["avg"]):
        lines.append(system.ljust(28) + "".join(f"{100 * row.get(s, 0):12.1f}" for s in [*subsets, "avg"]))
    return {
        "bench": "preference",
        "data": str(path),
        "records": len(records),
        "agent": agent_name,
        "routes": routes,
        "accuracy": table,
        "random_baseline": 0.25,
        "seconds": round(time.perf_counter() - t0, 1),
        "table": "accuracy (%) per subset; RewardBench 2 best-of-4, ties share credit; random = 25%\n"
        + "\n".join(lines),
    }


def run(
    path: str,
    *,
    limit: int | None = None,
    seed: int = 0,
    judge_url: str | None = None,
    tools: list[str] | None = None,
) -> dict[str, Any]:
    """Score ``path`` with every system and return accuracies (see the module docstring). ``tools`` limits
    the toolset (the agent's candidates, the static baselines and the random draw) to those built-ins."""
    return asyncio.run(_run(path, limit, seed, judge_url, tools))
