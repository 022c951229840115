"""The observers' view of the bus: one subscriber that decodes what a run says and hands it to sinks.

Tracking (:mod:`rlar.observe.tracking`), the dashboard's live state (:mod:`rlar.observe.state`) and the run
report read the run through a :class:`Feed`. It subscribes, read-only, to:

- heartbeats (``rlar.heartbeat.>``), learner and worker metrics (``rlar.metrics.>``), events
  (``rlar.events.>``), learner progress and weight announcements;
- samples (``rlar.samples.>``) and rewards (``rlar.rewards.>``), turned into one :class:`SampleView` per
  generated response of a :class:`~bus.messages.SampleGroup` and one :class:`RewardView` per (response,
  tool) result of a :class:`~bus.messages.RewardGroup`;
- tool registrations, routing decisions and tool requests (``rlar.tools.>``), dead letters (``rlar.dlq.>``).

Live only (``replay=False``, what ``rlar train``'s tracking uses: it starts before the actors) the Feed
holds plain core subscriptions. With ``replay=True`` (a dashboard attached to a running run) it first
replays what the streams still keep — the learner's metrics and the events (TELEMETRY), the tool
messages (TOOLS), the last ``replay_last`` dead letters (DLQ), the last heartbeat of every actor
(HEARTBEATS) — through ordered consumers that then go on live, so nothing between replay and live is lost.

Payloads that do not decode are counted and skipped: the actors dead-letter their own bad input; an
observer never acks, naks or republishes anything.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from nats.aio.msg import Msg
from nats.js import api as js_api

from bus import subjects, topology
from bus.client import Bus
from bus.codec import DecodeError, decode
from bus.messages import (
    DeadLetter,
    Event,
    Heartbeat,
    LearnerProgress,
    Metrics,
    RewardGroup,
    RouteDecision,
    SampleGroup,
    ToolRegistered,
    ToolRequest,
    WeightsAnnounce,
)

log = logging.getLogger("rlar.observe")

__all__ = [
    "Feed",
    "RewardView",
    "SampleJoin",
    "SampleView",
    "Sink",
    "combined_reward",
    "reward_views",
    "sample_views",
]


@dataclass(slots=True)
class SampleView:
    """One generated response of a prompt group."""

    key: str
    """The sample id (:func:`bus.messages.sample_id`); joins it with its rewards (:attr:`RewardView.key`)."""
    prompt_id: str
    task: str
    index: int
    policy_version: int
    query: str
    response: str
    tools: list[str] = field(default_factory=list)
    """``"<tool> v<N>"`` of the prompt's route (v0: the newest usable version)."""
    created_at: float = 0.0


@dataclass(slots=True)
class RewardView:
    """One tool's result for one response."""

    key: str
    prompt_id: str
    task: str
    tool: str
    tool_version: int
    status: str
    score: float | None
    latency_s: float
    weight: float = 1.0
    reason: str = ""
    cached: bool = False
    created_at: float = 0.0


def _route(tools: list[Any]) -> list[str]:
    return [f"{t.tool} v{t.version}" for t in tools or []]


def sample_views(msg: SampleGroup) -> Iterator[SampleView]:
    """One view per response of a prompt group (or of one part of a large group)."""
    route = _route(msg.tools)
    for c in msg.completions:
        yield SampleView(
            key=msg.sample_id(c.index),
            prompt_id=msg.prompt_id,
            task=msg.task,
            index=int(c.index),
            policy_version=int(msg.policy_version),
            query=msg.query,
            response=c.text,
            tools=route,
            created_at=float(msg.created_at),
        )


def reward_views(msg: RewardGroup) -> Iterator[RewardView]:
    """One view per response a tool scored in a prompt group."""
    for it in msg.items:
        yield RewardView(
            key=msg.sample_id(it.index),
            prompt_id=msg.prompt_id,
            task=msg.task,
            tool=msg.tool,
            tool_version=int(msg.tool_version),
            status=it.status,
            score=it.score,
            latency_s=float(it.latency_s),
            weight=float(msg.weight),
            reason=it.reason,
            cached=bool(it.cached),
            created_at=float(msg.created_at),
        )


def combined_reward(rewards: list[RewardView]) -> tuple[str, float | None]:
    """A sample's reward as the learner combines it: weighted mean of the ``ok`` scores; none ok → the
    first non-ok status (abstain masks the sample)."""
    ok = [(r.weight, r.score) for r in rewards if r.status == "ok" and r.score is not None]
    weight = sum(w for w, _ in ok)
    if ok and weight > 0:
        return "ok", sum(w * float(s) for w, s in ok if s is not None) / weight
    if ok:
        return "ok", sum(float(s) for _, s in ok if s is not None) / len(ok)
    return (rewards[0].status if rewards else "pending"), None


class SampleJoin:
    """Pairs samples with their rewards; a sample is complete once every tool of its route has answered."""

    def __init__(self, keep: int = 4096) -> None:
        self.keep = keep
        self.samples: collections.OrderedDict[str, SampleView] = collections.OrderedDict()
        self.rewards: collections.OrderedDict[str, list[RewardView]] = collections.OrderedDict()

    def add_sample(self, s: SampleView) -> tuple[SampleView, list[RewardView]] | None:
        self.samples[s.key] = s
        while len(self.samples) > self.keep:
            self.samples.popitem(last=False)
        return self._complete(s.key)

    def add_reward(self, r: RewardView) -> tuple[SampleView, list[RewardView]] | None:
        self.rewards.setdefault(r.key, []).append(r)
        while len(self.rewards) > 2 * self.keep:
            self.rewards.popitem(last=False)
        return self._complete(r.key)

    def _complete(self, key: str) -> tuple[SampleView, list[RewardView]] | None:
        s, rewards = self.samples.get(key), self.rewards.get(key)
        if s is None or not rewards:
            return None
        if not {t.rsplit(" v", 1)[0] for t in s.tools} <= {r.tool for r in rewards}:
            return None
        del self.samples[key], self.rewards[key]
        return s, rewards


class Sink(Protocol):
    """What a Feed calls, synchronously and in bus order per subject: keep it quick (queue slow work)."""

    def observe(self, kind: str, item: Any) -> None:
        """``kind`` is one of :data:`Feed.KINDS`; ``item`` the decoded message or view."""


# Wire type name -> observation kind. Sample and reward messages are expanded into views first.
_KINDS: dict[str, str] = {
    Heartbeat.__name__: "heartbeat",
    Metrics.__name__: "metrics",
    Event.__name__: "event",
    LearnerProgress.__name__: "progress",
    WeightsAnnounce.__name__: "weights",
    ToolRegistered.__name__: "registered",
    RouteDecision.__name__: "decision",
    ToolRequest.__name__: "tool_request",
    DeadLetter.__name__: "dead_letter",
}


class Feed:
    """Subscribes to a run's bus and calls every sink's ``observe(kind, item)``.

    Kinds: ``heartbeat`` (:class:`Heartbeat`), ``metrics`` (:class:`Metrics`), ``event`` (:class:`Event`),
    ``progress`` (:class:`LearnerProgress`), ``weights`` (:class:`WeightsAnnounce`), ``registered``
    (:class:`ToolRegistered`), ``decision`` (:class:`RouteDecision`), ``tool_request`` (:class:`ToolRequest`),
    ``dead_letter`` (:class:`DeadLetter`), ``sample`` (:class:`SampleView`), ``reward`` (:class:`RewardView`).
    """

    KINDS = (*_KINDS.values(), "sample", "reward")

    def __init__(
        self, bus: Bus, sinks: list[Sink] | None = None, *, replay: bool = False, replay_last: int = 500
    ) -> None:
        self.bus = bus
        self.sinks: list[Sink] = list(sinks or [])
        self.replay = replay
        self.replay_last = replay_last
        self.undecodable = 0
        self.received = 0
        self._subs: list[Any] = []

    def add(self, sink: Sink) -> None:
        self.sinks.append(sink)

    def _emit(self, kind: str, item: Any) -> None:
        for sink in self.sinks:
            try:
                sink.observe(kind, item)
            except Exception:  # one broken sink must not blind the others
                log.exception("observer %s failed on %s", type(sink).__name__, kind)

    async def _on_raw(self, raw: Msg) -> None:
        self.received += 1
        try:
            msg: Any = decode(raw.data)
        except DecodeError:
            self.undecodable += 1
            return
        name = type(msg).__name__
        if isinstance(msg, SampleGroup):
            for s in sample_views(msg):
                self._emit("sample", s)
        elif isinstance(msg, RewardGroup):
            for r in reward_views(msg):
                self._emit("reward", r)
        elif name in _KINDS:
            self._emit(_KINDS[name], msg)

    async def start(self) -> None:
        """Subscribe (and replay, if asked). Returns once every subscription is in place."""
        core = [subjects.SAMPLES_ALL, subjects.REWARDS_ALL, subjects.LEARNER_PROGRESS, subjects.WEIGHTS]
        if not self.replay:
            core += [
                subjects.HEARTBEAT_ALL,
                subjects.METRICS_ALL,
                subjects.EVENTS_ALL,
                subjects.TOOLS_ALL,
                subjects.DLQ_ALL,
            ]
        for subject in core:
            self._subs.append(await self.bus.nc.subscribe(subject, cb=self._on_raw))
        if self.replay:
            await self._replay()

    async def _ordered(self, stream: str, subject: str, policy: js_api.DeliverPolicy, last: int = 0) -> None:
        config = js_api.ConsumerConfig(deliver_policy=policy)
        if last:
            info = await self.bus.js.stream_info(stream)
            first = max(info.state.first_seq, info.state.last_seq - last + 1)
            config = js_api.ConsumerConfig(
                deliver_policy=js_api.DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=max(1, first)
            )
        sub = await self.bus.js.subscribe(
            subject, stream=stream, cb=self._on_raw, ordered_consumer=True, config=config
        )
        self._subs.append(sub)

    async def _replay(self) -> None:
        all_, per_subject = js_api.DeliverPolicy.ALL, js_api.DeliverPolicy.LAST_PER_SUBJECT
        await self._ordered(topology.HEARTBEATS, subjects.HEARTBEAT_ALL, per_subject)
        await self._ordered(topology.TELEMETRY, subjects.metrics("learner"), all_)
        await self._ordered(topology.TELEMETRY, subjects.EVENTS_ALL, all_)
        await self._ordered(topology.TOOLS, subjects.TOOLS_ALL, all_)
        await self._ordered(topology.DLQ, subjects.DLQ_ALL, all_, self.replay_last)
        # Metrics of other actors (reward workers' stats) are live-only: they carry no history worth replaying.
        self._subs.append(await self.bus.nc.subscribe(subjects.METRICS_ALL, cb=self._on_other_metrics))

    async def _on_other_metrics(self, raw: Msg) -> None:
        if raw.subject != subjects.metrics("learner"):
            await self._on_raw(raw)

    async def stop(self) -> None:
        for sub in self._subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        self._subs.clear()

    async def flush(self, timeout_s: float = 5.0) -> None:
        """Wait until the server has seen our subscriptions (a round trip); for callers that publish next."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.bus.nc.flush(), timeout_s)
