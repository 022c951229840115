"""Rule tools: exact / normalised / contains matching, format rules (math-answer equivalence: ``math_verify_tool``).

References (``ToolInput.reference``) for the matching tools: a string, a list of acceptable strings (the
best match counts), or a dict with ``answer`` or ``answers``. No reference → abstain (the tool cannot
judge); a response with no extractable answer → score 0 (the policy's fault).
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any, ClassVar

from rlar.tools.answer_chars import read_chars
from rlar.tools.answer_text import (
    chosen_letters,
    clean_markup,
    explicit_statement,
    first_named_answer,
    lettered_options,
    restated_answer,
    statements,
)
from rlar.tools.base import RewardTool, ToolInput, ToolKind, ToolResult, ToolSpec

__all__ = [
    "ContainsMatchTool",
    "ExactMatchTool",
    "FormatRulesTool",
    "NormalizedMatchTool",
    "answer_object_strings",
    "extract_answer",
    "lists_candidates",
    "normalize_text",
    "reference_strings",
]

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


# An answer object's keys, lower-cased without separators: those that hold its names (FreebaseQA's ``AnswersName``,
# FreshQA's ``answer_0``..., SQuAD-like ``text``) and those that only describe it (offsets, ids, subjectivity).
_ANSWER_NAME_KEY = re.compile(r"(?:answers?|answers?names?|aliases|answer\d+|text|value)")
_ANSWER_ABOUT_KEY = re.compile(r"(?:is)?ans\w*|start|end|offsets?|score")
# An id field, told by how its name is written ("answer_id", "AnswersMid"); a word ending in "id" is not one ("grid").
_ID_KEY = re.compile(r"(?:^|[_\-\s])(?:id|mid)$|(?<=[a-z])(?:Id|ID|Mid|MID)$|^(?:id|mid|ID|MID)$")


def answer_object_strings(obj: Any) -> list[str] | None:
    """The names an answer object gives its answer, all alternatives, else None: every key either holds names
    (strings or numbers, or lists of them) or only describes the answer (``answer_start``, ``AnswersMid``,
    ``ans_subj_score``, ...), and at least one holds a name. ``{"AnswersMid": "m.0156q", "AnswersName": ["berlin"]}``
    -> ["berlin"]; ``{"answer_0": "206", "answer_1": "206 bones"}`` -> both. Any other key (an explanation, a
    field of a structured answer) makes it no answer object: None."""
    if not isinstance(obj, dict) or not obj:
        return None
    names: list[str] = []
    for key, value in obj.items():
        norm = re.sub(r"[^a-z0-9]", "", str(key).lower())
        if _ANSWER_NAME_KEY.fullmatch(norm):
            values = value if isinstance(value, list | tuple) else [value]
            if not all(isinstance(v, str | int | float) and not isinstance(v, bool) for v in values):
                return None
            names.extend(str(v) for v in values if str(v).strip())
        elif not (_ANSWER_ABOUT_KEY.fullmatch(norm) or _ID_KEY.search(str(key))):
            return None
    return list(dict.fromkeys(names)) or None


def reference_strings(reference: Any) -> list[str] | None:
    """Acceptable answers from a reference: str → [str]; list → its items (a list of answer objects: all their
    answers); dict → an answer with its ``aliases``, else ``answers``/``answer``, else the names of an answer
    object (:func:`answer_object_strings`)."""
    if reference is None:
        return None
    if isinstance(reference, dict):
        for key in ("value", "answer"):  # an answer with its aliases: TriviaQA, WebQSP / ComplexWebQuestions
            if isinstance(reference.get(key), str | int | float) and "aliases" in reference:
                return [str(reference[key]), *(str(a) for a in reference.get("aliases") or [])]
        for key in ("answers", "answer"):
            if key in reference:
                return reference_strings(reference[key])
        return answer_object_strings(reference)
    if isinstance(reference, str):
        return [reference]
    if isinstance(reference, list | tuple):
        if reference and all(
            isinstance(r, dict) for r in reference
        ):  # a list of answer objects: alternatives
            objects = [reference_strings(r) for r in reference]
            if all(objects):
                return [a for o in objects if o for a in o]
        refs = [str(r) for r in reference if r is not None]
        return refs or None
    return [str(reference)]


_SIGN = re.compile(r"(?:(?<=^)|(?<=[\s(\[{]))-(?=\.?\d)")
_SIGN_MARK = "\ue000"  # a private-use character: not punctuation, so the sign survives the punctuation drop
_DECIMAL = re.compile(
    r"(?<=\d)[.,](?=\d)"
)  # a decimal point (or comma) is part of its number: 3.5 is not "3 5"
_POINT_MARK = "\ue001"
_THOUSANDS = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d,])")
_TRAILING_ZEROS = re.compile(r"(?<![\w.])(\d+)\.0+(?![\d.])")
_DEGREE = re.compile(r"(\d)\s*°")


def normalize_text(
    text: str,
    *,
    lowercase: bool = True,
    strip_punctuation: bool = True,
    remove_articles: bool = False,
) -> str:
    """Characters read (``answer_chars.read_chars(latex=False)``: any dash or minus sign before a number is its
    sign, full-width forms and thin spaces read, zero-width characters gone), NFKC, optionally lower-case, drop
    Unicode punctuation (category P*) except the parts of a number: its sign ("-3" stays "-3", so it never equals
    "3") and its decimal point ("3.5" stays "3.5", never "3 5"); commas between thousands are removed ("1,000" is
    "1000"), a decimal of zeros goes ("100.0" is "100"; "3.10" stays, a version) and a degree sign is a word of
    its own ("100°C" is "100 °c"); drop English articles, collapse whitespace."""
    text = unicodedata.normalize("NFKC", read_chars(text, latex=False))
    if lowercase:
        text = text.lower()
    text = _DEGREE.sub(r"\1 °", text)
    if strip_punctuation:
        text = _THOUSANDS.sub(lambda m: m.group(0).replace(",", ""), text)
        text = _SIGN.sub(_SIGN_MARK, text)
        text = _TRAILING_ZEROS.sub(r"\1", text)
        text = _DECIMAL.sub(_POINT_MARK, text)
        text = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in text)
        text = text.replace(_SIGN_MARK, "-").replace(_POINT_MARK, ".")
    if remove_articles:
        text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def extract_answer(response: str, pattern: re.Pattern[str] | None) -> str | None:
    """The answer part of a response: the last match of ``pattern`` (its first group if it has one), or
    the whole stripped response when there is no pattern. None when the pattern does not match."""
    if pattern is None:
        return response.strip()
    matches = list(pattern.finditer(response))
    if not matches:
        return None
    last = matches[-1]
    return (last.group(1) if pattern.groups else last.group(0)).strip()


def _compile_optional(pattern: str | None) -> re.Pattern[str] | None:
    return re.compile(pattern, re.MULTILINE) if pattern else None


_CHOICE = re.compile(r"^\s*\(?([A-J])\)?\s*$")


class _MatchTool(RewardTool):
    """Shared logic: read what the response states as its answer, compare it with each reference, 1.0 on any
    match. Without ``answer_pattern`` the answers tried are ``answer_text.statements`` (the last explicit answer
    statement, else the first sentence's complement, and the whole response); a reference that is one option letter
    also matches the letter the response chooses ("(B) Mercury"; the option whose text it states, when the query
    lists lettered options), and two different letters chosen score 0."""

    def __init__(self, spec: ToolSpec, **resources: Any) -> None:
        super().__init__(spec, **resources)
        self.answer_pattern = _compile_optional(spec.params.get("answer_pattern"))

    def _match(self, answer: str, ref: str) -> bool:
        raise NotImplementedError

    def _answers(self, inp: ToolInput) -> list[str]:
        """The texts tried as the response's answer ([] when ``answer_pattern`` does not match)."""
        if self.answer_pattern is not None:
            answer = extract_answer(inp.response, self.answer_pattern)
            return [answer] if answer is not None else []
        return statements(inp.response)

    def _letters(self, inp: ToolInput, answers: list[str]) -> list[str]:
        """The option letters the response chooses, or the letter of the query's option it states."""
        letters = chosen_letters(inp.response)
        if letters:
            return letters
        options = lettered_options(inp.query)
        return [k for k, text in options.items() if any(self._match(a, text) for a in answers)][:1]

    async def _score(self, inp: ToolInput) -> ToolResult:
        refs = reference_strings(inp.reference)
        if not refs:
            return ToolResult.abstain("no reference")
        answers = self._answers(inp)
        if not answers:
            return self.ok(0.0, "no answer found")
        for ref in refs:
            choice = _CHOICE.match(ref) if self.answer_pattern is None else None
            letters = self._letters(inp, answers) if choice else []
            if len(letters) > 1:
                return self.ok(0.0, f"two different options chosen: {', '.join(letters)}")
            if choice and letters == [choice.group(1)]:
                return self.ok(1.0, f"chose {letters[0]}", matched=ref)
            for answer in answers:
                if self._match(answer, ref):
                    return self.ok(1.0, "match", matched=ref, answer=answer[:200])
        return self.ok(0.0, "no match", answer=answers[0][:200])


_ANSWER_PATTERN_DOC = (
    " Param answer_pattern: optional regex; its last match (group 1 if any) is the answer, else the whole"
    " response."
)


class ExactMatchTool(_MatchTool):
    """1.0 if the (extracted, stripped) answer equals a reference exactly, else 0.0."""

    default_spec: ClassVar[ToolSpec] = ToolSpec(
        name="exact_match",
        kind=ToolKind.RULE,
        description=(
            "Exact string match between the response (or the answer it states: 'The answer is X', 'Answer: X',"
            " \\boxed{X}, 'The capital is X.') and the reference, after stripping surrounding whitespace; one"
            " final full stop is the sentence's ('positive.' for 'positive'), unless the reference ends with one;"
            " an option letter reference also matches the letter chosen ('(B) Mercury'). 1 if equal to any"
            " acceptable reference, else 0. Use for short canonical answers (labels, identifiers,"
            " multiple-choice letters)." + _ANSWER_PATTERN_DOC
        ),
        task_types=["classification", "multiple_choice", "short_answer", "copy", "reverse"],
        answer_formats=["label", "short_text", "choice_letter"],
        params={"answer_pattern": None},
    )

    def _match(self, answer: str, ref: str) -> bool:
        ref = ref.strip()
        if answer == ref:
            return True
        # "positive." states the label "positive": a single sentence-final full stop is punctuation, not answer.
        return (
            answer.endswith(".")
            and not answer.endswith("..")
            and not ref.endswith(".")
            and answer[:-1] == ref
        )


class NormalizedMatchTool(_MatchTool):
    """1.0 if answer and reference are equal after ``normalize_text`` (case, punctuation, whitespace)."""

    default_spec: ClassVar[ToolSpec] = ToolSpec(
        name="normalized_match",
        kind=ToolKind.RULE,
        description=(
            "Normalised string match: compares response and reference after Unicode NFKC, lower-casing,"
            " removing punctuation (a number keeps its sign and decimal point) and collapsing whitespace"
            " (optionally removing articles, SQuAD-style); the answer is read from its statement as for"
            " exact_match. 1 if equal to any acceptable reference, else 0. Use for short free-text answers"
            " where formatting should not matter." + _ANSWER_PATTERN_DOC
        ),
        task_types=["short_answer", "qa", "extraction", "classification"],
        answer_formats=["short_text", "label"],
        params={
            "answer_pattern": None,
            "lowercase": True,
            "strip_punctuation": True,
            "remove_articles": False,
        },
    )

    def _norm(self, text: str) -> str:
        p = self.params
        return normalize_text(
            text,
            lowercase=bool(p.get("lowercase", True)),
            strip_punctuation=bool(p.get("strip_punctuation", True)),
            remove_articles=bool(p.get("remove_articles", False)),
        )

    def _match(self, answer: str, ref: str) -> bool:
        return self._norm(answer) == self._norm(ref)


_STOPWORDS = frozenset(
    "a an the is are was were be it its this that of in on at to for from by with as i we you he she they my"
    " our your their his her answer final so thus therefore which who what".split()
)
_ITEM_SPLIT = re.compile(r"\s*(?:[,;/|\n]|\s-\s|^\s*[-*\u2022]\s+)\s*|\s+(?:or|and/or)\s+", re.M | re.I)


def lists_candidates(response: str, reference: str) -> str:
    """Why ``response`` reads as a list of candidate answers rather than one answer ("" when it does not):
    alternatives joined by "or"; three or more short items (comma, semicolon, slash, newline or bullet
    separated, each no longer than the reference plus two words); or a run of at least three times the
    reference's words with no function word at all ("Paris London Berlin Rome")."""
    ref_words = max(1, len(reference.split()))
    items = [i for i in _ITEM_SPLIT.split(response.strip()) if i and i.strip(" .!?")]
    short = [i for i in items if len(i.split()) <= ref_words + 2]
    if re.search(r"\b(?:or|either|and/or)\b", response, re.I) and len(short) >= 2:
        return f"offers alternatives ({len(items)} items joined by 'or')"
    words = normalize_text(response).split()
    for i, word in enumerate(words):  # "... Lyon or Paris": the reference on one side of an "or"
        if word == "or" and i >= ref_words and i + ref_words < len(words):
            left, right = " ".join(words[i - ref_words : i]), " ".join(words[i + 1 : i + 1 + ref_words])
            if (
                left != right
                and normalize_text(reference) in (left, right)
                and not {left, right} & _STOPWORDS
            ):
                return f"offers alternatives ({left} or {right})"
    if len(items) >= 3 and len(short) >= 3 and len(short) >= 0.6 * len(items):
        return f"lists {len(items)} candidate answers"
    if len(words) >= 3 * ref_words + 1 and len(words) >= 3 and not any(w in _STOPWORDS for w in words):
        return f"a run of {len(words)} bare words, not an answer"
    return ""


def _sentence_with(text: str, ref: str, norm: Any) -> str:
    """The sentence of ``text`` where ``ref`` occurs (normalised by ``norm``), else ``text``: a list of
    candidates is judged where the answer is given, not over a whole explanation."""
    r = f" {norm(ref)} "
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        if r in f" {norm(sentence)} ":
            return sentence
    return text


# A sentence after the first that puts the answer in doubt ("However, the longest river cannot be determined",
# "However, ... the attribution is disputed"), or a response that opens by answering "no one": a mention of the
# reference elsewhere is no answer.
_DOUBTED = re.compile(
    r"(?:(?<=[.!?])\s+(?:however|but|although|that\s+said|actually)\b[^.!?]*?\b(?:cannot\s+be\s+(?:determined|known)"
    r"|disputed|unclear|unknown|uncertain|debated|controversial|no\s+consensus|not\s+(?:certain|sure|known))\b)"
    r"|^\s*(?:no\s+one|nobody|none)\b",
    re.IGNORECASE,
)


class ContainsMatchTool(NormalizedMatchTool):
    """1.0 if the normalised reference occurs in the normalised response (on word boundaries by default), and
    the response is not a list of candidates (``lists_candidates``) unless ``allow_lists`` is set."""

    default_spec: ClassVar[ToolSpec] = ToolSpec(
        name="contains_match",
        kind=ToolKind.RULE,
        description=(
            "Reference-contains match: 1 if the (normalised) reference appears inside the (normalised)"
            " response as whole words, else 0. Lenient; use for open QA where the response may wrap the"
            " answer in a sentence; when it states its answer (an answer statement, or a first sentence"
            " restating the question) only what it states counts. A response that lists candidates"
            " (alternatives joined by 'or', three or more short items, a run of bare words) scores 0 unless"
            " allow_lists is set." + _ANSWER_PATTERN_DOC
        ),
        task_types=["qa", "open_qa", "short_answer", "retrieval"],
        answer_formats=["short_text", "sentence"],
        params={
            "answer_pattern": None,
            "lowercase": True,
            "strip_punctuation": True,
            "remove_articles": False,
            "word_boundary": True,
            "allow_lists": False,
        },
    )

    def _answers(self, inp: ToolInput) -> list[str]:
        """The explicit answer statement when the response makes one ("The answer is Lyon. Paris is ..." is
        about Lyon); else, when its first sentence restates the question, what that sentence answers (a later
        mention does not undo it: "The first president was X. George Washington was ..."); else, with no query,
        a name the first sentence gives its subject (``first_named_answer``); else the whole response (or
        ``answer_pattern``'s match)."""
        if self.answer_pattern is not None:
            return super()._answers(inp)
        explicit = explicit_statement(inp.response)
        if explicit:
            return [explicit]
        restated = restated_answer(inp.response, inp.query)
        if restated is not None:
            return restated
        # Without a query to restate: a name the first sentence gives as what its subject is, is the answer
        # ("The longest river is the Amazon; the Nile comes second" answers Amazon).
        named = first_named_answer(inp.response) if not inp.query.strip() else None
        if named is not None:
            return [named]
        return [clean_markup(inp.response).strip()]

    async def _score(self, inp: ToolInput) -> ToolResult:
        if self.answer_pattern is None and reference_strings(inp.reference) and self._answers(inp) == []:
            return self.ok(0.0, "the answer sentence takes its answer back or offers another ('X, but ...')")
        if self.answer_pattern is None and (doubt := _DOUBTED.search(clean_markup(inp.response))):
            return self.ok(0.0, f"a later sentence doubts the answer: {doubt.group(0).strip()[:80]!r}")
        result = await super()._score(inp)
        if result.ok and result.score == 1.0 and not self.params.get("allow_lists", False):
            matched = str(result.details.get("matched", ""))
            answer = str(result.details.get("answer", ""))
            why = lists_candidates(_sentence_with(answer, matched, self._norm), matched)
            if why:
                return self.ok(0.0, f"the response {why}", matched=matched)
        return result

    def _match(self, answer: str, ref: str) -> bool:
        a, r = self._norm(answer), self._norm(ref)
        if not r:
            return False
        if not self.params.get("word_boundary", True):
            return r in a
        # Pad with spaces so "12" does not match inside "112" (text is whitespace-normalised).
        return f" {r} " in f" {a} "


_SENTENCE_END = re.compile(r"[.!?]+(?:\s|$)")


def _phrase_in(phrase: str, low: str) -> bool:
    """Whether ``phrase`` occurs in the lower-cased text ``low`` as a word or phrase (word boundaries where the
    phrase starts or ends with a letter or digit), as :func:`rlar.constraints.checks.rules.phrase_count` reads it."""
    p = phrase.strip().lower()
    if not p:
        return True
    left = r"(?<!\w)" if re.match(r"\w", p) else ""
    right = r"(?!\w)" if re.search(r"\w$", p) else ""
    return re.search(left + re.escape(p) + right, low) is not None


def record_rule_checks(text: str, rules: Any) -> dict[str, bool]:
    """Checks for per-record rules in the task vocabulary (``rlar.tasks.FORMAT_RULES``): a list of
    ``{"rule": name, ...params}`` such as ``{"rule": "bullets", "min": 3, "max": 3}``. Unknown rule names
    are reported as failed checks rather than ignored."""

    lines = [ln for ln in text.splitlines() if ln.strip()]
    counts = {
        "words": len(text.split()),
        "lines": len(lines),
        "bullets": sum(ln.lstrip().startswith(("- ", "* ")) for ln in lines),
        "numbered": sum(bool(re.match(r"\s*\d+[.)]\s", ln)) for ln in lines),
        "sentences": len(_SENTENCE_END.findall(text.strip())) or (1 if text.strip() else 0),
    }
    low = text.lower()
    out: dict[str, bool] = {}
    for rule in rules if isinstance(rules, list) else []:
        if not isinstance(rule, dict):
            continue
        name = str(rule.get("rule"))
        label = "record rule " + json.dumps(rule, sort_keys=True)
        if name in counts and name != "numbered":
            out[label] = int(rule.get("min", 0)) <= counts[name] <= int(rule.get("max", 10**9))
        elif name == "numbered":  # and numbered 1..N in order: "1. 1. 1." is not a numbered list of three
            nums = [int(n) for n in re.findall(r"(?m)^\s*(\d+)[.)]\s", text)]
            bounds = int(rule.get("min", 0)) <= counts[name] <= int(rule.get("max", 10**9))
            out[label] = bounds and nums == list(range(1, len(nums) + 1))
        elif name == "include":  # as words or phrases, not inside other words ("cat" is not in "category")
            out[label] = all(_phrase_in(str(w), low) for w in rule.get("words", []))
        elif name == "exclude":
            out[label] = not any(_phrase_in(str(w), low) for w in rule.get("words", []))
        elif name == "lowercase":
            out[label] = text == low
        elif name == "no_commas":
            out[label] = "," not in text
        elif name == "starts_with":
            out[label] = text.strip().startswith(str(rule.get("text", "")))
        elif name == "ends_with":
            out[label] = text.strip().endswith(str(rule.get("text", "")))
        elif name == "json_keys":
            try:
                obj = json.loads(text)
                out[label] = isinstance(obj, dict) and set(rule.get("keys", [])) <= set(obj)
            except ValueError:
                out[label] = False
        else:
            out[label] = False
    return out


class FormatRulesTool(RewardTool):
    """Reference-free format checks: required/forbidden regexes, forbidden phrases, word/char bounds, and
    the per-record rules a task carries in ``metadata["format_rules"]`` (the tasks' rule vocabulary)."""

    metadata_keys: ClassVar[tuple[str, ...]] = ("format_rules",)

    default_spec: ClassVar[ToolSpec] = ToolSpec(
        name="format_rules",
        kind=ToolKind.RULE,
        description=(
            "Format and length rules on the response, no reference needed. Params: required_patterns"
            " (regexes that must all match, multiline), forbidden_patterns (regexes that must not match),"
            " forbidden_phrases (case-insensitive substrings), min_words/max_words, min_chars/max_chars."
            " scoring='all' gives 1 only if every check passes, 'fraction' gives the fraction passed."
            " Use for output-format constraints (e.g. 'Answer: ...' line, <think> tags), length limits,"
            " and banned phrases. Per-record rules in metadata['format_rules'] (sentences, words, lines,"
            " bullets, numbered counts; include/exclude words; lowercase; no_commas; starts_with/ends_with;"
            " json_keys) are checked too."
        ),
        task_types=["format", "instruction_following", "length_control", "safety_phrases", "any"],
        answer_formats=["any"],
        params={
            "required_patterns": [],
            "forbidden_patterns": [],
            "forbidden_phrases": [],
            "min_words": None,
            "max_words": None,
            "min_chars": None,
            "max_chars": None,
            "scoring": "all",
        },
    )

    def __init__(self, spec: ToolSpec, **resources: Any) -> None:
        super().__init__(spec, **resources)
        p = spec.params
        self.required = [re.compile(x, re.MULTILINE) for x in p.get("required_patterns") or []]
        self.forbidden = [re.compile(x, re.MULTILINE) for x in p.get("forbidden_patterns") or []]
        self.phrases = [str(x).lower() for x in p.get("forbidden_phrases") or []]
        self.scoring = p.get("scoring", "all")
        if self.scoring not in ("all", "fraction"):
            raise ValueError(f"format_rules scoring must be 'all' or 'fraction', got {self.scoring!r}")
        self.bounds = {k: p.get(k) for k in ("min_words", "max_words", "min_chars", "max_chars")}

    async def _score(self, inp: ToolInput) -> ToolResult:
        text = inp.response
        if not text.strip():  # an empty response follows no instruction, whatever rules it does not break
            return self.ok(0.0, "empty response")
        checks: dict[str, bool] = {}
        for rx in self.required:
            checks[f"requires /{rx.pattern}/"] = rx.search(text) is not None
        for rx in self.forbidden:
            checks[f"forbids /{rx.pattern}/"] = rx.search(text) is None
        lowered = text.lower()
        for phrase in self.phrases:
            checks[f"forbids phrase {phrase!r}"] = phrase not in lowered
        n_words, n_chars = len(text.split()), len(text)
        for key, value in self.bounds.items():
            if value is None:
                continue
            measured = n_words if key.endswith("words") else n_chars
            checks[f"{key}={value}"] = measured >= value if key.startswith("min") else measured <= value
        checks.update(record_rule_checks(text, inp.metadata.get("format_rules")))
        if not checks:
            return ToolResult.abstain("no format rules configured")
        failed = [k for k, passed in checks.items() if not passed]
        frac = 1.0 - len(failed) / len(checks)
        score = frac if self.scoring == "fraction" else float(not failed)
        reason = "all checks passed" if not failed else "failed: " + "; ".join(failed)
        return self.ok(score, reason, checks=checks, words=n_words, chars=n_chars)
