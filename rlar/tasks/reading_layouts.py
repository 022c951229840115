"""Layouts of the whole answer made of tokens (VFF / RECAST / SysBench / Inverse-IFEval
formats), read by the main reader (the second reading reads them apart, :mod:`rlar.synthesis.second.layouts`); lists,
figures, question/answer pairs and repeated units are :mod:`rlar.tasks.reading_lists`'s:

- one fenced code block with its language tag as written: ``a single Python code block, fenced with ```python``,
  ``inside one fenced code block labelled bash``, ``wrap them in a ```js fenced block``, with ``no text before or
  after the block`` / ``nothing outside the fences`` / ``nothing but that block`` (``code_block`` with ``lang``; a
  language named in prose, ``a Python code block``, names no tag and is left unread);
- identifier styles: ``in snake_case``, ``words joined by (single) underscores``, ``connected with underscores``,
  ``in camelCase`` / ``kebab-case`` (``delimited`` ``_`` exactly, or ``only`` a style);
- lists on one line with the separator exactly as written: ``separated by semicolons with no spaces around
  them``, ``separated by ' | '``, ``a comma and one space between each pair``, and ``no full stop or comma at the
  end`` (``delimited`` with ``exact``; ``not_ends_with``);
- times, prices and bits: ``in 24-hour HH:MM format``, ``each between 13:00 and 18:00 inclusive``, ``all before
  08:00``; ``a dollar sign followed by a number with exactly two decimal places``; ``8-bit binary strings``,
  ``only 0s and 1s``, ``no two neighbouring characters are the same`` (``each`` tests ``time24``, ``range``,
  ``price``, ``binary``, ``no_adjacent_repeat``).

What is not read whole is left, so the clause stays partial and is refused.
"""

from __future__ import annotations

import re

from rlar.tasks.phrasings import ClauseText, Q

__all__ = ["read_layouts"]

_LANGS = (
    "python|javascript|typescript|js|ts|bash|sh|shell|sql|json|yaml|html|css|java|c\\+\\+|cpp|c#|csharp|go|rust|ruby|"
    "php|r|kotlin|swift|perl|lua|text|markdown|md|xml|toml|dockerfile|makefile"
)


def read_layouts(cl: ClauseText, sentence: str, whole: str) -> None:
    """Read the phrasings of the module docstring in one clause (``sentence`` / ``whole``: the clause's sentence and
    the whole instruction, lowercased with digits; the raw clause keeps the case of a fence tag)."""
    _read_fence(cl, whole)
    _read_styles(cl, whole)
    _read_exact_separators(cl, sentence, whole)
    _read_times(cl, whole)
    _read_prices(cl, sentence, whole)
    _read_bits(cl, whole)


def _quoted(cl: ClauseText, text: str) -> list[str]:
    return [cl.q(t) for t in re.findall(Q, text)]


# -- code -----------------------------------------------------------------------------------------------------------
def _read_fence(cl: ClauseText, whole: str) -> None:
    lang = None
    m = re.search(r"```\s*(?P<tag>[A-Za-z0-9+#_-]+)", cl.raw)
    if m is not None:
        lang = m.group("tag")
    one = r"(?:a|1|one|a\s+1)"
    named = re.search(
        rf"\b(?:fenced\s+)?code\s+block\s+(?:labell?ed|tagged|marked)\s+(?:as\s+|with\s+)?(?P<tag>{_LANGS})\b"
        rf"|\b{one}\s+(?P<tag2>{_LANGS})\s+(?:fenced\s+)?code\s+block\b",
        cl.w,
    )
    if lang is None and named is not None:
        tag = named.group("tag") or named.group("tag2")
        found = re.search(re.escape(tag), cl.raw, re.I)  # the tag as written ("Python" in prose is "python"?)
        lang = tag if found is None or found.group(0).lower() == found.group(0) else None
        if lang is None and named.group("tag2"):
            return  # "a single Python code block" names the language, not the fence tag: unread
    if lang is not None:
        cl.add({"rule": "code_block", "lang": lang})
        cl.memory["fence"] = lang
    if not cl.memory.get("fence"):
        return
    cl.each(
        rf"\b(?:reply|answer|respond)\s+(?:only\s+)?with\s+(?:only\s+)?(?:{one}\s+)?(?:single\s+)?(?:[a-z+#]+\s+)?"
        rf"(?:```\s*[a-z0-9+#_-]+\s*)?"
        rf"(?:fenced\s+)?(?:code\s+)?block\b"
        rf"|```\s*[a-z0-9+#_-]+|\b(?:reply|answer|respond)\s+with\s+{one}\s+(?:[a-z+#]+\s+)?code\s+block\b"
        rf"|,?\s*(?:and\s+)?(?:put|place|wrap)\s+(?:your\s+)?(?:whole\s+|entire\s+)?(?:answer|them|it|the\s+code)\s+"
        rf"(?:inside|in)\s+{one}\s+(?:fenced\s+)?(?:code\s+)?block(?:\s+(?:labell?ed|tagged)\s+(?:{_LANGS}))?"
        rf"|\b{one}\s+(?:{_LANGS})?\s*(?:fenced\s+)?code\s+block(?:\s*,?\s*fenced\s+with)?\b"
        rf"|\b(?:fenced\s+)?code\s+block\s+(?:labell?ed|tagged|marked)\s+(?:as\s+|with\s+)?(?:{_LANGS})\b"
        rf"|,?\s*fenced\s+with\b|\bfenced\s+block\b"
        rf"|\b(?:give|write|put|return|present)\s+(?:your\s+|the\s+)?(?:answer|reply|response|code)\s+(?:as"
        rf"|in)\s+{one}\s+(?:fenced\s+)?code\s+block"
        rf"(?:\s+(?:labell?ed|tagged|marked)\s+(?:as\s+|with\s+)?(?:{_LANGS}))?",
        lambda m: True,
    )
    cl.each(
        r"^\s*(?:and\s+)?(?:with\s+)?no\s+(?:other\s+)?text\s+(?:before\s+or\s+after|outside(?:\s+of)?)\s+(?:the"
        r"|that|it)\s*(?:code\s+)?(?:block|fences?)?\b"
        r"|,?\s*(?:and\s+)?(?:with\s+)?no\s+(?:other\s+)?text\s+(?:before\s+or\s+after|outside(?:\s+of)?)\s+(?:the"
        r"|that|it)\s*(?:code\s+)?(?:block|fences?)?\b"
        r"|,?\s*(?:and\s+)?nothing\s+(?:else\s+)?(?:may|should|must|can)?\s*(?:appear|be)?\s*outside\s+(?:the"
        r"|that)\s+(?:fences?|block)\b"
        r"|;?\s*(?:and\s+)?the\s+(?:response|answer|reply)\s+must\s+contain\s+nothing\s+but\s+(?:that|the)\s+block\b",
        lambda m: True,
    )
    lines = (
        rf"\b(?:the\s+block\s+(?:should|must)\s+hold|containing|holding"
        rf"|with)\s+(?:exactly\s+)?(?P<n>\d+)\s+commands\s*,?\s*"
        rf"(?:1|one)\s+per\s+line\b|\bwrite\s+(?:exactly\s+)?(?P<n2>\d+)\s+lines\s+of\s+(?:{_LANGS})\b"
    )
    cl.each(
        lines,
        lambda m: cl.add(
            {
                "rule": "code_lines",
                "min": int(m.group("n") or m.group("n2")),
                "max": int(m.group("n") or m.group("n2")),
            }
        ),
    )


# -- styles and separators ------------------------------------------------------------------------------------
def _read_styles(cl: ClauseText, whole: str) -> None:
    cl.each(
        r"\(\s*all\s+lowercase\s*,\s*words\s+separated\s+by\s+(?:single|1)\s+underscores\s*\)",
        lambda m: cl.add({"rule": "lowercase"}),
    )
    cl.each(
        r"\(\s*all\s+(?:in\s+)?capitals\s*,\s*words\s+separated\s+by\s+(?:single|1)\s+underscores\s*\)",
        lambda m: cl.add({"rule": "uppercase"}),
    )

    def joined(m: re.Match[str]) -> None:
        c = {"rule": "delimited", "text": "_", "unit": "word", "exact": True}
        n = m.group("n")
        if n:
            c.update({"min": int(n), "max": int(n)})
        cl.add(c)

    def joined_case(m: re.Match[str]) -> None:
        joined(m)
        case = m.group("case") or ""
        if case.startswith("lower"):
            cl.add({"rule": "lowercase"})
        elif case.startswith(("upper", "capital")):
            cl.add({"rule": "uppercase"})

    cl.each(
        r"\b(?:exactly\s+)?(?P<n>\d+)\s+(?P<case>lowercase\s+|uppercase\s+|capital\s+)?words\s+(?:joined|separated"
        r"|connected|linked)\s+"
        r"(?:by|with)\s+(?:single\s+|1\s+)?underscores\b|\b(?:exactly\s+)?(?P<n2>\d+)\s+words\s+in\s+snake[_ ]case\b",
        lambda m: joined_case(m) if m.group("n") else _words_joined(cl, int(m.group("n2"))),
    )
    cl.each(
        r"\b(?P<n>)(?P<case>)(?:lowercase\s+|capitali[sz]ed\s+|uppercase\s+)?words\s+(?:joined|separated|connected"
        r"|linked)\s+"
        r"(?:by|with)\s+(?:single\s+|1\s+)?underscores\b"
        r"|\b(?:where\s+)?the\s+words\s+are\s+(?:joined|separated|connected|linked)\s+(?:by|with)\s+(?:single\s+"
        r"|1\s+)?underscores\b"
        r"|\bin\s+snake[_ ]case\b",
        joined,
    )
    styles = {"camel": "camel_case", "pascal": "pascal_case", "kebab": "kebab_case"}
    cl.each(
        r"\bin\s+(?P<s>camel|pascal|kebab)[-_ ]?case\b",
        lambda m: cl.add({"rule": "only", "what": styles[m.group("s")]}),
    )
    if any(c["rule"] == "only" and str(c.get("what", "")).endswith("_case") for c in cl.found):
        cl.each(
            r"\b(?:write|give|reply\s+with)?\s*an?\s+(?:variable|function|identifier|field|key)\s+name\b",
            lambda m: True,
        )
    if any(c.get("text") == "_" and c["rule"] == "delimited" for c in cl.found) or re.search(
        r"underscores|snake", whole
    ):
        cl.each(
            r"\b(?:and\s+)?every\s+letter\s+is\s+a\s+capital\b|\b(?:all|every\s+letter)\s+in\s+capitals\b",
            lambda m: cl.add({"rule": "uppercase"}),
        )
        cl.each(r"\b(?:a|an)\s+(?P<n>\d+)-word\s+phrase\b", lambda m: _words_joined(cl, int(m.group("n"))))


def _words_joined(cl: ClauseText, n: int) -> bool:
    cl.add({"rule": "delimited", "text": "_", "unit": "word", "exact": True, "min": n, "max": n})
    return True


_SEPS = {
    "semicolons?": ";",
    "commas?": ",",
    "vertical\\s+bars?|pipes?": "|",
    "slashes?": "/",
    "hyphens?|dashes?": "-",
}


def _read_exact_separators(cl: ClauseText, sentence: str, whole: str) -> None:
    def tight(m: re.Match[str]) -> bool:
        sep = next(v for k, v in _SEPS.items() if re.fullmatch(k, m.group("sep")))
        cl.add({"rule": "delimited", "text": sep, "unit": _piece(whole), "exact": True})
        return True

    seps = "|".join(_SEPS)
    cl.each(
        rf"\bseparated\s+by\s+(?P<sep>{seps})\s+(?:with\s+)?no\s+spaces?\s+(?:around|between"
        rf"|before\s+or\s+after)\s+(?:them|it)\b"
        rf"|\bseparated\s+by\s+(?P<sep2>{seps})\s+(?:and\s+)?without\s+(?:any\s+)?spaces\b",
        lambda m: tight(m) if m.group("sep") else _tight2(cl, m, whole),
    )

    def quoted_sep(m: re.Match[str]) -> bool:
        text = cl.q(m.group("q"))
        if not text.strip() or len(text) > 5 or re.search(r"[A-Za-z0-9]", text):
            return False
        cl.add({"rule": "delimited", "text": text, "unit": _piece(whole), "exact": True})
        return True

    cl.each(
        rf",?\s*\b(?:separated|split|delimited)\s+by\s+(?P<q>{Q})(?:\s*\(\s*(?:a\s+)?(?:space|comma|vertical\s+bar"
        rf"|pipe|semicolon)"
        rf"(?:\s*,\s*(?:a\s+)?(?:space|comma|vertical\s+bar|pipe|semicolon))*\s*\))?",
        quoted_sep,
    )

    def no_space(m: re.Match[str]) -> bool:
        mark = re.sub(r"\s+", " ", m.group("mark"))
        sep = {"semicolon": ";", "comma": ",", "vertical bar": "|", "pipe": "|", "slash": "/"}[mark]
        cl.add({"rule": "delimited", "text": sep, "unit": _piece(whole), "exact": True})
        return True

    cl.sentence_each(
        sentence,
        r",?\s*\b(?:with\s+)?an?\s+(?P<mark>semicolon|comma|vertical\s+bar|pipe"
        r"|slash)\s+and\s+no\s+spaces?\s+between\s+"
        r"(?:neighbours|neighbors|them|the\s+words|the\s+items|words|items)(?:\s*\(\s*(?:like|eg"
        r"|e\.g\.)\s+[^()]{1,20}\))?",
        no_space,
    )

    def pair(m: re.Match[str]) -> bool:
        sep = ", " if m.group("mark") == "comma" else "; "
        for c in cl.found:
            if c["rule"] == "delimited" and c.get("text") in (",", ";") and c["text"] == sep[0]:
                c.update({"text": sep, "exact": True})
                return True
        cl.add({"rule": "delimited", "text": sep, "unit": _piece(whole), "exact": True})
        return True

    cl.sentence_each(
        sentence,
        r"\b(?:separated|split)\s+by\s+(?P<x>commas|semicolons)\s*(?=\(\s*(?:with\s+)?(?:a|1|one)\s+(?:comma"
        r"|semicolon)\s+and\s+(?:1|one|a)\s+space)",
        lambda m: True,
    )
    cl.each(
        r",?\s*\(?\s*(?:with\s+)?(?:a|one|1)\s+(?P<mark>comma|semicolon)\s+and\s+(?:one|a|1"
        r"|a\s+single)\s+space\s+between\s+"
        r"(?:each\s+pair|them|each\s+(?:word|item|one))\s*\)?"
        r"|,?\s*separated\s+by\s+(?:a|one)\s+(?P<mark2>comma|semicolon)\s+and\s+(?:a|one|1)\s+space\b",
        lambda m: pair(m) if m.group("mark") else _pair2(cl, m, whole),
    )
    cl.each(
        r",?\s*\b(?:and\s+)?(?:do\s+not|don't|never)\s+end\s+(?:it\s+|the\s+(?:answer|reply|response|list|line)\s+"
        r"|your\s+(?:answer|reply|response)\s+)?with\s+an?\s+(?P<a>full\s+stop|period|comma|semicolon)(?P<b>)",
        lambda m: _no_end(cl, m),
    )
    if any(c["rule"] == "delimited" and c.get("exact") for c in cl.found) or re.search(
        r"\bseparated\s+by\b", whole
    ):
        cl.each(
            r",?\s*\b(?:and\s+|with\s+)?no\s+(?P<a>full\s+stop|period|comma|semicolon)(?:\s+or\s+(?P<b>full\s+stop"
            r"|period|comma|"
            r"semicolon))?\s+at\s+the\s+end\b",
            lambda m: _no_end(cl, m),
        )


def _tight2(cl: ClauseText, m: re.Match[str], whole: str) -> bool:
    sep = next(v for k, v in _SEPS.items() if re.fullmatch(k, m.group("sep2")))
    cl.add({"rule": "delimited", "text": sep, "unit": _piece(whole), "exact": True})
    return True


def _pair2(cl: ClauseText, m: re.Match[str], whole: str) -> bool:
    sep = ", " if m.group("mark2") == "comma" else "; "
    cl.add({"rule": "delimited", "text": sep, "unit": _piece(whole), "exact": True})
    return True


_MARK = {"full stop": ".", "period": ".", "comma": ",", "semicolon": ";"}


def _no_end(cl: ClauseText, m: re.Match[str]) -> bool:
    for g in ("a", "b"):
        if m.group(g):
            cl.add({"rule": "not_ends_with", "text": _MARK[re.sub(r"\s+", " ", m.group(g))]})
    return True


def _piece(whole: str) -> str:
    if re.search(r"\btimes?\b|hh:mm", whole):
        return "time"
    if re.search(r"\b(?:numbers?|integers?)\b", whole) and not re.search(r"\bwords?\b", whole):
        return "number"
    if re.search(r"\bwords?\b", whole):
        return "word"
    return "item"


# -- times, prices, bits ---------------------------------------------------------------------------------------
def _read_times(cl: ClauseText, whole: str) -> None:
    if not re.search(r"hh:mm|24-hour|twenty-4-hour|24 hour|\btimes?\b", whole):
        return
    unit = (
        "line"
        if re.search(r"\b(?:1|one)\s+per\s+line\b|\bon\s+(?:its|their)\s+own\s+line\b", whole)
        else "time"
    )
    hhmm = (
        r",?\s*\(?\b(?:in\s+)?hh:mm\s+(?:24|twenty-4)[- ]hour\s+(?:notation|format|form|clock|time)\b|"
        r",?\s*\(?\b(?:(?:written\s+)?in\s+)?(?:24|twenty-4)[- ]hour\s+(?:hh:mm\s+)?(?:format|form|notation|clock"
        r"|time)?"
        r"(?:\s+with\s+(?:2|two)-digit\s+hours)?(?:\s*\(\s*hh:mm\s*\))?\)?|\bin\s+hh:mm\s+(?:format|form)\b"
        r"|\(\s*hh:mm\s*\)"
    )

    def fmt(m: re.Match[str]) -> bool:
        cl.add({"rule": "each", "unit": unit, "test": "time24"})
        if unit == "time":
            cl.add({"rule": "each", "unit": "time", "test": "time24"})
        return True

    cl.each(hhmm, fmt)
    if any(c.get("test") == "time24" for c in cl.found) or re.search(r"hh:mm", whole):

        def counted(m: re.Match[str]) -> bool:
            n = int(m.group("n"))
            if unit == "line":
                cl.add({"rule": "lines", "min": n, "max": n})
            else:
                cl.memory["time_count"] = n
            return True

        cl.each(
            r"\b(?:list\s+|give\s+(?:me\s+)?"
            r"|write\s+)?(?:exactly\s+)?(?P<n>\d+)\s+(?:clock\s+)?times(?:\s+of\s+(?:the\s+)?day)?\b(?!\s+(?:the|as"
            r"|more|in\s+a))",
            counted,
        )
    t = r"(?P<{}>\d{{1,2}}:\d{{2}})"
    lead = r"\b(?:(?:each|all|every\s+time)\s+)?(?:(?:must|should|has\s+to)\s+(?:fall\s+|be\s+)?|falling\s+)?"

    def between(m: re.Match[str]) -> bool:
        cl.add({"rule": "each", "unit": "time", "test": "range", "arg": [m.group("a"), m.group("b")]})
        return True

    def before(m: re.Match[str]) -> bool:
        h, mi = (int(x) for x in m.group("c").split(":"))
        total = h * 60 + mi - (0 if m.group("incl") else 1)
        if total < 0:
            return False
        cl.add(
            {
                "rule": "each",
                "unit": "time",
                "test": "range",
                "arg": [None, f"{total // 60:02d}:{total % 60:02d}"],
            }
        )
        return True

    cl.each(rf"{lead}between\s+{t.format('a')}\s+and\s+{t.format('b')}(?:\s*\(?\s*inclusive\s*\)?)?", between)
    cl.each(rf"{lead}(?:before|earlier\s+than){{0}}\s+{t.format('c')}(?P<incl>)".replace("{0}", ""), before)
    cl.each(
        rf"{lead}(?P<incl>no\s+later\s+than|not\s+after|at\s+(?:the\s+)?latest)\s+{t.format('c')}", before
    )


def _read_prices(cl: ClauseText, sentence: str, whole: str) -> None:
    if not re.search(r"\bdollar|\$|\beuro|€|\bprices?\b|\bamounts?\b", whole):
        return
    unit = "line" if re.search(r"\b(?:1|one)\s+per\s+line\b", whole) else "answer"

    def dollars(m: re.Match[str]) -> bool:
        cl.add({"rule": "each", "unit": unit, "test": "price", "arg": "$#"})
        return True

    cl.each(
        r",?\s*\b(?:each\s+)?(?:(?:written|formatted)\s+as\s+)?an?\s+(?:dollar|\$)\s+sign\s+(?:and\s+then|then)\s+"
        r"(?:a\s+number|an\s+amount|digits)\s+with\s+(?:exactly\s+)?(?:2"
        r"|two)\s+(?:digits\s+after\s+the\s+(?:decimal\s+)?point|decimals?)"
        r"(?:\s*\(\s*(?:like|eg|e\.g\.|for\s+example|such\s+as)\s+\$\d+\.\d{2}\s*\))?|"
        r",?\s*\b(?:each\s+)?(?:written\s+as\s+)?a\s+dollar\s+sign\s+followed\s+by\s+(?:a\s+number|an\s+amount"
        r"|digits)\s+with\s+"
        r"(?:exactly\s+)?(?:2|two)\s+decimal(?:\s+places|s)?(?:\s*\(\s*(?:like|e\.?g\.?|eg"
        r"|such\s+as)\s+\$\d+\.\d{2}\s*\))?",
        dollars,
    )
    cl.sentence_each(
        sentence,
        r",?\s*\b(?:each\s+)?an?\s+(?:dollar|\$)\s+sign\s+(?:and\s+then|then|followed\s+by)\s+(?:a\s+number"
        r"|an\s+amount|digits)\s+"
        r"with\s+(?:exactly\s+)?(?:2|two)\s+(?:digits\s+after\s+the\s+(?:decimal\s+)?point|decimals?|decimal\s+places)"
        r"(?:\s*\(\s*(?:like|eg|for\s+example|such\s+as)\s+\$\d+\.\d{2}\s*\))?",
        dollars,
    )
    if re.search(r"(?:\bdollar|\$)\s+sign\s+(?:followed\s+by|and\s+then|then)\b", whole):
        cl.each(
            r"\b(?:list\s+)?\d+\s+prices(?:\s+in\s+us\s+dollars)?\b|\bin\s+us\s+dollars\b",
            lambda m: _price_count(cl, m, unit),
        )


def _price_count(cl: ClauseText, m: re.Match[str], unit: str) -> bool:
    n = re.search(r"\d+", m.group(0))
    if n and unit != "line":
        return False
    if n:
        cl.add({"rule": "lines", "min": int(n.group(0)), "max": int(n.group(0))})
    return True


def _read_bits(cl: ClauseText, whole: str) -> None:
    if not re.search(r"\bbinary\b|\b0s\s+and\s+1s\b|\bdigits\s+0\s+and\s+1\b|-bit\b", whole):
        return
    unit = "line" if re.search(r"\b(?:1|one)\s+per\s+line\b", whole) else "word"
    if re.search(r"\b(?:a|1|one)\s+(?:\d+-character\s+)?string\b", whole):
        unit = "answer"

    def bits(m: re.Match[str]) -> bool:
        cl.add({"rule": "each", "unit": unit, "test": "binary"})
        if m.group("n"):
            n = int(m.group("n"))
            cl.add({"rule": "chars", **({"per": unit} if unit != "answer" else {}), "min": n, "max": n})
        cnt = m.group("cnt")
        if cnt:
            rule = {"line": "lines", "word": "words"}.get(unit)
            if rule:
                cl.add({"rule": rule, "min": int(cnt), "max": int(cnt)})
        return True

    cl.each(
        r"\b(?:(?P<cnt>\d+)\s+)?(?:(?P<n>\d+)-bit\s+)?binary\s+(?:strings?"
        r"|numbers?)\b(?:\s*\(\s*only\s+0s\s+and\s+1s\s*,\s*exactly\s+\d+\s+digits\s+each\s*\))?",
        bits,
    )
    cl.each(
        r"\b(?:a|1|one)\s+(?P<n>\d+)-character\s+string\s+made\s+only\s+of\s+the\s+digits\s+0\s+and\s+1\b(?P<cnt>)",
        bits,
    )
    cl.each(
        r"\b(?:in\s+which\s+)?no\s+(?:2|two)\s+(?:neighbouring|neighboring|adjacent|consecutive)\s+(?:characters"
        r"|digits)\s+are\s+the\s+same\b",
        lambda m: cl.add({"rule": "each", "unit": unit, "test": "no_adjacent_repeat"}),
    )
