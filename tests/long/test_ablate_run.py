"""``rlar ablate`` end to end: it trains each reward mode, evaluates them and writes the comparison."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.env import REPO, actor_env


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_ablate_trains_evaluates_and_writes_the_comparison(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.toml"
    cfg.write_text("""
[train]
name = "t"
actors = { reward = 1, learner = 1, rollout = 1, feeder = 1 }
[nats]
url = "embedded"
[policy]
source = "tiny"
sft_steps = 0
[feeder]
tasks = [{ name = "arith", weight = 1.0 }, { name = "copy", weight = 1.0 }]
[rollout]
group_size = 4
batch_prompts = 4
max_new_tokens = 6
engine = { kind = "transformers", model = "{run_dir}/policy/init" }
[reward]
kinds = ["rule"]
[learner]
prompts_per_step = 4
checkpoint_every = 100
trainer = { model_dir = "{run_dir}/policy/init", micro_batch_size = 16, grpo = { group_size = 4 } }
""")
    out = tmp_path / "ablate"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "rlar.app.cli",
            "--log-level",
            "WARNING",
            "ablate",
            "--config",
            str(cfg),
            "--modes",
            "static:exact_match",
            "--seeds",
            "0,1",
            "--max-steps",
            "3",
            "--max-minutes",
            "4",
            "--eval-suite",
            "learnable",
            "--eval-limit",
            "5",
            "--out",
            str(out),
        ],
        cwd=tmp_path,
        env={**actor_env(), "DS_ACCELERATOR": "cpu", "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=560,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    doc = json.loads((out / "comparison.json").read_text())
    assert [(r["mode"], r["seed"]) for r in doc["runs"]] == [
        ("static:exact_match", 0),
        ("static:exact_match", 1),
    ]
    row = doc["runs"][0]
    assert row["steps"] == 3 and row["crashes"] == 0
    # evaluated on the run's final policy (the initial one if no step had a reward signal)
    assert "arith/nem" in row["eval"] and row["eval_label"].startswith("static-exact_match-seed0@")
    iv = doc["summary"]["static:exact_match"]["arith/nem"]
    assert iv["n"] == 2 and iv["lo"] <= iv["mean"] <= iv["hi"]
    assert (out / "comparison.png").stat().st_size > 0 and "static:exact_match" in (
        out / "comparison.md"
    ).read_text()
    # one HTML report comparing the runs, linking each run's own report.html
    links = re.findall(r'href="([^"]+)"', (out / "report.html").read_text())
    assert len(links) == 2 and all((out / link).is_file() for link in links), links
