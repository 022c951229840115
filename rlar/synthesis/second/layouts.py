"""The second reading's layouts of a whole answer, read by keywords apart from
:mod:`rlar.tasks.reading_layouts`: one fenced block with its tag, words joined by underscores, lists on one line
with their separator exactly as written and no final mark, 24-hour times and their window, dollar prices, bit
strings, HTML lists, Markdown task lists, nested lists, figures of one character, question/answer line pairs,
repeated units and the forms of Markdown links.

:func:`_layouts` reads one sentence (lowercased; ``low``: the whole instruction; ``raw``: as written) and returns
what it read and the sentence with the phrases it used blanked.
"""

from __future__ import annotations

import re
from typing import Any

from rlar.number_words import ORDINALS
from rlar.synthesis.second.vocab import _value

_N = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|a|single)"


def _n(tok: str) -> int | None:
    return 1 if tok in ("a", "single", "an") else _value(tok)


def _blank(sentence: str, m: re.Match[str] | None) -> str:
    if m is None:
        return sentence
    return sentence[: m.start()] + " " * (m.end() - m.start()) + sentence[m.end() :]


def _fence(sentence: str, low: str, raw: str, out: list[dict[str, Any]]) -> str:
    tag = re.search(r"```\s*([A-Za-z0-9+#_-]+)", raw)
    label = re.search(r"\bcode block,? (?:labelled|labeled|tagged) ([a-z0-9+#]+)\b", low)
    if not tag and not label:
        return sentence
    lang = tag.group(1) if tag else label.group(1) if label else ""
    if "```" in sentence or "code block" in sentence or "fenced" in sentence:
        if not any(c["rule"] == "code_block" for c in out):
            out.append({"rule": "code_block", "lang": lang})
    for rx in (
        r"```\s*[a-z0-9+#_-]+",
        rf"\b(?:reply with|put your whole answer inside|wrap them in)\s+(?:a|one"
        rf"|{_N})?\s*(?:single\s+)?(?:[a-z]+\s+)?(?:fenced\s+)?(?:code\s+)?block(?:\s+labell?ed\s+[a-z]+)?",
        r",?\s*fenced with\b",
        r"\b(?:give|put)\s+your\s+answer\s+as\s+one\s+fenced\s+code\s+block(?:\s+tagged\s+[a-z0-9+#]+)?",
        r"\btagged\s+[a-z0-9+#]+\b",
        r"\bno text before or after the block\b|\bnothing may appear outside the fences\b"
        r"|\bthe response must contain nothing but that block\b",
    ):
        for m in list(re.finditer(rx, sentence)):
            sentence = _blank(sentence, m)
    code = re.search(
        rf"\b(?P<n>{_N})\s+lines\s+of\s+(?:code|[a-z]+)\b|\bhold\s+(?P<n2>{_N})\s+commands,\s+one\s+per\s+line\b",
        sentence,
    )
    if code:
        n = _n(code.group("n") or code.group("n2"))
        if n is not None:
            out.append({"rule": "code_lines", "min": n, "max": n})
            sentence = _blank(sentence, code)
    return sentence


def _underscores(sentence: str, low: str, out: list[dict[str, Any]]) -> str:
    if not re.search(r"underscore|snake_case|camelcase|pascalcase|kebab", low):
        return sentence
    m = re.search(
        rf"\b(?:exactly\s+)?(?P<n>{_N})?[- ]?(?:(?P<case>lowercase|uppercase)\s+)?(?:words?|word phrase)\s+(?:joined"
        rf"|separated|connected|linked)\s+(?:by|with)\s+(?:single\s+)?underscores\b"
        rf"|\b(?P<n2>{_N})[- ]word\s+phrase\s+where\s+the\s+words\s+are\s+connected\s+with\s+underscores\b"
        rf"|\b(?P<n3>{_N})\s+words\s+in\s+snake_case\b",
        sentence,
    )
    if m:
        c: dict[str, Any] = {"rule": "delimited", "text": "_", "unit": "word", "exact": True}
        n = (
            _n(m.group("n") or m.group("n2") or m.group("n3") or "")
            if (m.group("n") or m.group("n2") or m.group("n3"))
            else None
        )
        if n:
            c.update({"min": n, "max": n})
        out.append(c)
        if m.group("case"):
            out.append({"rule": "lowercase" if m.group("case") == "lowercase" else "uppercase"})
        sentence = _blank(sentence, m)
    paren = re.search(r"\(all lowercase, words separated by single underscores\)", sentence)
    if paren:
        out.append({"rule": "lowercase"})
        sentence = _blank(sentence, paren)
    caps = re.search(r"\bevery letter is a capital\b", sentence)
    style = re.search(r"\bin (camel|pascal|kebab)(?:case|-case| case)\b", sentence)
    if style:
        out.append({"rule": "only", "what": style.group(1) + "_case"})
        sentence = _blank(sentence, style)
        sentence = _blank(sentence, re.search(r"\ba (?:variable|function|identifier) name\b", sentence))
    if caps:
        out.append({"rule": "uppercase"})
        sentence = _blank(sentence, caps)
    return sentence


_MARK = {"semicolons": ";", "commas": ",", "vertical bars": "|", "pipes": "|"}


def _separators(sentence: str, low: str, raw: str, out: list[dict[str, Any]]) -> str:
    piece = (
        "time" if re.search(r"\btimes\b|hh:mm", low) else "word" if re.search(r"\bwords?\b", low) else "item"
    )
    tight = re.search(
        r"\bseparated by (semicolons|commas|vertical bars|pipes) with no spaces around them\b", sentence
    )
    if tight:
        out.append({"rule": "delimited", "text": _MARK[tight.group(1)], "unit": piece, "exact": True})
        sentence = _blank(sentence, tight)
    bare = re.search(
        r"\ba (semicolon|comma|pipe) and no space between (?:neighbours|neighbors|them"
        r"|the words)(?:\s*\(like [^)]{1,20}\))?",
        sentence,
    )
    if bare:
        out.append(
            {
                "rule": "delimited",
                "text": {"semicolon": ";", "comma": ",", "pipe": "|"}[bare.group(1)],
                "unit": piece,
                "exact": True,
            }
        )
        sentence = _blank(sentence, bare)
    quoted = re.search(r"\bseparated by '([^'a-z0-9]{1,5})'(?:\s*\([^)]*\))?", sentence)
    if quoted:
        written = re.search(re.escape("'" + quoted.group(1) + "'"), raw)
        out.append(
            {
                "rule": "delimited",
                "text": written.group(0)[1:-1] if written else quoted.group(1),
                "unit": piece,
                "exact": True,
            }
        )
        sentence = _blank(sentence, quoted)
    pair = re.search(
        r"\bseparated by (?:commas\s*\(a comma and one space between each pair\)|a comma and a space)"
        r"|\(a comma and one space between each pair\)",
        sentence,
    )
    if pair:
        out.append({"rule": "delimited", "text": ", ", "unit": piece, "exact": True})
        sentence = _blank(sentence, pair)
    listed = re.search(r"\bseparated by (commas|semicolons|spaces)\b(?!\s*\()", sentence)
    if listed and re.search(r"\b(?:numbers|integers)\b", low):
        sep = {"commas": ",", "semicolons": ";", "spaces": " "}[listed.group(1)]
        out.append({"rule": "delimited", "text": sep, "unit": "number"})
        sentence = _blank(sentence, listed)
    hyphen = re.search(r"\b(comma|semicolon|space)-separated\b", sentence)
    if hyphen:
        sep = {"comma": ",", "semicolon": ";", "space": " "}[hyphen.group(1)]
        unit = "number" if re.search(r"\b(?:numbers|integers)\b", low) else piece
        out.append({"rule": "delimited", "text": sep, "unit": unit})
        sentence = _blank(sentence, hyphen)
    dont = re.search(
        r"\b(?:do not|don't|never) end (?:it |the list |your answer )?with a (period|full stop|comma)\b",
        sentence,
    )
    if dont:
        out.append({"rule": "not_ends_with", "text": "," if dont.group(1) == "comma" else "."})
        sentence = _blank(sentence, dont)
    end = re.search(r"\bno (full stop|period|comma)(?: or (full stop|period|comma))? at the end\b", sentence)
    if end:
        for g in (end.group(1), end.group(2)):
            if g:
                out.append({"rule": "not_ends_with", "text": "," if g == "comma" else "."})
        sentence = _blank(sentence, end)
    return sentence


def _times(sentence: str, low: str, out: list[dict[str, Any]]) -> str:
    if not re.search(r"hh:mm|24-hour|twenty-four-hour", low):
        return sentence
    per_line = bool(re.search(r"\bone per line\b", low))
    count = re.search(
        rf"\b(?P<n>{_N})\s+times\s+of\s+day\b|\b(?P<n2>{_N})\s+(?:[a-z-]+\s+)?times\b(?=[^.]*(?:hh:mm|24-hour))",
        sentence,
    )
    if count and per_line:
        n = _n(count.group("n") or count.group("n2"))
        if n:
            out.append({"rule": "lines", "min": n, "max": n})
            sentence = _blank(sentence, count)
    fmt = re.search(
        r"\b(?:written\s+)?in\s+(?:24-hour|twenty-four-hour)\s+(?:hh:mm\s+)?(?:format"
        r"|form|notation)(?:\s+with two-digit hours)?(?:\s*\(hh:mm\))?|\bin hh:mm (?:24-hour"
        r"|twenty-four-hour) (?:notation|format)\b",
        sentence,
    )
    if fmt:
        out.append({"rule": "each", "unit": "line" if per_line else "time", "test": "time24"})
        if not per_line:
            out.append({"rule": "each", "unit": "time", "test": "time24"})
        sentence = _blank(sentence, fmt)
    between = re.search(r"\bbetween (\d{1,2}:\d{2}) and (\d{1,2}:\d{2})(?: inclusive)?", sentence)
    if between:
        out.append(
            {"rule": "each", "unit": "time", "test": "range", "arg": [between.group(1), between.group(2)]}
        )
        sentence = _blank(sentence, between)
    before = re.search(r"\bbefore (\d{1,2}):(\d{2})\b", sentence)
    if before:
        t = int(before.group(1)) * 60 + int(before.group(2)) - 1
        out.append(
            {"rule": "each", "unit": "time", "test": "range", "arg": [None, f"{t // 60:02d}:{t % 60:02d}"]}
        )
        sentence = _blank(sentence, before)
    return sentence


def _money(sentence: str, low: str, out: list[dict[str, Any]]) -> str:
    if "dollar sign" not in low and "$ sign" not in low:
        return sentence
    per_line = "one per line" in low
    fmt = re.search(
        r"\beach an? (?:\$|dollar) sign and then an amount with exactly two digits after the decimal point"
        r"(?:\s*\(e\.g\. \$[\d.]+\))?|"
        r"\b(?:each )?(?:written|formatted) as a dollar sign followed by (?:a number|an amount"
        r"|digits) with (?:exactly )?two decimal"
        r"(?: places|s)?(?:\s*\((?:like|for example|e\.g\.) \$[\d.]+\))?",
        sentence,
    )
    if fmt:
        out.append({"rule": "each", "unit": "line" if per_line else "answer", "test": "price", "arg": "$#"})
        sentence = _blank(sentence, fmt)
    count = re.search(rf"\b(?P<n>{_N})\s+prices(?:\s+in\s+us\s+dollars)?\b", sentence)
    if count and per_line:
        n = _n(count.group("n"))
        if n:
            out.append({"rule": "lines", "min": n, "max": n})
            sentence = _blank(sentence, count)
    return sentence


def _bits(sentence: str, low: str, out: list[dict[str, Any]]) -> str:
    if not re.search(r"binary|0s and 1s|digits 0 and 1", low):
        return sentence
    one = re.search(r"\b(?:one|a)\s+(\d+)-character string made only of the digits 0 and 1\b", sentence)
    if one:
        n = int(one.group(1))
        out += [{"rule": "each", "unit": "answer", "test": "binary"}, {"rule": "chars", "min": n, "max": n}]
        sentence = _blank(sentence, one)
    per_line = "one per line" in low
    many = re.search(
        rf"\b(?P<c>{_N})\s+(?P<b>\d+)-bit\s+binary\s+strings\b(?:\s*\(only 0s and 1s, exactly \w+ digits each\))?",
        sentence,
    )
    if many and per_line:
        c, b = _n(many.group("c")), int(many.group("b"))
        if c:
            out += [
                {"rule": "lines", "min": c, "max": c},
                {"rule": "each", "unit": "line", "test": "binary"},
                {"rule": "chars", "per": "line", "min": b, "max": b},
            ]
            sentence = _blank(sentence, many)
    alt = re.search(r"\bno two (?:neighbouring|neighboring|adjacent) characters are the same\b", sentence)
    if alt and one:
        out.append({"rule": "each", "unit": "answer", "test": "no_adjacent_repeat"})
        sentence = _blank(sentence, alt)
    return sentence


def _html(sentence: str, low: str, out: list[dict[str, Any]]) -> str:
    if not re.search(r"<ul>|<ol>|\bhtml\b", low):
        return sentence
    tag = "ol" if re.search(r"<ol>|\bordered html list", low) else "ul"
    head = re.search(
        rf"\b(?:an?\s+)?(?:html\s+(?:un)?ordered\s+list"
        rf"|(?:un)?ordered\s+html\s+list)(?:\s*\(<[ou]l>\))?(?:\s+of\s+(?P<n>{_N})\s+(?:steps|items))?"
        rf"|\b(?P<n2>{_N})\s+list\s+items\s+in\s+html\b",
        sentence,
    )
    if head:
        c: dict[str, Any] = {"rule": "html_list", "tag": tag}
        n = head.group("n") or head.group("n2")
        if n and _n(n):
            c.update({"min": _n(n), "max": _n(n)})
        out.append(c)
        sentence = _blank(sentence, head)
    held = re.search(rf"\ba <[ou]l> element holding exactly (?P<n>{_N}) <li> items\b", sentence)
    if held and _n(held.group("n")):
        out.append({"rule": "html_list", "tag": tag, "min": _n(held.group("n")), "max": _n(held.group("n"))})
        sentence = _blank(sentence, held)
    for rx in (
        r"\bwith nothing outside the list\b",
        r"\bevery step goes in its own <li>\.\.\.</li>",
        r"\bwrapped in <[ou]l> and </[ou]l> and nothing else\b",
        r"\binside the tag\b",
    ):
        sentence = _blank(sentence, re.search(rx, sentence))
    li = re.search(r"\bevery <li> text begins with a capital letter and ends with a full stop\b", sentence)
    if li:
        out += [
            {"rule": "each", "unit": "item", "test": "starts_upper"},
            {"rule": "ends_with", "text": ".", "per": "item"},
        ]
        sentence = _blank(sentence, li)
    return sentence


def _tasks(sentence: str, low: str, out: list[dict[str, Any]]) -> str:
    if not re.search(r"task list|checklist|to-do", low):
        return sentence
    form = re.search(
        r"\b(?:markdown\s+)?task list\b|\b(?:to-do\s+|completed\s+)?checklist(?:\s+in\s+github\s+markdown)?\b"
        r"|\bto-do list in markdown checkbox format\b",
        sentence,
    )
    if form:
        out.append({"rule": "task_list"})
        sentence = _blank(sentence, form)
    checked = re.search(
        rf"\b(?:exactly\s+)?(?P<n>{_N})\s+(?:of\s+them\s+)?(?:(?:is|are)\s+)?(?:checked|ticked|done)\b",
        sentence,
    )
    if checked and _n(checked.group("n")) is not None:
        k = _n(checked.group("n"))
        out.append({"rule": "checked", "min": k, "max": k})
        sentence = _blank(sentence, checked)
    none = re.search(r"\bnone of them (?:ticked|checked)(?: yet)?\b", sentence)
    if none:
        out.append({"rule": "checked", "max": 0})
        sentence = _blank(sentence, none)
    items = re.search(rf"\b(?:of|with)\s+(?P<n>{_N})\s+(?:items|tasks|entries)\b", sentence)
    if items and _n(items.group("n")):
        k = _n(items.group("n"))
        out.append({"rule": "items", "min": k, "max": k})
        sentence = _blank(sentence, items)
    marks = re.search(r"\buse '- \[x\] ' for checked items and '- \[ \] ' for unchecked ones\b", sentence)
    sentence = _blank(sentence, marks)
    return sentence


def _nested(sentence: str, low: str, out: list[dict[str, Any]]) -> str:
    if not re.search(r"sub-(?:bullet|item)|nested list", low):
        return sentence
    c: dict[str, Any] = {"rule": "outline"}
    for q in re.findall(r"'( *)([-*]) ?'", sentence):
        if q[0]:
            c.update({"sub_marker": q[1], "indent": len(q[0])})
        elif re.search(r"'\*'\s+for\s+main", sentence) or "sub" not in sentence.split("'")[0][-30:]:
            c["marker"] = q[1]
    each_sub = re.search(
        r"\bat least one sub-bullet(?: points?)?(?: denoted by ([-*+]))? for each bullet(?: point)?\b",
        sentence,
    )
    if each_sub:
        c["sub_min"] = 1
        if each_sub.group(1):
            c["sub_marker"] = each_sub.group(1)
        sentence = _blank(sentence, each_sub)
    top_mark = re.search(r"\bbullet points denoted by ([-*+])(?=\s|$)", sentence)
    if top_mark:
        c["marker"] = top_mark.group(1)
        sentence = _blank(sentence, top_mark)
    top = re.search(
        rf"\b(?P<cmp>exactly\s+)?(?P<n>{_N})\s+(?:top-level\s+(?:bullets|items)|bullet points|main items)\b",
        sentence,
    )
    if top and _n(top.group("n")):
        c["min"] = c["max"] = _n(top.group("n"))
        sentence = _blank(sentence, top)
    sub = re.search(rf"\b(?P<cmp>exactly|at least)?\s*(?P<k>{_N})\s+sub-(?:bullets?|items?)\b", sentence)
    if sub and _n(sub.group("k")):
        k = _n(sub.group("k"))
        if sub.group("cmp") == "at least":
            c["sub_min"] = k
        else:
            c["sub_min"] = c["sub_max"] = k
        sentence = _blank(sentence, sub)
    indent = re.search(rf"\bindent(?:ed)?\s+(?:sub-items\s+)?(?:by|with)\s+(?P<k>{_N})\s+spaces\b", sentence)
    if indent and _n(indent.group("k")):
        c["indent"] = _n(indent.group("k"))
        sentence = _blank(sentence, indent)
    if len(c) > 1:
        out.append(c)
        for m in list(re.finditer(r"'\s*[-*]\s?'|\binclude bullet points\b", sentence)):
            sentence = _blank(sentence, m)
    return sentence


def _figure(sentence: str, low: str, raw: str, out: list[dict[str, Any]]) -> str:
    m = re.search(
        r"\b(right|inverted|centred|centered) (triangle|pyramid) (?:made )?of (?:the character "
        r"|lowercase )?(asterisks|#|x)\b",
        sentence,
    )
    if m is None:
        m2 = re.search(r"\b(triangle|pyramid)\b", low)
        if m2 is None:
            return sentence
    shape = None
    char = None
    if m is not None:
        shape = "inverted" if m.group(1) == "inverted" else "pyramid" if m.group(2) == "pyramid" else "right"
        char = {"asterisks": "*"}.get(m.group(3), m.group(3))
        c: dict[str, Any] = {"rule": "figure", "shape": shape, "char": char}
        rows = re.search(r"\bwith (?:between )?(\d+) (?:and|or) (\d+) rows\b", sentence)
        one = re.search(rf"\bwith ({_N}) rows\b", sentence)
        if rows:
            c["min"], c["max"] = int(rows.group(1)), int(rows.group(2))
            sentence = _blank(sentence, rows)
        elif one and _n(one.group(1)):
            c["min"] = c["max"] = _n(one.group(1))
            sentence = _blank(sentence, one)
        out.append(c)
        sentence = _blank(sentence, m)
    top = re.search(
        r"\bthe top row may have (four|five|six|\d+), (four|five|six|\d+),? or (four|five|six|\d+) #",
        sentence,
    )
    if top:
        out.append(
            {
                "rule": "figure",
                "shape": "inverted",
                "char": "#",
                "min": _value(top.group(1)),
                "max": _value(top.group(3)),
            }
        )
        sentence = _blank(sentence, top)
    for rx in (
        r"\bthe first row has one asterisk\b",
        r"\beach following row has one more than the row above\b",
        r"\buse no other characters\b",
        r"\beach row below has exactly one fewer\b",
        r"\bthe last row has a single #",
        r"\brow k has 2k-1 x's\b",
        r"\bled by spaces so the bottom row starts at the left edge\b",
        r"\beach row is centred over it\b",
        r"\bno line has trailing spaces\b",
    ):
        sentence = _blank(sentence, re.search(rx, sentence))
    return sentence


def _pairs(sentence: str, low: str, raw: str, out: list[dict[str, Any]]) -> str:
    if "question" not in low:
        return sentence
    count = re.search(
        rf"\b(?P<n>{_N})\s+question-and-answer\s+pairs\b|\b(?P<n2>{_N})\s+questions\s+with\s+answers\b",
        sentence,
    )
    marks = re.search(
        r"\bon (?:a|its own) line (?:starting|beginning) with '([^']+)',? (?:and"
        r"|followed by) its answer on the (?:next|following) line"
        r" (?:starting|beginning) with '([^']+)'",
        raw.lower().replace("’", "'"),
    )
    numbered = re.search(
        r"\ba line '(question) 1:' followed by the question, the next line '(answer) 1:'", low
    )
    c: dict[str, Any] = {"rule": "pairs"}
    if marks:
        q = re.search(
            r"(?:starting|beginning) with '([^']+)',? (?:and|followed by) its answer on the (?:next"
            r"|following) line (?:starting"
            r"|beginning) with '([^']+)'",
            raw,
        )
        if q:
            c.update({"first": q.group(1), "second": q.group(2)})
    if numbered:
        c.update({"first": "Question {n}:", "second": "Answer {n}:"})
    if count:
        n = _n(count.group("n") or count.group("n2"))
        if n:
            c.update({"min": n, "max": n})
        sentence = _blank(sentence, count)
    if re.search(r"\bevery question must end with a question mark\b", low):
        c["first_end"] = "?"
        sentence = _blank(sentence, re.search(r"\bevery question must end with a question mark\b", sentence))
    if "first" in c or ("min" in c and (marks or numbered)):
        for rx in (
            r"\b(?:put )?each question on a line (?:starting"
            r"|beginning) with '[^']+',? and its answer on the next line (?:starting|beginning) with '[^']+'",
            r"\bformat: a line '[^']+' followed by the question, the next line '[^']+' followed by the answer",
            r"\bthen '[^']+' and '[^']+' the same way\b",
            r"\bwrite an faq with\b",
        ):
            sentence = _blank(sentence, re.search(rx, sentence))
        if "first" not in c and marks is None and numbered is None:
            return sentence
        if "first" not in c:
            return sentence
        out.append(c)
        for m in list(re.finditer(r"'[^']{1,12}'", sentence)):
            sentence = _blank(sentence, m)
    return sentence


def _same(sentence: str, out: list[dict[str, Any]]) -> str:
    for m in list(
        re.finditer(
            r"\b(?P<a>first|second|third) (?P<u>line|paragraph)? ?and (?:the )?(?P<b>last|final|second"
            r"|third) (?P<u2>line|paragraph)s? are identical\b"
            r"|\bthe (?P<b2>third|second|last|fourth|fifth) (?P<u3>paragraph"
            r"|line) repeats the (?P<a2>first)(?: one)?(?: word for word)?\b"
            r"|\b(?P<u4>line|paragraph) (?P<b3>\d+) is the same as (?:line|paragraph) (?P<a3>\d+)\b"
            r"|\bthe (?P<b4>last|final|second|third|fourth|fifth) (?P<u5>line|paragraph) is (?:identical to"
            r"|the same as) the (?P<a4>first|second) (?:line|paragraph|one)\b",
            sentence,
        )
    ):
        unit = m.group("u") or m.group("u2") or m.group("u3") or m.group("u4") or m.group("u5")
        a = m.group("a") or m.group("a2") or m.group("a3") or m.group("a4")
        b = m.group("b") or m.group("b2") or m.group("b3") or m.group("b4")
        ia = ORDINALS.get(a, None) or (int(a) if a.isdigit() else None)
        ib = ORDINALS.get(b, None) or (int(b) if b.isdigit() else None)
        if ia and ib and unit:
            out.append({"rule": "same", "unit": unit, "index": ib, "as": ia})
            sentence = _blank(sentence, m)
    return sentence


def _links(sentence: str, raw: str, out: list[dict[str, Any]]) -> str:
    url = re.search(
        r"\b(?:each|every|all|its|the) urls? (?:must|should) (?:start|begin) with (https?://)", sentence
    )
    if url:
        out.append({"rule": "each", "unit": "url", "test": "starts_with", "arg": url.group(1)})
        sentence = _blank(sentence, url)
    points = re.search(
        r"\b(?:pointing|linking) to an? (?:address|url) that (?:begins|starts) with (https?://)", sentence
    )
    if points:
        out.append({"rule": "each", "unit": "url", "test": "starts_with", "arg": points.group(1)})
        sentence = _blank(sentence, points)
    text = re.search(r"\blink text is exactly the word '([^']+)'", sentence)
    if text:
        written = re.search(r"link text is exactly the word '([^']+)'", raw, re.I)
        out.append(
            {
                "rule": "each",
                "unit": "link_text",
                "test": "equals",
                "arg": written.group(1) if written else text.group(1),
            }
        )
        sentence = _blank(sentence, text)
    form = re.search(r",?\s*written as \[text\]\(url\)", sentence)
    sentence = _blank(sentence, form)
    return sentence


def _layouts(sentence: str, low: str, raw: str) -> tuple[list[dict[str, Any]], str]:
    out: list[dict[str, Any]] = []
    sentence = _fence(sentence, low, raw, out)
    sentence = _underscores(sentence, low, out)
    sentence = _separators(sentence, low, raw, out)
    sentence = _times(sentence, low, out)
    sentence = _money(sentence, low, out)
    sentence = _bits(sentence, low, out)
    sentence = _html(sentence, low, out)
    sentence = _tasks(sentence, low, out)
    sentence = _nested(sentence, low, out)
    sentence = _figure(sentence, low, raw, out)
    sentence = _pairs(sentence, low, raw, out)
    sentence = _same(sentence, out)
    sentence = _links(sentence, raw, out)
    return out, sentence
