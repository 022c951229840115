"""Reference shapes: what a task's reference looks like, as the source datasets shape it.

Datasets hand references over in their own shapes, and a reward tool can only use one it can read. This module
names the shape; the router and the synthesizer read shapes from here.

- :func:`is_reference_free`: ``None``, ``""`` (or only whitespace), an empty list or dict, or a list of such
  — the dataset has no reference for this query (chat and safety sets often store ``""``).
- :func:`answer_strings`: the acceptable answer texts of a reference in a question-answering shape: a string,
  a list of strings, SQuAD ``{"text": [...], "answer_start": [...]}``, TriviaQA ``{"value", "aliases"}``,
  ``{"answer"}``/``{"answers"}`` (``None`` when the reference is not one of these).
- :func:`is_code_tests`: the code tool's own parser (:func:`rlar.sandbox.formats.is_code_tests`); a test
  source whose entry point sits in the record's metadata (HumanEval's ``test`` column exported alone) counts.
- :func:`reference_relation`: how an answer text relates to its query — copied from it (extractive), how many
  of its words the query holds, written in another language (:func:`text_language`), relative length.
- :func:`reference_shape` → one of :data:`SHAPES`:

  ``none``        reference-free (above);
  ``code_tests``  executable tests (HumanEval, MBPP, APPS, LeetCode, CodeContests, LiveCodeBench, asserts);
  ``choice``      a choice letter: ``B``, ``(C)``;
  ``number``      a number: ``72``, ``-3.5``, ``1,250``, ``25%``, ``$4.99``, ``3/8``, a bare JSON number, a
                  GSM8K solution ending ``#### 72``;
  ``math``        a LaTeX or symbolic answer or a worked solution with ``\\boxed{}``: ``\\frac{1}{3}``,
                  ``(-2, 2)``, ``x^2+2x+1``;
  ``label``       a boolean (BoolQ's ``true``/``false``);
  ``program``     source code or a query (SQL, a Python snippet) that is not a test suite;
  ``short_text``  up to three words;
  ``text``        longer text;
  ``structured``  a mapping in none of the shapes above (fields to extract, TruthfulQA's answer sets, ...).
"""

from __future__ import annotations

import difflib
import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rlar.sandbox.formats import is_code_tests as _parses_as_code_tests
from rlar.tools.item_sets import synonym_groups
from rlar.tools.math_answer import gold_answer, is_worked_solution
from rlar.tools.rules import answer_object_strings

__all__ = [
    "SHAPES",
    "Relation",
    "answer_strings",
    "is_code_tests",
    "is_reference_free",
    "reference_relation",
    "reference_shape",
    "text_language",
]

SHAPES = (
    "none",
    "code_tests",
    "choice",
    "number",
    "math",
    "label",
    "program",
    "short_text",
    "text",
    "structured",
)

_ANSWER_KEYS = ("answers", "answer", "text", "value", "aliases", "best_answer")
_ALIASED = frozenset({"aliases", "value", "answer"})
_NUMBER = re.compile(
    r"[-+−]?[$€£¥]?\s?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?\s?%?|[-+]?\.\d+|[-+]?\d+\s*/\s*\d+|\\[dt]?frac\{-?\d+\}\{\d+\}"
)
_CHOICE = re.compile(r"\(?[A-Ea-e]\)?\.?")
_IDENTIFIER = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{12,}"
)
_LATEX = re.compile(
    r"\\[a-zA-Z]+|\^|_\{|\$|\\\(|[a-z]\s*[=<>≤≥]|\b[a-z]\^?\d?\s*[+\-*/]\s*\d|\d\s*[a-z]\b|[∞√]"
    r"|(?<![^\W\d_a-zA-Z])π(?![^\W\d_a-zA-Z])"  # π, not a letter of a Greek word
)
_TUPLE = re.compile(
    r"[\[(]?\s*-?[\d.]+(\s*,\s*-?[\d.]+)+\s*[\])]?|[\[(]\s*-?[\d.]+\s*,\s*\\?-?(infty|∞|[\d.]+)\s*[\])]"
)
_PROGRAM = re.compile(
    r"^\s*(SELECT|WITH|INSERT|UPDATE|DELETE|CREATE)\b.*\b(FROM|INTO|TABLE|SET)\b"  # SQL
    r"|^\s*(?:PREFIX\s.*)?(SELECT|ASK|CONSTRUCT|DESCRIBE)\b[^{]*\bWHERE\s*\{"  # SPARQL
    r"|^\s*(?:OPTIONAL\s+)?MATCH\s*\(.*\bRETURN\b"  # Cypher
    r"|^\s*\[IN:[A-Z_]+\b.*\]\s*$"  # a TOP / MTOP semantic parse: [IN:GET_WEATHER [SL:LOCATION boston ] ]
    # a logical form: predicates applied to arguments, joined ("dog ( x _ 1 ) AND roll . agent ( x _ 2 , x _ 1 )")
    r"|^[\s*]*[\w.]+(?:\s*\.\s*\w+)*\s*\([^()]*\)(?:\s*(?:AND|;|∧|&)\s*\*?\s*[\w.]+(?:\s*\.\s*\w+)*\s*\([^()]*\))+\s*$"
    r"|^\s*(def |class |import |from \w+ import |lambda )"  # Python statements
    r"|^(['\"][^'\"]*['\"])?[\w.\[\]]*\w\(.*\)(\.\w+\(.*\))*$"  # a call: os.getcwd(), ' '.join(words)
    r"|^\[.+ for .+ in .+\]$",  # a comprehension
    re.IGNORECASE | re.DOTALL,
)


def is_reference_free(reference: Any) -> bool:
    """No usable reference: ``None``, blank strings, empty containers, or lists of only those."""
    if reference is None:
        return True
    if isinstance(reference, str):
        return not reference.strip()
    if isinstance(reference, Mapping):
        return not reference
    if isinstance(reference, list | tuple):
        return all(is_reference_free(r) for r in reference)
    return False


def answer_strings(reference: Any) -> list[str] | None:
    """Acceptable answers of a question-answering reference (see the module docstring), else ``None``."""
    if isinstance(reference, bool) or reference is None:
        return None
    if isinstance(reference, str | int | float):
        return [str(reference)]
    if isinstance(reference, list | tuple):
        if reference and all(
            isinstance(r, Mapping) and (_ALIASED.intersection(r) or answer_object_strings(r))
            for r in reference
        ):
            # WebQSP / ComplexWebQuestions: a list of answer objects, each with its aliases — all alternatives.
            objects = [answer_strings(r) for r in reference]
            return [a for o in objects if o for a in o] if all(objects) else None
        out = [str(r) for r in reference if isinstance(r, str | int | float) and not isinstance(r, bool)]
        return out if out and len(out) == len(reference) else None
    if isinstance(reference, Mapping):
        for key in (
            "value",
            "answer",
        ):  # TriviaQA {"value", "aliases"}, CWQ {"answer", "answer_id", "aliases"}
            if isinstance(reference.get(key), str | int | float) and "aliases" in reference:
                return [str(reference[key]), *(str(a) for a in reference.get("aliases") or [])]
        for key in ("answers", "answer", "text"):
            if key in reference and len(reference) <= 3:
                return answer_strings(reference[key])
        return answer_object_strings(reference)
    return None


def is_code_tests(reference: Any, metadata: Mapping[str, Any] | None = None) -> bool:
    """True when the code tool can run ``reference`` as tests (with the entry point from ``metadata``)."""
    if _parses_as_code_tests(reference):
        return True
    entry = (metadata or {}).get("entry_point")
    return (
        isinstance(reference, str)
        and bool(entry)
        and _parses_as_code_tests({"test": reference, "entry_point": entry})
    )


def _decoded(reference: Any) -> Any:
    """A JSON object or array given as a string (verl's ``ground_truth`` often is one), decoded."""
    if isinstance(reference, str) and reference.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(reference)
        except ValueError:
            return reference
    return reference


_STATED_LINE = re.compile(
    r"(?:the\s+(?:final\s+)?answer\s+is|(?:final\s+)?answer)\s*:?\s*(.{1,60}?)\s*\.?", re.IGNORECASE
)


def _text_shape(text: str) -> str:
    text = text.strip()
    if "####" in text:  # a GSM8K solution: the answer follows the marker, on its line (MetaMath adds a line
        # "The answer is: 5" after it)
        answer = text.rsplit("####", 1)[1].strip().split("\n", 1)[0]
        return _text_shape(answer) if answer.strip() else "text"
    if "\\boxed" in text:
        return "math"
    # A worked solution whose last line states the answer ("... The answer is B", "Answer: 54"): that answer.
    lines = [ln for ln in text.split("\n") if ln.strip()]
    if len(lines) >= 2 and (stated := _STATED_LINE.fullmatch(lines[-1].strip())) and stated.group(1).strip():
        return _text_shape(stated.group(1))
    if is_worked_solution(text):  # Orca-Math: the working, then "So the number is 24." — the answer it states
        return _text_shape(gold_answer(text))
    if _CHOICE.fullmatch(text) and (len(text) > 1 or text.isupper()):
        return "choice"
    if _NUMBER.fullmatch(text):
        return "number"
    # ASDiv writes what was counted after the number, in parentheses: "9 (apples)".
    if (m := re.fullmatch(r"(.+?)\s*\([A-Za-z][A-Za-z' -]{0,30}\)", text)) and _NUMBER.fullmatch(m.group(1)):
        return "number"
    if _TUPLE.fullmatch(text):  # a tuple, interval or list of solutions: (-2, 2), 3, -3, [2, \infty)
        return "math"
    if text.lower() in ("true", "false"):
        return "label"
    if _PROGRAM.search(text):
        return "program"
    if _IDENTIFIER.fullmatch(
        text
    ):  # a UUID or a hash: a string to match, however its digits and letters fall
        return "short_text"
    words = text.split()
    if (
        len(words) <= 4
        and _LATEX.search(text)
        and not re.search(r"[^\W\d_]{4,}", re.sub(r"\\[a-zA-Z]+", "", text))
    ):
        return "math"
    # A writing system without spaces is sized in letters (about two to a word): a summary in Japanese is a text.
    letters = unspaced_letters(text)
    if letters is not None:
        return "short_text" if letters <= 8 else "text"
    return "short_text" if len(words) <= 3 else "text"


def reference_shape(reference: Any, metadata: Mapping[str, Any] | None = None) -> str:
    """One of :data:`SHAPES` (see the module docstring); ``metadata`` may hold a test's ``entry_point``."""
    if is_reference_free(reference):
        return "none"
    if is_code_tests(reference, metadata):
        return "code_tests"
    reference = _decoded(reference)
    if isinstance(reference, bool):
        return "label"
    if isinstance(reference, int | float):
        return "number"
    if isinstance(reference, Mapping):
        answers = answer_strings(reference)
        return reference_shape(answers[0]) if answers else "structured"
    if isinstance(reference, list | tuple):
        if synonym_groups(reference):  # BioASQ: the first name of the first item
            return reference_shape(reference[0][0])
        if (answers := answer_strings(reference)) and isinstance(reference[0], Mapping):
            return reference_shape(answers[0])
        first = next(r for r in reference if not is_reference_free(r))
        return (
            reference_shape(first, metadata)
            if not isinstance(first, Mapping | list | tuple)
            else "structured"
        )
    return _text_shape(str(reference))


# Frequent function words, pronouns and auxiliaries: enough to tell these languages apart in a sentence, short
# ones included ("Ich bin müde.", "Je suis fatigué.") (Latin-script text only).
_STOPWORDS = {
    lang: frozenset(words.split())
    for lang, words in {
        "en": "the and of to is in that it was for on are with as be this have not you at by from they or which"
        " i am we he she my your what how can will would there were has had an me our do does",
        "de": "der die das und ist nicht ein eine zu den mit von sich auf für im dem des wird auch es wurde"
        " ich bin du bist er wir ihr sind habe hast hat haben mein dein kein keine wo wie was sehr gern",
        "fr": "le la les et est des une un du que pour dans en pas qui sur au sont avec ce il elle"
        " je suis tu nous vous ils elles ai avons mon ma mes très où cette",
        "es": "el la los las y es de que en un una por con para del se su al lo como más"
        " yo soy estoy tú eres está estás tengo tiene muy dónde qué hay mi nosotros",
        "it": "il la le di che è un una per non sono con del della gli nel alla anche"
        " io ho sei ha siamo mi ti molto dove cosa questo",
        "pt": "o a os as e é de que um uma para com não do da em no na se eu sou estou você tem tenho muito onde",
        "nl": "de het een en is van dat niet op te zijn met voor ook aan er maar ik ben jij je wij hij zij heb"
        " heeft waar wat",
        "sv": "och är jag inte det att ett på för med som har vi du han hon vad mycket",
        "pl": "i w nie się na jest że z jak ja ty mam jestem czy są jesteś bardzo gdzie",
        "tr": "bir ve bu da ben sen çok ne mi için var yok değil biz siz ile",
    }.items()
}
# Letters that, beside at least one of its function words, point to a language (a name alone never does).
_LETTERS = {
    "de": "äöüß",
    "fr": "èêàâîôûëïœç",
    "es": "ñ¿¡áíóú",
    "it": "ìòàè",
    "pt": "ãõçâêô",
    "sv": "åäö",
    "pl": "łąęśćźżń",
    "tr": "ğşıöüç",
}
# Writing systems whose words are not separated by spaces: their size is counted in letters.
_UNSPACED = frozenset({"cjk", "thai", "lao", "khmer", "myanmar", "tibetan"})


def _script(text: str) -> tuple[str, int]:
    """The writing system of most of ``text``'s letters (``latin``, ``cyrillic``, ``cjk``, ...) and how many
    letters it has (``("", 0)`` without letters)."""
    scripts: Counter[str] = Counter()
    for ch in text[:1000]:
        if ch.isalpha():
            name = unicodedata.name(ch, "")
            word = name.split(" ", 1)[0] if name else "OTHER"
            scripts["cjk" if word in ("CJK", "HIRAGANA", "KATAKANA", "HANGUL") else word.lower()] += 1
    if not scripts:
        return "", 0
    return scripts.most_common(1)[0][0], sum(scripts.values())


def text_language(text: str) -> str:
    """A coarse language of ``text``: the writing system of most of its letters when not Latin (``cyrillic``,
    ``cjk``, ``arabic``, ``devanagari``, ...), else the language whose function words it uses most (``en``,
    ``de``, ``fr``, ``es``, ``it``, ``pt``, ``nl``, ``sv``, ``pl``, ``tr``; at least two, more than any other
    language's; a letter of the language's own alphabet counts as one more beside at least one function word),
    else ``latin``; ``""`` without letters."""
    script, _ = _script(text)
    if script != "latin":
        return script
    low = text.lower()
    words = re.findall(r"[^\W\d_]+", low)
    counts = {lang: sum(1 for w in words if w in sw) for lang, sw in _STOPWORDS.items()}
    for lang, letters in _LETTERS.items():
        if counts[lang] and any(ch in low for ch in letters):
            counts[lang] += 1
    best = max(counts, key=lambda k: counts[k])
    runner_up = max(v for k, v in counts.items() if k != best)
    return best if counts[best] >= 2 and counts[best] > runner_up else "latin"


def unspaced_letters(text: str) -> int | None:
    """How many letters ``text`` has when most of them are of a writing system that does not separate words by
    spaces (CJK, Thai, Lao, Khmer, Myanmar, Tibetan), whose size is counted in letters; ``None`` otherwise."""
    script, letters = _script(text)
    return letters if script in _UNSPACED else None


def _sized_for_language(text: str, words: list[str]) -> bool:
    """Long enough for its language to be read: three words, or five letters of a writing system without
    spaces (a sentence, not a name)."""
    letters = unspaced_letters(text)
    return letters >= 5 if letters is not None else len(words) >= 3


@dataclass(frozen=True, slots=True)
class Relation:
    """How a reference answer relates to its query (all zero when the reference is not an answer text)."""

    extractive: bool = False
    """An acceptable answer appears verbatim (case-insensitively) in the query."""
    overlap: float = 0.0
    """Share of the answer's words that occur in the query."""
    language_shift: bool = False
    """The answer is written in another language or writing system than the query."""
    length_ratio: float = 0.0
    """log2(answer characters / query characters), clipped to [-6, 2]."""
    edit_similarity: float = 0.0
    """How much of the answer's characters the query holds in the same order (difflib's matching blocks over
    the answer's length): near 1 for a corrected or lightly edited copy of the query."""


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower())


def reference_relation(reference: Any, query: str) -> Relation:
    """:class:`Relation` of ``reference``'s first acceptable answer text to ``query``."""
    answers = answer_strings(_decoded(reference))
    if not answers or not query.strip() or is_code_tests(reference):
        return Relation()
    answer = answers[0].strip()
    if "####" in answer:
        answer = answer.rsplit("####", 1)[1].strip()
    if not answer:
        return Relation()
    low = query.lower()
    extractive = any(a.strip() and a.strip().lower() in low for a in answers)
    aw, qw = _words(answer), set(_words(query))
    overlap = sum(1 for w in aw if w in qw) / len(aw) if aw else 0.0
    shift = False
    if _sized_for_language(answer, aw) and len(qw) >= 3:
        la, lq = text_language(answer), text_language(query)
        shift = bool(la and lq and la != lq and "latin" not in (la, lq))
    ratio = max(-6.0, min(2.0, math.log2(max(1, len(answer)) / max(1, len(query)))))
    a, q = answer.lower()[:2000], low[:4000]
    matched = sum(b.size for b in difflib.SequenceMatcher(None, a, q, autojunk=False).get_matching_blocks())
    return Relation(extractive, round(overlap, 4), shift, round(ratio, 4), round(matched / len(a), 4))
