"""``rlar eval`` with the vLLM engine gives the same greedy answers as with transformers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rlar.eval import run_eval
from tests.support.env import REPO
from tests.support.runs import eval_run_dir


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return eval_run_dir(tmp_path_factory)


@pytest.fixture(autouse=True)
def no_real_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


# ---------------------------------------------------------------------------------------------------------
# data files in published formats, and a run's own tasks

DATA = REPO / "data" / "formats"


@pytest.mark.slow
def test_the_vllm_engine_generates_the_same_greedy_answers(run_dir: Path, tmp_path: Path) -> None:
    kw: dict[str, Any] = {
        "data": str(DATA / "gsm8k_sample.jsonl"),
        "limit": 3,
        "overrides": {"max_new_tokens": 8},
    }
    hf = run_eval(str(run_dir / "policy" / "init"), "gsm8k", out=str(tmp_path / "hf"), **kw)
    vl = run_eval(str(run_dir / "policy" / "init"), "gsm8k", out=str(tmp_path / "vllm"), engine="vllm", **kw)
    assert vl["result"]["metrics"]["gsm8k"].keys() == {"nem", "avg_len"}
    assert [e["response"] for e in vl["result"]["examples"]["gsm8k"]] == [
        e["response"] for e in hf["result"]["examples"]["gsm8k"]
    ]
