"""The run document: whole-config validation, config-relative paths, [[tasks]], and `rlar train` failing fast."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlar.app.runconfig import ConfigProblems, load_run_config, validate_run_config
from rlar.config import ConfigError
from rlar.preflight import preflight
from rlar.resources import DEMO_CONFIG, ROOT
from tests.support.env import REPO, actor_env

DEMO_ACTORS = ["sandbox", "reward", "learner", "rollout", "feeder"]
WORDS = ["pear", "plum", "fig", "kiwi", "lime", "date"]


def _data(dir_: Path, name: str = "cap.jsonl", rows: list[dict[str, object]] | None = None) -> Path:
    dir_.mkdir(parents=True, exist_ok=True)
    rows = rows or [{"question": f"cap:{w}=", "answer": w.capitalize()} for w in WORDS]
    (dir_ / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return dir_ / name


def _config(path: Path, body: str) -> Path:
    demo = (ROOT / DEMO_CONFIG).read_text()
    # The demo's actors, policy, rollout and learner; the user's own task mix.
    head, _, rest = demo.partition("[feeder]")
    tail = rest[rest.index("[rollout]") :]
    path.write_text(head + body + "\n" + tail)
    return path


USER_TASK = """
[[tasks]]
name = "capitalize"
source = "jsonl"
path = "data/cap.jsonl"
fields = { prompt = "question", reference = "answer" }
"""


def _problems(doc: dict[str, object], sets: list[str] | None = None) -> list[str]:
    with pytest.raises(ConfigProblems) as err:
        validate_run_config(doc, actors=DEMO_ACTORS, where="cfg", from_set=sets or [])
    return err.value.problems


def test_the_shipped_demo_config_validates_and_every_task_opens() -> None:
    doc = load_run_config(ROOT / DEMO_CONFIG)
    built = validate_run_config(doc, actors=DEMO_ACTORS)
    pre = preflight(built)
    assert [t.name for t in pre.tasks] == [t["name"] for t in doc["feeder"]["tasks"]]
    assert all(t.records > 0 and t.complete for t in pre.tasks)


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("learner.max_stepz=5", "[learner]: unknown key 'max_stepz' (did you mean 'max_steps'?)"),
        ("learner.trainer.lrr=0.1", "[learner]: unknown key 'trainer.lrr' (did you mean 'lr'?)"),
        (
            "rollout.engine.max_model_lenn=9",
            "[rollout]: unknown key 'engine.max_model_lenn' (did you mean 'max_model_len'?)",
        ),
        ("nats.urll=x", "[nats]: unknown key 'urll' (did you mean 'url'?)"),
        ("trian.name=x", "unknown section [trian] (did you mean 'train'?)"),
        ("learner.max_steps=0", "[learner] max_steps: Input should be greater than or equal to 1 (got 0)"),
        ("rollout.engine.kind=vlm", "[rollout] engine"),
    ],
)
def test_a_wrong_key_or_value_anywhere_is_named_with_the_closest_valid_key(
    override: str, expected: str
) -> None:
    doc = load_run_config(ROOT / DEMO_CONFIG, [override])
    problems = _problems(doc, [override])
    assert len(problems) == 1, problems
    assert problems[0].startswith(expected) and problems[0].endswith(f"(from --set {override})")


def test_task_problems_name_the_task_and_its_key(tmp_path: Path) -> None:
    cfg = _config(tmp_path / "c.toml", USER_TASK.replace('source = "jsonl"', 'source = "jsonl"\nweigth = 2'))
    problems = _problems(load_run_config(cfg))
    assert problems == ["task 'capitalize': unknown key 'weigth' (did you mean 'weight'?)"]


def test_tasks_tables_are_the_feeder_task_list_and_paths_resolve_against_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _data(tmp_path / "proj" / "data")
    cfg = _config(tmp_path / "proj" / "c.toml", USER_TASK)
    monkeypatch.chdir(tmp_path)  # not the config's directory
    doc = load_run_config(cfg)
    assert "tasks" not in doc
    assert doc["feeder"]["tasks"][0]["path"] == str(tmp_path / "proj" / "data" / "cap.jsonl")
    pre = preflight(validate_run_config(doc, actors=DEMO_ACTORS))
    (task,) = pre.tasks
    assert task.records == len(WORDS) and task.example == ("cap:pear=", "Pear")
    assert task.tools == [("exact_match", 1.0)]  # case-sensitive by default: 'pear' must not score 1
    assert str(tmp_path / "proj" / "data" / "cap.jsonl") in task.line()


def test_tasks_given_twice_are_refused(tmp_path: Path) -> None:
    cfg = _config(tmp_path / "c.toml", USER_TASK + '\n[feeder]\ntasks = [{ name = "copy" }]\n')
    with pytest.raises(ConfigProblems, match="tasks are given twice"):
        load_run_config(cfg)


def test_missing_data_shows_the_resolved_path_and_bad_rows_their_line(tmp_path: Path) -> None:
    cfg = _config(tmp_path / "c.toml", USER_TASK)
    with pytest.raises(ConfigProblems) as err:
        preflight(validate_run_config(load_run_config(cfg), actors=DEMO_ACTORS))
    assert err.value.problems == [f"task 'capitalize': {tmp_path / 'data' / 'cap.jsonl'}: file not found"]
    _data(tmp_path / "data", rows=[{"question": "a", "answer": "A"}, {"q": "b", "answer": "B"}])
    with pytest.raises(ConfigProblems, match=r"cap.jsonl, line 2: prompt field 'question' is missing"):
        preflight(validate_run_config(load_run_config(cfg), actors=DEMO_ACTORS))


def test_an_unknown_default_tool_is_caught_before_the_feeder_would_crash_on_it(tmp_path: Path) -> None:
    _data(tmp_path / "data")
    cfg = _config(tmp_path / "c.toml", USER_TASK + 'spec = { default_tools = [["exact_mach", 1.0]] }\n')
    with pytest.raises(
        ConfigProblems, match=r"default tool 'exact_mach' .* \(did you mean 'exact_match'\?\)"
    ):
        preflight(validate_run_config(load_run_config(cfg), actors=DEMO_ACTORS))


def test_custom_actor_kinds_validate_their_own_section() -> None:
    kind = "tests.support.actors:CrashOnce"
    validate_run_config({"crashonce": {"marker": "x"}}, actors=[kind])
    with pytest.raises(ConfigProblems, match="unknown key 'markr'"):
        validate_run_config({"crashonce": {"markr": "x"}}, actors=[kind])


def _rlar(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rlar.app.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=actor_env(),
        cwd=cwd,
    )


def test_rlar_train_with_a_misspelt_override_fails_fast_with_one_line_and_starts_nothing(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    t0 = time.monotonic()
    r = _rlar(
        "train",
        "--config",
        str(REPO / DEMO_CONFIG),
        "--set",
        "learner.max_stepz=5",
        "--run-dir",
        str(run),
        cwd=tmp_path,
    )
    elapsed = time.monotonic() - t0
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert lines == [
        f"rlar: error: {REPO / DEMO_CONFIG}: [learner]: unknown key 'max_stepz' (did you mean "
        "'max_steps'?) (from --set learner.max_stepz=5)"
    ]
    assert not run.exists() and "started" not in r.stdout
    print(f"wrong config → error in {elapsed:.1f}s")


def test_rlar_up_refuses_a_bad_config_before_starting_actors(tmp_path: Path) -> None:
    cfg = _config(tmp_path / "c.toml", USER_TASK)
    r = _rlar(
        "up",
        "--actors",
        "feeder",
        "--nats",
        "embedded",
        "--config",
        str(cfg),
        "--run-dir",
        str(tmp_path / "run"),
        cwd=tmp_path,
    )
    assert r.returncode == 1
    assert f"{tmp_path / 'data' / 'cap.jsonl'}: file not found" in r.stderr
    assert not (tmp_path / "run" / "logs").exists()


def test_resuming_a_run_with_another_task_mix_is_refused(tmp_path: Path) -> None:
    from rlar.app.train import load_checked

    _data(tmp_path / "data")
    cfg = _config(tmp_path / "c.toml", USER_TASK)
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.toml").write_text(
        cfg.read_text().replace('path = "data/cap.jsonl"', f'path = "{tmp_path}/data/cap.jsonl"')
    )
    doc, _, _, rdir, resumed = load_checked(None, ["learner.max_steps=7"], str(run))
    assert resumed and rdir == run and doc["learner"]["max_steps"] == 7
    assert doc["feeder"]["tasks"][0]["name"] == "capitalize"  # the run's own mix, not the demo's
    with pytest.raises(ConfigError, match="started with another task mix"):
        load_checked(str(REPO / DEMO_CONFIG), [], str(run))
    with pytest.raises(ConfigError, match="started with another task mix"):
        load_checked(None, ["feeder.seed=5"], str(run))


def test_shipped_files_resolve_from_the_package_outside_the_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rlar.resources import cache_dir, packaged

    monkeypatch.chdir(tmp_path)
    for name in ("data/routing/labelled.jsonl", "data/preference_sample.jsonl", DEMO_CONFIG):
        assert packaged(name) == ROOT / name and packaged(name).is_file()
    (tmp_path / "data" / "routing").mkdir(parents=True)
    (tmp_path / "data" / "routing" / "labelled.jsonl").write_text("{}\n")
    assert packaged("data/routing/labelled.jsonl") == Path("data/routing/labelled.jsonl")  # yours wins
    assert packaged("nope.jsonl") == Path("nope.jsonl")
    monkeypatch.setenv("RLAR_CACHE_DIR", str(tmp_path / "cache"))
    assert cache_dir() == tmp_path / "cache" and cache_dir().is_dir()


USER_TOOL = """
[[tools]]
name = "capital_check"
python = "{module}:score"
description = "1 when the response is the reference"
needs_reference = true
"""


def test_a_resumed_run_imports_its_reward_module_from_the_original_config_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The saved config.toml keeps the [[tools]] module's directory (implicit: the config file's), so the printed
    `rlar train --run-dir RUN` finds the module from any working directory, in a fresh process."""
    from rlar.app.train import load_checked, save_run_config

    module = f"resume_rewards_{time.monotonic_ns()}"  # not imported by any earlier test
    proj, elsewhere, run = tmp_path / "proj", tmp_path / "elsewhere", tmp_path / "runs" / "r1"
    _data(proj / "data")
    (proj / f"{module}.py").write_text(
        "def score(query, response, reference, metadata):\n    return float(response == reference)\n"
    )
    cfg = _config(proj / "c.toml", USER_TASK + USER_TOOL.format(module=module))
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setattr(sys, "path", list(sys.path))
    doc, _, pre, rdir, resumed = load_checked(str(cfg), [], str(run))
    assert not resumed and pre.tool_specs[0].provenance["python_path"] == str(proj)
    rdir.mkdir(parents=True)
    save_run_config(doc, rdir)
    # A new process: the module is not imported yet and its directory is not on sys.path.
    monkeypatch.delitem(sys.modules, module)
    sys.path.remove(str(proj))
    doc2, _, pre2, _, resumed2 = load_checked(None, [], str(run))
    assert resumed2
    assert doc2["tools"][0]["path"] == str(proj)
    assert pre2.tool_specs[0].provenance["python_path"] == str(proj)
    assert pre2.tool_specs[0].params["source_sha256"] == pre.tool_specs[0].params["source_sha256"]
    assert str(proj) in doc2["reward"]["python_path"]  # the reward workers import it from there too


def test_a_mistyped_run_dir_without_config_is_refused_with_the_nearest_runs_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from rlar.app.cli import main

    runs = tmp_path / "runs"
    for name in ("plural1", "plural2", "other"):
        (runs / name).mkdir(parents=True)
        (runs / name / "config.toml").write_text("[train]\n")
    (runs / "plural3").mkdir()  # no config.toml: not a run
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--run-dir", "runs/plural1x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(
        "rlar: error: --run-dir runs/plural1x: not a run (no such directory); did you mean "
        "runs/plural1 or runs/plural2?"
    )
    assert "--config" in err[0]
    assert not (runs / "plural1x").exists()
    assert main(["train", "--run-dir", "runs/plural3"]) == 2
    assert "runs/plural3: not a run (no config.toml in it)" in capsys.readouterr().err
    assert not (runs / "plural3" / "config.toml").exists()


def _null_reference_rows(nulls: set[int]) -> list[dict[str, object]]:
    return [
        {"question": f"cap:{w}=", "answer": None if i in nulls else w.capitalize()}
        for i, w in enumerate(WORDS, start=1)
    ]


def test_records_without_a_reference_beside_ones_with_are_refused_at_preflight_naming_file_and_line(
    tmp_path: Path,
) -> None:
    """Under the router they would wait forever as `pending`; refused before any actor starts."""
    data = _data(tmp_path / "data", rows=_null_reference_rows({3, 5}))
    cfg = _config(tmp_path / "c.toml", USER_TASK + '\n[feeder]\nrouting = "router"\n')
    with pytest.raises(ConfigProblems) as err:
        preflight(validate_run_config(load_run_config(cfg), actors=DEMO_ACTORS))
    (problem,) = err.value.problems
    assert problem.startswith(
        f"task 'capitalize': 2 of 6 records have no reference (null or empty): {data}, line 3; "
        f"{data}, line 5 — fix or drop them"
    )
    cfg = _config(tmp_path / "c.toml", USER_TASK + '\n[feeder]\nrouting = "static"\n')  # exact_match needs it
    with pytest.raises(ConfigProblems, match=r"line 3; .*line 5 — .*compare with one \(exact_match\)"):
        preflight(validate_run_config(load_run_config(cfg), actors=DEMO_ACTORS))
    cfg = _config(tmp_path / "c.toml", USER_TASK + 'spec = { default_tools = [["format_rules", 1.0]] }\n')
    preflight(
        validate_run_config(load_run_config(cfg), actors=DEMO_ACTORS)
    )  # reference-free: nothing to miss


def test_a_task_without_any_reference_is_refused_for_a_tool_that_needs_one_and_allowed_under_the_router(
    tmp_path: Path,
) -> None:
    data = _data(tmp_path / "data", rows=_null_reference_rows(set(range(1, len(WORDS) + 1))))
    cfg = _config(tmp_path / "c.toml", USER_TASK + '\n[feeder]\nrouting = "static"\n')
    with pytest.raises(ConfigProblems) as err:
        preflight(validate_run_config(load_run_config(cfg), actors=DEMO_ACTORS))
    assert err.value.problems == [
        f"task 'capitalize': no record has a reference ({data}, line 1; {data}, line 2; {data}, line 3 and 3 "
        "more), but tool 'exact_match' compares with one — map the reference field (fields = { reference = ... }) "
        "or give the task a reference-free tool"
    ]
    cfg = _config(tmp_path / "c.toml", USER_TASK + '\n[feeder]\nrouting = "router"\n')
    (task,) = preflight(validate_run_config(load_run_config(cfg), actors=DEMO_ACTORS)).tasks
    assert task.routed and task.records == len(WORDS)  # a reference-free task: the router finds it a tool


def test_every_file_path_of_a_task_and_tool_is_absolute_in_the_loaded_document(tmp_path: Path) -> None:
    """What a run saves as its config.toml: data, labelled examples and the reward module's directory."""
    (tmp_path / "proj" / "labels").mkdir(parents=True)
    (tmp_path / "proj" / "labels" / "cap.jsonl").write_text('{"response": "Pear", "ok": true}\n')
    cfg = _config(
        tmp_path / "proj" / "c.toml",
        USER_TASK
        + 'examples_file = "labels/cap.jsonl"\n'
        + USER_TOOL.format(module="my_rewards")
        + 'path = "lib"\n',
    )
    doc = load_run_config(cfg)
    (task,) = doc["feeder"]["tasks"]
    assert task["path"] == str(tmp_path / "proj" / "data" / "cap.jsonl")
    assert task["examples_file"] == str(tmp_path / "proj" / "labels" / "cap.jsonl")
    assert doc["tools"][0]["path"] == str(tmp_path / "proj" / "lib")


def test_a_file_task_without_tools_of_its_own_is_routed_and_rlar_train_starts_a_router_for_it(
    tmp_path: Path,
) -> None:
    """[feeder] routing = "auto" (the default): the router when a task has no tools of its own."""
    from rlar.app.train import load_checked

    _data(tmp_path / "data")

    def config(name: str, body: str, train: str = "") -> str:
        return str(_config(tmp_path / name, train + body))

    doc, built, pre, _, _ = load_checked(config("c.toml", USER_TASK), [], str(tmp_path / "run"))
    (task,) = pre.tasks
    assert task.routed and not built["feeder"].static
    assert doc["train"]["actors"]["router"] == 1 and doc["train"]["actors"]["synthesizer"] == 1
    declared = USER_TASK + 'spec = { default_tools = [["exact_match", 1.0]] }\n'
    doc, built, pre, _, _ = load_checked(config("d.toml", declared), [], str(tmp_path / "run2"))
    assert built["feeder"].static and not pre.tasks[0].routed and "actors" not in doc.get("train", {})
    no_router = config("e.toml", USER_TASK, "\n[train]\nactors = { learner = 1, rollout = 1, feeder = 1 }\n")
    with pytest.raises(
        ConfigProblems, match=r"come with no tools of their own.*starts no router: add router = 1"
    ):
        load_checked(no_router, [], str(tmp_path / "run3"))
