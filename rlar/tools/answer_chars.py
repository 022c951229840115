"""What the characters of a written answer mean: the known ones rewritten in plain ASCII or LaTeX, the others named.

Chat models write answers with characters beyond ASCII: a minus sign (U+2212) or an en dash as the sign of a number,
full-width digits, thin spaces between thousands, superscript exponents, vulgar fractions, a radical sign. A checker
that drops a character it does not know and reads the rest turns "The slope is –3." into 3; this module reads every
character it knows and names every other one, so a checker can abstain with the reason instead.

``read_chars(text)`` rewrites, in order:

- HTML character references become their characters (``&minus;5`` is −5, ``&frac12;`` is ½, ``&#8722;``), which
  are then read like the rest; a reference HTML does not define becomes U+FFFD, unknown; an ampersand that starts
  no reference (LaTeX's alignment ``&=``) stays;
- invisible format characters (zero-width space / joiners, word joiner, BOM, soft hyphen, left-to-right and
  right-to-left marks) are removed; they carry no meaning. Bidirectional overrides and embeddings (U+202A-U+202E,
  U+2066-U+2069) are *not*: they reorder what a reader sees, so they stay and are unknown;
- full-width forms (U+FF01-U+FF5E) become their ASCII characters and the decimal digits of any script become ASCII
  digits (``４２`` and ``٤٢`` are 42);
- spaces: no-break, thin, narrow no-break, figure, hair, ideographic spaces between groups of three digits are
  thousands separators and are removed (``1 234 567``); elsewhere they are a space;
- dashes: the minus sign (U+2212), small and full-width hyphen-minus are a minus; an en dash, em dash, figure dash,
  horizontal bar or Unicode hyphen between two digits with no space is a range ("3–5" -> "3 to 5", which the
  checkers read as two values), else it is a minus (ASCII ``-``): a sign before a number ("–3"), a binary minus
  between operands ("5 – 3");
- superscript and subscript digits and signs become ``^{...}`` and ``_{...}`` (``x²`` -> ``x^{2}``, ``10⁻⁸`` ->
  ``10^{-8}``, ``1011₂`` -> ``1011_{2}``); vulgar fractions become ``\\frac{p}{q}`` (``3½`` -> ``3\\frac{1}{2}``, a
  mixed number) and the fraction slash ``/``;
- mathematical symbols become their LaTeX (``√12`` -> ``\\sqrt{12}``, ``π``, ``∞``, ``≤``, ``≠``, ``±``, ``×``,
  ``÷``, ``·``, ``⟨ ⟩``, ``≡``, ``∪``, ``∈``, Greek letters) and the degree, prime and double prime signs become
  ``^\\circ``, ``'`` and ``''``; typographic quotes, the ellipsis and bullets become ASCII.

Keycap digits are digits ("1️⃣2️⃣" is 12, "🔟" is 10), and digits under a combining overline or macron are the period
of a repeating decimal (``0.3̅`` -> ``0.\\overline{3}``). A middle dot between two digits (``2·75``) is a decimal point
in British writing and a product elsewhere: after a currency sign (``£2·75``) or a lone 0 (``0·6``) it is a decimal
point, after a decimal (``6.02·10²³``) or before a power of ten a product; otherwise it stays and is unknown (a
checker may read it both ways and abstain when the readings disagree: ``ambiguous_dots``). An assignment arrow or
colon-equals after a name (``total ← 35``, ``n ≔ 12``) is "=". A combining mark on anything but a letter (a keycap,
a strike through a digit, ``3̸``) is unknown; "🔟" is read as 10, not as a decoration.

Pictographs and dingbats that only decorate (🎯, 👉, 🍎), apart from any word or number, are read as a space;
those that say something about the answer (a cross, a thumbs-down, ❓, 🤔) or are numbers (❶) are
not. Letters of any script (and their combining marks) are text and stay as written. Everything else — those
emoji, other symbols, other numerals (circled numbers, Roman numeral characters), control characters,
bidirectional overrides — stays in the text and is listed by ``unknown_chars``: a checker must not score an
answer that holds one.
"""

from __future__ import annotations

import html
import re
import unicodedata

__all__ = ["ambiguous_dots", "read_chars", "unknown_chars"]

_ENTITY = re.compile(r"&(?:#\d{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad\u200e\u200f\u180e"), None)
_UNICODE_SPACES = "\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
_THOUSANDS = re.compile(rf"(?<![\d.,])(\d{{1,3}})((?:[{_UNICODE_SPACES}]\d{{3}})+)(?![\d])")
_MINUS = "\u2212\ufe63"
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015"
_RANGE = re.compile(rf"(?<=\d)[{_DASHES}](?=\d)")
_SUPERSCRIPT = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱ", "0123456789+-=()ni", strict=True))
_SUBSCRIPT = dict(zip("₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎", "0123456789+-=()", strict=True))
_SCRIPT_RUN = re.compile(f"[{''.join(_SUPERSCRIPT)}]+|[{''.join(_SUBSCRIPT)}]+")
_VULGAR = {
    "½": (1, 2),
    "⅓": (1, 3),
    "⅔": (2, 3),
    "¼": (1, 4),
    "¾": (3, 4),
    "⅕": (1, 5),
    "⅖": (2, 5),
    "⅗": (3, 5),
    "⅘": (4, 5),
    "⅙": (1, 6),
    "⅚": (5, 6),
    "⅐": (1, 7),
    "⅛": (1, 8),
    "⅜": (3, 8),
    "⅝": (5, 8),
    "⅞": (7, 8),
    "⅑": (1, 9),
    "⅒": (1, 10),
}
_RADICAL = re.compile(r"([√∛∜])\s*(\([^()]*\)|\{[^{}]*\}|\d+(?:\.\d+)?|\\?[A-Za-z]+)")
_SYMBOLS = {
    "×": "\\times ",
    "÷": "\\div ",
    "·": "\\cdot ",
    "⋅": "\\cdot ",
    "∙": "\\cdot ",
    "π": "\\pi ",
    "∞": "\\infty ",
    "≤": "\\le ",
    "≥": "\\ge ",
    "≦": "\\le ",
    "≧": "\\ge ",
    "⩽": "\\le ",
    "⩾": "\\ge ",
    "≠": "\\neq ",
    "≈": "\\approx ",
    "±": "\\pm ",
    "∓": "\\mp ",
    "≡": "\\equiv ",
    "∪": "\\cup ",
    "∩": "\\cap ",
    "∈": "\\in ",
    "∉": "\\notin ",
    "⊂": "\\subset ",
    "⊆": "\\subseteq ",
    "∅": "\\emptyset ",
    "⌊": "\\lfloor ",
    "⌋": "\\rfloor ",
    "⌈": "\\lceil ",
    "⌉": "\\rceil ",
    "∠": "\\angle ",
    "→": "\\to ",
    "⇒": "\\implies ",
    "∴": "\\therefore ",
    "∵": "\\because ",
    "⟹": "\\implies ",
    "⟨": "\\langle ",
    "⟩": "\\rangle ",
    "〈": "\\langle ",
    "〉": "\\rangle ",
    "°": "^\\circ ",
    "º": "^\\circ ",
    "˚": "^\\circ ",
    "℃": "^\\circ C",
    "℉": "^\\circ F",
    "′": "'",
    "″": "''",
    "⁄": "/",
    "∕": "/",
    "∗": "*",
    "√": "\\sqrt",
    "∛": "\\sqrt[3]",
    "∜": "\\sqrt[4]",
}
_PUNCTUATION = {
    "‘": "'",
    "’": "'",
    "‚": ",",
    "“": '"',
    "”": '"',
    "„": '"',
    "«": '"',
    "»": '"',
    "…": "...",
    "•": "-",
    "‣": "-",
    # CJK punctuation (the full-width forms of "，？！：" are read as ASCII above)
    "。": ". ",
    "、": ", ",
    "「": '"',
    "」": '"',
    "『": '"',
    "』": '"',
    "।": ". ",
    "॥": ". ",
    "【": "[",
    "】": "]",
}
_GREEK = {
    "α": "alpha",
    "β": "beta",
    "γ": "gamma",
    "δ": "delta",
    "ε": "epsilon",
    "θ": "theta",
    "λ": "lambda",
    "μ": "mu",
    "σ": "sigma",
    "φ": "phi",
    "ω": "omega",
    "Δ": "Delta",
    "Σ": "Sigma",
    "Ω": "Omega",
}
# Symbols a checker reads itself (currency, units): known, kept as written.
_KEPT = set("¢€£¥₹₩₽$%‰µΩ")
_BIDI = set(map(chr, [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]))


# Pictographs and dingbats decorate ("🎯 The probability is 1/4", "👉 8 apples left! 🍎", "x = 7 ✓"): read as a
# space. Not those that doubt or deny the answer — a cross, a thumbs-down, a prohibition, a question or exclamation
# mark, a thinking or shrugging face — nor those that are numbers (dingbat digits ❶-➓): unknown. Keycaps and 🔟 are
# read as their digits before this.
_EMOJI_RANGES = (
    (0x1F300, 0x1F5FF),
    (0x1F600, 0x1F64F),
    (0x1F680, 0x1F6FF),
    (0x1F900, 0x1F9FF),
    (0x1FA70, 0x1FAFF),
    (0x2600, 0x27BF),
)
_EMOJI_JOINERS = set("\ufe0f\u200d") | set(map(chr, range(0x1F3FB, 0x1F400)))
_SAYS_SOMETHING = set("✗✘❌❎👎🚫⛔❓❔❕❗⁉‼🤔🤷") | set(map(chr, range(0x2776, 0x2794)))


# Keycap digits ("1️⃣": the digit, a variation selector, the combining enclosing keycap) and the keycap ten.
_KEYCAP = re.compile("([0-9])\ufe0f?\u20e3")
# Digits under a combining overline or macron: the period of a repeating decimal.
_OVERLINED_DIGITS = re.compile("((?:[0-9][\u0304\u0305])+)")
# A middle dot between two digits: a British decimal point after a currency sign ("£2·75"), else two readings.
_RAISED_DOT = re.compile(r"(?<=\d)·(?=\d)")
_CURRENCY_RAISED_DOT = re.compile(r"(?:[£€$¥₹]|\b(?:GBP|EUR|USD)\s?)\d+·(?=\d)|(?<![\d.])0·(?=\d)")
# ... and a product where it cannot be a decimal point: after a decimal ("6.02·10²³") or before a power of ten.
_PRODUCT_RAISED_DOT = re.compile(r"(?<=\d\.\d)(\d*)·(?=\d)|·(?=10(?:\^|[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]))")
# Assignment in pseudocode and definitions: "total ← 35", "n ≔ 12" (a name, then the arrow or the colon-equals).
_ASSIGNMENT = re.compile(r"(?<![\w\\])([A-Za-z_]\w*)[ \t]*[←≔][ \t]*")
# Unit signs of their own code point (the Kelvin, Angstrom and ohm signs) and the squared unit glyphs of CJK
# typesetting (U+3380-U+33DF: "㎝", "㎏", "㎧", "㎡"): written out as their letters, a power as an exponent ("m^{2}").
_UNIT_SIGNS = set("\u212a\u212b\u2126")
# A calculator's exponent: "1.2ᴇ-4", "3ᴇ⁻⁵" (TI's small capital E): scientific notation, "1.2e-4".
_CALCULATOR_EXPONENT = re.compile(
    r"(?<=[\d.])\s?\u1d07\s?([-\u2212\u207b])?\s?([0-9\u2070\u00b9\u00b2\u00b3\u2074-\u2079]+)"
)
_AMBIGUOUS_DOT = "\ue000"  # stands for a middle dot between digits while the symbols are rewritten


def _unit_glyph(ch: str) -> str:
    letters = unicodedata.normalize("NFKC", ch)
    return re.sub(r"(?<=[A-Za-z])([23])$", r"^{\1}", letters)


def _decoration(ch: str) -> bool:
    code = ord(ch)
    return ch not in _SAYS_SOMETHING and any(lo <= code <= hi for lo, hi in _EMOJI_RANGES)


def _decorations_as_spaces(text: str) -> str:
    """Each run of decorating pictographs (with their variation selectors, joiners and skin tones) that stands
    apart — no letter or digit against it — as a space; one inside or against a word or number ("4🎉2", "42🎉")
    stays, unknown."""
    out, i = [], 0
    while i < len(text):
        if not _decoration(text[i]):
            out.append(text[i])
            i += 1
            continue
        j = i
        while j < len(text) and (_decoration(text[j]) or text[j] in _EMOJI_JOINERS):
            j += 1
        apart = (i == 0 or not text[i - 1].isalnum()) and (j == len(text) or not text[j].isalnum())
        out.append(" " if apart else text[i:j])
        i = j
    return "".join(out)


def _script(m: re.Match[str]) -> str:
    run = m.group(0)
    if run[0] in _SUPERSCRIPT:
        return "^{" + "".join(_SUPERSCRIPT[c] for c in run) + "}"
    return "_{" + "".join(_SUBSCRIPT[c] for c in run) + "}"


def _radical(m: re.Match[str]) -> str:
    root = {"√": "\\sqrt", "∛": "\\sqrt[3]", "∜": "\\sqrt[4]"}[m.group(1)]
    arg = m.group(2)
    if arg[0] in "({":
        arg = arg[1:-1]
    return f"{root}{{{arg}}}"


def _vulgar(ch: str) -> str:
    p, q = _VULGAR[ch]
    return f"\\frac{{{p}}}{{{q}}}"


def _entity(m: re.Match[str]) -> str:
    """An HTML character reference as its character; one HTML does not define is U+FFFD, which no rule reads."""
    got = html.unescape(m.group(0))
    return "\ufffd" if got == m.group(0) else got


def read_chars(text: str, latex: bool = True) -> str:
    """``text`` with every known character rewritten (see the module docstring); unknown ones are kept.

    ``latex=False`` (for checkers of text, not of mathematics) stops after the digits, spaces, dashes and
    typographic quotes: superscripts, fractions and mathematical symbols stay as written."""
    text = _ENTITY.sub(_entity, text)
    text = text.translate(_INVISIBLE)
    chars = []
    for ch in text:
        code = ord(ch)
        if 0xFF01 <= code <= 0xFF5E:
            ch = chr(code - 0xFEE0)
        elif ch == "\u3000":
            ch = " "
        elif not ch.isascii() and unicodedata.category(ch) == "Nd":
            ch = str(unicodedata.decimal(ch))
        elif ch in _UNIT_SIGNS or 0x3380 <= code <= 0x33DF:
            ch = _unit_glyph(ch)
        chars.append(ch)
    text = _KEYCAP.sub(r"\1", "".join(chars)).replace("🔟", "10")
    text = _CALCULATOR_EXPONENT.sub(
        lambda m: "e" + ("-" if m.group(1) else "") + "".join(_SUPERSCRIPT.get(c, c) for c in m.group(2)),
        text,
    )
    text = _decorations_as_spaces(text)
    text = _THOUSANDS.sub(lambda m: m.group(1) + re.sub(f"[{_UNICODE_SPACES}]", "", m.group(2)), text)
    text = re.sub(f"[{_UNICODE_SPACES}]", " ", text)
    text = re.sub(f"[{_MINUS}]", "-", text)
    text = _RANGE.sub(" to ", text)
    text = re.sub(f"[{_DASHES}]", "-", text)
    if not latex:
        return "".join(_PUNCTUATION.get(ch, ch) for ch in text)
    text = _ASSIGNMENT.sub(r"\1 = ", text)
    text = _OVERLINED_DIGITS.sub(lambda m: "\\overline{" + m.group(1)[::2] + "}", text)
    text = _CURRENCY_RAISED_DOT.sub(lambda m: m.group(0).replace("·", "."), text)
    text = _PRODUCT_RAISED_DOT.sub(lambda m: (m.group(1) or "") + " \\cdot ", text)
    text = _RAISED_DOT.sub(_AMBIGUOUS_DOT, text)
    text = _SCRIPT_RUN.sub(_script, text)
    text = "".join(_vulgar(ch) if ch in _VULGAR else ch for ch in text)
    text = _RADICAL.sub(_radical, text)
    text = "".join(_SYMBOLS.get(ch, _PUNCTUATION.get(ch, ch)) for ch in text)
    text = "".join(f"\\{_GREEK[ch]} " if ch in _GREEK else ch for ch in text)
    return text.replace(_AMBIGUOUS_DOT, "·")


def _known(ch: str) -> bool:
    if ch.isascii():
        return ch.isprintable() or ch in "\n\t\r"
    if ch in _KEPT or ch in _SYMBOLS or ch in _PUNCTUATION or ch in _VULGAR:
        return True
    if ch in _SUPERSCRIPT or ch in _SUBSCRIPT or ch in _GREEK:
        return True
    if ch in _BIDI:
        return False
    return unicodedata.category(ch)[0] in "LM"


def ambiguous_dots(text: str) -> bool:
    """``text`` (as written) has a middle dot between two digits that ``read_chars`` leaves unread."""
    return "·" in text and "·" in read_chars(text).replace("\\cdot", "")


def unknown_chars(text: str) -> list[str]:
    """The characters of ``text`` (already ``read_chars``'d) that no rule reads, each as ``U+XXXX NAME``, in order
    of first appearance."""
    out: list[str] = []
    base = ""  # the last character that is not a combining mark
    for i, ch in enumerate(text):
        mark = unicodedata.category(ch)[0] == "M"
        if ch == "·" and _RAISED_DOT.match(text, i):
            name = "U+00B7 MIDDLE DOT between digits (a decimal point or a product)"
        elif (mark and base and unicodedata.category(base)[0] != "L") or not _known(ch):
            name = f"U+{ord(ch):04X} {unicodedata.name(ch, 'UNNAMED')}"
        else:
            name = ""
        if not mark:
            base = ch
        if name and name not in out:
            out.append(name)
    return out
