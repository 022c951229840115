"""``rlar bench local-model``: the agentic parts on a language model served locally, against the offline ones.

One endpoint (``--base-url``/``--model``, or ``--serve CHECKPOINT`` to start ``rlar serve-model`` for the run) is
the router's agent, the synthesizer's agent and the judge, as ``[llm]`` would make it. Bounded subsets of the
project's labelled sets, chosen deterministically (one record per type or task, round robin, in file order):

- ``routing``: records of ``data/routing/heldout_blind7.jsonl`` (formats no exemplar of the offline router has,
  written blind; ``heldout_blind3.jsonl`` and before it ``heldout_public_formats.jsonl`` until they joined the
  exemplars) routed through the router's own
  request by the model and by the offline backend;
  a record is right when the chosen tool is acceptable (or "none fits" where nothing is). Per backend:
  accuracy, and for the model how many replies were valid tool calls, refused as malformed, or failed.
- ``synthesis``: instructions of ``data/instructions_labelled.jsonl`` (``heldout`` split) synthesised by the
  model through the same gates as the synthesizer (second-route probes, validation in a local bubblewrap jail,
  ``partial = "refuse"``; ``max_attempts`` per instruction): instructions refused before any code (a clause no
  rule checks), drafts the model wrote (valid ``submit_reward_function`` calls), verifiers registered, and the
  labels right among the hand-labelled answers the registered verifiers scored (it must stay 1.000).
- ``judge``: labelled pairs graded by ``llm_judge`` on the endpoint: per instruction a right answer against a
  wrong one (``examples``), and references of ``data/real_outputs`` against a wrong answer of their form, the
  empty answer and the query echoed (:mod:`rlar.routing.judge_vouch`); agreement with its Wilson interval, by
  source and overall, and the verdict a router would give.

Per call: latency and tokens (mean, median) for each part. Everything is measured in one run; nothing is
cached between the model and the offline figures.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from rlar.agent.base import Agent, AgentConfig, OfflineAgentConfig
from rlar.agent.endpoints import ModelEndpoint, agent_config_for, judge_params
from rlar.agent.factory import make_agent
from rlar.benchmarks.routing import route_records
from rlar.benchmarks.synthesis import _score
from rlar.routing import RoutingQuery
from rlar.routing.judge_vouch import LabelledPair, grade_pairs, judge_agreement, pairs_from_references
from rlar.sandbox_client import local_runner
from rlar.synthesis.compose import SynthesisTask
from rlar.synthesis.loop import synthesize
from rlar.tools import make_tool
from rlar.tools.base import ToolInput, ToolResult, builtin_specs

__all__ = ["pick", "run"]

ROUTING_SET = "data/routing/heldout_blind7.jsonl"
SYNTHESIS_SET = "data/instructions_labelled.jsonl"
REAL_OUTPUTS = "data/real_outputs/smollm2_135m_instruct.jsonl"


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def pick(records: Sequence[Mapping[str, Any]], n: int, key: str) -> list[dict[str, Any]]:
    """``n`` records, one per value of ``key`` in turn (round robin over the values in file order)."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        groups[str(r.get(key) or r.get("task") or r.get("id"))].append(dict(r))
    out: list[dict[str, Any]] = []
    queues = list(groups.values())
    while len(out) < n and any(queues):
        for q in queues:
            if q and len(out) < n:
                out.append(q.pop(0))
    return out


def _calls(rows: Iterable[tuple[float, int, int]]) -> dict[str, Any]:
    """Latency (s) and tokens per call: mean and median."""
    rows = list(rows)
    if not rows:
        return {"calls": 0}
    lat = [r[0] for r in rows]
    tin = [r[1] for r in rows]
    tout = [r[2] for r in rows]
    return {
        "calls": len(rows),
        "latency_s_mean": round(statistics.fmean(lat), 2),
        "latency_s_median": round(statistics.median(lat), 2),
        "input_tokens_mean": round(statistics.fmean(tin), 1),
        "output_tokens_mean": round(statistics.fmean(tout), 1),
    }


def _right(row: Mapping[str, Any], acceptable: Sequence[str]) -> bool:
    if not row["ok"]:
        return False
    if not acceptable:
        return bool(row["none_fit"])
    return bool(row["tools"]) and row["tools"][0]["tool"] in acceptable


async def _routing(root: Path, n: int, model: Agent, offline: Agent) -> dict[str, Any]:

    records = pick(_jsonl(root / ROUTING_SET), n, "type")
    specs = builtin_specs()
    out: dict[str, Any] = {"data": ROUTING_SET, "records": len(records)}
    for name, agent in (("model", model), ("offline", offline)):
        rows = await route_records(records, agent, specs)
        right = [_right(r, rec.get("acceptable") or []) for r, rec in zip(rows, records, strict=True)]
        fig: dict[str, Any] = {
            "backend": agent.backend,
            "model": agent.model,
            "correct": sum(right),
            "accuracy": round(sum(right) / len(rows), 4) if rows else None,
            "valid_answers": sum(1 for r in rows if r["ok"]),
            "refused_malformed": sum(1 for r in rows if not r["ok"] and "malformed tool call" in r["reason"]),
            "other_failures": sum(
                1 for r in rows if not r["ok"] and "malformed tool call" not in r["reason"]
            ),
            "per_question": _calls(
                (r["latency_s"], r["usage"]["input_tokens"], r["usage"]["output_tokens"]) for r in rows
            ),
        }
        if name == "model":
            fig["failure_examples"] = list(dict.fromkeys(r["reason"][:200] for r in rows if not r["ok"]))[:3]
        out[name] = fig
    return out


async def _synthesis(root: Path, n: int, agent: Agent, max_attempts: int) -> dict[str, Any]:

    records = pick([r for r in _jsonl(root / SYNTHESIS_SET) if r["split"] == "heldout"], n, "id")
    run = local_runner()
    rows = []
    for rec in records:
        task = SynthesisTask(
            task=str(rec["id"]),
            description=rec["instruction"],
            examples=[{"query": rec["instruction"], "reference": None, "metadata": {}}],
        )
        t0 = time.perf_counter()
        outcome = await synthesize(task, agent, run, max_attempts=max_attempts, partial="refuse")
        row: dict[str, Any] = {
            "id": rec["id"],
            "category": outcome.category,
            "asked_model": outcome.usage.input_tokens > 0,
            "drafts": sum(1 for a in outcome.attempts if a.code),
            "registered": outcome.spec is not None,
            "reason": outcome.reason[:240],
            "wall_s": round(time.perf_counter() - t0, 1),
            "tokens": outcome.usage.to_dict(),
            "right": 0,
            "scored": 0,
        }
        if outcome.spec is not None:
            answers = [a["text"] for a in rec["answers"]]
            scores = await _score(outcome.spec.to_dict(), rec["instruction"], answers)
            hi = float(outcome.spec.score_range[1])
            for s, a in zip(scores, rec["answers"], strict=True):
                if s is not None:
                    row["scored"] += 1
                    row["right"] += int((s >= hi - 1e-9) == bool(a["ok"]))
        rows.append(row)
    scored = sum(r["scored"] for r in rows)
    return {
        "data": f"{SYNTHESIS_SET} (heldout)",
        "instructions": len(rows),
        "refused_before_code": sum(1 for r in rows if not r["asked_model"]),
        "asked_model": sum(1 for r in rows if r["asked_model"]),
        "drafts_written": sum(r["drafts"] for r in rows),
        "registered": sum(1 for r in rows if r["registered"]),
        "labels_right": sum(r["right"] for r in rows),
        "labels_scored": scored,
        "label_accuracy_of_registered": round(sum(r["right"] for r in rows) / scored, 4) if scored else None,
        "categories": dict(sorted(_count(r["category"] for r in rows).items())),
        "per_request": _calls(
            (r["wall_s"], r["tokens"]["input_tokens"], r["tokens"]["output_tokens"])
            for r in rows
            if r["asked_model"]
        ),
        "requests": rows,
    }


def _count(values: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for v in values:
        out[v] += 1
    return dict(out)


async def _judge(root: Path, n: int, endpoint: ModelEndpoint, threshold: float) -> dict[str, Any]:

    half = max(1, n // 2)
    pairs: list[LabelledPair] = []
    for rec in pick([r for r in _jsonl(root / SYNTHESIS_SET) if r["split"] == "heldout"], half, "id"):
        good = [a["text"] for a in rec["answers"] if a["ok"]]
        bad = [a["text"] for a in rec["answers"] if not a["ok"]]
        if good and bad:
            pairs.append(LabelledPair(rec["instruction"], None, good[0], bad[0], "example"))
    outputs = pick(_jsonl(root / REAL_OUTPUTS), max(1, (n - len(pairs)) // 3 + 1), "kind")
    queries = [RoutingQuery(task=str(r["kind"]), query=r["query"], reference=r["reference"]) for r in outputs]
    pairs += pairs_from_references(queries)[: max(0, n - len(pairs))]
    base = next(s for s in builtin_specs() if s.name == "llm_judge")
    tool = make_tool(base.replace(params={**base.params, **judge_params(endpoint)}))
    calls: list[tuple[float, int, int]] = []

    async def score(inputs: list[ToolInput]) -> list[ToolResult]:
        results = list(await tool.score_batch(inputs))
        for r in results:
            tokens = r.details.get("tokens")
            if tokens and tokens.get("calls"):  # per HTTP call: a judgement may take two (one repair)
                n = int(tokens["calls"])
                calls.extend(
                    [(tokens["call_ms"] / 1000 / n, int(tokens["input"]) // n, int(tokens["output"]) // n)]
                    * n
                )
        return results

    try:
        scores = await grade_pairs(pairs, score)
    finally:
        await tool.aclose()
    by_source: dict[str, Any] = {}
    for source in sorted({p.source for p in pairs}):
        rep = judge_agreement(
            "llm_judge", 0, [s for s in scores if s.pair.source == source], threshold=threshold
        )
        by_source[source] = {
            k: rep.to_dict()[k] for k in ("pairs", "agreement", "ci_low", "ci_high", "outcomes")
        }
    overall = judge_agreement("llm_judge", 0, scores, threshold=threshold)
    return {
        "data": f"{SYNTHESIS_SET} (heldout: a right vs a wrong answer) and {REAL_OUTPUTS} (references)",
        "overall": overall.to_dict(),
        "by_source": by_source,
        "per_call": _calls(calls),
    }


async def run(
    endpoint: ModelEndpoint,
    *,
    root: str | Path,
    routing: int = 12,
    synthesis: int = 6,
    judge_pairs: int = 12,
    max_attempts: int = 1,
    threshold: float = 0.6,
) -> dict[str, Any]:
    """The three parts (see the module docstring); a part with ``0`` items is skipped."""

    root = Path(root)
    t0 = time.perf_counter()
    model = make_agent(TypeAdapter(AgentConfig).validate_python(agent_config_for(endpoint)))
    doc: dict[str, Any] = {
        "endpoint": {"base_url": endpoint.url(), "model": endpoint.model, "api": endpoint.api}
    }
    try:
        if routing:
            offline = make_agent(OfflineAgentConfig())
            doc["routing"] = await _routing(root, routing, model, offline)
        if synthesis:
            doc["synthesis"] = await _synthesis(root, synthesis, model, max_attempts)
        doc["agent"] = model.metrics()
    finally:
        await model.aclose()
    if judge_pairs:
        doc["judge"] = await _judge(root, judge_pairs, endpoint, threshold)
    doc["wall_s"] = round(time.perf_counter() - t0, 1)
    return doc
