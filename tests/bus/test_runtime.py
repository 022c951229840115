"""Actor runtime, supervisor and the observability CLI, against a real nats-server."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

from actors.monitor import Monitor, MonitorConfig
from actors.runtime import Actor, ActorConfig
from actors.supervisor import Supervisor, parse_actor_specs
from bus import subjects
from bus.client import Bus, wait_for
from bus.config import NatsConfig
from bus.embedded import EmbeddedServer
from bus.messages import Event, Heartbeat, RewardGroup, ScoredItem
from tests.support.env import REPO, actor_env
from tests.support.servers import TEST_TOPOLOGY


def test_actor_specs_parse_with_replica_counts() -> None:
    assert parse_actor_specs("reward=4, sandbox=2,feeder") == [("reward", 4), ("sandbox", 2), ("feeder", 1)]


async def test_an_actor_heartbeats_with_its_identity_and_stops_gracefully(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    beats: list[Heartbeat] = []

    async def on_hb(msg: Heartbeat, raw: object) -> None:
        beats.append(msg)

    await bus.subscribe(subjects.heartbeat("monitor", "mon-hb"), Heartbeat, on_hb)
    cfg = MonitorConfig(
        nats=NatsConfig(url=nats_url),
        topology=TEST_TOPOLOGY,
        heartbeat_s=0.2,
        run_dir=str(tmp_path),
        instance="mon-hb",
    )
    actor = Monitor(cfg)
    task = asyncio.create_task(actor.run())
    assert await wait_for(lambda: len(beats) >= 2, 60), beats
    await actor.stop()
    await asyncio.wait_for(task, 60)
    assert await wait_for(lambda: beats[-1].state == "stopped", 60), beats[-1]
    first = beats[0]
    assert first.actor == "monitor" and first.instance == "mon-hb" and first.pid > 0 and first.host
    assert beats[-1].state == "stopped"
    assert (tmp_path / "telemetry.jsonl").exists()


class _Computing(Actor[ActorConfig]):
    kind = "computing"

    async def main(self) -> None:
        import threading

        self.loop_thread = threading.get_ident()
        self.seen = [
            await self.on_compute_thread(
                lambda k: (threading.get_ident(), threading.current_thread().name, k), i
            )
            for i in range(5)
        ]


async def test_an_actors_model_work_runs_on_its_one_compute_thread(nats_url: str, tmp_path: Path) -> None:
    """Successive calls land on one thread (one malloc arena for the model's memory, rlar.malloc), not the
    event loop's, and the thread goes with the actor."""
    actor = _Computing(
        ActorConfig(
            nats=NatsConfig(url=nats_url), topology=TEST_TOPOLOGY, run_dir=str(tmp_path), instance="c-1"
        )
    )
    await asyncio.wait_for(actor.run(), 60)
    idents = {ident for ident, _, _ in actor.seen}
    assert len(idents) == 1 and actor.loop_thread not in idents
    assert all(name.startswith("computing-compute") for _, name, _ in actor.seen)
    assert [k for _, _, k in actor.seen] == [0, 1, 2, 3, 4]
    assert actor._compute is None  # shut down after teardown


async def test_a_restarted_actor_goes_on_counting_where_it_was(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    from tests.support.actors import Counting

    instance = f"cnt-{uuid.uuid4().hex[:6]}"
    seen: asyncio.Queue[Heartbeat] = asyncio.Queue()

    async def on_hb(msg: Heartbeat, raw: object) -> None:
        await seen.put(msg)

    await bus.subscribe(subjects.HEARTBEAT_ALL, Heartbeat, on_hb)

    async def one_life(name: str) -> dict[str, int]:
        actor = Counting(
            ActorConfig(
                nats=NatsConfig(url=nats_url),
                topology=TEST_TOPOLOGY,
                heartbeat_s=0.2,
                run_dir=str(tmp_path),
                instance=name,
            )
        )
        task = asyncio.create_task(actor.run())
        while (hb := await asyncio.wait_for(seen.get(), 60)).instance != name or hb.state != "running":
            pass
        await actor.stop()
        await asyncio.wait_for(task, 60)
        return dict(hb.counters)

    assert await one_life(instance) == {"starts": 1, "work": 3}
    assert await one_life(instance) == {"starts": 2, "work": 6}
    assert await one_life(f"{instance}-other") == {"starts": 1, "work": 3}


def _wait_subscribed(monitor_url: str, conn_name: str, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{monitor_url}/connz?subs=1", timeout=10) as r:
                doc = json.load(r)
        except OSError:  # a slow answer on a busy machine: ask again
            continue
        for c in doc.get("connections", []):
            if c.get("name") == conn_name and c.get("subscriptions_list"):
                return
        time.sleep(0.05)
    raise AssertionError(f"{conn_name} never subscribed")


async def test_tail_shows_each_published_message_decoded_as_it_arrives(
    bus: Bus, nats_server: EmbeddedServer
) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rlar.app.cli",
            "tail",
            "rlar.rewards.>",
            "--json",
            "--count",
            "2",
            "--nats",
            nats_server.url,
            "--timeout",
            "120",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=actor_env(),
        cwd=REPO,
    )
    try:
        await asyncio.to_thread(_wait_subscribed, nats_server.monitor_url, "rlar-tail", 120)
        assert proc.stdout is not None
        await bus.publish(
            subjects.rewards("arith"),
            RewardGroup(
                prompt_id="p9",
                generation="g",
                task="arith",
                tool="numeric_match",
                tool_version=2,
                items=[ScoredItem(index=0, status="ok", score=1.0)],
            ),
        )
        rec = json.loads(await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 60))
        assert rec["subject"] == "rlar.rewards.arith" and rec["type"] == "RewardGroup"
        assert rec["message"]["prompt_id"] == "p9" and rec["message"]["items"][0]["score"] == 1.0
        # Published only after the first line was read: tail prints traffic live, one line per message.
        await bus.publish_raw(subjects.rewards("arith"), b"\xc1garbage")
        bad = json.loads(await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 60))
        assert bad["type"] == "<undecodable>" and "MessagePack" in bad["error"]
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()


def test_tail_text_lines_show_type_and_key_fields() -> None:
    from bus.codec import encode
    from rlar.app.tail import format_line

    line = format_line(
        "rlar.rewards.arith",
        encode(
            RewardGroup(
                prompt_id="p1", generation="g", task="arith", tool="exact_match", tool_version=1, items=[]
            )
        ),
        as_json=False,
        at=0.0,
    )
    assert "rlar.rewards.arith RewardGroup" in line and "prompt_id=p1" in line and "tool=exact_match" in line
    assert "<undecodable:" in format_line("x", b"\xc1", as_json=False)


async def test_status_lists_a_running_actor_and_the_streams(nats_url: str, tmp_path: Path) -> None:
    cfg = MonitorConfig(
        nats=NatsConfig(url=nats_url),
        topology=TEST_TOPOLOGY,
        heartbeat_s=0.5,
        run_dir=str(tmp_path),
        instance="mon-status",
    )
    actor = Monitor(cfg)
    task = asyncio.create_task(actor.run())
    try:
        await asyncio.sleep(1.0)
        r = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "rlar.app.cli", "status", "--json", "--nats", nats_url, "--window", "0.3"],
            capture_output=True,
            text=True,
            timeout=60,
            env=actor_env(),
            cwd=REPO,
        )
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout.strip().splitlines()[-1])
        mine = [a for a in doc["actors"] if a["instance"] == "mon-status"]
        assert mine and mine[0]["actor"] == "monitor" and mine[0]["state"] == "running"
        assert {"SAMPLES", "SCORE", "REWARDS"} <= {s["stream"] for s in doc["streams"]}
        assert any(c["consumer"] == "reward-rule" for c in doc["consumers"])
    finally:
        await actor.stop()
        await task


async def test_sigterm_drains_an_actor_process_which_exits_zero(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    beats: list[Heartbeat] = []

    async def on_hb(msg: Heartbeat, raw: object) -> None:
        beats.append(msg)

    await bus.subscribe(subjects.heartbeat("monitor", "mon-term"), Heartbeat, on_hb)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "actors",
            "monitor",
            "--nats",
            nats_url,
            "--instance",
            "mon-term",
            "--set",
            f"run.dir={tmp_path}",
            "--set",
            "monitor.heartbeat_s=0.2",
        ],
        env=actor_env(),
        cwd=REPO,
    )
    try:
        assert await wait_for(lambda: bool(beats), 120), "no heartbeat from the actor process"
        proc.send_signal(signal.SIGTERM)
        rc = await asyncio.to_thread(proc.wait, 60)
        assert rc == 0
        assert await wait_for(lambda: beats[-1].state == "stopped", 60), beats[-1]
    finally:
        proc.kill()


async def test_a_crashed_actor_is_reported_loudly_and_restarted(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    events: list[Event] = []
    beats: list[Heartbeat] = []

    async def on_event(msg: Event, raw: object) -> None:
        events.append(msg)

    async def on_hb(msg: Heartbeat, raw: object) -> None:
        beats.append(msg)

    await bus.subscribe(subjects.events("supervisor"), Event, on_event)
    await bus.subscribe("rlar.heartbeat.crashonce.>", Heartbeat, on_hb)
    sup = Supervisor(
        [("tests.support.actors:CrashOnce", 1)],
        nats_url=nats_url,
        run_dir=tmp_path,
        bus=bus,
        min_backoff_s=0.2,
        grace_s=10,
        overrides=["crashonce.heartbeat_s=0.2"],
    )
    runner = asyncio.create_task(sup.run())
    try:
        await wait_for(lambda: bool(events and beats and beats[-1].state == "running"), 180)
        assert events and events[0].kind == "crash" and events[0].level == "error"
        assert "exited with code" in events[0].message
        assert sup.replicas[0].restarts == 1 and sup.crashes == 1
        assert beats and beats[-1].state == "running"
        assert "deliberate crash" in (tmp_path / "logs" / "tests.support.actors:CrashOnce-0.log").read_text()
    finally:
        sup.stop()
        await asyncio.wait_for(runner, 30)
    assert all(rc is not None for rc in sup.replicas[0].exits)


def test_bench_bus_prints_its_figures_as_json_on_the_last_line() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "rlar.app.cli", "bench", "bus", "--json", "-n", "2000"],
        capture_output=True,
        text=True,
        timeout=120,
        env=actor_env(),
        cwd=REPO,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout.strip().splitlines()[-1])
    for key in (
        "publish_msgs_per_s",
        "pub_sub_msgs_per_s",
        "req_reply_p50_us",
        "req_reply_p99_us",
        "jetstream_acked_publishes_per_s",
    ):
        assert doc[key] > 0
