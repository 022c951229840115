"""The phrasing families other than quantities: words and letters, positions, case, markup, language,
punctuation, JSON, choices and "only" (:mod:`rlar.tasks.phrasings` has the vocabulary and quantities).

``read_clause_constraints`` runs every family on one clause, specific before general: JSON keys, choices,
positions, sections, words, case, markup, language, "only", letter classes, punctuation, quantities,
"nothing else", list words.
"""

from __future__ import annotations

import re
from typing import Any

from rlar.tasks.phrasings import (
    CMP_ALL,
    LANGS,
    MARK_RX,
    NEG,
    OTHER_LANGS,
    QLIST,
    SCOPE_RX,
    STOP_WORDS,
    TYPE_RX,
    TYPES,
    ClauseText,
    Q,
    add_words,
    adder,
    bare_list,
    cmp_kind,
    is_negated,
    mark_text,
    negation,
    read_lists,
    read_quantities,
    scope_name,
    targets,
    to_bounds,
)

__all__ = ["read_clause_constraints"]


def read_words(cl: ClauseText) -> None:
    counted = rf"(?:between\s+(?P<a>\d+)\s+and\s+(?P<b>\d+)|(?:{CMP_ALL})?\s*(?P<n>\d+))\s+times\b"
    verb = (
        r"(?:us(?:e|es|ing)|includ(?:e|es|ing)|mention(?:s|ing)?|say(?:s|ing)?|write|repeat(?:s|ing)?|"
        r"contain(?:s|ing)?|have|has|feature|put)"
    )
    bare = r"(?:(?:key)?words?|letters?|terms?)\s+(?P<bare>[a-z#@][\w'-]*)"

    def occurs(m: re.Match[str]) -> bool:
        words = targets(cl, m.group(0)) or ([m.group("bare")] if m.groupdict().get("bare") else [])
        if not words or (not targets(cl, m.group(0)) and words[0] in STOP_WORDS):
            return False  # "letters should appear ...": "should" is no word to count
        kind = cmp_kind(m)
        negated = kind not in (None, "exact") and is_negated(cl.w[: m.start()])
        if m.group("a"):  # "at least once and at most twice", said as a range
            b: dict[str, int] | None = {"min": int(m.group("a")), "max": int(m.group("b"))}
        else:
            b = to_bounds(kind, int(m.group("n")), None, negated)
        if b is None:
            return False
        for w in words:
            if len(w) == 1 and w.isalpha() and re.search(r"\bletters?\b|\bcharacters?\b", m.group(0)):
                cl.add({"rule": "letter", "letter": w.lower(), **b})
            else:
                cl.add({"rule": "occurs", "text": w, **b})
        return True

    cl.each(
        rf"\b{verb}\s+(?:the\s+)?(?:(?:{QLIST})|{bare}|(?:\w+\s+)?{Q})(?:\s+\w+){{0,4}}?\s+{counted}", occurs
    )
    cl.each(
        rf"(?:the\s+(?:\w+\s+)?)?(?:{Q}|{bare})\s+(?:\w+\s+){{0,2}}?(?:appear|occur|be used|be mentioned|show up|"
        rf"be included|be repeated|feature|be written)\w*\s+(?:in (?:your|the) (?:answer|response|reply)\s+)?{counted}",
        occurs,
    )
    neg = (
        r"(?:do not|don't|never|must not|should not|shouldn't|cannot|can't|may not|avoid|avoiding|without|"
        r"refrain from|no)"
    )
    cl.each(  # "do not mention the word 'sun' or the word 'moon'"
        rf"\b{neg}\s+(?:ever\s+)?(?:use|using|say|saying|mention|mentioning|include|including|write|writing)\s+"
        rf"the\s+word\s+{Q}(?:\s*(?:,|\bor\b|\band\b|\bnor\b)\s*(?:the\s+word\s+)?{Q})+",
        lambda m: add_words(cl, "exclude", targets(cl, m.group(0)), m.group(0)),
    )
    cl.each(
        rf"\b{neg}\s+(?:ever\s+)?(?:(?:use|using|say|saying|mention|mentioning|include|including|write|writing|"
        rf"contain|containing|mention of)\s+)?(?:the\s+|any\s+(?:of\s+the\s+)?)?"
        rf"(?:(?:key)?words?|phrases?|terms?|letters?|characters?|names?)?\s*:?\s*(?:{QLIST})",
        lambda m: add_words(cl, "exclude", targets(cl, m.group(0)), m.group(0)),
    )
    cl.each(
        rf"\b{neg}\s+(?:ever\s+)?(?:use|using|say|saying|mention|mentioning|include|including|write|writing)?\s*"
        rf"the\s+(?:word|letter)\s+(?P<w>[a-z][\w'-]*)\b",
        lambda m: add_words(cl, "exclude", [m.group("w")], m.group(0)),
    )
    cl.each(
        rf"(?:{QLIST})\s+(?:must|should|may|can|shall)\s*(?:not|never)\s+(?:appear|be used|be mentioned|"
        rf"be included|occur)",
        lambda m: add_words(cl, "exclude", targets(cl, m.group(0)), m.group(0)),
    )
    inc_verb = (
        r"(?:include|includes|including|use|using|mention|mentioning|contain|containing|incorporate|feature|"
        r"featuring|add|insert|work in|have)"
    )
    cl.each(
        rf"\bwith\s+(?:the\s+)?(?:following\s+)?(?:(?:key)?words?|phrases?|terms?|keywords?|hashtags?)\s*:?\s*(?:{QLIST})",
        lambda m: add_words(cl, "include", targets(cl, m.group(0)), m.group(0)),
    )
    cl.each(
        rf"\b{inc_verb}\s+(?:the\s+|these\s+|both\s+|all\s+(?:of\s+)?(?:the\s+)?)?(?:following\s+)?"
        rf"(?:(?:key)?words?|phrases?|terms?|keywords?|names?|hashtags?|expressions?|letters?)?\s*:?\s*(?:{QLIST})",
        lambda m: add_words(cl, "include", targets(cl, m.group(0)), m.group(0)),
    )
    cl.each(
        rf"\b{inc_verb}\s+(?:the\s+)?(?:(?:key)?words?|keywords?|terms?)\s*:?\s+(?P<list>[a-z][\w'-]*(?:\s*(?:,|and|&)\s*[a-z][\w'-]*){{0,5}})",
        lambda m: (
            add_words(cl, "include", bare_list(m.group("list")), "") if bare_list(m.group("list")) else False
        ),
    )
    cl.each(
        rf"(?:make sure|ensure)\s+(?:to\s+(?:use|include|mention)\s+)?(?:the\s+(?:word|phrase)\s+)?(?:{QLIST})"
        rf"|(?:{QLIST})\s+(?:must|should|has to|needs to)\s+(?:appear|be included|be mentioned|be used)",
        lambda m: add_words(cl, "include", targets(cl, m.group(0)), m.group(0)),
    )


def read_position(cl: ClauseText) -> None:
    subject = (
        r"(?:(?:your|the|this)\s+)?(?:(?:entire|whole)\s+)?(?:answer|response|reply|message|output|text|"
        r"letter|email|essay|story|poem|it|list)?"
    )
    what = r"(?:(?:the|this|these|that)\s+(?:exact\s+)?(?:word|phrase|greeting|sentence|words|question|salutation)\s+)?"
    marks = {
        "a question(?: mark)?": "?",
        "an exclamation(?: mark| point)?": "!",
        "a (?:period|full stop)": ".",
    }

    def start(m: re.Match[str], rule: str) -> None:
        c: dict[str, Any] = {"rule": rule, "text": targets(cl, m.group(0))[-1]}
        per = scope_name(m.group(0))
        if per and per != "word":
            c["per"] = per
        elif rule == "not_starts_with" and re.search(r"\bsentences?\b", m.group(0)):
            c["per"] = "sentence"
        cl.add(c)

    neg = (
        r"(?:never|do not|don't|must not|should not|shouldn't|avoid|no\s+(?:\w+\s+)?(?:may|should|can|must|"
        r"will)?|not)"
    )
    cl.each(
        rf"\b{neg}\s+(?:\w+\s+){{0,2}}?(?:start|begin|open)\w*\s+(?:(?:a|any|each|every|your|the|of the)\s+)?"
        rf"(?:(?:{SCOPE_RX})\s+)?with\s+{what}{Q}",
        lambda m: start(m, "not_starts_with"),
    )

    def start_mark(m: re.Match[str]) -> None:
        c: dict[str, Any] = {"rule": "starts_with", "text": "-"}
        per = scope_name(m.group(0))
        if per and per != "word":
            c["per"] = per
        cl.add(c)

    cl.each(
        rf"\b(?:start|begin)\w*\s+(?:(?:each|every|all)\s+(?:{SCOPE_RX})\s+|{subject}\s*)with\s+(?:a\s+)?(?:dash|hyphen)",
        start_mark,
    )
    cl.each(
        rf"\b(?:start|begin|open|commence|lead)\w*\s+(?:(?:each|every|all)\s+(?:{SCOPE_RX})\s+|{subject}\s*)"
        rf"(?:with|by saying|by writing)\s+{what}{Q}"
        rf"|\b(?:your|the)\s+(?:very\s+)?first (?:word|sentence|line)\s+(?:\w+\s+){{0,2}}?be\s+{what}{Q}",
        lambda m: start(m, "starts_with"),
    )

    def end(m: re.Match[str]) -> None:
        quoted = targets(cl, m.group(0))
        text = quoted[-1] if quoted else next(v for k, v in marks.items() if re.search(k, m.group(0)))
        c: dict[str, Any] = {"rule": "ends_with", "text": text}
        per = scope_name(m.group("head"))
        if per and per != "word":
            c["per"] = per
        cl.add(c)

    mark_rx = "|".join(marks)
    cl.each(
        rf"(?P<head>\b(?:end|ends|finish|close|conclude|wrap up)\w*\s+(?:(?:each|every|"
        rf"all)\s+(?:{SCOPE_RX})\s+|{subject}\s*)"
        rf"(?:with|by saying|by writing|on)\s+){what}(?:{Q}|{mark_rx})"
        rf"|(?P<last>\b(?:your|the)\s+(?:very\s+)?last (?:word|sentence|line)\s+(?:\w+\s+){{0,2}}?be\s+){what}{Q}",
        lambda m: (
            end(m) if m.group("head") else cl.add({"rule": "ends_with", "text": targets(cl, m.group(0))[-1]})
        ),
    )
    cl.each(
        r"\bno other words? (?:should|may|must|can)?\s*follow\w*(?: (?:this|the|that) phrase)?",
        lambda m: True,
    )


def read_case(cl: ClauseText) -> None:
    caps = r"(?:capital letters|capitals|caps|upper[- ]?case(?: letters)?)"

    def capital_words(m: re.Match[str]) -> bool:
        kind = cmp_kind(m)
        b = to_bounds(
            kind, int(m.group("n")), None, kind not in (None, "exact") and is_negated(cl.w[: m.start()])
        )
        if b is None:
            return False
        cl.add({"rule": "capital_words", **b})
        return True

    cl.each(
        rf"(?:(?:{CMP_ALL})\s+)?(?P<n>\d+)\s+words?\s+(?:\w+\s+){{0,4}}?(?:in|with|using|as)\s+(?:all\s+)?{caps}",
        capital_words,
    )
    cl.each(
        rf"(?:all[- ])?{caps}\s+words?\s+(?:\w+\s+){{0,3}}?(?:{CMP_ALL})?\s*(?P<n>\d+)\s+times",
        capital_words,
    )
    # "words with all capital letters should appear at least 3 times"
    cl.each(
        rf"\bwords?\s+(?:with|in|written\s+in)\s+(?:all\s+)?{caps}\s+(?:should|must|need\s+to|have\s+to|are\s+to)?\s*"
        rf"(?:appear|occur|be\s+used)\s+(?:(?:{CMP_ALL})\s+)?(?P<n>\d+)\s+times",
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
        if re.search(rf"{NEG}\s*(?:\w+\s+){{0,2}}$", before) or re.search(
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
        r"\b(?:a\s+)?title\b,?(?:\s+\w+){0,6}?\s+(?:<<[^>]*>>|double angular brackets|double angle brackets)"
        r"(?:\s*,?\s*(?:such as|like|eg|ie|for example)?\s*<<[^>]*>>)?|<<[^>]*>>",
        lambda m: cl.add({"rule": "title"}),
    )

    def ps(m: re.Match[str]) -> None:
        quoted = targets(cl, m.group(0))
        # The marker named (quoted, or the P.S. / P.P.S. mark); a bare "postscript" names none, and any
        # postscript mark then counts (checks.postscript_ok), rather than a guessed "P.S.".
        text = quoted[-1] if quoted else mark_text(m.group(0))
        cl.add({"rule": "postscript", **({"text": text} if text else {})})

    marks = MARK_RX
    cl.each(
        rf"\b(?:a\s+)?(?:postscript|{marks})(?:\s+(?:starting|beginning)\s+with\s+(?:{marks}|{Q}))?|{marks}",
        ps,
    )

    def hl(m: re.Match[str]) -> bool:
        if re.search(r"\d+\s*$", cl.w[: m.start()]) and m.group(0).startswith("highlighted"):
            return False  # "at least 2 highlighted sections": a count, read with the quantities
        n = m.group("n")
        bounds = to_bounds(cmp_kind(m) or "min", int(n), None, False) if n else None
        cl.add({"rule": "highlights", **(bounds or {"min": 1})})
        return True

    cl.each(
        rf"\b(?:highlight|emphasi[sz]e|mark)\w*\s+(?:(?:{CMP_ALL})\s+)?(?P<n>\d+)?\s*(?:\w+\s+)?"
        rf"(?:sections?|parts?|phrases?|words?)(?:\s+(?:\w+\s+){{0,2}}?(?:with|using|in)\s+markdown(?:\s+\w+)?)?"
        rf"(?:\s+as highlighted)?(?:\s+(?:using|with)\s+markdown(?:\s+asterisks|\s+italics)?)?",
        hl,
    )
    cl.each(
        r"\b(?:with|using|in)\s+markdown(?:\s+(?:asterisks|italics|bold|format|formatting))?\b",
        lambda m: True,
    )
    cl.each(r"(?:such as|like|eg|ie|for example)\s*,?\s*(?:\[[^\]]*\]|\*[^*]+\*|<<[^>]*>>)", lambda m: True)
    cl.each(
        r"\b(?:(?:represented|written|enclosed|shown|marked|denoted|given|put)\s+)?(?:by|in|with|using|inside|within)\s+"
        r"square brackets\b|\bin the form\b",
        lambda m: True,
    )

    cl.each(
        r"\b(?:in|inside|within|as)\s+(?:a\s+)?(?:markdown\s+)?(?:code block|fenced block)|\btriple backticks\b",
        lambda m: cl.add({"rule": "code_block"}),
    )

    def sep(m: re.Match[str]) -> None:
        quoted = targets(cl, m.group(0))
        text = quoted[-1] if quoted else (m.group("stars") or "")
        c = next((x for x in cl.found if x["rule"] == "paragraphs"), None)
        if c is None:
            c = {"rule": "paragraphs", "min": 1}
            cl.add(c)
        if m.group("cnt"):  # "separate your three paragraphs with ...": how many too
            c["min"] = c["max"] = int(m.group("cnt"))
        if text:
            c["separator"] = text

    cl.each(
        rf"(?:\b(?:paragraphs?|sections?)\s+(?:are|should be|must be|will be)\s+)?"
        rf"\bseparat\w*\s+(?:(?:the|your|each|all)\s+)?(?:(?P<cnt>\d+)\s+(?=paragraphs))?(?:paragraphs?|sections?|parts?)?\s*"
        rf"(?:from each other\s+)?"
        rf"(?:with|by|using)\s+(?:the\s+)?(?:markdown\s+)?(?:divider|separator|marker|line)?\s*:?\s*"
        rf"(?:{Q}|(?P<stars>\*{{3,}}|\*(?: \*){{2,}}))",
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
        c["marker"] = targets(cl, m.group(0))[-1].split()[0]

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
        rf"|{subject}\s+(?:should|must|has to|needs to)\s+be\s+(?:written\s+)?(?:entirely\s+)?in"
        rf"\s+(?P<lang2>{names}))\b",
        lambda m: (
            lang(m) if m.group("lang") else cl.add({"rule": "language", "lang": LANGS[m.group("lang2")]})
        ),
    )
    cl.each(r"\bno other languages? (?:is |are )?(?:allowed|permitted)\b", lambda m: True)
    for m in re.finditer(rf"\b(?:in|into|using)\s+(?:the\s+)?(?P<lang>{OTHER_LANGS})\b", cl.w):
        cl.unreadable.append(f"language {m.group('lang')}: no detector for it")
        cl.consume(m)


_PUNCT_NOUNS = {
    r"commas?": "commas",
    r"exclamation (?:marks?|points?)": "exclamations",
    r"question marks?": "questions",
    r"punctuation(?: marks?)?": "punctuation",
    r"(?:digits?|numbers?|numerals?)": "numbers",
    r"semicolons?": "semicolons",
    r"colons?": "colons",
}


_LETTER_CLASSES = {"vowels?": "aeiou", "consonants?": "bcdfghjklmnpqrstvwxyz"}


def read_letter_classes(cl: ClauseText) -> None:
    """Vowels and consonants: "no vowels", "without any vowels", "at least 2 vowels", "exactly 3 consonants"."""
    for noun, letters in _LETTER_CLASSES.items():
        cl.each(
            rf"\b(?:no|without(?: any)?|avoid(?:ing)?(?: any)?|zero|(?:do not|don't|never)\s+(?:use|using|include)?"
            rf"\s*(?:any\s+)?)\s*{noun}\b(?:\s+at all)?|\b{noun}[- ]free\b",
            adder(cl, {"rule": "letter", "letter": letters, "max": 0}),
        )

        def counted(m: re.Match[str], letters: str = letters) -> bool:
            kind = cmp_kind(m)
            neg = negation(cl.w[: m.start()]) if kind not in (None, "exact") else None
            b = to_bounds(kind, int(m.group("n")), None, neg is not None)
            if b is None:
                return False
            cl.add({"rule": "letter", "letter": letters, **b})
            return True

        cl.each(rf"(?:(?:{CMP_ALL})\s+)?(?P<n>\d+)\s+{noun}\b", counted)


def read_marks(cl: ClauseText) -> None:
    for noun, rule in _PUNCT_NOUNS.items():
        cl.each(
            rf"\b(?:no|without(?: any| using(?: any)?)?|avoid(?:ing)?(?: the use of| using)?(?: any)?|zero|"
            rf"(?:do not|don't|never|must not|should not|refrain from)\s+(?:use|using|include|including|add|adding|"
            rf"put|putting|the use of)?\s*(?:any\s+|1\s+|even\s+1\s+)?)\s*{noun}\b(?:\s+at all)?|\b{noun}[- ]free\b",
            adder(cl, {"rule": rule, "max": 0}),
        )
    cl.each(
        r"\b(?:include|contain|contains|use|have|has|mention|with)\s+(?:at least\s+)?(?:1|a|some|any)?\s*"
        r"(?:numbers?|digits?|numerals?)\b(?:\s*\(\s*0\s*-\s*9\s*\))?"
        r"(?!\s+(?:per|on\s+each|on\s+a|a)\s+line)",  # "with one number per line" is a layout: the quantities'
        lambda m: cl.add({"rule": "numbers", "min": 1}),
    )


def read_json(cl: ClauseText, whole: str) -> None:
    has_json = re.search(r"\bjson\b", whole) is not None
    if re.search(r"\bjson\b", cl.w):
        if not re.search(rf"{NEG}\s+(?:\w+\s+)?json\b", cl.w):
            cl.add({"rule": "json"})
            cl.each(
                r"\b(?:valid\s+)?json(?:\s+(?:object|format|only|dictionary))?(?:\s+only)?\b", lambda m: True
            )
    if not (has_json or re.search(r"\b(?:object|dictionary)\b", whole)):
        return
    type_rx = (
        rf"(?:\s*\(\s*(?:a|an)?\s*(?P<t1>{TYPE_RX})\s*\)|\s*:\s*(?P<t2>{TYPE_RX})\b|\s+as\s+(?:a|"
        rf"an)?\s*(?P<t3>{TYPE_RX})\b|\s+of type\s+(?P<t4>{TYPE_RX})\b)?"
    )
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
            types[name] = next(v for p, v in TYPES if re.fullmatch(p, t))
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
        r"\b(?:exactly|only|precisely|just)\s+(?:the\s+)?(?:\d+\s+)?(?:keys?|fields?)\b|\bno (?:other|"
        r"extra|additional) (?:keys|fields)\b",
        lambda m: True,
    )
    cl.blank(m.start(), pos)
    cl.each(r"\b(?:an?\s+)?(?:json\s+)?(?:object|dictionary)\b", lambda m: True)


def read_choices(cl: ClauseText) -> None:
    def opts(m: re.Match[str]) -> None:
        cl.add({"rule": "one_of", "options": targets(cl, m.group(0))})

    cl.each(
        rf"\b(?:(?:exactly\s+)?(?:1|one) of|either|from)\s*(?:the following|these)?\s*(?:options|choices|"
        rf"answers|phrases|words|values)?(?:\s+only)?(?:\s+and\s+nothing\s+else)?"
        rf"\s*:?\s*\(?\s*{Q}(?:\s*(?:,|\bor\b|\band\b|/)\s*(?:or\s+)?{Q})+\s*\)?"
        rf"|\b(?:must be|should be|has to be|answer with|reply with|respond with|answer|"
        rf"say)\s+(?:either\s+)?{Q}(?:\s*,\s*{Q})*\s*,?\s+or\s+{Q}(?:\s+and\s+nothing\s+else)?",
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
    r"capital letters|uppercase letters|capitals": "capitals",
    r"lowercase letters|small letters": "lowercase_letters",
    r"letters": "letters",
    r"digits|numerals": "digits",
}


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
    nothing = (
        r"\b(?:and\s+)?(?:nothing else|nothing more|no other (?:text|words|characters)|"
        r"without (?:any )?(?:other text|explanation|commentary)|no explanation)\b"
    )
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
