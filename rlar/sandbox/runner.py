"""Public entry points: run a program, or run a program against code tests, sync or async.

Each call builds a payload for the in-jail driver (``harness.py``), runs one jail (``jail.py``) and turns the
driver's records into a ``RunResult``. Nothing here raises for the untrusted code's behaviour; a bad argument
(our bug) raises ``TypeError``/``ValueError``.
"""

from __future__ import annotations

import ast
import hashlib
import marshal
import secrets
import signal as signal_module
from collections.abc import Callable
from typing import Any

from rlar.sandbox.harness import normalize_output
from rlar.sandbox.jail import Finished, Jail, drive, drive_async
from rlar.sandbox.schema import (
    VIOLATION_KINDS,
    CodeTests,
    Limits,
    RunResult,
    SandboxConfig,
    Status,
    TestOutcome,
    TestStatus,
)

_EXCERPT_BYTES = 200
_PRECEDENCE: tuple[Status, ...] = ("timeout", "oom", "crashed")


def _payloads(
    kind: str,
    program: str,
    jobs: list[dict[str, Any]],
    limits: Limits,
    config: SandboxConfig,
    nonce: str,
    tests: dict[str, Any] | None = None,
) -> tuple[bytes, bytes]:
    """(what the candidate's processes may see, what they never see) as marshal data for the driver."""
    if not isinstance(program, str):
        raise TypeError(f"program must be str, got {type(program).__name__}")
    tests = tests or {}
    visible = {
        "kind": kind,
        "program": program,
        "pid_ns": config.mode == "bwrap",
        "limits": {
            "test_s": float(limits.test_s),
            "cpu_s": int(limits.cpu_s),
            "memory_bytes": int(limits.memory_mb) << 20,
            "file_bytes": int(limits.file_mb) << 20,
            "nproc": int(limits.nproc),
            "nofile": int(limits.nofile),
        },
    }
    hidden = {
        "nonce": nonce,
        "jobs": jobs,
        "tests": tests,
        "compare": tests.get("compare", "exact"),
        "excerpt_bytes": _EXCERPT_BYTES,
    }
    # Format 4: one every CPython 3 since 3.4 reads, in case the jail's interpreter differs from ours.
    return marshal.dumps(visible, 4), marshal.dumps(hidden, 4)


def prompt_stubs(prompt: str) -> list[str]:
    """Top-level functions and classes of the prompt that the response is asked to write: bodies that are only
    a docstring, ``pass``, ``...`` or ``raise NotImplementedError``. The tests use the response's versions of
    these; other names the prompt defines stay the dataset's. Computed here, not in the jail (``ast`` costs
    ~14 ms of CPU to import)."""
    try:
        tree = ast.parse(prompt)
    except (SyntaxError, ValueError):
        return []

    def stub(body: list) -> bool:
        for node in body:
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # docstring or ...
            if isinstance(node, ast.Pass | ast.Raise):
                continue
            if isinstance(node, ast.FunctionDef) and stub(node.body):
                continue  # a method stub inside a class stub
            return False
        return True

    return [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and stub(node.body)
    ]


def _jobs_for(tests: CodeTests) -> tuple[str, list[dict[str, Any]]]:
    if tests.style == "humaneval":
        return "func", [{"code": tests.checks[0], "call": tests.entry_point}]
    if tests.style == "asserts":
        return "func", [{"setup": tests.setup, "code": f"{check}\n"} for check in tests.checks]
    if tests.style == "calls":
        return "func", [{"call": tests.entry_point, "case": [list(a), e]} for a, e in tests.calls]
    return "stdio", [{"input": given.encode("utf-8")} for given, _ in tests.stdio]


def _prepare_tests(
    program: str, tests: CodeTests, limits: Limits | None, config: SandboxConfig | None
) -> tuple[Jail, Callable[[Finished], RunResult]]:
    if not isinstance(tests, CodeTests):
        raise TypeError(f"tests must be CodeTests, got {type(tests).__name__}")
    limits, config = limits or Limits(), config or SandboxConfig()
    kind, jobs = _jobs_for(tests)
    nonce = secrets.token_hex(16)
    shared = {
        "prompt": tests.prompt,
        "entry": tests.entry_point,
        "compare": tests.compare,
        "stubs": prompt_stubs(tests.prompt) if tests.prompt else [],
    }
    visible, hidden = _payloads(kind, program, jobs, limits, config, nonce, shared)
    jail = Jail(config, limits, visible, hidden, nonce, len(jobs))
    return jail, lambda done: _tests_result(tests, limits, done)


def _prepare_code(
    program: str, stdin: str | bytes, limits: Limits | None, config: SandboxConfig | None
) -> tuple[Jail, bytes, Callable[[Finished], RunResult]]:
    limits, config = limits or Limits(), config or SandboxConfig()
    data = stdin.encode("utf-8") if isinstance(stdin, str) else bytes(stdin)
    nonce = secrets.token_hex(16)
    visible, hidden = _payloads("run", program, [{}], limits, config, nonce)
    jail = Jail(config, limits, visible, hidden, nonce, 1)
    return jail, data, lambda done: _code_result(limits, done)


def run_tests(
    program: str, tests: CodeTests, limits: Limits | None = None, config: SandboxConfig | None = None
) -> RunResult:
    """Run ``program`` against ``tests`` in one jail; each test runs in its own child process.

    ``program`` is the full source (for HumanEval: prompt + completion). Status is ok only when every test
    passed; ``pass_fraction`` gives partial credit.
    """
    jail, assemble = _prepare_tests(program, tests, limits, config)
    return assemble(drive(jail, None))


async def run_tests_async(
    program: str, tests: CodeTests, limits: Limits | None = None, config: SandboxConfig | None = None
) -> RunResult:
    """``run_tests`` without blocking the event loop. Bounding concurrency is the caller's job."""
    jail, assemble = _prepare_tests(program, tests, limits, config)
    return assemble(await drive_async(jail, None))


def run_code(
    program: str, stdin: str | bytes = b"", limits: Limits | None = None, config: SandboxConfig | None = None
) -> RunResult:
    """Run ``program`` as ``__main__`` with ``stdin``; status ok iff it exits 0 within the limits.

    For trusted-but-jailed code (synthesised verifiers) whose stdout the caller interprets: exit status and
    output are the program's own, so this is not a verdict on untrusted code (use ``run_tests`` for that).
    """
    jail, data, assemble = _prepare_code(program, stdin, limits, config)
    return assemble(drive(jail, data))


async def run_code_async(
    program: str, stdin: str | bytes = b"", limits: Limits | None = None, config: SandboxConfig | None = None
) -> RunResult:
    """``run_code`` without blocking the event loop."""
    jail, data, assemble = _prepare_code(program, stdin, limits, config)
    return assemble(await drive_async(jail, data))


def check_sandbox(config: SandboxConfig | None = None) -> str | None:
    """None if the configured sandbox runs a trivial program end to end, else the reason it does not (for an
    actor to log at start-up)."""
    result = run_code("print('ok')", limits=Limits(test_s=10.0), config=config)
    if result.status == "ok" and result.stdout.strip() == "ok":
        return None
    return f"{result.status}: {result.reason}"


# -- turning driver records into results -----------------------------------------------------------------------


def _base(done: Finished, status: Status, reason: str) -> RunResult:
    return RunResult(
        status=status,
        reason=reason,
        stdout=done.stdout.text(),
        stderr=done.stderr.text(),
        stdout_bytes=done.stdout.total,
        stderr_bytes=done.stderr.total,
        wall_s=round(done.wall_s, 4),
        cpu_s=round(done.cpu_s, 4),
        peak_rss_kb=done.peak_rss_kb,
        isolation=done.isolation,
    )


def _rejection(done: Finished) -> RunResult | None:
    if done.spawn_error:
        return _base(done, "rejected", done.spawn_error)
    if not done.started:
        if done.timed_out:
            why = f"the sandbox did not start within {done.wall_limit_s:g} s"
        else:
            why = f"the sandbox failed to start (exit {done.exit_code})"
        err = done.stderr.text().strip()
        return _base(done, "rejected", f"{why}: {err[:1000]}" if err else why)
    return None


def _outcome(index: int, name: str, record: list[str] | None, expected_sha: str | None) -> TestOutcome:
    if record is None:
        return TestOutcome(index, name, "not_run", "no result from the jail (driver killed or out of time)")
    _, _, status, wall, cpu, rss, code_text, detail_hex, out_sha, out_len, excerpt_hex = record[:11]
    detail = bytes.fromhex(detail_hex).decode("utf-8", "replace") if detail_hex else ""
    code = int(code_text)
    final: TestStatus
    if status == "exited":  # stdio case: judged here, against output the jail never saw
        if code != 0:
            final, detail = "failed", f"exit code {code}" + (f": {detail}" if detail else "")
        elif out_sha == expected_sha:
            final = "passed"
        else:
            excerpt = b"" if excerpt_hex == "-" else bytes.fromhex(excerpt_hex)
            final = "failed"
            detail = f"wrong output ({out_len} bytes): {excerpt.decode('utf-8', 'replace')!r}"
    elif status in ("passed", "failed", "timeout", "oom", "crashed"):
        final = status  # type: ignore[assignment]
    else:
        final, detail = "crashed", f"unknown driver status {status!r}"
    return TestOutcome(index, name, final, detail, float(wall), float(cpu), int(rss))


def _add_violations(result: RunResult, done: Finished) -> None:
    """Collect the violations each job's record reports (kind, detail, the test's index)."""
    for index, record in sorted(done.records.items()):
        if len(record) < 12 or record[11] == "-":
            continue
        try:
            text = bytes.fromhex(record[11]).decode("utf-8", "replace")
        except ValueError:
            continue
        for line in text.split("\n"):
            kind, _, detail = line.partition("\t")
            if kind in VIOLATION_KINDS:
                result.violations.append({"kind": kind, "detail": detail[:300], "test": index})


def _add_usage(result: RunResult, done: Finished) -> None:
    records = done.records.values()
    result.cpu_s = round(max(result.cpu_s, sum(float(r[4]) for r in records)), 4)
    result.peak_rss_kb = max([result.peak_rss_kb, *(int(r[5]) for r in records)])


def _tests_result(tests: CodeTests, limits: Limits, done: Finished) -> RunResult:
    rejected = _rejection(done)
    if rejected is not None:
        rejected.tests = [TestOutcome(i, n, "not_run", "rejected") for i, n in enumerate(tests.names())]
        return rejected
    expected: list[str | None] = [None] * len(tests)
    if tests.style == "stdio":
        expected = [
            hashlib.sha256(normalize_output(out.encode("utf-8"), tests.compare)).hexdigest()
            for _, out in tests.stdio
        ]
    outcomes = [_outcome(i, n, done.records.get(i), expected[i]) for i, n in enumerate(tests.names())]
    statuses = {t.status for t in outcomes}
    passed = sum(t.passed for t in outcomes)
    first_bad = next((t for t in outcomes if not t.passed), None)
    status: Status
    if done.timed_out:
        status, reason = "timeout", f"sandbox killed at the wall-clock limit of {done.wall_limit_s:g} s"
    else:
        status = next((s for s in _PRECEDENCE if s in statuses), "ok")
        if status == "ok" and ("not_run" in statuses or not done.ended):
            status = "crashed"
        elif status == "ok" and passed < len(outcomes):
            status = "failed"
        reason = ""
    summary = f"{passed}/{len(outcomes)} tests passed"
    if first_bad is not None:
        summary += (
            f"; test {first_bad.index} ({first_bad.name[:80]}) {first_bad.status}: {first_bad.detail[:300]}"
        )
    result = _base(done, status, f"{reason}; {summary}" if reason else summary)
    result.tests = outcomes
    _add_usage(result, done)
    _add_violations(result, done)
    return result


def _code_result(limits: Limits, done: Finished) -> RunResult:
    rejected = _rejection(done)
    if rejected is not None:
        return rejected
    record = done.records.get(0)
    status: Status
    if done.timed_out:
        result = _base(done, "timeout", f"sandbox killed at the wall-clock limit of {done.wall_limit_s:g} s")
    elif record is None:
        result = _base(done, "crashed", f"no result from the jail's driver (exit {done.exit_code})")
    else:
        kind, code = record[2], int(record[6])
        detail = bytes.fromhex(record[7]).decode("utf-8", "replace") if record[7] else ""
        if kind == "exited":
            status = "ok" if code == 0 else "failed"
            reason = f"exited with code {code}" + (f": {detail}" if detail else "")
        elif kind in _PRECEDENCE:
            status, reason = kind, detail  # type: ignore[assignment]
        else:
            status, reason = "crashed", f"unknown driver status {kind!r}"
        result = _base(done, status, reason)
        if code < 0:
            result.signal = -code
            name = _signal_name(-code)
            result.reason = f"{reason} ({name})" if name else reason
        else:
            result.exit_code = code
    _add_usage(result, done)
    _add_violations(result, done)
    return result


def _signal_name(number: int) -> str:
    try:
        return signal_module.Signals(number).name
    except ValueError:
        return ""
