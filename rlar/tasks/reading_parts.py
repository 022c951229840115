"""Parts of the answer and where they stand, read by the main reader (the second reading
reads them apart, :mod:`rlar.synthesis.second.forms`): how many parts a separator line divides the answer into,
lists on one line, section markers and Markdown headings, the start or end of one paragraph / sentence / line,
and a word or letter at a numbered place. :func:`read_parts` is run by
:func:`rlar.tasks.reading_forms.read_forms` (whose module docstring lists the phrasings) and blanks what it used.
"""

from __future__ import annotations

import re
from typing import Any

from rlar.number_words import ORDINALS
from rlar.tasks.phrasings import ClauseText, Q

__all__ = ["SUBJECT", "read_parts"]

_ORD = "|".join(sorted(ORDINALS, key=len, reverse=True))
SUBJECT = (
    r"(?:(?:your|the|this)\s+)?(?:(?:entire|whole|full|complete)\s+)?(?:answer|response|reply|output|text|"
    r"message|note|letter|email|post|paragraph)?"
)
_PART_NOUNS = (
    r"responses?|answers?|replies|reply|alternatives?|options?|versions?|variants?|parts?|items?|entries|entry|"
    r"elements?|values?|choices?|candidates?"
)
_UNIT_PIECES = {
    "word": r"words?|names?|terms?|adjectives?|nouns?|verbs?|adverbs?",
    "number": r"(?:whole\s+)?numbers?|integers?|numerals?|digits?",
}


def read_parts(cl: ClauseText, sentence: str, whole: str) -> None:
    """Read the parts of the answer in one clause (``sentence`` / ``whole``: lowercased with digits)."""
    _read_parts_count(cl, whole)
    _read_separator_lines(cl, sentence, whole)
    _read_delimiters(cl, sentence, whole)
    _read_section_markers(cl, whole)
    _read_headings(cl)
    _read_nth(cl, sentence, whole)
    _read_numbered_positions(cl, whole)


def _read_parts_count(cl: ClauseText, whole: str) -> None:
    """``Give two different responses.`` in an instruction whose parts are separated by a line of marks: how
    many parts, and whether they must differ (the separator is read where it is named)."""
    if not re.search(
        r"\b(?:separat\w*|between)\b[^.]*?(?:\*{3,}|-{3,}|={3,}|~{3,}|\d+\s+(?:asterisk|dash|equals|tilde))"
        r"|(?:\*{3,}|-{3,}|={3,}|~{3,})[^.]*?\bbetween\b",
        whole,
    ):
        return

    def parts(m: re.Match[str]) -> None:
        c: dict[str, Any] = {"rule": "paragraphs", "min": int(m.group("n")), "max": int(m.group("n"))}
        if m.group("diff") and m.group("diff").strip() in ("different", "distinct"):
            c["distinct"] = True
        cl.add(c)

    cl.each(
        r"\b(?:give|write|provide|produce|offer)\s+(?:me\s+)?(?P<n>\d+)\s+(?P<diff>different\s+|distinct\s+|separate\s+)?"
        r"(?:responses|answers|replies|versions|alternatives)\b",
        parts,
    )


# -- parts on separator lines --------------------------------------------------------------------------------
_MARK_NAMES = {
    "asterisk": "*",
    "asterisks": "*",
    "star": "*",
    "stars": "*",
    "dash": "-",
    "dashes": "-",
    "hyphen": "-",
    "hyphens": "-",
    "equals sign": "=",
    "equals signs": "=",
    "equal signs": "=",
    "tilde": "~",
    "tildes": "~",
    "hash": "#",
    "hashes": "#",
    "underscore": "_",
    "underscores": "_",
}
_MARKS = "|".join(sorted(_MARK_NAMES, key=len, reverse=True))


def _read_separator_lines(cl: ClauseText, sentence: str, whole: str) -> None:
    """Parts separated by a line of marks: the line as written (``******``, ``---``), how many parts when the
    parts are counted (``two different responses``), and whether they must differ."""
    raw_marks = r"(?P<line>\*{3,}|-{3,}|={3,}|~{3,}|_{3,}|#{3,})"

    def found(m: re.Match[str]) -> bool:
        sep = m.group("line") or ""
        if m.group("n") and m.group("mark"):
            ch = _MARK_NAMES[m.group("mark")]
            if sep and (set(sep) != {ch} or len(sep) != int(m.group("n"))):
                return False  # "3 dashes: *****": the words and the marks disagree
            sep = sep or ch * int(m.group("n"))
        if not sep:
            return False
        c = next((x for x in cl.found if x["rule"] == "paragraphs"), None)
        if c is None:
            c = {"rule": "paragraphs"}
            cl.add(c)
        c["separator"] = sep
        cl.memory["separator"] = sep
        return True

    cl.each(
        rf"\b(?:(?:responses|parts|paragraphs|sections|stanzas|answers|them)\s+(?:and\s+only\s+(?:responses|paragraphs)\s+)?"
        rf"(?:should|must|are\s+to|will)\s+be\s+)?(?:separated|separate\w*|divided|split)\s+(?:(?:them|the\s+(?:\d+\s+)?\w+|each\s+\w+|"
        rf"with\s+each\s+other)\s+)?(?:from\s+each\s+other\s+)?(?:by|with|using)\s+(?:a\s+line\s+(?:of|containing\s+only|with\s+only|made\s+of)\s+)?"
        rf"(?:(?P<n>\d+)\s+(?P<mark>{_MARKS})(?:\s+symbols?)?\s*:?\s*)?(?:\(?\s*{raw_marks}\s*\)?)?"
        rf"|\b(?:put|place|add|insert|use|with)\s+(?:a\s+line\s+(?:of|containing\s+only|with\s+only|made\s+of)\s+)?(?:(?P<n2>\d+)\s+(?P<mark2>{_MARKS})\s*)?"
        rf"\(?\s*(?P<line2>\*{{3,}}|-{{3,}}|={{3,}}|~{{3,}}|_{{3,}})\s*\)?(?:\s+on\s+its\s+own\s+line)?\s+between\s+"
        rf"(?:them|the\s+\w+|each\s+\w+(?:\s+and\s+the\s+next)?)",
        lambda m: found(m) if m.group("line") or m.group("n") else _put_between(cl, m),
    )
    c = next((x for x in cl.found if x["rule"] == "paragraphs" and x.get("separator")), None)
    if c is None:
        return
    counted = re.search(
        rf"\b(?P<n>\d+)\s+(?P<diff>different\s+|distinct\s+|separate\s+)?(?:{_PART_NOUNS}|paragraphs?|stanzas?|sections?)\b",
        str(cl.memory.get("forms_clause", cl.w)),
    )
    if counted:
        c["min"] = c["max"] = int(counted.group("n"))
        if counted.group("diff") and counted.group("diff").strip() in ("different", "distinct"):
            c["distinct"] = True
        cl.each(
            rf"\b{counted.group('n')}\s+(?:different\s+|distinct\s+|separate\s+)?(?:{_PART_NOUNS})\b",
            lambda m: True,
        )
    elif "min" not in c:
        c["min"] = 2
    cl.each(r"\b(?:and\s+only\s+(?:responses|paragraphs)\s+)|\bsymbols?\b|\bof\s+them\b", lambda m: True)


def _put_between(cl: ClauseText, m: re.Match[str]) -> bool:
    sep = m.group("line2") or ""
    if m.group("n2") and m.group("mark2"):
        ch = _MARK_NAMES[m.group("mark2")]
        if set(sep) != {ch} or len(sep) != int(m.group("n2")):
            return False
    if not sep:
        return False
    c = next((x for x in cl.found if x["rule"] == "paragraphs"), None)
    if c is None:
        c = {"rule": "paragraphs"}
        cl.add(c)
    c["separator"] = sep
    cl.memory["separator"] = sep
    return True


# -- lists on one line ---------------------------------------------------------------------------------------
_SEPARATORS = {
    "commas": ",",
    "comma": ",",
    "a comma": ",",
    "semicolons": ";",
    "semicolon": ";",
    "a semicolon": ";",
    "spaces": " ",
    "a space": " ",
    "single spaces": " ",
    "a single space": " ",
    "a vertical bar": "|",
    "vertical bars": "|",
    "a pipe": "|",
    "pipes": "|",
    "a pipe character": "|",
    "pipe characters": "|",
    "a slash": "/",
    "slashes": "/",
    "a forward slash": "/",
}
_SEP = "|".join(re.escape(k) for k in sorted(_SEPARATORS, key=len, reverse=True))


def _piece_unit(text: str) -> str | None:
    """What the pieces of a list are, from the nearest noun before the separator phrase."""
    nouns = list(
        re.finditer(
            rf"\b(?P<w>{_UNIT_PIECES['word']})\b|\b(?P<n>{_UNIT_PIECES['number']})\b|\b(?P<i>{_PART_NOUNS})\b",
            text,
        )
    )
    if not nouns:
        return None
    last = nouns[-1]
    return "word" if last.group("w") else "number" if last.group("n") else "item"


def _read_delimiters(cl: ClauseText, sentence: str, whole: str) -> None:
    def delimited(m: re.Match[str]) -> bool:
        if re.search(r"\b(?:paragraphs?|sections?|responses|parts|stanzas)\b", m.group(0)):
            return False
        sep = _SEPARATORS.get(m.group("sep") or re.sub(r"\s+", " ", m.group("sep2") or ""), "") or (
            cl.q(m.group("q")) if m.group("q") else ""
        )
        if m.group("adj"):
            sep = {"comma": ",", "space": " ", "semicolon": ";", "pipe": "|"}[m.group("adj")]
        if m.group("raw"):
            sep = m.group("raw")
        if not sep or (not sep.strip(" ") and sep != " "):
            return False
        before = str(cl.memory.get("forms_clause", cl.w))[: m.start()] or sentence
        unit = _piece_unit(before) or _piece_unit(
            sentence[: sentence.find(m.group(0).strip()[:12])] or sentence
        )
        if unit is None:
            return False
        c: dict[str, Any] = {"rule": "delimited", "text": sep, "unit": unit}
        if unit == "item":
            counted = re.search(rf"\b(?P<n>\d+)\s+(?:\w+\s+)?(?:{_PART_NOUNS})\b", before)
            if counted:
                c["min"] = c["max"] = int(counted.group("n"))
                cl.each(rf"\b{counted.group('n')}\s+(?:\w+\s+)?(?:{_PART_NOUNS})\b", lambda m: True)
        cl.add(c)
        return True

    cl.each(
        rf",?\s*\b(?:(?:and|all|each|that\s+are|which\s+are)\s+)?(?:separated|delimited|divided)\s+(?:from\s+each\s+other\s+)?"
        rf"(?:only\s+)?(?:by|with|using)\s+(?:(?P<sep>{_SEP})(?:\s+characters?)?(?:\s*\(\s*(?P<raw>[|/;,])\s*\))?"
        rf"|(?:the\s+)?(?:(?:mark|character|symbol|separator)\s+)?(?P<q>{Q}))"
        rf"|,?\s*\b(?:as\s+an?\s+|in\s+an?\s+)?(?P<adj>comma|space|semicolon|pipe)[- ]separated(?:\s+(?:list|line))?\b"
        rf"|\b(?:using|with|putting|put)\s+(?P<sep2>commas|semicolons|spaces|single\s+spaces|slashes|pipes|vertical\s+bars)\s+"
        rf"between\s+(?:them|the\s+\w+|each\s+\w+)",
        delimited,
    )


# -- section markers and headings ----------------------------------------------------------------------------
def _read_section_markers(cl: ClauseText, whole: str) -> None:
    def marker(prefix: str, suffix: str, n: int | None) -> None:
        c = next((x for x in cl.found if x["rule"] == "sections"), None)
        if c is None:
            c = {"rule": "sections", "min": 1}
            cl.add(c)
        c["marker"] = prefix
        if suffix:
            c["suffix"] = suffix
        if n is not None:
            c["min"] = c["max"] = n

    # "Mark the beginning of each section with SECTION X, where X is the section number": the marker unquoted, in
    # the case it is written in
    raw = re.search(
        r"\b(?:with|using|by)\s+(?P<m>[A-Z][A-Za-z]+)\s+(?P<x>X|N|\{?n\}?|#|<n>)(?P<suf>[:.)]?)(?=[\s,.;]|$)",
        cl.raw,
    )
    if raw and re.search(r"\b(?:sections?|parts?|chapters?|steps?)\b", whole):
        low = re.escape(raw.group("m").lower())
        x = re.escape(raw.group("x").lower())
        m = re.search(
            rf"\b(?:mark|start|begin|label|head|prefix|open)\w*\s+(?:the\s+beginning\s+of\s+|the\s+start\s+of\s+)?"
            rf"(?:each|every)\s+(?:sections?|parts?|chapters?)\s+(?:with|using|by)\s+{low}\s+{x}{re.escape(raw.group('suf'))}"
            rf"(?:\s*,?\s*(?:where|with)\s+{x}\s+(?:(?:is|being)\s+(?:the\s+)?(?:sections?|parts?|chapters?)(?:'s)?\s+(?:number|index)"
            rf"|counts?\s+up\s+from\s+1)"
            rf"(?:\s*\(\s*1\s*,\s*2\s*,[^)]*\))?)?",
            cl.w,
        )
        if m:
            marker(raw.group("m"), raw.group("suf"), None)
            cl.consume(m)
            cl.each(
                rf",?\s*(?:such\s+as|like|eg|for\s+example)\s*:?\s*{low}\s+1{re.escape(raw.group('suf'))}",
                lambda m: True,
            )
    # a quoted marker with a letter for its number: "mark each with 'Part N', where N is its number"
    for m in re.finditer(Q, cl.w):
        said = re.fullmatch(r"(?P<p>[A-Za-z#][\w# ]*?)\s+(?P<x>[XN])(?P<s>[:.)]?)", cl.q(m.group(0)).strip())
        if said is None:
            continue
        around = re.search(
            rf"\b(?:mark|label|start|begin|head|open|prefix)\w*\s+(?:the\s+beginning\s+of\s+)?(?:each|every)\s*(?:\w+\s+)?"
            rf"(?:with\s+)?{re.escape(m.group(0))}(?:\s*,?\s*(?:where|with)\s+[xn]\s+(?:is|being)\s+(?:its|the)\s+"
            rf"(?:\w+\s+)?(?:number|index))?",
            cl.w,
        )
        if around and re.search(r"\b(?:sections?|parts?|chapters?|steps?)\b", whole):
            marker(said.group("p"), said.group("s"), None)
            cl.consume(around)
    # quoted markers with their numbers: "'Part 1:' and 'Part 2:' respectively", "'## Section 1' to '## Section 4'"
    quoted = [(m, cl.q(m.group(0))) for m in re.finditer(Q, cl.w)]
    fits = [(m, re.fullmatch(r"(?P<p>\S(?:.*\S)?)\s*(?P<n>\d+)(?P<s>[:.)]?)", q.strip())) for m, q in quoted]
    numbered = [(m, x) for m, x in fits if x is not None]
    if len(numbered) >= 2 and re.search(
        r"\b(?:sections?|parts?|chapters?|headed|heading|(?:start|begin|open)\w*\s+(?:each|them)|label\w*|respectively)\b",
        cl.w,
    ):
        prefixes = {x.group("p") for _, x in numbered}
        suffixes = {x.group("s") for _, x in numbered}
        nums = [int(x.group("n")) for _, x in numbered]
        if len(prefixes) == 1 and len(suffixes) == 1 and nums[0] == 1:
            joined = re.search(r"\bto\b", cl.w[numbered[0][0].end() : numbered[-1][0].start()])
            count = nums[-1] if joined else len(nums)
            if nums == list(range(1, len(nums) + 1)) or (joined and len(nums) == 2):
                marker(prefixes.pop(), suffixes.pop(), count)
                cl.blank(numbered[0][0].start(), numbered[-1][0].end())
                cl.each(
                    r"\b(?:divide|split|organi[sz]e|structure|break)\w*\s+(?:your\s+|the\s+)?(?:answer|response|reply|"
                    r"text|output)?\s*(?:in|into)\s+(?P<n>\d+)\s+(?:numbered\s+)?(?:sections?|parts?|chapters?)\b"
                    r"|\b(?:starting|beginning|opening|headed|labell?ed|marked|titled)\s+(?:each\s+)?(?:with\s+)?"
                    r"|\brespectively\b|\b(?:markdown\s+)?headings?\b|\bnumbered\s+(?:sections?|parts?)\b",
                    lambda m: True,
                )
    c = next((x for x in cl.found if x["rule"] == "sections"), None)
    if c is not None:
        counted = re.search(r"\b(?:in|into)\s+(?P<n>\d+)\s+(?:sections?|parts?|chapters?)\b", cl.w)
        if counted and "max" not in c:
            c["min"] = c["max"] = int(counted.group("n"))
            cl.consume(counted)
    # "Split your reply into 3 sections": a count of sections (of parts or chapters only where the instruction
    # names their marker, which is what tells a part)
    marked = re.search(r"\b(?:with|using|by)\s+[a-z]+\s+(?:x|n)\b|" + Q + r"[^.]*?" + Q, whole) is not None

    def split(m: re.Match[str]) -> bool:
        if m.group("noun").startswith(("part", "chapter")) and not marked:
            return False
        n = int(m.group("n"))
        cl.add({"rule": "sections", "min": n, "max": n})
        return True

    cl.each(
        r"\b(?:divide|split|organi[sz]e|structure|break)\w*\s+(?:(?:your|the)\s+)?(?:answer|response|reply|text|output)?\s*"
        r"(?:in|into)\s+(?P<n>\d+)\s+(?:numbered\s+)?(?P<noun>sections?|parts?|chapters?)\b",
        split,
    )


def _read_headings(cl: ClauseText) -> None:
    """Markdown headings counted (``exactly 3 Markdown headings``) or one per section."""

    def counted(m: re.Match[str]) -> None:
        n = int(m.group("n"))
        kind = (m.group("cmp") or "").strip()
        b = (
            {"min": n}
            if kind == "at least"
            else {"max": n}
            if kind in ("at most", "no more than")
            else {"min": n, "max": n}
        )
        cl.add({"rule": "headings", **b})

    cl.each(
        r"\b(?P<cmp>exactly\s+|at\s+least\s+|at\s+most\s+|no\s+more\s+than\s+)?(?P<n>\d+)\s+markdown\s+(?:headings|headers)\b"
        r"(?:\s*\(\s*lines?\s+(?:starting|beginning)\s+with\s+#\s*\))?",
        counted,
    )


# -- one unit's start or end ----------------------------------------------------------------------------------------
_NTH_UNITS = {
    "paragraph": "paragraph",
    "paragraphs": "paragraph",
    "sentence": "sentence",
    "sentences": "sentence",
    "line": "line",
    "lines": "line",
    "bullet": "item",
    "bullets": "item",
    "bullet point": "item",
    "bullet points": "item",
    "item": "item",
    "items": "item",
}
_NTH_RX = "|".join(sorted(_NTH_UNITS, key=len, reverse=True))


def _read_nth(cl: ClauseText, sentence: str, whole: str) -> None:
    def add(unit: str, index: int, side: str, text: str) -> None:
        c: dict[str, Any] = {"rule": "nth", "unit": unit, "index": index, "side": side, "text": text}
        if unit == "paragraph" and cl.memory.get("separator"):
            c["separator"] = cl.memory["separator"]
        cl.add(c)

    def raw_word(word: str) -> str:
        found = re.search(rf"(?<![\w'-]){re.escape(word)}(?![\w'-])", cl.raw, re.I)
        return found.group(0) if found else word

    start_v = r"(?:start|begin|open)\w*"
    end_v = r"(?:end|finish|conclude|close)\w*"
    units = "|".join(sorted(_NTH_UNITS, key=len, reverse=True))

    def nth(m: re.Match[str]) -> bool:
        if re.search(r"\b(?:not|never)\b|n't\b", m.group(0)):
            return False
        unit = _NTH_UNITS[m.group("u1") or m.group("u2")]
        k = ORDINALS[m.group("ord")] if m.group("ord") else int(m.group("k"))
        side = "end" if re.match(end_v, m.group("verb")) else "start"
        if m.group("q"):
            text = cl.q(m.group("q")).strip()
        elif m.group("word") and m.group("w") not in ("a", "an", "the", "it", "this", "that"):
            text = raw_word(m.group("w"))  # an unquoted target needs "the word X"
        else:
            return False
        if not text:
            return False
        add(unit, k, side, text)
        return True

    cl.each(
        rf"\b(?:the\s+|your\s+)?(?:(?P<ord>{_ORD})\s+(?P<u1>{units})|(?P<u2>{units})\s+(?:number\s+|no\s+)?(?P<k>\d+))"
        rf"\s+(?:of\s+(?:your|the)\s+(?:answer|response|reply)\s+)?(?:(?:must|should|has\s+to|needs\s+to|will|shall)\s+)?"
        rf"(?:not\s+)?(?P<verb>{start_v}|{end_v})\s+(?:with\s+|in\s+|on\s+)?"
        rf"(?P<word>(?:the\s+)?(?:exact\s+)?(?:word|phrase|text)\s+)?(?:(?P<q>{Q})|(?P<w>[a-z][\w'-]*)\b)",
        nth,
    )

    def line_at_end(m: re.Match[str]) -> bool:
        text = cl.q(m.group("q")).strip()
        if not text:
            return False
        add("line", -1, "start", text)
        return True

    # "finish with a line beginning with 'P.P.S'": the last line starts with it
    cl.each(
        rf"\b(?:end|finish|close|conclude)\w*\s+(?:{SUBJECT}\s+)?with\s+a\s+(?:final\s+|last\s+)?line\s+(?:that\s+)?"
        rf"(?:begins|starts|beginning|starting|opening|opens)\s+with\s+(?P<q>{Q})",
        line_at_end,
    )

    def in_order(m: re.Match[str], unit_word: str, n_text: str | None, *, count: bool) -> bool:
        """The quoted texts of ``m`` at the start (or end) of the 1st, 2nd, ... unit, in order; with ``count``
        a stated number of units is a count clause too."""
        qs = [cl.q(t).strip() for t in re.findall(Q, m.group("qs"))]
        unit = _NTH_UNITS[unit_word]
        n = int(n_text) if n_text else None
        if len(qs) < 2 or (n is not None and n != len(qs)) or not all(qs):
            return False
        side = "end" if re.match(end_v, m.group("verb")) else "start"
        for i, q in enumerate(qs, 1):
            add(unit, i, side, q)
        if count and n is not None:
            rule = {"paragraph": "paragraphs", "sentence": "sentences", "line": "lines", "item": "items"}[
                unit
            ]
            cl.add({"rule": rule, "min": n, "max": n})
        return True

    def respectively(m: re.Match[str]) -> bool:
        """``Start each of your 3 paragraphs with the word 'First', 'Second' and 'Third' respectively``."""
        return in_order(m, m.group("unit"), m.group("n"), count=True)

    def respectively_here(m: re.Match[str]) -> bool:
        """``..., each ending in 'I sit.' and 'I cry.' respectively``: the unit named before, in the sentence."""
        named = list(
            re.finditer(
                rf"\b(?:(?P<n>\d+)\s+)?(?P<unit>{units})\b", sentence[: sentence.find("respectively")]
            )
        )
        if not named:
            return False
        return in_order(m, named[-1].group("unit"), named[-1].group("n"), count=False)

    cl.each(
        rf"^\s*(?:and\s+)?(?:each|every\s+(?:one|1))\s+(?:of\s+them\s+)?(?P<verb>{start_v}|{end_v})\s+(?:with\s+|in\s+|on\s+)?"
        rf"(?:the\s+(?:words?|phrases?)\s+)?(?P<qs>{Q}(?:\s*,?\s*(?:and\s+)?{Q})+)\s*,?\s+respectively\b",
        respectively_here,
    )

    cl.each(
        rf"\b(?P<verb>{start_v}|{end_v})\s+(?:each|every\s+(?:one|1))\s+of\s+(?:your|the)\s+(?:(?P<n>\d+)\s+)?(?P<unit>{units})\s+"
        rf"with\s+(?:the\s+(?:words?|phrases?)\s+)?(?P<qs>{Q}(?:\s*,?\s*(?:and\s+)?{Q})+)\s*,?\s+respectively\b",
        respectively,
    )

    def pronoun(m: re.Match[str]) -> bool:
        """``the first one must end with the word 'night'``: the unit named last before it."""
        named = re.findall(
            rf"\b(?:{units})\b(?!\s+breaks?)", sentence[: max(0, sentence.find(m.group(0).strip()[:14]))]
        )  # "two line breaks" names no line
        if not named or re.search(r"\b(?:not|never)\b|n't\b", m.group(0)):
            return False
        text = cl.q(m.group("q")).strip()
        if not text:
            return False
        side = "end" if re.match(end_v, m.group("verb")) else "start"
        add(_NTH_UNITS[named[-1]], ORDINALS[m.group("ord")], side, text)
        return True

    cl.each(
        rf"\b(?:and\s+)?(?:the\s+)?(?P<ord>{_ORD})\s+(?:one|1)\s+(?:(?:must|should|has\s+to|needs\s+to|will|shall)\s+)?"
        rf"(?P<verb>{start_v}|{end_v})\s+(?:with\s+|in\s+)?(?:the\s+(?:exact\s+)?(?:word|phrase)\s+)?(?P<q>{Q})",
        pronoun,
    )
    cl.each(
        rf"\b(?:(?P<n>\d+)\s+)?(?P<unit>{units})\s*,?\s+(?:that\s+|which\s+)?(?:each\s+)?(?:\w+\s+)?(?P<verb>{start_v}|{end_v})"
        rf"\s+(?:with\s+|in\s+|on\s+)?(?:the\s+(?:words?|phrases?)\s+)?(?P<qs>{Q}(?:\s*,?\s*(?:and\s+)?{Q})+)\s*,?\s+"
        rf"respectively\b",
        respectively,
    )


def _read_numbered_positions(cl: ClauseText, whole: str) -> None:
    """``where word 3 is 'soft' and word 7 is 'beach'``, ``letter 1 is 's'`` (COLLIE): a word of the answer, or a
    letter of a one-word answer, at its place."""
    one_word = re.search(r"\b(?:a|1|one|a\s+single)\s+word\b", whole) and not re.search(
        r"\b(?:each|every)\b", whole
    )

    def at(m: re.Match[str]) -> bool:
        if re.search(r"\b(?:not|never)\b|n't\b", m.group(0)):
            return False
        unit = m.group("unit")
        text = cl.q(m.group("q")).strip() if m.group("q") else (m.group("l") or "")
        if unit == "letter" and (not one_word or len(text) != 1 or not text.isalpha()):
            return False
        if unit == "word" and not re.fullmatch(r"[A-Za-z][\w'-]*", text):
            return False
        k = int(m.group("k"))
        if k < 1:
            return False
        if unit == "word" and k == 1:
            cl.add({"rule": "starts_with", "text": text})
        else:
            cl.add(
                {"rule": "at", "unit": unit, "index": k, "text": text.lower() if unit == "letter" else text}
            )
        return True

    cl.each(
        rf"\b(?:(?:where|in\s+which|and|with)\s+)?(?:the\s+)?(?P<unit>word|letter)\s+(?:number\s+|no\s+)?(?P<k>\d+)\s+"
        rf"(?:(?:must|should|has\s+to|needs\s+to)\s+(?:not\s+)?be|is|being)\s+(?:the\s+(?:word|letter)\s+)?"
        rf"(?:(?P<q>{Q})|(?P<l>[a-z])\b)",
        at,
    )
