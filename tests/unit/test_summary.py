"""summary.json: steps counted once across a learner resume, per-task rows in every mode, the no-signal cause,
and the exit code and last line of a run."""

from __future__ import annotations

import time

import pytest

from rlar.app.train import _exit_code, _verdict
from rlar.summary import no_signal_cause, run_totals, unique_steps
from rlar.tool_summary import tasks_summary
from tests.support.summary import step_record


def test_steps_retrained_after_a_learner_resume_count_once() -> None:
    # 65 steps, a crash, a resume from the checkpoint at step 50, then up to 200: 215 records.
    records = [step_record(s, reward=0.1) for s in range(1, 66)] + [
        step_record(s, reward=0.9) for s in range(51, 201)
    ]
    assert len(records) == 215
    steps = unique_steps(records)
    out = run_totals(steps)
    assert out["steps"] == 200 and out["updates"] == 200
    # The re-trained steps 51-65 count with their later rewards.
    assert out["reward_first10_last10"]["t"] == {
        "first": 0.1,
        "last": 0.9,
        "delta": 0.8,
        "steps": 200,
        "window": 10,
    }
    assert tasks_summary(steps)["t"]["tools"][0]["steps"] == 200


def test_every_task_gets_a_reward_row_even_with_few_steps() -> None:
    records = [
        step_record(1, task="a"),
        step_record(2, task="b"),
        step_record(3, task="a", reward=1.0),
        step_record(4, task="b", trained=0),
    ]
    out = run_totals(unique_steps(records))
    assert out["reward_first10_last10"]["a"] == {
        "first": 0.5,
        "last": 1.0,
        "delta": 0.5,
        "steps": 2,
        "window": 1,
    }
    assert out["reward_first10_last10"]["b"]["steps"] == 2 and out["updates"] == 3


def test_no_signal_cause_names_the_task_tool_and_likely_reason() -> None:
    zeros = [step_record(s, reward=0.0, signal=0, tools=("normalized_match v1",)) for s in range(3)]
    assert "task t (normalized_match v1): every reward was 0" in no_signal_cause(zeros)
    abstained = [
        step_record(s, reward=None, abstain=1.0, signal=0, tools=("llm_judge v1",)) for s in range(3)
    ]
    assert "every sample abstained or failed" in no_signal_cause(abstained)
    ones = [step_record(s, reward=1.0, signal=0) for s in range(3)]
    assert "every reward was 1" in no_signal_cause(ones)
    assert no_signal_cause([]) == "no rewards arrived for these steps"


def test_a_run_without_updates_or_interrupted_exits_non_zero_and_says_so() -> None:
    base = {"run_dir": "runs/x", "steps": 40, "updates": 0, "reason": "finished", "warnings": ["no signal"]}
    assert _exit_code(base) == 1 and "NO UPDATES in 40 steps" in _verdict(base)
    assert _exit_code({**base, "updates": 3}) == 0
    interrupted = {**base, "updates": 3, "reason": "interrupted"}
    assert _exit_code(interrupted) == 130 and "INTERRUPTED" in _verdict(interrupted)
    fatal = {**base, "updates": 3, "fatal": "actor feeder-0 crashed 5 times"}
    assert _exit_code(fatal) == 1 and "FAILED — actor feeder-0 crashed 5 times" in _verdict(fatal)


def test_the_time_budget_counts_from_the_commands_start_and_leaves_training_a_minimum(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``[train] max_minutes`` bounds the whole command (warm-up included): what was spent before training is
    taken off, and a warm-up that spent it all still leaves MIN_TRAIN_S, with a warning."""

    from rlar.app.train import MIN_TRAIN_S, train_budget_s

    assert train_budget_s(2.0, None) == 120.0
    left = train_budget_s(2.0, time.perf_counter() - 30.0)
    assert 80.0 <= left <= 90.0  # 30 s spent (and at most 10 s more between the two clock readings)
    assert capsys.readouterr().err == ""
    assert train_budget_s(1.0, time.perf_counter() - 50.0) == MIN_TRAIN_S
    assert "spent before training" in capsys.readouterr().err


def test_the_end_of_run_line_of_a_task_left_pending_says_why_the_router_waits() -> None:
    from bus.messages import RouteDecision
    from rlar.tool_summary import tasks_lines

    why = "no tool fits: the references are missing and every candidate compares with one"
    pending = RouteDecision(
        signature="s", task="plural", tools=[], backend="offline", reason=f"[pending] {why}"
    )
    (line,) = tasks_lines(tasks_summary([step_record(1, task="plural")], [pending]))
    assert line.endswith(f"routing pending 1 (last pending: {why})"), line
    (line,) = tasks_lines(tasks_summary([step_record(1, task="plural")], []))
    assert line.endswith("routing by the feeder"), line
