"""Typed configuration of one task in the mix (a ``[[tasks]]`` table in the run's TOML).

``source`` picks where the records come from:
- ``builtin``: a generated or bundled demo task (``rlar.tasks.builtin.BUILTIN_NAMES``); ``builtin`` names
  it when ``name`` is a different label (two variants of one generator), ``options`` passes its knobs.
- ``jsonl`` / ``parquet``: local files with a ``fields`` mapping.
- ``verl``: parquet (or JSONL) in verl's RL layout; ``fields`` is not used.
- a public dataset format (``rlar.tasks.formats.FORMATS``: gsm8k, math, humaneval, mbpp, ifeval, chat,
  alpaca, wmt, flores): the columns as the dataset publishes them; ``options`` passes the format's knobs
  (e.g. ``direction = "de-en"``); ``fields`` is not used.
- ``auto``: the format is detected from the first row (``rlar.tasks.formats.detect_format``); an ambiguous
  or unknown layout is an error that names the candidates.

Example::

    [[tasks]]
    name = "gsm8k"
    source = "verl"
    path = "~/data/gsm8k/train.parquet"
    weight = 2.0
    spec = { description = "Grade-school math; the final number after '####' must be right." }
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rlar.tasks.formats import FORMATS
from rlar.tasks.loaders import FieldMap

SOURCES: tuple[str, ...] = ("builtin", "jsonl", "parquet", "verl", "auto", *FORMATS)
"""Every ``source`` a task may name: the generic layouts, then every public format of ``FORMATS``."""


class FieldsConfig(BaseModel):
    """Which fields of a JSONL/parquet row make a record (dotted paths reach into nested dicts)."""

    model_config = ConfigDict(extra="forbid")

    prompt: str = "prompt"
    """Field holding the prompt: a string or a list of ``{role, content}`` messages."""
    reference: str | None = "reference"
    """Field holding the reference answer; ``null``/omitted in TOML via ``reference = ""`` means none."""
    id: str | None = None
    """Field holding a stable unique id; unset means ``{file stem}-{line or row}``."""
    metadata: list[str] | None = None
    """Fields copied into record metadata; unset copies every other top-level column."""
    prompt_template: str | None = None
    """Builds a string prompt from top-level columns, e.g. ``"Question: {question}\\nAnswer:"``."""

    def to_field_map(self) -> FieldMap:
        return FieldMap(
            prompt=self.prompt,
            reference=self.reference or None,
            id=self.id or None,
            metadata=tuple(self.metadata) if self.metadata is not None else None,
            prompt_template=self.prompt_template,
        )


class SpecOverrides(BaseModel):
    """Replace parts of the task's spec (unset fields keep the builtin or inferred value)."""

    model_config = ConfigDict(extra="forbid")

    domain: str | None = None
    """e.g. math | code | translation | chat | string."""
    task_type: str | None = None
    """e.g. arithmetic | word_problem | code_unit_tests | translation | open_chat | copy | reverse."""
    description: str | None = None
    """What a good answer is, in natural language (read by the router and the synthesis agent)."""
    answer_format: str | None = None
    """e.g. number | code | text | bullets."""
    default_tools: list[tuple[str, float]] | None = None
    """(tool name, weight) pairs used when no router runs."""
    data_source: str | None = None
    """Where the data came from (free text)."""


class LabelledExample(BaseModel):
    """A response to the task labelled by the user: what a synthesised verifier must agree with."""

    model_config = ConfigDict(extra="forbid")

    response: str
    """A response to one of the task's prompts."""
    ok: bool
    """Whether the response follows the whole instruction (the verifier must give it the top score exactly
    when ``ok``)."""
    query: str | None = None
    """The prompt it answers (default: the task's first prompt)."""
    why: str = ""
    """Why it is right or wrong (shown when a verifier disagrees)."""


class TaskConfig(BaseModel):
    """One task of the mix."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    """The task's name in the mix, in metrics and on the wire; unique within a run."""
    source: Literal[SOURCES] = "builtin"  # type: ignore[valid-type]
    """Where records come from: builtin, jsonl/parquet (with ``fields``), verl, a public format, or auto."""
    builtin: str | None = None
    """For ``source = "builtin"``: which generator; defaults to ``name``."""
    path: str | list[str] | None = None
    """For file sources: file path(s) or glob(s); relative paths resolve against the config's directory."""
    split: str = "train"
    """Split label; builtin tasks generate this split, file sources record it (and filter by ``split_field``)."""
    split_field: str | None = None
    """For file sources: keep rows whose field equals ``split`` (verl: ``extra_info.split``)."""
    weight: float = Field(default=1.0, gt=0)
    """Mixing weight: the task's share of each mix epoch is weight / sum of weights."""
    limit: int | None = Field(default=None, ge=1)
    """Keep only the first N records (source order, after the split filter)."""
    seed: int = 0
    """For builtin generators: the generation and train/test assignment seed."""
    options: dict[str, int | float | str | bool] = Field(default_factory=dict)
    """Builtin generators' knobs (``max_operand`` for ``arith``) or a public format's (``direction``)."""
    fields: FieldsConfig = Field(default_factory=FieldsConfig)
    """For ``jsonl`` / ``parquet``: the field mapping."""
    spec: SpecOverrides = Field(default_factory=SpecOverrides)
    """Overrides applied to the task's spec after loading."""
    examples: list[LabelledExample] = Field(default_factory=list)
    """Labelled responses (``{response = "...", ok = true}``): a verifier synthesised for this task is refused
    when it disagrees with any of them."""
    examples_file: str | None = None
    """A JSONL file of labelled responses (``{"response": ..., "ok": ...}`` per line), added to ``examples``;
    a relative path resolves against the config file's directory."""

    @property
    def declares_tools(self) -> bool:
        """The task comes with reward tools of its own: the user named them (``spec.default_tools``), or its
        source says what scores it (a built-in task, a public dataset format, verl's layout with its
        ``reward_model`` style). A plain JSONL or parquet file says nothing: only the router (or a user) can
        choose how its answers are scored."""
        return self.spec.default_tools is not None or self.source not in ("jsonl", "parquet", "auto")

    @model_validator(mode="after")
    def _check_source(self) -> TaskConfig:
        if self.source == "builtin":
            if self.path is not None:
                raise ValueError(f"task {self.name!r}: source 'builtin' takes no path")
            if self.split_field is not None:
                raise ValueError(f"task {self.name!r}: split_field applies to file sources only")
        else:
            if not self.path:
                raise ValueError(f"task {self.name!r}: source {self.source!r} needs a path")
            if self.builtin is not None:
                raise ValueError(f"task {self.name!r}: builtin applies to source 'builtin' only")
            if self.options and self.source in ("jsonl", "parquet", "verl"):
                raise ValueError(
                    f"task {self.name!r}: options apply to builtin and public-format sources only"
                )
        if self.source not in ("jsonl", "parquet") and "fields" in self.model_fields_set:
            raise ValueError(f"task {self.name!r}: fields apply to jsonl/parquet sources only")
        return self

    def labelled_examples(self) -> list[dict[str, object]]:
        """``examples`` and the rows of ``examples_file`` as plain dicts; raises ``ValueError`` naming the file
        and line of a bad row."""

        out: list[dict[str, object]] = [e.model_dump(exclude_none=True) for e in self.examples]
        if self.examples_file:
            path = Path(self.examples_file)
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as exc:
                raise ValueError(f"task {self.name!r}: examples_file {path}: {exc.strerror or exc}") from exc
            for n, line in enumerate(text.splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    if isinstance(row, dict) and "text" in row and "response" not in row:
                        row = {"response": row.pop("text"), **row}
                    out.append(LabelledExample.model_validate(row).model_dump(exclude_none=True))
                except ValueError as exc:
                    raise ValueError(
                        f"task {self.name!r}: {path}:{n}: not a labelled example: {exc}"
                    ) from exc
        return out

    @property
    def paths(self) -> list[str]:
        if self.path is None:
            return []
        return [self.path] if isinstance(self.path, str) else list(self.path)
