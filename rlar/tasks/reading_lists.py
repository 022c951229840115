"""Lists, figures, pairs and repeated units of the whole answer (issue 25, seventh round; RECAST / SysBench / IFBench
formats), read by the main reader (the second reading reads them apart, :mod:`rlar.synthesis.second.layouts`):

- HTML lists: ``an HTML unordered list``, ``a <ul> element holding exactly three <li> items``, ``an ordered HTML
  list (<ol>) of 5 steps``, ``with nothing outside the list`` (``html_list``; items are its ``<li>`` texts);
- Markdown task lists: ``a Markdown task list of five items where exactly two are checked``, ``none of them ticked
  yet`` (``task_list``, ``checked`` / ``unchecked``);
- nested lists: top items and sub-items with their markers as quoted (``'- '`` a top item, ``'  - '`` a sub-item
  and its indent) or ``denoted by *``, how many top items and how many sub-items under each (``outline``);
- figures: ``a right triangle of asterisks with between 4 and 6 rows``, ``an inverted triangle made of the
  character #``, ``a centred pyramid of lowercase x`` and the rows they describe (``figure``; ``a triangle`` with
  no shape is left unread);
- question/answer pairs: ``N question-and-answer pairs``, ``each question on a line starting with 'Q: ' and its
  answer on the next line starting with 'A: '``, numbered markers (``'Question 1:'`` ... ``'Answer 1:'``), ``every
  question must end with a question mark`` (``pairs``);
- repeated units: ``whose first line and last line are identical``, ``the third paragraph repeats the first one
  word for word``, ``line 5 is the same as line 1``, ``the last line is identical to the first`` (``same``);
- links: ``each URL must start with https://``, ``whose link text is exactly the word 'here'`` (``each`` on the
  ``url`` / ``link_text`` units).

What is not read whole is left, so the clause stays partial and is refused.
"""

from __future__ import annotations

import re
from typing import Any

from rlar.tasks.numbers import ORDINALS
from rlar.tasks.phrasings import ClauseText, Q

__all__ = ["read_lists"]

_ORD_RX = "|".join(sorted(ORDINALS, key=len, reverse=True))


def read_lists(cl: ClauseText, sentence: str, whole: str) -> None:
    """Read the phrasings of the module docstring in one clause (``sentence`` / ``whole``: the clause's sentence and
    the whole instruction, lowercased with digits)."""
    _read_html(cl, whole)
    _read_tasks(cl, whole)
    _read_outline(cl, sentence, whole)
    _read_figure(cl, sentence, whole)
    _read_pairs(cl, whole)
    _read_same(cl, whole)
    _read_link_forms(cl, whole)


def _quoted(cl: ClauseText, text: str) -> list[str]:
    return [cl.q(t) for t in re.findall(Q, text)]


# -- HTML and Markdown lists ----------------------------------------------------------------------------------------
def _read_html(cl: ClauseText, whole: str) -> None:
    if not re.search(r"<[uo]l>|\bhtml\b", whole):
        return
    tag = "ol" if re.search(r"<ol>|\bordered\s+html\s+list|\bhtml\s+ordered\s+list", whole) else "ul"
    cl.memory["html_list"] = True

    def html(m: re.Match[str]) -> bool:
        n = m.group("n") or m.group("n2")
        c: dict[str, Any] = {"rule": "html_list", "tag": tag}
        if n:
            c.update({"min": int(n), "max": int(n)})
        cl.add(c)
        return True

    cl.each(
        r"\b(?:format\s+the\s+answer\s+as\s+|reply\s+with\s+(?:only\s+)?"
        r"|as\s+)?an?\s+(?=[a-z ]*html)(?:html\s+)?(?:(?:un)?ordered\s+)?(?:html\s+)?list"
        r"(?:\s*\(\s*<[ou]l>\s*\))?(?:\s+of\s+(?P<n>\d+)\s+(?:steps|items|entries|points))?"
        r"|\b(?:(?P<n2>\d+)\s+)list\s+items\s+in\s+html\b",
        html,
    )
    c = next((x for x in cl.found if x["rule"] == "html_list"), None)
    cl.each(
        r":?\s*an?\s+<[ou]l>\s+element\s+holding\s+(?:exactly\s+)?(?P<n>\d+)\s+<li>\s+items\b",
        lambda m: _html_count(cl, int(m.group("n")), tag),
    )
    if (
        c is not None
        or any(x["rule"] == "html_list" for x in cl.found)
        or re.search(r"\bhtml\s+list|<[ou]l>", whole)
    ):
        cl.each(
            r",?\s*(?:with\s+)?nothing\s+(?:else\s+)?outside\s+(?:the|that)\s+list\b|\bevery\s+(?:step"
            r"|item)\s+goes\s+in\s+its\s+own\s+<li>\.*</li>"
            r"|,?\s*wrapped\s+in\s+<[ou]l>\s+and\s+</[ou]l>\s+and\s+nothing\s+else\b|\bevery\s+<li>\s+text\b"
            r"|\binside\s+the\s+tag\b",
            lambda m: True,
        )
        if not any(x["rule"] == "html_list" for x in cl.found) and re.search(
            r"wrapped\s+in\s+<[ou]l>", whole
        ):
            pass


def _html_count(cl: ClauseText, n: int, tag: str) -> bool:
    for c in cl.found:
        if c["rule"] == "html_list":
            c.update({"min": n, "max": n})
            return True
    cl.add({"rule": "html_list", "tag": tag, "min": n, "max": n})
    return True


def _read_tasks(cl: ClauseText, whole: str) -> None:
    if not re.search(r"\btask\s+list|checklist|to-do|\[x\]|\[ \]", whole):
        return
    cl.each(
        r"\b(?:make|write|give)?\s*an?\s+to-do\s+list\s+in\s+(?:github\s+)?markdown\s+(?:checkbox|task(?:\s+list)?)\s+"
        r"(?:format|form|syntax)\b",
        lambda m: cl.add({"rule": "task_list"}),
    )
    cl.each(
        r",?\s*\b(?P<n>\d+)\s+of\s+them\s+(?:ticked|checked|done|completed)\b",
        lambda m: cl.add({"rule": "checked", "min": int(m.group("n")), "max": int(m.group("n"))}),
    )
    cl.each(
        r"\b(?:write|give\s+me|produce|make)?\s*an?\s+(?:markdown\s+|github\s+markdown\s+)?(?:task\s+list"
        r"|to-do\s+checklist|checklist|completed\s+checklist)"
        r"(?:\s+in\s+github\s+markdown)?\b",
        lambda m: cl.add({"rule": "task_list"}),
    )
    cl.each(
        rf"\buse\s+{Q}\s+for\s+checked\s+(?:items|ones|tasks)\s+and\s+{Q}\s+for\s+unchecked\s+(?:ones|items|tasks)\b",
        lambda m: _task_marks(cl, m),
    )
    cl.each(
        r"\b(?:where\s+)?(?:exactly\s+)?(?P<n>\d+)\s+(?:of\s+them\s+)?(?:are|is)\s+(?:checked|ticked|done|completed)\b",
        lambda m: cl.add({"rule": "checked", "min": int(m.group("n")), "max": int(m.group("n"))}),
    )
    cl.each(
        r",?\s*\b(?:with\s+)?none\s+of\s+them\s+(?:is\s+|are\s+)?(?:ticked|checked|done|completed)(?:\s+yet)?\b",
        lambda m: cl.add({"rule": "checked", "max": 0}),
    )
    if any(c["rule"] == "task_list" for c in cl.found) or re.search(r"task\s+list|checklist", whole):
        cl.each(
            r"\b(?:with\s+)?(?P<n>\d+)\s+(?:tasks|entries)\b", lambda m: _task_count(cl, int(m.group("n")))
        )


def _task_marks(cl: ClauseText, m: re.Match[str]) -> bool:
    marks = _quoted(cl, m.group(0))
    return [x.strip() for x in marks] == ["- [x]", "- [ ]"]


def _task_count(cl: ClauseText, n: int) -> bool:
    cl.add({"rule": "items", "min": n, "max": n})
    return True


def _read_outline(cl: ClauseText, sentence: str, whole: str) -> None:
    """A nested list: its markers (quoted: ``'- '`` a top item, ``'  - '`` a sub-item and its indent), how many top
    items (``three bullet points``, ``exactly four top-level bullets``, ``2 main items``) and sub-items under each
    (``under each one exactly two sub-bullets``, ``each followed by 3 sub-items``, ``at least one sub-bullet beneath
    it``). Each clause adds what it read to one ``outline`` rule (merged)."""
    if not re.search(r"\bsub-?(?:bullets?|items?|points?)\b|\bnested\s+list\b", whole):
        return
    c: dict[str, object] = cl.memory.setdefault("outline", {"rule": "outline"})
    before = dict(c)
    for token in re.findall(Q, cl.w):
        q = cl.q(token)
        mk = re.fullmatch(r"( *)([-*+\u2022]) ?", q)
        if mk is None:
            continue
        if mk.group(1):
            c["sub_marker"], c["indent"] = mk.group(2), len(mk.group(1))
        elif re.search(
            r"\bsub-?(?:bullets?|items?|points?)\b", cl.w[cl.w.find(token) - 40 : cl.w.find(token)]
        ):
            c["sub_marker"] = mk.group(2)
        else:
            c["marker"] = mk.group(2)
    cl.each(
        rf"\(\s*(?:lines\s+starting\s+with\s+)?{Q}\s*\)|\buse\s+{Q}\s+for\s+(?:the\s+)?(?:main|top-level)\s+items\b"
        rf"|\b(?:marked|starting|beginning|written)\s+(?:with\s+)?{Q}",
        lambda m: all(re.fullmatch(r" *[-*+\u2022] ?", q) for q in _quoted(cl, m.group(0))),
    )

    def each_sub(m: re.Match[str]) -> bool:
        c["sub_min"] = 1
        if m.group("mark"):
            c["sub_marker"] = m.group("mark")
        return True

    cl.each(
        r"\b(?:and\s+)?(?:at\s+least\s+(?:1|one)\s+)(?:sub-?bullet(?:\s+points?)?)\s*(?:(?:denoted"
        r"|marked)\s+by\s+(?P<mark>[-*+])\s+)?"
        r"for\s+each\s+(?:bullet(?:\s+point)?|top-level\s+item|main\s+item)\b",
        each_sub,
    )

    def denoted(m: re.Match[str]) -> bool:
        mark = m.group("mark")
        if m.group("sub"):
            c["sub_marker"] = mark
        else:
            c["marker"] = mark
        return True

    # "bullet points denoted by * and at least one sub-bullet denoted by - for each bullet point"
    cl.each(
        r"\b(?:(?P<sub>sub-?bullet(?:\s+points?)?s?|sub-?items?)|bullet(?:\s+points?)?s?|(?:main"
        r"|top-level)\s+items?)\s+"
        r"(?:denoted|marked|written)\s+(?:by|with)\s+(?P<mark>[-*+])(?=\s|$)",
        denoted,
    )

    def indent(m: re.Match[str]) -> bool:
        c["indent"] = int(m.group("n"))
        return True

    cl.each(
        r",?\s*\b(?:and\s+)?(?:indented|indent\s+(?:the\s+)?sub-?(?:items|bullets|points))\s+(?:by"
        r"|with)\s+(?P<n>\d+)\s+spaces\b",
        indent,
    )

    def top(m: re.Match[str]) -> bool:
        n, cmp = int(m.group("n")), m.group("cmp") or ""
        if "least" in cmp:
            c["min"] = n
        elif "most" in cmp:
            c["max"] = n
        else:
            c["min"] = c["max"] = n
        return True

    cl.each(
        r"\b(?:(?:give|write|make|produce)\s+)?(?:an?\s+(?:nested\s+)?list\s+with\s+)?(?P<cmp>exactly\s+"
        r"|at\s+least\s+|at\s+most\s+)?(?P<n>\d+)\s+"
        r"(?:top-level\s+bullets?|bullet\s+points|bullets|main\s+items|top-level\s+items|main\s+bullets)\b",
        top,
    )

    def sub(m: re.Match[str]) -> bool:
        cmp, k = m.group("cmp") or "", int(m.group("k"))
        if "least" in cmp:
            c["sub_min"] = k
        elif "most" in cmp:
            c["sub_max"] = k
        else:
            c["sub_min"] = c["sub_max"] = k
        return True

    cl.each(
        r",?\s*\b(?:and\s+)?(?:under\s+each\s+(?:1|one)\s*,?\s*|(?:where\s+)?each\s+(?:top-level\s+bullet"
        r"|main\s+item|bullet)\s+has\s+"
        r"|each\s+followed\s+by\s+)(?P<cmp>exactly\s+|at\s+least\s+|at\s+most\s+)?(?P<k>\d+)\s+sub-?(?:bullets?"
        r"|items?|points?)"
        r"(?:\s+beneath\s+it)?\b",
        sub,
    )
    cl.each(
        r"\b(?:make|produce|give|write)\s+an?\s+(?:nested\s+)?list\s+with\b|\ban?\s+nested\s+list\b",
        lambda m: True,
    )
    cl.each(r"\b(?:include|use|contain)\s+bullet\s+points\b(?!\s+(?:denoted|marked))", lambda m: True)
    if c != before or (
        c is cl.memory.get("outline") and any(k in c for k in ("sub_min", "sub_max")) and not cl.found
    ):
        if c != before:
            cl.add({k: v for k, v in c.items() if v is not None})


def _read_figure(cl: ClauseText, sentence: str, whole: str) -> None:
    if not re.search(r"\btriangle\b|\bpyramid\b", whole):
        return

    def fig(m: re.Match[str]) -> bool:
        shape = "pyramid" if m.group("kind") == "pyramid" else ("inverted" if m.group("inv") else "right")
        if shape == "right" and "right" not in m.group(0):
            return False  # "a triangle" names no shape the checks know (right? centred?)
        char = m.group("char") or ""
        char = {"asterisks": "*", "asterisk": "*", "stars": "*", "hashes": "#", "hash": "#"}.get(char, char)
        if len(char) != 1:
            return False
        c = {"rule": "figure", "shape": shape, "char": char}
        cl.add(c)
        cl.memory["figure"] = c
        return True

    cl.each(
        r"\b(?:draw|print|make)?\s*an?\s+(?:(?P<inv>inverted|upside-down)\s+|right\s+|centred\s+"
        r"|centered\s+)?(?P<kind>triangle|pyramid)\s+"
        r"(?:made\s+)?of\s+(?:the\s+character\s+|lowercase\s+)?(?P<char>asterisks?|stars|hashes|hash"
        r"|[#*x+o@=])(?=[\s,.;]|$)",
        fig,
    )
    c = cl.memory.get("figure")
    if c is None:
        return

    def rows(m: re.Match[str]) -> bool:
        if m.group("a") and m.group("b"):
            c["min"], c["max"] = sorted((int(m.group("a")), int(m.group("b"))))
        elif m.group("n"):
            c["min"] = c["max"] = int(m.group("n"))
        cl.add(dict(c))
        return True

    cl.each(r"\bwith\s+(?:between\s+(?P<a>\d+)\s+(?:and|or|to)\s+(?P<b>\d+)|(?P<n>\d+))\s+rows\b", rows)
    char = re.escape(str(c["char"]))
    shape = c["shape"]
    described = {
        "right": [
            r"\bthe\s+first\s+row\s+has\s+(?:1|one)\s+(?:asterisks?|stars?|" + char + r"|character)\b",
            r"\b(?:and\s+)?each\s+(?:following|next)\s+row\s+has\s+(?:1|one)\s+more\s+than\s+the\s+(?:row\s+above"
            r"|one\s+before|previous\s+row)\b",
            r"\buse\s+no\s+other\s+characters\b",
        ],
        "inverted": [
            r"\bthe\s+top\s+row\s+may\s+have\s+(?P<a>\d+)\s*,\s*(?P<m>\d+)\s*,?\s*or\s+(?P<b>\d+)\s+" + char,
            r"\b(?:and\s+)?each\s+row\s+below\s+has\s+(?:exactly\s+)?(?:1|one)\s+fewer\b",
            r"\b(?:and\s+)?the\s+last\s+row\s+has\s+(?:a\s+|just\s+|only\s+)?(?:1|one)\s+" + char,
            r"\buse\s+no\s+other\s+characters\b",
        ],
        "pyramid": [
            r"\brow\s+k\s+has\s+2k-1\s+" + char + r"'?s?",
            r"\bled\s+by\s+spaces\s+so\s+(?:that\s+)?the\s+bottom\s+row\s+starts\s+at\s+the\s+left\s+edge\b",
            r"\b(?:and\s+)?each\s+row\s+is\s+cent(?:red|ered)\s+over\s+it\b",
            r"\b(?:and\s+)?no\s+(?:line|row)\s+has\s+trailing\s+spaces\b",
        ],
    }[str(shape)]

    def described_rows(m: re.Match[str]) -> bool:
        if shape == "inverted" and m.groupdict().get("a"):
            c["min"], c["max"] = int(m.group("a")), int(m.group("b"))
            cl.add(dict(c))
        return True

    for rx in described:
        cl.each(rx, described_rows)
    cl.each(r"\bwith\s+(?P<a>\d+)\s+or\s+(?P<b>\d+)\s+rows\b(?P<n>)", rows)


def _read_pairs(cl: ClauseText, whole: str) -> None:
    if not re.search(r"question|\bq:|\bfaq\b", whole):
        return

    def count(m: re.Match[str]) -> bool:
        n = int(m.group("n"))
        c = cl.memory.get("pairs")
        if c is None:
            c = {"rule": "pairs", "first": "Q: ", "second": "A: "}
            cl.memory["pairs"] = c
            cl.memory["pairs_pending"] = True
        c["min"] = c["max"] = n
        return True

    cl.each(
        r"\b(?:write\s+)?(?:an\s+faq\s+with\s+)?(?:exactly\s+)?(?P<n>\d+)\s+question-and-answer\s+pairs\b"
        r"|\b(?:give\s+)?(?P<n2>\d+)\s+questions\s+with\s+answers\b",
        lambda m: count(m) if m.group("n") else _count2(cl, m),
    )

    def markers(m: re.Match[str]) -> bool:
        q, a = [cl.q(t) for t in re.findall(Q, m.group(0))][:2]
        c = cl.memory.get("pairs") or {"rule": "pairs"}
        c.update({"first": q, "second": a})
        cl.memory["pairs"] = c
        if c not in cl.found:
            cl.add(c)
        return True

    cl.each(
        rf"\b(?:put\s+|write\s+)?(?:each|every)\s+question\s+on\s+(?:a|its\s+own)\s+line\s+(?:starting"
        rf"|beginning)\s+with\s+{Q}\s*,?\s*(?:and|followed\s+by)\s+"
        rf"(?:its|each|the)\s+answer\s+on\s+the\s+(?:next|following)\s+line\s+(?:starting|beginning)\s+with\s+{Q}",
        markers,
    )

    def numbered(m: re.Match[str]) -> bool:
        qs = [cl.q(t) for t in re.findall(Q, m.group(0))]
        if len(qs) < 2:
            return False
        first, second = (re.sub(r"\b1\b", "{n}", x) for x in qs[:2])
        if "{n}" not in first or "{n}" not in second:
            return False
        c = cl.memory.get("pairs") or {"rule": "pairs"}
        c.update({"first": first, "second": second})
        cl.memory["pairs"] = c
        if c not in cl.found:
            cl.add(c)
        return True

    cl.each(
        rf"\bformat:\s*a\s+line\s+{Q}\s+followed\s+by\s+the\s+question\s*,?\s*the\s+next\s+line\s+{Q}\s+followed\s+by\s+the\s+answer"
        rf"(?:\s*,?\s*then\s+{Q}\s+and\s+{Q}\s+the\s+same\s+way)?",
        numbered,
    )
    if cl.memory.get("pairs") and "{n}" in str(cl.memory["pairs"].get("first", "")):
        cl.each(
            rf"^\s*(?:and\s+)?then\s+{Q}\s+and\s+{Q}\s+the\s+same\s+way\b",
            lambda m: (
                [x.replace("2", "{n}") for x in _quoted(cl, m.group(0))]
                == [cl.memory["pairs"]["first"], cl.memory["pairs"]["second"]]
            ),
        )
    if cl.memory.get("pairs"):
        cl.each(
            r"\b(?:every|each)\s+question\s+(?:must|should)\s+end\s+with\s+a\s+question\s+mark\b",
            lambda m: _first_end(cl),
        )


def _count2(cl: ClauseText, m: re.Match[str]) -> bool:
    c = cl.memory.get("pairs") or {"rule": "pairs", "first": "Q: ", "second": "A: "}
    cl.memory["pairs"] = c
    c["min"] = c["max"] = int(m.group("n2"))
    return True


def _first_end(cl: ClauseText) -> bool:
    c = cl.memory["pairs"]
    c["first_end"] = "?"
    if c not in cl.found:
        cl.add(c)
    return True


def _read_same(cl: ClauseText, whole: str) -> None:
    units = r"lines?|paragraphs?|sentences?"

    def same(m: re.Match[str]) -> bool:
        unit = (m.group("u") or m.group("u2") or "").rstrip("s")
        if unit not in ("line", "paragraph", "sentence"):
            return False
        a = ORDINALS.get(m.group("a") or "", None) or (
            int(m.group("a")) if (m.group("a") or "").isdigit() else None
        )
        b = ORDINALS.get(m.group("b") or "", None) or (
            int(m.group("b")) if (m.group("b") or "").isdigit() else None
        )
        if a is None or b is None or a == b:
            return False
        cl.add({"rule": "same", "unit": unit, "index": b if b != 1 else a, "as": a if b != 1 else b})
        return True

    cl.each(
        rf"\b(?:whose|where\s+the|and\s+the"
        rf"|the)?\s*(?P<a>{_ORD_RX})\s+(?P<u>{units})?\s*and\s+(?:the\s+)?(?P<b>{_ORD_RX})\s+"
        rf"(?P<u2>{units})\s+are\s+identical\b",
        same,
    )
    cl.each(
        rf"\b(?:where\s+|and\s+)?(?:the\s+)?(?P<b>{_ORD_RX})\s+(?P<u>{units})\s+(?:repeats"
        rf"|copies)\s+the\s+(?P<a>{_ORD_RX})(?:\s+(?:1|one|(?P<u2>{units})))?"
        rf"(?:\s+word\s+for\s+word|\s+exactly)?\b",
        same,
    )
    cl.each(
        r"\b(?:in\s+which\s+|and\s+)?(?P<u>line|paragraph|sentence)\s+(?P<b>\d+)\s+is\s+(?:the\s+same\s+as"
        r"|identical\s+to)\s+(?:line|paragraph|sentence)\s+(?P<a>\d+)(?P<u2>)",
        same,
    )
    cl.each(
        rf"\b(?:where\s+|in\s+which\s+|and\s+)?the\s+(?P<b>{_ORD_RX})\s+(?P<u>{units})\s+(?:is|must\s+be"
        rf"|should\s+be)\s+"
        rf"(?:identical\s+to|the\s+same\s+as|an?\s+(?:exact\s+)?(?:copy"
        rf"|repeat)\s+of)\s+the\s+(?P<a>{_ORD_RX})(?:\s+(?:1|one|(?P<u2>{units})))?\b",
        same,
    )


def _read_link_forms(cl: ClauseText, whole: str) -> None:
    if not re.search(r"\blinks?\b|\burls?\b", whole):
        return

    def url(m: re.Match[str]) -> bool:
        scheme = m.group("s")
        cl.add({"rule": "each", "unit": "url", "test": "starts_with", "arg": scheme})
        return True

    cl.each(
        r",?\s*\b(?:and\s+)?(?:each|every|its|the|all|their)\s+urls?\s+(?:must|should|has\s+to|have\s+to)\s+(?:start"
        r"|begin)\s+with\s+(?P<s>https?://)",
        url,
    )
    cl.each(
        r",?\s*\b(?:pointing|linking|leading)\s+to\s+an?\s+(?:address|url|page)\s+(?:that\s+|which\s+)?(?:starts|begins)\s+with\s+"
        r"(?P<s>https?://)",
        url,
    )

    def text(m: re.Match[str]) -> bool:
        word = cl.q(m.group("q"))
        cl.add({"rule": "each", "unit": "link_text", "test": "equals", "arg": word})
        return True

    cl.each(rf"\bwhose\s+link\s+text\s+is\s+exactly\s+(?:the\s+word\s+)?(?P<q>{Q})", text)
