"""``rlar status``: live actors (from heartbeats), stream depths, consumer backlogs and message rates.

One line per actor: kind, instance, state, pid, host, uptime, then its heartbeat's ``info`` and ``counters``
written compactly (:func:`compact`): zeros and empty values left out, nested tables as ``name(k=v …)``, and
counters named ``<group>.<what>`` grouped — a reward worker's ``rule.ok``, ``rule.error`` … read
``rule(ok=900 error=3)``. ``--json`` prints everything as it is.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from nats.js.errors import NotFoundError

from bus import subjects
from bus.client import Bus
from bus.codec import DecodeError, decode
from bus.config import NatsConfig
from bus.messages import Heartbeat
from bus.topology import HEARTBEATS, declare


async def collect(bus: Bus, *, rate_window_s: float = 1.0, stale_s: float = 15.0) -> dict[str, Any]:
    """Gather the status document (what ``--json`` prints)."""
    topo = declare()
    now = time.time()
    actors: list[dict[str, Any]] = []
    try:
        info = await bus.js.stream_info(HEARTBEATS, subjects_filter=subjects.HEARTBEAT_ALL)
        for subject in sorted((info.state.subjects or {}).keys()):
            raw = await bus.js.get_last_msg(HEARTBEATS, subject)
            try:
                hb = decode(raw.data or b"", Heartbeat)
            except DecodeError:
                continue
            age = now - hb.sent_at
            actors.append(
                {
                    "actor": hb.actor,
                    "instance": hb.instance,
                    "host": hb.host,
                    "pid": hb.pid,
                    "state": hb.state if age < stale_s else f"silent {age:.0f}s",
                    "uptime_s": hb.uptime_s,
                    "age_s": round(age, 1),
                    "counters": hb.counters,
                    "info": hb.info,
                }
            )
    except NotFoundError:
        pass

    async def stream_states() -> dict[str, tuple[int, int, int]]:
        out: dict[str, tuple[int, int, int]] = {}
        for s in topo.streams:
            try:
                si = await bus.js.stream_info(s.name)
            except NotFoundError:
                continue
            out[s.name] = (si.state.messages, si.state.bytes, si.state.last_seq)
        return out

    t0 = time.monotonic()
    before = await stream_states()
    await asyncio.sleep(rate_window_s)
    after = await stream_states()
    dt = time.monotonic() - t0
    streams = []
    for name, (msgs, nbytes, last) in after.items():
        rate = (last - before.get(name, (0, 0, last))[2]) / dt if dt > 0 else 0.0
        streams.append({"stream": name, "messages": msgs, "bytes": nbytes, "rate_per_s": round(rate, 1)})
    consumers = []
    for c in topo.consumers:
        try:
            ci = await bus.js.consumer_info(c.stream, c.durable)
        except NotFoundError:
            continue
        consumers.append(
            {
                "stream": c.stream,
                "consumer": c.durable,
                "pending": ci.num_pending,
                "ack_pending": ci.num_ack_pending,
                "redelivered": ci.num_redelivered,
                "waiting": ci.num_waiting,
            }
        )
    return {"at": now, "actors": actors, "streams": streams, "consumers": consumers}


def _empty(value: Any) -> bool:
    return (
        value is None
        or value is False
        or value == 0
        or (isinstance(value, str | list | tuple | dict) and not value)
    )


def _grouped(counters: dict[str, Any]) -> dict[str, Any]:
    """``{"rule.ok": 9, "rule.error": 1, "requests": 5}`` → ``{"rule": {"ok": 9, "error": 1}, "requests": 5}``
    (a dotted key stays as it is when a plain key has its group's name)."""
    out: dict[str, Any] = {}
    for key, value in counters.items():
        group, dot, rest = str(key).partition(".")
        if dot and group not in counters:
            out.setdefault(group, {})[rest] = value
        else:
            out[key] = value
    return out


def compact(value: Any, width: int = 40) -> str:
    """A heartbeat value in few characters: ``k=v`` pairs without zeros or empty values, nested tables as
    ``k(…)``, lists joined by commas, floats to 3 significant digits, long strings cut at ``width``."""
    if isinstance(value, dict):
        parts = []
        for k, v in value.items():
            if _empty(v):
                continue
            inner = compact(v, width)
            if inner:
                parts.append(f"{k}({inner})" if isinstance(v, dict) else f"{k}={inner}")
        return " ".join(parts)
    if isinstance(value, list | tuple):
        return ",".join(compact(v, width) for v in value if not _empty(v))
    if isinstance(value, float):
        return f"{value:.3g}"
    text = str(value).replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def render(doc: dict[str, Any]) -> str:
    lines = [f"actors ({len(doc['actors'])}):"]
    if not doc["actors"]:
        lines.append("  (no heartbeats)")
    for a in doc["actors"]:
        info = compact(a["info"])
        counters = compact(_grouped(dict(sorted(a["counters"].items()))))
        lines.append(
            f"  {a['actor']:<12} {a['instance']:<28} {a['state']:<10} pid={a['pid']:<7} host={a['host']} "
            f"up={a['uptime_s']:.0f}s {info} {counters}".rstrip()
        )
    lines.append("streams:")
    for s in doc["streams"]:
        lines.append(
            f"  {s['stream']:<11} msgs={s['messages']:<8} bytes={s['bytes']:<10} rate={s['rate_per_s']}/s"
        )
    lines.append("consumers:")
    for c in doc["consumers"]:
        lines.append(
            f"  {c['stream'] + '/' + c['consumer']:<32} pending={c['pending']:<7} ack_pending={c['ack_pending']:<6} "
            f"redelivered={c['redelivered']}"
        )
    return "\n".join(lines)


async def status(url: str, *, as_json: bool, rate_window_s: float = 1.0) -> int:
    bus = await Bus.connect(NatsConfig(url=url, initial_attempts=1), name="rlar-status")
    try:
        doc = await collect(bus, rate_window_s=rate_window_s)
    finally:
        await bus.close()
    print(json.dumps(doc) if as_json else render(doc), flush=True)
    return 0
