"""Evaluation of policy checkpoints on held-out splits and data files with the paper's metrics (``rlar eval``).

- :mod:`rlar.eval.suites`: which tasks (built-in suites, data files in published formats, a run's own
  tasks), how many records, with which generation settings;
- :mod:`rlar.eval.runner`: resolve a checkpoint, generate (transformers or vLLM), score with the reward tools;
- :mod:`rlar.eval.tools`: which tools give each task's ``score`` — the ones the run used (its routing and
  registry snapshot, user and synthesised tools included);
- :mod:`rlar.eval.report`: terminal and Markdown tables, deltas between two checkpoints;
- :func:`run_eval`: the whole command — evaluate one or two checkpoints, write JSON, Markdown and samples.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from rlar.eval.report import comparison_rows, markdown_table, terminal_table
from rlar.eval.runner import (
    Checkpoint,
    EngineSettings,
    EvalResult,
    evaluate,
    judge_status,
    resolve_checkpoint,
    score_responses,
)
from rlar.eval.suites import DATA_SUITES, SUITES, EvalTask, get_suite, plan
from rlar.eval.tools import ChosenTool, ToolCatalog

__all__ = [
    "DATA_SUITES",
    "INDEX",
    "SUITES",
    "Checkpoint",
    "EngineSettings",
    "EvalResult",
    "EvalTask",
    "comparison_rows",
    "evaluate",
    "get_suite",
    "judge_status",
    "markdown_table",
    "plan",
    "resolve_checkpoint",
    "run_eval",
    "score_responses",
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


INDEX = "index.jsonl"
"""One line per eval in an output directory: its key, what was evaluated with which tools, its files."""


def eval_key(doc: dict[str, Any], base: dict[str, Any] | None, tasks: dict[str, Any], seed: int) -> str:
    """What identifies an eval: checkpoint (path, weights version), baseline, data and generation settings per
    task, the tools of each task's score (name, version, content hash, weight), engine and seed — 12 hex."""
    ident = {
        "checkpoint": [doc["path"], doc["version"]],
        "baseline": base and [base["path"], base["version"]],
        "tasks": tasks,
        "tools": {
            t: [[x["tool"], x["version"], x["content_hash"], x["weight"]] for x in v]
            for t, v in (doc.get("tools") or {}).items()
        },
        "engine": doc.get("engine"),
        "seed": seed,
    }
    return hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _free_stem(directory: Path, stem: str) -> str:
    """``stem``, or ``stem-2``, ``stem-3``… — the first whose files do not exist yet (evals never overwrite)."""
    n, out = 1, stem
    while any((directory / f"{out}{ext}").exists() for ext in (".json", ".md", ".samples.jsonl")):
        n += 1
        out = f"{stem}-{n}"
    return out


def _run_config(ck: Checkpoint, config: str | None) -> str | None:
    """``config``, or the run's own ``config.toml`` when the checkpoint is (in) a run directory, or the copy an
    exported checkpoint keeps (``rlar_config.toml``)."""
    if config:
        return config
    if ck.run_dir is not None and (ck.run_dir / "config.toml").is_file():
        return str(ck.run_dir / "config.toml")
    if ck.run_dir is None and (ck.model_dir / "rlar_config.toml").is_file():
        return str(ck.model_dir / "rlar_config.toml")
    return None


def run_eval(
    checkpoint: str,
    suite: str | None = None,
    *,
    compare: str | None = None,
    out: str | None = None,
    limit: int | None = None,
    tasks: list[str] | None = None,
    seed: int = 0,
    judge_url: str | None = None,
    device: str = "cpu",
    data: str | None = None,
    config: str | None = None,
    split: str = "test",
    engine: str = "transformers",
    dtype: str = "float32",
    options: dict[str, Any] | None = None,
    overrides: dict[str, Any] | None = None,
    threads: int | None = None,
) -> dict[str, Any]:
    """Evaluate ``checkpoint`` (and ``compare``, the baseline); write ``<name>.json``, ``<name>.md`` and
    ``<name>.samples.jsonl`` (every prompt, reference and response) under the checkpoint's run directory
    (``eval/``) or ``out``, and append a line to ``index.jsonl`` there; return the document.

    ``<name>`` is ``<suite or tasks>-<checkpoint label>[-vs-<baseline label>]-<key>``, the key a hash of
    checkpoint x data x tools x settings (:func:`eval_key`); a name already taken gets ``-2``, ``-3``…, so a
    second eval never overwrites the first one's files.

    ``score`` (tasks named with ``tasks``: the run's own tasks) comes from the tools the run used for the task
    (:mod:`rlar.eval.tools`), named in the document's ``result.tools`` and under the table. Built-in suites
    keep their fixed metrics only, so they compare across runs trained with different rewards (``rlar
    ablate``).

    What is evaluated (:func:`rlar.eval.suites.plan`): ``suite`` alone — a built-in suite (default
    ``demo``), ``tasks`` filtering it; ``data`` — the file in the format ``suite`` reads (or detected);
    ``tasks`` without ``suite`` — tasks of ``config`` (default: the run's own ``config.toml``) on their
    held-out ``split``, or on ``data``. Every task's data is loaded and its tools checked before any model
    is. Raises ``ValueError`` / ``FileNotFoundError`` with a readable message when the request does not fit.

    The document: ``{"key": <eval key>, "result": <checkpoint's metrics and tools>, "baseline": <compare's
    metrics or None>, "comparison": [rows], "tasks": {name: data and settings}, "tool_sources": [files the
    tools came from], "table": <terminal text>, "files": [paths]}``. The baseline is scored with the same
    tools as the checkpoint.
    """
    ck = resolve_checkpoint(checkpoint)
    base_ck = resolve_checkpoint(compare) if compare else None
    planned = plan(
        suite=suite,
        data=data,
        tasks=tasks,
        config=_run_config(ck, config),
        split=split,
        limit=limit,
        options=options,
        overrides=overrides,
    )
    loaded = [(t, t.load()) for t in planned]
    catalog = ToolCatalog.for_eval(ck.run_dir, _run_config(ck, config), ck.model_dir)
    chosen: dict[str, list[ChosenTool]] = {}
    for task, ds in loaded:
        if task.tool_score:
            try:
                chosen[task.name] = catalog.task_tools(task.name, ds.spec.default_tools)
            except ValueError as exc:
                raise ValueError(f"task {task.name!r}: {exc}") from None
    label = suite or ",".join(tasks or []) or (data and Path(data).name.split(".")[0]) or "tasks"
    settings = EngineSettings(kind=engine, device=device, dtype=dtype, threads=threads)
    kw: dict[str, Any] = {"seed": seed, "judge_url": judge_url, "engine": settings, "tools": chosen}
    base_doc = evaluate(base_ck, label, loaded, **kw).to_dict() if base_ck else None
    if base_doc is not None:
        base_doc["engine"] = engine
    result = evaluate(ck, label, loaded, **kw)
    doc = result.to_dict()
    doc["engine"] = engine
    table = terminal_table(doc, base_doc)
    directory = _out_dir(ck, out)
    directory.mkdir(parents=True, exist_ok=True)
    planned_tasks = {
        t.name: {
            "records": len(ds),
            "source": t.source or f"builtin:{t.name}",
            "n_samples": t.n_samples,
            "temperature": t.temperature,
            "max_new_tokens": t.max_new_tokens,
        }
        for t, ds in loaded
    }
    key = eval_key(doc, base_doc, planned_tasks, seed)
    stem = f"{_safe(label)}-{_safe(doc['label'])}" + (f"-vs-{_safe(base_doc['label'])}" if base_doc else "")
    full: dict[str, Any] = {
        "key": key,
        "result": doc,
        "baseline": base_doc,
        "comparison": comparison_rows(base_doc, doc) if base_doc else [],
        "tasks": planned_tasks,
        "tool_sources": catalog.sources,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    while True:  # the JSON file is created exclusively: two evals at once never take the same name
        name = _free_stem(directory, f"{stem}-{key}")
        files = [directory / f"{name}.json", directory / f"{name}.md", directory / f"{name}.samples.jsonl"]
        try:
            with files[0].open("x", encoding="utf-8") as fh:
                fh.write(json.dumps(full, indent=2, ensure_ascii=False) + "\n")
            break
        except FileExistsError:
            continue
    files[1].write_text(markdown_table(doc, base_doc))
    with files[2].open("w", encoding="utf-8") as fh:
        for name, rows in result.samples.items():
            for row in rows:
                fh.write(json.dumps({"task": name, **row}, ensure_ascii=False) + "\n")
    entry = {
        "key": key,
        "created": full["created"],
        "checkpoint": doc["label"],
        "path": doc["path"],
        "version": doc["version"],
        "baseline": base_doc["label"] if base_doc else None,
        "suite": label,
        "tasks": {n: t["source"] for n, t in planned_tasks.items()},
        "tools": doc["tools"],
        "seed": seed,
        "engine": engine,
        "metrics": doc["metrics"],
        "files": [f.name for f in files],
    }
    with (directory / INDEX).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry, ensure_ascii=False, default=str) + "\n")
    full["table"] = table
    full["files"] = [str(f) for f in files]
    return full
