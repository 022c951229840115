"""Canonical forms of structured final answers: the layer of ``math_verify`` above the math-verify library.

math-verify parses LaTeX into sympy and compares the objects; this module reads what an answer *means* where the
library's object does not say it, and compares the meanings. Used by ``rlar.tools.rules.MathVerifyTool`` after
the plain-number and choice-letter rules of ``rlar.tools.math_answer`` and before the library's own ``verify``:
a decision here (equivalent or not) is final, ``None`` leaves the pair to the library.

1. Text rewrites before parsing (``prepare``): repeating decimals (``0.\\overline{3}``, ``0.1\\overline{6}``,
   ``0.(45)``, ``0.\\dot{3}``, ``0.333...`` with the period read off the digits) become exact fractions; a ``\\pm``
   (``\\mp``) item becomes its two values (``2 \\pm \\sqrt{5}`` -> ``2+\\sqrt{5}, 2-\\sqrt{5}``, ``\\frac{-1 \\pm
   \\sqrt{13}}{2}`` likewise, ``x = \\pm 3`` -> ``3, -3``).
2. Forms (``form_of``), read from the library's parse of the whole answer and, for sets of reals, of its pieces:
   - ``set``: a set of reals from inequalities (``1 \\le x < 4``, ``x < -2 \\text{ or } x > 3``, ``0 < x < 5
     \\text{ and } x \\neq 2``), intervals and unions (``[1, 4)``, ``(-\\infty, 1] \\cup [6, \\infty)``) or ``x \\in
     I``; "or", ``\\cup`` and commas join, "and" and ``\\cap`` intersect, in one variable;
   - ``values``: an unordered solution list (``-4, 1``, ``x = 1 \\text{ or } x = -4``, ``x = 0, x = 2``,
     ``x \\in \\{5, -1\\}``, ``\\{3, 1, 2\\}``);
   - ``ordered``: a tuple ``(2, -5)``; ``named``: components by name (``y = -5, x = 2``, ``(a, b) = (-1, 6)``),
     which equal a tuple in the order of their names sorted (x, y, z; a, b, c; m, n);
   - ``matrix``: a matrix, with a scalar factor multiplied in (``\\frac{1}{2}\\begin{pmatrix}...\\end{pmatrix}``);
   - ``single``: one value.
3. Comparison (``compare``): sets by equality of the sets (an endpoint open or closed matters); values as sets of
   equal elements (order free, a missing or an extra solution is a miss); tuples and named components position by
   position; matrices entry by entry. A response that lists several different values where the reference is one
   object (a value, a tuple, a set) is refused: extra solutions are wrong answers, not hedges to be forgiven.
   Elements are compared with the library's ``verify``.

Bounds: answers longer than ``MAX_CHARS`` are left to the library; the caller runs ``compare`` under one time
limit (``math_verify.utils.timeout``); nothing here evaluates the text as code (parsing is math-verify's LaTeX
parser).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

# sympy is imported where used: heavy and optional (the CLI starts without it).

__all__ = [
    "ITEM_SEPARATOR",
    "MAX_CHARS",
    "Form",
    "code_forms",
    "compare",
    "form_of",
    "math_span",
    "named_functions",
    "nested_lists_as_matrices",
    "prepare",
    "repeating_to_fraction",
    "split_top",
]

MAX_CHARS = 400

_OVERLINE = re.compile(
    r"(?<![\w.])(-?)(\d*)\.(\d*)\s*(?:\\overline|\\bar|\\dot)\s*\{\s*(\d+)\s*\}"
    r"|(?<![\w.])(-?)(\d*)\.(\d*)\s*(?:\\overline|\\bar|\\dot)\s*(\d)"
)
_PAREN = re.compile(r"(?<![\w.])(-?)(\d*)\.(\d*)\((\d+)\)(?!\d)")
_ELLIPSIS = re.compile(r"(?<![\w.])(-?)(\d*)\.(\d{2,})\s*(?:\.{2,}|…|\\[lc]?dots\b)")


def _fraction_latex(sign: str, whole: str, fixed: str, period: str) -> str:
    """``sign whole.fixed(period)`` as ``\\frac{p}{q}`` (or an integer)."""
    value = Fraction(int(whole or "0"))
    if fixed:
        value += Fraction(int(fixed), 10 ** len(fixed))
    value += Fraction(int(period), (10 ** len(period) - 1) * 10 ** len(fixed))
    if sign:
        value = -value
    if value.denominator == 1:
        return str(value.numerator)
    minus = "-" if value < 0 else ""
    return f"{minus}\\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"


def _period_of(digits: str) -> tuple[str, str] | None:
    """(fixed part, period) of decimals written before an ellipsis: the shortest block repeated at least twice at
    the end ("1666" -> ("1", "6"), "4545" -> ("", "45")); None when no block repeats."""
    for size in range(1, len(digits) // 2 + 1):
        block = digits[-size:]
        reps = 1
        while digits[: len(digits) - reps * size].endswith(block):
            reps += 1
        if reps >= 2:
            fixed = digits[: len(digits) - reps * size]
            # A partial block before the repeats belongs to the period too ("0.14285714..." reads 142857).
            while fixed and fixed[-1] == block[-1]:
                fixed, block = fixed[:-1], block[-1] + block[:-1]
            return fixed, block
    return None


def repeating_to_fraction(text: str) -> str:
    """Repeating decimals in ``text`` written as exact fractions (see the module docstring)."""

    def overline(m: re.Match[str]) -> str:
        g = m.groups()
        sign, whole, fixed, period = g[0:4] if g[3] is not None else g[4:8]
        return _fraction_latex(sign or "", whole or "", fixed or "", period)

    def ellipsis(m: re.Match[str]) -> str:
        found = _period_of(m.group(3))
        if found is None:
            return m.group(0)
        return _fraction_latex(m.group(1), m.group(2), *found)

    text = _OVERLINE.sub(overline, text)
    text = _PAREN.sub(lambda m: _fraction_latex(m.group(1), m.group(2), m.group(3), m.group(4)), text)
    return _ELLIPSIS.sub(ellipsis, text)


_OPEN, _CLOSE = "([{", ")]}"


def split_top(text: str, separator: re.Pattern[str]) -> list[str]:
    """``text`` split at the matches of ``separator`` that lie outside every bracket (``[1, 4)`` counts as one)."""
    depth, marks = 0, [0] * (len(text) + 1)
    for i, ch in enumerate(text):
        marks[i] = depth
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
    parts, last = [], 0
    for m in separator.finditer(text):
        if marks[m.start()] == 0:
            parts.append(text[last : m.start()])
            last = m.end()
    parts.append(text[last:])
    return [p.strip() for p in parts]


ITEM_SEPARATOR = re.compile(r",|;")
"""What separates the items of a list of answers: a comma or a semicolon (outside brackets: :func:`split_top`)."""
_ASSIGN = re.compile(r"^\s*[A-Za-z](?:_\{?\w+\}?)?\s*=\s*(?!=)")


def expand_pm(text: str) -> str:
    """Each comma-separated item holding ``\\pm`` / ``\\mp`` written as its two values (module docstring)."""
    if "\\pm" not in text and "\\mp" not in text:
        return text
    items = []
    for item in split_top(text, ITEM_SEPARATOR):
        if "\\pm" not in item and "\\mp" not in item:
            items.append(item)
            continue
        item = _ASSIGN.sub("", item)
        plus = item.replace("\\pm", "+").replace("\\mp", "-")
        minus = item.replace("\\pm", "-").replace("\\mp", "+")
        items.extend(re.sub(r"^\s*\+\s*", "", s).strip() for s in (plus, minus))
    return ", ".join(items)


MATH_REGION = _MATH_REGION = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
_JOINER = re.compile(r"^\s*(,|;|or|and)\s*$", re.IGNORECASE)


def math_span(text: str) -> str:
    """The mathematics of a final answer written in a sentence: its last ``$...$`` region, with the regions
    before it that a bare "or", "and" or comma joins to it ("$x = 1$ and $x = -4$" -> ``x = 1 \\text{ and }
    x = -4``); without such a region, the sentence after its lead-in when the rest is mathematics ("The solutions
    are -3 and 2." -> ``-3 \\text{ and } 2``); else the text itself."""
    regions = [r for r in _MATH_REGION.finditer(text) if not _is_words(_region(r))]
    # A remark in brackets after the answer ("$[-3, 1)$ (closed at $-3$, open at $1$)") is not the answer.
    aside = re.search(r"\s\([^()]*\)\s*[.!]?\s*$", text)
    if aside and any(r.end() <= aside.start() for r in regions):
        regions = [r for r in regions if r.end() <= aside.start()]
    if not regions:
        return _plain_math(text)
    # A full stop written inside the display ends the sentence: "$$x = \\tan^{-1} 2.$$" is tan^{-1} 2.
    parts = [re.sub(r"(?<=[^.\s])\s*[.,;]\s*$", "", _region(regions[-1]))]
    for before, after in zip(reversed(regions[:-1]), reversed(regions[1:]), strict=True):
        joiner = _JOINER.match(text[before.end() : after.start()])
        if joiner is None:
            break
        word = joiner.group(1).lower()
        glue = ", " if word in ",;" else f" \\text{{ {word} }} "
        parts.insert(0, glue)
        parts.insert(0, _region(before))
    return "".join(parts).strip()


_LEAD_IN = re.compile(
    r"^(?:.*?\b(?:is|are|was|were|be|equals?|gives?|becomes?|gets?|got|obtains?|finds?|have|has|so|thus|hence"
    r"|therefore|then|to|as|approaches)\b|.*?:)\s*"
    r"(?=[-+(\[\\{\d]|[A-Za-z](?:_\{?\w+\}?)?\s*(?:=|<|>|\\[lg]e|≤|≥)|[A-Za-z]\s*\^)",
    re.IGNORECASE,
)
# A condition on one variable after words: "The product is positive for x < -2 or x > 3", "negative exactly when
# 0 < x < 4" (tried when no lead-in above applies).
_CONDITION_LEAD_IN = re.compile(
    r"^.*?\b(?:for|when|whenever|where|if|iff|precisely|exactly)\s+"
    r"(?=-?[\d(\[]\S*\s*(?:<|>|\\[lg]e)|[A-Za-z]\s*(?:<|>|\\[lg]e))",
    re.IGNORECASE,
)
_CONNECTIVE = re.compile(r"(?<!\{)\s+\b(and|or)\b\s+(?!\})", re.IGNORECASE)


def _plain_math(text: str) -> str:
    s = text.strip().rstrip(".").strip()
    # "... gives 2, so the limit is exp(2)": the clause after the last "so" / "therefore" states the answer.
    if parts := re.split(r"[,;]\s+(?:so|therefore|thus|hence)\s+", s, flags=re.IGNORECASE)[1:]:
        s = parts[-1]
    # A remark in brackets after the answer: "-1 \\le x < 2 (x = 2 is excluded, it makes the denominator zero)".
    if (aside := re.search(r"\s+\(([^()]*)\)\s*$", s)) and _is_words(aside.group(1)):
        s = s[: aside.start()]
    if lead := _LEAD_IN.match(s):
        s = s[lead.end() :]
    elif lead := _CONDITION_LEAD_IN.match(s):
        s = s[lead.end() :]
    elif clause := re.fullmatch(r"[A-Za-z][A-Za-z ]+,\s*([A-Za-z](?:_\{?\w+\}?)?\s*=\s*[^=]+)", s):
        s = clause.group(1)  # "Taking fourth roots of both sides, x = \\sqrt[4]{48}"
    s = re.sub(r"\bsqrt\s*\(([^()]*)\)", r"\\sqrt{\1}", s)
    s = _CONNECTIVE.sub(lambda m: f" \\text{{ {m.group(1).lower()} }} ", s)
    if _is_words(s):  # units or words after the mathematics: "3\\pi square units"
        s = re.sub(r"(?:\s+[A-Za-z]{2,})+\s*$", "", s)
    if _is_words(s) and (end := re.search(r"\s([\[(][^()\[\]]*,[^()\[\]]*[\])])\s*$", s)):
        s = end.group(1)  # words in any language, then a point or an interval: "Le point est (2, -1)"
    return text if _is_words(s) or not s else s


def _region(m: re.Match[str]) -> str:
    return next(g for g in m.groups() if g is not None)


def _is_words(content: str) -> bool:
    """Prose between two dollar signs ("$0.2 per minute, so 50 minutes pays $"): currency, not mathematics."""
    bare = re.sub(r"\\(?:text|mbox|mathrm|operatorname)\{[^{}]*\}|\\[A-Za-z]+", " ", content)
    bare = re.sub(r"\b(?:sqrt|sin|cos|tan|log|ln|exp|pi|inf|infty|oo)\b", " ", bare)
    return re.search(r"[A-Za-z]{3,}", bare) is not None


# Set-builder notation over the reals is its condition: "\\{x \\in \\mathbb{R} \\mid x > 2\\}" is "x > 2".
_SET_BUILDER = re.compile(
    r"\\\{\s*(?:\\[,;: ]\s*)*(?P<var>[A-Za-z])\s*(?:(?:\\in|∈)\s*(?:\\mathbb\s*\{?R\}?|\\R\b|ℝ)\s*)?"
    r"(?:\\mid|\\vert|\||:)\s*(?P<cond>[^{}]*?(?P=var)[^{}]*?)\s*(?:\\[,;: ]\s*)*\\\}"
)


# A function written without its backslash ("sin(C)", "ln 5") is the function, not a product of letters.
_FUNCTION_NAME = re.compile(
    r"(?<![\\A-Za-z])(arcsin|arccos|arctan|sinh|cosh|tanh|sin|cos|tan|cot|sec|csc|ln|log|exp)"
    r"(?=\s*[({]|\s*_|\s+[A-Za-z0-9\\])"
)


# A matrix written as a nested list, as code prints it: "[[1, 2], [3, 4]]", "[[3], [-1]]".
_NESTED_LIST = re.compile(r"\[\s*\[[^\[\]]*\](?:\s*,?\s*\[[^\[\]]*\])*\s*\]")


def nested_lists_as_matrices(text: str) -> str:
    """Every nested list of equal rows in ``text`` as a LaTeX ``pmatrix`` ("[[1, 2], [3, 4]]")."""
    return _NESTED_LIST.sub(_as_matrix, text)


def _as_matrix(m: re.Match[str]) -> str:
    rows = [[c.strip() for c in row.split(",")] for row in re.findall(r"\[([^\[\]]*)\]", m.group(0))]
    if len({len(r) for r in rows}) != 1 or any(not c for r in rows for c in r):
        return m.group(0)
    if len(rows) == 1 and len(rows[0]) == 1:
        return rows[0][0]  # "[[-2]]": one value
    return "\\begin{pmatrix}" + " \\\\ ".join(" & ".join(r) for r in rows) + "\\end{pmatrix}"


# Numbers as Python and SymPy print them: "Rational(3, 4)", "sqrt(2)", "(1+1j)", "2*I".
_CODE_FORMS = re.compile(
    r"\b(?:Rational|Fraction)\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)|\bsqrt\(([^()]*)\)|(?<=\d)j\b|(?<=\d)\*?I\b"
)


def named_functions(text: str) -> str:
    """``text`` with function names written without their backslash as functions ("exp(2)", "sin(C)", "ln 5")
    and the code forms of :func:`code_forms`: what :func:`math_span` needs to find a sentence's mathematics."""
    return code_forms(_FUNCTION_NAME.sub(r"\\\1", text))


# Values as Python prints its number types: "Decimal('2.50')", "np.float64(12.0)", "numpy.int64(3)".
_NUMBER_TYPES = re.compile(
    r"\bDecimal\(\s*['\"]?(-?[\d.eE+-]+)['\"]?\s*\)|\b(?:np|numpy)\.(?:float|int|uint)(?:16|32|64|128)?\(\s*(-?[\d.eE+-]+)\s*\)"
)
# The Wolfram Language (Mathematica's input and output): Sqrt[2], Pi, E^2, Sin[x], Log[x], {{x -> -1}, {x -> 3}}.
_WOLFRAM_FUNCTION = re.compile(r"\b(Sqrt|Sin|Cos|Tan|Log|Exp|ArcSin|ArcCos|ArcTan|Abs)\[([^\[\]]*)\]")
_WOLFRAM_NAMES = {
    "Sin": "\\sin",
    "Cos": "\\cos",
    "Tan": "\\tan",
    "Log": "\\ln",
    "Exp": "\\exp",
    "ArcSin": "\\arcsin",
    "ArcCos": "\\arccos",
    "ArcTan": "\\arctan",
}
_WOLFRAM_RULE = re.compile(r"\{\s*([A-Za-z]\w*)\s*->\s*([^{}]+?)\s*\}")


def _wolfram(text: str) -> str:
    def function(m: re.Match[str]) -> str:
        name, arg = m.group(1), m.group(2)
        if name == "Sqrt":
            return f"\\sqrt{{{arg}}}"
        if name == "Abs":
            return f"|{arg}|"
        return f"{_WOLFRAM_NAMES[name]}({arg})"

    for _ in range(3):  # nested calls, innermost first
        text = _WOLFRAM_FUNCTION.sub(function, text)
    text = re.sub(r"(?<![A-Za-z\\])Pi(?![A-Za-z])", r"\\pi ", text)
    text = re.sub(r"(?<![A-Za-z\\])E(?=\s*\^)", "e", text)
    if "->" in text:  # solutions as rules: {{x -> -1}, {x -> 3}} is x = -1, x = 3
        text = _WOLFRAM_RULE.sub(r"\1 = \2", text)
        text = re.sub(r"\{\s*([A-Za-z]\w*\s*=[^{}]*)\}", r"\1", text)
    return text


def code_forms(text: str) -> str:
    """Numbers as code and calculators write them, in LaTeX: ``Rational(3, 4)``, ``sqrt(2)``, ``1j``, a bare
    "pi", ``\\varnothing``, an upright ``\\mathrm{i}``, ``\\sqrt{-1}``."""
    vector = re.search(r"\d\s*\*?\s*i\b", text) and re.search(
        r"\d\s*\*?\s*j\b", text
    )  # 3i + 4j: unit vectors
    text = _NUMBER_TYPES.sub(lambda m: m.group(1) or m.group(2), text)
    if re.search(r"\b(?:Sqrt|Sin|Cos|Tan|Log|Exp|ArcSin|ArcCos|ArcTan|Abs)\[|\bPi\b|\bE\s*\^|->", text):
        text = _wolfram(text)
    text = _CODE_FORMS.sub(lambda m: m.group(0) if vector and m.group(0)[-1:] == "j" else _code_form(m), text)
    text = re.sub(r"(?<![\\A-Za-z])pi(?![A-Za-z])", r"\\pi ", text)  # "pi/4"
    text = re.sub(r"\\varnothing(?![A-Za-z])", r"\\emptyset", text)
    text = re.sub(r"\\mathrm\{([eid])\}", r"\1", text)  # upright e, i, d
    return re.sub(r"\\sqrt\{-1\}", "i", text)


def _code_form(m: re.Match[str]) -> str:
    if m.group(1) is not None:
        return f"\\frac{{{m.group(1)}}}{{{m.group(2)}}}"
    if m.group(3) is not None:
        return f"\\sqrt{{{m.group(3)}}}"
    return "i"


def prepare(text: str) -> str:
    """The text rewrites of the module docstring (repeating decimals, then ``\\pm``, also written ``±`` or
    ``+/-``), set-builder notation over the reals as its condition, function names written without their
    backslash as functions, numbers as Python and SymPy print them (``Rational(3, 4)``, ``sqrt(2)``, ``1j``), a
    bare "pi", ``\\varnothing``, an upright ``\\mathrm{i}`` and ``\\sqrt{-1}`` as the imaginary unit."""
    text = text.replace("±", "\\pm ").replace("∓", "\\mp ").replace("+/-", "\\pm ")
    # The inverse functions written as powers: "\\tan^{-1} 2" is arctan 2 (not 1/tan 2, which is written cot).
    text = re.sub(r"\\(sin|cos|tan)\s*\^\s*(?:\{\s*-\s*1\s*\}|-1(?!\d))", r"\\arc\1 ", text)
    # A radical of one digit or letter without braces, as TeX reads it: "\\sqrt 2", "\\sqrt3", "\\sqrt[3]2".
    text = re.sub(r"\\sqrt\s*(\[[^\]]*\])?\s*(\d|[A-Za-z])(?![\dA-Za-z])", r"\\sqrt\1{\2}", text)
    text = _SET_BUILDER.sub(lambda m: m.group("cond"), text)
    text = _FUNCTION_NAME.sub(r"\\\1", text)
    text = code_forms(text)
    return expand_pm(repeating_to_fraction(text))


@dataclass(frozen=True)
class Form:
    """What an answer is. ``items``: the values (``values``, ``ordered``), one value (``single``), the sympy set
    (``set``), the matrix (``matrix``) or ``(name, value)`` pairs (``named``). ``pair``: for an open interval
    written ``(a, b)``, the same text read as a point."""

    kind: str
    items: tuple[Any, ...]
    pair: tuple[Any, ...] | None = field(default=None)


_UNION_SEP = re.compile(r"\\text\{\s*or\s*\}|\\mbox\{\s*or\s*\}|\bor\b|\\cup|\\lor|,|;")
_INTER_SEP = re.compile(r"\\text\{\s*and\s*\}|\\mbox\{\s*and\s*\}|\band\b|\\cap|\\land")


def form_of(text: str, parse: Callable[[str], list[Any]]) -> Form | None:
    """The form of one final answer (already ``prepare``d), from ``parse`` (the library's parse of a LaTeX
    fragment; its first element is the sympy object); None when it is none of the forms above."""
    import sympy

    if len(text) > MAX_CHARS:
        return None
    parsed = parse(text)
    obj = next((p for p in parsed if not isinstance(p, str)), None)
    if obj is None:
        return None
    if _is_set_like(obj):
        real_set = _real_set(text, parse)
        if real_set is not None:
            pair = None
            if isinstance(obj, sympy.Interval) and obj.left_open and obj.right_open and obj.start.is_finite:
                pair = (obj.start, obj.end)
            return Form("set", (real_set,), pair)
        return None
    if isinstance(obj, sympy.MatrixBase):
        return Form("matrix", (sympy.Matrix(obj),))
    if isinstance(obj, (sympy.MatMul, sympy.MatAdd, sympy.MatPow)) or getattr(obj, "is_Matrix", False):
        done = obj.doit()
        return Form("matrix", (sympy.Matrix(done),)) if isinstance(done, sympy.MatrixBase) else None
    if isinstance(obj, sympy.Tuple):
        return Form("ordered", tuple(obj))
    if isinstance(obj, sympy.Eq):
        return _equation_form(obj)
    if isinstance(obj, sympy.FiniteSet):
        return _list_form(list(obj.args))
    if isinstance(obj, sympy.Expr) and not isinstance(obj, sympy.Interval):
        return Form("single", (obj,))
    return None


def _is_set_like(obj: Any) -> bool:
    import sympy
    from sympy.core.relational import Relational

    if isinstance(obj, (sympy.Interval, sympy.Union, sympy.Intersection, sympy.And, sympy.Or)):
        return True
    if isinstance(obj, Relational) and not isinstance(obj, sympy.Eq):
        return True
    if isinstance(obj, sympy.Eq) and isinstance(obj.rhs, (sympy.Interval, sympy.Union)):
        return True
    if isinstance(obj, sympy.FiniteSet) and obj.args:
        return all(_is_set_like(a) for a in obj.args)
    return False


def _real_set(text: str, parse: Callable[[str], list[Any]]) -> Any:
    """The set of reals ``text`` describes: "or"/``\\cup``/commas join pieces, "and"/``\\cap`` intersect them."""
    import sympy

    text = re.sub(r"^\s*[A-Za-z]\s*\\in\s*", "", text.strip())
    symbols: set[Any] = set()
    union: Any = sympy.EmptySet
    parts = split_top(text, _UNION_SEP)
    if len(parts) > 12:
        return None
    for part in parts:
        inter: Any = sympy.S.Reals
        for piece in split_top(part, _INTER_SEP):
            if not piece:
                return None
            one = _piece_set(piece, parse, symbols)
            if one is None:
                return None
            inter = sympy.Intersection(inter, one)
        union = sympy.Union(union, inter)
    return union if len(symbols) <= 1 else None


def _piece_set(piece: str, parse: Callable[[str], list[Any]], symbols: set[Any]) -> Any:
    import sympy
    from sympy.core.relational import Relational

    piece = re.sub(r"^\s*[A-Za-z]\s*\\in\s*", "", piece)
    obj = next((p for p in parse(piece) if not isinstance(p, str)), None)
    if obj is None:
        return None
    if isinstance(obj, sympy.Eq) and isinstance(obj.rhs, sympy.Set):
        obj = obj.rhs
    if isinstance(obj, sympy.Set):
        return obj if obj.is_subset(sympy.S.Reals) is not False else None
    if isinstance(obj, (Relational, sympy.And, sympy.Or)) and not isinstance(obj, sympy.Eq):
        free = obj.free_symbols
        if len(free) != 1:
            return None
        symbols.update(free)
        return obj.as_set()
    return None


def _equation_form(eq: Any) -> Form | None:
    import sympy

    lhs, rhs = eq.lhs, eq.rhs
    if isinstance(lhs, sympy.Symbol) and isinstance(rhs, sympy.FiniteSet):
        return _values(list(rhs.args))
    if isinstance(lhs, sympy.Tuple) and all(isinstance(s, sympy.Symbol) for s in lhs.args):
        if isinstance(rhs, sympy.Interval) and len(lhs.args) == 2:
            values: tuple[Any, ...] = (rhs.start, rhs.end)
        elif isinstance(rhs, sympy.Tuple) and len(rhs.args) == len(lhs.args):
            values = tuple(rhs.args)
        else:
            return None
        return Form("named", tuple(zip((s.name for s in lhs.args), values, strict=True)))
    return None


def _list_form(items: list[Any]) -> Form | None:
    """A FiniteSet from the library: named components, the solutions of one variable, or plain values."""
    import sympy

    eqs = [a for a in items if isinstance(a, sympy.Eq)]
    if eqs and len(eqs) == len(items) and all(isinstance(e.lhs, sympy.Symbol) for e in eqs):
        names = [e.lhs.name for e in eqs]
        if len(set(names)) == len(names) and len(names) > 1:
            return Form("named", tuple((e.lhs.name, e.rhs) for e in eqs))
        if len(set(names)) == 1:
            return _values([e.rhs for e in eqs])
        return None
    if eqs:
        lhs = {e.lhs for e in eqs}
        if len(lhs) != 1 or not isinstance(next(iter(lhs)), sympy.Symbol):
            return None
        items = [a.rhs if isinstance(a, sympy.Eq) else a for a in items]
    if any(not isinstance(a, (sympy.Expr, sympy.Tuple, sympy.Interval)) for a in items):
        return None
    return _values(items)


def _values(items: list[Any]) -> Form:
    return Form("values", tuple(items)) if len(items) > 1 else Form("single", tuple(items))


Equal = Callable[[Any, Any], bool]


def _distinct(items: tuple[Any, ...], equal: Equal) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if not any(equal(seen, item) for seen in out):
            out.append(item)
    return out


def _same_values(gold: list[Any], answer: list[Any], equal: Equal) -> bool:
    return all(any(equal(g, a) for a in answer) for g in gold) and all(
        any(equal(g, a) for g in gold) for a in answer
    )


def _positional(gold: tuple[Any, ...], answer: tuple[Any, ...], equal: Equal) -> bool:
    return len(gold) == len(answer) and all(equal(g, a) for g, a in zip(gold, answer, strict=True))


def _as_tuple(form: Form) -> tuple[Any, ...] | None:
    if form.kind == "ordered":
        return form.items
    if form.kind == "named":
        return tuple(v for _, v in sorted(form.items, key=lambda kv: str(kv[0])))
    if form.kind == "set" and form.pair is not None:
        return form.pair
    return None


def compare(gold: Form, answer: Form, equal: Equal) -> bool | None:
    """Whether ``answer`` means ``gold`` (module docstring, step 3); None leaves the pair to the library.
    ``equal`` compares two sympy values (the library's ``verify``)."""
    import sympy

    if answer.kind == "values" and gold.kind != "values":
        # One object asked for, several different ones given: refused, whatever the first of them is.
        if len(_distinct(answer.items, equal)) > 1:
            return False
        answer = Form("single", answer.items[:1])
    if gold.kind == "set" and answer.kind == "set":
        g, a = gold.items[0], answer.items[0]
        empty = sympy.S.EmptySet
        return bool(g == a) or (sympy.Complement(g, a) == empty and sympy.Complement(a, g) == empty)
    if gold.kind == "values":
        if answer.kind == "values":
            return _same_values(list(gold.items), list(answer.items), equal)
        if answer.kind == "single":
            return _same_values(list(gold.items), list(answer.items), equal)
        if answer.kind == "ordered" and len(answer.items) == len(gold.items):
            # the parts of a question answered in order ("(a) 3, (b) 7" against "3, 7"): compared in order
            return _positional(tuple(gold.items), tuple(answer.items), equal)
        return None
    if gold.kind == "named" and answer.kind == "named":
        g_names, a_names = dict(gold.items), dict(answer.items)
        if set(g_names) != set(a_names):
            return False
        return all(equal(g_names[k], a_names[k]) for k in g_names)
    if gold.kind in ("ordered", "named") or (gold.kind == "set" and gold.pair is not None):
        g_tuple, a_tuple = _as_tuple(gold), _as_tuple(answer)
        if g_tuple is not None and a_tuple is not None and (gold.kind != "set" or answer.kind != "set"):
            return _positional(g_tuple, a_tuple, equal)
        if gold.kind == "set":
            return False if answer.kind in ("single", "matrix") else None
        return None
    if gold.kind == "set":
        return False if answer.kind in ("single", "ordered", "named", "matrix") else None
    if gold.kind == "matrix" and answer.kind == "matrix":
        g, a = gold.items[0], answer.items[0]
        if g.shape != a.shape:
            return False
        return all(equal(x, y) for x, y in zip(list(g), list(a), strict=True))
    return None
