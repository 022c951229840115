"""Start a set of actors as child processes with replica counts, and keep them alive.

``rlar up --actors reward=4,sandbox=2 --nats nats://host:4222`` runs one :class:`Supervisor`. Each replica
is ``python -m actors KIND --instance KIND-i``, with its output in ``<run dir>/logs/KIND-i.log``. A replica
that exits while the supervisor is not stopping is a crash: it is reported loudly (an error log line with
the tail of its log, and an :class:`~bus.messages.Event` on ``rlar.events.supervisor`` when a bus is given)
and restarted after an exponential backoff, reset once a replica has stayed up ``stable_s``. Nothing is
silently lost: the replica's unacked work is redelivered by JetStream to its peers meanwhile.

A crash loop is not retried forever: when one replica has crashed ``crash_limit`` times with the same error
(the exception line of its log, numbers ignored) within ``crash_window_s``, the supervisor stops every replica
and sets ``fatal`` to that actor's error, so ``rlar train``/``rlar up`` exit non-zero with it.

Stopping (SIGTERM/SIGINT to ``rlar up``) sends SIGTERM to every replica, which drains gracefully, and
SIGKILLs what is still alive after ``grace_s``. Children die with the supervisor (parent-death signal).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import re
import signal
import sys
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from actors.runtime import host_id
from bus import subjects
from bus.client import Bus
from bus.messages import Event
from rlar.learn.distributed import child_env
from rlar.placement import Assignment

log = logging.getLogger(__name__)


class SpecError(ValueError):
    pass


def parse_actor_specs(text: str) -> list[tuple[str, int]]:
    """``"reward=4,sandbox=2,feeder"`` -> ``[("reward", 4), ("sandbox", 2), ("feeder", 1)]``."""
    specs: list[tuple[str, int]] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        kind, _, count = part.partition("=")
        kind = kind.strip()
        if not kind:
            raise SpecError(f"empty actor kind in {text!r}")
        try:
            n = int(count) if count else 1
        except ValueError:
            raise SpecError(f"replica count of {kind!r} is not an integer: {count!r}") from None
        if n < 0:
            raise SpecError(f"replica count of {kind!r} is negative")
        specs.append((kind, n))
    if not specs:
        raise SpecError("no actors given")
    return specs


_EXC_LINE = re.compile(
    r"^([A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Refused|Unreachable|Timeout)\w*)(: .*)?$"
)


def crash_line(log_tail: str) -> str:
    """The error a crashed actor's log ends with: its last exception line (``ValueError: ...``), else the
    last non-empty line."""
    lines = [ln.strip() for ln in log_tail.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if _EXC_LINE.match(ln):
            return ln[:500]
    return lines[-1][:500] if lines else "(no log)"


def _child_setup() -> None:
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    os.setpgrp()  # the terminal's Ctrl-C reaches the supervisor only; it drains children in order


@dataclass
class Replica:
    kind: str
    index: int
    proc: asyncio.subprocess.Process | None = None
    restarts: int = 0
    started_at: float = 0.0
    exits: list[int] = field(default_factory=list)
    crash_times: dict[str, deque[float]] = field(default_factory=dict)  # error signature -> recent times

    @property
    def name(self) -> str:
        return f"{self.kind}-{self.index}"


class Supervisor:
    def __init__(
        self,
        specs: list[tuple[str, int]],
        *,
        nats_url: str,
        run_dir: str | Path,
        config_path: str | None = None,
        overrides: list[str] | None = None,
        bus: Bus | None = None,
        min_backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
        stable_s: float = 60.0,
        grace_s: float = 20.0,
        extra_env: dict[str, str] | None = None,
        kind_overrides: dict[str, list[str]] | None = None,
        kind_env: dict[str, dict[str, str]] | None = None,
        crash_limit: int | None = None,
        crash_window_s: float = 600.0,
        placement: Sequence[Assignment] = (),
    ) -> None:
        self.replicas = [Replica(kind, i) for kind, n in specs for i in range(n)]
        self.nats_url = nats_url
        self.run_dir = Path(run_dir)
        self.config_path = config_path
        self.overrides = overrides or []
        self.bus = bus
        self.min_backoff_s = min_backoff_s
        self.max_backoff_s = max_backoff_s
        self.stable_s = stable_s
        self.grace_s = grace_s
        self.extra_env = extra_env or {}
        # Per actor kind (e.g. each role's NATS user and, in the environment only, its password).
        self.kind_overrides = kind_overrides or {}
        self.kind_env = kind_env or {}
        self.stopping = asyncio.Event()
        self.crashes = 0
        self.crash_limit = crash_limit
        self.crash_window_s = crash_window_s
        self.fatal: str | None = None
        """Why the supervisor gave up (a crash loop), or None."""
        # Each placed replica's GPUs (rlar/placement.py): its CUDA_VISIBLE_DEVICES, and its ranks.
        self.placement = {a.name: a for a in placement}

    def command(self, r: Replica) -> list[str]:
        # Instance ids must be unique across hosts (heartbeat subjects, rlar status): prefix the host.
        instance = f"{host_id()}-{r.name}"
        placed = self.placement.get(r.name)
        launcher = [sys.executable]
        if placed is not None and placed.ranks() > 1:  # one DeepSpeed rank per GPU; rank 0 speaks to the bus
            launcher += ["-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={placed.ranks()}"]
        cmd = [*launcher, "-m", "actors", r.kind, "--nats", self.nats_url, "--instance", instance]
        if self.config_path:
            cmd += ["--config", self.config_path]
        for o in [*self.overrides, *self.kind_overrides.get(r.kind, [])]:
            cmd += ["--set", o]
        cmd += ["--set", f"run.dir={self.run_dir}"]
        return cmd

    async def _start(self, r: Replica) -> None:
        logs = self.run_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        with open(logs / f"{r.name}.log", "ab") as out:
            r.proc = await asyncio.create_subprocess_exec(
                *self.command(r),
                stdout=out,
                stderr=asyncio.subprocess.STDOUT,
                stdin=asyncio.subprocess.DEVNULL,
                preexec_fn=_child_setup,
                env=self.child_env(r),
            )
        r.started_at = time.monotonic()
        log.info("started %s (pid %d)", r.name, r.proc.pid)

    def child_env(self, r: Replica) -> dict[str, str]:
        """The environment replica ``r`` starts with (its placement's CUDA_VISIBLE_DEVICES included)."""
        placed = self.placement.get(r.name)
        return {
            **child_env(),
            **self.extra_env,
            **self.kind_env.get(r.kind, {}),
            **(placed.env() if placed else {}),
        }

    def _log_tail(self, r: Replica, lines: int = 20) -> str:
        path = self.run_dir / "logs" / f"{r.name}.log"
        try:
            return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    async def _keep_alive(self, r: Replica) -> None:
        backoff = self.min_backoff_s
        while not self.stopping.is_set():
            await self._start(r)
            assert r.proc is not None
            rc = await r.proc.wait()
            r.exits.append(rc)
            if self.stopping.is_set():
                break
            self.crashes += 1
            up = time.monotonic() - r.started_at
            if up >= self.stable_s:
                backoff = self.min_backoff_s
            log.error(
                "\n!!! actor %s (pid %s) EXITED with code %s after %.1fs — restarting in %.1fs "
                "(restart #%d). Last log lines:\n%s\n",
                r.name,
                r.proc.pid,
                rc,
                up,
                backoff,
                r.restarts + 1,
                self._log_tail(r),
            )
            if self.bus is not None:
                with contextlib.suppress(Exception):
                    await self.bus.publish(
                        subjects.events("supervisor"),
                        Event(
                            actor=r.name,
                            kind="crash",
                            level="error",
                            message=f"{r.name} exited with code {rc}; restarting in {backoff:.1f}s",
                            data={"returncode": rc, "uptime_s": up, "restarts": r.restarts},
                        ),
                    )
            if self._crash_loop(r, rc):
                break
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), backoff)
            backoff = min(backoff * 2, self.max_backoff_s)
            r.restarts += 1

    def _crash_loop(self, r: Replica, rc: int) -> bool:
        """Record this crash; True (and the run stopped, ``fatal`` set) when it is one too many."""
        if self.crash_limit is None:
            return False
        line = crash_line(self._log_tail(r, lines=60))
        signature = f"{rc}|" + re.sub(r"\d+", "#", line)
        now = time.monotonic()
        times = r.crash_times.setdefault(signature, deque())
        times.append(now)
        while times and times[0] < now - self.crash_window_s:
            times.popleft()
        if len(times) < self.crash_limit:
            return False
        self.fatal = (
            f"actor {r.name} crashed {len(times)} times in {now - times[0]:.0f}s with the same error "
            f"(exit code {rc}): {line} — full log: {self.run_dir / 'logs' / (r.name + '.log')}"
        )
        log.error("stopping the run: %s", self.fatal)
        self.stop()
        return True

    async def run(self) -> None:
        """Start every replica and keep them alive until :meth:`stop`."""
        tasks = [asyncio.create_task(self._keep_alive(r), name=f"keep:{r.name}") for r in self.replicas]
        try:
            await self.stopping.wait()
        finally:
            await self._terminate_all()
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def stop(self) -> None:
        self.stopping.set()

    async def _terminate_all(self) -> None:
        live = [r for r in self.replicas if r.proc is not None and r.proc.returncode is None]
        t0 = time.monotonic()
        for r in live:
            assert r.proc is not None
            with contextlib.suppress(ProcessLookupError):
                r.proc.send_signal(signal.SIGTERM)
        deadline = t0 + self.grace_s

        async def drain(r: Replica) -> None:
            assert r.proc is not None
            try:
                rc = await asyncio.wait_for(r.proc.wait(), max(0.1, deadline - time.monotonic()))
                log.info("%s stopped %.1fs after SIGTERM (exit %s)", r.name, time.monotonic() - t0, rc)
            except TimeoutError:
                log.error("%s (pid %d) did not drain within %.0fs; killing", r.name, r.proc.pid, self.grace_s)
                with contextlib.suppress(ProcessLookupError):
                    r.proc.kill()
                await r.proc.wait()

        await asyncio.gather(*(drain(r) for r in live))
