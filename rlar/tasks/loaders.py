"""Load task datasets from local files: JSONL, parquet, and verl's RL parquet layout.

- JSONL (``.jsonl``, ``.jsonl.gz``): one JSON object per line; blank lines are skipped.
- parquet: read in row batches with pyarrow (imported lazily), so a large file is never held as a table.
- A ``FieldMap`` says which field is the prompt, the reference and the id. A field is a top-level column
  or a dotted path into nested dicts (``reward_model.ground_truth``). ``prompt_template`` builds a string
  prompt from the row's top-level columns instead (``"Q: {question}\\nA:"``).
- verl's layout (``load_verl``): ``prompt`` is a list of chat messages, ``data_source``, ``ability``,
  ``reward_model: {style, ground_truth}``, ``extra_info: {split, index, ...}``. The reference is
  ``ground_truth``; ``data_source``, ``ability``, ``reward_model.style`` (as ``reward_style``) and
  ``extra_info`` go into each record's metadata; the spec is inferred from them unless given.
- Several files load into one dataset, in the order given (a glob expands sorted).
- Ids: the id field's value as a string, or, without one, ``"{file stem}-{line}"`` (JSONL, 1-based line) /
  ``"{file stem}-{row}"`` (parquet, 0-based row). Duplicate ids are an error naming both places.
- ``split_field``: keep only rows whose field equals the spec's split (e.g. ``extra_info.split``).
- ``limit``: keep the first N rows that pass the split filter, in file order, then stop reading.

Every malformed row raises ``TaskDataError`` naming the file, the line (JSONL) or row (parquet), and why.
"""

from __future__ import annotations

import glob
import gzip
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rlar.tasks.base import TaskDataset, TaskRecord, TaskSpec, is_plain

# pyarrow is imported where used: heavy and optional (the CLI starts without it).

PathLike = str | Path


class TaskDataError(ValueError):
    """A malformed file or row. ``location`` is ``"line N"`` (JSONL, 1-based) or ``"row N"`` (parquet, 0-based)."""

    def __init__(self, path: PathLike, location: str | None, reason: str) -> None:
        self.path = str(path)
        self.location = location
        self.reason = reason
        where = f"{self.path}, {location}" if location else self.path
        super().__init__(f"{where}: {reason}")


@dataclass(frozen=True, slots=True)
class FieldMap:
    """Which fields of a row make a record.

    ``reference=None`` means the task has no reference (records get ``None``). ``id=None`` means positional
    ids. ``metadata=None`` copies every top-level column that is not the prompt, reference or id field;
    a tuple copies exactly those fields (dotted paths allowed; the metadata key is the path as written).
    ``prompt_template``, when set, replaces the prompt field: ``template.format_map(row)``.
    """

    prompt: str = "prompt"
    reference: str | None = "reference"
    id: str | None = None
    metadata: tuple[str, ...] | None = None
    prompt_template: str | None = None


def get_field(row: Mapping[str, Any], path: str) -> Any:
    """The value at a top-level key or a dotted path; ``KeyError(path)`` when absent.

    A top-level key that itself contains dots wins over the dotted reading.
    """
    if path in row:
        return row[path]
    node: Any = row
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise KeyError(path)
        node = node[part]
    return node


def expand_paths(paths: PathLike | Sequence[PathLike], base_dir: PathLike | None = None) -> list[Path]:
    """Resolve paths (relative ones against ``base_dir``) and expand globs, sorted per pattern.

    Raises ``TaskDataError`` for a pattern that matches nothing or a missing file.
    """
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    if not items:
        raise TaskDataError("<none>", None, "no data paths given")
    out: list[Path] = []
    for item in items:
        p = Path(item).expanduser()
        if base_dir is not None and not p.is_absolute():
            p = Path(base_dir) / p
        if glob.has_magic(str(p)):
            matches = sorted(Path(m) for m in glob.glob(str(p)))
            if not matches:
                raise TaskDataError(p, None, "glob matches no files")
            out.extend(matches)
        elif not p.is_file():
            raise TaskDataError(p, None, "file not found")
        else:
            out.append(p)
    return out


def _iter_jsonl(path: Path) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """Yield (location, positional id, row) for each non-blank line."""
    opener: Any = gzip.open if path.suffix == ".gz" else open
    stem = path.name.split(".")[0]
    with opener(path, "rt", encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            loc = f"line {lineno}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise TaskDataError(path, loc, f"invalid JSON: {e.msg} at column {e.colno}") from None
            if not isinstance(row, dict):
                raise TaskDataError(path, loc, f"expected a JSON object, got {type(row).__name__}")
            yield loc, f"{stem}-{lineno}", row


def _iter_parquet(path: Path, batch_size: int = 1024) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """Yield (location, positional id, row) for each row, reading one batch at a time."""
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except Exception as e:  # pyarrow raises several types for a file that is not parquet
        raise TaskDataError(path, None, f"cannot open as parquet: {e}") from None
    stem = path.name.split(".")[0]
    row_no = 0
    for batch in pf.iter_batches(batch_size=batch_size):
        for row in batch.to_pylist():
            yield f"row {row_no}", f"{stem}-{row_no}", row
            row_no += 1


def format_of(path: Path) -> str:
    """``"jsonl"`` for ``.jsonl``/``.jsonl.gz``, ``"parquet"`` for ``.parquet``; ``TaskDataError`` otherwise."""
    name = path.name.lower()
    if name.endswith((".jsonl", ".jsonl.gz")):
        return "jsonl"
    if name.endswith(".parquet"):
        return "parquet"
    raise TaskDataError(path, None, "unknown file type (expected .jsonl, .jsonl.gz or .parquet)")


def iter_rows(path: Path, fmt: str | None) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    fmt = fmt or format_of(path)
    if fmt == "jsonl":
        return _iter_jsonl(path)
    if fmt == "parquet":
        return _iter_parquet(path)
    raise ValueError(f"unknown file format {fmt!r} (jsonl | parquet)")


def _plain_or_fail(path: Path, loc: str, what: str, value: Any) -> Any:
    if not is_plain(value):
        raise TaskDataError(path, loc, f"{what} holds a value msgpack cannot carry ({type(value).__name__})")
    return value


def _row_id(path: Path, loc: str, row: Mapping[str, Any], id_field: str | None, positional: str) -> str:
    if id_field is None:
        return positional
    try:
        value = get_field(row, id_field)
    except KeyError:
        raise TaskDataError(path, loc, f"id field {id_field!r} is missing") from None
    if value is None or isinstance(value, dict | list) or value == "":
        raise TaskDataError(path, loc, f"id field {id_field!r} is {value!r}, expected a string or number")
    return str(value)


def _mapped_record(
    path: Path, loc: str, positional: str, row: Mapping[str, Any], fields: FieldMap
) -> TaskRecord:
    if fields.prompt_template is not None:
        try:
            prompt: Any = fields.prompt_template.format_map(row)
        except (KeyError, IndexError) as e:
            raise TaskDataError(path, loc, f"prompt_template refers to missing field {e}") from None
    else:
        try:
            prompt = get_field(row, fields.prompt)
        except KeyError:
            raise TaskDataError(path, loc, f"prompt field {fields.prompt!r} is missing") from None
    reference: Any = None
    if fields.reference is not None:
        try:
            reference = get_field(row, fields.reference)
        except KeyError:
            raise TaskDataError(path, loc, f"reference field {fields.reference!r} is missing") from None
    record_id = _row_id(path, loc, row, fields.id, positional)
    if fields.metadata is None:
        used = {fields.prompt, fields.reference, fields.id}
        metadata = {k: v for k, v in row.items() if k not in used}
    else:
        metadata = {}
        for key in fields.metadata:
            try:
                metadata[key] = get_field(row, key)
            except KeyError:
                raise TaskDataError(path, loc, f"metadata field {key!r} is missing") from None
    return make_record(path, loc, record_id, prompt, reference, metadata)


def make_record(
    path: Path, loc: str, record_id: str, prompt: Any, reference: Any, metadata: dict[str, Any]
) -> TaskRecord:
    _plain_or_fail(path, loc, "reference", reference)
    for key, value in metadata.items():
        _plain_or_fail(path, loc, f"metadata field {key!r}", value)
    try:
        return TaskRecord(id=record_id, prompt=prompt, reference=reference, metadata=metadata)
    except ValueError as e:
        raise TaskDataError(path, loc, str(e)) from None


def _keep_split(path: Path, loc: str, row: Mapping[str, Any], split_field: str | None, split: str) -> bool:
    if split_field is None:
        return True
    try:
        return str(get_field(row, split_field)) == split
    except KeyError:
        raise TaskDataError(path, loc, f"split field {split_field!r} is missing") from None


def collect_rows(
    files: list[Path],
    fmt: str | None,
    spec: TaskSpec,
    to_record: Callable[[Path, str, str, Mapping[str, Any]], TaskRecord],
    split_field: str | None,
    limit: int | None,
) -> TaskDataset:
    """Read rows from every file (``fmt=None``: by suffix) and build records.

    Duplicate ids are rejected with both places named.
    """
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    records: list[TaskRecord] = []
    seen: dict[str, str] = {}
    for path in files:
        for loc, positional, row in iter_rows(path, fmt):
            if not _keep_split(path, loc, row, split_field, spec.split):
                continue
            rec = to_record(path, loc, positional, row)
            if rec.id in seen:
                raise TaskDataError(path, loc, f"duplicate id {rec.id!r} (first seen at {seen[rec.id]})")
            seen[rec.id] = f"{path}, {loc}"
            records.append(rec)
            if limit is not None and len(records) >= limit:
                return TaskDataset(spec, records, seen)
    if not records:
        raise TaskDataError(", ".join(map(str, files)), None, f"no records (split {spec.split!r})")
    return TaskDataset(spec, records, seen)


def load_records(
    paths: PathLike | Sequence[PathLike],
    spec: TaskSpec,
    fields: FieldMap | None = None,
    *,
    fmt: Literal["jsonl", "parquet"] | None = None,
    split_field: str | None = None,
    limit: int | None = None,
    base_dir: PathLike | None = None,
) -> TaskDataset:
    """Load JSONL (optionally gzipped) or parquet file(s) into one dataset with ``spec``, each row's fields
    mapped by ``fields``; ``fmt=None`` reads each file by its suffix."""
    fm = fields or FieldMap()
    return collect_rows(
        expand_paths(paths, base_dir),
        fmt,
        spec,
        lambda p, loc, pos, row: _mapped_record(p, loc, pos, row, fm),
        split_field,
        limit,
    )


def load_jsonl(
    paths: PathLike | Sequence[PathLike], spec: TaskSpec, fields: FieldMap | None = None, **kw: Any
) -> TaskDataset:
    """:func:`load_records` of JSONL file(s) (optionally gzipped)."""
    return load_records(paths, spec, fields, fmt="jsonl", **kw)


def load_parquet(
    paths: PathLike | Sequence[PathLike], spec: TaskSpec, fields: FieldMap | None = None, **kw: Any
) -> TaskDataset:
    """:func:`load_records` of parquet file(s)."""
    return load_records(paths, spec, fields, fmt="parquet", **kw)


# ---------------------------------------------------------------------------------------------------------
# verl's RL layout

# ability (lower-cased) -> (domain, task_type, answer_format, default tools); anything else is "text".
_ABILITY_DEFAULTS: dict[str, tuple[str, str, str, tuple[tuple[str, float], ...]]] = {
    "math": ("math", "word_problem", "number", (("math_verify", 1.0),)),
    "code": ("code", "code_unit_tests", "code", (("code_tests", 1.0),)),
    "coding": ("code", "code_unit_tests", "code", (("code_tests", 1.0),)),
    "translation": ("translation", "translation", "text", (("chrf", 0.6), ("bleu2", 0.4))),
    "chat": ("chat", "open_chat", "text", (("llm_judge", 1.0),)),
}


def _verl_record(path: Path, loc: str, positional: str, row: Mapping[str, Any]) -> TaskRecord:
    for key in ("prompt", "reward_model"):
        if key not in row:
            raise TaskDataError(path, loc, f"verl row has no {key!r} column")
    rm = row["reward_model"]
    if not isinstance(rm, Mapping) or "ground_truth" not in rm:
        raise TaskDataError(path, loc, "verl 'reward_model' must be a dict with 'ground_truth'")
    prompt = row["prompt"]
    if not isinstance(prompt, list):
        raise TaskDataError(
            path, loc, f"verl 'prompt' must be a list of chat messages, got {type(prompt).__name__}"
        )
    extra = row.get("extra_info")
    if extra is not None and not isinstance(extra, Mapping):
        raise TaskDataError(path, loc, "verl 'extra_info' must be a dict")
    index = extra.get("index") if extra else None
    record_id = str(index) if index is not None and index != "" else positional
    metadata: dict[str, Any] = {
        "data_source": row.get("data_source"),
        "ability": row.get("ability"),
        "reward_style": rm.get("style"),
        "extra_info": dict(extra) if extra else {},
    }
    return make_record(path, loc, record_id, prompt, rm["ground_truth"], metadata)


def infer_verl_spec(records: Sequence[TaskRecord], name: str, split: str) -> TaskSpec:
    """A spec from the records' ``data_source`` and ``ability``: the most common ability sets the domain,
    task type, answer format and default tools; every data source seen is listed in ``data_source``."""
    abilities: dict[str, int] = {}
    sources: set[str] = set()
    for rec in records:
        ability = str(rec.metadata.get("ability") or "").lower()
        abilities[ability] = abilities.get(ability, 0) + 1
        if rec.metadata.get("data_source"):
            sources.add(str(rec.metadata["data_source"]))
    ability = max(abilities, key=lambda a: (abilities[a], a)) if abilities else ""
    default = (ability or "general", ability or "custom", "text", (("exact_match", 1.0),))
    domain, task_type, answer_format, tools = _ABILITY_DEFAULTS.get(ability, default)
    source_text = ", ".join(sorted(sources)) or "a verl dataset"
    description = (
        f"{ability or 'Open'} problems from {source_text} (verl layout). A good answer solves the problem "
        f"and states a final answer that matches the reference ground truth."
    )
    return TaskSpec(
        name=name,
        domain=domain,
        task_type=task_type,
        description=description,
        answer_format=answer_format,
        default_tools=tools,
        data_source=",".join(sorted(sources)),
        split=split,
    )


def load_verl(
    paths: PathLike | Sequence[PathLike],
    spec: TaskSpec | None = None,
    *,
    name: str | None = None,
    split: str = "train",
    split_field: str | None = None,
    limit: int | None = None,
    base_dir: PathLike | None = None,
) -> TaskDataset:
    """Load verl-layout parquet (or JSONL with the same columns) file(s).

    With ``spec=None`` the spec is inferred (``infer_verl_spec``) and named ``name`` or the first file's
    stem; with a spec, its name and split are used as given. ``split_field`` (typically
    ``"extra_info.split"``) keeps only rows of the spec's split.
    """
    files = expand_paths(paths, base_dir)
    task_name = spec.name if spec else (name or files[0].name.split(".")[0])
    # The real spec is inferred after reading; the provisional one only carries the name and split.
    provisional = spec or TaskSpec(
        name=task_name, domain="", task_type="", description="", answer_format="", split=split
    )
    ds = collect_rows(files, None, provisional, _verl_record, split_field, limit)
    if spec is not None:
        return ds
    return ds.with_spec(infer_verl_spec(ds.records, task_name, split))
