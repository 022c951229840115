"""``rlar bench routing``: tool-selection accuracy on labelled records, against random choice in the same run.

Data: JSONL records ``{id, task, query, reference, metadata, domain?, task_type?, answer_format?,
description?, data_source?, acceptable: [tool names]}``. An empty ``acceptable`` means no candidate tool
fits: the right decision is "none fits" (so a verifier gets synthesised). The shipped set is
``data/routing_labelled.jsonl``.

Every record is routed on its own (no signature cache) by the chosen backend through the same request the
router actor sends, with the built-in tools as candidates and readiness ignored (the question is which tool
fits, as in a deployment where the judge and the reward model are configured). A record is correct when the
primary (highest-weight) tool is acceptable, or, for an empty ``acceptable``, when the answer is "none fits";
``strict`` also requires every chosen tool to be acceptable.

Baselines in the same run:

- ``random``: a uniform choice among the candidates plus "none fits" — its expected accuracy computed
  exactly, and one sampled run with ``seed`` (mean and std over ``random_trials`` sampled runs);
- ``random_eligible``: a uniform choice among the tools the offline router's hard rules leave eligible
  (none when no tool is eligible) — how much the rules alone give;
- ablations of the offline router (``semantic``: cosine only; ``rules``: rules without the cosine).

``p_value_vs_random``: one-sided exact binomial probability of the backend's correct count or more if each
record were right with the random baseline's mean probability.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rlar.agent.base import Agent
from rlar.routing import OfflineRouter, RoutingQuery, parse_route, routing_request
from rlar.routing.matching import query_text_for_matching
from rlar.tasks.constraints import constraints_key
from rlar.tasks.references import reference_shape
from rlar.tools.base import ToolSpec, builtin_specs

__all__ = ["binomial_tail", "load_records", "run"]


def load_records(path: str | Path) -> list[dict[str, Any]]:
    out = []
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        rec = json.loads(line)
        if "acceptable" not in rec or not isinstance(rec["acceptable"], list):
            raise ValueError(f"{path}:{n}: record has no 'acceptable' list")
        out.append(rec)
    return out


def binomial_tail(n: int, k: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), exactly (log-space terms)."""
    if k <= 0:
        return 1.0
    if p <= 0:
        return 0.0
    if p >= 1:
        return 1.0
    total = 0.0
    for i in range(k, n + 1):
        log_term = (
            math.lgamma(n + 1)
            - math.lgamma(i + 1)
            - math.lgamma(n - i + 1)
            + i * math.log(p)
            + (n - i) * math.log1p(-p)
        )
        total += math.exp(log_term)
    return min(1.0, total)


def _correct(chosen: Sequence[str], none_fit: bool, acceptable: Sequence[str]) -> tuple[bool, bool]:
    if not acceptable:
        return none_fit, none_fit
    if none_fit or not chosen:
        return False, False
    return chosen[0] in acceptable, all(c in acceptable for c in chosen)


def _by_task(rows: list[dict[str, Any]], key: str) -> dict[str, float]:
    groups: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        groups[r["task"]].append(float(r[key]))
    return {t: round(sum(v) / len(v), 4) for t, v in sorted(groups.items())}


async def _route_all(
    agent: Agent, queries: list[RoutingQuery], specs: list[ToolSpec]
) -> list[dict[str, Any]]:
    out = []
    for q in queries:
        t0 = time.perf_counter()
        reply = await agent.ask(routing_request(q, specs))
        ans = parse_route(reply, specs)
        out.append(
            {
                "ok": ans.ok,
                "tools": [t.tool for t in sorted(ans.tools, key=lambda t: -t.weight)],
                "none_fit": ans.none_fit,
                "reason": ans.reason,
                "latency_s": time.perf_counter() - t0,
                "usage": reply.usage.to_dict(),
            }
        )
    return out


def _score(
    records: list[dict[str, Any]], routed: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    rows = []
    for rec, r in zip(records, routed, strict=True):
        ok, strict = _correct(r["tools"], r["none_fit"], rec["acceptable"])
        rows.append({"id": rec.get("id", ""), "task": rec.get("task", ""), "correct": ok, "strict": strict,
                     "chosen": r["tools"] or ["<none>"], "acceptable": rec["acceptable"] or ["<none>"]})  # fmt: skip
    n = len(rows)
    summary = {
        "accuracy": round(sum(r["correct"] for r in rows) / n, 4),
        "strict_accuracy": round(sum(r["strict"] for r in rows) / n, 4),
        "correct": sum(r["correct"] for r in rows),
    }
    return rows, summary


async def run(
    data: str | Path,
    agent: Agent,
    *,
    seed: int = 0,
    random_trials: int = 200,
    ablations: bool = True,
    candidates: Sequence[ToolSpec] | None = None,
    embed: Any = None,
) -> dict[str, Any]:
    """Benchmark ``agent`` on ``data``; see the module docstring. ``embed`` enables the offline ablations."""
    records = load_records(data)
    specs = list(candidates or builtin_specs())
    names = [s.name for s in specs]
    queries = [RoutingQuery.from_record(r) for r in records]
    if embed is not None:
        # One batch for all query texts: the per-record decisions then hit the embedder's cache.
        embed([query_text_for_matching(q) for q in queries])
    t0 = time.perf_counter()
    routed = await _route_all(agent, queries, specs)
    wall = time.perf_counter() - t0
    rows, summary = _score(records, routed)
    n = len(rows)

    # Random among all candidates plus "none": exact expectation, and sampled runs.
    def p_uniform(rec: Mapping[str, Any]) -> float:
        acc = [a for a in rec["acceptable"] if a in names]
        return (len(acc) if rec["acceptable"] else 1) / (len(names) + 1)

    probs = [p_uniform(r) for r in records]
    expected = sum(probs) / n
    rng = random.Random(seed)
    options = [*names, None]
    samples = []
    for _ in range(max(1, random_trials)):
        hits = 0
        for rec in records:
            pick = rng.choice(options)
            hits += (pick is None) if not rec["acceptable"] else (pick in rec["acceptable"])
        samples.append(hits / n)
    mean = sum(samples) / len(samples)
    std = math.sqrt(sum((s - mean) ** 2 for s in samples) / max(1, len(samples) - 1))

    # Random among the tools the hard rules leave eligible (readiness ignored, as for the backend).
    rules = OfflineRouter(None, mode="rules", require_ready=False)
    elig_probs = []
    for q, rec in zip(queries, records, strict=True):
        shape = reference_shape(q.reference)
        cons = rules.constraints_of(q)
        ckey = constraints_key(cons)
        eligible = [s.name for s in specs if not rules.eligibility(q, s, shape, ckey)]
        if shape == "none" and cons:
            eligible = [
                s.name
                for s in specs
                if not rules.eligibility(q, s, shape, ckey) and s.params.get("constraints")
            ]
        if not eligible:
            elig_probs.append(1.0 if not rec["acceptable"] else 0.0)
        else:
            elig_probs.append(
                0.0
                if not rec["acceptable"]
                else sum(1 for e in eligible if e in rec["acceptable"]) / len(eligible)
            )
    backend = {
        **summary,
        "backend": agent.backend,
        "model": agent.model,
        "failed_calls": sum(1 for r in routed if not r["ok"]),
        "mean_latency_ms": round(1000 * sum(r["latency_s"] for r in routed) / n, 2),
        "input_tokens": sum(r["usage"]["input_tokens"] for r in routed),
        "output_tokens": sum(r["usage"]["output_tokens"] for r in routed),
        "by_task": _by_task(rows, "correct"),
    }
    doc: dict[str, Any] = {
        "data": str(data),
        "records": n,
        "task_types": len({r.get("task_type") or r.get("task") for r in records}),
        "tasks": len({r.get("task") for r in records}),
        "signatures": len({q.signature() for q in queries}),
        "candidates": names,
        "agent": backend,
        "random": {
            "expected_accuracy": round(expected, 4),
            "sampled_accuracy_mean": round(mean, 4),
            "sampled_accuracy_std": round(std, 4),
            "trials": len(samples),
            "seed": seed,
            "by_task": _by_task(
                [{"task": r.get("task", ""), "p": p} for r, p in zip(records, probs, strict=True)], "p"
            ),
        },
        "random_eligible": {"expected_accuracy": round(sum(elig_probs) / n, 4)},
        "p_value_vs_random": binomial_tail(n, summary["correct"], expected),
        "wall_s": round(wall, 3),
        "mistakes": [r for r in rows if not r["correct"]][:40],
    }
    if ablations and embed is not None:
        for mode in ("semantic", "rules"):
            router = OfflineRouter(embed if mode != "rules" else None, mode=mode, require_ready=False)
            routed_m = []
            for q in queries:
                m = router.decide(q, specs)
                routed_m.append({"tools": [t["name"] for t in m.tools], "none_fit": m.none_fit})
            _, s = _score(records, routed_m)
            doc[f"ablation_{mode}"] = s
    return doc
