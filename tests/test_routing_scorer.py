"""The scorer's fitting and calibration, and held-out evaluation that really holds the type out — on small
synthetic inputs and a bag-of-words embedding, so no model is needed."""

from __future__ import annotations

import hashlib
import math
import random

import numpy as np

from rlar.routing.exemplars import ExemplarBank
from rlar.routing.scorer import FEATURES, calibration_error, fit_platt, fit_weights
from rlar.routing.training import Trainer
from rlar.tools import builtin_specs


def bag_of_words(texts: list[str]) -> list[list[float]]:
    out = []
    for t in texts:
        v = np.zeros(64)
        for w in t.lower().split():
            v[int(hashlib.sha256(w.encode()).hexdigest(), 16) % 64] += 1.0
        out.append(list(v / (np.linalg.norm(v) or 1.0)))
    return out


def test_fitting_finds_the_informative_feature_deterministically() -> None:
    rng = random.Random(0)
    n, c, d = 200, 3, len(FEATURES)
    x = np.zeros((n, c, d))
    y = np.zeros((n, c), dtype=bool)
    for i in range(n):
        right = rng.randrange(c)
        x[i, :, 0] = [0.9 if j == right else rng.random() * 0.5 for j in range(c)]  # the votes point at it
        x[i, :, 2] = [rng.random() for _ in range(c)]  # noise
        y[i, right] = True
    mask = np.ones((n, c), dtype=bool)
    w = fit_weights(x, mask, y)
    assert w[0] > 3 and abs(w[2]) < 1 and np.array_equal(w, fit_weights(x, mask, y))


def test_platt_scaling_calibrates_and_ece_measures_it() -> None:
    rng = random.Random(1)
    p_top = [rng.uniform(0.3, 1.0) for _ in range(2000)]
    truth = [min(1.0, p + 0.15) for p in p_top]  # the raw score is too modest
    correct = [rng.random() < t for t in truth]
    a, b = fit_platt(p_top, correct)
    calibrated = [1 / (1 + math.exp(-(a * math.log(p / (1 - p + 1e-9) + 1e-9) + b))) for p in p_top]
    raw, fixed = calibration_error(p_top, correct)["ece"], calibration_error(calibrated, correct)["ece"]
    assert raw > 0.1 and fixed < 0.04
    assert calibration_error([1.0, 1.0], [False, False])["ece"] == 1.0


def test_leave_one_type_out_never_sees_the_held_out_types_exemplars() -> None:
    # Two types with the same texts but different labels: held out, a type can only learn from the other.
    texts = [f"rewrite this sentence please number {i} about the river and the town" for i in range(6)]
    records = [
        {"id": f"{kind}-{i}", "type": kind, "task": kind, "query": t, "reference": "A rewritten sentence about a town.",
         "acceptable": [label]}
        for kind, label in (("alpha", "chrf"), ("beta", "embedding_similarity")) for i, t in enumerate(texts)
    ]  # fmt: skip
    records += [
        {"id": f"gamma-{i}", "type": "gamma", "task": "gamma", "query": f"what is {i} plus {i}", "reference": str(2 * i),
         "acceptable": ["math_verify"]}
        for i in range(6)
    ]  # fmt: skip
    trainer = Trainer(ExemplarBank.from_records(records, bag_of_words), builtin_specs(), bag_of_words)
    held = {(r.group, r.tools[0]) for r in trainer.held_out_routes()}
    assert ("alpha", "embedding_similarity") in held and ("beta", "chrf") in held, held
    inside = {(trainer.bank.exemplars[r.index].group, r.tools[0]) for r in trainer.in_distribution_routes()}
    assert ("alpha", "chrf") in inside and ("beta", "embedding_similarity") in inside, inside
