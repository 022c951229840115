"""``rlar bench routing`` and ``rlar tools route``: the same decisions on the same file, figures as JSON, the
held-out machinery on a small file; the full held-out benchmark on the shipped set is
tests/long/test_routing_bench_shipped_set.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rlar.agent.base import OfflineAgentConfig
from rlar.agent.offline import OfflineAgent
from rlar.app.cli import main
from rlar.benchmarks.routing import binomial_tail, run
from rlar.routing.exemplars import default_path, load_labelled
from tests.support.env import REPO, actor_env

DATA = default_path()


@pytest.fixture(autouse=True)
def no_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """Every 25th record of the shipped set, a handful of types."""
    path = tmp_path / "small.jsonl"
    path.write_text("".join(line + "\n" for line in DATA.read_text().splitlines()[::25]))
    return path


def test_binomial_tail_is_exact_on_small_cases() -> None:
    assert binomial_tail(3, 0, 0.5) == 1.0
    assert binomial_tail(3, 3, 0.5) == pytest.approx(0.125)
    assert binomial_tail(4, 2, 0.5) == pytest.approx(11 / 16)


def test_tools_route_and_the_bench_decide_alike_on_the_same_file(
    small: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # In-process (the CLI's own entry point), so the model libraries are loaded once.
    assert main(["tools", "route", str(small), "--backend", "offline"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.strip().splitlines()]
    records = [json.loads(x) for x in small.read_text().splitlines()]
    assert [x["line"] for x in lines] == list(range(1, len(records) + 1)) and {
        x["backend"] for x in lines
    } == {"offline"}
    assert all(len(x["signature"]) == 24 and 0 < x["confidence"] < 1 for x in lines)
    right = [
        (not r["acceptable"] and x["none_fit"])
        or (bool(x["tools"]) and x["tools"][0]["tool"] in r["acceptable"])
        for x, r in zip(lines, records, strict=True)
    ]
    assert (
        main(
            [
                "bench",
                "routing",
                "--data",
                str(small),
                "--json",
                "--trials",
                "20",
                "--no-held-out",
                "--backend",
                "offline",
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert doc["records"] == len(records) and doc["agent"]["correct"] == sum(right)
    assert doc["agent"]["bank_overlap"] == 1.0, "these records are the router's own exemplars"
    assert 0 <= doc["random"]["expected_accuracy"] < doc["random_eligible"]["expected_accuracy"] < 1
    assert "leave_one_type_out" not in doc and "p_value_vs_random" in doc


async def test_the_held_out_figures_on_a_small_file(small: Path) -> None:
    agent = OfflineAgent(OfflineAgentConfig())
    doc = await run(small, agent, random_trials=20, tools_held_out=False)
    lo = doc["leave_one_type_out"]
    assert lo["n"] == doc["records"] and set(lo["by_type"]) == {
        json.loads(x)["type"] for x in small.read_text().splitlines()
    }
    assert 0 <= lo["calibration"]["ece"] <= 1 and lo["calibration"]["bins"] and 0 < lo["mean_confidence"] < 1
    assert {"in_distribution", "descriptions_only", "weights", "majority_eligible"} <= set(doc)
    # Confidences of the held-out decisions, from a correctness model that never saw their format, and the
    # risk–coverage curve at selective routing's threshold, for this file's formats and kinds.
    assert doc["kind_held_out"]["n"] == lo["n"] and 0 < doc["correctness"]["threshold"] <= 1
    for figure in (lo, doc["kind_held_out"], doc["agent"]):
        conf = figure["confidence"]
        curve = [r["coverage"] for r in conf["risk_coverage"]]
        assert curve == sorted(curve, reverse=True) and curve[0] == 1.0
    assert doc["agent"]["confidence"]["threshold"] is not None, (
        "the offline backend's confidence is calibrated"
    )


def test_the_cli_lists_the_routing_commands_without_importing_model_libraries() -> None:
    code = "import sys; from rlar.app.cli import build_parser; build_parser(); print('torch' in sys.modules)"
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=actor_env(), cwd=REPO
    )
    assert r.returncode == 0 and r.stdout.strip() == "False", r.stderr


async def test_the_held_out_sets_are_routed_as_deployed_the_measured_ones_as_exemplars(
    tmp_path: Path,
) -> None:
    """``data/routing/heldout_*.jsonl``. The measured ones (``heldout_unseen``, ``heldout_short_answers*``,
    ``heldout_public_formats``: figures in docs/benchmarks.md from when they were unseen) are exemplars of the
    labelled set now (``rlar.benchmarks.routing_set.measured``), so routing them is routing the router's own
    exemplars. The sets kept for measuring (``heldout_blind7``, read and fixed by class in the seventh round but not
    joined; the blind ``heldout_blind8`` and ``heldout_blind9``) are routed by ``rlar bench routing`` and reported in
    docs/benchmarks.md; nothing is tuned or asserted on them here."""
    from rlar.benchmarks.routing import _unseen_figures, unseen_paths
    from rlar.benchmarks.routing_set.measured import MEASURED
    from rlar.tools.base import builtin_specs

    paths = unseen_paths()
    blind = {"heldout_blind7.jsonl", "heldout_blind8.jsonl", "heldout_blind9.jsonl"}  # reported only
    assert {p.name for p in paths} == blind | set(MEASURED)
    joined = [p for p in paths if p.name in MEASURED]
    # Every record is checked to be an exemplar (below); routing them all is `rlar bench routing`'s work: here the
    # records of each set's first 20 formats (the sets grew to 744 records; routing them all cost a minute of CPU).
    sampled = []
    for p in joined:
        records = load_labelled(p)
        first = list(dict.fromkeys(r["type"] for r in records))[:20]
        (tmp_path / p.name).write_text(
            "".join(json.dumps(r) + "\n" for r in records if r["type"] in first), encoding="utf-8"
        )
        sampled.append(tmp_path / p.name)
    agent = OfflineAgent(OfflineAgentConfig())
    try:
        figures = await _unseen_figures(agent, builtin_specs(), sampled)
    finally:
        await agent.aclose()
    assert set(figures) == set(MEASURED)
    bank = {(r["id"], r["type"]) for r in load_labelled(DATA)}
    for p in joined:
        assert {(r["id"], r["type"]) for r in load_labelled(p)} <= bank, (
            f"{p.name}: its records are exemplars"
        )
    for name, fig in figures.items():
        assert fig["strict_accuracy"] >= 0.75, (name, fig["mistakes"])  # 0.81-1.00 at the last fit
        curve = fig["confidence"]["risk_coverage"]
        assert curve[0] == {
            "threshold": 0.0,
            "coverage": 1.0,
            "precision": fig["strict_accuracy"],
            "kept": fig["records"],
        }
