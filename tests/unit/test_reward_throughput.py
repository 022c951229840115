"""The reward worker's throughput watch: timeouts in a row and a backlog at a tool's p50 latency and
concurrency become one warning naming the tool, not one per sample."""

from __future__ import annotations

from rlar.tools.base import ToolResult
from rlar.tools.stats import ThroughputWatch


def _timeouts(n: int) -> list[ToolResult]:
    return [ToolResult("abstain", None, "timeout after 10s", {}, 10.0) for _ in range(n)]


def _oks(n: int, latency_s: float) -> list[ToolResult]:
    return [ToolResult("ok", 1.0, "", {}, latency_s) for _ in range(n)]


def test_three_timeouts_in_a_row_warn_once_per_streak_naming_the_tool_and_its_deadline() -> None:
    watch = ThroughputWatch("sleepy", 2, concurrency=4, deadline_s=10.0)
    assert watch.finished(_timeouts(2), now=0.0) == []
    (text,) = watch.finished(_timeouts(5), now=1.0)
    assert text.startswith("sleepy v2: 3 timeouts in a row at its 10s deadline")
    assert "at most 4 samples per 10s (0.4/s)" in text
    assert watch.finished(_timeouts(3), now=2.0) == []  # the same streak: said once
    assert watch.finished(_oks(1, 0.01) + _timeouts(3), now=3.0) != []  # a new streak after a success
    assert watch.finished(_oks(1, 0.01) + _timeouts(2) + _oks(1, 0.01) + _timeouts(2), now=4.0) == []


def test_a_backlog_that_takes_longer_than_the_threshold_to_score_warns_at_most_once_a_minute() -> None:
    watch = ThroughputWatch("judge_fn", 1, concurrency=4, deadline_s=60.0, backlog_warn_s=30.0)
    assert watch.started(8, now=0.0) == []  # no latency known yet
    assert watch.finished(_oks(8, 5.0), n=8, now=1.0) == []  # nothing waits any more
    assert watch.started(16, now=2.0) == []  # 4 rounds x 5 s = 20 s < 30 s
    (text,) = watch.started(16, now=3.0)  # 32 in flight: 8 rounds x 5 s = 40 s
    assert text.startswith("judge_fn v1 limits reward throughput: 32 samples in flight at concurrency 4")
    assert "p50 latency of 5s take ~40s to score (at most 0.8 samples/s)" in text
    assert watch.started(8, now=30.0) == []  # once a minute
    assert watch.started(0, now=64.0) != []
    assert (
        watch.finished([], n=40, now=65.0) == [] and watch.inflight == 0
    )  # a cancelled call still counts down


def test_cached_results_do_not_count_as_latency_and_unbounded_tools_skip_the_backlog_check() -> None:
    watch = ThroughputWatch("t", 1, concurrency=1, deadline_s=10.0, backlog_warn_s=1.0)
    watch.finished([ToolResult("ok", 1.0, "", {"cached": True}, 0.0), *_oks(1, 2.0)], now=0.0)
    assert watch.p50() == 2.0
    unbounded = ThroughputWatch("judge", 1, concurrency=None, deadline_s=10.0, backlog_warn_s=1.0)
    unbounded.finished(_oks(3, 5.0), now=0.0)
    assert unbounded.started(1000, now=1.0) == []


def test_a_batched_tool_counts_one_timeout_per_call_not_per_sample() -> None:
    watch = ThroughputWatch("trl_fn", 1, concurrency=2, deadline_s=10.0, per_call=True)
    assert watch.started(8) == [] and watch.inflight == 1
    assert watch.finished(_timeouts(8), n=8) == [] and watch.streak == 1 and watch.inflight == 0
    watch.finished(_timeouts(8), n=8)
    (text,) = watch.finished(_timeouts(8), n=8)
    assert text.startswith("trl_fn v1: 3 timeouts in a row") and "at most 2 calls per 10s" in text
