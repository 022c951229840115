"""The pages of README.md and docs/*.md with a block that trains, evaluates, exports, benchmarks or retrieves:
every runnable block of such a page runs here, in page order (the convention: tests/support/docs.py), and the
newcomer's path of docs/rewards.md runs end to end, interrupted and resumed."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.docs import (
    BLOCKS,
    SHORT_TRAIN,
    Block,
    Page,
    block_script,
    doc_env,
    no_updates_verdict,
    page_classes,
)
from tests.support.retrieval import session_cache


@pytest.fixture(scope="session")
def doc_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the session's pages, shared by its xdist workers (``<base>/popen-gwN`` is a worker's own
    base): the demo's warmed-up policy and the routing caches are built once (``rlar train`` locks its cache)."""
    return session_cache(tmp_path_factory)


@pytest.fixture(scope="session")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Page]:
    return {}


globals().update(page_classes(training=True))


# -- the newcomer's path of docs/rewards.md, end to end -----------------------------------------------------

WALK_STEP_TIMEOUT_S = 900
TRAIN_CAP = ["rlar", "train", "--config", "cap.toml", "--run-dir", "runs/cap"]
"""The first command of docs/rewards.md's train block, which the walk-through test runs (interrupted, resumed)."""


def _page_setup_blocks(page: str, *needles: str) -> list[Block]:
    """The page's bash blocks that write the files of the walk-through (the ones holding ``needles``)."""
    found = [
        b for b in BLOCKS if b.path.name == page and b.lang == "bash" and any(n in b.text for n in needles)
    ]
    assert len(found) == len(needles), [b.id for b in found]
    return found


def _rlar_train(work: Path, env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["rlar", "train", *args],
        cwd=work,
        env=env,
        text=True,
        start_new_session=True,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )


@pytest.mark.slow
@pytest.mark.timeout(4 * WALK_STEP_TIMEOUT_S)
def test_the_rewards_walkthrough_trains_is_interrupted_resumes_with_the_printed_command_and_evals(
    tmp_path: Path, doc_cache: Path
) -> None:
    """docs/rewards.md as a newcomer runs it, with a user reward function and the router: train, Ctrl-C (exit 130,
    the INTERRUPTED line prints the resume command), that very command from the same directory (the run's
    config.toml must find the user's module; the summary's routing covers the whole run), then the rest of the
    page's train block (export, transformers loads it) and its eval block as written: `rlar eval` of the run scores
    with the run's own tool. The page's class skips those two blocks: this is their run. Steps shortened as in
    :data:`SHORT_TRAIN`."""
    work, env = tmp_path / "work", doc_env(doc_cache, None)
    work.mkdir()
    train_block, eval_block = _page_setup_blocks(
        "rewards.md", "rlar export runs/cap", "rlar eval --checkpoint runs/cap"
    )
    assert train_block.skip and eval_block.skip, "the page runs these blocks itself: drop their run here"
    assert train_block.text.splitlines()[0].split("  #")[0].split() == TRAIN_CAP, train_block.text
    for block in _page_setup_blocks(
        "rewards.md", "> data/cap.jsonl", "cat > my_rewards.py", "cat > cap.toml"
    ):
        r = subprocess.run(
            ["bash", "-c", block_script(block.text, block, None)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 0, f"{block.id}: {r.stderr[-2000:]}"
    run = work / "runs" / "cap"
    # The shortened settings, with time for a first learner step on a loaded machine (minutes under load).
    short = [
        x
        for s in SHORT_TRAIN
        if not s.startswith(("learner.max_steps", "train.max_minutes"))
        for x in ("--set", s)
    ] + ["--set", f"train.max_minutes={WALK_STEP_TIMEOUT_S / 60 - 1:g}"]

    # 1. train until the learner's first step, then Ctrl-C (SIGINT)
    log1 = tmp_path / "train1.log"
    proc = _rlar_train(
        work,
        env,
        log1,
        *TRAIN_CAP[2:],
        *short,
        "--set",
        "learner.max_steps=40",
    )
    try:
        deadline = time.monotonic() + WALK_STEP_TIMEOUT_S
        metrics = run / "metrics.jsonl"
        while not (metrics.exists() and metrics.read_text().strip()):
            assert proc.poll() is None, f"rlar train ended before a learner step:\n{log1.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"no learner step in time:\n{log1.read_text()[-3000:]}"
            # the learner keeps stepping until the Ctrl-C: each step past the first is work for nothing
            time.sleep(0.25)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=300) == 130, log1.read_text()[-3000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    out1 = log1.read_text()
    m = re.search(r"rlar train: INTERRUPTED after (\d+) steps .*; resume with (--run-dir \S+)", out1)
    assert m, out1[-3000:]
    first_steps, resume = int(m.group(1)), shlex.split(m.group(2))
    assert (
        resume == ["--run-dir", "runs/cap"]
        and json.loads((run / "summary.json").read_text())["exit_code"] == 130
    )

    # 2. the printed command, as it is (plus the shortened settings), from the same directory: one step more
    # than the interrupted run made is a resumed run that trained (what the summary's step count checks below)
    log2 = tmp_path / "train2.log"
    proc = _rlar_train(work, env, log2, *resume, *short, "--set", f"learner.max_steps={first_steps + 1}")
    try:
        code = proc.wait(timeout=WALK_STEP_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    out2 = log2.read_text()
    assert code == 0 or (code == 1 and no_updates_verdict(out2)), out2[-3000:]
    assert "resuming runs/cap" in out2 and "cannot import" not in out2
    summary = json.loads((run / "summary.json").read_text())
    assert summary["steps"] >= first_steps + 1, summary
    cap = summary["tasks"]["capitalize"]
    assert cap["routing"]["decisions"] >= 1, (
        cap
    )  # decided before the interruption: read back after the resume
    assert "capitalised" in {t["tool"] for t in cap["tools"]}, cap

    # 3. the rest of the page's train block (export, load with transformers) and its eval block, as written (the
    # page's own run of these blocks is skipped: this run is theirs)
    out = {}
    for block in (train_block, eval_block):
        lines = block.text.splitlines()
        script = "\n".join(lines[1:] if block is train_block else lines) + "\n"
        r = subprocess.run(
            ["bash", "-c", block_script(script, block, None)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=WALK_STEP_TIMEOUT_S,
        )
        assert r.returncode == 0, f"{block.id}: " + r.stdout[-2000:] + r.stderr[-2000:]
        out[block.id] = r.stdout + r.stderr
    # the export loads with transformers (the block prints its model type) ...
    assert (work / "models" / "cap" / "model.safetensors").exists() and "llama" in out[train_block.id]
    # ... and the eval scored with the tool the run used
    assert re.search(r"score of capitalize: capitalised v\d+ .*\(user\)", out[eval_block.id]), out[
        eval_block.id
    ][-2000:]
