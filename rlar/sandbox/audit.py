"""Violations seen from inside a candidate's process: an audit hook (PEP 578) that reports what the code tries.

Runs inside the jail, as part of the driver's program (after ``rpc.py``, before ``harness.py``); standard
library only. ``install_audit(fd, writable)`` reports, one ``kind\tdetail`` line each on ``fd`` (non-blocking;
at most ``AUDIT_CAP`` lines, repeats dropped): ``network`` (a non-Unix socket, connect, bind, sendto, name
lookups), ``signal`` (a signal sent to another process), ``write_outside`` (a write, remove, rename, chmod, ...
outside ``writable``) and ``forbidden_read`` (reads outside the system directories and the working directory,
other processes' ``/proc`` entries, ``/etc/shadow``, ...). The hook only reports, never blocks: the jail
contains what the code does. A determined candidate can evade it (it runs in the candidate's own process:
ctypes, /proc/self/mem); the driver's own observations (processes left behind, a killed checker) stay.
"""

from __future__ import annotations

import os
import sys

AUDIT_CAP = 64  # violation lines one process may report

_READ_OK = ("/usr/", "/lib", "/bin/", "/sbin/", "/etc/", "/tmp/", "/dev/", "/proc/")
_READ_DENIED = (
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/ssh/",
    "/proc/1/",
    "/proc/kcore",
    "/dev/mem",
)
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_WRITE_EVENTS = {
    "os.remove": (0,),
    "os.rename": (0, 1),
    "os.mkdir": (0,),
    "os.rmdir": (0,),
    "os.symlink": (1,),
    "os.link": (1,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.truncate": (0,),
    "os.utime": (0,),
    "shutil.rmtree": (0,),
    "shutil.move": (1,),
    "shutil.copyfile": (1,),
}
_NET_EVENTS = (
    "socket.connect",
    "socket.bind",
    "socket.sendto",
    "socket.getaddrinfo",
    "socket.gethostbyname",
    "socket.gethostbyaddr",
    "socket.getnameinfo",
    "socket.sendmsg",
)


def install_audit(fd: int, writable: tuple[str, ...]) -> None:
    """Report violations on ``fd`` (non-blocking; extra lines are dropped) from an audit hook in this process."""
    write, fspath, getcwd, join, normpath = os.write, os.fspath, os.getcwd, os.path.join, os.path.normpath
    sent = [0]
    seen: set = set()

    def report(kind: str, detail: str) -> None:
        key = (kind, detail[:80])
        if sent[0] >= AUDIT_CAP or key in seen:
            return
        seen.add(key)
        sent[0] += 1
        try:
            write(fd, (kind + "\t" + detail.replace("\n", " ")[:200] + "\n").encode("utf-8", "replace"))
        except OSError:
            pass

    def where(path: object) -> str:
        if isinstance(path, int):
            return ""
        try:
            text = fspath(path)  # type: ignore[call-overload]
            if isinstance(text, bytes):
                text = text.decode("utf-8", "replace")
            return normpath(join(getcwd(), text))
        except Exception:
            return ""

    def hook(event: str, args: tuple) -> None:
        try:
            if event == "open":
                path = where(args[0])
                if not path:
                    return
                mode, flags = args[1] or "", args[2] or 0
                if (isinstance(mode, str) and any(c in mode for c in "wax+")) or flags & _WRITE_FLAGS:
                    if not (path + "/").startswith(writable) and not path.startswith(
                        ("/dev/null", "/proc/self/")
                    ):
                        report("write_outside", path)
                elif (
                    path.startswith(_READ_DENIED)
                    or not (path + "/").startswith(_READ_OK + writable)
                    or _other_proc(path)
                ):
                    report("forbidden_read", path)
            elif event in _WRITE_EVENTS:
                for i in _WRITE_EVENTS[event]:
                    path = where(args[i]) if len(args) > i else ""
                    if path and not (path + "/").startswith(writable):
                        report("write_outside", f"{event} {path}")
            elif event == "socket.__new__":
                if len(args) > 1 and args[1] not in (1, -1):  # AF_UNIX (asyncio's self-pipe) is local
                    report("network", f"socket family {args[1]}")
            elif event in _NET_EVENTS:
                report("network", f"{event} {str(args[1:2])[:100]}")
            elif event in ("os.kill", "os.killpg", "signal.pthread_kill"):
                report("signal", f"{event} {args[0]} {args[1] if len(args) > 1 else ''}")
        except Exception:
            pass

    sys.addaudithook(hook)


def _other_proc(path: str) -> bool:
    """A /proc/<pid>/ path of another process (the driver, the checker, the candidate host)."""
    if not path.startswith("/proc/"):
        return False
    part = path[6:].split("/", 1)[0]
    return part.isdigit() and int(part) != os.getpid()
