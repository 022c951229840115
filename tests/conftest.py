"""Shared fixtures, and only fixtures (helpers live in ``tests/support``): one real nats-server (JetStream)
per test process on free ports (so one per xdist worker); no mocked bus. Also the local stand-ins the
retrieval and Anthropic-API tests share (hub mirror, Messages API server)."""

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
    "rlar",
    derandomize=True,
    deadline=None,
    database=None,
    max_examples=100,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("RLAR_HYPOTHESIS_PROFILE", "rlar"))


# The tiers (``make test-unit``, ``make test-bus``, ``make test-e2e``, ``make test-real``): every test gets exactly
# one.
#   unit: in-process and quick: no server, no child process (a unit test that starts one fails, below).
#   bus:  integration: a real nats-server, child processes (CLI, workers, ranks), the sandbox, a browser,
#         real models, sweeps.
#   e2e:  bounded real runs: the slow and chaos tests.
#   real: the real pretrained model at work (SmolLM2-135M-Instruct served by vLLM, the main job's own recipe):
#         minutes of both cores each, so ``make test`` leaves them to ``make test-real`` (CI runs both). Only an
#         explicit ``pytest.mark.real`` gives it.
# A test or module marked with a tier keeps it; else slow/chaos -> e2e; else the nats fixtures, the sandbox
# or browser markers, or a module in BUS_MODULES -> bus; else unit.
TIERS = ("unit", "bus", "e2e", "real")
LONGEST_FIRST = ("real", "e2e", "bus", "unit")
BUS_FIXTURES = frozenset({"nats_server", "nats_url", "bus"})
BUS_MARKS = ("sandbox", "browser", "vllm", "netns")
# Modules whose tests start servers, child processes, real models or sweeps (whole data sets, hypothesis
# properties of every wire type) themselves (not through the fixtures);
# a single such test elsewhere says so with ``@pytest.mark.bus``.
BUS_MODULES = frozenset(
    {
        "test_ablate",
        "test_agent_anthropic",
        "test_attach",
        "test_bench_gpu",
        "test_bench_pipeline",
        "test_bench_weight_sync",
        "test_bus",
        "test_code_formats",
        "test_deploy_manifests",
        "test_deploy_nats",
        "test_docs",
        "test_engines",
        "test_eval",
        "test_export",
        "test_feeder_and_sync",
        "test_kinds",
        "test_layers",
        "test_malloc",
        "test_learner_handover",
        "test_makefile",
        "test_math_equivalence",
        "test_permissions",
        "test_placement",
        "test_preference",
        "test_properties",
        "test_pyfunc",
        "test_recipes",
        "test_registry",
        "test_retrieval_browser",
        "test_retrieval_deploy",
        "test_retrieval_kinds",
        "test_retrieval_taskfit",
        "test_reward_cli",
        "test_routing_bench",
        "test_routing_offline",
        "test_routing_probes",
        "test_routing_set",
        "test_runconfig",
        "test_runtime",
        "test_sampling_logprobs",
        "test_sandbox",
        "test_sandbox_hacks",
        "test_synthesis_gate",
        "test_synthesis_stages",
        "test_synthesizer",
        "test_tools_executor",
        "test_tools_metrics",
        "test_tools_reward_model",
        "test_trainer",
        "test_trainer_scale",
        "test_weight_http",
        "test_weight_routes",
    }
)


def tier_of(item: pytest.Item) -> str:
    explicit = [t for t in TIERS if item.get_closest_marker(t) is not None]
    if len(explicit) > 1:
        raise pytest.UsageError(f"{item.nodeid}: marked with more than one tier: {explicit}")
    if explicit:
        return explicit[0]
    if item.get_closest_marker("slow") is not None or item.get_closest_marker("chaos") is not None:
        return "e2e"
    if BUS_FIXTURES & set(getattr(item, "fixturenames", ())) or any(
        item.get_closest_marker(m) for m in BUS_MARKS
    ):
        return "bus"
    if item.path.stem in BUS_MODULES:
        return "bus"
    return "unit"


def _scope(item: pytest.Item) -> str:
    """What ``--dist loadscope`` keeps on one worker: the test class, else the module."""
    module, _, rest = item.nodeid.partition("::")
    return f"{module}::{rest.split('::')[0]}" if "::" in rest else module


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank: dict[str, int] = {}
    for item in items:
        tier = tier_of(item)
        if item.get_closest_marker(tier) is None:
            item.add_marker(tier)
        scope = _scope(item)
        rank[scope] = min(rank.get(scope, len(TIERS)), LONGEST_FIRST.index(tier))
    # The longest scopes first (those holding an e2e test, then bus, then unit): xdist hands scopes out in this
    # order, so the end of a parallel run is short tests filling in, not one worker on a long run while the
    # others idle. A scope's own tests keep their order (a docs page's blocks build on each other).
    first_seen = {s: i for i, s in reversed(list(enumerate(map(_scope, items))))}
    items.sort(key=lambda it: (rank[_scope(it)], first_seen[_scope(it)]))


@pytest.fixture(autouse=True)
def unit_starts_no_process(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A unit test that starts a child process (``subprocess``, ``asyncio`` subprocesses, ``multiprocessing``)
    fails once it is done, naming what it started: it belongs to the bus tier (mark it ``pytest.mark.bus``).
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
            f"a unit test started child processes ({'; '.join(started[:3])}): mark it pytest.mark.bus "
            "(or list its module in tests/conftest.py BUS_MODULES)",
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
