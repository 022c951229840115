"""Shared fixtures (helpers live in ``tests/support``): one real nats-server (JetStream) per test process on free
ports (so one per xdist worker); no mocked bus. Also the local stand-ins the retrieval and Anthropic-API tests
share (hub mirror, Messages API server). And the tier hook: a test's tier is the folder its file is in
(``tests/unit``, ``tests/bus``, ``tests/e2e``, ``tests/long``, ``tests/real``); a test in the wrong folder fails
collection."""

from __future__ import annotations

import multiprocessing.process
import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, settings

from bus.client import Bus
from bus.config import NatsConfig
from bus.embedded import STATE_DIR_ENV, EmbeddedServer
from bus.topology import declare, ensure_topology
from rlar.standins.anthropic_server import MessagesServer
from tests.support.retrieval import trained_demo_cache
from tests.support.servers import TEST_TOPOLOGY, serve_nats

if TYPE_CHECKING:
    from rlar.standins.hub.mirror import MirrorSite

os.environ.setdefault("DS_ACCELERATOR", "cpu")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# Property tests: the same examples on every run (a failure replays; hypothesis prints the example), no
# per-example deadline (a loaded machine is not a failure), no example database in the repository.
settings.register_profile(
    "rlar",
    derandomize=True,
    deadline=None,
    database=None,
    max_examples=100,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("RLAR_HYPOTHESIS_PROFILE", "rlar"))


# The tiers (``make test-unit``, ``make test-bus``, ``make test-e2e``, ``make test-long``, ``make test-real``): a test's
# tier is the folder its file is in, ``tests/<tier>/``, and the hook below gives it that marker (so ``-m unit`` selects
# the same tests).
#   unit: in-process and quick: no server, no child process (a unit test that starts one fails, below).
#   bus:  integration: a real nats-server, child processes (CLI, workers, ranks), the sandbox, a browser,
#         real models, sweeps.
#   e2e:  bounded real runs of one service (the dashboard in chromium, trackers).
#   long: whole-system and engine runs (vLLM on CPU, training, the chaos run, the pages that train, the
#         ablation, retrieval with chromium, a multi-host cluster, the routing set's held-out folds): ``make test``
#         leaves them to ``make test-long`` (CI runs both).
#   real: the real pretrained model at work (SmolLM2-135M-Instruct served by vLLM, the main job's own recipe):
#         minutes of both cores each, so ``make test`` leaves them to ``make test-real`` (CI runs both).
# A test that asks for more than its folder's tier fails collection, naming the folder it belongs in: the nats
# fixtures or the sandbox/browser/vllm/netns markers outside unit, the slow and chaos markers outside e2e, long and
# real. A tier marker written on a test is refused: the folder says it.
TIERS = ("unit", "bus", "e2e", "long", "real")
LONGEST_FIRST = ("real", "long", "e2e", "bus", "unit")
TESTS = Path(__file__).resolve().parent
BUS_FIXTURES = frozenset({"nats_server", "nats_url", "bus"})
BUS_MARKS = ("sandbox", "browser", "vllm", "netns")
RUN_MARKS = ("slow", "chaos")


def tier_of(item: pytest.Item) -> str:
    """The folder of the test's file under tests/; a test elsewhere, or one that needs another tier, is a
    collection error that names the folder it belongs in."""
    where = item.path.resolve().relative_to(TESTS).parts
    tier = where[0] if len(where) > 1 else ""
    if tier not in TIERS:
        raise pytest.UsageError(
            f"{item.nodeid}: a test file lives in tests/<tier>/, one of {', '.join(TIERS)}"
        )
    written = [t for t in TIERS if any(m.name == t for m in item.iter_markers())]
    if written:
        raise pytest.UsageError(
            f"{item.nodeid}: marked {written}; the tier is the folder (tests/{tier}/): drop the marker, or move "
            "the test"
        )
    needs = {m for m in RUN_MARKS if item.get_closest_marker(m) is not None}
    if needs and tier not in ("e2e", "long", "real"):
        raise pytest.UsageError(
            f"{item.nodeid}: marked {sorted(needs)}: it belongs in tests/e2e/, not tests/{tier}/"
        )
    if tier == "unit":
        server = sorted(BUS_FIXTURES & set(getattr(item, "fixturenames", ())))
        marks = [m for m in BUS_MARKS if item.get_closest_marker(m) is not None]
        if server or marks:
            raise pytest.UsageError(
                f"{item.nodeid}: uses {server + marks}: it belongs in tests/bus/, not tests/unit/ (in-process only)"
            )
    return tier


def _scope(item: pytest.Item) -> str:
    """What ``--dist loadscope`` keeps on one worker: the test class, else the module."""
    module, _, rest = item.nodeid.partition("::")
    return f"{module}::{rest.split('::')[0]}" if "::" in rest else module


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank: dict[str, int] = {}
    for item in items:
        tier = tier_of(item)
        item.add_marker(tier)
        scope = _scope(item)
        rank[scope] = min(rank.get(scope, len(TIERS)), LONGEST_FIRST.index(tier))
    # The longest scopes first (those holding a long or e2e test, then bus, then unit): xdist hands scopes out in this
    # order, so the end of a parallel run is short tests filling in, not one worker on a long run while the
    # others idle. A scope's own tests keep their order (a docs page's blocks build on each other).
    first_seen = {s: i for i, s in reversed(list(enumerate(map(_scope, items))))}
    items.sort(key=lambda it: (rank[_scope(it)], first_seen[_scope(it)]))


@pytest.fixture(autouse=True)
def unit_starts_no_process(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A unit test that starts a child process (``subprocess``, ``asyncio`` subprocesses, ``multiprocessing``)
    fails once it is done, naming what it started: it belongs to the bus tier (move it to ``tests/bus/``).
    The process is started as asked; only the verdict changes."""
    if request.node.get_closest_marker("unit") is None:
        yield
        return
    started: list[str] = []
    popen = subprocess.Popen._execute_child  # type: ignore[attr-defined]
    start = multiprocessing.process.BaseProcess.start

    def execute_child(self: subprocess.Popen[Any], args: Any, *rest: Any, **kw: Any) -> Any:
        started.append(str(args)[:200])
        return popen(self, args, *rest, **kw)

    def process_start(self: multiprocessing.process.BaseProcess) -> None:
        started.append(f"multiprocessing {self.name}")
        start(self)

    monkeypatch.setattr(subprocess.Popen, "_execute_child", execute_child)
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", process_start)
    yield
    if started:
        pytest.fail(
            f"a unit test started child processes ({'; '.join(started[:3])}): it belongs in tests/bus/, not "
            f"tests/unit/ ({request.node.path.name})",
            pytrace=False,
        )


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
    """A local Anthropic Messages API server (``rlar.standins.anthropic_server``) for one test."""
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
    from rlar.standins.hub.catalogue import demo_site

    with demo_site(trained_demo_cache(tmp_path_factory), steps=300, hang_s=30) as s:
        yield s
