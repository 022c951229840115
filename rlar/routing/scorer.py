"""The offline router's scorer: a choice model over the eligible tools, fitted on labelled exemplars.

For a query and each tool the rules leave eligible, a row of features (:data:`FEATURES`):

- ``knn``: the vote of the query's nearest labelled exemplars: the :data:`K_NEIGHBOURS` nearest (cosine of
  all-MiniLM-L6-v2 embeddings; exemplars whose reference has the query's shape first) among those whose label
  names an eligible tool, weighted ``exp((cos - cos_max) / TEMPERATURE)``: the weighted share of them that
  call this tool acceptable;
- ``new_tool``: no exemplar names this tool (a user's or a synthesised tool) — it is chosen on its description;
- ``description``: cosine between the query and the tool's description (with its declared task types and answer
  formats), minus the best such cosine among the eligible tools; ``new_tool_x_description`` the same for new
  tools only;
- ``answer_format_fit``: the tool declares an answer format suited to the reference's shape;
- ``compares_reference``: the tool compares with a reference and the query has one;
- ``kind:<kind>``: one indicator per tool kind (rule, metric, sandbox, model, judge);
- ``<tool>*<relation>``: for each tool some exemplar names (the model's ``tools``), the reference's relation
  to the query (:class:`rlar.tasks.references.Relation`: copied from it, word overlap, another language,
  relative length, an edited copy) when the candidate is that tool — so that, say, an answer in another
  language than its query can favour one metric over another. Only answer texts have a relation
  (:data:`rlar.routing.query.RELATION_SHAPES`); for numbers, letters, labels and LaTeX these are zero.

The score is ``weights · row``; probabilities are its softmax over the eligible tools. The weights are fitted
(:func:`fit_weights`: maximum likelihood that the choice is an acceptable tool, L2-penalised, deterministic)
on exemplars whose neighbours exclude their own benchmark type, so the fit sees the situation of a new kind of
task; each exemplar also appears with one eligible tool hidden from the labels, as a new tool
would be. Nothing here is set by hand except ``K_NEIGHBOURS``, ``TEMPERATURE`` and the fitting constants,
fixed before any evaluation.

Confidence is not the choice model's probability: a decision's chance of being right is estimated from its
evidence (that probability among it) by :class:`rlar.routing.confidence.CorrectnessModel`, which the model
carries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from rlar.routing.confidence import CorrectnessModel
from rlar.routing.rules import needs_reference
from rlar.tasks.references import Relation
from rlar.tools.base import ToolKind, ToolSpec

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "FEATURES",
    "K_NEIGHBOURS",
    "TEMPERATURE",
    "ScorerModel",
    "candidate_rows",
    "feature_names",
    "fit_weights",
    "knn_votes",
    "neighbour_order",
    "tool_text",
]

K_NEIGHBOURS = 12
TEMPERATURE = 0.05
KINDS = tuple(k.value for k in ToolKind)
FEATURES = (
    "knn",
    "new_tool",
    "description",
    "new_tool_x_description",
    "answer_format_fit",
    "compares_reference",
    *(f"kind:{k}" for k in KINDS),
)
RELATIONS = ("extractive", "overlap", "language_shift", "length_ratio", "edit_similarity")
L2 = 1e-3
STEPS = 300

SHAPE_FORMATS: dict[str, frozenset[str]] = {
    "none": frozenset({"any", "free_text", "paragraph", "text"}),
    "code_tests": frozenset({"python_code", "code_block", "function", "program"}),
    "program": frozenset({"python_code", "code_block", "program", "sql", "query"}),
    "choice": frozenset({"choice_letter", "label"}),
    "label": frozenset({"label", "boolean"}),
    "number": frozenset({"number", "expression", "fraction", "latex", "boxed", "integer"}),
    "math": frozenset({"latex", "boxed", "expression", "fraction", "number"}),
    "short_text": frozenset({"short_text", "label", "word"}),
    "text": frozenset({"sentence", "paragraph", "free_text", "text"}),
    "structured": frozenset({"json", "structured", "object"}),
}


def tool_text(spec: ToolSpec) -> str:
    """What the scorer embeds for a tool: its description and what it declares."""
    return (
        f"{spec.description} Task types: {', '.join(spec.task_types) or '-'}."
        f" Answer formats: {', '.join(spec.answer_formats) or '-'}."
    )


def neighbour_order(sims: np.ndarray, same_shape: np.ndarray) -> np.ndarray:
    """Exemplar indices, nearest first: those whose reference has the query's shape before all others, each
    part by decreasing cosine (works row-wise on matrices too)."""

    return np.argsort(-(sims + 4.0 * same_shape), axis=-1, kind="stable")


def knn_votes(sims: np.ndarray, order: np.ndarray, labels: np.ndarray, usable: np.ndarray) -> np.ndarray:
    """Each candidate's share of the weighted vote of the nearest exemplars (see the module docstring).

    ``sims``: cosine to every exemplar; ``order``: :func:`neighbour_order`; ``labels``: (exemplars, candidates)
    booleans, acceptable or not; ``usable``: exemplars that may vote (not left out)."""

    relevant = usable & labels.any(axis=1)
    top = order[relevant[order]][:K_NEIGHBOURS]
    if top.size == 0:
        return np.zeros(labels.shape[1])
    w = np.exp((sims[top] - sims[top].max()) / TEMPERATURE)
    return (w[:, None] * labels[top]).sum(axis=0) / w.sum()


def feature_names(tools: Sequence[str]) -> list[str]:
    """The scorer's features for a model whose exemplars name ``tools``."""
    return [*FEATURES, *(f"{t}*{r}" for t in tools for r in RELATIONS)]


def relation_values(relation: Relation) -> list[float]:
    r = relation
    return [float(r.extractive), r.overlap, float(r.language_shift), r.length_ratio / 6, r.edit_similarity]


def candidate_rows(
    votes: np.ndarray,
    description_cos: np.ndarray,
    specs: Sequence[ToolSpec],
    new: Sequence[bool],
    shape: str,
    relation: Relation,
    tools: Sequence[str],
) -> np.ndarray:
    """The feature rows (candidates, len(feature_names(tools))) of one query's eligible tools."""

    rel = description_cos - description_cos.max()
    rows = np.zeros((len(specs), len(FEATURES) + len(tools) * len(RELATIONS)))
    fits = SHAPE_FORMATS.get(shape, frozenset())
    values = relation_values(relation)
    column = {t: len(FEATURES) + i * len(RELATIONS) for i, t in enumerate(tools)}
    for i, spec in enumerate(specs):
        rows[i, 0] = 0.0 if new[i] else votes[i]
        rows[i, 1] = float(new[i])
        rows[i, 2] = rel[i]
        rows[i, 3] = rel[i] if new[i] else 0.0
        rows[i, 4] = float(bool({f.lower() for f in spec.answer_formats} & fits))
        rows[i, 5] = float(shape != "none" and needs_reference(spec) != "none")
        rows[i, 6 + KINDS.index(str(spec.kind))] = 1.0
        if not new[i] and spec.name in column:
            rows[i, column[spec.name] : column[spec.name] + len(RELATIONS)] = values
    return rows


def _softmax(z: np.ndarray, mask: np.ndarray) -> np.ndarray:

    z = np.where(mask, z, -np.inf)
    z = z - z.max(axis=-1, keepdims=True)
    e = np.where(mask, np.exp(z), 0.0)
    return e / e.sum(axis=-1, keepdims=True)


def fit_weights(
    x: np.ndarray, mask: np.ndarray, y: np.ndarray, start: np.ndarray | None = None
) -> np.ndarray:
    """Weights maximising the likelihood that the choice is acceptable (L2-penalised). ``x``: feature rows
    (queries, candidates, features), padded; ``mask``: real candidates; ``y``: acceptable ones (at least one
    per query). ``start``: initial weights (the optimum does not depend on them; a near one saves steps).

    The loss is ``mean(-log sum_{acceptable} p) + L2 |w|^2``, minimised by L-BFGS (10 pairs) with a
    backtracking line search: deterministic."""

    n, d = x.shape[0], x.shape[2]
    if n == 0:  # nothing to fit on (every exemplar left out, or none with two eligible tools)
        return np.zeros(d) if start is None else np.array(start, dtype=float)

    def loss_grad(w: np.ndarray) -> tuple[float, np.ndarray]:
        p = _softmax(x @ w, mask)
        acc = np.where(y, p, 0.0)
        mass = acc.sum(axis=1)
        q = acc / np.maximum(mass, 1e-300)[:, None]  # posterior over the acceptable choices
        grad = np.einsum("nc,ncd->d", p - q, x) / n + 2 * L2 * w
        return float(-np.log(mass + 1e-300).mean() + L2 * w @ w), grad

    w = np.zeros(d) if start is None else np.array(start, dtype=float)
    f, g = loss_grad(w)
    pairs: list[tuple[np.ndarray, np.ndarray, float]] = []
    for _ in range(STEPS):
        # Two-loop recursion: direction = -H g from the stored curvature pairs.
        direction = -g.copy()
        alphas = []
        for s_k, y_k, rho in reversed(pairs):
            a = rho * float(s_k @ direction)
            alphas.append(a)
            direction -= a * y_k
        if pairs:
            s_k, y_k, _ = pairs[-1]
            direction *= float(s_k @ y_k) / float(y_k @ y_k)
        for (s_k, y_k, rho), a in zip(pairs, reversed(alphas), strict=True):
            direction += s_k * (a - rho * float(y_k @ direction))
        slope = float(g @ direction)
        if slope >= 0:  # not a descent direction: restart from the gradient
            pairs.clear()
            direction, slope = -g, -float(g @ g)
        t = 1.0
        while True:
            w_new = w + t * direction
            f_new, g_new = loss_grad(w_new)
            if f_new <= f + 1e-4 * t * slope or t < 1e-8:
                break
            t /= 2
        s_k, y_k = w_new - w, g_new - g
        if float(s_k @ y_k) > 1e-12:
            pairs.append((s_k, y_k, 1.0 / float(s_k @ y_k)))
            pairs = pairs[-10:]
        done = f - f_new < 1e-8 and float(np.abs(g_new).max()) < 1e-4
        w, f, g = w_new, f_new, g_new
        if done:
            break
    return w


@dataclass(slots=True)
class ScorerModel:
    """Fitted weights and the correctness model of the decisions they lead to; plain data (``to_dict``)."""

    weights: list[float]
    tools: list[str] = field(default_factory=list)
    """The tools the exemplars name (the per-tool features' order)."""
    correctness: CorrectnessModel | None = None
    """How likely a decision is right given its evidence (:mod:`rlar.routing.confidence`); None while the
    weights are being fitted or evaluated (decisions then have confidence 0)."""
    info: dict[str, Any] = field(default_factory=dict)

    def probabilities(self, rows: np.ndarray) -> np.ndarray:

        return _softmax(rows @ np.asarray(self.weights), np.ones(len(rows), dtype=bool))

    def to_dict(self) -> dict[str, Any]:
        return {
            "features": feature_names(self.tools),
            "weights": list(self.weights),
            "tools": list(self.tools),
            "correctness": self.correctness.to_dict() if self.correctness is not None else None,
            "info": dict(self.info),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ScorerModel:
        tools = [str(t) for t in d.get("tools", [])]
        if list(d.get("features", [])) != feature_names(tools) or len(d["weights"]) != len(
            feature_names(tools)
        ):
            raise ValueError("scorer model was fitted with other features")
        correctness = d.get("correctness")
        return cls(
            [float(w) for w in d["weights"]],
            tools,
            CorrectnessModel.from_dict(correctness) if correctness else None,
            dict(d.get("info", {})),
        )
