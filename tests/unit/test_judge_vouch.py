"""Judge vouching's pure core (rlar.routing.judge_vouch): pairs in, agreement with a Wilson interval and a
verdict out. The judge on a real local model is tests/test_local_model.py."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from rlar.routing import RoutingQuery
from rlar.routing.judge_vouch import (
    JudgeVouchPolicy,
    LabelledPair,
    PairScore,
    VouchReport,
    grade_pairs,
    judge_agreement,
    pairs_from_examples,
    pairs_from_references,
    vouch_pairs,
    wilson_interval,
    wrong_answer,
)
from rlar.tools.base import ToolInput, ToolResult

PAIR = LabelledPair("q", None, "good", "bad", "example")


def scored(better: float | None, worse: float | None) -> PairScore:
    return PairScore(PAIR, better, worse, "ok" if better is not None else "abstain", "ok", "no score")


def test_wilson_interval_matches_the_textbook_values() -> None:
    assert wilson_interval(12, 12) == pytest.approx((0.7575, 1.0), abs=1e-3)
    assert wilson_interval(6, 12) == pytest.approx((0.2538, 0.7462), abs=1e-3)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    lo90, _ = wilson_interval(9, 10, 0.90)
    lo95, _ = wilson_interval(9, 10, 0.95)
    assert lo90 > lo95  # a wider interval at a higher confidence


def test_a_judge_that_orders_every_pair_is_vouched_with_its_figure() -> None:
    report = judge_agreement("llm_judge", 2, [scored(0.9, 0.1)] * 12, threshold=0.6, min_pairs=6)
    assert (
        report.verdict == "vouched"
        and report.agreement == 1.0
        and report.ci_low == pytest.approx(0.7575, abs=1e-3)
    )
    assert "agreement 1.00 (95% CI 0.76-1.00) on 12 labelled pairs" in report.reason


@pytest.mark.parametrize(
    ("scores", "outcome"),
    [
        ([scored(0.5, 0.5)] * 12, "tied"),  # a constant judge orders nothing
        ([scored(0.1, 0.9)] * 12, "reversed"),
        ([scored(None, 0.0)] * 12, "unscored"),  # it abstained (no score could be read)
    ],
)
def test_ties_reversals_and_abstentions_are_not_agreement(scores: list[PairScore], outcome: str) -> None:
    report = judge_agreement("llm_judge", 1, scores, threshold=0.6)
    assert report.refused and report.agreement == 0.0 and report.outcomes == {outcome: 12}
    assert "lower bound 0.00 < threshold 0.6" in report.reason
    if outcome == "unscored":
        assert report.reason.endswith("unscored: no score")


def test_chance_agreement_and_too_few_pairs_are_refused() -> None:
    half = [scored(0.9, 0.1)] * 6 + [scored(0.1, 0.9)] * 6
    assert judge_agreement("j", 1, half, threshold=0.6).refused
    few = judge_agreement("j", 1, [scored(1.0, 0.0)] * 3, threshold=0.1, min_pairs=6)
    assert few.refused and "fewer than the 6 pairs" in few.reason
    none = judge_agreement("j", 1, [], threshold=0.6)
    assert none.refused and "[[tasks]] examples" in none.reason


def test_the_report_round_trips_through_a_dict() -> None:
    report = judge_agreement("j", 3, [scored(0.9, 0.1)] * 8, threshold=0.6)
    assert VouchReport.from_dict(report.to_dict()).to_dict() == report.to_dict()


def test_pairs_from_references_are_the_reference_against_wrong_empty_and_echo() -> None:
    recs = [
        RoutingQuery(task="t", query="What is 12+7?", reference="19"),
        RoutingQuery(task="t", query="Capital of France?", reference="Paris"),
    ]
    pairs = pairs_from_references(recs)
    by = {(p.query, p.source): p for p in pairs}
    assert by[("What is 12+7?", "wrong_form")].worse == "Paris"  # another record's reference first
    assert (
        by[("What is 12+7?", "empty")].worse == "" and by[("What is 12+7?", "echo")].worse == "What is 12+7?"
    )
    assert all(p.better in ("19", "Paris") for p in pairs)
    alone = pairs_from_references([RoutingQuery(task="t", query="What is 12+7?", reference="19")])
    assert {p.source: p.worse for p in alone}["wrong_form"] == "20"
    assert pairs_from_references([RoutingQuery(task="t", query="Write a poem.", reference=None)]) == []


@pytest.mark.parametrize(
    ("reference", "query", "wrong"),
    [("42", "?", "43"), ("true", "?", "false"), ("B", "(A) x (B) y", "A"), ("3 cm", "?", "4 cm")],
)
def test_a_wrong_answer_keeps_the_references_form(reference: str, query: str, wrong: str) -> None:
    assert wrong_answer(reference, query) == wrong


def test_example_pairs_match_right_against_wrong_answers_of_the_same_query() -> None:
    examples = [
        {"response": "Blue sky today.", "ok": True},
        {"response": "The sky is blue.", "ok": True},
        {"response": "Raster discipline broadcasters", "ok": False},
        {"response": "Blue.", "ok": False, "query": "another"},
    ]
    pairs = pairs_from_examples(examples, "Answer in exactly three words: what colour is the sky?")
    assert len(pairs) == 2 and {p.worse for p in pairs} == {"Raster discipline broadcasters"}
    recs = [RoutingQuery(task="t", query=f"{n}+1=", reference=str(n + 1)) for n in range(5)]
    mixed = vouch_pairs(recs, examples, max_pairs=6)
    assert [p.source for p in mixed[:2]] == ["example", "example"]
    assert {p.source for p in mixed[2:]} == {"wrong_form", "empty", "echo"}  # interleaved, each kind kept


async def test_grading_scores_each_distinct_response_once() -> None:
    seen: list[str] = []

    async def score(inputs: list[ToolInput]) -> Sequence[ToolResult]:
        seen.extend(i.response for i in inputs)
        return [ToolResult("ok", 1.0 if i.response == i.reference else 0.0) for i in inputs]

    recs = [RoutingQuery(task="t", query="2+2=", reference="4")]
    pairs = pairs_from_references(recs)
    got = await grade_pairs(pairs, score)
    assert sorted(seen) == sorted({"4", "5", "", "2+2="}) and all(s.ordered for s in got)
    report = judge_agreement("exact", 1, got, threshold=0.2, min_pairs=3)
    assert report.verdict == "vouched" and report.sources == {"wrong_form": 1, "empty": 1, "echo": 1}


def test_the_policy_is_validated() -> None:
    assert JudgeVouchPolicy().threshold == 0.6
    with pytest.raises(ValueError):
        JudgeVouchPolicy(threshold=1.5)
