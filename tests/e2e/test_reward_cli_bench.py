"""``rlar bench reward`` as an operator runs it (a subprocess): its figures as JSON on the last line."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import rlar_cli


@pytest.mark.slow
def test_bench_reward_prints_its_figures_as_json_on_the_last_line() -> None:
    r = rlar_cli("bench", "reward", "--json", "--quick", timeout=180)
    assert r.returncode == 0, r.stderr[-3000:]
    doc = json.loads(r.stdout.strip().splitlines()[-1])
    assert doc["sandbox_exec_per_s_1_worker"] > 0 and doc["sandbox_exec_per_s_2_workers"] > 0
    assert doc["rule_scores_per_s"] > 0
    assert set(doc["judge_rewards_per_s"]) == {"1", "2"} and doc["judge_scaling_vs_linear"]["1"] == 1.0
