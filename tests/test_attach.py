"""Which bus ``rlar status|tail|tools`` attach to (``--run DIR``, ``--nats embedded``, the newest live run
wherever its directory is), and that they say so on stderr (subprocesses, as an operator runs them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bus.embedded import live_runs, serve
from tests.conftest import actor_env


def _rlar(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rlar.cli", "--log-level", "WARNING", *args],
                          capture_output=True, text=True, timeout=timeout, env=actor_env(), cwd=cwd)  # fmt: skip


def test_tools_and_status_on_an_embedded_bus_say_it_is_fresh_and_belongs_to_no_run(tmp_path: Path) -> None:
    r = _rlar(tmp_path, "tools", "list", "--json", "--nats", "embedded")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "fresh, empty bus" in r.stderr and "no run" in r.stderr and "Traceback" not in r.stderr
    assert {"exact_match", "math_verify"} <= {t["name"] for t in json.loads(r.stdout)}
    r = _rlar(tmp_path, "tools", "show", "exact_match", "--nats", "embedded")
    assert r.returncode == 0 and json.loads(r.stdout)["spec"]["name"] == "exact_match", r.stderr[-2000:]
    r = _rlar(tmp_path, "status", "--json", "--window", "0.1", "--nats", "embedded")
    assert r.returncode == 0 and json.loads(r.stdout)["actors"] == [], r.stderr[-2000:]
    assert "fresh, empty bus" in r.stderr
    r = _rlar(tmp_path, "tail", "--nats", "embedded", "--timeout", "1")
    assert r.returncode == 2 and "--run DIR" in r.stderr and "Traceback" not in r.stderr


def test_a_run_anywhere_is_found_named_and_chosen_with_run(tmp_path: Path) -> None:
    """Two live runs in directories outside ./runs: without flags the newest is used and named; --run picks
    either; a run that has ended is refused with a reason, never replaced by another bus."""
    elsewhere, first, second = tmp_path / "cwd", tmp_path / "a" / "run1", tmp_path / "b" / "run2"
    elsewhere.mkdir()
    with serve("embedded", first, live_run=True) as url1:
        with serve("embedded", second, live_run=True) as url2:
            assert [r.url for r in live_runs(elsewhere / "runs")][:2] == [url2, url1]
            r = _rlar(elsewhere, "status", "--json", "--window", "0.1")
            assert r.returncode == 0, r.stderr[-2000:]
            assert f"bus {url2}" in r.stderr and f"run {second}" in r.stderr and "newest live run" in r.stderr
            assert "1 other live run" in r.stderr
            r = _rlar(elsewhere, "tools", "list", "--json", "--run", str(first))
            assert r.returncode == 0 and json.loads(r.stdout) == [], r.stderr[-2000:]
            assert f"bus {url1}" in r.stderr and f"run {first} (--run)" in r.stderr
            r = _rlar(elsewhere, "tools", "decisions", "--json", "--run", str(second))
            assert r.returncode == 0 and r.stdout == "" and f"bus {url2}" in r.stderr, r.stderr[-2000:]
        r = _rlar(elsewhere, "status", "--run", str(second))
        assert r.returncode == 1 and "not running" in r.stderr and "Traceback" not in r.stderr
        r = _rlar(elsewhere, "status", "--json", "--window", "0.1")
        assert r.returncode == 0 and f"bus {url1}" in r.stderr and "other live run" not in r.stderr
    assert live_runs(elsewhere / "runs") == []
    r = _rlar(elsewhere, "status", "--run", str(first), "--nats", "nats://127.0.0.1:1")
    assert r.returncode == 1 and "not both" in r.stderr
    r = _rlar(elsewhere, "tail", "--run", str(tmp_path / "nowhere"))
    assert r.returncode == 1 and "no such directory" in r.stderr
