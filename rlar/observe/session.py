"""What ``rlar train`` runs beside the actors to observe its run: one :class:`RunObserver`.

It subscribes to the run's bus before the actors start (a live-only :class:`~rlar.observe.feed.Feed`), and
feeds the tracker (``[train] report_to``), the live state, and — with ``rlar train --dashboard`` — the
dashboard server. At the end, while the bus is still up, :meth:`RunObserver.stop` reads the tool registry
once more and writes ``<run>/observed.json`` (registry, routing decisions, tool requests and registrations,
events, dead letters: what the run report needs beyond ``metrics.jsonl`` and ``summary.json``); then
:func:`rlar.observe.report.write_report` writes ``<run>/report.html``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bus.client import Bus
from rlar.observe.config import TrackingConfig
from rlar.observe.dashboard import Dashboard
from rlar.observe.feed import Feed
from rlar.observe.state import LiveState
from rlar.observe.tracking import Tracker

log = logging.getLogger("rlar.observe")

__all__ = ["DashboardOptions", "RunObserver"]

OBSERVED_FILE = "observed.json"


@dataclass(frozen=True, slots=True)
class DashboardOptions:
    host: str = "127.0.0.1"
    port: int = 0
    token: str | None = None


class RunObserver:
    """Tracking, live state and (optionally) the dashboard of one run; see the module docstring."""

    def __init__(
        self,
        bus: Bus,
        run_dir: Path,
        *,
        report_to: list[str],
        tracking: TrackingConfig | None = None,
        config_doc: dict[str, Any] | None = None,
        dashboard: DashboardOptions | None = None,
        describe: str = "",
    ) -> None:

        self.bus = bus
        self.run_dir = run_dir
        self.state = LiveState(bus=bus, describe=describe or f"run {run_dir}", keep=200)
        self.tracker = Tracker(run_dir, report_to, tracking, config_doc) if report_to else None
        self.feed = Feed(bus, [self.state, *([self.tracker] if self.tracker else [])])
        self.dashboard_options = dashboard
        self.dashboard: Any = None
        self._stop = asyncio.Event()
        self._pollers: asyncio.Task[None] | None = None
        self.started = time.time()
        self._cpu0 = time.process_time()

    async def start(self) -> None:
        """Subscribe (before the actors start), start the tracker's writer and, if asked, the dashboard."""
        if self.tracker is not None:
            self.tracker.start()
        await self.feed.start()
        await self.feed.flush()
        if self.dashboard_options is not None:
            o = self.dashboard_options
            self._pollers = asyncio.create_task(self.state.run_pollers(self._stop))
            self.dashboard = Dashboard(self.state, host=o.host, port=o.port, token=o.token)
            await self.dashboard.start()
            print(f"dashboard: {self.dashboard.link()}", flush=True)

    async def stop(self) -> dict[str, Any]:
        """Stop the dashboard, read the registry a last time, close the tracker; write and return
        ``observed.json``'s document. Call while the bus is still connected."""
        self._stop.set()
        if self.dashboard is not None:
            await self.dashboard.stop()
        if self._pollers is not None:
            with contextlib.suppress(Exception):
                await self._pollers
        await self.feed.stop()
        with contextlib.suppress(Exception):
            self.state.tools = await asyncio.wait_for(self.state.read_registry(), 60)
        doc = observed(self.state)
        doc["driver_cpu_s"] = round(
            time.process_time() - self._cpu0, 3
        )  # this process: feed, tracking, progress
        if self.tracker is not None:
            await asyncio.to_thread(self.tracker.close)
            doc["tracking"] = {
                "backends": self.tracker.where(),
                "errors": self.tracker.errors,
                "logged_steps": self.tracker.logged_steps,
                "dropped": self.tracker.dropped,
            }
        (self.run_dir / OBSERVED_FILE).write_text(json.dumps(doc, indent=1, default=str) + "\n")
        return doc


def observed(state: LiveState) -> dict[str, Any]:
    """The parts of the live state a report keeps."""
    return {
        "tools": state.tools,
        "registrations": list(state.registrations),
        "decisions": list(state.decisions),
        "requests": list(state.requests),
        "events": list(state.events),
        "dead_letters": list(state.dead_letters),
        "counts": dict(state.counts),
        "actors": state.section("actors"),
    }
