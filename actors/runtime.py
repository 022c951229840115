"""The actor runtime: a base class every actor derives from.

An actor owns one job. Its life: connect to the bus, make sure the declared topology exists, ``setup()``,
then ``main()`` until :meth:`Actor.request_stop` (SIGTERM/SIGINT, or a caller) sets ``self.stopping``;
then a graceful drain: ``main()`` is expected to finish the work in hand and return, ``teardown()`` runs,
a last heartbeat says ``stopped`` and the connection is drained and closed.

While it runs, a heartbeat goes out every ``heartbeat_s`` on ``rlar.heartbeat.<kind>.<instance>`` with id,
host, pid, uptime, state, counters and actor-specific ``info()`` (e.g. the policy version a rollout serves).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import json
import logging
import os
import re
import signal
import socket
import sys
import time
import traceback
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from nats.js.errors import KeyNotFoundError
from pydantic import BaseModel, ConfigDict, Field

from bus import subjects
from bus.client import Bus
from bus.config import NatsConfig
from bus.messages import Event, Heartbeat
from bus.topology import STATE_BUCKET, TopologyConfig, declare, ensure_topology
from rlar.observe.config import MetricsEndpoint
from rlar.observe.prom import ActorMetrics

log = logging.getLogger(__name__)

DRAIN_WARN_S = 30.0
"""An actor still draining this long after its stop request logs where every thread and task is."""


class ActorConfig(BaseModel):
    """Settings every actor has. Actor configs subclass this and add their own fields."""

    model_config = ConfigDict(extra="forbid")

    nats: NatsConfig = Field(default_factory=NatsConfig)
    """How to reach the bus (``embedded`` is resolved to a URL by the launcher before actors start)."""
    topology: TopologyConfig = Field(default_factory=TopologyConfig)
    """Stream and consumer tunables; every actor ensures the same declared topology at start."""
    heartbeat_s: float = Field(2.0, gt=0)
    """Seconds between heartbeats."""
    run_dir: str = "runs/default"
    """Directory for this run's files (checkpoints, metrics, logs)."""
    instance: str | None = None
    """Instance id; defaults to ``<host>-<pid>-<random>``."""
    metrics: MetricsEndpoint = Field(default_factory=MetricsEndpoint)
    """Prometheus ``/metrics`` endpoint (off unless ``port`` is set; ``[metrics]`` sets it for every actor)."""


C = TypeVar("C", bound=ActorConfig)
R = TypeVar("R")


def host_id() -> str:
    """This host's name in instance ids and heartbeats: env ``RLAR_HOST_ID``, else the hostname (set it
    where hosts share a hostname, e.g. containers or network namespaces on one machine)."""
    return os.environ.get("RLAR_HOST_ID") or socket.gethostname()


def dump_stacks() -> None:
    """Log where every thread and every asyncio task of this process is (``kill -USR1 <pid>`` on an actor
    that does not stop or does not progress)."""
    out = io.StringIO()
    for tid, frame in sys._current_frames().items():
        out.write(f"--- thread {tid}\n")
        traceback.print_stack(frame, file=out)
    with contextlib.suppress(RuntimeError):
        for task in asyncio.all_tasks():
            out.write(f"--- task {task.get_name()}\n")
            task.print_stack(file=out)
    log.warning("stacks on request (SIGUSR1):\n%s", out.getvalue())


class Actor(Generic[C]):
    """Base class: subclass, set ``kind`` and ``Config``, implement ``main()`` (and ``setup``/``teardown``)."""

    kind: ClassVar[str] = "actor"
    Config: ClassVar[type[ActorConfig]] = ActorConfig

    def __init__(self, config: C) -> None:
        self.config = config
        self.host = host_id()
        self.instance = config.instance or f"{self.host}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.counters: Counter[str] = Counter()
        self.state = "starting"
        self.stopping = asyncio.Event()
        self.started_at = time.time()
        self._bus: Bus | None = None
        self._owns_bus = False
        self._finished = asyncio.Event()
        self._beating = False
        self.metrics = ActorMetrics(self.kind, enabled=config.metrics.port is not None)
        self.metrics.attach(
            lambda: dict(self.counters),
            self.info,
            self.started_at,
            lambda: self._bus.dead_letters if self._bus is not None else 0,
        )
        self._stop_requested_at: float | None = None
        self._saved_counters: dict[str, int] = {}
        self._compute: ThreadPoolExecutor | None = None

    # -- to override ------------------------------------------------------------------------------
    async def setup(self) -> None:
        """Open resources (models, subscriptions) before ``main``."""

    async def main(self) -> None:
        """The actor's loop. Must return soon after ``self.stopping`` is set, leaving no work half done."""
        await self.stopping.wait()

    async def teardown(self) -> None:
        """Release resources after ``main`` returned (also after a crash)."""

    def info(self) -> dict[str, Any]:
        """Actor-specific heartbeat fields (e.g. ``{"policy_version": 3}``)."""
        return {}

    # -- runtime ----------------------------------------------------------------------------------
    @property
    def bus(self) -> Bus:
        if self._bus is None:
            raise RuntimeError(f"{self.kind} is not connected (call run())")
        return self._bus

    @property
    def run_dir(self) -> Path:
        p = Path(self.config.run_dir)
        p.mkdir(parents=True, exist_ok=True)
        return p

    async def on_compute_thread(self, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> R:
        """``fn(*args, **kwargs)`` on this actor's one compute thread, made on first use, off the event loop.

        The model work of an actor (building it, generating, training, loading and exporting weights) goes
        through here rather than ``asyncio.to_thread``, whose pool hands successive calls to different threads:
        each thread allocates from its own glibc arena, so memory one step freed sat in another thread's arena
        while the next step faulted fresh pages in (what :mod:`rlar.malloc` keeps memory for), and torch's
        thread-local state was set in one thread and used in another."""
        if self._compute is None:
            self._compute = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"{self.kind}-compute")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._compute, functools.partial(fn, *args, **kwargs))

    def request_stop(self) -> None:
        """Ask for a graceful drain (idempotent, safe from signal handlers)."""
        if not self.stopping.is_set():
            log.info("%s/%s: stop requested, draining", self.kind, self.instance)
            self.state = "draining"
            self._stop_requested_at = time.monotonic()
            self.stopping.set()
            with contextlib.suppress(RuntimeError):  # no running loop: nothing to watch
                asyncio.get_running_loop().call_later(DRAIN_WARN_S, self._still_draining)

    def _still_draining(self) -> None:
        if not self._finished.is_set():
            log.warning(
                "%s/%s: still draining %.0fs after the stop request; where it is:",
                self.kind,
                self.instance,
                DRAIN_WARN_S,
            )
            dump_stacks()

    async def stop(self, timeout_s: float = 30.0) -> None:
        """Request a drain and wait until the actor has finished."""
        self.request_stop()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._finished.wait(), timeout_s)

    async def run(self, bus: Bus | None = None, *, install_signals: bool = False) -> None:
        """Run until stopped. Pass ``bus`` to share a connection (tests, in-process launches)."""
        loop = asyncio.get_running_loop()
        if install_signals:
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, self.request_stop)
            loop.add_signal_handler(signal.SIGUSR1, dump_stacks)
        self._finished.clear()
        hb: asyncio.Task[None] | None = None
        try:
            if bus is None:
                bus = await Bus.connect(self.config.nats, name=f"{self.kind}/{self.instance}")
                self._owns_bus = True
            self._bus = bus
            if self.metrics.enabled:
                if self._owns_bus:
                    bus.observer = self.metrics
                self.metrics.serve(self.config.metrics, bus.js)
            topo = declare(self.config.topology)
            await bus.retrying(lambda: ensure_topology(bus.js, topo), "declare the topology")
            await self._restore_counters()
            await self.setup()
            self.state = "running"
            self._beating = True
            hb = asyncio.create_task(self._heartbeat_loop(), name=f"heartbeat:{self.kind}")
            await self.main()
        except Exception as exc:
            self.state = "crashed"
            log.exception("%s/%s crashed", self.kind, self.instance)
            if self._bus is not None:
                with contextlib.suppress(Exception):
                    await self._bus.publish(
                        subjects.events(self.kind),
                        Event(
                            actor=f"{self.kind}/{self.instance}",
                            kind="crash",
                            level="error",
                            message=f"{type(exc).__name__}: {exc}",
                        ),
                    )
            raise
        finally:
            t_main = time.monotonic()
            if self.state != "crashed":
                self.state = "stopped"
            with contextlib.suppress(Exception):
                await self.teardown()
            if self._compute is not None:
                self._compute.shutdown(wait=False, cancel_futures=True)
                self._compute = None
            t_teardown = time.monotonic()
            if hb is not None:
                self._beating = False  # ends the loop even if the cancel below is swallowed
                hb.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await hb
            if self._bus is not None:
                with contextlib.suppress(Exception):
                    await self._send_heartbeat()
                with contextlib.suppress(Exception):
                    await self._save_counters()
                if self._owns_bus:
                    await self._bus.close()
            if self._stop_requested_at is not None:
                t0 = self._stop_requested_at
                log.info(
                    "%s/%s: stopped %.1fs after the stop request (main %.1fs, teardown %.1fs, bus %.1fs)",
                    self.kind,
                    self.instance,
                    time.monotonic() - t0,
                    t_main - t0,
                    t_teardown - t_main,
                    time.monotonic() - t_teardown,
                )
            if install_signals:
                for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1):
                    with contextlib.suppress(Exception):
                        loop.remove_signal_handler(sig)
            self.metrics.close()
            self._finished.set()

    def heartbeat(self) -> Heartbeat:
        return Heartbeat(
            actor=self.kind,
            instance=self.instance,
            host=self.host,
            pid=os.getpid(),
            uptime_s=round(time.time() - self.started_at, 3),
            state=self.state,
            counters=dict(self.counters),
            info={**self.info(), **({"metrics_url": self.metrics.url} if self.metrics.url else {})},
        )

    async def _send_heartbeat(self) -> None:
        await self.bus.publish(subjects.heartbeat(self.kind, self.instance), self.heartbeat())

    async def _heartbeat_loop(self) -> None:
        # Not ``while True``: nats-py swallows a cancel that lands inside a publish (``_flush_pending``), and
        # ``run()`` awaits this task after cancelling it; the flag ends the loop within one interval anyway.
        while self._beating:
            try:
                await self._send_heartbeat()
                await self._save_counters()
            except Exception as exc:  # a missed heartbeat is not worth dying for
                log.debug("heartbeat failed: %s", exc)
            await asyncio.sleep(self.config.heartbeat_s)

    # Counters live in the state bucket under the instance id, so a replica the supervisor restarts (same
    # id) goes on counting where it was; what it counted after its last save (one heartbeat) is lost.
    @property
    def _counters_key(self) -> str:
        kind, instance = (re.sub(r"[^-_=a-zA-Z0-9]", "_", x) for x in (self.kind, self.instance))
        return f"counters.{kind}.{instance}"

    async def _restore_counters(self) -> None:
        try:
            kv = await self.bus.js.key_value(STATE_BUCKET)
            saved = json.loads((await kv.get(self._counters_key)).value or b"{}")
        except KeyNotFoundError:
            return
        except Exception as exc:  # counters are for operators: never a reason not to start
            log.warning("%s/%s: counters not restored (%s)", self.kind, self.instance, exc)
            return
        self.counters.update({k: int(v) for k, v in saved.items() if isinstance(v, int)})
        self._saved_counters = dict(self.counters)

    async def _save_counters(self) -> None:
        now = dict(self.counters)
        if now != self._saved_counters:
            await self.bus.kv_put(STATE_BUCKET, self._counters_key, json.dumps(now).encode())
            self._saved_counters = now

    async def sleep_or_stop(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; return True if a stop was requested meanwhile."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.stopping.wait(), seconds)
        return self.stopping.is_set()


class NotRunning(RuntimeError):
    """An actor started by :func:`in_process` exited before it was running, or was not running in time."""


@contextlib.asynccontextmanager
async def in_process(
    *actors: Actor[Any],
    bus: Bus | None = None,
    timeout_s: float = 60.0,
    stop_timeout_s: float = 30.0,
    check: bool = True,
) -> AsyncIterator[None]:
    """Run ``actors`` in this event loop while the block runs (tests, embedded workers, benchmarks).

    Enters once every actor is running (set up); an actor that exits before raises its crash (else
    :class:`NotRunning`), and one not running within ``timeout_s`` raises :class:`NotRunning` — all are
    stopped first. When the block ends, every actor is asked to drain (:meth:`Actor.stop` waits up to
    ``stop_timeout_s`` for each) and its ``run()`` is awaited to the end; with ``check`` an actor's crash
    is raised then (unless the block itself raised). ``bus``: one connection for all of them (each
    connects on its own without).
    """
    tasks = [asyncio.create_task(a.run(bus), name=f"in-process:{a.kind}") for a in actors]
    raised = False
    try:
        deadline = time.monotonic() + timeout_s
        while any(a.state != "running" for a in actors):
            for a, t in zip(actors, tasks, strict=True):
                if t.done():
                    t.result()  # raises the actor's crash
                    raise NotRunning(f"{a.kind} exited before running")
            if time.monotonic() > deadline:
                late = ", ".join(a.kind for a in actors if a.state != "running")
                raise NotRunning(f"{late} did not start within {timeout_s:g} s")
            await asyncio.sleep(0.02)
        yield
    except BaseException:
        raised = True
        raise
    finally:
        for a in actors:
            await a.stop(timeout_s=stop_timeout_s)
        # No bound here: each drain was given ``stop_timeout_s``; a run() still finishing is waited for.
        results = await asyncio.gather(*tasks, return_exceptions=True)
        crashes = [r for r in results if isinstance(r, BaseException)]
        if check and crashes and not raised:
            raise crashes[0]
