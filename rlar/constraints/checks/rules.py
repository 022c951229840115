"""What each constraint rule means, as standard-library Python: the source every composed verifier embeds.

This module is the one definition of the constraint vocabulary's semantics (:mod:`rlar.constraints.vocabulary` lists
the rules and their parameters). It imports only the standard library and defines only functions and
constants, so :func:`rlar.synthesis.blocks.render_module` copies its source verbatim into the verifier that runs
in the sandbox, and the host uses the same functions to label probes built from a reading and to check the
reader against hand-labelled answers. ``check(c, text)`` returns a score in [0, 1] that is 1.0 exactly when
the constraint holds (``holds``); rules over many units (``per`` a scope, ``include``) give the fraction that
holds, and a whole-answer count outside its bounds gives at most 0.5, less the further it is (``near``), so
a policy gets partial credit.

Units: words are whitespace tokens holding a letter or digit; sentences end at ``.``, ``!`` or ``?`` followed by
white space, or at a line end; paragraphs are separated by blank lines (or by a given separator line); lines
are non-empty lines; bullets start with ``-``, ``*`` or ``•`` and a space; numbered items with ``1.`` or
``1)``; items are bullets, else numbered items, else lines. Syllables are counted with a vowel-group
heuristic for English (silent final ``e`` dropped, ``-le`` kept): good to about one syllable per line, not a
dictionary. Composed rules (``each``, ``order``, ``total``, ``spell``) work on units (``unit``) —
``word`` / ``line`` / ``sentence`` / ``item`` as above, ``number`` (integers written in digits, a sign kept), and
``answer`` (the whole response); ``each`` and ``order`` give the fraction of units (of consecutive pairs) that
hold. Tables are a Markdown pipe table (header, ``---`` separator, rows) or CSV (comma-separated lines, the
first the header); YAML is the subset of a flat mapping (``key: value``, a list as ``- item`` lines under the
key or ``[a, b]``; ``true``/``false`` are booleans, digits an integer). Languages are told apart by frequent
function words and letters (Latin-script languages listed in ``LANGUAGES``) or by script (the others); texts
under three words are not judged (the rule fails).

Forms of the whole answer: markup tags ("<answer>") are not words; ``wrap`` (the whole answer is one element, tags as
written), ``nth`` (the k-th paragraph / sentence / line / item starts or ends with a text), ``delimited`` (the
answer is a list of one-word / one-number / one-line pieces split by a given mark and nothing else),
``json_array`` (typed items, counted), ``trailing`` (hashtags that close the answer), ``repeat`` (the request
first, then more), ``paragraphs`` with ``distinct`` parts and a ``separator`` line held exactly ("*****" is not
"******"), sections with a ``suffix`` after the number ("Part 1:") and a marker in Markdown ("## Section"),
counts of ``semicolons``, ``colons`` and Markdown ``headings``, ``body`` counts (a final postscript aside),
per-unit tests ``starts_in`` / ``ends_in`` (a letter class), ``double_letter``, ``integer``, ``range``, and the
relations ``ratio`` and ``distinct_initials``; a number unit may be a decimal ("201.5" is not a whole number)
and "3,6,12" is three numbers.

What an instruction quotes is checked as written: a postscript marker exactly ("PS:" is
not "P.S.") on a line after the body, with no paragraph after it; a section marker that was given in its case,
and sections, like numbered items, numbered 1..N in order; a start, an end or an option quoted in capitals
("NOTE:", "YES") in its case (a word in lower or sentence case matches in any case, a ban in any case).
"""

import re
import unicodedata

from rlar.constraints.checks.language import LANGUAGES, detect_language
from rlar.constraints.checks.layout import (
    code_fence_ok,
    count_ok,
    indexed_count_ok,
    layout_check,
    layout_order,
    layout_test,
    layout_units,
    layout_value,
    range_bound,
)
from rlar.constraints.checks.numbers import MEASURED_TESTS, measure_ok, number_test
from rlar.constraints.checks.structured import (
    delimited_score,
    json_array_score,
    keys_score,
    load_json,
    load_yaml,
    table_score,
    wrap_ok,
)
from rlar.constraints.checks.units import (
    COUNT_UNITS,
    NUMBERED_NUM_RX,
    TITLE_RX,
    count,
    near,
    numbered_in_order,
    paragraphs,
    section_numbers,
    syllables,
    units,
    within,
    words,
)
from rlar.constraints.families import FAMILY_CHECKS

# Names the rest of the library reads from here (the embedded source defines them all in one namespace).
__all__ = [
    "COUNT_UNITS",
    "LANGUAGES",
    "MEASURED_TESTS",
    "check",
    "detect_language",
    "holds",
    "measure_ok",
    "syllables",
    "unit_test",
]


def literal_case(quote):
    """Whether a quoted literal's case is part of what was asked: it holds two or more letters, all capitals
    ("SECTION", "P.S.", "ANSWER:"). A word in lower or sentence case ("hello", "Dear") is matched in any case."""
    letters = [ch for ch in str(quote) if ch.isalpha()]
    return len(letters) >= 2 and all(ch.isupper() for ch in letters)


POSTSCRIPT_ANY = r"(?:p\.\s?s\b\.?|ps\b:?|post-?script\b:?)"


def postscript_ok(text, marker=None):
    """Whether ``text`` ends with a postscript: a line starting with ``marker`` (exactly as given: "PS:" is not
    "P.S.", "P.S." is not "P.P.S"; with no marker, any of P.S. / PS / Postscript in any case) that follows the
    body (there is text before it) and starts the answer's final paragraph run (no blank line after it: a P.S. at
    the start, or one followed by another paragraph, is not at the end)."""
    if marker:
        rx = re.compile(r"^[ \t>*_]*" + re.escape(str(marker).strip()) + r"(?![A-Za-z0-9])", re.M)
    else:
        rx = re.compile(r"^[ \t>*_]*" + POSTSCRIPT_ANY, re.M | re.I)
    found = list(rx.finditer(text))
    if not found:
        return False
    last = found[-1]
    before, after = text[: last.start()], text[last.end() :]
    return bool(before.strip()) and re.search(r"\n[ \t]*\n[ \t]*\S", after) is None


def phrase_count(text, phrase):
    p = re.escape(str(phrase).lower())
    left = r"(?<!\w)" if re.match(r"\w", str(phrase)) else ""
    right = r"(?!\w)" if re.search(r"\w$", str(phrase)) else ""
    return len(re.findall(left + p + right, text.lower()))


def _starts(unit, prefix, exact_case=False):
    u = unit.strip() if exact_case else unit.strip().lower()
    p = str(prefix).strip() if exact_case else str(prefix).strip().lower()
    if not u.startswith(p):
        return False
    rest = u[len(p) :]
    return not (re.search(r"\w$", p) and rest[:1].isalnum())


def ends_ok(unit, end, exact_case=False):
    """Whether ``unit`` ends with ``end`` (a suffix: a one-word answer "happily" ends in "ly"); an end whose last
    character is a letter or digit may be followed by closing punctuation ("... the night." ends with the word
    night), one ending in a mark must match exactly; ``exact_case``: the case too."""
    u = unit.strip() if exact_case else unit.strip().lower()
    e = str(end).strip() if exact_case else str(end).strip().lower()
    if re.search(r"\w$", e):
        u = re.sub(r"[.!?,;:\"'\u201d\u2019)\]*]+$", "", u)
    return u.endswith(e)


def at_ok(c, text):
    """Whether the ``index``-th ``unit`` (word or letter; 1-based, negative from the end) of ``text`` is
    ``text`` of the rule (case and the word's surrounding punctuation aside)."""
    if c["unit"] == "letter":
        pieces = [ch.lower() for ch in text if ch.isalpha()]
    else:
        pieces = [_bare(w).lower() for w in words(text)]
    k = int(c["index"])
    i = k - 1 if k > 0 else len(pieces) + k
    return 0 <= i < len(pieces) and pieces[i] == str(c["text"]).strip().lower()


def _norm_option(text):
    text = unicodedata.normalize("NFKC", str(text)).strip().lower()
    return " ".join(text.strip(" .!\"'`").split())


def only_ok(text, what):
    t = text.strip()
    if what == "number":
        return re.fullmatch(r"[-+]?(?:\d+(?:[.,]\d+)*|\.\d+)\.?", t) is not None
    if what == "integer":
        return re.fullmatch(r"[-+]?\d+\.?", t) is not None
    if what == "letters":
        return bool(t) and all(ch.isalpha() or ch.isspace() for ch in t)
    if what == "capitals":
        return bool(t) and all((ch.isalpha() and ch.isupper()) or ch.isspace() for ch in t)
    if what == "lowercase_letters":
        return bool(t) and all((ch.isalpha() and ch.islower()) or ch.isspace() for ch in t)
    if what == "digits":
        return bool(t) and all(ch.isdigit() or ch.isspace() for ch in t)
    if what == "word":
        return len(words(t)) == 1
    if what == "numbers":
        return bool(re.search(r"\d", t)) and re.fullmatch(r"[-+]?\d+(?:[\s,;]+[-+]?\d+)*[.]?", t) is not None
    return layout_test(what, None, t)  # an identifier style: snake_case, camel_case, ...


INT_RX = re.compile(r"(?<![\w.-])-?\d+(?![\w.])")
# a number as a unit: an integer or a decimal ("201.5" is one number, not an integer); a final period is the
# sentence's, "1.2.3" is no number
NUM_RX = re.compile(r"(?<![\w.-])-?\d+(?:\.\d+)?(?!\w|\.\d)")
DATE_RX = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
HEX_RX = re.compile(r"#[0-9a-fA-F]{6}")


def unit_list(unit, text):
    """The pieces a composed rule's ``unit`` names (see the module docstring)."""
    if unit == "number":
        return NUM_RX.findall(text)
    if unit == "answer":
        return [text.strip()] if text.strip() else []
    found = layout_units(unit, text)
    return found if found is not None else units(unit, text)


def _bare(u):
    return re.sub(r"^[^\w]+|[^\w]+$", "", u.strip())


def _letters(u):
    return "".join(ch for ch in u if ch.isalpha())


def _int(u):
    try:
        return int(str(u).strip().rstrip(".,;"))
    except ValueError:
        return None


def _value(u):
    """A number unit's value: an int, a float for a decimal, None for anything else."""
    t = str(u).strip().rstrip(",;")
    if re.fullmatch(r"-?\d+\.?", t):
        return int(t.rstrip("."))
    if re.fullmatch(r"-?\d+\.\d+", t):
        return float(t)
    return None


VOWELS = "aeiou"


def has_double_letter(u):
    """Whether a word holds the same letter twice in a row ("book", "letter"; not "banana")."""
    return re.search(r"([^\W\d_])\1", _bare(u).lower()) is not None


def _date(u):
    m = DATE_RX.fullmatch(u.strip().rstrip(".,;"))
    if not m:
        return None
    y, mo, d = (int(g) for g in m.groups())
    days = [
        31,
        29 if y % 4 == 0 and (y % 100 != 0 or y % 400 == 0) else 28,
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ]
    return (y, mo, d) if 1 <= mo <= 12 and 1 <= d <= days[mo - 1] else None


def unit_test(test, arg, u):
    """Whether one unit passes an ``each`` test."""
    w = _bare(u)
    if test == "lowercase":
        return bool(_letters(w)) and w == w.lower()
    if test == "uppercase":
        return bool(_letters(w)) and w == w.upper()
    if test == "capitalized":
        return w[:1].isupper() and (len(_letters(w)) < 2 or w[1:] == w[1:].lower())
    if test == "starts_with":
        if len(str(arg)) == 1:  # a letter: the unit's first letter
            return w[:1].lower() == str(arg).lower()
        return _starts(u, arg)
    if test == "ends_with":
        if len(str(arg)) == 1 and str(arg).isalpha():  # a letter: the unit's last letter
            return w.lower().endswith(str(arg).lower())
        return u.strip().lower().endswith(str(arg).lower())
    if test == "ends_punct":
        t = u.rstrip()
        return bool(t) and unicodedata.category(t[-1]).startswith("P")
    if test == "palindrome":
        s = _letters(u).lower()
        return len(s) >= 2 and s == s[::-1]
    if test in ("prime", "even", "odd", "divisible", "digit_sum"):
        n = _int(w) if w.lstrip("-").isdigit() else None
        return n is not None and number_test(test, arg, n)
    if test == "date":
        return _date(u) is not None
    if test == "hex_colour":
        return HEX_RX.fullmatch(u.strip()) is not None
    if test == "width":
        return len(u.rstrip("\r")) == int(arg)
    if test == "letters":
        return len(_letters(w)) == int(arg)
    if test == "contains":
        return str(arg).lower() in w.lower()
    if test == "starts_upper":
        first = next((ch for ch in u if ch.isalpha()), "")
        return first.isupper()
    if test == "square":
        n = _int(w) if w.isdigit() else None
        return n is not None and number_test("square", arg, n)
    if test == "starts_in":  # the first letter is one of the letters of ``arg`` ("aeiou": a vowel)
        first = next((ch for ch in w if ch.isalpha()), "")
        return bool(first) and w[:1].isalpha() and first.lower() in str(arg).lower()
    if test == "ends_in":
        last = _letters(w)[-1:]
        return bool(last) and w[-1:].isalpha() and last.lower() in str(arg).lower()
    if test == "double_letter":
        return has_double_letter(u)
    if test == "integer":
        return re.fullmatch(r"-?\d+", w) is not None and _value(u) is not None
    if test == "range":  # a number, time or price within [lo, hi] (either may be None: no bound)
        v = layout_value(u)
        v = _value(u) if v is None else v
        lo, hi = (
            [range_bound(b) for b in [*list(arg), None, None][:2]] if isinstance(arg, list) else (None, None)
        )
        return v is not None and (lo is None or v >= lo) and (hi is None or v <= hi)
    return layout_test(test, arg, u)


def _key(rel, u):
    if rel == "chronological":
        return _date(u)
    if rel == "alphabetical":
        return _bare(u).lower()
    value = _value(u) if re.fullmatch(r"-?\d+(?:\.\d+)?\.?", str(u).strip().rstrip(",;")) else _int(_bare(u))
    if value is None:
        d = _date(u)
        return d
    return value


def pair_holds(rel, arg, a, b, i):
    """Whether the ``i``-th pair of consecutive units (a, b) keeps the relation ``rel``."""
    if rel in ("increasing", "decreasing", "alphabetical", "chronological", "step"):
        ka, kb = _key(rel, a), _key(rel, b)
        if ka is None or kb is None:
            return False
        if rel == "step":
            return isinstance(ka, int) and isinstance(kb, int) and kb - ka == int(arg)
        return kb < ka if rel == "decreasing" else (kb >= ka if rel == "alphabetical" else kb > ka)
    if rel == "alternating_case":
        first = "lowercase" if (i % 2 == 0) == (str(arg or "lower") == "lower") else "uppercase"
        other = "uppercase" if first == "lowercase" else "lowercase"
        return unit_test(first, None, a) and unit_test(other, None, b)
    if rel == "word_growth":
        return len(words(b)) - len(words(a)) == int(arg if arg is not None else 1)
    if rel == "chain":  # each unit starts with the letter the one before ends with
        x, y = _letters(a).lower(), _letters(b).lower()
        return bool(x) and bool(y) and x[-1] == y[0]
    if rel == "one_letter":
        x, y = _bare(a).lower(), _bare(b).lower()
        return len(x) == len(y) and sum(1 for p, q in zip(x, y, strict=True) if p != q) == 1
    if rel == "longer":  # each unit has more letters than the one before
        return len(_letters(b)) > len(_letters(a))
    if rel == "ratio":  # each number is ``arg`` times the one before
        x, y = _value(a), _value(b)
        return x is not None and y is not None and y == x * arg
    raise ValueError(f"unknown relation {rel!r}")


def order_score(c, text):
    us = unit_list(c["unit"], text)
    rel, arg = c["rel"], c.get("arg")
    if c.get("of") or rel in (
        "same_first",
        "sum_prev2",
        "last_first",
        "reversed",
        "initials_differ",
        "alphabet_next",
    ):
        return layout_order(c, us)
    if rel == "word_counts":
        want = [int(n) for n in arg]
        if len(us) != len(want):
            return 0.0
        return sum(1 for u, n in zip(us, want, strict=True) if len(words(u)) == n) / len(want)
    if rel == "distinct":  # no unit repeated (case and punctuation aside)
        keys = [_bare(u).lower() for u in us]
        return len(set(keys)) / len(keys) if keys else 0.0
    if rel == "distinct_initials":  # no two units start with the same letter (case aside)
        keys = [_bare(u)[:1].lower() for u in us]
        return len(set(keys)) / len(keys) if keys else 0.0
    if (
        rel == "alternating_case"
        and us
        and not unit_test("lowercase" if str(arg or "lower") == "lower" else "uppercase", None, us[0])
    ):
        return 0.0
    if len(us) < 2:
        return 0.0
    return sum(1 for i in range(len(us) - 1) if pair_holds(rel, arg, us[i], us[i + 1], i)) / (len(us) - 1)


def nth_ok(c, text):
    """Whether the ``index``-th ``unit`` (paragraph, sentence, line, item; 1-based, -1 the last) starts (``side``
    start) or ends (end) with the rule's text, as a start or an end of the whole answer is checked; there must be
    that many units."""
    pieces = units(c["unit"], text, c.get("separator"))
    k = int(c["index"])
    i = k - 1 if k > 0 else len(pieces) + k
    if not 0 <= i < len(pieces):
        return False
    exact = literal_case(c["text"])
    if c.get("side", "start") == "end":
        return ends_ok(pieces[i], c["text"], exact)
    return _starts(_bare_start(pieces[i]), c["text"], exact)


def _bare_start(unit):
    """A unit without the markup that may open it ("## ", "**", a quote)."""
    return re.sub(r"^[\s#>*_\"'\u201c]+(?=\w)", "", unit)


HASHTAG_RX = re.compile(r"(?<![\w#])#\w+")


def trailing_count(text, what):
    """How many ``what`` (hashtags) end the answer, with nothing after them."""
    toks = text.split()
    n = 0
    while toks and what == "hashtags" and HASHTAG_RX.fullmatch(toks[-1]):
        n += 1
        toks.pop()
    return n


def repeat_ok(text, request):
    """Whether the answer starts with the request, word for word (case and white space aside), and goes on."""
    said = " ".join(text.split()).lower()
    want = " ".join(str(request).split()).lower()
    return bool(want) and said.startswith(want) and bool(said[len(want) :].strip())


def _per(c, text, test):
    pieces = units(c["per"], text, c.get("separator"))
    if not pieces:
        return 0.0
    return sum(1 for p in pieces if test(p)) / len(pieces)


def check(c, text):
    """Score in [0, 1] of ``text`` under constraint ``c``; 1.0 exactly when it holds."""
    rule = c["rule"]
    text = str(text or "")
    if rule in FAMILY_CHECKS:  # a rule of a constraint family (rlar.constraints.families)
        return FAMILY_CHECKS[rule](c, text)
    if rule in COUNT_UNITS:
        if rule == "sections" and not c.get("per") and not numbered_in_order(section_numbers(text, c)):
            return 0.0
        if rule == "paragraphs" and c.get("distinct") and not c.get("per"):
            parts = [" ".join(p.split()).lower() for p in paragraphs(text, c.get("separator"))]
            if len(set(parts)) < len(parts):
                return 0.0
        if rule == "numbered" and not c.get("per"):
            if not numbered_in_order([int(n) for n in NUMBERED_NUM_RX.findall(text)]):
                return 0.0
        if c.get("index") is not None:
            return 1.0 if indexed_count_ok(c, text) else 0.0
        if c.get("per"):
            return _per(c, text, lambda p: count_ok(rule, p, c))
        n = count(rule, text, c)
        return 0.0 if n < 0 else near(n, c)
    if rule == "include":
        ws = list(c["words"])
        return sum(1 for w in ws if phrase_count(text, w) > 0) / len(ws) if ws else 1.0
    if rule == "exclude":
        return 0.0 if any(phrase_count(text, w) for w in c["words"]) else 1.0
    if rule == "occurs":
        return 1.0 if within(phrase_count(text, c["text"]), c) else 0.0
    if rule == "letter":  # one letter, or any of several ("aeiou": vowels)
        low = text.lower()
        return 1.0 if within(sum(low.count(ch) for ch in set(str(c["letter"]).lower())), c) else 0.0
    if rule == "lowercase":
        return 1.0 if re.search(r"[^\W\d_]", text) and text == text.lower() else 0.0
    if rule == "uppercase":
        return 1.0 if re.search(r"[^\W\d_]", text) and text == text.upper() else 0.0
    if rule == "title_case":
        ws = [re.sub(r"^[^\w]+", "", w) for w in words(text)]
        ws = [w for w in ws if w[:1].isalpha()]
        return 1.0 if ws and all(w[0].isupper() for w in ws) else 0.0
    if rule in ("starts_with", "not_starts_with"):
        want = rule == "starts_with"
        exact = want and literal_case(c["text"])  # a ban matches in any case (stricter)
        if c.get("per"):
            return _per(c, text, lambda p: _starts(p, c["text"], exact) == want)
        return 1.0 if _starts(text, c["text"], exact) == want else 0.0
    if rule in ("ends_with", "not_ends_with"):
        want = rule == "ends_with"
        exact = want and literal_case(c["text"])  # a ban matches in any case (stricter)
        if c.get("per"):
            return _per(c, text, lambda p: ends_ok(p, c["text"], exact) == want)
        return 1.0 if ends_ok(text, c["text"], exact) == want else 0.0
    if rule == "at":
        return 1.0 if at_ok(c, text) else 0.0
    if rule in ("json", "json_keys"):
        try:
            obj = load_json(text)
        except ValueError:
            return 0.0
        return 1.0 if rule == "json" else keys_score(c, obj)
    if rule == "quoted":
        t = text.strip()
        return 1.0 if len(t) >= 2 and t[0] in '"\u201c' and t[-1] in '"\u201d' else 0.0
    if rule == "title":
        return 1.0 if TITLE_RX.search(text) else 0.0
    if rule == "postscript":
        return 1.0 if postscript_ok(text, c.get("text")) else 0.0
    if rule == "code_block":
        if c.get("lang"):
            return 1.0 if code_fence_ok(text, c["lang"]) else 0.0
        t = text.strip()
        return 1.0 if t.startswith("```") and t.endswith("```") and len(t) > 6 else 0.0
    if rule == "language":
        return 1.0 if detect_language(text) == c["lang"] else 0.0
    if rule == "one_of":
        # an option in capitals ("YES", "NOT SURE") is that literal: its case must match; others any case
        said = _norm_option(text)
        got = unicodedata.normalize("NFKC", text).strip().strip(" .!\"'`")
        return (
            1.0
            if any(
                said == _norm_option(o) and (not literal_case(o) or got == str(o).strip(" .!\"'`"))
                for o in c["options"]
            )
            else 0.0
        )
    if rule == "only":
        return 1.0 if only_ok(text, c["what"]) else 0.0
    if rule == "each":
        us = unit_list(c["unit"], text)
        if c.get("of"):  # a count measured per unit: "the number of words in each sentence is prime"
            ok = [measure_ok(c["test"], c.get("arg"), count(c["of"], u)) for u in us]
        else:
            ok = [unit_test(c["test"], c.get("arg"), u) for u in us]
        return sum(ok) / len(ok) if ok else 0.0
    if rule == "order":
        return order_score(c, text)
    if rule == "total":
        ns = [_value(n) for n in unit_list("number", text)]
        if not ns or any(n is None for n in ns):
            return 0.0
        value = {"sum": sum(ns), "first": ns[0], "last": ns[-1]}[c["agg"]]
        return 1.0 if within(value, c) else 0.0
    if rule == "spell":
        us = unit_list(c["unit"], text)
        got = "".join(_bare(u)[:1] for u in us).lower()
        return 1.0 if got == str(c["text"]).lower() else 0.0
    if rule == "table":
        return table_score(c, text)
    if rule == "nth":
        return 1.0 if nth_ok(c, text) else 0.0
    if rule == "wrap":
        return 1.0 if wrap_ok(text, c["open"], c["close"]) else 0.0
    if rule == "delimited":
        return delimited_score(c, text)
    if rule == "json_array":
        return json_array_score(c, text)
    if rule == "trailing":
        return 1.0 if within(trailing_count(text, c.get("what", "hashtags")), c) else 0.0
    if rule == "repeat":
        return 1.0 if repeat_ok(text, c["text"]) else 0.0
    if rule == "yaml_keys":
        try:
            return keys_score(c, load_yaml(text))
        except ValueError:
            return 0.0
    return layout_check(c, text)


def holds(c, text):
    return check(c, text) >= 1.0
