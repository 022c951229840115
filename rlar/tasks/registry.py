"""Resolve task configs into datasets and a mix: ``load_task``, ``load_tasks``, ``build_mix``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rlar.tasks.base import TaskDataset, TaskSpec
from rlar.tasks.builtin import builtin_task
from rlar.tasks.config import TaskConfig
from rlar.tasks.formats import FORMATS, detect_format, load_format
from rlar.tasks.loaders import load_records, load_verl
from rlar.tasks.mix import MixCursor, TaskMix


def _overrides(config: TaskConfig) -> dict[str, Any]:
    o = config.spec.model_dump(exclude_none=True)
    if "default_tools" in o:
        o["default_tools"] = tuple((str(n), float(w)) for n, w in o["default_tools"])
    return o


def _file_spec(config: TaskConfig) -> TaskSpec:
    """The spec of a JSONL/parquet task before overrides: generic, since the file says nothing about it."""
    has_reference = bool(config.fields.reference)
    return TaskSpec(
        name=config.name,
        domain="general",
        task_type="custom",
        description=(
            "Answer the prompt. A good answer matches the reference answer in meaning and form."
            if has_reference
            else "Answer the prompt helpfully, correctly and concisely."
        ),
        answer_format="text",
        # exact_match, not normalized_match: a default that ignored case and punctuation would silently
        # reward wrong answers of tasks about exactly those ("apple" for "Apple"). Lenient matching is an
        # explicit choice (spec.default_tools); see docs/reference/tools.md.
        default_tools=(("exact_match", 1.0),) if has_reference else (("llm_judge", 1.0),),
        data_source=", ".join(config.paths),
        split=config.split,
    )


def load_task(config: TaskConfig | Mapping[str, Any], base_dir: str | Path | None = None) -> TaskDataset:
    """Build one task's dataset from its config (a ``TaskConfig`` or a dict validated into one).

    Relative paths resolve against ``base_dir`` (the config file's directory) or the working directory.
    The dataset's spec is named ``config.name``, carries ``config.split``, and has the overrides applied.
    """
    cfg = config if isinstance(config, TaskConfig) else TaskConfig.model_validate(config)
    overrides = _overrides(cfg)
    if cfg.source == "builtin":
        ds = builtin_task(cfg.builtin or cfg.name, split=cfg.split, seed=cfg.seed, **cfg.options)
        if cfg.limit is not None:
            ds = ds.head(cfg.limit)
        return ds.with_spec(ds.spec.with_overrides(name=cfg.name, **overrides))
    source: str = cfg.source
    if source == "auto":
        source = detect_format(cfg.paths, base_dir)
        if source in ("jsonl", "parquet", "verl") and cfg.options:
            raise ValueError(f"task {cfg.name!r}: options do not apply to the detected {source} layout")
    if source in FORMATS:
        ds = load_format(
            source,
            cfg.paths,
            name=cfg.name,
            split=cfg.split,
            options=cfg.options,
            split_field=cfg.split_field,
            limit=cfg.limit,
            base_dir=base_dir,
        )
        return ds.with_spec(ds.spec.with_overrides(**overrides))
    if source == "verl":
        ds = load_verl(
            cfg.paths,
            name=cfg.name,
            split=cfg.split,
            split_field=cfg.split_field,
            limit=cfg.limit,
            base_dir=base_dir,
        )
        return ds.with_spec(ds.spec.with_overrides(**overrides))
    spec = _file_spec(cfg).with_overrides(**overrides)
    return load_records(
        cfg.paths,
        spec,
        cfg.fields.to_field_map(),
        fmt="jsonl" if source == "jsonl" else "parquet",
        split_field=cfg.split_field,
        limit=cfg.limit,
        base_dir=base_dir,
    )


def load_tasks(
    configs: Sequence[TaskConfig | Mapping[str, Any]], base_dir: str | Path | None = None
) -> list[tuple[TaskDataset, float]]:
    """Every task's dataset with its mixing weight; ``ValueError`` on a repeated name."""
    cfgs = [c if isinstance(c, TaskConfig) else TaskConfig.model_validate(c) for c in configs]
    names = [c.name for c in cfgs]
    if len(set(names)) != len(names):
        raise ValueError(f"task names must be unique, got {names}")
    return [(load_task(c, base_dir), c.weight) for c in cfgs]


def build_mix(
    configs: Sequence[TaskConfig | Mapping[str, Any]],
    seed: int = 0,
    *,
    epoch_size: int | None = None,
    cursor: MixCursor | None = None,
    base_dir: str | Path | None = None,
) -> TaskMix:
    """A ``TaskMix`` over the configured tasks, weighted by each config's ``weight``."""
    loaded = load_tasks(configs, base_dir)
    return TaskMix(
        [ds for ds, _ in loaded], [w for _, w in loaded], seed, epoch_size=epoch_size, cursor=cursor
    )
