"""The GRPO learner step as a pure function (:mod:`rlar.learn.step`): groups in, rows and record out, no bus."""

from __future__ import annotations

import math

import pytest

from bus.messages import Completion, Sampling, ScoredItem
from rlar.learn.config import GRPOConfig
from rlar.learn.step import plan_step
from rlar.wire.groups import Group, ToolResults

GRPO = GRPOConfig(group_size=4)


def group(
    prompt_id: str,
    scores: list[float | None],
    *,
    task: str = "math",
    policy_version: int = 0,
    created_at: float = 100.0,
    sampling: Sampling | None = None,
    tokens: list[list[int]] | None = None,
    shadow: list[float] | None = None,
) -> Group:
    """A complete group scored by one tool ``exact`` v1 (None: that sample abstains), optionally with a
    weight-0 shadow tool ``canary`` v2."""
    g = Group(
        prompt_id,
        "gen",
        task=task,
        group_size=len(scores),
        policy_version=policy_version,
        prompt_token_ids=[1, 2, 3],
        created_at=created_at,
        sampling=sampling or Sampling(),
    )
    for i in range(len(scores)):
        ids = tokens[i] if tokens is not None else [10 + i, 20 + i]
        g.completions[i] = Completion(index=i, token_ids=ids, logprobs=[-0.5] * len(ids), text=f"r{i}")
    g.rewards["exact"] = ToolResults(
        1.0,
        1,
        {
            i: ScoredItem(index=i, status="abstain", reason="no answer")
            if s is None
            else ScoredItem(index=i, status="ok", score=s)
            for i, s in enumerate(scores)
        },
    )
    if shadow is not None:
        g.rewards["canary"] = ToolResults(
            0.0, 2, {i: ScoredItem(index=i, status="ok", score=s) for i, s in enumerate(shadow)}
        )
    return g


def test_rewards_become_group_relative_advantages_and_one_row_per_trainable_sample() -> None:
    plan = plan_step([group("p1", [1.0, 0.0, 1.0, 0.0])], version=0, grpo=GRPO)
    assert len(plan.rows) == 4
    adv = plan.rows.advantages
    assert adv[0] == adv[2] > 0 > adv[1] == adv[3]
    assert math.isclose(sum(adv), 0.0, abs_tol=1e-6)
    assert plan.rows.prompts == [[1, 2, 3]] * 4
    assert plan.rows.responses[1] == [11, 21] and plan.rows.logprobs[1] == [-0.5, -0.5]
    assert plan.rows.weights == [1.0] * 4 and plan.rows.temperatures == [1.0] * 4
    rec = plan.record(step=1, version=1, t_start=10.0, t_end=12.5, consumed=1, dropped=0)
    assert (rec.groups, rec.samples, rec.trained_rows, rec.groups_with_signal) == (1, 4, 4, 1)
    assert rec.reward_mean == 0.5 and rec.abstain_frac == 0.0 and rec.step_s == 2.5


def test_an_abstaining_sample_is_masked_out_of_the_advantages_and_the_rows() -> None:
    plan = plan_step([group("p1", [1.0, None, 0.0, 0.0])], version=0, grpo=GRPO)
    assert len(plan.rows) == 3 and [11, 21] not in plan.rows.responses
    rec = plan.record(step=1, version=1, t_start=0.0, t_end=1.0, consumed=1, dropped=0)
    assert rec.abstain_frac == 0.25 and rec.abstain_by_task == {"math": 0.25}
    assert rec.reward_mean == pytest.approx(1 / 3)  # of the three that scored


def test_a_group_whose_rewards_are_all_equal_carries_no_signal_and_no_rows() -> None:
    plan = plan_step([group("p1", [1.0] * 4)], version=0, grpo=GRPO)
    assert len(plan.rows) == 0 and plan.batch() is None
    assert plan.groups_with_signal == 0
    kept = plan_step([group("p1", [1.0] * 4)], version=0, grpo=GRPO, skip_zero_advantage=False)
    assert kept.rows.advantages == [0.0] * 4


def test_a_shadow_tool_is_listed_but_does_not_score() -> None:
    plan = plan_step([group("p1", [1.0, 0.0, 1.0, 0.0], shadow=[0.0, 1.0, 0.0, 1.0])], version=0, grpo=GRPO)
    rec = plan.record(step=1, version=1, t_start=0.0, t_end=1.0, consumed=1, dropped=0)
    assert rec.tools == {"math": ["canary v2 (shadow)", "exact v1"]}
    assert rec.reward_mean == 0.5 and plan.rows.advantages[0] > 0


def test_raw_logprobs_of_a_tempered_group_keep_it_out_of_training_but_in_the_counts() -> None:
    raw = Sampling(temperature=0.7, logprobs="raw")
    bad = group("p1", [1.0, 0.0, 1.0, 0.0], sampling=raw)
    plan = plan_step([bad, group("p2", [0.0, 1.0, 1.0, 1.0])], version=0, grpo=GRPO)
    assert plan.unusable == [bad]
    assert len(plan.rows) == 4 and plan.samples == 8 and plan.groups_with_signal == 2


def test_samples_without_response_tokens_are_left_out() -> None:
    plan = plan_step([group("p1", [1.0, 0.0, 1.0, 0.0], tokens=[[], [5], [6], [7]])], version=0, grpo=GRPO)
    assert plan.rows.responses == [[5], [6], [7]]


def test_rows_are_cut_to_a_multiple_of_the_world_size() -> None:
    plan = plan_step([group("p1", [1.0, None, 0.0, 0.0])], version=0, grpo=GRPO, world_size=2)
    assert len(plan.rows) == 2
    batch = plan.batch()
    assert batch is not None and len(batch) == 2
    with pytest.raises(ValueError, match="world_size"):
        plan_step([group("p1", [1.0, 0.0, 1.0, 0.0])], version=0, grpo=GRPO, world_size=0)


def test_lagging_groups_are_weighted_in_decay_mode_and_counted_by_lag() -> None:
    decay = GRPOConfig(group_size=4, max_staleness=3, staleness_mode="decay")
    groups = [
        group("old", [1.0, 0.0, 1.0, 0.0], policy_version=1),
        group("new", [0.0, 1.0, 0.0, 1.0], policy_version=3),
    ]
    plan = plan_step(groups, version=3, grpo=decay)
    assert plan.rows.weights == [0.5] * 4 + [1.0] * 4  # 1 - 2/(3+1) at lag 2
    batch = plan.batch()
    assert batch is not None and batch.seq_weights is not None
    assert batch.seq_weights.tolist() == [0.5] * 4 + [1.0] * 4
    rec = plan.record(step=4, version=4, t_start=0.0, t_end=1.0, consumed=2, dropped=0)
    assert rec.staleness_hist == {2: 4, 0: 4} and rec.staleness_max == 2
    drop = plan_step(groups, version=3, grpo=GRPOConfig(group_size=4, max_staleness=3)).batch()
    assert drop is not None and drop.seq_weights is None  # "drop" mode: full weight within the bound


def test_samples_created_while_the_previous_step_ran_are_counted() -> None:
    groups = [
        group("a", [1.0, 0.0, 1.0, 0.0], created_at=5.0),
        group("b", [1.0, 0.0, 1.0, 0.0], created_at=20.0),
    ]
    plan = plan_step(groups, version=0, grpo=GRPO, prev_interval=(0.0, 10.0))
    rec = plan.record(step=1, version=1, t_start=0.0, t_end=1.0, consumed=2, dropped=0)
    assert rec.samples_generated_during_prev_step == 4
    assert (rec.samples_created_min, rec.samples_created_max) == (5.0, 20.0)


def test_the_record_is_the_metrics_line_the_plots_read() -> None:
    groups = [group("a", [1.0, 0.0, 1.0, 0.0], task="math"), group("b", [None, 1.0, 0.0, 1.0], task="code")]
    plan = plan_step(groups, version=0, grpo=GRPO)
    train = {"step": 7.0, "loss": 0.25, "tokens": 800.0, "step_s": 2.0, "weights_s": 0.5, "retire_s": 0.1}
    line = plan.record(
        step=3, version=4, t_start=10.0, t_end=14.0, consumed=9, dropped=2, train=train
    ).to_dict()
    assert list(line) == [
        "optimizer_step",
        "loss",
        "tokens",
        "step_s",
        "weights_s",
        "retire_s",
        "step",
        "version",
        "t_start",
        "t_end",
        "groups",
        "samples",
        "trained_rows",
        "groups_with_signal",
        "abstain_frac",
        "reward_mean",
        "staleness_hist",
        "staleness_max",
        "samples_created_min",
        "samples_created_max",
        "samples_generated_during_prev_step",
        "consumed_prompts",
        "dropped_prompts",
        "reward/code",
        "reward/math",
        "abstain/code",
        "abstain/math",
        "truncated/code",
        "truncated/math",
        "tools",
        "tokens_per_s",
    ]
    assert line["optimizer_step"] == 7.0 and line["step"] == 3 and line["version"] == 4
    assert line["step_s"] == 4.0  # the learner step's wall time replaces the trainer's
    assert line["tokens_per_s"] == 400.0  # tokens over the trainer's own step time
    assert line["staleness_hist"] == {"0": 8}
    assert line["trained_rows"] == 7 and line["abstain/code"] == 0.25 and line["abstain/math"] == 0.0
    assert line["reward/math"] == 0.5 and line["reward/code"] == pytest.approx(2 / 3)
    assert line["tools"] == {"code": ["exact v1"], "math": ["exact v1"]}
    assert line["truncated/code"] == line["truncated/math"] == 0.0


def test_samples_cut_at_the_length_limit_are_counted_per_task() -> None:
    cut, done = group("a", [1.0, 0.0, 1.0, 0.0], task="math"), group("b", [1.0, 0.0, 1.0, 0.0], task="code")
    for i in (0, 1, 3):
        cut.completions[i].finish_reason = "length"
    done.completions[0].finish_reason = "stop"
    line = (
        plan_step([cut, done], version=0, grpo=GRPO)
        .record(step=1, version=1, t_start=0.0, t_end=1.0, consumed=2, dropped=0)
        .to_dict()
    )
    assert line["truncated/math"] == 0.75 and line["truncated/code"] == 0.0


def test_a_step_without_an_update_has_no_tokens_per_s() -> None:
    plan = plan_step([group("p1", [1.0] * 4)], version=0, grpo=GRPO)
    line = plan.record(
        step=1, version=0, t_start=0.0, t_end=1.0, consumed=1, dropped=0, train={"retire_s": 0.1}
    ).to_dict()
    assert "tokens_per_s" not in line and line["trained_rows"] == 0 and line["reward_mean"] == 1.0


def test_a_step_needs_a_group() -> None:
    with pytest.raises(ValueError, match="at least one group"):
        plan_step([], version=0, grpo=GRPO)
