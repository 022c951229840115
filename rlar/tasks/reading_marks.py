"""Marks and measures of the whole answer, read by the main reader (the second reading
reads them apart, :mod:`rlar.synthesis.second.marks`).

The counts of the new units (emojis, bold phrases and words in bold, italics, Markdown links, different words and
letters, numbers in digits or in words, pronouns, lines of code, pairs of parentheses, leading spaces, checked
boxes) are read by the quantity reader of :mod:`rlar.tasks.phrasings` with its comparators and scopes, so ``every
line must contain exactly one emoji`` or ``no paragraph may hold more than 2 links`` needs no phrasing of its own.
:func:`read_marks` runs before it and reads what is not a count:

- how a mark is written, used up when it says what the count already checks: ``using Markdown double asterisks
  (**like this**)``, ``in bold with **...**``, ``written as [text](URL)``, ``in digits`` / ``as numerals``;
- bans: ``nothing is in italics`` / ``no italics``, ``never as words`` / ``do not spell out any number`` (numbers
  written as words at most 0), ``no spaces anywhere``, ``no other emoji`` beside a unit that ends with one (one
  emoji per unit);
- verbs with a count: ``bold exactly two phrases``, ``italicize 3 words``;
- parentheses: ``nested at least 3 levels deep``, ``nested parentheses at least 4 deep``, ``one pair inside the
  other`` (two levels), ``every opening parenthesis must be closed`` (balanced: every count of them checks it);
- the alphabet: ``a pangram``, ``every letter of the English alphabet (at least once)`` (26 different letters);
- a length with a tolerance (LIFEBench): ``about 40 words, give or take 10 percent``, ``roughly 100 characters,
  no more than 5 characters off either way``, ``around 50 words (±10%)``, ``about 30 words; anything from 27 to 33
  words is acceptable`` — the tolerance replaces the ±20% a bare ``about`` gets;
- notes that say what the checks already do: ``emojis do not count as words``, ``capitalization does not matter``
  beside different words, ``counting spaces and punctuation`` beside characters.

A negated or unclear phrase is left unread (the clause stays partial and is refused).
"""

from __future__ import annotations

import math
import re

from rlar.tasks.phrasings import CMP_ALL, ClauseText, cmp_kind, to_bounds

__all__ = ["read_marks"]

_APPROX = r"(?:about|around|approximately|roughly|circa|some|close\s+to|near(?:ly)?)"
_LEN_UNITS = {"words?": "words", "characters?|chars?": "chars", "sentences?": "sentences", "lines?": "lines"}


def read_marks(cl: ClauseText, sentence: str, whole: str) -> None:
    """Read the phrasings of the module docstring in one clause (``sentence`` / ``whole``: the clause's sentence
    and the whole instruction, lowercased with digits)."""
    _read_tolerance(cl, sentence)
    _read_mark_verbs(cl)
    _read_mark_forms(cl, whole)
    _read_bans(cl, sentence, whole)
    _read_parens(cl, whole)
    _read_alphabet(cl)
    _read_notes(cl, whole)


def _unit_rule(word: str) -> str | None:
    return next((rule for rx, rule in _LEN_UNITS.items() if re.fullmatch(rx, word)), None)


def _read_tolerance(cl: ClauseText, sentence: str) -> None:
    """A length said with its tolerance, in one clause or over several of its sentence: the bounds are the
    tolerance's (a bare ``about N`` is ±20%, :func:`rlar.tasks.phrasings.to_bounds`)."""
    m = re.search(
        rf"\b{_APPROX}\s+(?P<n>\d+)\s+(?P<unit>words?|characters?|chars?|sentences?|lines?)\b",
        sentence,
    )
    if m is None:
        return
    n, rule = int(m.group("n")), _unit_rule(m.group("unit"))
    if rule is None:
        return
    noun = m.group("unit").rstrip("s")
    pct = (
        r"\(?\s*(?:give\s+or\s+take|plus\s+or\s+minus|\+/-|±|within)\s*(?P<p>\d+)\s*(?:%|percent|per\s+cent)"
        r"(?:\s+(?:either\s+way|of\s+(?:that|this|it|the\s+target)))?\s*\)?"
    )
    fixed = (
        rf"\(?\s*(?:give\s+or\s+take|plus\s+or\s+minus|\+/-|±)\s*(?P<k>\d+)(?:\s+{noun}s?)?\s*\)?"
        rf"|(?:and\s+)?(?:no\s+more\s+than|at\s+most|not\s+more\s+than|within)\s+(?P<k2>\d+)\s+{noun}s?\s+(?:off|away)"
        rf"(?:\s+(?:either\s+way|in\s+either\s+direction|from\s+(?:that|it|the\s+target)))?"
    )
    span = (
        rf"(?:anything|any\s+length|a\s+length|any\s+count)\s+(?:from|between)\s+(?P<a>\d+)\s+(?:to|and)\s+(?P<b>\d+)"
        rf"(?:\s+{noun}s?)?\s+(?:is|are|will\s+be)\s+(?:acceptable|fine|ok|okay|allowed)\b"
    )
    lo = hi = None
    for rx in (pct, fixed, span):
        t = re.search(rx, sentence[m.end() :]) or re.search(rx, sentence[: m.start()])
        if t is None:
            continue
        g = t.groupdict()
        if g.get("p"):
            p = int(g["p"])
            lo, hi = math.ceil(n * (100 - p) / 100 - 1e-9), math.floor(n * (100 + p) / 100 + 1e-9)
        elif g.get("k") or g.get("k2"):
            k = int(g.get("k") or g.get("k2") or 0)
            lo, hi = max(0, n - k), n + k
        elif g.get("a"):
            lo, hi = sorted((int(g["a"]), int(g["b"])))
            if not lo <= n <= hi:
                return
        tol = rx
        break
    if lo is None or hi is None:
        return

    def bounds(_m: re.Match[str]) -> None:
        cl.add({"rule": rule, "min": lo, "max": hi})

    cl.sentence_each(
        sentence,
        rf"\b{_APPROX}\s+\d+\s+(?:words?|characters?|chars?|sentences?|lines?)(?:\s+long|\s+in\s+length)?\b",
        bounds,
    )
    cl.sentence_each(sentence, rf"(?:[;,]\s*)?(?:{tol})", bounds)
    cl.memory["tolerance"] = (rule, lo, hi)


def _read_mark_verbs(cl: ClauseText) -> None:
    """``bold exactly two phrases``, ``italicize 3 words``: a count said with the verb."""

    def verb(m: re.Match[str]) -> bool:
        kind = cmp_kind(m)
        b = to_bounds(kind, int(m.group("n")), None, False)
        if b is None:
            return False
        italic = m.group("v").startswith("itali")
        word = m.group("what").startswith("word")
        cl.add({"rule": "italics" if italic else ("bold_words" if word else "bold"), **b})
        return True

    cl.each(
        rf"\b(?P<v>bold|embolden|italici[sz]e)\s+(?:(?:{CMP_ALL})\s+)?(?P<n>\d+)\s+(?:\w+\s+)?"
        rf"(?P<what>words?|phrases?|terms?|parts?|expressions?)\b",
        verb,
    )

    def said(m: re.Match[str]) -> bool:
        kind = cmp_kind(m)
        b = to_bounds(kind, int(m.group("n")), None, False)
        if b is None:
            return False
        italic = m.group("v").startswith("itali")
        word = m.group("what").startswith("word")
        c = {"rule": "italics" if italic else ("bold_words" if word else "bold"), **b}
        scope = re.search(r"\b(?:each|every|per)\s+(sentence|line|paragraph|bullet|item)\b", cl.w)
        if scope:
            c["per"] = {"bullet": "item"}.get(scope.group(1), scope.group(1))
            cl.blank(*scope.span())
        cl.add(c)
        return True

    # "mark exactly three phrases in bold", "put 2 key terms in bold": the count with how it is marked
    cl.each(
        rf"\b(?:mark|highlight|emphasi[sz]e|format|put|set|make|show)\s+(?:(?:{CMP_ALL})\s+)?(?P<n>\d+)\s+(?:key\s+"
        rf"|important\s+)?"
        rf"(?P<what>words?|phrases?|terms?|parts?|expressions?)\s+(?:in|with|using)\s+(?P<v>bold(?:face)?|italics?)\b",
        said,
    )
    # "exactly one word is in bold", "two phrases should be in italics"
    cl.each(
        rf"(?:(?:{CMP_ALL})\s+)?(?P<n>\d+)\s+(?P<what>words?|phrases?|terms?)\s+"
        rf"(?:of\s+(?:your|the)\s+(?:reply|answer|response|text)\s+)?(?:is|are|should\s+be|must\s+be"
        rf"|will\s+be)\s+"
        rf"(?:in|set\s+in|written\s+in|formatted\s+in)\s+(?P<v>bold|italics?)\b",
        said,
    )


def _read_mark_forms(cl: ClauseText, whole: str) -> None:
    """How a counted mark is written: used up when the count of that mark was read (the checks hold the form)."""
    rules = {c["rule"] for c in cl.found}
    if rules & {"bold", "bold_words"} or re.search(
        r"\b\d+\s+(?:\w+\s+)?(?:bold|(?:phrases?|words?|terms?)\s+in\s+bold)", whole
    ):
        cl.each(
            r",?\s*\(?\b(?:using|with|in|by|written\s+(?:with|in))\s+(?:markdown\s+)?(?:double\s+asterisks|\*\*)\s*\)?"
            r"|\(?\s*\*\*[^*()]{0,30}\*\*\s*\)?|\bin\s+bold(?:face)?\s+(?=with\b|using\b)",
            lambda m: True,
        )
    if "links" in rules or re.search(r"\b\d+\s+(?:markdown\s+)?(?:hyper)?links?\b", whole):
        cl.each(
            r",?\s*\(?\b(?:written|formatted|given)\s+as\s+\[[a-z ]+\]\([a-z ]+\)\s*\)?|\(?\[text\]\(url\)\)?",
            lambda m: True,
        )
    if "numbers" in rules:
        cl.each(r"\b(?:written\s+)?(?:in|as|using)\s+(?:digits|numerals|figures)\b", lambda m: True)


def _read_bans(cl: ClauseText, sentence: str, whole: str) -> None:
    cl.each(
        r"\b(?:and\s+)?(?:nothing|no\s+(?:word|text|part|phrase))\s+(?:is|may\s+be|should\s+be|must\s+be|can\s+be)\s+"
        r"(?:in|set\s+in|written\s+in)\s+italics?\b|\b(?:and\s+)?(?:with\s+)?no\s+italics\b"
        r"|\b(?:do\s+not|don't|never)\s+(?:use\s+)?italici[sz]e\s+anything\b"
        r"|\b(?:and\s+)?(?:do\s+not|don't|never)\s+use\s+(?:any\s+)?italics\b|\bwithout\s+(?:any\s+)?italics\b",
        lambda m: cl.add({"rule": "italics", "max": 0}),
    )
    if re.search(r"\bnumbers?\b", whole):
        cl.each(
            r",?\s*\b(?:and\s+)?(?:write\s+)?(?:every|each|all)\s+numbers?\s+(?:as|in)\s+(?:digits|numerals)\s*,?\s*"
            r"(?:and\s+)?never\s+(?:as|in)\s+words\b"
            r"|,?\s*\b(?:and\s+)?never\s+(?:as|in)\s+words\b"
            r"|\b(?:and\s+)?(?:write|give|put)\s+(?:every|each|all(?:\s+the)?)\s+numbers?\s+(?:as|in)\s+(?:digits"
            r"|numerals)\b"
            r"|\b(?:do\s+not|don't|never)\s+spell\s+out\s+(?:any\s+)?numbers?\b"
            r"|\b(?:and\s+)?spell\s+out\s+no\s+numbers?\b|\(\s*(?:in\s+)?digits\s*,\s*not\s+(?:in\s+)?words\s*\)"
            r"|\bno\s+numbers?\s+(?:may\s+be\s+|should\s+be\s+|is\s+)?(?:written|spelled|spelt)\s+(?:out\s+)?(?:as"
            r"|in)\s+words\b",
            lambda m: cl.add({"rule": "number_words", "max": 0}),
        )
    cl.each(
        r"\b(?:and\s+)?(?:(?:use|with|contain|include)\s+)?no\s+bold(?:face)?(?:\s+(?:text|words?|phrases?"
        r"|formatting))?\b"
        r"|\bnothing\s+(?:is|may\s+be|should\s+be)\s+in\s+bold\b|\b(?:do\s+not|don't|never)\s+use\s+(?:any\s+)?bold\b",
        lambda m: cl.add({"rule": "bold", "max": 0}),
    )
    if re.search(r"\bnumbers?\b", whole):
        cl.each(
            r",?\s*\b(?:and\s+)?(?:do\s+not|don't|never)\s+(?:write|spell|give|express|put)\s+(?:out\s+)?(?:any|a"
            r"|each|every)\s+numbers?\s+"
            r"(?:out\s+)?(?:as|in)\s+(?:a\s+|1\s+)?words?\b",
            lambda m: cl.add({"rule": "number_words", "max": 0}),
        )
    cl.each(
        r"\b(?:no\s+spaces?\s+(?:anywhere|at\s+all|allowed|are\s+allowed|may\s+appear)"
        r"|(?:with\s+)?no\s+spaces\s+anywhere"
        r"|(?:with\s+)?no\s+spaces\b|without\s+(?:any\s+)?spaces|(?:do\s+not|don't|never)\s+use\s+(?:any\s+)?spaces)",
        lambda m: cl.add({"rule": "spaces", "max": 0}),
    )
    # "each line has to end with an emoji, and no other emoji may appear": one emoji per such unit
    ends = cl.memory.get("ends_kind")
    if ends:

        def other(m: re.Match[str]) -> None:
            cl.add({"rule": "emojis", "per": ends, "max": 1})

        cl.each(
            r"\b(?:and\s+)?no\s+other\s+emojis?\s+(?:may|should|can|must|is\s+to)?\s*(?:appear|be\s+used|occur)"
            r"(?:\s+(?:anywhere|in\s+(?:it|them|the\s+(?:answer|text))))?"
            r"|\b(?:and\s+)?(?:use|include|add|put)\s+no\s+other\s+emojis?(?:\s+(?:anywhere|at\s+all))?\b",
            other,
        )


def _read_parens(cl: ClauseText, whole: str) -> None:
    if not re.search(r"\bparenthes[ie]s\b|\bround\s+brackets\b", whole):
        return

    def depth(m: re.Match[str]) -> bool:
        kind = cmp_kind(m)
        b = to_bounds(kind, int(m.group("n")), None, False)
        if b is None:
            return False
        cl.add({"rule": "paren_depth", **b})
        return True

    cl.each(
        rf"\b(?:(?:round\s+)?parenthes[ie]s\s+)?nested\s+(?:(?:round\s+)?parenthes[ie]s\s+)?(?:(?:{CMP_ALL})\s+)?"
        rf"(?P<n>\d+)\s+"
        rf"(?:levels?(?:\s+deep)?|deep)\b",
        depth,
    )

    cl.each(
        rf"\bnest\s+(?:the\s+)?(?:round\s+brackets"
        rf"|parentheses)\s+to\s+a\s+depth\s+of\s+(?:(?:{CMP_ALL})\s+)?(?P<n>\d+)\b",
        depth,
    )
    cl.each(
        r",?\s*\b(?:with\s+)?(?:one|1)\s+(?:pair\s+)?(?:inside|within|nested\s+in)\s+the\s+other\b",
        lambda m: cl.add({"rule": "paren_depth", "min": 2, "max": 2}),
    )
    if any(c["rule"] in ("paren_depth", "parens") for c in cl.found) or re.search(
        r"\bnested\b|\bpairs?\s+of\s+parenthes", whole
    ):
        # balance is what every count of parentheses checks (an unbalanced answer fails it)
        cl.each(
            r"\b(?:and\s+)?(?:every|each|all)\s+(?:opening\s+)?parenthes[ie]s\s+(?:must|should|has\s+to"
            r"|needs\s+to)\s+be\s+closed\b"
            r"|\b(?:and\s+)?(?:the\s+)?parentheses\s+(?:must|should)\s+(?:be\s+)?balanced\b|\bnested\s+parentheses\b",
            lambda m: True,
        )


def _read_alphabet(cl: ClauseText) -> None:
    cl.each(
        r"\b(?:a|one|1)\s+pangram\b|\bpangram\b"
        r"|\b(?:that\s+|which\s+)?(?:contains?|containing|uses?|using|includes?|including)\s+(?:every|each|all)\s+"
        r"(?:(?:26|the)\s+)?letters?\s+of\s+the\s+(?:english\s+|latin\s+)?alphabet(?:\s+at\s+least\s+(?:1\s+times"
        r"|once))?",
        lambda m: cl.add({"rule": "distinct_letters", "min": 26}),
    )


def _read_notes(cl: ClauseText, whole: str) -> None:
    if re.search(r"\bemojis?\b", whole):
        cl.each(
            r"^\s*(?:the\s+)?emojis?\s+(?:do\s+not|don't|does\s+not|doesn't|will\s+not)\s+count\s+as\s+words?\b"
            r"|\b(?:emojis?\s+)?(?:are\s+)?not\s+counted\s+as\s+words\b",
            lambda m: True,
        )
    if any(c["rule"] == "distinct_words" for c in cl.found) or re.search(
        r"\b(?:different|distinct|unique)\s+words\b", whole
    ):
        cl.each(
            r",?\s*\(?\s*(?:capitali[sz]ation|case)\s+(?:does\s+not|doesn't)\s+matter(?:\s*,?\s*so\s+[^)]*)?\)?"
            r"|;?\s*(?:capitali[sz]ation|case)\s+is\s+ignored\b|\(\s*(?:capitali[sz]ation|case)\s+ignored\s*\)"
            r"|,?\s*\b(?:ignoring|regardless\s+of)\s+(?:capitali[sz]ation|case)\b|\bcase[- ]insensitive(?:ly)?\b",
            lambda m: True,
        )
    if any(c["rule"] == "chars" for c in cl.found) or cl.memory.get("tolerance", ("",))[0] == "chars":
        cl.each(
            r",?\s*\b(?:counting|including)\s+(?:the\s+)?spaces\s+(?:and|&)\s+punctuation\b", lambda m: True
        )
