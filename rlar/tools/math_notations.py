"""Notations of final answers that neither the number rules nor the math-verify library read: the layer of
``math_verify`` that decides first on clock times, number bases, residues, angles with units, ratios, money in
cents, sizes ("3 \\times 2"), vectors and complex numbers in polar form.

Each reader recognises its notation in the reference (after ``rlar.tools.answer_chars.read_chars``) and finds it in
the response's final answer, which may be a sentence. ``compare(gold, answer, evaluate)`` returns ``(equivalent,
reason)`` when a notation applies, None when none does (the number rules and the library judge the pair), and
raises :class:`Unreadable` when the answer is written in a way that has two readings, one right and one wrong
(a 12-hour time without a.m./p.m. where the reference is in the afternoon): the tool abstains then.

- clock times: ``15:45``, ``3:45 p.m.``, ``3 PM``, noon, midnight. A reference with a.m./p.m. or an hour of 0 or
  13-23 is one time of the day; one written 1:00-12:59 without a marker is either. Two different times in the
  answer are two answers (0).
- number bases: ``1011_2``, ``1011_{2}``, ``(1011)_2``, ``0x1F``, ``0b101``, ``0o17``, "1011 in base 2". Equal
  values are equal; a bare answer to a reference in base b counts in base b (MATH writes answers so) or as a
  decimal value.
- residues: ``x \\equiv 4 \\pmod{9}``, ``4 (mod 9)``, ``4 \\bmod 9``. Against a plain reference the residue written
  must equal it (13 is not the remainder 4 of a division by 9); against a reference with a modulus, congruent
  values with the same modulus are equal.
- angles: a degree sign, ``^\\circ``, "degrees", "rad", "radians", degrees-minutes-seconds (``30^\\circ 15'30''``); a
  side with pi and no unit is in radians, a side with neither takes the other side's unit. Applied when one side
  has a unit; values are compared in radians, a decimal answer at the precision it is written to.
- ratios: ``3:4``, ``3 : 4``, ``3 \\colon 4``, ``2:3:4``, "3 to 4" (when the reference is a ratio): proportional parts
  (6:8 is 3:4); against a two-part ratio a fraction or number of its value counts too.
- money: ``$4.50``, ``\\$0.75``, ``450 cents``, ``450¢``: compared in cents when the answer names cents and the
  reference dollars (or the reverse); against a bare reference an amount in cents counts as written or in dollars.
- sizes: ``3 \\times 2``, ``8 ft \\times 6 ft`` (a product of bare numbers as a reference): the same sizes, in order
  when they have no unit ("3-by-2"; ``2 \\times 3`` is another shape); an answer of only the product reads two ways.
- vectors: ``\\langle 1, 2 \\rangle``, ``<1, 2>``, ``i - 2j + 3k`` (also with ``\\mathbf``, ``\\hat``, ``\\vec``),
  column or row matrices, each after a numeric factor or none, and a tuple against a vector: component by component,
  in order. Angle brackets or a matrix inside a longer expression are unreadable (the library would read
  ``\\langle 1, 2 \\rangle`` as the decimal 1.2).
- complex numbers in polar form: ``5e^{i\\pi/2}``, ``5(\\cos\\theta + i\\sin\\theta)``,
  ``5 \\operatorname{cis} \\theta``, ``a + bj``: evaluated as complex numbers (``i`` the imaginary unit) and
  compared numerically.

``evaluate`` (given by the tool) reads one LaTeX expression into a complex number (None when it cannot); it runs
under the tool's time limit. Nothing here evaluates text as code.
"""

from __future__ import annotations

import cmath
import math
import re
from collections.abc import Callable
from fractions import Fraction

from rlar.tools.written_numbers import numbers_from_words

__all__ = ["Unreadable", "compare"]

Evaluate = Callable[[str], complex | None]


class Unreadable(Exception):
    """The answer has two readings, one equal to the reference and one not: the tool abstains with ``reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _bare(text: str) -> str:
    """``text`` without math delimiters, ``\\text{}`` wrappers, ``\\boxed{}`` and a final period."""
    s = text.strip()
    s = re.sub(r"^\\boxed\s*\{(.*)\}$", r"\1", s, flags=re.S)
    s = re.sub(r"^(\$\$?)(.*)\1$", r"\2", s, flags=re.S).strip()
    s = re.sub(r"^\\\(|\\\)$|^\\\[|\\\]$", "", s).strip()
    s = re.sub(r"\\(?:text|mathrm|mbox|textrm|operatorname)\s*\{([^{}]*)\}", r"\1", s)
    s = re.sub(r"(?<!\\)\\[,;:! ]", " ", s)
    return re.sub(r"\s+", " ", s).strip().rstrip(".").strip()


# -- clock times --------------------------------------------------------------------------------------------------
_MERIDIEM = r"(?:\s*([ap])\.?\s?m\b\.?)"
_TIME = re.compile(rf"(?<![\d:.,])(\d{{1,2}}):(\d{{2}})(?::(\d{{2}}))?(?![\d:]){_MERIDIEM}?", re.I)
_HOUR = re.compile(rf"(?<![\d:.,])(\d{{1,2}}){_MERIDIEM}", re.I)
_NAMED_TIME = {"noon": 12 * 60, "midday": 12 * 60, "midnight": 0}


def _times(text: str) -> list[tuple[int, bool]]:
    """(minutes after midnight, absolute) of every clock time in ``text``; ``absolute`` False for a 12-hour time
    written without a.m./p.m. (then the minutes are those of its a.m. reading)."""
    out: list[tuple[int, bool]] = []
    for m in _TIME.finditer(text):
        hour, minute = int(m.group(1)), int(m.group(2))
        if hour > 24 or minute > 59:
            continue
        out.append(_clock(hour, minute, m.group(4)))
    for m in _HOUR.finditer(text):
        hour = int(m.group(1))
        if 1 <= hour <= 12:
            out.append(_clock(hour, 0, m.group(2)))
    for word, minutes in _NAMED_TIME.items():
        if re.search(rf"\b{word}\b", text, re.I):
            out.append((minutes, True))
    return out


def _clock(hour: int, minute: int, meridiem: str | None) -> tuple[int, bool]:
    if meridiem:
        hour = hour % 12 + (12 if meridiem.lower() == "p" else 0)
        return hour * 60 + minute, True
    return (hour % 24) * 60 + minute, not 1 <= hour <= 12


def _compare_times(gold: str, answer: str) -> tuple[bool, str] | None:
    g = _bare(gold)
    if not (_TIME.fullmatch(g) or _HOUR.fullmatch(g) or g.lower() in _NAMED_TIME) or not _times(g):
        return None
    (g_min, g_abs), *_ = _times(g)
    found = _times(answer)
    if not found:
        return False, "no clock time in the answer"
    if len({t for t, _ in found}) > 1:
        return False, "several different times in the answer"
    a_min, a_abs = found[-1]
    if not g_abs or not a_abs:
        if a_min % 720 != g_min % 720:
            return False, f"another time ({a_min // 60}:{a_min % 60:02d})"
        if g_abs and not a_abs and a_min != g_min:
            raise Unreadable(
                "a 12-hour time without a.m. or p.m.: it is the reference's time in one reading only"
            )
        return True, "the same time of day"
    same = a_min == g_min
    return same, "the same time of day" if same else f"another time ({a_min // 60}:{a_min % 60:02d})"


# -- number bases -------------------------------------------------------------------------------------------------
_BASED = re.compile(r"(?<![\w\\])\(?([0-9A-Za-z]+)\)?_\{?(\d{1,2})\}?(?![\w])")
_PREFIXED = re.compile(r"(?<![\w.])0([xXbBoO])([0-9A-Fa-f]+)\b")
_BASE_WORDS = re.compile(r"(?<![\w.])([0-9A-Za-z]+)\s*\(?\s*(?:in\s+)?base[\s-]*(\d{1,2})\s*\)?", re.I)
_PREFIX_BASE = {"x": 16, "b": 2, "o": 8}


def _in_base(digits: str, base: int) -> int | None:
    if not 2 <= base <= 36 or not re.search(r"\d", digits):
        return None
    try:
        return int(digits, base)
    except ValueError:
        return None


def _based(text: str) -> list[tuple[int, str, int]]:
    """(value, digits, base) of every number written with its base in ``text``."""
    out = []
    for m in _BASED.finditer(text):
        value = _in_base(m.group(1), int(m.group(2)))
        if value is not None:
            out.append((value, m.group(1), int(m.group(2))))
    for m in _PREFIXED.finditer(text):
        value = _in_base(m.group(2), _PREFIX_BASE[m.group(1).lower()])
        if value is not None:
            out.append((value, m.group(2), _PREFIX_BASE[m.group(1).lower()]))
    for m in _BASE_WORDS.finditer(text):
        value = _in_base(m.group(1), int(m.group(2)))
        if value is not None:
            out.append((value, m.group(1), int(m.group(2))))
    return out


def _compare_bases(gold: str, answer: str) -> tuple[bool, str] | None:
    g = _bare(gold)
    g_based = _based(g)
    whole = g_based and (_BASED.fullmatch(g) or _PREFIXED.fullmatch(g) or _BASE_WORDS.fullmatch(g))
    a_based = _based(_bare(answer))
    if whole:
        value, _, base = g_based[0]
        if a_based:
            values = {v for v, _, _ in a_based}
            same = values == {value}
            return same, "the same number" if same else f"another number ({sorted(values)[-1]} in decimal)"
        tokens = re.findall(r"(?<![\w.])[0-9A-Za-z]+(?![\w.])", _bare(answer))
        tokens = [t for t in tokens if re.search(r"\d", t)]
        if not tokens:
            return False, "no number in the answer"
        last = tokens[-1]
        readings = {_in_base(last, base), int(last) if last.isdigit() else None} - {None}
        same = value in readings
        return same, f"{last} {'is' if same else 'is not'} {g} (in base {base} or in decimal)"
    if a_based and re.fullmatch(r"-?\d+", g):
        values = {v for v, _, _ in a_based}
        same = values == {int(g)}
        return same, "the same number" if same else "another number"
    return None


# -- residues -----------------------------------------------------------------------------------------------------
_MODULUS = re.compile(
    r"\\pmod\s*\{?\s*(\d+)\s*\}?|\(\s*mod(?:ulo)?\s+(\d+)\s*\)|\\(?:bmod|mod)\s*\{?\s*(\d+)\s*\}?|\bmod(?:ulo)?\s+(\d+)",
    re.I,
)
_RESIDUE = re.compile(r"(-?\d+)\s*$")


def _residue(text: str) -> tuple[int, int] | None:
    """(residue, modulus) of the last ``r (mod n)`` in ``text``."""
    found = list(_MODULUS.finditer(text))
    if not found:
        return None
    m = found[-1]
    modulus = int(next(g for g in m.groups() if g is not None))
    after = re.match(r"\s*=\s*(-?\d+)\b", text[m.end() :])  # "13 mod 9 = 4" states 4
    before = _RESIDUE.search(text[: m.start()])
    if modulus == 0 or (before is None and after is None):
        return None
    return int((after or before).group(1)), modulus  # type: ignore[union-attr]


def _compare_residues(gold: str, answer: str) -> tuple[bool, str] | None:
    g, a = _residue(_bare(gold)), _residue(_bare(answer))
    if a is None and g is None:
        return None
    if g is None:
        plain = re.fullmatch(r"-?\d+", _bare(gold))
        if not plain or a is None:
            return None
        same = a[0] == int(plain.group(0))
        return same, f"residue {a[0]} (mod {a[1]})" + ("" if same else f", not {plain.group(0)}")
    if a is None:
        numbers = re.findall(r"(?<![\w.])-?\d+(?![\w.])", _bare(answer))
        if not numbers:
            return False, "no residue in the answer"
        value = int(numbers[-1])
        same = (value - g[0]) % g[1] == 0
        return same, f"{value} {'is' if same else 'is not'} {g[0]} (mod {g[1]})"
    if a[1] != g[1]:
        return False, f"another modulus ({a[1]}, not {g[1]})"
    same = (a[0] - g[0]) % g[1] == 0
    return same, f"{a[0]} {'is' if same else 'is not'} {g[0]} (mod {g[1]})"


# -- angles -------------------------------------------------------------------------------------------------------
_DEG = r"(?:\^\s*\{?\s*\\circ\s*\}?|\\degree|°|\s*\bdeg(?:rees?)?\b)"
_RAD = r"(?:\s*\b(?:rad|radians?)\b)"
_DMS = re.compile(
    rf"(-?\d+(?:\.\d+)?)\s*{_DEG}\s*(?:(\d+(?:\.\d+)?)\s*(?:'|\^\s*\{{?\s*\\prime\s*\}}?|\s*\bmin(?:utes?)?\b)"
    rf"\s*(?:(\d+(?:\.\d+)?)\s*(?:''|\"|\^\s*\{{?\s*\\prime\\prime\s*\}}?|\s*\bsec(?:onds?)?\b))?)",
    re.I,
)
_ANGLE = re.compile(rf"(.*?)\s*({_DEG}|{_RAD})\s*$", re.I | re.S)


def _angle(text: str, evaluate: Evaluate) -> tuple[float, str, int | None] | None:
    """(value, unit, decimals) of an angle: unit "deg", "rad" or "" (none written); ``decimals`` when the value
    is a decimal written to that many places (None when it is exact)."""
    s = _bare(text)
    s = re.sub(r"^.*?\b(?:is|are|equals?|measures?|of)\s+(?=[-\d\\(])|^[A-Za-z]\s*=\s*", "", s, flags=re.I)
    # "\\theta = 60^\\circ", "\\angle ABC = \\frac{\\pi}{2}": the angle is what it equals
    s = s.replace("$", " ").rsplit("=", 1)[-1].strip()
    if m := _DMS.search(s):
        deg, minutes, seconds = (float(g) if g else 0.0 for g in m.groups())
        sign = -1.0 if deg < 0 or m.group(1).startswith("-") else 1.0
        return sign * (abs(deg) + minutes / 60 + seconds / 3600), "deg", None
    unit = ""
    if m := _ANGLE.fullmatch(s):
        s, unit = m.group(1).strip(), "rad" if re.search(_RAD, m.group(2), re.I) else "deg"
    if not s or re.search(r"[A-Za-z]{3,}", re.sub(r"\\[A-Za-z]+", "", s)):
        return None
    value = evaluate(s)
    if value is None or abs(value.imag) > 1e-12:
        return None
    decimals = len(m.group(1)) if (m := re.fullmatch(r"-?\d+\.(\d+)", s)) else None
    if not unit and "\\pi" in s:
        unit = "rad"
    return value.real, unit, decimals


def _compare_angles(gold: str, answer: str, evaluate: Evaluate) -> tuple[bool, str] | None:
    marked = re.compile(rf"{_DEG}|{_RAD}", re.I)
    if not marked.search(gold) and not marked.search(answer):
        return None
    if not marked.search(gold) and "\\pi" not in gold:
        return None  # a plain number against an angle with a unit: the number rules read it
    g, a = _angle(gold, evaluate), _angle(answer, evaluate)
    if g is None or a is None:
        return None
    g_unit, a_unit = g[1] or a[1], a[1] or g[1]
    if not g_unit or not a_unit:
        return None
    g_rad = g[0] * (math.pi / 180 if g_unit == "deg" else 1.0)
    a_rad = a[0] * (math.pi / 180 if a_unit == "deg" else 1.0)
    if a[2] is not None and g[2] is None:  # a decimal answer: equal when the exact value rounds to it
        exact = g_rad * (180 / math.pi if a_unit == "deg" else 1.0)
        same = abs(round(exact, a[2]) - a[0]) < 10 ** -(a[2] + 3) or abs(exact - a[0]) <= 0.5 * 10 ** -a[2]
    else:
        same = math.isclose(g_rad, a_rad, rel_tol=1e-9, abs_tol=1e-12)
    shown = f"{a[0]:g} {a_unit}"
    return same, f"the same angle ({shown})" if same else f"another angle ({shown})"


# -- dimensions ---------------------------------------------------------------------------------------------------
# "3 \\times 2", "8 ft \\times 6 ft", "12 cm by 5 cm", "3-by-2": sizes, in order, each with an optional unit word.
_DIM_UNIT = r"(?:\s*(?:[A-Za-z]{1,6}(?:\^\{?[23]\}?)?|''?|\")(?![A-Za-z]))?"
_DIM_PART = rf"(\d+(?:\.\d+)?){_DIM_UNIT}"
_DIM_SEP = r"\s*(?:\\times|×|\\cdot|\*|(?<=\d)\s*x(?=\s*\d)|\s+x\s+|-?\s*by\s*-?)\s*"
_DIMENSIONS = re.compile(
    rf"(?<![\w.^]){_DIM_PART}{_DIM_SEP}{_DIM_PART}(?:{_DIM_SEP}{_DIM_PART})?(?![\w.^]|\s*\^)"
)


def _sizes(m: re.Match[str]) -> tuple[tuple[Fraction, str], ...]:
    """The sizes of one match of ``_DIMENSIONS``: (number, unit word or "") in order."""
    text = m.group(0)
    out = []
    for part in re.finditer(rf"{_DIM_PART}", text):
        unit = text[part.end(1) : part.end()].strip()
        out.append((Fraction(part.group(1)), unit))
    return tuple(out)


def _compare_dimensions(gold: str, answer: str) -> tuple[bool, str] | None:
    """A reference that is a product of two or three bare numbers ("3 \\times 2", "8 ft \\times 6 ft") states sizes,
    not the product (a final answer that means 6 is written 6): an answer must give the same sizes ("3-by-2", "8 ft
    by 6 ft"), in the same order when they have no unit (rows by columns: "2 \\times 3" is another shape); sides
    with a unit in any order. An answer that gives only the product reads two ways."""
    g_text = _bare(gold)
    g_match = _DIMENSIONS.fullmatch(g_text)
    if g_match is None or re.search(r"\\cdot|\*", g_text):
        return None
    g = _sizes(g_match)
    a_text = _bare(answer)
    found = [_sizes(m) for m in _DIMENSIONS.finditer(a_text)]
    if not found:
        product = math.prod(x for x, _ in g)
        values = [Fraction(v) for v in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", a_text)]
        if values and values[-1] == product:
            raise Unreadable("the reference gives sizes, the answer their product")
        return False, "no sizes in the answer"
    a = found[-1]
    if len(a) != len(g):
        return False, f"{len(a)} sizes where the reference gives {len(g)}"
    if any(gu and au and gu.lower() != au.lower() for (_, gu), (_, au) in zip(g, a, strict=True)):
        return None  # other units: the quantity rules compare them
    if all(u for _, u in g):  # lengths of sides: a rectangle 8 ft by 6 ft is one 6 ft by 8 ft
        same = sorted(x for x, _ in g) == sorted(x for x, _ in a)
        return same, "the same sizes" if same else "other sizes"
    same = [x for x, _ in g] == [x for x, _ in a]  # rows by columns: order matters
    return same, "the same sizes in the same order" if same else "other sizes, or the same in another order"


# -- ratios -------------------------------------------------------------------------------------------------------
_PART = r"\d+(?:\.\d+)?"
_RATIO_SEP = r"\s*(?::|\\colon|∶)\s*"
_RATIO = re.compile(rf"(?<![\w.:]){_PART}(?:{_RATIO_SEP}{_PART})+(?![\w.:])")
_RATIO_WORDS = re.compile(rf"(?<![\w.]){_PART}(?:\s+to\s+{_PART})+(?![\w.])", re.I)


def _parts(text: str) -> list[Fraction]:
    return [Fraction(p) for p in re.findall(_PART, text)]


def _proportional(g: list[Fraction], a: list[Fraction]) -> bool:
    if len(g) != len(a) or not any(g) or not any(a):
        return False
    return all(x * a[0] == y * g[0] for x, y in zip(g, a, strict=True))


def _compare_ratios(gold: str, answer: str) -> tuple[bool, str] | None:
    g_text = _bare(gold)
    if not _RATIO.fullmatch(g_text):
        return None
    g = _parts(g_text)
    a_text = _bare(answer)
    found = [_parts(m.group(0)) for m in _RATIO.finditer(a_text)] or [
        _parts(m.group(0)) for m in _RATIO_WORDS.finditer(a_text)
    ]
    if found:
        distinct = {tuple(x / p[0] for x in p) if p[0] else tuple(p) for p in found}
        if len(distinct) > 1:
            return False, "several different ratios in the answer"
        same = _proportional(g, found[-1])
        return same, "the same ratio" if same else "another ratio"
    if len(g) == 2 and g[1]:
        m = re.fullmatch(r"(?:.*?\s)?(-?\d+(?:\.\d+)?)(?:\s*/\s*(\d+(?:\.\d+)?))?", a_text)
        if m is None:
            return False, "no ratio in the answer"
        value = Fraction(m.group(1)) / (Fraction(m.group(2)) if m.group(2) else 1)
        same = value == g[0] / g[1]
        return same, f"the ratio's value {'is' if same else 'is not'} {float(value):g}"
    return False, "no ratio in the answer"


# -- money --------------------------------------------------------------------------------------------------------
_AMOUNT = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_DOLLARS = re.compile(rf"\\?\$\s*({_AMOUNT})")
_CENTS = re.compile(
    rf"({_AMOUNT})\s*(?:¢|\\(?:text|mathrm)\s*\{{\s*cents?\s*\}}|\b(?:cents?|pence|paise|kopecks?)\b|\\cent\b|копе[ейк]\w*)",
    re.I,
)
# 角 (jiao) is a tenth of a yuan: "36角" is 3.6 yuan.
_JIAO = re.compile(rf"({_AMOUNT})\s*角")


def _amount(text: str) -> Fraction:
    return Fraction(text.replace(",", ""))


def _compare_money(gold: str, answer: str) -> tuple[bool, str] | None:
    g, a = _bare(gold), numbers_from_words(_bare(answer))
    written = [_amount(m.group(1)) for m in _CENTS.finditer(a)]
    a_cents = written or [_amount(m.group(1)) * 10 for m in _JIAO.finditer(a)]
    written = written or [_amount(m.group(1)) for m in _JIAO.finditer(a)]
    g_cents = _CENTS.fullmatch(g)
    g_dollars = _DOLLARS.fullmatch(g)
    if g_cents:
        a_dollars = [_amount(m.group(1)) * 100 for m in _DOLLARS.finditer(a)]
        if not a_dollars or a_cents:
            return None
        same = a_dollars[-1] == _amount(g_cents.group(1))
        return same, f"{float(a_dollars[-1]):g} cents"
    if not a_cents:
        return None
    if g_dollars:
        same = a_cents[-1] == _amount(g_dollars.group(1)) * 100
        return same, f"{float(a_cents[-1]):g} cents"
    if re.fullmatch(_AMOUNT, g):
        value = _amount(g)
        if a_cents[-1] == value * 100:
            return True, f"{float(a_cents[-1]):g} cents"
        if written[-1] == value:  # 45 cents (or 45角) for a reference 45: in which unit is the reference?
            raise Unreadable(f"{float(value):g} of a currency's subunit, and the reference {g} names no unit")
        return False, f"{float(a_cents[-1]):g} cents"
    return None


# -- vectors ------------------------------------------------------------------------------------------------------
_LANGLE = re.compile(r"\\langle\s*(.+?)\s*\\rangle|^<\s*([^<>=]+?,[^<>=]+?)\s*>$", re.S)
_UNIT_VECTOR = re.compile(
    r"([+-]?)\s*([^+\-]*?)\s*(?:\\(?:mathbf|hat|vec|boldsymbol|bf)\s*\{?\s*([ijk])\s*\}?|(?<![A-Za-z\\])([ijk])(?![A-Za-z]))"
)
_MATRIX = re.compile(r"\\begin\{[pbBvV]?matrix\}(.*?)\\end\{[pbBvV]?matrix\}", re.S)
_TUPLE = re.compile(r"\(\s*([^()]+?,[^()]+?)\s*\)")


def _vector(text: str, tuples: bool) -> list[str] | None:
    """The components of the vector written in ``text`` (angle brackets, unit vectors i/j/k with j or k or a
    vector mark among them, a one-row or one-column matrix, each possibly after a scalar factor; a tuple when
    ``tuples``), else None. :class:`Unreadable` for angle brackets or a matrix inside a longer expression."""
    s = re.sub(r"\\([ij])math(?![A-Za-z])", r"\1", _bare(text))  # dotless \\imath, \\jmath: the unit vectors
    if regions := re.findall(r"\$([^$]+)\$", s):  # "Therefore $v = 3i + 4j$": the mathematics written
        s = regions[-1].strip()
    body = re.sub(
        r"^.*?\b(?:is|are|equals?)\s+|^\\?vec\{?\w\}?\s*=\s*|^[A-Za-z](?:\^\{-?\d+\})?\s*=\s*", "", s
    ).strip()
    form = _LANGLE.search(body) or _MATRIX.search(body)
    if form is None:
        return _unit_vector(body) or (_tuple(s) if tuples else None)
    if form.re is _MATRIX:
        rows = [r for r in re.split(r"\\\\", form.group(1)) if r.strip()]
        if len(rows) > 1 and any("&" in r for r in rows):
            return None  # a matrix, not a vector: math_forms reads it
        cells = [c.strip() for r in rows for c in r.split("&")]
    else:
        cells = [c.strip() for c in (form.group(1) or form.group(2)).split(",")]
    factor, after = body[: form.start()].strip(), body[form.end() :].strip()
    numeric = re.fullmatch(r"[-+\d./(){}\s^]*", re.sub(r"\\(?:[dt]?frac|sqrt|pi|cdot)", "", factor))
    if after or not numeric:
        raise Unreadable(f"a vector inside a longer expression: {body[:60]}")
    return [f"{factor} \\cdot ({c})" if factor else c for c in cells]


def _tuple(text: str) -> list[str] | None:
    found = _TUPLE.findall(text)
    return [c.strip() for c in found[-1].split(",")] if found else None


def _unit_vector(body: str) -> list[str] | None:
    """The components of ``body`` written with unit vectors i, j, k (at least two of them, or one marked)."""
    units = re.findall(r"(?<![A-Za-z\\])[ijk](?![A-Za-z])", body)
    marked = re.search(r"\\(?:mathbf|hat|vec|boldsymbol|bf)\s*\{?\s*[ijk]", body)
    if marked or (len(units) >= 2 and len(set(units)) == len(units) and set(units) != {"i"}):
        comps = {"i": "0", "j": "0", "k": "0"}
        rest = body
        for m in _UNIT_VECTOR.finditer(body):
            unit = m.group(3) or m.group(4)
            coefficient = m.group(2).strip().strip("*").strip() or "1"
            comps[unit] = f"{m.group(1) or ''}{coefficient}".replace("+", "")
            rest = rest.replace(m.group(0), " ", 1)
        if rest.strip():
            return None
        return [comps["i"], comps["j"]] + ([comps["k"]] if comps["k"] != "0" or "k" in body else [])
    return None


def _compare_vectors(gold: str, answer: str, evaluate: Evaluate) -> tuple[bool, str] | None:
    g = _vector(gold, tuples=False)
    a = _vector(answer, tuples=g is not None)
    if g is None and a is not None:
        g = _vector(gold, tuples=True)
        if g is None:
            return False, "a vector where the reference is not one"
    if g is None:
        return None
    if a is None:
        return False, "no vector in the answer"
    if len(g) != len(a):
        return False, f"{len(a)} components, not {len(g)}"
    for x, y in zip(g, a, strict=True):
        vx, vy = evaluate(x), evaluate(y)
        if vx is None or vy is None:
            raise Unreadable(f"a vector component not read: {(x if vx is None else y)[:40]}")
        if not cmath.isclose(vx, vy, rel_tol=1e-9, abs_tol=1e-12):
            return False, f"another component ({y} for {x})"
    return True, "the same vector"


# -- complex numbers in polar form ------------------------------------------------------------------------------
_POLAR = re.compile(
    r"e\^\s*\{[^{}]*\bi\b|e\^\s*\{[^{}]*i[^{}]*\}|\\?(?:operatorname\{)?cis\b|\\cos.*?\bi\s*\\sin", re.S
)
_IMAGINARY = re.compile(r"(?<![A-Za-z\\])i(?![A-Za-z])")
_ENGINEERING = re.compile(r"(?<![A-Za-z\\])j(?![A-Za-z])")


def _cis(text: str) -> str:
    """``r cis x`` written as ``r(\\cos x + i\\sin x)`` (its argument: a bracketed group or one token)."""
    pattern = re.compile(
        r"\\?(?:operatorname\s*\{\s*cis\s*\}|text\s*\{\s*cis\s*\}|cis)\s*(\([^()]*\)|\{[^{}]*\}|\S+)"
    )

    def repl(m: re.Match[str]) -> str:
        arg = m.group(1)
        if arg[0] in "({":
            arg = arg[1:-1]
        return f"(\\cos({arg}) + i\\sin({arg}))"

    return pattern.sub(repl, text)


def _compare_complex(gold: str, answer: str, evaluate: Evaluate) -> tuple[bool, str] | None:
    g, a = _bare(gold), _bare(answer)
    polar = _POLAR.search(g) or _POLAR.search(a)
    # Engineering notation: a side written with j and no i uses j for the imaginary unit.
    g_i, a_i = (_ENGINEERING.sub("i", t) if not _IMAGINARY.search(t) else t for t in (g, a))
    if not polar and (g_i, a_i) == (g, a):
        return None
    g, a = g_i, a_i
    a = re.sub(r"^.*?\b(?:is|are|equals?)\s+|^[A-Za-z]\s*=\s*", "", a)
    gv, av = evaluate(_cis(g)), evaluate(_cis(a))
    if gv is None or av is None:
        return None
    same = cmath.isclose(gv, av, rel_tol=1e-9, abs_tol=1e-9)
    return same, f"{'the same' if same else 'another'} complex number ({av.real:.4g}{av.imag:+.4g}i)"


# -- answers that are words: no solution (the empty set), does not exist ---------------------------------------
_EMPTY = re.compile(
    r"\\(?:emptyset|varnothing)(?![A-Za-z])|∅|\\\{\s*(?:\\[,;: ]\s*)*\\\}|(?<![\\\w])\{\s*\}"
    r"|\bno\s+(?:real\s+)?(?:solutions?|roots?|such\s+(?:numbers?|values?|x))\b|\bempty\s+set\b"
    r"|\bhas\s+no\s+(?:real\s+)?(?:solutions?|roots?)\b|\b(?:is|are)\s+inconsistent\b",
    re.IGNORECASE,
)
_DNE = re.compile(
    r"\bDNE\b|\b(?:does\s+not|doesn't|do\s+not|fails?\s+to|cannot)\s+exist\b|\bnon-?existent\b", re.IGNORECASE
)
_VALUE_STATED = re.compile(r"=\s*-?\d|\bis\s+-?\d")


def _named_kind(text: str) -> str | None:
    """ "empty" or "dne" when ``text`` states one of those answers and no value beside it; None otherwise."""
    bare = re.sub(r"\\(?:text|mathrm|textbf|mbox)\s*\{([^{}]*)\}", r"\1", text)
    empty, dne = _EMPTY.search(bare), _DNE.search(bare)
    if (empty is None) == (dne is None) or _VALUE_STATED.search(bare):
        return None
    return "empty" if empty else "dne"


def _compare_named(gold: str, answer: str) -> tuple[bool, str] | None:
    """A reference that is no solution / the empty set (``\\emptyset``, ``\\{\\}``, "no solution") or "does not
    exist" (``\\text{DNE}``) against an answer that says the same in any of those ways: equal. An answer that says
    the other, or a value, is left to the rules after (None) unless it names the other kind: then not equal."""
    kind = _named_kind(gold)
    if kind is None or len(re.sub(r"\\text\{[^{}]*\}|\W", "", gold)) > 24:
        return None
    said = _named_kind(answer)
    if said is None:
        return None
    same = said == kind
    return same, f"states {'no solution (the empty set)' if said == 'empty' else 'that it does not exist'}"


def compare(gold: str, answer: str, evaluate: Evaluate, hedged: str = "") -> tuple[bool, str] | None:
    """``(equivalent, reason)`` when one of the notations of the module docstring applies to the pair, else None;
    :class:`Unreadable` when the answer reads two ways. ``hedged``: why the answer offers several values (from
    ``math_answer.final_answer``); it refuses an equivalence, except for a ratio, where "3 to 4" is one answer."""
    decided = _compare_named(gold, answer)
    if decided is not None:
        return decided  # "fails to exist (it oscillates between -1 and 1)" is one answer, not a hedge
    for reader in (
        _compare_times,
        _compare_bases,
        _compare_residues,
        _compare_dimensions,
        _compare_ratios,
        _compare_money,
    ):
        decided = reader(gold, answer)
        if decided is not None:
            if decided[0] and hedged and reader is not _compare_ratios:
                return False, f"hedged: {hedged}"
            return decided
    for with_values in (_compare_vectors, _compare_angles, _compare_complex):
        decided = with_values(gold, answer, evaluate)
        if decided is not None:
            return (False, f"hedged: {hedged}") if decided[0] and hedged else decided
    return None
