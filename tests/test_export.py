"""`rlar export`: a run's newest (or chosen) weights as a Hugging Face checkpoint that transformers and vLLM load."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rlar.config import ConfigError
from rlar.export import export_run
from tests.conftest import REPO, actor_env

PROMPT = "12+7="


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run directory as `rlar train` leaves it: the initial policy, two weight versions, a summary."""
    import torch

    from rlar.policy.model import build_tiny_policy
    from rlar.policy.weights import write_weights_dir

    run = tmp_path_factory.mktemp("run")
    init = build_tiny_policy(run / "policy" / "init")
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(init)
    gen = torch.Generator().manual_seed(0)
    for version in (3, 4):
        with torch.no_grad():
            for p in model.parameters():
                p.add_(torch.randn(p.shape, generator=gen) * 0.05)
        write_weights_dir(run / "weights", version, dict(model.named_parameters()))
    (run / "config.toml").write_text('[feeder]\ntasks = [{ name = "arith", weight = 2.0 }]\n'
                                     '[learner]\nprompts_per_step = 8\ntrainer = { lr = 1e-4 }\n')  # fmt: skip
    summary = {"reason": "finished", "steps": 12, "updates": 11, "minutes": 1.5,
               "tasks": {"arith": {"reward": {"first": 0.2, "last": 0.4, "steps": 12}, "abstain": {"mean": 0.05},
                                   "tools": [{"tool": "math_verify", "version": 1, "origin": "built-in",
                                              "steps": 12, "shadow": False}]}}}  # fmt: skip
    (run / "summary.json").write_text(json.dumps(summary))
    torch.save(model.state_dict(), run / "v4_state.pt")
    return run


def test_export_writes_a_checkpoint_transformers_loads_with_the_trained_weights(
    run_dir: Path, tmp_path: Path
) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    r = subprocess.run([sys.executable, "-m", "rlar.cli", "export", str(run_dir), "--out", str(tmp_path / "hf")],
                       capture_output=True, text=True, timeout=300, env=actor_env(), cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout.strip().splitlines()[-1])
    assert doc["version"] == 4
    out = tmp_path / "hf"
    assert {"config.json", "generation_config.json", "model.safetensors", "README.md"} <= set(doc["files"])
    card = (out / "README.md").read_text()
    assert "| arith | 2.0 | 0.2 | 0.4 | 5% | math_verify v1 (built-in, 12) |" in card
    assert "updates: 11" in card
    model = AutoModelForCausalLM.from_pretrained(out)
    want = torch.load(run_dir / "v4_state.pt")
    got = model.state_dict()
    assert all(torch.equal(got[k], v) for k, v in want.items())
    tok = AutoTokenizer.from_pretrained(out)
    ids = tok(PROMPT, return_tensors="pt", add_special_tokens=False).input_ids
    assert model.generate(ids, max_new_tokens=4, do_sample=False).shape[1] > ids.shape[1]


def test_export_of_a_missing_version_or_into_a_used_directory_is_refused(
    run_dir: Path, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match=r"weights version 1 is not kept; available: \[3, 4\]"):
        export_run(run_dir, tmp_path / "a", version=1)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x").write_text("x")
    with pytest.raises(ConfigError, match="not empty"):
        export_run(run_dir, tmp_path / "b")
    assert export_run(run_dir, tmp_path / "c", version=3)["version"] == 3


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
"""


@pytest.mark.vllm
@pytest.mark.slow
def test_vllm_loads_the_exported_checkpoint_and_scores_tokens_like_transformers(
    run_dir: Path, tmp_path: Path
) -> None:
    export_run(run_dir, tmp_path / "hf")
    env = {**actor_env(), "VLLM_ENABLE_V1_MULTIPROCESSING": "0", "VLLM_CPU_KVCACHE_SPACE": "1",
           "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2")}  # fmt: skip
    r = subprocess.run([sys.executable, "-c", _VLLM_CHECK, str(tmp_path / "hf")], capture_output=True, text=True,
                       timeout=600, env=env, cwd=REPO)  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    line = next(x for x in r.stdout.splitlines() if x.startswith("MAXDIFF"))
    diff, n = line.split()[1:]
    assert int(n) > 10 and float(diff) < 1e-3, line  # vLLM scores every token as transformers does
