"""Plain data types of the sandbox: limits, operator config, code tests, outcomes and results.

Every type round-trips through ``to_dict()`` / ``from_dict()`` using only msgpack-able values (str, int, float,
bool, None, lists, dicts), so a bus actor can ship them as they are. Construction validates ranges and raises
``ValueError``: a bad limit is our bug, not the untrusted code's.
"""

from __future__ import annotations

import dataclasses
import keyword
import re
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

Status = Literal["ok", "failed", "timeout", "oom", "crashed", "rejected"]
"""Run status. ok: the program exited 0 / every test passed. failed: it ran to the end but exited non-zero or
failed a test. timeout: a wall-clock or CPU limit was hit. oom: the memory limit was hit (MemoryError or a kill
near the limit). crashed: killed by a signal, or the jail's driver did not finish. rejected: the sandbox could
not run the code at all (bubblewrap missing or broken, bad interpreter); an infrastructure verdict, not the
code's fault."""

TestStatus = Literal["passed", "failed", "timeout", "oom", "crashed", "not_run"]
Mode = Literal["bwrap", "rlimit-only"]
Style = Literal["humaneval", "asserts", "stdio", "calls"]
Compare = Literal["lines", "tokens", "exact", "apps"]
_STDIO_COMPARE = ("lines", "tokens", "exact")
_CALLS_COMPARE = ("apps", "exact")
_ENTRY = re.compile(r"[A-Za-z_]\w*(\(\))?(\.[A-Za-z_]\w*)?")

ViolationKind = Literal["network", "signal", "process_left_behind", "write_outside", "forbidden_read"]
"""What the sandbox saw the code attempt (all contained): network use (a non-Unix socket, connect, bind, name
lookups), a signal sent to another process (the driver, the checker, the candidate host; a killed checker or
candidate host too), processes still running after a test, writes outside the working directory, reads of
places a program has no business reading (other processes' /proc entries, /etc/shadow, /root, /home, ...)."""
VIOLATION_KINDS = frozenset(get_args(ViolationKind))

_STATUSES = frozenset(get_args(Status))
_TEST_STATUSES = frozenset(get_args(TestStatus))


def _plain(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def _fields_dict(obj: Any) -> dict[str, Any]:
    return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = set(data) - names
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown fields {sorted(unknown)}")
    return dict(data)


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-request resource limits. Each child process gets the rlimits; ``wall_s`` bounds the whole jail."""

    test_s: float = 5.0
    """Wall-clock seconds per test / stdio case / ``run_code`` program; the child is SIGKILLed after."""
    wall_s: float | None = None
    """Wall-clock seconds for the whole jail, enforced by the host killing its process group. None:
    ``test_s`` times the number of tests plus 3 s (startup and slack)."""
    cpu_s: int = 10
    """RLIMIT_CPU per process, seconds (SIGXCPU, then SIGKILL one second later)."""
    memory_mb: int = 1024
    """RLIMIT_AS per process, MiB (address space, so it is above the resident size a program reaches)."""
    file_mb: int = 16
    """RLIMIT_FSIZE per file written, MiB; also bounds a stdio case's captured stdout."""
    nproc: int = 32
    """RLIMIT_NPROC: processes of the jail's user, counted inside the jail's own user namespace."""
    nofile: int = 64
    """RLIMIT_NOFILE per process."""
    tmpfs_mb: int = 64
    """Size of the private /tmp (bwrap mode)."""
    output_bytes: int = 65536
    """stdout and stderr bytes kept each; the rest is drained and discarded (counted in *_bytes)."""

    def __post_init__(self) -> None:
        if not 0 < self.test_s <= 3600:
            raise ValueError(f"test_s must be in (0, 3600], got {self.test_s}")
        if self.wall_s is not None and not 0 < self.wall_s <= 86400:
            raise ValueError(f"wall_s must be in (0, 86400] or None, got {self.wall_s}")
        for name, low in (("cpu_s", 1), ("memory_mb", 32), ("file_mb", 1), ("nproc", 2), ("nofile", 16)):
            if getattr(self, name) < low:
                raise ValueError(f"{name} must be >= {low}, got {getattr(self, name)}")
        if self.tmpfs_mb < 1 or self.output_bytes < 256:
            raise ValueError("tmpfs_mb must be >= 1 and output_bytes >= 256")

    def wall_for(self, jobs: int) -> float:
        """The whole-jail deadline for ``jobs`` sequential jobs."""
        return self.wall_s if self.wall_s is not None else self.test_s * max(1, jobs) + 3.0

    def to_dict(self) -> dict[str, Any]:
        return _fields_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Limits:
        return cls(**_known(cls, data))


@dataclass(frozen=True, slots=True)
class SandboxConfig:
    """Operator settings (one per sandbox actor), as opposed to per-request ``Limits``."""

    mode: Mode = "bwrap"
    """bwrap: the jail described in the package docstring. rlimit-only: an explicit opt-in weaker mode for hosts
    without working bubblewrap (rlimits, a fresh working directory, a network namespace when ``unshare`` can
    make one, and a uid drop when the host runs as root; no filesystem, PID or IPC isolation)."""
    bwrap: str = "/usr/bin/bwrap"
    python: str = "/usr/bin/python3"
    """Interpreter used inside the jail (CPython >= 3.9 with the same ``marshal`` format as the host: same
    minor version is safest). It must live under /usr or under one of ``ro_binds``. The project's venv is not
    used: it would expose its files, and a pyenv interpreter under /root is unreadable after the uid drop."""
    host_uid: int | None = 65534
    """When the host runs as root, bubblewrap (or the rlimit-only child) is started as this uid/gid so that an
    escape lands as an unprivileged user. None keeps root (needed where unprivileged user namespaces are off)."""
    host_gid: int = 65534
    ro_binds: tuple[str, ...] = ()
    """Extra host paths bound read-only at the same place inside the jail (e.g. an interpreter's prefix)."""

    def __post_init__(self) -> None:
        if self.mode not in get_args(Mode):
            raise ValueError(f"mode must be one of {get_args(Mode)}, got {self.mode!r}")
        for path in (self.bwrap, self.python, *self.ro_binds):
            if not path.startswith("/"):
                raise ValueError(f"paths must be absolute, got {path!r}")
        if isinstance(self.ro_binds, list):
            object.__setattr__(self, "ro_binds", tuple(self.ro_binds))

    def to_dict(self) -> dict[str, Any]:
        return _fields_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SandboxConfig:
        data = _known(cls, data)
        if "ro_binds" in data:
            data["ro_binds"] = tuple(data["ro_binds"])
        return cls(**data)


@dataclass(frozen=True, slots=True)
class CodeTests:
    """Tests for a code task. Build with ``humaneval()``, ``asserts()``, ``stdio_cases()`` or ``call_cases()``, or
    from a dataset record with ``rlar.sandbox.formats.parse_code_tests``.

    - humaneval: ``checks`` holds one test source defining ``check(candidate)``; ``entry_point`` names what the
      program must define: a function (``f``) or a method (``Solution().f``). One outcome.
    - asserts (MBPP): ``checks`` holds assert statements, one outcome each; ``setup`` (imports, helpers) runs
      before each.
    - stdio: ``stdio`` holds (input, expected output) pairs compared after ``compare`` normalisation (lines,
      tokens, exact); a case passes only if the program also exits 0 (so a raising program never matches an
      empty expected output).
    - calls (APPS ``fn_name``, LiveCodeBench functional): ``calls`` holds (argument list, expected return value)
      pairs, one outcome each; ``entry_point`` as for humaneval (a bare name falls back to a method of
      ``class Solution``). ``compare``: ``apps`` (a tuple result compares as a list; a one-element expected list
      also matches its element) or ``exact``.

    ``prompt`` is trusted source the response may continue (the HumanEval prompt): the code tool puts it before
    a response that does not stand alone, and the tests run it first, so helpers it defines are the dataset's.
    """

    style: Style
    checks: tuple[str, ...] = ()
    entry_point: str = ""
    setup: str = ""
    stdio: tuple[tuple[str, str], ...] = ()
    compare: Compare = "lines"
    calls: tuple[tuple[Any, Any], ...] = ()
    prompt: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "checks", tuple(self.checks))
        object.__setattr__(self, "stdio", tuple((str(i), str(o)) for i, o in self.stdio))
        object.__setattr__(self, "calls", tuple((list(a), e) for a, e in self.calls))
        if self.style not in get_args(Style):
            raise ValueError(f"style must be one of {get_args(Style)}, got {self.style!r}")
        allowed = _CALLS_COMPARE if self.style == "calls" else _STDIO_COMPARE
        if self.style in ("stdio", "calls") and self.compare not in allowed:
            raise ValueError(f"{self.style} compare must be one of {allowed}, got {self.compare!r}")
        if self.style in ("humaneval", "calls") and not _valid_entry(self.entry_point):
            raise ValueError(
                f"{self.style} tests need an entry_point such as f or Solution().f, got {self.entry_point!r}"
            )
        if self.style == "humaneval" and len(self.checks) != 1:
            raise ValueError("humaneval tests need exactly one check source")
        elif self.style == "asserts" and not self.checks:
            raise ValueError("asserts tests need at least one assert statement")
        elif self.style == "stdio" and not self.stdio:
            raise ValueError("stdio tests need at least one (input, expected) pair")
        elif self.style == "calls" and not self.calls:
            raise ValueError("calls tests need at least one (arguments, expected) pair")

    @classmethod
    def humaneval(cls, test: str, entry_point: str, prompt: str = "") -> CodeTests:
        return cls(style="humaneval", checks=(test,), entry_point=entry_point, prompt=prompt)

    @classmethod
    def asserts(cls, statements: list[str] | tuple[str, ...], setup: str = "", prompt: str = "") -> CodeTests:
        return cls(style="asserts", checks=tuple(statements), setup=setup, prompt=prompt)

    @classmethod
    def stdio_cases(
        cls,
        pairs: list[tuple[str, str]] | tuple[tuple[str, str], ...],
        compare: Compare = "lines",
        prompt: str = "",
    ) -> CodeTests:
        return cls(style="stdio", stdio=tuple(pairs), compare=compare, prompt=prompt)

    @classmethod
    def call_cases(
        cls,
        pairs: list[tuple[Any, Any]] | tuple[tuple[Any, Any], ...],
        entry_point: str,
        compare: Compare = "apps",
        prompt: str = "",
    ) -> CodeTests:
        return cls(style="calls", calls=tuple(pairs), entry_point=entry_point, compare=compare, prompt=prompt)

    def __len__(self) -> int:
        if self.style == "calls":
            return len(self.calls)
        return len(self.stdio) if self.style == "stdio" else len(self.checks)

    def names(self) -> list[str]:
        if self.style == "humaneval":
            return [f"check({self.entry_point})"]
        if self.style == "asserts":
            return [" ".join(c.split())[:200] for c in self.checks]
        if self.style == "calls":
            return [f"call {i}: {self.entry_point}{_short_args(a)}" for i, (a, _) in enumerate(self.calls)]
        return [f"case {i}" for i in range(len(self.stdio))]

    def to_dict(self) -> dict[str, Any]:
        return _fields_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CodeTests:
        data = _known(cls, data)
        data["checks"] = tuple(data.get("checks", ()))
        data["stdio"] = tuple((i, o) for i, o in data.get("stdio", ()))
        data["calls"] = tuple((a, e) for a, e in data.get("calls", ()))
        return cls(**data)


def _valid_entry(entry: str) -> bool:
    head = entry.split("(")[0].split(".")[0]
    return (
        bool(_ENTRY.fullmatch(entry))
        and not keyword.iskeyword(head)
        and not keyword.iskeyword(entry.rsplit(".", 1)[-1])
    )


def _short_args(args: Any) -> str:
    text = repr(tuple(args)) if isinstance(args, list) else repr(args)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(slots=True)
class TestOutcome:
    """One test's outcome. ``detail`` says why it did not pass (exception, exit code, signal, limit)."""

    index: int
    name: str
    status: TestStatus
    detail: str = ""
    wall_s: float = 0.0
    cpu_s: float = 0.0
    peak_rss_kb: int = 0

    __test__ = False  # not a pytest test class despite the name

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def to_dict(self) -> dict[str, Any]:
        return _fields_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TestOutcome:
        data = _known(cls, data)
        if data.get("status") not in _TEST_STATUSES:
            raise ValueError(f"unknown test status {data.get('status')!r}")
        return cls(**data)


@dataclass(slots=True)
class RunResult:
    """What happened to one sandboxed run. Never raised: every failure of the untrusted code is a status.

    ``stdout`` keeps the first ``Limits.output_bytes``; ``stderr`` keeps its head and tail (tracebacks come
    last); ``*_bytes`` are the full sizes. ``exit_code`` / ``signal`` describe the program for ``run_code``
    (None for test runs). ``cpu_s`` and ``peak_rss_kb`` come from wait4 on the jail and per-child rusage
    (peak = the largest single process); after a wall-clock kill they can undercount. ``isolation`` says what
    actually protected the run: "bwrap", "rlimit-only+netns", "rlimit-only", or "" when rejected.
    """

    status: Status
    reason: str
    tests: list[TestOutcome] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    exit_code: int | None = None
    signal: int | None = None
    wall_s: float = 0.0
    cpu_s: float = 0.0
    peak_rss_kb: int = 0
    isolation: str = ""
    violations: list[dict[str, Any]] = field(default_factory=list)
    """Violations detected (``{"kind": ViolationKind, "detail", "test": index}``), contained but reported."""

    @property
    def passed(self) -> int:
        return sum(t.passed for t in self.tests)

    @property
    def pass_fraction(self) -> float:
        """Passed tests over all tests (0.0 without tests). For a reward, prefer ``pass_fraction(result)``,
        which abstains (None) on rejected runs."""
        return self.passed / len(self.tests) if self.tests else 0.0

    def to_dict(self) -> dict[str, Any]:
        data = _fields_dict(self)
        data["tests"] = [t.to_dict() for t in self.tests]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunResult:
        data = _known(cls, data)
        if data.get("status") not in _STATUSES:
            raise ValueError(f"unknown status {data.get('status')!r}")
        data["tests"] = [TestOutcome.from_dict(t) for t in data.get("tests", [])]
        return cls(**data)


def pass_fraction(result: RunResult) -> float | None:
    """Reward helper: fraction of tests passed; None (abstain) when the sandbox rejected the run, since that is
    an infrastructure failure rather than the code's."""
    if result.status == "rejected":
        return None
    return result.pass_fraction
