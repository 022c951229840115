"""How far a routing decision may be trusted (:mod:`rlar.routing.confidence`, :mod:`rlar.routing.boosting`):
the evidence, the correctness model fitted on it, the selective threshold and the risk–coverage curve — on
synthetic data and a bag-of-words embedding, so no model is needed."""

from __future__ import annotations

import random

import numpy as np
import pytest

from rlar.routing.boosting import Trees, fit_trees
from rlar.routing.confidence import (
    EVIDENCE,
    CorrectnessModel,
    Evidence,
    cross_fitted,
    fit_correctness,
    gather_evidence,
    precision_threshold,
    reference_structure,
    risk_coverage,
    selective_summary,
)
from rlar.routing.exemplars import ExemplarBank
from tests.support.embedding import bag_of_words


def test_the_structure_of_a_reference_names_keys_items_and_string_kinds() -> None:
    assert reference_structure(None) == reference_structure("") == reference_structure([]) == "none"
    assert reference_structure({"text": ["a"], "answer_start": [3]}) == "dict:answer_start,text"
    assert reference_structure('{"spans": ["x"], "types": ["span"]}') == "dict:spans,types"
    assert reference_structure([1.5, 2]) == "list:number"
    assert reference_structure(["Paris", "the city of light"]) == "list:str:phrase|str:token"
    assert reference_structure(["the city of light and love"]) == "list:str:text"
    assert reference_structure("42") == "str:integer" and reference_structure("3.5") == "str:number"
    assert reference_structure("B") == "str:character" and reference_structure("Paris") == "str:token"
    assert reference_structure("9 (apples)") == "str:phrase" and reference_structure("a\nb") == "str:lines"
    assert reference_structure(True) == "bool" and reference_structure(7) == "number"


def test_boosted_trees_learn_an_interaction_a_linear_model_cannot() -> None:
    rng = random.Random(0)
    x = [[rng.random(), rng.random(), rng.random()] for _ in range(600)]
    y = [(a > 0.5) != (b > 0.5) for a, b, _ in x]  # exclusive or: no single feature says anything
    trees = fit_trees(x, y)
    right = sum((trees.probability(r) > 0.5) == t for r, t in zip(x, y, strict=True))
    assert right / len(x) > 0.9
    again = fit_trees(x, y)
    assert again.to_dict() == trees.to_dict(), "deterministic"
    back = Trees.from_dict(trees.to_dict())
    assert back.probability(x[0]) == pytest.approx(trees.probability(x[0]), abs=1e-5)


def test_trees_without_two_outcomes_give_the_smoothed_rate() -> None:
    trees = fit_trees([[0.0], [1.0], [2.0]], [True, True, True])
    assert trees.trees == [] and trees.probability([5.0]) == pytest.approx(4 / 5)


def _rows(n: int, rng: random.Random, novel_share: float) -> tuple[list[dict[str, float]], list[bool]]:
    """Evidence where decisions about references of unseen structure are right a third of the time, and the
    others 97% of the time."""
    rows, correct = [], []
    for _ in range(n):
        novel = rng.random() < novel_share
        row = dict.fromkeys(EVIDENCE, 0.0)
        row["structure_support"] = 0.0 if novel else rng.uniform(2, 5)
        row["choice_logit"] = rng.uniform(-1, 3)
        rows.append(row)
        correct.append(rng.random() < (0.33 if novel else 0.97))
    return rows, correct


def test_the_correctness_model_is_calibrated_on_formats_it_never_saw_and_sets_its_threshold() -> None:
    rng = random.Random(1)
    rows, correct = _rows(1500, rng, 0.3)
    groups = [f"format-{i % 40}" for i in range(len(rows))]
    model, confidence = fit_correctness(rows, correct, groups)
    novel = [c for c, r in zip(confidence, rows, strict=True) if r["structure_support"] == 0]
    seen = [c for c, r in zip(confidence, rows, strict=True) if r["structure_support"] > 0]
    assert np.mean(novel) == pytest.approx(0.33, abs=0.08) and np.mean(seen) == pytest.approx(0.97, abs=0.03)
    assert 0.5 < model.threshold < 0.97
    kept = [ok for c, ok in zip(confidence, correct, strict=True) if c >= model.threshold]
    assert sum(kept) / len(kept) >= 0.95
    unseen = Evidence({**rows[0], "structure_support": 0.0}, [("gsm8k", 0.41)], "list:number")
    assert model.probability(unseen) < model.threshold
    assert "gsm8k (0.41)" in model.explain(unseen) and "reference structure 0" in model.explain(unseen)
    back = CorrectnessModel.from_dict(model.to_dict())
    assert back.probability(unseen) == pytest.approx(model.probability(unseen), abs=1e-4)
    with pytest.raises(ValueError, match="other evidence"):
        CorrectnessModel.from_dict({**model.to_dict(), "evidence": ["something", "else"]})


def test_cross_fitting_never_scores_a_format_with_a_model_that_saw_it() -> None:
    # Whether a decision is right depends on its format alone, and each format has its own evidence value: a
    # model that saw the format knows, one fitted on the other formats can only guess.
    rng = random.Random(2)
    rows, correct, groups = [], [], []
    good = set(rng.sample(range(12), 6))
    for g in range(12):  # fewer formats than the trees' bins: each can be told apart
        for _ in range(60):
            rows.append({**dict.fromkeys(EVIDENCE, 0.0), "nearest_similarity": g / 12})
            correct.append(rng.random() < (0.9 if g in good else 0.1))
            groups.append(f"f{g}")
    x = [[r[k] for k in EVIDENCE] for r in rows]
    inside = fit_trees(x, correct)
    in_sample = np.mean([(inside.probability(r) > 0.5) == ok for r, ok in zip(x, correct, strict=True)])
    conf = cross_fitted(rows, correct, groups)
    held_out = np.mean([(c > 0.5) == ok for c, ok in zip(conf, correct, strict=True)])
    assert in_sample > 0.85 and held_out < 0.7


def test_the_threshold_is_where_held_out_decisions_become_right_often_enough() -> None:
    rng = random.Random(3)
    confidence = [rng.random() for _ in range(5000)]
    correct = [rng.random() < c for c in confidence]  # calibrated
    assert precision_threshold(confidence, correct, 0.9) == pytest.approx(0.9, abs=0.05)
    assert precision_threshold([0.2, 0.4], [False, False]) == 1.0


def test_risk_coverage_counts_the_decisions_kept_and_how_many_are_right() -> None:
    curve = risk_coverage([0.2, 0.6, 0.9, 0.95], [False, True, False, True], [0.0, 0.5, 0.92, 1.0])
    assert [(r["threshold"], r["coverage"], r["precision"], r["kept"]) for r in curve] == [
        (0.0, 1.0, 0.5, 4),
        (0.5, 0.75, 0.6667, 3),
        (0.92, 0.25, 1.0, 1),
        (1.0, 0.0, 1.0, 0),
    ]
    summary = selective_summary([0.2, 0.6, 0.9, 0.95], [False, True, False, True], 0.5)
    assert summary["median_confidence_right"] == 0.775 and summary["median_confidence_wrong"] == 0.55
    assert summary["at_threshold"] == {"coverage": 0.75, "precision": 0.6667, "kept": 3}


def test_the_evidence_reads_agreement_kinds_structures_and_metadata_from_the_bank() -> None:
    records = [
        {
            "id": f"sum-{i}",
            "type": "sums",
            "query": f"what is {i} plus {i}",
            "reference": str(2 * i),
            "metadata": {"level": 1},
            "acceptable": ["math_verify"],
        }
        for i in range(6)
    ] + [
        {
            "id": f"cap-{i}",
            "type": "capitals",
            "query": f"capital city of country {i}",
            "reference": "Paris",
            "acceptable": ["normalized_match", "exact_match"],
        }
        for i in range(6)
    ]
    bank = ExemplarBank.from_records(records, bag_of_words)
    q = np.asarray(bag_of_words(["what is 7 plus 7"])[0])
    sims = bank.vectors @ q
    ev = gather_evidence(
        sims,
        bank,
        routing_shape=str(bank.shapes[0]),
        structure="str:integer",
        metadata_keys=["level", "source"],
        decision="math_verify",
        path="scorer",
        probabilities=[0.8, 0.2],
    )
    v = ev.values
    assert v["rule"] == 0.0 and v["choice_margin"] == pytest.approx(0.6) and v["choice_logit"] > 1
    assert v["shape_agreement"] == pytest.approx(1.0, abs=0.01) and v["text_top_agrees"] == 1.0
    assert v["structure_agreement"] == 1.0 and v["structure_support"] == pytest.approx(np.log1p(6))
    assert v["metadata_unseen"] == 0.5 and ev.nearest[0][0] == "sums" and v["format_gap"] > 0
    odd = gather_evidence(
        sims,
        bank,
        routing_shape="grid",
        structure="list:number",
        metadata_keys=[],
        decision="exact_match",
        path="rule:reads_reference",
    )
    assert odd.values["rule"] == 1.0 and odd.values["choice_logit"] == 0.0
    assert odd.values["structure_support"] == 0.0 and odd.values["structure_agreement"] == 0.0
    assert odd.values["shape_support"] == 0.0 and odd.values["text_top_agrees"] == 0.0


def test_a_correctness_model_fits_on_nothing_or_one_format() -> None:
    model, conf = fit_correctness([], [], [])
    assert conf == [] and 0 < model.probability(Evidence({})) < 1
    rows = [dict.fromkeys(EVIDENCE, 0.5)] * 3
    model, conf = fit_correctness(rows, [True, False, True], ["only"] * 3)
    assert len(conf) == 3 and all(0 < c < 1 for c in conf)
