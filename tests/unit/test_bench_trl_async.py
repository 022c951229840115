"""``rlar bench pipeline --baseline trl-async``: the settings it takes, the check of what this machine lacks for TRL's
AsyncGRPOTrainer (and the report that skips it then), and the peer's pieces that run without a GPU: its reward is
the project's tool and survives the pickling TRL's spawned rollout worker needs, and its prompts are the tokens
the project's engines would feed."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import pickle
from pathlib import Path

import pytest

from rlar.app.benchmarks import pipeline
from rlar.app.benchmarks.pipeline import PipelineSettings, baselines, trl_async_skip_reason, validate
from rlar.benchmarks import trl_async_peer
from rlar.benchmarks.trl_async_peer import ProjectReward, missing


def test_baseline_names_one_peer_both_or_none_and_nothing_else() -> None:
    assert baselines(PipelineSettings()) == frozenset()
    assert baselines(PipelineSettings(baseline="trl")) == {"trl"}
    assert baselines(PipelineSettings(baseline="trl-async")) == {"trl-async"}
    assert baselines(PipelineSettings(baseline="trl, trl-async")) == {"trl", "trl-async"}
    with pytest.raises(ValueError, match="unknown baseline"):
        validate(PipelineSettings(baseline="trl-sync"))


def test_validate_refuses_what_a_run_cannot_use_and_quick_means_two_steps_after_one() -> None:
    for bad in (
        {"steps": 0},
        {"group_size": 0},
        {"max_new_tokens": 0},
        {"warmup_steps": -1},
        {"trl_async_gpu_memory_utilization": 0.0},
        {"trl_async_gpu_memory_utilization": 1.5},
    ):
        with pytest.raises(ValueError):
            validate(PipelineSettings(**bad))  # type: ignore[arg-type]
    s = validate(PipelineSettings(quick=True, steps=12, warmup_steps=4))
    assert (s.steps, s.warmup_steps) == (2, 1)


def test_missing_names_exactly_what_this_machine_lacks() -> None:
    import torch

    lacking = missing()
    text = " | ".join(lacking)
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    nccl = torch.distributed.is_available() and torch.distributed.is_nccl_available()
    assert ("no CUDA device" in text) == (n == 0)
    assert ("need one each" in text) == (n == 1)
    assert ("no NCCL backend" in text) == (not nccl)
    assert ("vllm is not installed" in text) == (importlib.util.find_spec("vllm") is None)
    assert ("kernels package" in text) == (importlib.util.find_spec("kernels") is None)
    assert len(lacking) == sum(
        [n < 2, not nccl, *(importlib.util.find_spec(m) is None for m in ("vllm", "trl", "kernels"))]
    )


def test_where_something_is_missing_the_report_names_it_and_skips_the_peer() -> None:
    lacking = missing()
    if not lacking:
        pytest.skip("this machine has everything trl-async needs")
    s = PipelineSettings(baseline="trl-async", reward="rule")
    reason = trl_async_skip_reason(s)
    assert reason == "; ".join(lacking)
    doc = pipeline._trl_async(Path("/nonexistent"), s, None, Path("/nonexistent"), reason)
    assert doc == {"skipped": True, "reason": reason}
    assert json.loads(json.dumps(doc)) == doc


def test_where_nothing_is_missing_the_project_ways_must_be_on_the_gpu_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(trl_async_peer, "missing", lambda: [])
    with pytest.raises(ValueError, match="--engine vllm --device cuda"):
        trl_async_skip_reason(PipelineSettings(baseline="trl-async"))
    with pytest.raises(ValueError, match="--engine vllm --device cuda"):
        trl_async_skip_reason(PipelineSettings(baseline="trl-async", device="cuda"))
    assert trl_async_skip_reason(PipelineSettings(baseline="trl-async", engine="vllm", device="cuda")) is None


def test_the_peers_reward_is_the_projects_tool_and_pickles_for_trls_spawned_worker() -> None:
    from rlar.tools import builtin_specs

    spec = next(sp for sp in builtin_specs() if sp.name == "contains_match")
    reward = ProjectReward(spec.to_dict())
    asyncio.run(reward(["1+1="], ["2"], ["2"]))  # builds the tool in this process
    again = pickle.loads(pickle.dumps(reward))  # the tool itself does not travel, its spec does
    assert again._tool is None and again.tool_spec == spec.to_dict()
    prompts = [[{"role": "user", "content": "3+4="}]] * 3
    completions = [[{"role": "assistant", "content": t}] for t in ("it is 7", "8", "")]
    assert asyncio.run(again(prompts, completions, ["7", "7", "7"])) == [1.0, 0.0, 0.0]


def test_cpu_window_note_names_the_ways_measured_too_briefly_and_only_those() -> None:
    assert pipeline.cpu_window_note({"trl": 5.0, "trl_async": None, "sync": 3.0, "async": 12.5}) is None
    note = pipeline.cpu_window_note({"trl": 0.9, "trl_async": None, "sync": 4.0, "async": 0.73})
    assert note is not None and "async 0.73 s" in note and "trl 0.90 s" in note and "sync 4" not in note
    assert "more --steps" in note
    assert pipeline.cpu_window_note({"sync": 4.0}, min_s=5.0) is not None
