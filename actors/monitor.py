"""The monitor actor: keeps a run's telemetry on disk and makes crashes loud.

It subscribes to heartbeats, events and metrics and appends each decoded message as one JSON line to
``<run dir>/telemetry.jsonl``; error-level events (actor crashes, quarantined tools) are logged at
ERROR so they show in the terminal of ``rlar up``.
"""

from __future__ import annotations

import json
import logging
from typing import IO, Any

from nats.aio.msg import Msg

from actors.runtime import Actor, ActorConfig
from bus import subjects
from bus.codec import to_dict
from bus.messages import Event, Heartbeat, Metrics

log = logging.getLogger(__name__)


class MonitorConfig(ActorConfig):
    file_name: str = "telemetry.jsonl"
    """File under the run directory that receives one JSON line per message."""


class Monitor(Actor[MonitorConfig]):
    kind = "monitor"
    Config = MonitorConfig

    def __init__(self, config: MonitorConfig) -> None:
        super().__init__(config)
        self._out: IO[str] | None = None

    def _write(self, subject: str, msg: Any) -> None:
        if self._out is None:
            return
        record = {"subject": subject, **to_dict(msg)}
        self._out.write(json.dumps(record, default=lambda b: f"<{len(b)} bytes>") + "\n")
        self._out.flush()
        self.counters["written"] += 1

    async def setup(self) -> None:
        self._out = open(self.run_dir / self.config.file_name, "a")

        async def on_heartbeat(msg: Heartbeat, raw: Msg) -> None:
            self._write(raw.subject, msg)

        async def on_event(msg: Event, raw: Msg) -> None:
            if msg.level == "error":
                log.error("EVENT %s %s: %s", msg.actor, msg.kind, msg.message)
            self._write(raw.subject, msg)

        async def on_metrics(msg: Metrics, raw: Msg) -> None:
            self._write(raw.subject, msg)

        await self.bus.subscribe(subjects.HEARTBEAT_ALL, Heartbeat, on_heartbeat)
        await self.bus.subscribe(subjects.EVENTS_ALL, Event, on_event)
        await self.bus.subscribe(subjects.METRICS_ALL, Metrics, on_metrics)

    async def teardown(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None
