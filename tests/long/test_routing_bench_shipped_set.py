"""``rlar bench routing`` on the shipped set: held out by type, the router beats every baseline."""

from __future__ import annotations

import random

import pytest

from rlar.agent.base import OfflineAgentConfig
from rlar.agent.offline import OfflineAgent
from rlar.routing.exemplars import default_path, group_of


@pytest.fixture(autouse=True)
def no_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


@pytest.mark.slow
@pytest.mark.timeout(
    900
)  # 104 type folds and 1135 leave-one-out routers: ~1.5 min of CPU, 5-10 min on a busy host
def test_the_shipped_set_held_out_by_type_beats_every_baseline() -> None:
    from rlar.benchmarks.routing import held_out_figures
    from rlar.benchmarks.routing_set.measured import measured_sets
    from rlar.routing.exemplars import load_labelled
    from rlar.tools.base import builtin_specs

    # The held-out figures alone: routing the set as deployed is the business of the tests above and below. The
    # records our generator writes (the measured held-out sets joined to the shipped set double the folds and the
    # CPU: their held-out figures are `rlar bench routing --save`'s, in docs/routing.md).
    joined = {r["id"] for r in measured_sets(random.Random(0))}
    records = [r for r in load_labelled(default_path()) if r["id"] not in joined]
    embed = OfflineAgent(OfflineAgentConfig()).embedder
    doc = held_out_figures(records, builtin_specs(), embed, random_trials=50, tools_held_out=False)
    lo = doc["leave_one_type_out"]
    assert len(records) >= 600 and len({group_of(r) for r in records}) >= 40
    assert (
        lo["accuracy"]
        > doc["majority_eligible"]["accuracy"] + 0.15
        > doc["random_eligible"]["expected_accuracy"]
    )
    assert doc["p_value_vs_random"] < 1e-12 and lo["calibration"]["ece"] < 0.1
    assert doc["in_distribution"]["accuracy"] >= lo["accuracy"]
