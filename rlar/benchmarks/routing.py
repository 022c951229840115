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
  exemplars and fitted weights never saw that type; with each decision's confidence from a correctness model
  that never saw the type either (:func:`rlar.routing.confidence.fit_correctness`, cross-fitted by format) and
  their calibration error (ECE, Brier, reliability bins).
- ``kind_held_out``: the same with every type of the record's reference kind held out together (accuracy by
  kind, confidences); ``correctness``: selective routing's threshold fitted on both.
- ``confidence`` (in ``agent``, ``leave_one_type_out``, ``kind_held_out`` and each ``unseen`` set): the median
  confidence of the right and of the wrong decisions (strict), the risk–coverage curve (the share of decisions
  at or above each threshold and how many of them are right) and the coverage and precision at the threshold
  the router uses (:func:`deployed_threshold`; None for a backend whose confidence is not calibrated).
- ``in_distribution``: each record routed with only itself out of the exemplars.
- ``descriptions_only``: no exemplars at all (every tool chosen by its description, declared formats and kind).
- ``tool_held_out``: per built-in tool, the records that accept it routed as if no exemplar had ever named it
  — whether a tool is found by its description.
- ``unseen`` (the shipped set only): each ``data/routing/heldout_*.jsonl`` — task formats the labelled set does
  not have, never tuned on — routed as deployed: accuracy, strict accuracy, per type, confidences.
- Baselines: ``random`` (uniform among the candidates plus "none fits": exact expectation and sampled runs),
  ``random_eligible`` (uniform among the tools the rules leave eligible), ``majority_eligible`` (the eligible
  tool most often acceptable across the other types' records); ``p_value_vs_random`` is the one-sided exact
  binomial probability of the held-out correct count (else the agent's) under the random baseline.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rlar.agent.base import Agent
from rlar.routing import RoutingQuery, parse_route, routing_request
from rlar.routing.confidence import calibration_error, selective_summary
from rlar.routing.exemplars import (
    ExemplarBank,
    cached_features,
    default_path,
    group_of,
    load_labelled,
    save_shipped_vectors,
    shipped_vectors_path,
)
from rlar.routing.offline import router_for
from rlar.routing.query import UNCOMPARABLE_KINDS
from rlar.routing.rules import eligibility
from rlar.routing.scorer import K_NEIGHBOURS, TEMPERATURE, ScorerModel
from rlar.routing.training import Trainer, build_model, describe, fit_confidence, shipped_model_path
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
                "calibrated": ans.calibrated,
                "why": ans.why,
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
        eligible.append([] if uncovered or f.reference_kind in UNCOMPARABLE_KINDS else elig)
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

    model_id = getattr(embed, "model_id", None)
    bank = ExemplarBank.from_records([dict(r) for r in records], embed, model_id=model_id)
    trainer = Trainer(bank, specs, embed)
    routes = trainer.held_out_routes(progress)
    kind_routes = trainer.kind_held_out_routes()
    hand_routes = trainer.hand_held_out_routes()
    ind = trainer.in_distribution_routes()
    # Each route's confidence from a correctness model that never saw its format (cross-fitted by format).
    correctness, confidence = fit_confidence([*routes, *kind_routes, *hand_routes, *ind])
    conf, kind_conf = confidence[: len(routes)], confidence[len(routes) : len(routes) + len(kind_routes)]
    start = len(routes) + len(kind_routes)
    hand_conf = confidence[start : start + len(hand_routes)]
    if save:
        if not model_id:
            raise ValueError("--save needs the offline backend's embedding model")
        save_shipped_vectors(shipped_vectors_path(), [e.text for e in bank.exemplars], bank.vectors, model_id)
        model = build_model(trainer, routes, correctness)
        shipped_model_path().write_text(json.dumps(model.to_dict(), indent=1) + "\n")
    groups = [r.group for r in routes]
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
        "confidence": selective_summary(conf, [r.correct for r in routes], correctness.threshold),
        "mistakes": [
            {
                "id": bank.exemplars[r.index].id,
                "chosen": r.tools or ["<none>"],
                "acceptable": list(bank.exemplars[r.index].acceptable) or ["<none>"],
                "confidence": round(c, 4),
            }
            for r, c in zip(routes, conf, strict=True)
            if not r.correct
        ],
    }
    kinds = trainer.kinds()
    kind_of = {g: k for k, gs in kinds.items() for g in gs}
    kind_held = {
        "accuracy": _rate([r.correct for r in kind_routes]),
        "correct": sum(r.correct for r in kind_routes),
        "n": len(kind_routes),
        "by_kind": _by_group([kind_of[r.group] for r in kind_routes], [r.correct for r in kind_routes]),
        "calibration": calibration_error(kind_conf, [r.correct for r in kind_routes]),
        "confidence": selective_summary(kind_conf, [r.correct for r in kind_routes], correctness.threshold),
    }
    hand_of = {g: h for h, gs in trainer.hands().items() for g in gs}
    hand_held = {
        "accuracy": _rate([r.correct for r in hand_routes]),
        "correct": sum(r.correct for r in hand_routes),
        "n": len(hand_routes),
        "by_hand": _by_group([hand_of[r.group] for r in hand_routes], [r.correct for r in hand_routes]),
        "calibration": calibration_error(hand_conf, [r.correct for r in hand_routes]) if hand_routes else {},
        "confidence": selective_summary(hand_conf, [r.correct for r in hand_routes], correctness.threshold),
    }
    weights = ScorerModel([float(w) for w in trainer.weights(set())], trainer.tools)
    desc_router = trainer.router(set(groups), weights)  # every exemplar left out
    desc_only = []
    for e in bank.exemplars:
        m = desc_router.decide(e.query, specs, features=e.features)
        desc_only.append(_correct([t["name"] for t in m.tools], m.none_fit, e.acceptable)[0])
    doc: dict[str, Any] = {
        "leave_one_type_out": loto,
        "kind_held_out": kind_held,
        "hand_held_out": hand_held,
        "correctness": {
            "threshold": correctness.threshold,
            "decisions": len(confidence),
            "platt": [round(x, 4) for x in correctness.platt],
        },
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


def deployed_threshold(agent: Agent) -> float | None:
    """Selective routing's threshold for ``agent``'s decisions: the fitted correctness model's, for the
    offline backend (its confidences are calibrated); None for a backend whose confidence is its own say."""
    embed = getattr(agent, "embedder", None)
    if agent.backend != "offline" or embed is None:
        return None

    correctness = router_for(embed).model.correctness
    return correctness.threshold if correctness is not None else None


def _mistakes(
    records: Sequence[Mapping[str, Any]], routed: Sequence[Mapping[str, Any]], right: Sequence[bool]
) -> list[dict[str, Any]]:
    return [
        {
            "id": rec.get("id"),
            "chosen": [t["tool"] for t in r["tools"]] or ["<none>"],
            "acceptable": rec["acceptable"] or ["<none>"],
            "confidence": r["confidence"],
        }
        for r, rec, ok in zip(routed, records, right, strict=True)
        if not ok
    ]


async def _unseen_figures(
    agent: Agent, specs: Sequence[ToolSpec], paths: Sequence[Path] | None = None
) -> dict[str, Any]:
    """Per held-out file (``paths``, else :func:`unseen_paths`): its records routed by ``agent`` as deployed
    (its exemplars: the labelled set), with the confidences of its right and wrong decisions and the
    risk–coverage curve at selective routing's threshold."""
    out: dict[str, Any] = {}
    threshold = deployed_threshold(agent)
    for p in unseen_paths() if paths is None else paths:
        records = load_labelled(p)
        routed = await route_records(records, agent, specs)
        rows = [
            _correct([t["tool"] for t in r["tools"]], r["none_fit"], rec["acceptable"])
            for r, rec in zip(routed, records, strict=True)
        ]
        groups = [group_of(r) for r in records]
        strict = [x for _, x in rows]
        out[p.name] = {
            "records": len(records),
            "types": len(set(groups)),
            "accuracy": _rate([c for c, _ in rows]),
            "strict_accuracy": _rate(strict),
            "correct": sum(strict),
            "by_type": _by_group(groups, strict),
            "confidence": selective_summary([r["confidence"] for r in routed], strict, threshold),
            "mistakes": _mistakes(records, routed, strict),
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
        "confidence": selective_summary(
            [r["confidence"] for r in routed], [x for _, x in rows], deployed_threshold(agent)
        ),
        "mistakes": _mistakes(records, routed, [c for c, _ in rows]),
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
