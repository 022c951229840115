"""Retrieval runs in its own actor processes and scales with ``rlar up --actors retriever=N``: two
replicas share the durable ``retriever`` consumer, so two requests are served by both, in parallel."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from bus import subjects
from bus.client import Bus
from bus.messages import Heartbeat, ToolRequest
from rlar.standins.hub.catalogue import LEADERBOARD_NAME
from rlar.standins.hub.mirror import MirrorSite
from rlar.tasks import builtin_task
from tests.support.env import REPO, actor_env, needs_chromium
from tests.support.servers import TEST_TOPOLOGY

# two replicas on a machine shared with other jobs; ~1.5 min when idle
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(480), needs_chromium]


def _config(site: MirrorSite, path: Path) -> Path:
    t = TEST_TOPOLOGY
    path.write_text(f"""
[topology]
prompt_ack_wait_s = {t.prompt_ack_wait_s}
score_ack_wait_s = {t.score_ack_wait_s}
learner_ack_wait_s = {t.learner_ack_wait_s}
tool_request_ack_wait_s = {t.tool_request_ack_wait_s}

[retriever]
heartbeat_s = 0.5

[retriever.retrieval]
hub_url = "{site.url}"
leaderboard_urls = ["{site.leaderboard_url(LEADERBOARD_NAME)}"]

[retriever.retrieval.browser]
page_timeout_s = 3.0
min_interval_s = 0.05

[retriever.retrieval.search]
max_queries = 1
""")
    return path


async def test_two_retriever_replicas_share_the_requests(
    bus: Bus, nats_url: str, trained_mirror_site: MirrorSite, tmp_path: Path
) -> None:
    beats: dict[str, Heartbeat] = {}

    async def on_beat(msg: Heartbeat, raw: object) -> None:
        beats[msg.instance] = msg

    sub = await bus.subscribe("rlar.heartbeat.retriever.>", Heartbeat, on_beat)
    cfg = _config(trained_mirror_site, tmp_path / "run.toml")
    log = (tmp_path / "up.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rlar.app.cli",
            "up",
            "--actors",
            "retriever=2",
            "--nats",
            nats_url,
            "--config",
            str(cfg),
            "--run-dir",
            str(tmp_path),
        ],
        cwd=REPO,
        env=actor_env(),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 150
        while sum(b.state == "running" for b in beats.values()) < 2:
            assert proc.poll() is None, (tmp_path / "up.log").read_text()[-3000:]
            assert time.monotonic() < deadline, f"replicas not running: {beats}"
            await asyncio.sleep(0.2)
        assert sorted(i[-11:] for i in beats) == [
            "retriever-0",
            "retriever-1",
        ]  # instance ids end in the replica name
        pids = {b.pid for b in beats.values()}
        assert len(pids) == 2 and os.getpid() not in pids  # two processes of their own
        await asyncio.sleep(1.0)  # both pull loops are waiting

        spec = builtin_task("translate", split="test").spec
        ids = [f"scale-{uuid.uuid4().hex[:8]}-{i}" for i in range(2)]
        for rid in ids:
            req = ToolRequest(
                request_id=rid,
                signature="sig",
                task="translate",
                description=spec.description,
                domain="translation",
                task_type="translation",
                constraints={"max_vram_gb": 8},
            )
            await bus.js_publish(subjects.TOOLS_REQUEST_RETRIEVE, req, msg_id=rid)
        paths = [tmp_path / "retrievals" / rid / "record.json" for rid in ids]
        deadline = time.monotonic() + 300
        while not all(p.exists() for p in paths):
            assert proc.poll() is None, (tmp_path / "up.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "retrievals did not finish"
            await asyncio.sleep(0.5)
        records = [json.loads(p.read_text()) for p in paths]
        assert [r["outcome"] for r in records] == ["registered", "registered"], [r["reason"] for r in records]
        assert {r["worker"] for r in records} == {f"retriever/{i}" for i in beats}  # one request each
        assert len({r["tool"]["name"] for r in records}) == 1  # same model, same content: one tool
    finally:
        await sub.unsubscribe()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)  # the supervisor drains its replicas
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()  # its replicas die with it (parent-death signal)
            proc.wait(timeout=10)
        log.close()
    assert proc.returncode == 0, (tmp_path / "up.log").read_text()[-3000:]
