"""The second reading's composed rules (issue 25): what every unit must be, relations between units, totals,
tables and YAML, read by keywords apart from :mod:`rlar.tasks.reading_shapes`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from rlar.synthesis.second.vocab import _SMALL, _blanked, _num, _num_after


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
    if ws & {"digit", "digits"} and ("sum" in ws or re.search(r"\bdigits add up to\b", sentence)):
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
        r"(?<!starting )(?<!beginning )(?<!ending )(?<!starts )(?<!begins )(?<!ends )(?<!start )(?<!begin )(?<!end )"
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
