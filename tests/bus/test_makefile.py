"""The Makefile's test targets: pytest's exit code 5 (no tests collected) must fail every one of them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.env import REPO

TARGETS = (
    "pytest",
    "test-unit",
    "test-bus",
    "test-e2e",
    "test-long",
    "test-real",
    "test-fast",
    "test-slow",
    "test-chaos",
)


def _env() -> dict[str, str]:
    """This environment without what an outer make passes down (``make test JOBS=3`` must not set the inner
    make's variables)."""
    drop = {"MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES", "MAKELEVEL", "JOBS"}
    return {k: v for k, v in os.environ.items() if k not in drop}


def _make(target: str, python: Path, *variables: str) -> subprocess.CompletedProcess[str]:
    # PY= a stand-in interpreter; -o: take the venv as installed (this test is about the recipes, not pip).
    return subprocess.run(
        [
            "make",
            "--no-print-directory",
            "-s",
            "-o",
            ".venv/.rlar-installed",
            target,
            f"PY={python}",
            *variables,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )


def _fake_python(tmp_path: Path, rc: int) -> Path:
    exe = tmp_path / f"python-exits-{rc}"
    exe.write_text(f'#!/bin/sh\necho "pytest $*" >> "{tmp_path}/calls"\nexit {rc}\n')
    exe.chmod(0o755)
    return exe


@pytest.mark.parametrize("target", TARGETS)
def test_a_target_fails_when_pytest_collects_nothing(tmp_path: Path, target: str) -> None:
    done = _make(target, _fake_python(tmp_path, 5))
    assert done.returncode != 0, done.stdout + done.stderr
    assert "collected no tests" in done.stdout + done.stderr
    assert (tmp_path / "calls").read_text().startswith("pytest -m pytest")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rc", [0, 1, 2])
def test_a_target_passes_pytest_s_own_exit_code_on(tmp_path: Path, target: str, rc: int) -> None:
    done = _make(target, _fake_python(tmp_path, rc))
    assert (done.returncode == 0) == (rc == 0), done.stdout + done.stderr
    assert "collected no tests" not in done.stdout + done.stderr
    assert os.path.exists(tmp_path / "calls")


@pytest.mark.parametrize("target", TARGETS)
def test_a_target_runs_pytest_in_xdist_workers_that_keep_each_file_and_class_on_one_worker(
    tmp_path: Path, target: str
) -> None:
    assert _make(target, _fake_python(tmp_path, 0)).returncode == 0
    cores = int(subprocess.run(["nproc"], capture_output=True, text=True, env=_env(), check=True).stdout)
    workers = f" -n {cores + 1} --dist loadscope --no-loadscope-reorder "  # one more than the cores
    assert workers in (tmp_path / "calls").read_text()
    assert _make(target, _fake_python(tmp_path, 0), "JOBS=1").returncode == 0
    assert (
        " -n 1 --dist loadscope --no-loadscope-reorder " in (tmp_path / "calls").read_text().splitlines()[-1]
    )


def _fake_mypy(tmp_path: Path, rc: int) -> Path:
    exe = tmp_path / f"mypy-exits-{rc}"
    exe.write_text(
        f'#!/bin/sh\necho "mypy ran" >> "{tmp_path}/calls"\necho "mypy says: exit {rc}"\nexit {rc}\n'
    )
    exe.chmod(0o755)
    return exe


@pytest.mark.parametrize(("pytest_rc", "mypy_rc"), [(0, 0), (0, 1), (1, 0), (5, 0), (2, 2)])
def test_make_test_runs_the_type_check_beside_the_tests_and_fails_if_either_fails(
    tmp_path: Path, pytest_rc: int, mypy_rc: int
) -> None:
    # -o lint: the format check and lint are not this recipe's business (they read the whole working tree)
    done = _make(
        "test", _fake_python(tmp_path, pytest_rc), f"MYPY={_fake_mypy(tmp_path, mypy_rc)}", "-o", "lint"
    )
    out = done.stdout + done.stderr
    assert (done.returncode == 0) == (pytest_rc == 0 and mypy_rc == 0), out
    calls = (tmp_path / "calls").read_text()
    assert "mypy ran" in calls and "pytest -m pytest" in calls
    assert f"mypy says: exit {mypy_rc}" in out  # its output is shown after the tests, pass or fail
    assert ("the type check failed" in out) == (mypy_rc != 0)
    assert ("collected no tests" in out) == (pytest_rc == 5)
