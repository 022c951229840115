"""The bus against a real nats-server: dead-lettering, redelivery, idempotent topology, durability."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import msgpack
import pytest

from bus import codec, subjects, topology
from bus.client import Bus, BusUnreachable, RequestTimeout, wait_for
from bus.codec import decode, encode
from bus.config import NatsConfig
from bus.embedded import EmbeddedServer
from bus.messages import DeadLetter, RewardGroup, ScoreGroup, ScoreItem, ToolRef
from tests.support.env import REPO, actor_env
from tests.support.servers import TEST_TOPOLOGY


def _score_request(i: int, kind: str = "rule") -> ScoreGroup:
    return ScoreGroup(
        prompt_id=f"s{i}",
        generation="g",
        task="arith",
        tools=[ToolRef(tool="exact_match", kind=kind)],
        query="1+1=",
        items=[ScoreItem(index=0, response="2")],
        reference="2",
    )


async def _collect_dlq(bus: Bus, pattern: str) -> list[DeadLetter]:
    got: list[DeadLetter] = []

    async def on_dead(msg: DeadLetter, raw: object) -> None:
        got.append(msg)

    await bus.subscribe(subjects.dlq(pattern), DeadLetter, on_dead)
    return got


async def test_a_core_subscriber_dead_letters_garbage_and_processes_the_next_good_message(bus: Bus) -> None:
    subject = "rlar.test.core"
    dead = await _collect_dlq(bus, subject)
    good: list[RewardGroup] = []

    async def on_reward(msg: RewardGroup, raw: object) -> None:
        good.append(msg)

    await bus.subscribe(subject, RewardGroup, on_reward)
    await bus.publish_raw(subject, b"\xc1 definitely not msgpack")
    await bus.publish(subject, _score_request(0))  # valid msgpack, wrong type
    await bus.publish(
        subject, RewardGroup(prompt_id="s", generation="g", task="t", tool="x", tool_version=1, items=[])
    )
    assert await wait_for(lambda: bool(good) and len(dead) >= 2, 60), (good, dead)
    assert [g.prompt_id for g in good] == ["s"]
    assert len(dead) == 2
    assert "MessagePack" in dead[0].reason and dead[0].payload.startswith(b"\xc1")
    assert "expected RewardGroup" in dead[1].reason


async def test_a_request_with_a_missing_or_mistyped_field_is_dead_lettered_and_the_responder_goes_on(
    bus: Bus,
) -> None:
    """The responder's decode (the codec's compiled path for well-formed payloads) still checks required
    fields and field types: a payload that fails is dead-lettered with the field named, the next request is
    answered typed."""
    subject = "rlar.test.rpc"
    dead = await _collect_dlq(bus, subject)

    async def respond(msg: RewardGroup, raw: Any) -> None:
        await raw.respond(encode(msg))

    await bus.subscribe(subject, RewardGroup, respond)
    good = RewardGroup(prompt_id="s", generation="g", task="t", tool="x", tool_version=1, items=[])
    missing = codec.to_dict(good)
    del missing["tool_version"]
    mistyped = codec.to_dict(good)
    mistyped["items"] = [{"index": 0, "status": "ok", "score": "high"}]  # a nested item's float as a string
    for payload in (missing, mistyped):
        await bus.publish_raw(subject, msgpack.packb(payload, use_bin_type=True))
    reply = await bus.request(subject, good, RewardGroup, timeout_s=10)
    assert reply == good and isinstance(reply.items, list)
    assert await wait_for(lambda: len(dead) >= 2, 60), dead
    assert "missing field(s) tool_version" in dead[0].reason
    assert "RewardGroup.items" in dead[1].reason
    assert msgpack.unpackb(dead[1].payload)["items"][0]["score"] == "high"


async def test_a_work_consumer_dead_letters_garbage_and_keeps_consuming(bus: Bus) -> None:
    subject = subjects.score("metric")
    dead = await _collect_dlq(bus, subject)
    handled: list[str] = []

    async def handle(msg: ScoreGroup, raw: object) -> None:
        handled.append(msg.prompt_id)

    stop = asyncio.Event()
    task = bus.consume(
        topology.SCORE, topology.reward_consumer("metric"), ScoreGroup, handle, stop=stop, fetch_timeout_s=0.2
    )
    await bus.js.publish(subject, b"garbage")
    await bus.js_publish(subject, _score_request(1, "metric"))
    assert await wait_for(lambda: bool(handled and dead), 60), (handled, dead)
    stop.set()
    await asyncio.wait_for(task, 60)
    assert handled == ["s1"]
    assert len(dead) == 1 and dead[0].subject == subject
    info = await bus.js.consumer_info(topology.SCORE, topology.reward_consumer("metric"))
    assert info.num_ack_pending == 0  # the garbage was terminated, the good one acked


async def test_a_handler_that_keeps_failing_is_retried_then_dead_lettered(bus: Bus) -> None:
    subject = subjects.score("judge")
    dead = await _collect_dlq(bus, subject)
    attempts = 0

    async def handle(msg: ScoreGroup, raw: object) -> None:
        nonlocal attempts
        attempts += 1
        raise ValueError("tool exploded")

    stop = asyncio.Event()
    task = bus.consume(
        topology.SCORE,
        topology.reward_consumer("judge"),
        ScoreGroup,
        handle,
        stop=stop,
        max_deliver=3,
        fetch_timeout_s=0.2,
    )
    await bus.js_publish(subject, _score_request(2, "judge"))
    assert await wait_for(lambda: bool(dead), 120), attempts
    stop.set()
    await asyncio.wait_for(task, 60)
    assert attempts == 3
    assert "tool exploded" in dead[0].reason and dead[0].deliveries == 3


CONSUME_AND_HANG = """
import asyncio, sys
from bus.client import Bus
from bus.config import NatsConfig
async def main():
    bus = await Bus.connect(NatsConfig(url=sys.argv[1]), "doomed")
    psub = await bus.js.pull_subscribe_bind(durable="reward-sandbox", stream="SCORE")
    msgs = await psub.fetch(1, timeout=10)
    print("took", msgs[0].subject, flush=True)
    await asyncio.sleep(3600)
asyncio.run(main())
"""


async def test_an_unacked_work_message_of_a_dead_consumer_is_redelivered_to_another(
    bus: Bus, nats_url: str
) -> None:
    subject = subjects.score("sandbox")
    proc = subprocess.Popen(
        [sys.executable, "-c", CONSUME_AND_HANG, nats_url], stdout=subprocess.PIPE, env=actor_env(), cwd=REPO
    )
    try:
        await bus.js_publish(subject, _score_request(7, "sandbox"))
        assert proc.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 120)
        assert b"took" in line
    finally:
        proc.kill()
        proc.wait()
    got: list[str] = []

    async def handle(msg: ScoreGroup, raw: object) -> None:
        got.append(msg.prompt_id)

    stop = asyncio.Event()
    task = bus.consume(
        topology.SCORE,
        topology.reward_consumer("sandbox"),
        ScoreGroup,
        handle,
        stop=stop,
        fetch_timeout_s=0.5,
    )
    await wait_for(lambda: bool(got), TEST_TOPOLOGY.score_ack_wait_s + 120)
    stop.set()
    await asyncio.wait_for(task, 60)
    assert got == ["s7"]


async def test_request_times_out_when_no_worker_listens(bus: Bus) -> None:
    t0 = time.monotonic()
    with pytest.raises(RequestTimeout):
        await bus.request("rlar.test.nobody", _score_request(0), RewardGroup, timeout_s=0.5)
    assert time.monotonic() - t0 < 30  # the request's own timeout, not the test's, ended it


class _SlowUplink:
    """A TCP proxy to the server that holds every byte a client sends for ``delay_s`` (the server's bytes
    pass at once): a client on another host, or a busy one, whose SUB reaches the server late."""

    def __init__(self, upstream: str, delay_s: float) -> None:
        host, port = upstream.removeprefix("nats://").rsplit(":", 1)
        self.up, self.delay_s = (host, int(port)), delay_s
        self.tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        return f"nats://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        for t in self.tasks:
            t.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    async def _client(self, cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
        sr, sw = await asyncio.open_connection(*self.up)
        held: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def read_client() -> None:
            while data := await cr.read(65536):
                held.put_nowait((time.monotonic() + self.delay_s, data))

        async def write_server() -> None:
            while True:
                due, data = await held.get()
                await asyncio.sleep(max(0.0, due - time.monotonic()))
                sw.write(data)
                await sw.drain()

        async def to_client() -> None:
            while data := await sr.read(65536):
                cw.write(data)
                await cw.drain()

        for fn in (read_client, write_server, to_client):
            task = asyncio.create_task(fn())
            self.tasks.add(task)


async def test_a_subscription_is_on_the_server_when_subscribe_returns(nats_url: str) -> None:
    """A responder that subscribed (and so says it is ready) is reachable at once from any connection,
    however late its own bytes reach the server: ``subscribe`` returns after the server confirmed it."""
    subject = f"rlar.test.ready.{uuid.uuid4().hex[:8]}"
    async with _SlowUplink(nats_url, delay_s=1.0) as slow_url:
        far = await Bus.connect(NatsConfig(url=slow_url), name="far-responder")
        near = await Bus.connect(NatsConfig(url=nats_url), name="near-client")
        try:

            async def answer(msg: ScoreGroup, raw: Any) -> None:
                reply = RewardGroup(
                    prompt_id=msg.prompt_id, generation="g", task="t", tool="x", tool_version=1, items=[]
                )
                await raw.respond(encode(reply))

            t0 = time.monotonic()
            await far.subscribe(subject, ScoreGroup, answer, queue="svc")
            assert time.monotonic() - t0 >= 1.0  # it waited for the server, through the slow uplink
            got = await near.request(subject, _score_request(3), RewardGroup, timeout_s=30)
            assert got.prompt_id == "s3"
        finally:
            await near.close()
            await far.close()


async def test_subscribe_does_not_hang_on_a_stopped_server_and_the_subscription_comes_back_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the server gone, ``subscribe`` returns after at most its confirmation timeout, and the
    subscription is live once the server is back (the client sends it again on reconnect)."""
    from bus import client as bus_client

    monkeypatch.setattr(bus_client, "SUBSCRIBE_CONFIRM_S", 1)
    subject = "rlar.test.lonely"
    got: list[RewardGroup] = []

    async def on_reward(msg: RewardGroup, raw: object) -> None:
        got.append(msg)

    srv = EmbeddedServer(tmp_path / "store").start()
    b = await Bus.connect(NatsConfig(url=srv.url, reconnect_wait_s=0.1, retry_s=30.0), "lonely")
    try:
        srv.stop()
        await wait_for(lambda: not b.nc.is_connected, 30)
        t0 = time.monotonic()
        await b.subscribe(subject, RewardGroup, on_reward)
        assert time.monotonic() - t0 < 1.0 + 5
        srv.start()
        await wait_for(lambda: b.nc.is_connected, 60)
        other = await Bus.connect(NatsConfig(url=srv.url), "sender")
        try:
            msg = RewardGroup(prompt_id="back", generation="g", task="t", tool="x", tool_version=1, items=[])
            deadline = time.monotonic() + 60
            while not got and time.monotonic() < deadline:  # core publishes before the re-SUB are lost
                await other.publish(subject, msg)
                await asyncio.sleep(0.2)
        finally:
            await other.close()
        assert got and got[0].prompt_id == "back"
    finally:
        await b.close()
        srv.stop()


async def test_kv_keys_lists_every_live_key_at_once_even_right_after_writes(bus: Bus) -> None:
    """nats-py's ``KeyValue.keys()`` can list an empty bucket while the server is still pushing the
    entries (it checks "nothing pending, nothing received" too early); ``Bus.kv_keys`` cannot."""
    bucket = f"keys_{uuid.uuid4().hex[:8]}"
    kv = await bus.js.create_key_value(bucket=bucket)
    assert await bus.kv_keys(bucket) == []
    names = [f"tools.t{i:03d}.head" for i in range(300)] + ["tools.t000.status", "other.x"]
    for k in names:
        await kv.put(k, b"v")
    await kv.delete("tools.t001.head")
    await kv.purge("tools.t002.head")
    live = sorted(set(names) - {"tools.t001.head", "tools.t002.head"})
    for _ in range(20):  # each listing starts right after the last: no settling time anywhere
        assert await bus.kv_keys(bucket) == live
    assert await bus.kv_keys(bucket, "tools.*.head") == [k for k in live if k.endswith(".head")]
    assert await bus.kv_keys(bucket, "nothing.>") == []
    await kv.put("tools.t001.head", b"again")
    assert "tools.t001.head" in await bus.kv_keys(bucket, "tools.*.head")
    # Listing leaves no consumer behind.
    assert (await bus.js.stream_info(f"KV_{bucket}")).state.consumer_count == 0
    await bus.js.delete_key_value(bucket)


async def test_connecting_to_a_dead_url_fails_fast_with_a_clear_message() -> None:
    t0 = time.monotonic()
    with pytest.raises(BusUnreachable, match=r"cannot reach NATS at nats://127.0.0.1:1 .*embedded"):
        await Bus.connect(NatsConfig(url="nats://127.0.0.1:1", initial_attempts=2, reconnect_wait_s=0.1))
    assert time.monotonic() - t0 < 30  # two bounded attempts, not the reconnect-forever of a live client


def test_the_cli_reports_an_unreachable_bus_without_a_traceback() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "rlar.app.cli", "status", "--nats", "nats://127.0.0.1:1"],
        capture_output=True,
        text=True,
        timeout=30,
        env=actor_env(),
        cwd=REPO,
    )
    assert r.returncode == 1
    assert "cannot reach NATS" in r.stderr and "Traceback" not in r.stderr


async def test_topology_is_idempotent_and_data_survives_a_server_restart(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with EmbeddedServer(store) as srv:
        b = await Bus.connect(NatsConfig(url=srv.url), "t1")
        await topology.ensure_topology(b.js)
        await topology.ensure_topology(b.js)  # again: no error
        await b.js_publish(subjects.score("rule"), _score_request(1))
        kv = await b.js.key_value(topology.TOOLS_BUCKET)
        await kv.put("exact_match", b"v1")
        await b.close()
    with EmbeddedServer(store) as srv:  # same storage dir, new process and port
        b = await Bus.connect(NatsConfig(url=srv.url), "t2")
        await topology.ensure_topology(b.js)
        info = await b.js.stream_info(topology.SCORE)
        assert info.state.messages == 1
        kv = await b.js.key_value(topology.TOOLS_BUCKET)
        assert (await kv.get("exact_match")).value == b"v1"
        raw = await b.js.get_msg(topology.SCORE, 1)
        assert decode(raw.data or b"", ScoreGroup).prompt_id == "s1"
        await b.close()


async def test_a_durable_publish_and_a_confirmed_ack_ride_out_a_server_restart(tmp_path: Path) -> None:
    """While the server is down, js_publish and ack time out and are retried; once it is back (same port
    and storage) both land, and the retried publish is stored once (its generated message id)."""
    srv = EmbeddedServer(tmp_path / "store").start()
    b = await Bus.connect(NatsConfig(url=srv.url, reconnect_wait_s=0.1, retry_s=30.0), "t")
    try:
        await topology.ensure_topology(b.js)
        await b.js_publish(subjects.score("rule"), _score_request(1))
        psub = await b.js.pull_subscribe_bind(durable="reward-rule", stream=topology.SCORE)
        [held] = await psub.fetch(1, timeout=5)
        srv.stop()
        outage_s = 3.0

        def restart() -> None:
            time.sleep(outage_s)
            srv.start()

        back = asyncio.create_task(asyncio.to_thread(restart))
        t0 = time.monotonic()
        await b.js_publish(subjects.score("rule"), _score_request(2), timeout_s=1.0)
        waited = time.monotonic() - t0
        await b.ack(held, timeout_s=1.0)
        await back
        assert waited >= outage_s - 0.5  # it really waited for the server rather than failing or buffering
        info = await b.js.stream_info(topology.SCORE)
        assert info.state.messages == 2  # the retried publish is stored once
        ci = await b.js.consumer_info(topology.SCORE, "reward-rule")
        assert (ci.num_ack_pending, ci.num_pending) == (0, 1)  # s1 acked for good; s2 waits
    finally:
        await b.close()
        srv.stop()


async def test_concurrent_topology_creation_from_many_actors_does_not_fail(tmp_path: Path) -> None:
    with EmbeddedServer(tmp_path / "s") as srv:
        buses = [await Bus.connect(NatsConfig(url=srv.url), f"c{i}") for i in range(4)]
        await asyncio.gather(*(topology.ensure_topology(b.js) for b in buses))
        names = {s.config.name for s in await buses[0].js.streams_info()}
        assert {s.name for s in topology.declare().streams} <= names
        for b in buses:
            await b.close()


def test_an_embedded_server_dies_with_its_parent_even_on_sigkill(tmp_path: Path) -> None:
    code = (
        "import sys, time\nfrom bus.embedded import EmbeddedServer\n"
        f"s = EmbeddedServer({str(tmp_path)!r}).start()\nprint(s.proc.pid, flush=True)\ntime.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, env=actor_env(), cwd=REPO)
    assert parent.stdout is not None
    server_pid = int(parent.stdout.readline())
    assert Path(f"/proc/{server_pid}").exists()
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while Path(f"/proc/{server_pid}").exists() and time.monotonic() < deadline:
        # a zombie (reaped by init) also counts as gone
        try:
            if "zombie" in Path(f"/proc/{server_pid}/status").read_text().lower():
                break
        except OSError:
            break
        time.sleep(0.05)
    status = Path(f"/proc/{server_pid}/status")
    assert not status.exists() or "zombie" in status.read_text().lower()


def test_an_embedded_server_stops_cleanly_on_exit(tmp_path: Path) -> None:
    with EmbeddedServer(tmp_path) as srv:
        assert srv.proc is not None
        pid = srv.proc.pid
        assert srv.running
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()


def test_encode_is_the_only_serialisation_on_the_wire() -> None:
    # a sanity check that the codec's bytes are what publish sends (no pickle anywhere)
    data = encode(_score_request(3))
    assert decode(data, ScoreGroup).prompt_id == "s3"
