"""The real-model demo mix (data/mix): the shipped files are what their generator writes, every task loads with
its split, and the main job's config (deploy/configs/smollm2.toml) passes the checks ``rlar train`` runs first."""

from __future__ import annotations

import importlib.util
import json

from rlar.resources import ROOT

MIX = ROOT / "data" / "mix"


def _generator():
    spec = importlib.util.spec_from_file_location("mix_generate", MIX / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shipped_mix_is_what_its_generator_writes() -> None:
    for name, text in _generator().render().items():
        assert (MIX / name).read_text(encoding="utf-8") == text, f"{name}: run python data/mix/generate.py"


def test_every_task_has_a_held_out_test_split_and_no_prompt_in_both_splits() -> None:
    for name in ("arith_words", "format", "capitals", "code"):
        rows = [json.loads(line) for line in (MIX / f"{name}.jsonl").read_text().splitlines()]
        prompt = next(k for k in ("question", "prompt", "text") if k in rows[0])
        by_split: dict[str, set[str]] = {"train": set(), "test": set()}
        for r in rows:
            by_split[r["split"]].add(r[prompt])
        assert len(by_split["test"]) >= 15, name
        assert not by_split["train"] & by_split["test"], name


def test_the_main_jobs_config_passes_the_checks_rlar_train_runs_first() -> None:
    from rlar.app.train import load_checked

    _doc, built, pre, _, resumed = load_checked(str(ROOT / "deploy/configs/smollm2.toml"), [], None)
    assert not resumed and built["policy"].source == "package"
    assert {t.name for t in pre.tasks} == {"arith_words", "format", "capitals"}
    assert all(t.records > 0 and t.routed for t in pre.tasks)
