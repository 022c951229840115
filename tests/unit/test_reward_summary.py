"""The end of a run and the dashboard name a reward function's failures: per-tool errors, timeouts and
throughput warnings from the registry's stats go to summary.json's ``rewards`` and ``warnings``, the printed
verdict and the dashboard's tools panel."""

from __future__ import annotations

from typing import Any

from rlar.app.train import _verdict
from rlar.summary import reward_health, reward_warnings
from rlar.tools.stats import StatsDelta, derived_stats, merge_stats

RAISED = "raised ValueError: boom (at plural_rewards.py:7 in plural_reward)"


def _stats(results: list[tuple[str, float | None, str]], warning: str = "") -> dict[str, Any]:
    delta = StatsDelta()
    for status, score, reason in results:
        delta.add(status, score, 0.01, reason=reason)
    if warning:
        delta.warn(warning, streak=3)
    return derived_stats(merge_stats(None, delta.to_dict()))


def test_a_function_raising_on_some_calls_is_a_warning_with_its_share_exception_and_message() -> None:
    st = _stats([("error", None, RAISED)] * 3 + [("ok", 1.0, "")] * 17)
    (row,) = reward_health({("plural_reward", 1): st})
    assert (row["calls"], row["error"], row["error_rate"]) == (20, 3, 0.15)
    assert row["errors"] == [{"reason": RAISED, "count": 3, "share": 0.15}]
    assert reward_warnings([row]) == [
        "plural_reward raised ValueError in 15% of calls: boom (at plural_rewards.py:7 in plural_reward)"
    ]


def test_a_trl_function_one_score_short_fails_every_call_and_the_verdict_says_why() -> None:
    why = "plural_rewards:plural_reward returned 39 scores for 40 completions"
    rows = reward_health({("plural_reward", 1): _stats([("error", None, why)] * 40)})
    warnings = reward_warnings(rows)
    assert warnings == [f"plural_reward failed in 100% of calls: {why}"]
    summary = {"reason": "finished", "steps": 5, "updates": 0, "warnings": warnings, "run_dir": "runs/x"}
    assert (
        _verdict(summary)
        == f"rlar train: NO UPDATES in 5 steps (finished) — plural_reward failed in 100% of calls: {why}"
    )


def test_throughput_warnings_and_frequent_timeouts_are_warnings_and_clean_tools_are_not() -> None:
    slow = "sleepy v1: 3 timeouts in a row at its 10s deadline — …"
    stats = {
        ("sleepy", 1): _stats([("abstain", None, "timeout after 10s")] * 4, warning=slow),
        ("laggy", 1): _stats([("abstain", None, "timeout after 10s")] * 2 + [("ok", 1.0, "")] * 8),
        ("fine", 1): _stats([("ok", 1.0, "")] * 10 + [("abstain", None, "no reference")] * 5),
        ("unused", 1): derived_stats({}),
        ("twice", 1): _stats([("error", None, "score is NaN")] + [("ok", 0.5, "")] * 199),
        ("twice", 2): _stats(
            [("error", None, "score is a str ('0.7'), not a number")] * 2 + [("error", None, RAISED)]
        ),
    }
    rows = reward_health(stats)
    assert [r["tool"] for r in rows] == ["fine", "laggy", "sleepy", "twice", "twice"]  # no calls, no row
    assert rows[2]["timeouts"] == 4 and rows[2]["timeout_streak"] == 3
    assert reward_warnings(rows) == [
        "laggy timed out in 20% of calls",
        "sleepy timed out in 100% of calls (3 in a row at most)",
        slow,
        "twice v1 failed in <1% of calls: score is NaN",
        "twice v2 failed in 67% of calls: score is a str ('0.7'), not a number (and 1 other errors)",
    ]
