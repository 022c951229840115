"""Shared pieces of the routing-set generator: the task variants a type's records are spread over, and the
record layout of ``data/routing/labelled.jsonl``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

# The tools a record may name in ``acceptable`` (the built-in reward tools).
MATH = ["math_verify"]
CODE = ["code_tests"]
CHOICE = ["exact_match", "normalized_match"]
LABEL = ["exact_match", "normalized_match"]
SPAN = ["normalized_match", "contains_match"]
MT = ["chrf", "bleu2"]
SUMMARY = ["embedding_similarity", "llm_judge", "chrf", "bleu2"]
MEANING = ["embedding_similarity", "llm_judge"]
JUDGE = ["llm_judge"]
OPEN = ["reward_model", "llm_judge"]
NONE: list[str] = []  # no built-in tool checks it: a verifier must be written


@dataclass(frozen=True)
class Task:
    """One benchmark format (the unit left out together in leave-one-type-out) and the ways users name it.

    Records cycle through ``names`` and ``descriptions`` (an empty description is common in real configs);
    ``domain``/``task_type``/``answer_format`` are what a user might declare (mostly nothing)."""

    type: str
    names: Sequence[str]
    descriptions: Sequence[str]
    data_source: str
    domains: Sequence[str] = ("",)
    task_types: Sequence[str] = ("",)
    answer_formats: Sequence[str] = ("",)


@dataclass
class Item:
    query: Any
    reference: Any
    acceptable: list[str]
    metadata: dict[str, Any] = field(default_factory=dict)


def records(task: Task, items: Iterable[Item]) -> list[dict[str, Any]]:
    out = []
    for i, it in enumerate(items):

        def pick(options: Sequence[str], i: int = i) -> str:
            return options[i % len(options)]

        out.append(
            {
                "id": f"{task.type}-{i + 1:03d}",
                "type": task.type,
                "task": pick(task.names),
                "domain": pick(task.domains),
                "task_type": pick(task.task_types),
                "answer_format": pick(task.answer_formats),
                "description": pick(task.descriptions),
                "data_source": task.data_source,
                "query": it.query,
                "reference": it.reference,
                "metadata": it.metadata,
                "acceptable": list(it.acceptable),
            }
        )
    return out
