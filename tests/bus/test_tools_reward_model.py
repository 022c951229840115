"""The learned reward-model tool on a tiny local checkpoint (random preferences: shape and range only)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from rlar.tools import ToolExecutor, ToolInput, make_tool
from rlar.tools.reward_model import build_tiny_reward_model, resolve_device, resolve_dtype, token_batches
from tests.support.reward_model import INPUTS, ok_score, rm_spec

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def rm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_reward_model(tmp_path_factory.mktemp("tiny_rm"))


def test_tiny_reward_model_is_a_one_label_classifier(rm_dir):
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(rm_dir)
    assert config.num_labels == 1 and config.pad_token_id is not None
    assert build_tiny_reward_model(rm_dir) == rm_dir  # idempotent


async def test_reward_model_scores_a_batch_in_range_and_batching_does_not_change_scores(rm_dir):
    tool = make_tool(rm_spec(rm_dir, batch_size=2))
    results = await tool.score_batch(INPUTS)
    assert len(results) == len(INPUTS)
    assert all(r.status == "ok" and 0.0 <= ok_score(r) <= 1.0 for r in results), results
    for r in results:
        assert r.score == pytest.approx(
            1 / (1 + torch.exp(torch.tensor(-r.details["logit"])).item()), abs=1e-6
        )
    one_by_one = [await tool.score(x) for x in INPUTS]
    assert [r.score for r in one_by_one] == pytest.approx([r.score for r in results], abs=1e-5)


async def test_reward_model_transforms_and_formats(rm_dir):
    ident = make_tool(rm_spec(rm_dir, transform="identity").replace(score_range=(-100.0, 100.0)))
    tanh = make_tool(rm_spec(rm_dir, transform="tanh01", temperature=2.0))
    concat = make_tool(rm_spec(rm_dir, format="concat"))
    raw = await ident.score_batch(INPUTS[:2])
    assert [r.score for r in raw] == pytest.approx([r.details["logit"] for r in raw])
    assert all(0.0 <= ok_score(r) <= 1.0 for r in await tanh.score_batch(INPUTS[:2]))
    assert all(r.status == "ok" for r in await concat.score_batch(INPUTS[:2]))
    with pytest.raises(ValueError):
        make_tool(rm_spec(rm_dir, transform="cube"))


async def test_identity_transform_outside_the_declared_range_is_an_error(rm_dir):
    narrow = make_tool(rm_spec(rm_dir, transform="identity").replace(score_range=(100.0, 200.0)))
    res = await narrow.score(INPUTS[0])
    assert res.status == "error" and "outside declared range" in res.reason


async def test_long_inputs_are_truncated_to_max_length(rm_dir):
    tool = make_tool(rm_spec(rm_dir, max_length=32))
    res = await tool.score(ToolInput("q" * 1000, "r" * 1000))
    assert res.status == "ok"


async def test_reward_model_runs_in_an_executor_worker(rm_dir):
    # Generous bounds: a fresh worker imports torch and transformers, which takes minutes on a loaded machine.
    async with ToolExecutor(timeout_s=120, load_timeout_s=300) as ex:
        assert await ex.prepare(rm_spec(rm_dir)) is None
        results = await ex.score_batch(rm_spec(rm_dir), INPUTS)
        missing = await ex.score(rm_spec(rm_dir.parent / "nowhere"), INPUTS[0])
        no_gpu = await ex.score(rm_spec(rm_dir, device="cuda:0"), INPUTS[0])
    local = await make_tool(rm_spec(rm_dir)).score_batch(INPUTS)
    assert [r.score for r in results] == pytest.approx([r.score for r in local], abs=1e-5)
    assert missing.status == "error" and "could not build tool" in missing.reason
    assert no_gpu.status == "error" and "torch sees 0 GPU" in no_gpu.reason


# -- placement, precision and batching by tokens ---------------------------------------------------------
def test_token_batches_respect_the_token_budget_and_the_count_and_cover_every_input_once():
    import random

    rng = random.Random(0)
    for _ in range(200):
        lengths = [rng.randint(1, 300) for _ in range(rng.randint(0, 60))]
        budget, cap = rng.randint(1, 2000), rng.randint(1, 16)
        batches = token_batches(lengths, budget, cap)
        assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
        for b in batches:
            padded = len(b) * max(lengths[i] for i in b)
            assert len(b) <= cap and (padded <= budget or len(b) == 1)
    assert token_batches([10, 500, 20, 30], 100, 8) == [[1], [3, 2, 0]]  # longest first; 500 goes alone
    with pytest.raises(ValueError):
        token_batches([1], 0, 1)


def test_device_and_dtype_resolution_never_fall_back_silently():
    assert resolve_device("auto", cuda_available=False) == "cpu"
    assert resolve_device("auto", cuda_available=True, cuda_count=2) == "cuda:0"
    assert resolve_device("cuda:1", cuda_available=True, cuda_count=2) == "cuda:1"
    with pytest.raises(ValueError, match="torch sees 0 GPU"):
        resolve_device("cuda", cuda_available=False)
    with pytest.raises(ValueError, match="torch sees 2 GPU"):
        resolve_device("cuda:2", cuda_available=True, cuda_count=2)
    with pytest.raises(ValueError, match=r"must be auto\|cpu\|cuda"):
        resolve_device("tpu")
    assert resolve_dtype("auto", "cpu") == "float32"
    assert resolve_dtype("auto", "cuda:0", bf16_supported=True) == "bfloat16"
    assert resolve_dtype("auto", "cuda:0", bf16_supported=False) == "float16"
    assert (resolve_dtype("bf16", "cpu"), resolve_dtype("fp32", "cuda:0")) == ("bfloat16", "float32")
    with pytest.raises(ValueError, match="fp16 on CPU"):
        resolve_dtype("fp16", "cpu")
    with pytest.raises(ValueError, match=r"must be auto\|bf16\|fp16\|fp32"):
        resolve_dtype("int4", "cpu")


async def test_batches_are_cut_by_tokens_and_scores_do_not_depend_on_the_cut(rm_dir):
    inputs = [ToolInput(f"q{i} " * (1 + 7 * i), f"r{i} " * (3 + i)) for i in range(12)]
    tool = make_tool(rm_spec(rm_dir, max_batch_tokens=512, batch_size=64, max_length=256))
    assert tool.info() == {
        "device": "cpu",
        "dtype": "float32",
        "backend": "transformers",
        "max_batch_tokens": 512,
        "batch_size": 64,
    }
    shapes: list[tuple[int, int]] = []
    forward = tool.model.forward

    def counting(*args, **kw):
        shapes.append(tuple(kw["input_ids"].shape))
        return forward(*args, **kw)

    tool.model.forward = counting
    batched = await tool.score_batch(inputs)
    assert len(shapes) > 1 and all(n * w <= 512 for n, w in shapes), shapes
    alone = make_tool(rm_spec(rm_dir, batch_size=1, max_length=256))
    single = [await alone.score(x) for x in inputs]
    assert [ok_score(r) for r in batched] == pytest.approx([ok_score(r) for r in single], abs=1e-5)


async def test_bf16_weights_score_like_fp32_and_logits_come_back_in_float32(rm_dir):
    fp32 = make_tool(rm_spec(rm_dir, transform="identity").replace(score_range=(-100.0, 100.0)))
    bf16 = make_tool(rm_spec(rm_dir, transform="identity", dtype="bf16").replace(score_range=(-100.0, 100.0)))
    assert next(bf16.model.parameters()).dtype == torch.bfloat16 and bf16.info()["dtype"] == "bfloat16"
    a, b = await fp32.score_batch(INPUTS), await bf16.score_batch(INPUTS)
    assert all(isinstance(r.score, float) for r in b)
    assert [ok_score(r) for r in b] == pytest.approx([ok_score(r) for r in a], abs=0.05)


def test_a_gpu_asked_for_where_there_is_none_is_an_error_that_says_so(rm_dir):
    with pytest.raises(ValueError, match=r"device 'cuda'.*torch sees 0 GPU"):
        make_tool(rm_spec(rm_dir, device="cuda"))
