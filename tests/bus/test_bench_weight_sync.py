"""``rlar bench weight-sync`` end to end at two small sizes: every route moves a version from this side to a reader
process, and each case reports what it timed (the reader verified the announced bytes; broadcast: the
receiver got every buffer)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support.env import REPO, actor_env


def test_every_route_delivers_a_version_and_reports_its_speed() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "rlar.app.cli",
            "bench",
            "weight-sync",
            "--sizes",
            "1,2",
            "--routes",
            "filesystem,objstore,broadcast,http",
        ],
        cwd=REPO,
        env=actor_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [(c["mb"], c["route"]) for c in doc["cases"]] == [
        (mb, r) for mb in (1.0, 2.0) for r in ("filesystem", "objstore", "broadcast", "http")
    ]  # a second size after a broadcast: the reader process is not confused by the broadcast's announcement
    cases = {c["route"]: c for c in doc["cases"] if c["mb"] == 2.0}
    for route, c in cases.items():
        assert c["bytes"] >= 2 * 2**20 and c["total_s"] > 0 and c["mb_per_s"] > 0, route
        assert c["total_s"] >= c["publish_s"] - 1e-3, route  # the end is when the reader had the bytes
    assert all(c["heard_s"] >= 0 for r, c in cases.items() if r != "broadcast")
