"""Scope x predicate phrasings: where in the answer a word must stand, what each
paragraph / line / sentence / bullet must end with, which letters no word may hold, and the list words.

:func:`read_composed` runs on a clause before :func:`rlar.tasks.reading_shapes.read_shapes` and blanks what it
used. It reads a *scope* (the whole answer, or each paragraph / sentence / line / bullet, or the i-th, first or
last word or letter) with a *predicate* (ends with / starts with / is a given word or letter, holds no given
letter, uses every listed word) rather than fixed sentences:

- positions: ``the third word is 'blue'``, ``whose second word must be 'cat'``, ``the last word of your answer
  must be 'soon'``, ``in which the last word is 'today'``, ``the first word of your response must be 'Today'``
  (rule ``at`` for the i-th word, ``starts_with`` / ``ends_with`` for the first and last); ``whose second
  letter is 'r'`` when the answer is one word (rule ``at`` over letters);
- per-unit endings by word: ``each paragraph ending with the word 'night'``, ``every paragraph must end with
  the word 'again'``, ``paragraphs, each ending with 'home'`` (``ends_with`` with ``per``; ``end each paragraph
  with`` is read by :mod:`rlar.tasks.phrasing_families`);
- per-unit starts (``3 sentences, each starting with the word 'We'``), words no unit may contain (``no bullet
  may contain the word 'also'``), ``must not contain any commas``, and the ending of a one-word answer
  (``a one-word answer that ends in 'ly'``);
- letters no unit holds: ``no letter e in it``, ``with no letter 'a'``, ``none of the words contain the letter
  a`` (``letter`` at most 0: no word holds it exactly when the answer does not);
- lists of words to use, quoted or not: ``uses the words sun, sand and wave``, ``all of these words: dog,
  frisbee, park``, ``containing the words apple, knife and cut``, ``every one of the words river, bridge and
  boat`` (``include``);
- relations between words: a chain (``each word starts with the last letter of the previous word``) and
  no repeats (``no word repeated``, ``every word is different``, ``N different words``);
- ``N uppercase words``: every word in capitals; ``4 words long``: the count alone; ``finish the response
  with the word Done``: an unquoted last (or first) word;
- a single sentence: ``write a sentence of ...`` / ``give a sentence ...`` / ``a 5-word sentence`` is one
  sentence (``sentences`` exactly 1) unless a scope (``each sentence``) or a count says otherwise;
- paragraph layout words that the paragraph unit already implies (``with an empty line between them``,
  ``separate the paragraphs with a blank line``, ``(blank line between them)``) are used up when a paragraph
  count is read.

Also: ``none (of them) using the word 'very'`` is a ban (not a required word), ``every one
of the words ...`` a list to use, ``no word used more than once`` (``once`` written ``1 times``) no repeats,
``each starting with the letter that ended the previous word`` a chain (and ``a chain of`` is used up when the
instruction states one), ``between 30 and 50 characters long`` the count alone, ``no more than one fully
capitalized word`` a count of words in capitals, and a one-word answer's beginning (``one word ... that starts
with 'un'``) its letters at their places (``at``), since a start rule would ask for the word ``un``.

Negated forms (``the last word must not be``) are left unread, so the clause stays partial: nothing is read
the other way round. English only; it never invents a number that is not written.
"""

from __future__ import annotations

import re

from rlar.number_words import ORDINALS
from rlar.tasks.phrasings import CMP_ALL, STOP_WORDS, ClauseText, Q, cmp_kind, to_bounds

__all__ = ["read_composed"]

_ORD_RX = "|".join(sorted(ORDINALS, key=len, reverse=True))
_SCOPES = {
    "paragraph": "paragraph",
    "sentence": "sentence",
    "line": "line",
    "bullet": "item",
    "bullet point": "item",
    "item": "item",
    "point": "item",
}
_SCOPE_RX = r"bullet\s+points?|bullets?|paragraphs?|sentences?|lines?|items?|points?"
_BE = r"(?:must|should|has\s+to|needs\s+to|will|shall|is\s+to)?\s*(?:be|is)"
_OF_ANSWER = (
    r"(?:of\s+(?:your|the|this)\s+(?:entire\s+|whole\s+)?(?:answer|response|reply|text|output|sentence|"
    r"message)\s+)?"
)


def _scope(word: str) -> str:
    w = re.sub(r"\s+", " ", word.strip())
    w = w[:-1] if w.endswith("s") else w
    return _SCOPES.get(w, "")


def _negated(cl: ClauseText, m: re.Match[str]) -> bool:
    return bool(re.search(r"\b(?:not|never|no)\b|n't\b", m.group(0))) or bool(
        re.search(r"\b(?:not|never)\s*$|n't\s*$", cl.w[: m.start()])
    )


def read_composed(cl: ClauseText, sentence: str, whole: str) -> None:
    """Read the phrasings of the module docstring in one clause (``sentence`` / ``whole``: its sentence and the
    whole instruction, lowercased with digits)."""
    _read_word_positions(cl, whole)
    _read_unit_endings(cl, sentence)
    _read_unit_starts(cl, sentence)
    _read_unit_bans(cl)
    _read_unit_marks(cl, sentence)
    _read_unit_questions(cl)
    _read_caps_answer(cl)
    _read_word_affixes(cl, whole)
    _read_no_letter(cl)
    _read_word_lists(cl)
    _read_caps_words(cl)  # before the one sentence: "a sentence with no more than one fully capitalized word"
    _read_one_sentence(cl)
    _read_one_word(cl)
    _read_lengths(cl)
    _read_word_relations(cl, sentence, whole)
    _read_bare_end_word(cl)
    _read_paragraph_layout(cl, whole)


def _quoted_word(cl: ClauseText, token: str) -> str:
    text = cl.q(token).strip()
    return text if re.fullmatch(r"[A-Za-z][\w'-]*", text) else ""


def _read_word_positions(cl: ClauseText, whole: str) -> None:
    def word_at(m: re.Match[str]) -> bool:
        if _negated(cl, m):
            return False
        word = _quoted_word(cl, m.group("q"))
        k = ORDINALS[m.group("ord")]
        if not word:
            return False
        if k == 1:
            cl.add({"rule": "starts_with", "text": word})
        elif k == -1:
            cl.add({"rule": "ends_with", "text": word})
        else:
            cl.add({"rule": "at", "unit": "word", "index": k, "text": word})
        return True

    cl.each(
        rf"\b(?:in\s+which\s+|where\s+|whose\s+|and\s+)?(?:the\s+|its\s+|your\s+)?(?:very\s+)?(?P<ord>{_ORD_RX})\s+word\s+"
        rf"{_OF_ANSWER}(?:(?:must|should|has\s+to|needs\s+to|will|shall)\s+(?:not\s+)?)?(?:be|is)\s+(?:the\s+word\s+)?(?P<q>{Q})",
        word_at,
    )

    def letter_at(m: re.Match[str]) -> bool:
        text = cl.q(m.group("q")) if m.group("q") else (m.group("l") or "")
        one_word = re.search(r"\b(?:a|one|1|a\s+single|single)\s+word\b", whole) and not re.search(
            r"\b(?:each|every|all)\b", whole
        )
        if len(text) != 1 or not text.isalpha() or not one_word or _negated(cl, m):
            return False
        cl.add({"rule": "at", "unit": "letter", "index": ORDINALS[m.group("ord")], "text": text.lower()})
        return True

    cl.each(
        rf"\b(?:in\s+which\s+|where\s+|whose\s+|and\s+)?(?:the\s+|its\s+)?(?P<ord>{_ORD_RX})\s+letter\s+"
        rf"(?:(?:must|should|has\s+to|will)\s+)?(?:be|is)\s+(?:the\s+letter\s+)?(?:(?P<q>{Q})|(?P<l>[a-z])\b)",
        letter_at,
    )


def _read_unit_endings(cl: ClauseText, sentence: str) -> None:
    def ending(m: re.Match[str]) -> bool:
        word = _quoted_word(cl, m.group("q"))
        scope_word = m.group("scope") or ""
        if not scope_word:  # "3 paragraphs, each ending with ...": the unit named before
            before = re.findall(rf"\b(?:{_SCOPE_RX})\b", sentence[: sentence.find("each") + 1 or None])
            scope_word = before[-1] if before else ""
        per = _scope(scope_word)
        if not word or not per or _negated(cl, m):
            return False
        cl.add({"rule": "ends_with", "text": word, "per": per})
        return True

    cl.each(
        rf"\b(?:with\s+)?(?:each|every|all)\s+(?:of\s+the\s+|one\s+of\s+the\s+)?(?:(?P<scope>{_SCOPE_RX})\s+)?"
        rf"(?:must\s+|should\s+|has\s+to\s+|needs\s+to\s+)?(?:end|ends|ending|finish|finishes|finishing|conclude|concludes|concluding)\s+"
        rf"(?:with|in|on)\s+(?:the\s+(?:word|phrase)\s+)?(?P<q>{Q})",
        ending,
    )


def _read_unit_starts(cl: ClauseText, sentence: str) -> None:
    """``3 sentences, each starting with the word 'We'``: a start per unit (the unit named, or the one before)."""

    def starting(m: re.Match[str]) -> bool:
        word = _quoted_word(cl, m.group("q"))
        scope_word = m.group("scope") or ""
        if not scope_word:
            before = re.findall(
                rf"\b(?:{_SCOPE_RX})\b", sentence[: max(0, sentence.find(m.group(0).strip()[:12]))]
            )
            scope_word = before[-1] if before else ""
        per = _scope(scope_word)
        if not word or (len(word) < 2 and "word" not in m.group(0)) or not per or _negated(cl, m):
            return False
        cl.add({"rule": "starts_with", "text": word, "per": per})
        return True

    cl.each(
        rf"\b(?:with\s+)?(?:each|every|all)\s+(?:of\s+the\s+|of\s+them\s+)?(?:(?P<scope>{_SCOPE_RX})\s+)?"
        rf"(?:must\s+|should\s+|has\s+to\s+|needs\s+to\s+)?(?:start|starts|starting|begin|begins|beginning|open|opens|opening)\s+"
        rf"with\s+(?:the\s+(?:word|phrase)\s+)?(?P<q>{Q})",
        starting,
    )


def _read_unit_questions(cl: ClauseText) -> None:
    """``every sentence must be a question``: each unit ends with a question mark (the form the shapes reader
    gives ``each ending with a question mark``)."""

    def question(m: re.Match[str]) -> bool:
        unit = {"sentence": "sentence", "line": "line"}.get(_scope(m.group("scope")), "")
        if not unit or _negated(cl, m):
            return False
        cl.add({"rule": "each", "unit": unit, "test": "ends_with", "arg": "?"})
        return True

    cl.each(
        r"\b(?:each|every|all)\s+(?:of\s+the\s+|of\s+your\s+)?(?P<scope>sentences?|lines?)\s+"
        r"(?:must|should|has\s+to|have\s+to|needs\s+to|need\s+to|will)?\s*(?:be|is|are)\s+(?:an?\s+)?questions?\b",
        question,
    )


def _read_unit_marks(cl: ClauseText, sentence: str) -> None:
    """``3 bullet points, each ending with a period``: a final mark per unit (the unit named before)."""
    marks = {
        "period": ".",
        "full stop": ".",
        "question mark": "?",
        "exclamation mark": "!",
        "exclamation point": "!",
    }

    def mark(m: re.Match[str]) -> bool:
        scope_word = m.group("scope") or ""
        if not scope_word:
            before = re.findall(
                rf"\b(?:{_SCOPE_RX})\b", sentence[: max(0, sentence.find(m.group(0).strip()[:10]))]
            )
            scope_word = before[-1] if before else ""
        per = _scope(scope_word)
        if per not in ("item", "paragraph") or _negated(cl, m):  # lines and sentences: the shapes reader's
            return False
        cl.add({"rule": "ends_with", "text": marks[m.group("mark")], "per": per})
        return True

    cl.each(
        rf"\b(?:with\s+)?(?:each|every|all)\s+(?:of\s+them\s+)?(?:(?P<scope>{_SCOPE_RX})\s+)?(?:must\s+|should\s+)?"
        rf"(?:end|ends|ending|finish|finishes|finishing)\s+(?:with|in)\s+an?\s+(?P<mark>period|full stop|"
        rf"question mark|exclamation mark|exclamation point)\b",
        mark,
    )


def _read_caps_answer(cl: ClauseText) -> None:
    """``write 4 words in all capital letters``: the answer is those words, all in capitals (``include 3 words in
    capitals`` is a count of such words, read with the case family)."""

    def caps(m: re.Match[str]) -> None:
        n = int(m.group("n"))
        cl.add({"rule": "words", "min": n, "max": n})
        cl.add({"rule": "uppercase"})

    cl.each(
        r"^\s*(?:please\s+)?(?:write|give|list|reply\s+with|answer\s+with|respond\s+with)\s+(?:me\s+)?(?:exactly\s+)?(?P<n>\d+)\s+words\s+"
        r"(?:all\s+)?(?:written\s+)?(?:in\s+)?(?:all\s+)?(?:capital\s+letters|capitals|caps|upper\s?case)\b",
        caps,
    )


def _read_unit_bans(cl: ClauseText) -> None:
    """``no bullet may contain the word 'also'``: no unit holds it exactly when the answer does not."""
    cl.each(
        rf"\bno\s+(?:{_SCOPE_RX})\s+(?:may|should|can|must|will|is\s+to)?\s*(?:contains?|includes?|uses?|mentions?)\s+"
        rf"(?:the\s+(?:words?|phrases?)\s+)?(?P<q>{Q}(?:\s*(?:,|or|and)\s*{Q})*)",
        lambda m: cl.add({"rule": "exclude", "words": [cl.q(t) for t in re.findall(Q, m.group("q"))]}),
    )
    # "each under 8 words, none using the word 'very'": the pronoun is the units named before; none of them
    # holds the word exactly when the answer does not
    cl.each(
        rf"\bnone\s+(?:of\s+(?:them|these|those|the\s+(?:{_SCOPE_RX}|words))\s+)?(?:may\s+|should\s+|can\s+|must\s+)?"
        rf"(?:using|containing|including|mentioning|with|uses?|contains?|includes?|mentions?|has|have)\s+"
        rf"(?:the\s+(?:words?|phrases?)\s+)?(?P<q>{Q}(?:\s*(?:,|or|and)\s*{Q})*)",
        lambda m: cl.add({"rule": "exclude", "words": [cl.q(t) for t in re.findall(Q, m.group("q"))]}),
    )
    cl.each(
        r"\b(?:must|should|do|does|may|can)\s+not\s+(?:contain|include|use|have)\s+(?:any\s+)?commas\b",
        lambda m: cl.add({"rule": "commas", "max": 0}),
    )


def _read_word_affixes(cl: ClauseText, whole: str) -> None:
    """``a one-word answer that ends in 'ly'``: with one word asked, its ending is the answer's."""
    one = re.search(
        r"\b(?:a|one|1)[- ]word\s+(?:answer|reply|response)\b|\b(?:a|one|1|a\s+single)\s+word\b", whole
    )
    if not one or re.search(r"\b(?:each|every|all)\b", whole):
        return

    def ends(m: re.Match[str]) -> bool:
        text = cl.q(m.group("q"))
        if not re.fullmatch(r"[a-z]{2,}", text.lower()) or _negated(cl, m):
            return False
        cl.add({"rule": "ends_with", "text": text.lower()})
        return True

    cl.each(rf"\b(?:that\s+|which\s+)?(?:ends?|ending|finishes|finishing)\s+(?:in|with)\s+(?P<q>{Q})", ends)

    def starts(m: re.Match[str]) -> bool:
        """``one word ... that starts with 'un'``: a prefix, read as its letters at their places (a start word
        rule would ask for the word 'un')."""
        text = cl.q(m.group("q")).lower()
        if not re.fullmatch(r"[a-z]{2,6}", text) or _negated(cl, m):
            return False
        for i, ch in enumerate(text, 1):
            cl.add({"rule": "at", "unit": "letter", "index": i, "text": ch})
        return True

    cl.each(
        rf"\b(?:that\s+|which\s+|and\s+)?(?:starts?|starting|begins?|beginning)\s+with\s+(?:the\s+letters\s+)?(?P<q>{Q})",
        starts,
    )
    cl.each(
        r"\b(?:give|write)\s+(?:me\s+)?(?:a|one|1)[- ]word\s+(?=(?:answer|reply|response)\b)", lambda m: True
    )
    if any(c["rule"] in ("ends_with", "at") for c in cl.found):
        cl.each(r"\b(?:answer|reply|response)\b", lambda m: True)


def _read_no_letter(cl: ClauseText) -> None:
    def none(m: re.Match[str]) -> bool:
        text = cl.q(m.group("q")) if m.group("q") else (m.group("l") or "")
        if len(text) != 1 or not text.isalpha():
            return False
        cl.add({"rule": "letter", "letter": text.lower(), "max": 0})
        return True

    letter = rf"(?:(?:the\s+)?letter\s+)?(?:(?P<q>{Q})|(?<=letter\s)(?P<l>[a-z])\b)"
    cl.each(
        rf"\b(?:with\s+|containing\s+|having\s+|that\s+has\s+|and\s+)?no\s+{letter}(?:\s+(?:in\s+(?:it|them|the\s+(?:answer|text|sentence))|at\s+all|anywhere))?",
        none,
    )
    cl.each(
        rf"\b(?:none\s+of\s+(?:the\s+|its\s+)?words|no\s+word)\s+(?:may\s+|should\s+|can\s+|must\s+)?(?:contains?|includes?|has|have|uses?)\s+{letter}",
        none,
    )


def _read_word_lists(cl: ClauseText) -> None:
    def listed(m: re.Match[str]) -> bool:
        raw = m.group("list")
        items = [w for w in re.split(r"\s*(?:,|\band\b|&)\s*", raw.strip(" .:")) if w]
        if len(items) < 2 or not all(re.fullmatch(r"[a-z][\w'-]*", w) for w in items):
            return False
        if any(w in STOP_WORDS for w in items):
            return False
        cl.add({"rule": "include", "words": items})
        return True

    verb = (
        r"(?:uses?|using|includes?|including|contains?|containing|mentions?|mentioning|features?|featuring|"
        r"incorporates?|incorporating)"
    )
    det = r"(?:(?:all|each|every\s+(?:one|1)|both)\s+(?:of\s+)?)?(?:the|these|those)?\s*(?:following\s+|given\s+)?"
    cl.each(
        rf"\b(?:{verb}\s+)?{det}(?:words|concepts|terms)\s*:?\s+(?P<list>[a-z][\w'-]*(?:\s*,\s*[a-z][\w'-]*)*\s*(?:,\s*)?(?:and|&)\s+[a-z][\w'-]*|[a-z][\w'-]*(?:\s*,\s*[a-z][\w'-]*){{2,}})\b",
        listed,
    )


def _read_one_sentence(cl: ClauseText) -> None:
    sized = (
        r"\s+(?:of|with|containing|having)\s+(?:exactly\s+|at\s+least\s+|at\s+most\s+|no\s+more\s+than\s+|"
        r"between\s+)?\d"
    )
    m = re.search(
        r"^\s*(?:please\s+)?(?:write|give|compose|produce|create|generate|reply\s+with|answer\s+with|respond\s+with|use)\s+(?:me\s+)?"
        r"(?:(?:them|it)\s+in\s+)?(?:a|one|a\s+single|only\s+one)\s+(?:(?:template|complete|full|plain|simple|single)\s+)?(?:(?P<n>\d+)-word\s+)?sentence\b(?!\s+(?:for|per|about\s+each|or|and)\b)(?!s)",
        cl.w,
    )
    if m is None:
        return
    cl.add({"rule": "sentences", "min": 1, "max": 1})
    if m.group("n"):
        n = int(m.group("n"))
        cl.add({"rule": "words", "min": n, "max": n})
    # "a sentence of exactly 7 words": the quantity reader reads the rest (words per sentence)
    end = m.end() - len("sentence") if re.match(sized, cl.w[m.end() :]) else m.end()
    cl.blank(m.start(), end)


_CHAIN = re.compile(
    r"\b(?:begins|starts|begin|start|beginning|starting)\s+with\s+the\s+(?:(?:last|final|ending)\s+letter\s+of\s+the\s+"
    r"(?:previous|preceding|prior|word\s+before|one\s+before)|letter\s+(?:that|which)\s+(?:ended|ends)\s+the\s+(?:previous|preceding))"
)


def _read_word_relations(cl: ClauseText, sentence: str, whole: str) -> None:
    """Relations between the words: a chain (``each word starts with the last letter of the previous word``)
    and no repeats (``no word repeated``, ``with no word used more than once``, ``every word is different``,
    ``N different words``)."""

    def add(rel: str) -> bool:
        if not re.search(r"\bwords?\b", sentence):
            return False
        cl.add({"rule": "order", "unit": "word", "rel": rel})
        return True

    cl.each(
        r"\b(?:where\s+|in\s+which\s+|so\s+that\s+)?(?:each|every)\s+(?:word\s+|(?:one|1)\s+)?(?:begins|starts|begin|start|beginning|starting)\s+"
        r"with\s+the\s+(?:last|final|ending)\s+letter\s+of\s+the\s+(?:previous|preceding|prior)(?:\s+(?:word|one|1))?\b"
        r"|\b(?:where\s+|in\s+which\s+)?(?:each|every)\s+(?:word\s+|(?:one|1)\s+)?(?:begins|starts|beginning|starting)\s+with\s+the\s+(?:last|final)\s+letter\s+of\s+the\s+(?:word|one|1)\s+before(?:\s+it)?\b"
        r"|\b(?:where\s+|in\s+which\s+)?(?:each|every)\s+(?:word\s+|(?:one|1)\s+)?(?:begins|starts|beginning|starting)\s+with\s+the\s+letter\s+"
        r"(?:that|which)\s+(?:ended|ends|finished|closed)\s+the\s+(?:previous|preceding|prior|last)\s+(?:word|one|1)\b",
        lambda m: add("chain"),
    )
    if any(c.get("rel") == "chain" for c in cl.found) or _CHAIN.search(whole):
        cl.each(r"\b(?:a\s+)?(?:word\s+)?chain(?:\s+of)?\b", lambda m: True)
    cl.each(
        r"\b(?:with\s+|and\s+|having\s+)?(?:no|without)\s+(?:any\s+)?(?:repeated|repeating|duplicate)\s+words?\b"
        r"|\b(?:with\s+|and\s+)?(?:no|without\s+any|without\s+a)\s+word\s+(?:being\s+)?(?:used|repeated|appearing|occurring)\s+(?:more\s+than\s+(?:once|1\s+times?)|twice|2\s+times)\b"
        r"|\b(?:with\s+|and\s+)?no\s+word\s+(?:is\s+)?repeated\b|\bwithout\s+repeating\s+(?:any\s+)?words?\b"
        r"|\b(?:in\s+which\s+|where\s+)?(?:every|each)\s+word\s+(?:is|must\s+be)\s+(?:different|unique|distinct)\b"
        r"|\ball\s+(?:the\s+|of\s+the\s+)?words\s+(?:are|must\s+be)\s+(?:different|unique|distinct)\b"
        r"|(?<=\d\s)(?:different|distinct|unique)\s+(?=words\b)",
        lambda m: False if _counted_distinct(cl, m) else add("distinct"),
    )


def _counted_distinct(cl: ClauseText, m: re.Match[str]) -> bool:
    """``at least 30 different words`` / ``uses 12 unique words`` / ``12 or more distinct words``: a count of
    different words (read with the quantities, ``distinct_words``), not N words none repeated (``list 5 different
    words``)."""
    if not m.group(0).startswith(("different", "distinct", "unique")):
        return False
    before = cl.w[: m.start()]
    after = cl.w[m.end() : m.end() + 20]
    return bool(
        re.search(
            r"\b(?:at least|no fewer than|no less than|not fewer than|more than|over|a minimum of|minimum of|"
            r"up to|at most|no more than|not more than|fewer than|less than|under|a maximum of)\s+\d+\s+$",
            before,
        )
        or re.search(
            r"\b(?:uses?|using|contains?|containing|includes?|including|with|has|have|having)\s+"
            r"(?:exactly\s+|only\s+)?\d+\s+$",
            before,
        )
        or re.search(r"\d+\s*\+\s*$|\d+\s+or\s+(?:more|fewer|less)\s+$", before)
        or re.match(r"words?\s+or\s+(?:more|fewer|less)\b", after)
    )


def _read_lengths(cl: ClauseText) -> None:
    """``4 words long`` / ``at least 6 words long`` / ``between 30 and 50 characters long``: the count is read
    with the quantities, ``long`` says nothing more (``N letters long`` is the shapes reader's, per word)."""
    cl.each(
        r"(?:(?<=\d words)|(?<=\d characters)|(?<=\d chars))\s+(?:long|in\s+length)\b",
        lambda m: True,
    )


def _read_bare_end_word(cl: ClauseText) -> None:
    """``finish the response with the word Done``: an unquoted last (first) word of the answer."""

    def put(m: re.Match[str]) -> bool:
        word = m.group("w")
        if word in ("it", "this", "that", "a", "an", "the", "one") or _negated(cl, m):
            return False
        start = m.group("verb").startswith(("start", "begin", "open"))
        cl.add({"rule": "starts_with" if start else "ends_with", "text": word})
        return True

    cl.each(
        r"\b(?P<verb>end|finish|conclude|close|start|begin|open)\w*\s+(?:your|the)\s+(?:entire\s+|whole\s+)?(?:answer|response|reply|text|message)\s+"
        r"with\s+the\s+word\s+(?P<w>[a-z][\w'-]*)\b(?=\s*(?:[.,;]|$))",
        put,
    )


def _read_one_word(cl: ClauseText) -> None:
    """``give a word of 8 letters``: the answer is one word."""

    def one(m: re.Match[str]) -> None:
        cl.add({"rule": "words", "min": 1, "max": 1})
        if m.group("pal"):  # "a palindrome word of 7 letters": the answer reads the same backwards
            cl.add({"rule": "each", "unit": "answer", "test": "palindrome"})

    cl.each(
        r"^\s*(?:please\s+)?(?:write|give|generate|produce|reply\s+with|answer\s+with|respond\s+with)\s+(?:me\s+)?a\s+"
        r"(?:(?P<pal>palindrome|palindromic)\s+|single\s+)?word(?=\s+(?:of|with|that|which|whose)\b)",
        one,
    )


def _read_caps_words(cl: ClauseText) -> None:
    """``4 uppercase words``: every word in capitals (the count is read with the quantities); ``no more than one
    fully capitalized word``: a count of words in capitals (not a capital initial)."""

    def counted(m: re.Match[str]) -> bool:
        b = to_bounds(cmp_kind(m), int(m.group("n")), None, False)
        if b is None:
            return False
        cl.add({"rule": "capital_words", **b})
        return True

    cl.each(
        rf"(?:(?:{CMP_ALL})\s+)?(?P<n>\d+)\s+(?:fully|entirely|completely|wholly)[- ]capitali[sz]ed\s+words?\b",
        counted,
    )
    cl.each(
        r"(?<=\d\s)(?:upper\s?case|upper-case|all[- ]caps|all[- ]capital)\s+(?=words\b)",
        lambda m: cl.add({"rule": "uppercase"}),
    )


def _read_paragraph_layout(cl: ClauseText, whole: str) -> None:
    if not re.search(r"\b\d+\s+(?:of\s+(?:your|the)\s+)?paragraphs\b", whole):
        return
    cl.each(
        r",?\s*\(?(?:with\s+)?(?:an?\s+|one\s+)?(?:empty|blank)\s+lines?\s+between\s+(?:them|the\s+paragraphs|each\s+(?:of\s+them|paragraph)|paragraphs)\)?"
        r"|\bseparate\s+(?:the\s+|your\s+|each\s+of\s+the\s+)?(?:paragraphs|them)\s+(?:with|by)\s+(?:an?\s+|one\s+)?(?:empty|blank)\s+lines?\b",
        lambda m: True,
    )
