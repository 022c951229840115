"""Unit kinds, measured relations and repeated units, as standard-library Python (part of the source every composed
verifier embeds; :mod:`rlar.constraints.checks.rules` calls these for the units, tests and relations it does not
hold itself).

- units of composed rules: paragraphs, emojis, Markdown links (whole, their URLs, their texts), bold spans,
  times, prices, fenced code;
- a count measured per unit (``of``): ``each`` sentence's word count is prime, ``order`` of lines by their
  leading spaces (a staircase), all sentences of equal length;
- per-unit tests: HH:MM times, bit strings, no two neighbouring characters alike, a unit that is one Markdown
  link, a unit starting / ending with an emoji, time, number or link, a text as written, prices in a template
  (``$#`` or ``# €``: digits, a point, two decimals), identifier styles (snake_case, camelCase, ...), title-cased
  units, a consonant cluster, a unit that ends with the word it starts with;
- relations: the same first word in every unit, the last word of each unit opening the next, a unit's words in
  reverse order, each number the sum of the two before, consecutive words with different initials, initials in
  alphabet order;
- whole answers: two units the same (``same``) and one fenced block with a language tag (``code_block`` with
  ``lang``); the layouts of the constraint families (HTML, task and nested lists, figures, question/answer pairs)
  are their own modules' checks (:mod:`rlar.constraints.families`).

Every check is strict about the form it names (a fence tag ``Python`` is not ``python``, a repeated line differing
by a full stop is not the same).
"""

import re

from rlar.constraints.checks.marks import (
    EMOJI_RX,
    HHMM_RX,
    LINK_RX,
    PRICE_RX,
    TIME_RX,
    bare_word,
    bold_spans,
    emojis,
    fenced,
    links,
    minutes,
    price_value,
)
from rlar.constraints.checks.units import count, paragraphs, units, within, words


def layout_units(unit, text):
    """The pieces of the units of this module (None for a unit that is not one of them)."""
    if unit == "paragraph":
        return paragraphs(text)
    if unit == "emoji":
        return emojis(text)
    if unit == "link":
        return [m.group(0) for m in LINK_RX.finditer(text)]
    if unit == "url":
        return [u for _, u in links(text)]
    if unit == "link_text":
        return [t for t, _ in links(text)]
    if unit == "bold":
        return bold_spans(text)
    if unit == "time":
        return TIME_RX.findall(text)
    if unit == "price":
        return PRICE_RX.findall(text)
    if unit == "code":
        return [body for _, body in fenced(text)]
    return None


_KIND_RX = {
    "emoji": EMOJI_RX.pattern,
    "time": r"\d{1,2}:\d{2}",
    "number": r"[-+]?\d+(?:\.\d+)?",
    "link": LINK_RX.pattern,
}
_STYLES = {
    "snake_case": r"[a-z0-9]+(?:_[a-z0-9]+)*",
    "screaming_snake": r"[A-Z0-9]+(?:_[A-Z0-9]+)*",
    "camel_case": r"[a-z][a-z0-9]*(?:[A-Z][a-z0-9]+)*",
    "pascal_case": r"(?:[A-Z][a-z0-9]+)+",
    "kebab_case": r"[a-z0-9]+(?:-[a-z0-9]+)*",
}


def price_form(template):
    """The pattern of a price template: ``#`` is digits, a point and two decimals (``$#``, ``# €``)."""
    return re.escape(str(template)).replace(r"\#", "#").replace("#", r"\d+\.\d{2}")


def layout_test(test, arg, u):
    """Whether one unit passes an ``each`` test of this module (module docstring); raises for an unknown test."""
    t = u.strip()
    if test == "time24":
        return HHMM_RX.fullmatch(t) is not None
    if test == "binary":
        return re.fullmatch(r"[01]+", t) is not None
    if test == "no_adjacent_repeat":
        return bool(t) and all(t[i] != t[i + 1] for i in range(len(t) - 1))
    if test == "is_link":
        return LINK_RX.fullmatch(re.sub(r"^(?:[-*\u2022]|\d{1,3}[.)])[ \t]+", "", t)) is not None
    if test == "ends_with_kind":
        return re.search("(?:" + _KIND_RX[str(arg)] + r")$", t) is not None
    if test == "starts_with_kind":
        return re.match("(?:" + _KIND_RX[str(arg)] + r")(?=\s|$)", t) is not None
    if test == "equals":
        return t == str(arg).strip()
    if test == "price":
        return re.fullmatch(price_form(arg), t) is not None
    if test in _STYLES:
        return re.fullmatch(_STYLES[test], t) is not None
    if test == "title":
        ws = [re.sub(r"^[^\w]+", "", w) for w in words(t)]
        ws = [w for w in ws if w[:1].isalpha()]
        return bool(ws) and all(w[0].isupper() for w in ws)
    if test == "consonant_cluster":
        return re.search(r"[bcdfghjklmnpqrstvwxz]{2}", bare_word(t)) is not None
    if test == "bookended":  # ends with the word it starts with
        ws = [bare_word(w) for w in words(t)]
        return len(ws) >= 2 and ws[0] == ws[-1]
    raise ValueError(f"unknown unit test {test!r}")


def layout_value(u):
    """The value a range test compares for a time (minutes) or a price (its amount); None otherwise."""
    t = str(u).strip()
    if re.fullmatch(r"\d{1,2}:\d{2}", t):
        return minutes(t)
    if PRICE_RX.fullmatch(t):
        return price_value(t)
    return None


def range_bound(b):
    """A range bound as written: a number, or an ``HH:MM`` time (minutes after midnight)."""
    if isinstance(b, str) and ":" in b:
        return minutes(b)
    return b


def _first(u):
    ws = [bare_word(w) for w in words(u)]
    ws = [w for w in ws if w]
    return ws[0] if ws else None


def _last(u):
    ws = [bare_word(w) for w in words(u)]
    ws = [w for w in ws if w]
    return ws[-1] if ws else None


def _num(u):
    t = str(u).strip().rstrip(".,;")
    return int(t) if re.fullmatch(r"-?\d+", t) else None


def layout_order(c, us):
    """The score of an ``order`` rule of this module over units ``us``: measured relations (``of``) and the
    relations of the module docstring."""
    rel, arg = c["rel"], c.get("arg")
    if c.get("of"):
        keys = [count(c["of"], u) for u in us]
        if len(keys) < 2 or any(k < 0 for k in keys):
            return 0.0
        pairs = [(keys[i], keys[i + 1]) for i in range(len(keys) - 1)]
        if rel == "increasing":
            good = [b > a for a, b in pairs]
        elif rel == "decreasing":
            good = [b < a for a, b in pairs]
        elif rel == "step":
            good = [b - a == int(arg) for a, b in pairs]
        elif rel == "equal":
            good = [b == a for a, b in pairs]
        else:
            raise ValueError(f"unknown measured relation {rel!r}")
        return sum(good) / len(good)
    if rel == "same_first":
        firsts = [_first(u) for u in us]
        if len(firsts) < 2 or firsts[0] is None:
            return 0.0
        return sum(1 for f in firsts if f == firsts[0]) / len(firsts)
    if rel == "sum_prev2":
        ns = [_num(u) for u in us]
        if len(ns) < 3 or any(n is None for n in ns):
            return 0.0
        good = [ns[i] == ns[i - 1] + ns[i - 2] for i in range(2, len(ns))]
        return sum(good) / len(good)
    if len(us) < 2:
        return 0.0
    good = [layout_pair(rel, arg, us[i], us[i + 1]) for i in range(len(us) - 1)]
    return sum(good) / len(good)


def layout_pair(rel, arg, a, b):
    if rel == "last_first":
        return _last(a) is not None and _last(a) == _first(b)
    if rel == "reversed":
        x = [bare_word(w) for w in words(a)]
        y = [bare_word(w) for w in words(b)]
        return bool(x) and y == x[::-1]
    if rel == "initials_differ":
        return bool(_first(a)) and bool(_first(b)) and _first(a)[0] != _first(b)[0]
    if rel == "alphabet_next":
        x, y = _first(a), _first(b)
        if not x or not y or not x[0].isalpha() or not y[0].isalpha():
            return False
        return (ord(x[0]) - ord("a") + 1) % 26 == ord(y[0]) - ord("a")
    raise ValueError(f"unknown relation {rel!r}")


def code_fence_ok(text, lang):
    """The whole answer is one fenced block whose tag is ``lang`` as written, closed, with code in it."""
    m = re.fullmatch(r"```([^\n`]*)\n(.*?)\n```", text.strip(), re.S)
    return m is not None and m.group(1) == str(lang) and "```" not in m.group(2) and bool(m.group(2).strip())


def same_ok(c, text):
    """The ``index``-th unit is the ``as``-th one, as written (white space around it aside)."""
    pieces = units(c["unit"], text)

    def at(k):
        i = k - 1 if k > 0 else len(pieces) + k
        return pieces[i].strip() if 0 <= i < len(pieces) else None

    a, b = at(int(c["index"])), at(int(c["as"]))
    return a is not None and b is not None and a == b


def layout_check(c, text):
    """The score of a whole-answer rule of this module (``same``); raises for an unknown rule (the layouts of the
    constraint families are :mod:`rlar.constraints.families`' checks)."""
    rule = c["rule"]
    if rule == "same":
        return 1.0 if same_ok(c, text) else 0.0
    raise ValueError(f"unknown constraint rule {rule!r}")


def count_ok(rule, text, c):
    """Whether a count holds its bounds (a malformed count, -1, never does)."""
    n = count(rule, text, c)
    return n >= 0 and within(n, c)


def indexed_count_ok(c, text):
    """A count of the ``index``-th ``per`` unit (1-based, -1 the last): the unit must exist."""
    pieces = units(c["per"], text, c.get("separator"))
    k = int(c["index"])
    i = k - 1 if k > 0 else len(pieces) + k
    return 0 <= i < len(pieces) and count_ok(c["rule"], pieces[i], c)
