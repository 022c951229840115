"""How far a routing decision may be trusted: evidence about where the query sits in the labelled experience,
and a correctness model fitted only on decisions taken with whole formats held out.

The choice model's own probability says how clearly the exemplars and descriptions point at one tool; it does
not say whether the query is like anything the exemplars cover. A format none of them has can get a confident
choice from a few misleading neighbours. So every decision — the scorer's and the rules' — carries
:class:`Evidence`, numbers about its support:

- ``rule``: a rule decided (``rule:*`` paths), not the choice model;
- ``choice_logit``, ``choice_margin``: the logit of the choice model's probability for its choice and its lead
  over the runner-up (0 for a rule);
- ``nearest_similarity``: the cosine to the nearest exemplar; ``format_gap``: the nearest format's best
  cosine minus the next format's (a query that belongs to one known format stands out from the rest);
- ``shape_agreement``: the weighted share of the nearest exemplars, those whose reference has the query's
  routing shape first (the scorer's neighbours), that accept the decision; ``text_agreement``: the same among
  the nearest exemplars by text alone, whatever their reference; ``text_top_agrees``: whether the decision is
  what those text neighbours favour (a content that says "math word problem" beside a reference read as a
  short text disagree);
- ``shape_support``, ``structure_support``: how many exemplars (log1p) have the query's routing shape, and its
  reference's structure (:func:`reference_structure`: the keys of a mapping, what a list holds, the kind of
  string); ``structure_agreement``: the share of those same-structure exemplars that accept the decision
  (0 when there are none: a reference of a structure never seen);
- ``metadata_unseen``: the share of the query's metadata keys that no exemplar has.

"Accept the decision": the exemplar lists the chosen tool as acceptable, or, for "no tool fits", lists none.

:class:`CorrectnessModel` maps evidence to the probability that the decision is right: logistic regression on
standardised evidence (L2-penalised, Newton's method: deterministic), fitted by :func:`fit_correctness` on
held-out decisions (:mod:`rlar.routing.training`: every labelled format routed by a router whose exemplars and
weights never saw it, every format routed with all formats of its reference kind held out, and every format
routed with all formats by its author held out — the leave-one-type-out routes alone are right 96% of the time,
far more than formats really new to the labelled set are). Its ``threshold`` is where selective routing stops
taking decisions (:func:`precision_threshold`: the lowest confidence at which held-out decisions were right at
least 95% of the time).

:func:`risk_coverage` gives the coverage and precision of the decisions kept at each threshold.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from rlar.routing.boosting import Trees, fit_trees
from rlar.tasks.references import is_reference_free

if TYPE_CHECKING:
    import numpy as np

    from rlar.routing.exemplars import ExemplarBank

__all__ = [
    "EVIDENCE",
    "CorrectnessModel",
    "Evidence",
    "calibration_error",
    "cross_fitted",
    "fit_correctness",
    "fit_platt",
    "gather_evidence",
    "precision_threshold",
    "reference_structure",
    "risk_coverage",
    "selective_summary",
]

EVIDENCE = (
    "rule",
    "choice_logit",
    "choice_margin",
    "nearest_similarity",
    "format_gap",
    "shape_agreement",
    "text_agreement",
    "text_top_agrees",
    "shape_support",
    "structure_support",
    "structure_agreement",
    "metadata_unseen",
)
NEIGHBOURS = 12
"""Exemplars in each neighbourhood (as many as the scorer's votes)."""
SHARPNESS = 0.05
"""Softmax temperature of the neighbours' weights (the scorer's)."""
TARGET_PRECISION = 0.95
"""Held-out decisions at the selective threshold are right at least this often."""
WORDS = {
    "rule": "a rule decided",
    "choice_logit": "the choice model's probability",
    "choice_margin": "its lead over the runner-up",
    "nearest_similarity": "similarity to the nearest exemplar",
    "format_gap": "how clearly it belongs to one known format",
    "shape_agreement": "agreement of the same-shape neighbours",
    "text_agreement": "agreement of the nearest exemplars by text",
    "text_top_agrees": "the nearest exemplars by text favour it",
    "shape_support": "exemplars of its reference kind",
    "structure_support": "exemplars of its reference structure",
    "structure_agreement": "agreement of the exemplars of its reference structure",
    "metadata_unseen": "metadata keys no exemplar has",
}


def _string_class(s: str) -> str:
    s = s.strip()
    if re.fullmatch(r"[-+]?\d+", s):
        return "integer"
    if re.fullmatch(r"[-+]?[\d,]*\.?\d+(?:[eE][-+]?\d+)?%?", s):
        return "number"
    if "\n" in s:
        return "lines"
    words = len(s.split())
    if words == 1:
        return "token" if len(s) > 1 else "character"
    return "phrase" if words <= 4 else "text"


def _element(x: Any) -> str:
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int | float):
        return "number"
    if isinstance(x, str):
        return f"str:{_string_class(x)}" if x.strip() else "str:empty"
    if isinstance(x, Mapping):
        return "dict"
    if isinstance(x, list | tuple):
        return "list"
    return type(x).__name__


def reference_structure(reference: Any) -> str:
    """The reference's structure as the dataset ships it, in a few words: ``none``; ``bool``; ``number``;
    ``str:<integer|number|character|token|phrase|text|lines>``; ``list:<what the items are>``;
    ``dict:<its sorted keys>``. A string that holds a JSON list or mapping is read as one."""
    if is_reference_free(reference):
        return "none"
    if isinstance(reference, str) and reference.strip()[:1] in ("[", "{"):
        try:
            decoded = json.loads(reference)
        except ValueError:
            decoded = None
        if isinstance(decoded, list | dict):
            reference = decoded
    if isinstance(reference, Mapping):
        return "dict:" + ",".join(sorted(str(k) for k in reference))[:200]
    if isinstance(reference, list | tuple):
        return "list:" + "|".join(sorted({_element(x) for x in reference}))
    return _element(reference)


@dataclass(slots=True)
class Evidence:
    """The numbers :class:`CorrectnessModel` reads (``values``, keyed by :data:`EVIDENCE`), with the nearest
    formats (name, best cosine) and the reference's structure, for the decision's explanation."""

    values: dict[str, float]
    nearest: list[tuple[str, float]] = field(default_factory=list)
    structure: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "values": {k: round(v, 4) for k, v in self.values.items()},
            "nearest": [[g, round(s, 3)] for g, s in self.nearest],
            "structure": self.structure,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Evidence:
        return cls(
            {str(k): float(v) for k, v in d["values"].items()},
            [(str(g), float(s)) for g, s in d.get("nearest", [])],
            str(d.get("structure", "")),
        )

    def nearest_words(self) -> str:
        return ", ".join(f"{g} ({s:.2f})" for g, s in self.nearest) or "none"


def _weighted_share(sims: np.ndarray, idx: np.ndarray, hits: np.ndarray) -> float:

    if idx.size == 0:
        return 0.0
    w = np.exp((sims[idx] - sims[idx].max()) / SHARPNESS)
    return float((w * hits[idx]).sum() / w.sum())


def gather_evidence(
    sims: np.ndarray,
    bank: ExemplarBank,
    *,
    routing_shape: str,
    structure: str,
    metadata_keys: Sequence[str],
    decision: str | None,
    path: str,
    probabilities: Sequence[float] = (),
) -> Evidence:
    """The evidence of one decision. ``sims``: the query's cosine to every exemplar of ``bank``;
    ``decision``: the chosen tool, or None for "no tool fits"; ``path``: the deciding step (``scorer`` or a
    rule); ``probabilities``: the choice model's probabilities over the eligible tools (the scorer only)."""

    n = len(bank)
    values = dict.fromkeys(EVIDENCE, 0.0)
    scorer = path == "scorer"
    values["rule"] = 0.0 if scorer else 1.0
    if scorer and probabilities:
        ranked = sorted((float(p) for p in probabilities), reverse=True)
        values["choice_logit"] = _logit(ranked[0])
        values["choice_margin"] = ranked[0] - (ranked[1] if len(ranked) > 1 else 0.0)
    if n == 0:
        return Evidence(values, [], structure)
    hits = bank.accepts(decision)
    order = np.argsort(-sims, kind="stable")
    text_near = order[:NEIGHBOURS]
    values["nearest_similarity"] = float(sims[order[0]])
    same_shape = bank.shapes == routing_shape
    shape_order = np.argsort(-(sims + 4.0 * same_shape), kind="stable")[:NEIGHBOURS]
    values["shape_agreement"] = _weighted_share(sims, shape_order, hits)
    values["text_agreement"] = _weighted_share(sims, text_near, hits)
    options = bank.option_matrix()  # (exemplars, options): every tool some exemplar names, and "none fits"
    w = np.exp((sims[text_near] - sims[text_near].max()) / SHARPNESS)
    votes = (w[:, None] * options[text_near]).sum(axis=0)
    values["text_top_agrees"] = float(votes.max() > 0 and float(hits[text_near] @ w) >= votes.max() - 1e-9)
    best: dict[str, float] = {}
    for j in order[: min(n, 400)]:
        best.setdefault(bank.groups[j], float(sims[j]))
        if len(best) == 3:
            break
    ranked_formats = sorted(best.items(), key=lambda kv: -kv[1])
    if len(ranked_formats) > 1:
        values["format_gap"] = ranked_formats[0][1] - ranked_formats[1][1]
    values["shape_support"] = math.log1p(int(same_shape.sum()))
    same_structure = bank.structures == structure
    count = int(same_structure.sum())
    values["structure_support"] = math.log1p(count)
    values["structure_agreement"] = float(hits[same_structure].mean()) if count else 0.0
    keys = [k for k in metadata_keys]
    if keys:
        values["metadata_unseen"] = sum(k not in bank.metadata_keys for k in keys) / len(keys)
    return Evidence(values, ranked_formats, structure)


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def _sigmoid(z: float) -> float:
    """1 / (1 + e^-z) without overflow for any finite ``z``."""
    if z >= 0:
        return 1 / (1 + math.exp(-z))
    e = math.exp(z)
    return e / (1 + e)


def fit_platt(p_top: Sequence[float], correct: Sequence[bool]) -> tuple[float, float]:
    """(a, b) with P(correct) = sigmoid(a · logit(p_top) + b), by Newton's method on the log loss.

    The targets are Platt's smoothed ones ((n+ + 1) / (n+ + 2) for right, 1 / (n- + 2) for wrong), so the fit
    stays finite when the probabilities separate right from wrong (a handful of held-out routes, one type
    only); any confidence in [0, 1] is accepted (clipped to [1e-4, 1 - 1e-4] before the logit). Without
    both outcomes: a constant map at the smoothed rate."""
    ys = [1.0 if c else 0.0 for c in correct]
    if not ys or len(set(ys)) < 2:
        rate = (sum(ys) + 1) / (len(ys) + 2)
        return 0.0, _logit(rate)
    xs = [_logit(float(p)) if math.isfinite(float(p)) else 0.0 for p in p_top]
    n_pos = sum(ys)
    n_neg = len(ys) - n_pos
    hi, lo = (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2)
    ts = [hi if y else lo for y in ys]
    a, b = 1.0, 0.0

    def loss(a: float, b: float) -> float:
        total = 0.0
        for x, t in zip(xs, ts, strict=True):
            z = a * x + b
            # log(1 + e^z) - t z, stably
            total += (z if z > 0 else 0.0) + math.log1p(math.exp(-abs(z))) - t * z
        return total

    f = loss(a, b)
    for _ in range(100):
        ga = gb = haa = hab = hbb = 0.0
        for x, t in zip(xs, ts, strict=True):
            s = _sigmoid(a * x + b)
            ga += (s - t) * x
            gb += s - t
            h = s * (1 - s)
            haa += h * x * x + 1e-6
            hab += h * x
            hbb += h + 1e-6
        det = haa * hbb - hab * hab
        if det <= 0 or not math.isfinite(det):
            break
        da, db = (hbb * ga - hab * gb) / det, (haa * gb - hab * ga) / det
        step = 1.0
        while step > 1e-6:  # damped: never a step that raises the loss
            na, nb = a - step * da, b - step * db
            nf = loss(na, nb)
            if nf <= f + 1e-12:
                break
            step /= 2
        else:
            break
        a, b, f = na, nb, nf
        if step * (abs(da) + abs(db)) < 1e-9:
            break
    return a, b


def calibration_error(confidence: Sequence[float], correct: Sequence[bool], bins: int = 10) -> dict[str, Any]:
    """Expected calibration error over equal-width confidence bins, with the reliability table."""
    n = len(confidence)
    table = []
    ece = 0.0
    for k in range(bins):
        lo, hi = k / bins, (k + 1) / bins
        idx = [i for i, c in enumerate(confidence) if lo <= c < hi or (k == bins - 1 and c == 1.0)]
        if not idx:
            continue
        conf = sum(confidence[i] for i in idx) / len(idx)
        acc = sum(1 for i in idx if correct[i]) / len(idx)
        ece += len(idx) / n * abs(conf - acc)
        table.append(
            {
                "bin": f"{lo:.1f}-{hi:.1f}",
                "n": len(idx),
                "confidence": round(conf, 4),
                "accuracy": round(acc, 4),
            }
        )
    brier = sum((c - (1.0 if ok else 0.0)) ** 2 for c, ok in zip(confidence, correct, strict=True)) / max(
        1, n
    )
    return {"ece": round(ece, 4), "brier": round(brier, 4), "bins": table}


def _in_words(key: str, value: float) -> str:
    if key.endswith("_support"):  # stored as log1p(count)
        return f"{WORDS[key]} {round(math.expm1(value))}"
    return f"{WORDS[key]} {value:.2f}"


def _row(values: Mapping[str, float]) -> list[float]:
    return [float(values.get(k, 0.0)) for k in EVIDENCE]


@dataclass(slots=True)
class CorrectnessModel:
    """P(the decision is right | its evidence): boosted trees (:mod:`rlar.routing.boosting`) over
    :data:`EVIDENCE`, then a Platt map fitted on their cross-fitted probabilities; plain data."""

    trees: Trees
    platt: tuple[float, float] = (1.0, 0.0)
    typical: list[float] = field(default_factory=list)
    """Each evidence's median over the held-out decisions that were right (what :meth:`explain` compares
    with)."""
    threshold: float = TARGET_PRECISION
    """Selective routing's default: decisions below it are not taken (:func:`precision_threshold`)."""
    info: dict[str, Any] = field(default_factory=dict)

    def _probability(self, row: Sequence[float]) -> float:
        a, b = self.platt
        return _sigmoid(a * _logit(self.trees.probability(row)) + b)

    def probability(self, evidence: Evidence) -> float:
        return self._probability(_row(evidence.values))

    def explain(self, evidence: Evidence, limit: int = 3) -> str:
        """The nearest formats, the reference's structure, and the evidence that lowers the confidence most:
        those whose typical value (:attr:`typical`) would raise it most."""
        row = _row(evidence.values)
        base = self._probability(row)
        lifts = []
        for i, k in enumerate(EVIDENCE):
            if i < len(self.typical) and row[i] != self.typical[i]:
                lift = self._probability([*row[:i], self.typical[i], *row[i + 1 :]]) - base
                if lift > 0.01:
                    lifts.append((lift, k))
        parts = [_in_words(k, evidence.values.get(k, 0.0)) for _, k in sorted(lifts, reverse=True)[:limit]]
        return (
            f"nearest formats {evidence.nearest_words()}; reference structure {evidence.structure or '-'}"
            + (f"; lowered most by: {', '.join(parts)}" if parts else "")
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "evidence": list(EVIDENCE),
            "trees": self.trees.to_dict(),
            "platt": list(self.platt),
            "typical": [round(v, 6) for v in self.typical],
            "threshold": self.threshold,
            "info": dict(self.info),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CorrectnessModel:
        if list(d.get("evidence", [])) != list(EVIDENCE):
            raise ValueError("correctness model was fitted on other evidence")
        a, b = d.get("platt", (1.0, 0.0))
        return cls(
            Trees.from_dict(d["trees"]),
            (float(a), float(b)),
            [float(v) for v in d.get("typical", [])],
            float(d.get("threshold", TARGET_PRECISION)),
            dict(d.get("info", {})),
        )


FOLDS = 10
"""Group folds of the cross-fitting (:func:`cross_fitted`)."""


def _folds(groups: Sequence[str]) -> dict[str, int]:
    """Each group's fold: the groups in sorted order, dealt round-robin over :data:`FOLDS` folds."""
    return {g: i % FOLDS for i, g in enumerate(sorted(set(groups)))}


def cross_fitted(
    rows: Sequence[Mapping[str, float]], correct: Sequence[bool], groups: Sequence[str]
) -> list[float]:
    """Each row's probability from trees fitted on the rows of the other folds' groups only (its own format
    never seen, in any fold family): out-of-fold predictions, before any Platt map."""
    fold = _folds(groups)
    x = [_row(r) for r in rows]
    out = [0.0] * len(rows)
    for k in sorted(set(fold.values())):
        train = [i for i, g in enumerate(groups) if fold[g] != k]
        trees = fit_trees([x[i] for i in train], [correct[i] for i in train])
        for i, g in enumerate(groups):
            if fold[g] == k:
                out[i] = trees.probability(x[i])
    return out


def fit_correctness(
    rows: Sequence[Mapping[str, float]],
    correct: Sequence[bool],
    groups: Sequence[str],
    threshold_on: Sequence[bool] | None = None,
) -> tuple[CorrectnessModel, list[float]]:
    """A :class:`CorrectnessModel` fitted on held-out decisions (their evidence ``rows``, whether each was
    right, each one's format in ``groups``), and each decision's cross-fitted confidence (from trees that never
    saw its format, through the Platt map fitted on all of those). Its threshold is :func:`precision_threshold`
    of the cross-fitted confidences of the rows ``threshold_on`` marks (default: all)."""

    on = list(threshold_on) if threshold_on is not None else [True] * len(rows)
    raw = cross_fitted(rows, correct, groups)
    platt = fit_platt(raw, correct)
    a, b = platt
    confidence = [_sigmoid(a * _logit(p) + b) for p in raw]
    right = [_row(r) for r, c in zip(rows, correct, strict=True) if c]
    typical = [float(v) for v in np.median(np.array(right), axis=0)] if right else [0.0] * len(EVIDENCE)
    model = CorrectnessModel(
        fit_trees([_row(r) for r in rows], correct),
        platt,
        typical,
        precision_threshold(
            [c for c, k in zip(confidence, on, strict=True) if k],
            [c for c, k in zip(correct, on, strict=True) if k],
        ),
        {"decisions": len(rows), "right": int(sum(correct)), "formats": len(set(groups))},
    )
    return model, confidence


def _isotonic(values: Sequence[float]) -> list[float]:
    """Pool-adjacent-violators: the non-decreasing sequence nearest ``values`` in squared error."""
    blocks: list[list[float]] = []  # [sum, count]
    for v in values:
        blocks.append([v, 1.0])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            s, c = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += c
    out: list[float] = []
    for s, c in blocks:
        out.extend([s / c] * int(c))
    return out


def precision_threshold(
    confidence: Sequence[float], correct: Sequence[bool], target: float = TARGET_PRECISION
) -> float:
    """The lowest confidence from which held-out decisions are right at least ``target`` of the time: the
    isotonic fit of rightness on confidence (each confidence's local precision), where it first reaches
    ``target`` (1.0 when it never does). With calibrated confidences this is about ``target`` itself, and the
    decisions kept on any set of formats are then right at least ``target`` of the time."""
    pairs = sorted(zip(confidence, correct, strict=True))
    fitted = _isotonic([1.0 if c else 0.0 for _, c in pairs])
    for (conf, _), local in zip(pairs, fitted, strict=True):
        if local >= target:
            return round(float(conf), 4)
    return 1.0


THRESHOLDS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.97, 0.99)


def risk_coverage(
    confidence: Sequence[float], correct: Sequence[bool], thresholds: Sequence[float] = THRESHOLDS
) -> list[dict[str, float]]:
    """Per threshold: ``coverage`` (the share of decisions at or above it: taken) and ``precision`` (the share
    of those that are right; 1.0 when none is taken)."""
    n = len(confidence)
    out = []
    for t in sorted(set(thresholds)):
        kept = [c for conf, c in zip(confidence, correct, strict=True) if conf >= t]
        out.append(
            {
                "threshold": round(float(t), 4),
                "coverage": round(len(kept) / n, 4) if n else 0.0,
                "precision": round(sum(kept) / len(kept), 4) if kept else 1.0,
                "kept": len(kept),
            }
        )
    return out


def selective_summary(
    confidence: Sequence[float], correct: Sequence[bool], threshold: float | None
) -> dict[str, Any]:
    """The confidence figures of a set of decisions: the median confidence of the right and of the wrong
    ones, the risk–coverage curve (:func:`risk_coverage`, the ``threshold`` included) and, at ``threshold``
    (selective routing's; None: not known), the coverage and precision of the decisions taken."""

    def median(values: list[float]) -> float | None:
        if not values:
            return None
        v = sorted(values)
        mid = len(v) // 2
        return round(v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2, 4)

    right = [c for c, ok in zip(confidence, correct, strict=True) if ok]
    wrong = [c for c, ok in zip(confidence, correct, strict=True) if not ok]
    out: dict[str, Any] = {
        "median_confidence_right": median(right),
        "median_confidence_wrong": median(wrong),
        "threshold": threshold,
        "risk_coverage": risk_coverage(
            confidence, correct, [*THRESHOLDS, *([threshold] if threshold is not None else [])]
        ),
    }
    if threshold is not None:
        (at,) = risk_coverage(confidence, correct, [threshold])
        out["at_threshold"] = {k: at[k] for k in ("coverage", "precision", "kept")}
    return out
