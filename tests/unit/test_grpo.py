"""GRPO maths against hand-computed values: advantages, the decoupled-PPO loss, staleness, the config."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from rlar.learn.grpo import (
    GRPOConfig,
    LossOutput,
    advantages,
    group_advantages,
    grpo_token_loss,
    k3_kl,
    staleness_weight,
)

# ---- advantages ---------------------------------------------------------------------------------


def test_advantages_are_centred_and_divided_by_the_sample_std() -> None:
    adv = group_advantages(torch.tensor([1.0, 0.0, 0.0, 1.0]))
    # mean 0.5, Bessel std sqrt(4 * 0.25 / 3) = 0.57735
    expected = 0.5 / math.sqrt(1.0 / 3.0)
    assert adv.tolist() == pytest.approx([expected, -expected, -expected, expected], rel=1e-5)


def test_masked_members_leave_the_statistics_and_get_zero_advantage() -> None:
    rewards = torch.tensor([1.0, 0.0, 5.0, 0.5])
    mask = torch.tensor([True, True, False, True])
    # valid rewards 1, 0, 0.5: mean 0.5, std sqrt((0.25 + 0.25 + 0) / 2) = 0.5
    adv = group_advantages(rewards, mask)
    assert adv.tolist() == pytest.approx([1.0, -1.0, 0.0, 0.0], abs=1e-5)
    centred = group_advantages(rewards, mask, normalize_std=False)
    assert centred.tolist() == pytest.approx([0.5, -0.5, 0.0, 0.0], abs=1e-7)


@given(
    st.lists(st.tuples(st.floats(-1e3, 1e3, allow_nan=False), st.booleans()), min_size=0, max_size=16),
    st.booleans(),
)
def test_the_list_form_matches_torch_statistics_in_float64(
    members: list[tuple[float, bool]], norm: bool
) -> None:
    rewards, mask = [r for r, _ in members], [m for _, m in members]
    got = advantages(rewards, mask, normalize_std=norm, eps=1e-6)
    assert (
        got
        == group_advantages(
            torch.tensor(rewards, dtype=torch.float64),
            torch.tensor(mask, dtype=torch.bool),
            normalize_std=norm,
        ).tolist()
    )
    vals = torch.tensor([r for r, m in members if m], dtype=torch.float64)
    if len(vals) < 2 or bool((vals == vals[0]).all()) or float(vals.std()) <= 1e-6:
        assert got == [0.0] * len(members)
        return
    ref = (vals - vals.mean()) / (vals.std(unbiased=True) + 1e-6) if norm else vals - vals.mean()
    it = iter(ref.to(torch.float32).tolist())
    expected = [next(it) if m else 0.0 for m in mask]
    assert got == pytest.approx(expected, rel=1e-5, abs=1e-5)


def test_all_equal_group_gets_zero_advantages() -> None:
    assert group_advantages(torch.full((4,), 0.7)).tolist() == [0.0] * 4
    # Equal among the valid members although the masked one differs.
    adv = group_advantages(torch.tensor([1.0, 1.0, 0.0, 1.0]), torch.tensor([True, True, False, True]))
    assert adv.tolist() == [0.0] * 4


def test_group_with_one_valid_member_gets_zero_advantages() -> None:
    adv = group_advantages(torch.tensor([1.0, 0.0, 0.3]), torch.tensor([False, True, False]))
    assert adv.tolist() == [0.0, 0.0, 0.0]


def test_advantages_reject_a_mask_of_the_wrong_shape() -> None:
    with pytest.raises(ValueError):
        group_advantages(torch.zeros(4), torch.ones(3, dtype=torch.bool))


def test_advantages_reject_a_non_finite_reward_unless_it_is_masked() -> None:
    with pytest.raises(ValueError):
        group_advantages(torch.tensor([1.0, float("nan"), 0.0]))
    adv = group_advantages(torch.tensor([1.0, float("nan"), 0.0]), torch.tensor([True, False, True]))
    assert adv[1].item() == 0.0 and adv[0].item() > 0.0


# ---- the token loss on a 2 x 3 example --------------------------------------------------------------
#
# Row 0 (A = +1): pos 1 ratio 1.1 (inside the clip), behaviour weight 1.5 → term −1.5 · 1.1 = −1.65
#                 pos 2 ratio 1.5 (clipped to 1.2), weight 3 truncated to 2 → term −2 · 1.2 = −2.4
# Row 1 (A = −1): pos 1 ratio 0.5 (clipped to 0.8, the min picks −0.8), weight 1 → term +0.8
#                 pos 2 is padding filled with garbage; position 0 of each row is the prompt.


def _example() -> dict[str, torch.Tensor]:
    prox = torch.tensor([[0.0, -1.0, -2.0], [0.0, -1.0, -100.0]])
    new = prox + torch.log(torch.tensor([[1.0, 1.1, 1.5], [1.0, 0.5, 1.0]]))
    new[1, 2] = 100.0  # garbage at a padded position must be ignored
    behav = prox - torch.log(torch.tensor([[1.0, 1.5, 3.0], [1.0, 1.0, 1.0]]))
    # Reference: ref − new = ln 2, 0, −ln 2 on the three response tokens.
    ref = new + torch.log(torch.tensor([[1.0, 2.0, 1.0], [1.0, 0.5, 1.0]]))
    mask = torch.tensor([[False, True, True], [False, True, False]])
    return {
        "logprobs": new.requires_grad_(True),
        "prox_logprobs": prox,
        "behav_logprobs": behav,
        "advantages": torch.tensor([1.0, -1.0]),
        "response_mask": mask,
        "ref": ref,
    }


def _loss(ex: dict[str, torch.Tensor], **kw: Any) -> LossOutput:
    return grpo_token_loss(
        ex["logprobs"],
        ex["prox_logprobs"],
        ex["behav_logprobs"],
        ex["advantages"],
        ex["response_mask"],
        clip_eps_low=0.2,
        clip_eps_high=0.2,
        **kw,
    )


def test_token_mean_loss_matches_the_hand_computation() -> None:
    out = _loss(_example(), is_cap=2.0, loss_agg="token-mean")
    assert float(out.loss.detach()) == pytest.approx((-1.65 - 2.4 + 0.8) / 3, rel=1e-5)
    assert out.tokens == 3 and out.sequences == 2
    m = out.metrics
    assert m["clip_frac"] == pytest.approx(2 / 3)
    assert m["ratio_mean"] == pytest.approx((1.1 + 1.5 + 0.5) / 3, rel=1e-5)
    assert m["is_weight_mean"] == pytest.approx((1.5 + 2.0 + 1.0) / 3, rel=1e-5)
    assert m["is_trunc_frac"] == pytest.approx(1 / 3)
    assert "kl" not in m


def test_seq_mean_token_mean_loss_averages_within_rows_first() -> None:
    out = _loss(_example(), is_cap=2.0, loss_agg="seq-mean-token-mean")
    assert float(out.loss.detach()) == pytest.approx(((-1.65 - 2.4) / 2 + 0.8) / 2, rel=1e-5)


def test_gradient_flows_only_through_unclipped_response_tokens() -> None:
    ex = _example()
    _loss(ex, is_cap=2.0, loss_agg="token-mean").loss.backward()
    grad = ex["logprobs"].grad
    assert grad is not None
    # d(−w·r·A)/d new = −w·A·r at the unclipped token, / 3 tokens; clipped and padded tokens get 0.
    assert grad[0, 1].item() == pytest.approx(-1.5 * 1.1 / 3, rel=1e-5)
    assert grad[0, 2].item() == 0.0 and grad[1, 1].item() == 0.0 and grad[1, 2].item() == 0.0


def test_is_cap_none_keeps_the_full_behaviour_weight() -> None:
    out = _loss(_example(), is_cap=None)
    assert float(out.loss.detach()) == pytest.approx((-1.65 - 3 * 1.2 + 0.8) / 3, rel=1e-5)
    assert out.metrics["is_trunc_frac"] == 0.0


def test_k3_kl_term_is_added_with_its_coefficient() -> None:
    ex = _example()
    # k3 = e^d − d − 1: d = ln 2 → 1 − ln 2; d = 0 → 0; d = −ln 2 → ln 2 − 1/2. Sum = 1/2.
    out = _loss(ex, is_cap=2.0, ref_logprobs=ex["ref"], kl_coef=0.1)
    assert out.metrics["kl"] == pytest.approx(0.5 / 3, rel=1e-5)
    assert float(out.loss.detach()) == pytest.approx((-1.65 - 2.4 + 0.8) / 3 + 0.1 * 0.5 / 3, rel=1e-5)
    per_tok = k3_kl(torch.tensor([0.0]), torch.tensor([math.log(2.0)]))
    assert per_tok.item() == pytest.approx(1 - math.log(2.0), rel=1e-6)


def test_kl_coefficient_without_reference_is_an_error() -> None:
    with pytest.raises(ValueError):
        _loss(_example(), kl_coef=0.1)


def test_sequence_weights_scale_rows_and_normalizer_replaces_the_denominator() -> None:
    out = _loss(_example(), is_cap=2.0, seq_weights=torch.tensor([1.0, 0.5]))
    assert float(out.loss.detach()) == pytest.approx((-1.65 - 2.4 + 0.5 * 0.8) / 3, rel=1e-5)
    out = _loss(_example(), is_cap=2.0, normalizer=6.0)
    assert float(out.loss.detach()) == pytest.approx((-1.65 - 2.4 + 0.8) / 6, rel=1e-5)


def test_entropy_metric_is_the_mean_over_response_tokens() -> None:
    ent = torch.tensor([[9.0, 1.0, 2.0], [9.0, 3.0, 9.0]])
    out = _loss(_example(), entropy=ent)
    assert out.metrics["entropy"] == pytest.approx(2.0)


def test_loss_rejects_mismatched_shapes() -> None:
    ex = _example()
    with pytest.raises(ValueError):
        grpo_token_loss(
            ex["logprobs"],
            ex["prox_logprobs"][:, :2],
            ex["behav_logprobs"],
            ex["advantages"],
            ex["response_mask"],
        )


# ---- staleness and config -------------------------------------------------------------------------


def test_drop_mode_keeps_samples_within_the_bound_at_full_weight() -> None:
    assert [staleness_weight(s, 4, "drop") for s in (0, 3, 4, 5, 9)] == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert staleness_weight(0, 0, "drop") == 1.0 and staleness_weight(1, 0, "drop") == 0.0


def test_decay_mode_scales_linearly_down_to_the_bound() -> None:
    got = [staleness_weight(s, 4, "decay") for s in (0, 1, 2, 4, 5)]
    assert got == pytest.approx([1.0, 0.8, 0.6, 0.2, 0.0])


def test_negative_staleness_is_an_error() -> None:
    with pytest.raises(ValueError):
        staleness_weight(-1, 4)


def test_config_documents_every_field_and_validates_ranges() -> None:
    assert all(f.description for f in GRPOConfig.model_fields.values())
    cfg = GRPOConfig(group_size=4, loss_agg="seq-mean-token-mean", staleness_mode="decay")
    assert cfg.group_size == 4
    with pytest.raises(ValidationError):
        GRPOConfig(group_size=1)
    with pytest.raises(ValidationError):
        GRPOConfig(clip_eps_low=0.0, clip_eps_high=0.0)
    with pytest.raises(ValidationError):
        GRPOConfig(loss_agg="sum")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        GRPOConfig(is_cap=0.5)
