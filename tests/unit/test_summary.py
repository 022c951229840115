"""summary.json: steps counted once across a learner resume, per-task rows in every mode, the no-signal cause,
and the exit code and last line of a run."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from bus import subjects
from rlar.app.train import _exit_code, _verdict
from rlar.summary import no_signal_cause, run_totals, unique_steps
from rlar.tool_summary import tasks_summary


def _step(
    step: int,
    *,
    task: str = "t",
    reward: float | None = 0.5,
    abstain: float = 0.0,
    signal: int = 1,
    trained: int = 8,
    tools: tuple[str, ...] = ("exact_match v1",),
) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "step": step,
        "version": step,
        "groups_with_signal": signal,
        "trained_rows": trained,
        "reward_mean": reward,
        f"abstain/{task}": abstain,
        "tools": {task: list(tools)},
    }
    if reward is not None:
        rec[f"reward/{task}"] = reward
    return rec


def test_steps_retrained_after_a_learner_resume_count_once() -> None:
    # 65 steps, a crash, a resume from the checkpoint at step 50, then up to 200: 215 records.
    records = [_step(s, reward=0.1) for s in range(1, 66)] + [_step(s, reward=0.9) for s in range(51, 201)]
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
        _step(1, task="a"),
        _step(2, task="b"),
        _step(3, task="a", reward=1.0),
        _step(4, task="b", trained=0),
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
    zeros = [_step(s, reward=0.0, signal=0, tools=("normalized_match v1",)) for s in range(3)]
    assert "task t (normalized_match v1): every reward was 0" in no_signal_cause(zeros)
    abstained = [_step(s, reward=None, abstain=1.0, signal=0, tools=("llm_judge v1",)) for s in range(3)]
    assert "every sample abstained or failed" in no_signal_cause(abstained)
    ones = [_step(s, reward=1.0, signal=0) for s in range(3)]
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


@pytest.mark.bus  # an embedded nats-server
async def test_a_resumed_runs_summary_counts_the_routing_decisions_announced_before_it(
    tmp_path: Path,
) -> None:
    """The router of a resumed run reads its decisions back from KV and announces none: the summary's routing
    comes from the TOOLS stream (the whole run), not only from what the resuming process received."""
    from bus.client import Bus
    from bus.config import NatsConfig
    from bus.embedded import EmbeddedServer
    from bus.messages import RouteDecision, ToolKind, ToolRef
    from bus.topology import declare, ensure_topology
    from rlar.app.train import run_decisions

    ref = ToolRef(tool="capitalised", kind=ToolKind.RULE, version=1)
    with EmbeddedServer(tmp_path / "nats") as server:
        first = await Bus.connect(NatsConfig(url=server.url), name="first-process")
        await ensure_topology(first.js, declare())
        for state in ("pending", "synthesized"):
            await first.publish(
                subjects.TOOLS_DECISIONS,
                RouteDecision(
                    signature="sig-cap",
                    task="capitalize",
                    tools=[ref] if state != "pending" else [],
                    backend="offline",
                    reason=f"[{state}] best match capitalised",
                ),
            )
        await first.nc.flush()
        await first.close()
        resumed = await Bus.connect(NatsConfig(url=server.url), name="resumed-process")
        try:
            decisions = await run_decisions(resumed, seen=[])
        finally:
            await resumed.close()
    assert [d.reason.split("]")[0] for d in decisions] == ["[pending", "[synthesized"]
    routing = tasks_summary([_step(1, task="capitalize")], decisions)["capitalize"]["routing"]
    assert routing["decisions"] == 2 and routing["states"] == {"pending": 1, "synthesized": 1}
    assert routing["last"]["tools"] == ["capitalised v1 x1"]


def test_the_end_of_run_line_of_a_task_left_pending_says_why_the_router_waits() -> None:
    from bus.messages import RouteDecision
    from rlar.tool_summary import tasks_lines

    why = "no tool fits: the references are missing and every candidate compares with one"
    pending = RouteDecision(
        signature="s", task="plural", tools=[], backend="offline", reason=f"[pending] {why}"
    )
    (line,) = tasks_lines(tasks_summary([_step(1, task="plural")], [pending]))
    assert line.endswith(f"routing pending 1 (last pending: {why})"), line
    (line,) = tasks_lines(tasks_summary([_step(1, task="plural")], []))
    assert line.endswith("routing by the feeder"), line
