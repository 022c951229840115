"""The constraint vocabulary as types: one dataclass per kind of rule, its parameters as typed fields.

A constraint is a rule name (``rule``) and the parameters its class declares; what a rule means is
:func:`rlar.constraints.checks.check`. The dict form ``{"rule": name, **parameters}`` is the serialization
(:meth:`Constraint.to_dict` / :func:`parse`): the verifier source, stored tool params and the wire carry it, and
the readers and builders above this package still pass it around. Only the parameters a class declares are
accepted, and every class checks its values on construction (``ValueError`` names what is wrong).

Scopes and units: ``per`` is the scope a bound holds in (every sentence, item, paragraph, line or word);
``unit`` is what a composed rule looks at (words, lines, numbers, links, ...); the predicate is the rule name with
``test`` (``each``), ``rel`` (``order``) or ``agg`` (``total``); bounds are inclusive ``min`` / ``max``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from rlar.constraints.checks.units import COUNT_UNITS

__all__ = [
    "CORE_TYPES",
    "NTH_UNITS",
    "ONLY_KINDS",
    "SCOPES",
    "UNIT_WORDS",
    "Affix",
    "At",
    "Case",
    "CodeBlock",
    "Constraint",
    "Count",
    "Delimited",
    "Each",
    "JsonArray",
    "Keys",
    "Language",
    "Letter",
    "Nth",
    "Occurs",
    "OneOf",
    "Only",
    "Order",
    "Paragraphs",
    "Postscript",
    "Repeat",
    "Same",
    "Sections",
    "Spell",
    "Table",
    "Total",
    "Trailing",
    "Whole",
    "WordList",
    "Wrap",
    "bounds_text",
]

SCOPES = ("sentence", "item", "paragraph", "line", "word")
NTH_UNITS = ("paragraph", "sentence", "line", "item")
ONLY_KINDS = (
    "number",
    "integer",
    "letters",
    "capitals",
    "lowercase_letters",
    "digits",
    "word",
    "numbers",
    "snake_case",
    "screaming_snake",
    "camel_case",
    "pascal_case",
    "kebab_case",
)
_WIRE = {"as_": "as"}  # a field whose parameter name is a Python keyword

_UNIT_NAMES = {  # how a count unit is said where its rule name is not the English word
    "bullets": "bullet points",
    "numbered": "numbered items",
    "items": "list items",
    "chars": "characters",
    "capitals": "capital letters",
    "exclamations": "exclamation marks",
    "questions": "question marks",
    "punctuation": "punctuation marks",
    "capital_words": "words in capitals",
    "highlights": "highlighted sections",
    "headings": "Markdown headings",
    "bold": "bold phrases",
    "bold_words": "words in bold",
    "italics": "phrases in italics",
    "links": "Markdown links",
    "distinct_words": "different words",
    "distinct_letters": "different letters",
    "number_words": "numbers written as words",
    "code_lines": "lines of code",
    "parens": "pairs of parentheses",
    "paren_depth": "levels of nested parentheses",
    "checked": "checked task boxes",
    "unchecked": "unchecked task boxes",
    "indent": "leading spaces",
}
UNIT_WORDS = {u: _UNIT_NAMES.get(u, u) for u in COUNT_UNITS}


def _nonzero_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v != 0


def bounds_text(lo: Any, hi: Any) -> str:
    if lo is not None and hi is not None:
        return f"exactly {lo}" if lo == hi else f"{lo} to {hi}"
    if lo is not None:
        return f"at least {lo}"
    return f"at most {hi}" if hi else "no"


def _kth(k: int, the: str = "the ") -> str:
    return "the last" if k == -1 else f"{the}{k}th"


@dataclass(frozen=True, kw_only=True)
class Constraint:
    """A rule and its parameters (the fields of the subclass); ``None`` is a parameter not given."""

    RULES: ClassVar[tuple[str, ...]] = ()
    rule: str

    def __post_init__(self) -> None:
        per = getattr(self, "per", None)
        if per is not None and per not in SCOPES:
            raise ValueError(f"rule {self.rule!r}: per must be one of {SCOPES}, got {per!r}")
        self._check()
        for key in ("min", "max", "sub_min", "sub_max", "indent"):
            v = getattr(self, key, None)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
                raise ValueError(f"rule {self.rule!r}: {key} must be a non-negative integer, got {v!r}")

    def _check(self) -> None:
        """Checks of the subclass's values beyond ``per`` and the bounds."""

    @classmethod
    def params(cls) -> frozenset[str]:
        """The parameter names of the dict form (``rule`` aside)."""
        return frozenset(_WIRE.get(f.name, f.name) for f in dataclasses.fields(cls) if f.name != "rule")

    @classmethod
    def from_params(cls, rule: str, params: Mapping[str, Any]) -> Constraint:
        """The constraint of ``rule`` with the parameters of a dict form (names as the dict form spells them)."""
        names = {_WIRE.get(f.name, f.name): f.name for f in dataclasses.fields(cls)}
        return cls(rule=rule, **{names[k]: v for k, v in params.items()})

    def to_dict(self) -> dict[str, Any]:
        """The dict form: ``rule`` and every parameter given."""
        out: dict[str, Any] = {"rule": self.rule}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name != "rule" and value is not None:
                out[_WIRE.get(f.name, f.name)] = value
        return out

    def merge_key(self) -> str:
        """Constraints with equal keys are one constraint (their bounds and lists merge)."""
        per = getattr(self, "per", None) or ""
        index = getattr(self, "index", None)
        return f"{self.rule}|{per}|{index}" if index is not None else f"{self.rule}|{per}"

    def describe(self) -> str:
        """The constraint in words, e.g. ``each item: at most 10 words``."""
        return self.rule.replace("_", " ")

    def _bounds(self) -> str:
        return bounds_text(getattr(self, "min", None), getattr(self, "max", None))


# -- counts -------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Count(Constraint):
    """How many of a count unit (``rule``: words, sentences, emojis, ...) the answer, or every ``per`` unit (the
    ``index``-th only, when given), holds; ``body``: a final postscript aside; ``separator``: a paragraph
    separator line."""

    RULES = tuple(u for u in COUNT_UNITS if u not in ("paragraphs", "sections"))
    min: int | None = None
    max: int | None = None
    per: str | None = None
    separator: str | None = None
    body: bool | None = None
    index: int | None = None

    def _check(self) -> None:
        if self.index is not None and (not self.per or not _nonzero_int(self.index)):
            raise ValueError(
                f"rule {self.rule!r}: index needs a per scope and a non-zero integer, got {self.to_dict()!r}"
            )

    def _scope(self) -> str:
        if self.per and self.index is not None:
            return f"{_kth(int(self.index))} {self.per}: "
        return f"each {self.per}: " if self.per else ""

    def describe(self) -> str:
        return f"{self._scope()}{self._bounds()} {UNIT_WORDS[self.rule]}"


@dataclass(frozen=True, kw_only=True)
class Paragraphs(Constraint):
    """How many paragraphs (split at blank lines or at a ``separator`` line); ``distinct``: no two alike."""

    RULES = ("paragraphs",)
    min: int | None = None
    max: int | None = None
    per: str | None = None
    separator: str | None = None
    distinct: bool | None = None
    body: bool | None = None

    def describe(self) -> str:
        scope = f"each {self.per}: " if self.per else ""
        return f"{scope}{self._bounds()} {UNIT_WORDS['paragraphs']}"


@dataclass(frozen=True, kw_only=True)
class Sections(Constraint):
    """How many sections, marked ``marker`` and a number (``suffix`` after it), numbered 1..N in order."""

    RULES = ("sections",)
    min: int | None = None
    max: int | None = None
    per: str | None = None
    marker: str | None = None
    suffix: str | None = None
    body: bool | None = None

    def describe(self) -> str:
        if self.marker or self.suffix:
            return f"{self._bounds()} sections marked {self.marker or 'Section'} N{self.suffix or ''}"
        scope = f"each {self.per}: " if self.per else ""
        return f"{scope}{self._bounds()} {UNIT_WORDS['sections']}"


# -- words and case -----------------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class WordList(Constraint):
    """``include``: every one of ``words`` appears; ``exclude``: none does."""

    RULES = ("include", "exclude")
    words: list[str] | None = None

    def describe(self) -> str:
        said = ", ".join(repr(w) for w in self.words or [])
        return f"{'uses' if self.rule == 'include' else 'never uses'} {said}"


@dataclass(frozen=True, kw_only=True)
class Occurs(Constraint):
    """``text`` appears between ``min`` and ``max`` times."""

    RULES = ("occurs",)
    text: str | None = None
    min: int | None = None
    max: int | None = None

    def merge_key(self) -> str:
        return f"occurs||{str(self.text if self.text is not None else '').lower()}"

    def describe(self) -> str:
        return f"{self.text!r} {self._bounds()} times"


@dataclass(frozen=True, kw_only=True)
class Letter(Constraint):
    """How often a letter, or any of several (``aeiou``: vowels), appears."""

    RULES = ("letter",)
    letter: str | None = None
    min: int | None = None
    max: int | None = None

    def merge_key(self) -> str:
        return f"letter|{str(self.letter if self.letter is not None else '').lower()}"

    def describe(self) -> str:
        what = "vowels" if str(self.letter) == "aeiou" else f"letter {self.letter!r}"
        return f"{what} {self._bounds()} times"


@dataclass(frozen=True, kw_only=True)
class Case(Constraint):
    """The whole answer in lowercase, in uppercase, or every word with a capital first."""

    RULES = ("lowercase", "uppercase", "title_case")


# -- starts and ends ----------------------------------------------------------------------------------------------
_AFFIX_VERBS = {
    "starts_with": "starts with",
    "not_starts_with": "does not start with",
    "ends_with": "ends with",
    "not_ends_with": "does not end with",
}


@dataclass(frozen=True, kw_only=True)
class Affix(Constraint):
    """The answer (or every ``per`` unit) starts or ends, or does not, with ``text``."""

    RULES = tuple(_AFFIX_VERBS)
    text: str | None = None
    per: str | None = None

    def _check(self) -> None:
        if self.rule == "not_ends_with" and not str(self.text or ""):
            raise ValueError(f"rule 'not_ends_with' needs a text, got {self.to_dict()!r}")

    def merge_key(self) -> str:
        if self.rule in ("not_starts_with", "not_ends_with"):
            return f"{self.rule}|{self.per or ''}|{str(self.text if self.text is not None else '').lower()}"
        return super().merge_key()

    def describe(self) -> str:
        scope = f"each {self.per}: " if self.per else ""
        return f"{scope}{_AFFIX_VERBS[self.rule]} {self.text!r}"


# -- structured answers -------------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Keys(Constraint):
    """A JSON object (``json_keys``) or YAML mapping (``yaml_keys``) with ``keys`` (``types`` key → string |
    integer | number | boolean | list | list_of_strings | list_of_numbers | object | null; ``exact``: no other)."""

    RULES = ("json_keys", "yaml_keys")
    keys: list[str] | None = None
    types: dict[str, str] | None = None
    exact: bool | None = None

    def describe(self) -> str:
        said = ", ".join(f"{k} ({(self.types or {}).get(k, 'any')})" for k in self.keys or [])
        what = "JSON object" if self.rule == "json_keys" else "YAML mapping"
        return f"{what} with keys {said}" + (" and no others" if self.exact else "")


@dataclass(frozen=True, kw_only=True)
class Whole(Constraint):
    """A form of the whole answer with no parameter: JSON, in double quotes, a ``<<title>>``."""

    RULES = ("json", "quoted", "title")


@dataclass(frozen=True, kw_only=True)
class Postscript(Constraint):
    """The answer ends with a postscript marked ``text`` as written (none: P.S., PS or Postscript)."""

    RULES = ("postscript",)
    text: str | None = None

    def describe(self) -> str:
        if self.text:
            return f"ends with a postscript {self.text}"
        return "ends with a postscript (P.S., PS, Postscript)"


@dataclass(frozen=True, kw_only=True)
class CodeBlock(Constraint):
    """The answer is a fenced code block (one, tagged ``lang`` as written, when given)."""

    RULES = ("code_block",)
    lang: str | None = None

    def describe(self) -> str:
        if self.lang:
            return f"one fenced code block tagged {self.lang!r} and nothing else"
        return super().describe()


@dataclass(frozen=True, kw_only=True)
class OneOf(Constraint):
    """The whole answer is one of ``options``."""

    RULES = ("one_of",)
    options: list[str] | None = None

    def describe(self) -> str:
        return "exactly one of " + " | ".join(repr(o) for o in self.options or [])


@dataclass(frozen=True, kw_only=True)
class Only(Constraint):
    """The whole answer is nothing but ``what`` (a number, letters, one word, an identifier style, ...)."""

    RULES = ("only",)
    what: str | None = None

    def _check(self) -> None:
        if self.what not in ONLY_KINDS:
            raise ValueError(f"rule 'only': what must be one of {ONLY_KINDS}, got {self.what!r}")

    def describe(self) -> str:
        return f"nothing but {str(self.what).replace('_', ' ')}"


@dataclass(frozen=True, kw_only=True)
class Language(Constraint):
    """The answer is written in ``lang`` (en, de, fr, ... by vocabulary; ru, el, ar, ... by script)."""

    RULES = ("language",)
    lang: str | None = None

    def describe(self) -> str:
        return f"written in language {self.lang}"


# -- composed rules over units ------------------------------------------------------------------------------------
def _composed_key(rule: str, unit: Any, what: Any, arg: Any, of: Any) -> str:
    return f"{rule}|{unit if unit is not None else ''}|{what}|{json.dumps(arg, sort_keys=True)}" + (
        f"|{of}" if of else ""
    )


def _measured(of: Any, what: str) -> str:
    return f"its {UNIT_WORDS.get(str(of), of)} {what}" if of else what


@dataclass(frozen=True, kw_only=True)
class Each(Constraint):
    """Every ``unit`` passes ``test`` with ``arg``; with ``of``, the unit's count of that count unit does."""

    RULES = ("each",)
    unit: str | None = None
    test: str | None = None
    arg: Any = None
    of: str | None = None

    def _check(self) -> None:
        if self.of is not None and self.of not in COUNT_UNITS:
            raise ValueError(f"rule 'each': of must be a count unit, got {self.of!r}")

    def merge_key(self) -> str:
        return _composed_key("each", self.unit, self.test if self.test is not None else "", self.arg, self.of)

    def describe(self) -> str:
        what = _measured(self.of, str(self.test).replace("_", " "))
        arg = f" {self.arg}" if self.arg is not None else ""
        return f"every {self.unit}: {what}{arg}"


@dataclass(frozen=True, kw_only=True)
class Order(Constraint):
    """Consecutive ``unit`` keep the relation ``rel`` (with ``arg``); with ``of``, their counts do."""

    RULES = ("order",)
    unit: str | None = None
    rel: str | None = None
    arg: Any = None
    of: str | None = None

    def _check(self) -> None:
        if self.of is not None and self.of not in COUNT_UNITS:
            raise ValueError(f"rule 'order': of must be a count unit, got {self.of!r}")

    def merge_key(self) -> str:
        return _composed_key("order", self.unit, self.rel if self.rel is not None else "", self.arg, self.of)

    def describe(self) -> str:
        what = _measured(self.of, str(self.rel).replace("_", " "))
        arg = f" {self.arg}" if self.arg is not None else ""
        return f"consecutive {self.unit}s: {what}{arg}"


@dataclass(frozen=True, kw_only=True)
class Total(Constraint):
    """The ``agg`` (sum | first | last) of the numbers lies within ``min`` / ``max``."""

    RULES = ("total",)
    unit: str | None = None
    agg: str | None = None
    min: int | None = None
    max: int | None = None

    def merge_key(self) -> str:
        return _composed_key("total", self.unit, self.agg if self.agg is not None else "", None, None)

    def describe(self) -> str:
        return f"{self.agg} of the numbers {self._bounds()}"


@dataclass(frozen=True, kw_only=True)
class Spell(Constraint):
    """The first letters of the ``unit`` spell ``text``."""

    RULES = ("spell",)
    unit: str | None = None
    text: str | None = None

    def describe(self) -> str:
        return f"first letters of the {self.unit}s spell {self.text!r}"


@dataclass(frozen=True, kw_only=True)
class Table(Constraint):
    """A ``format`` (markdown | csv) table with ``columns`` (``types`` column → integer | number | string) and
    ``min`` / ``max`` rows."""

    RULES = ("table",)
    format: str | None = None
    columns: list[str] | None = None
    types: dict[str, str] | None = None
    min: int | None = None
    max: int | None = None

    def describe(self) -> str:
        cols = ", ".join(self.columns if self.columns is not None else [])
        return f"{self.format} table with columns {cols}, {self._bounds()} rows"


# -- positions ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class At(Constraint):
    """The ``index``-th ``unit`` (word | letter; 1-based, -1 the last) is ``text``."""

    RULES = ("at",)
    unit: str | None = None
    index: int | None = None
    text: str | None = None

    def _check(self) -> None:
        if (
            not isinstance(self.index, int)
            or isinstance(self.index, bool)
            or self.index == 0
            or self.unit not in ("word", "letter")
            or not str(self.text or "")
        ):
            raise ValueError(
                f"rule 'at' needs unit word|letter, a non-zero integer index and a text, got {self.to_dict()!r}"
            )

    def merge_key(self) -> str:
        return f"at|{self.unit}|{self.index}"

    def describe(self) -> str:
        return f"{_kth(int(self.index or 0), '')} {self.unit} is {self.text!r}"


@dataclass(frozen=True, kw_only=True)
class Nth(Constraint):
    """The ``index``-th ``unit`` (paragraph | sentence | line | item) starts or ends (``side``) with ``text``."""

    RULES = ("nth",)
    unit: str | None = None
    index: int | None = None
    side: str | None = None
    text: str | None = None
    separator: str | None = None

    def _check(self) -> None:
        if (
            not isinstance(self.index, int)
            or isinstance(self.index, bool)
            or self.index == 0
            or self.unit not in NTH_UNITS
            or (self.side or "start") not in ("start", "end")
            or not str(self.text or "").strip()
        ):
            raise ValueError(
                f"rule 'nth' needs unit {NTH_UNITS}, a non-zero index, side start|end and a text: {self.to_dict()!r}"
            )

    def merge_key(self) -> str:
        return f"nth|{self.unit}|{self.index}|{self.side or 'start'}"

    def describe(self) -> str:
        side = "ends" if self.side == "end" else "starts"
        return f"{_kth(int(self.index or 0))} {self.unit} {side} with {self.text!r}"


# -- forms of the whole answer ------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Wrap(Constraint):
    """The whole answer is ``open`` ... ``close``."""

    RULES = ("wrap",)
    open: str | None = None
    close: str | None = None

    def _check(self) -> None:
        if not (str(self.open or "").strip() and str(self.close or "").strip()):
            raise ValueError(f"rule 'wrap' needs an opening and a closing text, got {self.to_dict()!r}")

    def describe(self) -> str:
        return f"wrapped in {self.open}...{self.close}"


@dataclass(frozen=True, kw_only=True)
class Delimited(Constraint):
    """Pieces of ``unit`` (word | number | item) separated by ``text`` (``exact``: as written), ``min`` / ``max``
    pieces."""

    RULES = ("delimited",)
    text: str | None = None
    unit: str | None = None
    exact: bool | None = None
    min: int | None = None
    max: int | None = None

    def _check(self) -> None:
        if not str(self.text or ""):
            raise ValueError(f"rule 'delimited' needs a text, got {self.to_dict()!r}")

    def describe(self) -> str:
        counted = self.min is not None or self.max is not None
        return (
            f"{self.unit}s separated by {self.text!r}"
            + (" exactly" if self.exact else "")
            + (f" ({self._bounds()})" if counted else "")
        )


@dataclass(frozen=True, kw_only=True)
class JsonArray(Constraint):
    """A JSON array of ``min`` / ``max`` items, each of ``type``."""

    RULES = ("json_array",)
    type: str | None = None
    min: int | None = None
    max: int | None = None

    def describe(self) -> str:
        return f"JSON array of {self._bounds()} items" + (f" of type {self.type}" if self.type else "")


@dataclass(frozen=True, kw_only=True)
class Trailing(Constraint):
    """``min`` / ``max`` of ``what`` (hashtags) close the answer."""

    RULES = ("trailing",)
    what: str | None = None
    min: int | None = None
    max: int | None = None

    def describe(self) -> str:
        return f"ends with {self._bounds()} {self.what if self.what is not None else 'hashtags'}"


@dataclass(frozen=True, kw_only=True)
class Repeat(Constraint):
    """The answer opens with the request ``text``, word for word, and goes on."""

    RULES = ("repeat",)
    text: str | None = None

    def _check(self) -> None:
        if not str(self.text or ""):
            raise ValueError(f"rule 'repeat' needs a text, got {self.to_dict()!r}")

    def describe(self) -> str:
        return f"repeats the request {str(self.text)[:40]!r} first"


# -- a unit repeated ----------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Same(Constraint):
    """The ``index``-th ``unit`` is the ``as``-th, as written."""

    RULES = ("same",)
    unit: str | None = None
    index: int | None = None
    as_: int | None = None

    def _check(self) -> None:
        if not (self.unit in SCOPES and _nonzero_int(self.index) and _nonzero_int(self.as_)):
            raise ValueError(
                f"rule 'same' needs a unit {SCOPES} and two non-zero indexes, got {self.to_dict()!r}"
            )

    def merge_key(self) -> str:
        return f"same|{self.unit}|{self.index}|{self.as_}"

    def describe(self) -> str:
        return f"{self.unit} {self.index} is the same as {self.unit} {self.as_}"


# The core vocabulary's types; the families' are in rlar.constraints.families, the whole table in
# rlar.constraints.vocabulary (RULE_TYPES).
CORE_TYPES: tuple[type[Constraint], ...] = (
    Count,
    Paragraphs,
    Sections,
    WordList,
    Occurs,
    Letter,
    Case,
    Affix,
    Keys,
    Whole,
    Postscript,
    CodeBlock,
    OneOf,
    Only,
    Language,
    Each,
    Order,
    Total,
    Spell,
    Table,
    At,
    Nth,
    Wrap,
    Delimited,
    JsonArray,
    Trailing,
    Repeat,
    Same,
)
