"""HumanEval: every one of the 164 canonical solutions passes through the bus, scored by a reward worker and a
sandbox actor (the other tasks: tests/bus/test_every_task_scored.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bus.client import Bus
from rlar.sandbox import check_sandbox
from rlar.tasks.builtin import builtin_task
from tests.support.scoring import Case, score_with_reward_service

SANDBOX_PROBLEM = check_sandbox()
pytestmark = pytest.mark.skipif(SANDBOX_PROBLEM is not None, reason=f"sandbox unusable: {SANDBOX_PROBLEM}")


@pytest.mark.slow
async def test_all_164_humaneval_canonical_solutions_pass_through_the_bus(
    bus: Bus, nats_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RLAR_TEST_JUDGE_KEY", "local")
    records = (
        builtin_task("humaneval", split="train").records + builtin_task("humaneval", split="test").records
    )
    assert len(records) == 164
    cases: list[Case] = [
        (f"he:{r.id}", r, (("code_tests", 1.0),), r.metadata["canonical_solution"], "    return None\n")
        for r in records
    ]
    results = await score_with_reward_service(bus, nats_url, tmp_path, cases, 900)
    passed = [label for label, *_ in cases if results[(label, "right")][:2] == ("ok", 1.0)]
    assert len(passed) == 164, [results[(label, "right")] for label, *_ in cases if label not in passed][:5]
    assert all(results[(label, k)][:2] == ("ok", 0.0) for label, *_ in cases for k in ("wrong", "empty"))
