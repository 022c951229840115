"""The learner at scale, on the real tiny policy: bf16/fp16 precision, gradient checkpointing, LoRA (only
adapters train and travel; a rollout that merges them serves the learner's policy), learning-rate
schedules, token-budget micro-batches, and the memory estimate against what autograd keeps."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM

from rlar.learn.batch import micro_batches, token_logprobs
from rlar.learn.config import LoraSettings
from rlar.learn.memory import ModelShape, estimate_learner, saved_activation_bytes
from rlar.learn.trainer import DeepSpeedPolicyTrainer, PrecisionUnsupported, TrainerConfig, check_precision
from rlar.policy.engines import TransformersEngineConfig, make_engine
from rlar.policy.model import build_tiny_policy
from tests.support.trainer import flat_weights, make_batch


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch.set_num_threads(1)
    return build_tiny_policy(tmp_path_factory.mktemp("tiny"))


def test_bf16_trains_in_16_bits_over_fp32_master_weights(tiny: Path) -> None:
    tr = DeepSpeedPolicyTrainer(TrainerConfig(model_dir=tiny, dtype="bf16", zero_stage=1, lr=1e-3))
    assert {p.dtype for p in tr.module.parameters()} == {torch.bfloat16}
    assert {t.dtype for t in tr.engine.optimizer.single_partition_of_fp32_groups} == {torch.float32}
    fp32 = DeepSpeedPolicyTrainer(TrainerConfig(model_dir=tiny, zero_stage=0))
    batch = make_batch()
    mask = batch.response_mask
    assert (tr.logprobs(batch) - fp32.logprobs(batch))[mask].abs().max() < 0.1  # bf16 rounding, not garbage
    first = tr.step(batch)
    second = tr.step(batch)
    assert math.isfinite(first["loss"]) and second["loss"] < first["loss"]


def test_fp16_trains_or_is_refused_with_a_clear_error(tiny: Path) -> None:
    try:
        check_precision("fp16")
    except PrecisionUnsupported:
        with pytest.raises(PrecisionUnsupported, match="fp16"):
            DeepSpeedPolicyTrainer(TrainerConfig(model_dir=tiny, dtype="fp16", zero_stage=1))
        return
    tr = DeepSpeedPolicyTrainer(TrainerConfig(model_dir=tiny, dtype="fp16", zero_stage=1, lr=1e-3))
    assert {p.dtype for p in tr.module.parameters()} == {torch.float16}
    assert math.isfinite(tr.step(make_batch())["loss"])


def test_gradient_checkpointing_gives_the_same_update(tiny: Path) -> None:
    batch = make_batch()
    after = []
    for ckpt in (False, True):
        tr = DeepSpeedPolicyTrainer(
            TrainerConfig(model_dir=tiny, zero_stage=0, lr=1e-3, gradient_checkpointing=ckpt)
        )
        assert tr.module.is_gradient_checkpointing is ckpt  # type: ignore[attr-defined]
        tr.step(batch)
        after.append(flat_weights(tr))
    assert torch.allclose(after[0], after[1], atol=1e-6)


def test_lora_trains_only_adapters_and_a_rollout_merging_them_serves_the_learners_policy(
    tiny: Path, tmp_path: Path
) -> None:
    cfg = TrainerConfig(
        model_dir=tiny, zero_stage=0, lr=1e-2, lora=LoraSettings(r=4, alpha=8), grpo={"kl_coef": 0.1}
    )
    tr = DeepSpeedPolicyTrainer(cfg)
    assert tr.ref_model is None  # the reference is the base: adapters switched off
    base = {n: p.detach().clone() for n, p in tr.module.named_parameters() if "lora_" not in n}
    batch = make_batch()
    first = tr.step(batch)
    assert first["kl"] == 0.0  # B starts at zero: the adapted policy is the base
    tr.step(batch)
    assert all(torch.equal(p, base[n]) for n, p in tr.module.named_parameters() if "lora_" not in n)
    tensors = dict(tr.export_named_tensors())
    assert tensors and all(".lora_A.weight" in n or ".lora_B.weight" in n for n in tensors)
    assert sum(t.numel() for t in tensors.values()) == tr.trainable_params
    adapter = tr.adapter_config()
    assert adapter is not None and adapter["r"] == 4

    learner_lp = tr.logprobs(batch)
    mask = batch.response_mask
    engine = make_engine(TransformersEngineConfig(model=str(tiny), max_model_len=128))
    try:
        engine.load_weights(tensors, 1, adapter)
        engine.load_weights(tensors, 2, adapter)  # a later version replaces the merge, never adds to it
        with torch.no_grad():
            served, _ = token_logprobs(engine.model, batch.input_ids, batch.attention_mask)
        assert (served - learner_lp)[mask].abs().max() < 1e-4
        bad = {k: v[:2] if ".lora_A." in k else v for k, v in tensors.items()}
        with pytest.raises(ValueError, match="do not fit rank"):
            engine.load_weights(bad, 3, adapter)
    finally:
        engine.close()
    out = tr.save_hf(tmp_path / "merged")
    merged = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32).eval()
    with torch.no_grad():
        reloaded, _ = token_logprobs(merged, batch.input_ids, batch.attention_mask)
    assert (reloaded - learner_lp)[mask].abs().max() < 1e-4


def test_lr_follows_the_warmup_then_the_schedule(tiny: Path) -> None:
    cfg = TrainerConfig(
        model_dir=tiny,
        zero_stage=0,
        lr=1e-3,
        warmup_steps=2,
        lr_schedule="cosine",
        decay_steps=6,
        min_lr_ratio=0.1,
    )
    assert [round(cfg.lr_factor(k), 4) for k in range(8)] == [0.5, 1.0, 1.0, 0.8682, 0.55, 0.2318, 0.1, 0.1]
    linear = cfg.model_copy(update={"lr_schedule": "linear", "decay_steps": None})
    assert [linear.lr_factor(k, total=4) for k in range(5)] == pytest.approx([0.5, 1.0, 1.0, 0.55, 0.1])
    assert cfg.model_copy(update={"lr_schedule": "constant"}).lr_factor(5) == 1.0
    tr = DeepSpeedPolicyTrainer(cfg)
    batch = make_batch(4)
    lrs = [tr.step(batch)["lr"] for _ in range(5)]
    assert lrs == pytest.approx([1e-3 * cfg.lr_factor(k) for k in range(5)])


def test_micro_batches_respect_the_token_budget_and_cover_every_row() -> None:
    lengths = [5, 40, 7, 12, 3, 90, 12, 8]
    groups = micro_batches(lengths, max_rows=3, max_tokens=30)
    assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
    for g in groups:
        assert len(g) <= 3
        assert len(g) == 1 or len(g) * max(lengths[i] for i in g) <= 30
    assert micro_batches(lengths, max_rows=3) == [[0, 1, 2], [3, 4, 5], [6, 7]]


@pytest.mark.parametrize(
    ("dtype", "ckpt"), [("fp32", False), ("bf16", False), ("fp32", True), ("bf16", True)]
)
def test_activation_estimate_matches_what_autograd_keeps(tiny: Path, dtype: str, ckpt: bool) -> None:
    """Bytes of the distinct tensors saved for the backward pass by the decoder stack (parameters excluded),
    counted with saved_tensors_hooks, against the estimate's per-token figure."""
    shape = ModelShape.from_config(tiny)
    model = AutoModelForCausalLM.from_pretrained(
        tiny, dtype=torch.bfloat16 if dtype == "bf16" else torch.float32
    )
    model.train()
    if ckpt:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        if storage.data_ptr() not in params:
            saved[storage.data_ptr()] = storage.nbytes()
        return t

    ids = torch.randint(3, 250, (4, 50))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model.model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False)
    per_token, _ = saved_activation_bytes(shape, dtype, checkpointing=ckpt)
    assert sum(saved.values()) == pytest.approx(ids.numel() * per_token, rel=0.02)


def test_memory_estimate_orders_the_configs_and_counts_lora_parameters(tiny: Path) -> None:
    shape = ModelShape.from_config(tiny)
    assert shape.params == sum(p.numel() for p in AutoModelForCausalLM.from_pretrained(tiny).parameters())
    base = TrainerConfig(model_dir=tiny, micro_batch_tokens=2048)
    fp32 = estimate_learner(base, shape=shape)
    bf16 = estimate_learner(base.model_copy(update={"dtype": "bf16"}), shape=shape)
    lora = estimate_learner(base.model_copy(update={"dtype": "bf16", "lora": LoraSettings(r=4)}), shape=shape)
    ckpt = estimate_learner(base.model_copy(update={"gradient_checkpointing": True}), shape=shape)
    tr = DeepSpeedPolicyTrainer(TrainerConfig(model_dir=tiny, zero_stage=0, lora=LoraSettings(r=4)))
    assert lora.trainable == tr.trainable_params
    assert lora.parts["optimizer"] == 8 * tr.trainable_params
    assert fp32.parts["weights"] == 4 * shape.params and bf16.parts["weights"] == 2 * shape.params
    assert ckpt.parts["activations"] < fp32.parts["activations"]
    assert lora.total < bf16.total and "memory estimate per rank" in fp32.summary()
    sharded = estimate_learner(base.model_copy(update={"zero_stage": 3}), shape=shape, world_size=4)
    assert sharded.parts["optimizer"] == fp32.parts["optimizer"] // 4


def test_the_estimate_line_names_the_parts_or_why_there_is_none(tiny: Path, tmp_path: Path) -> None:
    from rlar.learn.memory import estimate_line

    line = estimate_line(TrainerConfig(model_dir=tiny, dtype="bf16"))
    assert line.startswith("memory estimate per rank") and "optimizer" in line and "bf16" in line
    assert estimate_line(TrainerConfig(model_dir=tmp_path / "missing")).startswith("no memory estimate (")
