"""An actor's Prometheus endpoint: a real reward worker with ``metrics.port = 0`` scores requests from a real
bus, announces its ``/metrics`` URL in its heartbeat, and the page parses with prometheus-client's parser and
counts exactly what the worker did."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from actors.reward import RewardConfig, RewardWorker
from bus import subjects
from bus.client import Bus
from bus.config import NatsConfig
from bus.embedded import EmbeddedServer
from bus.messages import Heartbeat
from bus.topology import declare, ensure_topology
from rlar.observe.config import MetricsEndpoint
from rlar.observe.feed import Feed
from tests.support.observe import score_messages
from tests.support.reward_tools import running
from tests.support.servers import TEST_TOPOLOGY, serve_nats


@pytest.fixture(scope="module")
def nats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from serve_nats(tmp_path_factory, "nats-prom")  # exact counts: no other test's score requests


@pytest.fixture(scope="module")
def nats_url(nats_server: EmbeddedServer) -> str:
    return nats_server.url


class _Rewards:
    def __init__(self, want: int) -> None:
        self.want, self.got, self.done = want, [], asyncio.Event()

    def observe(self, kind: str, item: Any) -> None:
        if kind == "reward":
            self.got.append(item)
            if len(self.got) >= self.want:
                self.done.set()


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


async def test_a_reward_worker_serves_metrics_that_parse_and_count_its_work(
    nats_url: str, tmp_path: Path
) -> None:
    bus = await Bus.connect(NatsConfig(url=nats_url), name="test-prom")
    await ensure_topology(bus.js, declare(TEST_TOPOLOGY))
    heartbeats: asyncio.Queue[Heartbeat] = asyncio.Queue()

    async def on_hb(hb: Heartbeat, raw: Any) -> None:
        await heartbeats.put(hb)

    await bus.subscribe(subjects.HEARTBEAT_ALL, Heartbeat, on_hb)
    cfg = RewardConfig(
        nats=NatsConfig(url=nats_url),
        topology=TEST_TOPOLOGY,
        run_dir=str(tmp_path),
        heartbeat_s=0.3,
        kinds=["rule"],
        metrics=MetricsEndpoint(port=0, refresh_s=0.2),
    )
    responses = ["42", "41", "42", "forty-two", "42", "7"]
    sink = _Rewards(len(responses) + 2)
    feed = Feed(bus, [sink])
    await feed.start()
    async with running(RewardWorker(cfg)):
        async with asyncio.timeout(60):
            hb = await heartbeats.get()
            while "metrics_url" not in hb.info:
                hb = await heartbeats.get()
        url = hb.info["metrics_url"]
        for m in score_messages("arith", "arith/e0/1", "exact_match", "rule", responses, "42"):
            await bus.js_publish(subjects.score("rule"), m)
        for m in score_messages("arith", "arith/e0/2", "no_such_tool", "rule", ["a", "b"], "a"):
            await bus.js_publish(subjects.score("rule"), m)
        await asyncio.wait_for(sink.done.wait(), 60)
        async with httpx.AsyncClient(timeout=10) as client:
            page = await client.get(url)
    await feed.stop()
    await bus.close()
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/plain")
    got = _samples(page.text)
    ok = sum(1 for r in sink.got if r.status == "ok")
    assert ok == len(responses)
    assert got[("rlar_rewards_total", (("status", "ok"), ("tool", "exact_match")))] == ok
    assert got[("rlar_rewards_total", (("status", "abstain"), ("tool", "no_such_tool")))] == 2
    assert got[("rlar_reward_latency_seconds_count", (("tool", "exact_match"),))] == ok
    assert got[("rlar_reward_latency_seconds_sum", (("tool", "exact_match"),))] > 0
    sc = (("consumer", "reward-rule"), ("stream", "SCORE"))
    delivered = got[("rlar_messages_consumed_total", sc)]
    assert delivered == len(score_messages("arith", "p", "t", "rule", responses, "")) + len(
        score_messages("arith", "p", "t", "rule", ["a", "b"], "")
    )
    assert got[("rlar_queue_lag_seconds_count", sc)] == delivered
    assert got[("rlar_consumer_pending", sc)] == 0
    assert (
        got[("rlar_actor_counter_total", (("actor", "reward"), ("counter", "rewards")))] == len(responses) + 2
    )
    assert got[("rlar_actor_up", (("actor", "reward"),))] == 1
    with pytest.raises(httpx.ConnectError):  # the endpoint closes with the actor
        async with httpx.AsyncClient(timeout=5) as client:
            await client.get(url)
