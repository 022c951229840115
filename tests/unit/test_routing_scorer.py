"""The scorer's fitting and calibration, and held-out evaluation that really holds the type out — on small
synthetic inputs and a bag-of-words embedding, so no model is needed."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlar.benchmarks.routing import _baselines, _held_out_figures
from rlar.routing.confidence import calibration_error, fit_platt
from rlar.routing.exemplars import ExemplarBank
from rlar.routing.scorer import FEATURES, fit_weights
from rlar.routing.training import Trainer
from rlar.tools import builtin_specs
from tests.support.embedding import bag_of_words


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


def _platt(a: float, b: float, p: float) -> float:
    """The Platt map as the correctness model applies it (logit clipped to [1e-4, 1 - 1e-4])."""
    p = min(max(p, 1e-4), 1 - 1e-4)
    z = a * math.log(p / (1 - p)) + b
    return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))


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
        {
            "id": f"{kind}-{i}",
            "type": kind,
            "task": kind,
            "query": t,
            "reference": "A rewritten sentence about a town.",
            "acceptable": [label],
        }
        for kind, label in (("alpha", "chrf"), ("beta", "embedding_similarity"))
        for i, t in enumerate(texts)
    ]
    records += [
        {
            "id": f"gamma-{i}",
            "type": "gamma",
            "task": "gamma",
            "query": f"what is {i} plus {i}",
            "reference": str(2 * i),
            "acceptable": ["math_verify"],
        }
        for i in range(6)
    ]
    trainer = Trainer(ExemplarBank.from_records(records, bag_of_words), builtin_specs(), bag_of_words)
    held = {(r.group, r.tools[0]) for r in trainer.held_out_routes()}
    assert ("alpha", "embedding_similarity") in held and ("beta", "chrf") in held, held
    inside = {(trainer.bank.exemplars[r.index].group, r.tools[0]) for r in trainer.in_distribution_routes()}
    assert ("alpha", "chrf") in inside and ("beta", "embedding_similarity") in inside, inside


def test_leave_one_hand_out_holds_every_format_of_one_author_out_together() -> None:
    # Two authors wrote a format each of the same kind of rewrite, labelled differently: with its type alone held
    # out, a format learns from its author's sibling; with its author held out, only from the other author.
    texts = [f"rewrite this sentence please number {i} about the river and the town" for i in range(4)]
    records = [
        {
            "id": f"{kind}-{i}",
            "type": kind,
            "query": t + suffix,
            "reference": "A rewritten sentence about a town.",
            "acceptable": [label],
            **({"origin": origin} if origin else {}),
        }
        for kind, label, origin, suffix in (
            ("alpha", "chrf", "set_a", ""),
            ("alpha2", "chrf", "set_a", " again"),
            ("beta", "embedding_similarity", "", ""),
        )
        for i, t in enumerate(texts)
    ]
    trainer = Trainer(ExemplarBank.from_records(records, bag_of_words), builtin_specs(), bag_of_words)
    assert trainer.hands() == {"set_a": {"alpha", "alpha2"}, "generated": {"beta"}}
    by_type = {(r.group, r.tools[0]) for r in trainer.held_out_routes()}
    by_hand = {(r.group, r.tools[0]) for r in trainer.hand_held_out_routes()}
    assert ("alpha", "chrf") in by_type, by_type
    assert ("alpha", "embedding_similarity") in by_hand and ("alpha2", "embedding_similarity") in by_hand, (
        by_hand
    )
    assert {r.family for r in trainer.hand_held_out_routes()} == {"hand"}
    one_author = [{k: v for k, v in r.items() if k != "origin"} for r in records]
    alone = Trainer(ExemplarBank.from_records(one_author, bag_of_words), builtin_specs(), bag_of_words)
    assert alone.hand_held_out_routes() == []


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=0, max_size=40),
    st.data(),
)
def test_platt_scaling_fits_any_confidences_and_outcomes(p_top: list[float], data: st.DataObject) -> None:
    correct = data.draw(st.lists(st.booleans(), min_size=len(p_top), max_size=len(p_top)))
    a, b = fit_platt(p_top, correct)
    assert math.isfinite(a) and math.isfinite(b)
    assert all(0.0 <= _platt(a, b, p) <= 1.0 for p in (0.0, 1e-12, 0.5, 1 - 1e-12, 1.0, *p_top))


def test_platt_scaling_stays_finite_when_confidence_separates_right_from_wrong() -> None:
    # Every wrong route at p=1e-4, every right one at 1-1e-4: plain Newton on 0/1 targets runs off to infinity.
    a, b = fit_platt([1e-9] * 5 + [1.0] * 5, [False] * 5 + [True] * 5)
    assert math.isfinite(a) and 0.5 < _platt(a, b, 1.0) < 1.0 and 0.0 < _platt(a, b, 0.0) < 0.5


_TOOLS = [s.name for s in builtin_specs()]
_REFERENCES = st.one_of(
    st.none(),
    st.just(""),
    st.integers(-5, 500),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.sampled_from(
        [
            "B",
            "1",
            "Paris",
            "4.0 cm",
            "x^2+1",
            "\\boxed{3}",
            "SELECT a FROM t",
            "a long answer text of several words",
            "#### 12",
        ]
    ),
    st.lists(st.sampled_from(["red", "blue", "B-PER", "O", "3"]), min_size=1, max_size=4),
    st.fixed_dictionaries(
        {"spans": st.lists(st.sampled_from(["x", "y"]), max_size=2), "types": st.just(["span"])}
    ),
    st.fixed_dictionaries({"text": st.just(["Paris"]), "answer_start": st.just([3])}),
    st.just({"test": "def check(candidate):\n    assert candidate(1) == 2\n", "entry_point": "f"}),
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_bench_reads_any_labelled_file(data: st.DataObject) -> None:
    """Any number of types (one included), any references, any labels (none fits included): the held-out
    figures and the baselines come out, with confidences in [0, 1]."""
    n_types = data.draw(st.integers(1, 4), label="types")
    records = []
    for t in range(n_types):
        for i in range(data.draw(st.integers(1, 3), label="records")):
            records.append(
                {
                    "id": f"t{t}-{i}",
                    "type": f"t{t}",
                    "task": data.draw(st.sampled_from(["", "qa", "x"])),
                    "query": data.draw(
                        st.sampled_from(
                            [
                                "What is 2+2?",
                                "Translate: hallo",
                                "Write a poem.",
                                "Tokens: EU rejects German call",
                                "Which? A. x B. y",
                            ]
                        )
                    ),
                    "reference": data.draw(_REFERENCES),
                    "metadata": {},
                    "acceptable": data.draw(st.lists(st.sampled_from(_TOOLS), max_size=3, unique=True)),
                }
            )
    specs = builtin_specs()
    doc = _held_out_figures(records, specs, bag_of_words, None, True, False)
    lo = doc["leave_one_type_out"]
    assert lo["n"] == len(records) and 0.0 <= lo["accuracy"] <= 1.0
    assert 0.0 <= lo["mean_confidence"] <= 1.0 and 0.0 <= lo["calibration"]["ece"] <= 1.0
    base = _baselines(records, specs, 0, 5)
    assert 0.0 <= base["random"]["expected_accuracy"] <= 1.0


def test_the_features_cache_reads_back_what_the_reader_computes_and_keys_on_every_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exemplar bank's features come from disk on the second load: equal to a fresh reading, and a query
    that changes is read again (its own key), not served the old features."""
    from rlar.routing import exemplars
    from rlar.routing.query import RoutingQuery

    monkeypatch.setenv("RLAR_CACHE_DIR", str(tmp_path))
    records = exemplars.load_labelled(exemplars.default_path())[::25]
    queries = [RoutingQuery.from_record(r) for r in records]
    first = exemplars.cached_features(queries)
    assert first == [q.features() for q in queries]
    files = list((tmp_path / "routing").glob("features-*.json"))
    assert len(files) == 1
    calls = []
    real = RoutingQuery.features
    monkeypatch.setattr(RoutingQuery, "features", lambda self: calls.append(1) or real(self))
    assert exemplars.cached_features(queries) == first and not calls  # read back, nothing recomputed
    changed = [
        RoutingQuery.from_record({**records[0], "reference": None, "description": "Answer in 3 words."})
    ]
    (f,) = exemplars.cached_features(changed)
    assert calls and f.reference_free and f == real(changed[0])
    files[0].write_text("[not json")  # a damaged file is read again, not trusted
    assert exemplars.cached_features(queries) == first
