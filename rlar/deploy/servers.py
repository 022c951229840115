"""Start nats-server processes from rendered configurations (tests, local clusters, the netns lab).

:class:`ServerProcess` writes a config file, starts ``nats-server -c`` (optionally inside a network
namespace, via a ``wrap`` prefix such as ``ip netns exec NS``), waits until the monitoring endpoint's
``/healthz`` answers 200 (for a cluster node that means JetStream has a meta leader and the node is
current), and stops it with SIGTERM then SIGKILL. The child dies with its parent (parent-death signal).
Unlike :class:`bus.embedded.EmbeddedServer` it adds no command-line flags: the config file is the whole
truth, as in a deployment.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from bus.embedded import find_server_binary, free_ports, stop_process
from rlar.deploy import natsconf


class ServerStartError(RuntimeError):
    """The server exited or did not become healthy; the message has the tail of its log."""


def _die_with_parent() -> None:
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    os.setpgrp()


def health(monitor_url: str, *, query: str = "", timeout_s: float = 1.0) -> tuple[int, str]:
    """(HTTP status, body) of ``/healthz``; (0, reason) when there is no answer."""
    try:
        with urllib.request.urlopen(f"{monitor_url}/healthz{query}", timeout=timeout_s) as r:
            return r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")
    except Exception as exc:
        return 0, str(exc)


class ServerProcess:
    """One nats-server started from ``config_text`` written to ``<workdir>/<name>.conf``."""

    def __init__(
        self,
        name: str,
        config_text: str,
        workdir: str | Path,
        *,
        monitor_url: str,
        url: str = "",
        wrap: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        extra_files: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        self.workdir = Path(workdir)
        self.config_path = self.workdir / f"{name}.conf"
        self.log_path = self.workdir / f"{name}.log"
        self.config_text = config_text
        self.monitor_url = monitor_url
        self.url = url
        """The client URL(s), for callers that connect to it."""
        self.leaf_url = ""
        """host:port of its leaf-node listener, when it has one."""
        self.wrap = list(wrap)
        self.env = dict(env) if env is not None else None
        self.extra_files = dict(extra_files or {})
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, *, wait: bool = True, timeout_s: float = 30.0, query: str = "") -> ServerProcess:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(self.config_text)
        for fname, text in self.extra_files.items():
            (self.workdir / fname).write_text(text)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [*self.wrap, find_server_binary(), "-c", str(self.config_path)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.workdir,
                env={**os.environ, **self.env} if self.env is not None else None,
                preexec_fn=_die_with_parent,
            )
        if wait:
            self.wait_healthy(timeout_s, query=query)
        return self

    def log_tail(self, n: int = 2000) -> str:
        """The log's last ``n`` characters, less the server's own "Healthcheck failed" lines (one per poll of
        :meth:`wait_healthy`; they would fill the tail and hide why)."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "".join(line for line in text.splitlines(keepends=True) if "Healthcheck failed" not in line)[
            -n:
        ]

    def wait_healthy(self, timeout_s: float = 30.0, *, query: str = "") -> None:
        deadline = time.monotonic() + timeout_s
        last = (0, "no answer")
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise ServerStartError(f"{self.name} exited with {self.proc.returncode}:\n{self.log_tail()}")
            last = health(self.monitor_url, query=query)
            if last[0] == 200:
                return
            time.sleep(0.1)
        raise ServerStartError(f"{self.name} not healthy after {timeout_s}s ({last}):\n{self.log_tail()}")

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace_s: float = 5.0) -> None:
        proc, self.proc = self.proc, None
        stop_process(proc, grace_s)


def local_server(
    name: str,
    workdir: str | Path,
    *,
    passwords: Mapping[str, str] | None,
    tls: natsconf.TLSFiles | None = None,
    host: str = "127.0.0.1",
) -> ServerProcess:
    """A single JetStream server on free loopback ports with the role table's accounts (literal
    ``passwords``; None: an open server), optionally TLS on client connections. Not started."""
    port, mport = free_ports(2, host)
    workdir = Path(workdir)
    text = natsconf.single_config(
        name,
        store_dir=str(workdir / f"{name}-js"),
        host=host,
        client_port=port,
        http_port=mport,
        tls=tls,
        auth=natsconf.accounts_block(passwords) if passwords is not None else None,
    )
    return ServerProcess(
        name, text, workdir, monitor_url=f"http://{host}:{mport}", url=f"nats://{host}:{port}"
    )


def local_cluster(
    workdir: str | Path,
    *,
    passwords: Mapping[str, str] | None,
    size: int = 3,
    host: str = "127.0.0.1",
    tls: natsconf.TLSFiles | None = None,
    cluster_tls: natsconf.TLSFiles | None = None,
    leaf_port: bool = False,
    ping_interval_s: float = 2.0,
) -> list[ServerProcess]:
    """``size`` clustered JetStream nodes on free loopback ports (not started). Each node's ``url`` is the
    whole cluster's URL list, its ``leaf_url`` (when ``leaf_port``) its leaf-node listener."""
    workdir = Path(workdir)
    flat = free_ports(4 * size, host)
    ports = [(flat[4 * i], flat[4 * i + 1], flat[4 * i + 2], flat[4 * i + 3]) for i in range(size)]
    routes = [f"nats-route://{host}:{p[1]}" for p in ports]
    url = ",".join(f"{'tls' if tls else 'nats'}://{host}:{p[0]}" for p in ports)
    auth = natsconf.accounts_block(passwords) if passwords is not None else None
    nodes = []
    for i, (cport, rport, mport, lport) in enumerate(ports):
        name = f"n{i + 1}"
        text = natsconf.node_config(
            name,
            routes=routes,
            store_dir=str(workdir / f"{name}-js"),
            host=host,
            client_port=cport,
            cluster_port=rport,
            http_port=mport,
            leaf_port=lport if leaf_port else None,
            tls=tls,
            cluster_tls=cluster_tls,
            leaf_tls=tls,
            auth=auth,
            ping_interval_s=ping_interval_s,
        )
        node = ServerProcess(name, text, workdir, monitor_url=f"http://{host}:{mport}", url=url)
        node.leaf_url = f"{host}:{lport}"
        nodes.append(node)
    return nodes


def start_all(nodes: Sequence[ServerProcess], timeout_s: float = 60.0) -> None:
    """Start every node, then wait until each is healthy (a cluster elects its JetStream meta leader only
    once a quorum is up, so nodes are started before any is waited on). A node that exits fails the wait at
    once, whichever node was being waited on; a timeout names every node with its answer and log."""
    for n in nodes:
        n.start(wait=False)
    deadline = time.monotonic() + timeout_s
    waiting = list(nodes)
    answers: dict[str, tuple[int, str]] = {}
    while waiting and time.monotonic() < deadline:
        for n in nodes:
            if n.proc is not None and n.proc.poll() is not None:
                raise ServerStartError(f"{n.name} exited with {n.proc.returncode}:\n{n.log_tail()}")
        for n in list(waiting):
            answers[n.name] = health(n.monitor_url)
            if answers[n.name][0] == 200:
                waiting.remove(n)
        if waiting:
            time.sleep(0.1)
    if waiting:
        report = "\n".join(f"--- {n.name} {answers.get(n.name)}:\n{n.log_tail()}" for n in nodes)
        raise ServerStartError(
            f"{', '.join(n.name for n in waiting)} not healthy after {timeout_s}s:\n{report}"
        )
