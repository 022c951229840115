"""Answers that are families of solutions, compared as families — what ``math_verify`` asks when the reference
has a free integer or arbitrary constants.

- **Periodic solutions with an integer parameter** (trigonometric equations, GAOKAO and college algebra):
  ``x = \\frac{\\pi}{4} + k\\pi, k \\in \\mathbb{Z}``; several families joined by commas or "or"
  (``\\frac{\\pi}{6} + 2k\\pi, \\frac{5\\pi}{6} + 2k\\pi``); ``(-1)^n \\frac{\\pi}{6} + n\\pi`` (its even and odd
  terms, two families). Each family must be ``a + b k`` with constants ``a`` and ``b``; two answers are equal when
  they describe the same set of values: with ``L`` the least common multiple of the steps, the same residues
  modulo ``L``. The parameter's name does not matter (``n``, ``k``, ``m``), nor its domain clause.
- **General solutions of linear differential equations**: ``y = C_1 e^{x} + C_2 e^{-x}`` against ``y = a\\cosh x
  + b\\sinh x``, ``y = Ce^{-x} + x - 1`` against ``y = x - 1 + \\frac{K}{e^{x}}``. Each side is ``p(x) + Σ c_i
  φ_i(x)`` in its arbitrary constants (the free symbols other than the variable); equal when both have as many
  constants, the ``φ_i`` span the same functions and the particular parts differ by one of them — checked on
  sample points by matrix ranks.

``compare_*`` return ``(equal, reason)`` or None when the pair is not of their kind (the caller goes on). Both
take the caller's ``parse`` (LaTeX to sympy objects). Pure functions; the caller bounds their time.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from rlar.tools import math_forms

# sympy is imported where used: heavy, and loaded only when a reference is a family of solutions.

__all__ = ["compare_ode_solutions", "compare_periodic_families"]

Parse = Callable[[str], list[Any]]

_DOMAIN = re.compile(
    r"(?:[,;，]|\\text\{\s*and\s*\})?\s*\(?\s*(?:\\(?:text|mathrm)\{\s*(?:where|for|with)\s*\}\s*|(?:where|for|with)\s+)?"
    r"\$?\s*([a-z])\s*(?:\\in|∈)\s*(?:\\mathbb\s*\{?\s*Z\s*\}?|ℤ|\\Z\b|\\mathbf\s*\{?\s*Z\s*\}?)\s*\$?\s*\)?"
    r"|[,;]?\s*(?:where|for|with)\s+\$?([a-z])\$?\s+(?:is\s+)?(?:an?\s+|any\s+)?integers?\b"
    r"|[,;]?\s*(?:where|for|with)\s+(?:any|every|all|some|an?)\s+integers?\s+\$?([a-z])\$?"
)
_PARAMETER_TERM = re.compile(
    r"(?:\d*\s*([kn])\s*\\pi|\\pi\s*([kn])\b|\\frac\{[^{}]*(?<![A-Za-z\\])([kn])(?![A-Za-z])[^{}]*\\pi[^{}]*\})"
)
_SPLIT = re.compile(r",|;|\\text\{\s*or\s*\}|\bor\b|\\cup|或")


def _families_text(text: str) -> tuple[str, str | None]:
    """``text`` without its parameter's domain clause and leading "x =", and the parameter's name (from the
    clause, else the k or n beside π)."""
    name = None
    m = _DOMAIN.search(text)
    if m:
        name = m.group(1) or m.group(2) or m.group(3)
        text = text[: m.start()] + text[m.end() :]
    text = math_forms.prepare(math_forms.math_span(math_forms.named_functions(text)))
    text = re.sub(r"\\qquad|\\quad|\\[,;!: ]", " ", text)
    text = re.sub(r"^\s*\$*\s*(?:[a-zθ]|\\theta|\\alpha)\s*=\s*", "", text.strip()).strip(" $.")
    if name is None and (p := _PARAMETER_TERM.search(text)):
        name = next(g for g in p.groups() if g)
    return text, name


def _family_terms(expr: Any, parameter: Any) -> list[tuple[Any, Any]] | None:
    """(a, b) of each family ``a + b k`` that ``expr`` describes over the integers k: two for a term
    ``(-1)^k``, one otherwise; None when it is not linear in k with constant coefficients."""
    import sympy

    k = sympy.Symbol("k_family", integer=True)
    expr = expr.subs(parameter, k)
    variants = [expr]
    if expr.has(sympy.Pow(-1, k)):
        variants = [expr.subs(k, 2 * k), expr.subs(k, 2 * k + 1)]
    out = []
    for v in variants:
        v = sympy.expand(sympy.powsimp(sympy.expand(v), force=True))
        v = v.replace(lambda e: e.is_Pow and e.base == -1, lambda e: (-1) ** sympy.expand(e.exp).subs(k, 0))
        b = sympy.diff(v, k)
        a = sympy.simplify(v - b * k)
        if b.free_symbols or a.free_symbols or b == 0:
            return None
        out.append((a, b))
    return out


def _residues(families: list[tuple[Any, Any]]) -> tuple[set[Fraction], Fraction] | None:
    """The families as residues (in units of π) modulo the least common multiple of their steps."""
    import sympy

    steps, starts = [], []
    for a, b in families:
        step = sympy.nsimplify(sympy.simplify(b / sympy.pi))
        start = sympy.nsimplify(sympy.simplify(a / sympy.pi))
        if not (step.is_Rational and start.is_Rational):
            return None
        steps.append(abs(Fraction(int(step.p), int(step.q))))
        starts.append(Fraction(int(start.p), int(start.q)))
    period = Fraction(
        math.lcm(
            *(s.numerator * (math.lcm(*(t.denominator for t in steps)) // s.denominator) for s in steps)
        ),
        math.lcm(*(t.denominator for t in steps)),
    )
    if period / min(steps) > 48:
        return None
    out: set[Fraction] = set()
    for start, step in zip(starts, steps, strict=True):
        for j in range(int(period / step)):
            out.add((start + j * step) % period)
    return out, period


def compare_periodic_families(gold: str, answer: str, parse: Parse) -> tuple[bool, str] | None:
    """Families of solutions over an integer parameter, compared as sets (module docstring); None when the
    reference is not one or either side cannot be read so."""
    import sympy

    g_text, g_name = _families_text(gold)
    if g_name is None:
        return None
    a_text, a_name = _families_text(answer)
    if a_name is None:
        return False, "one value where the reference is a family over the integers"

    def families(text: str, name: str) -> list[tuple[Any, Any]] | None:
        out: list[tuple[Any, Any]] = []
        for piece in (p.strip() for p in _SPLIT.split(text)):
            if not piece:
                continue
            obj = next((x for x in parse(piece) if isinstance(x, sympy.Expr)), None)
            if obj is None:
                return None
            symbols = {s for s in obj.free_symbols if s.name == name}
            if len(symbols) != 1 or len(obj.free_symbols) != 1:
                return None
            terms = _family_terms(obj, symbols.pop())
            if terms is None:
                return None
            out.extend(terms)
        return out or None

    g_families, a_families = families(g_text, g_name), families(a_text, a_name)
    if g_families is None or a_families is None:
        return None
    g_res, a_res = _residues(g_families), _residues(a_families)
    if g_res is None or a_res is None:
        return None
    (g_set, g_period), (a_set, a_period) = g_res, a_res
    period = Fraction(
        math.lcm(g_period.numerator * a_period.denominator, a_period.numerator * g_period.denominator),
        g_period.denominator * a_period.denominator,
    )
    if period / g_period > 48 or period / a_period > 48:
        return None

    def widened(values: set[Fraction], own: Fraction) -> set[Fraction]:
        return {(v + j * own) % period for v in values for j in range(int(period / own))}

    same = widened(g_set, g_period) == widened(a_set, a_period)
    return same, f"{'the same' if same else 'another'} family of solutions over the integers"


_ODE_LHS = re.compile(r"^\s*\$*\s*y\s*(?:\(\s*([xt])\s*\))?\s*=\s*")


def compare_ode_solutions(gold: str, answer: str, parse: Parse) -> tuple[bool, str] | None:
    """General solutions ``y = p(x) + Σ c_i φ_i(x)`` with arbitrary constants, compared as families (module
    docstring); None when the reference is not one or either side is not linear in its constants."""
    import sympy

    g_lhs, a_lhs = _ODE_LHS.match(gold), _ODE_LHS.match(answer)
    if g_lhs is None or a_lhs is None:
        return None

    def side(text: str, lhs: re.Match[str]) -> Any:
        body = text[lhs.end() :].strip().strip("$").strip().rstrip(".,")
        return next((x for x in parse(body) if isinstance(x, sympy.Expr)), None)

    g, a = side(gold, g_lhs), side(answer, a_lhs)
    if g is None or a is None:
        return None
    names = {s.name for s in g.free_symbols | a.free_symbols}
    variable_name = "x" if "x" in names else "t" if "t" in names else None
    if variable_name is None:
        return None

    def split(expr: Any) -> tuple[Any, list[Any], Any] | None:
        var = next((s for s in expr.free_symbols if s.name == variable_name), None)
        constants = sorted((s for s in expr.free_symbols if s.name != variable_name), key=lambda s: s.name)
        if var is None or not constants:
            return None
        basis = [sympy.diff(expr, c) for c in constants]
        if any(set(b.free_symbols) - {var} for b in basis):
            return None  # not linear in its constants
        particular = expr.subs({c: 0 for c in constants})
        return var, basis, particular

    g_split, a_split = split(g), split(a)
    if g_split is None:
        return None
    if a_split is None:
        return False, "no arbitrary constant where the reference is a general solution"
    (g_var, g_basis, g_part), (a_var, a_basis, a_part) = g_split, a_split
    if len(g_basis) != len(a_basis):
        return False, f"{len(a_basis)} arbitrary constants, not {len(g_basis)}"
    points = [0.13, 0.41, 0.77, 1.09, 1.37, 1.83, 2.29]

    def values(f: Any, var: Any) -> list[float]:
        return [float(sympy.N(f.subs(var, p))) for p in points]

    try:
        gm = np.array([values(f, g_var) for f in g_basis])
        am = np.array([values(f, a_var) for f in a_basis])
        shift = np.array([values(g_part, g_var)]) - np.array([values(a_part, a_var)])
    except (TypeError, ValueError):
        return None
    if not (np.isfinite(gm).all() and np.isfinite(am).all() and np.isfinite(shift).all()):
        return None

    def rank(m: Any) -> int:
        return int(np.linalg.matrix_rank(m, tol=1e-8 * max(1.0, float(np.abs(m).max()))))

    n = len(g_basis)
    same = (
        rank(gm) == n
        and rank(am) == n
        and rank(np.vstack([gm, am])) == n
        and rank(np.vstack([gm, shift])) == n
    )
    return bool(same), f"{'the same' if same else 'another'} general solution (constants renamed)"
