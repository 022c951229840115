"""Forms of the whole answer: what wraps it, how its parts are separated and marked, and
fixed shapes such as a JSON array, read into constraints by the main reader (the second reading reads them apart,
:mod:`rlar.synthesis.second.forms`).

:func:`read_forms` runs on a clause before the other phrasing families and blanks what it used (the parts of the
answer and where they stand are :mod:`rlar.tasks.reading_parts`'s, which it runs):

- a wrapper: ``wrap your answer in <answer></answer> tags``, ``inside a <summary> element``, ``one
  <note>...</note> element``, ``begin with <x> and end with </x>``, ``in square brackets`` around the whole
  answer (``wrap``: the tags as written, nothing outside them);
- parts on separator lines: ``two different responses separated by 6 asterisk symbols: ******``, ``put a line of
  three dashes (---) between them`` (``paragraphs`` with a ``separator``, ``distinct`` when the parts must
  differ; counts per part carry the separator);
- lists on one line: ``separated by commas`` / ``spaces`` / ``a vertical bar (|)`` / ``semicolons``,
  ``comma-separated`` (``delimited``: every piece one word / number / item, the count of pieces when the items
  are answers, options or alternatives);
- JSON arrays: ``a JSON array of exactly 3 strings``, ``a JSON list containing four integers``, ``a JSON array
  whose items are all booleans`` (``json_array`` with a type and a count);
- section markers: ``SECTION X, where X is the section number``, ``'Part 1:' and 'Part 2:'``, ``headed '##
  Section 1' to '## Section 4'`` (``sections`` with the marker as written and the mark after the number), and
  Markdown headings (``headings``);
- the start or end of one paragraph / sentence / line: ``paragraph 2 must start with the word X``, ``the last
  line must begin with 'P.P.S'``, ``finish with a line beginning with 'X'``, ``2 sentences that end in 'math' and
  'road' respectively`` (``nth``);
- hashtags that close the answer (``end with two hashtags and nothing after them``: ``trailing``), the request
  repeated first (``first repeat the request word for word``: ``repeat``), and options written without quotes
  (``either True or False``, ``one of A, B, C or D``: ``one_of``).

What it cannot read whole it leaves, so the clause stays partial (refused): nothing is read loosely.
"""

from __future__ import annotations

import re
from typing import Any

from rlar.tasks.phrasings import MARK_RX, ClauseText, Q, mark_text
from rlar.tasks.reading_parts import SUBJECT, read_parts

__all__ = ["read_forms"]
_TAG = r"(?<!<)<(?P<slash>/?)(?P<name>[A-Za-z][\w.:-]*)>(?!>)"  # "<<title>>" is a title, not a tag


def read_forms(cl: ClauseText, sentence: str, whole: str) -> None:
    """Read the answer forms of the module docstring in one clause (``sentence`` / ``whole``: the clause's
    sentence and the whole instruction, lowercased with digits)."""
    cl.memory["forms_clause"] = cl.w  # the clause before anything is blanked
    _read_wrap(cl)
    _read_bracket_wrap(cl)
    _read_postscript(cl)
    _read_hashtag_notes(cl)
    _read_repeat(cl)
    _read_json_array(cl, whole)
    _read_notes(cl, whole)
    read_parts(cl, sentence, whole)  # separators, lists, markers, headings, one unit's start or end
    _read_trailing(cl)
    _read_at_the_end(cl, whole)
    _read_last_words(cl)
    _read_bare_options(cl)
    _read_leading_verb(cl)


# -- wrappers ------------------------------------------------------------------------------------------------
def _read_wrap(cl: ClauseText) -> None:
    """An XML-style element around the whole answer; the tag as the instruction writes it (case kept)."""
    tags = list(re.finditer(_TAG, cl.raw))
    if not tags and cl.memory.get(
        "wrap"
    ):  # "... and write one sentence inside them": the element read before
        cl.each(
            r"\b(?:inside|within|in\s+between|between)\s+(?:them|the\s+tags|the\s+element|it)\b|\bin\s+between\b"
            r"|\b(?:inside|within)(?=\s*[.,;]?\s*$)",
            lambda m: True,
        )
    if tags:  # "with no text outside it" says what a wrapper is
        cl.each(
            r",?\s*\b(?:with\s+|and\s+)?(?:no|nothing)\s+(?:other\s+)?(?:text|words)?\s*(?:else\s+)?"
            r"(?:outside|before\s+or\s+after)(?:\s+(?:of\s+)?(?:it|them|the\s+tags?|the\s+element))?",
            lambda m: True,
        )
    negated = re.search(
        r"\b(?:not|never|don't|without)\b(?:\s+\w+){0,3}?\s+(?:wrap|enclos|surround|put|plac|use|includ|add)\w*|\bno\s+(?:xml\s+)?tags?\b",
        cl.w,
    )
    if not tags or negated:
        return
    names = {m.group("name") for m in tags}
    if len(names) != 1 or not re.search(
        r"\b(?:wrap\w*|enclos\w*|surround\w*|inside|within|between|element|tags?|begin\w*|start\w*)\b", cl.w
    ):
        return  # two different tags are not one wrapper; a tag named with no wrapping word is not read
    name = names.pop()
    if cl.memory.get("html_list") and name.lower() in ("ul", "ol", "li"):
        return  # an HTML list's own tags: the list rule holds them (rlar.tasks.reading_layouts)
    low = re.escape(name.lower())
    cl.add({"rule": "wrap", "open": f"<{name}>", "close": f"</{name}>"})
    cl.memory["wrap"] = name
    cl.each(
        rf"(?:\b(?:begin|start|open)\w*\s+(?:it\s+|your\s+\w+\s+)?with\s+)?(?:(?:an?|the|one|1|single)\s+)*"
        rf"(?:xml\s+|html\s+)?<{low}>(?:\s*(?:\.\.\.|…)?\s*</{low}>)?(?:\s+(?:xml\s+|html\s+)?(?:tags?(?:\s+pair)?|elements?|block))?"
        rf"|(?:\b(?:and\s+)?(?:end|finish|close)\w*\s+(?:it\s+|your\s+\w+\s+)?with\s+)?(?:the\s+)?</{low}>"
        rf"(?:\s+(?:tags?|elements?))?",
        lambda m: True,
    )
    cl.each(
        r"\b(?:wrap|enclose|surround|put|place)\w*\b|\b(?:inside|within|in\s+between|between)\b"
        r"(?:\s+(?:them|the\s+tags|it|the\s+element))?|\belements?\b|\btags?(?:\s+pair)?\b|\bie\b|\beg\b",
        lambda m: True,
    )


_BRACKETS = {
    "square brackets": ("[", "]"),
    "brackets": ("[", "]"),
    "parentheses": ("(", ")"),
    "round brackets": ("(", ")"),
    "curly braces": ("{", "}"),
    "curly brackets": ("{", "}"),
}


def _read_bracket_wrap(cl: ClauseText) -> None:
    """``Wrap the entire response in square brackets``: the whole answer between the marks."""

    def wrap(m: re.Match[str]) -> None:
        opening, closing = _BRACKETS[re.sub(r"\s+", " ", m.group("b"))]
        cl.add({"rule": "wrap", "open": opening, "close": closing})

    names = "|".join(k.replace(" ", r"\s+") for k in sorted(_BRACKETS, key=len, reverse=True))
    cl.each(
        rf"\b(?:wrap|enclose|put|place|surround)\w*\s+(?:(?:your|the|this)\s+)?(?:(?:entire|whole|full|complete)\s+)?"
        rf"(?:response|answer|reply|output|text|message)\s+(?:in|inside|within|with|between)\s+(?:a\s+pair\s+of\s+)?(?P<b>{names})\b",
        wrap,
    )


# -- a postscript with its marker, and notes on what a hashtag is --------------------------------------------
def _read_postscript(cl: ClauseText) -> None:
    """``followed by a postscript beginning with 'P.S.'``: the postscript and its marker, read before a start
    rule could take ``beginning with 'P.S.'`` for the answer's first words."""

    def ps(m: re.Match[str]) -> None:
        marker = cl.q(m.group("q")) if m.group("q") else mark_text(m.group("mark"))
        cl.add({"rule": "postscript", "text": marker})

    cl.each(
        rf"\b(?:(?:followed\s+by|follow\s+(?:them|it|this|that)\s+(?:up\s+)?with|then\s+(?:add|write|include)|and\s+then|plus|and\s+add|"
        rf"add(?:ing)?|include|with|"
        rf"(?:end|finish|close)\w*\s+(?:{SUBJECT}\s+)?with)\s+)?(?:an?\s+)?(?:postscript|(?P<m0>{MARK_RX}))\s+"
        rf"(?:(?:at|to)\s+the\s+(?:end|bottom)\s+(?:of\s+(?:your|the)\s+\w+\s+)?)?"
        rf"(?:that\s+)?(?:(?:starts|starting|begins|beginning|opening|opens)\s+with|marked(?:\s+with)?|labell?ed(?:\s+with)?|"
        rf"introduced\s+by)\s+(?:the\s+marker\s+)?"
        rf"(?:(?P<q>{Q})|(?P<mark>{MARK_RX}))",
        ps,
    )


def _read_hashtag_notes(cl: ClauseText) -> None:
    """``(words starting with #)``: what a hashtag is, which the hashtag count already checks."""
    if "hashtag" in cl.w:
        cl.each(
            r"\(\s*(?:i\.?e\.?\s*,?\s*|ie\s+|that\s+is\s*,?\s*)?(?:words?|tags?|terms?)\s+(?:starting|beginning|that\s+start)\s+"
            r"with\s+(?:a\s+|the\s+)?(?:#|hash\s+(?:sign|symbol)|pound\s+sign)\s*\)",
            lambda m: True,
        )


# -- the request repeated ------------------------------------------------------------------------------------
def _read_repeat(cl: ClauseText) -> None:
    """``First repeat the request word for word without change, then give your answer``: the answer opens with
    the request, which is the instruction's text before this sentence (a quoted request is that quote)."""
    m = re.search(
        r"\b(?:first\s+)?(?:repeat|restate|copy|echo)\s+(?:the\s+|this\s+|my\s+|our\s+)?(?:request|question|prompt|"
        r"instruction|task)(?:\s+(?:above|below))?(?:\s+(?P<q>"
        + Q
        + r"))?\s+(?:word\s+for\s+word|verbatim|exactly|exactly\s+as\s+(?:it\s+is\s+)?(?:written|given))"
        r"(?:\s+without\s+(?:any\s+)?change\w*)?(?:\s*,?\s*(?:and\s+)?then\s+(?:give|write|provide)\s+your\s+answer)?",
        cl.w,
    )
    if not m or re.search(r"\b(?:not|never|don't)\b", cl.w[: m.start()]):
        return
    request = cl.q(m.group("q")) if m.group("q") else str(cl.memory.get("before_repeat", "")).strip()
    if not request:
        return
    cl.add({"rule": "repeat", "text": request})
    cl.consume(m)
    cl.each(
        r"\(?\s*1\s+do\s+not\s+say\s+any\s+words\s+or\s+characters\s+before\s+repeating\s+the\s+request\s*;?\s*"
        r"|\b2\s+the\s+request\s+you\s+need\s+to\s+repeat\s+does\s+not\s+include\s+this\s+sentence\s*\)?",
        lambda m: True,
    )


# -- JSON arrays --------------------------------------------------------------------------------------------------
_JSON_TYPES = {
    "strings": "string",
    "string": "string",
    "texts": "string",
    "integers": "integer",
    "integer": "integer",
    "whole numbers": "integer",
    "numbers": "number",
    "number": "number",
    "booleans": "boolean",
    "boolean": "boolean",
    "objects": "object",
    "object": "object",
}
_JTYPE = "|".join(sorted(_JSON_TYPES, key=len, reverse=True))


def _read_json_array(cl: ClauseText, whole: str) -> None:
    """A JSON array as the whole answer: its item type and count where the clause states them (a count in another
    clause, ``it must have 2 items``, is joined to it by :func:`rlar.tasks.reading.read_instruction`)."""
    head = re.search(
        r"\b(?:(?:return|output|give|write|answer|respond|reply|produce)\w*\s+(?:only\s+)?(?:with\s+)?(?:only\s+)?)?"
        r"(?:(?:an?|one|1|the)\s+)?(?:valid\s+)?json\s+(?:array|list)\b",
        cl.w,
    )
    if head is None:
        if re.search(r"\bjson\s+(?:array|list)\b", whole):  # "...; the array must contain 3 elements."
            cl.each(
                r"\b(?:it|the\s+array|the\s+list)\s+(?:must|should|has\s+to|needs\s+to|will)\s+(?:have|hold|contain)\s+"
                r"(?:exactly\s+)?(?P<n>\d+)\s+(?:items|elements|entries|values)\b",
                lambda m: cl.add({"rule": "json_array", "min": int(m.group("n")), "max": int(m.group("n"))}),
            )
        return
    c: dict[str, Any] = {"rule": "json_array"}
    cl.consume(head)
    counted = re.search(
        rf"\b(?:of|with|containing|holding|that\s+(?:has|holds|contains))\s+(?P<cmp>exactly\s+|at\s+least\s+|at\s+most\s+|"
        rf"no\s+more\s+than\s+)?(?P<n>\d+)\s+(?:(?P<t>{_JTYPE})|items?|elements?|entries|values?)\b",
        cl.w,
    )
    if counted:
        n = int(counted.group("n"))
        kind = (counted.group("cmp") or "exactly").strip()
        if kind == "at least":
            c["min"] = n
        elif kind in ("at most", "no more than"):
            c["max"] = n
        else:
            c["min"] = c["max"] = n
        if counted.group("t"):
            c["type"] = _JSON_TYPES[counted.group("t")]
        cl.consume(counted)
    typed = re.search(
        rf"\b(?:whose|where\s+the|with|and\s+its|its)\s+(?:items|elements|entries|values)\s+(?:are|must\s+be|should\s+be|"
        rf"being)\s+(?:all\s+)?(?P<t>{_JTYPE})\b|\b(?:of|with)\s+(?:only\s+)?(?P<t2>strings|integers|booleans|objects|numbers)\b",
        cl.w,
    )
    if typed:
        c["type"] = _JSON_TYPES[typed.group("t") or typed.group("t2")]
        cl.consume(typed)
    cl.add(c)
    cl.each(r"\b(?:and\s+)?nothing\s+else\b|\bonly\b", lambda m: True)


# -- notes that restate what a rule already checks ------------------------------------------------------------
def _read_notes(cl: ClauseText, whole: str) -> None:
    """``You can use markdown ticks such as ```'' beside JSON (a fenced block is read as the JSON it holds);
    ``separated with each other by two new lines as if it was '\\n\\n' in python`` (the blank line that separates
    paragraphs by default)."""
    if re.search(r"\bjson\b", whole):
        cl.each(
            r"\byou\s+(?:can|may|are\s+allowed\s+to)\s+use\s+(?:markdown\s+)?(?:ticks|backticks|code\s+fences?)"
            r"(?:\s+such\s+as\s+```)?",
            lambda m: True,
        )
    # the paragraph separator said in other words: a blank line is what separates paragraphs anyway
    cl.each(
        r"\b(?:(?:each\s+)?separated|divided|split)\s+(?:from\s+each\s+other\s+)?(?:by|with)\s+(?:2|two|double)\s+(?:line\s+breaks|"
        r"newlines|new\s+lines|returns)\b",
        lambda m: re.search(r"\bparagraphs?\b", whole) is not None,
    )
    # what names the answer, no requirement: "somewhere in your reply", "throughout your answer", "present the
    # answer as", "organize your reply in(to)"
    cl.each(
        r"\bsomewhere(?:\s+in\s+(?:your|the)\s+(?:reply|answer|response|text))?\b|\bthroughout(?:\s+(?:your|the)\s+"
        r"(?:reply|answer|response|text))?\b|\b(?:present|format)\s+(?:your|the)\s+(?:reply|answer|response|text|output)\s+as\b"
        r"|\b(?:organi[sz]e|arrange|structure|lay\s+out)\s+(?:your|the)\s+(?:reply|answer|response|text|output)\s+(?:in|into)"
        r"(?=\s+\d+\s+(?:paragraphs|sentences|bullet|bullets|lines)\b)",
        lambda m: True,
    )
    cl.each(
        rf"\b(?:paragraphs\s+)?(?:are|is|should\s+be|must\s+be)?\s*separated\s+(?:with|from)\s+each\s+other\s+by\s+"
        rf"(?:2|two)\s+new\s*lines(?:\s+as\s+if\s+it\s+(?:was|were)\s+{Q}\s+in\s+python)?",
        lambda m: True,
    )


_AT_END = (
    r"(?:at|to)\s+the\s+(?:very\s+)?(?:end|bottom)(?:\s+of\s+(?:your|the|this)\s+(?:entire\s+|whole\s+)?"
    r"(?:answer|response|reply|text|message|output|post|note|letter|email))?"
)


def _read_at_the_end(cl: ClauseText, whole: str) -> None:
    """``at the end`` where a rule puts something there: a postscript is at the end by what it is; hashtags at the
    end close the answer (``trailing``); a mark at the end is how the answer ends. Anywhere else ``end`` is a
    requirement word left unread (the clause is refused), not context."""
    if any(c["rule"] == "postscript" for c in cl.found) or re.search(r"\bpostscript\b|" + MARK_RX, whole):
        cl.each(
            rf"\b{_AT_END}\b",
            lambda m: (
                any(c["rule"] == "postscript" for c in cl.found)
                or "postscript" in cl.w
                or re.search(MARK_RX, cl.raw) is not None
            ),
        )

    def tags(m: re.Match[str]) -> None:
        n = int(m.group("n"))
        kind = (m.group("cmp") or "").strip()
        bounds = (
            {"min": n}
            if kind in ("at least", "no fewer than", "no less than")
            else {"max": n}
            if kind in ("at most", "no more than")
            else {"min": n, "max": n}
        )
        cl.add({"rule": "trailing", "what": "hashtags", **bounds})

    cl.each(
        rf"\b(?:(?:add|put|place|include|use|append|finish\s+with|end\s+with)\s+)?(?P<cmp>exactly\s+|at\s+least\s+|at\s+most\s+|no\s+fewer\s+than\s+|"
        rf"no\s+less\s+than\s+|no\s+more\s+than\s+)?(?P<n>\d+)\s+hashtags\s+{_AT_END}\b",
        tags,
    )
    marks = {
        "question mark": "?",
        "exclamation mark": "!",
        "exclamation point": "!",
        "period": ".",
        "full stop": ".",
    }

    def mark(m: re.Match[str]) -> None:
        cl.add({"rule": "ends_with", "text": marks[m.group("mark")]})

    cl.each(
        rf"\b(?:(?:put|place|add|use|include|have)\s+)?an?\s+(?P<mark>question mark|exclamation mark|exclamation point|"
        rf"period|full stop)\s+{_AT_END}\b",
        mark,
    )


def _read_last_words(cl: ClauseText) -> None:
    """``Your last words must be 'Thanks for reading.'``: how the answer ends."""
    cl.each(
        rf"\b(?:your|the)\s+(?:very\s+)?(?:last|final|closing)\s+words\s+(?:must|should|need\s+to|have\s+to|will)\s+be\s+"
        rf"(?:the\s+(?:phrase|words)\s+)?(?P<q>{Q})",
        lambda m: cl.add({"rule": "ends_with", "text": cl.q(m.group("q"))}),
    )


def _read_leading_verb(cl: ClauseText) -> None:
    """``Name 5 numbers ...``: the order, whose object the other readers read (run last: the readers above
    match their own verbs)."""
    cl.each(
        r"^\s*(?:please\s+)?(?:name|provide|output|return)\b(?=\s+(?:me\s+)?(?:exactly\s+|at\s+least\s+|"
        r"at\s+most\s+|only\s+)?(?:\d|an?\s))",
        lambda m: True,
    )


# -- hashtags that close the answer --------------------------------------------------------------------------
def _read_trailing(cl: ClauseText) -> None:
    def tail(m: re.Match[str]) -> None:
        n = int(m.group("n"))
        cl.add({"rule": "trailing", "what": "hashtags", "min": n, "max": n})

    cl.each(
        rf"\b(?:end|finish|close|conclude)\w*\s+(?:{SUBJECT}\s+)?with\s+(?:exactly\s+)?(?P<n>\d+)\s+hashtags\b"
        r"(?:\s*(?:,|and)?\s*(?:with\s+)?nothing\s+(?:else\s+)?after\s+(?:them|those|it|the\s+last\s+(?:one|1|hashtag)))?",
        tail,
    )


# -- options written without quotes --------------------------------------------------------------------------
def _read_bare_options(cl: ClauseText) -> None:
    """``either True or False``, ``one of A, B, C or D``: options written without quotes, as written (their case
    kept, from the raw clause)."""

    def opts(m: re.Match[str]) -> bool:
        names = [x for x in re.split(r"\s*,\s*(?:or\s+)?|\s+or\s+", m.group("opts").strip()) if x]
        if len(names) < 2 or not all(re.fullmatch(r"[a-z0-9][\w'-]*", x) for x in names):
            return False
        single = all(len(x) == 1 for x in names)
        if not single and any(x in _NOT_OPTIONS for x in names):
            return False
        raw = re.search(
            r"(?i)(?<![\w'-])" + r"\W+(?:or\W+)?".join(map(re.escape, names)) + r"(?![\w'-])", cl.raw
        )
        if raw is None:
            return False
        got = [x for x in re.split(r"\s*,\s*(?:or\s+)?|\s+or\s+", raw.group(0).strip()) if x]
        if [x.lower() for x in got] != names:
            return False
        cl.add({"rule": "one_of", "options": got})
        cl.memory["options"] = got
        return True

    item = r"[a-z0-9][\w'-]*"
    if any(c["rule"] == "one_of" for c in cl.found) or cl.memory.get("options"):
        cl.each(
            r"\b(?:and\s+)?(?:reply|respond|answer)\s+with\s+(?:only\s+)?(?:that|the\s+chosen|your\s+chosen)\s+"
            r"(?:word|letter|option|one|choice)(?:\s+only|\s+alone)?\b",
            lambda m: True,
        )
    cl.each(
        rf"\b(?:(?:choose|pick|select|answer\s+with|reply\s+with|respond\s+with|say|write)\s+)?(?:exactly\s+|only\s+)?"
        rf"(?:either|(?:1|one)\s+of(?:\s+the\s+(?:options|letters|words))?\s*:?)\s+"
        rf"(?P<opts>{item}(?:\s*,\s*{item})*\s*,?\s+or\s+{item})\b",
        opts,
    )


_NOT_OPTIONS = {
    "it",
    "not",
    "the",
    "a",
    "an",
    "them",
    "these",
    "those",
    "both",
    "neither",
    "you",
    "your",
    "my",
}
