"""The second reading's positions: words and letters at a place, per-unit
ends and starts, bans, word lists, one sentence, words in capitals, read by token windows apart from
:mod:`rlar.tasks.reading_compose`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from rlar.number_words import ORDINALS
from rlar.synthesis.second.vocab import _NOT, _bounded, _direction, _tokens, _value

_NTH_WORDS = {
    1: "first",
    2: "second",
    3: "third",
    4: "fourth",
    5: "fifth",
    6: "sixth",
    7: "seventh",
    8: "eighth",
    9: "ninth",
    10: "tenth",
}
_PER = {"paragraph": "paragraph", "line": "line", "sentence": "sentence", "bullet": "item", "item": "item"}


@dataclass
class _Reading:
    """One sentence under the position readers: what they found, and the sentence with what they read blanked
    (the tokens and whether it negates are those of the sentence as it came)."""

    sentence: str
    whole: str
    toks: list[str]
    neg: bool
    out: list[dict[str, Any]] = field(default_factory=list)


def _ordinal_places(r: _Reading) -> None:
    """An ordinal's word or letter: ``the third word is 'cat'``, a one-word answer's ``second letter``."""
    for i, tok in enumerate(r.toks[:-1]):
        k = ORDINALS.get(tok)
        if k is None or r.toks[i + 1] not in ("word", "letter") or set(r.toks[max(0, i - 4) : i]) & _NOT:
            continue
        q = next((t for t in r.toks[i + 2 : i + 9] if t[:1] in "\"'" and len(t) > 2), None)
        if r.toks[i + 1] == "letter":
            single = next((t for t in r.toks[i + 2 : i + 6] if len(t) == 1 and t.isalpha()), None)
            letter = q[1:-1] if q and len(q) == 3 else single
            if (
                letter
                and re.search(r"\b(?:a|one|single)\s+word\b", r.whole)
                and not re.search(r"\beach|\bevery", r.whole)
            ):
                r.out.append({"rule": "at", "unit": "letter", "index": k, "text": letter})
                r.sentence = r.sentence.replace(q or f" {letter}", " ", 1)
            continue
        if q is None or not re.fullmatch(r"[a-z][\w'-]*", q[1:-1]):
            continue
        word = q[1:-1]
        if "each" in r.toks[:i] or "every" in r.toks[:i]:
            continue
        r.out.append(
            {"rule": "starts_with", "text": word}
            if k == 1
            else {"rule": "ends_with", "text": word}
            if k == -1
            else {"rule": "at", "unit": "word", "index": k, "text": word}
        )
        r.sentence = r.sentence.replace(q, " ", 1)


def _first_letters(r: _Reading) -> None:
    """A one-word answer's first letters: ``starts with 'un'``, one letter at a time."""
    one_word = re.search(r"\b(?:a|one|single) word\b", r.whole) and not re.search(r"\beach|\bevery", r.whole)
    pre = re.search(
        r"\b(?:start|starts|starting|begin|begins|beginning) with (?:the letters )?'([a-z]{2,6})'", r.sentence
    )
    if one_word and pre and not r.neg:  # one word's beginning: its first letters, one by one
        r.out += [
            {"rule": "at", "unit": "letter", "index": i + 1, "text": ch} for i, ch in enumerate(pre.group(1))
        ]
        r.sentence = r.sentence.replace(pre.group(0), " ", 1)


def _per_unit_ends_and_starts(r: _Reading) -> None:
    """Each unit's last or first word: ``each sentence ends with 'now'``."""
    ends = {"end", "ends", "ending", "finish", "finishes", "finishing", "conclude", "concludes"}
    # the unit "each" names ("a paragraph where each sentence begins ..."), else the first one named
    after_each = [
        _PER[r.toks[i + 1].rstrip("s")]
        for i in range(len(r.toks) - 1)
        if r.toks[i] in ("each", "every", "all") and r.toks[i + 1].rstrip("s") in _PER
    ]
    if set(r.toks) & ends and set(r.toks) & {"each", "every", "all"} and not r.neg:
        scope = (
            after_each[0]
            if after_each
            else next((_PER[t.rstrip("s")] for t in r.toks if t.rstrip("s") in _PER), None)
        )
        q = next((t for t in r.toks if t[:1] in "\"'" and len(t) > 3), None)
        if scope and q and re.fullmatch(r"[a-z][\w'-]*", q[1:-1]):
            r.out.append({"rule": "ends_with", "text": q[1:-1], "per": scope})
            r.sentence = r.sentence.replace(q, " ", 1)
    begins = {"start", "starts", "starting", "begin", "begins", "beginning", "open", "opens"}
    if set(r.toks) & begins and set(r.toks) & {"each", "every", "all"} and not r.neg:
        scope = (
            after_each[0]
            if after_each
            else next((_PER[t.rstrip("s")] for t in r.toks if t.rstrip("s") in _PER), None)
        )
        q = next((t for t in r.toks if t[:1] in "\"'" and len(t) > 2), None)
        if (
            scope
            and q
            and re.fullmatch(r"[a-z][\w'-]*", q[1:-1])
            and not (len(q) == 3 and "letter" in r.toks)
        ):
            r.out.append({"rule": "starts_with", "text": q[1:-1], "per": scope})
            r.sentence = r.sentence.replace(q, " ", 1)


def _bans(r: _Reading) -> None:
    """Banned words: ``no line contains 'x'``, ``none using the word 'x'``, ``no letter 'e'``."""
    if re.search(r"\bno (?:bullet|line|sentence|paragraph|item)s?\b", r.sentence) and set(r.toks) & {
        "contain",
        "contains",
        "include",
        "includes",
        "use",
        "uses",
        "mention",
    }:
        for q in [t for t in r.toks if t[:1] in "\"'" and len(t) > 2]:
            r.out.append({"rule": "exclude", "words": [q[1:-1]]})
            r.sentence = r.sentence.replace(q, " ", 1)
    for m in re.finditer(
        r"\bnone(?: of (?:them|these|those|the \w+))? (?:may |should |can |must )?(?:using|containing|including|"
        r"mentioning|with|uses?|contains?|includes?|mentions?|has|have) (?:the )?(?:words? |phrases? )?"
        r"((?:'[^']+'|\"[^\"]+\")(?:\s*(?:,|or|and)\s*(?:'[^']+'|\"[^\"]+\"))*)",
        r.sentence,
    ):
        r.out.append(
            {"rule": "exclude", "words": [w[1:-1] for w in re.findall(r"'[^']+'|\"[^\"]+\"", m.group(1))]}
        )
        r.sentence = r.sentence.replace(m.group(0), " ", 1)
    for m in re.finditer(
        r"\b(?:no|without\s+(?:using\s+)?(?:the|any))\s+(?:letter\s+)?(?:'([a-z])'|(?<=letter )([a-z]))(?=\W|$)",
        r.sentence,
    ):
        r.out.append({"rule": "letter", "letter": m.group(1) or m.group(2), "max": 0})
    if r.out and any(c["rule"] == "letter" for c in r.out):
        r.sentence = re.sub(
            r"\b(?:no|without\s+(?:using\s+)?(?:the|any))\s+(?:letter\s+)?(?:'[a-z]'|(?<=letter )[a-z])(?=\W|$)",
            " ",
            r.sentence,
        )


def _word_lists(r: _Reading) -> None:
    """A list of words to use: ``use the words: sun, moon and stars``."""
    listed = next(
        (
            m
            for m in re.finditer(
                r"\b(?:words|concepts|terms)\b\s*:?\s*([a-z]+(?:\s*,\s*[a-z]+)*(?:\s*,?\s*(?:and|&)\s+[a-z]+)?)\b",
                r.sentence,
            )
            if re.search(r",|\band\b|&", m.group(1))
        ),
        None,
    )
    if listed and re.search(
        r"\b(?:use|uses|using|include|includes|including|contain|contains|containing|mention|all)\b",
        r.sentence,
    ):
        names = [w for w in re.split(r"\s*,\s*|\s+(?:and|&)\s+|,?\s*and\s+", listed.group(1)) if w]
        if len(names) >= 2 and not set(names) & {"a", "an", "the", "in", "of", "to", "your", "it"}:
            r.out.append({"rule": "include", "words": names})
            r.sentence = r.sentence[: listed.start(1)] + " " + r.sentence[listed.end(1) :]


def _one_sentence(r: _Reading) -> None:
    """One sentence: ``a 12-word sentence``, ``write a sentence``."""
    hyph = re.search(r"\b(\d+)-word\s+sentence\b", r.sentence)
    if hyph:
        r.out += [
            {"rule": "sentences", "min": 1, "max": 1},
            {"rule": "words", "min": int(hyph.group(1)), "max": int(hyph.group(1))},
        ]
        r.sentence = r.sentence.replace(hyph.group(0), " ")
    elif re.search(
        r"(?:^|\band\s+)\s*(?:please\s+)?(?:write|give|compose|generate|produce|create|reply with|answer with|"
        r"use)\b[^,]{0,12}?\ba (?:single |template |complete |simple )?sentence\b(?! or\b| and\b)",
        r.sentence,
    ):
        r.out.append({"rule": "sentences", "min": 1, "max": 1})


def _answer_ends(r: _Reading) -> None:
    """The answer's first or last word: ``end your answer with the word done``."""
    bare_end = re.search(
        r"\b(end|finish|conclude|start|begin)\w*\s+(?:your|the)\s+(?:answer|response|reply)\s+with\s+the\s+word\s+([a-z][\w'-]*)\s*$",
        r.sentence,
    )
    if bare_end and not r.neg:
        rule = "starts_with" if bare_end.group(1) in ("start", "begin") else "ends_with"
        r.out.append({"rule": rule, "text": bare_end.group(2)})
        r.sentence = r.sentence[: bare_end.start()]


def _orders(r: _Reading) -> None:
    """Orders: numbers ascending or descending, a word chain, distinct words."""
    if re.search(r"\b(?:smallest|lowest) to (?:the )?(?:largest|highest)\b", r.sentence):
        r.out.append({"rule": "order", "unit": "number", "rel": "increasing"})
    elif re.search(r"\b(?:largest|highest) to (?:the )?(?:smallest|lowest)\b", r.sentence):
        r.out.append({"rule": "order", "unit": "number", "rel": "decreasing"})
    if re.search(
        r"\b(?:all|written|entirely) in (?:capital letters|capitals|upper\s?case)\b", r.sentence
    ) and not re.search(r"\d+\s+words?\s+(?:\w+\s+){0,2}(?:all|written|entirely) in", r.sentence):
        r.out.append({"rule": "uppercase"})
    if re.search(
        r"^\s*(?:please\s+)?(?:write|give|generate|produce|reply with|answer with)\s+(?:me\s+)?a\s+"
        r"(?:palindrome |palindromic |single )?word\s+"
        r"(?:of|with|that|which|whose)\b",
        r.sentence,
    ):
        r.out.append({"rule": "words", "min": 1, "max": 1})
    ended = bool(
        re.search(
            r"\bletter (?:that|which) (?:ended|ends) the (?:previous|preceding|prior|last) word\b", r.sentence
        )
    )
    if (
        "letter" in r.toks
        and set(r.toks) & {"previous", "preceding", "before"}
        and (set(r.toks) & {"last", "final"} or ended)
    ):
        if set(r.toks) & {"start", "starts", "begin", "begins", "starting", "beginning"}:
            r.out.append({"rule": "order", "unit": "word", "rel": "chain"})
    one_quoted = any(t[:1] in "\"'" for t in r.toks) and not re.search(
        r"\b(?:no|every|each|any) words?\b", r.sentence
    )
    if (
        re.search(
            r"\b(?:repeated|repeating|duplicate)\b|\bmore than once\b|\b(?:different|distinct|unique)\b",
            r.sentence,
        )
        and ("word" in r.toks or "words" in r.toks)
        and not one_quoted
    ):
        if r.neg or re.search(r"\b(?:different|distinct|unique)\b", r.sentence):
            r.out.append({"rule": "order", "unit": "word", "rel": "distinct"})


def _capitals_and_marks(r: _Reading) -> None:
    """Capitals and end marks: ``5 words in capitals``, ``end with an exclamation mark``, ``each item ends with
    a period``."""
    whole_caps = re.search(
        r"^\s*(?:write|give|list|reply with|answer with)\s+(?:me\s+)?(?:exactly\s+)?(\d+)\s+words\s+(?:all"
        r"\s+)?(?:written\s+)?in\s+(?:all\s+)?(?:capital letters|capitals|caps|upper\s?case)\b",
        r.sentence,
    )
    if whole_caps:
        r.out.append({"rule": "uppercase"})
        r.sentence = r.sentence[: whole_caps.end(1)] + " words" + r.sentence[whole_caps.end() :]
    whole_mark = re.search(
        r"\b(?:end|ends|finish|finishes|conclude|concludes|close)\s+(?:(?:your|the)\s+(?:entire\s+|whole\s+)?"
        r"(?:answer|response|reply|text|message)\s+)?with\s+an?\s+(exclamation (?:mark|point)|question mark|"
        r"period|full stop)\b",
        r.sentence,
    )
    if (
        whole_mark and not r.neg and not set(r.toks) & {"each", "every", "all"}
    ):  # "End with an exclamation mark."
        r.out.append(
            {
                "rule": "ends_with",
                "text": {"question mark": "?", "period": ".", "full stop": "."}.get(whole_mark.group(1), "!"),
            }
        )
        r.sentence = r.sentence.replace(whole_mark.group(0), " ", 1)
    ends_mark = re.search(
        r"\b(?:each|every|all)\b[^.]*?\b(?:end|ends|ending|finish\w*)\s+(?:with|in)\s+an?\s+(period|"
        r"full stop|question mark|exclamation (?:mark|point))\b",
        r.sentence,
    )
    if ends_mark and not r.neg:
        scope = next(
            (_PER[t.rstrip("s")] for t in r.toks if t.rstrip("s") in ("bullet", "item", "paragraph")), None
        )
        if scope:
            mark = {"period": ".", "full stop": ".", "question mark": "?"}.get(ends_mark.group(1), "!")
            r.out.append({"rule": "ends_with", "text": mark, "per": scope})


def _capital_words(r: _Reading) -> None:
    """Counts of words in capitals: ``3 fully capitalized words``, ``two words in all caps``."""
    fully = re.search(
        r"\b(\d+|one|two|three|four|five)\s+(?:fully|entirely|completely|wholly)[- ]capitali[sz]ed\s+words?\b",
        r.sentence,
    )
    if fully:
        n = _value(fully.group(1))
        kind, strict = _direction(r.sentence[: fully.start()].split()[-3:], [])
        if n is not None:
            r.out.append(_bounded("capital_words", n, kind, strict))
            r.sentence = r.sentence.replace(fully.group(0), " ")
    caps = re.search(
        r"\b(?:exactly\s+)?(\d+|two|three|four|five)\s+words?\s+(?:are\s+|"
        r"is\s+)?(?:written\s+)?(?:entirely\s+|fully\s+|completely\s+)?(?:in\s+)?(?:all\s+)?"
        r"(?:capital letters|capitals|caps|upper\s?case)\b",
        r.sentence,
    )
    if caps:
        n = _value(caps.group(1))
        before = r.sentence[: caps.start()].split()[-3:]
        kind, strict = _direction(before, [])
        if n is not None:
            r.out.append(_bounded("capital_words", n, kind, strict))
            r.sentence = r.sentence.replace(caps.group(0), " ")
    upper = re.search(
        r"\b(\d+|two|three|four|five|six|seven|eight)\s+(?:upper\s?case|all-caps)\s+words\b",
        r.sentence,
    )
    if upper:
        r.out.append({"rule": "uppercase"})
        r.sentence = r.sentence.replace(upper.group(0), f"{upper.group(1)} words")


# In this order: a step reads the sentence as the steps before it left it.
_STEPS = (
    _ordinal_places,
    _first_letters,
    _per_unit_ends_and_starts,
    _bans,
    _word_lists,
    _one_sentence,
    _answer_ends,
    _orders,
    _capitals_and_marks,
    _capital_words,
)


def _positional(sentence: str, whole: str) -> tuple[list[dict[str, Any]], str]:
    """Positions, per-unit word endings, absent letters, word lists, one sentence, one word per line and words
    in capitals, read by token windows apart from :mod:`rlar.tasks.reading_compose`;
    what is read is blanked so the general windows below do not read it again. Also a one-word answer's
    first letters (``starts with 'un'``), ``none using the word 'x'`` (a ban), ``the letter that ended the
    previous word`` (a chain), ``N fully capitalized words`` (a count of words in capitals). The steps are
    :data:`_STEPS`."""
    sentence = re.sub(r"\b(10|[1-9])(?:st|nd|rd|th)\b", lambda m: _NTH_WORDS[int(m.group(1))], sentence)
    toks = _tokens(sentence)
    neg = bool(set(toks) & _NOT)
    r = _Reading(sentence=sentence, whole=whole, toks=toks, neg=neg)
    for step in _STEPS:
        step(r)
    return r.out, r.sentence
