"""``rlar bench gpu`` (rlar/benchmarks/gpu.sh), checked on CPU as far as it goes without a GPU: its GSM8K-format
data, its run config (validated and its data opened as `rlar train` does), its summary's arithmetic, and its
refusal without a GPU."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomli_w

from rlar.benchmarks.gpu import render_config, summarize, write_gsm8k
from rlar.policy.model import build_tiny_policy
from rlar.tasks.formats import detect_format, load_format
from tests.support.env import REPO


def test_the_data_is_gsm8k_as_published_and_its_answers_are_right(tmp_path: Path) -> None:
    path = write_gsm8k(tmp_path / "gsm8k.jsonl", n=50)
    assert detect_format(path) == "gsm8k"
    data = load_format("gsm8k", path)
    assert len(data.records) == 50
    for row, rec in zip(path.read_text().splitlines(), data.records, strict=True):
        q = json.loads(row)["question"]
        nums = [int(w) for w in q.replace(".", " ").split() if w.isdigit()]
        assert str(nums[0] + nums[1] * nums[2]) == rec.reference


def test_the_run_config_passes_rlar_trains_checks(tmp_path: Path) -> None:
    from rlar.app.train import load_checked

    model = build_tiny_policy(tmp_path / "tiny")
    data = write_gsm8k(tmp_path / "gsm8k.jsonl", n=20)
    config = tmp_path / "train.toml"
    config.write_text(tomli_w.dumps(render_config(model, data)))
    _, built, _, _, _ = load_checked(str(config), [], str(tmp_path / "run"))
    assert built["learner"].max_steps == 30 and built["learner"].trainer.dtype == "bf16"
    assert built["rollout"].engine.kind == "vllm" and built["rollout"].engine.device == "cuda"
    assert [(t.name, t.source) for t in built["feeder"].tasks] == [("gsm8k", "gsm8k")]


def test_the_summary_computes_tokens_per_s_mfu_and_weight_sync(tmp_path: Path) -> None:
    model = build_tiny_policy(tmp_path / "tiny")
    write_gsm8k(tmp_path / "gsm8k.jsonl", n=10)
    (tmp_path / "gpu.txt").write_text("NVIDIA H200, 143771 MiB")
    (tmp_path / "pipeline.json").write_text(
        json.dumps({"sync_samples_per_s": 10.0, "async_samples_per_s": 15.0})
    )
    (tmp_path / "train.json").write_text(json.dumps({"steps": 2, "minutes": 1.0, "reason": "finished"}))
    (tmp_path / "train").mkdir()
    recs = [
        {"step": 1, "tokens": 1000.0, "tokens_per_s": 500.0, "sequences": 10.0, "weights_s": 0.2},
        {"step": 2, "tokens": 3000.0, "tokens_per_s": 1000.0, "sequences": 10.0, "weights_s": 0.4},
    ]
    (tmp_path / "train" / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    doc = summarize(tmp_path, model)
    assert doc["learner_tokens_per_s"] == 800.0  # 4000 tokens over 2 + 3 s of trainer time
    assert doc["peak_bf16_tflops"] == 989.0 and doc["weight_sync_s_median"] == pytest.approx(0.3)
    assert doc["mfu"] == pytest.approx(doc["learner_tflops"] / 989.0, rel=0.01) and doc["mfu"] > 0


@pytest.mark.skipif(
    shutil.which("nvidia-smi") is not None, reason="this machine has a GPU: the bench would run"
)
def test_rlar_bench_gpu_refuses_to_start_without_a_gpu(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "MODEL_DIR": str(tmp_path),
        "OUT": str(tmp_path / "out"),
        "PY": shutil.which("python") or "python",
    }
    r = subprocess.run(
        [sys.executable, "-m", "rlar.app.cli", "bench", "gpu"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "needs an NVIDIA GPU" in r.stderr
