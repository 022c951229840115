"""Prometheus metrics of one actor process, served on ``/metrics`` when ``metrics.port`` is set.

Every actor has an :class:`ActorMetrics` (``actor.metrics``; a private registry, so several actors in one
process — tests — do not collide). The runtime serves it with prometheus-client's HTTP server on
``[metrics] port`` (0: a free port; the URL goes into the heartbeat as ``info.metrics_url``), and the bus
client reports every JetStream delivery to it. What is exported:

- ``rlar_actor_up``, ``rlar_actor_uptime_seconds``, ``rlar_actor_counter_total{counter}`` (the actor's own
  counters: prompts, samples, rewards per kind and status, weight loads, steps, …) and
  ``rlar_actor_info{key}`` (numeric heartbeat info: policy version, step, pending groups …), all labelled
  ``actor`` (the kind);
- deliveries from durable consumers: ``rlar_messages_consumed_total{stream,consumer}`` and
  ``rlar_queue_lag_seconds{stream,consumer}`` (histogram: from the message's arrival in its stream to its
  delivery here), ``rlar_redeliveries_total{stream,consumer}``;
- backlog of the durables this actor reads, refreshed every ``refresh_s``:
  ``rlar_consumer_pending{stream,consumer}`` and ``rlar_consumer_ack_pending{stream,consumer}`` (what an
  autoscaler reads, see deploy/k8s);
- reward workers: ``rlar_rewards_total{tool,status}`` and ``rlar_reward_latency_seconds{tool}``;
- rollouts: ``rlar_samples_total{task}``, ``rlar_weight_loads_total`` and ``rlar_weight_load_seconds``;
- the learner: ``rlar_learner_steps_total``, ``rlar_learner_step_seconds``, ``rlar_learner_samples_total``,
  ``rlar_learner_dropped_groups_total``, ``rlar_policy_staleness`` (histogram of samples' lag in versions);
- ``rlar_dead_letters_total`` (payloads this process dead-lettered).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from rlar.observe.config import MetricsEndpoint

log = logging.getLogger("rlar.observe.prom")

__all__ = ["ActorMetrics"]

LATENCY_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
LAG_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0)


class _ActorCollector(Collector):
    """The actor's counters and numeric heartbeat info, read at scrape time."""

    def __init__(
        self,
        kind: str,
        counters: Callable[[], dict[str, Any]],
        info: Callable[[], dict[str, Any]],
        started: float,
        dead_letters: Callable[[], int],
    ) -> None:
        self.kind, self.counters, self.info, self.started, self.dead_letters = (
            kind,
            counters,
            info,
            started,
            dead_letters,
        )

    def collect(self) -> Iterator[Any]:
        up = GaugeMetricFamily("rlar_actor_up", "1 while the actor process runs", labels=["actor"])
        up.add_metric([self.kind], 1.0)
        yield up
        uptime = GaugeMetricFamily(
            "rlar_actor_uptime_seconds", "Seconds since the actor started", labels=["actor"]
        )
        uptime.add_metric([self.kind], time.time() - self.started)
        yield uptime
        c = CounterMetricFamily(
            "rlar_actor_counter", "The actor's own counters (heartbeat counters)", labels=["actor", "counter"]
        )
        for name, value in sorted(self.counters().items()):
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                c.add_metric([self.kind, str(name)], float(value))
        yield c
        g = GaugeMetricFamily(
            "rlar_actor_info", "Numeric heartbeat info (policy version, step, …)", labels=["actor", "key"]
        )
        try:
            info = self.info()
        except Exception:  # info() of an actor mid-setup
            info = {}
        for key, value in sorted(info.items()):
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                g.add_metric([self.kind, str(key)], float(value))
        yield g
        d = CounterMetricFamily("rlar_dead_letters", "Payloads this process dead-lettered", labels=["actor"])
        d.add_metric([self.kind], float(self.dead_letters()))
        yield d


class ActorMetrics:
    """One actor's Prometheus registry (see the module docstring). With ``enabled=False`` (no endpoint
    configured: nothing could read them) every hook returns at once."""

    def __init__(self, kind: str, *, enabled: bool = True) -> None:
        self.kind = kind
        self.enabled = enabled
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        sc = ["stream", "consumer"]
        self.consumed = Counter(
            "rlar_messages_consumed", "Messages delivered to this actor by a durable", sc, registry=r
        )
        self.redelivered = Counter("rlar_redeliveries", "Deliveries that were redeliveries", sc, registry=r)
        self.queue_lag = Histogram(
            "rlar_queue_lag_seconds",
            "From arrival in the stream to delivery here",
            sc,
            buckets=LAG_BUCKETS,
            registry=r,
        )
        self.pending = Gauge(
            "rlar_consumer_pending",
            "Messages not yet delivered by a durable this actor reads",
            sc,
            registry=r,
        )
        self.ack_pending = Gauge(
            "rlar_consumer_ack_pending", "Delivered, not yet acknowledged", sc, registry=r
        )
        self.rewards = Counter("rlar_rewards", "Reward results", ["tool", "status"], registry=r)
        self.reward_latency = Histogram(
            "rlar_reward_latency_seconds",
            "Scoring time per result",
            ["tool"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.samples_total = Counter("rlar_samples", "Samples generated", ["task"], registry=r)
        self.weight_loads = Counter("rlar_weight_loads", "Policy weights loaded", registry=r)
        self.weight_load_s = Histogram(
            "rlar_weight_load_seconds",
            "Time to fetch and load new weights",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.learner_steps = Counter("rlar_learner_steps", "Learner steps", registry=r)
        self.learner_step_s = Histogram(
            "rlar_learner_step_seconds", "Learner step time", buckets=LATENCY_BUCKETS, registry=r
        )
        self.learner_samples = Counter("rlar_learner_samples", "Samples in learner steps", registry=r)
        self.learner_dropped = Counter(
            "rlar_learner_dropped_groups", "Groups dropped as too stale", registry=r
        )
        self.staleness = Histogram(
            "rlar_policy_staleness",
            "Samples' lag behind the learner, in versions",
            buckets=(0, 1, 2, 3, 4, 6, 8, 16),
            registry=r,
        )
        self._durables: set[tuple[str, str]] = set()
        self._server: Any = None
        self._refresh: asyncio.Task[None] | None = None
        self.url = ""

    # -- what actors report -----------------------------------------------------------------------
    def attach(
        self,
        counters: Callable[[], dict[str, Any]],
        info: Callable[[], dict[str, Any]],
        started: float,
        dead_letters: Callable[[], int],
    ) -> None:
        """Export the actor's counters and heartbeat info (read at each scrape)."""
        self.registry.register(_ActorCollector(self.kind, counters, info, started, dead_letters))

    def consuming(self, stream: str, durable: str) -> None:
        """This actor reads ``durable`` (the bus client says so when a pull loop starts): export its backlog."""
        self._durables.add((stream, durable))

    def delivered(self, raw: Any) -> None:
        """A JetStream message was delivered (the bus client calls this for every pulled message)."""
        if not self.enabled:
            return
        try:
            md = raw.metadata
        except Exception:  # not a JetStream message
            return
        key = (md.stream, md.consumer)
        self._durables.add(key)
        self.consumed.labels(*key).inc()
        if md.num_delivered and md.num_delivered > 1:
            self.redelivered.labels(*key).inc()
        if md.timestamp is not None:
            self.queue_lag.labels(*key).observe(max(0.0, time.time() - md.timestamp.timestamp()))
        if md.num_pending is not None:
            self.pending.labels(*key).set(md.num_pending)

    def reward(self, tool: str, status: str, latency_s: float, *, cached: bool = False) -> None:
        if not self.enabled:
            return
        self.rewards.labels(tool, status).inc()
        if not cached:
            self.reward_latency.labels(tool).observe(latency_s)

    def samples(self, task: str, n: int = 1) -> None:
        if not self.enabled:
            return
        self.samples_total.labels(task).inc(n)

    def weights_loaded(self, seconds: float) -> None:
        if not self.enabled:
            return
        self.weight_loads.inc()
        self.weight_load_s.observe(seconds)

    def learner_step(self, record: dict[str, Any]) -> None:
        if not self.enabled:
            return
        self.learner_steps.inc()
        if isinstance(record.get("step_s"), (int, float)):
            self.learner_step_s.observe(float(record["step_s"]))
        self.learner_samples.inc(int(record.get("samples", 0) or 0))
        for lag, n in (record.get("staleness_hist") or {}).items():
            for _ in range(int(n)):
                self.staleness.observe(float(lag))

    def dropped(self, groups: int) -> None:
        if not self.enabled:
            return
        self.learner_dropped.inc(groups)

    # -- serving ----------------------------------------------------------------------------------
    def serve(self, endpoint: MetricsEndpoint, js: Any = None) -> str:
        """Start ``/metrics`` on ``endpoint`` (a daemon thread) and, given a JetStream context, the backlog
        refresher; return the URL."""

        assert endpoint.port is not None
        self._server, _ = start_http_server(endpoint.port, addr=endpoint.host, registry=self.registry)
        port = self._server.server_port
        host = endpoint.host if endpoint.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
        self.url = f"http://{host}:{port}/metrics"
        if js is not None:
            self._refresh = asyncio.create_task(self._refresh_backlog(js, endpoint.refresh_s))
        log.info("%s: Prometheus metrics on %s", self.kind, self.url)
        return self.url

    async def _refresh_backlog(self, js: Any, every_s: float) -> None:
        while True:
            for stream, consumer in list(self._durables):
                with contextlib.suppress(Exception):
                    ci = await asyncio.wait_for(js.consumer_info(stream, consumer), 5)
                    self.pending.labels(stream, consumer).set(ci.num_pending)
                    self.ack_pending.labels(stream, consumer).set(ci.num_ack_pending)
            await asyncio.sleep(every_s)

    def close(self) -> None:
        if self._refresh is not None:
            self._refresh.cancel()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
