"""The router tests' vocabulary, shared with the synthesis tests: actor fields on a given bus, a router
config, a prompt, an inbox collecting what a core subscription receives, and a model backend that routes by
a fixed preference (:class:`ChoosingModel`)."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path
from typing import Any

from actors.router import RouterConfig
from bus.client import Bus
from bus.config import NatsConfig
from bus.messages import Prompt
from rlar.agent.anthropic_agent import AnthropicAgent
from rlar.agent.base import AnthropicAgentConfig
from rlar.standins.anthropic_server import MessagesServer
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


class ChoosingModel:
    """A model backend (the Anthropic Messages API, served locally) that routes like a careless agent: it picks
    the first tool of ``prefer`` among the candidates it is offered, or says none fits. What it is offered is
    recorded, so a test sees the second question the router asks after the probes refused its first choice."""

    def __init__(self, prefer: list[str]) -> None:
        self.prefer = prefer
        self.offered: list[list[str]] = []
        self.server = MessagesServer()

    def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        text = body["messages"][0]["content"]
        text = text if isinstance(text, str) else " ".join(b.get("text", "") for b in text)
        names = re.findall(r"(?m)^- (\S+) \(v\d+, kind", text.split("# Ruled out")[0])
        self.offered.append(names)
        pick = next((n for n in self.prefer if n in names), None)
        data = {
            "tools": [{"name": pick, "weight": 1}] if pick else [],
            "none_fit": pick is None,
            "confidence": 0.9,
            "reason": f"picked {pick}" if pick else "none of them",
            "constraints": [],
        }
        return {
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "choose_reward_tools", "input": data}]
        }

    def __enter__(self) -> AnthropicAgent:
        self.server.respond = self.respond
        self.server.__enter__()
        return AnthropicAgent(
            AnthropicAgentConfig(
                base_url=self.server.url, api_key_env="RLAR_TEST_KEY", max_retries=1, timeout_s=10
            )
        )

    def __exit__(self, *exc: object) -> None:
        self.server.__exit__(None, None, None)
