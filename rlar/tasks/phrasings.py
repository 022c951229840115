"""Phrasing families: the patterns that turn one clause of an instruction into constraints.

Used by :func:`rlar.tasks.reading.read_instruction`, which splits an instruction into clauses and judges what
each leaves unread. A clause is handled as :class:`ClauseText`: lowercased, number words as digits
(:func:`numbers`), quoted strings replaced by placeholders (``Q``) so nothing inside a quote is read as an
instruction. Each ``read_*`` family finds its phrasings, adds constraints (vocabulary:
:mod:`rlar.constraints.vocabulary`) and blanks the text it used, so what remains shows what was not understood.
This module holds the shared vocabulary and the quantity family (comparators, number words, negations,
scopes); the other families are in :mod:`rlar.tasks.phrasing_families`, whose ``read_clause_constraints``
runs them all in order.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from rlar.constraints.reading import Q
from rlar.number_words import ONES, TENS

# -- normalisation --------------------------------------------------------------------------------------------
PS = "\ue002"  # "P.S."
PPS = "\ue003"  # "P.P.S."
PS0 = "\ue005"  # "P.S" written without its last period
PPS0 = "\ue006"  # "P.P.S" written without its last period
MARKS = {
    PS: "P.S.",
    PPS: "P.P.S.",
    PS0: "P.S",
    PPS0: "P.P.S",
}  # a postscript mark as the instruction writes it
MARK_RX = f"[{PS}{PPS}{PS0}{PPS0}]"


def mark_text(text: str) -> str | None:
    """The postscript mark a text holds, as written (the last one named), or None."""
    found = [ch for ch in text if ch in MARKS]
    return MARKS[found[-1]] if found else None


QUOTE_RX = re.compile(
    r"\"([^\"\n]{1,200})\"|“([^”\n]{1,200})”|‘([^’\n]{1,200})’|`([^`\n]{1,120})`"
    r"|(?<![\w'])'([^'\n]{1,120}?)'(?![\w'])"
)
_ONES = ONES
_TENS = TENS
_FIXED_NUMBERS = [
    (r"\bhalf a dozen\b", "6"),
    (r"\ba dozen\b", "12"),
    (r"\bdozen\b", "12"),
    (r"\ba couple of\b", "2"),
    (r"\ba pair of\b", "2"),
    (r"\ba single\b", "1"),
    (r"\bsingle\b", "1"),
    (r"\bonce\b", "1 times"),
    (r"\btwice\b", "2 times"),
    (r"\bthrice\b", "3 times"),
    (r"\bone hundred\b", "100"),
    (r"\ba hundred\b", "100"),
    (r"\ba thousand\b", "1000"),
]
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
CMP = {
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
CMP_ALL = "|".join(f"(?P<{k}>{v})" for k, v in CMP.items())
POST = {
    "max": r"or (?:fewer|less|under|shorter|below)|at most|max(?:imum)?|tops|at the most|or so",
    "min": r"or (?:more|greater|longer|above)|at least|minimum|min",
}
_UNITS: list[tuple[str, str]] = [
    # marks and measures (before the plain nouns they end with)
    (r"emojis?|emoji (?:icons?|characters?|symbols?)", "emojis"),
    (r"bold(?:ed|face)? words?|words? (?:in|set in|written in|formatted in) bold(?:face)?", "bold_words"),
    (
        r"bold(?:ed|face)? (?:phrases?|terms?|key terms?|items?|parts?|spans?|sections?|expressions?)"
        r"|(?:phrases?|terms?|key terms?|parts?|expressions?) (?:in|set in|formatted in) bold(?:face)?",
        "bold",
    ),
    (
        r"itali(?:c|cs|cized|cised) (?:words?|phrases?|terms?|parts?|spans?)"
        r"|(?:words?|phrases?|terms?|parts?) (?:in|set in|formatted in) italics?",
        "italics",
    ),
    (r"markdown (?:hyper)?links?|(?:hyper)?links?", "links"),
    (r"(?:different|distinct|unique) words?", "distinct_words"),
    (r"(?:different|distinct|unique) letters?(?: of the (?:english |latin )?alphabet)?", "distinct_letters"),
    (r"(?:personal )?pronouns?", "pronouns"),
    (r"lines? of (?:code|[a-z]+ code|python|javascript|js|bash|sql)|code lines?", "code_lines"),
    (r"pairs? of (?:round )?(?:parentheses|brackets)|parenthes[ie]s pairs?", "parens"),
    (r"leading spaces?|spaces? of indentation|spaces? of indent", "indent"),
    (r"(?:checked|ticked|completed|done) (?:items?|tasks?|boxes?|checkboxes?|to-dos?)", "checked"),
    (r"(?:unchecked|unticked|open|pending) (?:items?|tasks?|boxes?|checkboxes?|to-dos?)", "unchecked"),
    (
        r"numbers? (?:written|spelled|spelt) (?:out )?(?:as|in|with) (?:english )?words|spelled[- ]out numbers?"
        r"|numbers? spelled out|number words",
        "number_words",
    ),
    (r"numbers? (?:written )?(?:in|as|using|with) (?:digits|numerals|figures)", "numbers"),
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
    (r"lines?|verses?|rows?", "lines"),
    (r"characters?|chars?", "chars"),
    (r"letters?", "letters"),
    (r"words?", "words"),
    (r"digits?|numbers?|numerals?", "numbers"),
    (r"commas?", "commas"),
    (r"semicolons?", "semicolons"),
    (r"colons?", "colons"),
    (r"hashtags?", "hashtags"),
]
UNIT_RX = "|".join(f"(?:{p})" for p, _ in _UNITS)
_SCOPES = {
    "sentence": r"sentences?",
    "item": r"bullet[- ]?points?|bullets?|list items?|items?|points?|steps?|numbered items?",
    "paragraph": r"paragraphs?|stanzas?",
    "line": r"lines?|verses?|rows?",
    "word": r"words?",
}
SCOPE_RX = "|".join(f"(?:{v})" for v in _SCOPES.values())


def scope_name(word: str) -> str | None:
    """The scope a scope word names (``bullets`` -> ``item``)."""
    found = re.search(SCOPE_RX, word)
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
_CONTAINERS = {
    "bullets": "item",
    "numbered": "item",
    "items": "item",
    "sentences": "sentence",
    "lines": "line",
    "paragraphs": "paragraph",
}
NEG = r"(?:\bnot\b|\bno\b|n't\b|\bnever\b|\bnone of\b|\bnor\b|\bwithout\b)"
LANGS = {
    "english": "en",
    "german": "de",
    "deutsch": "de",
    "french": "fr",
    "spanish": "es",
    "italian": "it",
    "portuguese": "pt",
    "dutch": "nl",
    "russian": "ru",
    "greek": "el",
    "arabic": "ar",
    "hebrew": "he",
    "hindi": "hi",
    "japanese": "ja",
    "korean": "ko",
    "chinese": "zh",
    "mandarin": "zh",
    "thai": "th",
}
OTHER_LANGS = (
    "swahili|finnish|klingon|polish|turkish|swedish|danish|norwegian|czech|hungarian|romanian|vietnamese|"
    "indonesian|malay|tagalog|bengali|urdu|persian|farsi|tamil|telugu|marathi|gujarati|punjabi|ukrainian|"
    "bulgarian|serbian|croatian|slovak|slovenian|latvian|lithuanian|estonian|icelandic|irish|welsh|latin|"
    "esperanto|catalan|basque|galician|yoruba|zulu|amharic|kannada|malayalam|nepali|sinhala|burmese|khmer|lao"
)
TYPES = [
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
TYPE_RX = "|".join(f"(?:{p})" for p, _ in TYPES)


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
    hyphens colon colons semicolon semicolons emoji end stanza stanzas verse verses vowel vowels consonant consonants
    poem story essay tweet slogan riddle joke song lyrics dialogue outline summary abstract
    link links url urls hyperlink hyperlinks pronoun pronouns indent indented indentation spaces space underscore
    underscores parenthesis parentheses nested deep levels pangram alphabet triangle pyramid row rows code fence
    fenced html checklist checked unchecked ticked reverse reversed backwards identical prime spelled spelt binary
    bit bits decimal decimals dollar dollars euro euros currency snake_case camelcase""".split()
)
STOP_WORDS = set(
    """a an the and or but if then so to of in on at by for with from into onto about as is are be been being
    was were do does did done your you yours my me i we our us it its this that these those there here it's
    please kindly make sure ensure should must shall will would can could may might need needs have has had
    also just really very all any some answer answers response responses reply replies output text message
    write writing written give provide respond answering replying use uses using keep stay put include including
    entire whole full final overall total make made let each every one 1 time contain contains containing
    add adding insert append passage followed entirely
    consist consists consisting of comprise comprises have has having appear appears follow only also first
    then now explicitly always everything which whose where compose produce create generate yet holding holds""".split()
)


# -- the clause reader ----------------------------------------------------------------------------------------
class ClauseText:
    """Working state for one clause: lowercased, numbers as digits, quotes as placeholders."""

    def __init__(self, text: str, quotes: list[str], memory: dict[str, Any]) -> None:
        self.raw = text
        self.w = numbers(text.lower())
        self.orig = self.w  # the clause before anything is blanked
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

    def sentence_each(self, sentence: str, pattern: str, fn: Callable[[re.Match[str]], Any]) -> None:
        """Like :meth:`each`, over the clause's whole ``sentence`` (lowercased, numbers as digits): a phrase the
        clause splitter cut in two ("write the words of the first line, in reverse order") is read in each clause
        that holds a part of it, and each blanks its own part. Without the clause in the sentence, :meth:`each`."""
        stripped = self.orig.strip()
        at = sentence.find(stripped) if stripped else -1
        if at < 0:
            self.each(pattern, fn)
            return
        lead = len(self.orig) - len(self.orig.lstrip())
        end = at + len(stripped)
        for m in list(re.finditer(pattern, sentence)):
            a, b = max(m.start(), at), min(m.end(), end)
            if a >= b or not self.w[a - at + lead : b - at + lead].strip():
                continue
            if fn(m) is not False:
                self.blank(a - at + lead, b - at + lead)


def to_bounds(kind: str | None, n: int, n2: int | None, negated: bool) -> dict[str, int] | None:
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


def cmp_kind(m: re.Match[str], prefix: str = "") -> str | None:
    for k in CMP:
        if m.groupdict().get(prefix + k):
            return k
    return None


def negation(before: str) -> tuple[int, int] | None:
    """Where the negation in the few words before a quantity is (``no bullet longer than``, ``must not
    exceed``), or None."""
    words = list(re.finditer(r"\S+", before))
    start = words[-8].start() if len(words) >= 8 else 0
    matches = list(re.finditer(NEG, before[start:]))
    found = matches[-1] if matches else None
    if found is None:
        return None
    a, b = start + found.start(), start + found.end()
    if re.match(r"no (?:more|fewer|less|longer|shorter)\b", before[a:]):
        return None
    return a, b


def is_negated(before: str) -> bool:
    return negation(before) is not None


# A list form named without a count ("use bullet points", "as numbered steps", "in a bulleted list"); a bare
# "list" ("write a packing list") is what to write about, not a format, and is left to the content reading.
_LIST_FORM = (
    r"\b(?:(?:as|in|into|with|using)\s+)?(?:a\s+|the\s+)?(?:short\s+|simple\s+)?"
    r"(?:(?P<numbered>numbered)\s+(?:list(?:\s+items?)?|items?|steps?|points?|lines?)"
    r"|bullet(?:ed)?[- ]?(?:points?|list(?:\s+items?)?|form|items?)|bullets|bulleted)\b"
)


def read_lists(cl: ClauseText) -> None:
    """List words that only restate a list count already read ("a numbered list of 4 steps"); a list form
    named without a count is at least two bullets or numbered items (one if named in the singular), none
    if negated ("do not use bullet points")."""
    rules = {c["rule"] for c in cl.found}
    if rules & {"bullets", "numbered", "items", "lines"}:
        cl.each(
            r"\b(?:a\s+)?(?:numbered|bulleted|bullet(?:ed)?[- ]point|markdown)?\s*list(?:\s+of)?\b|"
            r"\bas a\b|\bone per line\b",
            lambda m: True,
        )
        return

    def form(m: re.Match[str]) -> bool:
        rule = "numbered" if m.group("numbered") else "bullets"
        before = cl.w[: m.start()]
        neg = negation(before)
        # an unread count of what the list holds: "three short tips as bullets" is exactly 3 bullets
        count = re.search(r"\b(\d+)\s+(?:[a-z]+\s+){1,2}$", before)
        if neg:
            cl.add({"rule": rule, "max": 0})
            cl.blank(*neg)
        elif count and m.group(0).lstrip().startswith("as "):
            cl.add({"rule": rule, "min": int(count.group(1)), "max": int(count.group(1))})
            cl.blank(*count.span(1))
        else:
            single = re.search(r"(?:point|item|step|line)\b", m.group(0)) is not None
            cl.add({"rule": rule, "min": 1 if single else 2})
        return True

    cl.each(_LIST_FORM, form)


def unit_rule(unit: str, sentence: str) -> str:
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
    am = re.match(rf"\s*(?:each|apiece|per (?:{SCOPE_RX})|(?:in|for) (?:each|every) (?:{SCOPE_RX}))", after)
    if am:
        scope = scope_name(am.group(0)) or "pronoun"
    if scope is None:
        found = list(
            re.finditer(
                rf"\b(?:each|every|per|any|no|none of the|not a 1|not 1|all(?: of)?(?: the| your)?|individual)\s+"
                rf"(?:of (?:the|your) )?(?:\w+ )?(?:{SCOPE_RX})\b",
                before,
            )
        )
        bm = found[-1] if found else None
        if bm:
            scope = scope_name(bm.group(0)[bm.group(0).find(" ") :])
        elif re.search(
            r"\b(?:each|every|none of them|any of them|all of them|each of them|each one)\b", before
        ):
            scope = "pronoun"
        else:
            sm = re.search(
                rf"(?:{SCOPE_RX})\s+(?:of|with|containing|having|that (?:are|have|contain)|which (?:are|have))\s*$",
                before,
            )
            if sm and not re.search(r"\b\d+\s+\w*\s*$", before[: sm.start()]):
                scope = scope_name(sm.group(0))
    if scope == "pronoun":
        scope = cl.memory.get("container")
        if scope is None:
            return "?"
    if scope is None:
        return None
    return scope if _SIZE[scope] > _UNIT_SIZE.get(rule, 0) else None


def read_quantities(cl: ClauseText, sentence: str) -> None:
    pattern = (
        rf"(?:(?:{CMP_ALL})\s+)?(?:(?P<between>between|from)\s+)?(?P<n>\d+)"
        rf"(?:\s*(?:-|–|to|and|or)\s*(?P<n2>\d+))?(?P<plus>\+)?"
        rf"(?:\s+(?P<mid>or (?:more|fewer|less)))?"
        rf"\s*(?:-\s*)?(?P<adj>(?:(?!(?:or|and|more|less|fewer|than|at|to|no|not|in|of)\b)[a-z]+\s+){{0,2}}?)"
        rf"(?P<unit>{UNIT_RX})\b(?:\s+(?P<post>(?P<post_max>{POST['max']})|(?P<post_min>{POST['min']}))\b)?"
    )

    negations: list[tuple[int, int]] = []

    def one(m: re.Match[str]) -> bool:
        unit = m.group("unit")
        rule = unit_rule(unit, sentence)
        if re.search(
            r"\b(?:identical|same|matching|adjacent|consecutive|repeated|doubled?)\b", m.group("adj")
        ):
            return False  # "a pair of identical adjacent letters" names a doubled letter, not a count
        if re.search(r"\btimes?\b", cl.w[m.end() : m.end() + 8]):
            return False
        kind = cmp_kind(m)
        if m.group("post_max") or m.group("mid") in ("or fewer", "or less"):
            kind = "approx" if (m.group("post_max") or "").startswith("or so") else "max"
        elif m.group("post_min") or m.group("plus") or m.group("mid") == "or more":
            kind = "min"
        n = int(m.group("n"))
        n2 = int(m.group("n2")) if m.group("n2") else None
        before = cl.w[: m.start()]
        neg = negation(before) if kind not in (None, "exact", "approx") else None
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
        b = to_bounds(kind, n, n2, neg is not None)
        if b is None:
            return False
        if neg is not None:
            negations.append(neg)
        if re.search(r"\blower[- ]?case\b", m.group("adj")):
            cl.add({"rule": "lowercase"})  # "3 lowercase letters": a count, and the case
        vague = [
            w
            for w in m.group("adj").split()
            if w in CUES and not re.fullmatch(r"lower[- ]?case|markdown|bulleted|numbered", w)
        ]
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
        if rule in _CONTAINERS:  # the units last counted: what a later "each" refers to
            cl.memory["container"] = _CONTAINERS[rule]
        if scope:
            cl.scoped = True
        return True

    def one_or_n(m: re.Match[str]) -> None:
        c: dict[str, Any] = {
            "rule": unit_rule(m.group("unit"), sentence),
            "min": 1,
            "max": int(m.group("n2")),
        }
        cl.add(c)

    cl.each(rf"\b(?:a|an|1)\s+(?P<unit>{UNIT_RX})\s+or\s+(?P<n2>\d+)\b", one_or_n)
    cl.each(
        r"\b(?:write|in|with|as|give|using|answer with|reply with|respond with|respond in|answer in|reply in|"
        r"respond using|answer using|generate|produce|compose|create)\s+(?:only\s+|just\s+)?(?:a|an)\s+"
        r"(?P<unit>sentence|paragraph|word|line)\b"
        r"(?!\s+(?:or|and|of|count|limit|that|which|who|containing|holding|made))",
        lambda m: cl.add({"rule": unit_rule(m.group("unit"), sentence), "min": 1, "max": 1}),
    )
    cl.each(pattern, one)
    # "each bullet", "every sentence", "none of them": scope words already used by a quantity.
    cl.each(
        rf"\b(?:each|every|per|any|none of the|none of them|any of them|each of them|all of them|each one|"
        rf"apiece|not a 1|not 1|individual)\b(?:\s+(?:of (?:the|your) )?(?:\w+ )?(?:{SCOPE_RX})\b)?",
        lambda m: cl.scoped,
    )
    if cl.scoped:
        cl.each(
            rf"\b(?:no|all)\s+(?:{SCOPE_RX})\b|\b(?:{SCOPE_RX})\s+(?:of|with|containing|having)\b|\blong\b",
            lambda m: True,
        )
    for a, b in negations:
        cl.blank(a, b)


def targets(cl: ClauseText, text: str) -> list[str]:
    return [cl.q(t) for t in re.findall(Q, text)]


def bare_list(text: str) -> list[str]:
    words = [w for w in re.split(r"\s*(?:,|\band\b|\bor\b|&)\s*", text.strip()) if w]
    return [w for w in words if re.fullmatch(r"[a-z#@][\w'-]*", w) and w not in STOP_WORDS]


QLIST = rf"{Q}(?:\s*(?:,|\bor\b|\band\b|&|/)\s*(?:and\s+|or\s+)?{Q})*"


def add_words(cl: ClauseText, rule: str, words: list[str], m_text: str) -> None:
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


def adder(cl: ClauseText, c: dict[str, Any]) -> Callable[[re.Match[str]], None]:
    return lambda m: cl.add(dict(c))
