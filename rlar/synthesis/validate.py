"""Validation of a candidate verifier in the sandbox: the gate between generated code and the registry.

``validate(code, score_range, probes, run_code, policy)`` returns a :class:`ValidationRecord` (never raises for
the candidate's behaviour). Checks, in order; the first that fails is the reason:

1. static: the source parses and defines ``reward(query, response, reference, metadata)``; the declared range
   is finite with lo < hi. (Parsing only; nothing runs in this process.)
2. executes: in ``policy.runs`` separate jails, the harness loads the module and calls ``reward`` on every
   probe ``policy.repeats`` times; an import error, an exception, a non-number or a call over
   ``case_timeout_s`` rejects, naming the probe.
3. in range: every score is finite and inside the declared range (and the module's ``SCORE_RANGE``, if it
   declares one, equals the declared range).
4. deterministic: every probe gets the same score on every call and in every jail (separate processes, so
   hash seeds and unseeded randomness differ). This is a sampling check: code whose score depends on the hash
   seed only through a few coarse outcomes can agree by chance across ``runs`` jails (e.g. ``hash(r) % 2``
   on 4 probes agrees across 2 runs with probability 1/16); more runs make that rarer.
5. time budget: per probe, the fastest of its calls (so a call the host's scheduler happened to pause does
   not count against the candidate); the 95th percentile of those over the probes is within ``budget_ms``.
6. separates: within each probe group, good probes score above bad ones — the share of (good, bad) pairs with
   good > bad is at least ``min_pairwise`` and the mean gap is at least ``min_gap`` of the range width.
7. independent: the same separation on the probes that do not come from our own reading of the instruction
   (``dataset``, ``second_route``, ``agent``: :mod:`rlar.synthesis.probes`), and their good probes score at
   least ``min_independent_good`` of the range on average. With ``require_independent`` a candidate without
   such probes is rejected: probes built from the reading the verifier was composed from cannot show that the
   reading was right.
6a. examples (checked before 6): the user's labelled examples (source ``user``, from ``[[tasks]] examples``)
   are scored exactly as labelled: an example marked ``ok`` gets the top of the range, one marked not ok
   scores below it. One disagreement rejects the candidate, and the reason shows each disagreement (the
   example, its label, the score).

A sandbox that could not run anything (``rejected``) gives ``infrastructure=True``: not the candidate's fault,
so callers should not count it as a rejected attempt.
"""

from __future__ import annotations

import ast
import math
import secrets
from dataclasses import dataclass, field
from typing import Any

from rlar.sandbox.schema import Limits
from rlar.sandbox_client import RunCode, as_run_result
from rlar.synthesis.probes import INDEPENDENT, Probe, ProbeSet
from rlar.tools.verifier_harness import harness_input, harness_program, parse_harness_output

__all__ = ["ValidationPolicy", "ValidationRecord", "static_check", "validate"]

CHECKS = (
    "static",
    "executes",
    "in_range",
    "deterministic",
    "within_budget",
    "separates",
    "independent",
    "examples",
)


@dataclass(frozen=True, slots=True)
class ValidationPolicy:
    runs: int = 2
    """Separate sandbox runs (processes) over all probes."""
    repeats: int = 2
    """Calls per probe within one run."""
    case_timeout_s: float = 1.0
    """Per-call limit inside the harness."""
    budget_ms: float = 100.0
    """95th percentile of per-call time allowed."""
    min_pairwise: float = 0.9
    min_gap: float = 0.25
    require_independent: bool = True
    """Reject a candidate that no probe independent of its own reading of the task could test."""
    min_independent_good: float = 0.75
    """Mean score of independent good probes, as a share of the range, below which the candidate is rejected."""
    limits: Limits = field(default_factory=lambda: Limits(test_s=30.0, cpu_s=30, memory_mb=512))

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "repeats": self.repeats,
            "case_timeout_s": self.case_timeout_s,
            "budget_ms": self.budget_ms,
            "min_pairwise": self.min_pairwise,
            "min_gap": self.min_gap,
            "require_independent": self.require_independent,
            "min_independent_good": self.min_independent_good,
        }


@dataclass(slots=True)
class ValidationRecord:
    """What validation found. ``to_dict()`` is what the registry stores in ``ToolSpec.validation``."""

    passed: bool
    reason: str
    checks: dict[str, bool] = field(default_factory=dict)
    infrastructure: bool = False
    n_good: int = 0
    n_bad: int = 0
    pairwise: float | None = None
    gap: float | None = None
    good_mean: float | None = None
    bad_mean: float | None = None
    p95_ms: float | None = None  # over probes, of each probe's fastest call
    max_ms: float | None = None  # slowest single call seen
    runs: list[dict[str, Any]] = field(default_factory=list)
    probes: list[dict[str, Any]] = field(default_factory=list)
    policy: dict[str, Any] = field(default_factory=dict)
    independent: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, dict[str, int]] = field(default_factory=dict)
    examples: dict[str, Any] = field(default_factory=dict)
    """The user's labelled examples: how many, how many agree, and each disagreement."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "reason": self.reason,
            "checks": dict(self.checks),
            "infrastructure": self.infrastructure,
            "n_good": self.n_good,
            "n_bad": self.n_bad,
            "pairwise": self.pairwise,
            "gap": self.gap,
            "good_mean": self.good_mean,
            "bad_mean": self.bad_mean,
            "p95_ms": self.p95_ms,
            "max_ms": self.max_ms,
            "runs": list(self.runs),
            "probes": list(self.probes),
            "policy": dict(self.policy),
            "independent": dict(self.independent),
            "sources": dict(self.sources),
            "examples": dict(self.examples),
        }


def static_check(code: str, score_range: tuple[float, float] | list[float]) -> str | None:
    """None if the source parses, defines ``reward`` with four positional parameters and the range is sane."""
    try:
        lo, hi = (float(x) for x in score_range)
    except (TypeError, ValueError):
        return f"declared score range {score_range!r} is not two numbers"
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        return f"declared score range {score_range!r} must be finite with lo < hi"
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return f"does not parse: {exc.msg} (line {exc.lineno})"
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "reward":
            n = len(node.args.posonlyargs) + len(node.args.args)
            if n >= 4 or node.args.vararg is not None:
                return None
            return (
                f"reward() takes {n} positional parameters; the signature is reward(query, response, "
                f"reference, metadata)"
            )
    return "defines no top-level reward(query, response, reference, metadata)"


def _separation(items: list[Probe], score: list[float], idx: Any) -> dict[str, Any]:
    """Pairwise ordering of good over bad probes within groups, over the probes ``idx``."""
    chosen = list(idx)
    pairs = wins = 0
    worst: tuple[float, int, int] | None = None
    for g in sorted({items[i].group for i in chosen}):
        goods = [i for i in chosen if items[i].group == g and items[i].label == "good"]
        bads = [i for i in chosen if items[i].group == g and items[i].label == "bad"]
        for a in goods:
            for b in bads:
                pairs += 1
                wins += score[a] > score[b]
                if worst is None or score[a] - score[b] < worst[0]:
                    worst = (score[a] - score[b], a, b)
    goods_all = [score[i] for i in chosen if items[i].label == "good"] or [0.0]
    bads_all = [score[i] for i in chosen if items[i].label == "bad"] or [0.0]
    return {
        "pairs": pairs,
        "wins": wins,
        "pairwise": round(wins / pairs, 6) if pairs else 0.0,
        "worst": worst,
        "good_mean": round(sum(goods_all) / len(goods_all), 6),
        "bad_mean": round(sum(bads_all) / len(bads_all), 6),
    }


def _worst(items: list[Probe], score: list[float], sep: dict[str, Any]) -> str:
    if sep["worst"] is None:
        return ""
    _, a, b = sep["worst"]
    return (
        f"; worst pair: good ({items[a].source}: {items[a].why}) scored {score[a]:.4g} vs bad ({items[b].source}:"
        f" {items[b].why}) scored {score[b]:.4g}: {items[b].response[:80]!r}"
    )


def _p95(values: list[float]) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(0.95 * len(s)) - 1))]


async def validate(
    code: str,
    score_range: tuple[float, float] | list[float],
    probes: ProbeSet,
    run_code: RunCode,
    policy: ValidationPolicy | None = None,
) -> ValidationRecord:
    """Run the checks of the module docstring; see there for the order and the meaning of each."""
    policy = policy or ValidationPolicy()
    rec = ValidationRecord(passed=False, reason="", policy=policy.to_dict())
    rec.n_good, rec.n_bad = len(probes.good), len(probes.bad)
    rec.sources = probes.sources()

    def fail(check: str, reason: str, *, infrastructure: bool = False) -> ValidationRecord:
        rec.checks[check] = False
        rec.reason = f"{check}: {reason}"
        rec.infrastructure = infrastructure
        return rec

    problem = static_check(code, score_range)
    if problem:
        return fail("static", problem)
    rec.checks["static"] = True
    lo, hi = (float(x) for x in score_range)
    if not probes.usable:
        return fail(
            "separates",
            "no probe group with both good and bad cases: " + "; ".join(probes.problems),
            infrastructure=True,
        )
    items: list[Probe] = probes.probes
    cases = [p.case() for p in items]
    program = harness_program(code)
    per_probe: list[list[float]] = [[] for _ in items]
    millis: list[list[float]] = [[] for _ in items]
    for _ in range(policy.runs):
        nonce = secrets.token_hex(8)
        stdin = harness_input(
            cases, nonce, repeats=policy.repeats, case_timeout_s=policy.case_timeout_s, stop_on_error=True
        )
        try:
            result = as_run_result(await run_code(program, stdin, policy.limits))
        except Exception as exc:  # the runner itself failed (bus down): not the candidate's fault
            return fail("executes", f"sandbox unavailable: {type(exc).__name__}: {exc}", infrastructure=True)
        rec.runs.append({"status": result.status, "wall_s": result.wall_s, "isolation": result.isolation})
        if result.status == "rejected":
            return fail("executes", f"sandbox rejected the run: {result.reason}", infrastructure=True)
        if result.status == "timeout":
            return fail("within_budget", f"the run hit the sandbox time limit ({result.reason})")
        if result.status == "oom":
            return fail("executes", f"the run hit the memory limit ({result.reason})")
        out = parse_harness_output(result.stdout, nonce, len(cases), partial=True)
        if out.load_error:
            return fail("executes", f"raises when loaded: {out.load_error}")
        if out.problem:
            tail = result.stderr.strip().splitlines()[-3:]
            return fail(
                "executes",
                f"{out.problem}; sandbox status {result.status}: {result.reason}; {' | '.join(tail)}"[:600],
            )
        if out.score_range is not None and (
            abs(out.score_range[0] - lo) > 1e-9 or abs(out.score_range[1] - hi) > 1e-9
        ):
            return fail(
                "in_range", f"SCORE_RANGE in the code is {list(out.score_range)}, declared {[lo, hi]}"
            )
        for i, (probe, res) in enumerate(zip(items, out.results, strict=False)):
            if res["error"]:
                check = "within_budget" if str(res["error"]).startswith("timeout") else "executes"
                return fail(check, f"probe {i} ({probe.label}: {probe.why}) -> {res['error']}")
            per_probe[i].extend(res["scores"])
            millis[i].extend(res["ms"])
        fastest = [min(m) for m in millis if m]
        if fastest and _p95(fastest) > policy.budget_ms:
            break  # already over budget: judged below without another run
    rec.checks["executes"] = True
    tol = 1e-6 * (hi - lo)
    for i, scores in enumerate(per_probe):
        for s in scores:
            if not math.isfinite(s) or s < lo - tol or s > hi + tol:
                return fail(
                    "in_range",
                    f"probe {i} ({items[i].label}: {items[i].why}) scored {s!r}, outside [{lo:g}, {hi:g}]",
                )
    rec.checks["in_range"] = True
    for i, scores in enumerate(per_probe):
        if scores and max(scores) - min(scores) > 1e-9:
            shown = ", ".join(f"{s:.6g}" for s in scores[:4])
            return fail(
                "deterministic",
                f"probe {i} ({items[i].label}: {items[i].why}) scored differently across calls: {shown}",
            )
    rec.checks["deterministic"] = True
    fastest = [min(m) for m in millis if m]
    rec.p95_ms = round(_p95(fastest), 3) if fastest else 0.0
    rec.max_ms = round(max(x for m in millis for x in m), 3) if fastest else 0.0
    if rec.p95_ms > policy.budget_ms:
        return fail(
            "within_budget", f"p95 {rec.p95_ms:.1f} ms per call exceeds the budget of {policy.budget_ms:g} ms"
        )
    rec.checks["within_budget"] = True
    score = [s[0] for s in per_probe]
    rec.probes = [
        {"label": p.label, "why": p.why, "group": p.group, "source": p.source, "score": round(score[i], 6)}
        for i, p in enumerate(items)
    ][:64]
    user = [i for i, p in enumerate(items) if p.source == "user"]
    wrong = [i for i in user if (score[i] >= hi - tol) != (items[i].label == "good")]
    rec.examples = {
        "labelled": len(user),
        "agree": len(user) - len(wrong),
        "disagree": [
            {"response": items[i].response[:200], "ok": items[i].label == "good", "score": round(score[i], 6)}
            for i in wrong
        ],
    }
    if wrong:
        shown = "; ".join(
            f"{items[i].response[:80]!r} labelled {'ok' if items[i].label == 'good' else 'not ok'} scored "
            f"{score[i]:.3g}"
            for i in wrong[:4]
        )
        return fail("examples", f"disagrees with {len(wrong)} of {len(user)} labelled examples: {shown}")
    rec.checks["examples"] = True  # (none given: nothing to disagree with)
    width = hi - lo
    sep = _separation(items, score, range(len(items)))
    rec.good_mean, rec.bad_mean = sep["good_mean"], sep["bad_mean"]
    rec.pairwise = sep["pairwise"]
    rec.gap = round((rec.good_mean - rec.bad_mean) / width, 6)
    if rec.pairwise < policy.min_pairwise or rec.gap < policy.min_gap:
        return fail(
            "separates",
            f"good probes do not score above bad ones: {sep['wins']}/{sep['pairs']} pairs ordered (need "
            f"{policy.min_pairwise:.0%}), mean gap {rec.gap:.3f} of the range (need {policy.min_gap:g})"
            f"{_worst(items, score, sep)}",
        )
    rec.checks["separates"] = True
    ind = [i for i, p in enumerate(items) if p.source in INDEPENDENT]
    if not probes.independent_usable:
        rec.independent = {"probes": len(ind), "usable": False}
        if policy.require_independent:
            return fail(
                "independent",
                "no probe independent of the verifier's own reading of the task (no labelled data, and the "
                "second route wrote no good and bad pair): the reading cannot be checked",
            )
    else:
        isep = _separation(items, score, ind)
        igap = round((isep["good_mean"] - isep["bad_mean"]) / width, 6)
        igood = round((isep["good_mean"] - lo) / width, 6)
        rec.independent = {
            "probes": len(ind),
            "usable": True,
            "pairwise": isep["pairwise"],
            "gap": igap,
            "good_share": igood,
            "sources": sorted({items[i].source for i in ind}),
        }
        if (
            isep["pairwise"] < policy.min_pairwise
            or igap < policy.min_gap
            or igood < policy.min_independent_good
        ):
            return fail(
                "independent",
                f"probes from an independent route disagree with the verifier: {isep['wins']}/{isep['pairs']} "
                f"pairs ordered, gap {igap:.3f}, good probes at {igood:.2f} of the range{_worst(items, score, isep)}",
            )
    rec.checks["independent"] = True
    rec.passed = True
    rec.reason = (
        f"passed: {rec.n_good} good / {rec.n_bad} bad probes, {sep['wins']}/{sep['pairs']} pairs ordered, gap "
        f"{rec.gap:.3f}; independent probes ({', '.join(rec.independent.get('sources', [])) or 'none'}): "
        f"{rec.independent.get('pairwise', '-')} ordered; deterministic over {policy.runs} runs x {policy.repeats} "
        f"calls, p95 {rec.p95_ms:.2f} ms"
    )
    return rec
