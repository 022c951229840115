"""Reward modes for ablations: the feeder attaches the mode's tools; ``rlar ablate`` sets each mode up."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from actors.feeder import Feeder, FeederConfig
from bus import subjects
from bus.client import Bus, wait_for
from bus.config import NatsConfig
from bus.embedded import EmbeddedServer
from bus.messages import Prompt
from bus.topology import TopologyConfig, declare, ensure_topology
from rlar.app.ablate import mode_overrides
from rlar.eval.ablation_stats import interval, summarize_runs
from tests.support.reward_tools import running


@pytest.fixture
async def own_bus(tmp_path: Path) -> AsyncIterator[tuple[Bus, str]]:
    """A fresh server: prompt ids are de-duplicated per stream, so feeders must not share one with other tests."""
    server = EmbeddedServer(tmp_path / "nats")
    server.start()
    bus = await Bus.connect(NatsConfig(url=server.url), name="test-ablate")
    await ensure_topology(bus.js, declare(TopologyConfig()))
    yield bus, server.url
    await bus.close()
    server.stop()


async def _published(bus: Bus, url: str, tmp: Path, mode: str, n: int = 6) -> list[Prompt]:
    got: list[Prompt] = []

    async def on_prompt(msg: Prompt, raw: object) -> None:
        got.append(msg)

    for task in ("arith", "copy"):
        await bus.subscribe(subjects.routed(task), Prompt, on_prompt)
        await bus.subscribe(subjects.prompts(task), Prompt, on_prompt)
    cfg = FeederConfig(
        nats=NatsConfig(url=url),
        run_dir=str(tmp),
        reward_mode=mode,
        max_in_flight=n,
        tasks=[{"name": "arith"}, {"name": "copy"}],
    )  # type: ignore[list-item]
    async with running(Feeder(cfg)):
        await wait_for(lambda: len(got) >= n, 120)
    return got


async def test_static_mode_gives_every_task_the_same_single_tool(
    own_bus: tuple[Bus, str], tmp_path: Path
) -> None:
    got = await _published(*own_bus, tmp_path, "static:exact_match")
    assert len(got) >= 6 and {p.task for p in got} == {"arith", "copy"}
    assert all([t.tool for t in p.tools] == ["exact_match"] and p.tools[0].kind == "rule" for p in got)


async def test_random_mode_draws_registered_tools_per_prompt(
    own_bus: tuple[Bus, str], tmp_path: Path
) -> None:
    got = await _published(*own_bus, tmp_path, "random", n=12)
    tools = {p.tools[0].tool for p in got}
    assert all(len(p.tools) == 1 for p in got) and len(tools) >= 2  # 12 draws from 11 tools


async def test_agentic_mode_leaves_the_choice_to_the_router(own_bus: tuple[Bus, str], tmp_path: Path) -> None:
    got = await _published(*own_bus, tmp_path, "agentic", n=3)
    assert got and all(p.tools == [] for p in got)  # published on rlar.prompts.<task> for the router


def test_unknown_modes_are_refused() -> None:
    with pytest.raises(ValueError):
        FeederConfig(reward_mode="static:")
    with pytest.raises(ValueError):
        mode_overrides("best", {})


def test_intervals_over_seeds_are_student_t() -> None:
    iv = interval([0.5, 0.7, 0.6])
    assert iv["mean"] == 0.6 and iv["sd"] == 0.1 and iv["n"] == 3
    assert (iv["lo"], iv["hi"]) == (
        round(0.6 - 4.303 * 0.1 / 3**0.5, 4),
        round(0.6 + 4.303 * 0.1 / 3**0.5, 4),
    )
    assert interval([0.4])["lo"] is None
    rows = [
        {"mode": "a", "eval": {"t/m": 0.5}},
        {"mode": "a", "eval": {"t/m": 0.7, "t/x": None}},
        {"mode": "b", "eval": {}},
    ]
    assert summarize_runs(rows) == {"a": {"t/m": interval([0.5, 0.7])}, "b": {}}


def test_mode_overrides_add_the_router_and_switch_synthesis() -> None:
    doc = {"train": {"actors": {"feeder": 1}}, "feeder": {"routing": "static"}}
    agentic = mode_overrides("agentic", doc)
    assert agentic["train"]["actors"]["router"] == 1 and agentic["train"]["actors"]["synthesizer"] == 1
    nosyn = mode_overrides("no-synthesis", doc)
    assert nosyn["router"] == {"synthesis": False, "retrieval": False}
    assert "synthesizer" not in nosyn["train"]["actors"]
    assert mode_overrides("static:bleu2", doc)["feeder"]["reward_mode"] == "static:bleu2"
    assert doc == {"train": {"actors": {"feeder": 1}}, "feeder": {"routing": "static"}}  # not modified


def test_feeder_modes_route_statically_without_agent_actors() -> None:
    # the demo routes by the router; in default/static/random the feeder picks, so nothing may wait on a router
    demo = {
        "train": {"actors": {"feeder": 1, "router": 1, "synthesizer": 1}},
        "feeder": {"routing": "router"},
    }
    for mode in ("default", "random", "static:exact_match"):
        out = mode_overrides(mode, demo)
        assert out["feeder"] == {"routing": "static", "reward_mode": mode}
        assert out["train"]["actors"] == {"feeder": 1}
        assert FeederConfig.model_validate(out["feeder"]).static
    assert mode_overrides("agentic", demo)["train"]["actors"] == demo["train"]["actors"]


def test_the_comparison_says_whether_it_is_at_equal_steps() -> None:
    from rlar.app.ablate import budget_note

    rows = [{"mode": m, "seed": s, "steps": 150} for m in ("agentic", "default") for s in (0, 1)]
    assert budget_note(rows, 150, 30.0)["equal_steps"]
    rows[1]["steps"] = 97  # cut by the clock
    got = budget_note(rows, 150, 30.0)
    assert not got["equal_steps"] and "agentic s1: 97" in got["note"] and "NOT" in got["note"]
    assert not budget_note([{"mode": "default", "seed": 0}], 150, 30.0)["equal_steps"]  # no summary: no steps


# -- the ablation fixed in the config, its eval, the comparison, resuming ---------------------------------------


def test_the_plan_comes_from_the_config_and_unknown_keys_are_refused() -> None:
    from rlar.app.ablate import read_plan

    doc = {"ablate": {"modes": ["agentic"], "max_steps": 7}, "train": {}}
    assert (
        read_plan(doc) == {"modes": ["agentic"], "max_steps": 7} and "ablate" not in doc
    )  # not passed to train
    assert read_plan({"train": {}}) == {}
    with pytest.raises(ValueError, match="unknown keys"):
        read_plan({"ablate": {"modes": ["agentic"], "step": 7}})


def test_eval_tasks_are_the_training_tasks_held_out_splits_with_their_options() -> None:
    from rlar.eval.hacks import ablation_tasks

    tasks = [{"name": "arith", "weight": 2.0, "options": {"max_operand": 9}}, "copy", {"name": "consonants"}]
    got = ablation_tasks(
        tasks,
        max_new_tokens=10,
        settings={"consonants": {"n_samples": 8, "temperature": 1.0}, "copy": {"limit": 5}},
    )
    arith, copy_, cons = got
    assert arith.source == {"name": "arith", "options": {"max_operand": 9}, "split": "test"}
    assert (arith.max_new_tokens, arith.n_samples, arith.temperature) == (10, 1, 0.0)
    assert cons.n_samples == 8 and copy_.limit == 5
    ds = arith.load()
    assert ds.spec.split == "test" and all(
        max(map(int, r.prompt[:-1].replace("-", "+").split("+"))) <= 9 for r in ds.records
    )
    train = {
        r.prompt
        for r in __import__("rlar.tasks", fromlist=["load_task"])
        .load_task({"name": "arith", "options": {"max_operand": 9}})
        .records
    }
    assert not train & {r.prompt for r in ds.records}  # held out
    with pytest.raises(ValueError, match="unknown"):
        ablation_tasks(tasks, max_new_tokens=10, settings={"copy": {"samples": 2}})
    with pytest.raises(ValueError, match="does not train"):
        ablation_tasks(tasks, max_new_tokens=10, settings={"reverse": {"limit": 2}})


async def test_hack_rate_counts_outputs_a_static_tool_rewards_that_fail_the_true_metric() -> None:
    from rlar.eval.hacks import hack_rates
    from rlar.tasks import TaskRecord
    from rlar.tools import ToolExecutor

    recs = [
        TaskRecord(id=str(i), prompt=p, reference=ref)
        for i, (p, ref) in enumerate([("3+4=", "7"), ("5+5=", "10"), ("9-1=", "8"), ("2+2=", "4")])
    ]
    texts = [["7"], ["10 11"], ["9"], ["4 5"]]  # right; right number among others (twice); wrong
    async with ToolExecutor(workers=1, timeout_s=30.0) as ex:
        rates, verdicts = await hack_rates("math", recs, texts, ["contains_match", "exact_match"], ex)
    assert verdicts.passed == [True, False, False, False]  # math_verify: a list of numbers is no answer
    assert rates["contains_match/high"] == 0.75 and rates["contains_match/hack"] == 0.5
    assert rates["exact_match/high"] == 0.25 and rates["exact_match/hack"] == 0.0
    assert rates["contains_match/abstain"] == 0.0


async def test_format_tasks_score_every_sample_and_reference_tools_abstain() -> None:
    from rlar.eval.hacks import hack_rates
    from rlar.tasks import TaskRecord
    from rlar.tools import ToolExecutor

    recs = [TaskRecord(id="a", prompt="Write 4 letters only, no vowels:")]
    async with ToolExecutor(workers=1, timeout_s=30.0) as ex:
        rates, verdicts = await hack_rates("format", recs, [["tnrs", "tnra", "tn"]], ["chrf"], ex)
    assert verdicts.passed == [True, False, False]
    assert rates == {"chrf/hack": 0.0, "chrf/high": 0.0, "chrf/abstain": 1.0}


def test_differences_say_which_are_beyond_noise() -> None:
    from rlar.eval.ablation_stats import compare_modes, difference

    far = difference([0.8, 0.82, 0.79], [0.1, 0.12, 0.09])
    assert far["beyond_noise"] and far["lo"] > 0 and abs(far["diff"] - 0.7) < 1e-3
    near = difference([0.5, 0.7, 0.6], [0.55, 0.45, 0.65])
    assert not near["beyond_noise"] and near["lo"] < 0 < near["hi"]
    assert difference([0.3], [0.1])["lo"] is None  # one seed: no interval, never "beyond noise"
    flat = difference([0.0, 0.0, 0.0], [0.25, 0.25, 0.25])
    assert flat["no_spread"] and flat["beyond_noise"] and flat["hi"] == -0.25
    rows = [
        {"mode": m, "seed": s, "eval": {"t/m": v}}
        for m, vals in (("agentic", (0.8, 0.82, 0.79)), ("default", (0.1, 0.12, 0.09)))
        for s, v in enumerate(vals)
    ]
    got = compare_modes(rows, "agentic")
    assert list(got) == ["default"] and got["default"]["t/m"]["hi"] < 0


def test_eval_rows_name_true_metrics_hack_rates_and_their_mean() -> None:
    from rlar.app.ablate import _eval_row

    doc = {
        "metrics": {
            "arith": {"nem": 0.5, "avg_len": 2.0, "chrf/hack": 0.1, "chrf/high": 0.6, "chrf/abstain": 0.0},
            "consonants": {"format": 0.25, "chrf/hack": 0.0, "chrf/high": 0.0, "chrf/abstain": 1.0},
        }
    }
    assert _eval_row(doc) == {
        "arith/nem": 0.5,
        "arith/hack@chrf": 0.1,
        "arith/high@chrf": 0.6,
        "consonants/format": 0.25,
        "consonants/hack@chrf": 0.0,
        "consonants/high@chrf": 0.0,
        "all/true": 0.375,
    }


def test_an_ablation_resumes_where_it_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Finished runs are kept, the interrupted one is set aside and run again, another ablation is refused."""
    import rlar.app.ablate as ab

    trained: list[str] = []
    fail = {"static-exact_match-seed1"}

    def fake_train(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
        run_dir = Path(cmd[cmd.index("--run-dir") + 1])
        trained.append(run_dir.name)
        run_dir.mkdir(parents=True)
        if run_dir.name in fail:  # killed mid-run: a directory without summary
            return subprocess.CompletedProcess(cmd, 1)
        (run_dir / "summary.json").write_text(
            json.dumps({"steps": 4, "minutes": 0.1, "reason": "max_steps", "crashes": 0, "tasks": {}})
        )
        (run_dir / "metrics.jsonl").write_text(json.dumps({"step": 1, "reward_mean": 0.5}) + "\n")
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(ab.subprocess, "run", fake_train)
    cfg = tmp_path / "a.toml"
    cfg.write_text(
        '[train]\nname = "t"\n[feeder]\ntasks = ["copy"]\n[ablate]\nmodes = ["static:exact_match"]\n'
        'seeds = [0, 1, 2]\nmax_steps = 4\neval_suite = ""\n'
    )
    out = tmp_path / "out"
    first = ab.ablate(str(cfg), out=str(out))
    assert trained == ["static-exact_match-seed0", "static-exact_match-seed1", "static-exact_match-seed2"]
    assert [r["train_rc"] for r in first["runs"]] == [0, 1, 0]
    fail.clear()
    trained.clear()
    again = ab.ablate(str(cfg), out=str(out))
    assert trained == ["static-exact_match-seed1"]  # only the unfinished run
    assert [(r["seed"], r["train_rc"], r["steps"]) for r in again["runs"]] == [
        (0, 0, 4),
        (1, 0, 4),
        (2, 0, 4),
    ]
    assert (out / "static-exact_match-seed1.interrupted").is_dir()  # the interrupted run is kept, not deleted
    assert again["budget"]["equal_steps"]
    trained.clear()
    assert (
        ab.ablate(str(cfg), out=str(out))["runs"] == again["runs"] and trained == []
    )  # all done: nothing runs
    with pytest.raises(ValueError, match="another ablation"):
        ab.ablate(str(cfg), out=str(out), max_steps=5)
    assert trained == []
