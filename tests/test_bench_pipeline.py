"""``rlar bench pipeline``: both ways run the same work in one run and report comparable figures."""

from __future__ import annotations

import json
import urllib.request

import pytest

from rlar.benchmarks.pipeline import PipelineSettings, ScoringJudge, run


def test_the_judge_endpoint_scores_by_similarity_after_its_fixed_latency() -> None:
    judge = ScoringJudge(delay_s=0.05)
    try:

        def ask(response: str) -> str:
            user = f"# Rubric\nr\n\n# Query\n1+1=\n\n# Reference answer\n2\n\n# Response to evaluate\n{response}\n\nEnd with"
            body = json.dumps({"model": "m", "messages": [{"role": "user", "content": user}]}).encode()
            req = urllib.request.Request(
                judge.url + "/v1/messages", body, {"content-type": "application/json"}
            )
            with urllib.request.urlopen(req, timeout=5) as r:
                return str(json.loads(r.read())["content"][0]["text"])

        assert ask("2") == "Score: 10.00" and ask("xyz") == "Score: 0.00"
        assert judge.calls == 2
    finally:
        judge.close()


@pytest.mark.slow
@pytest.mark.timeout(480)
def test_sync_and_async_ways_both_train_and_report_throughput_and_ratios() -> None:
    doc = run(PipelineSettings(quick=True, prompts=4, group_size=4, max_new_tokens=8, hidden_size=128,
                               async_timeout_s=300))  # fmt: skip
    assert doc["sync"]["steps"] == 3 and doc["async"]["steps"] == 3 and doc["async"]["complete"]
    assert doc["sync"]["samples"] == doc["async"]["samples"] == 3 * 4 * 4  # identical work
    assert doc["async"]["crashes"] == 0 and doc["async"]["staleness_max"] <= 2
    assert doc["sync_samples_per_s"] > 0 and doc["async_samples_per_s"] > 0
    assert doc["async_over_sync"] == pytest.approx(
        doc["async_samples_per_s"] / doc["sync_samples_per_s"], rel=0.02
    )
    assert 0 <= doc["sync_learner_idle_frac"] < 1 and 0 <= doc["async_learner_idle_frac"] < 1
    assert doc["limit_stage"] in ("gen", "reward", "train") and doc["judge_delay_s"] > 0
