"""Evaluation suites: which held-out splits are generated, how many records, and how each is scored.

A suite is a list of :class:`EvalTask`; the metric family follows the task's domain (``TaskSpec.domain``):

- ``math``: numeric exact match of the greedy answer (``math_verify``: ``12`` equals ``12.0``) — ``exact``;
- ``string`` (copy, reverse): exact match of the greedy answer — ``exact``;
- ``code``: ``n`` samples per problem at ``temperature``, run against the problem's tests in the sandbox;
  unbiased pass@k (Chen et al. 2021) for every k in ``ks`` with k <= n — ``pass@k``;
- ``translation``: corpus BLEU-2 (sacrebleu, 0-100) of the greedy outputs — ``bleu2`` — and the LLM judge's
  mean score (0-1) — ``judge``;
- ``chat``: the LLM judge's mean score — ``judge``;
- every task: average response length in tokens — ``avg_len``.

Built-in suites: ``demo`` (test splits of every built-in task, sized to run in well under 2 minutes on one
CPU core with the tiny policy), ``humaneval`` (all 33 test problems of the built-in HumanEval split, 10
samples each), ``math`` (the full arith and word_arith test splits), ``learnable`` (the four tasks the tiny
policy can learn, full test splits).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

__all__ = ["SUITES", "EvalTask", "get_suite"]


@dataclass(frozen=True, slots=True)
class EvalTask:
    """One task of a suite: a builtin task's test split (``name``), optionally cut to ``limit`` records."""

    name: str
    limit: int | None = None
    """First N records of the test split (generated tasks are listed in a seeded random order)."""
    max_new_tokens: int = 12
    n_samples: int = 1
    """Samples per prompt: 1 means greedy decoding; code tasks use n > 1 at ``temperature`` for pass@k."""
    temperature: float = 0.0
    ks: tuple[int, ...] = (1,)
    """pass@k values reported for code tasks (those with k <= n_samples)."""
    extra: dict[str, object] = field(default_factory=dict)


SUITES: dict[str, list[EvalTask]] = {
    "demo": [
        EvalTask("arith", limit=100),
        EvalTask("word_arith", limit=60),
        EvalTask("copy", limit=100),
        EvalTask("reverse", limit=100),
        EvalTask("translate", limit=24, max_new_tokens=48),
        EvalTask("chat", limit=12, max_new_tokens=64),
        EvalTask("humaneval", limit=8, max_new_tokens=64, n_samples=4, temperature=0.8, ks=(1, 4)),
    ],
    "humaneval": [
        EvalTask("humaneval", max_new_tokens=256, n_samples=10, temperature=0.8, ks=(1, 5, 10)),
    ],
    "math": [EvalTask("arith"), EvalTask("word_arith")],
    "learnable": [EvalTask("arith"), EvalTask("word_arith"), EvalTask("copy"), EvalTask("reverse")],
}


def get_suite(name: str, *, limit: int | None = None, tasks: list[str] | None = None) -> list[EvalTask]:
    """The suite ``name``; ``limit`` caps every task's records, ``tasks`` keeps only those task names."""
    if name not in SUITES:
        raise ValueError(f"unknown eval suite {name!r}; suites: {', '.join(SUITES)}")
    out = [t for t in SUITES[name] if tasks is None or t.name in tasks]
    if tasks is not None and not out:
        raise ValueError(f"suite {name!r} has none of the tasks {tasks}")
    if limit is not None:
        out = [replace(t, limit=min(limit, t.limit) if t.limit else limit) for t in out]
    return out
