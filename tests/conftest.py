"""Shared fixtures: one real nats-server (JetStream) per test session on free ports; no mocked bus."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bus.client import Bus
from bus.config import NatsConfig
from bus.embedded import EmbeddedServer
from bus.topology import TopologyConfig, declare, ensure_topology
from rlar.learn.distributed import child_env

os.environ.setdefault("DS_ACCELERATOR", "cpu")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]

# Short ack-waits so redelivery tests take seconds, not minutes.
TEST_TOPOLOGY = TopologyConfig(
    prompt_ack_wait_s=2.0, score_ack_wait_s=2.0, learner_ack_wait_s=30.0, tool_request_ack_wait_s=5.0
)


@pytest.fixture(scope="session")
def nats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    server = EmbeddedServer(tmp_path_factory.mktemp("nats"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def nats_url(nats_server: EmbeddedServer) -> str:
    return nats_server.url


@pytest.fixture
async def bus(nats_url: str) -> AsyncIterator[Bus]:
    b = await Bus.connect(NatsConfig(url=nats_url), name="test")
    await ensure_topology(b.js, declare(TEST_TOPOLOGY))
    yield b
    await b.close()


def actor_env() -> dict[str, str]:
    """Environment for subprocesses that import the project from the repo root."""
    env = child_env()
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env
