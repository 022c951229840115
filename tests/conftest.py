"""Shared fixtures, and only fixtures (helpers live in ``tests/support``): one real nats-server (JetStream)
per test process on free ports (so one per xdist worker); no mocked bus. Also the local stand-ins the
retrieval and Anthropic-API tests share (hub mirror, Messages API server)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

from bus.client import Bus
from bus.config import NatsConfig
from bus.embedded import STATE_DIR_ENV, EmbeddedServer
from bus.topology import declare, ensure_topology
from rlar.testing.anthropic_server import MessagesServer
from tests.support.retrieval import trained_demo_cache
from tests.support.servers import TEST_TOPOLOGY, serve_nats

if TYPE_CHECKING:
    from rlar.testing.hub.mirror import MirrorSite

os.environ.setdefault("DS_ACCELERATOR", "cpu")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# Property tests: the same examples on every run (a failure replays; hypothesis prints the example), no
# per-example deadline (a loaded machine is not a failure), no example database in the repository.
settings.register_profile(
    "rlar", derandomize=True, deadline=None, database=None, max_examples=100,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)  # fmt: skip
settings.load_profile(os.environ.get("RLAR_HYPOTHESIS_PROFILE", "rlar"))


@pytest.fixture(scope="session", autouse=True)
def private_state_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The live-run index and other per-user state (``bus.embedded.state_dir``) of this session only: runs
    the tests start are not listed to the operator's commands, and the operator's runs not to the tests.
    Set in the environment, so subprocesses inherit it."""
    path = tmp_path_factory.mktemp("state")
    old = os.environ.get(STATE_DIR_ENV)
    os.environ[STATE_DIR_ENV] = str(path)
    yield path
    if old is None:
        os.environ.pop(STATE_DIR_ENV, None)
    else:
        os.environ[STATE_DIR_ENV] = old


@pytest.fixture(scope="session")
def nats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from serve_nats(tmp_path_factory, "nats")


@pytest.fixture(scope="session")
def nats_url(nats_server: EmbeddedServer) -> str:
    return nats_server.url


@pytest.fixture
async def bus(nats_url: str) -> AsyncIterator[Bus]:
    b = await Bus.connect(NatsConfig(url=nats_url), name="test")
    await ensure_topology(b.js, declare(TEST_TOPOLOGY))
    yield b
    await b.close()


@pytest.fixture
def messages_server() -> Iterator[MessagesServer]:
    """A local Anthropic Messages API server (``rlar.testing.anthropic_server``) for one test."""
    with MessagesServer() as srv:
        yield srv


@pytest.fixture
def no_ambient_anthropic(monkeypatch: pytest.MonkeyPatch) -> None:
    """The anthropic SDK sees no key, base URL or token from the environment, and reaches local servers
    without a proxy."""
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture(scope="module")
def trained_mirror_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MirrorSite]:
    """The local hub mirror serving the demo catalogue (trained checkpoints) and its leaderboard."""
    from rlar.testing.hub.catalogue import demo_site

    with demo_site(trained_demo_cache(tmp_path_factory), steps=300, hang_s=30) as s:
        yield s
