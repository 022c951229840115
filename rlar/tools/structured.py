"""Reward tools for references that are structures, not one answer text: ``sequence_match``, ``quantity_match``
(``set_f1``: ``rlar.tools.item_sets``).

- ``sequence_match``: the reference is a sequence of cells or tags — a token-level tag list (CoNLL/WikiANN
  ``ner_tags`` as ints, with the names in ``metadata["tag_names"]`` when given, or UD ``upos`` strings), a
  puzzle grid or digit string (Sudoku's 81 digits, crossword rows, a list of rows). The response's
  sequence is read the same way (tag names or ids; for grids the last block of the response with exactly as
  many letters and digits as the grid has cells, separators ignored); the score is the share of positions
  that agree, over the longer of the two (``params.partial = False``: 1 only when all agree).
- ``quantity_match``: the reference is a quantity with a unit (``4.0 cm``, ``5 m/s^2``, ``2250 g``); the
  response's last quantity with a unit must have the same dimension and, converted to SI units, agree within
  ``params.rel_tol`` (default 1%). A bare number, another dimension, or a unit not in the table scores 0;
  an unreadable reference abstains.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from rlar.tools.answer_chars import read_chars
from rlar.tools.answer_text import explicit_statement
from rlar.tools.base import RewardTool, ToolInput, ToolKind, ToolResult, ToolSpec
from rlar.tools.item_sets import decoded_reference

__all__ = [
    "QuantityMatchTool",
    "SequenceMatchTool",
    "bio_tags",
    "compound_totals",
    "is_unit",
    "parse_quantity",
    "quantities",
    "stated_quantity",
]


# -- sequence_match ---------------------------------------------------------------------------------------------
_CELL_LINE = re.compile(r"^[A-Za-z0-9]+$")


def _grid_cells(reference: Any) -> str | None:
    """The cells of a grid or digit-string reference (letters and digits in order), else None."""
    ref = decoded_reference(reference)
    if isinstance(ref, list | tuple) and ref and all(isinstance(r, list | tuple | str) for r in ref):
        rows = ["".join(str(c) for c in r) if isinstance(r, list | tuple) else r for r in ref]
        if all(_CELL_LINE.match(r) for r in rows) and any(len(r) > 1 for r in rows):
            return "".join(rows).upper()
        return None
    if isinstance(ref, str):
        rows = [r.strip() for r in re.split(r"[\n|/]+", ref.strip()) if r.strip()]
        rows = [re.sub(r"[\s,]+", "", r) for r in rows]
        if rows and all(_CELL_LINE.match(r) for r in rows) and sum(map(len, rows)) >= 4:
            return "".join(rows).upper()
    return None


_BIO_TAG = re.compile(r"[BIESLU]-[A-Za-z_][\w.:-]*|O")


def bio_tags(text: str) -> list[str] | None:
    """The tags of a tag sequence written as one string, as ATIS and SNIPS ship slot tags ("O O B-fromloc.city_name O
    B-toloc.city_name"): two or more BIO tags separated by spaces, at least one of them not O; None otherwise."""
    tokens = text.split()
    if len(tokens) < 2 or not all(_BIO_TAG.fullmatch(t) for t in tokens) or set(tokens) == {"O"}:
        return None
    return tokens


def _tags(reference: Any) -> list[str] | None:
    ref = decoded_reference(reference)
    if isinstance(ref, str):
        return bio_tags(ref)
    if isinstance(ref, Mapping):
        for key in ("ner_tags", "pos_tags", "upos", "tags", "labels", "chunk_tags"):
            if key in ref:
                return _tags(ref[key])
        return None
    if (
        isinstance(ref, list | tuple)
        and ref
        and all(isinstance(t, str | int) and not isinstance(t, bool) for t in ref)
    ):
        return [str(t) for t in ref]
    return None


def _response_cells(response: str, n: int) -> str:
    """The last block of ``response`` holding exactly ``n`` letters and digits (separators ignored)."""
    blocks = re.findall(r"[A-Za-z0-9][A-Za-z0-9\s,|\[\]().;:-]*", response)
    for block in reversed(blocks):
        cells = re.sub(r"[^A-Za-z0-9]", "", block)
        if len(cells) == n:
            return cells.upper()
        if len(cells) > n:  # a block with prose before the grid: its last n cells, if they form whole tokens
            tail = re.findall(r"[A-Za-z0-9]+", block)
            acc = ""
            for tok in reversed(tail):
                acc = tok + acc
                if len(acc) >= n:
                    break
            if len(acc) == n:
                return acc.upper()
    return ""


class SequenceMatchTool(RewardTool):
    """Position-wise agreement of the response's tag or cell sequence with the reference's (module docstring)."""

    default_spec: ClassVar[ToolSpec] = ToolSpec(
        name="sequence_match",
        kind=ToolKind.RULE,
        description=(
            "Sequence match for token-level tag sequences (NER/POS/chunk tags as names or ids, one per"
            " token) and puzzle grids or long digit strings (Sudoku solutions, crossword rows): the share of"
            " positions where the response's sequence equals the reference's, over the longer of the two;"
            " separators and layout are ignored. Param partial=false: 1 only when every position agrees."
        ),
        task_types=["sequence_labeling", "ner", "pos_tagging", "grid_puzzle", "sudoku"],
        answer_formats=["tags", "grid", "digit_string"],
        params={"partial": True},
    )
    metadata_keys: ClassVar[tuple[str, ...]] = ("tag_names",)

    def _finish(self, agree: int, total: int, what: str) -> ToolResult:
        frac = agree / total if total else 0.0
        score = frac if self.params.get("partial", True) else float(agree == total and total > 0)
        return self.ok(round(score, 6), f"{agree}/{total} {what} agree", agree=agree, total=total)

    async def _score(self, inp: ToolInput) -> ToolResult:
        tags = _tags(inp.reference)
        cells = (
            None
            if tags is not None and any(len(t) > 1 or not t.isdigit() for t in tags)
            else _grid_cells(inp.reference)
        )
        if cells is not None and (tags is None or len(cells) >= 9):
            got = _response_cells(inp.response, len(cells))
            if not got:
                return self.ok(0.0, f"no block of {len(cells)} cells in the response")
            return self._finish(sum(a == b for a, b in zip(got, cells, strict=True)), len(cells), "cells")
        if tags is None:
            return ToolResult.abstain("the reference is not a tag sequence or a grid")
        names = inp.metadata.get("tag_names")
        names = [str(n) for n in names] if isinstance(names, list) else []
        index = {n.upper(): str(i) for i, n in enumerate(names)}
        words = re.findall(r"[^\s,\[\]'\"]+", inp.response)
        seq: list[str] = []
        for w in words:
            w = w.strip("().;:")
            if "/" in w and not w.startswith("/"):  # token/TAG pairs
                w = w.rsplit("/", 1)[1]
            if not w:
                continue
            up = w.upper()
            if tags and all(t.isdigit() for t in tags):
                if up in index:
                    seq.append(index[up])
                elif w.isdigit():
                    seq.append(w)
            elif (
                up in {t.upper() for t in tags}
                or up in index
                or re.fullmatch(r"[BIESO](-[A-Z]+)?|[A-Z]{1,5}", up)
            ):
                seq.append(up)
        want = [t.upper() for t in tags]
        total = max(len(want), len(seq))
        return self._finish(sum(a == b for a, b in zip(seq, want, strict=False)), total, "tags")


# -- quantity_match ---------------------------------------------------------------------------------------------
# Dimension exponents: (m, kg, s, A, K, mol).
_D = tuple[int, int, int, int, int, int]
_BASE: dict[str, tuple[float, _D]] = {
    "m": (1.0, (1, 0, 0, 0, 0, 0)),
    "g": (1e-3, (0, 1, 0, 0, 0, 0)),
    "s": (1.0, (0, 0, 1, 0, 0, 0)),
    "A": (1.0, (0, 0, 0, 1, 0, 0)),
    "K": (1.0, (0, 0, 0, 0, 1, 0)),
    "mol": (1.0, (0, 0, 0, 0, 0, 1)),
    "L": (1e-3, (3, 0, 0, 0, 0, 0)),
    "l": (1e-3, (3, 0, 0, 0, 0, 0)),
    "N": (1.0, (1, 1, -2, 0, 0, 0)),
    "J": (1.0, (2, 1, -2, 0, 0, 0)),
    "W": (1.0, (2, 1, -3, 0, 0, 0)),
    "Pa": (1.0, (-1, 1, -2, 0, 0, 0)),
    "Hz": (1.0, (0, 0, -1, 0, 0, 0)),
    "C": (1.0, (0, 0, 1, 1, 0, 0)),
    "V": (1.0, (2, 1, -3, -1, 0, 0)),
    "Ω": (1.0, (2, 1, -3, -2, 0, 0)),
    "ohm": (1.0, (2, 1, -3, -2, 0, 0)),
    "eV": (1.602176634e-19, (2, 1, -2, 0, 0, 0)),
    "F": (1.0, (-2, -1, 4, 2, 0, 0)),  # farad
    "H": (1.0, (2, 1, -2, -2, 0, 0)),  # henry
    "T": (1.0, (0, 1, -2, -1, 0, 0)),  # tesla
    "Wb": (1.0, (2, 1, -2, -1, 0, 0)),  # weber
    "S": (1.0, (-2, -1, 3, 2, 0, 0)),  # siemens
}
_NO_PREFIX: dict[str, tuple[float, _D]] = {
    "min": (60.0, (0, 0, 1, 0, 0, 0)),
    "h": (3600.0, (0, 0, 1, 0, 0, 0)),
    "hr": (3600.0, (0, 0, 1, 0, 0, 0)),
    "day": (86400.0, (0, 0, 1, 0, 0, 0)),
    "t": (1000.0, (0, 1, 0, 0, 0, 0)),
    "atm": (101325.0, (-1, 1, -2, 0, 0, 0)),
    "bar": (1e5, (-1, 1, -2, 0, 0, 0)),
    "cal": (4.184, (2, 1, -2, 0, 0, 0)),
    "kcal": (4184.0, (2, 1, -2, 0, 0, 0)),
    "in": (0.0254, (1, 0, 0, 0, 0, 0)),
    "ft": (0.3048, (1, 0, 0, 0, 0, 0)),
    "mi": (1609.344, (1, 0, 0, 0, 0, 0)),
    "lb": (0.45359237, (0, 1, 0, 0, 0, 0)),
    "oz": (0.028349523125, (0, 1, 0, 0, 0, 0)),
    "mph": (0.44704, (1, 0, -1, 0, 0, 0)),
    "%": (0.01, (0, 0, 0, 0, 0, 0)),
}
_WORDS = {
    "meter": "m",
    "metre": "m",
    "kilometer": "km",
    "kilometre": "km",
    "centimeter": "cm",
    "centimetre": "cm",
    "millimeter": "mm",
    "millimetre": "mm",
    "gram": "g",
    "kilogram": "kg",
    "milligram": "mg",
    "second": "s",
    "sec": "s",
    "minute": "min",
    "hour": "h",
    "liter": "L",
    "litre": "L",
    "milliliter": "mL",
    "millilitre": "mL",
    "newton": "N",
    "joule": "J",
    "kilojoule": "kJ",
    "watt": "W",
    "kilowatt": "kW",
    "pascal": "Pa",
    "kilopascal": "kPa",
    "volt": "V",
    "ampere": "A",
    "amp": "A",
    "kelvin": "K",
    "mole": "mol",
    "hertz": "Hz",
    "coulomb": "C",
    "farad": "F",
    "henry": "H",
    "tesla": "T",
    "ohm": "ohm",
    "mile": "mi",
    "foot": "ft",
    "feet": "ft",
    "inch": "in",
    "pound": "lb",
    "ounce": "oz",
    "kph": "km/h",
    "kmh": "km/h",
    "degree": "deg",
}
# The same units named in Spanish, Portuguese, French, Italian and German (answers in another language, or units
# written in one: "120 Minuten", "5 centímetros"); plurals in -s are read by stripping it, others are listed.
_FOREIGN_WORDS = {
    "m": "metro metri mètre",
    "cm": "centímetro centimetro centimetri centimètre zentimeter",
    "mm": "milímetro millimetro millimetri millimètre",
    "km": "kilómetro quilômetro quilómetro chilometro chilometri kilomètre",
    "g": "gramo grama gramme grammo grammi gramm",
    "kg": "kilogramo quilograma kilogramme chilogrammo chilogrammi kilogramm",
    "s": "segundo seconde secondo secondi sekunde sekunden",
    "min": "minuto minuti minuten",
    "h": "hora heure stunde stunden",
    "L": "litro litri",
    "day": "día jour giorno giorni",
}
_WORDS.update({word: symbol for symbol, words in _FOREIGN_WORDS.items() for word in words.split()})
_PREFIX = {
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "c": 1e-2,
    "m": 1e-3,
    "u": 1e-6,
    "µ": 1e-6,
    "μ": 1e-6,
    "n": 1e-9,
    "d": 1e-1,
}
_SUPERSCRIPT = str.maketrans("⁻¹²³⁴", "-1234")
_QUANTITY = re.compile(
    r"(?<![\w.])([-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+]?\.\d+)"
    r"(?:\s*(?:[eE]([-+]?\d+)|[x×]\s*10\^?\{?([-+−]?\d+)\}?))?"
    r"\s*((?:°\s?[CF]|(?:[^\W\d_]|[%°])(?:[^\W\d_]|°)*(?:\s*(?:\^|\*\*)\s*[-−]?\d|[-−]?\d(?![\d.])|[⁻¹²³⁴]+)?)"
    r"(?:\s*(?:/|·|\*|⋅|\s|per\s)\s*[^\W\d_]+(?:\s*(?:\^|\*\*)\s*[-−]?\d|[-−]?\d(?![\d.])|[⁻¹²³⁴]+)?)*)?"
)


def _unit_factor(symbol: str) -> tuple[float, _D] | None:
    sym = symbol.strip()
    low = sym.lower().rstrip(".")
    if low.endswith("s") and low[:-1] in _WORDS:
        low = low[:-1]
    elif low.endswith("es") and low[:-2] in _WORDS:  # "inches"
        low = low[:-2]
    if low in _WORDS and sym not in _BASE and sym not in _NO_PREFIX:
        sym = _WORDS[low]
        if "/" in sym:
            return _unit(sym)
    if sym in _NO_PREFIX:
        return _NO_PREFIX[sym]
    if sym in _BASE:
        return _BASE[sym]
    for p, f in _PREFIX.items():
        if sym.startswith(p) and sym[len(p) :] in _BASE:
            base, dim = _BASE[sym[len(p) :]]
            return f * base, dim
    return None


def _unit(text: str) -> tuple[float, _D] | None:
    """The SI factor and dimension of a unit expression (``m/s^2``, ``kg·m/s²``, ``km per hour``), else None."""
    text = text.translate(_SUPERSCRIPT).replace("**", "^").replace("−", "-").strip()
    if not text:
        return None
    if re.fullmatch(r"°\s?[CF]|deg\w*\s?[CF]?", text):
        return None  # offset scales: not converted
    factor, dims = 1.0, [0] * 6
    sign = 1
    for tok in re.findall(r"/|per\b|(?:[^\W\d_]|%)+(?:\s*\^?\s*-?\d+)?", text):
        if tok in ("/", "per"):
            sign = -1
            continue
        m = re.fullmatch(r"((?:[^\W\d_]|%)+)\s*\^?\s*(-?\d+)?", tok)
        if not m:
            return None
        got = _unit_factor(m.group(1))
        if got is None:
            return None
        power = sign * int(m.group(2) or 1)
        factor *= got[0] ** power
        dims = [d + power * e for d, e in zip(dims, got[1], strict=True)]
    return factor, (dims[0], dims[1], dims[2], dims[3], dims[4], dims[5])


def is_unit(text: str) -> bool:
    """``text`` is a unit expression this module converts (``m``, ``kg``, ``cm^2``, ``km/h``, ``minutes``)."""
    return _unit(text) is not None


_SUPERSCRIPT_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_POWER_WORD = re.compile(r"\b(square|sq\.?|cubic|cu\.?)\s+([A-Za-zµμ]+)", re.IGNORECASE)


def _readable(text: str) -> str:
    """``text`` with its characters read (``answer_chars.read_chars(latex=False)``: dashes as signs, thin spaces,
    full-width digits), ``10⁻³`` as ``10^-3`` and "square centimeters" / "cubic meters" as powers."""
    text = read_chars(text, latex=False)
    text = re.sub(
        r"10([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)", lambda m: "10^" + m.group(1).translate(_SUPERSCRIPT_DIGITS), text
    )
    return _POWER_WORD.sub(
        lambda m: f"{m.group(2)}^{2 if m.group(1).lower().startswith(('s', 'sq')) else 3}", text
    )


def quantities(text: str) -> list[tuple[float, _D, str]]:
    """(value in SI units, dimension, unit as written) of every quantity with a known unit in ``text``, in
    order."""
    found = []
    text, pos = _readable(text), 0
    while m := _QUANTITY.search(text, pos):
        # The next quantity is searched for after the unit words used, not after every word the pattern took
        # ("2.5 hours is equal to 0.5 minutes" holds two quantities).
        number_end = max(m.end(g) for g in (1, 2, 3) if m.group(g))  # past "× 10^-6" too
        pos = number_end if number_end > pos else pos + 1
        unit_text = (m.group(4) or "").strip()
        if not unit_text:
            continue
        # Drop trailing words that are not units ("4.0 cm long", "15 m/s to the east").
        words = unit_text.split()
        # "in" after a unit is the preposition ("90 minutes in total"), not an inch multiplying it.
        words = next((words[:i] for i, w in enumerate(words) if i and w.lower() == "in"), words)
        unit = None
        while words and unit is None:
            unit = _unit(" ".join(words))
            if unit is None:
                words.pop()
        if unit is None:
            continue
        pos = m.start(4) + [t.end() for t in re.finditer(r"\S+", m.group(4))][len(words) - 1]
        value = float(m.group(1).replace(",", "").replace("−", "-"))
        exp = m.group(2) or m.group(3)
        if exp:
            value *= 10 ** int(exp.replace("−", "-"))
        found.append((value * unit[0], unit[1], " ".join(words)))
    return found


_COMPOUND_JOIN = re.compile(r"\s*(?:,|and|,\s*and)?\s*", re.IGNORECASE)


def compound_quantities(text: str) -> list[tuple[float, _D, str]]:
    """:func:`quantities`, with a quantity written in several units of one dimension, largest first and joined only
    by spaces, commas or "and" ("2 h 30 min", "1 hour and 30 minutes", "5 ft 3 in"), read as their sum."""
    spans = []
    readable, pos = _readable(text), 0
    while m := _QUANTITY.search(readable, pos):
        number_end = max(m.end(g) for g in (1, 2, 3) if m.group(g))  # past "× 10^-6" too
        pos = number_end if number_end > pos else pos + 1
        found = quantities(m.group(0))
        if found and m.group(4):
            spans.append((m.start(), m.start(4) + len(m.group(4).split()[0]), found[0]))
    if len(spans) < 2:
        return quantities(text)
    merged: list[tuple[float, _D, str]] = []
    prev_end, prev_factor = -1, 0.0
    for start, end, (value, dim, unit) in spans:
        factor = (_unit(unit) or (0.0, dim))[0]
        joined = prev_end >= 0 and _COMPOUND_JOIN.fullmatch(readable[prev_end:start]) is not None
        if merged and joined and merged[-1][1] == dim and 0 < factor < prev_factor and value >= 0:
            last = merged[-1]
            merged[-1] = (last[0] + value, dim, f"{last[2]} {unit}")
        else:
            merged.append((value, dim, unit))
        prev_end, prev_factor = end, factor
    return merged


def compound_totals(text: str) -> list[tuple[float, str]] | None:
    """The last quantity of ``text`` written in several units ("4 hours 30 minutes", "5 ft 3 in") as its total in
    each of those units (4.5 hours, 270 minutes); None when its last quantity is in one unit or there is none."""
    found = compound_quantities(text)
    if not found or len(found[-1][2].split()) < 2:
        return None
    total, _, units = found[-1]
    # each unit after its own number ("4 hours 30 minutes"), not a rate's words ("18 per day")
    each = r"\s*(?:,|and)?\s*".join(rf"\d[\d.,]*\s*{re.escape(u)}\b" for u in units.split())
    if not re.search(each, _readable(text)):
        return None
    out = []
    for unit in units.split():
        factor = _unit(unit)
        if factor is None or not factor[0]:
            return None
        out.append((total / factor[0], unit))
    return out


def parse_quantity(text: str, last: bool = True) -> tuple[float, _D, str] | None:
    """(value in SI units, dimension, unit as written) of the last (or first) quantity with a known unit."""
    found = quantities(text)
    if not found:
        return None
    return found[-1] if last else found[0]


def stated_quantity(response: str, dimension: _D) -> tuple[float, _D, str] | str | None:
    """The quantity a response states as its answer: the last one of its explicit answer statement ("The answer
    is ..."), else its last one of ``dimension`` (a speed stated after the distance asked for does not replace
    it), else its last one; a reason (str) when the sentence that states it gives two different values of that
    dimension ("between 10 m and 20 m"); None when it has none."""
    explicit = explicit_statement(response)
    found = quantities(explicit) if explicit else []
    if found:
        return found[-1]
    every = quantities(response)
    if not every:
        return None
    same = [q for q in every if q[1] == dimension]
    if not same:
        return every[-1]
    sentence = next(
        (
            s
            for s in reversed(re.split(r"(?<=[.!?])\s+|\n+", response))
            if any(q[1] == dimension for q in quantities(s))
        ),
        "",
    )
    values = {round(q[0], 12) for q in quantities(sentence) if q[1] == dimension}
    if len(values) > 1:
        return f"{len(values)} different values of the reference's dimension in the answer sentence"
    return same[-1]


class QuantityMatchTool(RewardTool):
    """The response's last quantity equals the reference's, units converted (see the module docstring)."""

    default_spec: ClassVar[ToolSpec] = ToolSpec(
        name="quantity_match",
        kind=ToolKind.RULE,
        description=(
            "Physical quantity match: reads a number with its unit from the reference (4.0 cm, 15 m/s, 9.8"
            " m/s^2, 2250 g) and the last number with a unit from the response, converts both to SI units"
            " (prefixes, compound units, common unit words) and scores 1 if the dimensions agree and the"
            " values are within rel_tol (default 1%), else 0. A bare number without its unit scores 0. Use"
            " for science and engineering answers with units and unit conversion."
        ),
        task_types=["physics", "unit_conversion", "science_numeric", "quantity"],
        answer_formats=["quantity", "number_with_unit"],
        params={"rel_tol": 0.01},
    )

    async def _score(self, inp: ToolInput) -> ToolResult:
        ref = inp.reference
        if isinstance(ref, list | tuple) and ref:
            ref = ref[0]
        gold = parse_quantity(str(ref)) if isinstance(ref, str | int | float) else None
        if gold is None:
            return ToolResult.abstain("the reference is not a quantity with a known unit")
        got = stated_quantity(inp.response, gold[1])
        if got is None:
            return self.ok(0.0, "no quantity with a unit in the response")
        if isinstance(got, str):
            return self.ok(0.0, f"hedged: {got}")
        if got[1] != gold[1]:
            return self.ok(0.0, f"unit {got[2]!r} is not of the reference's dimension ({gold[2]!r})")
        tol = float(self.params.get("rel_tol", 0.01))
        close = math.isclose(got[0], gold[0], rel_tol=tol, abs_tol=1e-12 * max(1.0, abs(gold[0])))
        return self.ok(
            float(close),
            "equal" if close else f"{got[0]:.6g} vs {gold[0]:.6g} (SI)",
            response_si=got[0],
            reference_si=gold[0],
        )
