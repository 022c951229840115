"""Synthesis without the actor stack: from records to validated verifiers on this host (a local bubblewrap jail).

``synthesize_records(records, agent)`` groups records ``{task, query, reference, metadata, description?, ...}``
by kind (their routing signature), builds one :class:`~rlar.synthesis.compose.SynthesisTask` per kind with up
to ``examples`` of its records, and runs :func:`rlar.synthesis.loop.synthesize` with
:func:`rlar.sandbox_client.local_runner`. Each result is a dict: the kind, the outcome row of the synthesis
report (:func:`rlar.synthesis.report.outcome_row`), the clauses the verifier does and does not check, and the
spec (``ToolSpec.to_dict()``) when one passed. ``write_export`` writes the specs in the registry's export
format, so ``rlar tools import FILE`` registers them in a live run.

This is what ``rlar tools route FILE --synthesize`` and ``rlar bench synthesis`` run. Candidate code runs only
in the jail.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rlar.agent.base import Agent
from rlar.routing import RoutingQuery
from rlar.sandbox_client import RunCode, local_runner
from rlar.synthesis.compose import SynthesisTask
from rlar.synthesis.loop import synthesize
from rlar.synthesis.report import outcome_row
from rlar.synthesis.validate import ValidationPolicy

__all__ = ["synthesize_records", "task_from_records", "write_export"]


def task_from_records(
    records: Sequence[Mapping[str, Any]], *, signature: str = "", examples: int = 4
) -> SynthesisTask:
    """The synthesis task for records of one kind (fields as ``rlar tools route`` reads them)."""

    first = RoutingQuery.from_record(records[0])
    shown = []
    for r in records[:examples]:
        q = RoutingQuery.from_record(r)
        ex: dict[str, Any] = {"query": q.query, "reference": q.reference, "metadata": q.metadata}
        for key in ("response", "responses"):
            if key in r:
                ex[key] = r[key]
        shown.append(ex)
    return SynthesisTask(
        description=first.description or first.query,
        task=first.task,
        domain=first.domain,
        task_type=first.task_type,
        answer_format=first.answer_format,
        examples=shown,
        signature=signature,
        request_id=f"standalone-{signature or first.task or 'task'}",
    )


async def synthesize_records(
    kinds: Mapping[str, Sequence[Mapping[str, Any]]],
    agent: Agent,
    *,
    run_code: RunCode | None = None,
    policy: ValidationPolicy | None = None,
    max_attempts: int = 3,
    partial: str = "refuse",
    examples: int = 4,
) -> list[dict[str, Any]]:
    """One synthesis per kind (``{signature: records}``); see the module docstring."""
    run = run_code or local_runner()
    out = []
    for sig, recs in kinds.items():
        task = task_from_records(recs, signature=sig, examples=examples)
        outcome = await synthesize(
            task, agent, run, max_attempts=max_attempts, policy=policy, partial=partial
        )
        cov = outcome.coverage
        out.append(
            {
                "signature": sig,
                "task": task.task,
                "instruction": task.instruction(),
                "records": len(recs),
                "report": outcome_row(outcome, request_id=task.request_id, task=task.task),
                "full": bool(cov.get("full")),
                "coverage": cov,
                "clauses": [c.to_dict() for c in task.reading().clauses],
                "spec": outcome.spec.to_dict() if outcome.spec is not None else None,
                "reason": outcome.reason,
            }
        )
    return out


def write_export(results: Sequence[Mapping[str, Any]], path: str | Path) -> int:
    """Write the specs that passed in the registry's export format (``rlar tools import``); returns how many."""
    lines = [
        json.dumps({"type": "tool", "spec": r["spec"]}, ensure_ascii=False) for r in results if r.get("spec")
    ]
    Path(path).write_text("".join(line + "\n" for line in lines))
    return len(lines)
