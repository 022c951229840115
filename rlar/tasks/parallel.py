"""Parallel text as translation tasks: WMT's ``translation`` records and FLORES' sentence files.

- ``wmt``: one row per pair, ``{"translation": {"de": "...", "en": "..."}}`` (the WMT14/16/19 releases).
- ``flores``, either layout FLORES-200 is published in:
  - pair rows with one column per language, ``sentence_eng_Latn`` / ``sentence_deu_Latn``;
  - one file per language, aligned by position: the original release's plain-text files
    (``devtest/eng_Latn.devtest``, one sentence a line), or JSONL/parquet rows with ``sentence``
    (or FLORES+'s ``text`` with ``iso_639_3``). The language is the ``xxx_Yyyy`` code in the file
    name; ``path`` may name the files, a glob or their directory. Row counts must agree, and so must
    ``id`` columns where both files have them.

``direction`` (an option, ``"de-en"`` or ``"eng_Latn-deu_Latn"``) picks source and target; ISO 639-1
codes map to FLORES codes for common languages (``LANGUAGES``). Without it, a file holding exactly two
languages, one of them English, is read English -> the other; anything else is an error naming the
languages found. ``template`` formats the prompt from ``{source_name}``, ``{target_name}`` and ``{text}``.

Records: the prompt asks for the translation; the reference is the target sentence; metadata holds
``source`` (the source sentence), ``source_lang`` and ``target_lang``. BLEU tokenisation for a target
language is ``bleu_tokenizer(lang)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rlar.tasks.base import TaskDataset, TaskRecord, TaskSpec
from rlar.tasks.loaders import PathLike, TaskDataError, collect_rows, expand_paths, iter_rows, make_record

__all__ = [
    "LANGUAGES",
    "OPTIONS",
    "SPEC",
    "bleu_tokenizer",
    "expand",
    "flores_pair_row",
    "is_flores",
    "is_plain_text",
    "is_wmt",
    "language_name",
    "read_flores",
    "wmt_row",
]

TEMPLATE = "Translate the following {source_name} text into {target_name}. Reply with the translation only.\n\n{text}"

# ISO 639-1 -> (English name, FLORES-200 code)
LANGUAGES: dict[str, tuple[str, str]] = {
    "en": ("English", "eng_Latn"),
    "de": ("German", "deu_Latn"),
    "fr": ("French", "fra_Latn"),
    "es": ("Spanish", "spa_Latn"),
    "it": ("Italian", "ita_Latn"),
    "pt": ("Portuguese", "por_Latn"),
    "nl": ("Dutch", "nld_Latn"),
    "ru": ("Russian", "rus_Cyrl"),
    "zh": ("Chinese", "zho_Hans"),
    "ja": ("Japanese", "jpn_Jpan"),
    "ko": ("Korean", "kor_Hang"),
    "cs": ("Czech", "ces_Latn"),
    "pl": ("Polish", "pol_Latn"),
    "tr": ("Turkish", "tur_Latn"),
    "ar": ("Arabic", "arb_Arab"),
    "hi": ("Hindi", "hin_Deva"),
    "fi": ("Finnish", "fin_Latn"),
    "et": ("Estonian", "est_Latn"),
    "lv": ("Latvian", "lvs_Latn"),
    "lt": ("Lithuanian", "lit_Latn"),
    "ro": ("Romanian", "ron_Latn"),
    "gu": ("Gujarati", "guj_Gujr"),
    "kk": ("Kazakh", "kaz_Cyrl"),
    "uk": ("Ukrainian", "ukr_Cyrl"),
    "sv": ("Swedish", "swe_Latn"),
    "da": ("Danish", "dan_Latn"),
    "hu": ("Hungarian", "hun_Latn"),
    "el": ("Greek", "ell_Grek"),
    "he": ("Hebrew", "heb_Hebr"),
    "vi": ("Vietnamese", "vie_Latn"),
    "id": ("Indonesian", "ind_Latn"),
    "th": ("Thai", "tha_Thai"),
    "is": ("Icelandic", "isl_Latn"),
    "ps": ("Pashto", "pbt_Arab"),
    "km": ("Khmer", "khm_Khmr"),
    "ne": ("Nepali", "npi_Deva"),
    "bn": ("Bengali", "ben_Beng"),
    "ta": ("Tamil", "tam_Taml"),
    "ha": ("Hausa", "hau_Latn"),
}
_BY_FLORES = {code: (iso, name) for iso, (name, code) in LANGUAGES.items()}
_FLORES_CODE = re.compile(r"(?<![A-Za-z])([a-z]{3}_[A-Z][a-z]{3})(?![A-Za-z])")
_PAIR_COLUMN = re.compile(r"^sentence_([a-z]{3}_[A-Z][a-z]{3})$")
_CHAR_TOKENIZED = {"ja", "ko", "th", "km", "my", "lo"}


def language_name(code: str) -> str:
    """English name of an ISO 639-1 or FLORES code (the code itself when unknown)."""
    if code in LANGUAGES:
        return LANGUAGES[code][0]
    return _BY_FLORES.get(code, (code, code))[1]


def _iso(code: str) -> str:
    return _BY_FLORES[code][0] if code in _BY_FLORES else code.split("_")[0]


def bleu_tokenizer(lang: str) -> str:
    """sacrebleu tokenizer for a target language: ``zh`` for Chinese, ``char`` for languages written without
    spaces (ja, ko, th, km, my, lo; sacrebleu's mecab tokenizers need extra packages), else ``13a``."""
    iso = _iso(lang)
    return "zh" if iso == "zh" else "char" if iso in _CHAR_TOKENIZED else "13a"


def _parse_direction(direction: str, available: Sequence[str], where: str) -> tuple[str, str]:
    """(source, target) codes as spelled in ``available``; an ISO 639-1 code matches its FLORES code."""

    def find(code: str) -> str:
        for cand in (code, LANGUAGES.get(code, ("", ""))[1], _BY_FLORES.get(code, ("", ""))[0]):
            if cand and cand in available:
                return cand
        raise ValueError(
            f"{where}: language {code!r} of direction {direction!r} is not among {sorted(available)}"
        )

    if direction:
        parts = direction.split("-")
        if len(parts) != 2 or not all(parts):
            raise ValueError(
                f"direction must be 'SRC-TGT' (e.g. 'de-en' or 'eng_Latn-deu_Latn'), got {direction!r}"
            )
        return find(parts[0]), find(parts[1])
    english = [c for c in available if _iso(c) == "en"]
    if len(available) == 2 and len(english) == 1:
        other = next(c for c in available if c != english[0])
        return english[0], other
    raise ValueError(
        f"{where}: languages {sorted(available)}: set the direction (e.g. options.direction = "
        f"'{available[0] if available else 'de'}-en' or `--direction`)"
    )


def _prompt(template: str, src: str, tgt: str, text: str) -> str:
    return template.format(source_name=language_name(src), target_name=language_name(tgt), text=text)


def _pair(
    text: Any, target: Any, src: str, tgt: str, opts: dict[str, Any]
) -> tuple[Any, Any, dict[str, Any]]:
    if not isinstance(text, str) or not text.strip() or not isinstance(target, str) or not target.strip():
        raise ValueError(f"empty or missing {src}/{tgt} sentence")
    meta = {"source": text, "source_lang": src, "target_lang": tgt}
    return _prompt(str(opts["template"]), src, tgt, text), target, meta


def wmt_row(row: Mapping[str, Any], opts: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    pair = row.get("translation")
    if not isinstance(pair, Mapping):
        raise ValueError("WMT 'translation' must be a dict of language -> sentence")
    src, tgt = _parse_direction(str(opts["direction"]), list(pair), "WMT row")
    return _pair(pair[src], pair[tgt], src, tgt, opts)


def _pair_columns(row: Mapping[str, Any]) -> list[str]:
    return [m.group(1) for m in (_PAIR_COLUMN.match(k) for k in row) if m]


def flores_pair_row(row: Mapping[str, Any], opts: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    src, tgt = _parse_direction(str(opts["direction"]), _pair_columns(row), "FLORES row")
    return _pair(row[f"sentence_{src}"], row[f"sentence_{tgt}"], src, tgt, opts)


def is_plain_text(path: Path) -> bool:
    """A FLORES plain-text file (``.devtest``, ``.dev``, ``.txt``): one sentence a line."""
    return path.suffix in (".devtest", ".dev", ".txt")


def expand(paths: PathLike | Sequence[PathLike], base_dir: PathLike | None = None) -> list[Path]:
    """``expand_paths`` that also takes directories (their files, sorted; hidden files skipped)."""
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    out: list[Path] = []
    for item in items:
        p = Path(item).expanduser()
        if base_dir is not None and not p.is_absolute():
            p = Path(base_dir) / p
        if p.is_dir():
            files = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
            if not files:
                raise TaskDataError(p, None, "directory holds no files")
            out.extend(files)
        else:
            out.extend(expand_paths([p]))
    return out


def _sentences(path: Path) -> list[tuple[str, str | None, str]]:
    """(location, id or None, sentence) for every sentence of a per-language file."""
    if is_plain_text(path):
        lines = path.read_text(encoding="utf-8").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return [(f"line {i}", None, line) for i, line in enumerate(lines, start=1)]
    out = []
    for loc, _, row in iter_rows(path, None):
        text = row.get("sentence", row.get("text"))
        if not isinstance(text, str):
            raise TaskDataError(path, loc, "FLORES row has no string 'sentence' (or 'text') column")
        rid = row.get("id")
        out.append((loc, None if rid is None else str(rid), text))
    return out


def read_flores(
    spec: TaskSpec,
    paths: PathLike | Sequence[PathLike],
    pair_rows: Callable[[Path, str, str, Mapping[str, Any]], TaskRecord],
    *,
    options: dict[str, Any],
    split_field: str | None,
    limit: int | None,
    base_dir: PathLike | None,
) -> TaskDataset:
    """FLORES in either layout (module docstring); ``pair_rows`` converts pair rows (``sentence_<code>``)."""
    files = expand(paths, base_dir)
    spec = spec.with_overrides(data_source=", ".join(map(str, files)))
    first = files[0]
    if not is_plain_text(first):
        row = next((r for _, _, r in iter_rows(first, None)), None)
        if row is not None and _pair_columns(row):
            return collect_rows(files, None, spec, pair_rows, split_field, limit)
    if split_field is not None:
        raise ValueError("split_field does not apply to FLORES per-language files (each file is one split)")
    by_lang: dict[str, Path] = {}
    for f in files:
        codes = _FLORES_CODE.findall(f.name)
        if len(codes) != 1:
            raise TaskDataError(
                f, None, "FLORES per-language file names must hold one language code like eng_Latn"
            )
        if codes[0] in by_lang:
            raise TaskDataError(f, None, f"two files for {codes[0]} (also {by_lang[codes[0]]})")
        by_lang[codes[0]] = f
    try:
        src, tgt = _parse_direction(str(options["direction"]), list(by_lang), "FLORES files")
    except ValueError as e:
        raise TaskDataError(", ".join(map(str, files)), None, str(e)) from None
    source, target = _sentences(by_lang[src]), _sentences(by_lang[tgt])
    if len(source) != len(target):
        raise TaskDataError(
            by_lang[tgt], None, f"{len(target)} sentences, but {by_lang[src].name} has {len(source)}"
        )
    records: list[TaskRecord] = []
    for i, ((loc, sid, text), (_, tid, ref)) in enumerate(zip(source, target, strict=True)):
        if sid is not None and tid is not None and sid != tid:
            raise TaskDataError(by_lang[tgt], loc, f"id {tid!r} does not match the source's {sid!r}")
        try:
            prompt, reference, meta = _pair(text, ref, src, tgt, options)
        except ValueError as e:
            raise TaskDataError(by_lang[src], loc, f"flores: {e}") from None
        records.append(make_record(by_lang[src], loc, sid or str(i + 1), prompt, reference, meta))
        if limit is not None and len(records) >= limit:
            break
    return TaskDataset(spec, records)


SPEC = TaskSpec(
    name="translation",
    domain="translation",
    task_type="translation",
    answer_format="text",
    default_tools=(("chrf", 0.6), ("bleu2", 0.4)),
    description="Translate the given text into the language the prompt names. A good answer is only the "
    "translation: the same meaning, fluent and grammatical; other wordings than the reference are acceptable.",
)
OPTIONS = {"direction": "", "template": TEMPLATE}


def is_wmt(row: Mapping[str, Any]) -> bool:
    return isinstance(row.get("translation"), Mapping)


def is_flores(row: Mapping[str, Any]) -> bool:
    return bool(_pair_columns(row)) or "sentence" in row or ("text" in row and "iso_639_3" in row)
