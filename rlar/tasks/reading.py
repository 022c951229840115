"""Reading an instruction: its clauses, the checkable constraints each states, and what was not understood.

``read_instruction(text)`` splits the text into sentences (``.``, ``!``, ``?``, ``;``, line breaks) and clauses
(at ``and`` / ``but`` / commas that start a new requirement), then reads each clause with pattern families that
cover the phrasings of output constraints rather than fixed examples:

- quantities: a comparator before or after the number (``at most`` / ``no more than`` / ``up to`` / ``under`` /
  ``fewer than`` / ``or fewer`` / ``or less`` / ``max`` / ``at least`` / ``or more`` / ``N+`` / ``more than``
  / ``over`` / ``exactly`` / ``between N and M`` / ``N to M`` / ``N or M`` / ``about N`` = ±20%), number words
  (``twenty-five``, ``a dozen``, ``a single``, ``once`` / ``twice``), and the unit (words, sentences,
  paragraphs, lines, bullets, numbered items, items, characters, letters, capital letters, syllables, numbers,
  commas, exclamation / question marks, punctuation, highlighted sections, placeholders, sections);
- a list form without a count (``use bullet points``, ``as a numbered list``, ``in bullet form``) is two or
  more, none when negated (``do not use bullet points``), and a count of what it holds when one precedes it
  (``three tips as bullets``); a bare ``list`` (``write a packing list``) is content, not a form;
- negations turn the comparator around: ``no bullet longer than ten words`` is at most 10 words per bullet,
  ``must not exceed 40 words`` at most 40, ``do not write fewer than 50 words`` at least 50;
- scopes: ``each`` / ``every`` / ``per`` / ``any`` / ``no`` / ``none of them`` + sentence, bullet, item, line,
  paragraph or word, ``sentences of at most 12 words``, ``under ten words each``; a pronoun scope refers to
  the last list unit mentioned (``exactly 4 bullets; none of them may exceed 6 words``);
- words and letters: include / use / mention (quoted, or after ``the word(s)``), avoid / never / without /
  do not use, ``at least twice`` / ``no more than 3 times`` (``occurs``), letter frequencies;
- position: start / begin / open with, first / last word, end / finish / conclude with (a phrase, a question
  mark, an exclamation mark), ``never start a sentence with``, per scope;
- case (lowercase, capitals, title case, ``N words in all caps``), punctuation and digits (``no commas``,
  ``include a number``), JSON (``keys 'name' (a string) and 'age' (an integer)``, ``exactly the keys``),
  quotes, ``<<title>>``, P.S., highlights, placeholders, sections, code blocks, paragraph separators,
  ``one of 'yes', 'no'``, ``a number only`` / ``nothing else``, and the language of the answer.

Every clause gets a status: ``checked`` (constraints read, nothing left over), ``partial`` (constraints read,
but requirement words are left over), ``unchecked`` (a requirement no pattern read: a form such as ``haiku``,
a tone, a vague length such as ``short``, a language without a detector, or the task's content, which needs a
judge), or ``context`` (no requirement: greetings, background). What is left over is listed per clause, so a
caller can say which clauses were not understood. ``Reading.full`` is true when every requirement clause is
checked. The reader never invents a number that is not written, and it reads English only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from rlar.constraints.reading import Q0, Q1, Q
from rlar.constraints.vocabulary import canonical
from rlar.tasks.phrasing_families import read_clause_constraints
from rlar.tasks.phrasings import (
    CUES,
    LANGS,
    MARK_RX,
    MARKS,
    OTHER_LANGS,
    PPS,
    PPS0,
    PS,
    PS0,
    QUOTE_RX,
    STOP_WORDS,
    ClauseText,
    numbers,
)
from rlar.tasks.reading_compose import read_composed
from rlar.tasks.reading_forms import read_forms
from rlar.tasks.reading_kinds import read_kinds
from rlar.tasks.reading_layouts import read_layouts
from rlar.tasks.reading_lists import read_lists
from rlar.tasks.reading_marks import read_marks
from rlar.tasks.reading_relations import read_relations
from rlar.tasks.reading_shapes import read_shapes
from rlar.tasks.reading_units import read_units

__all__ = ["Clause", "Reading", "read_instruction"]

_TASK_VERBS = re.compile(
    r"\b(?:write|explain|describe|summari[sz]e|list|give|tell|name|translate|answer|reply|respond|compose|create|"
    r"generate|draft|rewrite|classify|suggest|provide|argue|compare|discuss|plan|design|review|critique|recommend|"
    r"outline|analy[sz]e|evaluate|solve|calculate|compute|find|identify|define|convert|paraphrase|propose|"
    r"imagine|pretend|act|help|share|come up with|produce|make|present|report|state|list out)\b"
)


_EXAMPLES = re.compile(
    r"\((?:[^()]*,){2,}[^()]*\)|\((?:eg|ie|such as|for example|for instance|like)\b[^()]*\)", re.I
)
# a parenthesised list that follows "options:" / "one of:" is the options, not examples
_OPTIONS_BEFORE = re.compile(
    r"(?:options?|choices?|answers?|one\s+of(?:\s+the\s+following)?(?:\s+\w+)?)\s*:?\s*$", re.I
)
# A clause that opens with one of these verbs gives an order ("Mark the beginning of each section with ...,
# where X is ..."), so requirement words left unread in it are unread, never a description ("is") or context.
_ORDER_VERBS = re.compile(
    r"^\W*(?:(?:please|also|and|then)\s+)*(?:mark|label|number|head|title|start|begin|end|finish|close|open|"
    r"prefix|precede|follow|separate|divide|split|organi[sz]e|format|put|place|wrap|enclose|surround|add|append|"
    r"insert|include|use|keep|make|ensure|highlight|bold|indent|capitali[sz]e|repeat|sign)\b"
)
_DESCRIBES = re.compile(r"\b(?:is|are|was|were|states|describes|shows|gives|comes|means|holds)\b")
_MODAL = re.compile(
    r"\b(?:must|should|shall|need|needs|have to|has to|may|can|cannot|can't|do not|don't|never|avoid|"
    r"please|make sure|ensure)\b"
)


@dataclass(slots=True)
class Clause:
    """One clause of an instruction and how it was read."""

    text: str
    status: str  # checked | partial | unchecked | context
    constraints: list[dict[str, Any]] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "status": self.status,
            "constraints": list(self.constraints),
            "unread": list(self.unread),
            "note": self.note,
        }


@dataclass(slots=True)
class Reading:
    """The reading of one instruction: its clauses and the constraints they state."""

    text: str
    clauses: list[Clause] = field(default_factory=list)

    @property
    def constraints(self) -> list[dict[str, Any]]:
        return canonical([c for cl in self.clauses for c in cl.constraints])

    @property
    def requirements(self) -> list[Clause]:
        return [c for c in self.clauses if c.status != "context"]

    @property
    def unchecked(self) -> list[Clause]:
        """Clauses with a requirement no constraint covers (``partial`` or ``unchecked``)."""
        return [c for c in self.clauses if c.status in ("partial", "unchecked")]

    @property
    def coverage(self) -> float:
        """Share of requirement clauses fully checked (1.0 when there is none)."""
        req = self.requirements
        return sum(1 for c in req if c.status == "checked") / len(req) if req else 1.0

    @property
    def full(self) -> bool:
        """Every requirement clause is checked and there is at least one constraint."""
        return bool(self.constraints) and not self.unchecked

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "full": self.full,
            "coverage": round(self.coverage, 4),
            "constraints": self.constraints,
            "clauses": [c.to_dict() for c in self.clauses],
            "unchecked": [c.text for c in self.unchecked],
        }


# -- clause splitting -----------------------------------------------------------------------------------------
_ABBREV = [
    (r"\bi\.\s?e\.", "ie"),
    (r"\be\.\s?g\.", "eg"),
    (r"\betc\.", "etc"),
    (r"\bvs\.", "vs"),
    (r"\bp\.\s?p\.\s?s\.", PPS),
    (r"\bp\.\s?p\.\s?s\b", PPS0),
    (r"\bp\.\s?s\.", PS),
    (r"\bp\.\s?s\b", PS0),
]
_START_CUE = (
    r"(?:do not|don't|never|use|include|end|start|begin|open|make|keep|write|wrap|put|avoid|mention|each|every|"
    r"no|all|separate|highlight|add|limit|finish|conclude|close|without|respond|reply|answer|give|provide|stay|"
    r"ensure|format|capitali[sz]e|mark|enclose|refrain|the (?:letter|word|phrase|response|answer|reply|output)|"
    r"your|it|then|also|and|none|only|in)\b"
)
_CLAUSE_SPLIT = re.compile(
    rf",\s*(?:and\s+|but\s+|then\s+)?(?={_START_CUE})|\s+(?:and|but)\s+(?={_START_CUE})"
)


def _protect(text: str) -> tuple[str, list[str]]:
    quotes: list[str] = []

    def sub(m: re.Match[str]) -> str:
        inner = next(g for g in m.groups() if g is not None)
        quotes.append(inner)
        return Q0 + chr(0xE100 + len(quotes) - 1) + Q1 if len(quotes) <= 255 else m.group(0)

    return QUOTE_RX.sub(sub, text), quotes


def _restore(text: str, quotes: list[str]) -> str:
    text = re.sub(Q, lambda m: repr(quotes[ord(m.group(0)[1]) - 0xE100]), text)
    for ch, mark in MARKS.items():
        text = text.replace(ch, mark)
    return text


_AND = "\ue004"  # an "and" inside "between X and Y", which joins two words and does not start a clause


def _split(text: str) -> list[str]:
    out: list[str] = []
    for sentence in re.split(r"(?<=[.!?;])\s+|\n+|;\s*", text):
        if not sentence.strip():
            continue
        sentence = re.sub(r"(?i)\b(between\s+[\w-]+)\s+and\s+(?=[a-z][\w-]*\b)", rf"\1 {_AND} ", sentence)
        out += [
            p.strip(" ,").replace(_AND, "and") for p in _CLAUSE_SPLIT.split(sentence) if p and p.strip(" ,.")
        ]
    return out


def _leftover(cl: ClauseText) -> tuple[list[str], bool]:
    """(requirement words left unread, whether content words are left)."""
    text = re.sub(Q, " «quoted» ", cl.w)
    text = re.sub(MARK_RX, " ps ", text)
    tokens = re.findall(r"«quoted»|[a-z][a-z'-]*|\d+", text)
    cues = [t for t in tokens if t in CUES or t.isdigit() or t == "«quoted»" or t in LANGS]
    cues += [t for t in tokens if re.fullmatch(OTHER_LANGS, t)]
    negs = [t for t in tokens if t in ("never", "not", "don't", "no", "avoid", "without")]
    content = [t for t in tokens if t not in STOP_WORDS and t not in CUES and len(t) > 2 and t not in negs]
    return cues + negs, bool(content)


def _read_clause(text: str, quotes: list[str], memory: dict[str, Any], whole: str, sentence: str) -> Clause:
    cl = ClauseText(text, quotes, memory)
    raw_lower = cl.w
    read_layouts(cl, numbers(sentence.lower()), whole)  # fences, identifier styles, separators, times, prices
    read_lists(cl, numbers(sentence.lower()), whole)  # HTML / task / nested lists, figures, pairs, repeats
    read_relations(cl, numbers(sentence.lower()), whole)  # measures per unit, same starts, chains, reversals
    read_kinds(cl, numbers(sentence.lower()), whole)  # a unit's start or end of a kind, IFBench word classes
    read_marks(cl, numbers(sentence.lower()), whole)  # emojis, bold, links, parentheses, tolerances
    read_forms(
        cl, numbers(sentence.lower()), whole
    )  # answer forms: wrappers, separators, markers, JSON arrays
    read_units(cl, numbers(sentence.lower()), whole)  # letter classes and number ranges per unit
    read_composed(
        cl, numbers(sentence.lower()), whole
    )  # scope x predicate phrasings, then the composed rules
    read_shapes(cl, numbers(sentence.lower()), whole)  # composed rules first: they use up their phrasings
    read_clause_constraints(cl, whole, numbers(sentence.lower()))
    cues, content = _leftover(cl)
    shown = _restore(text, quotes)
    task_like = _TASK_VERBS.search(raw_lower) is not None or raw_lower.rstrip().endswith("?")
    unread = list(cl.unreadable)
    if cues:
        unread.append("not understood: " + " ".join(dict.fromkeys(cues)))
    if content and task_like:
        unread.append("content: a rule cannot judge it (needs a judge or a reference)")
    if cl.found and not unread:
        return Clause(shown, "checked", canonical(cl.found))
    if cl.found:
        return Clause(shown, "partial", canonical(cl.found), unread, "; ".join(unread))
    order = _ORDER_VERBS.search(raw_lower) is not None
    if (
        unread
        and _DESCRIBES.search(raw_lower)
        and not task_like
        and not _MODAL.search(raw_lower)
        and not order
    ):
        # "Strings of letters in a format that each prompt states": a description of the data, not an order.
        return Clause(shown, "context", note="describes, does not require")
    if unread:
        return Clause(shown, "unchecked", [], unread, "; ".join(unread))
    if content:
        return Clause(shown, "context", note="no requirement found")
    return Clause(shown, "context")


def read_instruction(text: str) -> Reading:
    """Read ``text`` into clauses and constraints (see the module docstring)."""
    reading = Reading(text=text or "")
    if not text or not text.strip():
        return reading
    work = text.replace("\u2013", "-").replace("\u2014", " - ")
    # A parenthesised list of examples ("(sentence or word counts, lowercase, JSON keys, ...)") names kinds of
    # rules, it does not require them; a short parenthesis such as "(a string)" is kept, and so is a list of
    # options ("one of the following options: ('yes', 'no', 'maybe')").
    work = _EXAMPLES.sub(lambda m: m.group(0) if _OPTIONS_BEFORE.search(work[: m.start()]) else " ", work)
    # "no fewer than 25 and no more than 35 characters" is one range (the clause splitter would cut it at "and no")
    work = re.sub(
        r"\b(?:no|not)\s+(?:fewer|less)\s+than\s+([\w-]+)\s+(?:and|but)\s+(?:no|not)\s+more\s+than\s+([\w-]+)",
        r"between \1 and \2",
        work,
        flags=re.IGNORECASE,
    )
    # "at least once and at most twice": one range of occurrences (the clause splitter would cut it at "and")
    work = re.sub(
        r"(?i)\bat\s+least\s+(once|twice|thrice|\w+)(?:\s+times)?\s*,?\s+(?:and|but)\s+(?:at\s+most|no\s+more\s+than|"
        r"not\s+more\s+than)\s+(once|twice|thrice|\w+)(?:\s+times)?\b",
        lambda m: f"between {_times(m.group(1))} and {_times(m.group(2))} times",
        work,
    )
    # "4 emojis (no more, no fewer)": the count said twice, not two clauses
    work = re.sub(
        r"(?i)(\b[\w-]+\s+[\w-]+)\s*\(\s*no\s+more\s*(?:,|and|or)\s*no\s+(?:fewer|less)\s*\)",
        lambda m: m.group(1) if re.match(r"(?i)\s*(?:\d+|[a-z]+)\s", m.group(1) + " ") else m.group(0),
        work,
    )
    # "every <li> text begins with ...": the list's items (the tag is no word of the reader's)
    work = re.sub(r"(?i)\b(every|each|all)\s+<li>(?:\s+(?:text|element|item|content))?", r"\1 item", work)
    # "Paragraphs and only paragraphs are separated ..." (IFEval): one subject, not two clauses
    work = re.sub(r"(?i)\b(paragraphs|responses|sections)\s+and\s+only\s+\1\b", r"\1", work)
    work, quotes = _protect(work)
    # abbreviations after the quotes are protected: a quoted marker ('P.P.S') stays as written
    for rx, rep in _ABBREV:
        work = re.sub(rx, rep, work, flags=re.IGNORECASE)
    whole = numbers(work.lower())
    memory: dict[str, Any] = {"before_repeat": _before_repeat(text)}
    for sentence in re.split(r"(?<=[.!?;])\s+|\n+", work):
        if not sentence.strip():
            continue
        for clause in _split(sentence):
            reading.clauses.append(_read_clause(clause, quotes, memory, whole, sentence))
    _one_word_per_line(reading, whole)
    _single_unit(reading)
    _joined_forms(reading)
    return reading


def _times(word: str) -> str:
    return {"once": "one", "twice": "two", "thrice": "three"}.get(word.lower(), word)


_REPEAT = re.compile(
    r"(?i)\b(?:first\s+)?(?:repeat|restate|copy|echo)\s+(?:the\s+|this\s+|my\s+|our\s+)?(?:request|question|prompt|"
    r"instruction|task)\b"
)


def _before_repeat(text: str) -> str:
    """The instruction's text before the sentence that asks to repeat the request (the request itself)."""
    m = _REPEAT.search(text)
    if m is None:
        return ""
    cut = max(text.rfind(ch, 0, m.start()) for ch in ".!?\n")
    return text[: cut + 1].strip() if cut >= 0 else ""


def _joined_forms(reading: Reading) -> None:
    """Constraints of one form read in different clauses, joined: a count of items said apart from a JSON array
    (``... a JSON array of booleans; it must have 2 items``) is the array's; a separator line given for the
    paragraphs holds for every per-paragraph rule; a count beside a postscript is the body's (``2 sentences,
    followed by a postscript``)."""
    cons = reading.constraints
    array = next((c for c in cons if c["rule"] == "json_array"), None)
    items = next((c for c in cons if c["rule"] == "items" and not c.get("per")), None)
    sep = next((c.get("separator") for c in cons if c["rule"] == "paragraphs" and c.get("separator")), None)
    ps = any(c["rule"] == "postscript" for c in cons) or any(
        c["rule"] == "nth" and c.get("unit") == "line" and c.get("index") == -1 for c in cons
    )
    # "five words separated by semicolons": the words are the list's pieces ("oak;elm" is one whitespace token)
    tight = next(
        (
            c
            for c in cons
            if c["rule"] == "delimited" and c.get("unit") == "word" and str(c.get("text", "")).strip()
        ),
        None,
    )
    counted = next((c for c in cons if c["rule"] == "words" and not c.get("per")), None)
    for cl in reading.clauses:
        new = []
        for c in cl.constraints:
            c = dict(c)
            if tight is not None and counted is not None:
                if c == counted:
                    continue
                if c["rule"] == "delimited" and c.get("text") == tight.get("text"):
                    c.update({k: v for k, v in counted.items() if k in ("min", "max")})
            if (
                array is not None
                and items is not None
                and c == items
                and "min" not in array
                and "max" not in array
            ):
                c = {"rule": "json_array", **{k: v for k, v in items.items() if k in ("min", "max")}}
            if sep and (c.get("per") == "paragraph" or (c["rule"] == "nth" and c.get("unit") == "paragraph")):
                c["separator"] = sep
            if ps and c["rule"] in ("sentences", "paragraphs", "lines", "words") and not c.get("per"):
                c["body"] = True
            new.append(c)
        cl.constraints = canonical(new)


def _one_number_per_line(reading: Reading, cons: list[dict[str, Any]]) -> bool:
    """A list of numbers laid out one per line: one number on each line, and as many lines as numbers when they
    are counted. True when the instruction lists numbers (nothing else is laid out then)."""
    numeric = any(c.get("unit") == "number" for c in cons) or any(
        c["rule"] == "numbers" and not c.get("per") and c.get("min") == c.get("max") for c in cons
    )
    if not numeric or any(c["rule"] in ("lines", "items", "bullets", "numbered", "words") for c in cons):
        return numeric
    if any(c["rule"] == "numbers" and c.get("per") == "line" for c in cons):
        return True
    counted = next(
        (c for c in cons if c["rule"] == "numbers" and not c.get("per") and c.get("min") == c.get("max")),
        None,
    )
    home = next((cl for cl in reading.clauses if _PER_LINE.search(numbers(cl.text.lower()))), None)
    home = home or next(cl for cl in reading.clauses if cl.constraints)
    new = [{"rule": "numbers", "per": "line", "min": 1, "max": 1}]
    if counted is not None:
        new.append({"rule": "lines", "min": counted["min"], "max": counted["min"]})
    home.constraints = canonical([*home.constraints, *new])
    if home.status == "context":
        home.status = "checked"
    return True


def _single_unit(reading: Reading) -> None:
    """With exactly one sentence (one word), a bound on each sentence's words (each word's letters) is a bound on
    the answer's: written as the answer's, the form both readers give it."""
    cons = reading.constraints
    pairs = (
        ("sentences", "words", "sentence"),
        ("words", "letters", "word"),
        ("sentences", "placeholders", "sentence"),
        ("sentences", "hashtags", "sentence"),
        ("sentences", "chars", "sentence"),
        ("paragraphs", "sentences", "paragraph"),
        ("paragraphs", "words", "paragraph"),
        *(("sentences", rule, "sentence") for rule in _MARK_COUNTS),
        *(("paragraphs", rule, "paragraph") for rule in _MARK_COUNTS),
    )
    for unit, rule, per in pairs:
        one = any(c["rule"] == unit and not c.get("per") and c.get("min") == c.get("max") == 1 for c in cons)
        if not one or any(c["rule"] == rule and not c.get("per") for c in cons):
            continue
        for cl in reading.clauses:
            cl.constraints = canonical(
                [
                    {k: v for k, v in c.items() if k != "per"}
                    if c["rule"] == rule and c.get("per") == per
                    else c
                    for c in cl.constraints
                ]
            )


_MARK_COUNTS = (
    "emojis",
    "bold",
    "bold_words",
    "italics",
    "links",
    "parens",
    "paren_depth",
    "pronouns",
    "number_words",
)

_PER_LINE = re.compile(
    r"\b(?:one|1)\s+(?:word\s+)?(?:per|on\s+each|on\s+a)\s+line\b|\bon\s+(?:its|their)\s+own\s+line\b"
    r"|\beach\s+on\s+a\s+(?:separate|new|different)\s+line\b|\bon\s+separate\s+lines\b"
)


def _one_word_per_line(reading: Reading, whole: str) -> None:
    """``5 words, one per line``: the layout words are used up by the shapes reader; here they become what they
    say — as many lines as words, one word on each — so an answer on one line does not pass. Numbers likewise
    (``4 numbers, one per line``: 4 lines, one number on each)."""
    if not _PER_LINE.search(whole):
        return
    cons = reading.constraints
    if _one_number_per_line(reading, cons):
        return
    counted = [c for c in cons if c["rule"] == "words" and not c.get("per") and c.get("min") == c.get("max")]
    if not counted or any(c["rule"] in ("lines", "numbers", "items", "bullets", "numbered") for c in cons):
        return
    if any(c["rule"] in ("each", "order", "spell", "total") and c.get("unit") != "word" for c in cons):
        return  # units other than words: the shapes lay these out
    if any(c.get("unit") == "number" for c in cons):
        return
    n = int(counted[0]["min"])
    home = next((cl for cl in reading.clauses if _PER_LINE.search(numbers(cl.text.lower()))), None)
    home = home or next(cl for cl in reading.clauses if cl.constraints)
    home.constraints = canonical(
        [
            *home.constraints,
            {"rule": "lines", "min": n, "max": n},
            {"rule": "words", "per": "line", "min": 1, "max": 1},
        ]
    )
    if home.status == "context":
        home.status = "checked"
