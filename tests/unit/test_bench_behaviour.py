"""rlar bench behaviour (rlar/benchmarks/behaviour.py): the figures a refactor must leave unchanged, without their
timings, and their difference."""

from __future__ import annotations

import json
from pathlib import Path

from rlar.benchmarks.behaviour import differences, main, strip_timings


def test_timings_are_dropped_at_every_depth_and_figures_kept() -> None:
    raw = {"accuracy": 0.9, "wall_s": 3.1, "per": [{"misses": ["a"], "tool_s": 1.0, "median_latency": 2}]}
    assert strip_timings(raw) == {"accuracy": 0.9, "per": [{"misses": ["a"]}]}
    assert strip_timings({"time_s_max": 2.0, "reason": "passed; p95 0.05 ms, 3 probes"}) == {
        "reason": "passed; p95 <duration>, 3 probes"
    }


def test_a_changed_figure_and_a_missing_file_are_differences_an_equal_one_is_not() -> None:
    before = {"math": {"a.jsonl": {"correct": 10, "misses": ["x"]}, "b.jsonl": {"correct": 1}}}
    after = {"math": {"a.jsonl": {"correct": 10, "misses": ["y"]}}}
    assert differences(before, after) == [
        '/math/a.jsonl/misses[0]: "x" -> "y"',
        "/math/b.jsonl: only in before",
    ]
    assert differences(before, before) == []
    # a list of one length is compared item by item: the path names the item
    assert differences({"l": [1, {"a": 2}]}, {"l": [1, {"a": 3}]}) == ["/l[1]/a: 2 -> 3"]


def test_compare_exits_1_on_a_difference_and_0_on_none(tmp_path: Path, capsys) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"sets": {"math": {"f": {"correct": 3}}}}))
    b.write_text(json.dumps({"sets": {"math": {"f": {"correct": 2}}}}))
    assert main(["--compare", str(a), str(a)]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["identical"] is True
    assert main(["--compare", str(a), str(b)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "/math/f/correct: 3 -> 2" and json.loads(out[-1])["differences"] == 1
