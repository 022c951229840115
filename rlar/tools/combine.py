"""Combine the rewards of several tools for one sample into one score.

Rule (the learner applies it per sample, over the rewards of the tools its route named):

- Only ``ok`` results with a finite score count. ``abstain`` and ``error`` results are left out — neither
  is the policy's doing, so they must not pull the score towards 0 — and the weights of the others are
  renormalised: ``score = sum(w_i * s_i) / sum(w_i)`` over the ok results with ``w_i > 0``.
- If no ok result with a positive weight remains, the sample is ``("abstain", None)``: the learner masks it
  rather than scoring it 0.
- Weights must be finite and >= 0 (a negative or NaN weight is a routing bug: ``ValueError``). A zero
  weight keeps a tool for observation only.

Consequence to keep in mind: when a heavily weighted tool abstains, the sample's score is decided by the
remaining tools alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

__all__ = ["combine"]


def combine(rewards: Iterable[tuple[float, str, float | None]]) -> tuple[str, float | None]:
    """``(status, score)`` from ``(weight, status, score)`` triples; see the module docstring for the rule."""
    total_w = 0.0
    total = 0.0
    for weight, status, score in rewards:
        w = float(weight)
        if not math.isfinite(w) or w < 0:
            raise ValueError(f"reward weight must be finite and >= 0, got {weight!r}")
        if status != "ok" or score is None or w == 0.0:
            continue
        s = float(score)
        if not math.isfinite(s):
            continue  # an ok result never carries one (finalize), but a hand-made one might
        total_w += w
        total += w * s
    if total_w == 0.0:
        return "abstain", None
    return "ok", total / total_w
