"""Rule tools: math-answer equivalence, exact / normalised / contains matching, format rules.

References (``ToolInput.reference``) for the matching tools: a string, a list of acceptable strings (the
best match counts), or a dict with ``answer`` or ``answers``. No reference → abstain (the tool cannot
judge); a response with no extractable answer → score 0 (the policy's fault).

Math equivalence reads final answers the same way on references and responses (``rlar.tools.math_answer``:
numbers, percent rule, choice letters, hedging), then the canonical forms of ``rlar.tools.math_forms`` (sets of
reals from inequalities and intervals, solution lists, named components, ``\\pm``, repeating decimals, matrices with
a scalar factor, refusal of several answers where one is asked), and math-verify (``parse`` + ``verify(gold,
answer)``; the order matters) for the rest. Its time limits use ``signal.alarm``,
which only works in a process's main thread: here they are enabled when the tool runs in the main thread (as
in the executor's worker process) and disabled otherwise, where the
caller must bound the time (the executor kills the worker process).
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from typing import Any, ClassVar

from rlar.tools import math_answer, math_forms
from rlar.tools.base import RewardTool, ToolInput, ToolKind, ToolResult, ToolSpec

__all__ = [
    "ContainsMatchTool",
    "ExactMatchTool",
    "FormatRulesTool",
    "MathVerifyTool",
    "NormalizedMatchTool",
    "extract_answer",
    "lists_candidates",
    "normalize_text",
    "reference_strings",
]

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def reference_strings(reference: Any) -> list[str] | None:
    """Acceptable answers from a reference: str → [str]; list → its items; dict → ``answers``/``answer``."""
    if reference is None:
        return None
    if isinstance(reference, dict):
        for key in ("answers", "answer"):
            if key in reference:
                return reference_strings(reference[key])
        return None
    if isinstance(reference, str):
        return [reference]
    if isinstance(reference, list | tuple):
        refs = [str(r) for r in reference if r is not None]
        return refs or None
    return [str(reference)]


def normalize_text(
    text: str,
    *,
    lowercase: bool = True,
    strip_punctuation: bool = True,
    remove_articles: bool = False,
) -> str:
    """NFKC, optionally lower-case, drop Unicode punctuation (category P*), drop English articles,
    collapse whitespace."""
    text = unicodedata.normalize("NFKC", text)
    if lowercase:
        text = text.lower()
    if strip_punctuation:
        text = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in text)
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


class _MatchTool(RewardTool):
    """Shared logic: extract the answer, compare with each reference, score 1.0 on any match."""

    def __init__(self, spec: ToolSpec, **resources: Any) -> None:
        super().__init__(spec, **resources)
        self.answer_pattern = _compile_optional(spec.params.get("answer_pattern"))

    def _match(self, answer: str, ref: str) -> bool:
        raise NotImplementedError

    async def _score(self, inp: ToolInput) -> ToolResult:
        refs = reference_strings(inp.reference)
        if not refs:
            return ToolResult.abstain("no reference")
        answer = extract_answer(inp.response, self.answer_pattern)
        if answer is None:
            return self.ok(0.0, "no answer found")
        for ref in refs:
            if self._match(answer, ref):
                return self.ok(1.0, "match", matched=ref)
        return self.ok(0.0, "no match")


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
            "Exact string match between the response (or its extracted answer) and the reference, after"
            " stripping surrounding whitespace. 1 if equal to any acceptable reference, else 0. Use for"
            " short canonical answers (labels, identifiers, multiple-choice letters)." + _ANSWER_PATTERN_DOC
        ),
        task_types=["classification", "multiple_choice", "short_answer", "copy", "reverse"],
        answer_formats=["label", "short_text", "choice_letter"],
        params={"answer_pattern": None},
    )

    def _match(self, answer: str, ref: str) -> bool:
        return answer == ref.strip()


class NormalizedMatchTool(_MatchTool):
    """1.0 if answer and reference are equal after ``normalize_text`` (case, punctuation, whitespace)."""

    default_spec: ClassVar[ToolSpec] = ToolSpec(
        name="normalized_match",
        kind=ToolKind.RULE,
        description=(
            "Normalised string match: compares response and reference after Unicode NFKC, lower-casing,"
            " removing punctuation and collapsing whitespace (optionally removing articles, SQuAD-style)."
            " 1 if equal to any acceptable reference, else 0. Use for short free-text answers where"
            " formatting should not matter." + _ANSWER_PATTERN_DOC
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


class ContainsMatchTool(NormalizedMatchTool):
    """1.0 if the normalised reference occurs in the normalised response (on word boundaries by default), and
    the response is not a list of candidates (``lists_candidates``) unless ``allow_lists`` is set."""

    default_spec: ClassVar[ToolSpec] = ToolSpec(
        name="contains_match",
        kind=ToolKind.RULE,
        description=(
            "Reference-contains match: 1 if the (normalised) reference appears inside the (normalised)"
            " response as whole words, else 0. Lenient; use for open QA where the response may wrap the"
            " answer in a sentence. A response that lists candidates (alternatives joined by 'or', three or"
            " more short items, a run of bare words) scores 0 unless allow_lists is set."
            + _ANSWER_PATTERN_DOC
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

    async def _score(self, inp: ToolInput) -> ToolResult:
        result = await super()._score(inp)
        if result.ok and result.score == 1.0 and not self.params.get("allow_lists", False):
            answer = extract_answer(inp.response, self.answer_pattern) or ""
            why = lists_candidates(answer, str(result.details.get("matched", "")))
            if why:
                return self.ok(0.0, f"the response {why}", matched=result.details.get("matched"))
        return result

    def _match(self, answer: str, ref: str) -> bool:
        a, r = self._norm(answer), self._norm(ref)
        if not r:
            return False
        if not self.params.get("word_boundary", True):
            return r in a
        # Pad with spaces so "12" does not match inside "112" (text is whitespace-normalised).
        return f" {r} " in f" {a} "


def _quiet_timeout_notice(record: logging.LogRecord) -> bool:
    """Drop math-verify's notice that its own timeout is off: ``MathVerifyTool._forms`` runs the library under
    one time limit of its own (and off the main thread the caller bounds the time, see the module doc)."""
    return not str(record.msg).startswith("Timeout is disabled")


class MathVerifyTool(RewardTool):
    """1.0 if the response's final answer is mathematically equivalent to the reference (``math_answer`` rules,
    math-verify for expressions)."""

    default_spec: ClassVar[ToolSpec] = ToolSpec(
        name="math_verify",
        kind=ToolKind.RULE,
        description=(
            "Math answer equivalence: takes the response's final answer (the last \\boxed{}, '#### X', 'the"
            " answer is X', else the last sentence with a value) and the reference's (after GSM8K's '####')"
            " and checks they are equal: numbers exactly after normalising thousands separators, currency,"
            " units, degrees, number words, fractions and mixed numbers, scientific notation; X% equals X and"
            " X/100; multiple-choice letters; expressions, tuples, sets, intervals, matrices and equations"
            " with math-verify. Hedged answers ('3 or 4') and lists of candidates score 0. 1 if equivalent,"
            " else 0. Abstains if the reference cannot be read."
        ),
        task_types=["math", "arithmetic", "gsm8k", "competition_math", "word_problem", "multiple_choice"],
        answer_formats=["number", "latex", "boxed", "expression", "fraction", "choice_letter"],
        params={
            "reference_marker": "####",
            "float_rounding": 6,
            "numeric_precision": 15,
            "strict": True,
            "verify_timeout_s": 5,
        },
    )

    def __init__(self, spec: ToolSpec, **resources: Any) -> None:
        super().__init__(spec, **resources)
        from math_verify import ExprExtractionConfig, LatexExtractionConfig

        self._latex_cfg = [LatexExtractionConfig(boxed_match_priority=0), ExprExtractionConfig()]
        for name in ("math_verify.grader", "math_verify.parser"):
            logging.getLogger(name).addFilter(_quiet_timeout_notice)

    def _timeout(self) -> int | None:
        # signal.alarm only works in the main thread; elsewhere the caller must bound time (see module doc).
        if threading.current_thread() is not threading.main_thread():
            return None
        return max(1, int(self.params.get("verify_timeout_s", 5)))

    def _parse(self, text: str, wrap: bool) -> list[Any]:
        from math_verify import parse

        timeout = self._timeout()
        if wrap and "$" not in text:
            found = parse(f"${text}$", self._latex_cfg, parsing_timeout=timeout)  # type: ignore[arg-type]
            if found:
                return list(found)
        return list(parse(text, self._latex_cfg, parsing_timeout=timeout))  # type: ignore[arg-type]

    def _verify(self, gold: list[Any], answer: list[Any]) -> bool:
        from math_verify import verify

        p = self.params
        return bool(
            verify(
                gold,
                answer,
                float_rounding=int(p.get("float_rounding", 6)),
                numeric_precision=int(p.get("numeric_precision", 15)),
                strict=bool(p.get("strict", True)),
                timeout_seconds=self._timeout(),
            )
        )

    def _forms(self, gold: str, answer: str, hedged: str = "") -> tuple[bool, str] | None:
        """The canonical-form layer (``rlar.tools.math_forms``): (equivalent, reason), or None to leave the pair
        to the library. ``hedged``: why the response offers several answers, refused unless the reference is a
        list or a set of reals itself. Parsing, sympy work and element comparisons all run under one time limit."""
        from math_verify import parse, verify
        from math_verify.errors import TimeoutException
        from math_verify.utils import timeout

        p = self.params

        def parse_one(text: str) -> list[Any]:
            wrapped = text if "$" in text else f"${text}$"
            return list(parse(wrapped, self._latex_cfg, parsing_timeout=None))  # type: ignore[arg-type]

        def equal(x: Any, y: Any) -> bool:
            return bool(
                verify(
                    [x],
                    [y],
                    float_rounding=int(p.get("float_rounding", 6)),
                    numeric_precision=int(p.get("numeric_precision", 15)),
                    strict=bool(p.get("strict", True)),
                    timeout_seconds=None,
                )
            )

        def decide() -> tuple[bool, str] | None:
            g = math_forms.form_of(gold, parse_one)
            a = math_forms.form_of(answer, parse_one) if g is not None else None
            # "or" is notation in a set of reals ("x < -2 or x > 3") and in a list of solutions, not a hedge.
            if g is not None and hedged and g.kind not in ("values", "set"):
                return False, f"hedged: {hedged}"
            if g is None or a is None:
                return None
            same = math_forms.compare(g, a, equal)
            if same is None:
                return None
            return same, f"{'equivalent' if same else 'not equivalent'} as {g.kind} / {a.kind}: {answer[:80]}"

        try:
            return timeout(self._timeout())(decide)()  # type: ignore[no-any-return]
        except TimeoutException:
            return None
        except Exception:  # sympy raises many kinds on odd input; the library then judges the pair
            return None

    def _judge(
        self, gold: str, raw_ref: str, answer: math_answer.FinalAnswer, response: str
    ) -> tuple[bool, str]:
        """(equivalent, reason) for one acceptable reference."""
        letter = math_answer.choice_letter(gold, reference=True)
        if letter is not None:
            if answer.hedged:
                return False, f"hedged: {answer.hedged}"
            # The stated answer's letter, else the letter the response opens with ("C. 42", "(B) because ...").
            chosen = math_answer.choice_letter(answer.text) or math_answer.choice_letter(response.strip())
            return chosen == letter, f"chose {chosen}" if chosen else "no choice letter in the answer"
        number = math_answer.scalar_value(gold)
        if number is not None:
            if answer.hedged:
                return False, f"hedged: {answer.hedged}"
            given = math_answer.scalar_value(answer.text)
            if given is None and not answer.boxed:
                span = math_forms.math_span(answer.text)
                if span != answer.text:  # "$x = 6$ and $x = -1$": a list of solutions is judged as one
                    decided = self._forms(math_forms.prepare(gold), math_forms.prepare(span))
                    if decided is not None:
                        return decided
                given = math_answer.stated_value(answer.text, response)
            if given is not None:
                same = math_answer.same_number(number, given)
                return (
                    same,
                    f"{'equal' if same else 'not equal'}: {float(given[0]):g}{'%' if given[1] else ''}",
                )
        prose = math_answer.is_prose(gold)
        gold_text, answer_text = math_forms.prepare(gold), math_forms.prepare(answer.text)
        if not prose:
            answer_span = math_forms.prepare(math_forms.math_span(answer.text))
            decided = self._forms(gold_text, answer_span, answer.hedged)
            if decided is not None:
                return decided
        gold_parsed = self._parse(gold_text, wrap=True) if not prose else []
        if not gold_parsed:  # what the library alone would do with the raw texts
            gold_parsed, answer_parsed = self._parse(raw_ref, wrap=False), self._parse(response, wrap=False)
        else:
            answer_parsed = self._parse(answer_text, wrap=True)
        if not gold_parsed:
            raise ValueError("reference not parseable as math")
        if not answer_parsed:
            return False, "no parseable answer"
        same = self._verify(gold_parsed, answer_parsed)
        return same, f"{'equivalent' if same else 'not equivalent'}: {str(answer_parsed[-1])[:80]}"

    async def _score(self, inp: ToolInput) -> ToolResult:
        refs = reference_strings(inp.reference)
        if not refs:
            return ToolResult.abstain("no reference")
        marker = str(self.params.get("reference_marker") or "")
        answer = math_answer.final_answer(inp.response)
        if answer is None:
            return self.ok(0.0, "no answer found")
        unreadable = 0
        reason = ""
        for ref in refs:
            try:
                same, reason = self._judge(math_answer.gold_answer(ref, marker), ref, answer, inp.response)
            except ValueError:
                unreadable += 1
                continue
            if same:
                return self.ok(1.0, reason[:300], extracted=answer.text[:200], matched=ref[:200])
        if unreadable == len(refs):
            return ToolResult.abstain("reference not parseable as math", reference=str(refs)[:200])
        return self.ok(0.0, reason[:300], extracted=answer.text[:200])


_SENTENCE_END = re.compile(r"[.!?]+(?:\s|$)")


def _phrase_in(phrase: str, low: str) -> bool:
    """Whether ``phrase`` occurs in the lower-cased text ``low`` as a word or phrase (word boundaries where the
    phrase starts or ends with a letter or digit), as :func:`rlar.synthesis.checks.phrase_count` reads it."""
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
    import json

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
