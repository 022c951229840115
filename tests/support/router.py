"""The router tests' vocabulary, shared with the synthesis tests: actor fields on a given bus, a router
config, a prompt, and an inbox collecting what a core subscription receives."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from actors.router import RouterConfig
from bus.client import Bus
from bus.config import NatsConfig
from bus.messages import Prompt
from tests.support.servers import TEST_TOPOLOGY


def actor_fields(nats_url: str, tmp_path: Path) -> dict[str, Any]:
    """The config fields every actor of these tests shares: this module's bus, short ack-waits, a run dir."""
    return dict(nats=NatsConfig(url=nats_url), topology=TEST_TOPOLOGY, run_dir=str(tmp_path), heartbeat_s=0.5)


def router_config(nats_url: str, tmp_path: Path, **fields: Any) -> RouterConfig:
    base = {**actor_fields(nats_url, tmp_path), "health_interval_s": 3600, "metrics_interval_s": 0.3}
    return RouterConfig(**{**base, **fields})


def prompt(
    task: str, i: int, *, query: str, reference: Any = None, description: str = "", **fields: Any
) -> Prompt:
    return Prompt(
        prompt_id=f"{task}/e0/{i}",
        task=task,
        prompt=query,
        reference=reference,
        description=description,
        index=i,
        **fields,
    )


class Inbox:
    """Collects decoded messages from a core subscription."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    async def on(self, msg: Any, raw: object) -> None:
        self.items.append(msg)

    async def wait(self, n: int, timeout_s: float = 60.0) -> list[Any]:
        deadline = time.monotonic() + timeout_s
        while len(self.items) < n and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert len(self.items) >= n, f"got {len(self.items)} of {n}: {self.items!r}"[:2000]
        return self.items


async def inbox(bus: Bus, subject: str, msg_type: type) -> Inbox:
    box = Inbox()
    await bus.subscribe(subject, msg_type, box.on)
    return box
