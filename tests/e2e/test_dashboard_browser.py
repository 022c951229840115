"""The dashboard in headless Chromium (Playwright) during a short real run: ``rlar train --dashboard`` with the
real actors (feeder, rollout, reward, sandbox, DeepSpeed learner) on an embedded bus.

The page must list the live actors, a reward curve must gain points, a tool registered mid-run must appear in
the registry panel, and a malformed message published on a work subject must show in the dead-letter panel
with its reason. Everything waits on the page's own state (no sleeps). Screenshots and the measured update
latencies (publish → visible in the page, for dead letters published straight on ``rlar.dlq.>``) are written to
``$RLAR_ARTIFACTS_DIR/dashboard`` (default ``artifacts/dashboard`` in the repository, git-ignored).
Ctrl-C (SIGINT) then ends the run, which still writes ``report.html`` and the TensorBoard event files.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bus import subjects
from bus.client import Bus
from bus.config import NatsConfig
from bus.messages import DeadLetter
from rlar.registry import ToolRegistry
from rlar.retrieval.config import BrowserConfig
from rlar.tools.base import ToolSpec
from tests.support.env import REPO, actor_env, needs_chromium

pytestmark = [pytest.mark.slow, pytest.mark.browser, needs_chromium]

ARTIFACTS = Path(os.environ.get("RLAR_ARTIFACTS_DIR", REPO / "artifacts")) / "dashboard"
ACTORS = ("feeder", "rollout", "reward", "sandbox", "learner")
WAIT_MS = 300_000  # generous: the learner's DeepSpeed start and each step take long on a loaded machine

CONFIG = """
[train]
name = "dash"
max_minutes = 12.0
actors = { sandbox = 1, reward = 1, learner = 1, rollout = 1, feeder = 1 }
report_to = ["tensorboard"]
[nats]
url = "embedded"
[policy]
source = "tiny"
sft_steps = 0
[feeder]
tasks = [{ name = "arith", weight = 2.0 }, { name = "copy", weight = 1.0 }]
[rollout]
group_size = 4
batch_prompts = 2
max_new_tokens = 6
engine = { kind = "transformers", model = "{run_dir}/policy/init" }
[learner]
prompts_per_step = 2
max_steps = 500
checkpoint_every = 1000
trainer = { model_dir = "{run_dir}/policy/init", lr = 1e-4, micro_batch_size = 32, \
grpo = { group_size = 4, max_staleness = 2 } }
"""


class _Lines:
    """The train process's output, line by line, with a way to wait for a line that starts with a prefix."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        self.q: queue.Queue[str] = queue.Queue()
        assert proc.stdout is not None
        self.thread = threading.Thread(target=self._read, args=(proc.stdout,), daemon=True)
        self.thread.start()

    def _read(self, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            self.lines.append(line)
            self.q.put(line)
        self.q.put("")

    def wait_for(self, prefix: str, timeout_s: float) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            line = self.q.get(timeout=max(0.1, deadline - time.monotonic()))
            if line == "":
                break
            if line.startswith(prefix):
                return line[len(prefix) :].strip()
        raise AssertionError(f"no line starting with {prefix!r}; output:\n{''.join(self.lines)[-4000:]}")


async def test_the_dashboard_follows_a_real_run_in_chromium(tmp_path: Path) -> None:
    from playwright.async_api import async_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(CONFIG)
    run = tmp_path / "run"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rlar.app.cli",
            "--log-level",
            "WARNING",
            "train",
            "--config",
            str(cfg),
            "--run-dir",
            str(run),
            "--dashboard",
        ],
        cwd=tmp_path,
        env={**actor_env(), "DS_ACCELERATOR": "cpu"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
    )
    out = _Lines(proc)
    figures: dict[str, object] = {}
    try:
        url = await asyncio.to_thread(out.wait_for, "dashboard: ", 300)
        browser_cfg = BrowserConfig()
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(
                executable_path=browser_cfg.executable_path, headless=True, args=list(browser_cfg.args)
            )
            page = await browser.new_page(viewport={"width": 1400, "height": 1800})
            await page.goto(url)
            await page.wait_for_selector("#conn.ok", timeout=60_000)

            # 1. the live actors, each healthy
            running = " && ".join(
                f'document.querySelector(\'#actors tr[data-actor="{a}"][data-health="running"]\')'
                for a in ACTORS
            )
            await page.wait_for_function(f"() => !!({running})", timeout=WAIT_MS)
            await page.screenshot(path=str(ARTIFACTS / "1-actors-live.png"), full_page=True)

            # 2. a reward curve gains points
            points = "(t) => +(document.querySelector(`polyline[data-task='${t}']`)?.getAttribute('data-points') || 0)"
            await page.wait_for_function(f"() => ({points})('all') >= 1", timeout=WAIT_MS)
            first = await page.evaluate(f"({points})('all')")
            await page.wait_for_function(f"() => ({points})('all') >= {first + 2}", timeout=WAIT_MS)
            figures["curve_points"] = [first, await page.evaluate(f"({points})('all')")]
            await page.screenshot(path=str(ARTIFACTS / "2-reward-curve.png"), full_page=True)

            bus = await Bus.connect(
                NatsConfig(url=(run / "nats.url").read_text().strip()), name="test-dashboard"
            )
            try:
                # 3. a tool registered mid-run appears in the registry panel
                spec = ToolSpec(
                    name="dashboard_probe",
                    kind="rule",
                    impl="exact_match",
                    description="exact match, registered by the dashboard test mid-run",
                    provenance={"origin": "user", "author": "test", "source": "tests"},
                )
                t0 = time.time()
                got = await ToolRegistry(bus).register(spec, by="dashboard-test")
                await page.wait_for_selector(
                    f'#tools tr[data-tool="dashboard_probe"][data-version="{got.version}"]'
                    '[data-origin="user"]',
                    timeout=WAIT_MS,
                )
                figures["registration_visible_s"] = round(time.time() - t0, 3)
                await page.locator("#tools-panel").screenshot(path=str(ARTIFACTS / "3-tool-registered.png"))

                # 4. a malformed message on a work subject: the learner dead-letters it, the panel shows why
                t0 = time.time()
                await bus.js.publish(subjects.samples("arith"), b"\xc1 this is not MessagePack")
                await page.wait_for_function(
                    "() => [...document.querySelectorAll('#dlq tr[data-subject=\"rlar.samples.arith\"] td.reason')]"
                    ".some(td => td.textContent.includes('MessagePack'))",
                    timeout=WAIT_MS,
                )
                figures["malformed_to_dead_letter_panel_s"] = round(time.time() - t0, 3)
                await page.locator("#dlq-panel").screenshot(path=str(ARTIFACTS / "4-dead-letter.png"))

                # update latency: a message on the bus until the page shows it (dead letters published directly)
                lat = []
                for i in range(8):
                    reason = f"latency probe {i}"
                    t0 = time.time()
                    await bus.publish(
                        subjects.dlq("rlar.probe"),
                        DeadLetter(subject="rlar.probe", reason=reason, payload=b"x", actor="test"),
                    )
                    await page.wait_for_function(
                        "() => [...document.querySelectorAll('#dlq td.reason')]"
                        f".some(td => td.textContent === '{reason}')",
                        timeout=60_000,
                        polling="raf",
                    )
                    lat.append(time.time() - t0)
                figures["update_latency_s"] = {
                    "n": len(lat),
                    "median": round(sorted(lat)[len(lat) // 2], 3),
                    "max": round(max(lat), 3),
                    "all": [round(x, 3) for x in lat],
                }
            finally:
                await bus.close()
            await page.screenshot(path=str(ARTIFACTS / "5-dashboard.png"), full_page=True)
            await browser.close()
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=240)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        out.thread.join(timeout=10)
        (ARTIFACTS / "figures.json").write_text(json.dumps(figures, indent=1) + "\n")
    # the run ends as interrupted and still leaves its report and event files
    report = (run / "report.html").read_text()
    assert "dashboard_probe" in report and "MessagePack" in report
    assert list((run / "tensorboard").glob("events.out.tfevents.*"))
    assert figures["update_latency_s"]
