"""The retriever: finds a reward model on the web for a task no registered tool fits, and registers it
only after it passed validation.

It consumes ``ToolRequest``s from the durable ``retriever`` on the TOOLS stream (subject
``rlar.tools.request.retrieve``; every replica of ``rlar up --actors retriever=N`` shares the durable, so
each request goes to one replica). Per request:

1. ``RetrievalRequest.from_tool_request`` reads the task and its constraints (language, parameter/VRAM
   budget, licence policy, pass share, latency). A request that does not validate is recorded as
   ``failed`` with the reason and acked (redelivering it cannot make it valid).
2. :class:`rlar.retrieval.pipeline.RetrievalPipeline` searches the hub and leaderboards in headless
   Chromium (one browser, a pool of contexts, per-page timeouts, pacing per host), reads the model pages,
   filters and ranks on the evidence, fetches and validates candidates in rank order.
3. The first candidate that passes validation is registered with :class:`rlar.registry.ToolRegistry`
   (which announces ``ToolRegistered`` on ``rlar.tools.registered``), with its provenance and validation
   record in the spec.
4. The record — pages, candidates, decisions with reasons, screenshots — is written to
   ``<run_dir>/retrievals/<request_id>/record.json``; an ``Event`` on ``rlar.events.retriever`` summarises
   it. A request whose record already exists (redelivered after it was handled) is not run again, unless
   its outcome was ``hub_unreachable``, ``download_failed`` (a transfer may work the next time) or an
   internal error.

While a retrieval runs, the message is kept in progress (``in_progress()`` every third of the consumer's
ack-wait, read from the server at start),
so a retrieval that takes minutes is not redelivered to another replica. A failure of our own code raises:
the request is nak'ed, redelivered up to ``max_deliver`` times, then dead-lettered. Whatever a web page,
repository or model does is a recorded reason, and the actor keeps serving.
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import Any

from nats.aio.msg import Msg
from pydantic import Field, ValidationError

from actors.runtime import Actor, ActorConfig
from bus import subjects, topology
from bus.client import keep_in_progress
from bus.messages import Event, ToolRequest
from rlar.registry import ToolRegistry
from rlar.retrieval.browser import BrowserPool
from rlar.retrieval.config import RetrievalConfig, RetrievalRequest
from rlar.retrieval.pipeline import RetrievalPipeline
from rlar.retrieval.records import RetrievalRecord, load_record
from rlar.tools.base import ToolSpec

log = logging.getLogger(__name__)


class RetrieverConfig(ActorConfig):
    """Settings of one retriever replica."""

    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    """Hub, leaderboards, browser, search, ranking, validation and fetch settings."""
    concurrency: int = Field(1, ge=1, le=8)
    """Retrievals in flight in this replica (they share its browser pool); scale with replicas instead."""
    register_tools: bool = True
    """Register validated tools (off: validate and record only)."""
    max_deliver: int = Field(3, ge=1)
    """Deliveries of a request whose handling failed in our own code before it is dead-lettered."""


class Retriever(Actor[RetrieverConfig]):
    kind = "retriever"
    Config = RetrieverConfig

    def __init__(self, config: RetrieverConfig) -> None:
        super().__init__(config)
        self.pool: BrowserPool | None = None
        self.pipeline: RetrievalPipeline | None = None
        self.registry: ToolRegistry | None = None
        self.in_flight = 0
        self.last: dict[str, Any] = {}
        self.ack_wait_s = config.topology.tool_request_ack_wait_s

    @property
    def by(self) -> str:
        return f"{self.kind}/{self.instance}"

    async def setup(self) -> None:
        cfg = self.config.retrieval
        # A browser that cannot start is our deployment's fault: fail fast, the supervisor restarts us.
        self.pool = await BrowserPool(cfg.browser).start()
        self.registry = ToolRegistry(self.bus)
        self.pipeline = RetrievalPipeline(cfg, self.pool, self.run_dir, worker=self.by)
        # The consumer's real ack-wait (it may have been created with other settings than ours).
        self.ack_wait_s = self.config.topology.tool_request_ack_wait_s
        with contextlib.suppress(Exception):
            info = await self.bus.js.consumer_info(topology.TOOLS, topology.RETRIEVER)
            self.ack_wait_s = float(info.config.ack_wait or self.ack_wait_s)

    async def main(self) -> None:
        task = self.bus.consume(
            topology.TOOLS,
            topology.RETRIEVER,
            ToolRequest,
            self._handle,
            batch=1,  # take one request at a time so idle replicas get the next one
            concurrency=self.config.concurrency,
            max_deliver=self.config.max_deliver,
            stop=self.stopping,
        )
        await task

    async def teardown(self) -> None:
        if self.pool is not None:
            await self.pool.stop()

    def info(self) -> dict[str, Any]:
        return {
            "in_flight": self.in_flight,
            "last": self.last,
            "hub": self.config.retrieval.hub_url,
            "browser": self.pool.info() if self.pool else {},
        }

    # -- one request ----------------------------------------------------------------------------------
    async def _register(self, spec: ToolSpec) -> ToolSpec:
        assert self.registry is not None
        return await self.registry.register(spec, by=self.by)

    async def _handle(self, msg: ToolRequest, raw: Msg) -> None:
        assert self.pipeline is not None
        self.counters["requests"] += 1
        rdir = self.pipeline.retrieval_dir(msg.request_id)
        done = rdir / "record.json"
        if done.is_file():
            with contextlib.suppress(ValueError, OSError):
                prev = load_record(done)
                # Only an internal error, an unreachable hub or a failed download is worth running again;
                # every other outcome would repeat itself.
                again = prev.get("outcome") in ("running", "hub_unreachable", "download_failed")
                if not again and not str(prev.get("reason", "")).startswith("internal"):
                    self.counters["duplicates"] += 1
                    log.info(
                        "request %s was already handled (%s); not run again", msg.request_id, prev["outcome"]
                    )
                    return
        try:
            req = RetrievalRequest.from_tool_request(msg)
        except ValidationError as exc:
            record = RetrievalRecord(
                request_id=msg.request_id, request={"raw": _plain(msg)}, config={}, worker=self.by
            )
            record.outcome = "failed"
            record.reason = f"invalid request: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}"
            record.finished_at = time.time()
            record.write(rdir)
            await self._finish(record, done)
            return
        self.in_flight += 1
        try:
            async with keep_in_progress(raw, self.ack_wait_s):
                record = await self.pipeline.retrieve(
                    req, register=self._register if self.config.register_tools else None
                )
        finally:
            self.in_flight -= 1
        await self._finish(record, done)

    async def _finish(self, record: RetrievalRecord, path: Any) -> None:
        self.counters[f"outcome_{record.outcome}"] += 1
        self.last = {
            "request_id": record.request_id,
            "outcome": record.outcome,
            "tool": record.tool.get("name", ""),
        }
        level = "info" if record.outcome in ("registered", "validated") else "warning"
        log.log(
            logging.INFO if level == "info" else logging.WARNING,
            "retrieval %s: %s — %s",
            record.request_id,
            record.outcome,
            record.reason,
        )
        event = Event(
            actor=self.by,
            kind="retrieval",
            level=level,
            message=f"{record.outcome}: {record.reason}"[:500],
            data={
                "request_id": record.request_id,
                "outcome": record.outcome,
                "tool": {k: record.tool.get(k) for k in ("name", "version") if k in record.tool},
                "record": str(path),
                "candidates": len(record.candidates),
                "screenshots": len(record.screenshots),
            },
        )
        with contextlib.suppress(Exception):  # an event is telemetry; the record on disk is the account
            await self.bus.publish(subjects.events(self.kind), event)


def _plain(msg: ToolRequest) -> dict[str, Any]:
    return {
        "request_id": msg.request_id,
        "task": msg.task,
        "description": msg.description,
        "domain": msg.domain,
        "task_type": msg.task_type,
        "constraints": dict(msg.constraints),
        "examples": len(msg.examples),
    }
