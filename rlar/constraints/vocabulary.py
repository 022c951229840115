"""Checkable output constraints: the vocabulary, canonical form, and constraints a record declares.

A constraint is a rule and its parameters (:mod:`rlar.constraints.model`, one dataclass per kind of rule); its
dict form ``{"rule": name, ...params}`` is what verifiers, stored tool params and the readers carry. Counts are
inclusive bounds ``min`` / ``max``; what each rule means exactly is :mod:`rlar.constraints.checks`:

- counts (:class:`~rlar.constraints.model.Count`): ``words``, ``sentences``, ``paragraphs`` (optional
  ``separator`` line, ``distinct`` parts), ``lines``, ``bullets``, ``numbered``, ``chars``, ``letters``,
  ``capitals`` (uppercase letters), ``syllables``, ``numbers``, ``commas``, ``exclamations``, ``questions``,
  ``punctuation``, ``semicolons``, ``colons``, ``headings``, ``capital_words`` (words in all caps), ``highlights``
  (``*markdown*``), ``placeholders`` (``[name]``), ``sections`` (``marker`` + number, a ``suffix`` after it) and the
  marks ``emojis``, ``bold``, ``bold_words``, ``italics``, ``links``, ``distinct_words``, ``distinct_letters`` (26:
  a pangram), ``number_words`` (numbers spelled out), ``pronouns``, ``spaces``, ``code_lines``, ``parens`` /
  ``paren_depth`` (unbalanced: the check fails), ``checked`` / ``unchecked`` (task boxes), ``indent`` (leading
  spaces). With ``per`` = ``sentence`` | ``item`` | ``paragraph`` | ``line`` | ``word`` the bound holds for every
  such unit ("no bullet longer than ten words" is ``{"rule": "words", "per": "item", "max": 10}``), with ``index``
  the k-th unit only ("the first line has no leading spaces"); ``body``: a final postscript aside;
- words: ``include`` (every one appears), ``exclude`` (none appears), ``occurs`` (``text`` appears between ``min``
  and ``max`` times), ``letter`` (how often a letter, or any of several — ``aeiou`` for vowels — appears);
- case: ``lowercase``, ``uppercase``, ``title_case``;
- starts and ends: ``starts_with``, ``not_starts_with``, ``ends_with``, ``not_ends_with`` (``text``, optional
  ``per``);
- structure: ``json`` (the whole answer is JSON), ``json_keys`` (``keys``, optional ``types`` key → string |
  integer | number | boolean | list | list_of_strings | list_of_numbers | object | null, optional ``exact``: no
  other keys), ``yaml_keys`` (the same for a YAML mapping), ``quoted``, ``title`` (``<<title>>``), ``postscript``
  (``text``: the marker as written; none: any postscript mark), ``code_block`` (with ``lang``: one fenced block,
  its tag as written), ``one_of`` (``options``: the whole answer is one of them), ``only`` (``what``: number |
  integer | letters | capitals | lowercase_letters | digits | word | numbers or an identifier style: the whole
  answer is only that), ``language`` (``lang``: en, de, fr, es, it, pt, nl by vocabulary; ru, el, ar, he, hi, ja,
  ko, zh, th by script);
- composed rules over units (``unit`` = word | line | sentence | item | number | answer | paragraph | emoji | link
  | url | link_text | bold | time | price | code): ``each`` (every unit passes ``test`` with ``arg``; with ``of``, a
  count unit measured per unit: ``{"rule": "each", "unit": "sentence", "test": "prime", "of": "words"}``),
  ``order`` (consecutive units keep ``rel`` with ``arg``; ``distinct``: no unit repeated at all), ``total`` (``agg``
  = sum | first | last of the numbers within ``min`` / ``max``), ``spell`` (the units' first letters spell
  ``text``), ``table`` (``format`` markdown | csv, ``columns``, optional ``types`` column → integer | number |
  string, rows within ``min`` / ``max``);
- positions: ``at`` (the ``index``-th ``unit`` — word | letter, 1-based, -1 the last — is ``text``), ``nth`` (the
  ``index``-th ``unit`` — paragraph | sentence | line | item — starts or ends, ``side``, with ``text``);
- forms of the whole answer: ``wrap`` (``open`` ... ``close``), ``delimited`` (pieces of ``unit`` word | number |
  item separated by ``text``, ``min`` / ``max`` pieces; ``exact``: the separator as written), ``json_array``
  (``type`` of every item, ``min`` / ``max`` items), ``trailing`` (``what`` = hashtags closing the answer,
  counted), ``repeat`` (the answer opens with ``text``);
- layouts of the whole answer: ``same`` (the ``index``-th ``unit`` is the ``as``-th), ``outline`` (a nested list:
  ``marker``, ``sub_marker``, ``indent``, top items ``min`` / ``max``, ``sub_min`` / ``sub_max`` under each),
  ``figure`` (``shape`` right | inverted | pyramid of ``char``, rows ``min`` / ``max``), ``html_list`` (``tag`` ul
  | ol, items ``min`` / ``max``), ``pairs`` (lines ``first`` / ``second``, ``{n}`` numbered, ``first_end``),
  ``task_list``.

The chat records' ``metadata["format_rules"]`` vocabulary (``rlar.tasks.FORMAT_RULES``) is a subset; its two
spellings outside this vocabulary are rewritten: ``item_words`` → ``words`` per ``item``, ``no_commas`` →
``commas`` at most 0.

``canonical`` merges constraints of the same rule and scope (tightest bounds; word lists united) and orders them,
so equal sets compare equal (a synthesised tool's constraints are matched against a task's); ``describe`` says one
in words.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from rlar.constraints.checks import COUNT_UNITS
from rlar.constraints.families import FAMILIES
from rlar.constraints.families.figure import FIGURES
from rlar.constraints.model import CORE_TYPES, NTH_UNITS, ONLY_KINDS, SCOPES, Constraint

__all__ = [
    "COMPOSED_RULES",
    "COUNT_RULES",
    "FIGURES",
    "LAYOUT_RULES",
    "NTH_UNITS",
    "ONLY_KINDS",
    "POSITION_RULES",
    "RULES",
    "RULE_TYPES",
    "SCOPES",
    "canonical",
    "constraints_key",
    "describe",
    "from_metadata",
    "merge_constraints",
    "parse",
    "valid_only",
]

COUNT_RULES = COUNT_UNITS  # the count units of the checks every verifier embeds: one list
JSON_TYPES = (
    "string",
    "integer",
    "number",
    "boolean",
    "list",
    "list_of_strings",
    "list_of_numbers",
    "object",
    "null",
)
COMPOSED_RULES = ("each", "order", "total", "spell", "table", "yaml_keys", "delimited")
LAYOUT_RULES = ("same", "outline", "figure", "html_list", "pairs", "task_list", "not_ends_with")
POSITION_RULES = ("at", "nth")
LANGS = ("en", "de", "fr", "es", "it", "pt", "nl", "ru", "el", "ar", "he", "hi", "ja", "ko", "zh", "th")

# rule -> its type: the core vocabulary's (rlar.constraints.model) and the families' (rlar.constraints.families)
RULE_TYPES: dict[str, type[Constraint]] = {
    rule: kind for kind in (*CORE_TYPES, *(t for f in FAMILIES for t in f.types)) for rule in kind.RULES
}
# rule -> the parameters it takes (``rule`` aside): the fields of its type
RULES: dict[str, frozenset[str]] = {rule: kind.params() for rule, kind in RULE_TYPES.items()}
# Spellings of the chat records' format_rules vocabulary, rewritten into this one.
_LEGACY: dict[str, tuple[str, dict[str, Any]]] = {
    "item_words": ("words", {"per": "item"}),
    "no_commas": ("commas", {"max": 0}),
}
_LIST_PARAMS = ("words", "keys", "options", "columns")


def parse(c: Mapping[str, Any]) -> Constraint:
    """The typed constraint of a dict form; ``ValueError`` for an unknown rule or parameter or a bad value."""
    rule = str(c["rule"])
    kind = RULE_TYPES.get(rule)
    if kind is None:
        raise ValueError(f"unknown constraint rule {rule!r}")
    extra = set(c) - {"rule"} - kind.params()
    if extra:
        raise ValueError(f"rule {rule!r} has unknown parameters {sorted(extra)}")
    return kind.from_params(rule, {k: v for k, v in c.items() if k != "rule"})


def _legacy(c: Mapping[str, Any]) -> dict[str, Any]:
    rule = str(c.get("rule"))
    if rule not in _LEGACY:
        return dict(c)
    new, extra = _LEGACY[rule]
    return {**{k: v for k, v in c.items() if k != "rule"}, "rule": new, **extra}


def _merge(cur: dict[str, Any], c: Mapping[str, Any]) -> None:
    """Merge the parameters of ``c`` into ``cur`` (same rule and scope): tightest bounds, lists united."""
    for key, value in c.items():
        if key == "rule":
            continue
        if key == "min":
            cur["min"] = max(int(value), int(cur.get("min", value)))
        elif key == "max":
            cur["max"] = min(int(value), int(cur.get("max", value)))
        elif key in _LIST_PARAMS:
            seen = list(cur.get(key, []))
            seen += [str(v) for v in value if str(v) not in seen]
            cur[key] = seen
        elif key == "types":
            cur["types"] = {**cur.get("types", {}), **{str(k): str(v) for k, v in dict(value).items()}}
        else:
            cur[key] = value


def canonical(constraints: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Validate, rewrite legacy spellings, merge constraints of the same rule and scope (tightest bounds win,
    lists are united), and sort. Raises ``ValueError`` for an unknown rule or parameter."""
    merged: dict[str, dict[str, Any]] = {}
    for raw in constraints:
        c = _legacy(raw)
        key = parse(c).merge_key()
        _merge(merged.setdefault(key, {"rule": c["rule"]}), c)
    return [merged[k] for k in sorted(merged)]


def valid_only(constraints: Iterable[Any]) -> list[dict[str, Any]]:
    """The constraints of the vocabulary among ``constraints`` (others, e.g. written by a model, are dropped),
    canonical."""
    kept = []
    for c in constraints:
        if isinstance(c, Mapping):
            try:
                kept += canonical([c])
            except (ValueError, KeyError, TypeError):
                continue
    return canonical(kept)


def merge_constraints(*groups: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return canonical([dict(c) for g in groups for c in g])


def constraints_key(constraints: Iterable[Mapping[str, Any]]) -> str:
    """A stable string for a constraint set (equal sets give equal keys)."""
    return json.dumps(canonical(constraints), sort_keys=True, separators=(",", ":"))


def from_metadata(metadata: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Constraints a record declares in ``metadata["format_rules"]`` (rules or parameters outside the
    vocabulary are dropped: the ``format_rules`` tool, not a synthesised verifier, owns those)."""
    rules = (metadata or {}).get("format_rules")
    if not isinstance(rules, list):
        return []
    out = []
    for r in rules:
        if not isinstance(r, Mapping):
            continue
        c = _legacy(r)
        if c.get("rule") in RULES:
            c = {k: v for k, v in c.items() if k == "rule" or k in RULES[str(c["rule"])]}
            try:
                parse(c)
            except ValueError:
                continue
            out.append(c)
    return canonical(out)


def describe(c: Mapping[str, Any]) -> str:
    """One constraint in words, e.g. ``each item: at most 10 words``."""
    return parse(c).describe()
