"""The answer a chat response states, for the tools that compare it with a reference text.

Chat models rarely answer with the bare reference: they write "The capital of Australia is Canberra.", "**Answer:**
Paris", "The answer is (B) Mercury.", ``\\boxed{42}``, a numbered list under "The three states of matter are:", or
a JSON array in a code fence. This module reads what such a response states; the tools decide how to compare it.

- ``statements(response)``: the texts the response offers as its answer, most explicit first — the content of its
  *last* explicit answer marker ("the answer is X", "answer: X", "final answer: X", "#### X", ``\\boxed{X}``, a line
  that is only bold), else the complement of its first sentence's verb "to be" ("The capital of Canada is Ottawa,
  Canada." -> "Ottawa"; a leading article is dropped as well: "the Nile River" -> "Nile River"), and the whole
  response. Emphasis markup (``**``, ``__``, backticks, ``<b>``), surrounding quotes and a sentence's final period
  are removed from the statements, never from the whole response.
- ``chosen_letters(response)``: the option letters a response chooses — its leading "(B)" / "B)" / "B." / "B:" and
  the letter at the start of each explicit statement ("The answer is C) 56", "Option C"). Two different letters are
  two answers.
- ``lettered_options(query)``: the options a query lists by letter ("A) 54", "(B) Mercury", inline "(A) x (B) y").
- ``listed_items(response)``: the items a response lists — a JSON array (bare, in a code fence, or the one list in a
  JSON object), the content of an explicit statement, a bulleted or numbered block (each entry's head: "Red (R)" ->
  "Red", "Mercury - the innermost" -> "Mercury"), the lines after a sentence ending with a colon, or the complement
  of the first sentence ("... are solid, liquid, and gas."), split at commas, semicolons and "and".
- ``asked_count(query)``: how many items a query asks for ("Name two noble gases" -> 2; 0 when it names no number)
  and ``asks_for_one(query)``: a question about one thing ("What is ...?", "Who wrote ...?"), not a list.

Limits: English answer markers and verbs only; the first sentence is read as the answer only when no explicit
marker exists; hedges are the tools' to judge (a statement "Paris or Lyon" is returned as written).
"""

from __future__ import annotations

import json
import re

from rlar.number_words import NUMBER_WORDS
from rlar.tools.answer_chars import read_chars

__all__ = [
    "asked_count",
    "asks_for_one",
    "chosen_letters",
    "clean_markup",
    "explicit_statement",
    "first_named_answer",
    "in_counterfactual",
    "lettered_options",
    "listed_items",
    "restated_answer",
    "statements",
]

_MARKER = re.compile(
    r"(?:^|(?<=[\s(>*_\"']))(?:(?:my|the|your|correct|right)\s+)*(?:final\s+)?answer"
    r"(?:\s+to\s+(?:this|the|your)\s+(?:question|problem|puzzle))?\s*(?:is|:|=|-)\s*:?\s*"
    r"|####\s*",
    re.IGNORECASE,
)
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
# The end of a sentence: a newline, or a full stop (! ?) before a space or the end that does not close an initial
# ("George W.B. Harrison") or a decimal ("3.5").
_SENTENCE_END = re.compile(r"\n|(?<=\S)(?<![\s.][A-Z])[.!?](?=\s|$)")
_BOLD_LINE = re.compile(r"^\s*(?:\*\*|__)([^*_\n]+?)(?:\*\*|__)\s*[.!]?\s*$", re.MULTILINE)
_COPULA = re.compile(r"\b(?:is|are|was|were)\s+(?!not\b)", re.IGNORECASE)
_CLAUSE_END = re.compile(
    r"\s*(?:[,;(]|\s-\s|\s(?:which|who|whose|where|that|but|because|since|although|though|with|while|as)\b)",
    re.IGNORECASE,
)
_LIST_END = re.compile(
    r"\s*(?:[;(]|,?\s+(?:which|who|whose|where|but|because|since|although|though|while)\b)", re.IGNORECASE
)
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_DEGREE_ADVERB = re.compile(
    r"^(?:predominantly|primarily|mainly|mostly|largely|chiefly|principally|approximately|about|roughly|around"
    r"|nearly|almost|exactly|precisely|officially)\s+(?=\S)",
    re.IGNORECASE,
)
# A "but" that takes the answer back or offers another ("X, but it's also believed to be Y", "2, but it's not
# necessarily the smallest"): the statement before it is a hedge, not an answer.
_QUALIFIED = re.compile(
    r",?\s+(?:but|however|although|though)\b(?=[^.]*\b(?:also|actually|not|no|rather|instead|another|other|or"
    r"|could|might|may|possibly|probably|disputed|unclear)\b)",
    re.IGNORECASE,
)
# Where an explicit answer's own clause ends ("The answer is 6, as there are ...").
_EXPLICIT_END = re.compile(r",?\s+(?:because|since|as|which|so|but)\b|,\s+(?:i\.e\.|e\.g\.)", re.IGNORECASE)


def clean_markup(text: str) -> str:
    """``text`` with its characters read (``answer_chars.read_chars(latex=False)``) and emphasis markup removed:
    Markdown bold / italics / code marks, HTML emphasis tags, LaTeX text wrappers (``\\textbf{}``, ``\\text{}``)
    and math delimiters around words (``$x$``, ``\\(x\\)``; a dollar before a number is currency)."""
    text = read_chars(text, latex=False)
    text = re.sub(r"</?(?:b|i|em|strong|u|mark|code)\s*>", "", text, flags=re.IGNORECASE)
    text = re.sub(r"\\(?:textbf|textit|text|mathrm|mathbf|emph|underline)\s*\{([^{}]*)\}", r"\1", text)
    text = re.sub(r"\$(?![\d.])([^$\n]+?)(?<!\s)\$|\\\((.+?)\\\)", lambda m: m.group(1) or m.group(2), text)
    text = text.replace("**", "").replace("__", "").replace("`", "")
    return re.sub(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])", r"\1", text)


def _trim(text: str) -> str:
    """A statement without surrounding quotes, brackets of emphasis, whitespace and its final period."""
    s = text.strip()
    s = re.sub(r"^[\"'“‘«]+|[\"'”’»]+(?=[.!]?$)", "", s).strip()
    s = re.sub(r"[.!]+$", "", s).strip()
    return re.sub(r"^[\"'“‘«]+|[\"'”’»]+$", "", s).strip()


def _boxed(text: str) -> list[str]:
    """The contents of every ``\\boxed{...}`` (balanced braces) in ``text``."""
    out = []
    for m in _BOXED.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth == 0:
            out.append(text[m.end() : i - 1])
    return out


def explicit_statement(response: str) -> str | None:
    """The content of the last explicit answer marker or ``\\boxed{}``, else of the last bold-only line, else
    None."""
    text = clean_markup(response)
    found: list[tuple[int, str]] = []
    for m in _MARKER.finditer(text):
        rest = text[m.end() :]
        end = _SENTENCE_END.search(rest)
        content = rest[: end.start()] if end else rest
        content = content[: cut.start()] if (cut := _EXPLICIT_END.search(content)) else content
        if content.strip():
            found.append((m.start(), content))
    for m in _BOXED.finditer(text):
        found.append((m.start(), _boxed(text[m.start() :])[0] if _boxed(text[m.start() :]) else ""))
    found = [(p, c) for p, c in found if _trim(c)]
    if found:
        return _trim(max(found, key=lambda f: f[0])[1])
    bold = _BOLD_LINE.findall(read_chars(response, latex=False))
    return _trim(bold[-1]) or None if bold else None


def _first_sentence(text: str) -> str:
    body = text.strip()
    m = _SENTENCE_END.search(body)
    return body[: m.start()] if m else body


def _complement(sentence: str, items: bool) -> str | None:
    """What the first verb "to be" of ``sentence`` (for ``items``, or its colon) says the subject is, up to the
    clause's end (for ``items``: up to a relative clause or "but", parentheses dropped); None when a hedging
    "but" follows it (``_QUALIFIED``)."""
    # A colon introduces a list ("There are two noble gases: Argon and Krypton"), not one answer: "Copy the
    # text: hello" is an instruction, and reading it as an answer would let an echoed query pass.
    colon = [m.end() for m in re.finditer(r":(?:\s|$)", sentence)] if items else []
    copula = _COPULA.search(sentence)
    if colon:
        rest = sentence[colon[-1] :]
    elif copula is not None:
        rest = sentence[copula.end() :]
    else:
        return None
    if _QUALIFIED.search(rest):
        return None
    if items:
        rest = re.sub(r"\s*\([^()]*\)", "", rest)  # "Argon (Ar) and Krypton (Kr)"
    end = (_LIST_END if items else _CLAUSE_END).search(rest)
    rest = _trim(rest[: end.start()] if end else rest)
    rest = _DEGREE_ADVERB.sub("", rest)  # "predominantly Portuguese", "approximately 100 degrees"
    return rest or None


def first_named_answer(response: str) -> str | None:
    """The name the response's first sentence says its subject is ("The longest river is the Amazon; the Nile
    comes second" -> "the Amazon"): a complement of at most four words that starts with a capital (after an
    article), else None — a preamble ("That is a good question") names nothing."""
    complement = _complement(_first_sentence(clean_markup(response)), items=False)
    if not complement or len(complement.split()) > 4:
        return None
    head = _ARTICLE.sub("", complement)
    return complement if head[:1].isupper() else None


def statements(response: str) -> list[str]:
    """What ``response`` offers as its answer, most explicit first (see the module docstring); the whole response
    without its emphasis markup, then as written (stripped), are always the last ones."""
    out: list[str] = []
    explicit = explicit_statement(response)
    if explicit:
        out.append(explicit)
    else:
        first = _first_sentence(clean_markup(response))
        complement = _complement(first, items=False)
        if complement:
            out += [complement, _ARTICLE.sub("", complement)]
        # A short answer before its explanation ("Canberra. It is ...", "Yes, it is."); a response that is one
        # sentence is kept as written ("Paris." is not "Paris" to a checker of punctuation).
        body = clean_markup(response).strip()
        if len(first) < len(body.rstrip(".!? ")):
            out.append(_trim(first))
        if "," in first:
            out.append(_trim(first.split(",", 1)[0]))
    out += [clean_markup(response).strip(), response.strip()]
    return [s for s in dict.fromkeys(out) if s]


_STOP = frozenset(
    "the a an of in on at to for from by with is are was were be what which who whom whose where when how does do did"
    " that this these those it its and or as".split()
)


def _content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 2}


def restated_answer(response: str, query: str) -> list[str] | None:
    """What the response's first sentence answers, when that sentence restates the question ("Who was the first
    president ...?" -> "The first president of the United States was X, ..."): the complement of its verb "to be"
    (or colon) up to its clause's end, then up to a relative clause or a "but" (["X", "X, ..."]); [] when a hedging
    "but" follows it ("X, but it's also believed to be Y"). None when the sentence is no restatement: fewer than
    two content words shared with the query (one, for a query of two or three) before its verb."""
    first = _first_sentence(clean_markup(response))
    copula = _COPULA.search(first)
    if copula is None or not query.strip():
        return None
    shared = _content_words(first[: copula.start()]) & _content_words(query)
    if len(shared) < min(2, max(1, len(_content_words(query)) // 2)):
        return None
    found = [_complement(first, items=False), _complement(first, items=True)]
    return list(dict.fromkeys(c for c in found if c))


_LEAD_LETTER = re.compile(r"^\s*(?:option\s+|choice\s+)?\(?([A-J])\)?(?:[).:]|\s*$|\s+-\s)", re.IGNORECASE)


_COUNTERFACTUAL = re.compile(r"\(((?:if|had)\b[^()]*\b(?:would|were)\b[^()]*)\)", re.IGNORECASE)


def in_counterfactual(text: str, position: int) -> bool:
    """``position`` is inside a bracketed counterfactual ("(If both ends were excluded it would be 11, option A.)"):
    what another reading of the question would give, not an answer stated."""
    return any(m.start() < position < m.end() for m in _COUNTERFACTUAL.finditer(text))


def chosen_letters(response: str) -> list[str]:
    """The option letters ``response`` chooses (its leading letter, and the letter each explicit statement opens
    with), upper-cased, in order, without repeats."""
    text = clean_markup(response)
    out: list[str] = []
    lead = _LEAD_LETTER.match(text)
    if lead and (lead.group(1).isupper() or text.lstrip().startswith("(")):
        out.append(lead.group(1).upper())
    for m in _MARKER.finditer(text):
        got = _LEAD_LETTER.match(text[m.end() :])
        if got and not in_counterfactual(text, m.start()):
            out.append(got.group(1).upper())
    for m in re.finditer(r"\b(?:option|choice)\s+\(?([A-J])\)?(?![A-Za-z])", text, re.IGNORECASE):
        if not in_counterfactual(text, m.start()):
            out.append(m.group(1).upper())
    for content in _boxed(text):
        if got := re.fullmatch(r"\s*\(?([A-J])\)?\s*", content):
            out.append(got.group(1).upper())
    return list(dict.fromkeys(out))


_OPTION_LINE = re.compile(r"^\s*\(?([A-J])[).:]\s+(\S.*?)\s*$", re.MULTILINE)
_OPTION_RUN = re.compile(r"(?im)^\s*(?:options?|choices?|answer\s+choices)\s*:\s*(.+)$")
_OPTION_INLINE = re.compile(r"\(([A-J])\)\s*(.+?)(?=\s*\([A-J]\)|\n|$)")


def lettered_options(query: str) -> dict[str, str]:
    """Letter -> option text of the options ``query`` lists (two or more, distinct letters), else {}: one per line,
    "(A) … (B) …" inline, or an "Options:" run of "A) … B) …" / MathQA's "a ) 120 , b ) 150" in letter order."""
    for pattern in (_OPTION_LINE, _OPTION_INLINE):
        found = pattern.findall(query)
        letters = [letter for letter, _ in found]
        if len(found) >= 2 and len(set(letters)) == len(letters):
            return {letter: text.strip() for letter, text in found}
    for run in _OPTION_RUN.finditer(query):
        found = re.findall(
            r"(?:^|[\s,;])([A-Ja-j])\s*\)\s*(.+?)(?=\s*[,;]?\s+[A-Ja-j]\s*\)|\s*$)", run.group(1)
        )
        letters = [letter.upper() for letter, _ in found]
        if len(found) >= 2 and letters == [chr(ord("A") + i) for i in range(len(letters))]:
            return {letter.upper(): text.strip() for letter, text in found}
    return {}


# -- lists ----------------------------------------------------------------------------------------------------
_ENTRY = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,2}[.)]|\(?[a-z][.)]|\(\d{1,2}\))\s+(.+?)\s*$", re.MULTILINE)
_HEAD_END = re.compile(r"\s*(?:[:(\[]|\s[-–—]\s|,)")
_SPLIT = re.compile(r"\s*(?:[;,]\s*(?:and\s+|or\s+)?|\s+and\s+|\s*&\s*)\s*", re.IGNORECASE)


def _json_items(text: str) -> list[str] | None:
    candidates = [text.strip()]
    candidates += re.findall(r"```(?:json)?\s*(.+?)```", text, re.DOTALL)
    candidates += re.findall(r"(\[[^\[\]]*\])", text)
    for c in candidates:
        c = c.strip()
        if c[:1] not in ("[", "{"):
            continue
        try:
            value = json.loads(c)
        except ValueError:
            continue
        if isinstance(value, dict):
            lists = [v for v in value.values() if isinstance(v, list)]
            value = lists[0] if len(lists) == 1 else None
        if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
            return [str(v) for v in value]
    return None


def _split(text: str) -> list[str]:
    parts = [_trim(p) for p in _SPLIT.split(text)]
    return [re.sub(r"^(?:and|or)\s+", "", p, flags=re.IGNORECASE) for p in parts if p]


def _head(entry: str) -> str:
    m = _HEAD_END.search(entry)
    return _trim(entry[: m.start()] if m else entry)


def listed_items(response: str) -> list[str]:
    """The items ``response`` lists (see the module docstring), [] when it lists none."""
    found = _json_items(response)
    if found is not None:
        return found
    explicit = explicit_statement(response)
    if explicit:
        return _split(explicit)
    text = clean_markup(response).strip()
    entries = _ENTRY.findall(text)
    if len(entries) >= 2:
        return [h for h in (_head(e) for e in entries) if h]
    lines = [ln.strip() for ln in text.splitlines()]
    for i, line in enumerate(lines):
        if line.endswith(":"):
            block: list[str] = []
            for nxt in lines[i + 1 :]:
                if not nxt and not block:
                    continue
                if not nxt:
                    break
                block.append(nxt)
            if len(block) >= 2:
                return [h for h in (_head(b) for b in block) if h]
            if len(block) == 1:
                return _split(block[0])
    complement = _complement(_first_sentence(text), items=True)
    if complement:
        return _split(complement)
    return _split(text)


# -- what a query asks for ------------------------------------------------------------------------------------
_COUNT_WORD = "|".join(w for w, n in NUMBER_WORDS.items() if 2 <= n <= 20)
_ASKED = re.compile(
    rf"\b(?:name|list|give|state|write|mention|provide|identify)\s+(?:me\s+)?(?:the\s+)?(?:first\s+|last\s+)?"
    rf"({_COUNT_WORD}|\d{{1,2}})\b"
    rf"|\b(?:the\s+)?(?:first\s+|last\s+|main\s+)?({_COUNT_WORD}|\d{{1,2}})\s+(?:[a-z]+\s+){{0,2}}[a-z]+s\b",
    re.IGNORECASE,
)
_ONE = re.compile(
    r"^\s*(?:who|what|which|where|when|how|in\s+which|on\s+which|at\s+which)\b(?![^?]*\b(?:are|were)\b)", re.I
)
_MANY = re.compile(r"^\s*(?:list|name|give|enumerate)\b|\b(?:are|were)\b", re.IGNORECASE)


def asked_count(query: str) -> int:
    """How many items ``query`` asks for ("Name two noble gases" -> 2), 0 when it names no number."""
    m = _ASKED.search(query)
    if not m:
        return 0
    word = (m.group(1) or m.group(2)).lower()
    return int(word) if word.isdigit() else NUMBER_WORDS.get(word, 0)


def asks_for_one(query: str) -> bool:
    """``query`` is a question about one thing ("What is the capital of France?", "Who wrote Hamlet?"), not a
    request for a list ("List ...", "Name the three ...", "What are ...")."""
    return bool(_ONE.search(query)) and not _MANY.search(query) and asked_count(query) == 0
