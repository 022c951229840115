"""Starting one jail and watching it: command lines, spawning, draining, killing.

A ``Jail`` is a non-blocking state machine over four file descriptors (stdout, stderr, the results pipe and a
pidfd of the jail process) plus one deadline. ``drive()`` runs it with a selector (sync); ``drive_async()`` runs
it on the asyncio loop with ``add_reader`` (async, so many jails can run concurrently). We do not use asyncio's
subprocess transport because its child watcher reaps the process with waitpid and so loses the wait4 resource
usage (CPU time, peak RSS) that we report.

Process layout in bwrap mode: host -> bwrap (new session, own process group, started as ``host_uid`` when the
host is root) -> driver as PID 1 of a fresh PID namespace (``--as-pid-1``, so bwrap's wait4 sees the driver's
rusage) -> one forked child per job. Killing bwrap's process group on the wall-clock deadline kills bwrap;
``--die-with-parent`` then SIGKILLs the driver, and the death of a namespace's PID 1 kills everything in it.
"""

from __future__ import annotations

import asyncio
import contextlib
import marshal
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rlar.sandbox.schema import Limits, SandboxConfig

# The driver's program: the plain-data call protocol, the audit hook, then the driver (which uses both by name).
_HERE = Path(__file__).parent
HARNESS_SOURCE = "".join(
    (_HERE / name).read_text(encoding="utf-8").replace("from __future__ import annotations\n", "", int(i > 0))
    for i, name in enumerate(("rpc.py", "audit.py", "harness.py"))
)
# Compiling that source costs ~20 ms of CPU per jail, so it travels compiled, with the source for a jail
# interpreter of another minor version (a code object only loads on the version that made it).
HARNESS_IMAGE = marshal.dumps(
    {
        "version": list(sys.version_info[:2]),
        "code": marshal.dumps(compile(HARNESS_SOURCE, "rlar-sandbox-driver", "exec")),
        "source": HARNESS_SOURCE,
    },
    4,
)
# Reads the image from the fd in argv[1], then runs the driver as __main__ with the remaining arguments.
_BOOTSTRAP = (
    "import marshal, os, sys\n"
    "fd = int(sys.argv.pop(1))\n"
    "chunks = []\n"
    "while True:\n"
    "    chunk = os.pread(fd, 1 << 20, sum(map(len, chunks)))\n"
    "    if not chunk: break\n"
    "    chunks.append(chunk)\n"
    "os.close(fd)\n"
    "image = marshal.loads(b''.join(chunks))\n"
    "same = image['version'] == list(sys.version_info[:2])\n"
    "code = marshal.loads(image['code']) if same else compile(image['source'], 'rlar-sandbox-driver', 'exec')\n"
    "del chunks, image\n"
    "exec(code, {'__name__': '__main__', '__builtins__': __builtins__})\n"
)
SANDBOX_UID = 65534  # uid/gid the code has inside the jail ("nobody")
_RESULTS_CAP = 8 << 20  # the driver writes small records; more than this means something is wrong
_DRAIN_AFTER_EXIT_S = 0.5  # rlimit-only stragglers can hold our pipes open after the driver exits
_KILL_GRACE_S = 2.0
_SYSTEM_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")


class Capture:
    """Keeps the first ``head`` and the last ``tail`` bytes of a stream and counts the rest."""

    def __init__(self, limit: int, keep_tail: bool) -> None:
        self.tail_limit = limit // 2 if keep_tail else 0
        self.head_limit = limit - self.tail_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data and self.tail_limit:
            self.tail += data
            if len(self.tail) > 2 * self.tail_limit:  # trim in batches, not per chunk
                del self.tail[: len(self.tail) - self.tail_limit]

    def text(self) -> str:
        tail = bytes(self.tail[-self.tail_limit :]) if self.tail_limit else b""
        omitted = self.total - len(self.head) - len(tail)
        head = bytes(self.head).decode("utf-8", "replace")
        if not tail:
            return head
        marker = f"\n[... {omitted} bytes omitted ...]\n" if omitted else ""
        return head + marker + tail.decode("utf-8", "replace")


@dataclass
class Finished:
    """Raw facts about one jail run, before they are turned into a ``RunResult``."""

    stdout: Capture
    stderr: Capture
    isolation: str = ""
    spawn_error: str = ""
    started: bool = False
    protected: bool = False
    ended: bool = False
    records: dict[int, list[str]] = field(default_factory=dict)
    exit_code: int | None = None
    timed_out: bool = False
    wall_limit_s: float = 0.0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    peak_rss_kb: int = 0


def _dropped_ids(config: SandboxConfig) -> tuple[int, int] | None:
    if os.geteuid() == 0 and config.host_uid is not None:
        return config.host_uid, config.host_gid
    return None


def _interpreter_problem(config: SandboxConfig) -> str:
    if not os.access(config.python, os.X_OK):
        return f"interpreter {config.python} not found or not executable"
    if config.mode == "bwrap":
        real = os.path.realpath(config.python)
        roots = ("/usr", *config.ro_binds)
        if not any(real == r or real.startswith(r.rstrip("/") + "/") for r in roots):
            return f"interpreter {config.python} (-> {real}) is outside /usr and SandboxConfig.ro_binds"
    return ""


def bwrap_argv(config: SandboxConfig, limits: Limits) -> list[str]:
    """bubblewrap arguments up to and including ``--``: the jail described in the package docstring."""
    argv = [config.bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent"]
    argv += ["--as-pid-1", "--new-session", "--clearenv", "--cap-drop", "ALL"]
    argv += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--hostname", "sandbox"]
    argv += ["--ro-bind", "/usr", "/usr"]
    for name in _SYSTEM_DIRS:
        path = "/" + name
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]  # merged-/usr systems: /lib -> usr/lib
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    argv += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    for path in config.ro_binds:
        argv += ["--ro-bind", path, path]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--size", str(limits.tmpfs_mb << 20), "--tmpfs", "/tmp"]
    argv += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/tmp"]
    for key, value in (("PATH", "/usr/bin:/bin"), ("HOME", "/tmp"), ("TMPDIR", "/tmp"), ("LANG", "C.UTF-8")):
        argv += ["--setenv", key, value]
    return [*argv, "--"]


_UNSHARE_CACHE: dict[tuple[str, tuple[int, int] | None], tuple[list[str], bool]] = {}


def _rlimit_prefix(config: SandboxConfig) -> tuple[list[str], bool]:
    """For rlimit-only mode: a command prefix that gives the code no network, and whether the ``Popen`` must
    drop the uid itself. Probed once per interpreter and uid, trying root's ``unshare --net`` with a uid drop,
    then an unprivileged user+network namespace, then nothing."""
    ids = _dropped_ids(config)
    key = (config.python, ids)
    if key in _UNSHARE_CACHE:
        return _UNSHARE_CACHE[key]
    unshare = shutil.which("unshare") or ""
    options: list[tuple[list[str], bool]] = []
    if unshare and ids is not None:
        options.append(([unshare, "--net", "--setgid", str(ids[1]), "--setuid", str(ids[0]), "--"], False))
    if unshare:
        options.append(([unshare, "--user", "--map-current-user", "--net", "--"], True))
    options.append(([], True))
    for prefix, popen_drops in options:
        if not prefix:
            break
        kwargs = _id_kwargs(ids) if popen_drops else {}
        try:
            probe = subprocess.run(
                [*prefix, config.python, "-I", "-c", "pass"],
                capture_output=True,
                timeout=10,
                check=False,
                **kwargs,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        if probe.returncode == 0:
            _UNSHARE_CACHE[key] = (prefix, popen_drops)
            return prefix, popen_drops
    _UNSHARE_CACHE[key] = ([], True)
    return [], True


def _id_kwargs(ids: tuple[int, int] | None) -> dict:
    return {} if ids is None else {"user": ids[0], "group": ids[1], "extra_groups": []}


class Jail:
    """One run of the driver in a jail; see the module docstring. Not reusable."""

    def __init__(
        self, config: SandboxConfig, limits: Limits, program: bytes, payload: bytes, nonce: str, jobs: int
    ) -> None:
        self.config = config
        self.limits = limits
        self.program = program  # marshal data the candidate's processes may see (the program, the limits)
        self.payload = payload  # marshal data they never see (the tests, the nonce)
        self.nonce = nonce.encode()
        self.wall_limit = limits.wall_for(jobs)
        self.result = Finished(Capture(limits.output_bytes, False), Capture(limits.output_bytes, True))
        self.result.wall_limit_s = self.wall_limit
        self.unwatch: Callable[[int], object] = lambda fd: None
        self.done = False
        self.deadline = 0.0
        self._proc: subprocess.Popen[bytes] | None = None
        self._open: dict[int, str] = {}  # fd -> "stdout" | "stderr" | "results" | "pid"
        self._results_buf = bytearray()
        self._results_total = 0
        self._exited = False
        self._start = 0.0
        self._workdir = ""

    # -- starting ---------------------------------------------------------------------------------------------

    def start(self, stdin: bytes | None) -> None:
        """Spawn the jail. On failure ``done`` is set and ``result.spawn_error`` says why."""
        config = self.config
        self._start = time.monotonic()
        problem = _interpreter_problem(config)
        if config.mode == "bwrap" and not os.access(config.bwrap, os.X_OK):
            problem = (
                f"bubblewrap not found or not executable at {config.bwrap}; install it, or opt into the weaker "
                "SandboxConfig(mode='rlimit-only')"
            )
        if problem:
            return self._fail(problem)
        ids = _dropped_ids(config)
        image_fd = os.memfd_create("rlar-driver")
        program_fd = os.memfd_create("rlar-program")
        payload_fd = os.memfd_create("rlar-payload")
        stdin_fd = os.memfd_create("rlar-stdin")
        results_r, results_w = os.pipe()
        try:
            os.write(image_fd, HARNESS_IMAGE)
            os.write(program_fd, self.program)
            os.write(payload_fd, self.payload)
            os.write(stdin_fd, stdin or b"")
            os.lseek(stdin_fd, 0, os.SEEK_SET)
            fds = (image_fd, program_fd, payload_fd, results_w)
            tail = [config.python, "-I", "-B", "-c", _BOOTSTRAP, *map(str, fds)]
            kwargs: dict = {}
            env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
            if config.mode == "bwrap":
                argv = bwrap_argv(config, self.limits) + tail
                kwargs.update(_id_kwargs(ids))
                cwd = "/"
                self.result.isolation = "bwrap"
            else:
                prefix, popen_drops = _rlimit_prefix(config)
                argv = prefix + tail
                if popen_drops:
                    kwargs.update(_id_kwargs(ids))
                self._workdir = cwd = tempfile.mkdtemp(prefix="rlar-sandbox-")
                if ids is not None:
                    os.chown(cwd, ids[0], ids[1])
                env.update(HOME=cwd, TMPDIR=cwd)
                self.result.isolation = "rlimit-only+netns" if prefix else "rlimit-only"
            self._proc = subprocess.Popen(
                argv,
                stdin=stdin_fd,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=fds,
                start_new_session=True,
                cwd=cwd,
                env=env,
                **kwargs,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            os.close(results_r)
            return self._fail(f"could not start the sandbox: {exc}")
        finally:
            for fd in (image_fd, program_fd, payload_fd, stdin_fd, results_w):
                os.close(fd)
        assert self._proc.stdout is not None and self._proc.stderr is not None
        try:
            pidfd = os.pidfd_open(self._proc.pid)
        except OSError as exc:  # Linux < 5.3
            self._kill_group()
            self._proc.wait()
            self._proc.stdout.close()
            self._proc.stderr.close()
            os.close(results_r)
            return self._fail(f"pidfd_open is unavailable ({exc}); the sandbox needs Linux >= 5.3")
        for fd, role in (
            (self._proc.stdout.fileno(), "stdout"),
            (self._proc.stderr.fileno(), "stderr"),
            (results_r, "results"),
            (pidfd, "pid"),
        ):
            os.set_blocking(fd, False)
            self._open[fd] = role
        self.deadline = self._start + self.wall_limit

    def _fail(self, reason: str) -> None:
        self.result.spawn_error = reason
        self._finish()

    def watched(self) -> list[int]:
        return list(self._open)

    # -- events -----------------------------------------------------------------------------------------------

    def on_ready(self, fd: int) -> None:
        role = self._open.get(fd)
        if role is None:
            return  # closed earlier in the same batch of events
        if role == "pid":
            self._on_exit()
        else:
            try:
                data = os.read(fd, 1 << 16)
            except BlockingIOError:
                return
            if not data:
                self._close(fd)
            elif role == "stdout":
                self.result.stdout.feed(data)
            elif role == "stderr":
                self.result.stderr.feed(data)
            else:
                self._feed_results(data)
        self._check_done()

    def on_deadline(self) -> None:
        if time.monotonic() < self.deadline or self.done:
            return
        if not self._exited and not self.result.timed_out:
            self.result.timed_out = True
            self._kill_group()
            self.deadline = time.monotonic() + _KILL_GRACE_S
        else:  # drain window after exit, or kill grace, is over
            for fd in list(self._open):
                self._close(fd)
        self._check_done()

    def abort(self) -> None:
        """Kill and release everything (used when the caller is cancelled or the loop fails)."""
        if self._proc is not None and not self._exited:
            self._kill_group()
            with contextlib.suppress(ChildProcessError):
                self._reap(os.WNOHANG)
        for fd in list(self._open):
            self._close(fd)
        self._finish()

    # -- internals --------------------------------------------------------------------------------------------

    def _kill_group(self) -> None:
        assert self._proc is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, signal.SIGKILL)

    def _on_exit(self) -> None:
        # Kill leftovers in the group before reaping, while the zombie still pins the process group id.
        self._kill_group()
        try:
            reaped = self._reap(os.WNOHANG)
        except ChildProcessError:  # someone else (a waitpid(-1) elsewhere in the process) reaped it
            reaped = True
        if reaped:
            for fd, role in list(self._open.items()):
                if role == "pid":
                    self._close(fd)
            self._exited = True
            self.deadline = time.monotonic() + _DRAIN_AFTER_EXIT_S

    def _reap(self, flags: int) -> bool:
        assert self._proc is not None
        pid, status, usage = os.wait4(self._proc.pid, flags)
        if pid == 0:
            return False
        code = os.waitstatus_to_exitcode(status)
        self._proc.returncode = code  # tell Popen it is reaped
        self.result.exit_code = code
        self.result.cpu_s = max(self.result.cpu_s, usage.ru_utime + usage.ru_stime)
        self.result.peak_rss_kb = max(self.result.peak_rss_kb, usage.ru_maxrss)
        return True

    def _feed_results(self, data: bytes) -> None:
        self._results_total += len(data)
        if self._results_total > _RESULTS_CAP:
            return
        self._results_buf += data
        *lines, rest = self._results_buf.split(b"\n")
        self._results_buf = bytearray(rest)
        for line in lines:
            fields = line.split(b"\t")
            if fields[0] != self.nonce or len(fields) < 2:
                continue
            parts = [f.decode("ascii", "replace") for f in fields[1:]]
            if parts[0] == "S" and len(parts) >= 3:
                self.result.started = True
                self.result.protected = parts[2] == "1"
            elif parts[0] == "T" and len(parts) >= 11 and parts[1].isdigit():
                self.result.records.setdefault(int(parts[1]), parts)
            elif parts[0] == "E":
                self.result.ended = True

    def _close(self, fd: int) -> None:
        role = self._open.pop(fd, None)
        if role is None:
            return
        self.unwatch(fd)
        if self._proc is not None and role in ("stdout", "stderr"):
            stream = self._proc.stdout if role == "stdout" else self._proc.stderr
            assert stream is not None
            stream.close()
        else:
            os.close(fd)

    def _check_done(self) -> None:
        # The pidfd is closed on exit, so an empty set means: exited and drained, or given up on after a kill.
        if not self.done and (self._exited or self.result.timed_out) and not self._open:
            self._finish()

    def _finish(self) -> None:
        self.done = True
        self.result.wall_s = time.monotonic() - self._start
        if self._workdir:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = ""


def drive(jail: Jail, stdin: bytes | None) -> Finished:
    """Run a jail to completion in the calling thread."""
    jail.start(stdin)
    if jail.done:
        return jail.result
    with selectors.DefaultSelector() as selector:
        jail.unwatch = selector.unregister
        for fd in jail.watched():
            selector.register(fd, selectors.EVENT_READ)
        try:
            while not jail.done:
                timeout = jail.deadline - time.monotonic()
                if timeout <= 0:
                    jail.on_deadline()
                    continue
                for key, _ in selector.select(timeout):
                    jail.on_ready(key.fd)  # type: ignore[arg-type]
        finally:
            if not jail.done:
                jail.abort()
    return jail.result


async def drive_async(jail: Jail, stdin: bytes | None) -> Finished:
    """Run a jail to completion on the running event loop; cancelling the caller kills the jail."""
    loop = asyncio.get_running_loop()
    jail.start(stdin)  # fork+exec blocks for a few milliseconds
    if jail.done:
        return jail.result
    finished: asyncio.Future[None] = loop.create_future()
    timer: asyncio.TimerHandle | None = None
    armed_for = 0.0  # the jail deadline the timer was set for (the jail moves it on exit and on kill)

    def settle() -> None:
        nonlocal timer, armed_for
        if jail.done:
            if not finished.done():
                finished.set_result(None)
            return
        if timer is None or armed_for != jail.deadline:
            if timer is not None:
                timer.cancel()
            armed_for = jail.deadline
            # call_later, not call_at: loop.time() need not share time.monotonic()'s origin (e.g. uvloop).
            timer = loop.call_later(max(0.0, jail.deadline - time.monotonic()), fire)

    def fire() -> None:
        nonlocal timer
        timer = None
        jail.on_deadline()
        settle()

    def ready(fd: int) -> None:
        jail.on_ready(fd)
        settle()

    jail.unwatch = loop.remove_reader
    for fd in jail.watched():
        loop.add_reader(fd, ready, fd)
    settle()
    try:
        await finished
    finally:
        if timer is not None:
            timer.cancel()
        if not jail.done:
            jail.abort()
    return jail.result
