"""Vouching for a judge: before a judge rewards a task, it must order labelled pairs of responses.

A judge (``llm_judge``, or any tool of kind ``judge``) is a model asked for a score; nothing about its
configuration says it can tell a right answer from a wrong one. So before the router lets one reward a task
signature, the judge grades **labelled pairs** — a response known to be better and one known to be worse, for
the same query — and must put the better one strictly above the worse one often enough:

- pairs from the task's labelled ``examples`` (``[[tasks]] examples``): every right response against every
  wrong one for the same query (:func:`pairs_from_examples`);
- pairs from the signature's records that carry a reference (:func:`pairs_from_references`): the reference
  itself against a wrong answer of its own form (another number, letter, label, another record's reference,
  other words of the query), against the empty response and against the query echoed back.

The core is pure (:func:`judge_agreement`: pair scores in, :class:`VouchReport` out): the **agreement** is the
share of pairs the judge ordered strictly (a tie, an abstention or an error on either side counts as not
ordered — such a pair gives the policy no signal), with a Wilson score interval at ``confidence``; the judge is
``vouched`` when there are at least ``min_pairs`` pairs and the interval's lower end reaches ``threshold``,
else ``refused`` with the figure in ``reason``. :func:`grade_pairs` scores the pairs with any batch scorer
(the router's tool executor), each distinct input once.

Limits: the reference-based pairs are easy (a judge that sees the reference is shown it again as the better
response); they catch a judge that cannot read, does not answer in the asked form or scores at random, not a
subtly biased one. Labelled examples of the task are the stronger evidence; the report says which pairs it
used (``sources``).
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rlar.routing.query import RoutingQuery
from rlar.tasks.references import answer_strings, reference_shape
from rlar.tools.base import ToolInput, ToolResult

__all__ = [
    "JudgeVouchPolicy",
    "LabelledPair",
    "PairScore",
    "VouchReport",
    "grade_pairs",
    "judge_agreement",
    "pairs_from_examples",
    "pairs_from_references",
    "vouch_pairs",
    "wilson_interval",
    "wrong_answer",
]


class JudgeVouchPolicy(BaseModel):
    """``[router] judge_vouch``: when a judge may reward a task (see :mod:`rlar.routing.judge_vouch`)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    """Vouch for every judge-kind tool before it rewards a task signature (off: judges are trusted)."""
    threshold: float = Field(0.6, ge=0, le=1)
    """The lower end of the agreement's Wilson interval must reach this (0.5 is chance for a pair)."""
    confidence: float = Field(0.95, gt=0, lt=1)
    """Confidence of the Wilson interval on the agreement."""
    min_pairs: int = Field(6, ge=1)
    """Fewer labelled pairs than this: refused (too little evidence), whatever the agreement."""
    max_pairs: int = Field(12, ge=1)
    """Most pairs graded per signature (examples first, then reference pairs); each costs up to two judge
    calls, distinct responses are scored once."""
    timeout_s: float = Field(120.0, gt=0)
    """Deadline of one judge call while vouching."""
    trusted: list[str] = Field(default_factory=list)
    """Judge tool names not vouched for (you vouch for them): they reward without grading pairs."""


@dataclass(frozen=True, slots=True)
class LabelledPair:
    """Two responses to one query, ``better`` known to deserve a higher score than ``worse``."""

    query: str
    reference: Any
    better: str
    worse: str
    source: str
    """``example`` (the user's labelled responses), ``wrong_form``, ``empty`` or ``echo`` (from a reference)."""
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PairScore:
    """What the judge gave both sides of one pair: ``status`` ok | abstain | error per side."""

    pair: LabelledPair
    better: float | None
    worse: float | None
    better_status: str = "ok"
    worse_status: str = "ok"
    reason: str = ""

    @property
    def ordered(self) -> bool:
        return self.better is not None and self.worse is not None and self.better > self.worse

    @property
    def outcome(self) -> str:
        """``ordered``, ``tied``, ``reversed`` or ``unscored`` (an abstention or an error on a side)."""
        if self.better is None or self.worse is None:
            return "unscored"
        if self.better > self.worse:
            return "ordered"
        return "tied" if self.better == self.worse else "reversed"


@dataclass(slots=True)
class VouchReport:
    """The verdict on one judge for one task signature."""

    tool: str
    version: int
    verdict: str
    """``vouched``, ``refused`` or ``trusted`` (named in ``trusted``: not graded)."""
    agreement: float = 0.0
    ci_low: float = 0.0
    ci_high: float = 0.0
    pairs: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    sources: dict[str, int] = field(default_factory=dict)
    threshold: float = 0.0
    confidence: float = 0.95
    reason: str = ""
    unscored_reasons: list[str] = field(default_factory=list)

    @property
    def refused(self) -> bool:
        return self.verdict == "refused"

    def figure(self) -> str:
        """``agreement 0.42 (95% CI 0.19-0.68) on 12 pairs``."""
        return (
            f"agreement {self.agreement:.2f} ({self.confidence:.0%} CI {self.ci_low:.2f}-{self.ci_high:.2f})"
            f" on {self.pairs} labelled pairs"
        )

    def short(self) -> str:
        """``llm_judge v2 refused: agreement 0.42 (95% CI 0.19-0.68) on 12 labelled pairs < 0.6``."""
        return f"{self.tool} v{self.version} {self.verdict}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "version": self.version,
            "verdict": self.verdict,
            "agreement": round(self.agreement, 4),
            "ci_low": round(self.ci_low, 4),
            "ci_high": round(self.ci_high, 4),
            "pairs": self.pairs,
            "outcomes": dict(self.outcomes),
            "sources": dict(self.sources),
            "threshold": self.threshold,
            "confidence": self.confidence,
            "reason": self.reason[:300],
            "unscored_reasons": [r[:160] for r in self.unscored_reasons[:3]],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> VouchReport:
        return cls(
            tool=str(d.get("tool", "")),
            version=int(d.get("version", 0)),
            verdict=str(d.get("verdict", "")),
            agreement=float(d.get("agreement", 0.0)),
            ci_low=float(d.get("ci_low", 0.0)),
            ci_high=float(d.get("ci_high", 0.0)),
            pairs=int(d.get("pairs", 0)),
            outcomes={str(k): int(v) for k, v in (d.get("outcomes") or {}).items()},
            sources={str(k): int(v) for k, v in (d.get("sources") or {}).items()},
            threshold=float(d.get("threshold", 0.0)),
            confidence=float(d.get("confidence", 0.95)),
            reason=str(d.get("reason", "")),
            unscored_reasons=[str(x) for x in d.get("unscored_reasons") or []],
        )


# -- the pure core ----------------------------------------------------------------------------------------
def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion ``successes / n`` (``(0, 1)`` when ``n == 0``)."""
    if n <= 0:
        return 0.0, 1.0
    if not 0 <= successes <= n:
        raise ValueError(f"successes {successes} outside 0..{n}")
    z = statistics.NormalDist().inv_cdf(0.5 + confidence / 2)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def judge_agreement(
    tool: str,
    version: int,
    scores: Sequence[PairScore],
    *,
    threshold: float,
    confidence: float = 0.95,
    min_pairs: int = 1,
) -> VouchReport:
    """The verdict from the pairs' scores (see the module docstring): agreement = strictly ordered pairs / all
    pairs, Wilson interval at ``confidence``; ``vouched`` when ``len(scores) >= min_pairs`` and the interval's
    lower end is at least ``threshold``."""
    n = len(scores)
    outcomes = Counter(s.outcome for s in scores)
    ordered = outcomes.get("ordered", 0)
    low, high = wilson_interval(ordered, n, confidence)
    report = VouchReport(
        tool=tool,
        version=int(version),
        verdict="refused",
        agreement=ordered / n if n else 0.0,
        ci_low=low,
        ci_high=high,
        pairs=n,
        outcomes=dict(outcomes),
        sources=dict(Counter(s.pair.source for s in scores)),
        threshold=threshold,
        confidence=confidence,
        unscored_reasons=list(
            dict.fromkeys(s.reason for s in scores if s.outcome == "unscored" and s.reason)
        ),
    )
    if n == 0:
        report.reason = "no labelled pairs to grade (give the task labelled examples: [[tasks]] examples)"
        return report
    detail = ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()))
    if n < min_pairs:
        report.reason = f"{report.figure()} ({detail}): fewer than the {min_pairs} pairs needed"
        return report
    if low < threshold:
        why = f"; unscored: {report.unscored_reasons[0]}" if report.unscored_reasons else ""
        report.reason = f"{report.figure()} ({detail}): lower bound {low:.2f} < threshold {threshold:g}{why}"
        return report
    report.verdict = "vouched"
    report.reason = f"{report.figure()} ({detail}): lower bound {low:.2f} >= threshold {threshold:g}"
    return report


# -- pairs ------------------------------------------------------------------------------------------------
_NUMBER = re.compile(r"^[-+]?\d+(?:[.,]\d+)?$")
_NUM_IN = re.compile(r"(?<![\w.])(\d+)(\.\d+)?(?!\d)")
_OPPOSITE = {"true": "false", "false": "true", "yes": "no", "no": "yes", "1": "0", "0": "1"}


def _norm(text: str) -> str:
    return " ".join(text.casefold().split()).strip(" .!?;:")


def wrong_answer(reference: Any, query: str, others: Sequence[Any] = ()) -> str | None:
    """A wrong answer of the reference's own form: another record's different reference, else a number
    shifted, another option letter, the opposite label, the same text with its numbers changed, or other words
    of the query; None when none can be made."""
    answers = [a for a in answer_strings(reference) or [] if a.strip()]
    if not answers:
        return None
    own = {_norm(a) for a in answers}
    for other in others:
        for text in answer_strings(other) or []:
            if text.strip() and _norm(text) not in own:
                return text.strip()
    ref = answers[0].strip()
    shape = reference_shape(reference, {})
    if _NUMBER.match(ref):
        value = float(ref.replace(",", ""))
        wrong = value + 1 if value != -1 else value + 2
        return str(int(wrong)) if wrong.is_integer() and "." not in ref else f"{wrong:g}"
    if shape == "choice" and len(ref) <= 3:
        letter = ref.strip("() .").upper()[:1]
        return "B" if letter == "A" else "A"
    if ref.casefold() in _OPPOSITE:
        return _OPPOSITE[ref.casefold()]
    if _NUM_IN.search(ref):
        return _NUM_IN.sub(lambda m: f"{int(m.group(1)) + 1}{m.group(2) or ''}", ref)
    words = [w.strip(".,;:!?\"'()") for w in query.split()]
    picked = [w for w in words if len(w) > 3 and _norm(w) not in own and w.casefold() not in ref.casefold()]
    if not picked:
        return None
    size = max(1, min(len(ref.split()), len(picked)))
    return " ".join(picked[-size:])


def pairs_from_references(records: Sequence[RoutingQuery]) -> list[LabelledPair]:
    """Per record with a text reference: the reference against a wrong answer of its form, the empty response
    and the query echoed (when the echo is not itself an acceptable answer)."""
    out: list[LabelledPair] = []
    for rec in records:
        answers = [a for a in answer_strings(rec.reference) or [] if a.strip()]
        if not answers:
            continue
        better = answers[0]
        own = {_norm(a) for a in answers}
        others = [r.reference for r in records if r is not rec]
        meta = dict(rec.metadata)
        wrong = wrong_answer(rec.reference, rec.query, others)
        if wrong is not None and _norm(wrong) not in own:
            out.append(LabelledPair(rec.query, rec.reference, better, wrong, "wrong_form", meta))
        out.append(LabelledPair(rec.query, rec.reference, better, "", "empty", meta))
        if rec.query.strip() and _norm(rec.query) not in own:
            out.append(LabelledPair(rec.query, rec.reference, better, rec.query, "echo", meta))
    return out


def pairs_from_examples(
    examples: Sequence[Mapping[str, Any]], default_query: str, reference: Any = None
) -> list[LabelledPair]:
    """Every right example against every wrong one answering the same query (``query`` of an example, else
    ``default_query``: the task's first prompt)."""
    by_query: dict[str, tuple[list[str], list[str]]] = {}
    for ex in examples:
        query = str(ex.get("query") or default_query)
        good, bad = by_query.setdefault(query, ([], []))
        (good if ex.get("ok") else bad).append(str(ex.get("response", "")))
    out: list[LabelledPair] = []
    for query, (good, bad) in by_query.items():
        ref = reference if query == default_query else None
        out.extend(LabelledPair(query, ref, g, b, "example") for g in good for b in bad)
    return out


def vouch_pairs(
    records: Sequence[RoutingQuery], examples: Sequence[Mapping[str, Any]] = (), *, max_pairs: int = 12
) -> list[LabelledPair]:
    """The pairs to grade for a signature: the examples' first, then the references', interleaved by source
    so a cut keeps every kind; at most ``max_pairs``."""
    first = records[0] if records else None
    own = pairs_from_examples(examples, first.query if first else "", first.reference if first else None)
    by_source: dict[str, list[LabelledPair]] = {}
    for p in pairs_from_references(records):
        by_source.setdefault(p.source, []).append(p)
    interleaved: list[LabelledPair] = []
    queues = list(by_source.values())
    while any(queues):
        for q in queues:
            if q:
                interleaved.append(q.pop(0))
    return [*own, *interleaved][:max_pairs]


Score = Callable[[list[ToolInput]], Awaitable[Sequence[ToolResult]]]


async def grade_pairs(pairs: Sequence[LabelledPair], score: Score) -> list[PairScore]:
    """Both sides of every pair scored by ``score`` (one batch; each distinct input once)."""
    keys: dict[tuple[str, str, str], int] = {}
    inputs: list[ToolInput] = []
    for p in pairs:
        for response in (p.better, p.worse):
            key = (p.query, response, repr(p.reference))
            if key not in keys:
                keys[key] = len(inputs)
                inputs.append(ToolInput(p.query, response, p.reference, dict(p.metadata)))
    results = list(await score(inputs)) if inputs else []
    if len(results) != len(inputs):
        raise ValueError(f"the scorer returned {len(results)} results for {len(inputs)} inputs")

    def side(p: LabelledPair, response: str) -> ToolResult:
        return results[keys[(p.query, response, repr(p.reference))]]

    out = []
    for p in pairs:
        b, w = side(p, p.better), side(p, p.worse)
        reasons = [r.reason for r in (b, w) if not r.ok and r.reason]
        out.append(
            PairScore(
                p,
                b.score if b.ok else None,
                w.score if w.ok else None,
                b.status,
                w.status,
                reasons[0] if reasons else "",
            )
        )
    return out
