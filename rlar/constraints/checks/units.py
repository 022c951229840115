"""The units every check counts in, as standard-library Python (part of the source every composed verifier
embeds; :mod:`rlar.constraints.checks` describes the units): words, sentences, paragraphs, lines, bullets,
numbered items, syllables, the count of each count unit, section numbers, and the bounds a count is held to."""

import re
import unicodedata

from rlar.constraints.checks.marks import MARK_UNITS, mark_count

BULLET_RX = re.compile(r"^[ \t]*[-*\u2022][ \t]+(\S.*)$", re.M)
NUMBERED_RX = re.compile(r"^[ \t]*\d{1,3}[.)][ \t]+(\S.*)$", re.M)
# a number: digits with an optional decimal part, or thousands written with commas ("1,000"); "3,6,12" is three
NUMBER_RX = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w])")
PS_LINE_RX = re.compile(r"^[ \t>*_]*(?:p\.\s?p\.\s?s\b\.?|p\.\s?s\b\.?|ps\b:?|post-?script\b:?)", re.M | re.I)
HIGHLIGHT_RX = re.compile(r"\*\*?[^\s*\n][^*\n]*?\*?\*")
PLACEHOLDER_RX = re.compile(r"\[[^\[\]\n]+\]")
TITLE_RX = re.compile(r"<<[^<>\n]+>>")
TAG_RX = re.compile(r"(?<!<)</?[A-Za-z][\w.:-]*>(?!>)")
HEADING_RX = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+\S", re.M)
TASK_BOX_RX = re.compile(r"^\[[ xX]\][ \t]+")  # a task list's box is no word
LI_RX = re.compile(r"<li>(.*?)</li>", re.S)


def unmarked(text):
    """The text without list markers ("- ", "* ", "1. ") and markup tags ("<answer>", "</note>"), which are not
    words."""
    text = TAG_RX.sub(" ", text)
    return "\n".join(
        TASK_BOX_RX.sub("", BULLET_RX.sub(r"\1", NUMBERED_RX.sub(r"\1", line))) for line in text.splitlines()
    )


def words(text):
    return [w for w in unmarked(text).split() if any(ch.isalnum() for ch in w)]


def sentences(text):
    out = []
    for line in unmarked(text).splitlines():
        out += [p for p in re.split(r"(?<=[.!?])\s+", line.strip()) if re.search(r"\w", p)]
    return out


def paragraphs(text, separator=None):
    if separator:
        parts = re.split(r"\n[ \t]*" + re.escape(separator) + r"[ \t]*\n", text.strip())
    else:
        parts = re.split(r"\n[ \t]*\n", text.strip())
    return [p for p in parts if p.strip()]


def lines(text):
    return [line for line in text.splitlines() if line.strip()]


def bullets(text):
    return BULLET_RX.findall(text)


def numbered(text):
    return NUMBERED_RX.findall(text)


def items(text):
    """Bullets, else numbered items, else the texts of HTML ``<li>`` elements, else lines."""
    return bullets(text) or numbered(text) or [x.strip() for x in LI_RX.findall(text)] or lines(text)


def syllables(word):
    w = re.sub(r"[^a-z]", "", word.lower())
    if not w:
        return 0
    n = len(re.findall(r"[aeiouy]+", w))
    if w.endswith("e") and not w.endswith(("le", "ee", "ye")) and n > 1:
        n -= 1
    return max(1, n)


def units(scope, text, separator=None):
    """The pieces a ``per`` scope names."""
    if scope == "sentence":
        return sentences(text)
    if scope == "item":
        return items(text)
    if scope == "paragraph":
        return paragraphs(text, separator)
    if scope == "line":
        return lines(text)
    if scope == "word":
        return words(text)
    raise ValueError(f"unknown scope {scope!r}")


def body(text):
    """The answer without a final postscript (from the last line that opens with P.S., P.P.S., PS or Postscript
    after some text): what a count stated beside a postscript counts ("2 sentences, followed by a P.S.")."""
    found = [m for m in PS_LINE_RX.finditer(text) if text[: m.start()].strip()]
    return text[: found[-1].start()].rstrip() if found else text


def count(unit, text, c=None):
    """How many ``unit`` a text holds (the count rules of the vocabulary); with ``body`` the count is the
    body's, a final postscript aside."""
    c = c or {}
    if c.get("body"):
        text = body(text)
    if unit == "words":
        return len(words(text))
    if unit == "sentences":
        return len(sentences(text))
    if unit == "paragraphs":
        return len(paragraphs(text, c.get("separator")))
    if unit == "lines":
        return len(lines(text))
    if unit == "bullets":
        return len(bullets(text))
    if unit == "numbered":
        return len(numbered(text))
    if unit == "items":
        return len(items(text))
    if unit == "chars":
        return len(text.strip())
    if unit == "letters":
        return sum(1 for ch in text if ch.isalpha())
    if unit == "capitals":
        return sum(1 for ch in text if ch.isalpha() and ch.isupper())
    if unit == "syllables":
        return sum(syllables(w) for w in words(text))
    if unit == "numbers":
        return len(NUMBER_RX.findall(text))
    if unit == "commas":
        return text.count(",") + text.count("\uff0c")
    if unit == "exclamations":
        return text.count("!")
    if unit == "questions":
        return text.count("?")
    if unit == "punctuation":
        return sum(1 for ch in text if unicodedata.category(ch).startswith("P"))
    if unit == "capital_words":
        return sum(1 for w in words(text) if len(re.sub(r"[^A-Za-z]", "", w)) >= 2 and w.upper() == w)
    if unit == "highlights":
        return len(HIGHLIGHT_RX.findall(text))
    if unit == "placeholders":
        return len(PLACEHOLDER_RX.findall(text))
    if unit == "hashtags":
        return len(re.findall(r"(?<![\w#])#\w+", text))
    if unit == "semicolons":
        return text.count(";")
    if unit == "colons":
        return text.count(":")
    if unit == "headings":
        return len(HEADING_RX.findall(text))
    if unit == "sections":
        return len(section_numbers(text, c))
    found = mark_count(unit, text, words)
    if found is None:
        raise ValueError(f"unknown unit {unit!r}")
    return found


COUNT_UNITS = (
    "words",
    "sentences",
    "paragraphs",
    "lines",
    "bullets",
    "numbered",
    "items",
    "chars",
    "letters",
    "capitals",
    "syllables",
    "numbers",
    "commas",
    "exclamations",
    "questions",
    "punctuation",
    "capital_words",
    "highlights",
    "placeholders",
    "sections",
    "hashtags",
    "semicolons",
    "colons",
    "headings",
    *MARK_UNITS,
)


ROMAN = {"i": 1, "ii": 2, "iii": 3, "iv": 4, "v": 5, "vi": 6, "vii": 7, "viii": 8, "ix": 9, "x": 10}
NUMBERED_NUM_RX = re.compile(r"^[ \t]*(\d{1,3})[.)][ \t]+\S", re.M)


def section_numbers(text, c=None):
    """The numbers of the section markers a text holds, in order (a Roman numeral as its value; None where it is
    not one): lines starting with the rule's ``marker`` and a number, followed by its ``suffix`` when one was
    given ("Part 1:"). A marker the instruction gave is a literal: its case must match ("SECTION 1" is not
    "Section 1"); without one the marker is "Section", any case. A marker that starts with a word may follow
    markup ("## Section 1", "**Section 1**"); one that starts with a mark ("## Section") starts the line."""
    c = c or {}
    given = c.get("marker")
    flags = re.M if given else re.M | re.I
    marker = str(given or "Section")
    lead = r"^[ \t]*" if re.match(r"[^\w\s]", marker) else r"^\W*"
    end = re.escape(str(c["suffix"])) if c.get("suffix") else r"\b"
    found = re.findall(lead + re.escape(marker) + r"\s*(\d+|[IVXivx]+)" + end, text, flags)
    return [int(n) if n.isdigit() else ROMAN.get(n.lower()) for n in found]


def numbered_in_order(numbers):
    """Whether numbered pieces are numbered 1..N in order (three sections all numbered 1 are not numbered)."""
    return numbers == list(range(1, len(numbers) + 1))


def within(n, c):
    lo, hi = c.get("min"), c.get("max")
    return (lo is None or n >= lo) and (hi is None or n <= hi)


def near(n, c):
    """1.0 inside the bounds; outside, at most 0.5, falling to 0 at one bound's width away (a count that is
    close earns a little, so a policy learning a length has something to climb)."""
    if within(n, c):
        return 1.0
    lo, hi = c.get("min"), c.get("max")
    bound = lo if lo is not None and n < lo else hi
    distance = abs(n - bound)
    return 0.5 * max(0.0, 1.0 - distance / max(2.0, float(bound)))
