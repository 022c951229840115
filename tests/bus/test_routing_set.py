"""The routing labelled set: large, varied, in public datasets' own reference shapes, reproducible from its
generator, and free of the tools' declared task-type vocabulary in everything a user would write about a task."""

from __future__ import annotations

import random
import re
from collections import Counter

from rlar.benchmarks.routing_set import build, render
from rlar.benchmarks.routing_set.measured import measured_sets
from rlar.routing import RoutingQuery
from rlar.routing.exemplars import default_path, load_labelled
from rlar.tasks.references import is_code_tests
from rlar.tools import builtin_specs

RECORDS = load_labelled(default_path())
# The records our generator writes; the measured held-out sets joined as written by others (their task names and
# shapes are theirs: checked where they were written, not held to this generator's rules).
MEASURED_IDS = {r["id"] for r in measured_sets(random.Random(0))}
GENERATED = [r for r in RECORDS if r["id"] not in MEASURED_IDS]


def test_the_committed_file_is_what_the_generator_writes() -> None:
    assert render(build()) == default_path().read_text(encoding="utf-8")


def test_it_is_large_varied_and_names_only_registered_tools() -> None:
    names = {s.name for s in builtin_specs()}
    types = Counter(r["type"] for r in GENERATED)
    assert len(GENERATED) >= 600 and len(types) >= 40 and min(types.values()) >= 10
    assert len(RECORDS) - len(GENERATED) == len(MEASURED_IDS) >= 300, "the measured held-out sets are joined"
    assert not types.keys() & {r["type"] for r in RECORDS if r["id"] in MEASURED_IDS}, "their formats are new"
    assert len({r["id"] for r in RECORDS}) == len(RECORDS)
    assert all(set(r["acceptable"]) <= names for r in RECORDS)
    assert sum(not r["acceptable"] for r in RECORDS) >= 30, "some records have no fitting tool (synthesis)"
    shapes = Counter(RoutingQuery.from_record(r).features().reference_shape for r in RECORDS)
    assert len(shapes) >= 9 and shapes["none"] >= 150 and shapes["code_tests"] >= 60


def test_references_keep_their_datasets_shapes() -> None:
    refs = [r["reference"] for r in GENERATED]
    assert sum(r == "" for r in refs) >= 40 and sum(r is None for r in refs) >= 40
    assert any(isinstance(r, str) and "####" in r for r in refs)  # GSM8K solutions
    assert any(
        isinstance(r, str) and r.lstrip().startswith('{"inputs"') for r in refs
    )  # APPS io as JSON text
    assert any(isinstance(r, dict) and "answer_start" in r for r in refs)  # SQuAD
    assert any(isinstance(r, dict) and "aliases" in r for r in refs)  # TriviaQA
    assert any(isinstance(r, bool) for r in refs) and any(isinstance(r, float) for r in refs)  # BoolQ, SVAMP
    code = [r for r in GENERATED if r["acceptable"] == ["code_tests"]]
    assert all(is_code_tests(r["reference"], r["metadata"]) for r in code)
    assert any(isinstance(r["reference"], str) and r["reference"].startswith("assert") for r in code)


def test_task_names_and_descriptions_do_not_reuse_the_tools_task_type_vocabulary() -> None:
    vocab = {t.lower().replace("_", " ") for s in builtin_specs() for t in s.task_types} - {"any"}
    formats = {f.lower() for s in builtin_specs() for f in s.answer_formats}
    for r in GENERATED:
        for key in ("task", "task_type", "domain", "description", "answer_format"):
            words = " " + re.sub(r"[^a-z0-9]+", " ", str(r[key]).lower()) + " "
            assert not [v for v in vocab if f" {v} " in words], (r["id"], key, r[key])
        assert r["answer_format"].lower() not in formats, r["id"]


def test_the_shipped_embeddings_and_model_are_those_of_this_set_and_these_tools() -> None:
    """Else every process that routes offline would embed the set and fit the model again (minutes):
    after changing the set, the tools or the method, run `rlar bench routing --save`."""
    import json

    from rlar.agent.offline import Embedder
    from rlar.routing.exemplars import ExemplarBank
    from rlar.routing.training import fingerprint, shipped_model_path

    def refuse(texts: list[str]) -> list[list[float]]:
        raise AssertionError("data/routing/vectors.npz is stale: run `rlar bench routing --save`")

    refuse.model_id = Embedder().model_id  # type: ignore[attr-defined]
    bank = ExemplarBank.from_records(RECORDS, refuse, model_id=refuse.model_id)  # type: ignore[attr-defined]
    shipped = json.loads(shipped_model_path().read_text())
    assert shipped["info"]["fingerprint"] == fingerprint(bank, builtin_specs()), (
        "data/routing/model.json is stale: run `rlar bench routing --save`"
    )
