"""The live picture of a run that the dashboard serves and the run report keeps: a Feed sink plus pollers.

Sections (each a JSON-able value with its own change counter, so a page gets only what changed):

- ``actors`` — the latest heartbeat per actor instance: state (``silent`` when no heartbeat came for
  ``stale_s``), host, pid, uptime, counters and ``info`` (policy version, metrics URL …);
- ``bus`` — stream depths and message rates, durable consumers' backlogs (pending, ack-pending,
  redelivered), polled every ``poll_s`` from JetStream;
- ``learner`` — step, policy version, throughput (samples/s and tokens/s over the recent steps), step time,
  staleness (max per step and the last step's histogram), abstain fraction;
- ``curves`` — reward per task and overall, one point per learner step: ``[step, reward, trend]``, the trend
  an exponential moving average over about :data:`TREND_SPAN` steps (:func:`trend`; the page draws it
  over the raw values, which it shows faintly);
- ``tools`` — the registry: every version of every tool with kind, origin, who registered it and when, its
  validation result, status (enabled/disabled/quarantined) and live stats (with timeouts, the most frequent
  error — ``raised ValueError: boom (at f.py:7 in fn)`` — and the last throughput warning); re-read when a
  ``ToolRegistered`` goes by and every ``registry_s``;
- ``routing`` — the newest routing decisions with their provenance, and tool requests;
- ``samples`` — the newest fully scored samples with their rewards;
- ``dead_letters`` — the newest dead letters with their reason and a payload preview;
- ``events`` — the newest events (crashes, quarantines, finished …);
- ``run`` — what the page is attached to, and the feed's counters.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from typing import Any

from nats.js.errors import NotFoundError

from bus.client import Bus
from bus.topology import declare
from rlar.observe.feed import RewardView, SampleJoin, SampleView, combined_reward
from rlar.registry import ToolRegistry

log = logging.getLogger("rlar.observe.state")

__all__ = ["SECTIONS", "LiveState"]

SECTIONS = (
    "run",
    "actors",
    "bus",
    "learner",
    "curves",
    "tools",
    "routing",
    "samples",
    "dead_letters",
    "events",
)


TREND_SPAN = 10
"""Steps the reward trend averages over (an EMA with ``alpha = 2 / (span + 1)``, as pandas' ``span``)."""


def trend(values: list[float], span: float = TREND_SPAN) -> list[float]:
    """The exponential moving average of ``values`` (``alpha = 2 / (span + 1)``), debiased — each point is
    ``Σ (1-α)^k y_{n-k} / Σ (1-α)^k`` — so the first points are the mean so far rather than pulled to 0."""
    decay = 1.0 - 2.0 / (span + 1.0)
    out: list[float] = []
    num = den = 0.0
    for y in values:
        num = decay * num + y
        den = decay * den + 1.0
        out.append(num / den)
    return out


def _preview(payload: bytes, n: int = 160) -> str:
    text = payload[:n].decode("utf-8", errors="replace")
    return "".join(c if c.isprintable() else "·" for c in text) + ("…" if len(payload) > n else "")


class LiveState:
    """Feed sink holding the sections above; :meth:`run_pollers` keeps ``bus`` and ``tools`` fresh."""

    def __init__(
        self,
        *,
        bus: Bus | None = None,
        describe: str = "",
        keep: int = 50,
        stale_s: float = 15.0,
        poll_s: float = 1.0,
        registry_s: float = 5.0,
        curve_points: int = 5000,
    ) -> None:
        self.bus = bus
        self.keep = keep
        self.stale_s = stale_s
        self.poll_s = poll_s
        self.registry_s = registry_s
        self.curve_points = curve_points
        self.seq = 0
        self.versions: dict[str, int] = dict.fromkeys(SECTIONS, 0)
        self._cond = asyncio.Condition()
        self._notify: asyncio.Task[None] | None = None
        self._waiting = 0  # coroutines in wait_change (no page open: no notification at all)
        self._registry_dirty = asyncio.Event()
        self.join = SampleJoin()
        self.started = time.time()
        self.counts: collections.Counter[str] = collections.Counter()
        self.actors: dict[str, dict[str, Any]] = {}
        self.bus_state: dict[str, Any] = {"streams": [], "consumers": [], "at": None}
        self.learner: dict[str, Any] = {"step": 0, "version": 0, "recent": []}
        self.curves: dict[str, list[list[float]]] = {}
        self.tools: list[dict[str, Any]] = []
        self.decisions: collections.deque[dict[str, Any]] = collections.deque(maxlen=keep)
        self.requests: collections.deque[dict[str, Any]] = collections.deque(maxlen=keep)
        self.samples: collections.deque[dict[str, Any]] = collections.deque(maxlen=keep)
        self.dead_letters: collections.deque[dict[str, Any]] = collections.deque(maxlen=keep)
        self.events: collections.deque[dict[str, Any]] = collections.deque(maxlen=keep)
        self.registrations: collections.deque[dict[str, Any]] = collections.deque(maxlen=4 * keep)
        self.describe = describe

    # -- change notification ----------------------------------------------------------------------
    def _bump(self, *sections: str) -> None:
        self.seq += 1
        for s in sections:
            self.versions[s] = self.seq
        if self._waiting and (self._notify is None or self._notify.done()):
            with contextlib.suppress(RuntimeError):  # no running loop (a report built offline)
                self._notify = asyncio.get_running_loop().create_task(self._notify_all())

    async def _notify_all(self) -> None:
        async with self._cond:
            self._cond.notify_all()

    async def wait_change(self, seen: int, timeout_s: float) -> int:
        """Return the current sequence once it is past ``seen`` (or after ``timeout_s``)."""
        if self.seq > seen:
            return self.seq
        self._waiting += 1
        try:
            async with self._cond:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._cond.wait_for(lambda: self.seq > seen), timeout_s)
        finally:
            self._waiting -= 1
        return self.seq

    def changed_since(self, seen: int) -> list[str]:
        return [s for s, v in self.versions.items() if v > seen]

    # -- the sink ---------------------------------------------------------------------------------
    def observe(self, kind: str, item: Any) -> None:
        self.counts[kind] += 1
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(item)

    def _on_heartbeat(self, hb: Any) -> None:
        self.actors[f"{hb.actor}/{hb.instance}"] = {
            "actor": hb.actor,
            "instance": hb.instance,
            "host": hb.host,
            "pid": hb.pid,
            "state": hb.state,
            "uptime_s": hb.uptime_s,
            "sent_at": hb.sent_at,
            "counters": dict(hb.counters),
            "info": dict(hb.info),
        }
        self._bump("actors")

    def _on_metrics(self, m: Any) -> None:
        if m.actor != "learner":
            return
        v = m.values
        step = int(m.step)
        for key, value in v.items():
            if (key.startswith("reward/") or key == "reward_mean") and isinstance(value, (int, float)):
                task = key.split("/", 1)[1] if "/" in key else "all"
                pts = self.curves.setdefault(task, [])
                if pts and pts[-1][0] >= step:  # a resumed learner re-logs steps: keep the newest
                    while pts and pts[-1][0] >= step:
                        pts.pop()
                pts.append([step, float(value)])
                if len(pts) > self.curve_points:
                    del pts[: len(pts) - self.curve_points]
        recent = self.learner["recent"]
        recent.append(
            {
                k: v.get(k)
                for k in (
                    "step",
                    "version",
                    "samples",
                    "step_s",
                    "t_end",
                    "tokens_per_s",
                    "staleness_max",
                    "abstain_frac",
                    "groups_with_signal",
                    "trained_rows",
                    "dropped_prompts",
                    "consumed_prompts",
                )
            }
        )
        del recent[:-200]
        window = recent[-20:]
        span = (window[-1].get("t_end") or 0) - (window[0].get("t_end") or 0)
        samples = sum(int(r.get("samples") or 0) for r in window[1:])
        self.learner.update(
            step=step,
            version=v.get("version"),
            staleness_hist=v.get("staleness_hist", {}),
            staleness_max=v.get("staleness_max", 0),
            abstain_frac=v.get("abstain_frac"),
            step_s=v.get("step_s"),
            tokens_per_s=v.get("tokens_per_s"),
            samples_per_s=samples / span if span > 0 else None,
            at=m.at,
            consumed_prompts=v.get("consumed_prompts"),
            dropped_prompts=v.get("dropped_prompts"),
        )
        self._bump("learner", "curves")

    def _on_progress(self, p: Any) -> None:
        self.learner.update(version=max(int(self.learner.get("version") or 0), int(p.version)))
        self._bump("learner")

    def _on_sample(self, s: SampleView) -> None:
        done = self.join.add_sample(s)
        if done:
            self._add_sample(*done)

    def _on_reward(self, r: RewardView) -> None:
        done = self.join.add_reward(r)
        if done:
            self._add_sample(*done)

    def _add_sample(self, s: SampleView, rewards: list[RewardView]) -> None:
        status, score = combined_reward(rewards)
        self.samples.appendleft(
            {
                "task": s.task,
                "prompt": s.query[-400:],
                "response": s.response[:400],
                "reward": score,
                "status": status,
                "policy_version": s.policy_version,
                "at": max(r.created_at for r in rewards),
                "tools": [
                    {
                        "tool": r.tool,
                        "version": r.tool_version,
                        "status": r.status,
                        "score": r.score,
                        "latency_s": round(r.latency_s, 4),
                        "reason": r.reason[:200],
                    }
                    for r in rewards
                ],
            }
        )
        self._bump("samples")

    def _on_decision(self, d: Any) -> None:
        self.decisions.appendleft(
            {
                "task": d.task,
                "signature": d.signature,
                "tools": [t.to_dict() for t in d.tools],
                "backend": d.backend,
                "model": d.model,
                "confidence": d.confidence,
                "reason": d.reason,
                "fallback": d.fallback,
                "prompt_hash": d.prompt_hash,
                "cost": d.cost,
                "at": d.at,
            }
        )
        self._bump("routing")

    def _on_tool_request(self, r: Any) -> None:
        self.requests.appendleft(
            {
                "request_id": r.request_id,
                "task": r.task,
                "signature": r.signature,
                "description": r.description[:300],
                "at": r.at,
            }
        )
        self._bump("routing")

    def _on_registered(self, t: Any) -> None:
        self.registrations.appendleft(
            {"name": t.name, "version": t.version, "kind": t.kind, "action": t.action, "by": t.by, "at": t.at}
        )
        self._registry_dirty.set()

    def _on_dead_letter(self, d: Any) -> None:
        self.dead_letters.appendleft(
            {
                "subject": d.subject,
                "reason": d.reason,
                "actor": d.actor,
                "deliveries": d.deliveries,
                "at": d.at,
                "size": len(d.payload),
                "preview": _preview(d.payload),
            }
        )
        self._bump("dead_letters")

    def _on_event(self, e: Any) -> None:
        self.events.appendleft(
            {"actor": e.actor, "kind": e.kind, "level": e.level, "message": e.message[:500], "at": e.at}
        )
        self._bump("events")

    # -- pollers ----------------------------------------------------------------------------------
    async def run_pollers(self, stop: asyncio.Event) -> None:
        """Refresh ``bus`` every ``poll_s`` and ``tools`` every ``registry_s`` or on a registration, until
        ``stop`` is set. Needs ``bus``."""
        assert self.bus is not None
        tasks = [asyncio.create_task(self._poll_bus(stop)), asyncio.create_task(self._poll_registry(stop))]
        try:
            await stop.wait()
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _poll_bus(self, stop: asyncio.Event) -> None:
        prev: dict[str, tuple[float, int]] = {}
        while not stop.is_set():
            try:
                self.bus_state = await self.read_bus(prev)
                self._bump("bus")
            except Exception as exc:  # a failover or a closed connection: try again next round
                log.debug("bus poll failed: %s", exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.poll_s)

    async def read_bus(self, prev: dict[str, tuple[float, int]]) -> dict[str, Any]:
        """Stream depths, rates since the previous call (``prev`` is updated) and consumer backlogs."""
        assert self.bus is not None
        js = self.bus.js
        topo = declare()
        now = time.monotonic()
        streams = []
        for s in topo.streams:
            try:
                si = await asyncio.wait_for(js.stream_info(s.name), 5)
            except NotFoundError:
                continue
            last = si.state.last_seq
            t0, l0 = prev.get(s.name, (now, last))
            rate = (last - l0) / (now - t0) if now > t0 else 0.0
            prev[s.name] = (now, last)
            streams.append(
                {
                    "stream": s.name,
                    "messages": si.state.messages,
                    "bytes": si.state.bytes,
                    "last_seq": last,
                    "rate_per_s": round(rate, 2),
                }
            )
        consumers = []
        for c in topo.consumers:
            try:
                ci = await asyncio.wait_for(js.consumer_info(c.stream, c.durable), 5)
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
        return {"streams": streams, "consumers": consumers, "at": time.time()}

    async def _poll_registry(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                self.tools = await self.read_registry()
                self._bump("tools")
            except Exception as exc:
                log.debug("registry poll failed: %s", exc)
            self._registry_dirty.clear()
            waits = [asyncio.create_task(stop.wait()), asyncio.create_task(self._registry_dirty.wait())]
            await asyncio.wait(waits, timeout=self.registry_s, return_when=asyncio.FIRST_COMPLETED)
            for w in waits:
                w.cancel()

    async def read_registry(self) -> list[dict[str, Any]]:
        """Every version of every tool, with origin, validation, status and live stats."""

        assert self.bus is not None
        reg = ToolRegistry(self.bus, announce=False)
        rows = []
        for name in await reg.names():
            st = await reg.status(name)
            for spec in await reg.versions(name):
                mark = (st.get("versions") or {}).get(str(spec.version))
                state = "disabled" if st["state"] == "disabled" else (mark or {}).get("state", "enabled")
                v = spec.validation or {}
                stats = await reg.stats(name, spec.version)
                rows.append(
                    {
                        "name": spec.name,
                        "version": spec.version,
                        "kind": str(spec.kind),
                        "origin": spec.provenance.get("origin", ""),
                        "author": spec.provenance.get("author", ""),
                        "source": spec.provenance.get("source", ""),
                        "registered_by": spec.provenance.get("registered_by", ""),
                        "registered_at": spec.provenance.get("registered_at"),
                        "state": state,
                        "state_reason": (mark or {}).get(
                            "reason", st.get("reason", "") if state == "disabled" else ""
                        ),
                        "validation": {
                            "passed": v.get("passed"),
                            "reason": str(v.get("reason", ""))[:300],
                            "checks": v.get("checks", {}),
                        }
                        if v
                        else None,
                        "stats": {
                            k: stats.get(k)
                            for k in (
                                "calls",
                                "ok",
                                "abstain",
                                "error",
                                "mean_latency_s",
                                "abstain_rate",
                                "error_rate",
                                "timeouts",
                                "top_error",
                                "last_warning",
                            )
                        },
                        "description": spec.description[:300],
                    }
                )
        return rows

    # -- output -----------------------------------------------------------------------------------
    def section(self, name: str) -> Any:
        now = time.time()
        if name == "run":
            return {"describe": self.describe, "started": self.started, "counts": dict(self.counts)}
        if name == "actors":
            rows = []
            for a in sorted(self.actors.values(), key=lambda a: (a["actor"], a["instance"])):
                age = now - a["sent_at"]
                health = a["state"] if a["state"] != "running" or age < self.stale_s else "silent"
                rows.append({**a, "age_s": round(age, 1), "health": health})
            return rows
        if name == "bus":
            return self.bus_state
        if name == "learner":
            return self.learner
        if name == "curves":
            out: dict[str, list[list[float]]] = {}
            for task, pts in self.curves.items():
                smooth = trend([y for _, y in pts])
                out[task] = [[x, y, round(t, 6)] for (x, y), t in zip(pts, smooth, strict=True)]
            return out
        if name == "tools":
            return {"tools": self.tools, "registrations": list(self.registrations)[: self.keep]}
        if name == "routing":
            return {"decisions": list(self.decisions), "requests": list(self.requests)}
        if name == "samples":
            return list(self.samples)
        if name == "dead_letters":
            return list(self.dead_letters)
        if name == "events":
            return list(self.events)
        raise KeyError(name)

    def snapshot(self, sections: list[str] | None = None) -> dict[str, Any]:
        """``{"seq", "now", "sections": {name: value}}`` for the given (default: all) sections."""
        names = sections if sections is not None else list(SECTIONS)
        return {"seq": self.seq, "now": time.time(), "sections": {n: self.section(n) for n in names}}
