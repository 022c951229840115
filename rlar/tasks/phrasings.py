"""Phrasing families: the patterns that turn one clause of an instruction into constraints.

Used by :func:`rlar.tasks.reading.read_instruction`, which splits an instruction into clauses and judges what
each leaves unread. A clause is handled as :class:`ClauseText`: lowercased, number words as digits
(:func:`numbers`), quoted strings replaced by placeholders (``Q``) so nothing inside a quote is read as an
instruction. Each ``read_*`` family finds its phrasings, adds constraints (vocabulary:
:mod:`rlar.tasks.constraints`) and blanks the text it used, so what remains shows what was not understood.
``read_clause_constraints`` runs the families in order (specific before general: JSON keys, choices, positions,
sections, words, case, markup, language, "only", punctuation, quantities, "nothing else", list words).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

# -- normalisation --------------------------------------------------------------------------------------------
Q0, Q1 = "\ue000", "\ue001"  # quote placeholder: Q0 + chr(0xE100 + i) + Q1
PS = "\ue002"  # "P.S."
PPS = "\ue003"  # "P.P.S."
Q = f"{Q0}[\ue100-\ue1ff]{Q1}"
QUOTE_RX = re.compile(
    r"\"([^\"\n]{1,200})\"|“([^”\n]{1,200})”|‘([^’\n]{1,200})’|`([^`\n]{1,120})`"
    r"|(?<![\w'])'([^'\n]{1,120}?)'(?![\w'])"
)
_ONES = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_FIXED_NUMBERS = [
    (r"\bhalf a dozen\b", "6"), (r"\ba dozen\b", "12"), (r"\bdozen\b", "12"), (r"\ba couple of\b", "2"),
    (r"\ba pair of\b", "2"), (r"\ba single\b", "1"), (r"\bsingle\b", "1"), (r"\bonce\b", "1 times"),
    (r"\btwice\b", "2 times"), (r"\bthrice\b", "3 times"), (r"\bone hundred\b", "100"), (r"\ba hundred\b", "100"),
    (r"\ba thousand\b", "1000"),
]  # fmt: skip
_ONES_RX = "|".join(sorted(_ONES, key=len, reverse=True))
_NUMWORD_RX = re.compile(
    rf"\b(?:(?P<h>{_ONES_RX})\s+hundred(?:\s+and)?\s+)?"
    rf"(?:(?P<t>{'|'.join(_TENS)})(?:[- ](?P<o>{_ONES_RX}))?|(?P<o2>{_ONES_RX}))\b"
)


def numbers(text: str) -> str:
    for rx, rep in _FIXED_NUMBERS:
        text = re.sub(rx, rep, text)

    def sub(m: re.Match[str]) -> str:
        n = (_ONES[m.group("h")] * 100 if m.group("h") else 0) + _TENS.get(m.group("t") or "", 0)
        n += _ONES.get(m.group("o") or m.group("o2") or "", 0)
        return str(n)

    text = _NUMWORD_RX.sub(sub, text)
    return re.sub(r"\b(\d+) hundred\b", lambda m: str(int(m.group(1)) * 100), text)


# -- vocabulary -----------------------------------------------------------------------------------------------
_CMP = {
    "max": r"at most|no more than|not more than|no greater than|up to|a maximum of|maximum of|maximum|max|"
    r"no longer than|not longer than|not exceeding|not to exceed|within|at the most|limited to|limit(?:ed)? to|"
    r"capped at|never more than|no higher than|a max of",
    "lt": r"fewer than|less than|under|below|shorter than|lower than",
    "min": r"at least|no fewer than|not fewer than|no less than|not less than|a minimum of|minimum of|minimum|min|"
    r"no shorter than|not shorter than|at minimum",
    "gt": r"more than|over|above|longer than|greater than|exceeding|exceeds|exceed|in excess of",
    "exact": r"exactly|precisely|just|only|strictly",
    "approx": r"about|around|approximately|roughly|circa",
}
_CMP_ALL = "|".join(f"(?P<{k}>{v})" for k, v in _CMP.items())
_POST = {
    "max": r"or (?:fewer|less|under|shorter|below)|at most|max(?:imum)?|tops|at the most|or so",
    "min": r"or (?:more|greater|longer|above)|at least|minimum|min",
}
_UNITS: list[tuple[str, str]] = [
    (r"capital letters?|uppercase letters?|upper[- ]case letters?|capitals", "capitals"),
    (r"bullet[- ]?points?|bullets?|bulleted (?:items?|points?|list items?)", "bullets"),
    (r"numbered (?:items?|steps?|points?|list items?|lines?)", "numbered"),
    (r"list items?|items?|points?|steps?", "items"),
    (r"highlighted (?:sections?|parts?|phrases?|words?)|highlights?", "highlights"),
    (r"exclamation (?:marks?|points?)", "exclamations"),
    (r"question marks?", "questions"),
    (r"punctuation(?: marks?)?", "punctuation"),
    (r"placeholders?", "placeholders"),
    (r"syllables?", "syllables"),
    (r"sentences?", "sentences"),
    (r"paragraphs?|stanzas?", "paragraphs"),
    (r"sections?", "sections"),
    (r"lines?|verses?", "lines"),
    (r"characters?|chars?", "chars"),
    (r"letters?", "letters"),
    (r"words?", "words"),
    (r"digits?|numbers?|numerals?", "numbers"),
    (r"commas?", "commas"),
    (r"hashtags?", "hashtags"),
]
_UNIT_RX = "|".join(f"(?:{p})" for p, _ in _UNITS)
_SCOPES = {
    "sentence": r"sentences?",
    "item": r"bullet[- ]?points?|bullets?|list items?|items?|points?|steps?|numbered items?",
    "paragraph": r"paragraphs?|stanzas?",
    "line": r"lines?|verses?",
    "word": r"words?",
}
_SCOPE_RX = "|".join(f"(?:{v})" for v in _SCOPES.values())


def _scope_name(word: str) -> str | None:
    """The scope a scope word names (``bullets`` -> ``item``)."""
    found = re.search(_SCOPE_RX, word)
    if not found:
        return None
    return next(k for k, v in _SCOPES.items() if re.fullmatch(v, found.group(0)))


_SIZE = {"word": 0, "sentence": 1, "line": 2, "item": 2, "paragraph": 3}
_UNIT_SIZE = {
    "letters": -1,
    "chars": -1,
    "syllables": -1,
    "capitals": -1,
    "words": 0,
    "sentences": 1,
    "lines": 2,
    "bullets": 2,
    "numbered": 2,
    "items": 2,
    "paragraphs": 3,
}
_LENGTH_UNITS = {"words", "chars", "letters", "syllables"}
_CONTAINERS = {"bullets": "item", "numbered": "item", "items": "item", "sentences": "sentence", "lines": "line",
               "paragraphs": "paragraph"}  # fmt: skip
_NEG = r"(?:\bnot\b|\bno\b|n't\b|\bnever\b|\bnone of\b|\bnor\b|\bwithout\b)"
LANGS = {
    "english": "en", "german": "de", "deutsch": "de", "french": "fr", "spanish": "es", "italian": "it",
    "portuguese": "pt", "dutch": "nl", "russian": "ru", "greek": "el", "arabic": "ar", "hebrew": "he",
    "hindi": "hi", "japanese": "ja", "korean": "ko", "chinese": "zh", "mandarin": "zh", "thai": "th",
}  # fmt: skip
OTHER_LANGS = (
    "swahili|finnish|klingon|polish|turkish|swedish|danish|norwegian|czech|hungarian|romanian|vietnamese|"
    "indonesian|malay|tagalog|bengali|urdu|persian|farsi|tamil|telugu|marathi|gujarati|punjabi|ukrainian|"
    "bulgarian|serbian|croatian|slovak|slovenian|latvian|lithuanian|estonian|icelandic|irish|welsh|latin|"
    "esperanto|catalan|basque|galician|yoruba|zulu|amharic|kannada|malayalam|nepali|sinhala|burmese|khmer|lao"
)
_TYPES = [
    (r"lists? of strings|arrays? of strings|string lists?", "list_of_strings"),
    (r"lists? of (?:numbers|integers|floats)|arrays? of (?:numbers|integers|floats)", "list_of_numbers"),
    (r"strings?|str|text", "string"),
    (r"integers?|int|whole numbers?", "integer"),
    (r"numbers?|floats?|decimals?|numeric|double", "number"),
    (r"booleans?|bool|true/false", "boolean"),
    (r"lists?|arrays?", "list"),
    (r"objects?|dicts?|dictionar(?:y|ies)|maps?", "object"),
    (r"null|none", "null"),
]
_TYPE_RX = "|".join(f"(?:{p})" for p, _ in _TYPES)


# Requirement words: left over after reading, they mark a clause as not (fully) understood.
# Requirement words: left over after reading, they mark a clause as not (fully) understood.
CUES = set(
    """word words sentence sentences paragraph paragraphs line lines bullet bullets list lists item items point
    points character characters letter letters syllable syllables comma commas punctuation capital capitals
    capitalized uppercase lowercase case json key keys field fields title titles section sections heading
    headings header headers markdown bold italic italics table tables quote quotes quotation bracket brackets
    format formatted formatting language emoji emojis hashtag hashtags rhyme rhymes rhyming haiku sonnet limerick
    acrostic alliteration tone style formal informal casual friendly polite persuasive funny humorous serious
    short shorter shortest brief briefly concise long longer lengthy detailed simple simply exactly least most
    more less fewer between under over maximum minimum limit always times length numbered dash dashes hyphen
    hyphens colon semicolon emoji stanza stanzas verse verses vowel vowels consonant consonants
    poem story essay tweet slogan riddle joke song lyrics dialogue outline summary abstract""".split()
)
STOP_WORDS = set(
    """a an the and or but if then so to of in on at by for with from into onto about as is are be been being
    was were do does did done your you yours my me i we our us it its this that these those there here it's
    please kindly make sure ensure should must shall will would can could may might need needs have has had
    also just really very all any some answer answers response responses reply replies output text message
    write writing written give provide respond answering replying use using keep stay put include including
    entire whole full final overall total make made let each every one 1 time contain contains containing
    consist consists consisting of comprise comprises have has having appear appears follow only also first
    then now explicitly always""".split()
)


# -- the clause reader ----------------------------------------------------------------------------------------
class ClauseText:
    """Working state for one clause: lowercased, numbers as digits, quotes as placeholders."""

    def __init__(self, text: str, quotes: list[str], memory: dict[str, Any]) -> None:
        self.raw = text
        self.w = numbers(text.lower())
        self.quotes = quotes
        self.memory = memory
        self.found: list[dict[str, Any]] = []
        self.unreadable: list[str] = []
        self.scoped = False  # a quantity was read with a per-unit scope

    def q(self, token: str) -> str:
        return self.quotes[ord(token[1]) - 0xE100]

    def consume(self, m: re.Match[str]) -> None:
        self.blank(*m.span())

    def blank(self, a: int, b: int) -> None:
        self.w = self.w[:a] + " " * (b - a) + self.w[b:]

    def each(self, pattern: str, fn: Callable[[re.Match[str]], Any]) -> None:
        for m in list(re.finditer(pattern, self.w)):
            if m.group(0).strip() and not self.w[m.start() : m.end()].isspace():
                if fn(m) is not False:
                    self.consume(m)

    def add(self, c: dict[str, Any]) -> None:
        self.found.append(c)


def _bounds(kind: str | None, n: int, n2: int | None, negated: bool) -> dict[str, int] | None:
    if n2 is not None:
        return None if negated else {"min": min(n, n2), "max": max(n, n2)}
    if negated:
        kind = {"gt": "max", "lt": "min", "min": "lt", "max": "gt"}.get(kind or "", "neg")
        if kind == "neg":
            return None
        if kind == "lt":
            return {"max": max(0, n - 1)} if n > 0 else None
        if kind == "gt":
            return {"min": n + 1}
        return {"max": n} if kind == "max" else {"min": n}
    if kind == "max":
        return {"max": n}
    if kind == "lt":
        return {"max": max(0, n - 1)}
    if kind == "min":
        return {"min": n}
    if kind == "gt":
        return {"min": n + 1}
    if kind == "approx":
        return {"min": int(n * 0.8), "max": -(-n * 6 // 5)}
    return {"min": n, "max": n}


def _cmp_kind(m: re.Match[str], prefix: str = "") -> str | None:
    for k in _CMP:
        if m.groupdict().get(prefix + k):
            return k
    return None


def _negation(before: str) -> tuple[int, int] | None:
    """Where the negation in the few words before a quantity is (``no bullet longer than``, ``must not
    exceed``), or None."""
    words = list(re.finditer(r"\S+", before))
    start = words[-8].start() if len(words) >= 8 else 0
    matches = list(re.finditer(_NEG, before[start:]))
    found = matches[-1] if matches else None
    if found is None:
        return None
    a, b = start + found.start(), start + found.end()
    if re.match(r"no (?:more|fewer|less|longer|shorter)\b", before[a:]):
        return None
    return a, b


def _negated(before: str) -> bool:
    return _negation(before) is not None


def read_lists(cl: ClauseText) -> None:
    """List words that only restate a list count already read ("a numbered list of 4 steps")."""
    rules = {c["rule"] for c in cl.found}
    if rules & {"bullets", "numbered", "items", "lines"}:
        cl.each(
            r"\b(?:a\s+)?(?:numbered|bulleted|bullet(?:ed)?[- ]point|markdown)?\s*list(?:\s+of)?\b|\bas a\b|\bone per line\b",
            lambda m: True,
        )


def _unit_rule(unit: str, sentence: str) -> str:
    for pattern, rule in _UNITS:
        if re.fullmatch(pattern, unit):
            if rule == "items":
                if re.search(r"\bnumbered\b", sentence):
                    return "numbered"
                if re.search(r"\bbullet", sentence):
                    return "bullets"
            return rule
    raise ValueError(unit)


def _scope_of(m: re.Match[str], rule: str, cl: ClauseText) -> str | None:
    """The unit a quantity applies to each of (``per``), or None for the whole answer."""
    after = cl.w[m.end() : m.end() + 40]
    before = cl.w[: m.start()]
    scope = None
    am = re.match(rf"\s*(?:each|apiece|per (?:{_SCOPE_RX})|(?:in|for) (?:each|every) (?:{_SCOPE_RX}))", after)
    if am:
        scope = _scope_name(am.group(0)) or "pronoun"
    if scope is None:
        found = list(
            re.finditer(
                rf"\b(?:each|every|per|any|no|none of the|not a 1|not 1|all(?: of)?(?: the| your)?|individual)\s+"
                rf"(?:of (?:the|your) )?(?:\w+ )?(?:{_SCOPE_RX})\b",
                before,
            )
        )
        bm = found[-1] if found else None
        if bm:
            scope = _scope_name(bm.group(0)[bm.group(0).find(" ") :])
        elif re.search(
            r"\b(?:each|every|none of them|any of them|all of them|each of them|each one)\b", before
        ):
            scope = "pronoun"
        else:
            sm = re.search(
                rf"(?:{_SCOPE_RX})\s+(?:of|with|containing|having|that (?:are|have|contain)|which (?:are|have))\s*$",
                before,
            )
            if sm and not re.search(r"\b\d+\s+\w*\s*$", before[: sm.start()]):
                scope = _scope_name(sm.group(0))
    if scope == "pronoun":
        scope = cl.memory.get("container")
        if scope is None:
            return "?"
    if scope is None:
        return None
    return scope if _SIZE[scope] > _UNIT_SIZE.get(rule, 0) else None


def read_quantities(cl: ClauseText, sentence: str) -> None:
    pattern = (
        rf"(?:(?:{_CMP_ALL})\s+)?(?:(?P<between>between|from)\s+)?(?P<n>\d+)"
        rf"(?:\s*(?:-|–|to|and|or)\s*(?P<n2>\d+))?(?P<plus>\+)?"
        rf"(?:\s+(?P<mid>or (?:more|fewer|less)))?"
        rf"\s*(?:-\s*)?(?P<adj>(?:(?!(?:or|and|more|less|fewer|than|at|to|no|not|in|of)\b)[a-z]+\s+){{0,2}}?)"
        rf"(?P<unit>{_UNIT_RX})\b(?:\s+(?P<post>(?P<post_max>{_POST['max']})|(?P<post_min>{_POST['min']}))\b)?"
    )

    negations: list[tuple[int, int]] = []

    def one(m: re.Match[str]) -> bool:
        unit = m.group("unit")
        rule = _unit_rule(unit, sentence)
        if re.search(r"\btimes?\b", cl.w[m.end() : m.end() + 8]):
            return False
        kind = _cmp_kind(m)
        if m.group("post_max") or m.group("mid") in ("or fewer", "or less"):
            kind = "approx" if (m.group("post_max") or "").startswith("or so") else "max"
        elif m.group("post_min") or m.group("plus") or m.group("mid") == "or more":
            kind = "min"
        n = int(m.group("n"))
        n2 = int(m.group("n2")) if m.group("n2") else None
        before = cl.w[: m.start()]
        neg = _negation(before) if kind not in (None, "exact", "approx") else None
        if kind is None and n2 is None:
            if rule in _LENGTH_UNITS and re.search(r"\b(?:in|within|using|under)\s*$", before):
                kind = "max"
            else:
                lim = re.search(
                    r"\b(?:limit|keep|cap|restrict)\w*\s+(?:(?:it|yourself|your|the|this|each|every)\s+)?(?:\w+\s+)?to\s*$",
                    before,
                )
                if lim:
                    kind = "max"
                    negations.append(lim.span())
        b = _bounds(kind, n, n2, neg is not None)
        if b is None:
            return False
        if neg is not None:
            negations.append(neg)
        if re.search(r"\blower[- ]?case\b", m.group("adj")):
            cl.add({"rule": "lowercase"})  # "3 lowercase letters": a count, and the case
        vague = [w for w in m.group("adj").split() if w in CUES and not re.fullmatch(r"lower[- ]?case", w)]
        if vague:
            cl.unreadable.append(f"vague: {' '.join(vague)} {m.group('unit')}")
        c: dict[str, Any] = {"rule": rule, **b}
        scope = _scope_of(m, rule, cl)
        if scope == "?":
            cl.unreadable.append(f"'each' without a unit it refers to: {m.group(0).strip()}")
            return True
        if scope:
            c["per"] = scope
        cl.add(c)
        if rule in _CONTAINERS and not scope:
            cl.memory["container"] = _CONTAINERS[rule]
        if scope:
            cl.scoped = True
        return True

    def one_or_n(m: re.Match[str]) -> None:
        c: dict[str, Any] = {
            "rule": _unit_rule(m.group("unit"), sentence),
            "min": 1,
            "max": int(m.group("n2")),
        }
        cl.add(c)

    cl.each(rf"\b(?:a|an|1)\s+(?P<unit>{_UNIT_RX})\s+or\s+(?P<n2>\d+)\b", one_or_n)
    cl.each(
        r"\b(?:write|in|with|as|give|using|answer with|reply with|respond with|respond in|answer in|reply in|"
        r"respond using|answer using)\s+(?:only\s+|just\s+)?(?:a|an)\s+(?P<unit>sentence|paragraph|word|line)\b"
        r"(?!\s+(?:or|and|of|count|limit|that|which|who))",
        lambda m: cl.add({"rule": _unit_rule(m.group("unit"), sentence), "min": 1, "max": 1}),
    )
    cl.each(pattern, one)
    # "each bullet", "every sentence", "none of them": scope words already used by a quantity.
    cl.each(
        rf"\b(?:each|every|per|any|none of the|none of them|any of them|each of them|all of them|each one|"
        rf"apiece|not a 1|not 1|individual)\b(?:\s+(?:of (?:the|your) )?(?:\w+ )?(?:{_SCOPE_RX})\b)?",
        lambda m: cl.scoped,
    )
    if cl.scoped:
        cl.each(
            rf"\b(?:no|all)\s+(?:{_SCOPE_RX})\b|\b(?:{_SCOPE_RX})\s+(?:of|with|containing|having)\b|\blong\b",
            lambda m: True,
        )
    for a, b in negations:
        cl.blank(a, b)


def _targets(cl: ClauseText, text: str) -> list[str]:
    return [cl.q(t) for t in re.findall(Q, text)]


def _bare_list(text: str) -> list[str]:
    words = [w for w in re.split(r"\s*(?:,|\band\b|\bor\b|&)\s*", text.strip()) if w]
    return [w for w in words if re.fullmatch(r"[a-z#@][\w'-]*", w) and w not in STOP_WORDS]


_TARGET = (
    r"(?:the\s+(?:(?:key)?words?|phrases?|terms?|names?|hashtags?|expressions?|letters?|characters?)\s+)?"
)
_QLIST = rf"{Q}(?:\s*(?:,|\bor\b|\band\b|&|/)\s*(?:and\s+|or\s+)?{Q})*"


def _add_words(cl: ClauseText, rule: str, words: list[str], m_text: str) -> None:
    single_letter = len(words) == 1 and len(words[0]) == 1 and words[0].isalpha()
    if single_letter and re.search(r"\bletters?\b|\bcharacters?\b", m_text):
        cl.add(
            {
                "rule": "letter",
                "letter": words[0].lower(),
                **({"max": 0} if rule == "exclude" else {"min": 1}),
            }
        )
    elif words:
        cl.add({"rule": rule, "words": words})


def read_words(cl: ClauseText) -> None:
    counted = rf"(?:{_CMP_ALL})?\s*(?P<n>\d+)\s+times\b"
    verb = r"(?:use|include|mention|say|write|repeat|contain|have|feature|put)"
    bare = r"(?:(?:key)?words?|letters?|terms?)\s+(?P<bare>[a-z#@][\w'-]*)"

    def occurs(m: re.Match[str]) -> bool:
        words = _targets(cl, m.group(0)) or ([m.group("bare")] if m.groupdict().get("bare") else [])
        if not words:
            return False
        kind = _cmp_kind(m)
        negated = kind not in (None, "exact") and _negated(cl.w[: m.start()])
        b = _bounds(kind, int(m.group("n")), None, negated)
        if b is None:
            return False
        for w in words:
            if len(w) == 1 and w.isalpha() and re.search(r"\bletters?\b|\bcharacters?\b", m.group(0)):
                cl.add({"rule": "letter", "letter": w.lower(), **b})
            else:
                cl.add({"rule": "occurs", "text": w, **b})
        return True

    cl.each(
        rf"\b{verb}\s+(?:the\s+)?(?:(?:{_QLIST})|{bare}|(?:\w+\s+)?{Q})(?:\s+\w+){{0,4}}?\s+{counted}", occurs
    )
    cl.each(
        rf"(?:the\s+(?:\w+\s+)?)?(?:{Q}|{bare})\s+(?:\w+\s+){{0,2}}?(?:appear|occur|be used|be mentioned|show up|"
        rf"be included|be repeated|feature|be written)\w*\s+(?:in (?:your|the) (?:answer|response|reply)\s+)?{counted}",
        occurs,
    )
    neg = r"(?:do not|don't|never|must not|should not|shouldn't|cannot|can't|may not|avoid|avoiding|without|refrain from|no)"
    cl.each(
        rf"\b{neg}\s+(?:ever\s+)?(?:(?:use|using|say|saying|mention|mentioning|include|including|write|writing|"
        rf"contain|containing|mention of)\s+)?(?:the\s+|any\s+(?:of\s+the\s+)?)?"
        rf"(?:(?:key)?words?|phrases?|terms?|letters?|characters?|names?)?\s*:?\s*(?:{_QLIST})",
        lambda m: _add_words(cl, "exclude", _targets(cl, m.group(0)), m.group(0)),
    )
    cl.each(
        rf"\b{neg}\s+(?:ever\s+)?(?:use|using|say|saying|mention|mentioning|include|including|write|writing)?\s*"
        rf"the\s+(?:word|letter)\s+(?P<w>[a-z][\w'-]*)\b",
        lambda m: _add_words(cl, "exclude", [m.group("w")], m.group(0)),
    )
    cl.each(
        rf"(?:{_QLIST})\s+(?:must|should|may|can|shall)\s*(?:not|never)\s+(?:appear|be used|be mentioned|be included|occur)",
        lambda m: _add_words(cl, "exclude", _targets(cl, m.group(0)), m.group(0)),
    )
    inc_verb = (
        r"(?:include|includes|including|use|using|mention|mentioning|contain|containing|incorporate|feature|"
        r"featuring|add|insert|work in|have)"
    )
    cl.each(
        rf"\bwith\s+(?:the\s+)?(?:following\s+)?(?:(?:key)?words?|phrases?|terms?|keywords?|hashtags?)\s*:?\s*(?:{_QLIST})",
        lambda m: _add_words(cl, "include", _targets(cl, m.group(0)), m.group(0)),
    )
    cl.each(
        rf"\b{inc_verb}\s+(?:the\s+|these\s+|both\s+|all\s+(?:of\s+)?(?:the\s+)?)?(?:following\s+)?"
        rf"(?:(?:key)?words?|phrases?|terms?|keywords?|names?|hashtags?|expressions?|letters?)?\s*:?\s*(?:{_QLIST})",
        lambda m: _add_words(cl, "include", _targets(cl, m.group(0)), m.group(0)),
    )
    cl.each(
        rf"\b{inc_verb}\s+(?:the\s+)?(?:(?:key)?words?|keywords?|terms?)\s*:?\s+(?P<list>[a-z][\w'-]*(?:\s*(?:,|and|&)\s*[a-z][\w'-]*){{0,5}})",
        lambda m: (
            _add_words(cl, "include", _bare_list(m.group("list")), "")
            if _bare_list(m.group("list"))
            else False
        ),
    )
    cl.each(
        rf"(?:make sure|ensure)\s+(?:to\s+(?:use|include|mention)\s+)?(?:the\s+(?:word|phrase)\s+)?(?:{_QLIST})"
        rf"|(?:{_QLIST})\s+(?:must|should|has to|needs to)\s+(?:appear|be included|be mentioned|be used)",
        lambda m: _add_words(cl, "include", _targets(cl, m.group(0)), m.group(0)),
    )


def read_position(cl: ClauseText) -> None:
    subject = r"(?:(?:your|the|this)\s+)?(?:(?:entire|whole)\s+)?(?:answer|response|reply|message|output|text|letter|email|essay|story|poem|it|list)?"
    what = r"(?:(?:the|this|these|that)\s+(?:exact\s+)?(?:word|phrase|greeting|sentence|words|question|salutation)\s+)?"
    marks = {
        "a question(?: mark)?": "?",
        "an exclamation(?: mark| point)?": "!",
        "a (?:period|full stop)": ".",
    }

    def start(m: re.Match[str], rule: str) -> None:
        c: dict[str, Any] = {"rule": rule, "text": _targets(cl, m.group(0))[-1]}
        per = _scope_name(m.group(0))
        if per and per != "word":
            c["per"] = per
        elif rule == "not_starts_with" and re.search(r"\bsentences?\b", m.group(0)):
            c["per"] = "sentence"
        cl.add(c)

    neg = r"(?:never|do not|don't|must not|should not|shouldn't|avoid|no\s+(?:\w+\s+)?(?:may|should|can|must|will)?|not)"
    cl.each(
        rf"\b{neg}\s+(?:\w+\s+){{0,2}}?(?:start|begin|open)\w*\s+(?:(?:a|any|each|every|your|the|of the)\s+)?"
        rf"(?:(?:{_SCOPE_RX})\s+)?with\s+{what}{Q}",
        lambda m: start(m, "not_starts_with"),
    )

    def start_mark(m: re.Match[str]) -> None:
        c: dict[str, Any] = {"rule": "starts_with", "text": "-"}
        per = _scope_name(m.group(0))
        if per and per != "word":
            c["per"] = per
        cl.add(c)

    cl.each(
        rf"\b(?:start|begin)\w*\s+(?:(?:each|every|all)\s+(?:{_SCOPE_RX})\s+|{subject}\s*)with\s+(?:a\s+)?(?:dash|hyphen)",
        start_mark,
    )
    cl.each(
        rf"\b(?:start|begin|open|commence|lead)\w*\s+(?:(?:each|every|all)\s+(?:{_SCOPE_RX})\s+|{subject}\s*)"
        rf"(?:with|by saying|by writing)\s+{what}{Q}"
        rf"|\b(?:your|the)\s+(?:very\s+)?first (?:word|sentence|line)\s+(?:\w+\s+){{0,2}}?be\s+{what}{Q}",
        lambda m: start(m, "starts_with"),
    )

    def end(m: re.Match[str]) -> None:
        quoted = _targets(cl, m.group(0))
        text = quoted[-1] if quoted else next(v for k, v in marks.items() if re.search(k, m.group(0)))
        c: dict[str, Any] = {"rule": "ends_with", "text": text}
        per = _scope_name(m.group("head"))
        if per and per != "word":
            c["per"] = per
        cl.add(c)

    mark_rx = "|".join(marks)
    cl.each(
        rf"(?P<head>\b(?:end|ends|finish|close|conclude|wrap up)\w*\s+(?:(?:each|every|all)\s+(?:{_SCOPE_RX})\s+|{subject}\s*)"
        rf"(?:with|by saying|by writing|on)\s+){what}(?:{Q}|{mark_rx})"
        rf"|(?P<last>\b(?:your|the)\s+(?:very\s+)?last (?:word|sentence|line)\s+(?:\w+\s+){{0,2}}?be\s+){what}{Q}",
        lambda m: (
            end(m) if m.group("head") else cl.add({"rule": "ends_with", "text": _targets(cl, m.group(0))[-1]})
        ),
    )
    cl.each(
        r"\bno other words? (?:should|may|must|can)?\s*follow\w*(?: (?:this|the|that) phrase)?",
        lambda m: True,
    )


def read_case(cl: ClauseText) -> None:
    caps = r"(?:capital letters|capitals|caps|upper[- ]?case(?: letters)?)"

    def capital_words(m: re.Match[str]) -> bool:
        kind = _cmp_kind(m)
        b = _bounds(
            kind, int(m.group("n")), None, kind not in (None, "exact") and _negated(cl.w[: m.start()])
        )
        if b is None:
            return False
        cl.add({"rule": "capital_words", **b})
        return True

    cl.each(
        rf"(?:(?:{_CMP_ALL})\s+)?(?P<n>\d+)\s+words?\s+(?:\w+\s+){{0,4}}?(?:in|with|using|as)\s+(?:all\s+)?{caps}",
        capital_words,
    )
    cl.each(
        rf"(?:all[- ])?{caps}\s+words?\s+(?:\w+\s+){{0,3}}?(?:{_CMP_ALL})?\s*(?P<n>\d+)\s+times",
        capital_words,
    )
    cl.each(
        r"\bcapitali[sz]e\s+(?:the\s+first\s+letter\s+of\s+)?(?:each|every|all)\s+words?|\btitle[- ]case\b"
        r"|\b(?:each|every|all)\s+words?\s+(?:\w+\s+){0,3}?(?:with|start\w*\s+with|begin\w*\s+with)\s+(?:a|an)\s+"
        r"(?:initial\s+)?(?:capital|uppercase|upper[- ]case)(?:\s+letter)?|\binitial capital letters?",
        lambda m: cl.add({"rule": "title_case"}),
    )
    cl.each(
        r"(?:(?:all|entirely|only|in|using)\s+)*lower[- ]?case(?:\s+letters)?(?:\s+only)?"
        r"|\b(?:no|without(?: any)?|(?:do not|don't|never|avoid)\s+(?:use\s+|using\s+)?(?:any\s+)?)\s*"
        r"(?:capital|uppercase|upper[- ]case|capitali[sz]ed)\s+letters?(?:\s+at all)?|\bsmall letters\b",
        lambda m: (
            False
            if re.search(r"\d+\s+(?:[a-z]+\s+){0,2}$", cl.w[: m.start()])
            else cl.add({"rule": "lowercase"})
        ),
    )

    def upper(m: re.Match[str]) -> bool:
        before = cl.w[: m.start()]
        if re.search(rf"{_NEG}\s*(?:\w+\s+){{0,2}}$", before) or re.search(
            r"\d+\s+(?:[a-z]+\s+){0,2}$", before
        ):
            return False  # "not in capitals"; "3 capital letters" is a count (read with the quantities)
        cl.add({"rule": "uppercase"})
        return True

    cl.each(
        rf"(?:(?:all|entirely|only|fully|completely|in|using|written in)\s+)*(?:all\s+)?{caps}(?:\s+only)?",
        upper,
    )


def read_markup(cl: ClauseText) -> None:
    cl.each(
        r"\b(?:wrap|enclose|put|place|surround)\w*\s+(?:(?:your|the|this)\s+)?(?:(?:entire|whole|full)\s+)?"
        r"(?:response|answer|reply|output|text|message)?\s*(?:inside|in|within|with|between)\s+(?:double\s+)?"
        r"(?:quotation marks|quotes|quote marks)",
        lambda m: cl.add({"rule": "quoted"}),
    )
    cl.each(
        r"\b(?:a\s+)?title\b(?:\s+\w+){0,6}?\s+(?:<<[^>]*>>|double angular brackets|double angle brackets)"
        r"(?:\s*,?\s*(?:such as|like|eg|ie|for example)?\s*<<[^>]*>>)?|<<[^>]*>>",
        lambda m: cl.add({"rule": "title"}),
    )

    def ps(m: re.Match[str]) -> None:
        quoted = _targets(cl, m.group(0))
        text = "P.P.S." if PPS in m.group(0) else "P.S."
        cl.add({"rule": "postscript", "text": quoted[-1] if quoted else text})

    marks = f"{PS}|{PPS}"
    cl.each(
        rf"\b(?:a\s+)?(?:postscript|{marks})(?:\s+(?:starting|beginning)\s+with\s+(?:{marks}|{Q}))?|{marks}",
        ps,
    )

    def hl(m: re.Match[str]) -> None:
        n = m.group("n")
        bounds = _bounds(_cmp_kind(m) or "min", int(n), None, False) if n else None
        cl.add({"rule": "highlights", **(bounds or {"min": 1})})

    cl.each(
        rf"\b(?:highlight|emphasi[sz]e|mark)\w*\s+(?:(?:{_CMP_ALL})\s+)?(?P<n>\d+)?\s*(?:\w+\s+)?"
        rf"(?:sections?|parts?|phrases?|words?)(?:\s+(?:\w+\s+){{0,2}}?(?:with|using|in)\s+markdown(?:\s+\w+)?)?"
        rf"(?:\s+as highlighted)?(?:\s+(?:using|with)\s+markdown(?:\s+asterisks|\s+italics)?)?",
        hl,
    )
    cl.each(r"\b(?:with|using|in)\s+markdown(?:\s+(?:asterisks|italics|bold))?\b", lambda m: True)
    cl.each(r"(?:such as|like|eg|ie|for example)\s*,?\s*(?:\[[^\]]*\]|\*[^*]+\*|<<[^>]*>>)", lambda m: True)
    cl.each(r"\b(?:in|with|using|inside|within)\s+square brackets\b|\bin the form\b", lambda m: True)

    cl.each(
        r"\b(?:in|inside|within|as)\s+(?:a\s+)?(?:markdown\s+)?(?:code block|fenced block)|\btriple backticks\b",
        lambda m: cl.add({"rule": "code_block"}),
    )

    def sep(m: re.Match[str]) -> None:
        quoted = _targets(cl, m.group(0))
        text = quoted[-1] if quoted else (m.group("stars") or "")
        c = next((x for x in cl.found if x["rule"] == "paragraphs"), None)
        if c is None:
            c = {"rule": "paragraphs", "min": 1}
            cl.add(c)
        if text:
            c["separator"] = text

    cl.each(
        rf"(?:\b(?:paragraphs?|sections?)\s+(?:are|should be|must be|will be)\s+)?"
        rf"\bseparat\w*\s+(?:(?:the|your|each|all)\s+)?(?:paragraphs?|sections?|parts?)?\s*(?:from each other\s+)?"
        rf"(?:with|by|using)\s+(?:the\s+)?(?:markdown\s+)?(?:divider|separator)?\s*:?\s*(?:{Q}|(?P<stars>\*{{3,}}))",
        sep,
    )
    cl.each(
        r"\bseparated (?:by|with) (?:a |an )?(?:blank|empty) lines?\b|\bblank lines? between\b",
        lambda m: True,
    )


def read_sections(cl: ClauseText) -> None:
    cl.each(r"\buse (?:the )?(?:markdown )?bullet points?(?: such as:?.*)?$", lambda m: True)

    def marker(m: re.Match[str]) -> None:
        c = next((x for x in cl.found if x["rule"] == "sections"), None)
        if c is None:
            c = {"rule": "sections", "min": 1}
            cl.add(c)
        c["marker"] = _targets(cl, m.group(0))[-1].split()[0]

    cl.each(rf"\bmark\s+(?:the\s+beginning\s+of\s+)?(?:each|every)\s+sections?\s+with\s+{Q}", marker)
    cl.each(
        r"\bformat(?:ted)?\s+(?:(?:your|the)\s+)?(?:entire\s+)?(?:output|answer|response|reply)?\s*(?:as|in)\b",
        lambda m: True,
    )


def read_language(cl: ClauseText) -> None:
    names = "|".join(LANGS)
    subject = r"(?:(?:your|the)\s+)?(?:(?:entire|whole)\s+)?(?:response|answer|reply|output|text)"

    def lang(m: re.Match[str]) -> None:
        cl.add({"rule": "language", "lang": LANGS[m.group("lang")]})

    cl.each(
        rf"\b(?:(?:in|into|using)\s+(?:only\s+)?(?:the\s+)?(?:(?:plain|simple|natural|fluent|formal|proper|correct|good|standard|modern)\s+)?(?P<lang>{names})(?:\s+language)?(?:\s+only)?"
        rf"|{subject}\s+(?:should|must|has to|needs to)\s+be\s+(?:written\s+)?(?:entirely\s+)?in\s+(?P<lang2>{names}))\b",
        lambda m: (
            lang(m) if m.group("lang") else cl.add({"rule": "language", "lang": LANGS[m.group("lang2")]})
        ),
    )
    cl.each(r"\bno other languages? (?:is |are )?(?:allowed|permitted)\b", lambda m: True)
    for m in re.finditer(rf"\b(?:in|into|using)\s+(?:the\s+)?(?P<lang>{OTHER_LANGS})\b", cl.w):
        cl.unreadable.append(f"language {m.group('lang')}: no detector for it")
        cl.consume(m)


_PUNCT_NOUNS = {
    r"commas?": "commas", r"exclamation (?:marks?|points?)": "exclamations", r"question marks?": "questions",
    r"punctuation(?: marks?)?": "punctuation", r"(?:digits?|numbers?|numerals?)": "numbers",
}  # fmt: skip


def _adder(cl: ClauseText, c: dict[str, Any]) -> Callable[[re.Match[str]], None]:
    return lambda m: cl.add(dict(c))


_LETTER_CLASSES = {"vowels?": "aeiou", "consonants?": "bcdfghjklmnpqrstvwxyz"}


def read_letter_classes(cl: ClauseText) -> None:
    """Vowels and consonants: "no vowels", "without any vowels", "at least 2 vowels", "exactly 3 consonants"."""
    for noun, letters in _LETTER_CLASSES.items():
        cl.each(
            rf"\b(?:no|without(?: any)?|avoid(?:ing)?(?: any)?|zero|(?:do not|don't|never)\s+(?:use|using|include)?"
            rf"\s*(?:any\s+)?)\s*{noun}\b(?:\s+at all)?|\b{noun}[- ]free\b",
            _adder(cl, {"rule": "letter", "letter": letters, "max": 0}),
        )

        def counted(m: re.Match[str], letters: str = letters) -> bool:
            kind = _cmp_kind(m)
            neg = _negation(cl.w[: m.start()]) if kind not in (None, "exact") else None
            b = _bounds(kind, int(m.group("n")), None, neg is not None)
            if b is None:
                return False
            cl.add({"rule": "letter", "letter": letters, **b})
            return True

        cl.each(rf"(?:(?:{_CMP_ALL})\s+)?(?P<n>\d+)\s+{noun}\b", counted)


def read_marks(cl: ClauseText) -> None:
    for noun, rule in _PUNCT_NOUNS.items():
        cl.each(
            rf"\b(?:no|without(?: any| using(?: any)?)?|avoid(?:ing)?(?: the use of| using)?(?: any)?|zero|"
            rf"(?:do not|don't|never|must not|should not|refrain from)\s+(?:use|using|include|including|add|adding|"
            rf"put|putting|the use of)?\s*(?:any\s+)?)\s*{noun}\b(?:\s+at all)?|\b{noun}[- ]free\b",
            _adder(cl, {"rule": rule, "max": 0}),
        )
    cl.each(
        r"\b(?:include|contain|contains|use|have|has|mention|with)\s+(?:at least\s+)?(?:1|a|some|any)?\s*"
        r"(?:numbers?|digits?|numerals?)\b(?:\s*\(\s*0\s*-\s*9\s*\))?",
        lambda m: cl.add({"rule": "numbers", "min": 1}),
    )


def read_json(cl: ClauseText, whole: str) -> None:
    has_json = re.search(r"\bjson\b", whole) is not None
    if re.search(r"\bjson\b", cl.w):
        if not re.search(rf"{_NEG}\s+(?:\w+\s+)?json\b", cl.w):
            cl.add({"rule": "json"})
            cl.each(
                r"\b(?:valid\s+)?json(?:\s+(?:object|format|only|dictionary))?(?:\s+only)?\b", lambda m: True
            )
    if not (has_json or re.search(r"\b(?:object|dictionary)\b", whole)):
        return
    type_rx = rf"(?:\s*\(\s*(?:a|an)?\s*(?P<t1>{_TYPE_RX})\s*\)|\s*:\s*(?P<t2>{_TYPE_RX})\b|\s+as\s+(?:a|an)?\s*(?P<t3>{_TYPE_RX})\b|\s+of type\s+(?P<t4>{_TYPE_RX})\b)?"
    key = rf"(?:the\s+(?:key|field)\s+)?(?:(?P<q>{Q})|(?P<b>[a-z_][a-z0-9_]*))"
    head = r"\b(?:keys?|fields?|properties|attributes|entries)\b"
    m = re.search(head, cl.w)
    if not m:
        return
    keys: list[str] = []
    types: dict[str, str] = {}
    rest_start = m.end()
    tail = cl.w[rest_start:]
    lead = re.match(r"\s*(?:named|called|are|is|:|of|being)?\s*:?\s*", tail)
    pos = rest_start + (lead.end() if lead else 0)
    item = re.compile(key + type_rx)
    while True:
        km = item.match(cl.w, pos)
        if not km:
            break
        name = cl.q(km.group("q")) if km.group("q") else km.group("b")
        if km.group("b") and name in STOP_WORDS:
            break
        keys.append(name)
        t = next((km.group(g) for g in ("t1", "t2", "t3", "t4") if km.group(g)), None)
        if t:
            types[name] = next(v for p, v in _TYPES if re.fullmatch(p, t))
        end = km.end()
        sep = re.match(r"\s*(?:,\s*(?:and\s+)?|\band\b\s*|&\s*)", cl.w[end:])
        if not sep:
            pos = end
            break
        pos = end + sep.end()
    # Keys named before the head word ("'lat' and 'lon' as keys") are not read: they stay as leftovers.
    if not keys:
        return
    exact = bool(
        re.search(r"\b(?:exactly|only|precisely|just)\s+(?:the\s+)?(?:\d+\s+)?(?:keys?|fields?)\b", cl.w)
        or re.search(r"\bno (?:other|extra|additional) (?:keys|fields)\b", whole)
    )
    c: dict[str, Any] = {"rule": "json_keys", "keys": keys}
    if types:
        c["types"] = types
    if exact:
        c["exact"] = True
    cl.add(c)
    cl.each(
        r"\b(?:exactly|only|precisely|just)\s+(?:the\s+)?(?:\d+\s+)?(?:keys?|fields?)\b|\bno (?:other|extra|additional) (?:keys|fields)\b",
        lambda m: True,
    )
    cl.blank(m.start(), pos)
    cl.each(r"\b(?:an?\s+)?(?:json\s+)?(?:object|dictionary)\b", lambda m: True)


def read_choices(cl: ClauseText) -> None:
    def opts(m: re.Match[str]) -> None:
        cl.add({"rule": "one_of", "options": _targets(cl, m.group(0))})

    cl.each(
        rf"\b(?:(?:exactly\s+)?(?:1|one) of|either|from)\s*(?:the following|these)?\s*(?:options|choices|answers|phrases|words|values)?"
        rf"\s*:?\s*\(?\s*{Q}(?:\s*(?:,|\bor\b|\band\b|/)\s*(?:or\s+)?{Q})+\s*\)?"
        rf"|\b(?:must be|should be|has to be|answer with|reply with|respond with|answer|say)\s+(?:either\s+)?{Q}\s+or\s+{Q}",
        opts,
    )
    cl.each(
        r"\b(?:answer|reply|respond)\s+(?:with\s+)?(?:only\s+|just\s+)?(?:a\s+)?(?:simple\s+)?yes or no\b",
        lambda m: cl.add({"rule": "one_of", "options": ["yes", "no"]}),
    )


def read_only(cl: ClauseText) -> None:
    cl.each(
        r"\b(?:(?:only|just)\s+)?(?:a|1|the)\s+(?P<kind>numbers?|integers?|numerals?)\s+(?:only|and nothing else|"
        r"and nothing more|alone)\b|\b(?:only|just)\s+(?:a|1|the)\s+(?P<kind2>number|integer|numeral)\b"
        r"|\b(?:must|should|has to)\s+be\s+(?:a|1)\s+(?P<kind3>number|integer)\b",
        lambda m: cl.add(
            {
                "rule": "only",
                "what": "integer"
                if "integer" in (m.group("kind") or m.group("kind2") or m.group("kind3"))
                else "number",
            }
        ),
    )


_ONLY_CLASSES = {
    r"capital letters|uppercase letters|capitals": "capitals", r"lowercase letters|small letters": "lowercase_letters",
    r"letters": "letters", r"digits|numerals": "digits",
}  # fmt: skip


def read_only_class(cl: ClauseText) -> None:
    """ "letters only", "only digits": the whole answer is made of that class. Only the word "only" is used up,
    so a count in the same phrase ("4 letters only") is still read as a count."""
    for pattern, what in _ONLY_CLASSES.items():
        for m in list(
            re.finditer(rf"\b(?:{pattern})\s+(?P<only>only)\b|\b(?P<only2>only|just)\s+(?:{pattern})\b", cl.w)
        ):
            if re.search(r"\d+\s+(?:[a-z]+\s+){0,2}$", cl.w[: m.start()]) and m.group("only2"):
                continue  # "only 4 letters" is a count ("exactly 4"), not a class
            cl.add({"rule": "only", "what": what})
            cl.blank(*m.span("only" if m.group("only") else "only2"))


def read_nothing_else(cl: ClauseText) -> None:
    nothing = r"\b(?:and\s+)?(?:nothing else|nothing more|no other (?:text|words|characters)|without (?:any )?(?:other text|explanation|commentary)|no explanation)\b"
    rules = {c["rule"] for c in cl.found}
    classes = {"capitals": "capitals", "letters": "letters", "letter": "letters", "numbers": "digits"}
    cls = next((classes[r] for r in classes if r in rules), None)
    if cls:
        cl.each(nothing, lambda m: cl.add({"rule": "only", "what": cls}))
    elif rules & {"only", "one_of", "json", "json_keys", "words"}:
        cl.each(nothing, lambda m: True)


def read_clause_constraints(cl: ClauseText, whole: str, sentence: str) -> None:
    """Run every phrasing family on ``cl`` (``whole``: the instruction, ``sentence``: the clause's sentence, both
    lowercased with digits)."""
    read_json(cl, whole)
    read_choices(cl)
    read_position(cl)
    read_sections(cl)
    read_words(cl)
    read_case(cl)
    read_markup(cl)
    read_language(cl)
    read_only(cl)
    read_only_class(cl)
    read_letter_classes(cl)
    read_marks(cl)
    read_quantities(cl, sentence)
    read_nothing_else(cl)
    read_lists(cl)
