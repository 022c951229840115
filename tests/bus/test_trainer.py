"""DeepSpeedPolicyTrainer on the real tiny policy: updates, accumulation, checkpoints, export
(two ranks: tests/long/test_trainer_ranks.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from rlar.learn.grpo import GRPOConfig, grpo_token_loss
from rlar.learn.trainer import DeepSpeedPolicyTrainer, PolicyBatch, TrainerConfig, token_logprobs
from rlar.policy.model import build_tiny_policy
from tests.support.trainer import flat_weights, make_batch


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch.set_num_threads(1)
    return build_tiny_policy(tmp_path_factory.mktemp("tiny"))


def adam_state(tr: DeepSpeedPolicyTrainer) -> list[tuple[float, torch.Tensor, torch.Tensor]]:
    """(step, exp_avg, exp_avg_sq) of each optimizer slot (ZeRO wraps the torch AdamW)."""
    opt = tr.engine.optimizer
    inner = getattr(opt, "optimizer", opt)
    out = []
    for group in inner.param_groups:
        for p in group["params"]:
            st = inner.state[p]
            out.append((float(st["step"]), st["exp_avg"].clone(), st["exp_avg_sq"].clone()))
    return out


def surrogate(new: torch.Tensor, prox: torch.Tensor, batch: PolicyBatch) -> float:
    out = grpo_token_loss(new, prox, batch.behav_logprobs, batch.advantages, batch.response_mask)
    return float(out.loss)


def test_logprobs_of_a_padded_batch_match_each_sequence_alone(tiny: Path) -> None:
    tr = DeepSpeedPolicyTrainer(TrainerConfig(model_dir=tiny, zero_stage=0))
    batch = make_batch(6)
    lp = tr.logprobs(batch)
    for i in range(len(batch)):
        n = int(batch.attention_mask[i].sum())
        ids = batch.input_ids[i : i + 1, :n]
        with torch.no_grad():
            alone, _ = token_logprobs(tr.module, ids, torch.ones_like(ids))
        m = batch.response_mask[i, :n]
        assert torch.allclose(lp[i, :n][m], alone[0][m], atol=1e-5)
        assert bool((lp[i][~batch.response_mask[i]] == 0).all())


def test_one_step_changes_weights_and_lowers_the_loss_on_a_repeated_batch(tiny: Path) -> None:
    tr = DeepSpeedPolicyTrainer(TrainerConfig(model_dir=tiny, zero_stage=0, lr=1e-3))
    batch = make_batch()
    w0 = flat_weights(tr)
    lp0 = tr.logprobs(batch)
    m = tr.step(batch)
    assert {"loss", "pg_loss", "clip_frac", "ratio_mean", "is_weight_mean", "entropy", "grad_norm"} <= set(m)
    assert m["tokens"] == float(batch.response_mask.sum()) and m["step"] == 1.0
    assert m["grad_norm"] > 0.0
    assert not torch.equal(w0, flat_weights(tr))
    lp1 = tr.logprobs(batch)
    # Same proximal policy (the weights before the step): the objective got better.
    assert surrogate(lp1, lp0, batch) < surrogate(lp0, lp0, batch)
    # Repeating the batch keeps pushing positive-advantage responses up and negative ones down.
    score = [float((batch.advantages * lp1.sum(1)).sum())]
    for _ in range(3):
        tr.step(batch)
        score.append(float((batch.advantages * tr.logprobs(batch).sum(1)).sum()))
    assert score == sorted(score) and score[-1] > score[0]


# Unit roundoff of the training dtype (fp32): one rounding errs by at most this, relative.
U32 = torch.finfo(torch.float32).eps / 2


def reduction_length(tr: DeepSpeedPolicyTrainer, batch: PolicyBatch, n_micro: int) -> int:
    """How many float additions can separate two summation orders of one gradient element.

    A weight's gradient sums over every (row, position) of the batch (B·T terms), accumulated over
    ``n_micro`` micro-batches; each term is itself the end of a chain of reductions, forward and
    backward: per layer the q/k/v/o projections and the norms (~4·hidden), the attention over T positions
    and the MLP (intermediate); then the head (hidden) and the softmax over the vocabulary.
    """
    c = tr.module.config
    b, t = batch.input_ids.shape
    chain = c.num_hidden_layers * (4 * c.hidden_size + t + c.intermediate_size) + c.hidden_size + c.vocab_size
    return b * t + n_micro + 2 * chain


def capture_gradients(tr: DeepSpeedPolicyTrainer) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """Instrument ``tr``'s engine for one step: returns (the accumulated gradient handed to the optimizer,
    the sum over micro-batches of each micro-batch's absolute gradient), both filled in by ``tr.step``."""
    total: dict[str, torch.Tensor] = {}
    magnitude: dict[str, torch.Tensor] = {}
    backward, step = tr.engine.backward, tr.engine.step

    def grads() -> dict[str, torch.Tensor]:
        return {n: p.grad.detach().clone() for n, p in tr.module.named_parameters() if p.grad is not None}

    def on_backward(*args: object, **kwargs: object) -> object:
        out = backward(*args, **kwargs)
        now = grads()
        for n, g in now.items():
            part = (g - total[n]).abs() if n in total else g.abs()
            magnitude[n] = magnitude[n] + part if n in magnitude else part
        total.update(now)
        return out

    def on_step(*args: object, **kwargs: object) -> object:
        total.update(grads())
        return step(*args, **kwargs)

    tr.engine.backward = on_backward  # type: ignore[method-assign]
    tr.engine.step = on_step  # type: ignore[method-assign]
    return total, magnitude


def clip_coef(grads: dict[str, torch.Tensor], clip: float) -> float:
    norm = float(torch.cat([g.flatten() for g in grads.values()]).double().norm())
    return min(1.0, clip / (norm + 1e-6)) if clip > 0 else 1.0


@pytest.mark.parametrize(
    ("agg", "split_by"),
    [
        ("token-mean", {"micro_batch_size": 3}),
        ("seq-mean-token-mean", {"micro_batch_size": 3}),
        ("token-mean", {"micro_batch_tokens": 24}),
    ],
)
def test_micro_batching_gives_the_same_update_as_one_pass(
    tiny: Path, agg: str, split_by: dict[str, int]
) -> None:
    """Same gradient and same weights after one step, within bounds derived from fp32 rounding.

    The gradients differ only in summation order, so elementwise they may differ by at most
    2·γ_n·Σ|terms| (Higham's bound for a sum of n terms in any order, γ_n = n·u/(1 − n·u)), with n from
    ``reduction_length`` and Σ|terms| at least the sum of the micro-batches' absolute gradients. A wrong
    normaliser or a lost micro-batch changes gradients by a fraction of their size, far above that.

    AdamW's first step moves each weight by lr·x/(|x| + eps), x the clipped gradient: a function with
    slope eps/(|x| + eps)², so a gradient that is zero up to rounding may legitimately move either way
    (up to 2·lr), while a well-determined one moves the same up to rounding. The weight tolerance is that
    slope applied to the gradient bound, per element.
    """
    batch = make_batch(10)
    grpo = GRPOConfig(loss_agg=agg)  # type: ignore[arg-type]
    whole = DeepSpeedPolicyTrainer(
        TrainerConfig(model_dir=tiny, zero_stage=1, micro_batch_size=64, grpo=grpo)
    )
    split = DeepSpeedPolicyTrainer(TrainerConfig(model_dir=tiny, zero_stage=1, grpo=grpo, **split_by))  # type: ignore[arg-type]
    assert torch.equal(flat_weights(whole), flat_weights(split))
    g1, _ = capture_gradients(whole)
    g2, magnitude = capture_gradients(split)
    m1, m2 = whole.step(batch), split.step(batch)

    assert m1["micro_batches"] == 1 and m2["micro_batches"] >= 4
    n = reduction_length(split, batch, n_micro=int(m2["micro_batches"]))
    gamma = n * U32 / (1 - n * U32)
    assert m1["loss"] == pytest.approx(m2["loss"], rel=2 * gamma, abs=1e-12)
    assert g1.keys() == g2.keys() == magnitude.keys()
    delta = {k: 2 * gamma * magnitude[k] for k in g1}
    for k in g1:
        err = (g1[k] - g2[k]).abs()
        assert bool((err <= delta[k]).all()), (
            f"{k}: gradient differs by {float((err - delta[k]).max()):.3g} over the bound"
        )

    cfg = whole.cfg
    c1, c2 = clip_coef(g1, cfg.grad_clip), clip_coef(g2, cfg.grad_clip)
    norm = float(torch.cat([g.flatten() for g in g1.values()]).double().norm())
    delta_norm = float(torch.cat([d.flatten() for d in delta.values()]).double().norm())
    dc = max(c1, c2) * delta_norm / max(norm - delta_norm, 1e-30) + 4 * U32 if min(c1, c2) < 1.0 else 0.0
    w1, w2 = dict(whole.export_named_tensors()), dict(split.export_named_tensors())
    for k in g1:
        x = c1 * g1[k].abs()
        e = max(c1, c2) * delta[k] + g1[k].abs() * dc  # bound on |c1·g1 − c2·g2|
        lo = x - e
        slope = torch.where(lo > 0, e * cfg.adam_eps / (lo + cfg.adam_eps) ** 2, torch.full_like(x, 2.0))
        tol = cfg.lr * slope.clamp(max=2.0) + 8 * U32 * (w1[k].abs() + cfg.lr)
        err = (w1[k] - w2[k]).abs()
        assert bool((err <= tol).all()), (
            f"{k}: weight differs by {float((err - tol).max()):.3g} over the bound"
        )


def test_later_minibatches_are_clipped_around_the_proximal_policy(tiny: Path) -> None:
    tr = DeepSpeedPolicyTrainer(TrainerConfig(model_dir=tiny, zero_stage=0, lr=3e-3, minibatches_per_step=3))
    batch = make_batch(12)
    m = tr.step(batch)
    assert tr.global_step == 3
    assert m["ratio_mean"] != pytest.approx(1.0, abs=1e-6)
    assert m["clip_frac"] > 0.0


@pytest.mark.parametrize("stage", [0, 1, 2])
def test_checkpoint_restores_weights_optimizer_state_and_extra(
    tiny: Path, tmp_path: Path, stage: int
) -> None:
    cfg = TrainerConfig(model_dir=tiny, zero_stage=stage, warmup_steps=5)
    a = DeepSpeedPolicyTrainer(cfg)
    batch = make_batch()
    a.step(batch)
    a.step(batch)
    extra = {"policy_version": 2, "cursor": {"add": 17, "copy": 3}}
    a.save_checkpoint(tmp_path / "ckpt", step=2, extra=extra)

    b = DeepSpeedPolicyTrainer(cfg)
    assert not torch.equal(flat_weights(a), flat_weights(b))
    assert b.load_latest(tmp_path / "ckpt") == extra
    assert b.resumed_step == 2 and b.global_step == a.global_step == 2
    assert torch.equal(flat_weights(a), flat_weights(b))
    for (sa, ma, va), (sb, mb, vb) in zip(adam_state(a), adam_state(b), strict=True):
        assert sa == sb == 2.0
        assert torch.equal(ma, mb) and torch.equal(va, vb)
    assert b.engine.get_lr() == a.engine.get_lr()
    # The same next step from both gives the same weights: nothing of the training state was lost.
    a.step(batch)
    b.step(batch)
    assert torch.equal(flat_weights(a), flat_weights(b))


def test_load_latest_without_a_checkpoint_returns_none(tiny: Path, tmp_path: Path) -> None:
    tr = DeepSpeedPolicyTrainer(TrainerConfig(model_dir=tiny, zero_stage=0))
    assert tr.load_latest(tmp_path / "nothing") is None
    assert tr.resumed_step is None


def test_keep_last_prunes_older_checkpoints(tiny: Path, tmp_path: Path) -> None:
    tr = DeepSpeedPolicyTrainer(TrainerConfig(model_dir=tiny, zero_stage=0))
    for step in (1, 2, 3):
        tr.step(make_batch(4, seed=step))
        tr.save_checkpoint(tmp_path, step=step, extra={"s": step}, keep_last=2)
    assert sorted(p.name for p in tmp_path.glob("step*")) == ["step00000002", "step00000003"]
    assert (tmp_path / "latest").read_text().strip() == "step00000003"


@pytest.mark.parametrize("stage", [1, 3])
def test_exported_weights_reload_as_an_hf_model_with_the_same_logprobs(
    tiny: Path, tmp_path: Path, stage: int
) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tr = DeepSpeedPolicyTrainer(TrainerConfig(model_dir=tiny, zero_stage=stage, lr=1e-3))
    batch = make_batch()
    tr.step(batch)
    names = [n for n, _ in tr.export_named_tensors()]
    assert "model.embed_tokens.weight" in names and len(names) == len(set(names))
    out = tr.save_hf(tmp_path / "hf")
    hf = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32)
    with torch.no_grad():
        lp, _ = token_logprobs(hf, batch.input_ids, batch.attention_mask)
    assert torch.allclose(lp * batch.response_mask, tr.logprobs(batch), atol=1e-6)
    assert AutoTokenizer.from_pretrained(out).eos_token_id == 1


def test_kl_to_the_reference_starts_at_zero_and_grows(tiny: Path) -> None:
    tr = DeepSpeedPolicyTrainer(
        TrainerConfig(model_dir=tiny, zero_stage=0, lr=1e-3, grpo=GRPOConfig(kl_coef=0.1))
    )
    batch = make_batch()
    first = tr.step(batch)
    assert first["kl"] == pytest.approx(0.0, abs=1e-7)
    later = [tr.step(batch)["kl"] for _ in range(2)]
    assert later[-1] > 1e-6


def test_one_rank_trains_on_a_batch_of_any_size(tiny: Path) -> None:
    tr = DeepSpeedPolicyTrainer(TrainerConfig(model_dir=tiny, zero_stage=0))
    assert tr.world_size == 1
    assert tr.step(make_batch(5))["sequences"] == 5.0


def test_from_samples_rejects_logprobs_that_do_not_match_the_response() -> None:
    with pytest.raises(ValueError):
        PolicyBatch.from_samples([[5]], [[6]], [[-1.0, -2.0]], [1.0])
    with pytest.raises(ValueError):
        PolicyBatch.from_samples([[]], [[6]], [[-1.0]], [1.0])


def test_sft_warmup_teaches_answers_that_stop_at_eos_and_stops_at_the_target(
    tiny: Path, tmp_path: Path
) -> None:
    import json

    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rlar.learn.sft import greedy_answers, sft_warmup

    pairs = [("r:abc=", "cba"), ("c:xyz=", "xyz"), ("1+2=", "3")]
    out = sft_warmup(
        tiny, pairs, steps=400, lr=3e-3, batch=8, seed=0, out_dir=tmp_path / "sft", target_accuracy=1.0
    )
    info = json.loads((out / "sft.json").read_text())
    assert info["greedy_accuracy"] == 1.0 and info["steps"] < 400 and info["steps"] % 10 == 0
    model = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32)
    tok = AutoTokenizer.from_pretrained(out)
    # Generation stops by itself: a model that never learned EOS would run on to max_new_tokens.
    assert greedy_answers(model, tok, [p for p, _ in pairs], max_new_tokens=8) == ["cba", "xyz", "3"]


def test_grouped_sft_warmup_trains_every_group_up_to_the_target(tiny: Path, tmp_path: Path) -> None:
    import json

    from rlar.learn.sft import sft_warmup

    pairs = {"rev": [("r:abc=", "cba"), ("r:pq=", "qp")], "add": [("1+2=", "3")]}
    out = sft_warmup(
        tiny,
        pairs,
        steps=400,
        lr=3e-3,
        batch=8,
        seed=0,
        out_dir=tmp_path / "sft",
        eval_pairs=pairs,
        target_accuracy=1.0,
    )
    info = json.loads((out / "sft.json").read_text())
    assert info["greedy_accuracy_by_group"] == {"rev": 1.0, "add": 1.0} and info["steps"] < 400
    with pytest.raises(ValueError):
        sft_warmup(tiny, pairs, steps=1, eval_pairs={"rev": pairs["rev"]}, out_dir=tmp_path / "bad")
