"""The reward tools on real model output (issue 39 item 2): data/real_outputs/smollm2_135m_instruct_labelled.jsonl
holds SmolLM2-135M-Instruct's verbatim answers (data/real_outputs/smollm2_135m_instruct.jsonl), each labelled by hand
for one tool — full marks deserved or not — by reading the response, before looking at what the tool gives.

Every record is scored as labelled, except those marked ``known_miss`` (what the tool cannot read, said in the
record); those must still miss, so the file says what the tools do. No record labelled false may get full marks
unless it is a known miss — contains_match's documented leniency (a mention contradicted in a later sentence)."""

from __future__ import annotations

import json
from pathlib import Path

from rlar.benchmarks.answers import load_records, verdicts
from tests.support.env import REPO

LABELLED = REPO / "data/real_outputs/smollm2_135m_instruct_labelled.jsonl"
SOURCE = REPO / "data/real_outputs/smollm2_135m_instruct.jsonl"


def _source() -> dict[str, dict[str, object]]:
    lines = Path(SOURCE).read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in (json.loads(line) for line in lines if line.strip())}


def test_the_labelled_records_are_the_models_verbatim_answers() -> None:
    source = _source()
    records = load_records(LABELLED)
    assert len(records) >= 300 and sum(r["label"] for r in records) >= 90
    for r in records:
        original = source[r["source_id"]]
        assert (r["query"], r["reference"], r["response"]) == (
            original["query"],
            original["reference"],
            original["response"],
        ), r["id"]
    kinds = {str(r["source_id"]).split("-")[0] for r in records}
    assert kinds == {"arithmetic", "word_problem", "short_answer", "list", "choice"}


def test_the_tools_score_real_model_answers_as_labelled() -> None:
    records = load_records(LABELLED)
    got = verdicts(records)
    wrong = [
        (r["id"], r["label"], v["status"], v["score"], v["reason"][:80])
        for r, v in zip(records, got, strict=True)
        if (v["full"] == r["label"]) == bool(r.get("known_miss"))
    ]
    assert not wrong, wrong
    false_full = [r["id"] for r, v in zip(records, got, strict=True) if v["full"] and not r["label"]]
    assert all("contains_match" in i for i in false_full), (
        f"only contains_match's documented leniency may give a wrong answer full marks: {false_full}"
    )
