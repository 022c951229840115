"""Answers that are days of the week, months or dates — how ``math_verify`` compares them with a reference.

- ``compare_named_days``: a reference that is a weekday or a month (``\\text{Tuesday}``) against the one the answer
  names last — in full or abbreviated in English ("Tue", "Sept."), or in full in German, French, Spanish, Italian
  or Portuguese ("Samstag", "mardi", "julio").
- ``compare_dates``: a reference that is a day of a month ("April 11", "11 April", ``\\text{July 4, 2023}``)
  against the date the answer writes last: ISO ``2023-04-11``, European ``04.07.2023`` / ``14/03/2023``, US
  ``4/11/2023``, or a month's name with the day in any of those languages ("le 14 mars", "4. Juli"). A slashed
  date whose two readings (day/month, month/day) disagree on the verdict reads two ways: ``Unreadable``. A year,
  when both give one, must match.

Pure functions: ``(equal, reason)``, or None when the reference is not of their kind or the answer names none.
"""

from __future__ import annotations

import re

from rlar.tools.math_notations import Unreadable

__all__ = ["compare_dates", "compare_named_days"]

DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
    "december",
)  # fmt: skip

# Other languages' names, each to its English one (written in full; accents as written and without).
_FOREIGN_DAYS = {
    **dict(zip(("montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag"), DAYS, strict=True)),
    **dict(zip(("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"), DAYS, strict=True)),
    **dict(zip(("lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"), DAYS, strict=True)),
    **dict(zip(("lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato", "domenica"), DAYS, strict=True)),
    "sonnabend": "saturday", "miercoles": "wednesday", "sabado": "saturday",
}  # fmt: skip
_FOREIGN_MONTHS = {
    **dict(zip(("januar", "februar", "märz", "april", "mai", "juni", "juli", "august", "september", "oktober",
                "november", "dezember"), MONTHS, strict=True)),
    **dict(zip(("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
                "novembre", "décembre"), MONTHS, strict=True)),
    **dict(zip(("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
                "noviembre", "diciembre"), MONTHS, strict=True)),
    **dict(zip(("gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto", "settembre",
                "ottobre", "novembre", "dicembre"), MONTHS, strict=True)),
    "jänner": "january", "maerz": "march", "fevrier": "february", "aout": "august", "decembre": "december",
}  # fmt: skip


def _english(word: str, names: tuple[str, ...], foreign: dict[str, str]) -> str | None:
    w = word.lower()
    if w in foreign:
        return foreign[w]
    if not word[0].isupper():  # "may" the verb is no month, "sun" no day
        return None
    return next(
        (n for n in names if w == n or (len(w) >= 3 and n.startswith(w) and (w != "may" or n == "may"))), None
    )


def compare_named_days(gold: str, answer: str) -> tuple[bool, str] | None:
    """A weekday or month reference against the one the answer names last (module docstring)."""
    g = re.sub(r"\\text\{|\}|\$|\.", "", gold).strip().lower()
    names, foreign = (
        (DAYS, _FOREIGN_DAYS) if g in DAYS else (MONTHS, _FOREIGN_MONTHS) if g in MONTHS else ((), {})
    )
    if not names:
        return None
    said = [
        n for word in re.findall(r"[^\W\d_]+", answer) if (n := _english(word, names, foreign)) is not None
    ]
    if not said:
        return None
    same = said[-1] == g
    return same, f"names {said[-1].capitalize()}"


_MONTH_WORD = r"[^\W\d_]{3,12}\.?"
_GOLD_DATE = re.compile(
    rf"^\s*(?:(?P<m1>{_MONTH_WORD})\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?"
    rf"(?P<m2>{_MONTH_WORD}))\s*(?:,?\s*(?P<y>\d{{4}}))?\s*\.?\s*$",
    re.IGNORECASE,
)
_ISO = re.compile(r"(?<![\d.])(\d{4})-(\d{1,2})-(\d{1,2})(?![\d.])")
_DOTTED = re.compile(r"(?<![\d.])(\d{1,2})\.(\d{1,2})\.(\d{4})(?![\d])")
_SLASHED = re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})(?:/(\d{4}))?(?![\d/])")
_NAMED = re.compile(
    rf"(?<![\d.])(?:(?P<d1>\d{{1,2}})(?:st|nd|rd|th|er|\.|º)?\s+(?:de\s+|of\s+)?(?P<m1>{_MONTH_WORD})"
    rf"|(?P<m2>{_MONTH_WORD})\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?(?![\d.,]\d))(?:,?\s*(?:de\s+)?(?P<y>\d{{4}}))?",
    re.IGNORECASE,
)

Date = tuple[int, int, int | None]  # (month, day, year)


def _month(word: str) -> int | None:
    name = _english(word.rstrip(".").capitalize(), MONTHS, _FOREIGN_MONTHS)
    return MONTHS.index(name) + 1 if name else None


def _valid(month: int, day: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= 31


def _answer_dates(text: str) -> list[tuple[int, list[Date]]]:
    """(position, readings) of each date the text writes; two readings for a slashed date both ways valid."""
    found: list[tuple[int, list[Date]]] = []
    for m in _ISO.finditer(text):
        if _valid(int(m.group(2)), int(m.group(3))):
            found.append((m.start(), [(int(m.group(2)), int(m.group(3)), int(m.group(1)))]))
    for m in _DOTTED.finditer(text):
        if _valid(int(m.group(2)), int(m.group(1))):
            found.append((m.start(), [(int(m.group(2)), int(m.group(1)), int(m.group(3)))]))
    for m in _SLASHED.finditer(text):
        a, b = int(m.group(1)), int(m.group(2))
        year = int(m.group(3)) if m.group(3) else None
        readings = [(b, a, year)] if _valid(b, a) else []  # day/month
        if _valid(a, b) and (a, b) != (b, a):
            readings.append((a, b, year))  # month/day
        if readings and m.group(3):  # "3/4" alone is a fraction
            found.append((m.start(), readings))
    for m in _NAMED.finditer(text):
        month = _month(m.group("m1") or m.group("m2"))
        day = int(m.group("d1") or m.group("d2"))
        if month and _valid(month, day):
            year = int(m.group("y")) if m.group("y") else None
            found.append((m.start(), [(month, day, year)]))
    return sorted(found, key=lambda f: f[0])


def compare_dates(gold: str, answer: str) -> tuple[bool, str] | None:
    """A day-of-a-month reference against the date the answer writes last (module docstring)."""
    g = _GOLD_DATE.match(re.sub(r"\\text\{|\}|\$", "", gold))
    if g is None:
        return None
    month = _month(g.group("m1") or g.group("m2"))
    if month is None:
        return None
    day = int(g.group("d1") or g.group("d2"))
    year = int(g.group("y")) if g.group("y") else None
    dates = _answer_dates(answer)
    if not dates:
        return None

    def same(reading: Date) -> bool:
        return reading[:2] == (month, day) and (year is None or reading[2] is None or reading[2] == year)

    readings = dates[-1][1]
    verdicts = {same(r) for r in readings}
    if len(verdicts) > 1:
        raise Unreadable("a date that reads as day/month and as month/day")
    m, d, y = readings[0]
    return verdicts.pop(), f"the date {MONTHS[m - 1].capitalize()} {d}{f', {y}' if y else ''}"
