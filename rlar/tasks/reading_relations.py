"""Units measured and related, read by the main reader (the second reading reads them
apart, :mod:`rlar.synthesis.second.relations`): a grammar of *unit* x *measure* x *predicate* rather than fixed
sentences (a unit's start or end of a kind, its case and IFBench's word classes are :mod:`rlar.tasks.reading_kinds`'s).

- a measure of every unit: ``the number of words in each sentence must be a prime number``, ``each sentence's word
  count must be prime``, ``every line should contain an even number of words``, ``4 sentences, each having a prime
  number of words``, ``a prime number of words`` (the whole answer) (``each`` with ``of``: prime, even, odd, a
  multiple of N, a perfect square);
- a measure across units: ``all sentences have the same number of words``, ``three sentences that all have the
  same number of words`` (``order`` ``equal`` with ``of``); staircases: ``each line is indented by one more space
  than the line before``, ``indent each line by two more spaces than the previous line``, ``each line begins with
  more leading spaces than the line above it``, ``line 1 has no leading spaces, line 2 has two, line 3 has four, and
  so on`` (``order`` step / increasing ``of`` indent; the first line's indent);
- the same first word: ``start each paragraph with the same word``, ``every line opens with one and the same
  word``, ``all four of your paragraphs must begin with an identical word`` (``same_first``);
- chained units: ``the last word of each sentence is the first word of the next``, ``each new sentence must begin
  with the word that ended the sentence before it``, ``begin each sentence with the final word of the sentence
  before it``, ``sentence two starts with the final word of sentence one, and ...`` (``last_first``);
- words reversed: ``the second line must contain exactly the words of the first line, in reverse order``, ``the
  second line is the first line's words in reverse order``, ``below it, write those words backwards``
  (``reversed``; ``a line of N words`` then gives every line's words);
- sums: ``every number from the third onward equals the sum of the two numbers before it`` (``sum_prev2``), and the
  first or last number's value (``the last number must be greater than 30``: ``total``, not every number).

The unit is the one the phrase names, else the one counted in the instruction. A negated phrase is left unread; a
phrase the clause splitter cut in two is read over its sentence (:meth:`rlar.tasks.phrasings.ClauseText.sentence_each`).
"""

from __future__ import annotations

import re
from typing import Any

from rlar.tasks.phrasings import ClauseText

__all__ = ["read_relations"]

_SCOPE = {
    "sentence": "sentence",
    "line": "line",
    "row": "line",
    "paragraph": "paragraph",
    "bullet": "item",
    "item": "item",
    "bullet point": "item",
    "stanza": "paragraph",
}
_SCOPE_RX = r"bullet\s+points?|sentences?|lines?|rows?|paragraphs?|bullets?|items?|stanzas?"
_MEASURES = {
    "words?": "words",
    "letters?": "letters",
    "characters?|chars?": "chars",
    "sentences?": "sentences",
    "syllables?": "syllables",
    "lines?": "lines",
}
_MEASURE_RX = r"words?|letters?|characters?|chars?|sentences?|syllables?|lines?"
_PROP = r"(?:an?\s+)?(?P<prop>prime|even|odd|perfect\s+square|multiple\s+of\s+(?P<k>\d+))(?:\s+number)?"
_COUNT_NOUN = {"paragraph": "paragraphs", "line": "lines", "sentence": "sentences", "item": "items"}
_ORD = {"one": 1, "1": 1, "two": 2, "2": 2, "three": 3, "3": 3, "four": 4, "4": 4, "five": 5, "5": 5}


def _scope(word: str) -> str:
    w = re.sub(r"\s+", " ", word.strip())
    w = w[:-1] if w.endswith("s") else w
    return _SCOPE.get(w, "")


def _measure(word: str) -> str:
    return next(rule for rx, rule in _MEASURES.items() if re.fullmatch(rx, word.strip()))


def _negated(cl: ClauseText, m: re.Match[str]) -> bool:
    return bool(re.search(r"\b(?:not|never)\b|n't\b", m.group(0))) or bool(
        re.search(r"\b(?:not|never)\s*$|n't\s*$", cl.w[: m.start()])
    )


def _counted_unit(whole: str) -> str | None:
    """The unit the instruction counts (``write three sentences``), when it counts exactly one kind."""
    found = {
        _scope(m.group(1))
        for m in re.finditer(rf"\b\d+\s+(?:\w+\s+)?({_SCOPE_RX})\b", whole)
        if _scope(m.group(1))
    }
    return found.pop() if len(found) == 1 else None


def read_relations(cl: ClauseText, sentence: str, whole: str) -> None:
    """Read the phrasings of the module docstring in one clause (``sentence`` / ``whole``: the clause's sentence
    and the whole instruction, lowercased with digits)."""
    _read_measures(cl, whole)
    _read_equal(cl)
    _read_staircase(cl, sentence, whole)
    _read_same_first(cl, whole)
    _read_last_first(cl, whole)
    _read_reversed(cl, sentence, whole)
    _read_sums(cl, sentence)
    _read_end_values(cl)


def _add_each(cl: ClauseText, unit: str, m: re.Match[str], of: str) -> None:
    prop = re.sub(r"\s+", " ", m.group("prop"))
    c: dict[str, Any] = {"rule": "each", "unit": unit, "of": of}
    if prop.startswith("multiple"):
        c.update({"test": "divisible", "arg": int(m.group("k"))})
    else:
        c["test"] = "square" if prop.startswith("perfect") else prop
    cl.add(c)


def _read_measures(cl: ClauseText, whole: str) -> None:
    be = r"(?:must|should|has\s+to|needs\s+to|will|shall)?\s*(?:be|is)\s+"

    def number_of(m: re.Match[str]) -> bool:
        unit = _scope(m.group("scope"))
        if not unit or _negated(cl, m):
            return False
        _add_each(cl, unit, m, _measure(m.group("meas")))
        return True

    # "the number of words in each sentence must be (a) prime (number)"
    cl.each(
        rf"\b(?:the\s+)?(?:number|count)\s+of\s+(?P<meas>{_MEASURE_RX})\s+(?:in|of)\s+(?:each|every|any)\s+"
        rf"(?P<scope>{_SCOPE_RX})\s+{be}{_PROP}\b",
        number_of,
    )
    # "each sentence's word count must be prime", "every line's letter count is even"
    cl.each(
        rf"\b(?:each|every)\s+(?P<scope>sentence|line|paragraph|bullet|item|row)'s\s+(?P<meas>word|letter|character|"
        rf"sentence|syllable)\s+count\s+{be}{_PROP}\b",
        number_of,
    )

    def contains(m: re.Match[str]) -> bool:
        scope = m.group("scope")
        unit = _scope(scope) if scope else "answer"
        if not scope and re.search(
            r"\beach\s+(?:of\s+them\s+)?(?:having|with|containing|holding|has|must\s+have|should\s+have)?\s*$",
            cl.w[: m.start()],
        ):
            unit = _counted_unit(whole) or ""  # "4 sentences, each having a prime number of words"
        if not unit or _negated(cl, m):
            return False
        _add_each(cl, unit, m, _measure(m.group("meas")))
        return True

    # "every sentence (in your answer) should contain a prime number of words"; "a prime number of words" (whole)
    cl.each(
        rf"\b(?:(?:each|every|all)\s+(?:of\s+the\s+)?(?P<scope>{_SCOPE_RX})\s+(?:in\s+(?:your|the)\s+(?:answer"
        rf"|response|reply)\s+)?"
        rf"(?:must|should|has\s+to|have\s+to|needs\s+to|need\s+to|will)?\s*(?:contains?|has|have|holds?"
        rf"|consists?\s+of|be\s+made\s+of)\s+)?"
        rf"(?:an?\s+)?(?P<prop>prime|even|odd)\s+number\s+of\s+(?P<meas>{_MEASURE_RX})\b(?P<k>)",
        contains,
    )


def _read_equal(cl: ClauseText) -> None:
    def equal(m: re.Match[str]) -> bool:
        unit = _scope(m.group("scope"))
        if not unit or _negated(cl, m):
            return False
        cl.add({"rule": "order", "unit": unit, "rel": "equal", "of": _measure(m.group("meas"))})
        return True

    cl.each(
        rf"\b(?:all|every|each)\s+(?:of\s+the\s+)?(?P<scope>{_SCOPE_RX})\s+(?:must\s+|should\s+)?(?:have|has|contain"
        rf"|contains|hold)\s+"
        rf"the\s+same\s+number\s+of\s+(?P<meas>{_MEASURE_RX})\b"
        rf"|(?<=\s)(?:that|which)\s+(?:all\s+)?(?:have|has"
        rf"|contain)\s+the\s+same\s+number\s+of\s+(?P<meas2>{_MEASURE_RX})\b(?P<scope2>)",
        lambda m: equal(m) if m.group("scope") else _equal2(cl, m),
    )


def _equal2(cl: ClauseText, m: re.Match[str]) -> bool:
    named = re.findall(rf"\b({_SCOPE_RX})\s+$", cl.w[: m.start()])
    unit = _scope(named[-1]) if named else ""
    if not unit:
        return False
    cl.add({"rule": "order", "unit": unit, "rel": "equal", "of": _measure(m.group("meas2"))})
    return True


def _read_staircase(cl: ClauseText, sentence: str, whole: str) -> None:
    if not re.search(r"\b(?:indent\w*|spaces?|staircase|stairs)\b", whole):
        return

    def step(m: re.Match[str]) -> bool:
        if _negated(cl, m):
            return False
        n = int(m.group("n") or 1)
        less = m.group("dir") in ("fewer", "less")
        cl.add({"rule": "order", "unit": "line", "rel": "step", "arg": -n if less else n, "of": "indent"})
        return True

    prev = r"(?:the\s+)?(?:line|row|one)\s+(?:before(?:\s+it)?|above(?:\s+it)?)|the\s+previous(?:\s+(?:line|row|one))?"
    cl.each(
        rf"\b(?:with\s+|and\s+)?(?:each|every)\s+(?:(?:new|next|following)\s+)?(?:line|row|1)?\s*(?:must\s+be\s+"
        rf"|should\s+be\s+|is\s+)?"
        rf"indented\s+(?:by\s+)?(?P<n>\d+)?\s*(?P<dir>more|fewer|less|further)\s+spaces?\s+than\s+(?:{prev})\b"
        rf"|\bindent\s+(?:each|every)\s+(?:(?:new|next|following)\s+)?(?:line"
        rf"|row)\s+(?:by\s+)?(?P<n2>\d+)?\s*(?P<dir2>more|fewer|less|further)\s+"
        rf"spaces?\s+than\s+(?:{prev})\b",
        lambda m: step(m) if m.group("dir") else _step2(cl, m),
    )

    def more(m: re.Match[str]) -> bool:
        if _negated(cl, m):
            return False
        rel = "increasing" if m.group("dir") == "more" else "decreasing"
        cl.add({"rule": "order", "unit": "line", "rel": rel, "of": "indent"})
        return True

    cl.each(
        rf"\b(?:each|every)\s+(?:(?:new|next|following)\s+)?(?:line|row)\s+(?:must|should|has\s+to|needs\s+to)?\s*"
        rf"(?:begin|start|open)s?\s+with\s+(?P<dir>more|fewer)\s+(?:leading\s+)?spaces\s+than\s+(?:{prev})\b",
        more,
    )

    def listed(m: re.Match[str]) -> bool:
        # "line 1 has no leading spaces, line 2 has two, line 3 has four, and so on"
        got = [
            (int(a), 0 if b in ("no", "0") else int(b))
            for a, b in re.findall(r"line\s+(\d+)\s+(?:has\s+)?(no|\d+)", m.group(0))
        ]
        if len(got) < 3 or [a for a, _ in got] != list(range(1, len(got) + 1)):
            return False
        d = got[1][1] - got[0][1]
        if d <= 0 or any(got[i + 1][1] - got[i][1] != d for i in range(len(got) - 1)):
            return False
        cl.add({"rule": "order", "unit": "line", "rel": "step", "arg": d, "of": "indent"})
        if got[0][1] == 0:
            cl.add({"rule": "indent", "per": "line", "index": 1, "max": 0})
        return True

    cl.sentence_each(
        sentence,
        r"(?::\s*)?\bline\s+1\s+has\s+(?:no"
        r"|\d+)\s+(?:leading\s+)?spaces?(?:\s*,\s*line\s+\d+\s+has\s+\d+(?:\s+(?:leading\s+)?spaces?)?)+"
        r"(?:\s*,?\s*(?:and\s+so\s+on|etc))?(?:\s*\(\s*\d+\s+more\s+(?:each|every|per)\s+line\s*\))?",
        listed,
    )

    def first(m: re.Match[str]) -> bool:
        cl.add({"rule": "indent", "per": "line", "index": 1, "max": 0})
        return True

    cl.each(
        r"\b(?:and\s+)?(?:the\s+)?(?:first\s+line|line\s+1)\s+(?:starts|begins|has|must\s+start|must\s+have"
        r"|should\s+have|"
        r"should\s+start)\s+(?:with\s+)?(?:no|0)\s+(?:leading\s+)?(?:spaces?|indentation)(?:\s+before\s+it)?\b"
        r"|\b(?:and\s+)?(?:with\s+)?the\s+first\s+line\s+(?:is\s+)?not\s+indented\b"
        r"|,?\s*\b(?:starting|beginning)\s+with\s+no\s+(?:indentation|leading\s+spaces?)\s+(?:on|in"
        r"|for)\s+the\s+first\s+line\b",
        first,
    )

    if any(c.get("of") == "indent" for c in cl.found):
        cl.memory["staircase"] = True
    if cl.memory.get("staircase"):
        cl.each(
            r"\b(?:format\s+(?:your|the)\s+answer\s+as\s+)?an?\s+staircase(?:\s+with)?\b|\bstairs\b"
            r"|^\s*(?:and\s+)?so\s+on(?:\s*\(\s*\d+\s+more\s+(?:each|every|per)\s+line\s*\))?\s*\.?\s*$",
            lambda m: True,
        )


def _step2(cl: ClauseText, m: re.Match[str]) -> bool:
    if _negated(cl, m):
        return False
    n = int(m.group("n2") or 1)
    less = m.group("dir2") in ("fewer", "less")
    cl.add({"rule": "order", "unit": "line", "rel": "step", "arg": -n if less else n, "of": "indent"})
    return True


def _read_same_first(cl: ClauseText, whole: str) -> None:
    def same(m: re.Match[str]) -> bool:
        scope = m.group("scope") or m.group("scope2") or ""
        unit = _scope(scope) if scope else (_counted_unit(whole) or "")
        if unit not in ("paragraph", "line", "sentence", "item") or _negated(cl, m):
            return False
        cl.add({"rule": "order", "unit": unit, "rel": "same_first"})
        n = re.match(r"\s*all\s+(\d+)\s+of\s+(?:your|the)\s+", m.group(0))
        if n:  # "all four of your paragraphs": how many, too
            cl.add({"rule": _COUNT_NOUN[unit], "min": int(n.group(1)), "max": int(n.group(1))})
        return True

    same_word = (
        r"(?:(?:the|an|1\s+and\s+the|one\s+and\s+the)\s+(?:same|identical)(?:\s+(?:first|opening"
        r"|initial))?\s+word)"
    )
    cl.each(
        rf"\b(?:and\s+)?(?:start|begin|open)\s+(?:each|every"
        rf"|all)\s+(?:of\s+the\s+)?(?P<scope>{_SCOPE_RX})\s+with\s+{same_word}\b"
        rf"|\b(?:(?:each|every|all)\s+(?:\d+\s+)?(?:of\s+(?:the|your)\s+)?(?P<scope2>{_SCOPE_RX})\s+|(?:each"
        rf"|all)\s+(?:of\s+them\s+)?)?"
        rf"(?:must\s+|should\s+)?(?:start|begin|open)(?:s|ing)?\s+with\s+{same_word}\b",
        same,
    )


def _read_last_first(cl: ClauseText, whole: str) -> None:
    def chained(m: re.Match[str]) -> bool:
        unit = _scope(m.group("scope") or "") or _counted_unit(whole) or ""
        if unit not in ("sentence", "line", "paragraph") or _negated(cl, m):
            return False
        cl.add({"rule": "order", "unit": unit, "rel": "last_first"})
        return True

    cl.each(
        rf"\b(?:in\s+which\s+|where\s+|so\s+that\s+)?the\s+(?:last|final)\s+word\s+of\s+(?:each"
        rf"|every)\s+(?P<scope>{_SCOPE_RX})\s+"
        rf"(?:is|must\s+be|should\s+be|becomes"
        rf"|must\s+become)\s+the\s+first\s+word\s+of\s+the\s+next(?:\s+(?:{_SCOPE_RX}))?\b"
        rf"|\b(?:each|every)\s+(?:new\s+|next\s+)?(?P<scope2>{_SCOPE_RX})\s+(?:must\s+|should\s+)?(?:begin"
        rf"|start)s?\s+with\s+"
        rf"the\s+(?:word|last\s+word|final\s+word)\s+(?:that\s+ended|that\s+ends"
        rf"|of)\s+the\s+(?:(?:{_SCOPE_RX})\s+before\s+it|previous"
        rf"(?:\s+(?:{_SCOPE_RX}))?|preceding(?:\s+(?:{_SCOPE_RX}))?)\b",
        lambda m: chained(m) if m.group("scope") else _chained2(cl, m, whole),
    )
    # "begin each sentence after the first with the final word of the sentence before it"
    cl.each(
        rf"\b(?:begin|start|open)\s+(?:each"
        rf"|every)\s+(?P<scope>{_SCOPE_RX})\s+(?:after\s+the\s+first\s+)?with\s+the\s+(?:last|final)\s+word\s+of\s+"
        rf"the\s+(?:(?:{_SCOPE_RX})\s+before\s+it|previous(?:\s+(?:{_SCOPE_RX}|1|one))?"
        rf"|preceding(?:\s+(?:{_SCOPE_RX}|1|one))?|1\s+before)\b",
        chained,
    )
    # "sentence two starts with the final word of sentence one, and sentence three ... of sentence two": said of
    # every consecutive pair of the instruction's N units, in whichever clauses (each clause reads the rule)
    pair_rx = (
        r"\b(sentence|line)\s+(\d+)\s+(?:starts|begins|must\s+start|must\s+begin)\s+with\s+the\s+(?:final"
        r"|last)\s+word\s+of\s+"
        r"(?:sentence|line)\s+(\d+)"
    )
    pairs = re.findall(pair_rx, cl.w)
    every = re.findall(pair_rx, whole)
    if pairs and every and all(int(b) == int(a) + 1 for _, b, a in every):
        total = re.search(rf"\b(?:exactly\s+)?(\d+)\s+{pairs[0][0]}s\b", whole)
        if total and sorted(int(b) for _, b, _a in every) == list(range(2, int(total.group(1)) + 1)):
            cl.add({"rule": "order", "unit": pairs[0][0], "rel": "last_first"})
            cl.each(
                r"\b(?:and\s+)?(?:sentence|line)\s+\d+\s+(?:starts|begins|must\s+start|must\s+begin)\s+with\s+the\s+"
                r"(?:final|last)\s+word\s+of\s+(?:sentence|line)\s+\d+\b",
                lambda m: True,
            )
    if any(c.get("rel") == "last_first" for c in cl.found):
        cl.each(r"\b(?:make\s+)?an?\s+chain\s+of\s+(?:sentences|lines)\b", lambda m: True)


def _chained2(cl: ClauseText, m: re.Match[str], whole: str) -> bool:
    unit = _scope(m.group("scope2") or "")
    if unit not in ("sentence", "line", "paragraph") or _negated(cl, m):
        return False
    cl.add({"rule": "order", "unit": unit, "rel": "last_first"})
    return True


def _read_reversed(cl: ClauseText, sentence: str, whole: str) -> None:
    if not re.search(r"\blines?\b|\bnext\s+line\b|\bbelow\s+it\b", whole):
        return

    def rev(m: re.Match[str]) -> bool:
        if re.search(r"\b(?:not|never)\b|n't\b", m.group(0)):
            return False
        cl.add({"rule": "order", "unit": "line", "rel": "reversed"})
        if m.groupdict().get("n"):  # "the same five words": every line has them
            cl.add({"rule": "words", "per": "line", "min": int(m.group("n")), "max": int(m.group("n"))})
        return True

    rev_rx = (
        r"\b(?:then\s+)?(?:on\s+the\s+next\s+line\s*,?\s*|below\s+it\s*,?\s*)?(?:write\s+)?"
        r"(?:the\s+second\s+line\s+(?:must|should|has\s+to)\s+(?:contain|hold|be|repeat)\s+)?"
        r"(?:exactly\s+)?(?:the\s+same|those|these|the|its"
        r"|all\s+the)\s+(?:(?P<n>\d+)\s+)?words(?:\s+of\s+the\s+first\s+line)?\s*,?\s*"
        r"(?:in\s+reverse(?:d)?\s+order|in\s+the\s+opposite\s+order|backwards"
        r"|reversed)(?:\s*\(\s*last\s+word\s+first\s*\))?"
    )
    cl.sentence_each(sentence, rev_rx, rev)
    cl.sentence_each(
        sentence,
        r"\b(?:where\s+|and\s+)?(?:the\s+second\s+line|line\s+2)\s+(?:is|has|holds|contains|must\s+be|should\s+be"
        r"|must\s+hold|should\s+hold)\s+"
        r"(?:exactly\s+)?(?:the\s+first\s+line's\s+words|the\s+words\s+of\s+the\s+first\s+line"
        r"|the\s+first\s+line)\s*,?\s*"
        r"(?:in\s+reverse(?:d)?\s+order|reversed|backwards|in\s+the\s+opposite\s+order)\b",
        rev,
    )
    if re.search(rev_rx, sentence):
        cl.memory["reversed"] = True
    if any(c.get("rel") == "reversed" for c in cl.found) or re.search(
        r"\breverse\s+order|\bbackwards\b", whole
    ):
        cl.each(
            r",?\s*\(?\s*(?:capitali[sz]ation|case)\s+and\s+punctuation\s+may\s+change\s*\)?|\bon\s+the\s+next\s+line\b"
            r"|\bbelow\s+it\b",
            lambda m: bool(any(c.get("rel") == "reversed" for c in cl.found) or cl.memory.get("reversed")),
        )
    if any(c.get("rel") == "reversed" for c in cl.found) or cl.memory.get("reversed"):
        cl.memory["reversed"] = True

        def first_line(m: re.Match[str]) -> bool:
            n = int(m.group("n"))
            cl.add({"rule": "words", "per": "line", "min": n, "max": n})
            return True

        # "write a sentence of five words, then ... the same words in reverse order": every line has the N words
        cl.sentence_each(
            sentence,
            r"\b(?:first\s+)?(?:write\s+)?an?\s+(?:sentence|line)\s+of\s+(?:exactly\s+)?(?P<n>\d+)\s+words\b",
            first_line,
        )


def _read_sums(cl: ClauseText, sentence: str) -> None:

    def fib(m: re.Match[str]) -> bool:
        if _negated(cl, m):
            return False
        cl.add({"rule": "order", "unit": "number", "rel": "sum_prev2"})
        return True

    cl.sentence_each(
        sentence,
        r"\b(?:in\s+which\s+|where\s+|so\s+that\s+)?(?:\(\s*)?(?:every|each)\s+(?:number|term|value|1|line)?\s*"
        r"(?:(?:from|after)\s+the\s+(?:third|3rd|first\s+2|first\s+two)(?:\s+(?:1|one|number|term"
        r"|line))?\s+(?:on(?:ward|wards)?\s+)?)?"
        r"(?:is|equals|must\s+equal|must\s+be|should\s+be|is\s+equal\s+to)\s+the\s+sum\s+of\s+the\s+(?:2|two)\s+"
        r"(?:numbers|terms|values|lines|ones)?\s*(?:before\s+it|above\s+it|preceding(?:\s+(?:ones|numbers|terms"
        r"|it))?|previous(?:\s+(?:ones|numbers|terms))?)"
        r"(?:\s*\))?"
        r"|\bfrom\s+the\s+(?:third|3rd)\s+(?:number|term|line|1)?\s*on(?:ward|wards)?\s*,?\s*(?:each"
        r"|every)\s+(?:number|term|value)?\s*"
        r"(?:is|equals)\s+the\s+sum\s+of\s+the\s+(?:2|two)\s+(?:numbers|terms|lines)\s+(?:before\s+it|above\s+it)",
        fib,
    )
    if re.search(r"\bsum\s+of\s+the\s+(?:2|two)\b", sentence) or any(
        c.get("rel") == "sum_prev2" for c in cl.found
    ):
        cl.each(r"^\s*(?:write|give|list)?\s*an?\s+sequence\s+of\b", lambda m: True)
    if any(c.get("rel") == "sum_prev2" for c in cl.found):
        cl.each(
            r"\ba\s+fibonacci[- ](?:like|style)\s+sequence\s+of\b|\bfibonacci[- ](?:like|style)\b",
            lambda m: True,
        )


def _read_end_values(cl: ClauseText) -> None:
    """``the last number must be greater than 30``: the first or last number's value (``total``), not every
    number's."""

    def value(m: re.Match[str]) -> bool:
        n = int(m.group("n"))
        word = re.sub(r"\s+", " ", m.group("cmp"))
        if word in (
            "greater than",
            "more than",
            "larger than",
            "bigger than",
            "higher than",
            "above",
            "over",
        ):
            b = {"min": n + 1}
        elif word in ("less than", "smaller than", "lower than", "below", "under"):
            if n == 0:
                return False
            b = {"max": n - 1}
        elif word in ("at least", "no less than", "no smaller than"):
            b = {"min": n}
        elif word in ("at most", "no more than", "no greater than", "no larger than"):
            b = {"max": n}
        else:
            b = {"min": n, "max": n}
        agg = "first" if m.group("ord") == "first" else "last"
        cl.add({"rule": "total", "unit": "number", "agg": agg, **b})
        return True

    cl.each(
        r"\b(?:and\s+)?the\s+(?P<ord>first|last|final)\s+(?:number|term|value)\s+(?:must|should|has\s+to"
        r"|needs\s+to)?\s*(?:be|is)\s+"
        r"(?P<cmp>greater\s+than|more\s+than|larger\s+than|bigger\s+than|higher\s+than|above|over|less\s+than"
        r"|smaller\s+than|"
        r"lower\s+than|below|under|at\s+least|at\s+most|no\s+(?:more|less|greater|larger|smaller)\s+than|exactly"
        r"|equal\s+to)\s+(?P<n>\d+)\b",
        value,
    )
