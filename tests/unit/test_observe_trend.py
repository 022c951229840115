"""The dashboard's reward-per-task chart: the state serves each raw point with its trend (a debiased EMA), so the
page can draw the trend over the raw values and a noisy per-step reward does not hide where it is going."""

from __future__ import annotations

import random
import statistics

from bus.messages import Metrics
from rlar.observe.state import TREND_SPAN, LiveState, trend


def _feed(state: LiveState, rewards: list[float], task: str = "plural") -> None:
    for step, r in enumerate(rewards, start=1):
        state.observe(
            "metrics", Metrics(actor="learner", step=step, values={f"reward/{task}": r, "reward_mean": r})
        )


def test_each_curve_point_carries_the_trend_which_follows_the_level_not_the_noise() -> None:
    rng = random.Random(7)
    level = [0.2] * 40 + [0.7] * 40  # the policy gets better at step 41
    raw = [min(1.0, max(0.0, x + rng.uniform(-0.25, 0.25))) for x in level]
    state = LiveState()
    _feed(state, raw)
    points = state.section("curves")["plural"]
    assert [p[:2] for p in points] == [
        [s, r] for s, r in enumerate(raw, start=1)
    ]  # raw values kept as they are
    smooth = [p[2] for p in points]
    assert statistics.pstdev(smooth[10:40]) < statistics.pstdev(raw[10:40]) / 2
    assert abs(smooth[39] - 0.2) < 0.08 and abs(smooth[-1] - 0.7) < 0.08
    assert smooth[44] < 0.7 - 0.1  # it lags a step change by about the span, as an average does
    assert state.curves["plural"][0] == [1, raw[0]]  # what the feed keeps is unchanged


def test_the_trend_starts_at_the_first_value_and_keeps_a_constant() -> None:
    assert trend([0.5]) == [0.5]
    assert trend([1.0, 0.0]) == [1.0, (1.0 - 2 / (TREND_SPAN + 1)) / (2 - 2 / (TREND_SPAN + 1))]
    assert all(abs(v - 0.3) < 1e-12 for v in trend([0.3] * 50))
