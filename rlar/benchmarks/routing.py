"""``rlar bench routing``: tool-selection accuracy on labelled records, held out by benchmark type, against
random choice measured in the same run.

Data: JSONL records ``{id, type?, task, query, reference, metadata, domain?, task_type?, answer_format?,
description?, data_source?, acceptable: [tool names]}`` in the shipped set's layout
(``data/routing/labelled.jsonl``, see ``data/routing/README.md``). An empty ``acceptable`` means no candidate
fits: the right answer is "none fits" (a verifier gets written). ``type`` (else ``task``) groups records of one
benchmark format. A record is correct when the chosen (highest-weight) tool is acceptable, or for an empty
``acceptable`` when the answer is "none fits"; ``strict`` also requires every chosen tool to be acceptable.

Figures, all in one run, with the built-in tools as candidates:

- ``agent``: the backend as deployed, through the same request and the same records as ``rlar tools route``
  (:func:`route_records`; the two commands give the same decisions on the same file). ``bank_overlap`` says
  how many of the records are themselves exemplars of the offline router (then this figure is in-sample).
- ``leave_one_type_out`` (offline method, data = its exemplars): each type's records routed by a router whose
  exemplars and fitted weights never saw that type; with the calibration error (ECE, Brier, reliability bins)
  of the confidences, the Platt map fitted on the other types' held-out routes.
- ``in_distribution``: each record routed with only itself out of the exemplars.
- ``descriptions_only``: no exemplars at all (every tool chosen by its description, declared formats and kind).
- ``tool_held_out``: per built-in tool, the records that accept it routed as if no exemplar had ever named it
  — whether a tool is found by its description.
- ``unseen`` (the shipped set only): each ``data/routing/heldout_*.jsonl`` — task formats the labelled set does
  not have, never tuned on — routed as deployed: accuracy, strict accuracy, per type.
- Baselines: ``random`` (uniform among the candidates plus "none fits": exact expectation and sampled runs),
  ``random_eligible`` (uniform among the tools the rules leave eligible), ``majority_eligible`` (the eligible
  tool most often acceptable across the other types' records); ``p_value_vs_random`` is the one-sided exact
  binomial probability of the held-out correct count (else the agent's) under the random baseline.
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rlar.agent.base import Agent
from rlar.routing import RoutingQuery, parse_route, routing_request
from rlar.routing.exemplars import cached_features, default_path, group_of, load_labelled
from rlar.routing.rules import eligibility
from rlar.tools.base import ToolSpec, builtin_specs

__all__ = ["binomial_tail", "route_records", "run"]


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


async def route_records(
    records: Sequence[Mapping[str, Any]], agent: Agent, specs: Sequence[ToolSpec]
) -> list[dict[str, Any]]:
    """One decision per record, through the router's own request (what ``rlar tools route`` prints)."""
    out = []
    for n, rec in enumerate(records, 1):
        q = RoutingQuery.from_record(rec)
        t0 = time.perf_counter()
        reply = await agent.ask(routing_request(q, specs))
        ans = parse_route(reply, specs)
        out.append(
            {
                "line": n,
                "id": rec.get("id"),
                "task": q.task,
                "signature": q.signature(),
                "tools": [t.to_dict() for t in sorted(ans.tools, key=lambda t: -t.weight)],
                "none_fit": ans.none_fit,
                "confidence": ans.confidence,
                "reason": ans.reason,
                "constraints": ans.constraints,
                "ok": ans.ok,
                "backend": reply.backend,
                "model": reply.model,
                "prompt_hash": reply.prompt_hash,
                "cost": ans.provenance.get("cost", {}),
                "latency_s": time.perf_counter() - t0,
                "usage": reply.usage.to_dict(),
            }
        )
    return out


def _correct(chosen: Sequence[str], none_fit: bool, acceptable: Sequence[str]) -> tuple[bool, bool]:
    if not acceptable:
        return none_fit, none_fit
    if none_fit or not chosen:
        return False, False
    return chosen[0] in acceptable, all(c in acceptable for c in chosen)


def _rate(values: Sequence[bool]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def _by_group(groups: Sequence[str], values: Sequence[float]) -> dict[str, float]:
    acc: dict[str, list[float]] = defaultdict(list)
    for g, v in zip(groups, values, strict=True):
        acc[g].append(float(v))
    return {g: round(sum(v) / len(v), 4) for g, v in sorted(acc.items())}


def _baselines(
    records: Sequence[Mapping[str, Any]], specs: Sequence[ToolSpec], seed: int, trials: int
) -> dict[str, Any]:
    names = [s.name for s in specs]
    n = len(records)
    probs = [
        (len([a for a in r["acceptable"] if a in names]) if r["acceptable"] else 1) / (len(names) + 1)
        for r in records
    ]
    rng = random.Random(seed)
    options: list[str | None] = [*names, None]
    samples = []
    for _ in range(max(1, trials)):
        hits = 0
        for rec in records:
            pick = rng.choice(options)
            hits += (pick is None) if not rec["acceptable"] else (pick in rec["acceptable"])
        samples.append(hits / n)
    mean = sum(samples) / len(samples)
    std = math.sqrt(sum((x - mean) ** 2 for x in samples) / max(1, len(samples) - 1))
    # The rules alone: eligible tools per record (no eligible tool, or uncovered constraints: "none fits").
    eligible = []
    queries = [RoutingQuery.from_record(rec) for rec in records]
    for q, f in zip(queries, cached_features(queries), strict=True):
        elig = [s.name for s in specs if not eligibility(s, q, f)]
        uncovered = f.reference_free and f.constraints and f.reference_kind != "form"
        eligible.append([] if uncovered or f.reference_kind == "target" else elig)
    elig_p = [
        (1.0 if not r["acceptable"] else 0.0)
        if not el
        else (0.0 if not r["acceptable"] else sum(e in r["acceptable"] for e in el) / len(el))
        for r, el in zip(records, eligible, strict=True)
    ]
    # The eligible tool most often acceptable among the other types' records (a prior without the query).
    groups = [group_of(dict(r)) for r in records]
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for g, r in zip(groups, records, strict=True):
        counts[g].update(r["acceptable"])
    total = sum(counts.values(), Counter())
    majority = []
    for g, r, el in zip(groups, records, eligible, strict=True):
        prior = total - counts[g]
        pick = max(el, key=lambda t: (prior[t], t)) if el else None
        majority.append((pick is None) if not r["acceptable"] else (pick in r["acceptable"]))
    return {
        "random": {
            "expected_accuracy": round(sum(probs) / n, 4),
            "sampled_accuracy_mean": round(mean, 4),
            "sampled_accuracy_std": round(std, 4),
            "trials": len(samples),
            "seed": seed,
            "by_type": _by_group(groups, probs),
        },
        "random_eligible": {"expected_accuracy": round(sum(elig_p) / n, 4)},
        "majority_eligible": {"accuracy": _rate(majority)},
        "_p_random": sum(probs) / n,
    }


def _held_out_figures(
    records: Sequence[Mapping[str, Any]],
    specs: Sequence[ToolSpec],
    embed: Any,
    progress: Callable[[str], None] | None,
    tools_held_out: bool,
    save: bool,
) -> dict[str, Any]:
    import json

    from rlar.routing.exemplars import ExemplarBank, save_shipped_vectors, shipped_vectors_path
    from rlar.routing.scorer import K_NEIGHBOURS, TEMPERATURE, ScorerModel, calibration_error, fit_platt
    from rlar.routing.training import Trainer, build_model, describe, shipped_model_path

    model_id = getattr(embed, "model_id", None)
    bank = ExemplarBank.from_records([dict(r) for r in records], embed, model_id=model_id)
    trainer = Trainer(bank, specs, embed)
    routes = trainer.held_out_routes(progress)
    if save:
        if not model_id:
            raise ValueError("--save needs the offline backend's embedding model")
        save_shipped_vectors(shipped_vectors_path(), [e.text for e in bank.exemplars], bank.vectors, model_id)
        shipped_model_path().write_text(json.dumps(build_model(trainer, routes).to_dict(), indent=1) + "\n")
    groups = [r.group for r in routes]
    # Confidence of each held-out route from a Platt map fitted on the other types' held-out routes.
    conf = []
    for r in routes:
        if r.path == "scorer":
            others = [o for o in routes if o.group != r.group and o.path == "scorer"]
            a, b = fit_platt([o.p_top for o in others], [o.correct for o in others])
            conf.append(ScorerModel([], [], (a, b)).confidence(r.p_top))
        else:
            others = [o for o in routes if o.group != r.group and o.path == r.path]
            conf.append((sum(o.correct for o in others) + 1) / (len(others) + 2))
    loto = {
        "accuracy": _rate([r.correct for r in routes]),
        "correct": sum(r.correct for r in routes),
        "n": len(routes),
        "by_type": _by_group(groups, [r.correct for r in routes]),
        "paths": {
            p: {"n": c, "accuracy": _rate([r.correct for r in routes if r.path == p])}
            for p, c in sorted(Counter(r.path for r in routes).items())
        },
        "calibration": calibration_error(conf, [r.correct for r in routes]),
        "mean_confidence": round(sum(conf) / len(conf), 4),
        "mistakes": [
            {
                "id": bank.exemplars[r.index].id,
                "chosen": r.tools or ["<none>"],
                "acceptable": list(bank.exemplars[r.index].acceptable) or ["<none>"],
            }
            for r in routes
            if not r.correct
        ][:40],
    }
    ind = trainer.in_distribution_routes()
    weights = ScorerModel([float(w) for w in trainer.weights(set())], trainer.tools)
    desc_router = trainer.router(set(groups), weights)  # every exemplar left out
    desc_only = []
    for e in bank.exemplars:
        m = desc_router.decide(e.query, specs, features=e.features)
        desc_only.append(_correct([t["name"] for t in m.tools], m.none_fit, e.acceptable)[0])
    doc: dict[str, Any] = {
        "leave_one_type_out": loto,
        "in_distribution": {
            "accuracy": _rate([r.correct for r in ind]),
            "correct": sum(r.correct for r in ind),
            "n": len(ind),
        },
        "descriptions_only": {"accuracy": _rate(desc_only), "n": len(desc_only)},
        "weights": describe(weights),
        "model": {"k_neighbours": K_NEIGHBOURS, "temperature": TEMPERATURE, "features": len(weights.weights)},
    }
    if tools_held_out:
        per_tool = {}
        for s in specs:
            if s.name in trainer.tools:
                rs = trainer.tool_held_out_routes(s.name)
                if rs:
                    per_tool[s.name] = {
                        "n": len(rs),
                        "accuracy": _rate([r.correct for r in rs]),
                        "chose_it": _rate([bool(r.tools) and r.tools[0] == s.name for r in rs]),
                    }
        doc["tool_held_out"] = per_tool
    return doc


def unseen_paths() -> list[Path]:
    """The held-out sets of formats the labelled set does not have (``data/routing/heldout_*.jsonl``)."""
    return sorted(default_path().parent.glob("heldout_*.jsonl"))


async def _unseen_figures(agent: Agent, specs: Sequence[ToolSpec]) -> dict[str, Any]:
    """Per held-out file: its records routed by ``agent`` as deployed (its exemplars: the labelled set)."""
    out: dict[str, Any] = {}
    for p in unseen_paths():
        records = load_labelled(p)
        routed = await route_records(records, agent, specs)
        rows = [
            _correct([t["tool"] for t in r["tools"]], r["none_fit"], rec["acceptable"])
            for r, rec in zip(routed, records, strict=True)
        ]
        groups = [group_of(r) for r in records]
        out[p.name] = {
            "records": len(records),
            "types": len(set(groups)),
            "accuracy": _rate([c for c, _ in rows]),
            "strict_accuracy": _rate([x for _, x in rows]),
            "correct": sum(x for _, x in rows),
            "by_type": _by_group(groups, [x for _, x in rows]),
            "mistakes": [
                {
                    "id": rec.get("id"),
                    "chosen": [t["tool"] for t in r["tools"]] or ["<none>"],
                    "acceptable": rec["acceptable"] or ["<none>"],
                }
                for r, rec, (_, x) in zip(routed, records, rows, strict=True)
                if not x
            ][:40],
        }
    return out


async def run(
    data: str | Path | None,
    agent: Agent,
    *,
    seed: int = 0,
    random_trials: int = 200,
    held_out: bool = True,
    tools_held_out: bool = True,
    save: bool = False,
    candidates: Sequence[ToolSpec] | None = None,
    progress: Callable[[str], None] | None = None,
    unseen: bool = True,
) -> dict[str, Any]:
    """Benchmark ``agent`` on ``data`` (None: the shipped set); see the module docstring. The held-out figures
    need the offline backend's embedding model (``agent.embedder``). ``save`` (the shipped set only) writes
    its vectors and fitted model where the router looks for them first (``data/routing/vectors.npz``,
    ``data/routing/model.json``). ``unseen`` (the shipped set only): also the held-out sets of unseen
    formats (``unseen``, see :func:`unseen_paths`), routed as deployed."""
    path = Path(data) if data else default_path()
    records = load_labelled(path)
    specs = list(candidates or builtin_specs())
    names = {s.name for s in specs}
    groups = [group_of(r) for r in records]
    held_figures: dict[str, Any] = {}
    embed = getattr(agent, "embedder", None)
    if held_out and embed is not None:  # first: with ``save`` the deployed router then reads what was saved
        held_figures = held_out_figures(
            records,
            specs,
            embed,
            seed=seed,
            random_trials=random_trials,
            tools_held_out=tools_held_out,
            save=save and path == default_path(),
            progress=progress,
        )
    t0 = time.perf_counter()
    routed = await route_records(records, agent, specs)
    wall = time.perf_counter() - t0
    rows = [
        _correct([t["tool"] for t in r["tools"]], r["none_fit"], rec["acceptable"])
        for r, rec in zip(routed, records, strict=True)
    ]
    shipped = {RoutingQuery.from_record(r).matching_text() for r in load_labelled(default_path())}
    overlap = _rate([RoutingQuery.from_record(r).matching_text() in shipped for r in records])
    base = _baselines(records, specs, seed, random_trials)
    p_random = base.pop("_p_random")
    ag = {
        "backend": agent.backend,
        "model": agent.model,
        "accuracy": _rate([c for c, _ in rows]),
        "strict_accuracy": _rate([s for _, s in rows]),
        "correct": sum(c for c, _ in rows),
        "failed_calls": sum(1 for r in routed if not r["ok"]),
        "mean_latency_ms": round(1000 * sum(r["latency_s"] for r in routed) / len(routed), 2),
        "input_tokens": sum(r["usage"]["input_tokens"] for r in routed),
        "output_tokens": sum(r["usage"]["output_tokens"] for r in routed),
        "bank_overlap": overlap,
        "by_type": _by_group(groups, [c for c, _ in rows]),
        "mistakes": [
            {
                "id": rec.get("id"),
                "chosen": [t["tool"] for t in r["tools"]] or ["<none>"],
                "acceptable": rec["acceptable"] or ["<none>"],
            }
            for r, rec, (c, _) in zip(routed, records, rows, strict=True)
            if not c
        ][:40],
    }
    doc: dict[str, Any] = {
        "data": str(path),
        "records": len(records),
        "types": len(set(groups)),
        "tasks": len({r.get("task") for r in records}),
        "signatures": len({r["signature"] for r in routed}),
        "candidates": sorted(names),
        "agent": ag,
        **base,
        "wall_s": round(wall, 3),
    }
    doc["p_value_vs_random"] = binomial_tail(len(records), int(ag["correct"]), p_random)
    doc.update(held_figures)  # the same baselines (same seed); the p-value of the held-out routes
    if unseen and path == default_path():
        doc["unseen"] = await _unseen_figures(agent, specs)
    return doc


def held_out_figures(
    records: Sequence[Mapping[str, Any]],
    specs: Sequence[ToolSpec],
    embed: Any,
    *,
    seed: int = 0,
    random_trials: int = 200,
    tools_held_out: bool = True,
    save: bool = False,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The figures of :func:`run` that need no agent call: every record routed with its type held out of the
    bank and the fit (``leave_one_type_out``, with the in-distribution and description-only routes, the
    tools-held-out figures unless ``tools_held_out`` is false), the baselines, and the held-out routes'
    p-value against random. ``embed``: the offline backend's embedding model."""
    figures = _held_out_figures(records, specs, embed, progress, tools_held_out, save)
    base = _baselines(records, specs, seed, random_trials)
    p_random = base.pop("_p_random")
    correct = int(figures["leave_one_type_out"]["correct"])
    return {**base, **figures, "p_value_vs_random": binomial_tail(len(records), correct, p_random)}
