"""The learned reward-model tool on a tiny local checkpoint (random preferences: shape and range only)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from rlar.tools import ToolExecutor, ToolInput, ToolResult, builtin_specs, make_tool
from rlar.tools.base import ToolSpec
from rlar.tools.reward_model import build_tiny_reward_model

torch.set_num_threads(1)


def val(res: ToolResult) -> float:
    """The score of an ok result (fails the test otherwise)."""
    assert res.status == "ok" and res.score is not None, res
    return res.score


INPUTS = [
    ToolInput("What is 2+2?", "4"),
    ToolInput("What is 2+2?", "I think the answer is five, but I am not sure at all."),
    ToolInput("Name a colour.", "Blue."),
    ToolInput(
        "Summarise the plot of Hamlet in one line.", "A prince avenges his father and everyone dies." * 3
    ),
    ToolInput("Hi", ""),
]


@pytest.fixture(scope="module")
def rm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_reward_model(tmp_path_factory.mktemp("tiny_rm"))


def rm_spec(path: Path, **params) -> ToolSpec:
    base = next(s for s in builtin_specs() if s.name == "reward_model")
    return base.replace(params={**base.params, "path": str(path), **params}).sealed()


def test_tiny_reward_model_is_a_one_label_classifier(rm_dir):
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(rm_dir)
    assert config.num_labels == 1 and config.pad_token_id is not None
    assert build_tiny_reward_model(rm_dir) == rm_dir  # idempotent


async def test_reward_model_scores_a_batch_in_range_and_batching_does_not_change_scores(rm_dir):
    tool = make_tool(rm_spec(rm_dir, batch_size=2))
    results = await tool.score_batch(INPUTS)
    assert len(results) == len(INPUTS)
    assert all(r.status == "ok" and 0.0 <= val(r) <= 1.0 for r in results), results
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
    assert all(0.0 <= val(r) <= 1.0 for r in await tanh.score_batch(INPUTS[:2]))
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
    async with ToolExecutor(timeout_s=30, load_timeout_s=60) as ex:
        assert await ex.prepare(rm_spec(rm_dir)) is None
        results = await ex.score_batch(rm_spec(rm_dir), INPUTS)
        missing = await ex.score(rm_spec(rm_dir.parent / "nowhere"), INPUTS[0])
    local = await make_tool(rm_spec(rm_dir)).score_batch(INPUTS)
    assert [r.score for r in results] == pytest.approx([r.score for r in local], abs=1e-5)
    assert missing.status == "error" and "could not build tool" in missing.reason
