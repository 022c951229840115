"""Test hosts on one machine: Linux network namespaces joined by veth links to a private bridge.

:class:`Lab` makes a switch namespace holding a bridge and one namespace per host, each with a veth link
into the bridge and an address on a private subnet; nothing is routed to or from the machine's own
network, so the lab's traffic stays on links it created. Commands run in a host with
``ip netns exec`` (:meth:`Lab.popen`); :meth:`Lab.link_down` cuts a host off the switch (its processes
keep running, as on a partitioned machine); :meth:`Lab.kill_host` SIGKILLs every process in a host's
namespace, as a power loss would. :meth:`Lab.destroy` (also on context exit) kills what is left in the
lab's namespaces and deletes them, which removes their links too.

Needs root and iproute2 (:func:`available` says why not). Names carry the creating process id so
concurrent labs do not collide; interface names stay within Linux's 15 characters.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any, TypeVar

T = TypeVar("T")
CLONE_NEWNET = 0x40000000


class LabError(RuntimeError):
    """An ``ip`` command failed; the message has the command and its stderr."""


def available() -> str | None:
    """None when namespaces can be made here, else the reason (for a test's skip message)."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "iproute2 (`ip`) is not installed"
    probe = f"rlarprobe{os.getpid()}"
    try:
        _ip("netns", "add", probe)
    except LabError as exc:
        return f"`ip netns add` does not work here: {exc}"
    with contextlib.suppress(LabError):
        _ip("netns", "del", probe)
    return None


def _ip(*args: str, netns: str | None = None) -> str:
    cmd = ["ip", *args] if netns is None else ["ip", "-n", netns, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise LabError(f"{' '.join(cmd)}: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


def _die_with_parent() -> None:  # in the child, between fork and exec
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    os.setpgrp()


@dataclass(frozen=True, slots=True)
class Host:
    name: str
    netns: str
    ifname: str
    peer: str
    address: str


class Lab:
    """A private switch and hosts on ``10.<b>.<c>.0/24`` (host i gets ``.10+i``)."""

    def __init__(self, hosts: Sequence[str], *, subnet: str | None = None, tag: str | None = None) -> None:
        self.tag = tag or f"r{os.getpid() % 100000}"
        self.subnet = subnet or f"10.{200 + os.getpid() % 50}.{os.getpid() % 250}"
        self.switch = f"{self.tag}sw"
        self.hosts: dict[str, Host] = {}
        for i, name in enumerate(hosts):
            self.hosts[name] = Host(
                name=name,
                netns=f"{self.tag}{name}",
                ifname="eth0",
                peer=f"{self.tag}p{i}"[:15],
                address=f"{self.subnet}.{10 + i}",
            )
        self._procs: list[subprocess.Popen[bytes]] = []
        self.created = False

    # -- life ---------------------------------------------------------------------------------------
    def create(self) -> Lab:
        """Make the switch and the hosts; on any failure, undo what was made and raise."""
        try:
            _ip("netns", "add", self.switch)
            self.created = True
            _ip("link", "add", "br0", "type", "bridge", netns=self.switch)
            _ip("link", "set", "br0", "up", netns=self.switch)
            _ip("link", "set", "lo", "up", netns=self.switch)
            for h in self.hosts.values():
                _ip("netns", "add", h.netns)
                _ip(
                    "link",
                    "add",
                    h.ifname,
                    "netns",
                    h.netns,
                    "type",
                    "veth",
                    "peer",
                    "name",
                    h.peer,
                    "netns",
                    self.switch,
                )
                _ip("link", "set", h.peer, "master", "br0", netns=self.switch)
                _ip("link", "set", h.peer, "up", netns=self.switch)
                _ip("addr", "add", f"{h.address}/24", "dev", h.ifname, netns=h.netns)
                _ip("link", "set", h.ifname, "up", netns=h.netns)
                _ip("link", "set", "lo", "up", netns=h.netns)
        except Exception:
            self.destroy()
            raise
        return self

    def destroy(self) -> None:
        """Kill every process left in the lab's namespaces and delete them (idempotent)."""
        for p in self._procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    p.kill()
        for h in self.hosts.values():
            with contextlib.suppress(LabError):
                self.kill_host(h.name)
        for p in self._procs:
            with contextlib.suppress(Exception):
                p.wait(timeout=5)
        for ns in [h.netns for h in self.hosts.values()] + [self.switch]:
            with contextlib.suppress(LabError):
                _ip("netns", "del", ns)
        self.created = False

    def __enter__(self) -> Lab:
        return self.create()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.destroy()

    # -- running things -----------------------------------------------------------------------------
    def address(self, host: str) -> str:
        return self.hosts[host].address

    def command(self, host: str, argv: Sequence[str]) -> list[str]:
        return ["ip", "netns", "exec", self.hosts[host].netns, *argv]

    def popen(
        self,
        host: str,
        argv: Sequence[str],
        *,
        log: str | Path,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start ``argv`` in ``host`` with its output appended to ``log``; it dies with this process."""
        out: IO[bytes] = open(log, "ab")
        try:
            proc = subprocess.Popen(
                self.command(host, argv),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                preexec_fn=_die_with_parent,
            )
        finally:
            out.close()
        self._procs.append(proc)
        return proc

    def run(
        self, host: str, argv: Sequence[str], *, timeout_s: float = 30.0
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.command(host, argv), capture_output=True, text=True, timeout=timeout_s)

    def call_in(self, host: str, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` in a new thread that has joined ``host``'s network namespace (a namespace is
        per thread in Linux, so the rest of this process is untouched) and return its result or raise its
        exception. Sockets it opens, e.g. an asyncio loop run inside ``fn``, live in that namespace."""
        result: list[T] = []
        error: list[BaseException] = []

        def target() -> None:
            try:
                fd = os.open(f"/var/run/netns/{self.hosts[host].netns}", os.O_RDONLY)
                try:
                    libc = ctypes.CDLL("libc.so.6", use_errno=True)
                    if libc.setns(fd, CLONE_NEWNET) != 0:
                        raise LabError(f"setns into {host}: {os.strerror(ctypes.get_errno())}")
                finally:
                    os.close(fd)
                result.append(fn(*args))
            except BaseException as exc:
                error.append(exc)

        thread = threading.Thread(target=target, name=f"netns:{host}", daemon=True)
        thread.start()
        thread.join()
        if error:
            raise error[0]
        return result[0]

    # -- faults -------------------------------------------------------------------------------------
    def link_down(self, host: str) -> None:
        """Cut ``host`` off the switch (both ends of its link down); its processes keep running."""
        h = self.hosts[host]
        _ip("link", "set", h.ifname, "down", netns=h.netns)
        _ip("link", "set", h.peer, "down", netns=self.switch)

    def pids(self, host: str) -> list[int]:
        """Processes whose network namespace is ``host``'s."""
        out = _ip("netns", "pids", self.hosts[host].netns)
        return [int(p) for p in out.split()]

    def kill_host(self, host: str, timeout_s: float = 10.0) -> list[int]:
        """SIGKILL every process in ``host`` (a power loss: nothing drains) and wait until none is left."""
        killed: list[int] = []
        deadline = time.monotonic() + timeout_s
        while True:
            pids = [p for p in self.pids(host) if p != os.getpid()]
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            for p in self._procs:  # reap our own children so they do not linger as zombies
                with contextlib.suppress(Exception):
                    p.poll()
            if time.monotonic() > deadline:
                raise LabError(f"processes still alive in {host} after SIGKILL: {pids}")
            time.sleep(0.05)
        return killed
