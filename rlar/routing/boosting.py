"""Gradient-boosted trees of depth two for a binary outcome: small, deterministic, plain data.

What the correctness model of routing decisions (:mod:`rlar.routing.confidence`) is made of. Its evidence
matters in combinations — a rule's decision on a reference kind never seen is another matter than the choice
model's on one seen a thousand times — which a linear model cannot express and two levels of splits can.

:func:`fit_trees` minimises the logistic loss by Newton boosting: each round fits one tree of depth two to the
gradients and Hessians of the current scores, on candidate thresholds at the training values' quantiles
(``BINS`` per feature), with at least ``MIN_LEAF`` rows per leaf, an L2 penalty ``LAMBDA`` on leaf values and
shrinkage ``RATE``. No randomness: the same rows give the same trees. :class:`Trees` evaluates them: the score
is a logit, ``bias`` plus one leaf value per tree.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Trees", "constants", "fit_trees"]

ROUNDS = 120
RATE = 0.08
BINS = 16
MIN_LEAF = 20
LAMBDA = 1.0


def constants() -> list[float]:
    """The fitting constants (a fitted model's cache key includes them)."""
    return [ROUNDS, RATE, BINS, MIN_LEAF, LAMBDA]


@dataclass(slots=True)
class Trees:
    """An ensemble of depth-two trees. Each tree: ``[f, t, f_left, t_left, f_right, t_right, v_ll, v_lr,
    v_rl, v_rr]`` — go left when ``x[f] <= t`` (a feature index of -1 never splits: always left), then by the
    child's split to one of four leaf values."""

    bias: float
    trees: list[list[float]] = field(default_factory=list)

    def score(self, x: Sequence[float]) -> float:
        """The logit for one row."""
        z = self.bias
        for f, t, fl, tl, fr, tr, *leaves in self.trees:
            right = f >= 0 and x[int(f)] > t
            cf, ct = (fr, tr) if right else (fl, tl)
            child_right = cf >= 0 and x[int(cf)] > ct
            z += leaves[2 * int(right) + int(child_right)]
        return z

    def probability(self, x: Sequence[float]) -> float:
        z = self.score(x)
        return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))

    def to_dict(self) -> dict[str, Any]:
        return {"bias": self.bias, "trees": [[round(v, 6) for v in t] for t in self.trees]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Trees:
        trees = [[float(v) for v in t] for t in d.get("trees", [])]
        if any(len(t) != 10 for t in trees):
            raise ValueError("a tree is ten numbers")
        return cls(float(d["bias"]), trees)


def _best_split(
    codes: np.ndarray, cuts: list[np.ndarray], g: np.ndarray, h: np.ndarray, rows: np.ndarray
) -> tuple[int, float]:
    """(feature, threshold) of the best split of ``rows`` (feature -1: none worth making). ``codes[i, f]``:
    the index of the first of ``cuts[f]`` at or above row i's value (rows at or below cut k: codes <= k)."""

    width = BINS + 1
    n_features = codes.shape[1]
    flat = (codes[rows] + width * np.arange(n_features)[None, :]).ravel()
    size = width * n_features
    gsum = np.bincount(flat, weights=np.repeat(g[rows], n_features), minlength=size).reshape(
        n_features, width
    )
    hsum = np.bincount(flat, weights=np.repeat(h[rows], n_features), minlength=size).reshape(
        n_features, width
    )
    count = np.bincount(flat, minlength=size).reshape(n_features, width)
    gl, hl, nl = np.cumsum(gsum, axis=1), np.cumsum(hsum, axis=1), np.cumsum(count, axis=1)
    gs, hs = gl[0, -1], hl[0, -1]
    gain = gl**2 / (hl + LAMBDA) + (gs - gl) ** 2 / (hs - hl + LAMBDA) - gs * gs / (hs + LAMBDA)
    valid = (nl >= MIN_LEAF) & (len(rows) - nl >= MIN_LEAF)
    for i, c in enumerate(cuts):
        valid[i, c.size :] = False  # past the last cut: no split
    gain = np.where(valid, gain, -np.inf)
    best, k = (int(v) for v in np.unravel_index(int(np.argmax(gain)), gain.shape))
    if not gain[best, k] > 1e-12:
        return -1, 0.0
    return best, float(cuts[best][k])


def _leaf(g: np.ndarray, h: np.ndarray, rows: np.ndarray) -> float:
    return -RATE * float(g[rows].sum()) / (float(h[rows].sum()) + LAMBDA) if rows.size else 0.0


def fit_trees(x: Sequence[Sequence[float]], y: Sequence[bool], *, rounds: int = ROUNDS) -> Trees:
    """Trees predicting ``y`` from the rows ``x`` (see the module docstring). With fewer than two outcomes
    or ``2 * MIN_LEAF`` rows: the smoothed rate alone."""

    ya = np.array([1.0 if v else 0.0 for v in y])
    rate = (ya.sum() + 1) / (len(ya) + 2)
    model = Trees(math.log(rate / (1 - rate)))
    if len(set(ya.tolist())) < 2 or len(ya) < 2 * MIN_LEAF:
        return model
    xa = np.asarray(x, dtype=float).reshape(len(ya), -1)
    cuts = [np.unique(np.quantile(xa[:, f], np.linspace(0, 1, BINS + 1)[1:-1])) for f in range(xa.shape[1])]
    codes = np.stack([np.searchsorted(c, xa[:, f], side="left") for f, c in enumerate(cuts)], axis=1)
    z = np.full(len(ya), model.bias)
    everyone = np.arange(len(ya))
    for _ in range(rounds):
        p = 1 / (1 + np.exp(-z))
        g, h = p - ya, np.maximum(p * (1 - p), 1e-6)
        f, t = _best_split(codes, cuts, g, h, everyone)
        if f < 0:
            break
        tree: list[float] = [float(f), t]
        leaves = []
        for side in (everyone[xa[:, f] <= t], everyone[xa[:, f] > t]):
            cf, ct = _best_split(codes, cuts, g, h, side)
            tree += [float(cf), ct]
            if cf < 0:
                leaves += [_leaf(g, h, side), 0.0]
            else:
                leaves += [_leaf(g, h, side[xa[side, cf] <= ct]), _leaf(g, h, side[xa[side, cf] > ct])]
        tree += leaves
        model.trees.append(tree)
        z = z + np.asarray(tree[6:])[_leaf_index(xa, tree)]
    return model


def _leaf_index(x: np.ndarray, tree: Sequence[float]) -> np.ndarray:
    """Each row's leaf (0-3) in ``tree``."""

    f, t, fl, tl, fr, tr = tree[:6]
    right = x[:, int(f)] > t if f >= 0 else np.zeros(len(x), dtype=bool)
    cl = x[:, int(fl)] > tl if fl >= 0 else np.zeros(len(x), dtype=bool)
    cr = x[:, int(fr)] > tr if fr >= 0 else np.zeros(len(x), dtype=bool)
    child = np.where(right, cr, cl)
    return np.asarray(2 * right.astype(int) + child.astype(int))
