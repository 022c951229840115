"""``rlar bench bus``: bus throughput and latency against a real nats-server, msgpack codec included.

Measured in one run, on separate publisher and subscriber connections:
- publish: small wire messages encoded and published with core NATS (msgs/s, flushed at the end);
- pub->sub: messages published and decoded by a subscriber on another connection (msgs/s, end to end);
- request/reply: sequential :meth:`Bus.request` calls to a :meth:`Bus.subscribe` responder in another process
  that decodes and answers (p50/p99 µs), alternating request by request with the raw client's requests of the
  same bytes to an echo on the same responder (``raw_req_reply_*``);
- JetStream: publishes acknowledged by a file-backed stream, pipelined (acked msgs/s);
- the same publish loop on pre-encoded bytes (``raw_publish_*``), so the codec's share is a ratio measured in
  the same run.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from typing import Any

from bus.client import Bus, RequestTimeout
from bus.codec import decode, encode
from bus.config import NatsConfig
from bus.embedded import serve
from bus.messages import RewardGroup, ScoredItem


def _small(i: int) -> RewardGroup:
    return RewardGroup(
        prompt_id=f"p{i}",
        generation="g",
        task="arith",
        tool="numeric_match",
        tool_version=1,
        items=[ScoredItem(index=0, status="ok", score=1.0, latency_s=0.001)],
    )


async def _publish(bus: Bus, n: int) -> float:
    msg = _small(0)
    t0 = time.perf_counter()
    for _ in range(n):
        await bus.nc.publish("bench.pub", encode(msg))
    await bus.nc.flush()
    return n / (time.perf_counter() - t0)


STALL_S = 15.0
"""A phase that makes no progress for this long stops with its reason (a figure, or an error naming the phase)."""


async def _pub_sub(pub: Bus, sub: Bus, n: int) -> tuple[float, int]:
    """(msgs/s received, messages lost). Core NATS delivers at most once: a subscriber the server finds slow (a
    loaded host that does not read its socket within the write deadline) loses messages. The wait ends when all
    arrived or none arrived for :data:`STALL_S`; the rate counts what arrived, and the loss is reported."""
    got = 0
    done = asyncio.Event()
    progress = asyncio.Event()

    async def on_msg(raw: Any) -> None:
        nonlocal got
        decode(raw.data, RewardGroup)
        got += 1
        progress.set()
        if got >= n:
            done.set()

    s = await sub.nc.subscribe("bench.ps", cb=on_msg, pending_msgs_limit=n * 2, pending_bytes_limit=1 << 30)
    await sub.nc.flush()
    msg = _small(0)
    t0 = time.perf_counter()
    for _ in range(n):
        await pub.nc.publish("bench.ps", encode(msg))
    await pub.nc.flush()
    while not done.is_set():
        progress.clear()
        try:
            await asyncio.wait_for(progress.wait(), STALL_S)
        except TimeoutError:
            break
    rate = got / (time.perf_counter() - t0 - (0 if done.is_set() else STALL_S))
    await s.unsubscribe()
    return rate, n - got


async def _serve_requests(url: str) -> None:
    """The responder of the request/reply figure: its own process, as a worker on the bus would be. On
    ``bench.rpc`` a :meth:`Bus.subscribe` handler (the payload decoded and checked, the reply encoded); on
    ``bench.raw`` the raw client's callback echoing the bytes."""
    bus = await Bus.connect(NatsConfig(url=url), "bench-responder")

    async def respond(req: RewardGroup, raw: Any) -> None:
        await raw.respond(encode(req))

    async def echo(raw: Any) -> None:
        await raw.respond(raw.data)

    await bus.subscribe("bench.rpc", RewardGroup, respond)
    await bus.nc.subscribe("bench.raw", cb=echo)
    await bus.nc.flush()
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until the parent closes stdin
    await bus.close()


async def _req_reply(client: Bus, url: str, n: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """(p50, p99) of :meth:`Bus.request` (the codec on both sides), then (p50, p99) of raw bytes echoed by the
    raw client, in the same run: the two kinds alternate request by request (which goes first alternates
    too), so both see the same machine — measured one loop after the other, a shared machine's load moved
    between the two loops by more than the codec costs."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "rlar.benchmarks.bus", "--respond", url, stdin=asyncio.subprocess.PIPE
    )
    try:
        return await _measure_interleaved(client, n)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            proc.kill()
            await proc.wait()


async def _measure_interleaved(client: Bus, n: int) -> tuple[tuple[float, float], tuple[float, float]]:
    msg = _small(1)  # the message is the caller's; what is timed is the bus: encode, request, decode
    payload = encode(msg)
    deadline = time.monotonic() + 10
    while True:  # the server may still be routing the earlier flood when interest registers
        try:
            await client.request("bench.rpc", msg, RewardGroup, timeout_s=5)
            break
        except RequestTimeout:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)
    for _ in range(200):  # warm-up, both kinds
        await client.request("bench.rpc", msg, RewardGroup, timeout_s=5)
        await client.nc.request("bench.raw", payload, timeout=5)
    bus_lat, raw_lat = [], []

    async def bus_one() -> None:
        t0 = time.perf_counter()
        await client.request("bench.rpc", msg, RewardGroup, timeout_s=5)
        bus_lat.append((time.perf_counter() - t0) * 1e6)

    async def raw_one() -> None:
        t0 = time.perf_counter()
        await client.nc.request("bench.raw", payload, timeout=5)
        raw_lat.append((time.perf_counter() - t0) * 1e6)

    for i in range(n):
        first, second = (bus_one, raw_one) if i % 2 == 0 else (raw_one, bus_one)
        await first()
        await second()
    qb, qr = statistics.quantiles(bus_lat, n=100), statistics.quantiles(raw_lat, n=100)
    return (qb[49], qb[98]), (qr[49], qr[98])


async def _publish_raw(bus: Bus, n: int) -> float:
    payload = encode(_small(0))
    t0 = time.perf_counter()
    for _ in range(n):
        await bus.nc.publish("bench.pub", payload)
    await bus.nc.flush()
    return n / (time.perf_counter() - t0)


async def _jetstream(bus: Bus, n: int, window: int = 512) -> float:
    await bus.js.add_stream(name="BENCH", subjects=["bench.js"])
    msg = _small(0)
    t0 = time.perf_counter()
    pending: list[asyncio.Future[Any]] = []
    for _ in range(n):
        pending.append(await bus.js.publish_async("bench.js", encode(msg)))
        if len(pending) >= window:
            try:
                await asyncio.wait_for(asyncio.gather(*pending), STALL_S)
            except TimeoutError:
                raise RuntimeError(
                    f"bench bus: JetStream did not ack a window of {window} publishes within {STALL_S:g}s"
                ) from None
            pending.clear()
    await asyncio.wait_for(asyncio.gather(*pending), STALL_S)
    rate = n / (time.perf_counter() - t0)
    info = await bus.js.stream_info("BENCH")
    if info.state.messages != n:
        raise RuntimeError(f"JetStream stored {info.state.messages} of {n} acked messages")
    await bus.js.delete_stream("BENCH")
    return rate


async def run(url: str, *, n_pub: int = 200_000, n_rpc: int = 3_000, n_js: int = 20_000) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, serve(url, tmp) as real_url:
        cfg = NatsConfig(url=real_url)
        a = await Bus.connect(cfg, "bench-a")
        b = await Bus.connect(cfg, "bench-b")
        try:
            pub = await _publish(a, n_pub)
            pubsub, lost = await _pub_sub(a, b, n_pub // 2)
            if lost:
                print(f"bench bus: the subscriber lost {lost} of {n_pub // 2} core messages", file=sys.stderr)
            raw_pub = await _publish_raw(a, n_pub)
            (p50, p99), (raw_p50, raw_p99) = await _req_reply(a, real_url, n_rpc)
            js = await _jetstream(a, n_js)
        finally:
            await a.close()
            await b.close()
    return {
        "bench": "bus",
        "server": "embedded" if url == "embedded" else url,
        "message_bytes": len(encode(_small(0))),
        "publish_msgs_per_s": round(pub),
        "pub_sub_msgs_per_s": round(pubsub),
        "pub_sub_lost": lost,
        "req_reply_p50_us": round(p50, 1),
        "req_reply_p99_us": round(p99, 1),
        "jetstream_acked_publishes_per_s": round(js),
        "raw_publish_msgs_per_s": round(raw_pub),
        "raw_req_reply_p50_us": round(raw_p50, 1),
        "raw_req_reply_p99_us": round(raw_p99, 1),
        "publish_vs_raw": round(pub / raw_pub, 3),
        "req_reply_p50_vs_raw": round(p50 / raw_p50, 3),
        "codec": "msgpack (encode+decode included)",
    }


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--respond":
        asyncio.run(_serve_requests(sys.argv[2]))
