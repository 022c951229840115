"""The second reading's composed rules: what every unit must be, relations between units, totals,
tables and YAML, read by keywords apart from :mod:`rlar.tasks.reading_shapes`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rlar.synthesis.second.vocab import _SMALL, _blanked, _num, _num_after


@dataclass
class _Composing:
    """One sentence being read (the phrases read are blanked from ``sentence`` at the end: ``blank``), its words,
    what it names (one per line, dates, colours, numbers; ``unit``: the unit it is about) and what was read."""

    sentence: str
    caps: Sequence[str]
    words: list[str]
    ws: set[str]
    out: list[dict[str, Any]]
    blank: list[str]
    per_line: bool
    dates: bool
    colours: bool
    numberish: bool
    unit: str

    def each(self, u: str, test: str, arg: Any = None) -> None:
        c = {"rule": "each", "unit": u, "test": test}
        if arg is not None:
            c["arg"] = arg
        self.out.append(c)

    def order(self, u: str, rel: str, arg: Any = None) -> None:
        c = {"rule": "order", "unit": u, "rel": rel}
        if arg is not None:
            c["arg"] = arg
        self.out.append(c)


def _number_tests(s: _Composing) -> None:
    """Number tests: primes, parity, multiples, divisors, digit sums, dates, colours, palindromes, capitals."""
    words, ws, dates, colours = s.words, s.ws, s.dates, s.colours
    if "prime" in ws:
        s.each("number", "prime")
    for parity in ("even", "odd"):
        if re.search(rf"\b{parity} (?:numbers|integers|number)\b", s.sentence):
            s.each("number", parity)
    mult = re.search(r"\bmultiples of (\d+)\b", s.sentence)
    if mult and not ws & {"no", "not", "none", "never", "without", "avoid"}:
        s.each("number", "divisible", int(mult.group(1)))
        s.sentence = _blanked(s.sentence, [r"of \d+"])
        s.numberish = True
        s.unit = "number"
    if "divisible" in ws:
        k = _num_after(words, "by", within=1)
        if k is not None:
            s.each("number", "divisible", k)
    if ws & {"digit", "digits"} and ("sum" in ws or re.search(r"\bdigits add up to\b", s.sentence)):
        k = _num_after(words, "to", "is", "of", within=2)
        if k is not None:
            s.each("number", "digit_sum", k)
    if dates and "yyyy-mm-dd" in s.sentence:
        s.each("line", "date")
    if colours:
        s.each("line", "hex_colour")
    if ws & {"palindrome", "palindromes"}:
        s.each(
            "word" if ws & {"word", "words"} and not ws & {"letter", "letters"} else "answer", "palindrome"
        )
    if ws & {"capitalized", "capitalised"}:
        s.each("word", "capitalized")


def _final_marks(s: _Composing) -> None:
    """A final mark of every unit: punctuation, a question, a given mark."""
    ws, blank = s.ws, s.blank
    if "punctuation" in ws and ws & {"end", "ends", "finish", "finishes", "ending"}:
        s.each("line" if ws & {"line", "lines"} else "sentence", "ends_punct")
        blank.append("punctuation mark")
    mark = re.search(
        r"\bend\w*\s+(?:with|in)\s+an?\s+(question|exclamation) mark\b|\bend\w*\s+(?:with|"
        r"in)\s+an?\s+(period|full stop)\b",
        s.sentence,
    )
    question = re.search(
        r"\b(?:each|every|all) (?:of the )?(sentences?|lines?) (?:must |should |has to |have to |needs to |will )?"
        r"(?:be|is|are) (?:an? )?questions?\b",
        s.sentence,
    )
    if question and not ws & {"no", "not", "never"}:  # "every sentence must be a question"
        s.each("line" if question.group(1).startswith("line") else "sentence", "ends_with", "?")
        blank.append(question.group(0))
    if mark and ws & {"every", "each", "all"} and ws & {"line", "lines", "sentence", "sentences"}:
        s.each(
            "line" if ws & {"line", "lines"} else "sentence",
            "ends_with",
            "?" if mark.group(1) == "question" else "!" if mark.group(1) else ".",
        )
        blank.append(mark.group(0))


def _letters_per_word(s: _Composing) -> None:
    """Letters per word."""
    out, blank = s.out, s.blank
    wl = re.search(
        r"\b(?:every|each) word (?:has|with|having|is|must have|may have|should have) "
        r"(at most|no more than|up to|at least|exactly)?\s*(\d+|one|two|three|four|five|six|seven|eight|nine|ten)"
        r" letters?(?: long)?( or (?:fewer|less|more))?\b",
        s.sentence,
    )
    if wl and _num(wl.group(2)):
        n_ = int(_num(wl.group(2)) or 0)
        low = (wl.group(1) or "") == "at least" or (wl.group(3) or "").endswith("more")
        exact = (wl.group(1) or "") == "exactly" or not (wl.group(1) or wl.group(3))
        out.append(
            {"rule": "letters", "per": "word", "min": n_, "max": n_}
            if exact
            else {"rule": "letters", "per": "word", **({"min": n_} if low else {"max": n_})}
        )
        blank.append(wl.group(0))
        s.sentence = _blanked(s.sentence, [wl.group(0)])


def _first_last_and_contained_letters(s: _Composing) -> None:
    """A unit's first or last letter, a letter it contains, squares."""
    ws, blank = s.ws, s.blank
    negation = bool(ws & {"no", "not", "none", "never", "without", "avoid", "nor"}) or "n't" in s.sentence
    cap = re.search(
        r"\b(?:start|starts|starting|begin|begins|beginning)\s+(?:(each|every) line\s+)?with\s+an?\s+"
        r"(?:capital|upper\s?case|upper-case)(?: letter)?\b",
        s.sentence,
    )
    if cap and not negation and (ws & {"every", "each", "all"}):
        s.each("line" if cap.group(1) or s.unit == "line" else s.unit, "starts_upper")
        blank.append(cap.group(0))
        s.sentence = _blanked(s.sentence, [cap.group(0)])
    fin = re.search(
        r"\b(?:end|ends|ending|finish|finishes|finishing)\s+(?:with|in)\s+the\s+letter\s+'?([a-z])'?(?:\s|$|[,.])"
        r"|\b(?:last|final) letter is\s+(?:the letter\s+)?'?([a-z])'?(?:\s|$|[,.])",
        s.sentence,
    )
    if fin and not negation and s.unit in ("word", "line", "sentence"):
        s.each(s.unit, "ends_with", fin.group(1) or fin.group(2))
        blank.append(fin.group(0))
        s.sentence = _blanked(s.sentence, [fin.group(0)])
    has = re.search(
        r"(?<!starting )(?<!beginning )(?<!ending )(?<!starts )(?<!begins )(?<!ends )(?<!start )(?<!begin )(?<!end )"
        r"\b(?:contain|contains|containing|include|includes|including|having|has|have|with)\s+"
        r"(?:at least one |one |an? )?(?:the )?letter\s+'?([a-z])'?(?:\s|$|[,.])",
        s.sentence,
    )
    if (
        has
        and not negation
        and s.unit in ("word", "line", "sentence")
        and (
            ws & {"every", "each", "all"}
            or re.search(r"\b(?:words|lines|sentences) (?:that|which)\b", s.sentence)
        )
    ):
        s.each(s.unit, "contains", has.group(1))
        blank.append(has.group(0))
    if ws & {"square", "squares"} and (
        "perfect" in ws or re.search(r"\bsquare (?:numbers|integers)\b", s.sentence)
    ):
        s.each("number", "square")
    start = re.search(
        r"\b(?:start|starts|starting|begin|begins|beginning)\s+with\s+(?:the\s+letter\s+)?'?([a-z])'?(?:\s|$|[,.])",
        s.sentence,
    )
    if start and start.group(1) == "a" and "letter" not in start.group(0):
        start = None  # "starting with a capital" names no letter
    if start and (ws & {"every", "each", "all"}) and s.unit in ("word", "line", "sentence"):
        s.each(s.unit, "starts_with", start.group(1))
        blank.append(start.group(0))


def _number_orders(s: _Composing) -> None:
    """Orders of units: alphabetical, chronological, increasing, steps, and the first and last values."""
    ws, out, blank = s.ws, s.out, s.blank
    if ws & {"alphabetical", "alphabetically"}:
        s.order("line" if s.unit == "line" else "word", "alphabetical")
    if "chronological" in ws or re.search(r"\bearliest to latest\b|\boldest to newest\b", s.sentence):
        s.order("line", "chronological")
    if ws & {"increasing", "ascending"}:
        s.order("number", "increasing")
    if ws & {"decreasing", "descending"}:
        s.order("number", "decreasing")
    less = re.search(
        r"\b(one|1|two|2) (less|more|fewer) than the (?:previous|one before|1 before|number before)",
        s.sentence,
    )
    down = re.search(r"\b(?:count down|countdown|counting down)\b", s.sentence)
    span = re.search(r"\bfrom (\d+) (?:down )?to (\d+)\b|\bfrom (\d+) down\b", s.sentence)
    at = re.search(r"\bstarting (?:at|from) (\d+)\b", s.sentence)
    if (less and s.unit == "number") or (less and "number" in s.sentence) or down or (span and s.numberish):
        d = _num(less.group(1)) if less else 1
        sign = 1 if less and less.group(2) == "more" else -1
        if span and not less and not down:
            a_, b_ = int(span.group(1) or span.group(3)), int(span.group(2) or 0)
            sign = -1 if b_ < a_ else 1
        s.order("number", "step", sign * int(d or 1))
    if span and (s.numberish or down):
        a = int(span.group(1) or span.group(3))
        out.append({"rule": "total", "unit": "number", "agg": "first", "min": a, "max": a})
        if span.group(2):
            out.append(
                {
                    "rule": "total",
                    "unit": "number",
                    "agg": "last",
                    "min": int(span.group(2)),
                    "max": int(span.group(2)),
                }
            )
        blank.append(span.group(0))
    elif at and (s.numberish or down):
        a = int(at.group(1))
        out.append({"rule": "total", "unit": "number", "agg": "first", "min": a, "max": a})
        blank.append(at.group(0))


def _case_growth_ladders_acrostics(s: _Composing) -> None:
    """Alternating case, growing sentences, word ladders, word counts per line, acrostics."""
    caps, ws, out, blank = s.caps, s.ws, s.out, s.blank
    if re.search(r"\balternat\w*\b", s.sentence) and re.search(
        r"\bcase\b|\blower\s?case\b|\bupper\s?case\b|\bcapitals\b", s.sentence
    ):
        up = re.search(r"\bstart\w*\s+with\s+an?\s+(?:upper\s?case|capital)", s.sentence)
        s.order("word", "alternating_case", "upper" if up else "lower")
        blank += [r"lower\s?case", r"upper\s?case", "capitals"]
    grow = re.search(r"\b(one|1|two|2) (?:more word|words? (?:more|longer))\b", s.sentence)
    if grow:
        s.order("sentence", "word_growth", _num(grow.group(1)))
        blank.append(grow.group(0))
    if "ladder" in ws or (ws & {"differs", "differ", "change", "changing"} and ws & {"letter"}):
        s.order("word", "one_letter")
        blank.append(r"(?:exactly )?(?:one|1|a single) letter")
    if "respectively" in ws or "in that order" in s.sentence or re.search(r"\bfirst line has\b", s.sentence):
        nums = [int(n) for n in re.findall(r"\b(\d+)\b(?! lines)", s.sentence)]
        named = re.findall(r"\b(\d+) lines\b", s.sentence)
        if len(nums) >= 2:
            s.order("line", "word_counts", nums)
            blank.append(r"\b\d+\b(?! lines)")
        del named
    if (
        "acrostic" in ws
        or re.search(r"\bfirst letters\b.*\bspell", s.sentence)
        or "letters of the word" in s.sentence
    ):
        word = next((c for c in caps if c in ws), None)
        if word is None:
            m = re.search(r"\b(?:spell(?:s|ing)?(?: out)?|the word|of)\s+'?([a-z]{2,})'?", s.sentence)
            word = m.group(1) if m else None
        if word:
            out.append({"rule": "spell", "unit": "line", "text": word})
            blank += ["letters", "letter"]


def _sums_and_counts(s: _Composing) -> None:
    """Sums, numbers only, how many dates, colours or numbers, one number per line, JSON."""
    ws, out, blank, per_line = s.ws, s.out, s.blank, s.per_line
    total = re.search(r"\b(?:sum is|sum of|add up to|adds up to|sums to|totals?) (\d+)\b", s.sentence)
    if total and not re.search(r"\bdigits?\s*$", s.sentence[max(0, total.start() - 12) : total.start()]):
        n = int(total.group(1))
        out.append({"rule": "total", "unit": "number", "agg": "sum", "min": n, "max": n})
        blank.append(total.group(0))
    if (
        "nothing else" in s.sentence
        and ws & {"numbers", "integers"}
        and not ws & {"word", "words", "letters", "json"}
    ):
        out.append({"rule": "only", "what": "numbers"})
        blank.append("nothing else")
    if re.search(r"\b(?:a|one|1) (?:number|integer) (?:whose|that|which)\b", s.sentence):
        out.append({"rule": "only", "what": "integer"})
    lines = re.search(
        r"\b(\d+|"
        + "|".join(_SMALL)
        + r") (?:dates|colours|colors|hex colou?r codes|hex codes|colou?r codes)\b",
        s.sentence,
    )
    if lines and _num(lines.group(1)):
        out.append({"rule": "lines", "min": _num(lines.group(1)), "max": _num(lines.group(1))})
        blank.append(lines.group(0))
    ints = re.search(
        r"\b(\d+|"
        + "|".join(_SMALL)
        + r") (?:even |odd |prime |positive |square |perfect )?(?:integers|whole numbers|numbers|squares|"
        r"primes|multiples)\b",
        s.sentence,
    )
    if ints and _num(ints.group(1)):
        out.append({"rule": "numbers", "min": _num(ints.group(1)), "max": _num(ints.group(1))})
        blank.append(ints.group(0))
    if re.search(r"\b(?:one|1|a single) number (?:per|on each|on a|a) line\b", s.sentence):
        out.append({"rule": "numbers", "per": "line", "min": 1, "max": 1})
        blank.append(r"(?:one|1|a single) number (?:per|on each|on a|a) line")
    if per_line:
        blank.append(r"(?:one|1) (?:per|on each|a) line")
    if "json" in ws:
        out.append({"rule": "json"})


def _yaml_keys(sentence: str) -> tuple[list[dict[str, Any]], str]:
    """A YAML mapping: its keys, their types, no other keys."""
    out: list[dict[str, Any]] = []
    blank: list[str] = []
    m = re.search(
        r"\bkeys?\b\s*:?\s*([a-z_][\w\s,()]*?)(?=(?:,\s*)?(?:where|with no|and no|no other)\b|[.]|$)",
        sentence,
    )
    if m:
        keys = [
            k
            for k in re.split(r"\s*,\s*|\s+and\s+", re.sub(r"\([^)]*\)", "", m.group(1)))
            if re.fullmatch(r"[a-z_]\w*", k.strip())
        ]
        c: dict[str, Any] = {"rule": "yaml_keys", "keys": [k.strip() for k in keys]}
        types = {}
        for k in c["keys"]:
            t = re.search(
                rf"\b{k}\s*(?:\(an?\s+|is an?\s+|is\s+)(integer|string|list|boolean|number)", sentence
            )
            if t:
                types[k] = t.group(1)
        if types:
            c["types"] = types
        if re.search(r"\bexactly the keys\b|\bno other keys\b", sentence):
            c["exact"] = True
        out.append(c)
        blank.append(m.group(0))
    return out, _blanked(sentence, [*blank, "yaml"])


def _table(sentence: str, words: list[str], ws: set[str]) -> tuple[list[dict[str, Any]], str]:
    """A Markdown or CSV table: its columns, their types, how many rows."""
    out: list[dict[str, Any]] = []
    blank: list[str] = []
    c: dict[str, Any] = {"rule": "table", "format": "markdown" if "markdown" in ws else "csv"}
    m = re.search(
        r"\b(?:columns?|header)\b\s*(?:are|named)?\s*:?\s*([a-z_][\w ,]*?)(?=,?\s+(?:and\s+)?(?:exactly"
        r"\s+)?\d|\s+and\s+\w+\s+rows|,\s*(?:where|with)|[.]|$)",
        sentence,
    )
    if m:
        cols = [x.strip() for x in re.split(r"\s*,\s*|\s+and\s+", m.group(1)) if x.strip()]
        c["columns"] = cols
        types = {}
        for k in cols:
            t = re.search(rf"\b{k}\s+is\s+an?\s+(integer|number|string)", sentence)
            if t:
                types[k] = t.group(1)
        if types:
            c["types"] = types
        blank.append(m.group(0))
    rows = _num_after(list(reversed(words)), "rows", "row", within=3)
    if rows is not None:
        c["min"] = c["max"] = rows
        blank.append(r"\w+ (?:data )?rows?")
    if "columns" in c or rows is not None:
        out.append(c)
    return out, _blanked(sentence, blank)


_READERS = (
    _number_tests,
    _final_marks,
    _letters_per_word,
    _first_last_and_contained_letters,
    _number_orders,
    _case_growth_ladders_acrostics,
    _sums_and_counts,
)


def _composed(sentence: str, caps: Sequence[str]) -> tuple[list[dict[str, Any]], str]:
    """Composed rules read by keywords, written apart from :mod:`rlar.tasks.reading_shapes`: which
    unit the sentence is about (its unit nouns), which tests its keywords name, which relations, totals and
    shapes. Returns the constraints and the sentence with the phrases it used blanked, so the count reader
    below does not read "by exactly one letter" as a letter count."""
    words = re.findall(r"#?[a-z0-9'-]+", sentence)
    ws = set(words)
    out: list[dict[str, Any]] = []
    blank: list[str] = []
    per_line = bool(re.search(r"\b(?:one|1) (?:per|on each|a) line\b|\bown line\b|\beach line\b", sentence))
    dates = "yyyy-mm-dd" in sentence or "dates" in ws or "date" in ws
    colours = "#rrggbb" in sentence or bool(
        {"colour", "colours", "color", "colors"} & ws
        and ("hex" in ws or "#rrggbb" in sentence or "codes" in ws)
    )
    numberish = bool({"number", "numbers", "integer", "integers", "numerals"} & ws)
    if ws & {"word", "words"} and not (dates or colours):
        unit = "word"
    elif ws & {"sentence", "sentences"}:
        unit = "sentence"
    elif numberish and not dates:
        unit = "number"
    elif dates or colours or ws & {"line", "lines"}:
        unit = "line"
    else:
        unit = "word"
    if "yaml" in ws:
        return _yaml_keys(sentence)
    if "table" in ws or "csv" in ws:
        return _table(sentence, words, ws)
    s = _Composing(sentence, caps, words, ws, out, blank, per_line, dates, colours, numberish, unit)
    for read in _READERS:
        read(s)
    return s.out, _blanked(s.sentence, s.blank)
