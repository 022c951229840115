"""The labelled routing set and ``rlar bench routing``: the offline backend against random choice, and
``rlar tools route`` as the standalone routing check. No accuracy number is asserted: the offline router
must beat the random baseline measured in the same run, by a margin no chance can explain."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from rlar.agent.base import OfflineAgentConfig
from rlar.agent.offline import OfflineAgent
from rlar.benchmarks.routing import binomial_tail, load_records, run
from rlar.cli import main
from rlar.tools import builtin_specs
from tests.conftest import REPO, actor_env

DATA = REPO / "data" / "routing_labelled.jsonl"


def test_the_labelled_set_is_large_varied_and_uses_registered_tool_names() -> None:
    records = load_records(DATA)
    names = {s.name for s in builtin_specs()}
    assert len(records) >= 200
    assert (
        len({r["task"] for r in records}) >= 8
        and len({r["task_type"] for r in records if r["task_type"]}) >= 8
    )
    assert all(set(r["acceptable"]) <= names for r in records)
    assert len({r["id"] for r in records}) == len(records)
    kinds = Counter(bool(r["acceptable"]) for r in records)
    assert kinds[False] >= 10, "some records have no fitting tool (synthesis expected)"


def test_binomial_tail_is_exact_on_small_cases() -> None:
    assert binomial_tail(3, 0, 0.5) == 1.0
    assert binomial_tail(3, 3, 0.5) == pytest.approx(0.125)
    assert binomial_tail(4, 2, 0.5) == pytest.approx(11 / 16)


async def test_the_offline_router_beats_random_choice_measured_in_the_same_run() -> None:
    agent = OfflineAgent(OfflineAgentConfig())
    doc = await run(DATA, agent, seed=0, random_trials=50, embed=agent.embedder)
    ag, rnd = doc["agent"], doc["random"]
    assert doc["records"] >= 200 and ag["failed_calls"] == 0 and ag["backend"] == "offline"
    # The sampled baseline agrees with its exact expectation (the baseline itself is sound) ...
    assert (
        abs(rnd["sampled_accuracy_mean"] - rnd["expected_accuracy"]) < 4 * rnd["sampled_accuracy_std"] + 0.01
    )
    # ... and the router is above it by far more than chance allows.
    assert ag["accuracy"] > rnd["expected_accuracy"] and doc["p_value_vs_random"] < 1e-6
    assert ag["accuracy"] > doc["random_eligible"]["expected_accuracy"], (
        "the cosine and the rules add to eligibility"
    )
    assert set(ag["by_task"]) == {r["task"] for r in load_records(DATA)}
    assert {"ablation_semantic", "ablation_rules"} <= set(doc)


def test_rlar_tools_route_prints_one_json_line_per_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    records = [
        {"task": "arith", "query": "12+7=", "reference": "19", "metadata": {"task_type": "arithmetic"}},
        {"task": "ifeval", "query": "Tips?", "reference": None, "metadata": {"description": "Exactly three bullet points."}},
        {"task": "humaneval", "query": "def f():", "reference": {"test": "def check(c): pass", "entry_point": "f"}},
    ]  # fmt: skip
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    # In-process (the CLI's own entry point), so the model libraries are not imported a second time.
    assert main(["tools", "route", str(path), "--backend", "offline"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.strip().splitlines()]
    assert [x["line"] for x in lines] == [1, 2, 3] and {x["backend"] for x in lines} == {"offline"}
    assert [t["tool"] for t in lines[0]["tools"]] == ["math_verify"]
    assert lines[1]["none_fit"] and lines[1]["constraints"] == [{"rule": "bullets", "min": 3, "max": 3}]
    assert [t["tool"] for t in lines[2]["tools"]] == ["code_tests"]
    assert all(len(x["signature"]) == 24 for x in lines)


def test_rlar_bench_routing_prints_its_figures_as_json_on_the_last_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    small = tmp_path / "small.jsonl"
    small.write_text("".join(line + "\n" for line in DATA.read_text().splitlines()[::20]))
    assert main(["bench", "routing", "--data", str(small), "--json", "--trials", "20"]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert doc["records"] == len(small.read_text().splitlines()) and doc["agent"]["backend"] == "offline"
    for key in ("accuracy", "strict_accuracy", "by_task", "mean_latency_ms"):
        assert key in doc["agent"]
    assert 0 <= doc["random"]["expected_accuracy"] < 1 and "p_value_vs_random" in doc


def test_the_cli_lists_the_routing_commands_without_importing_model_libraries() -> None:
    code = "import sys; from rlar.cli import build_parser; build_parser(); print('torch' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=actor_env(),
                       cwd=REPO)  # fmt: skip
    assert r.returncode == 0 and r.stdout.strip() == "False", r.stderr
