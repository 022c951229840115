"""Probe pairs for validating a reward model on a task: a good response and a corrupted one.

Each probe is (query, preferred, rejected): ``preferred`` is a reference answer of the task, ``rejected``
is that reference corrupted in one of these ways (chosen round-robin, deterministic in the seed):

- ``shuffle``: its words in another order (fluency and grammar broken, content kept);
- ``truncate``: only its first half (incomplete);
- ``echo``: the query's content echoed back (for translation: the untranslated source);
- ``repeat``: its words stuttered (degenerate repetition);
- ``swap``: the reference of another example (fluent but wrong answer).

A corruption that cannot apply (a one-word reference cannot be shuffled) is skipped for that example.
A reward model fit for the task must prefer the reference on most probes; which kinds it misses is
recorded. Limits: references are assumed to be good answers; corruptions are surface-level, so passing
proves a sane judge, not an excellent one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from rlar.tasks.base import Rng, query_text
from rlar.tasks.builtin import BUILTIN_NAMES, builtin_task

KINDS: tuple[str, ...] = ("shuffle", "truncate", "echo", "repeat", "swap")


@dataclass(frozen=True, slots=True)
class Example:
    """A task query with one good answer."""

    query: str
    reference: str
    source_id: str = ""


@dataclass(frozen=True, slots=True)
class ProbePair:
    query: str
    preferred: str
    rejected: str
    kind: str
    source_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _text_of_reference(ref: Any) -> str:
    if isinstance(ref, str):
        return ref
    if isinstance(ref, list) and ref and isinstance(ref[0], str):
        return ref[0]
    return ""


def examples_from_items(items: Iterable[dict[str, Any]]) -> list[Example]:
    """``{"query" | "prompt", "reference" | "response" | "chosen", "id"?}`` dicts → examples (unusable
    ones skipped)."""
    out: list[Example] = []
    for i, it in enumerate(items):
        prompt = it.get("query", it.get("prompt"))
        query = query_text(prompt) if isinstance(prompt, str | list) else ""
        ref = _text_of_reference(it.get("reference", it.get("response", it.get("chosen"))))
        if query.strip() and ref.strip():
            out.append(Example(query, ref, str(it.get("id", i))))
    return out


def examples_from_task(task: str, split: str = "test", seed: int = 0) -> list[Example]:
    """Examples from a builtin task's split (records with a string reference). Empty for unknown tasks."""

    if task not in BUILTIN_NAMES:
        return []
    ds = builtin_task(task, split=split, seed=seed)
    return examples_from_items({"id": r.id, "prompt": r.prompt, "reference": r.reference} for r in ds)


def echo_of(query: str) -> str:
    """The content part of a query: the text after its last ``": "`` when there is one (an instruction
    prefix such as "Translate to German: "), else the query itself."""
    _, sep, tail = query.rpartition(": ")
    return tail.strip() if sep and tail.strip() else query.strip()


def corrupt(ex: Example, kind: str, rng: Rng, others: Sequence[Example]) -> str | None:
    """``ex.reference`` corrupted by ``kind``; None when that corruption cannot apply to it."""
    words = ex.reference.split()
    if kind == "shuffle":
        if len(words) < 3:
            return None
        for _ in range(8):
            w = list(words)
            rng.shuffle(w)
            if w != words:
                return " ".join(w)
        return None
    if kind == "truncate":
        if len(words) < 2:
            return None
        return " ".join(words[: max(1, len(words) // 2)])
    if kind == "echo":
        echo = echo_of(ex.query)
        return echo if echo and echo != ex.reference.strip() else None
    if kind == "repeat":
        if not words:
            return None
        out: list[str] = []
        for word in words:
            out.extend([word] * (1 + rng.below(3)))
        return " ".join(out + words)
    if kind == "swap":
        pool = [o.reference for o in others if o.reference.strip() != ex.reference.strip()]
        return rng.choice(pool) if pool else None
    raise ValueError(f"unknown corruption {kind!r}; known: {KINDS}")


def build_probes(
    examples: Sequence[Example], n: int, *, seed: int = 0, kinds: Sequence[str] = KINDS
) -> list[ProbePair]:
    """Up to ``n`` probe pairs, cycling over examples and corruption kinds (deterministic in ``seed``)."""
    if not examples:
        return []
    rng = Rng("probes", seed)
    order = list(range(len(examples)))
    rng.shuffle(order)
    probes: list[ProbePair] = []
    attempts = 0
    while len(probes) < n and attempts < n * len(kinds) * 4:
        # Each pass over the examples shifts the kinds by one, so every example meets every kind.
        ex = examples[order[attempts % len(order)]]
        kind = kinds[(attempts + attempts // len(order)) % len(kinds)]
        attempts += 1
        rejected = corrupt(ex, kind, rng, examples)
        if rejected is None or rejected.strip() == ex.reference.strip():
            continue
        probes.append(ProbePair(ex.query, ex.reference, rejected, kind, ex.source_id))
    return probes
