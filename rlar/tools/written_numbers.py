"""Numbers written in words and in other scripts, as digits — what the answer readers of ``math_verify`` compare.

``numbers_from_words(text)`` rewrites, in order: fractions in words ("three quarters" -> 3/4, "two-thirds",
"a half", "one and a half" -> 1 1/2; "a third time" stays an ordinal); Chinese numerals (十二, 两千, 一百零五,
三分之二 -> 2/3, 三点五, 负五; a lone digit character only before a measure word) and fractions said denominator
first in digits too (5分之2, Japanese 5分の2, Korean 5분의 2: 2/5); per mille (a thousandth); dozens,
grosses and scores ("four score and seven" -> 87, a baker's dozen 13); decimals said digit by digit ("zero point
seven five" -> 0.75); English cardinals ("sixty-four", "one hundred and five"; "the first one" is a pronoun);
"negative" / "minus" before a number as its sign; scale words and letters ("1.2 million", "$4.5M", "3.5k"); a
chance written as a count beside a chance word ("a 1 in 4 chance" -> 1/4); dollars and cents ("twelve dollars and
fifty cents" -> $12.50); before all of these, cardinals in German, French, Spanish, Italian and Portuguese in a
text of that language (``rlar.tools.foreign_numbers``). Pure functions; the word tables are ``rlar.number_words``'.
"""

from __future__ import annotations

import re
from fractions import Fraction

from rlar.number_words import NUMBER_WORDS, ONES, ORDINALS
from rlar.tools.foreign_numbers import foreign_cardinals

__all__ = ["numbers_from_words", "word_value"]

_WORDS = NUMBER_WORDS
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
_WORD_ALTERNATIVES = "|".join(sorted([*_WORDS, *_SCALES], key=len, reverse=True))
_WORD_RUN = re.compile(r"\b(?:(?:" + _WORD_ALTERNATIVES + r")(?:[\s-]+(?:and[\s-]+)?)?)+\b", re.IGNORECASE)
# "negative 3", "minus 3" as a sign; "10 minus 3" is a subtraction, not a sign.
_SIGN_WORD = re.compile(r"(?<![\d)]\s)(?<![\d)])\b(?:negative|minus)\s+(?=\.?\d)", re.IGNORECASE)
_DIGIT_SCALE = re.compile(r"\b(\d+(?:\.\d+)?)\s+(thousand|million|billion)\b", re.IGNORECASE)
# "3.5k steps", "$2.5M", "$4bn", "$1.2B": a scale letter attached to the number (a capital K or a bare B is left
# alone: 300K is a temperature, 2B a pencil).
_SUFFIX_SCALE = re.compile(r"(?<=[$€£¥])(\d+(?:\.\d+)?)(k|M|bn|B)\b|(?<![\w.$€£¥])(\d+(?:\.\d+)?)(k|M|bn)\b")
_SUFFIXES = {"k": 1000, "M": 10**6, "bn": 10**9, "B": 10**9}


_PRONOUN_ONE = re.compile(
    r"\b(?:the|this|that|which|each|every|no|any|some|first|last|next|other|another|same|right|wrong|correct"
    r"|only|new|old|big|small|largest|smallest|biggest)\s+$",
    re.IGNORECASE,
)


# Fractions in words: "three quarters" -> 3/4, "two-thirds" -> 2/3, "a half" -> 1/2, "one and a half" -> 1 1/2.
_DENOMINATORS = {
    "half": 2, "halves": 2, "quarter": 4, "quarters": 4,
    **{w + plural: v for w, v in ORDINALS.items() if w.isalpha() and 3 <= v <= 10 for plural in ("", "s")},
}  # fmt: skip
_CARDINAL = r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d+)"
_FRACTION_WORDS = re.compile(
    rf"\b(?:(?P<whole>{_CARDINAL})\s+and\s+)?(?P<num>{_CARDINAL})[\s-]+(?P<den>{'|'.join(_DENOMINATORS)})\b",
    re.IGNORECASE,
)
# A chance written as a count: "a 1 in 4 chance", "3 out of 8", "one-in-six chance" (only beside a chance word).
_CHANCE = re.compile(r"\b(?:chance|probability|likelihood|odds|likely)\b", re.IGNORECASE)
_COUNT_RATIO = re.compile(r"(?<![\d.])(\d+)[\s-]+(?:in|out[\s-]+of)[\s-]+(\d+)(?![\d.])", re.IGNORECASE)


# Per mille is a thousandth, not a percent: "40 per mille" is 40/1000.
_PER_MILLE = re.compile(r"(\d+(?:\.\d+)?)\s*(?:‰|per\s*mill?e\b|permill?e\b|per\s+thousand\b)", re.IGNORECASE)


# Old counting words: "two dozen" 24, "one gross" 144, "four score and seven" 87 (a baker's dozen is 13).
_COUNTING_WORDS = re.compile(
    r"\b(?:(?P<n>a|an|one|two|three|four|five|six|seven|eight|nine|ten|half\s+a|\d+)[\s-]+)?(?P<baker>baker'?s\s+)?"
    r"(?P<unit>dozen|gross|score)\b(?:\s+and\s+(?P<plus>one|two|three|four|five|six|seven|eight|nine|ten|\d+)\b)?",
    re.IGNORECASE,
)
_COUNTS = {"dozen": 12, "gross": 144, "score": 20}
# "two point five" -> 2.5 once the words are digits ("2 point 5", "0 point 7 5").
_POINT_WORD = re.compile(r"(?<![\w.])(\d+)\s+point\s+(\d+(?:[\s-]\d)*)(?![\w.])", re.IGNORECASE)
_DIGIT_NAMES = tuple(sorted((w for w, v in ONES.items() if v < 10), key=ONES.__getitem__))  # zero ... nine
_SPOKEN_DECIMALS = re.compile(rf"\bpoint((?:[\s-]+(?:{'|'.join(_DIGIT_NAMES)}|\d))+)\b", re.IGNORECASE)


def _counted(m: re.Match[str]) -> str:
    """A count in dozens, grosses or scores as its number; a bare "score" or "gross" (a game's score, gross pay)
    stays a word."""
    unit, n = m.group("unit").lower(), (m.group("n") or "").lower()
    if not n and (unit != "dozen" or not m.group("baker")):
        return m.group(0)
    count = 13 if m.group("baker") else _COUNTS[unit]
    if n.startswith("half"):
        total = Fraction(count, 2)
    else:
        total = Fraction(1 if n in ("", "a", "an") else int(n) if n.isdigit() else _WORDS[n]) * count
    if plus := m.group("plus"):
        total += int(plus) if plus.isdigit() else _WORDS[plus.lower()]
    return str(total)


def _fraction_words(text: str) -> str:
    def value(word: str) -> int:
        w = word.lower()
        return 1 if w in ("a", "an") else int(w) if w.isdigit() else _WORDS[w]

    def convert(m: re.Match[str]) -> str:
        after = m.string[m.end() :]
        if m.group("num").lower() in ("a", "an") and not re.match(r"\s+of\b|\s*(?:[.,;!?]|$)", after):
            return m.group(0)  # "a third time": an ordinal; "a third of", "a half.": a fraction
        num, den = value(m.group("num")), _DENOMINATORS[m.group("den").lower()]
        plural = m.group("den").lower().endswith("s") and m.group("den").lower() != "halves"
        if (num == 1) == plural and m.group("den").lower() not in ("halves",):
            return m.group(0)  # "one thirds", "two third": not a fraction as written
        frac = f"{num}/{den}"
        return f"{value(m.group('whole'))} {frac}" if m.group("whole") else frac

    return _FRACTION_WORDS.sub(convert, text)


# Chinese numerals (MGSM-zh, CMath, GAOKAO): 十二, 两千, 一百零五, 三分之二 (2/3), 三点五 (3.5), 负五 (-5).
_CJK_DIGITS = {
    "〇": 0,
    "零": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_CJK_UNITS = {"十": 10, "百": 100, "千": 1000}
_CJK_SECTIONS = {"万": 10**4, "亿": 10**8}
_CJK_INT = "[〇零一二两三四五六七八九十百千万亿]+"
_CJK_NUMBER = re.compile(
    rf"(负)?(?:({_CJK_INT})分之({_CJK_INT})|({_CJK_INT})(?:点([〇零一二三四五六七八九]+))?)"
)
# A lone digit character is a number only before a measure word ("五个", "七元"); "一共" is "altogether".
_CJK_MEASURE = re.compile(r"[个只本元米人天次块张支条辆岁克斤份页分秒小时公里千米厘米]")
# Digits with a myriad scale: 3万 (30000), 4.5万元, 1.2亿; 千 too (5千 is 5000), but 千米 / 千克 / 千瓦 are units
# (kilometre, kilogram, kilowatt), and a bare 千 before them is the unit's prefix, not a thousand.
_CJK_DIGIT_SCALE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(亿|億|万|萬|千(?![米克瓦帕焦赫]))")
_CJK_SCALE_VALUES = {"亿": 10**8, "億": 10**8, "万": 10**4, "萬": 10**4, "千": 1000}
_UNIT_PREFIX = re.compile(r"[米克瓦帕焦赫]")
_NON_LATIN_BESIDE_DIGIT = re.compile(
    r"(?<=[^\W\d_A-Za-z\u00c0-\u024f\u0370-\u03ff])(?=\d)|(?<=\d)(?=[^\W\d_A-Za-z\u00c0-\u024f\u0370-\u03ff])"
)
# South Asian scale words: 5 lakh (500000), 2 crore, 50 लाख, 2 करोड़.
_INDIAN_SCALE = re.compile(
    r"(?<![\d.])(\d+(?:\.\d+)?)\s*(lakhs?|lacs?|crores?|लाख|करोड़|करोड)(?!\w)", re.IGNORECASE
)
_INDIAN_SCALE_VALUES = {
    "lakh": 10**5,
    "lac": 10**5,
    "crore": 10**7,
    "लाख": 10**5,
    "करोड़": 10**7,
    "करोड": 10**7,
}


def _cjk_integer(run: str) -> int:
    total, section, current = 0, 0, 0
    for ch in run:
        if ch in _CJK_DIGITS:
            current = _CJK_DIGITS[ch]
        elif ch in _CJK_UNITS:
            section += (current or 1) * _CJK_UNITS[ch]
            current = 0
        else:
            total += (section + current) * _CJK_SECTIONS[ch]
            section, current = 0, 0
    return total + section + current


# Rates in tenths: a Chinese discount (七五折, 打8折, 8.5折: the price is 75%, 80%, 85% of the original) and a
# Japanese rate in 割 / 分 / 厘 (3割2分5厘 is 0.325, a batting average).
_CJK_DIGIT = "[一二三四五六七八九]"
_DISCOUNT = re.compile(rf"(?<![\d.〇零一二两三四五六七八九十])({_CJK_DIGIT}|[1-9])({_CJK_DIGIT}|\d)?\s*折")
_DISCOUNT_DECIMAL = re.compile(r"(?<![\d.])([1-9]\.\d)\s*折")
_WARI = re.compile(rf"(?<![\d.])(\d|{_CJK_DIGIT})割(?:\s*(\d|{_CJK_DIGIT})分)?(?:\s*(\d|{_CJK_DIGIT})厘)?")


def _cjk_digit(ch: str) -> int:
    return int(ch) if ch.isdigit() else _CJK_DIGITS[ch]


def _rates(text: str) -> str:
    text = _DISCOUNT_DECIMAL.sub(lambda m: f" {float(Fraction(m.group(1)) / 10):g} ", text)
    text = _DISCOUNT.sub(
        lambda m: f" 0.{_cjk_digit(m.group(1))}{_cjk_digit(m.group(2)) if m.group(2) else ''} ", text
    )

    def wari(m: re.Match[str]) -> str:
        value = sum(Fraction(_cjk_digit(g), 10**k) for k, g in enumerate(m.groups(), 1) if g is not None)
        return f" {float(value):g} "

    return _WARI.sub(wari, text)


# A fraction said denominator first, in digits or numerals: Chinese 5分之2, Japanese 5分の2, Korean 5분의 2 (2/5).
_CJK_FRACTION = re.compile(rf"(?<![\d.])(\d+|{_CJK_INT})\s*(?:分之|分の|분의)\s*(\d+|{_CJK_INT})(?![\d.])")


def _cjk_fraction(m: re.Match[str]) -> str:
    den, num = (int(g) if g.isdigit() else _cjk_integer(g) for g in m.groups())
    return f" {num}/{den} "


def _cjk_numbers(text: str) -> str:
    if "折" in text or "割" in text:
        text = _rates(text)
    text = _CJK_FRACTION.sub(_cjk_fraction, text)

    def convert(m: re.Match[str]) -> str:
        sign = "-" if m.group(1) else ""
        if m.group(2):
            return f" {sign}{_cjk_integer(m.group(3))}/{_cjk_integer(m.group(2))} "
        run = m.group(4)
        if (
            not sign
            and not m.group(5)
            and set(run) <= set(_CJK_UNITS)
            and _UNIT_PREFIX.match(m.string, m.end())
        ):
            return m.group(0)  # 千米: kilometre
        lone = len(run) == 1 and run in _CJK_DIGITS and not m.group(5) and not sign
        if lone and not _CJK_MEASURE.match(m.string, m.end()):
            return m.group(0)
        value = str(_cjk_integer(run))
        if m.group(5):
            value += "." + "".join(str(_CJK_DIGITS[c]) for c in m.group(5))
        return f" {sign}{value} "

    text = _CJK_DIGIT_SCALE.sub(lambda m: _scaled(m.group(1), _CJK_SCALE_VALUES[m.group(2)]), text)
    return _CJK_NUMBER.sub(convert, text) if re.search(_CJK_INT, text) else text


def _scaled(number: str, scale: int) -> str:
    value = Fraction(number) * scale
    return str(value.numerator) if value.denominator == 1 else str(float(value))


def numbers_from_words(text: str) -> str:
    """Numbers written in words or other scripts, as digits (see the module docstring)."""
    text = _cjk_numbers(_fraction_words(foreign_cardinals(text)))
    # Digits written against letters of a script without spaces ("游客3万人", "共36角") stand apart, as words.
    text = _NON_LATIN_BESIDE_DIGIT.sub(" ", text)
    text = _PER_MILLE.sub(r"\1/1000 ", text)
    text = _COUNTING_WORDS.sub(_counted, text)
    text = _SPOKEN_DECIMALS.sub(  # digit by digit: "point seven five" is .75, not .12
        lambda m: (
            "point "
            + "".join(w if w.isdigit() else str(_DIGIT_NAMES.index(w.lower())) for w in m.group(1).split())
        ),
        text,
    )

    def convert(m: re.Match[str]) -> str:
        parts = [p.lower() for p in re.split(r"[\s-]+", m.group(0).strip()) if p and p.lower() != "and"]
        if parts == ["one"] and _PRONOUN_ONE.search(m.string[: m.start()]):
            return m.group(0)  # "the first one", "this one": a pronoun, not 1
        if not parts or all(p in _SCALES for p in parts):
            return m.group(0)
        total, current = 0, 0
        for p in parts:
            if p in _WORDS:
                current += _WORDS[p]
            elif p == "hundred":
                current = (current or 1) * 100
            else:
                total += (current or 1) * _SCALES[p]
                current = 0
        trailing = " " if m.group(0).endswith((" ", "-")) else ""
        return f"{total + current}{trailing}"

    text = _WORD_RUN.sub(convert, text)
    text = _SIGN_WORD.sub("-", text)
    text = _DIGIT_SCALE.sub(
        lambda m: str(Fraction(m.group(1)) * _SCALES[m.group(2).lower()]).split("/")[0], text
    )

    def scaled(m: re.Match[str]) -> str:
        number, suffix = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        return str(Fraction(number) * _SUFFIXES[suffix]).split("/")[0]

    text = _SUFFIX_SCALE.sub(scaled, text)
    text = _INDIAN_SCALE.sub(
        lambda m: _scaled(m.group(1), _INDIAN_SCALE_VALUES[re.sub(r"s$", "", m.group(2).lower())]), text
    )
    text = _POINT_WORD.sub(lambda m: m.group(1) + "." + re.sub(r"[\s-]", "", m.group(2)), text)
    if _CHANCE.search(text):
        text = _COUNT_RATIO.sub(r"\1/\2", text)
    return _DOLLARS_AND_CENTS.sub(lambda m: f"${m.group(1)}.{int(m.group(2)):02d}", text)


# "12 dollars and 50 cents" is $12.50 (after the words are digits: "twelve dollars and fifty cents").
_DOLLARS_AND_CENTS = re.compile(r"\$?(\d+)\s*dollars?\s*(?:and\s+|,\s*)?(\d{1,2})\s*cents?\b", re.IGNORECASE)


# An answer that is a word for its value and holds no digit: "none" (0), "half the original" (1/2), "twice as long".
_NONE_WORD = re.compile(
    r"\s*(?:none|nobody|no\s*one|nothing|zero)(?:\s+(?:left|remains?|remaining|at\s+all|of\s+them))?\s*[.!]?\s*",
    re.IGNORECASE,
)
_MULTIPLIER = re.compile(
    r"\b(half|twice|double|triple|thrice|quadruple)\b(?=\s+(?:as|the|of|that|its|his|her|their|what))",
    re.IGNORECASE,
)
_MULTIPLIER_VALUES = {
    "half": Fraction(1, 2),
    "twice": Fraction(2),
    "double": Fraction(2),
    "triple": Fraction(3),
    "thrice": Fraction(3),
    "quadruple": Fraction(4),
}


def word_value(text: str) -> Fraction | None:
    """The value of an answer written as a word with no digit: "none", "nobody", "zero" are 0; one multiplier
    ("half the original", "twice as long", "triple the cost") is its factor; None otherwise."""
    if re.search(r"\d", text):
        return None
    if _NONE_WORD.fullmatch(text):
        return Fraction(0)
    found = _MULTIPLIER.findall(text)
    if len({w.lower() for w in found}) == 1:
        return _MULTIPLIER_VALUES[found[0].lower()]
    return None
