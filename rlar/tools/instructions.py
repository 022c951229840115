"""IFEval's verifiable instructions (Zhou et al. 2023) as a reward tool: ``ifeval``.

The reference of an IFEval record is ``{"instruction_id_list": [...], "kwargs": [{...}, ...]}`` (one kwargs
dict per instruction, nulls dropped). Each of the 25 instruction ids has a checker that follows the
published semantics of google-research's ``instruction_following_eval`` (counts with "less than" /
"at least" relations, ``* * *`` paragraph dividers, ``******`` between two responses, ...). Two readings:

- strict: the checker on the response as is;
- loose: the instruction counts as followed if it holds for any of the response, the response without its
  first line, without its last line, or without both, each with and without ``*`` characters.

Score (``params.scoring``): ``"all"`` (default) — 1 if every instruction is followed strictly (IFEval's
prompt-level strict accuracy), else 0; ``"fraction"`` — the fraction followed strictly (instruction
level). ``details`` carry both readings per instruction, so the eval reports prompt- and
instruction-level, strict and loose accuracy from one pass.

Where the original differs: sentences are split by a regular expression much like the original's
``split_into_sentences`` (abbreviations, decimals and initials are not sentence ends), words are ``\\w+``
runs (the original's ``RegexpTokenizer(r"\\w+")``), and capital words are ``\\w+`` runs that are upper case
(the original tokenises with NLTK's ``word_tokenize``). Language checks use ``langdetect`` (seeded, as in
the original); when it cannot decide, the check passes, as in the original.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from langdetect import DetectorFactory, detect
from langdetect.lang_detect_exception import LangDetectException

from rlar.tools.base import RewardTool, ToolInput, ToolKind, ToolResult, ToolSpec

__all__ = ["INSTRUCTIONS", "IFEvalTool", "check_instructions", "follows", "loose_variants"]

_RELATIONS = ("less than", "at least")


def _compare(count: int, relation: str, target: int) -> bool:
    return count < target if relation == "less than" else count >= target


def _detect_language(text: str) -> str | None:

    DetectorFactory.seed = 0
    try:
        return str(detect(text))
    except LangDetectException:
        return None


_ABBREVIATIONS = frozenset("mr mrs ms dr prof sr jr st vs etc e.g i.e inc ltd co no fig approx".split())
_END_CANDIDATE = re.compile(r"[.!?]+[\"')\]]*(?=\s|$)")


def count_sentences(text: str) -> int:
    """Sentences in ``text``: runs of . ! ? followed by space or the end, not after an abbreviation (Mr.,
    e.g.) or an initial (J.); text after the last end counts as one more sentence. Decimals never end one
    (their dot is followed by a digit)."""
    count, last = 0, 0
    for m in _END_CANDIDATE.finditer(text):
        before = text[last : m.start()]
        word = before.split()[-1] if before.split() else ""
        if m.group(0).startswith(".") and (
            word.lower() in _ABBREVIATIONS or (len(word) == 1 and word.isupper())
        ):
            continue
        if before.strip():
            count += 1
        last = m.end()
    return count + (1 if text[last:].strip() else 0)


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


def _paragraphs_divided(text: str, n: int) -> bool:
    parts = re.split(r"\s?\*\*\*\s?", text)
    count = len(parts)
    for i, part in enumerate(parts):
        if not part.strip():
            if i in (0, len(parts) - 1):
                count -= 1
            else:
                return False
    return count == n


def _nth_paragraph_first_word(text: str, num_paragraphs: int, nth_paragraph: int, first_word: str) -> bool:
    parts = re.split(r"\n\n", text)
    count = sum(1 for p in parts if p.strip())
    if nth_paragraph > count or nth_paragraph < 1 or nth_paragraph > len(parts):
        return False
    paragraph = parts[nth_paragraph - 1].strip()
    if not paragraph:
        return False
    word = paragraph.split()[0].strip().lstrip("'").lstrip('"')
    found = ""
    for ch in word:
        if ch in {".", ",", "?", "!", "'", '"'}:
            break
        found += ch.lower()
    return count == num_paragraphs and found == first_word.strip().lower()


def _postscript(text: str, marker: str) -> bool:
    low = text.lower()
    if marker == "P.P.S":
        pattern = r"\s*p\.\s?p\.\s?s.*$"
    elif marker == "P.S.":
        pattern = r"\s*p\.\s?s\..*$"
    else:
        pattern = r"\s*" + re.escape(marker.lower()) + r".*$"
    return bool(re.findall(pattern, low, flags=re.MULTILINE))


def _highlights(text: str) -> int:
    single = [h for h in re.findall(r"\*[^\n\*]*\*", text) if h.strip("*").strip()]
    double = [
        h for h in re.findall(r"\*\*[^\n\*]*\*\*", text) if h.removeprefix("**").removesuffix("**").strip()
    ]
    return len(single) + len(double)


def _json(text: str) -> bool:
    value = text.strip()
    for prefix in ("```json", "```Json", "```JSON", "```"):
        value = value.removeprefix(prefix)
    value = value.removesuffix("```").strip()
    try:
        json.loads(value)
    except ValueError:
        return False
    return True


def _two_responses(text: str) -> bool:
    parts = text.split("******")
    valid = []
    for i, part in enumerate(parts):
        if not part.strip():
            if i not in (0, len(parts) - 1):
                return False
        else:
            valid.append(part)
    return len(valid) == 2 and valid[0].strip() != valid[1].strip()


def _english_case(text: str, upper: bool) -> bool:
    if not (text.isupper() if upper else text.islower()):
        return False
    lang = _detect_language(text)
    return lang is None or lang == "en"


def _sections(text: str, splitter: str, n: int) -> bool:
    parts = re.split(r"\s?" + re.escape(splitter) + r"\s?\d+\s?", text)
    return len(parts) - 1 >= n


def _keyword_count(text: str, keyword: str) -> int:
    return len(re.findall(re.escape(keyword), text, flags=re.IGNORECASE))


Checker = Callable[[str, dict[str, Any]], bool]

# id -> (checker(response, typed kwargs), required kwargs)
INSTRUCTIONS: dict[str, tuple[Checker, tuple[str, ...]]] = {
    "keywords:existence": (
        lambda t, k: all(re.search(re.escape(w), t, flags=re.IGNORECASE) for w in k["keywords"]),
        ("keywords",),
    ),
    "keywords:frequency": (
        lambda t, k: _compare(_keyword_count(t, k["keyword"]), k["relation"], k["frequency"]),
        ("keyword", "frequency", "relation"),
    ),
    "keywords:forbidden_words": (
        lambda t, k: (
            not any(
                re.search(r"\b" + re.escape(w) + r"\b", t, flags=re.IGNORECASE) for w in k["forbidden_words"]
            )
        ),
        ("forbidden_words",),
    ),
    "keywords:letter_frequency": (
        lambda t, k: _compare(Counter(t.lower())[k["letter"].lower()], k["let_relation"], k["let_frequency"]),
        ("letter", "let_frequency", "let_relation"),
    ),
    "language:response_language": (
        lambda t, k: (lang := _detect_language(t)) is None or lang == k["language"],
        ("language",),
    ),
    "length_constraints:number_sentences": (
        lambda t, k: _compare(count_sentences(t), k["relation"], k["num_sentences"]),
        ("num_sentences", "relation"),
    ),
    "length_constraints:number_paragraphs": (
        lambda t, k: _paragraphs_divided(t, k["num_paragraphs"]),
        ("num_paragraphs",),
    ),
    "length_constraints:number_words": (
        lambda t, k: _compare(len(_words(t)), k["relation"], k["num_words"]),
        ("num_words", "relation"),
    ),
    "length_constraints:nth_paragraph_first_word": (
        lambda t, k: _nth_paragraph_first_word(t, k["num_paragraphs"], k["nth_paragraph"], k["first_word"]),
        ("num_paragraphs", "nth_paragraph", "first_word"),
    ),
    "detectable_content:number_placeholders": (
        lambda t, k: len(re.findall(r"\[.*?\]", t)) >= k["num_placeholders"],
        ("num_placeholders",),
    ),
    "detectable_content:postscript": (
        lambda t, k: _postscript(t, k["postscript_marker"]),
        ("postscript_marker",),
    ),
    "detectable_format:number_bullet_lists": (
        lambda t, k: (
            len(re.findall(r"^\s*\*[^\*].*$", t, flags=re.MULTILINE))
            + len(re.findall(r"^\s*-.*$", t, flags=re.MULTILINE))
            == k["num_bullets"]
        ),
        ("num_bullets",),
    ),
    "detectable_format:constrained_response": (
        lambda t, k: any(
            o in t.strip() for o in ("My answer is yes.", "My answer is no.", "My answer is maybe.")
        ),
        (),
    ),
    "detectable_format:number_highlighted_sections": (
        lambda t, k: _highlights(t) >= k["num_highlights"],
        ("num_highlights",),
    ),
    "detectable_format:multiple_sections": (
        lambda t, k: _sections(t, k["section_spliter"], k["num_sections"]),
        ("section_spliter", "num_sections"),
    ),
    "detectable_format:json_format": (lambda t, k: _json(t), ()),
    "detectable_format:title": (
        lambda t, k: any(x.lstrip("<").rstrip(">").strip() for x in re.findall(r"<<[^\n]+>>", t)),
        (),
    ),
    "combination:two_responses": (lambda t, k: _two_responses(t), ()),
    "combination:repeat_prompt": (
        lambda t, k: t.strip().lower().startswith(k["prompt_to_repeat"].strip().lower()),
        ("prompt_to_repeat",),
    ),
    "startend:end_checker": (
        lambda t, k: t.strip().strip('"').lower().endswith(k["end_phrase"].strip().lower()),
        ("end_phrase",),
    ),
    "startend:quotation": (lambda t, k: len(t.strip()) > 1 and t.strip()[0] == t.strip()[-1] == '"', ()),
    "change_case:capital_word_frequency": (
        lambda t, k: _compare(
            sum(1 for w in _words(t) if w.isupper()), k["capital_relation"], k["capital_frequency"]
        ),
        ("capital_frequency", "capital_relation"),
    ),
    "change_case:english_capital": (lambda t, k: _english_case(t, True), ()),
    "change_case:english_lowercase": (lambda t, k: _english_case(t, False), ()),
    "punctuation:no_comma": (lambda t, k: "," not in t, ()),
}
_INTEGER = {
    "frequency",
    "let_frequency",
    "num_sentences",
    "num_paragraphs",
    "num_words",
    "nth_paragraph",
    "num_placeholders",
    "num_bullets",
    "num_highlights",
    "num_sections",
    "capital_frequency",
}
_RELATION = {"relation", "let_relation", "capital_relation"}
_LISTS = {"keywords", "forbidden_words"}


def _normalise(instruction: str, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The kwargs an instruction's checker needs, typed; ``ValueError`` naming what is missing or wrong."""
    if instruction not in INSTRUCTIONS:
        raise ValueError(f"unknown IFEval instruction {instruction!r}")
    out: dict[str, Any] = {}
    for key in INSTRUCTIONS[instruction][1]:
        value = kwargs.get(key)
        if value is None:
            raise ValueError(f"instruction {instruction!r} needs kwarg {key!r}")
        if key in _INTEGER:
            if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
                raise ValueError(f"instruction {instruction!r}: {key} must be an integer, got {value!r}")
            value = int(value)
        elif key in _RELATION:
            if value not in _RELATIONS:
                raise ValueError(
                    f"instruction {instruction!r}: {key} must be one of {_RELATIONS}, got {value!r}"
                )
        elif key in _LISTS:
            if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"instruction {instruction!r}: {key} must be a list of strings")
        elif not isinstance(value, str):
            raise ValueError(f"instruction {instruction!r}: {key} must be a string, got {value!r}")
        out[key] = value
    return out


def check_instructions(ids: Sequence[str], kwargs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Validate an IFEval record's instructions; the typed kwargs, one dict per id. ``ValueError`` if bad."""
    if not ids:
        raise ValueError("instruction_id_list is empty")
    if len(ids) != len(kwargs):
        raise ValueError(f"{len(ids)} instruction ids but {len(kwargs)} kwargs dicts")
    return [_normalise(i, k) for i, k in zip(ids, kwargs, strict=True)]


def loose_variants(response: str) -> list[str]:
    """IFEval's loose reading: the response without its first and/or last line, each with and without ``*``."""
    lines = response.split("\n")
    cut = [
        response,
        "\n".join(lines[1:]).strip(),
        "\n".join(lines[:-1]).strip(),
        "\n".join(lines[1:-1]).strip(),
    ]
    return [v for text in cut for v in (text, text.replace("*", "")) if v.strip()]


def follows(
    response: str, ids: Sequence[str], kwargs: Sequence[Mapping[str, Any]]
) -> list[tuple[bool, bool]]:
    """(strict, loose) for every instruction; ``ValueError`` for invalid instructions."""
    typed = check_instructions(ids, kwargs)
    variants = loose_variants(response)
    out = []
    for instruction, kw in zip(ids, typed, strict=True):
        check = INSTRUCTIONS[instruction][0]
        strict = bool(response.strip()) and check(response, kw)
        out.append((strict, strict or any(check(v, kw) for v in variants)))
    return out


class IFEvalTool(RewardTool):
    """IFEval's instruction checks on the response; the reference lists the instructions and their kwargs (or,
    for IFEval's rows as shipped, the record's metadata does: ``instruction_id_list``, ``kwargs``)."""

    metadata_keys: ClassVar[tuple[str, ...]] = ("instruction_id_list", "kwargs")

    default_spec: ClassVar[ToolSpec] = ToolSpec(
        name="ifeval",
        kind=ToolKind.RULE,
        description=(
            "IFEval verifiable instructions: checks the response against the record's instruction ids and"
            " kwargs (reference {instruction_id_list, kwargs}): keyword presence/frequency/forbidden words,"
            " letter frequency, response language, sentence/word/paragraph counts, placeholders, postscripts,"
            " bullet counts, highlighted sections, titles, JSON output, two responses, repeating the prompt,"
            " end phrases, quotation, upper/lower case, capital word counts, no commas. scoring='all' gives 1"
            " only if every instruction is followed (prompt-level strict), 'fraction' the fraction followed;"
            " an empty response scores 0."
        ),
        task_types=["instruction_following", "ifeval", "format"],
        answer_formats=["text", "any"],
        params={"scoring": "all"},
    )

    def __init__(self, spec: ToolSpec, **resources: Any) -> None:
        super().__init__(spec, **resources)
        self.scoring = spec.params.get("scoring", "all")
        if self.scoring not in ("all", "fraction"):
            raise ValueError(f"ifeval scoring must be 'all' or 'fraction', got {self.scoring!r}")

    async def _score(self, inp: ToolInput) -> ToolResult:
        ref = inp.reference
        if not isinstance(ref, Mapping) or "instruction_id_list" not in ref:
            ref = inp.metadata  # IFEval's rows as the dataset ships them: the instructions beside the prompt
        if not isinstance(ref, Mapping) or "instruction_id_list" not in ref:
            return ToolResult.abstain("neither the reference nor the metadata has an instruction_id_list")
        ids = list(ref["instruction_id_list"])
        kwargs = list(ref.get("kwargs") or [{} for _ in ids])
        if not inp.response.strip():
            # Every IFEval prompt asks for a text; an empty one "follows" fewer-than-N-words, no-commas or
            # forbidden-word instructions without doing anything.
            return self.ok(0.0, "empty response: nothing was written", instructions=ids)
        try:
            results = follows(inp.response, ids, kwargs)
        except ValueError as e:
            return ToolResult.abstain(f"invalid instructions in reference: {e}"[:500])
        strict = [s for s, _ in results]
        loose = [lo for _, lo in results]
        score = float(all(strict)) if self.scoring == "all" else sum(strict) / len(strict)
        missed = [i for i, s in zip(ids, strict, strict=True) if not s]
        reason = "all instructions followed" if not missed else "not followed: " + ", ".join(missed)
        return self.ok(score, reason[:500], instructions=ids, strict=strict, loose=loose)
