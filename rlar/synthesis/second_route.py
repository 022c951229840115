"""A second, independent route from a task description to labelled probes, so a verifier cannot validate itself.

The verifier is composed from :func:`rlar.tasks.reading.read_instruction`. Probes built from that same reading
would agree with any misreading ("20 words or fewer" read as exactly 20 makes a 20-word "good" probe that the
wrong verifier passes). Probes here come from elsewhere:

- ``agent``: the agent is asked (``submit_probes``) to write good and bad responses from the task description
  and examples alone — it never sees our reading. With the Messages API backend this is a language model.
- the offline backend answers ``submit_probes`` with :func:`second_reading`: a separately written reader
  (token windows around numbers and quoted strings, its own vocabulary and comparator lists; it shares no
  pattern with :mod:`rlar.tasks.phrasings`) whose constraints are rendered by
  :func:`rlar.synthesis.builder.build` into one good response and one bad response per constraint, each
  labelled by this reading. This is N-version reading: where both readers agree, a wrong verifier still
  passes; where they disagree, the probes reject it and the reason names the disagreement. It reads fewer
  phrasings than the main reader and stays silent (no probes) where it reads nothing.

``write_probes(description, examples)`` returns the probe dicts ``{query, response, label, why}``;
``probes_request`` / ``parse_probes`` carry the same question through an agent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from rlar.agent.base import AgentReply, AgentRequest, AgentTool
from rlar.synthesis.builder import build, violations
from rlar.synthesis.checks import holds
from rlar.tasks.constraints import canonical
from rlar.tasks.numbers import NUMBER_WORDS

__all__ = [
    "PROBES_TOOL",
    "constraint_key",
    "independent_constraints",
    "parse_probes",
    "probes_request",
    "second_reading",
    "vouched_keys",
    "write_probes",
]

_NUMS = {
    **{w: n for w, n in NUMBER_WORDS.items() if n},  # "zero" is left to the count words ("no commas")
    "hundred": 100,
    "once": 1,
    "twice": 2,
    "thrice": 3,
    "single": 1,
    "dozen": 12,
}
_UNIT = {
    "word": "words",
    "sentence": "sentences",
    "paragraph": "paragraphs",
    "line": "lines",
    "bullet": "bullets",
    "character": "chars",
    "letter": "letters",
    "syllable": "syllables",
    "comma": "commas",
    "placeholder": "placeholders",
    "section": "sections",
    "item": "items",
    "point": "items",
    "step": "items",
}
_SCOPE = {
    "sentence": "sentence",
    "bullet": "item",
    "item": "item",
    "point": "item",
    "step": "item",
    "line": "line",
    "paragraph": "paragraph",
    "word": "word",
}
_UP = {
    "most",
    "max",
    "maximum",
    "fewer",
    "less",
    "under",
    "below",
    "exceed",
    "exceeding",
    "up",
    "limit",
    "within",
    "shorter",
    "cap",
    "keep",
}
_DOWN = {"least", "minimum", "more", "over", "above", "longer", "min"}
_STRICT = {"fewer", "less", "under", "below", "shorter", "more", "over", "above", "longer"}
_NOT = {"no", "not", "never", "don't", "none", "nor", "cannot", "mustn't", "shouldn't"}
_LANG = {
    "english": "en",
    "german": "de",
    "french": "fr",
    "spanish": "es",
    "italian": "it",
    "portuguese": "pt",
    "dutch": "nl",
    "russian": "ru",
    "japanese": "ja",
    "chinese": "zh",
    "korean": "ko",
    "greek": "el",
}
_INCLUDE = {"include", "use", "mention", "contain", "with", "feature", "incorporate"}
_EXCLUDE = {"avoid", "without", "never", "not", "don't", "no", "refrain"}


def _tokens(sentence: str) -> list[str]:
    return re.findall(r"\"[^\"]*\"|'[^']*'(?=\W|$)|[a-z']+|\d+", sentence)


def _value(tok: str) -> int | None:
    if tok.isdigit():
        return int(tok)
    return _NUMS.get(tok)


def _unit(tok: str) -> str | None:
    base = tok[:-1] if tok.endswith("s") else tok
    return _UNIT.get(base)


def _direction(before: list[str], after: list[str]) -> tuple[str, bool]:
    """("max" | "min" | "exact", strict) from the words around a number; a negation earlier in the clause
    turns the direction around ("no bullet longer than 10 words" is at most 10)."""
    near = before[-4:]
    joined = " ".join(near)
    tail = " ".join(after[:3])
    if re.search(
        r"\b(?:no|not|never) (?:more|longer|greater)\b|\bnot exceed|\bno more\b", joined
    ) or re.search(r"\bor (?:fewer|less)\b", tail):
        return "max", False
    if re.search(r"\b(?:no|not) (?:fewer|less|shorter)\b", joined) or re.search(r"\bor more\b", tail):
        return "min", False
    up = [w for w in near if w in _UP] + [w for w in after[:3] if w in ("max", "maximum", "tops")]
    down = [w for w in near if w in _DOWN] + [w for w in after[:3] if w in ("minimum", "min")]
    if up and not down:
        kind, strict = "max", up[-1] in _STRICT
    elif down and not up:
        kind, strict = "min", down[-1] in _STRICT
    else:
        return "exact", False
    if set(before) & _NOT:
        return ("min" if kind == "max" else "max"), not strict
    return kind, strict


def _bounded(rule: str, n: int, kind: str, strict: bool) -> dict[str, Any]:
    if kind == "max":
        return {"rule": rule, "max": n - 1 if strict else n}
    if kind == "min":
        return {"rule": rule, "min": n + 1 if strict else n}
    return {"rule": rule, "min": n, "max": n}


_SMALL = {**{w: n for w, n in NUMBER_WORDS.items() if 1 <= n <= 10}, "a": 1, "single": 1}


def _num(tok: str) -> int | None:
    return int(tok) if tok.isdigit() else _SMALL.get(tok)


def _num_after(words: list[str], *keys: str, within: int = 4) -> int | None:
    """The first number within ``within`` tokens after any of ``keys``."""
    for i, w in enumerate(words):
        if w in keys:
            for t in words[i + 1 : i + 1 + within]:
                if _num(t) is not None and t not in ("a", "single"):
                    return _num(t)
    return None


def _composed(sentence: str, caps: Sequence[str]) -> tuple[list[dict[str, Any]], str]:
    """Composed rules (issue 25) read by keywords, written apart from :mod:`rlar.tasks.reading_shapes`: which
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
    if "table" in ws or "csv" in ws:
        c = {"rule": "table", "format": "markdown" if "markdown" in ws else "csv"}
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

    def each(u: str, test: str, arg: Any = None) -> None:
        c = {"rule": "each", "unit": u, "test": test}
        if arg is not None:
            c["arg"] = arg
        out.append(c)

    if "prime" in ws:
        each("number", "prime")
    for parity in ("even", "odd"):
        if re.search(rf"\b{parity} (?:numbers|integers|number)\b", sentence):
            each("number", parity)
    mult = re.search(r"\bmultiples of (\d+)\b", sentence)
    if mult and not ws & {"no", "not", "none", "never", "without", "avoid"}:
        each("number", "divisible", int(mult.group(1)))
        sentence = _blanked(sentence, [r"of \d+"])
        numberish = True
        unit = "number"
    if "divisible" in ws:
        k = _num_after(words, "by", within=1)
        if k is not None:
            each("number", "divisible", k)
    if ws & {"digit", "digits"} and "sum" in ws:
        k = _num_after(words, "to", "is", "of", within=2)
        if k is not None:
            each("number", "digit_sum", k)
    if dates and "yyyy-mm-dd" in sentence:
        each("line", "date")
    if colours:
        each("line", "hex_colour")
    if ws & {"palindrome", "palindromes"}:
        each("word" if ws & {"word", "words"} and not ws & {"letter", "letters"} else "answer", "palindrome")
    if ws & {"capitalized", "capitalised"}:
        each("word", "capitalized")
    if "punctuation" in ws and ws & {"end", "ends", "finish", "finishes", "ending"}:
        each("line" if ws & {"line", "lines"} else "sentence", "ends_punct")
        blank.append("punctuation mark")
    mark = re.search(
        r"\bend\w*\s+(?:with|in)\s+an?\s+(question|exclamation) mark\b|\bend\w*\s+(?:with|"
        r"in)\s+an?\s+(period|full stop)\b",
        sentence,
    )
    question = re.search(
        r"\b(?:each|every|all) (?:of the )?(sentences?|lines?) (?:must |should |has to |have to |needs to |will )?"
        r"(?:be|is|are) (?:an? )?questions?\b",
        sentence,
    )
    if question and not ws & {"no", "not", "never"}:  # "every sentence must be a question"
        each("line" if question.group(1).startswith("line") else "sentence", "ends_with", "?")
        blank.append(question.group(0))
    if mark and ws & {"every", "each", "all"} and ws & {"line", "lines", "sentence", "sentences"}:
        each(
            "line" if ws & {"line", "lines"} else "sentence",
            "ends_with",
            "?" if mark.group(1) == "question" else "!" if mark.group(1) else ".",
        )
        blank.append(mark.group(0))
    wl = re.search(
        r"\b(?:every|each) word (?:has|with|having|is|must have|may have|should have) "
        r"(at most|no more than|up to|at least|exactly)?\s*(\d+|one|two|three|four|five|six|seven|eight|nine|ten)"
        r" letters?(?: long)?( or (?:fewer|less|more))?\b",
        sentence,
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
        sentence = _blanked(sentence, [wl.group(0)])
    negation = bool(ws & {"no", "not", "none", "never", "without", "avoid", "nor"}) or "n't" in sentence
    cap = re.search(
        r"\b(?:start|starts|starting|begin|begins|beginning)\s+(?:(each|every) line\s+)?with\s+an?\s+"
        r"(?:capital|upper\s?case|upper-case)(?: letter)?\b",
        sentence,
    )
    if cap and not negation and (ws & {"every", "each", "all"}):
        each("line" if cap.group(1) or unit == "line" else unit, "starts_upper")
        blank.append(cap.group(0))
        sentence = _blanked(sentence, [cap.group(0)])
    fin = re.search(
        r"\b(?:end|ends|ending|finish|finishes|finishing)\s+(?:with|in)\s+the\s+letter\s+'?([a-z])'?(?:\s|$|[,.])"
        r"|\b(?:last|final) letter is\s+(?:the letter\s+)?'?([a-z])'?(?:\s|$|[,.])",
        sentence,
    )
    if fin and not negation and unit in ("word", "line", "sentence"):
        each(unit, "ends_with", fin.group(1) or fin.group(2))
        blank.append(fin.group(0))
        sentence = _blanked(sentence, [fin.group(0)])
    has = re.search(
        r"\b(?:contain|contains|containing|include|includes|including|having|has|have|with)\s+"
        r"(?:at least one |one |an? )?(?:the )?letter\s+'?([a-z])'?(?:\s|$|[,.])",
        sentence,
    )
    if (
        has
        and not negation
        and unit in ("word", "line", "sentence")
        and (
            ws & {"every", "each", "all"}
            or re.search(r"\b(?:words|lines|sentences) (?:that|which)\b", sentence)
        )
    ):
        each(unit, "contains", has.group(1))
        blank.append(has.group(0))
    if ws & {"square", "squares"} and (
        "perfect" in ws or re.search(r"\bsquare (?:numbers|integers)\b", sentence)
    ):
        each("number", "square")
    start = re.search(
        r"\b(?:start|starts|starting|begin|begins|beginning)\s+with\s+(?:the\s+letter\s+)?'?([a-z])'?(?:\s|$|[,.])",
        sentence,
    )
    if start and start.group(1) == "a" and "letter" not in start.group(0):
        start = None  # "starting with a capital" names no letter
    if start and (ws & {"every", "each", "all"}) and unit in ("word", "line", "sentence"):
        each(unit, "starts_with", start.group(1))
        blank.append(start.group(0))

    def order(u: str, rel: str, arg: Any = None) -> None:
        c = {"rule": "order", "unit": u, "rel": rel}
        if arg is not None:
            c["arg"] = arg
        out.append(c)

    if ws & {"alphabetical", "alphabetically"}:
        order("line" if unit == "line" else "word", "alphabetical")
    if "chronological" in ws or re.search(r"\bearliest to latest\b|\boldest to newest\b", sentence):
        order("line", "chronological")
    if ws & {"increasing", "ascending"}:
        order("number", "increasing")
    if ws & {"decreasing", "descending"}:
        order("number", "decreasing")
    less = re.search(
        r"\b(one|1|two|2) (less|more|fewer) than the (?:previous|one before|1 before|number before)", sentence
    )
    down = re.search(r"\b(?:count down|countdown|counting down)\b", sentence)
    span = re.search(r"\bfrom (\d+) (?:down )?to (\d+)\b|\bfrom (\d+) down\b", sentence)
    at = re.search(r"\bstarting (?:at|from) (\d+)\b", sentence)
    if (less and unit == "number") or (less and "number" in sentence) or down or (span and numberish):
        d = _num(less.group(1)) if less else 1
        sign = 1 if less and less.group(2) == "more" else -1
        if span and not less and not down:
            a_, b_ = int(span.group(1) or span.group(3)), int(span.group(2) or 0)
            sign = -1 if b_ < a_ else 1
        order("number", "step", sign * int(d or 1))
    if span and (numberish or down):
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
    elif at and (numberish or down):
        a = int(at.group(1))
        out.append({"rule": "total", "unit": "number", "agg": "first", "min": a, "max": a})
        blank.append(at.group(0))
    if re.search(r"\balternat\w*\b", sentence) and re.search(
        r"\bcase\b|\blower\s?case\b|\bupper\s?case\b|\bcapitals\b", sentence
    ):
        up = re.search(r"\bstart\w*\s+with\s+an?\s+(?:upper\s?case|capital)", sentence)
        order("word", "alternating_case", "upper" if up else "lower")
        blank += [r"lower\s?case", r"upper\s?case", "capitals"]
    grow = re.search(r"\b(one|1|two|2) (?:more word|words? (?:more|longer))\b", sentence)
    if grow:
        order("sentence", "word_growth", _num(grow.group(1)))
        blank.append(grow.group(0))
    if "ladder" in ws or (ws & {"differs", "differ", "change", "changing"} and ws & {"letter"}):
        order("word", "one_letter")
        blank.append(r"(?:exactly )?(?:one|1|a single) letter")
    if "respectively" in ws or "in that order" in sentence or re.search(r"\bfirst line has\b", sentence):
        nums = [int(n) for n in re.findall(r"\b(\d+)\b(?! lines)", sentence)]
        named = re.findall(r"\b(\d+) lines\b", sentence)
        if len(nums) >= 2:
            order("line", "word_counts", nums)
            blank.append(r"\b\d+\b(?! lines)")
        del named
    if (
        "acrostic" in ws
        or re.search(r"\bfirst letters\b.*\bspell", sentence)
        or "letters of the word" in sentence
    ):
        word = next((c for c in caps if c in ws), None)
        if word is None:
            m = re.search(r"\b(?:spell(?:s|ing)?(?: out)?|the word|of)\s+'?([a-z]{2,})'?", sentence)
            word = m.group(1) if m else None
        if word:
            out.append({"rule": "spell", "unit": "line", "text": word})
            blank += ["letters", "letter"]
    total = re.search(r"\b(?:sum is|sum of|add up to|adds up to|sums to|totals?) (\d+)\b", sentence)
    if total and not re.search(r"\bdigits?\s*$", sentence[max(0, total.start() - 12) : total.start()]):
        n = int(total.group(1))
        out.append({"rule": "total", "unit": "number", "agg": "sum", "min": n, "max": n})
        blank.append(total.group(0))
    if (
        "nothing else" in sentence
        and ws & {"numbers", "integers"}
        and not ws & {"word", "words", "letters", "json"}
    ):
        out.append({"rule": "only", "what": "numbers"})
        blank.append("nothing else")
    if re.search(r"\b(?:a|one|1) (?:number|integer) (?:whose|that|which)\b", sentence):
        out.append({"rule": "only", "what": "integer"})
    lines = re.search(
        r"\b(\d+|"
        + "|".join(_SMALL)
        + r") (?:dates|colours|colors|hex colou?r codes|hex codes|colou?r codes)\b",
        sentence,
    )
    if lines and _num(lines.group(1)):
        out.append({"rule": "lines", "min": _num(lines.group(1)), "max": _num(lines.group(1))})
        blank.append(lines.group(0))
    ints = re.search(
        r"\b(\d+|"
        + "|".join(_SMALL)
        + r") (?:even |odd |prime |positive |square |perfect )?(?:integers|whole numbers|numbers|squares|"
        r"primes|multiples)\b",
        sentence,
    )
    if ints and _num(ints.group(1)):
        out.append({"rule": "numbers", "min": _num(ints.group(1)), "max": _num(ints.group(1))})
        blank.append(ints.group(0))
    if re.search(r"\b(?:one|1|a single) number (?:per|on each|on a|a) line\b", sentence):
        out.append({"rule": "numbers", "per": "line", "min": 1, "max": 1})
        blank.append(r"(?:one|1|a single) number (?:per|on each|on a|a) line")
    if per_line:
        blank.append(r"(?:one|1) (?:per|on each|a) line")
    if "json" in ws:
        out.append({"rule": "json"})
    return out, _blanked(sentence, blank)


_ORDINAL = {
    "first": 1,
    "1st": 1,
    "second": 2,
    "2nd": 2,
    "third": 3,
    "3rd": 3,
    "fourth": 4,
    "4th": 4,
    "fifth": 5,
    "5th": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "last": -1,
    "final": -1,
}
_PER = {"paragraph": "paragraph", "line": "line", "sentence": "sentence", "bullet": "item", "item": "item"}


def _positional(sentence: str, whole: str) -> tuple[list[dict[str, Any]], str]:
    """Positions, per-unit word endings, absent letters, word lists, one sentence, one word per line and words
    in capitals (issue 25, third round), read by token windows apart from :mod:`rlar.tasks.reading_compose`;
    what is read is blanked so the general windows below do not read it again. Fourth round: a one-word answer's
    first letters (``starts with 'un'``), ``none using the word 'x'`` (a ban), ``the letter that ended the
    previous word`` (a chain), ``N fully capitalized words`` (a count of words in capitals)."""
    out: list[dict[str, Any]] = []
    toks = _tokens(sentence)
    neg = bool(set(toks) & _NOT)
    for i, tok in enumerate(toks[:-1]):
        k = _ORDINAL.get(tok)
        if k is None or toks[i + 1] not in ("word", "letter") or neg:
            continue
        q = next((t for t in toks[i + 2 : i + 9] if t[:1] in "\"'" and len(t) > 2), None)
        if toks[i + 1] == "letter":
            single = next((t for t in toks[i + 2 : i + 6] if len(t) == 1 and t.isalpha()), None)
            letter = q[1:-1] if q and len(q) == 3 else single
            if (
                letter
                and re.search(r"\b(?:a|one|single)\s+word\b", whole)
                and not re.search(r"\beach|\bevery", whole)
            ):
                out.append({"rule": "at", "unit": "letter", "index": k, "text": letter})
                sentence = sentence.replace(q or f" {letter}", " ", 1)
            continue
        if q is None or not re.fullmatch(r"[a-z][\w'-]*", q[1:-1]):
            continue
        word = q[1:-1]
        if "each" in toks[:i] or "every" in toks[:i]:
            continue
        out.append(
            {"rule": "starts_with", "text": word}
            if k == 1
            else {"rule": "ends_with", "text": word}
            if k == -1
            else {"rule": "at", "unit": "word", "index": k, "text": word}
        )
        sentence = sentence.replace(q, " ", 1)
    one_word = re.search(r"\b(?:a|one|single) word\b", whole) and not re.search(r"\beach|\bevery", whole)
    pre = re.search(
        r"\b(?:start|starts|starting|begin|begins|beginning) with (?:the letters )?'([a-z]{2,6})'", sentence
    )
    if one_word and pre and not neg:  # one word's beginning: its first letters, one by one
        out += [
            {"rule": "at", "unit": "letter", "index": i + 1, "text": ch} for i, ch in enumerate(pre.group(1))
        ]
        sentence = sentence.replace(pre.group(0), " ", 1)
    ends = {"end", "ends", "ending", "finish", "finishes", "finishing", "conclude", "concludes"}
    if set(toks) & ends and set(toks) & {"each", "every", "all"} and not neg:
        scope = next((_PER[t.rstrip("s")] for t in toks if t.rstrip("s") in _PER), None)
        q = next((t for t in toks if t[:1] in "\"'" and len(t) > 3), None)
        if scope and q and re.fullmatch(r"[a-z][\w'-]*", q[1:-1]):
            out.append({"rule": "ends_with", "text": q[1:-1], "per": scope})
            sentence = sentence.replace(q, " ", 1)
    begins = {"start", "starts", "starting", "begin", "begins", "beginning", "open", "opens"}
    if set(toks) & begins and set(toks) & {"each", "every", "all"} and not neg:
        scope = next((_PER[t.rstrip("s")] for t in toks if t.rstrip("s") in _PER), None)
        q = next((t for t in toks if t[:1] in "\"'" and len(t) > 2), None)
        if scope and q and re.fullmatch(r"[a-z][\w'-]*", q[1:-1]) and not (len(q) == 3 and "letter" in toks):
            out.append({"rule": "starts_with", "text": q[1:-1], "per": scope})
            sentence = sentence.replace(q, " ", 1)
    if re.search(r"\bno (?:bullet|line|sentence|paragraph|item)s?\b", sentence) and set(toks) & {
        "contain",
        "contains",
        "include",
        "includes",
        "use",
        "uses",
        "mention",
    }:
        for q in [t for t in toks if t[:1] in "\"'" and len(t) > 2]:
            out.append({"rule": "exclude", "words": [q[1:-1]]})
            sentence = sentence.replace(q, " ", 1)
    for m in re.finditer(
        r"\bnone(?: of (?:them|these|those|the \w+))? (?:may |should |can |must )?(?:using|containing|including|"
        r"mentioning|with|uses?|contains?|includes?|mentions?|has|have) (?:the )?(?:words? |phrases? )?"
        r"((?:'[^']+'|\"[^\"]+\")(?:\s*(?:,|or|and)\s*(?:'[^']+'|\"[^\"]+\"))*)",
        sentence,
    ):
        out.append(
            {"rule": "exclude", "words": [w[1:-1] for w in re.findall(r"'[^']+'|\"[^\"]+\"", m.group(1))]}
        )
        sentence = sentence.replace(m.group(0), " ", 1)
    for m in re.finditer(
        r"\b(?:no|without\s+(?:using\s+)?(?:the|any))\s+(?:letter\s+)?(?:'([a-z])'|(?<=letter )([a-z]))(?=\W|$)",
        sentence,
    ):
        out.append({"rule": "letter", "letter": m.group(1) or m.group(2), "max": 0})
    if out and any(c["rule"] == "letter" for c in out):
        sentence = re.sub(
            r"\b(?:no|without\s+(?:using\s+)?(?:the|any))\s+(?:letter\s+)?(?:'[a-z]'|(?<=letter )[a-z])(?=\W|$)",
            " ",
            sentence,
        )
    listed = next(
        (
            m
            for m in re.finditer(
                r"\b(?:words|concepts|terms)\b\s*:?\s*([a-z]+(?:\s*,\s*[a-z]+)*(?:\s*,?\s*(?:and|&)\s+[a-z]+)?)\b",
                sentence,
            )
            if re.search(r",|\band\b|&", m.group(1))
        ),
        None,
    )
    if listed and re.search(
        r"\b(?:use|uses|using|include|includes|including|contain|contains|containing|mention|all)\b", sentence
    ):
        names = [w for w in re.split(r"\s*,\s*|\s+(?:and|&)\s+|,?\s*and\s+", listed.group(1)) if w]
        if len(names) >= 2 and not set(names) & {"a", "an", "the", "in", "of", "to", "your", "it"}:
            out.append({"rule": "include", "words": names})
            sentence = sentence[: listed.start(1)] + " " + sentence[listed.end(1) :]
    hyph = re.search(r"\b(\d+)-word\s+sentence\b", sentence)
    if hyph:
        out += [
            {"rule": "sentences", "min": 1, "max": 1},
            {"rule": "words", "min": int(hyph.group(1)), "max": int(hyph.group(1))},
        ]
        sentence = sentence.replace(hyph.group(0), " ")
    elif re.search(
        r"(?:^|\band\s+)\s*(?:write|give|compose|reply with|answer with|"
        r"use)\b[^,]{0,12}?\ba (?:single )?sentence\b(?! or\b| and\b)",
        sentence,
    ):
        out.append({"rule": "sentences", "min": 1, "max": 1})
    bare_end = re.search(
        r"\b(end|finish|conclude|start|begin)\w*\s+(?:your|the)\s+(?:answer|response|reply)\s+with\s+the\s+word\s+([a-z][\w'-]*)\s*$",
        sentence,
    )
    if bare_end and not neg:
        rule = "starts_with" if bare_end.group(1) in ("start", "begin") else "ends_with"
        out.append({"rule": rule, "text": bare_end.group(2)})
        sentence = sentence[: bare_end.start()]
    if re.search(r"\b(?:smallest|lowest) to (?:the )?(?:largest|highest)\b", sentence):
        out.append({"rule": "order", "unit": "number", "rel": "increasing"})
    elif re.search(r"\b(?:largest|highest) to (?:the )?(?:smallest|lowest)\b", sentence):
        out.append({"rule": "order", "unit": "number", "rel": "decreasing"})
    if re.search(
        r"\b(?:all|written|entirely) in (?:capital letters|capitals|upper\s?case)\b", sentence
    ) and not re.search(r"\d+\s+words?\s+(?:\w+\s+){0,2}(?:all|written|entirely) in", sentence):
        out.append({"rule": "uppercase"})
    if re.search(
        r"^\s*(?:write|give|reply with|answer with)\s+(?:me\s+)?a\s+word\s+(?:of|with|that|which|whose)\b",
        sentence,
    ):
        out.append({"rule": "words", "min": 1, "max": 1})
    ended = bool(
        re.search(
            r"\bletter (?:that|which) (?:ended|ends) the (?:previous|preceding|prior|last) word\b", sentence
        )
    )
    if (
        "letter" in toks
        and set(toks) & {"previous", "preceding", "before"}
        and (set(toks) & {"last", "final"} or ended)
    ):
        if set(toks) & {"start", "starts", "begin", "begins", "starting", "beginning"}:
            out.append({"rule": "order", "unit": "word", "rel": "chain"})
    one_quoted = any(t[:1] in "\"'" for t in toks) and not re.search(
        r"\b(?:no|every|each|any) words?\b", sentence
    )
    if (
        re.search(
            r"\b(?:repeated|repeating|duplicate)\b|\bmore than once\b|\b(?:different|distinct|unique)\b",
            sentence,
        )
        and ("word" in toks or "words" in toks)
        and not one_quoted
    ):
        if neg or re.search(r"\b(?:different|distinct|unique)\b", sentence):
            out.append({"rule": "order", "unit": "word", "rel": "distinct"})
    whole_caps = re.search(
        r"^\s*(?:write|give|list|reply with|answer with)\s+(?:me\s+)?(?:exactly\s+)?(\d+)\s+words\s+(?:all"
        r"\s+)?(?:written\s+)?in\s+(?:all\s+)?(?:capital letters|capitals|caps|upper\s?case)\b",
        sentence,
    )
    if whole_caps:
        out.append({"rule": "uppercase"})
        sentence = sentence[: whole_caps.end(1)] + " words" + sentence[whole_caps.end() :]
    whole_mark = re.search(
        r"\b(?:end|ends|finish|finishes|conclude|concludes|close)\s+(?:(?:your|the)\s+(?:entire\s+|whole\s+)?"
        r"(?:answer|response|reply|text|message)\s+)?with\s+an?\s+(exclamation (?:mark|point)|question mark|"
        r"period|full stop)\b",
        sentence,
    )
    if whole_mark and not neg and not set(toks) & {"each", "every", "all"}:  # "End with an exclamation mark."
        out.append(
            {
                "rule": "ends_with",
                "text": {"question mark": "?", "period": ".", "full stop": "."}.get(whole_mark.group(1), "!"),
            }
        )
        sentence = sentence.replace(whole_mark.group(0), " ", 1)
    ends_mark = re.search(
        r"\b(?:each|every|all)\b[^.]*?\b(?:end|ends|ending|finish\w*)\s+(?:with|in)\s+an?\s+(period|"
        r"full stop|question mark|exclamation (?:mark|point))\b",
        sentence,
    )
    if ends_mark and not neg:
        scope = next(
            (_PER[t.rstrip("s")] for t in toks if t.rstrip("s") in ("bullet", "item", "paragraph")), None
        )
        if scope:
            mark = {"period": ".", "full stop": ".", "question mark": "?"}.get(ends_mark.group(1), "!")
            out.append({"rule": "ends_with", "text": mark, "per": scope})
    fully = re.search(
        r"\b(\d+|one|two|three|four|five)\s+(?:fully|entirely|completely|wholly)[- ]capitali[sz]ed\s+words?\b",
        sentence,
    )
    if fully:
        n = _value(fully.group(1))
        kind, strict = _direction(sentence[: fully.start()].split()[-3:], [])
        if n is not None:
            out.append(_bounded("capital_words", n, kind, strict))
            sentence = sentence.replace(fully.group(0), " ")
    caps = re.search(
        r"\b(?:exactly\s+)?(\d+|two|three|four|five)\s+words?\s+(?:are\s+|"
        r"is\s+)?(?:written\s+)?(?:in\s+)?(?:all\s+)?(?:capital letters|capitals|caps|upper\s?case)\b",
        sentence,
    )
    if caps:
        n = _value(caps.group(1))
        before = sentence[: caps.start()].split()[-3:]
        kind, strict = _direction(before, [])
        if n is not None:
            out.append(_bounded("capital_words", n, kind, strict))
            sentence = sentence.replace(caps.group(0), " ")
    upper = re.search(
        r"\b(\d+|two|three|four|five|six|seven|eight)\s+(?:upper\s?case|all-caps)\s+words\b",
        sentence,
    )
    if upper:
        out.append({"rule": "uppercase"})
        sentence = sentence.replace(upper.group(0), f"{upper.group(1)} words")
    return out, sentence


def _blanked(sentence: str, patterns: Sequence[str]) -> str:
    for p in patterns:
        sentence = re.sub(p if any(ch in p for ch in "\\(?[") else re.escape(p), " ", sentence)
    return sentence


def second_reading(text: str) -> list[dict[str, Any]]:
    """Constraints read by token windows (see the module docstring); canonical order."""
    out: list[dict[str, Any]] = []
    low = re.sub(r"(\d+)\s*\+", r"\1 or more", text.lower())
    # "(counts, lowercase, json keys, ...)" lists examples of rules, it does not require them.
    low = re.sub(r"\([^()]*,[^()]*,[^()]*\)", " ", low)
    low = low.replace("“", '"').replace("”", '"').replace("‘", "'").replace("’", "'")
    low = re.sub(
        r"\b(?:no|not) (?:fewer|less) than (\w+) (?:and|but) (?:no|not) more than (\w+)\b"
        r"|\bat least (\w+) (?:and|but) (?:at most|no more than) (\w+)\b",
        lambda m: f"between {m.group(1) or m.group(3)} and {m.group(2) or m.group(4)}",
        low,
    )
    caps = [
        w.lower()
        for w in re.findall(r"\b[A-Z]{2,}\b", text)
        if w not in ("JSON", "CSV", "YAML", "YYYY", "MM", "DD")
    ]
    for sentence in re.split(r"[.;!?\n]+(?=\s|$)", low):
        first = len(out)
        placed, sentence = _positional(sentence, low)
        out += placed
        found, sentence = _composed(sentence, caps)
        out += found
        toks = _tokens(sentence)
        quoted = [t[1:-1] for t in toks if t[:1] in "\"'" and len(t) > 2]
        words = [t for t in toks if t[:1] not in "\"'"]
        # where each comma-separated part of the sentence starts: a negation turns around the counts of its own
        # part only ("in all lowercase with no commas, in at most 12 words" is at most 12)
        part_starts: list[int] = []
        k0 = 0
        for part in sentence.split(","):
            part_starts.append(k0)
            k0 += len([t for t in _tokens(part) if t[:1] not in "\"'"])
        used: set[int] = set()
        for i, tok in enumerate(words):
            n = _value(tok)
            if n is None or i in used or tok in ("once", "twice", "thrice"):
                continue
            if tok == "one" and i + 1 < len(words) and words[i + 1] == "of":  # "every one of the words"
                continue
            if i + 1 < len(words) and words[i + 1] in ("st", "nd", "rd", "th"):  # "the 1st word": a position
                continue
            part0 = max((k for k in part_starts if k <= i), default=0)
            j = next((j for j in range(i + 1, min(len(words), i + 4)) if _unit(words[j])), None)
            if j is None:
                continue
            unit = str(_unit(words[j]))
            if unit == "sections" and "highlight" in sentence:
                unit = "highlights"
            if unit == "items" and "numbered" in sentence:
                unit = "numbered"
            n2 = _value(words[i + 2]) if i + 2 < len(words) and words[i + 1] in ("and", "to", "or") else None
            if n2 is not None and n2 > n:
                used.add(i + 2)
                c: dict[str, Any] = {"rule": unit, "min": n, "max": n2}
            else:
                c = _bounded(unit, n, *_direction(words[part0:i], words[i + 1 :]))
            scope_words = [w for w in words if w.rstrip("s") in _SCOPE]
            scopes = [_SCOPE[w.rstrip("s")] for w in scope_words if _UNIT.get(w.rstrip("s")) != unit]
            if set(words) & {"each", "every", "per", "none", "any", "no", "all"} and scopes:
                small = unit in ("letters", "chars", "syllables")
                marked = [
                    _SCOPE[w.rstrip("s")]
                    for k, w in enumerate(words)
                    if w.rstrip("s") in _SCOPE
                    and _UNIT.get(w.rstrip("s")) != unit
                    and k > 0
                    and words[k - 1] in ("each", "every", "per", "no", "any", "all")
                ]
                scope = marked[0] if marked else scopes[0]
                if (scope == "word" and small) or (
                    scope != "word" and unit in ("words", "chars", "letters", "syllables", "sentences")
                ):
                    if not (unit == "sentences" and scope == "sentence"):
                        c["per"] = scope
            if unit == "letters" and words[max(0, i - 2) : i] in (["words", "of"], ["words", "with"]):
                c["per"] = "word"  # "words of 5 letters"
            elif (
                unit == "letters" and "words" in words[max(0, i - 5) : i] and "of" in words[max(0, i - 5) : i]
            ):
                c["per"] = "word"  # "words of at most 3 letters"
            out.append(c)
        times = re.search(r"\b(\w+)\s+times\b|\b(once|twice|thrice)\b", sentence)
        bare_letter = re.search(r"\bletter ([a-z])\b(?! *')", sentence)
        if bare_letter and times and not quoted:  # "use the letter q at least twice": an unquoted letter
            quoted = [bare_letter.group(1)]
        if re.search(r"\b(?:one of|either)\b", sentence) and len(quoted) >= 2:
            out.append({"rule": "one_of", "options": quoted})
            continue
        for q in quoted:
            word = (times.group(1) or times.group(2)) if times else ""
            k = _value(word) if times else None
            if k is not None and word in words:
                at = words.index(word)
                kind, strict = _direction(words[:at], words[at + 1 :])
                rule = (
                    {"rule": "letter", "letter": q}
                    if len(q) == 1 and "letter" in words
                    else {"rule": "occurs", "text": q}
                )
                b = _bounded("x", k, kind, strict)
                out.append({**rule, **{key: v for key, v in b.items() if key != "rule"}})
                continue
            starts = ("start", "begin", "open", "starts", "begins", "opens", "starting", "beginning")
            if set(starts) & set(words):
                at = next(k for k, w in enumerate(words) if w in starts)
                neg = bool(_NOT & set(words[max(0, at - 4) : at]))
                if neg:
                    out.append(
                        {"rule": "not_starts_with", "text": q, "per": "sentence"}
                        if "sentence" in " ".join(words)
                        else {"rule": "not_starts_with", "text": q}
                    )
                else:
                    out.append({"rule": "starts_with", "text": q})
            elif {"end", "finish", "conclude", "close", "ends", "finishes", "ending"} & set(words):
                out.append({"rule": "ends_with", "text": q})
            elif "json" in low or {"key", "keys", "field", "fields"} & set(words):
                continue
            elif set(words) & _EXCLUDE:
                if len(q) == 1 and "letter" in words:
                    out.append({"rule": "letter", "letter": q, "max": 0})
                else:
                    out.append({"rule": "exclude", "words": [q]})
            elif set(words) & _INCLUDE:
                out.append({"rule": "include", "words": [q]})
        # a list form without a count of its own: "use bullet points", "as numbered steps"
        listed = {
            "bullets": bool(
                re.search(
                    r"(?<!each )(?<!every )\b(?:bullet(?:ed)?[- ]?(?:points|list|form)|bullets)\b", sentence
                )
            ),
            "numbered": bool(re.search(r"\bnumbered (?:list|steps|items|points|lines)\b", sentence)),
        }
        for unit, named in listed.items():
            if named and not any(c["rule"] in ("bullets", "numbered", "items") for c in out[first:]):
                no = bool(set(words) & {"no", "not", "without", "avoid", "never", "don't", "refrain"})
                out.append({"rule": unit, "max": 0} if no else {"rule": unit, "min": 2})
                break
        if re.search(r"\blower\s?case\b|\bno capital|without capital|\bsmall letters", sentence):
            out.append({"rule": "lowercase"})
        if re.search(r"\bcommas?\b", sentence) and set(words) & {
            "no",
            "not",
            "without",
            "avoid",
            "refrain",
            "never",
        }:
            if not any(
                _value(w) is not None and "comma" in " ".join(words[k + 1 : k + 3])
                for k, w in enumerate(words)
            ):
                out.append({"rule": "commas", "max": 0})
        for name, code in _LANG.items():
            if re.search(rf"\bin {name}\b", sentence):
                out.append({"rule": "language", "lang": code})
        negated = bool(set(words) & {"no", "not", "without", "avoid", "never", "don't", "refrain"})
        counted = bool(re.search(r"\d+\s+\w*\s*(?:words?|letters?)\b", sentence))
        if re.search(
            r"\bcapitali[sz]e\b.*\b(?:every|each|all)\s+words?\b|\btitle case\b|\binitial capital", sentence
        ):
            out.append({"rule": "title_case"})
        elif (
            re.search(r"\b(?:capital letters|capitals|caps|upper\s?case)\b", sentence)
            and not negated
            and not counted
        ):
            out.append({"rule": "uppercase"})
        if re.search(r"\bquot(?:ation marks|es|e marks)\b", sentence) and re.search(
            r"\b(?:wrap|enclose|put|inside|within|surround)", sentence
        ):
            out.append({"rule": "quoted"})
        if "<<" in sentence or re.search(r"\bang(?:ular|le) brackets\b", sentence):
            out.append({"rule": "title"})
        if re.search(r"\bpostscript\b|\bp\.\s?s\b", sentence) and not re.search(r"\bp\.\s?p\.\s?s", sentence):
            # "P.S." only where the mark is named; a bare "postscript" names no marker (any one counts)
            ps_named = re.search(r"\bp\.\s?s\b", sentence) is not None
            out.append({"rule": "postscript", **({"text": "P.S."} if ps_named else {})})
        for noun, mark in (("exclamation", "exclamations"), ("question mark", "questions")):
            if noun in sentence and negated and not re.search(r"\d+\s+" + noun, sentence):
                out.append({"rule": mark, "max": 0})
        if re.search(r"\b(?:digits?|numerals?)\b", sentence) and not counted:
            out.append({"rule": "numbers", "max": 0} if negated else {"rule": "numbers", "min": 1})
        if re.search(r"\bvowels?\b", sentence) and negated:
            out.append({"rule": "letter", "letter": "aeiou", "max": 0})
        cls = re.search(
            r"\b(?:(capital |uppercase |lowercase )?letters|digits) only\b|\b(?:only|nothing but|solely)"
            r" (?:(capital |uppercase |lowercase )?letters|digits)\b(?! or)",
            sentence,
        )
        head = ((cls.group(1) or cls.group(2) or "").strip() if cls else "") or ""
        if cls and head and re.search(r"\b(?:sentences?|words|commas?|paragraphs?|lines)\b", low):
            # "use only lowercase letters ... write 3 sentences": the case of the letters, not letters alone
            out.append({"rule": "lowercase"} if head == "lowercase" else {"rule": "uppercase"})
        elif cls and not re.search(r"\bonly \d", sentence[cls.start() : cls.end()]):
            what = (
                "digits"
                if "digits" in cls.group(0)
                else {"capital": "capitals", "uppercase": "capitals", "lowercase": "lowercase_letters"}.get(
                    head, "letters"
                )
            )
            out.append({"rule": "only", "what": what})
        only = re.search(r"\b(?:a|one|single|just a|only a)\s+(number|integer)\b", sentence)
        if only and re.search(r"\bonly\b|\bnothing else\b|\bjust\b", sentence):
            out.append({"rule": "only", "what": only.group(1)})
        if "json" in low and re.search(r"\bkeys?\b|\bfields?\b", sentence):
            typed = re.findall(
                r"['\"]?(\w+)['\"]?\s*\((?:an? )?(string|integer|number|boolean|list of strings|list)\)",
                sentence,
            )
            if typed:
                names = {"list of strings": "list_of_strings"}
                out.append(
                    {
                        "rule": "json_keys",
                        "keys": [k for k, _ in typed],
                        "types": {k: names.get(t, t) for k, t in typed},
                    }
                )
        if "json" in low and re.search(r"\bkeys?\b|\bfields?\b", sentence):
            keys = [q for q in quoted if re.fullmatch(r"[\w ]+", q)]
            bare = re.search(
                r"\b(?:keys?|fields?)\b\s*:?\s*((?:[a-z_]\w*\s*(?:,\s*(?:and\s+)?|\band\s+|$))+)", sentence
            )
            if not keys and bare:
                keys = [k for k in re.split(r"\s*,\s*|\s+and\s+|\s+", bare.group(1)) if k and k != "and"]
            if keys:
                out.append({"rule": "json_keys", "keys": keys})
    single = {c["rule"] for c in out if not c.get("per") and c.get("min") == c.get("max") == 1}
    for c in out:  # one sentence: its words are the answer's (one word: its letters)
        if (c["rule"], c.get("per")) in (("words", "sentence"), ("letters", "word"), ("chars", "line")) and (
            {"words": "sentences", "letters": "words", "chars": "lines"}[c["rule"]]
        ) in single:
            c.pop("per")
    toks = _tokens(low)
    windows = {
        ("one", "per", "line"),
        ("on", "each", "line"),
        ("its", "own", "line"),
        ("a", "separate", "line"),
        ("on", "separate", "lines"),
        ("their", "own", "line"),
    }
    per_line = any(tuple(toks[i : i + 3]) in windows for i in range(len(toks)))
    exact_words = [
        c for c in out if c["rule"] == "words" and not c.get("per") and c.get("min") == c.get("max")
    ]
    laid_out = {"lines", "numbers", "items", "bullets", "each", "order", "spell", "total"}
    if per_line and exact_words and not any(c["rule"] in laid_out and c.get("unit") != "word" for c in out):
        n = exact_words[0]["min"]
        out += [{"rule": "lines", "min": n, "max": n}, {"rule": "words", "per": "line", "min": 1, "max": 1}]
    try:
        return canonical(out)
    except ValueError:
        return []


def _merge_key(c: Mapping[str, Any]) -> str:
    return "|".join(
        str(c.get(k, "")) for k in ("rule", "per", "text", "letter", "unit", "test", "rel", "agg")
    )


def _merged(mine: Sequence[Mapping[str, Any]], primary: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The second reading, completed from ``primary`` where it is silent (see :func:`write_probes`)."""
    by_key = {_merge_key(c): dict(c) for c in primary}
    for c in mine:
        base = by_key.get(_merge_key(c), {})
        new = {**{k: v for k, v in base.items() if k not in c and k not in ("min", "max")}, **c}
        for k in ("keys", "words", "options"):  # items it did not name: silent about them, not against them
            if k in base and k in c:
                new[k] = [*c[k], *(v for v in base[k] if v not in c[k])]
        if "types" in base and "types" in c:
            new["types"] = {**base["types"], **c["types"]}
        by_key[_merge_key(c)] = new
    return canonical(by_key.values())


def independent_constraints(text: str, primary: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """The second reading of ``text`` completed from ``primary`` (empty when it reads nothing): what the canary
    labels live responses with."""
    mine = second_reading(text)
    return _merged(mine, primary) if mine else []


def write_probes(
    description: str, examples: Sequence[Mapping[str, Any]] = (), primary: Sequence[Mapping[str, Any]] = ()
) -> list[dict[str, Any]]:
    """Labelled probes from :func:`second_reading` of the description and the first example's query.

    Constraints the second reading is silent about (``primary`` ones of a rule and scope it did not read, and
    parameters it did not set, such as JSON value types) are taken from ``primary`` so the good probe does not
    break what only the main reader understood; the bad probes break the second reading's own constraints
    only. Where both read a constraint, the second reading's parameters win: a disagreement shows up as a good
    probe the verifier fails or a bad one it passes."""
    query = str((examples[0].get("query") if examples else "") or "")
    text = f"{description}\n{query}" if query and query not in description else description
    mine = second_reading(text)
    if not mine:
        return []
    merged = _merged(mine, primary)
    out: list[dict[str, Any]] = []
    try:
        good = build(merged, query)
        bad = violations(merged, query)
    except Exception:  # no probes rather than a crash: the candidate is then rejected for want of them
        return []
    if all(holds(c, good) for c in merged):
        out.append(
            {"query": query, "response": good, "label": "good", "why": "second reading: all constraints"}
        )
    own = {str(c["rule"]) + (f"/{c['per']}" if c.get("per") else "") for c in mine}
    for why, text in bad:
        target = why.split(":")[0]
        if target not in own:
            continue
        broken = [c for c in merged if target == str(c["rule"]) + (f"/{c['per']}" if c.get("per") else "")]
        if broken and not all(holds(c, text) for c in broken):
            out.append({"query": query, "response": text, "label": "bad", "why": f"second reading: {why}"})
    return out


def _offline_probes(context: Mapping[str, Any], embed: Any) -> dict[str, Any]:
    """The offline backend's answer to ``submit_probes``: :func:`write_probes` (no model, no embeddings), and
    ``read``: the constraints the second reading itself read (what its probes can vouch for)."""
    examples = context.get("examples", [])
    query = str((examples[0].get("query") if examples else "") or "")
    desc = str(context["description"])
    text = f"{desc}\n{query}" if query and query not in desc else desc
    return {
        "probes": write_probes(desc, examples, context.get("primary", [])),
        "read": second_reading(text),
    }


def vouched_keys(reply: AgentReply) -> set[str] | None:
    """The ``rule/per`` keys the offline second reading read itself (None when the reply does not say: a
    model's probes, which cannot be mapped to constraints)."""
    if not reply.ok:
        return None
    call = reply.call(PROBES_TOOL.name)
    read = call.input.get("read") if call is not None else None
    if not isinstance(read, list):
        return None
    return {constraint_key(c) for c in read if isinstance(c, Mapping) and "rule" in c}


def constraint_key(c: Mapping[str, Any]) -> str:
    """``rule`` or ``rule/per`` (composed rules: ``rule/unit/test``): what a constraint checks, without its
    parameters."""
    if c.get("unit"):
        return f"{c['rule']}/{c['unit']}/{c.get('test', c.get('rel', c.get('agg', '')))}"
    return str(c["rule"]) + (f"/{c['per']}" if c.get("per") else "")


PROBES_TOOL = AgentTool(
    name="submit_probes",
    description=(
        "Submit test responses for a task: some that fully follow the task's instructions (good) and some that"
        " clearly break one of them (bad). They are used to test a reward function written by someone else."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "probes": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "response": {"type": "string"},
                        "label": {"type": "string", "enum": ["good", "bad"]},
                        "why": {"type": "string"},
                    },
                    "required": ["response", "label", "why"],
                },
            }
        },
        "required": ["probes"],
    },
    offline=_offline_probes,
)


def probes_request(
    description: str, examples: Sequence[Mapping[str, Any]], *, max_tokens: int = 2048
) -> AgentRequest:
    """The agent question: write probes from the task alone (our reading of it is not shown)."""
    shown = [{k: e.get(k) for k in ("query", "reference")} for e in list(examples)[:4]]
    text = (
        f"# Task\n{description}\n# Example queries\n{json.dumps(shown, ensure_ascii=False, default=str)[:3000]}\n"
        "Write 2 responses that follow every instruction of the task exactly (label good) and 4 responses that"
        " each clearly break one instruction while following the others (label bad); say in `why` which."
    )
    return AgentRequest(
        system="You write test cases for reward functions. Answer only by calling submit_probes.",
        messages=[{"role": "user", "content": text}],
        tools=[PROBES_TOOL],
        tool_choice=PROBES_TOOL.name,
        max_tokens=max_tokens,
        context={"description": description, "examples": [dict(e) for e in list(examples)[:4]]},
        purpose="write_probes",
    )


def parse_probes(reply: AgentReply) -> list[dict[str, Any]]:
    """Probe dicts from a reply (malformed entries are skipped; a failed reply gives none)."""
    if not reply.ok:
        return []
    call = reply.call(PROBES_TOOL.name)
    if call is None or not isinstance(call.input.get("probes"), list):
        return []
    out = []
    for p in call.input["probes"]:
        if (
            isinstance(p, Mapping)
            and isinstance(p.get("response"), str)
            and p.get("label") in ("good", "bad")
        ):
            out.append(
                {
                    "query": str(p.get("query", "")),
                    "response": p["response"],
                    "label": p["label"],
                    "why": str(p.get("why", ""))[:200],
                }
            )
    return out
