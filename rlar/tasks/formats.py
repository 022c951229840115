"""Public dataset formats as task sources: rows as the datasets are published, turned into task records.

Each format reads JSONL (``.jsonl``, ``.jsonl.gz``) or parquet rows with the columns its dataset publishes
and knows the task's spec (domain, answer format, default reward tools):

- ``gsm8k``: columns ``question``, ``answer`` (ends ``#### N``); prompt: question + instruction;
  reference: N (commas dropped); default tools: math_verify.
- ``math``: columns ``problem``, ``solution`` (``\\boxed{}``), ``level``, ``type``; or ``answer`` (MATH-500);
  prompt: problem + instruction; reference: ``$answer$``: ``answer``, else the last ``\\boxed{}`` of the
  solution; default tools: math_verify.
- ``humaneval``: columns ``task_id``, ``prompt``, ``canonical_solution``, ``test``, ``entry_point``; prompt:
  prompt; reference: ``{prompt, test, entry_point}``; default tools: code_tests.
- ``mbpp``: columns ``task_id``, ``text`` (sanitized: ``prompt``), ``code``, ``test_list``,
  ``test_setup_code`` (sanitized: ``test_imports``), ``challenge_test_list``; prompt: task + its tests
  (Austin et al. 2021); reference: ``{test_list, test_setup_code?, test_imports?}``; default tools:
  code_tests.
- ``ifeval``: columns ``key``, ``prompt``, ``instruction_id_list``, ``kwargs``; prompt: prompt; reference:
  ``{instruction_id_list, kwargs}``; default tools: ifeval.
- ``chat``: columns ``messages`` (``{role, content}``) or ``conversations`` (ShareGPT ``{from, value}``);
  prompt: turns before the last assistant turn; reference: last assistant turn, if any; default tools:
  llm_judge.
- ``alpaca``: columns ``instruction``, ``input``?, ``output`` (Alpaca, AlpacaEval); prompt: instruction
  (+ input); reference: output; default tools: llm_judge.
- ``wmt``, ``flores``: see :mod:`rlar.tasks.parallel`; default tools: chrf, bleu2.

Code references keep the dataset's own fields; the one converter (``rlar.sandbox.parse_code_tests``) turns
them into sandbox tests when they are scored, and is called here at load time so a broken row fails
loading instead of abstaining at every reward. Record ids are the dataset's id column when it has
one (``task_id``, ``key``, ``unique_id``, ``id``, ...), else ``{file stem}-{line or row}``.

``detect_format`` names the format of a file from its first row (``source = "auto"``): exactly one format
must match, or the error lists the candidates (ambiguous) or the columns found (none).

Options (``[[tasks]] options = {...}``), per format: ``instruction`` (gsm8k, math: the sentence appended to
the question; ``""`` for none), ``include_tests`` (mbpp: show the tests in the prompt, default true),
``challenge_tests`` (mbpp: also run ``challenge_test_list``), ``direction``/``template`` (translation).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlar.sandbox import parse_code_tests
from rlar.tasks import parallel
from rlar.tasks.base import TaskDataset, TaskRecord, TaskSpec
from rlar.tasks.loaders import (
    PathLike,
    TaskDataError,
    collect_rows,
    expand_paths,
    format_of,
    iter_rows,
    make_record,
)
from rlar.tools.instructions import check_instructions

__all__ = [
    "FORMATS",
    "DataFormat",
    "boxed_answer",
    "detect_format",
    "gsm8k_final_answer",
    "load_format",
    "matching_formats",
]

GSM8K_INSTRUCTION = 'Let\'s think step by step and output the final answer after "####".'
MATH_INSTRUCTION = "Let's think step by step and output the final answer within \\boxed{}."
MBPP_TEMPLATE = (
    "You are an expert Python programmer, and here is your task: {text} Your code should pass these "
    "tests:\n\n{tests}"
)
_ID_COLUMNS = ("task_id", "key", "unique_id", "prompt_id", "id", "idx", "index")

RowFn = Callable[[Mapping[str, Any], dict[str, Any]], tuple[Any, Any, dict[str, Any]]]
"""(row, options) -> (prompt, reference, metadata); raises ValueError with the reason."""


@dataclass(frozen=True, slots=True)
class DataFormat:
    """One published layout: how to recognise a row, turn it into a record, and the task's spec."""

    name: str
    columns: str
    """The columns it reads, for error messages and docs."""
    matches: Callable[[Mapping[str, Any]], bool]
    convert: RowFn
    spec: TaskSpec
    """The spec's name and split are replaced by the task's."""
    options: dict[str, Any] = field(default_factory=dict)
    """Allowed options and their defaults."""
    reader: Callable[..., TaskDataset] | None = None
    """A reader for layouts that are not one record per row (FLORES per-language files); see ``load_format``."""


# ---------------------------------------------------------------------------------------------------------
# answers


def gsm8k_final_answer(answer: str) -> str:
    """The number after the last ``####`` of a GSM8K answer, thousands separators removed (``1,234`` -> ``1234``).

    Raises ``ValueError`` when there is no ``####`` or nothing after it.
    """
    if "####" not in answer:
        raise ValueError("GSM8K 'answer' has no '#### <final answer>' line")
    final = answer.rsplit("####", 1)[1].strip()
    if not final:
        raise ValueError("GSM8K 'answer' has nothing after '####'")
    return re.sub(r"(?<=\d),(?=\d{3}\b)", "", final)


def boxed_answer(text: str) -> str | None:
    """The content of the last ``\\boxed{...}`` (or ``\\fbox{...}``) in ``text``, braces matched; ``\\boxed 5``
    (no braces, as a few MATH solutions write it) gives ``5``. None when there is none or it is unclosed."""
    starts = [m for m in re.finditer(r"\\(?:boxed|fbox)\s*(\{)?", text)]
    for m in reversed(starts):
        if m.group(1) is None:
            bare = re.match(r"[^\s$]+", text[m.end() :])
            if bare:
                return bare.group(0).rstrip(".")
            continue
        depth, i = 1, m.end()
        while i < len(text):
            ch = text[i]
            if ch == "\\" and i + 1 < len(text):
                i += 2
                continue
            depth += ch == "{"
            depth -= ch == "}"
            if depth == 0:
                return text[m.end() : i].strip()
            i += 1
    return None


def _text(row: Mapping[str, Any], column: str) -> str:
    value = row.get(column)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"column {column!r} is missing or not a non-empty string")
    return value


def _with_instruction(text: str, instruction: str) -> str:
    return f"{text} {instruction}" if instruction else text


# ---------------------------------------------------------------------------------------------------------
# math


def _gsm8k(row: Mapping[str, Any], opts: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    answer = _text(row, "answer")
    prompt = _with_instruction(_text(row, "question"), str(opts["instruction"]))
    return prompt, gsm8k_final_answer(answer), {"solution": answer}


def _math(row: Mapping[str, Any], opts: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    problem = _text(row, "problem")
    solution = row.get("solution") if isinstance(row.get("solution"), str) else ""
    given = row.get("answer")
    reference = (
        str(given).strip() if given is not None and str(given).strip() else boxed_answer(solution or "")
    )
    if not reference:
        raise ValueError("MATH row has no 'answer' and its 'solution' has no \\boxed{...} answer")
    # The answer is LaTeX; in math delimiters a math parser reads "(-2, 2)" as an interval and "3, -3" as a
    # set, where bare text would give the last number.
    reference = reference if reference.startswith("$") else f"${reference}$"
    meta: dict[str, Any] = {"solution": solution, "answer": reference.strip("$")}
    for key in ("level", "type", "subject"):
        if row.get(key) is not None:
            meta[key] = row[key]
    return _with_instruction(problem, str(opts["instruction"])), reference, meta


# ---------------------------------------------------------------------------------------------------------
# code


def _check_tests(reference: dict[str, Any], query: str) -> None:

    parse_code_tests(reference, prompt=query)


def _humaneval(row: Mapping[str, Any], opts: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    prompt = _text(row, "prompt")
    reference = {"prompt": prompt, "test": _text(row, "test"), "entry_point": _text(row, "entry_point")}
    _check_tests(reference, prompt)
    meta = {"task_id": str(row.get("task_id"))}
    if isinstance(row.get("canonical_solution"), str):
        meta["canonical_solution"] = row["canonical_solution"]
    return prompt, reference, meta


def _string_list(row: Mapping[str, Any], column: str) -> list[str]:
    value = row.get(column)
    if value is None:
        return []
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"column {column!r} must be a list of strings")
    return list(value)


def _mbpp(row: Mapping[str, Any], opts: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    text = _text(row, "text" if "text" in row else "prompt")
    tests = _string_list(row, "test_list")
    if not tests:
        raise ValueError("MBPP 'test_list' is empty")
    challenge = _string_list(row, "challenge_test_list")
    reference: dict[str, Any] = {"test_list": tests + (challenge if opts["challenge_tests"] else [])}
    if str(row.get("test_setup_code") or "").strip():
        reference["test_setup_code"] = str(row["test_setup_code"])
    if _string_list(row, "test_imports"):
        reference["test_imports"] = _string_list(row, "test_imports")
    prompt = MBPP_TEMPLATE.format(text=text, tests="\n".join(tests)) if opts["include_tests"] else text
    _check_tests(reference, prompt)
    meta: dict[str, Any] = {"task_id": str(row.get("task_id"))}
    if isinstance(row.get("code"), str):
        meta["code"] = row["code"]
    return prompt, reference, meta


# ---------------------------------------------------------------------------------------------------------
# instruction following


def _ifeval(row: Mapping[str, Any], opts: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:

    ids = _string_list(row, "instruction_id_list")
    raw = row.get("kwargs")
    kwargs = list(raw) if isinstance(raw, list | tuple) else [{} for _ in ids] if raw is None else None
    if kwargs is None or len(kwargs) != len(ids):
        raise ValueError("IFEval 'kwargs' must be a list with one dict per instruction id")
    # The parquet release fills every kwargs struct with all possible keys, most of them null.
    cleaned = [{k: v for k, v in (kw or {}).items() if v is not None} for kw in kwargs]
    check_instructions(ids, cleaned)
    return _text(row, "prompt"), {"instruction_id_list": ids, "kwargs": cleaned}, {}


# ---------------------------------------------------------------------------------------------------------
# chat

_SHAREGPT_ROLES = {
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "assistant": "assistant",
    "chatgpt": "assistant",
    "bing": "assistant",
    "bard": "assistant",
    "system": "system",
}


def _chat(row: Mapping[str, Any], opts: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    turns = row.get("messages", row.get("conversations"))
    if not isinstance(turns, list | tuple) or not turns:
        raise ValueError("chat 'messages' / 'conversations' must be a non-empty list")
    messages = []
    for i, turn in enumerate(turns):
        if not isinstance(turn, Mapping):
            raise ValueError(f"chat turn {i} is not a dict")
        if "from" in turn and "role" not in turn:  # ShareGPT
            role = _SHAREGPT_ROLES.get(str(turn["from"]).lower())
            if role is None:
                raise ValueError(f"chat turn {i}: unknown ShareGPT speaker {turn['from']!r}")
            messages.append({"role": role, "content": turn.get("value")})
        else:
            messages.append({"role": turn.get("role"), "content": turn.get("content")})
    reference = None
    if messages[-1]["role"] == "assistant":
        reference = messages.pop()["content"]
    if not any(m["role"] == "user" for m in messages):
        raise ValueError("chat prompt has no user turn")
    return messages, reference, {}


def _alpaca(row: Mapping[str, Any], opts: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    prompt = _text(row, "instruction")
    extra = row.get("input")
    if isinstance(extra, str) and extra.strip():
        prompt = f"{prompt}\n\n{extra}"
    output = row.get("output")
    meta = {k: row[k] for k in ("generator", "dataset") if isinstance(row.get(k), str)}
    return prompt, output if isinstance(output, str) and output.strip() else None, meta


# ---------------------------------------------------------------------------------------------------------
# the table

_CHAT_SPEC = TaskSpec(
    name="chat",
    domain="chat",
    task_type="open_chat",
    answer_format="text",
    default_tools=(("llm_judge", 1.0),),
    description="Reply to the user as a helpful, honest assistant. A good answer is correct, complete, on topic "
    "and well written; the reference answer, when present, is one good answer, not the only one.",
)


def _has(*cols: str) -> Callable[[Mapping[str, Any]], bool]:
    return lambda row: all(c in row for c in cols)


def _build_formats() -> dict[str, DataFormat]:
    formats = [
        DataFormat(
            "gsm8k",
            "question, answer ('... #### N')",
            lambda r: "question" in r and "####" in str(r.get("answer", "")),
            _gsm8k,
            TaskSpec(
                name="gsm8k",
                domain="math",
                task_type="word_problem",
                answer_format="number",
                default_tools=(("math_verify", 1.0),),
                data_source="GSM8K",
                description="Grade-school math word problems. A good answer reasons step by step and ends "
                "with the final number, which must equal the reference.",
            ),
            {"instruction": GSM8K_INSTRUCTION},
        ),
        DataFormat(
            "math",
            "problem, solution (\\boxed{}) or answer, level, type",
            lambda r: "problem" in r and ("solution" in r or "answer" in r),
            _math,
            TaskSpec(
                name="math",
                domain="math",
                task_type="competition_math",
                answer_format="latex",
                default_tools=(("math_verify", 1.0),),
                data_source="MATH",
                description="Competition mathematics. A good answer reasons step by step and puts the "
                "final answer in \\boxed{}; it must be mathematically equal to the reference "
                "(fractions, radicals, intervals, expressions).",
            ),
            {"instruction": MATH_INSTRUCTION},
        ),
        DataFormat(
            "humaneval",
            "task_id, prompt, canonical_solution, test, entry_point",
            _has("task_id", "prompt", "test", "entry_point"),
            _humaneval,
            TaskSpec(
                name="humaneval",
                domain="code",
                task_type="code_unit_tests",
                answer_format="code",
                default_tools=(("code_tests", 1.0),),
                data_source="HumanEval",
                description="Complete the Python function whose signature and docstring are given. A good "
                "answer makes the hidden unit tests (check(candidate)) pass.",
            ),
        ),
        DataFormat(
            "mbpp",
            "task_id, text (or prompt), code, test_list, test_setup_code (or test_imports)",
            lambda r: "test_list" in r and ("text" in r or "prompt" in r),
            _mbpp,
            TaskSpec(
                name="mbpp",
                domain="code",
                task_type="code_unit_tests",
                answer_format="code",
                default_tools=(("code_tests", 1.0),),
                data_source="MBPP",
                description="Write a Python function for the task described. A good answer is a complete "
                "function that passes the assert tests shown in the prompt.",
            ),
            {"include_tests": True, "challenge_tests": False},
        ),
        DataFormat(
            "ifeval",
            "key, prompt, instruction_id_list, kwargs",
            _has("prompt", "instruction_id_list"),
            _ifeval,
            TaskSpec(
                name="ifeval",
                domain="instruction_following",
                task_type="instruction_following",
                answer_format="text",
                default_tools=(("ifeval", 1.0),),
                data_source="IFEval",
                description="Follow every verifiable instruction in the prompt (length, format, keywords, "
                "case, punctuation, sections) while answering it.",
            ),
        ),
        DataFormat(
            "chat",
            "messages [{role, content}] or conversations [{from, value}]",
            lambda r: isinstance(r.get("messages", r.get("conversations")), list | tuple),
            _chat,
            _CHAT_SPEC,
        ),
        DataFormat(
            "alpaca",
            "instruction, input?, output",
            _has("instruction", "output"),
            _alpaca,
            _CHAT_SPEC,
        ),
        DataFormat(
            "wmt",
            "translation {lang: sentence, ...}",
            parallel.is_wmt,
            parallel.wmt_row,
            parallel.SPEC.with_overrides(data_source="WMT"),
            dict(parallel.OPTIONS),
        ),
        DataFormat(
            "flores",
            "sentence_<xxx_Yyyy> columns, or per-language files (sentence / text / plain lines)",
            parallel.is_flores,
            parallel.flores_pair_row,
            parallel.SPEC.with_overrides(data_source="FLORES"),
            dict(parallel.OPTIONS),
            reader=parallel.read_flores,
        ),
    ]
    return {f.name: f for f in formats}


FORMATS: dict[str, DataFormat] = _build_formats()
"""Every public format by name (``wmt`` and ``flores`` come from :mod:`rlar.tasks.parallel`)."""

# Layouts that are not public datasets but are recognised by ``detect_format`` too.
_OTHER_LAYOUTS: dict[str, Callable[[Mapping[str, Any]], bool]] = {
    "verl": lambda r: (
        isinstance(r.get("prompt"), list | tuple) and isinstance(r.get("reward_model"), Mapping)
    ),
    "jsonl": _has("prompt", "reference"),
}


def _first_row(path: Path) -> Mapping[str, Any]:
    if parallel.is_plain_text(path):
        return {"sentence": ""}
    for _, _, row in iter_rows(path, None):
        return row
    raise TaskDataError(path, None, "file has no rows")


def matching_formats(
    paths: PathLike | Sequence[PathLike], base_dir: PathLike | None = None
) -> tuple[Path, list[str], list[str]]:
    """(first file, its first row's columns, every layout that row fits: ``FORMATS`` names, ``"verl"``, and
    ``"jsonl"``/``"parquet"`` for this project's own layout of ``prompt`` and ``reference``)."""
    first = parallel.expand(paths, base_dir)[0]
    row = _first_row(first)
    found = [name for name, f in FORMATS.items() if f.matches(row)]
    found += [name for name, match in _OTHER_LAYOUTS.items() if match(row)]
    if "jsonl" in found and format_of(first) == "parquet":
        found[found.index("jsonl")] = "parquet"
    return first, sorted(row), found


def detect_format(paths: PathLike | Sequence[PathLike], base_dir: PathLike | None = None) -> str:
    """The one layout the first file's first row fits (see ``matching_formats``). Raises ``TaskDataError``
    when none or more than one fits, naming the candidates or the columns found."""
    first, columns, found = matching_formats(paths, base_dir)
    if len(found) == 1:
        return found[0]
    if not found:
        known = "; ".join(f"{f.name}: {f.columns}" for f in FORMATS.values())
        raise TaskDataError(
            first,
            None,
            f"no known dataset format has columns {columns}; set the task's "
            f"source (known: {known}; or jsonl/parquet with a fields mapping)",
        )
    raise TaskDataError(
        first,
        None,
        f"ambiguous format: the columns {columns} fit {' and '.join(found)}; "
        f"set the task's source to one of them",
    )


def _resolved_options(fmt: DataFormat, options: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(options) - set(fmt.options))
    if unknown:
        allowed = ", ".join(fmt.options) or "none"
        raise ValueError(f"format {fmt.name!r} has no option(s) {unknown} (options: {allowed})")
    return {**fmt.options, **options}


def _row_id(row: Mapping[str, Any], positional: str) -> str:
    for col in _ID_COLUMNS:
        value = row.get(col)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value) != "":
            return str(value)
    return positional


def load_format(
    fmt_name: str,
    paths: PathLike | Sequence[PathLike],
    *,
    name: str | None = None,
    split: str = "train",
    options: Mapping[str, Any] | None = None,
    split_field: str | None = None,
    limit: int | None = None,
    base_dir: PathLike | None = None,
) -> TaskDataset:
    """Load file(s) in the public format ``fmt_name`` into one dataset named ``name`` (default: the format).

    Raises ``ValueError`` for an unknown format or option, ``TaskDataError`` naming the file and line/row
    for a malformed row.
    """
    if fmt_name not in FORMATS:
        raise ValueError(f"unknown dataset format {fmt_name!r}; formats: {', '.join(FORMATS)}")
    fmt = FORMATS[fmt_name]
    opts = _resolved_options(fmt, options or {})
    spec = fmt.spec.with_overrides(name=name or fmt_name, split=split)
    convert = make_converter(fmt, opts)
    if fmt.reader is not None:
        return fmt.reader(
            spec, paths, convert, options=opts, split_field=split_field, limit=limit, base_dir=base_dir
        )
    files = expand_paths(paths, base_dir)
    return collect_rows(
        files, None, spec.with_overrides(data_source=", ".join(map(str, files))), convert, split_field, limit
    )


def make_converter(
    fmt: DataFormat, opts: dict[str, Any]
) -> Callable[[Path, str, str, Mapping[str, Any]], TaskRecord]:
    """A ``collect_rows`` row function for ``fmt``: converts, and names the file and line on failure."""

    def to_record(path: Path, loc: str, positional: str, row: Mapping[str, Any]) -> TaskRecord:
        try:
            prompt, reference, metadata = fmt.convert(row, opts)
        except ValueError as e:
            raise TaskDataError(path, loc, f"{fmt.name}: {e}") from None
        return make_record(path, loc, _row_id(row, positional), prompt, reference, metadata)

    return to_record
