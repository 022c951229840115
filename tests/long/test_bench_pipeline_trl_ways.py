"""``rlar bench pipeline``: TRL, sync and async ways run the same work in one run and report comparable figures,
and every setting the report gives is the one that was used (the judge endpoint counts what it saw)."""

from __future__ import annotations

import pytest

from rlar.app.benchmarks.pipeline import PipelineSettings, run
from rlar.benchmarks.trl_async_peer import missing


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_trl_sync_and_async_ways_do_the_same_work_and_the_judge_sees_the_configured_concurrency() -> None:
    concurrency = 8
    doc = run(
        PipelineSettings(
            quick=True,
            prompts=4,
            group_size=4,
            max_new_tokens=8,
            reward="judge",
            judge_latency_ms=300,
            judge_concurrency=concurrency,
            baseline="trl,trl-async" if missing() else "trl",  # where it cannot run: the report says why
            async_timeout_s=400,
            weight_sync="http",
        )
    )
    n = doc["samples_per_step"]
    if missing():
        assert doc["trl_async"] == {"skipped": True, "reason": "; ".join(missing())}
        assert doc["async_over_trl_async"] is None and doc["cpu_s_per_step"]["trl_async"] is None
    assert n == 16 and doc["trl"]["steps"] == doc["sync"]["steps"] == doc["async"]["steps"] == 2
    assert (
        doc["trl"]["samples"] == doc["sync"]["samples"] == doc["async"]["samples"] == 2 * n
    )  # identical work
    assert doc["async"]["crashes"] == 0 and doc["async"]["staleness_max"] <= 2 and doc["async"]["complete"]
    # the learner's weights went over its HTTP server (the setting used) and the rollout loaded them
    assert set(doc["async"]["weights_announced"]) == {"http"} and doc["async"]["rollout_weight_loads"] >= 1
    # every way's torch processes kept freed memory (the default), each reporting what it set
    assert doc["settings"]["keep_freed_memory"] is True
    assert doc["trl"]["malloc"] == doc["sync"]["malloc"] == "freed memory kept"
    assert doc["async"]["malloc_kept"] == {"rollout": True, "learner": True}
    # two measured steps are far under the CPU window a figure needs: each way's window is reported and flagged
    assert (
        doc["cpu_window_s"]["sync"] == doc["sync"]["wall_s"]
        and doc["cpu_window_s"]["async"] == doc["async"]["wall_s"]
    )
    assert doc["cpu_note"] is not None and "more --steps" in doc["cpu_note"]
    by_process = doc["async"]["cpu_s_per_step_by_process"]
    assert {"rollout", "learner", "reward", "feeder", "nats-server", "bench"} <= set(by_process)
    assert sum(by_process.values()) == pytest.approx(doc["async"]["cpu_s_per_step"], abs=1e-3)
    # 16 completions per step, each a judge call of 0.3 s: the tool keeps exactly its limit in flight
    for way in ("trl", "sync", "async"):
        seen = doc["judge_seen"][way]
        assert seen["max_in_flight"] == concurrency, (way, seen)
        assert seen["calls"] >= 2 * n, (way, seen)
    for way in ("trl", "sync", "async"):
        assert doc[f"{way}_samples_per_s"] > 0
        assert doc["cpu_s_per_step"][way] == doc[way]["cpu_s_per_step"] > 0, way
    assert doc["async_over_trl"] == pytest.approx(
        doc["async_samples_per_s"] / doc["trl_samples_per_s"], rel=0.02
    )
    assert doc["async_over_sync"] == pytest.approx(
        doc["async_samples_per_s"] / doc["sync_samples_per_s"], rel=0.02
    )
    assert doc["async_over_limit"] == pytest.approx(
        doc["async_samples_per_s"] / doc["limit_samples_per_s"], rel=0.02
    )
    assert doc["limit_stage"] in ("rollout", "reward", "learner")
    machine = n / max(
        max(doc["sync"]["pipeline_stage_s"].values()), doc["sync"]["cpu_s_per_step"] / doc["cores"]
    )
    assert doc["machine_limit_samples_per_s"] == pytest.approx(machine, rel=0.02)
    assert doc["machine_limit_samples_per_s"] <= doc["limit_samples_per_s"] + 0.01
    assert doc["async_over_machine_limit"] == pytest.approx(
        doc["async_samples_per_s"] / doc["machine_limit_samples_per_s"], rel=0.02
    )
    # per-stage times of every way: 16 judge calls of 0.3 s, 8 at a time, are two waves: >= 0.6 s a step
    assert set(doc["stage_s_per_step"]["trl"]) == {"generate", "reward", "train"}
    assert {"rollout", "generate", "reward", "learner"} <= set(doc["stage_s_per_step"]["async"])
    for way, key in (("trl", "reward"), ("sync", "reward"), ("async", "reward")):
        assert doc["stage_s_per_step"][way][key] >= 0.55, (way, doc["stage_s_per_step"][way])
    assert doc["bound_stage"]["trl"] in ("generate", "reward", "train")
    assert doc["bound_stage"]["sync"] in ("rollout", "reward", "learner")
    assert doc["bound_stage"]["async"] == max(
        doc["async"]["stage_s_per_step"], key=doc["async"]["stage_s_per_step"].get
    )
    for way in ("trl", "sync", "async"):  # CPU seconds per step over seconds per step
        assert doc["cores_busy"][way] == pytest.approx(
            doc["cpu_s_per_step"][way] * doc[f"{way}_samples_per_s"] / n, rel=0.01, abs=0.002
        )
    stages = doc["sync"]["pipeline_stage_s"]
    assert doc["limit_samples_per_s"] == pytest.approx(n / max(stages.values()), rel=0.02)
