"""One query as the router sees it, what the router reads from it, and the key its decision is cached under.

``RoutingQuery`` holds a query (its text and, for chat data, the messages), its reference and metadata, and
what the task declares: domain, type, answer format, description, data source — each possibly empty.

``RoutingQuery.features()`` computes :class:`QueryFeatures`:

- ``reference_shape`` (:func:`rlar.tasks.references.reference_shape`): ``none`` for a missing or blank
  reference (``""`` counts as none), ``code_tests`` for asserts / test dicts / stdin-stdout pairs, ``number``
  and ``math`` for numeric and LaTeX answers, ``choice`` for a letter, ``program`` for SQL or a snippet, ...;
- ``constraints``: checkable requirements written in the description or the query, or given as
  ``metadata["format_rules"]`` (:mod:`rlar.tasks.constraints`); they decide the route only without a
  reference;
- the query's form: answer options listed (``has_choices``), source code in it (``has_code``), user turns
  (``turns``), a system message (``system``), the writing systems of its letters (``scripts``);
- ``metadata_keys``: the record's metadata keys (a tool that reads a key such as ``format_rules`` is
  configured by the record itself);
- ``relation`` (:func:`rlar.tasks.references.reference_relation`): how the reference answer relates to the
  query — copied from it, word overlap, another language, relative length, an edited copy — for answer texts
  only (:data:`RELATION_SHAPES`). A number, a letter, a label or a LaTeX answer shares digits or symbols with
  its query by coincidence ("0+0=" holds its answer "0", "3+3=" does not), so for them the relation is left
  empty: such queries are routed alike whatever they share with their query, by the scorer as by the key.

``signature()`` is the cache key: a hash of what the task declares plus ``QueryFeatures.key()``. Queries of one
task that differ in reference shape, form or (reference-free) constraints get their own decision; queries that
agree on all of it share one. ``QueryFeatures.describe()`` says the same facts in words for a model backend.
"""

from __future__ import annotations

import ast
import collections
import dataclasses
import hashlib
import json
import re
import threading
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rlar.tasks.base import query_text
from rlar.tasks.constraints import canonical, constraints_key, extract_constraints, from_metadata
from rlar.tasks.references import (
    Relation,
    answer_strings,
    reference_relation,
    reference_shape,
    unspaced_letters,
)
from rlar.tools.item_sets import synonym_groups
from rlar.tools.structured import bio_tags, parse_quantity

__all__ = [
    "KIND_WORDS",
    "REFERENCE_KINDS",
    "RELATION_SHAPES",
    "UNCOMPARABLE_KINDS",
    "QueryFeatures",
    "RoutingQuery",
    "asks_for_translation",
    "reference_kind",
]

RELATION_SHAPES = frozenset({"short_text", "text", "program"})
"""The reference shapes (answer texts) whose relation to the query the router reads."""

_MEMO_SIZE = 4096
_MEMO: collections.OrderedDict[str, QueryFeatures] = collections.OrderedDict()
_MEMO_LOCK = threading.Lock()
_OPTION = re.compile(r"(?m)(?:^|\s)(?:\([A-E]\)|[A-E][).:])\s*\S")
_OPTION_HEADER = re.compile(r"\b(?:options|choices|answer choices)\s*:", re.IGNORECASE)
_CODE = re.compile(
    r"```|^\s*(?:def |class |import |from \w+ import |#include|public static|function |SELECT |CREATE TABLE|-- )",
    re.MULTILINE,
)
_SHAPE_WORDS = {
    "none": "none (reference-free: responses are scored without comparing to a reference)",
    "code_tests": "executable code tests",
    "choice": "a choice letter",
    "number": "a number",
    "math": "a mathematical expression or a worked solution in LaTeX",
    "label": "a boolean label",
    "program": "a program or query (not tests)",
    "short_text": "a short text (three words or fewer)",
    "text": "a longer text",
    "structured": "a structured object (fields)",
}

KIND_WORDS = {
    "index": "an option index or a class label written as a digit (the query lists the options or the labels)",
    "span_object": "an answer-span object as the dataset ships it (DROP spans with types, CoQA/QuAC answers)",
    "item_list": "a list of short items (answer aliases, keyphrases, spans)",
    "tag_sequence": "a token-level tag sequence (one tag per token)",
    "grid": "a puzzle grid or a long digit string (every cell must be right)",
    "target": "only the target the answer must reach (a number game): not the answer itself",
    "quantity": "a quantity with a unit",
    "transformation": "the exact result of transforming text given in the query (a cipher, a code, a reversal)",
    "form": "none, but the query asks for a stated form (a verse form, rhyme scheme or meter)",
    "patch": "a code patch (a unified diff): only the repository's own tests can check a fix",
    "rating": "a graded score on the scale the query states (0.76 on 0 to 1): closeness, not equality, is right",
    "path": "one path between two ends the query names (a word ladder, a route): other paths may be as right",
}
# Kinds no built-in tool compares with faithfully: the decision is "none fits" (a verifier gets written, or the
# declared fallback scores), with the reason.
UNCOMPARABLE_KINDS = {
    "target": "the reference is only the target the answer must reach (a number game): no registered tool checks"
    " that the answer reaches it by the task's rules",
    "patch": "the reference is a code patch: no registered tool runs the repository's tests that check a fix",
    "rating": "the reference is a graded score on a stated scale: equality is almost never met and no registered"
    " tool rewards closeness",
    "path": "the reference is one path between two ends the query names: other paths may be as right, and no"
    " registered tool checks a path's steps",
}
REFERENCE_KINDS = tuple(KIND_WORDS)

_NUMBERED_OPTION = re.compile(
    r"(?im)^\s*(?:\(?(\d)\)|[A-Z]?(\d)[.):]|(?:[A-Za-z]+\s+){0,2}(?:option|solution|choice|ending|answer|sentence"
    r"|candidate|hypothesis|response|output|completion|continuation|summary|story)\s*(\d)\s*[:.)-])\s*\S"
    # options numbered in Chinese or Japanese: "结尾1：", "选项2:", "回答1："
    r"|(?:结尾|结局|选项|選択肢|回答|答案|候补|候補)\s*(\d)\s*[:：]"
)
_DIGIT_LABELS = re.compile(
    r"(?i)(?<![\w.])(\d{1,2})\s*(?:=|:|：|\(|-\s)\s*(?:[a-z_]{3,}|[^\W\d_]*[^\W\d_a-z]{2,})|\b(?:answer|reply|respond|label|rating|output|choose|pick)\b"
    r"[^.\n]{0,40}?(?<!e\.g\.,\s)(?<!e\.g\.\s)(?<!such as\s)(?<![\w.])(\d)\s*(?:or|to|-|–|,)\s*(\d)(?!\w|\.\d)"
    r"|\bscale of (\d)\b[^.\n]{0,40}\bto (\d)\b"
    r"|\b(?:answer|reply|output|say|return|write)\s+(\d)\b[^.\n]{0,100}?\b(?:else|otherwise|or)\s+(\d)\b"
)
# A query that maps digits to labels or options, two or more of them ("0 = a, 1 = b", "A=0 ... D=3", "ABBR=0,
# ENTY=1", "1 if the same, 0 if different", "1 for yes, 0 for no", "(0/1)", "0 true / entailment, 1 false"): a
# reference that is one of those digits is a label, not a value. One mapping alone ("x = 3") says nothing.
_DIGIT_MAPPINGS = (
    re.compile(r"(?<![\w.])(?P<d>\d)\s*[=:]\s*[A-Za-z](?![\w(])"),
    re.compile(r"(?<![\w.])(?:[A-Z]|[A-Za-z_]{2,})\s*=\s*(?P<d>\d)(?![\w.])"),
    re.compile(r"(?<![\w.])(?P<d>\d)\s+(?:if|for|when|means)\b"),
    re.compile(
        r"(?<![\w.])(?P<d>\d)\s+(?:true|false|yes|no|neither|neutral|entailment|contradiction|positive|negative"
        r"|correct|incorrect|same|different)\b",
        re.IGNORECASE,
    ),
)
_MAPPING_RUN = re.compile(r"(?<![\w.])\d{1,2}\s+[A-Za-z][\w-]{2,}(?:\s*[,;]\s*\d{1,2}\s+[A-Za-z][\w-]{2,})+")
# Two or more ids each set equal to its label, in any script: "(0 = 아니오, 1 = 예)", "0: nein / 1: ja" (a label
# of one Latin letter is a variable: "3 = x + y, 2 = x - y" is a system of equations).
_EQUATED_RUN = re.compile(
    r"(?<![\w.])\d{1,2}\s*[=:：]\s*(?:[^\W\d_A-Za-z]|[A-Za-z]{2})[^\s,;/()]*"
    r"(?:\s*[,;/、，]\s*\d{1,2}\s*[=:：]\s*(?:[^\W\d_A-Za-z]|[A-Za-z]{2})[^\s,;/()]*)+"
)
_DIGIT_CHOICE = re.compile(r"\((?P<d>[01](?:\s*/\s*\d)+)\)")
_OPTION_META = re.compile(
    r"(?i)^(?:(?:option|choice|sol|ending|answer|hypothesis|candidate)_?\d|endings|choices|options|label_names"
    r"|answer[A-E]"
    # numbered fields of the options a pairwise or cloze dataset ships: "output_1", "response_2", "sentence_quiz1"
    r"|\w*(?:quiz|output|response|completion|summary)_?\d)$"
)
# A binary label asked for at the end of the query in any language ("请回答 0 或 1。", "Réponds 0 ou 1.").
_BINARY_SLOT = re.compile(
    r"(?<![\w.])([01])\s*(?:[^\w\s]{1,2}|[^\W\d_]{1,4})\s*(?!\1)([01])(?!\w|\.\d)\s*\W{0,3}\s*$"
)
_TAG = re.compile(r"^(?:[BIESLU]-[A-Za-z_]+|O|[A-Z]{1,5}\$?|[A-Z]+-[A-Z]+|PUNCT|[.,:`'$#()]+)$")
# A sequence of symbolic tokens in upper snake case, two or more (SCAN's "I_TURN_LEFT I_WALK").
_ACTION_TOKENS = re.compile(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+(?:\s+[A-Z][A-Z0-9]*_[A-Z0-9_]+)+")
_TAG_WORDS = re.compile(r"(?i)\b(?:tag|tags|tagging|label each|ner|bio|pos|part[- ]of[- ]speech|chunk)\b")
_TARGET_WORDS = re.compile(
    r"(?i)\b(?:each number|every number|all (?:the |four |three )?numbers|numbers? (?:can|must|may) (?:only )?be used"
    r"|exactly once|use the numbers|using the numbers|equation that equals|to (?:obtain|make|reach|get))\b"
)
_FORM_WORDS = re.compile(
    r"(?i)\b(?:limerick|haiku|sonnet|villanelle|tanka|cinquain|acrostic|sestina|ghazal|rondeau|pantoum|ballade?"
    r"|terza rima|couplets?|quatrains?|rhym\w*|iambic|trochaic|pentameter|tetrameter|meter|metre|syllable pattern"
    r"|(?:[A-F]{2,}\s?){2,}|[A-F]{4,})\b"
)
_MORSE = re.compile(r"(?:[.\-·−]{1,6}[ /]+){3,}")
_CIPHER_TOKEN = re.compile(r"^[A-Z]{6,}$|^[a-z]{6,}$")
_CIPHER_WORDS = re.compile(
    r"(?i)\b(?:cipher\w*|decod\w+|decrypt\w*|encod\w+|encrypt\w*|rot-?13|shift\w*|backwards|revers\w+|unscrambl\w+|anagram)"
)


_LANGUAGE_NAMES = (
    "english|german|french|spanish|italian|portuguese|dutch|swedish|norwegian|danish|finnish|icelandic|polish"
    "|czech|slovak|slovenian|hungarian|romanian|greek|turkish|russian|ukrainian|belarusian|bulgarian|serbian"
    "|croatian|bosnian|macedonian|albanian|estonian|latvian|lithuanian|arabic|hebrew|persian|farsi|kurdish"
    "|hindi|bengali|urdu|punjabi|gujarati|marathi|tamil|telugu|kannada|malayalam|sinhala|nepali|chinese"
    "|mandarin|cantonese|japanese|korean|vietnamese|thai|lao|khmer|burmese|indonesian|malay|filipino|tagalog"
    "|swahili|amharic|yoruba|igbo|hausa|zulu|xhosa|afrikaans|somali|latin|catalan|basque|galician|welsh|irish"
    "|scottish gaelic|maltese|esperanto|mongolian|kazakh|uzbek|georgian|armenian|azerbaijani"
)
# ISO 639 codes as parallel corpora label their lines (eng, deu, fr, zho_Hans, pt-BR, ...).
_LANGUAGE_CODES = (
    "en|de|fr|es|it|pt|nl|sv|no|nb|da|fi|pl|cs|sk|sl|hu|ro|el|tr|ru|uk|bg|sr|hr|ar|he|fa|hi|bn|ur|ta|te|zh|ja"
    "|ko|vi|th|id|ms|tl|sw|ca|eu|et|lv|lt|eng|deu|ger|fra|fre|spa|ita|por|nld|dut|swe|nor|dan|fin|pol|ces|cze"
    "|slk|hun|ron|rum|ell|gre|tur|rus|ukr|bul|srp|hrv|ara|arb|heb|fas|per|pes|hin|ben|urd|tam|tel|zho|chi|cmn"
    "|jpn|kor|vie|tha|ind|msa|zsm|tgl|swa|cat|eus"
)
_LANGUAGE = rf"(?:{_LANGUAGE_NAMES})"
_LABEL = rf"(?:{_LANGUAGE_NAMES}|(?:{_LANGUAGE_CODES})(?:[_-][A-Za-z]{{2,4}})?)"
_TRANSLATION_REQUEST = re.compile(
    # the verb in other languages: traduire / traducir / tradurre, übersetzen, переведи, 翻訳 / 翻译 / 翻譯, 번역
    rf"(?i)\btranslat\w*|\blocali[sz]\w*|\btradu[cizt]\w*|\bübersetz\w*|\bперев[её]д\w*|翻[訳译譯]|번역|\b(?:render|put|turn|convert|rewrite|write|say|express)\w*\b[^\n]{{0,120}}\b(?:in|into)\s+{_LANGUAGE}\b"
    rf"|\b(?:in|into|to)\s+{_LANGUAGE}\s*:"
    rf"|\bhow (?:do|would|can) (?:you|i|we|one) say\b[^\n]{{0,120}}\bin\s+{_LANGUAGE}\b"
    rf"|\b(?:the|its|an?)\s+{_LANGUAGE}\s+(?:version|equivalent|label|text|wording|rendering|string|phrase"
    r"|sentence|line|title|caption|subtitle|name|term)s?\s+(?:for|of)\b"
    rf"|\b{_LANGUAGE}\s*(?:to|into|→|->|>)\s*{_LANGUAGE}\b"
)
# Parallel-corpus layout: a line "<language>[ what]: text" ... and a last line "<other language>[ what]:" left
# for the answer.
_PARALLEL_LINE = re.compile(rf"(?im)^\s*({_LABEL})\b[^:\n]{{0,30}}:\s*\S")
_PARALLEL_SLOT = re.compile(rf"(?i)(?:^|\n)\s*({_LABEL})\b[^:\n]{{0,30}}:\s*$")


def asks_for_translation(reference: Any, text: str, context: str = "") -> bool:
    """The query ``text`` — or its ``context``, the task's description and system messages — asks for a
    translation of text the query gives (a translation verb, "how do you say ... in <language>", "the
    <language> version of", a language pair such as "English to Korean", or a parallel-corpus layout with the
    target line left empty) and the reference's first answer is a phrase or sentence not copied from it (one
    word is a dictionary lookup: one exact answer)."""
    answers = [a for a in answer_strings(reference) or [] if isinstance(a, str)]
    answer = answers[0].strip() if answers else ""
    if not answer or answer.lower() in text.lower():
        return False
    if len(answer.split()) < 2 and (unspaced_letters(answer) or 0) < 3:
        return False
    if _TRANSLATION_REQUEST.search(f"{context}\n{text}"):
        return True
    slot = _PARALLEL_SLOT.search(text.rstrip())
    if slot is None:
        return False
    sources = [m.group(1).lower() for m in _PARALLEL_LINE.finditer(text[: slot.start() + 1])]
    return any(src != slot.group(1).lower() for src in sources)


def _small_index(reference: Any, limit: int = 20) -> str | None:
    """The reference as an index or label id when it is a whole number from 0 to ``limit`` (an int, a float with no
    fractional part such as a 5.0 star rating, or a digit string)."""
    if isinstance(reference, bool):
        return None
    if isinstance(reference, float) and reference.is_integer():
        reference = int(reference)
    if isinstance(reference, int) and 0 <= reference <= limit:
        return str(reference)
    if isinstance(reference, str) and re.fullmatch(r"\s*\d{1,2}\s*", reference) and int(reference) <= limit:
        return reference.strip()
    return None


def _is_index(reference: Any, text: str, metadata: Mapping[str, Any]) -> bool:
    if isinstance(reference, list | tuple) and len(reference) == 1 and _has_options(metadata):
        if _MULTI_LABEL.search(text):
            return False  # a set of labels asked for ("every applicable category id"), which has one today
        reference = reference[0]  # AGIEval's gold, [1], beside the options in metadata
    if _on_stated_scale(reference, text):
        return True
    if _is_correct_option(reference, metadata):
        return True
    # Ids the query lists or maps to labels may have two digits ("32 timer", "42 oos"); an id read from option
    # fields in metadata alone stays small.
    digit = _small_index(reference, limit=99)
    if digit is None:
        return False
    listed = {g for m in _NUMBERED_OPTION.finditer(text) for g in m.groups() if g}
    if len(listed) >= 2 and digit in listed:
        return True
    for m in _DIGIT_LABELS.finditer(text):
        got = [int(g) for g in m.groups() if g is not None]
        if len(got) == 1 and str(got[0]) == digit:
            return True
        if len(got) == 2 and min(got) <= int(digit) <= max(got):
            return True
    mapped = _mapped_digits(text) | _named_ids(metadata)
    if len(mapped) >= 2 and digit in mapped:
        return True
    if int(digit) > 20:
        return False
    if digit in ("0", "1") and _BINARY_SLOT.search(text):
        return True
    return _has_options(metadata)


_WRONG_OPTION_META = re.compile(
    r"(?i)incorrect|distractor|wrong[_ ]?answer|false[_ ]?answer|negative[_ ]?option"
)


def _is_correct_option(reference: Any, metadata: Mapping[str, Any]) -> bool:
    """The reference is the text of the correct option and metadata lists the others as incorrect (GPQA's
    "Incorrect Answer 1" ... "3", distractor fields): one option is named, as an index names it — an exact answer,
    not a value to compute or a text to grade."""
    if (
        not isinstance(reference, str | int | float)
        or isinstance(reference, bool)
        or not str(reference).strip()
    ):
        return False
    wrong: list[str] = []
    for k, v in metadata.items():
        if _WRONG_OPTION_META.search(str(k)):
            items = _literal(v)
            wrong += [str(x) for x in (items if isinstance(items, list) else [items]) if str(x).strip()]
    return len(wrong) >= 2 and str(reference).strip() not in {w.strip() for w in wrong}


def _has_options(metadata: Mapping[str, Any]) -> bool:
    """Metadata holds the options: a field named for them that holds something ("options": "[]" holds nothing), a
    list of two or more option texts under ``answers`` / ``choice_list``, or option fields "A" ... "D"."""
    if any(
        _OPTION_META.match(str(k)) and v not in (None, [], {}) and str(v).strip() not in ("", "[]", "{}")
        for k, v in metadata.items()
    ):
        return True
    for k, v in metadata.items():
        if str(k).lower() in ("answers", "choice_list", "answer_choices", "candidates"):
            items = _literal(v)
            if isinstance(items, list) and len(items) >= 2 and all(isinstance(x, str) for x in items):
                return True
    letters = [
        k for k, v in metadata.items() if re.fullmatch(r"[A-E]", str(k)) and isinstance(v, str) and v.strip()
    ]
    return len(letters) >= 2


def _literal(value: Any) -> Any:
    """A JSON or Python literal written as a string (datasets store lists and dicts both ways), decoded."""
    if not isinstance(value, str) or value.lstrip()[:1] not in ("[", "{"):
        return value
    try:
        return json.loads(value)
    except ValueError:
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return value


def _on_stated_scale(reference: Any, text: str) -> bool:
    """A whole number (negative ones too) inside an integer scale the query states for a score or a rating ("an
    integer from -3 to 3", "How many stars (1-5)"): a label on that scale, not a value to compute."""
    if isinstance(reference, bool) or not isinstance(reference, int | float | str):
        return False
    try:
        value = float(reference)
    except ValueError:
        return False
    if not value.is_integer() or not (_RATE_WORDS.search(text) or re.search(r"(?i)\binteger\b", text)):
        return False
    for m in _SCALE.finditer(text):
        lo, hi = (float(g) for g in (m.group(1, 2) if m.group(1) else m.group(3, 4)))
        if lo.is_integer() and hi.is_integer() and lo < hi <= 100 and lo <= value <= hi:
            return True
    return False


def _mapped_digits(text: str) -> set[str]:
    """The numbers ``text`` maps to labels or options (:data:`_DIGIT_MAPPINGS`, "(0/1)", and a parenthesised
    mapping "(1 inform, 2 question, ...)")."""
    mapped = {m.group("d") for pattern in _DIGIT_MAPPINGS for m in pattern.finditer(text)}
    for m in _DIGIT_CHOICE.finditer(text):
        mapped |= set(re.findall(r"\d", m.group("d")))
    for m in _MAPPING_RUN.finditer(text):
        mapped |= set(re.findall(r"(?<![\w.])\d{1,2}(?=\s)", m.group(0)))
    for m in _EQUATED_RUN.finditer(text):
        mapped |= set(re.findall(r"(?<![\w.])\d{1,2}(?=\s*[=:：])", m.group(0)))
    for m in _DIGIT_LABELS.finditer(text):
        if m.group(1) is not None:
            mapped.add(m.group(1))
    for m in _LABELS_WITH_DIGITS.finditer(text):
        mapped |= {m.group(1), m.group(2)}
    return mapped


# Labels each followed by its number in brackets, offered as alternatives: "entailed (1) or refuted (0)".
_LABELS_WITH_DIGITS = re.compile(
    r"(?<![\w(])[^\W\d_]{3,}\s*\((\d{1,2})\)\s*(?:,|/|or|,\s*or)\s+[^\W\d_]{3,}\s*\((\d{1,2})\)"
)


_PER_ITEM = re.compile(
    r"(?i)\b(?:one|a|an)\s+(?:\w+\s+)?(?:per|for each|for every)\b"
    r"|\beach\s+(?:utterance|turn|token|word|sentence|line|item)\b"
)
_MULTI_LABEL = re.compile(
    r"(?i)\bmulti-?label\b|\ball\s+(?:the\s+)?(?:applicable|relevant|that\s+apply)\b"
    r"|\bevery\s+(?:\S+\s+){0,3}?(?:applicable|relevant|that\s+appl(?:y|ies))\b|\blist\s+(?:every|all)\b"
)
_NAMES_META = re.compile(
    r"(?i)(?:^|_)(?:names?|labels|classes|categories)(?:_|$)|^(?:label_?map|id_?2_?label|label_?2_?id|labels?_?mapping)$"
)


_PATCH = re.compile(r"(?m)^diff --git |^--- \S.*\n\+\+\+ \S.*\n@@ ")
_SCALE = re.compile(
    r"(?i)\b(?:from|between|scale\s+of|range\s+of|on\s+a)\s+(-?\d+(?:\.\d+)?)\s*(?:\([^()\n]{0,40}\)\s*)?"
    r"(?:to|-|–|and)\s*(-?\d+(?:\.\d+)?)\b"
    r"|\((-?\d+(?:\.\d+)?)\s*(?:-|–|to)\s*(-?\d+(?:\.\d+)?)\)"
)
_RATE_WORDS = re.compile(
    r"(?i)\b(?:rate|rating|score|stars?|preference|similar\w*|relatedness|how\s+(?:much|well|strongly))\b"
)


def _is_rating(ref: Any, text: str) -> bool:
    """A number with a fractional part inside the range the query states for a score it asks for ("Rate how
    similar ... from 0 to 1": 0.76). A whole number on such a scale is a label (:func:`_on_stated_scale`)."""
    try:
        value = float(ref) if isinstance(ref, int | float | str) and not isinstance(ref, bool) else None
    except ValueError:
        return False
    if value is None or value.is_integer() or not _RATE_WORDS.search(text):
        return False  # a whole number on a scale is a label (``_on_stated_scale``)
    for m in _SCALE.finditer(text):
        lo, hi = (float(g) for g in (m.group(1, 2) if m.group(1) else m.group(3, 4)))
        if lo < hi and lo <= value <= hi:
            return True
    return False


def _nested_spans(items: Any) -> bool:
    """Some item holds another, word for word ("Aberystwyth", "at a ceremony in Aberystwyth"; "git" is no word of
    "git-commit"): spans of one answer written several ways (alternatives), not a set of different items."""
    amounts = {re.sub(r"[^\d.]|\.0*$", "", str(i).replace(",", "")) for i in items}
    if len(amounts) == 1 and re.fullmatch(r"\d+(?:\.\d+)?", amounts.pop()):
        return True  # "$1,250.00", "1,250.00", "$1250": one amount written three ways
    words = [re.findall(r"\w+(?:[-+#.]\w+)*", str(i).lower()) for i in items]
    return any(
        a and len(a) < len(b) and any(b[k : k + len(a)] == a for k in range(len(b) - len(a) + 1))
        for a in words
        for b in words
    )


def _token_list(text: str) -> list[str] | None:
    """The query is a JSON array of strings (a tokenised sentence, as token-classification sets ship it)."""
    if not text.lstrip().startswith("["):
        return None
    try:
        tokens = json.loads(text)
    except ValueError:
        return None
    return tokens if isinstance(tokens, list) and tokens and all(isinstance(t, str) for t in tokens) else None


def _label_ids(ref: Any, text: str, metadata: Mapping[str, Any]) -> str:
    """A list of label ids the query maps to labels ("0: POLITICS ... 20: ...", "(1 inform, 2 question, ...)"):
    one per item of the query (it says "one per turn", "each utterance") is a tag sequence, else a set of labels
    (multi-label classification) is an item list; "" when the list is not such ids."""
    ids = [str(r) for r in ref if isinstance(r, int) and not isinstance(r, bool)]
    if not ids or len(ids) != len(ref):
        return ""
    mapped = _mapped_digits(text) | _named_ids(metadata)
    if len(mapped) < 2 or not set(ids) <= mapped:
        return ""
    return "tag_sequence" if _PER_ITEM.search(text) and not _MULTI_LABEL.search(text) else "item_list"


def _named_ids(metadata: Mapping[str, Any]) -> set[str]:
    """The ids a list of label names in metadata gives (``label_names``, ``relation_names``, ``classes``: ids 0 to
    n - 1), or a mapping of ids to names (``intent_names``, ``label_map``, ``id2label``: its keys; ``label2id``: its
    values)."""
    out: set[str] = set()
    for k, v in metadata.items():
        if not _NAMES_META.search(str(k)):
            continue
        v = _literal(v)
        if isinstance(v, list) and len(v) >= 2 and all(isinstance(x, str) for x in v):
            out |= {str(i) for i in range(len(v))}
        elif isinstance(v, dict) and len(v) >= 2 and all(re.fullmatch(r"-?\d{1,2}", str(x)) for x in v):
            out |= {str(int(x)) for x in v}
        elif (
            isinstance(v, dict)
            and len(v) >= 2
            and all(re.fullmatch(r"-?\d{1,2}", str(x)) for x in v.values())
        ):
            out |= {str(int(x)) for x in v.values()}  # ``label2id``: names to ids
    return out


def _listed_ids(ref: Any, text: str) -> bool:
    """The reference is one or more ids the query lists its items under ("[7187158] Place eggs ...", "doc 12:"):
    a set of the items chosen, not a value."""
    items = ref if isinstance(ref, list | tuple) else [ref]
    ids = [str(r).strip() for r in items if isinstance(r, str | int) and not isinstance(r, bool)]
    if (
        not ids
        or len(ids) != len(items)
        or not all(re.fullmatch(r"[\w-]{3,}", i) and re.search(r"\d", i) for i in ids)
    ):
        return False
    listed = set(re.findall(r"(?m)^\s*\[([\w-]+)\]", text))
    return len(listed) >= 2 and set(ids) <= listed


_COMMA_JOINED = re.compile(r"[^\W\d_]{2,}(?:,[^\W\d_]{2,})+")
_PATH_SEPARATOR = re.compile(r"\s*(?:->|→|=>|⇒|,|;|\s>\s|\s-\s)\s*")


def _is_path(ref: Any, text: str) -> bool:
    """The reference is a sequence of three or more steps whose first and last the query names as the two ends
    ("'COLD' to 'WARM'", "between A and F") and whose middle it does not all name ("COLD,CORD,CARD,WARD,WARM"): one
    path of many, where an answer that takes another path can be as right."""
    if isinstance(ref, list | tuple):
        steps = [str(r).strip() for r in ref if isinstance(r, str | int)]
        if len(steps) != len(ref):
            return False
    elif isinstance(ref, str):
        steps = [x for x in _PATH_SEPARATOR.split(ref.strip()) if x]
    else:
        return False
    if (
        len(steps) < 3
        or any(len(x.split()) > 3 for x in steps)
        or len({x.lower() for x in steps}) < len(steps)
    ):
        return False

    def named(step: str) -> bool:
        return re.search(rf"(?<!\w){re.escape(step)}(?!\w)", text, re.IGNORECASE) is not None

    first, last = (re.escape(x) for x in (steps[0], steps[-1]))
    ends = re.search(
        rf"(?<!\w){first}\W{{0,3}}\s*(?:to|into|->|→|and)\s+\W{{0,3}}{last}(?!\w)", text, re.IGNORECASE
    )
    return ends is not None and not all(named(x) for x in steps[1:-1])


def _answer_object(obj: Any) -> bool:
    """One answer with its aliases ({"answer_text": "Danube", "aliases": ["Donau"], ...})."""
    return (
        isinstance(obj, Mapping)
        and isinstance(obj.get("aliases"), list)
        and any(
            isinstance(obj.get(k), str) and obj[k].strip()
            for k in ("answer_text", "answer", "value", "text", "name")
        )
    )


def _letters(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z]", "", text).upper()


def _is_transformation(answer: str, text: str) -> bool:
    """The query holds text that the answer is an exact transformation of: Morse code, a cipher token of the
    answer's letter count, the answer's letters in another order, or words with the answer's word lengths
    and other letters."""
    target = _letters(answer)
    if len(target) < 3 or answer.lower() in text.lower():
        return False
    if _MORSE.search(text + " "):
        return True
    tokens = re.findall(r"[^\s\"'“”‘’]+", text)
    lengths = [len(_letters(w)) for w in answer.split()]
    for i, tok in enumerate(tokens):
        core = tok.strip(".,:;!?()[]")
        if (
            _CIPHER_TOKEN.match(core)
            and (core.isupper() or _CIPHER_WORDS.search(text))
            and len(core) == len(target)
            and core.upper() != target
        ):
            return True
        window = [_letters(t) for t in tokens[i : i + len(lengths)]]
        joined = "".join(window)
        if len(window) == len(lengths) and len(joined) == len(target) and joined != target:
            if sorted(joined) == sorted(target) or (
                len(lengths) >= 2
                and (len(lengths) >= 3 or _CIPHER_WORDS.search(text))
                and [len(w) for w in window] == lengths
                and not {_letters(w) for w in answer.split()} & set(window)
            ):
                return True
    return False


def reference_kind(reference: Any, shape: str, text: str, metadata: Mapping[str, Any]) -> str:
    """What the reference is (:data:`KIND_WORDS`), read from the reference as the dataset ships it and what the
    query says about it; ``""`` when none of these."""

    meta = metadata or {}
    if shape == "none":
        return "form" if _FORM_WORDS.search(text) else ""
    if shape == "code_tests":
        return ""
    ref = reference
    if isinstance(ref, str) and ref.lstrip()[:1] in ("[", "{"):
        try:
            ref = json.loads(ref)
        except ValueError:
            pass
    if isinstance(ref, Mapping):
        if (
            "spans" in ref
            or "input_text" in ref
            or "extractive_spans" in ref
            or ("texts" in ref and "answer_starts" in ref)
        ):
            return "span_object"
        for key in ("ner_tags", "pos_tags", "upos", "chunk_tags"):
            if isinstance(ref.get(key), list):
                return "tag_sequence"
        return ""
    if synonym_groups(ref):
        return "item_list" if len(ref) >= 2 else ""  # BioASQ: items, each with its synonyms
    if _is_index(ref, text, meta):
        return "index"
    if _is_path(ref, text):
        return "path"
    if _is_rating(ref, text):
        return "rating"
    if _listed_ids(ref, text):
        return "item_list"
    if isinstance(ref, list | tuple) and len(ref) == 1 and (kind := _label_ids(ref, text, meta)):
        return kind  # one label id of a multi-label query ("[2]" of "0: Article 2; 1: Article 3; ...")
    if (
        isinstance(ref, list | tuple)
        and len(ref) == 1
        and isinstance(ref[0], str | int)
        and not isinstance(ref[0], bool)
        and len(str(ref[0]).split()) <= 6
        and _MULTI_LABEL.search(text)
    ):
        return (
            "item_list"  # the one label of a query that asks for every applicable one ("List every code ...")
        )
    if isinstance(ref, list | tuple) and len(ref) >= 2 and all(_answer_object(r) for r in ref):
        names = {
            str(next(r[k] for k in ("answer_text", "answer", "value", "text", "name") if r.get(k)))
            for r in ref
        }
        if len(names) == len(ref):
            return "item_list"  # QAMPARI: several answer objects, each an item with its own aliases
    if isinstance(ref, list | tuple) and len(ref) >= 2:
        if (
            all(isinstance(r, list | tuple) for r in ref)
            and len({len(r) for r in ref}) == 1
            and len(ref) >= 3
        ):
            return "grid"
        flat = [r for r in ref if not isinstance(r, bool)]
        if (len(flat) == len(ref) and all(isinstance(r, int) for r in flat)) or all(
            isinstance(r, str) and _TAG.match(r.strip()) for r in flat
        ):
            tokens = meta.get("tokens") or meta.get("words") or _token_list(text)
            if (isinstance(tokens, list) and len(tokens) == len(ref)) or (
                _TAG_WORDS.search(text) and not _MULTI_LABEL.search(text)
            ):
                return "tag_sequence"
        if kind := _label_ids(ref, text, meta):
            return kind
        if all(isinstance(r, str) and 0 < len(r.split()) <= 6 for r in ref) and not _nested_spans(ref):
            return "item_list"
        return ""
    value = str(ref).strip() if isinstance(ref, str | int | float) and not isinstance(ref, bool) else ""
    if value and re.fullmatch(r"-?\d+(?:\.\d+)?", value) and _TARGET_WORDS.search(text):
        others = [n for n in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", text) if n != value]
        if re.search(rf"(?<![\w.]){re.escape(value)}(?!\w|\.\d)", text) and len(others) >= 3:
            return "target"
    if isinstance(ref, str) and _PATCH.search(ref):
        return "patch"
    if isinstance(ref, str) and bio_tags(ref) is not None:
        return "tag_sequence"  # ATIS's slot tags as one string: "O O B-fromloc.city_name O B-toloc.city_name"
    if isinstance(ref, str) and _ACTION_TOKENS.fullmatch(ref.strip()):
        return "tag_sequence"  # SCAN's actions: "I_TURN_LEFT I_WALK I_JUMP I_JUMP", one token per action
    if isinstance(ref, str) and _COMMA_JOINED.fullmatch(ref.strip()):
        return "item_list"  # bAbI's "football,apple": items joined by commas without spaces
    if isinstance(ref, str):
        cells = ref.strip()
        rows = [r.strip() for r in cells.splitlines() if r.strip()]
        if re.fullmatch(r"\d{16,}", cells) or (
            len(rows) >= 3
            and len({len(r) for r in rows}) == 1
            and all(re.fullmatch(r"[A-Za-z0-9 ]+", r) for r in rows)
            and all(len(r.split()) in (1, len(r.replace(" ", ""))) for r in rows)
        ):
            return "grid"
        q = parse_quantity(cells)
        if q is not None and re.fullmatch(
            r"[-+−]?[\d.,]+(?:\s*(?:[eE][-+]?\d+|[x×]\s*10\^?\{?[-+−]?\d+\}?))?\s*\S.*", cells
        ):
            unit = q[2].strip()
            if unit and unit != "%" and len(cells.split()) <= 4 and not re.search(r"[$€£¥]", cells):
                return "quantity"
        if shape in ("short_text", "text") and _is_transformation(cells, text):
            return "transformation"
    return ""


@dataclass(frozen=True, slots=True)
class QueryFeatures:
    reference_shape: str
    constraints: tuple[dict[str, Any], ...]
    has_choices: bool
    has_code: bool
    turns: int
    system: bool
    scripts: tuple[str, ...]
    metadata_keys: tuple[str, ...]
    relation: Relation = field(default_factory=Relation)
    reference_kind: str = ""
    """What the reference is, beyond its shape (:data:`REFERENCE_KINDS`; ``""``: nothing more to say)."""
    translation: bool = False
    """The query asks for a translation of text it gives and the reference, a phrase or sentence, is one
    (:func:`asks_for_translation`)."""

    @property
    def reference_free(self) -> bool:
        return self.reference_shape == "none"

    @property
    def answer_shape(self) -> str:
        """The reference shape the scorer reads: the shape, except that a short translation — asked for by the
        query, or a short text in another language than its query and not copied from it — is read as an
        answer text whatever its length: other wordings of it can be as good."""
        if self.reference_shape == "short_text" and (
            self.translation or (self.relation.language_shift and not self.relation.extractive)
        ):
            return "text"
        return self.reference_shape

    @property
    def routing_shape(self) -> str:
        """The shape neighbours are matched on: the reference kind when there is one, else
        :attr:`answer_shape`."""
        return self.reference_kind or self.answer_shape

    def key(self) -> dict[str, Any]:
        """The per-query part of the cache key (constraints count only without a reference, the reference's
        relation to the query only for answer texts)."""
        answer_text = self.reference_shape in ("short_text", "text", "program")
        return {
            "shape": self.reference_shape,
            "kind": self.reference_kind,
            "constraints": constraints_key(self.constraints)
            if self.reference_free and self.constraints
            else "",
            "choices": self.has_choices,
            "code": self.has_code,
            "turns": min(self.turns, 2),
            "system": self.system,
            "scripts": list(self.scripts),
            "metadata_keys": list(self.metadata_keys),
            # For answer texts: copied from the query, or in another language (the relation of other shapes is
            # empty: see the module docstring).
            "relation": [self.relation.extractive, self.relation.language_shift] if answer_text else [],
            # Only when set, so that the signatures of every other query stay what they were.
            **({"translation": True} if self.translation else {}),
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (:meth:`from_dict` reads them back)."""
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}  # type: ignore[attr-defined]
        d["relation"] = dataclasses.asdict(self.relation)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> QueryFeatures:
        return cls(
            reference_shape=str(d["reference_shape"]),
            constraints=tuple(dict(c) for c in d["constraints"]),
            has_choices=bool(d["has_choices"]),
            has_code=bool(d["has_code"]),
            turns=int(d["turns"]),
            system=bool(d["system"]),
            scripts=tuple(d["scripts"]),
            metadata_keys=tuple(d["metadata_keys"]),
            relation=Relation(**d["relation"]),
            reference_kind=str(d.get("reference_kind", "")),
            translation=bool(d.get("translation", False)),
        )

    def describe(self) -> str:
        """The features in words (the model backend's prompt carries them)."""
        form = [
            *(["lists answer options"] if self.has_choices else []),
            *(["contains source code"] if self.has_code else []),
            *([f"{self.turns} user turns"] if self.turns > 1 else []),
            *(["has a system message"] if self.system else []),
            *([f"writing systems: {', '.join(self.scripts)}"] if self.scripts else []),
        ]
        cons = "; ".join(json.dumps(c, sort_keys=True) for c in self.constraints) or "none read"
        r = self.relation
        relation = (
            f"{'copied from the query' if r.extractive else 'not copied from the query'}; {r.overlap:.0%} of its words"
            f" occur in the query; {'in another language than the query' if r.language_shift else 'same language'}"
            f"; {2**r.length_ratio:.2g}x the query's length"
        )
        return "\n".join(
            [
                f"reference shape: {_SHAPE_WORDS.get(self.reference_shape, self.reference_shape)}",
                *(
                    [f"what the reference is: {KIND_WORDS[self.reference_kind]}"]
                    if self.reference_kind
                    else []
                ),
                *(
                    [
                        "what the reference is: a translation of text the query gives (other wordings can be as good)"
                    ]
                    if self.translation
                    else []
                ),
                *([f"reference vs query: {relation}"] if self.reference_shape in RELATION_SHAPES else []),
                f"query form: {'; '.join(form) or 'plain text'}",
                f"checkable constraints read from the description and the query: {cons}",
                f"metadata keys: {', '.join(self.metadata_keys) or '-'}",
            ]
        )


def _scripts(text: str) -> tuple[str, ...]:
    found: set[str] = set()
    for ch in text[:2000]:
        if ch.isalpha():
            name = unicodedata.name(ch, "")
            found.add(name.split(" ", 1)[0].lower() if name else "other")
    return tuple(sorted(found))


@dataclass(slots=True)
class RoutingQuery:
    task: str
    query: str
    reference: Any = None
    domain: str = ""
    task_type: str = ""
    answer_format: str = ""
    description: str = ""
    data_source: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    messages: list[dict[str, Any]] | None = None
    """The chat messages when the prompt was a list of them (``query`` is then the last user message)."""

    @classmethod
    def from_prompt(cls, p: Any) -> RoutingQuery:
        """From a ``bus.messages.Prompt``."""
        return cls(
            task=p.task,
            query=query_text(p.prompt),
            reference=p.reference,
            domain=p.domain,
            task_type=p.task_type,
            answer_format=p.answer_format,
            description=p.description,
            data_source=p.data_source,
            metadata=dict(p.metadata),
            messages=_messages(p.prompt),
        )

    @classmethod
    def from_record(cls, r: Mapping[str, Any]) -> RoutingQuery:
        """From a JSON record ``{task, query (or prompt), reference, metadata, domain?, task_type?,
        answer_format?, description?, data_source?}`` (missing type fields may also sit inside ``metadata``)."""
        meta = dict(r.get("metadata") or {})
        prompt = r.get("query", r.get("prompt", ""))

        def pick(key: str) -> str:
            return str(r.get(key) or meta.get(key) or "")

        return cls(
            task=str(r.get("task") or ""),
            query=query_text(prompt),
            reference=r.get("reference"),
            domain=pick("domain"),
            task_type=pick("task_type"),
            answer_format=pick("answer_format"),
            description=pick("description"),
            data_source=pick("data_source"),
            metadata=meta,
            messages=_messages(prompt),
        )

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}  # type: ignore[attr-defined]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RoutingQuery:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})  # type: ignore[attr-defined]

    def features(self) -> QueryFeatures:
        """What the router reads from this query (see the module docstring). Reading is pure and costs
        milliseconds; the last :data:`_MEMO_SIZE` readings of this process are remembered by the query's fields
        (a routing pass reads one query in several places)."""
        key = json.dumps(self.to_dict(), sort_keys=True, default=str)
        with _MEMO_LOCK:
            f = _MEMO.get(key)
            if f is not None:
                _MEMO.move_to_end(key)
        if f is None:
            f = self._read_features()
            with _MEMO_LOCK:
                _MEMO[key] = f
                while len(_MEMO) > _MEMO_SIZE:
                    _MEMO.popitem(last=False)
        # The constraint dicts are the caller's own (the memo's stay as read).
        return dataclasses.replace(f, constraints=tuple(dict(c) for c in f.constraints))

    def _read_features(self) -> QueryFeatures:
        text = self.query
        roles = [str(m.get("role", "")) for m in self.messages or [] if isinstance(m, Mapping)]
        turns = roles.count("user") if roles else max(1, len(re.findall(r"(?m)^\s*Human:", text)))
        shape = reference_shape(self.reference, self.metadata)
        return QueryFeatures(
            reference_shape=shape,
            constraints=tuple(
                canonical(
                    [*extract_constraints(f"{self.description}\n{text}"), *from_metadata(self.metadata)]
                )
            ),
            has_choices=len(_OPTION.findall(text)) >= 2 or bool(_OPTION_HEADER.search(text)),
            has_code=bool(_CODE.search(text)),
            turns=turns,
            system="system" in roles,
            scripts=_scripts(text),
            metadata_keys=tuple(sorted(str(k) for k in self.metadata)),
            relation=reference_relation(self.reference, text) if shape in RELATION_SHAPES else Relation(),
            reference_kind=reference_kind(
                self.reference, shape, f"{self._context()}\n{text}".strip(), self.metadata
            ),
            translation=shape in ("short_text", "text")
            and asks_for_translation(self.reference, text, self._context()),
        )

    def _context(self) -> str:
        """What frames the query: the task's description and the system messages."""
        system = [
            str(m.get("content", ""))
            for m in self.messages or []
            if isinstance(m, Mapping) and m.get("role") == "system"
        ]
        return "\n".join([self.description, *system])

    def declared(self) -> dict[str, str]:
        """What the task declares about itself (empty fields included)."""
        return {
            "domain": self.domain,
            "task_type": self.task_type,
            "answer_format": self.answer_format,
            "data_source": self.data_source,
            "description": self.description,
        }

    def signature_fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = dict(self.declared())
        if not any(fields.values()):
            fields["task"] = self.task
        fields["features"] = self.features().key()
        return fields

    def signature(self) -> str:
        """sha256 (24 hex chars) of ``signature_fields()``: the key one routing decision is cached under."""
        text = json.dumps(self.signature_fields(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]

    def matching_text(self) -> str:
        """The text the offline router embeds: what the task declares (not its data source: a dataset's name
        must not decide the route), then the query."""
        declared = ". ".join(
            x.strip()
            for x in (self.task_type, self.domain, self.answer_format, self.description)
            if x.strip()
        )
        return (
            f"{declared}. {' '.join(self.query.split())[:400]}"
            if declared
            else " ".join(self.query.split())[:400]
        )


def _messages(prompt: Any) -> list[dict[str, Any]] | None:
    if isinstance(prompt, list):
        return [dict(m) for m in prompt if isinstance(m, Mapping)]
    return None
