"""The second reading's forms of a whole answer, read by keywords and token windows apart
from :mod:`rlar.tasks.reading_forms`: a wrapping element, a postscript's marker, one unit's first or last words,
closing hashtags, the request repeated, JSON arrays, separator lines between parts, lists on one line, section
markers, Markdown headings and options named without quotes.

:func:`_forms` reads one sentence (lowercased) and returns what it read and the sentence with the phrases it
used blanked, so the count windows that run after it do not read ``6 asterisk symbols`` as a count. Case is
taken from the original text (``raw``) where it matters: tag names, markers, options.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rlar.number_words import ORDINALS
from rlar.synthesis.second.vocab import _NOT, _SMALL, _num

_UNITS = {
    "paragraph": "paragraph",
    "sentence": "sentence",
    "line": "line",
    "bullet": "item",
    "item": "item",
}
_NUMWORD = "|".join(["\\d+", *sorted((w for w in _SMALL if w not in ("a", "single")), key=len, reverse=True)])
_MARKS = {"asterisk": "*", "star": "*", "dash": "-", "hyphen": "-", "equal": "=", "equals": "=", "tilde": "~"}
_SEPS = {
    "comma": ",",
    "semicolon": ";",
    "space": " ",
    "pipe": "|",
    "slash": "/",
    "vertical bar": "|",
    "bar": "|",
}
_PIECES = {
    "word": ("word", "words", "name", "names", "term", "terms", "noun", "nouns", "adjective", "adjectives"),
    "number": ("number", "numbers", "integer", "integers", "numeral", "numerals", "digits"),
    "item": (
        "answer",
        "answers",
        "response",
        "responses",
        "option",
        "options",
        "alternative",
        "alternatives",
        "version",
        "versions",
        "variant",
        "variants",
        "item",
        "items",
        "value",
        "values",
        "choice",
        "choices",
        "entries",
        "elements",
        "parts",
    ),
}
_JSON_KINDS = {
    "string": "string",
    "strings": "string",
    "integer": "integer",
    "integers": "integer",
    "number": "number",
    "numbers": "number",
    "boolean": "boolean",
    "booleans": "boolean",
    "object": "object",
    "objects": "object",
}


def _raw_quote(q: str, raw: str) -> str:
    """The quoted text as the original instruction writes it (case kept)."""
    found = re.search(re.escape(q), raw, re.I)
    return found.group(0) if found else q


def _mark_as_written(mark: str, low: str) -> str:
    """ "P.S." or "P.S" (the last period kept where the instruction writes one; the sentence split drops it)."""
    double = "p.p" in mark.replace(" ", "")
    rx = r"p\.\s?p\.\s?s(\.?)" if double else r"(?<!p\.)(?<!p\. )p\.\s?s(\.?)"
    found = re.search(rx, low)
    dot = "." if found and found.group(1) else ""
    return ("P.P.S" if double else "P.S") + dot


def _count(tok: str) -> int | None:
    return _num(tok)


@dataclass
class _Sentence:
    """One sentence (``low``: the text lowercased, ``raw``: as written) and what its readers found in it:
    ``out`` the constraints, ``used`` the patterns of the phrases they read (blanked at the end)."""

    sentence: str
    low: str
    raw: str
    out: list[dict[str, Any]]
    used: list[str]
    words: set[str]
    neg: bool


def _wrap(s: _Sentence) -> None:
    """A wrapping element: a tag named in the sentence with a word that wraps."""
    sentence, raw, out, used, words = s.sentence, s.raw, s.out, s.used, s.words
    tags = {t.lower() for t in re.findall(r"(?<!<)</?([A-Za-z][\w.:-]*)>(?!>)", sentence)}
    unwrapped = re.search(
        r"\b(?:not|never|don't|without)\s+(?:\w+\s+){0,3}?(?:wrap|enclose|put|place|surround|use|include|add)\w*"
        r"|\bno\s+tags?\b",
        sentence,
    )
    if (
        len(tags) == 1
        and not unwrapped
        and words
        & {"wrap", "enclose", "inside", "within", "element", "tags", "tag", "between", "surround", "place"}
    ):
        name = tags.pop()
        raw_name = next(
            (t for t in re.findall(r"(?<!<)</?([A-Za-z][\w.:-]*)>(?!>)", raw) if t.lower() == name), name
        )
        out.append({"rule": "wrap", "open": f"<{raw_name}>", "close": f"</{raw_name}>"})
        used.append(r"(?<!<)</?[a-z][\w.:-]*>(?!>)")


def _postscript_marker(s: _Sentence) -> None:
    """A postscript's marker, named after "postscript ... with"."""
    sentence, low, raw, out, used, neg = s.sentence, s.low, s.raw, s.out, s.used, s.neg
    ps = re.search(
        r"\bpostscript\s+(?:at the (?:end|bottom)\s+)?(?:that\s+)?"
        r"(?:(?:starting|beginning|starts|begins|opening)\s+with"
        r"|marked(?: with)?|label+ed(?: with)?|introduced by)\s+"
        r"(?:'([^']+)'|\"([^\"]+)\"|(p\.\s?p\.\s?s\.?|p\.\s?s\.?))",
        sentence,
    )
    if ps and not neg:
        q = ps.group(1) or ps.group(2)
        marker = _raw_quote(q, raw) if q else _mark_as_written(ps.group(3), low)
        out.append({"rule": "postscript", "text": marker})
        used.append(re.escape(ps.group(0)))


def _last_line_start(s: _Sentence) -> None:
    """The last line starts with a quoted text: "finish with a line beginning with 'P.P.S'"."""
    sentence, raw, out, used, neg = s.sentence, s.raw, s.out, s.used, s.neg
    last_line = re.search(
        r"\b(?:end|ends|finish|finishes|conclude|close)\s+(?:your\s+\w+\s+|the\s+\w+\s+)?with\s+a\s+(?:last\s+|final\s+)?line\s+"
        r"(?:that\s+)?(?:beginning|starting|begins|starts)\s+with\s+'([^']+)'",
        sentence,
    )
    if last_line and not neg:
        out.append(
            {
                "rule": "nth",
                "unit": "line",
                "index": -1,
                "side": "start",
                "text": _raw_quote(last_line.group(1), raw),
            }
        )
        used.append(re.escape(last_line.group(0)))


def _unit_start_or_end(s: _Sentence) -> None:
    """One unit's start or end: "the second paragraph must start with the word 'however'", "paragraph 2 ..."."""
    sentence, raw, out, used, neg = s.sentence, s.raw, s.out, s.used, s.neg
    for m in re.finditer(
        r"\b(?:(first|1st|second|2nd|third|3rd|fourth|4th|fifth|5th|last|final)\s+(paragraph|sentence|line|bullet|item)"
        r"|(paragraph|sentence|line|bullet|item)\s+(?:number\s+)?(\d+))\s+(?:\w+\s+){0,3}?(start|starts|begin|begins|end|ends|"
        r"finish|finishes|open|opens)\s+(?:with\s+|in\s+)?(?P<kw>(?:the\s+)?(?:word|phrase)\s+)?('[^']+'|\"[^\"]+\"|[a-z][\w'-]*)",
        sentence,
    ):
        target = m.group(7)
        is_quoted = target[:1] in "'\""
        if neg or (not is_quoted and not m.group("kw")):
            continue  # an unquoted target only after "the word"
        k = ORDINALS[m.group(1)] if m.group(1) else int(m.group(4))
        unit = _UNITS[m.group(2) or m.group(3)]
        text = _raw_quote(target[1:-1] if is_quoted else target, raw)
        side = "end" if m.group(5).startswith(("end", "finish")) else "start"
        out.append({"rule": "nth", "unit": unit, "index": k, "side": side, "text": text})
        used.append(re.escape(m.group(0)))


def _each_respectively(s: _Sentence) -> None:
    """ "start each of your 3 paragraphs with the word 'first', 'second' and 'third' respectively"."""
    sentence, raw, out, used, neg = s.sentence, s.raw, s.out, s.used, s.neg
    each_of = re.search(
        r"\b(start|begin|end|finish)\w*\s+each\s+of\s+(?:your|the)\s+(?:("
        + _NUMWORD
        + r")\s+)?(paragraph|sentence|line)s\s+with\s+"
        r"(?:the\s+words?\s+)?((?:'[^']+'\s*,?\s*(?:and\s+)?)+)respectively",
        sentence,
    )
    if each_of and not neg:
        qs = re.findall(r"'([^']+)'", each_of.group(4))
        n = _count(each_of.group(2)) if each_of.group(2) else None
        if len(qs) >= 2 and (n is None or n == len(qs)):
            side = "end" if each_of.group(1) in ("end", "finish") else "start"
            for i, q in enumerate(qs, 1):
                out.append(
                    {
                        "rule": "nth",
                        "unit": each_of.group(3),
                        "index": i,
                        "side": side,
                        "text": _raw_quote(q, raw),
                    }
                )
            if n is not None:
                out.append({"rule": each_of.group(3) + "s", "min": n, "max": n})
            used.append(re.escape(each_of.group(0)))


def _named_one(s: _Sentence) -> None:
    """ "the first one must end with the word 'night'": the unit named before."""
    sentence, low, raw, out, used, neg = s.sentence, s.low, s.raw, s.out, s.used, s.neg
    one = re.search(
        r"\b(first|second|third|fourth|fifth|last|final) one\s+(?:must |should |has to |will )?"
        r"(start|begin|end|finish)\w*\s+"
        r"with\s+(?:the\s+(?:word|phrase)\s+)?'([^']+)'",
        sentence,
    )
    if one and not neg:
        before = re.findall(r"\b(paragraph|sentence|line)s?\b(?! breaks?)", low[: low.find(one.group(0))])
        if before:
            side = "end" if one.group(2) in ("end", "finish") else "start"
            out.append(
                {
                    "rule": "nth",
                    "unit": before[-1],
                    "index": ORDINALS[one.group(1)],
                    "side": side,
                    "text": _raw_quote(one.group(3), raw),
                }
            )
            used.append(re.escape(one.group(0)))


def _ends_with_question(s: _Sentence) -> None:
    """ "... that ends with a question": the answer's last mark."""
    sentence, out, used, neg = s.sentence, s.out, s.used, s.neg
    asked = re.search(
        r"\b(?:that\s+)?(?:ends|end|ending|finishes|finish)\s+(?:with|in)\s+a\s+question\b(?!\s+mark)",
        sentence,
    )
    if asked and not neg and not re.search(r"\b(?:each|every|all)\b", sentence):
        out.append({"rule": "ends_with", "text": "?"})
        used.append(re.escape(asked.group(0)))


def _in_brackets(s: _Sentence) -> None:
    """The whole answer between brackets."""
    sentence, out, used, neg = s.sentence, s.out, s.used, s.neg
    brackets = re.search(
        r"\b(?:wrap|enclose|put|place|surround)\w*\s+(?:your|the|this)?\s*(?:entire|whole|full|complete)?\s*"
        r"(?:response|answer|reply|output|text)\s+(?:in|inside|within|between)\s+(?:a pair of\s+)?"
        r"(square brackets|brackets|parentheses|round brackets|curly braces|curly brackets)\b",
        sentence,
    )
    if brackets and not neg:
        kind = brackets.group(1)
        pair = (
            ("[", "]")
            if "square" in kind or kind == "brackets"
            else ("{", "}")
            if "curly" in kind
            else ("(", ")")
        )
        out.append({"rule": "wrap", "open": pair[0], "close": pair[1]})
        used.append(re.escape(brackets.group(0)))


def _ends_respectively(s: _Sentence) -> None:
    """ "2 sentences that end in 'math' and 'road' respectively": the unit named last before the verb."""
    sentence, low, raw, out, used, neg = s.sentence, s.low, s.raw, s.out, s.used, s.neg
    resp = re.search(
        r"\b(start|begin|end|finish)\w*\s+(?:with|in)\s+((?:'[^']+'\s*,?\s*(?:and\s+)?)+)respectively",
        sentence,
    )
    if resp and not neg:
        nouns = re.findall(
            r"\b(?:(" + _NUMWORD + r")\s+)?(paragraph|sentence|line)s?\b", low[: low.find(resp.group(0))]
        )
        qs = re.findall(r"'([^']+)'", resp.group(2))
        if nouns and len(qs) >= 2:
            count, unit = nouns[-1]
            n = _count(count) if count else None
            if n is None or n == len(qs):
                side = "end" if resp.group(1) in ("end", "finish") else "start"
                for i, q in enumerate(qs, 1):
                    out.append(
                        {"rule": "nth", "unit": unit, "index": i, "side": side, "text": _raw_quote(q, raw)}
                    )
                used.append(re.escape(resp.group(0)))


def _word_or_letter_at(s: _Sentence) -> None:
    """COLLIE positions: "where word 3 is 'soft'", "letter 1 is 's'"."""
    sentence, low, raw, out, used, neg = s.sentence, s.low, s.raw, s.out, s.used, s.neg
    one_word = re.search(r"\b(?:a|one|single)\s+word\b", low) and not re.search(r"\b(?:each|every)\b", low)
    for m in re.finditer(r"\b(word|letter)\s+(\d+)\s+(?:is|must be|should be)\s+'([^']+)'", sentence):
        k, text = int(m.group(2)), _raw_quote(m.group(3), raw)
        if neg or k < 1:
            continue
        if m.group(1) == "letter" and one_word and len(text) == 1:
            out.append({"rule": "at", "unit": "letter", "index": k, "text": text.lower()})
        elif m.group(1) == "word" and re.fullmatch(r"[A-Za-z][\w'-]*", text):
            out.append(
                {"rule": "starts_with", "text": text}
                if k == 1
                else {"rule": "at", "unit": "word", "index": k, "text": text}
            )
        else:
            continue
        used.append(re.escape(m.group(0)))


def _one_paragraph(s: _Sentence) -> None:
    """One paragraph: "generate a paragraph where ...", "write a paragraph with ..."."""
    sentence, out, used = s.sentence, s.out, s.used
    para = re.search(
        r"^\s*(?:please\s+)?(?:write|generate|compose|produce|create|give)\s+(?:me\s+)?a\s+(?:single\s+)?paragraph\b",
        sentence,
    )
    if para:
        out.append({"rule": "paragraphs", "min": 1, "max": 1})
        used.append(re.escape(para.group(0)))


def _closing_hashtags(s: _Sentence) -> None:
    """Closing hashtags."""
    sentence, out, used, neg = s.sentence, s.out, s.used, s.neg
    tail = re.search(
        r"\b(?:end|finish|close|conclude)\w*\s+(?:\w+\s+){0,2}?with\s+(?:exactly\s+)?("
        + _NUMWORD
        + r")\s+hashtags\b",
        sentence,
    )
    if tail and not neg and _count(tail.group(1)):
        n = int(_count(tail.group(1)) or 0)
        out.append({"rule": "trailing", "what": "hashtags", "min": n, "max": n})
        used.append(re.escape(tail.group(0)))


def _repeated_request(s: _Sentence) -> None:
    """The request repeated first."""
    sentence, raw, out, used, neg = s.sentence, s.raw, s.out, s.used, s.neg
    rep = re.search(
        r"\brepeat\s+(?:the|this|my)\s+(?:request|question|prompt)\s+(?:word for word|verbatim|exactly)",
        sentence,
    )
    if rep and not neg:
        at = re.search(r"(?i)\brepeat\s+(?:the|this|my)\s+(?:request|question|prompt)", raw)
        head = raw[: at.start()] if at else ""
        cut = max(head.rfind(ch) for ch in ".!?\n")
        request = head[: cut + 1].strip() if cut >= 0 else ""
        if request:
            out.append({"rule": "repeat", "text": request})
        used.append(r"\brepeat\b.*$")


def _last_words(s: _Sentence) -> None:
    """How the answer ends: "your last words must be 'thanks for reading.'"."""
    sentence, raw, out, used, neg = s.sentence, s.raw, s.out, s.used, s.neg
    last = re.search(
        r"\b(?:last|final|closing) words (?:must|should|need to|have to|will) be '([^']+)'", sentence
    )
    if last and not neg:
        out.append({"rule": "ends_with", "text": _raw_quote(last.group(1), raw)})
        used.append(re.escape(last.group(0)))


def _dash_lines(s: _Sentence) -> None:
    """A dash at the start of every line."""
    sentence, out, used, neg = s.sentence, s.out, s.used, s.neg
    dash = re.search(
        r"\b(?:start|begin)\w*\s+(?:each|every)\s+(line|bullet|item)\s+with\s+a\s+(?:dash|hyphen)\b", sentence
    )
    if dash and not neg:
        out.append({"rule": "starts_with", "text": "-", "per": "line" if dash.group(1) == "line" else "item"})
        used.append(re.escape(dash.group(0)))


def _letter_marker(s: _Sentence) -> None:
    """A quoted marker with a letter for its number: "mark each with 'part n', where n is its number"."""
    sentence, low, raw, out, used = s.sentence, s.low, s.raw, s.out, s.used
    letter_marker = re.search(r"\beach\b[^']*'([a-z#][\w# ]*?) ([xn])([:.)]?)'", sentence)
    if letter_marker and re.search(r"\b(?:sections?|parts?|chapters?)\b", low):
        said = _raw_quote(f"{letter_marker.group(1)} {letter_marker.group(2)}{letter_marker.group(3)}", raw)
        prefix = re.sub(r"\s+[XNxn]\W?$", "", said)
        suffix = {"suffix": letter_marker.group(3)} if letter_marker.group(3) else {}
        out.append({"rule": "sections", "min": 1, "marker": prefix, **suffix})
        used.append(
            r"'[a-z#][\w# ]*? [xn][:.)]?'(?:\s*,?\s*where [xn] is (?:its|the) (?:\w+ )?(?:number|index))?"
        )


def _json_array(s: _Sentence) -> None:
    """A JSON array: its item type and how many."""
    sentence, low, out, used = s.sentence, s.low, s.out, s.used
    if re.search(r"\bjson\s+(?:array|list)\b", sentence) or (
        "json" in low
        and re.search(r"\b(?:array|list)\b", low)
        and re.search(r"\b(?:it|array|list)\s+(?:must|should)\s+(?:have|contain)\b", sentence)
    ):
        c: dict[str, Any] = {"rule": "json_array"}
        kind = re.search(r"\b(strings?|integers?|booleans?|objects?|numbers?)\b", sentence)
        if kind:
            c["type"] = _JSON_KINDS[kind.group(1)]
        many = re.search(
            r"\b("
            + _NUMWORD
            + r")\s+(?:strings|integers|booleans|objects|numbers|items|elements|values|entries)\b",
            sentence,
        )
        if many and _count(many.group(1)) is not None:
            n = int(_count(many.group(1)) or 0)
            if re.search(r"\bat least\s+" + re.escape(many.group(1)), sentence):
                c["min"] = n
            elif re.search(r"\b(?:at most|no more than|up to)\s+" + re.escape(many.group(1)), sentence):
                c["max"] = n
            else:
                c["min"] = c["max"] = n
            used.append(re.escape(many.group(0)))
        out.append(c)
        used += [r"\bjson\b", r"\b(?:array|list)\b", r"\bitems?\b"]


def _separator_lines(s: _Sentence) -> None:
    """Parts on separator lines: "separated by 6 asterisk symbols: ******", "a line of three dashes (---) between"."""
    sentence, low, out, used, neg = s.sentence, s.low, s.out, s.used, s.neg
    line = re.search(r"(\*{3,}|-{3,}|={3,}|~{3,}|#{3,}|\*(?: \*){2,})", sentence)
    if line and re.search(r"\b(?:separat\w*|between|divid\w*)\b", sentence) and not neg:
        sep = line.group(1)
        named = re.search(
            r"\b(" + _NUMWORD + r")\s+(asterisk|star|dash|hyphen|equal|equals|tilde)s?\b", sentence
        )
        if named is None or (_count(named.group(1)) == len(sep) and set(sep) == {_MARKS[named.group(2)]}):
            c = {"rule": "paragraphs", "separator": sep, "min": 2}
            parts = re.search(
                r"\b(" + _NUMWORD + r")\s+(different\s+|distinct\s+)?"
                r"(responses|answers|parts|paragraphs|stanzas|sections|versions|replies)\b",
                low,
            )
            if parts and _count(parts.group(1)):
                c["min"] = c["max"] = int(_count(parts.group(1)) or 0)
                if parts.group(2):
                    c["distinct"] = True
            out.append(c)
            used += [
                "'" + re.escape(sep) + "'",
                re.escape(sep),
                r"\b\w+\s+(?:asterisk|star|dash|hyphen)s?(?:\s+symbols?)?",
            ]
            if named:
                used.append(re.escape(named.group(0)))


def _one_line_list(s: _Sentence) -> None:
    """A list on one line: "separated by commas", "comma-separated", "separated by a vertical bar (|)"."""
    sentence, out, used = s.sentence, s.out, s.used
    sep_m = re.search(
        r"\b(?:separated|delimited)\s+(?:only\s+)?(?:by|with|using)\s+(?:a\s+|single\s+)?"
        r"(comma|semicolon|space|pipe|slash|vertical bar)(?:e?s)?\b"
        r"|\b(comma|space|semicolon)[- ]separated\b"
        r"|\b(?:using|with|putting|put)\s+(comma|semicolon|space|slash|pipe)(?:e?s)\s+between\s+(?:them|each)\b",
        sentence,
    )
    if sep_m and not re.search(r"\b(?:paragraphs?|sections?|stanzas?)\b", sentence[: sep_m.start()][-40:]):
        sep = _SEPS[str(sep_m.group(1) or sep_m.group(2) or sep_m.group(3))]
        before = re.findall(r"[a-z]+", sentence[: sep_m.start()]) or re.findall(r"[a-z]+", sentence)
        piece = next((u for w in reversed(before) for u, names in _PIECES.items() if w in names), None)
        if piece:
            c: dict[str, Any] = {"rule": "delimited", "text": sep, "unit": piece}
            if piece == "item":
                many = re.search(
                    r"\b(" + _NUMWORD + r")\s+(?:\w+\s+)?(?:" + "|".join(_PIECES["item"]) + r")\b", sentence
                )
                if many and _count(many.group(1)):
                    c["min"] = c["max"] = int(_count(many.group(1)) or 0)
                    used.append(re.escape(many.group(0)))
            out.append(c)
            used.append(re.escape(sep_m.group(0)))


def _section_markers(s: _Sentence) -> None:
    """Section markers: "with SECTION X", "'Part 1:' and 'Part 2:'", "'## Section 1' to '## Section 4'"."""
    sentence, raw, out, used = s.sentence, s.raw, s.out, s.used
    caps = re.search(r"\bwith\s+([A-Z][A-Za-z]+)\s+(?:X|N)\b([:.]?)", raw)
    if (
        caps
        and re.search(r"\b(?:each|every)\s+(?:section|part|chapter)\b", sentence)
        and caps.group(1).lower() in sentence
    ):
        out.append(
            {
                "rule": "sections",
                "min": 1,
                "marker": caps.group(1),
                **({"suffix": caps.group(2)} if caps.group(2) else {}),
            }
        )
        used.append(r"\bwith\s+" + re.escape(caps.group(1).lower()) + r"\s+[xn]\b.*$")
    quoted = re.findall(r"'([^']*\d+[^']*)'", sentence)
    if len(quoted) >= 2 and re.search(r"\b(?:sections?|parts?|chapters?|headed|respectively)\b", sentence):
        split = [re.fullmatch(r"(.*?)\s*(\d+)(\W?)", q) for q in quoted]
        if all(split) and len({(s.group(1), s.group(3)) for s in split if s}) == 1:
            nums = [int(s.group(2)) for s in split if s]
            first = split[0]
            assert first is not None
            if nums[0] == 1:
                n = nums[-1] if re.search(r"'\s+to\s+'", sentence) else len(nums)
                whole_quote = _raw_quote(quoted[0], raw)
                prefix = re.sub(r"\s*\d+\W?$", "", whole_quote)
                c = {"rule": "sections", "min": n, "max": n, "marker": prefix}
                if first.group(3):
                    c["suffix"] = first.group(3)
                out.append(c)
                used += [
                    r"'[^']*\d+[^']*'",
                    r"\b(?:" + _NUMWORD + r")\s+(?:numbered\s+)?(?:sections|parts)\b",
                ]


def _headings(s: _Sentence) -> None:
    """Markdown headings counted."""
    sentence, out, used = s.sentence, s.out, s.used
    heads = re.search(r"\b(" + _NUMWORD + r")\s+markdown\s+(?:headings|headers)\b", sentence)
    if heads and _count(heads.group(1)):
        n = int(_count(heads.group(1)) or 0)
        lo = re.search(r"\bat least\s+" + re.escape(heads.group(1)), sentence)
        out.append({"rule": "headings", **({"min": n} if lo else {"min": n, "max": n})})
        used.append(re.escape(heads.group(0)))


def _bare_options(s: _Sentence) -> None:
    """Options named without quotes: "either true or false", "one of a, b, c or d"."""
    sentence, raw, out, used, words = s.sentence, s.raw, s.out, s.used, s.words
    opts = re.search(
        r"\b(?:either|one of)\s+((?:[a-z0-9]+\s*,\s*)*[a-z0-9]+\s*,?\s+or\s+[a-z0-9]+)\b", sentence
    )
    if opts and "'" not in opts.group(0) and not (words - set(re.findall(r"[a-z]+", opts.group(0)))) & _NOT:
        names = [x for x in re.split(r"\s*,\s*|\s+or\s+", opts.group(1)) if x]
        if len(names) >= 2 and (
            all(len(x) == 1 for x in names) or not set(names) & {"the", "a", "it", "them", "these"}
        ):
            span = re.search(r"(?i)\b" + r"[\s,]+(?:or\s+)?".join(map(re.escape, names)) + r"\b", raw)
            if span:
                got = [x for x in re.split(r"\s*,\s*|\s+or\s+", span.group(0)) if x]
                out.append({"rule": "one_of", "options": got})
                used.append(re.escape(opts.group(0)))


_READERS = (
    _wrap,
    _postscript_marker,
    _last_line_start,
    _unit_start_or_end,
    _each_respectively,
    _named_one,
    _ends_with_question,
    _in_brackets,
    _ends_respectively,
    _word_or_letter_at,
    _one_paragraph,
    _closing_hashtags,
    _repeated_request,
    _last_words,
    _dash_lines,
    _letter_marker,
    _json_array,
    _separator_lines,
    _one_line_list,
    _section_markers,
    _headings,
    _bare_options,
)


def _forms(sentence: str, low: str, raw: str) -> tuple[list[dict[str, Any]], str]:
    out: list[dict[str, Any]] = []
    used: list[str] = []
    words = set(
        re.findall(
            r"[a-z']+", re.sub(r"\bno (?:other )?(?:text|words) (?:outside|before or after)\b", " ", sentence)
        )
    )
    neg = bool(words & _NOT)
    s = _Sentence(sentence, low, raw, out, used, words, neg)
    for read in _READERS:
        read(s)
    for p in used:
        sentence = re.sub(p, " ", sentence)
    return out, sentence
