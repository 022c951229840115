"""In-jail driver of the rlar sandbox: runs untrusted code in child processes and reports what happened.

The host starts it inside the jail as ``python3 -I -B -c <bootstrap> IMAGE_FD PROGRAM_FD PAYLOAD_FD RESULTS_FD``;
the image holds ``rpc.py``, ``audit.py`` and this file compiled as one program (see ``rlar.sandbox.jail``).
PROGRAM_FD and PAYLOAD_FD are memfds holding ``marshal`` data: the program (and the limits) in the first, the
tests in the second. The driver reads the program, and for function tests forks the
*candidate host* (a zygote) before it reads the tests, so no process that runs candidate code ever had the tests
in its memory. It then reads the tests, runs each job in its own processes, one job at a time, and writes one
record per job to RESULTS_FD (a pipe the host drains). The driver never executes untrusted code itself.

Jobs (payload ``kind``):
- ``run``: one child executes ``program`` as ``__main__`` with the jail's stdin/stdout/stderr.
- ``func`` (humaneval, asserts, calls): per test, the candidate host forks a fresh candidate process that runs the
  program and answers calls in plain data, and the driver forks a checker that runs the test against proxies
  (``rpc.py``). A test passes only when the checker reaches its end and writes this test's random token to its
  private verdict pipe; the candidate holds neither that pipe nor the test.
- ``stdio``: per case, a child executes ``program`` as ``__main__`` with the case input on stdin (a memfd) and
  stdout captured in another memfd. The driver reports exit status and a SHA-256 of the normalised output; the
  host compares it with the expected output, which never enters the jail.

Violations: every process that runs candidate code gets the audit hook of ``audit.py``; the driver adds what
it sees itself: processes left behind after a test, the candidate host or the checker killed.

Record format (one line each, ASCII, tab-separated, free text hex-encoded):
``NONCE S pid_ns protected``, then per job ``NONCE T index status wall_s cpu_s maxrss_kb code detail_hex
out_sha256 out_len excerpt_hex violations_hex``, then ``NONCE E``. ``status`` is passed | failed | exited |
timeout | oom | crashed; ``code`` is the exit code, or minus the signal number; violations are ``kind\\tdetail``
lines.

Constraints: standard library only, cheap imports (startup is part of every run); must run on the jail's
interpreter (CPython >= 3.9 on Linux). ``normalize_output`` is imported by the host too, so both sides
normalise identically.
"""

from __future__ import annotations

import builtins
import marshal
import os
import resource
import sys
import time

if __name__ != "__main__":  # on the host (tests, normalize_output); in the jail rpc.py's source precedes this
    from rlar.sandbox.audit import AUDIT_CAP, install_audit
    from rlar.sandbox.rpc import load_codec, run_checker, serve_candidate

_SIGKILL = 9
_SIGINT = 2
_SIGXCPU = 24
_SIGXFSZ = 25
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36


def normalize_output(data: bytes, compare: str) -> bytes:
    """Canonical form of a program's output for comparison: ``exact`` keeps the bytes; ``lines`` drops ``\\r``,
    trailing whitespace on each line and trailing blank lines; ``tokens`` joins whitespace-separated tokens."""
    if compare == "exact":
        return data
    if compare == "tokens":
        return b" ".join(data.split())
    lines = [line.rstrip() for line in data.replace(b"\r\n", b"\n").split(b"\n")]
    while lines and not lines[-1]:
        lines.pop()
    return b"\n".join(lines)


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    offset = 0
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def _prctl(option: int, value: int) -> bool:
    """Best effort prctl through ctypes (the only way from the standard library); False if it failed."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0
    except Exception:
        return False


def _set_limits(limits: dict) -> None:
    cpu = int(limits["cpu_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (limits["memory_bytes"], limits["memory_bytes"]))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_bytes"], limits["file_bytes"]))
    resource.setrlimit(resource.RLIMIT_NPROC, (limits["nproc"], limits["nproc"]))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits["nofile"], limits["nofile"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _describe(exc: BaseException) -> str:
    try:
        text = f"{type(exc).__name__}: {exc}"
    except BaseException:
        text = "<unprintable exception>"
    return text[:500]


# -- children -------------------------------------------------------------------------------------------------


def _exec_main(job: dict, payload: dict, verdict_fd: int, tok: bytes, fds: tuple[int, int, int]) -> None:
    """Body of a ``run``/``stdio`` child: the program as ``__main__``; never returns (ends in ``os._exit``)."""
    # Bound before untrusted code runs: a candidate can rebind module attributes but not these locals.
    write, exit_now, base_exc, system_exit = os.write, os._exit, BaseException, SystemExit
    flush_out, flush_err = sys.stdout.flush, sys.stderr.flush
    excepthook = sys.__excepthook__
    code = 1
    detail = ""
    try:
        os.close(payload["results_fd"])
        stdin_fd, stdout_fd, audit_fd = fds
        if stdin_fd >= 0:
            os.lseek(stdin_fd, 0, 0)
            os.dup2(stdin_fd, 0)
        if stdout_fd >= 0:
            os.dup2(stdout_fd, 1)
        import _signal

        _signal.signal(_SIGINT, _signal.default_int_handler)
        _set_limits(payload["limits"])
        install_audit(audit_fd, payload["writable"])
        env = {"__name__": "__main__", "__builtins__": builtins}
        try:
            exec(compile(payload["program"], "main.py", "exec"), env)
            code = 0
        except system_exit as exc:
            if exc.code is None:
                code = 0
            elif isinstance(exc.code, int):
                code = exc.code & 0xFF
            else:
                detail = str(exc.code)[:500]
                write(2, (detail + "\n").encode("utf-8", "replace"))
                code = 1
        except base_exc as exc:
            detail = _describe(exc)
            excepthook(type(exc), exc, exc.__traceback__)
            code = 1
        try:
            threading = sys.modules.get("threading")
            if threading is not None:
                threading._shutdown()  # type: ignore[attr-defined]  # as interpreter exit does
        except base_exc:
            pass
        write(verdict_fd, b"\n" + tok + b" exit " + detail.encode("utf-8", "replace").hex().encode())
        try:
            flush_out()
            flush_err()
        except base_exc:
            code = 1
    finally:
        exit_now(code)


def _checker(job: dict, payload: dict, verdict_fd: int, tok: bytes, fds: tuple[int, int]) -> None:
    """Body of a checker: trusted code only (the test, the prompt); never returns."""
    verdict, detail = b"fail", ""
    try:
        os.close(payload["results_fd"])
        _set_limits(payload["limits"])
        run_checker(job, payload["tests"], fds[0], fds[1])
        verdict = b"pass"
    except BaseException as exc:
        detail = _describe(exc)
    os.write(
        verdict_fd, b"\n" + tok + b" " + verdict + b" " + detail.encode("utf-8", "replace").hex().encode()
    )
    os._exit(0)


class _Zygote:
    """The candidate host: forked before the tests are read; forks one fresh candidate process per test."""

    def __init__(self, cand: dict, close: tuple[int, ...]) -> None:
        import _socket

        self.socket_module = _socket
        ours, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            ours.close()
            for fd in close:
                os.close(fd)
            try:
                self._serve(theirs, cand)
            finally:
                os._exit(0)
        theirs.close()
        self.sock, self.pid, self.alive = ours, pid, True

    def spawn(self, fds: list[int]) -> int:
        """A new candidate process (a child of the driver) holding ``fds``; 0 when the candidate host is gone."""
        _socket = self.socket_module
        if not self.alive:
            return 0
        data = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in fds)
        try:
            self.sock.sendmsg([b"s"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, data)])
            reply = self.sock.recv(16)
        except OSError:
            reply = b""
        if not reply:
            self.alive = False
            return 0
        return int(reply)

    def sweep(self) -> bool:
        """Have the candidate host ``kill(-1, SIGKILL)``: every process of the jail but it and us (PID 1)."""
        if not self.alive:
            return False
        try:
            self.sock.send(b"k")
            return self.sock.recv(16) == b"k"
        except OSError:
            self.alive = False
            return False

    @staticmethod
    def _serve(sock: object, cand: dict) -> None:
        import _socket

        while True:
            msg, ancillary, _, _ = sock.recvmsg(4, _socket.CMSG_SPACE(16))  # type: ignore[attr-defined]
            if not msg:
                return
            if msg == b"k":
                try:
                    os.kill(-1, _SIGKILL)
                except OSError:
                    pass
                sock.send(b"k")  # type: ignore[attr-defined]
                continue
            fds = [
                int.from_bytes(data[i : i + 4], sys.byteorder, signed=True)
                for _, _, data in ancillary
                for i in range(0, len(data) - len(data) % 4, 4)
            ]
            read_pid, write_pid = os.pipe()
            middle = os.fork()
            if middle == 0:  # a double fork, so the candidate becomes the driver's child (it can wait4 it)
                child = os.fork()
                if child == 0:
                    os.close(read_pid)
                    os.close(write_pid)
                    sock.close()  # type: ignore[attr-defined]
                    _candidate(cand, fds)
                os.write(write_pid, str(child).encode())
                os._exit(0)
            os.close(write_pid)
            pid = os.read(read_pid, 16)
            os.close(read_pid)
            os.waitpid(middle, 0)
            for fd in fds:
                os.close(fd)
            sock.send(pid or b"0")  # type: ignore[attr-defined]


def _candidate(cand: dict, fds: list[int]) -> None:
    """Body of a candidate process: the program, then calls from the checker; never returns."""
    exit_now = os._exit
    try:
        call_fd, reply_fd, audit_fd = fds
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.set_blocking(audit_fd, False)
        _set_limits(cand["limits"])
        install_audit(audit_fd, cand["writable"])
        serve_candidate(cand["program"], call_fd, reply_fd)
    finally:
        exit_now(0)


# -- the driver -------------------------------------------------------------------------------------------------


def _wait(pid: int, timeout: float) -> tuple[bool, int, resource.struct_rusage]:
    """Wait for ``pid`` at most ``timeout`` seconds (SIGKILL after); returns (timed_out, status, rusage)."""
    timed_out = False
    try:
        import select

        pidfd = os.pidfd_open(pid)
        try:
            poller = select.poll()
            poller.register(pidfd, select.POLLIN)
            if not poller.poll(max(0, int(timeout * 1000))):
                timed_out = True
                os.kill(pid, _SIGKILL)
        finally:
            os.close(pidfd)
    except (AttributeError, OSError):  # no pidfd (old kernel or Python): poll waitpid
        deadline = time.monotonic() + timeout
        delay = 0.0005
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                return False, status, usage
            if time.monotonic() >= deadline:
                timed_out = True
                os.kill(pid, _SIGKILL)
                break
            time.sleep(delay)
            delay = min(delay * 2, 0.01)
    _, status, usage = os.wait4(pid, 0)
    return timed_out, status, usage


def _reap_candidate(pid: int) -> tuple[int | None, float, int]:
    """(exit status if it ended on its own, else None; cpu seconds; max rss kb) of a candidate process."""
    if pid <= 0:
        return None, 0.0, 0
    try:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if not done:
            os.kill(pid, _SIGKILL)
            _, _, usage = os.wait4(pid, 0)
            return None, usage.ru_utime + usage.ru_stime, usage.ru_maxrss
    except ChildProcessError:
        return None, 0.0, 0
    return status, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def _clean_up(pid_ns: bool, zygote: _Zygote | None) -> int:
    """Kill and reap whatever the last job left behind (grandchildren, daemons, fork bombs), except the candidate
    host; returns how many live processes were found.

    In a PID namespace we are its PID 1: ``kill(-1)`` reaches every other process of the jail at once, so a fork
    bomb cannot outrun it. Sent by the candidate host (which ``kill(-1)`` spares, as it spares PID 1) when there
    is one, by us otherwise. Without a PID namespace (rlimit-only mode) ``kill(-1)`` would reach the host's
    processes of that uid; there we are a child subreaper, so every orphaned descendant is re-parented to us:
    kill our children, whose own children then become ours, until none is left."""
    deadline = time.monotonic() + 2.0
    me = str(os.getpid()).encode()
    found: set[int] = set()
    while time.monotonic() < deadline:
        keep = zygote.pid if zygote is not None and zygote.alive else -1
        others = _others(pid_ns, keep, me)
        found |= {pid for pid, zombie in others.items() if not zombie}
        if not others:
            break
        if pid_ns:
            if zygote is None or not zygote.sweep():
                try:
                    os.kill(-1, _SIGKILL)
                except ProcessLookupError:
                    pass
        else:
            for pid in others:
                try:
                    os.kill(pid, _SIGKILL)
                except OSError:
                    pass
        try:
            while True:
                pid = os.waitpid(-1, os.WNOHANG)[0]
                if not pid:
                    break
                if zygote is not None and pid == zygote.pid:
                    zygote.alive = False  # the candidate host died; the next spawn reports it
        except ChildProcessError:
            pass
    return len(found)


def _others(pid_ns: bool, keep: int, me: bytes) -> dict[int, bool]:
    """Processes other than us and ``keep`` (our children only, without a PID namespace): pid -> is a zombie."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in (os.getpid(), keep):
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            if pid_ns or fields[1] == me:
                out[int(entry)] = fields[0] == b"Z"
        except (OSError, IndexError):
            pass
    return out


def _read_nonblocking(fd: int, cap: int = 65536) -> bytes:
    data = b""
    try:
        while len(data) < cap:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            data += chunk
    except BlockingIOError:
        pass
    return data[:cap]


def _read_verdict(fd: int, tok: bytes) -> tuple[bytes, str] | None:
    for line in _read_nonblocking(fd).split(b"\n"):  # junk written to the pipe cannot carry this test's token
        parts = line.split(b" ")
        if len(parts) == 3 and parts[0] == tok:
            try:
                detail = bytes.fromhex(parts[2].decode()).decode("utf-8", "replace")
            except ValueError:
                detail = ""
            return parts[1], detail
    return None


def _violations(audit: bytes, extra: list[str]) -> list[str]:
    lines = [ln.decode("utf-8", "replace") for ln in audit.split(b"\n") if b"\t" in ln]
    return list(dict.fromkeys(lines + extra))[:AUDIT_CAP]


def _classify(code: int, cpu: float, maxrss: int, limits: dict) -> tuple[str, str]:
    signum = -code
    if signum == _SIGXCPU or (signum == _SIGKILL and cpu >= limits["cpu_s"] - 0.5):
        return "timeout", f"CPU limit of {limits['cpu_s']} s"
    if signum == _SIGXFSZ:
        return "failed", "file size limit exceeded"
    if maxrss * 1024 >= 0.9 * limits["memory_bytes"]:
        return "oom", f"killed by signal {signum} near the memory limit"
    return "crashed", f"killed by signal {signum}"


def _run_func(
    job: dict, payload: dict, zygote: _Zygote
) -> tuple[str, float, float, int, int, str, list[str]]:
    """One function test: candidate process + checker. (status, wall, cpu, maxrss, code, detail, violations)."""
    limits = payload["limits"]
    call_r, call_w = os.pipe()
    reply_r, reply_w = os.pipe()
    audit_r, audit_w = os.pipe()
    verdict_r, verdict_w = os.pipe()
    for fd in (audit_r, verdict_r):
        os.set_blocking(fd, False)
    tok = os.urandom(12).hex().encode()
    start = time.monotonic()
    cpid = zygote.spawn([call_r, reply_w, audit_w])
    for fd in (call_r, reply_w, audit_w):
        os.close(fd)
    extra: list[str] = []
    kpid = os.fork()
    if kpid == 0:
        os.close(verdict_r)
        os.close(audit_r)
        zygote.sock.close()
        _checker(job, payload, verdict_w, tok, (call_w, reply_r))
    for fd in (call_w, reply_r, verdict_w):
        os.close(fd)
    timed_out, status, usage = _wait(kpid, limits["test_s"])
    cstatus, ccpu, crss = _reap_candidate(cpid)
    wall = time.monotonic() - start
    cpu = usage.ru_utime + usage.ru_stime + ccpu
    maxrss = max(usage.ru_maxrss, crss)
    verdict = _read_verdict(verdict_r, tok)
    audit = _read_nonblocking(audit_r)
    os.close(verdict_r)
    os.close(audit_r)
    kcode = os.waitstatus_to_exitcode(status)
    ccode = os.waitstatus_to_exitcode(cstatus) if cstatus is not None else 0
    said, detail = verdict if verdict is not None else (b"", "")
    if not cpid:
        extra.append("signal\tthe candidate host was killed (by an earlier test's code)")
        said, detail = b"fail", "the candidate host was killed by an earlier test's code"
    if timed_out:
        result, detail = "timeout", f"killed after {limits['test_s']:g} s"
    elif kcode < 0:
        result, detail = "crashed", f"the checker was killed by signal {-kcode}"
        extra.append(f"signal\tthe checker was killed by signal {-kcode}")
    elif said == b"pass":
        result = "passed"
    elif ccode < 0:
        result, why = _classify(ccode, ccpu, crss, limits)
        detail = f"{why} ({detail})" if detail else why
    elif "MemoryError" in detail:
        result = "oom"
    else:
        result = "failed"
        if verdict is None:
            detail = "the checker ended without a verdict"
    return result, wall, cpu, maxrss, kcode if kcode else ccode, detail, _violations(audit, extra)


def _run_job(index: int, job: dict, payload: dict, zygote: _Zygote | None) -> list[str]:
    kind = payload["kind"]
    limits = payload["limits"]
    out_sha, out_len, excerpt = "", 0, b""
    if kind == "func":
        assert zygote is not None
        result, wall, cpu, maxrss, code, detail, violations = _run_func(job, payload, zygote)
    else:
        stdin_fd = stdout_fd = -1
        if kind == "stdio":
            stdin_fd = os.memfd_create("stdin")
            os.write(stdin_fd, job["input"])
            stdout_fd = os.memfd_create("stdout")
        read_fd, write_fd = os.pipe()
        audit_r, audit_w = os.pipe()
        for fd in (read_fd, audit_r, audit_w):
            os.set_blocking(fd, False)
        tok = os.urandom(12).hex().encode()
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            os.close(audit_r)
            _exec_main(job, payload, write_fd, tok, (stdin_fd, stdout_fd, audit_w))
        os.close(write_fd)
        os.close(audit_w)
        timed_out, status, usage = _wait(pid, limits["test_s"])
        wall = time.monotonic() - start
        cpu = usage.ru_utime + usage.ru_stime
        maxrss = usage.ru_maxrss
        verdict = _read_verdict(read_fd, tok)
        audit = _read_nonblocking(audit_r)
        os.close(read_fd)
        os.close(audit_r)
        code = os.waitstatus_to_exitcode(status)
        said, detail = verdict if verdict is not None else (b"", "")
        if timed_out:
            result, detail = "timeout", f"killed after {limits['test_s']:g} s"
        elif detail.startswith("MemoryError"):
            result = "oom"
        elif code < 0:
            result, detail = _classify(code, cpu, maxrss, limits)
        else:
            result = "exited"
            if said != b"exit":
                detail = detail or f"exited with code {code} outside the harness"
        if stdout_fd >= 0:
            import hashlib

            out = _read_all(stdout_fd)
            out_len = len(out)
            out_sha = hashlib.sha256(normalize_output(out, payload["compare"])).hexdigest()
            excerpt = out[: payload["excerpt_bytes"]]
        for fd in (stdin_fd, stdout_fd):
            if fd >= 0:
                os.close(fd)
        violations = _violations(audit, [])
    left = _clean_up(payload["pid_ns"], zygote)
    if left:
        violations.append(f"process_left_behind\t{left} process(es) still running after the test")
    return [
        "T",
        str(index),
        result,
        f"{wall:.4f}",
        f"{cpu:.4f}",
        str(maxrss),
        str(code),
        detail.encode("utf-8", "replace").hex(),
        out_sha or "-",
        str(out_len),
        excerpt.hex() or "-",
        "\n".join(violations).encode("utf-8", "replace").hex() or "-",
    ]


def main() -> None:
    program_fd, payload_fd, results_fd = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    import _signal

    # As PID 1 of the jail, any signal with a handler is delivered even from inside; SIGINT has one by default.
    _signal.signal(_SIGINT, _signal.SIG_IGN)
    sys.dont_write_bytecode = True
    cand = marshal.loads(_read_all(program_fd))
    os.close(program_fd)
    pid_ns = bool(cand["pid_ns"]) and os.getpid() == 1
    protected = _prctl(_PR_SET_DUMPABLE, 0)  # inherited by every fork: no /proc/<pid>/mem or fd of ours
    if not pid_ns:
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)  # orphans of a job come back to us to be reaped
    cand["writable"] = (os.getcwd().rstrip("/") + "/",)
    zygote = None
    if cand["kind"] == "func":
        load_codec()
        zygote = _Zygote(cand, (payload_fd, results_fd))
    payload = marshal.loads(_read_all(payload_fd))
    os.close(payload_fd)
    payload.update(cand, results_fd=results_fd, pid_ns=pid_ns)
    nonce = payload["nonce"].encode()

    def emit(fields: list[str]) -> None:
        line = nonce + b"\t" + "\t".join(fields).encode() + b"\n"
        view = memoryview(line)
        while view:
            view = view[os.write(results_fd, view) :]

    emit(["S", str(int(pid_ns)), str(int(protected))])
    for index, job in enumerate(payload["jobs"]):
        emit(_run_job(index, job, payload, zygote))
    emit(["E"])
    os._exit(0)  # skip interpreter finalisation: nothing is buffered, and it costs milliseconds per run


if __name__ == "__main__":
    main()
