"""``rlar export``: vLLM loads the exported checkpoint and scores tokens as transformers does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rlar.app.export import export_run
from tests.support.env import REPO, actor_env
from tests.support.runs import exported_run_dir


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return exported_run_dir(tmp_path_factory)


_VLLM_CHECK = """
import sys, torch
from transformers import AutoModelForCausalLM, AutoTokenizer
from vllm import LLM, SamplingParams
from vllm.inputs import TokensPrompt
path = sys.argv[1]
tok = AutoTokenizer.from_pretrained(path)
ids = tok("12+7=19 and 3+4=7", add_special_tokens=False).input_ids
llm = LLM(model=path, dtype="float32", enforce_eager=True, max_model_len=128, seed=0,
          distributed_executor_backend="uni")
out = llm.generate([TokensPrompt(prompt_token_ids=ids)], SamplingParams(max_tokens=1, prompt_logprobs=0))[0]
got = [d[t].logprob for t, d in zip(ids[1:], out.prompt_logprobs[1:])]
logits = AutoModelForCausalLM.from_pretrained(path)(torch.tensor([ids])).logits[0, :-1]
ref = torch.log_softmax(logits.float(), -1).gather(1, torch.tensor(ids[1:])[:, None])[:, 0].tolist()
print("MAXDIFF", max(abs(a - b) for a, b in zip(got, ref)), len(got))
text = llm.generate(["12+7=19 and 3+4=7"], SamplingParams(max_tokens=1))[0]  # a text prompt, as vLLM users write it
print("TEXT_PROMPT_IDS_AS_TRAINED", list(text.prompt_token_ids) == list(ids))
"""


@pytest.mark.vllm
@pytest.mark.slow
def test_vllm_loads_the_exported_checkpoint_and_scores_tokens_like_transformers(
    run_dir: Path, tmp_path: Path
) -> None:
    export_run(run_dir, tmp_path / "hf")
    env = {
        **actor_env(),
        "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2"),
    }
    r = subprocess.run(
        [sys.executable, "-c", _VLLM_CHECK, str(tmp_path / "hf")],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=REPO,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    line = next(x for x in r.stdout.splitlines() if x.startswith("MAXDIFF"))
    diff, n = line.split()[1:]
    assert int(n) > 10 and float(diff) < 1e-3, line  # vLLM scores every token as transformers does
    assert "TEXT_PROMPT_IDS_AS_TRAINED True" in r.stdout  # vLLM's own encoding of a text prompt adds no </s>
