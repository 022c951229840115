"""In-jail driver of the rlar sandbox: runs untrusted code in forked children and reports what happened.

The host starts it as ``python3 -I -c <this file's source> PAYLOAD_FD RESULTS_FD`` inside the jail (see
``rlar.sandbox.jail``). It reads a ``marshal`` payload from PAYLOAD_FD (a memfd the host wrote), runs each job in
its own forked child, one at a time, and writes one record per job to RESULTS_FD (a pipe the host drains).
This process never executes untrusted code itself; only its children do.

Jobs (payload ``kind``):
- ``run``: one child executes ``program`` as ``__main__`` with the jail's stdin/stdout/stderr.
- ``func``: per test, a child executes ``program`` (``__name__ == "__solution__"``), then the test source, and,
  for HumanEval, calls ``check(<entry point>)``. A test passes only when the child reaches the end of the test
  and writes this test's random token to its private verdict pipe; raising, ``sys.exit``, ``os._exit`` or
  being killed all leave a missing or failing verdict.
- ``stdio``: per case, a child executes ``program`` as ``__main__`` with the case input on stdin (a memfd) and
  stdout captured in another memfd. The driver reports exit status and a SHA-256 of the normalised output; the
  host compares it with the expected output, which never enters the jail.

Why a candidate cannot trivially forge results: the results pipe is closed in every child, this process makes
itself non-dumpable (so children cannot open ``/proc/<driver>/fd/*`` or ``/proc/<driver>/mem``), each test has
its own child and token (so one test cannot speak for another), every record carries the host's nonce, and
references to ``os.write``/``os._exit``/``BaseException`` are bound before untrusted code runs. A candidate that
introspects its own interpreter (frames, ``gc``, ``/proc/self/mem``) can find its test's token and forge that
one verdict; in-process tests cannot prevent this.

Record format (one line each, ASCII, tab-separated, free text hex-encoded):
``NONCE S pid_ns protected``, then per job ``NONCE T index status wall_s cpu_s maxrss_kb code detail_hex
out_sha256 out_len excerpt_hex``, then ``NONCE E``. ``status`` is passed | failed | exited | timeout | oom |
crashed; ``code`` is the exit code, or minus the signal number.

Constraints: standard library only, and only modules that are cheap to import (startup is part of every run);
must run on the jail's interpreter (CPython >= 3.9 on Linux). ``normalize_output`` is imported by the host too, so
both sides normalise identically.
"""

from __future__ import annotations

import builtins
import marshal
import os
import resource
import sys
import time

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


def _resolve(entry: str, env: dict):
    """The callable an entry point names: ``f``, ``Cls().f`` or ``Cls.f``; a bare name the program does not
    define falls back to a method of ``class Solution`` (the LeetCode convention)."""
    head, _, method = entry.partition(".")
    name = head[:-2] if head.endswith("()") else head
    if name not in env:
        if not method and "Solution" in env:
            return getattr(env["Solution"](), name)
        raise NameError(f"entry point {entry!r} is not defined by the program")
    target = env[name]
    if head.endswith("()"):
        target = target()
    return getattr(target, method) if method else target


def _same(result, expected, compare: str) -> bool:
    """Call-style comparison: exact equality, or APPS's rule (tuples compare as lists; a one-element expected
    list also matches its element)."""
    if compare == "apps":
        if type(result) is tuple:
            result = list(result)
        if result == expected:
            return True
        return type(expected) is list and len(expected) == 1 and result == expected[0]
    return result == expected


def _child(job: dict, payload: dict, verdict_fd: int, tok: bytes, fds: tuple[int, int]) -> None:
    """Body of one forked child; never returns (ends in ``os._exit``)."""
    # Bound before untrusted code runs: a candidate can rebind module attributes but not these locals.
    write, exit_now, base_exc, system_exit = os.write, os._exit, BaseException, SystemExit
    flush_out, flush_err = sys.stdout.flush, sys.stderr.flush
    excepthook = sys.__excepthook__
    kind = payload["kind"]
    code = 1
    verdict = b"fail"
    detail = ""
    try:
        os.close(payload["results_fd"])
        stdin_fd, stdout_fd = fds
        if stdin_fd >= 0:
            os.lseek(stdin_fd, 0, 0)
            os.dup2(stdin_fd, 0)
        if stdout_fd >= 0:
            os.dup2(stdout_fd, 1)
        import _signal

        _signal.signal(_SIGINT, _signal.default_int_handler)
        _set_limits(payload["limits"])
        program = payload["program"]
        if kind == "func":
            # Tests look names up in this snapshot, not in the builtins module the candidate may patch.
            pristine = dict(builtins.__dict__)
            env: dict = {"__name__": "__solution__", "__builtins__": builtins}
            try:
                exec(compile(program, "solution.py", "exec"), env)
                test_env = dict(env)
                test_env["__builtins__"] = pristine
                exec(compile(job["code"], "test.py", "exec"), test_env)
                if job["call"]:
                    candidate = _resolve(job["call"], env)
                    if "case" in job:
                        args, expected = job["case"]
                        if not _same(candidate(*args), expected, payload["compare"]):
                            raise AssertionError("wrong return value")
                    else:
                        test_env["check"](candidate)
                verdict, code = b"pass", 0
            except base_exc as exc:
                detail = _describe(exc)
        else:
            env = {"__name__": "__main__", "__builtins__": builtins}
            try:
                exec(compile(program, "main.py", "exec"), env)
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
            verdict = b"exit"
        write(
            verdict_fd, b"\n" + tok + b" " + verdict + b" " + detail.encode("utf-8", "replace").hex().encode()
        )
        try:
            flush_out()
            flush_err()
        except base_exc:
            if kind != "func":
                code = 1
    finally:
        exit_now(code)


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


def _clean_up(pid_ns: bool) -> None:
    """Kill and reap whatever the last job left behind (grandchildren, daemons, fork bombs).

    In a PID namespace we are its PID 1: ``kill(-1)`` reaches every other process in the jail. Without one
    (rlimit-only mode) we are a child subreaper, so every orphaned descendant is re-parented to us: kill our
    children, whose own children then become ours, until none is left."""
    deadline = time.monotonic() + 2.0
    me = str(os.getpid()).encode()
    while time.monotonic() < deadline:
        if pid_ns:
            try:
                os.kill(-1, _SIGKILL)
            except ProcessLookupError:
                pass
        else:
            for entry in os.listdir("/proc"):
                if entry.isdigit():
                    try:
                        with open(f"/proc/{entry}/stat", "rb") as stat:
                            ppid = stat.read().rsplit(b")", 1)[1].split()[1]
                        if ppid == me:
                            os.kill(int(entry), _SIGKILL)
                    except (OSError, IndexError):
                        pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return
        time.sleep(0.001)


def _read_verdict(fd: int, tok: bytes) -> tuple[bytes, str] | None:
    data = b""
    try:
        while len(data) < 65536:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            data += chunk
    except BlockingIOError:
        pass
    for line in data.split(b"\n"):  # junk the candidate wrote to the pipe cannot carry this test's token
        parts = line.split(b" ")
        if len(parts) == 3 and parts[0] == tok:
            try:
                detail = bytes.fromhex(parts[2].decode()).decode("utf-8", "replace")
            except ValueError:
                detail = ""
            return parts[1], detail
    return None


def _run_job(index: int, job: dict, payload: dict) -> list[str]:
    kind = payload["kind"]
    limits = payload["limits"]
    stdin_fd = stdout_fd = -1
    if kind == "stdio":
        stdin_fd = os.memfd_create("stdin")
        os.write(stdin_fd, job["input"])
        stdout_fd = os.memfd_create("stdout")
    elif kind == "func":
        stdin_fd = os.open("/dev/null", os.O_RDONLY)
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    tok = os.urandom(12).hex().encode()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _child(job, payload, write_fd, tok, (stdin_fd, stdout_fd))
    os.close(write_fd)
    timed_out, status, usage = _wait(pid, limits["test_s"])
    wall = time.monotonic() - start
    cpu = usage.ru_utime + usage.ru_stime
    maxrss = usage.ru_maxrss
    verdict = _read_verdict(read_fd, tok)
    os.close(read_fd)
    _clean_up(payload["pid_ns"])
    code = os.waitstatus_to_exitcode(status)
    said, detail = verdict if verdict is not None else (b"", "")
    if timed_out:
        result, detail = "timeout", f"killed after {limits['test_s']:g} s"
    elif detail.startswith("MemoryError"):
        result = "oom"
    elif code < 0:
        signum = -code
        if signum == _SIGXCPU or (signum == _SIGKILL and cpu >= limits["cpu_s"] - 0.5):
            result, detail = "timeout", f"CPU limit of {limits['cpu_s']} s"
        elif signum == _SIGXFSZ:
            result, detail = "failed", "file size limit exceeded"
        elif maxrss * 1024 >= 0.9 * limits["memory_bytes"]:
            result, detail = "oom", f"killed by signal {signum} near the memory limit"
        else:
            result, detail = "crashed", f"killed by signal {signum}"
    elif kind == "func":
        if said == b"pass" and code == 0:
            result = "passed"
        elif said == b"fail":
            result = "failed"
        else:
            result, detail = "failed", f"exited with code {code} without a verdict (before the test finished)"
    else:
        result = "exited"
        if said != b"exit":
            detail = detail or f"exited with code {code} outside the harness"
    out_sha, out_len, excerpt = "", 0, b""
    if stdout_fd >= 0:
        import hashlib

        out = _read_all(stdout_fd)
        out_len = len(out)
        out_sha = hashlib.sha256(normalize_output(out, payload["compare"])).hexdigest()
        excerpt = out[: payload["excerpt_bytes"]]
    for fd in (stdin_fd, stdout_fd):
        if fd >= 0:
            os.close(fd)
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
    ]


def main() -> None:
    payload_fd, results_fd = int(sys.argv[1]), int(sys.argv[2])
    payload = marshal.loads(_read_all(payload_fd))
    os.close(payload_fd)
    payload["results_fd"] = results_fd
    nonce = payload["nonce"].encode()

    def emit(fields: list[str]) -> None:
        line = nonce + b"\t" + "\t".join(fields).encode() + b"\n"
        view = memoryview(line)
        while view:
            view = view[os.write(results_fd, view) :]

    import _signal

    # As PID 1 of the jail, any signal with a handler is delivered even from inside; SIGINT has one by default.
    _signal.signal(_SIGINT, _signal.SIG_IGN)
    pid_ns = bool(payload["pid_ns"]) and os.getpid() == 1
    payload["pid_ns"] = pid_ns
    protected = _prctl(_PR_SET_DUMPABLE, 0)
    if not pid_ns:
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)  # orphans of a job come back to us to be reaped
    emit(["S", str(int(pid_ns)), str(int(protected))])
    for index, job in enumerate(payload["jobs"]):
        emit(_run_job(index, job, payload))
    emit(["E"])
    os._exit(0)  # skip interpreter finalisation: nothing is buffered, and it costs milliseconds per run


if __name__ == "__main__":
    main()
