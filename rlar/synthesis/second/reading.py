"""The second reading's entry point: :func:`second_reading` splits a text into sentences, reads positions and
composed rules first (:mod:`.positional`, :mod:`.composed`), then counts by the token windows around numbers
and quoted strings, and the remaining keyword rules."""

from __future__ import annotations

import re
from typing import Any

from rlar.constraints.vocabulary import canonical
from rlar.synthesis.second.composed import _composed
from rlar.synthesis.second.forms import _forms
from rlar.synthesis.second.layouts import _layouts
from rlar.synthesis.second.marks import _marks
from rlar.synthesis.second.positional import _positional
from rlar.synthesis.second.relations import _relations
from rlar.synthesis.second.units import _units
from rlar.synthesis.second.vocab import (
    _EXCLUDE,
    _INCLUDE,
    _LANG,
    _NOT,
    _SCOPE,
    _UNIT,
    _bounded,
    _direction,
    _tokens,
    _unit,
    _value,
)

_ONCE = {"once": "one", "twice": "two", "thrice": "three"}


def second_reading(text: str) -> list[dict[str, Any]]:
    """Constraints read by token windows (see the module docstring); canonical order."""
    out: list[dict[str, Any]] = []
    low = _prepared(text)
    caps = [
        w.lower()
        for w in re.findall(r"\b[A-Z]{2,}\b", text)
        if w not in ("JSON", "CSV", "YAML", "YYYY", "MM", "DD")
    ]
    for sentence in re.split(r"[.;!?\n]+(?=\s|$)", low):
        out += _sentence_rules(sentence, low, text, caps)
    _one_unit_is_the_answer(out)
    out = _after(out, low)
    _one_per_line(out, low)
    try:
        return canonical(out)
    except ValueError:
        return []


def _prepared(text: str) -> str:
    """The text as the windows read it: lowercased, ``N+`` as ``N or more``, lists of examples dropped, quotes
    straightened, ranges said in two halves as one, the blank line between paragraphs and a count said twice
    dropped."""
    low = re.sub(r"(\d+)\s*\+", r"\1 or more", text.lower())
    # "(counts, lowercase, json keys, ...)" lists examples of rules, it does not require them; a list after
    # "options:" is the options
    low = re.sub(
        r"\([^()]*,[^()]*,[^()]*\)",
        lambda m: (
            m.group(0) if re.search(r"(?:options?|choices?|one of[^.]*?)\s*:?\s*$", low[: m.start()]) else " "
        ),
        low,
    )
    low = low.replace("“", '"').replace("”", '"').replace("‘", "'").replace("’", "'")
    low = re.sub(
        r"\bat least (once|twice|thrice|\w+)(?: times)?,? (?:and|but) (?:at most|no more than|not more than) "
        r"(once|twice|thrice|\w+)"
        r"(?: times)?\b",
        lambda m: (
            f"between {_ONCE.get(m.group(1), m.group(1))} and {_ONCE.get(m.group(2), m.group(2))} times"
        ),
        low,
    )
    low = re.sub(
        r"\b(?:no|not) (?:fewer|less) than (\w+) (?:and|but) (?:no|not) more than (\w+)\b"
        r"|\bat least (\w+) (?:and|but) (?:at most|no more than) (\w+)\b",
        lambda m: f"between {m.group(1) or m.group(3)} and {m.group(2) or m.group(4)}",
        low,
    )
    # "(paragraphs and only paragraphs are) separated with each other by two new lines as if it was '\n\n' in
    # python": the blank line that separates paragraphs anyway
    low = re.sub(
        r"\bseparated (?:with|from) each other by (?:two|2) new ?lines(?: as if it (?:was|were) '[^']*' in python)?"
        r"|\b(?:separated|divided|split) (?:from each other )?(?:by|with) (?:two|2|double) "
        r"(?:line breaks|new ?lines|returns)\b",
        " ",
        low,
    )
    # "4 emojis (no more, no fewer)": the count said twice
    low = re.sub(r"\s*\(no more,? (?:and |or )?no (?:fewer|less)\)", "", low)
    return low


def _sentence_rules(sentence: str, low: str, text: str, caps: list[str]) -> list[dict[str, Any]]:
    """The rules one sentence of the prepared text (``low``) states: the families read in order, then the counts by
    token windows, the quoted texts, list forms and the remaining keyword rules."""
    mine, sentence = _read_in_order(sentence, low, text, caps)
    toks = _tokens(sentence)
    quoted = [t[1:-1] for t in toks if t[:1] in "\"'" and len(t) > 2]
    words = [t for t in toks if t[:1] not in "\"'"]
    mine += _counts(sentence, words)
    times = re.search(r"\b(\w+)\s+times\b|\b(once|twice|thrice)\b", sentence)
    bare_letter = re.search(r"\bletter ([a-z])\b(?! *')", sentence)
    if bare_letter and times and not quoted:  # "use the letter q at least twice": an unquoted letter
        quoted = [bare_letter.group(1)]
    options_listed = re.search(
        r"\b(?:respond|reply|answer|say)\s+with\s+'[^']+'(?:\s*,\s*'[^']+')*\s*,?\s+or\s+'", sentence
    )
    if (re.search(r"\b(?:one of|either)\b", sentence) or options_listed) and len(quoted) >= 2:
        as_written = [
            next((m.group(0) for m in [re.search(re.escape(q), text, re.I)] if m), q) for q in quoted
        ]
        mine.append({"rule": "one_of", "options": as_written})
        return mine
    mine += _quoted_rules(sentence, low, text, words, quoted, times)
    mine += _list_forms(sentence, words, mine)
    mine += _case_and_marks(sentence, low, words)
    mine += _only_and_keys(sentence, low, quoted)
    return mine


def _read_in_order(sentence: str, low: str, text: str, caps: list[str]) -> tuple[list[dict[str, Any]], str]:
    """What the readers of the families read in one sentence, in order, each blanking what it read."""
    out: list[dict[str, Any]] = []
    laid, sentence = _layouts(sentence, low, text)  # layouts, relations, marks
    out += laid
    related, sentence = _relations(sentence, low, text)
    out += related
    marks_read, sentence = _marks(sentence, low)
    out += marks_read
    shaped, sentence = _forms(sentence, low, text)
    out += shaped
    per_unit, sentence = _units(sentence, low)
    out += per_unit
    placed, sentence = _positional(sentence, low)
    out += placed
    found, sentence = _composed(sentence, caps)
    out += found
    return out, sentence


def _counts(sentence: str, words: list[str]) -> list[dict[str, Any]]:
    """Counts read by the window around each number: the unit after it, the comparator before it, the scope
    ("each", "per") in the sentence."""
    out: list[dict[str, Any]] = []
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
        if set(words) & {"each", "every", "per", "none", "any", "no", "all", "apiece"} and scopes:
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
            if (
                (scope == "word" and small)
                or (scope != "word" and unit in ("words", "chars", "letters", "syllables", "sentences"))
                or (scope == "paragraph" and unit == "lines")  # "two stanzas of 2 lines each"
            ):
                if not (unit == "sentences" and scope == "sentence"):
                    c["per"] = scope
        if unit == "letters" and words[max(0, i - 2) : i] in (["words", "of"], ["words", "with"]):
            c["per"] = "word"  # "words of 5 letters"
        elif unit == "letters" and "words" in words[max(0, i - 5) : i] and "of" in words[max(0, i - 5) : i]:
            c["per"] = "word"  # "words of at most 3 letters"
        out.append(c)
    return out


def _quoted_rules(
    sentence: str, low: str, text: str, words: list[str], quoted: list[str], times: re.Match[str] | None
) -> list[dict[str, Any]]:
    """What each quoted text is: a count of it, a start or an end, a ban or a word to use."""
    out: list[dict[str, Any]] = []
    span = re.search(r"\bbetween (\w+) and (\w+) times\b", sentence)
    for q in quoted:
        said = _as_written(q, text)
        if span and _value(span.group(1)) is not None and _value(span.group(2)) is not None:
            rule = (
                {"rule": "letter", "letter": q}
                if len(q) == 1 and "letter" in words
                else {"rule": "occurs", "text": q}
            )
            out.append({**rule, "min": _value(span.group(1)), "max": _value(span.group(2))})
            continue
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
        ending = {"end", "finish", "conclude", "close", "ends", "finishes", "ending"}
        at_q = sentence.find(f"'{q}'")
        verbs = [(v.start(), v.group(0)) for v in re.finditer(r"\b[a-z]+\b", sentence[: max(0, at_q)])]
        last_verb = next((w for _, w in reversed(verbs) if w in starts or w in ending), "")
        if last_verb in ending and set(starts) & set(words):  # "start with 'dear sir' and end with 'regards'"
            out.append({"rule": "ends_with", "text": said})
        elif set(starts) & set(words):
            at = next(k for k, w in enumerate(words) if w in starts)
            neg = bool(_NOT & set(words[max(0, at - 4) : at]))
            if neg:
                out.append(
                    {"rule": "not_starts_with", "text": q, "per": "sentence"}
                    if "sentence" in " ".join(words)
                    else {"rule": "not_starts_with", "text": q}
                )
            else:
                out.append({"rule": "starts_with", "text": said})
        elif {"end", "finish", "conclude", "close", "ends", "finishes", "ending"} & set(words):
            out.append({"rule": "ends_with", "text": said})
        elif "json" in low or {"key", "keys", "field", "fields"} & set(words):
            continue
        elif set(words) & _EXCLUDE:
            if len(q) == 1 and "letter" in words:
                out.append({"rule": "letter", "letter": q, "max": 0})
            else:
                out.append({"rule": "exclude", "words": [q]})
        elif set(words) & _INCLUDE:
            out.append({"rule": "include", "words": [q]})
    return out


def _list_forms(sentence: str, words: list[str], said: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A list form without a count of its own (``said``: what the sentence stated so far)."""
    out: list[dict[str, Any]] = []
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
        if named and not any(c["rule"] in ("bullets", "numbered", "items") for c in said):
            no = bool(set(words) & {"no", "not", "without", "avoid", "never", "don't", "refrain"})
            out.append({"rule": unit, "max": 0} if no else {"rule": unit, "min": 2})
            break
    return out


def _case_and_marks(sentence: str, low: str, words: list[str]) -> list[dict[str, Any]]:
    """Case, commas, the language, quotes, a title, a postscript, marks, digits and vowels named by keywords."""
    out: list[dict[str, Any]] = []
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
            _value(w) is not None and "comma" in " ".join(words[k + 1 : k + 3]) for k, w in enumerate(words)
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
        dot = re.search(r"(?<!p\.)(?<!p\. )\bp\.\s?s(\.?)", low)
        mark = "P.S." if dot is None or dot.group(1) else "P.S"
        out.append({"rule": "postscript", **({"text": mark} if ps_named else {})})
    for noun, mark in (("exclamation", "exclamations"), ("question mark", "questions")):
        if noun in sentence and negated and not re.search(r"\d+\s+" + noun, sentence):
            out.append({"rule": mark, "max": 0})
    if re.search(r"\b(?:digits?|numerals?)\b", sentence) and not counted:
        out.append({"rule": "numbers", "max": 0} if negated else {"rule": "numbers", "min": 1})
    if re.search(r"\bvowels?\b", sentence) and negated:
        out.append({"rule": "letter", "letter": "aeiou", "max": 0})
    return out


def _only_and_keys(sentence: str, low: str, quoted: list[str]) -> list[dict[str, Any]]:
    """An answer of one kind only (letters, digits, a number), and the keys of a JSON object."""
    out: list[dict[str, Any]] = []
    cls = re.search(
        r"\b(?:(capital |uppercase |lowercase )?letters|digits) only\b|\b(?:only|nothing but|solely)"
        r" (?:(capital |uppercase |lowercase )?letters|digits)\b(?! or)",
        sentence,
    )
    head = ((cls.group(1) or cls.group(2) or "").strip() if cls else "") or ""
    if (
        cls
        and head
        and re.search(r"\b(?:sentences?|words|commas?|paragraphs?|lines|english|response|throughout)\b", low)
    ):
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
            exact = re.search(r"\bexactly (?:\w+ )?keys\b|\bno other keys\b|\bonly the keys\b", sentence)
            out.append({"rule": "json_keys", "keys": keys, **({"exact": True} if exact else {})})
    return out


def _one_unit_is_the_answer(out: list[dict[str, Any]]) -> None:
    """One sentence: its words are the answer's (one word: its letters); the per-unit scope is dropped."""
    single = {c["rule"] for c in out if not c.get("per") and c.get("min") == c.get("max") == 1}
    whole_of = {"words": "sentences", "letters": "words", "chars": "lines", "placeholders": "sentences"}
    for c in out:  # one sentence: its words are the answer's (one word: its letters)
        pair = (c["rule"], c.get("per"))
        if pair in (
            ("words", "sentence"),
            ("letters", "word"),
            ("chars", "line"),
            ("placeholders", "sentence"),
        ) and (whole_of[c["rule"]] in single):
            c.pop("per")


def _one_per_line(out: list[dict[str, Any]], low: str) -> None:
    """Words or numbers one per line: as many lines as words (or numbers), one on each."""
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
    numeric = [c for c in out if c.get("unit") == "number" or (c["rule"] == "numbers" and not c.get("per"))]
    if per_line and numeric and not any(c["rule"] in ("lines", "words", "items", "bullets") for c in out):
        if not any(c["rule"] == "numbers" and c.get("per") == "line" for c in out):
            out.append({"rule": "numbers", "per": "line", "min": 1, "max": 1})
        many = [
            c for c in out if c["rule"] == "numbers" and not c.get("per") and c.get("min") == c.get("max")
        ]
        if many:
            out.append({"rule": "lines", "min": many[0]["min"], "max": many[0]["min"]})


def _as_written(q: str, text: str) -> str:
    """A quoted text as the instruction writes it (the reading lowercases)."""
    found = re.search(re.escape(q), text, re.I)
    return found.group(0) if found else q


def _after(out: list[dict[str, Any]], low: str) -> list[dict[str, Any]]:
    """What one sentence says of another's rules: a separator line between paragraphs holds for every rule per
    paragraph; a count beside a postscript (or a closing line) counts the body; a count of items said of a JSON
    array is the array's."""
    sep = next((c["separator"] for c in out if c["rule"] == "paragraphs" and c.get("separator")), None)
    closing = any(c["rule"] == "postscript" for c in out) or any(
        c["rule"] == "nth" and c.get("unit") == "line" and c.get("index") == -1 for c in out
    )
    array = next((c for c in out if c["rule"] == "json_array"), None)
    tight = next(
        (
            c
            for c in out
            if c["rule"] == "delimited" and c.get("unit") == "word" and str(c.get("text", "")).strip()
        ),
        None,
    )
    counted = next((c for c in out if c["rule"] == "words" and not c.get("per")), None)
    if tight is not None and counted is not None:  # the words are the list's pieces
        tight.update({k: v for k, v in counted.items() if k in ("min", "max")})
        out = [c for c in out if c is not counted]
    kept = []
    for c in out:
        if sep and (c.get("per") == "paragraph" or (c["rule"] == "nth" and c.get("unit") == "paragraph")):
            c["separator"] = sep
        if closing and c["rule"] in ("sentences", "paragraphs", "lines", "words") and not c.get("per"):
            c["body"] = True
        if array is not None and c["rule"] in ("items", "numbers") and not c.get("per"):
            if "min" not in array and "max" not in array:
                array.update({k: v for k, v in c.items() if k in ("min", "max")})
            continue
        kept.append(c)
    return kept
