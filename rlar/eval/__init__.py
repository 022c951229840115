"""Evaluation of policy checkpoints on held-out splits with the paper's metrics (``rlar eval``).

- :mod:`rlar.eval.suites`: which tasks, how many records, how each is scored;
- :mod:`rlar.eval.runner`: resolve a checkpoint, generate, score with the reward tools;
- :mod:`rlar.eval.report`: terminal and Markdown tables, deltas between two checkpoints;
- :func:`run_eval`: the whole command — evaluate one or two checkpoints, write JSON and Markdown.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from rlar.eval.report import comparison_rows, markdown_table, terminal_table
from rlar.eval.runner import Checkpoint, EvalResult, evaluate, judge_status, resolve_checkpoint
from rlar.eval.suites import SUITES, EvalTask, get_suite

__all__ = [
    "SUITES",
    "Checkpoint",
    "EvalResult",
    "EvalTask",
    "comparison_rows",
    "evaluate",
    "get_suite",
    "judge_status",
    "markdown_table",
    "resolve_checkpoint",
    "run_eval",
    "terminal_table",
]


def _out_dir(ck: Checkpoint, out: str | None) -> Path:
    if out:
        return Path(out)
    if ck.run_dir is not None:
        return ck.run_dir / "eval"
    return Path("runs") / "eval"


def _safe(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.@" else "_" for c in label)


def run_eval(
    checkpoint: str, suite: str, *, compare: str | None = None, out: str | None = None, limit: int | None = None,
    tasks: list[str] | None = None, seed: int = 0, judge_url: str | None = None, device: str = "cpu",
) -> dict[str, Any]:  # fmt: skip
    """Evaluate ``checkpoint`` (and ``compare``, the baseline) on ``suite``; write ``<name>.json`` and
    ``<name>.md`` under the checkpoint's run directory (``eval/``) or ``out``; return the document.

    The document: ``{"result": <checkpoint's metrics>, "baseline": <compare's metrics or None>,
    "comparison": [rows], "table": <terminal text>, "files": [paths]}``.
    """
    spec = get_suite(suite, limit=limit, tasks=tasks)
    ck = resolve_checkpoint(checkpoint)
    base_ck = resolve_checkpoint(compare) if compare else None
    base_doc = (
        evaluate(base_ck, suite, spec, seed=seed, judge_url=judge_url, device=device).to_dict() if base_ck else None
    )  # fmt: skip
    doc = evaluate(ck, suite, spec, seed=seed, judge_url=judge_url, device=device).to_dict()
    table = terminal_table(doc, base_doc)
    directory = _out_dir(ck, out)
    directory.mkdir(parents=True, exist_ok=True)
    stem = f"{suite}-{_safe(doc['label'])}" + (f"-vs-{_safe(base_doc['label'])}" if base_doc else "")
    full: dict[str, Any] = {
        "result": doc, "baseline": base_doc,
        "comparison": comparison_rows(base_doc, doc) if base_doc else [],
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }  # fmt: skip
    (directory / f"{stem}.json").write_text(json.dumps(full, indent=2, ensure_ascii=False) + "\n")
    (directory / f"{stem}.md").write_text(markdown_table(doc, base_doc))
    full["table"] = table
    full["files"] = [str(directory / f"{stem}.json"), str(directory / f"{stem}.md")]
    return full
