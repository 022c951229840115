"""Checkable output constraints: the vocabulary, canonical form, and reading them from text or record metadata.

A constraint is a dict ``{"rule": name, ...params}``. Rules (parameters in ``RULES``; counts are inclusive
bounds ``min`` / ``max``; what each rule means exactly is :mod:`rlar.constraints.checks`):

- counts: ``words``, ``sentences``, ``paragraphs`` (optional ``separator`` line), ``lines``, ``bullets``,
  ``numbered``, ``chars``, ``letters``, ``capitals`` (uppercase letters), ``syllables``, ``numbers``,
  ``commas``, ``exclamations``, ``questions``, ``punctuation``, ``capital_words`` (words in all caps),
  ``highlights`` (``*markdown*``), ``placeholders`` (``[name]``), ``sections`` (``marker`` + number). With
  ``per`` = ``sentence`` | ``item`` | ``paragraph`` | ``line`` | ``word`` the bound holds for every such unit
  ("no bullet longer than ten words" is ``{"rule": "words", "per": "item", "max": 10}``);
- words: ``include`` (every one appears), ``exclude`` (none appears), ``occurs`` (``text`` appears between
  ``min`` and ``max`` times), ``letter`` (how often a letter, or any of several — ``aeiou`` for vowels —
  appears);
- case: ``lowercase``, ``uppercase``, ``title_case``;
- position: ``starts_with``, ``not_starts_with``, ``ends_with`` (``text``, optional ``per``);
- structure: ``json`` (the whole answer is JSON), ``json_keys`` (``keys``, optional ``types`` key → string |
  integer | number | boolean | list | list_of_strings | list_of_numbers | object | null, optional ``exact``: no
  other keys), ``quoted``, ``title`` (``<<title>>``), ``postscript`` (``text``: the marker as written; none: any
  postscript mark),
  ``code_block``, ``one_of`` (``options``: the whole answer is one of them), ``only`` (``what``: number |
  integer | letters | capitals | lowercase_letters | digits | word: the whole answer is only that);
- ``language`` (``lang``: en, de, fr, es, it, pt, nl by vocabulary; ru, el, ar, he, hi, ja, ko, zh, th by
  script);
- composition (issue 25; ``unit`` = word | line | sentence | item | number | answer): ``each`` (every unit
  passes ``test`` with ``arg``: lowercase, uppercase, capitalized, starts_with, ends_with, ends_punct,
  palindrome, prime, even, odd, divisible, digit_sum, date, hex_colour, width, letters, contains (a
  letter), starts_upper (first letter a capital), square (a perfect square)), ``order``
  (consecutive units keep ``rel``: increasing, decreasing, alphabetical, chronological, step (``arg`` the
  difference), alternating_case, word_growth (``arg`` words more per unit), one_letter, word_counts (``arg``
  the list of words per unit), chain (each unit starts with the last letter of the one before), distinct (no
  unit repeated: over all units, not only consecutive ones)), ``total`` (``agg`` = sum | first | last of
  the numbers within ``min`` / ``max``), ``spell`` (the units' first letters spell ``text``), ``table``
  (``format`` markdown | csv, ``columns``, optional ``types`` column → integer | number | string, rows
  within ``min`` / ``max``) and ``yaml_keys`` (as ``json_keys``, for a YAML mapping);
- position (issue 25, third round): ``at`` (the ``index``-th ``unit`` — word | letter, 1-based, -1 the last —
  is ``text``, case and surrounding punctuation aside);
- forms (issue 25, sixth round): ``nth`` (the ``index``-th ``unit`` — paragraph | sentence | line | item —
  starts or ends, ``side``, with ``text``; optional ``separator`` of the paragraphs), ``wrap`` (the whole answer
  is ``open`` ... ``close``), ``delimited`` (pieces of ``unit`` word | number | item separated by ``text``,
  ``min`` / ``max`` pieces), ``json_array`` (``type`` of every item, ``min`` / ``max`` items), ``trailing``
  (``what`` = hashtags closing the answer, counted), ``repeat`` (the answer opens with ``text``); count rules
  take ``body`` (a final postscript aside) and ``separator``, ``paragraphs`` takes ``distinct``, ``sections``
  a ``suffix``; the ``each`` tests ``starts_in`` / ``ends_in`` (a letter of ``arg``), ``double_letter``,
  ``integer``, ``range`` (``arg`` [lo, hi]) and the ``order`` relations ``ratio`` (``arg`` the factor),
  ``distinct_initials`` and ``longer`` (each word more letters than the one before);
- seventh round (``rlar.constraints.checks.marks`` / ``checks_layout``): count units ``emojis``, ``bold``,
  ``bold_words``, ``italics``, ``links``, ``distinct_words``, ``distinct_letters`` (26: a pangram),
  ``number_words`` (numbers spelled out), ``pronouns``, ``spaces``, ``code_lines``, ``parens`` / ``paren_depth``
  (unbalanced: the check fails), ``checked`` / ``unchecked`` (task boxes), ``indent`` (leading spaces); a count
  with ``per`` takes ``index`` (the k-th unit only: "the first line has no leading spaces"); ``each`` and
  ``order`` take ``of`` (a count unit measured per unit: ``{"rule": "each", "unit": "sentence", "test": "prime",
  "of": "words"}``; ``order`` relations increasing, decreasing, step, equal over the measure); units
  ``paragraph``, ``emoji``, ``link``, ``url``, ``link_text``, ``bold``, ``time``, ``price``, ``code``; tests
  ``time24``, ``binary``, ``no_adjacent_repeat``, ``is_link``, ``starts_with_kind`` / ``ends_with_kind`` (``arg``
  emoji | time | number | link), ``equals``, ``price`` (``arg`` a template, ``#`` the amount), ``snake_case``,
  ``screaming_snake``, ``camel_case``, ``pascal_case``, ``kebab_case``, ``title``, ``consonant_cluster``,
  ``bookended``; relations ``same_first``, ``last_first``, ``reversed``, ``sum_prev2``, ``initials_differ``,
  ``alphabet_next``; rules ``same`` (the ``index``-th ``unit`` is the ``as``-th), ``outline`` (a nested list:
  ``marker``, ``sub_marker``, ``indent``, top items ``min`` / ``max``, ``sub_min`` / ``sub_max`` under each),
  ``figure`` (``shape`` right | inverted | pyramid of ``char``, rows ``min`` / ``max``), ``html_list`` (``tag``
  ul | ol, items ``min`` / ``max``), ``pairs`` (lines ``first`` / ``second``, ``{n}`` numbered, ``first_end``),
  ``task_list``, ``not_ends_with``, ``code_block`` with ``lang`` (one fenced block, its tag as written),
  ``delimited`` with ``exact`` (the separator as written, nothing around it, no final mark) and ``only``
  identifier styles.

The chat records' ``metadata["format_rules"]`` vocabulary (``rlar.tasks.FORMAT_RULES``) is a subset; its two
spellings outside this vocabulary are rewritten: ``item_words`` → ``words`` per ``item``, ``no_commas`` →
``commas`` at most 0.

``extract_constraints(text)`` is :func:`rlar.tasks.reading.read_instruction` (which also says which clauses of
the text it could not turn into constraints) reduced to the constraints. ``canonical`` merges constraints of
the same rule and scope (tightest bounds; word lists united) and orders them, so equal sets compare equal (a
synthesised tool's constraints are matched against a task's); ``describe`` says one in words.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from rlar.constraints.checks import COUNT_UNITS

__all__ = [
    "COMPOSED_RULES",
    "COUNT_RULES",
    "POSITION_RULES",
    "RULES",
    "SCOPES",
    "canonical",
    "constraints_key",
    "describe",
    "extract_constraints",
    "from_metadata",
    "merge_constraints",
    "valid_only",
]

COUNT_RULES = COUNT_UNITS  # the count units of the checks every verifier embeds: one list
SCOPES = ("sentence", "item", "paragraph", "line", "word")
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
COMPOSED_RULES = ("each", "order", "total", "spell", "table", "yaml_keys", "delimited")
LAYOUT_RULES = ("same", "outline", "figure", "html_list", "pairs", "task_list", "not_ends_with")
POSITION_RULES = ("at", "nth")
NTH_UNITS = ("paragraph", "sentence", "line", "item")
LANGS = ("en", "de", "fr", "es", "it", "pt", "nl", "ru", "el", "ar", "he", "hi", "ja", "ko", "zh", "th")

_BOUNDS = frozenset({"min", "max"})
RULES: dict[str, frozenset[str]] = {
    **{u: _BOUNDS | {"per", "separator", "body", "index"} for u in COUNT_RULES},
    "paragraphs": _BOUNDS | {"per", "separator", "distinct", "body"},
    "sections": _BOUNDS | {"per", "marker", "suffix", "body"},
    "include": frozenset({"words"}),
    "exclude": frozenset({"words"}),
    "occurs": _BOUNDS | {"text"},
    "letter": _BOUNDS | {"letter"},
    "lowercase": frozenset(),
    "uppercase": frozenset(),
    "title_case": frozenset(),
    "starts_with": frozenset({"text", "per"}),
    "not_starts_with": frozenset({"text", "per"}),
    "ends_with": frozenset({"text", "per"}),
    "json": frozenset(),
    "json_keys": frozenset({"keys", "types", "exact"}),
    "quoted": frozenset(),
    "title": frozenset(),
    "postscript": frozenset({"text"}),
    "code_block": frozenset({"lang"}),
    "one_of": frozenset({"options"}),
    "only": frozenset({"what"}),
    "language": frozenset({"lang"}),
    "each": frozenset({"unit", "test", "arg", "of"}),
    "order": frozenset({"unit", "rel", "arg", "of"}),
    "total": _BOUNDS | {"unit", "agg"},
    "spell": frozenset({"unit", "text"}),
    "table": _BOUNDS | {"format", "columns", "types"},
    "yaml_keys": frozenset({"keys", "types", "exact"}),
    "at": frozenset({"unit", "index", "text"}),
    "nth": frozenset({"unit", "index", "side", "text", "separator"}),
    "wrap": frozenset({"open", "close"}),
    "delimited": _BOUNDS | {"text", "unit", "exact"},
    "json_array": _BOUNDS | {"type"},
    "trailing": _BOUNDS | {"what"},
    "repeat": frozenset({"text"}),
    "same": frozenset({"unit", "index", "as"}),
    "outline": _BOUNDS | {"marker", "sub_marker", "indent", "sub_min", "sub_max"},
    "figure": _BOUNDS | {"shape", "char"},
    "html_list": _BOUNDS | {"tag"},
    "pairs": _BOUNDS | {"first", "second", "first_end"},
    "task_list": frozenset(),
    "not_ends_with": frozenset({"text", "per"}),
}
# Spellings of the chat records' format_rules vocabulary, rewritten into this one.
_LEGACY: dict[str, tuple[str, dict[str, Any]]] = {
    "item_words": ("words", {"per": "item"}),
    "no_commas": ("commas", {"max": 0}),
}
_LIST_PARAMS = ("words", "keys", "options", "columns")


def _merge_key(c: Mapping[str, Any]) -> str:
    """Constraints with equal keys are one constraint (bounds and lists merge)."""
    rule = str(c["rule"])
    if rule in ("occurs", "not_starts_with", "not_ends_with"):
        return f"{rule}|{c.get('per', '')}|{str(c.get('text', '')).lower()}"
    if rule == "same":
        return f"same|{c.get('unit', '')}|{c.get('index', '')}|{c.get('as', '')}"
    if rule == "letter":
        return f"letter|{str(c.get('letter', '')).lower()}"
    if rule == "at":
        return f"at|{c.get('unit', '')}|{c.get('index', '')}"
    if rule == "nth":
        return f"nth|{c.get('unit', '')}|{c.get('index', '')}|{c.get('side', 'start')}"
    if rule in ("each", "order", "total"):
        what = c.get("test", c.get("rel", c.get("agg", "")))
        of = f"|{c['of']}" if c.get("of") else ""
        return f"{rule}|{c.get('unit', '')}|{what}|{json.dumps(c.get('arg'), sort_keys=True)}{of}"
    if c.get("index") is not None:
        return f"{rule}|{c.get('per', '')}|{c['index']}"
    return f"{rule}|{c.get('per', '')}"


def _legacy(c: Mapping[str, Any]) -> dict[str, Any]:
    rule = str(c.get("rule"))
    if rule not in _LEGACY:
        return dict(c)
    new, extra = _LEGACY[rule]
    return {**{k: v for k, v in c.items() if k != "rule"}, "rule": new, **extra}


def _validate(c: Mapping[str, Any]) -> None:
    rule = str(c["rule"])
    if rule not in RULES:
        raise ValueError(f"unknown constraint rule {rule!r}")
    extra = set(c) - {"rule"} - RULES[rule]
    if extra:
        raise ValueError(f"rule {rule!r} has unknown parameters {sorted(extra)}")
    per = c.get("per")
    if per is not None and per not in SCOPES:
        raise ValueError(f"rule {rule!r}: per must be one of {SCOPES}, got {per!r}")
    if rule == "at" and (
        not isinstance(c.get("index"), int)
        or isinstance(c.get("index"), bool)
        or c.get("index") == 0
        or c.get("unit") not in ("word", "letter")
        or not str(c.get("text") or "")
    ):
        raise ValueError(
            f"rule 'at' needs unit word|letter, a non-zero integer index and a text, got {dict(c)!r}"
        )
    if rule == "nth" and (
        not isinstance(c.get("index"), int)
        or isinstance(c.get("index"), bool)
        or c.get("index") == 0
        or c.get("unit") not in NTH_UNITS
        or c.get("side", "start") not in ("start", "end")
        or not str(c.get("text") or "").strip()
    ):
        raise ValueError(
            f"rule 'nth' needs unit {NTH_UNITS}, a non-zero index, side start|end and a text: {dict(c)!r}"
        )
    if rule == "wrap" and not (str(c.get("open") or "").strip() and str(c.get("close") or "").strip()):
        raise ValueError(f"rule 'wrap' needs an opening and a closing text, got {dict(c)!r}")
    if rule in ("delimited", "repeat") and not str(c.get("text") or ""):
        raise ValueError(f"rule {rule!r} needs a text, got {dict(c)!r}")
    if c.get("index") is not None and rule in COUNT_RULES and (not per or not _nonzero_int(c["index"])):
        raise ValueError(f"rule {rule!r}: index needs a per scope and a non-zero integer, got {dict(c)!r}")
    if rule == "same" and not (
        c.get("unit") in SCOPES and _nonzero_int(c.get("index")) and _nonzero_int(c.get("as"))
    ):
        raise ValueError(f"rule 'same' needs a unit {SCOPES} and two non-zero indexes, got {dict(c)!r}")
    if rule == "figure" and (c.get("shape") not in FIGURES or len(str(c.get("char") or "")) != 1):
        raise ValueError(f"rule 'figure' needs a shape {FIGURES} and one character, got {dict(c)!r}")
    if rule == "html_list" and c.get("tag") not in ("ul", "ol"):
        raise ValueError(f"rule 'html_list' needs a tag ul|ol, got {dict(c)!r}")
    if rule == "pairs" and not (str(c.get("first") or "").strip() and str(c.get("second") or "").strip()):
        raise ValueError(f"rule 'pairs' needs a first and a second marker, got {dict(c)!r}")
    if rule == "not_ends_with" and not str(c.get("text") or ""):
        raise ValueError(f"rule 'not_ends_with' needs a text, got {dict(c)!r}")
    if rule in ("each", "order") and c.get("of") is not None and c["of"] not in COUNT_RULES:
        raise ValueError(f"rule {rule!r}: of must be a count unit, got {c['of']!r}")
    if rule == "only" and c.get("what") not in ONLY_KINDS:
        raise ValueError(f"rule 'only': what must be one of {ONLY_KINDS}, got {c.get('what')!r}")
    for key in ("min", "max", "sub_min", "sub_max", "indent"):
        if key in c and (not isinstance(c[key], int) or isinstance(c[key], bool) or c[key] < 0):
            raise ValueError(f"rule {rule!r}: {key} must be a non-negative integer, got {c[key]!r}")


FIGURES = ("right", "inverted", "pyramid")


def _nonzero_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v != 0


def canonical(constraints: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Validate, rewrite legacy spellings, merge constraints of the same rule and scope (tightest bounds win,
    lists are united), and sort. Raises ``ValueError`` for an unknown rule or parameter."""
    merged: dict[str, dict[str, Any]] = {}
    for raw in constraints:
        c = _legacy(raw)
        _validate(c)
        cur = merged.setdefault(_merge_key(c), {"rule": c["rule"]})
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
                _validate(c)
            except ValueError:
                continue
            out.append(c)
    return canonical(out)


_UNIT_NAMES = {  # how describe() names a count unit where its rule name is not the English word
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
_UNIT_WORDS = {u: _UNIT_NAMES.get(u, u) for u in COUNT_RULES}


def _bounds_text(c: Mapping[str, Any]) -> str:
    lo, hi = c.get("min"), c.get("max")
    if lo is not None and hi is not None:
        return f"exactly {lo}" if lo == hi else f"{lo} to {hi}"
    if lo is not None:
        return f"at least {lo}"
    return f"at most {hi}" if hi else "no"


def describe(c: Mapping[str, Any]) -> str:
    """One constraint in words, e.g. ``each item: at most 10 words``."""
    rule = str(c["rule"])
    per = f"each {c['per']}: " if c.get("per") else ""
    if c.get("per") and c.get("index") is not None:
        k = int(c["index"])
        per = f"{'the last' if k == -1 else f'the {k}th'} {c['per']}: "
    if rule == "sections" and (c.get("marker") or c.get("suffix")):
        return f"{_bounds_text(c)} sections marked {c.get('marker') or 'Section'} N{c.get('suffix') or ''}"
    if rule in _UNIT_WORDS:
        return f"{per}{_bounds_text(c)} {_UNIT_WORDS[rule]}"
    if rule in ("include", "exclude"):
        return f"{'uses' if rule == 'include' else 'never uses'} {', '.join(repr(w) for w in c['words'])}"
    if rule == "occurs":
        return f"{c['text']!r} {_bounds_text(c)} times"
    if rule == "letter":
        what = "vowels" if str(c["letter"]) == "aeiou" else f"letter {c['letter']!r}"
        return f"{what} {_bounds_text(c)} times"
    if rule in ("starts_with", "not_starts_with", "ends_with", "not_ends_with"):
        verb = {
            "starts_with": "starts with",
            "not_starts_with": "does not start with",
            "ends_with": "ends with",
            "not_ends_with": "does not end with",
        }
        return f"{per}{verb[rule]} {c['text']!r}"
    if rule == "json_keys":
        keys = ", ".join(f"{k} ({(c.get('types') or {}).get(k, 'any')})" for k in c["keys"])
        return f"JSON object with keys {keys}" + (" and no others" if c.get("exact") else "")
    if rule == "one_of":
        return "exactly one of " + " | ".join(repr(o) for o in c["options"])
    if rule == "only":
        return f"nothing but {c['what'].replace('_', ' ')}"
    if rule == "language":
        return f"written in language {c['lang']}"
    if rule == "postscript":
        return (
            f"ends with a postscript {c['text']}"
            if c.get("text")
            else "ends with a postscript (P.S., PS, Postscript)"
        )
    if rule in ("each", "order"):
        what = str(c.get("test") or c.get("rel")).replace("_", " ")
        arg = f" {c['arg']}" if c.get("arg") is not None else ""
        if c.get("of"):
            what = f"its {_UNIT_WORDS.get(str(c['of']), c['of'])} {what}"
        return (
            f"{'every' if rule == 'each' else 'consecutive'} {c.get('unit')}{'' if rule == 'each' else 's'}"
            f": {what}{arg}"
        )
    if rule == "at":
        k = int(c.get("index", 0))
        return f"{'the last' if k == -1 else f'{k}th'} {c.get('unit')} is {c.get('text')!r}"
    if rule == "nth":
        k = int(c.get("index", 0))
        side = "ends" if c.get("side") == "end" else "starts"
        return f"{'the last' if k == -1 else f'the {k}th'} {c.get('unit')} {side} with {c.get('text')!r}"
    if rule == "wrap":
        return f"wrapped in {c.get('open')}...{c.get('close')}"
    if rule == "delimited":
        return (
            f"{c.get('unit')}s separated by {c.get('text')!r}"
            + (" exactly" if c.get("exact") else "")
            + (f" ({_bounds_text(c)})" if "min" in c or "max" in c else "")
        )
    if rule == "json_array":
        return f"JSON array of {_bounds_text(c)} items" + (f" of type {c['type']}" if c.get("type") else "")
    if rule == "trailing":
        return f"ends with {_bounds_text(c)} {c.get('what', 'hashtags')}"
    if rule == "repeat":
        return f"repeats the request {str(c.get('text'))[:40]!r} first"
    if rule == "total":
        return f"{c.get('agg')} of the numbers {_bounds_text(c)}"
    if rule == "spell":
        return f"first letters of the {c.get('unit')}s spell {c.get('text')!r}"
    if rule == "table":
        return (
            f"{c.get('format')} table with columns {', '.join(c.get('columns', []))}, {_bounds_text(c)} rows"
        )
    if rule == "yaml_keys":
        keys = ", ".join(f"{k} ({(c.get('types') or {}).get(k, 'any')})" for k in c["keys"])
        return f"YAML mapping with keys {keys}" + (" and no others" if c.get("exact") else "")
    return _describe_layout(c)


def _describe_layout(c: Mapping[str, Any]) -> str:
    rule = str(c["rule"])
    if rule == "same":
        return f"{c.get('unit')} {c.get('index')} is the same as {c.get('unit')} {c.get('as')}"
    if rule == "outline":
        sub = {k[4:]: c[k] for k in ("sub_min", "sub_max") if c.get(k) is not None}
        subs = _bounds_text(sub) if sub else "any number of"
        return (
            f"a nested list of {_bounds_text(c)} {c.get('marker', '-')!r} items, each with {subs} sub-items"
        )
    if rule == "figure":
        return f"a {c.get('shape')} triangle of {c.get('char')!r}, {_bounds_text(c)} rows"
    if rule == "html_list":
        return f"an HTML <{c.get('tag')}> list of {_bounds_text(c)} <li> items and nothing else"
    if rule == "pairs":
        return f"{_bounds_text(c)} line pairs {c.get('first')!r} / {c.get('second')!r}"
    if rule == "task_list":
        return "every line a Markdown task item ('- [ ] ' or '- [x] ')"
    if rule == "code_block" and c.get("lang"):
        return f"one fenced code block tagged {c['lang']!r} and nothing else"
    return rule.replace("_", " ")


def extract_constraints(text: str) -> list[dict[str, Any]]:
    """The constraints :func:`rlar.tasks.reading.read_instruction` reads from ``text`` (canonical order)."""
    from rlar.tasks.reading import read_instruction

    return read_instruction(text).constraints
