"""The dashboard server over a real bus, without a browser: the page and its assets (nothing from elsewhere),
the JSON state, Server-Sent Events that carry a change, read-only methods, the bearer token, replay of what
the streams keep when attaching to a running bus. The browser test (tests/test_dashboard_browser.py) drives
the page itself during a real run."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from bus import subjects
from bus.client import Bus
from bus.messages import DeadLetter, Heartbeat
from rlar.observe.dashboard import Dashboard
from rlar.observe.feed import Feed
from rlar.observe.state import SECTIONS, LiveState
from tests.support.observe import TASKS, publish_run


async def _events(client: httpx.AsyncClient, url: str) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    async with client.stream("GET", url) as resp:
        assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
        event = ""
        async for line in resp.aiter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                yield event, json.loads(line[6:])


async def test_the_dashboard_serves_its_page_state_and_live_updates_read_only(bus: Bus) -> None:
    state = LiveState(bus=bus, describe="test bus", poll_s=0.2)
    feed = Feed(bus, [state])
    await feed.start()
    await feed.flush()
    stop = asyncio.Event()
    pollers = asyncio.create_task(state.run_pollers(stop))
    dash = Dashboard(state, port=0)
    url = await dash.start()
    try:
        assert url.startswith("http://127.0.0.1:")
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            page = (await client.get("/")).text
            # every asset is this server's: no URL with a scheme or host in src/href
            assert not re.search(r'(src|href)="(https?:)?//', page)
            for asset in re.findall(r'(?:src|href)="(static/[^"]+)"', page):
                r = await client.get("/" + asset)
                assert (
                    r.status_code == 200
                    and len(r.content) > 500
                    and b"http://" not in r.content.replace(b"http://www.w3.org/2000/svg", b"")
                )
            assert (await client.post("/api/state")).status_code == 405
            assert (await client.delete("/")).status_code == 405
            doc = (await client.get("/api/state")).json()
            assert set(doc["sections"]) == set(SECTIONS)
            assert any(s["stream"] == "SCORE" for s in (await _eventually(client, "bus"))["streams"])
            # a change on the bus reaches an open event stream
            seen: list[str] = []
            async with asyncio.timeout(60):
                stream = _events(client, "/api/events")
                kind, first = await anext(stream)
                assert kind == "snapshot" and set(first["sections"]) == set(SECTIONS)
                await bus.publish(
                    subjects.dlq("rlar.samples.arith"),
                    DeadLetter(
                        subject="rlar.samples.arith",
                        reason="not valid MessagePack: ExtraData",
                        payload=b"\x92\x01",
                        actor="learner",
                    ),
                )
                async for _, upd in stream:
                    seen += list(upd["sections"])
                    letters = upd["sections"].get("dead_letters") or []
                    if any(d["reason"] == "not valid MessagePack: ExtraData" for d in letters):
                        break
                await stream.aclose()
            assert "dead_letters" in seen
    finally:
        await dash.stop()
        stop.set()
        await pollers
        await feed.stop()


async def _eventually(client: httpx.AsyncClient, section: str) -> Any:
    async with asyncio.timeout(30):
        while True:
            value = (await client.get("/api/state")).json()["sections"][section]
            if value and (not isinstance(value, dict) or value.get("at")):
                return value
            await asyncio.sleep(0.1)


async def test_a_bearer_token_guards_the_data_but_not_the_page(bus: Bus) -> None:
    state = LiveState(bus=bus)
    dash = Dashboard(state, port=0, token="s3cret")
    url = await dash.start()
    try:
        assert dash.link().endswith("/#token=s3cret")
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            assert (await client.get("/")).status_code == 200
            assert (await client.get("/static/app.js")).status_code == 200
            for bad in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic s3cret"}):
                r = await client.get("/api/state", headers=bad)
                assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
            assert (await client.get("/api/events?token=nope")).status_code == 401
            assert (
                await client.get("/api/state", headers={"Authorization": "Bearer s3cret"})
            ).status_code == 200
            assert (await client.get("/api/state?token=s3cret")).status_code == 200
    finally:
        await dash.stop()


async def test_attaching_later_replays_metrics_tools_and_dead_letters_the_streams_keep(bus: Bus) -> None:
    sent = await publish_run(bus, 3, seed=7)
    await bus.publish(
        subjects.heartbeat("rollout", "r-1"),
        Heartbeat(actor="rollout", instance="r-1", host="h", pid=1, uptime_s=5.0),
    )
    await bus.nc.flush()
    state = LiveState(bus=bus)
    feed = Feed(bus, [state], replay=True)
    await feed.start()
    try:
        async with asyncio.timeout(30):
            while not (
                state.learner["step"] >= 3
                and state.dead_letters
                and state.decisions
                and any(a["instance"] == "r-1" for a in state.actors.values())
            ):
                await state.wait_change(state.seq, 1.0)
        for task in TASKS:
            pts = dict((int(s), v) for s, v in state.curves[task])
            assert {s: pts[s] for s in sent["rewards"][task]} == pytest.approx(sent["rewards"][task])
        assert any(d["task"] == "translate" and d["backend"] == "offline" for d in state.decisions)
        assert any(r["name"] == "chrf" for r in state.registrations)
    finally:
        await feed.stop()
