"""``rlar bench preference``: RewardBench 2 scoring (best-of-4, ties share credit) with the real tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlar.benchmarks.preference import load_records, record_accuracy, run
from tests.support.env import REPO

SAMPLE = REPO / "data" / "preference_sample.jsonl"


def test_the_chosen_response_strictly_on_top_counts_one() -> None:
    assert record_accuracy([0.9, 0.1, 0.2, 0.3]) == 1.0


def test_a_tie_for_the_top_shares_the_credit() -> None:
    assert record_accuracy([1.0, 1.0, 0.0, 0.0]) == 0.5
    assert record_accuracy([None, None, None, None]) == 0.25  # nothing scored: the random baseline


def test_an_unscored_chosen_response_ranks_below_scored_ones() -> None:
    assert record_accuracy([None, 0.0, None, None]) == 0.0
    assert record_accuracy([0.0, None, None, None]) == 1.0


def test_the_sample_is_in_rewardbench2_format_with_every_subset() -> None:
    recs = load_records(SAMPLE)
    assert {r["subset"] for r in recs} == {"Factuality", "Precise IF", "Math", "Safety", "Focus"}
    assert all(len(r["chosen"]) == 1 and len(r["rejected"]) == 3 for r in recs)


def test_ties_records_are_left_out(tmp_path: Path) -> None:
    rows = [
        {"id": "a", "prompt": "p", "chosen": ["x"], "rejected": ["y", "z", "w"], "subset": "Ties"},
        {"id": "b", "prompt": "p", "chosen": ["x"], "rejected": ["y", "z", "w"], "subset": "Math"},
    ]
    f = tmp_path / "d.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in rows))
    assert [r["id"] for r in load_records(f)] == ["b"]


def test_reference_tools_beat_random_on_math_and_the_judge_without_a_key_is_a_tie(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    doc = run(str(SAMPLE), tools=["math_verify", "exact_match", "llm_judge"])
    acc = doc["accuracy"]
    assert set(acc) == {"agentic", "static:math_verify", "static:exact_match", "static:llm_judge", "random"}
    assert acc["static:math_verify"]["Math"] == 1.0  # every chosen answer is the only right number
    assert acc["static:llm_judge"]["avg"] == pytest.approx(0.25)  # abstains: four-way ties, never a guess
    assert doc["routes"]["Math"] and doc["routes"]["Math"][0]["tool"] == "math_verify"
    assert acc["agentic"]["Math"] == 1.0
