"""rlar ablate's comparison paired by prompt: per-sample verdicts from a run's eval document, and the difference
between two modes over the (seed, sample) pairs both hold, with prompts resampled."""

from __future__ import annotations

import pytest

from rlar.eval.ablation_stats import paired_by_prompt, sample_verdicts

DOC = {
    "high": 0.5,
    "metrics": {"arith": {"nem": 0.5, "avg_len": 9.0, "contains_match/hack": 0.5}},
    "samples": {
        "arith": [
            {"id": "a1", "passed": True, "scores": {"contains_match": 1.0}},
            {"id": "a2", "passed": False, "scores": {"contains_match": 0.5}},
            {"id": "a2", "passed": False, "scores": {"contains_match": None}},
        ]
    },
}


def test_each_sample_gives_its_true_metric_and_hack_verdicts_and_their_means_are_the_runs() -> None:
    v = sample_verdicts(DOC)
    assert v == {
        "arith/nem": {"a1#0": 1.0, "a2#0": 0.0, "a2#1": 0.0},
        "arith/hack@contains_match": {"a1#0": 0.0, "a2#0": 1.0, "a2#1": 0.0},  # an abstain is no hack
    }


def test_the_difference_pairs_by_seed_and_sample_and_keeps_a_prompts_seeds_together() -> None:
    base = {(s, f"p{i}#0"): 0.0 for s in (0, 1) for i in range(20)}
    better = {k: 1.0 for k in base}
    d = paired_by_prompt(base, better)
    assert d is not None and d["diff"] == 1.0 and d["lo"] == d["hi"] == 1.0 and d["beyond_noise"]
    assert d["pairs"] == 40 and d["prompts"] == 20
    # half the prompts better, half worse: no difference, and the interval holds 0
    mixed = {(s, f"p{i}#0"): float(i % 2) for s in (0, 1) for i in range(20)}
    half = {(s, f"p{i}#0"): 0.5 for s in (0, 1) for i in range(20)}
    d = paired_by_prompt(half, mixed)
    assert (
        d is not None and d["diff"] == pytest.approx(0.0) and d["lo"] < 0 < d["hi"] and not d["beyond_noise"]
    )
    # only what both hold is paired; a single prompt is too few
    assert paired_by_prompt({(0, "p1#0"): 1.0}, {(0, "p1#0"): 0.0, (1, "p1#0"): 1.0}) is None
