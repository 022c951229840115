"""Which bus ``rlar status|tail|tools`` attach to (``--run DIR``, ``--nats embedded``, the newest live run
wherever its directory is), and that they say so on stderr (subprocesses, as an operator runs them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bus.embedded import live_runs, serve
from tests.support.env import actor_env


def _rlar(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rlar.app.cli", "--log-level", "WARNING", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=actor_env(),
        cwd=cwd,
    )


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


def test_tails_default_line_shows_each_responses_status_score_and_reason() -> None:
    from bus.codec import encode
    from bus.messages import RewardGroup, ScoredItem
    from rlar.app.tail import format_line

    items = [
        ScoredItem(index=0, status="ok", score=1.0, reason="capitalised correctly"),
        ScoredItem(index=1, status="ok", score=0.4, reason="'appel' is 80% like 'Apple'"),
        ScoredItem(index=2, status="error", reason="ValueError: boom\n  File 'my_rewards.py', line 3, in f"),
        ScoredItem(index=3, status="abstain", reason="no reference"),
    ]
    items += [ScoredItem(index=i, status="ok", score=0.0, reason="x" * 200) for i in range(4, 10)]
    group = RewardGroup(
        prompt_id="cap/e0/1",
        generation="g",
        task="capitalize",
        tool="capitalised",
        tool_version=2,
        items=items,
    )
    line = format_line("rlar.rewards.capitalize", encode(group), as_json=False, at=0.0)
    assert "tool=capitalised tool_version=2" in line
    assert "ok 8 error 1 abstain 1 items=[" in line
    assert "0 ok 1.00 \"capitalised correctly\", 1 ok 0.40 \"'appel' is 80% like 'Apple'\"" in line
    assert '2 error "ValueError: boom", 3 abstain "no reference", 4 ok 0.00 "xxx' in line
    assert line.endswith(", +4 more]") and len(line) < 420, line


def test_status_writes_an_actors_heartbeat_compactly_without_raw_dicts() -> None:
    from rlar.app.status import render

    executor = {
        "requests": 120,
        "inputs": 960,
        "cache_hits": 0,
        "timeouts": 2,
        "worker_deaths": 0,
        "spawns": 2,
        "errors": 3,
        "abstains": 5,
    }
    actor = {
        "actor": "reward",
        "instance": "reward-host-1",
        "host": "h",
        "pid": 42,
        "state": "running",
        "uptime_s": 125.0,
        "age_s": 1.0,
        "info": {
            "kinds": ["rule", "metric"],
            "inflight": {"rule": 0, "metric": 0},
            "batches": 40,
            "executors": {"rule": executor, "metric": {k: 0 for k in executor}},
        },
        "counters": {
            "requests": 120,
            "rewards": 968,
            "cached": 0,
            "rule.ok": 900,
            "rule.error": 3,
            "rule.abstain": 5,
            "metric.ok": 60,
        },
    }
    line = render({"actors": [actor], "streams": [], "consumers": []}).splitlines()[1]
    assert "{" not in line and "inflight" not in line and "cached" not in line, line
    assert (
        "kinds=rule,metric batches=40 executors(rule(requests=120 inputs=960 timeouts=2 spawns=2 errors=3 "
        "abstains=5))" in line
    )
    assert line.endswith("abstains=5)) metric(ok=60) requests=120 rewards=968 rule(abstain=5 error=3 ok=900)")
    assert len(line) < 280, len(line)
