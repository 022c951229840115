"""Code sandbox: run untrusted Python (and its tests) in a bubblewrap jail with rlimits and a wall clock.

Entry points (each returns a ``RunResult`` and never raises for the code's behaviour):

- ``run_tests(program, tests, limits=None, config=None)`` / ``run_tests_async(...)``: code-task tests in four
  styles (``CodeTests.humaneval(test, entry_point)``, ``CodeTests.asserts(statements, setup)`` for MBPP,
  ``CodeTests.stdio_cases(pairs)``, ``CodeTests.call_cases(pairs, entry_point)``); ``pass_fraction(result)`` is
  the reward helper. ``parse_code_tests(reference)`` builds ``CodeTests`` from any accepted dataset shape
  (HumanEval, LeetCode, asserts, MBPP, APPS, CodeContests, LiveCodeBench, stdin/stdout pairs) and
  ``is_code_tests(reference)`` recognises one.
- ``run_code(program, stdin=b"", limits=None, config=None)`` / ``run_code_async(...)``: run a program as
  ``__main__``; for synthesised verifiers whose output the caller reads.
- ``check_sandbox(config)``: None if the sandbox works here, else why not.

Statuses: ok | failed | timeout | oom | crashed | rejected (see ``schema.Status``). All types have
``to_dict()``/``from_dict()`` with msgpack-able values. Concurrency: the async functions can run many jails
at once; bounding them (a semaphore) is the caller's job. Cost on a 2-core host: ~25-45 ms per jail plus a few
ms per test (forks of the candidate and the checker, the program run afresh for each test).

What is covered (bwrap mode, the default)
-----------------------------------------
- Namespaces: new user, PID, network, IPC, UTS and cgroup namespaces (``--unshare-all --unshare-user``), no
  nested user namespaces (``--disable-userns``), all capabilities dropped, ``--new-session`` (no TIOCSTI into
  our terminal), ``--die-with-parent``, ``--clearenv``.
- Network: none. Loopback exists but is the jail's own; host ports on 127.0.0.1, abstract Unix sockets and any
  public address are unreachable.
- Filesystem: only /usr (and the /bin, /lib* links or dirs), /etc/ld.so.cache, /proc of the jail's PID
  namespace and a minimal /dev, all read-only; a private size-capped tmpfs /tmp is the only writable place.
  /work, the project, /root, /home and /etc/shadow do not exist inside. The interpreter is the system
  /usr/bin/python3 run with ``-I``, not the project's venv.
- Identity: uid/gid 65534 inside; when the host runs as root, bubblewrap itself is started as uid 65534
  (``SandboxConfig.host_uid``) so an escape lands unprivileged.
- Processes: the driver is PID 1 of the jail, so the code cannot kill it (``os.kill(os.getppid(), 9)`` is
  ignored) nor see or signal host processes; after every test the driver kills everything else in the jail.
- Resources, per child process: RLIMIT_CPU, RLIMIT_AS, RLIMIT_FSIZE, RLIMIT_NPROC (counted in the jail's own
  user namespace, so a fork bomb stops at ``nproc`` and does not touch host accounting), RLIMIT_NOFILE, no
  core dumps; a per-test wall clock in the driver and a whole-jail wall clock on the host (SIGKILL to the jail's
  process group; the PID namespace dies with its PID 1). stdout/stderr are drained continuously and capped.
- Test integrity (function tests: humaneval, asserts, calls): the candidate and the tests run in different
  processes (``rpc.py``). A candidate process, forked per test from a candidate host that was started before the
  driver read the tests (so no candidate memory ever held them), runs the program and answers calls with plain
  data serialised by exact type; a checker process that never runs candidate code executes the trusted prompt,
  the setup and the test against proxies, so every ``==``, ``hash``, ``bool`` and ``assert`` is decided on
  genuine builtins where the candidate cannot reach. Objects of the candidate's own classes are opaque handles
  (identity equality; ``bool``/``len``/iteration refuse), so "equal to everything" objects, subclassed builtins,
  generators and other non-plain results fail. A test passes only if the checker writes this test's random
  token to its private pipe; raising, ``sys.exit(0)``, ``os._exit(0)``, atexit or excepthook tricks, printing
  "OK"/"PASSED", forging frames or killing processes all fail the test. For stdio tests, expected outputs never
  enter the jail and a case also needs exit status 0.
- Violations (``RunResult.violations``): network use, signals to other processes, processes left behind,
  writes outside the working directory and forbidden reads are detected (an audit hook in every process that
  runs candidate code, plus what the driver sees) and reported; the code reward zeroes them by default.

What is not covered
-------------------
- Kernel attack surface: no seccomp filter; a kernel exploit reachable from an unprivileged user namespace
  escapes. Use a VM or gVisor for hostile workloads at scale.
- Memory outside RLIMIT_AS: tmpfs (/tmp is capped at ``tmpfs_mb``), memfd and pipe buffers, and SysV shared
  memory are host RAM not counted per process; total use is bounded only by ``file_mb`` x ``nofile`` x
  ``nproc``. RLIMIT_AS is address space, not RSS. Use a cgroup (container or systemd-run) for a hard ceiling.
- CPU share: no cgroup CPU quota; ``nproc`` processes can each burn a core until ``cpu_s`` or the wall clock.
- Killing the checker or the candidate host (same uid in the jail): that fails the candidate's own tests and
  is reported, never passes them. Audit hooks run inside the candidate's process, so native code (ctypes,
  /proc/self/mem) can evade the violation report, though not the jail. Tests that pass the candidate a lambda
  or read attributes of its objects beyond plain data are outside what the proxies carry (they fail).
- Side channels and determinism: timing, /proc/cpuinfo and /proc/meminfo are visible; hash seeds and time
  vary between runs.
- rlimit-only mode (``SandboxConfig(mode="rlimit-only")``, an explicit opt-in for hosts without working
  bubblewrap): the same driver, tests and rlimits, a fresh working directory, no network when ``unshare`` can
  create a network namespace (``isolation == "rlimit-only+netns"``), and the uid drop when the host is root.
  The driver, a child subreaper, kills every leftover descendant after each test. NOT covered there: the
  filesystem (the code reads anything its uid can read, including the project), IPC, and other processes: it
  sees and can signal every process of its uid, which is the host's own uid unless the host is root (then
  ``host_uid``), including the driver; if it kills the driver first, a process that called setsid can outlive
  the run. RLIMIT_NPROC counts every process of that uid on the host (or in its user namespace).
"""

from rlar.sandbox.formats import (
    ACCEPTED_SHAPES,
    CodeTestsFormatError,
    is_code_tests,
    parse_code_tests,
)
from rlar.sandbox.runner import (
    check_sandbox,
    run_code,
    run_code_async,
    run_tests,
    run_tests_async,
)
from rlar.sandbox.schema import (
    CodeTests,
    Limits,
    RunResult,
    SandboxConfig,
    Status,
    TestOutcome,
    TestStatus,
    pass_fraction,
)

__all__ = [
    "ACCEPTED_SHAPES",
    "CodeTests",
    "CodeTestsFormatError",
    "Limits",
    "RunResult",
    "SandboxConfig",
    "Status",
    "TestOutcome",
    "TestStatus",
    "check_sandbox",
    "is_code_tests",
    "parse_code_tests",
    "pass_fraction",
    "run_code",
    "run_code_async",
    "run_tests",
    "run_tests_async",
]
