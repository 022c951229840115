"""Cardinal numbers written in words in German, French, Spanish, Italian and Portuguese, as digits — for answers
such as "Die Antwort lautet fünfundzwanzig." or "La réponse est soixante-dix."

``foreign_cardinals(text)`` rewrites the number words of a text only when the text is in one of those languages
(two or more of its function words, more than of any other of them), so that English words that are also number
words elsewhere ("once", "due", "cent", "elf", "sept") are never read as numbers in English. A number word is
segmented into parts (units, teens, tens, hundreds, thousands and the joining "und" / "et" / "y" / "e"):
"fünfundzwanzig" is 5 + 20, "soixante-dix" 60 + 10, "quatre-vingt-dix" 80 + 10, "veintitrés" 20 + 3,
"trecentoquaranta" 3 × 100 + 40, "dois mil e vinte" 2 × 1000 + 20. An article alone ("un", "eine", "uno", "um")
is not read as 1. Pure functions.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

__all__ = ["foreign_cardinals"]

# (value, kind): kind "n" adds, "h" multiplies what came before by 100, "k" by 1000, "j" joins.
_PARTS: dict[str, dict[str, tuple[int, str]]] = {
    "de": {
        "null": (0, "n"), "eins": (1, "n"), "ein": (1, "n"), "eine": (1, "n"), "zwei": (2, "n"), "drei": (3, "n"),
        "vier": (4, "n"), "fünf": (5, "n"), "sechs": (6, "n"), "sech": (6, "n"), "sieben": (7, "n"), "sieb": (7, "n"),
        "acht": (8, "n"), "neun": (9, "n"), "zehn": (10, "n"), "elf": (11, "n"), "zwölf": (12, "n"),
        "zwanzig": (20, "n"), "dreißig": (30, "n"), "dreissig": (30, "n"), "vierzig": (40, "n"),
        "fünfzig": (50, "n"), "sechzig": (60, "n"), "siebzig": (70, "n"), "achtzig": (80, "n"), "neunzig": (90, "n"),
        "hundert": (100, "h"), "tausend": (1000, "k"), "und": (0, "j"),
    },
    "fr": {
        "zéro": (0, "n"), "un": (1, "n"), "une": (1, "n"), "deux": (2, "n"), "trois": (3, "n"), "quatre": (4, "n"),
        "cinq": (5, "n"), "six": (6, "n"), "sept": (7, "n"), "huit": (8, "n"), "neuf": (9, "n"), "dix": (10, "n"),
        "onze": (11, "n"), "douze": (12, "n"), "treize": (13, "n"), "quatorze": (14, "n"), "quinze": (15, "n"),
        "seize": (16, "n"), "vingt": (20, "n"), "vingts": (20, "n"), "trente": (30, "n"), "quarante": (40, "n"),
        "cinquante": (50, "n"), "soixante": (60, "n"), "quatrevingt": (80, "n"), "quatrevingts": (80, "n"),
        "cent": (100, "h"), "cents": (100, "h"), "mille": (1000, "k"), "et": (0, "j"),
    },
    "es": {
        "cero": (0, "n"), "uno": (1, "n"), "una": (1, "n"), "un": (1, "n"), "dos": (2, "n"), "tres": (3, "n"),
        "trés": (3, "n"), "cuatro": (4, "n"), "cinco": (5, "n"), "seis": (6, "n"), "séis": (6, "n"),
        "siete": (7, "n"), "ocho": (8, "n"), "nueve": (9, "n"), "diez": (10, "n"), "once": (11, "n"),
        "doce": (12, "n"), "trece": (13, "n"), "catorce": (14, "n"), "quince": (15, "n"), "dieci": (10, "n"),
        "veinte": (20, "n"), "veinti": (20, "n"), "treinta": (30, "n"), "cuarenta": (40, "n"), "cincuenta": (50, "n"),
        "sesenta": (60, "n"), "setenta": (70, "n"), "ochenta": (80, "n"), "noventa": (90, "n"), "cien": (100, "n"),
        "ciento": (100, "n"), "doscientos": (200, "n"), "trescientos": (300, "n"), "cuatrocientos": (400, "n"),
        "quinientos": (500, "n"), "seiscientos": (600, "n"), "setecientos": (700, "n"), "ochocientos": (800, "n"),
        "novecientos": (900, "n"), "mil": (1000, "k"), "y": (0, "j"),
    },
    "it": {
        "zero": (0, "n"), "uno": (1, "n"), "un": (1, "n"), "una": (1, "n"), "due": (2, "n"), "tre": (3, "n"),
        "tré": (3, "n"), "quattro": (4, "n"), "cinque": (5, "n"), "sei": (6, "n"), "sette": (7, "n"),
        "otto": (8, "n"), "nove": (9, "n"), "dieci": (10, "n"), "undici": (11, "n"), "dodici": (12, "n"),
        "tredici": (13, "n"), "quattordici": (14, "n"), "quindici": (15, "n"), "sedici": (16, "n"),
        "diciassette": (17, "n"), "diciotto": (18, "n"), "diciannove": (19, "n"), "venti": (20, "n"),
        "vent": (20, "n"), "trenta": (30, "n"), "trent": (30, "n"), "quaranta": (40, "n"), "quarant": (40, "n"),
        "cinquanta": (50, "n"), "cinquant": (50, "n"), "sessanta": (60, "n"), "sessant": (60, "n"),
        "settanta": (70, "n"), "settant": (70, "n"), "ottanta": (80, "n"), "ottant": (80, "n"),
        "novanta": (90, "n"), "novant": (90, "n"), "cento": (100, "h"), "mille": (1000, "k"), "mila": (1000, "k"),
        "e": (0, "j"),
    },
    "pt": {
        "zero": (0, "n"), "um": (1, "n"), "uma": (1, "n"), "dois": (2, "n"), "duas": (2, "n"), "três": (3, "n"),
        "quatro": (4, "n"), "cinco": (5, "n"), "seis": (6, "n"), "sete": (7, "n"), "oito": (8, "n"),
        "nove": (9, "n"), "dez": (10, "n"), "onze": (11, "n"), "doze": (12, "n"), "treze": (13, "n"),
        "catorze": (14, "n"), "quatorze": (14, "n"), "quinze": (15, "n"), "dezesseis": (16, "n"),
        "dezessete": (17, "n"), "dezoito": (18, "n"), "dezenove": (19, "n"), "vinte": (20, "n"), "trinta": (30, "n"),
        "quarenta": (40, "n"), "cinquenta": (50, "n"), "sessenta": (60, "n"), "setenta": (70, "n"),
        "oitenta": (80, "n"), "noventa": (90, "n"), "cem": (100, "n"), "cento": (100, "n"), "duzentos": (200, "n"),
        "trezentos": (300, "n"), "quatrocentos": (400, "n"), "quinhentos": (500, "n"), "mil": (1000, "k"),
        "e": (0, "j"),
    },
}  # fmt: skip
_ARTICLES = frozenset({"un", "une", "ein", "eine", "uno", "una", "um", "uma"})
_FUNCTION_WORDS = {
    "de": {"der", "die", "das", "ist", "und", "sind", "lautet", "antwort", "beträgt", "insgesamt", "es", "hat", "also"},
    "fr": {"le", "la", "les", "est", "et", "des", "du", "réponse", "donc", "il", "elle", "sont", "au", "total"},
    "es": {"el", "la", "los", "las", "es", "y", "respuesta", "del", "son", "por", "lo", "tanto", "hay", "total"},
    "it": {"il", "lo", "la", "gli", "è", "sono", "risposta", "di", "che", "quindi", "del", "della", "totale"},
    "pt": {"o", "os", "as", "é", "são", "resposta", "do", "da", "que", "portanto", "então", "total"},
}  # fmt: skip


_LANGUAGES_OF: dict[str, list[str]] = {}
for _lang, _words in _FUNCTION_WORDS.items():
    for _word in _words:
        _LANGUAGES_OF.setdefault(_word, []).append(_lang)


def _language(words: list[str]) -> str | None:
    counts = dict.fromkeys(_FUNCTION_WORDS, 0)
    for w in words:
        for lang in _LANGUAGES_OF.get(w, ()):
            counts[lang] += 1
    ranked = sorted(counts.items(), key=lambda kv: kv[1], reverse=True)
    return ranked[0][0] if ranked[0][1] >= 2 and ranked[0][1] > ranked[1][1] else None


@cache
def _segments(word: str, lang: str) -> tuple[tuple[int, str], ...] | None:
    """``word`` cut into number parts of ``lang`` (the fewest parts), or None."""
    if not word:
        return ()
    parts = _PARTS[lang]
    best: tuple[tuple[int, str], ...] | None = None
    for end in range(len(word), 0, -1):
        head = word[:end]
        if head in parts:
            rest = _segments(word[end:], lang)
            if rest is not None and (best is None or len(rest) + 1 < len(best)):
                best = (parts[head], *rest)
    return best


def _value(parts: list[tuple[int, str]]) -> int | None:
    if not parts or parts[0][1] == "j" or parts[-1][1] == "j":
        return None
    total = current = 0
    for value, kind in parts:
        if kind == "h":
            current = (current or 1) * 100
        elif kind == "k":
            total += (current or 1) * 1000
            current = 0
        elif kind == "n":
            current += value
    return total + current


def _fold(word: str) -> str:
    return unicodedata.normalize("NFC", word.lower())


def foreign_cardinals(text: str) -> str:
    """``text`` with its number words written as digits when it is German, French, Spanish, Italian or
    Portuguese (module docstring); any other text as it is."""
    words = re.findall(r"[^\W\d_]+", _fold(text))
    lang = _language(words) if len(words) >= 3 else None
    if lang is None:
        return text

    joins = {w for w, (_, kind) in _PARTS[lang].items() if kind == "j"}

    def convert(m: re.Match[str]) -> str:
        tokens = re.split(r"([\s-]+)", m.group(0))  # words and the separators between them
        words_at = list(range(0, len(tokens), 2))
        while words_at and _fold(tokens[words_at[-1]]) in joins:  # "dieciséis y" ends before its "y"
            words_at.pop()
        while words_at and _fold(tokens[words_at[0]]) in joins:
            words_at.pop(0)
        if not words_at:
            return m.group(0)
        start, end = words_at[0], words_at[-1]
        pieces = [_fold(tokens[i]) for i in words_at]
        if len(pieces) == 1 and pieces[0] in _ARTICLES:
            return m.group(0)
        cut = _segments("".join(pieces), lang)  # "quatre-vingt-dix" is quatrevingt + dix: the fewest parts
        value = _value(list(cut)) if cut is not None else None
        if value is None:
            return m.group(0)
        return "".join(tokens[:start]) + str(value) + "".join(tokens[end + 1 :])

    return _run(lang).sub(convert, text)


@cache
def _run(lang: str) -> re.Pattern[str]:
    """A run of ``lang``'s number words, joined by spaces or hyphens."""
    alternatives = "|".join(sorted(map(re.escape, _PARTS[lang]), key=len, reverse=True))
    word = rf"(?:{alternatives})+"
    return re.compile(rf"(?<![^\W\d_]){word}(?:[\s-]+{word})*(?![^\W\d_])", re.IGNORECASE)
