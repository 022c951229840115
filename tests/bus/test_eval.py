"""``rlar eval``: checkpoints resolve, metrics come from the real tools, deltas are marked, the judge is honest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rlar.eval import comparison_rows, resolve_checkpoint, run_eval, terminal_table
from rlar.standins.anthropic_server import MessagesServer
from tests.support.env import REPO
from tests.support.runs import eval_run_dir


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return eval_run_dir(tmp_path_factory)


@pytest.fixture(autouse=True)
def no_real_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def test_a_run_directory_resolves_to_its_newest_weights_on_the_initial_policy(run_dir: Path) -> None:
    ck = resolve_checkpoint(run_dir)
    assert ck.model_dir == (run_dir / "policy" / "init").absolute() and ck.version == 3
    assert ck.label.endswith("@v3")
    init = resolve_checkpoint(run_dir / "policy" / "init")
    assert init.weights_uri is None and init.run_dir == run_dir.absolute() and init.label.endswith("@init")


def test_a_directory_that_is_neither_a_checkpoint_nor_a_run_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        resolve_checkpoint(tmp_path)


def test_deltas_are_marked_up_down_or_equal() -> None:
    base = {"label": "a", "metrics": {"arith": {"exact": 0.5, "avg_len": 3.0}, "chat": {"judge": None}}}
    new = {"label": "b", "metrics": {"arith": {"exact": 0.75, "avg_len": 2.0}, "chat": {"judge": None}}}
    rows = {(r["task"], r["metric"]): r for r in comparison_rows(base, new)}
    assert (
        rows[("arith", "exact")]["delta"] == pytest.approx(0.25) and rows[("arith", "exact")]["arrow"] == "↑"
    )
    assert rows[("arith", "avg_len")]["arrow"] == ""  # length has no better direction
    assert rows[("chat", "judge")]["delta"] is None
    worse = comparison_rows(new, base)
    assert {(r["task"], r["metric"]): r["arrow"] for r in worse}[("arith", "exact")] == "↓"


def test_eval_compares_two_checkpoints_and_writes_json_and_markdown(run_dir: Path) -> None:
    doc = run_eval(
        str(run_dir),
        "demo",
        compare=str(run_dir / "policy" / "init"),
        limit=4,
        tasks=["arith", "translate", "chat", "humaneval"],
    )
    res = doc["result"]
    assert res["label"].endswith("@v3") and doc["baseline"]["label"].endswith("@init")
    assert 0.0 <= res["metrics"]["arith"]["nem"] <= 1.0
    assert res["metrics"]["translate"]["bleu2"] >= 0.0
    assert {"pass@1", "pass@4"} <= set(res["metrics"]["humaneval"])
    # no key and no endpoint: the judge columns say so instead of inventing numbers
    assert res["judge"] == "no judge" and res["metrics"]["chat"]["judge"] is None
    assert "no judge" in doc["table"] and "Δ" in doc["table"]
    files = [Path(f) for f in doc["files"]]
    assert all(f.exists() and f.parent.resolve() == (run_dir / "eval").resolve() for f in files)
    saved = json.loads(files[0].read_text())
    assert saved["comparison"] and all(r["task"] in saved["result"]["metrics"] for r in saved["comparison"])
    assert "| task | metric |" in files[1].read_text()
    # the two checkpoints really differ: their greedy answers are not all the same
    assert res["examples"] != doc["baseline"]["examples"]


def test_eval_uses_the_judge_endpoint_when_one_is_configured(run_dir: Path) -> None:
    with MessagesServer(text="Reasonable.\nScore: 8") as srv:
        doc = run_eval(str(run_dir), "demo", limit=3, tasks=["chat"], judge_url=srv.url)
        answered = sum(1 for e in doc["result"]["examples"]["chat"] if e["response"].strip())
        assert answered >= 1 and srv.count == answered  # an empty response scores the minimum without a call
    judge = doc["result"]["metrics"]["chat"]["judge"]
    assert judge == pytest.approx(0.8 * answered / 3)
    assert f"{judge:.3f}" in terminal_table(doc["result"])


# ---------------------------------------------------------------------------------------------------------
# data files in published formats, and a run's own tasks

DATA = REPO / "data" / "formats"


def _score_files(*cases: tuple[str, Any, dict[str, Any]]) -> list[dict[str, Any]]:
    """Metrics of ``responses(row, record)`` (a list of samples per record) on sample files, for each case
    ``(file, responses, EvalTask fields)``; one tool executor for all (its workers import the tools once)."""
    import asyncio
    import dataclasses

    from rlar.eval import score_responses
    from rlar.eval.suites import data_task
    from rlar.tools import ToolExecutor

    async def go() -> list[dict[str, Any]]:
        out = []
        async with ToolExecutor(workers=1, timeout_s=30.0) as ex:
            for name, responses, task in cases:
                t = dataclasses.replace(data_task(str(DATA / name)), **task)
                ds = t.load()
                rows = [json.loads(line) for line in (DATA / name).read_text().splitlines()]
                texts = [responses(row, rec) for row, rec in zip(rows, ds.records, strict=True)]
                out.append(await score_responses(t, ds, texts, ex, None, None))
        return out

    return asyncio.run(go())


def _off_by_one(answer: str) -> str:
    from decimal import Decimal

    final = answer.rsplit("####", 1)[1].strip().replace(",", "")
    return f"The answer is {Decimal(final) + 1}."


def test_nem_counts_equivalent_final_answers_and_only_those() -> None:
    gsm8k, gsm8k_off, math, math_wrong, math500 = _score_files(
        # GSM8K: the published solutions (final answers with thousands separators) are right; one off is wrong.
        ("gsm8k_sample.jsonl", lambda row, rec: [row["answer"]], {}),
        ("gsm8k_sample.jsonl", lambda row, rec: [_off_by_one(row["answer"])], {}),
        # MATH: \dfrac, \text{}, intervals, sets, \boxed without braces in the published solutions.
        ("math_sample.jsonl", lambda row, rec: [row["solution"]], {}),
        ("math_sample.jsonl", lambda row, rec: ["$\\boxed{(-2, 2]}$"], {}),  # equals none of the answers
        ("math500_sample.jsonl", lambda row, rec: [f"So $\\boxed{{{row['answer']}}}$"], {}),
    )
    assert gsm8k == {"nem": 1.0} and gsm8k_off == {"nem": 0.0}
    assert math == {"nem": 1.0} and math_wrong == {"nem": 0.0} and math500 == {"nem": 1.0}


def test_pass_at_k_runs_humaneval_and_mbpp_tests_in_the_sandbox() -> None:
    def good_then_bad(code: str) -> list[str]:
        return [code, "    return None\n", code, "def broken(:\n"]

    he, mbpp, wrong = _score_files(
        (
            "humaneval_sample.jsonl",
            lambda row, rec: good_then_bad(row["canonical_solution"]),
            {"ks": (1, 2, 4)},
        ),
        ("mbpp_sample.jsonl", lambda row, rec: [f"```python\n{row['code']}\n```"], {"ks": (1,)}),
        ("mbpp_sanitized_sample.jsonl", lambda row, rec: ["def nothing():\n    pass\n"], {"ks": (1,)}),
    )
    assert he["pass@1"] == pytest.approx(0.5) and he["pass@2"] == pytest.approx(5 / 6) and he["pass@4"] == 1.0
    assert he["sandbox_abstained"] == 0.0
    assert mbpp == {"pass@1": 1.0, "sandbox_abstained": 0.0} and wrong["pass@1"] == 0.0


def test_ifeval_accuracy_is_reported_prompt_and_instruction_level() -> None:
    good = {
        "1000": "Tea is old.\n***\nTea is calm.\n***\nTea is warm.",
        "1001": "the sun climbs over the quiet hills and the sky turns gold.",
        "1002": "* Keep a schedule\n* Avoid screens\n* Keep it dark\nAny other questions?",
        "1003": "<<Blue Sky>>\nSunlight scatters off air molecules.",
        "1004": '{"name": "Tom", "legs": 4}',
        "1005": "An umbrella, a puddle, a song.\nP.S. Stay dry.",
        "1006": '"Die Hauptstadt von Frankreich ist Paris, eine sehr schöne Stadt."',
    }
    full, half = _score_files(
        ("ifeval_sample.jsonl", lambda row, rec: [good[rec.id]], {}),
        ("ifeval_sample.jsonl", lambda row, rec: ["Sure, here you go, friend."], {}),
    )
    assert full == {
        "prompt_strict": 1.0,
        "inst_strict": 1.0,
        "prompt_loose": 1.0,
        "inst_loose": 1.0,
        "ifeval_abstained": 0.0,
        "judge": None,
    }
    assert half["prompt_strict"] < half["inst_strict"] < 1.0 and half["judge"] is None


def test_bleu2_is_100_for_the_references_and_lower_for_other_sentences() -> None:
    same, other = _score_files(
        ("wmt_sample.jsonl", lambda row, rec: [rec.reference], {}),
        ("wmt_sample.jsonl", lambda row, rec: ["Das Haus ist groß und der Zug kommt."], {}),
    )
    assert same["bleu2"] == pytest.approx(100.0) and 0.0 < other["bleu2"] < 50.0


def test_a_tasks_own_tools_give_its_score(tmp_path: Path) -> None:
    import asyncio

    from rlar.eval import EvalTask, score_responses
    from rlar.tools import ToolExecutor

    rows = [{"word": w, "answer": w.capitalize()} for w in ("apple", "river", "stone")]
    path = tmp_path / "cap.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    source = {
        "name": "capitalize",
        "source": "jsonl",
        "path": str(path),
        "fields": {"prompt_template": "Capitalize: {word}", "reference": "answer"},
        "spec": {"default_tools": [["exact_match", 1.0]]},
    }
    task = EvalTask("capitalize", source=source, tool_score=True)
    ds = task.load()

    async def go(answers: list[str]) -> dict[str, Any]:
        async with ToolExecutor(workers=1, timeout_s=30.0) as ex:
            return await score_responses(task, ds, [[a] for a in answers], ex, None, None)

    assert asyncio.run(go(["Apple", "River", "Stone"])) == {
        "score": 1.0,
        "score_abstained": 0.0,
        "score_errors": 0.0,
    }
    assert asyncio.run(go(["apple", "River", "stone"]))["score"] == pytest.approx(1 / 3)


def test_eval_on_a_gsm8k_file_prints_nem_with_deltas_and_writes_every_sample(
    run_dir: Path, tmp_path: Path
) -> None:
    doc = run_eval(
        str(run_dir),
        "gsm8k",
        data=str(DATA / "gsm8k_sample.jsonl"),
        compare=str(run_dir / "policy" / "init"),
        limit=3,
        out=str(tmp_path),
        overrides={"max_new_tokens": 8},
    )
    assert set(doc["result"]["metrics"]["gsm8k"]) == {"nem", "avg_len"}
    assert "gsm8k" in doc["table"] and "nem" in doc["table"] and "Δ" in doc["table"]
    samples = [json.loads(line) for line in Path(doc["files"][2]).read_text().splitlines()]
    assert [s["reference"] for s in samples] == ["12", "2750", "1000000"] and all(
        len(s["responses"]) == 1 for s in samples
    )
    assert doc["result"]["counts"] == {"gsm8k": 3}


def test_a_suite_refuses_a_file_in_another_format_before_loading_a_model(run_dir: Path) -> None:
    with pytest.raises(ValueError, match="looks like mbpp data, but suite 'gsm8k' reads gsm8k"):
        run_eval(str(run_dir), "gsm8k", data=str(DATA / "mbpp_sample.jsonl"))
    with pytest.raises(ValueError, match="add --data"):
        run_eval(str(run_dir), "mbpp")


def _capitalize_config(tmp_path: Path, split_field: bool) -> Path:
    rows = [
        {"word": w, "answer": w.capitalize(), "split": "test" if i % 3 == 0 else "train"}
        for i, w in enumerate(["apple", "river", "stone", "cloud", "tiger", "maple"])
    ]
    (tmp_path / "data").mkdir(exist_ok=True)
    (tmp_path / "data" / "cap.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    fields = '{ prompt_template = "Capitalize: {word}", reference = "answer" }'
    split = 'split_field = "split", ' if split_field else ""
    config = tmp_path / "run.toml"
    config.write_text(
        '[feeder]\ntasks = [\n  { name = "arith" },\n'
        f'  {{ name = "capitalize", source = "jsonl", path = "data/cap.jsonl", {split}fields = {fields}, '
        'spec = { default_tools = [["exact_match", 1.0]] } },\n]\n'
    )
    return config


def test_a_users_own_task_from_a_run_config_is_evaluated_on_its_held_out_split(
    run_dir: Path, tmp_path: Path
) -> None:
    config = _capitalize_config(tmp_path, split_field=True)
    doc = run_eval(
        str(run_dir),
        tasks=["capitalize"],
        config=str(config),
        out=str(tmp_path / "out"),
        overrides={"max_new_tokens": 6},
    )
    assert doc["result"]["counts"] == {"capitalize": 2}  # the two test rows, paths relative to the config
    assert set(doc["result"]["metrics"]["capitalize"]) == {
        "score",
        "score_abstained",
        "score_errors",
        "avg_len",
    }
    assert [t["tool"] for t in doc["result"]["tools"]["capitalize"]] == ["exact_match"]
    held_out = tmp_path / "held_out.jsonl"
    held_out.write_text(json.dumps({"word": "lemon", "answer": "Lemon"}) + "\n")
    on_file = run_eval(
        str(run_dir),
        tasks=["capitalize"],
        config=str(config),
        data=str(held_out),
        out=str(tmp_path / "out"),
        overrides={"max_new_tokens": 6},
    )
    assert on_file["result"]["counts"] == {"capitalize": 1}
    assert on_file["result"]["examples"]["capitalize"][0]["prompt"] == "Capitalize: lemon"


def test_rlar_eval_tasks_reads_the_runs_own_config_and_errors_are_one_line(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rlar.app.cli import main

    config = _capitalize_config(tmp_path, split_field=False)
    (run_dir / "config.toml").write_text(
        config.read_text().replace("data/cap.jsonl", str(tmp_path / "data/cap.jsonl"))
    )
    try:
        assert (
            main(["eval", "--checkpoint", str(run_dir), "--tasks", "capitalize", "--out", str(tmp_path)]) == 2
        )
        err = capsys.readouterr().err
        assert (
            "task 'capitalize' has no held-out split" in err
            and "--data FILE" in err
            and "Traceback" not in err
        )
        assert main(["eval", "--checkpoint", str(run_dir), "--tasks", "nosuch", "--out", str(tmp_path)]) == 2
        assert "task 'nosuch' is not in the config" in capsys.readouterr().err
        args = [
            "eval",
            "--checkpoint",
            str(run_dir),
            "--tasks",
            "capitalize",
            "--split",
            "train",
            "--limit",
            "2",
            "--max-new-tokens",
            "4",
            "--out",
            str(tmp_path),
        ]
        assert main(args) == 0
        assert "capitalize  score" in capsys.readouterr().out
    finally:
        (run_dir / "config.toml").unlink()
    assert main(["eval", "--tasks", "capitalize"]) == 2 and "give --checkpoint" in capsys.readouterr().err
    # --config alone evaluates the checkpoint the config trains from ([policy] path)
    with_policy = tmp_path / "with_policy.toml"
    with_policy.write_text(
        f'[policy]\nsource = "path"\npath = "{run_dir / "policy" / "init"}"\n\n' + config.read_text()
    )
    args = [
        "eval",
        "--config",
        str(with_policy),
        "--task",
        "capitalize",
        "--split",
        "train",
        "--limit",
        "1",
        "--max-new-tokens",
        "2",
        "--out",
        str(tmp_path),
    ]
    # the label is the run directory's name (tmp_path_factory numbers it: run0, run1, ... per worker)
    assert main(args) == 0 and f"capitalize on {run_dir.name}@init" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------------------
# the run's own tools: user functions from its registry snapshot, its routing; results that accumulate

_QUARTER = """
def quarter(query, response, reference, metadata):
    return {"score": 0.25, "reason": "a quarter for " + repr(response[:8])}
"""


def _user_tool_config(tmp_path: Path, module: str, default_tools: str = "") -> Path:
    """A run config with the capitalize task (two test rows) and a user reward function ``quarter`` in the
    module ``module`` (always 0.25: exact_match, the task's built-in choice, gives the tiny policy 0)."""
    _capitalize_config(tmp_path, split_field=True)
    (tmp_path / f"{module}.py").write_text(_QUARTER)
    spec = f"\nspec = {{ default_tools = [{default_tools}] }}" if default_tools else ""
    fields = '{ prompt_template = "Capitalize: {word}", reference = "answer" }'
    config = tmp_path / "user.toml"
    config.write_text(
        f'[[tasks]]\nname = "capitalize"\nsource = "jsonl"\npath = "{tmp_path / "data" / "cap.jsonl"}"\n'
        f'split_field = "split"\nfields = {fields}{spec}\n\n'
        f'[[tools]]\nname = "quarter"\npython = "{module}:quarter"\npath = "{tmp_path}"\n'
        'description = "A quarter point for any answer."\n'
    )
    return config


def _linked_run(run_dir: Path, into: Path) -> Path:
    """A run directory of its own sharing the module run's policy and weights."""
    run = into / "run"
    (run / "policy").mkdir(parents=True)
    (run / "policy" / "init").symlink_to(run_dir / "policy" / "init")
    (run / "weights").symlink_to(run_dir / "weights")
    return run


async def test_eval_scores_a_task_with_the_user_tool_the_run_used_and_names_it(
    run_dir: Path, tmp_path: Path, bus: Any
) -> None:
    import asyncio
    import uuid

    from rlar.eval.tools import save_tool_snapshot
    from rlar.registry import ToolRegistry
    from rlar.tools.pyfunc import PythonToolConfig, python_tool_spec

    module = f"quarter_{uuid.uuid4().hex[:8]}"
    config = _user_tool_config(tmp_path, module)
    run = _linked_run(run_dir, tmp_path)
    (run / "config.toml").write_text(config.read_text())
    # What `rlar train` leaves: the tool registered on the run's bus, the registry's snapshot, and a summary
    # whose routing chose the user's function for the task.
    name = f"quarter_{uuid.uuid4().hex[:6]}"
    cfg = PythonToolConfig(
        name=name, python=f"{module}:quarter", path=str(tmp_path), description="A quarter."
    )
    got = await ToolRegistry(bus).register(python_tool_spec(cfg), by="test")
    await save_tool_snapshot(bus, run)
    summary = {
        "tasks": {
            "capitalize": {
                "tools": [
                    {"tool": name, "version": got.version, "origin": "user", "steps": 5, "shadow": False}
                ],
                "routing": {"last": {"state": "routed", "tools": [f"{name} v{got.version} x1"]}},
            }
        }
    }
    (run / "summary.json").write_text(json.dumps(summary))

    doc = await asyncio.to_thread(run_eval, str(run), tasks=["capitalize"], overrides={"max_new_tokens": 4})
    assert doc["result"]["metrics"]["capitalize"]["score"] == pytest.approx(0.25)
    assert doc["result"]["metrics"]["capitalize"]["score_errors"] == 0.0
    (tool,) = doc["result"]["tools"]["capitalize"]
    assert (tool["tool"], tool["version"], tool["origin"], tool["source"]) == (
        name,
        got.version,
        "user",
        "run-router",
    )
    assert f"score of capitalize: {name} v{got.version} x1 (user) [run-router]" in doc["table"]

    # The run exported: an eval of the export scores its answers with the same tasks and tools as the run's.
    from rlar.app.export import export_run

    await asyncio.to_thread(export_run, run, tmp_path / "hf")
    exported = await asyncio.to_thread(
        run_eval, str(tmp_path / "hf"), tasks=["capitalize"], overrides={"max_new_tokens": 4}
    )
    assert exported["result"]["tools"] == doc["result"]["tools"]
    assert exported["result"]["metrics"]["capitalize"] == doc["result"]["metrics"]["capitalize"]
    assert exported["result"]["examples"] == doc["result"]["examples"]


def test_a_user_tool_in_default_tools_scores_the_task_with_the_config_alone(
    run_dir: Path, tmp_path: Path
) -> None:
    config = _user_tool_config(tmp_path, "quarter_by_config", default_tools='["quarter", 1.0]')
    doc = run_eval(
        str(run_dir),
        tasks=["capitalize"],
        config=str(config),
        out=str(tmp_path / "out"),
        overrides={"max_new_tokens": 4},
    )
    assert doc["result"]["metrics"]["capitalize"]["score"] == pytest.approx(0.25)
    assert [(t["tool"], t["origin"], t["source"]) for t in doc["result"]["tools"]["capitalize"]] == [
        ("quarter", "user", "default_tools")
    ]


def test_a_synthesised_verifier_from_the_runs_snapshot_scores_the_task_in_the_sandbox(tmp_path: Path) -> None:
    import asyncio

    from rlar.eval import EvalTask, score_responses
    from rlar.eval.tools import ToolCatalog
    from rlar.tools import ToolExecutor
    from rlar.tools.synthesized import synthesized_spec

    code = "def reward(query, response, reference, metadata):\n    return 1.0 if response.endswith('!') else 0.5\n"
    verifier = synthesized_spec(
        name="ends_with_bang",
        description="ends with !",
        code=code,
        score_range=(0.0, 1.0),
        task_types=["shout"],
        answer_formats=["text"],
        params={},
        provenance={"origin": "synthesized"},
        validation={},
    )
    v2 = verifier.replace(version=2, code=code.replace("0.5", "0.0")).sealed()
    run = tmp_path / "run"
    run.mkdir()
    lines = [
        {"type": "tool", "spec": verifier.to_dict()},
        {"type": "tool", "spec": v2.to_dict()},
        {
            "type": "status",
            "name": "ends_with_bang",
            "status": {"versions": {"2": {"state": "quarantined", "reason": "canary failed"}}},
        },
    ]
    (run / "tools.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    # the learner's record only (no routing decision): v1 scored the task, v2 only shadowed it
    tasks = {
        "shout": {
            "tools": [
                {"tool": "ends_with_bang", "version": 1, "shadow": False},
                {"tool": "ends_with_bang", "version": 2, "shadow": True},
            ],
            "routing": {},
        }
    }
    (run / "summary.json").write_text(json.dumps({"tasks": tasks}))
    catalog = ToolCatalog.for_eval(run, None)
    (chosen,) = catalog.task_tools("shout", [("exact_match", 1.0)])
    assert (chosen.spec.version, chosen.source, chosen.weight) == (1, "run-learner", 1.0)
    assert (
        catalog.latest("ends_with_bang").version == 1 and catalog.state("ends_with_bang", 2) == "quarantined"
    )
    # a task the run did not train: its default_tools, each name at its newest usable version
    assert [c.spec.version for c in catalog.task_tools("other", [("ends_with_bang", 2.0)])] == [1]
    with pytest.raises(ValueError, match="'nosuch' is neither built in nor in the run's tools"):
        catalog.task_tools("other", [("nosuch", 1.0)])

    rows = [{"q": "say hi", "a": "hi!"}, {"q": "say yo", "a": "yo!"}]
    (tmp_path / "shout.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    task = EvalTask(
        "shout",
        source={
            "name": "shout",
            "source": "jsonl",
            "path": str(tmp_path / "shout.jsonl"),
            "fields": {"prompt": "q", "reference": "a"},
        },
        tool_score=True,
    )
    ds = task.load()

    async def go() -> dict[str, Any]:
        async with ToolExecutor(workers=1, timeout_s=30.0) as ex:
            return await score_responses(task, ds, [["hi!"], ["yo"]], ex, None, None, [(chosen.spec, 1.0)])

    assert asyncio.run(go()) == {"score": 0.75, "score_abstained": 0.0, "score_errors": 0.0}


def test_a_second_eval_of_the_same_checkpoint_keeps_the_first_ones_files(
    run_dir: Path, tmp_path: Path
) -> None:
    kw: dict[str, Any] = {
        "data": str(DATA / "gsm8k_sample.jsonl"),
        "limit": 1,
        "out": str(tmp_path),
        "overrides": {"max_new_tokens": 2},
    }
    first = run_eval(str(run_dir), "gsm8k", **kw)
    kept = {f: Path(f).read_text() for f in first["files"]}
    second = run_eval(str(run_dir), "gsm8k", **kw)
    assert not set(first["files"]) & set(second["files"])
    assert all(Path(f).read_text() == text for f, text in kept.items())  # untouched
    other = run_eval(str(run_dir), "gsm8k", **{**kw, "limit": 2})  # other data: another key
    index = [json.loads(line) for line in (tmp_path / "index.jsonl").read_text().splitlines()]
    assert [e["key"] for e in index] == [first["key"], first["key"], other["key"]] and first["key"] != other[
        "key"
    ]
    assert [e["files"][0] for e in index] == [Path(d["files"][0]).name for d in (first, second, other)]


def test_a_paired_bootstrap_interval_excludes_zero_only_for_a_real_gain() -> None:
    from rlar.eval.report import comparison_rows, paired_bootstrap

    base = [0.0] * 30 + [1.0] * 10
    better = [1.0] * 25 + [0.0] * 5 + [1.0] * 10  # 25 of 40 records flip to right
    lo, hi = paired_bootstrap(base, better)
    assert 0.45 < lo < 0.625 < hi < 0.8
    noise = [1.0, 0.0] * 20
    lo, hi = paired_bootstrap(noise, noise[1:] + noise[:1])  # every record flips, no net change
    assert lo < 0 < hi

    def doc(values: list[float | None]) -> dict:
        clean = [v for v in values if v is not None]
        return {
            "metrics": {"t": {"nem": sum(clean) / len(clean)}},
            "per_record": {"t": {"ids": [str(i) for i in range(len(values))], "nem": values}},
        }

    row = comparison_rows(doc([0.0] * 20 + [None]), doc([1.0] * 20 + [1.0]))[0]
    assert row["ci"] == [1.0, 1.0] and row["pairs"] == 20 and row["left_out"] == 1
    other_records = doc([1.0] * 21)
    other_records["per_record"]["t"]["ids"] = [f"x{i}" for i in range(21)]
    assert "ci" not in comparison_rows(doc([0.0] * 21), other_records)[0]  # not the same records: no pairing
