"""Marks and tokens of an answer, as standard-library Python (part of the source every composed verifier embeds):
emojis, Markdown bold / italics / links, task-list boxes, fenced code, parentheses, times,
prices, numbers written as words, pronouns, distinct words and letters, leading spaces.

Each finder is strict about the form it names: an emoticon (":)") is no emoji; ``__x__`` and ``*x*`` are not
``**x**`` bold; ``[text] (url)`` and ``(text)[url]`` are no Markdown link; ``[X]`` and ``[]`` are no task box;
a square bracket is no parenthesis, and unbalanced parentheses have no depth (-1: the check fails); a tab is no
leading space (-1); ``9:00`` is a time but not ``HH:MM``. Counts of -1 mean "malformed": a check that gets one
fails, whatever its bounds."""

import re

# An emoji: a pictograph (with its variation selector, skin tone and ZWJ joins), a flag (two regional
# indicators) or a keycap. Emoticons such as ":)" are not emojis.
_PICTO = (
    "[\U0001f300-\U0001f3fa\U0001f400-\U0001faff\U0001f000-\U0001f1e5\U0001f200-\U0001f2ff"
    "\u2600-\u27bf\u2300-\u23ff\u2b05-\u2b07\u2b1b\u2b1c\u2b50\u2b55\u3030\u303d\u3297\u3299]"
)
_MOD = "[\ufe0f\ufe0e]?[\U0001f3fb-\U0001f3ff]?"
EMOJI_RX = re.compile(
    "[\U0001f1e6-\U0001f1ff]{2}|[0-9#*]\ufe0f?\u20e3|" + _PICTO + _MOD + "(?:\u200d" + _PICTO + _MOD + ")*"
)
BOLD_RX = re.compile(r"(?<![*\\])\*\*(?=[^\s*])([^\n]*?[^\s*])\*\*(?!\*)")
_ITALIC_RX = re.compile(
    r"(?<![*\w\\])\*(?=[^\s*])([^*\n]*?[^\s*])\*(?![*\w])|(?<![_\w\\])_(?=[^\s_])([^_\n]*?[^\s_])_(?![_\w])"
    r"|<(?:i|em)>([^<\n]+)</(?:i|em)>"
)
LINK_RX = re.compile(r"(?<![!\]])\[([^\[\]\n]+)\]\(([^()\s]+)\)")
TASK_RX = re.compile(r"^- \[( |x)\] (?=\S)", re.M)
FENCE_RX = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)
TIME_RX = re.compile(r"(?<![\w:.])\d{1,2}:\d{2}(?:\s?[AaPp]\.?[Mm]\.?)?(?![\w:])")
HHMM_RX = re.compile(r"(?:[01]\d|2[0-3]):[0-5]\d")
PRICE_RX = re.compile(r"[$€£¥]\s?\d[\d,]*(?:\.\d+)?|\d[\d,]*(?:[.,]\d+)?\s?[$€£¥]")
_ONES_WORDS = (
    "zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    "seventeen|eighteen|nineteen"
)
_TENS_WORDS = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
NUMBER_WORD_RX = re.compile(
    rf"\b(?:(?:{_TENS_WORDS})(?:-(?:one|two|three|four|five|six|seven|eight|nine))?|{_ONES_WORDS}|hundred|"
    rf"thousand|million|billion|dozen)\b",
    re.I,
)
PRONOUNS = frozenset(
    "i me my mine myself you your yours yourself yourselves he him his himself she her hers herself it its itself "
    "we us our ours ourselves they them their theirs themselves".split()
)


def emojis(text):
    return EMOJI_RX.findall(text)


def bold_spans(text):
    return BOLD_RX.findall(text)


def italic_spans(text):
    plain = BOLD_RX.sub(lambda m: " " * len(m.group(0)), text)
    return [next(g for g in m.groups() if g) for m in _ITALIC_RX.finditer(plain)]


def links(text):
    """(text, url) of every Markdown link ``[text](url)``."""
    return LINK_RX.findall(text)


def fenced(text):
    """(tag, body) of every fenced code block (a fence opened at a line start and closed at one)."""
    return FENCE_RX.findall(text)


def paren_pairs(text):
    """How many pairs of round parentheses, and how deep they nest: (-1, -1) when they are unbalanced."""
    depth = deepest = pairs = 0
    for ch in text:
        if ch == "(":
            depth += 1
            pairs += 1
            deepest = max(deepest, depth)
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return -1, -1
    return (pairs, deepest) if depth == 0 else (-1, -1)


def leading_spaces(line):
    """The spaces a line starts with (-1 when its indentation holds a tab)."""
    lead = line[: len(line) - len(line.lstrip(" \t"))]
    return -1 if "\t" in lead else len(lead)


def bare_word(w):
    return re.sub(r"^[^\w]+|[^\w]+$", "", w.strip()).lower()


def minutes(t):
    """An ``H:MM`` / ``HH:MM`` time as minutes after midnight (None for anything else, e.g. with AM/PM)."""
    m = re.fullmatch(r"(\d{1,2}):(\d{2})", str(t).strip())
    if not m or int(m.group(1)) > 23 or int(m.group(2)) > 59:
        return None
    return int(m.group(1)) * 60 + int(m.group(2))


def price_value(p):
    """A price's amount (a float; a decimal comma read as a point), or None."""
    digits = re.sub(r"[^\d.,]", "", str(p))
    if re.fullmatch(r"\d+,\d{1,2}", digits):
        digits = digits.replace(",", ".")
    digits = digits.replace(",", "")
    try:
        return float(digits)
    except ValueError:
        return None


def mark_count(unit, text, words_of):
    """The count of a mark unit of this module (``None`` for a unit that is not one of them); ``words_of`` splits
    words."""
    if unit == "emojis":
        return len(emojis(text))
    if unit == "bold":
        return len(bold_spans(text))
    if unit == "bold_words":
        return sum(len(s.split()) for s in bold_spans(text))
    if unit == "italics":
        return len(italic_spans(text))
    if unit == "links":
        return len(links(text))
    if unit == "distinct_words":
        return len({bare_word(w) for w in words_of(text) if bare_word(w)})
    if unit == "distinct_letters":
        return len({ch for ch in text.lower() if "a" <= ch <= "z"})
    if unit == "number_words":
        return len(NUMBER_WORD_RX.findall(text))
    if unit == "pronouns":
        return sum(1 for w in words_of(text) if bare_word(w) in PRONOUNS)
    if unit == "spaces":
        return text.count(" ")
    if unit == "code_lines":
        return sum(1 for _, body in fenced(text) for line in body.splitlines() if line.strip())
    if unit == "parens":
        return paren_pairs(text)[0]
    if unit == "paren_depth":
        return paren_pairs(text)[1]
    if unit == "checked":
        return sum(1 for m in TASK_RX.finditer(text) if m.group(1) == "x")
    if unit == "unchecked":
        return sum(1 for m in TASK_RX.finditer(text) if m.group(1) == " ")
    if unit == "word_repeats":  # how often the most repeated word occurs (case and punctuation aside)
        seen: dict = {}
        for w in words_of(text):
            b = bare_word(w)
            if b:
                seen[b] = seen.get(b, 0) + 1
        return max(seen.values()) if seen else 0
    if unit == "indent":
        first = next((line for line in text.splitlines() if line.strip()), "")
        return leading_spaces(first)
    return None


MARK_UNITS = (
    "emojis",
    "bold",
    "bold_words",
    "italics",
    "links",
    "distinct_words",
    "distinct_letters",
    "number_words",
    "pronouns",
    "spaces",
    "code_lines",
    "parens",
    "paren_depth",
    "checked",
    "unchecked",
    "indent",
    "word_repeats",
)
