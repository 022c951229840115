"""Final answers and their equivalence, read the same way on references and on responses.

Used by the ``math_verify`` tool (``rlar.tools.rules``). Pure functions; math-verify (sympy) is imported only for
answers that are not plain numbers or choice letters.

1. The final answer. A reference: the part after GSM8K's ``####`` (or its ``\\boxed{}``), as written. A response:
   the *last* explicit answer (``\\boxed{...}``, ``#### X``, "the answer is X", "answer: X", "final answer: X",
   "option X"); without one, a bulleted list its last line introduces as the solutions, else the last sentence
   that holds a value. Markdown emphasis (also around braces: ``\\mathbf{\\frac{2}{3}}``), struck-through text
   (``~~60~~``) and ``<<calc>>`` notes are dropped first; Python's ``x**2`` is a power, a nested list a matrix, an
   ``aligned`` chain one line, ``\\therefore`` / ∴ a "so". A sentence with several numbers states the one
   ``stated_value`` picks ("In total, he will pay $48 for the 4 shirts" -> 48), not simply its last; the base or
   exponent of a power is no value of its own ("8^(2/3)"), nor is a number in a bracketed remark when one stands
   outside it. Markup for a renderer (MathML, Typst, Julia rationals, digit-group underscores, box frames,
   spoilers, footnotes and sources) is read first (``rlar.tools.answer_markup``). What follows the answer and is
   not one — a closing note, a sign-off or offer ("Let me know if you'd like 2 more"), a check, the proof of a
   claim stated first, a bracketed counterfactual ("(If 0 counted it would be 7, option D.)") — is not read. A line
   answering a question's parts in order ("(a) 3 and (b) 7") is a tuple of parts, each compared with the
   reference's item in its place. An aside in brackets after the answer that begins with a word ("(check: ...)",
   "(at x = 1 both give 4)") is working; an answer that states an operation on its only number ("the reciprocal
   of 2/3") and "1,234" in a language that writes a decimal comma abstain; a sign in a group of its own
   (``\\mathord{-}8``) is that sign; a percent below 1 never equals the same bare number ("0.4%" against 0.4).
   A domain said after an expression ("x + 2 (for x ≠ 2)") is dropped when the reference states none. Quadrant
   bearings ("S45°W") are degrees from north (225°).
2. Hedging and spam score 0: a final answer that offers two different values ("3 or 4", "either B or C",
   "40 to 50", ``\\boxed{6} or \\boxed{7}``), and a response that is only a list of numbers or letters
   ("1 2 3 4 5", "A, B, C, D"), a final answer that is a list of numbers ("The answer is 3, 4, 5, 6"), and three
   or more different ``\\boxed{}`` answers, when the reference is one value.
3. Plain numbers are compared exactly (as fractions) after normalising: thousands separators (``1,000``, ``2 000``),
   currency (``$``, ``\\$``), units and trailing words (``540 m``, ``10\\text{ inches}``), degrees (``30^\\circ``),
   number words ("sixty-four", "one hundred forty-four", "one million"; ``rlar.tools.written_numbers``),
   fractions (``1/2``, ``\\frac{1}{2}``), mixed numbers (``2 1/2``, ``2\\frac{1}{2}`` = 5/2, as MATH writes them),
   scientific notation (``1e6``, ``1.2 \\times 10^{5}``, ``10^5``), leading zeros (AIME's ``033``) and repeating
   decimals (``0.\\overline{3}``, ``0.(3)``, ``0.333...``; ``rlar.tools.math_forms.repeating_to_fraction``).
4. Percent (the documented rule): ``X%`` equals ``X`` (when ``|X| >= 1``: "0.4%" against a probability of 0.4 is
   the slip of a fraction for a percent) and ``X/100``; a number without a percent sign equals only
   itself. So ``50\\%`` matches 50, 50% and 0.5; ``25`` matches 25% but not 0.25.
5. Multiple-choice: a reference that is one letter A-E (``C``, ``(C)``, ``\\text{(C)}``) is compared with the
   letter the response chooses ("The answer is (C)", "Answer: C) 12", "option c", ``\\boxed{C}``, "C. 42").
   Arithmetic between plain numbers that the answer ends with, left undone ("7 × 8 + 2", "P = 3 ÷ 4"), is worked
   out exactly (``arithmetic``, ``arithmetic_value``) — unless the query holds that arithmetic itself (an echoed
   "What is 12 + 7?" states no answer). Roman numerals of two letters or more ("XL", ``\\text{XIV}``) are numbers.
6. Everything else (expressions, tuples, sets, intervals, matrices, equations, radicals, pi) goes to math-verify
   with both sides wrapped in ``$...$`` (so ``x+3``, ``(1, 2)`` and ``\\{1, 2\\}`` parse as what they are), and
   to the library's own extraction as a fallback; the canonical-form layer of ``rlar.tools.math_forms`` (sets of
   reals, solution lists, named components, ``\\pm``, scalar-factor matrices, several answers where one is asked)
   decides first where it applies.
"""

from __future__ import annotations

import ast
import functools
import json
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from rlar.tools import structured
from rlar.tools.answer_chars import read_chars
from rlar.tools.answer_markup import plain_markup
from rlar.tools.answer_text import in_counterfactual
from rlar.tools.math_forms import MATH_REGION, code_forms, nested_lists_as_matrices, repeating_to_fraction
from rlar.tools.written_numbers import numbers_from_words

__all__ = [
    "FinalAnswer",
    "arithmetic",
    "arithmetic_text",
    "arithmetic_value",
    "choice_letter",
    "choice_letters",
    "chosen_statements",
    "circled_choices",
    "comma_reads_two_ways",
    "final_answer",
    "gold_answer",
    "has_relation",
    "is_prose",
    "is_worked_solution",
    "not_one_value",
    "roman_value",
    "scalar_value",
    "stated_point",
    "stated_value",
    "states_an_operation",
    "value_form",
    "without_aside",
    "without_domain",
]

# A precision stated beside the answer is not a second value: "(rounded to 2 d.p.)", "to one decimal place",
# "to the nearest hundredth", "correct to 3 significant figures".
_PRECISION = re.compile(
    r"[ \t]*,?[ \t]*\(?\s*(?:(?:rounded|correct|accurate|approximately|approximated|given|exact)\s+)?to\s+(?:"
    r"the\s+nearest\s+(?:whole\s+number|integer|tenth|hundredth|thousandth|ten|hundred|thousand|cent|dollar"
    r"|percent|degree|unit)s?"
    r"|(?:\d+|one|two|three|four|five|six)\s*(?:d\.\s?p\.?|dp\b|decimal\s+(?:places?|digits?)|s\.\s?f\.?|sf\b"
    r"|significant\s+(?:figures?|digits?)|sig\.?\s*figs?)"
    r")\s*\)?",
    re.IGNORECASE,
)
# A check of the answer after it ("Check: 3(4) - 2 = 10 ✓", "Verification: ..."): its numbers are not the answer.
_CHECK = re.compile(
    r"(?:^|\n|(?<=[.!?])[ \t]+)[ \t]*(?:\*\*)?(?:(?:you\s+can|we\s+can|let'?s|let\s+us|to)\s+)?"
    r"(?:sanity\s+check|double[- ]check|check(?:ing)?|verification|verify|verifying)"
    r"(?:\s+(?:it|this|that|the\s+answer|our\s+answer)|\s+(?:with|by|using|against|in|on)\b[^\n:=]{1,60})?"
    r"(?:\*\*)?\s*(?::|—|–|-\s)",
    re.IGNORECASE,
)

_NUM = (
    r"-?\d+\s*\\[dt]?frac\{\d+\}\{\d+\}"  # mixed number, MATH style
    r"|-?\\[dt]?frac\{-?\d+\}\{-?\d+\}"
    r"|-?\d+(?:\.\d+)?\s*(?:\\times|\\cdot|×|[xX*])\s*10\s*\^\s*\{?[-+]?\d+\}?"
    r"|-?\d+(?:\.\d+)?[eE][+-]?\d+"
    r"|10\s*\^\s*\{?-?\d+\}?"
    r"|-?\d+\s+\d+/\d+(?![\d.])"  # mixed number, 2 1/2
    r"|-?\d+(?:\.\d+)?\s*/\s*\d+(?:\.\d+)?"
    r"|-?\d{1,3}(?:\.\d{3})+,\d+(?![\d,])"  # decimal comma with thousands dots, 1.234,5
    r"|(?<!\d,)-?\d+,(?:\d{1,2}|\d{4,})(?![\d,])"  # decimal comma, 3,5 (three digits after it are thousands)
    r"|-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d)"
    r"|-?\d*\.\d+|-?\d+"
)
_PERCENT = r"\s*(?:\\%|%|\s*percent\b|\s*per\s*cent\b)"
_NUMBER = re.compile(rf"(?<![\w.])(?:{_NUM})(?:{_PERCENT})?")
_SCALAR = re.compile(
    rf"^\s*(?P<num>(?:{_NUM}))(?P<pct>{_PERCENT})?"
    r"(?P<rest>\s*[A-Za-z][A-Za-z .,/^23]*)?\s*[.!]?\s*$"  # trailing units or words: "540 m", "8 apples left"
)
_SPACE_GROUPS = re.compile(r"^\s*-?\d{1,3}(?:[ \u00a0\u2009\u202f]\d{3})+(?=\s|$)")
_LETTER = r"[A-Ea-e]"
_CHOICE_REF = re.compile(r"^\s*(?:\\text\{\s*)?\(?\s*([A-E])\s*\)?\s*\}?\s*[.):]?\s*$")
_MARKERS = re.compile(
    r"####\s*(?P<hash>[^\n]*)"
    # up to the end of its sentence, so that a later answer on the same line is found too
    r"|(?:final\s+answer|the\s+answer|answer|(?<!\w)output|(?<!\w)out\[\d+\])\s*(?:is|:|=)\s*:?\s*(?P<ans>[^\n]*?)(?=(?<!\.)\.(?:\s|$)|[\n;]|$)"
    r"|(?:correct\s+)?(?:choice|option)\s*(?:is\s*)?[:：]?\s*(?:option\s*)?(?P<opt>[\[(]?\s*[A-Ea-e]\s*[\])]?)(?![A-Za-z])"
    # Chinese exam phrasing: "故选：D", "应选 B", "【答案】C", "答案为 12"
    r"|(?:故选|应选|本题选|\[答案\]|答案[为是]?)\s*[：:]?\s*(?P<zh>[^\n。；;]*)",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"(?<!\\)\b(?:or|to|and/or)\s+(?:maybe\s+|perhaps\s+|possibly\s+)?(?=[-\d(\\$A-Ea-e])|\beither\b|\bbetween\b",
    re.IGNORECASE,
)

# Words that make a sentence with two different values a hedge ("It is probably 5, but it could be 6").
_HEDGE_WORDS = re.compile(
    r"\b(?:could|might|may)\s+(?:also\s+|well\s+)?be\b|\b(?:possibly|perhaps|maybe|probably|(?<!equally )likely)\b"
    r"|\bnot\s+sure\b|\bI\s+think\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class FinalAnswer:
    """A response's final answer: ``text`` as written (``boxed``: it came from ``\\boxed{}``), and ``hedged``
    saying why it is not one answer ("" when it is); ``parts``: the values of a question's parts answered in order
    on the answer's line ("(a) 3 and (b) 7"), else empty."""

    text: str
    boxed: bool = False
    hedged: str = ""
    parts: tuple[str, ...] = ()


def _boxed_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, content) of every ``\\boxed{...}`` / ``\\fbox{...}`` with balanced braces, and of a
    brace-less ``\\boxed 9`` (one token)."""
    out = []
    for m in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth == 0:
            out.append((m.start(), i, text[m.end() : i - 1]))
    # Without braces TeX boxes one token (MATH writes "$\\boxed 9$"); a run of digits is read whole, as meant.
    for m in re.finditer(r"\\(?:boxed|fbox)(?:\s+|(?=\\))(-?\d+(?:\.\d+)?|\\[A-Za-z]+|[A-Za-z])", text):
        out.append((m.start(), m.end(), m.group(1)))
    return sorted(out)


# A quadrant bearing: "S45°W" is 45° from south towards west, 225° clockwise from north; "N 60° W" is 300°.
_BEARING = re.compile(
    r"(?:\\text\{\s*)?\b([NS])\s*\}?\s*(\d+(?:\.\d+)?)\s*(?:\^\s*\{?\s*\\circ\s*\}?|°)\s*(?:\\text\{\s*)?([EW])\b\s*\}?"
)


def _bearing(m: re.Match[str]) -> str:
    angle = Fraction(m.group(2))
    degrees = {"NE": angle, "NW": 360 - angle, "SE": 180 - angle, "SW": 180 + angle}[m.group(1) + m.group(3)]
    return f"{float(degrees):g}^\\circ"


def _group_end(text: str, start: int) -> int:
    """The index after the brace group that opens at ``text[start]`` ("{"), or -1 when it does not close."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{" and text[i - 1 : i] != "\\":
            depth += 1
        elif text[i] == "}" and text[i - 1 : i] != "\\":
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


_BRACE_NOTE = re.compile(r"\\(?:underbrace|overbrace|underset|overset|stackrel)\s*(?=\{)")


def _without_brace_notes(text: str) -> str:
    """Notes set under or over a term are not part of it: ``\\underbrace{48}_{\\text{books}}`` is 48,
    ``\\overbrace{4 + 4}^{2}`` is 4 + 4; ``\\underset{note}{x}`` and ``\\overset{note}{x}`` are x."""
    out, pos = [], 0
    for m in _BRACE_NOTE.finditer(text):
        if m.start() < pos:
            continue
        first_end = _group_end(text, m.end())
        if first_end < 0:
            return text
        command = m.group(0).strip()
        if command in ("\\underbrace", "\\overbrace"):
            kept = text[m.end() + 1 : first_end - 1]
            note = re.match(r"\s*[_^]\s*", text[first_end:])
            end = first_end
            if note:
                at = first_end + note.end()
                end = _group_end(text, at) if text[at : at + 1] == "{" else at + 1
                if end < 0:
                    return text
        else:  # \\underset{note}{x}: the second group is the term
            if text[first_end : first_end + 1] != "{":
                return text
            end = _group_end(text, first_end)
            if end < 0:
                return text
            kept = text[first_end + 1 : end - 1]
        grouped = text[: m.start()].rstrip().endswith(("^", "_"))
        out.append(text[pos : m.start()] + ("{" + kept + "}" if grouped else kept))
        pos = end
    return "".join(out) + text[pos:]


def _closed_groups(m: re.Match[str]) -> str:
    """A math region whose braces open more groups than they close, closed at its end: a model that forgets the
    last brace of ``$\\boxed{\\frac{1}{2}$`` means the box to end with the region."""
    body = next(g for g in m.groups() if g is not None)
    missing = len(re.findall(r"(?<!\\)\{", body)) - len(re.findall(r"(?<!\\)\}", body))
    if missing <= 0 or missing > 3 or body.endswith("\\"):  # "$\\boxed{\\$18.90}$": an escaped dollar
        return m.group(0)
    i = m.start(m.lastindex or 0) - m.start() + len(body)
    whole = m.group(0)
    return whole[:i] + "}" * missing + whole[i:]


# A line with one dollar sign that opens mathematics ("the point is $(2, -1).") and none to close it.
_UNCLOSED_DOLLAR = re.compile(r"(?m)^([^$\n]*?(?<!\\)\$(?=[(\[\\{A-Za-z])[^$\n]*?)(\s*[.!?]?\s*)$")


def _clean(text: str) -> str:
    """The characters read (``answer_chars.read_chars``), GSM8K's calculator notes and emphasis markup removed
    (Markdown bold, italics and code marks, HTML emphasis tags, ``\\textbf``-like wrappers; ``<sup>``/``<sub>``
    become ``^{}``/``_{}``)."""
    text = _single_escapes(plain_markup(text))
    text = _QED.sub("", text)
    text = _CITATION.sub("", text)
    text = read_chars(text)
    text = _BEARING.sub(_bearing, text)
    # A sign in a group of its own is that sign: "\\mathord{-}\\,8", "{-}5" (a colour around it is dropped below).
    text = re.sub(r"\\(?:mathord|mathbin|mathrm|text|textrm|operatorname)\s*\{\s*([-+])\s*\}", r"\1", text)
    text = _without_brace_notes(stacked_fractions(text))
    text = _UNCLOSED_DOLLAR.sub(r"\1$\2", text)
    text = MATH_REGION.sub(_closed_groups, text)
    text = re.sub(r"<<[^>]*>>", "", text)  # GSM8K calculator notes
    text = _MULTIPLICITY.sub("", text)
    # A root written as often as it is repeated ("x = 2, 2") is that root.
    text = re.sub(r"(=\s*)(-?\d+(?:\.\d+)?)((?:\s*,\s*\2)+)(?![\d.]|\s*,\s*\d)", r"\1\2", text)
    text = re.sub(r"<sup>\s*([^<]*?)\s*</sup>", r"^{\1}", text, flags=re.IGNORECASE)
    text = re.sub(r"<sub>\s*([^<]*?)\s*</sub>", r"_{\1}", text, flags=re.IGNORECASE)
    text = re.sub(r"</?(?:b|i|em|strong|u|mark|code|span)\s*>", "", text, flags=re.IGNORECASE)
    # A point named by its letter, and coordinates separated by a semicolon (French): "P(2, -1)", "(2 ; -1)".
    # With a semicolon between them, a comma inside a coordinate is a decimal comma: "S(0,5; 3)" is (0.5, 3).
    text = re.sub(r"(?<![A-Za-zА-Яа-я\\])[A-ZА-Я]\s*(?=\(\s*-?[\d.]+\s*[,;]\s*-?[\d.]+\s*\))", "", text)
    text = re.sub(r"(?<![A-Za-zА-Яа-я\\])[A-ZА-Я]\s*(?=\(\s*-?[\d.,]+\s*;\s*-?[\d.,]+\s*\))", "", text)
    text = re.sub(
        r"\(\s*(-?[\d.,]+)\s*;\s*(-?[\d.,]+)\s*\)",
        lambda m: "(" + ", ".join(re.sub(r"(?<=\d),(?=\d)", ".", g) for g in m.groups()) + ")",
        text,
    )
    # Intervals typed in ASCII: "(-inf, -1) U (3, inf)" is (-\infty, -1) \cup (3, \infty).
    text = re.sub(r"([(\[,]\s*[-+]?\s*)inf(?:ty)?(?=\s*[,)\]])", r"\1\\infty ", text)
    text = re.sub(r"([)\]])\s+U\s+(?=[(\[])", r"\1 \\cup ", text)
    # Trigonometric names of Russian, French and other European textbooks: tg, ctg, cotg, cosec, arctg, arcctg.
    text = _EUROPEAN_TRIG.sub(lambda m: "\\" + _EUROPEAN_TRIG_NAMES[m.group(1)], text)
    # Infinity in words: "diverges to negative infinity" is -\\infty.
    text = re.sub(
        r"\b(?:(negative|minus)|positive|plus)\s+infinity\b",
        lambda m: ("-" if m.group(1) else "") + "\\infty ",
        text,
        flags=re.I,
    )
    text = re.sub(r"(?<![\\\w])infinity\b", "\\\\infty ", text, flags=re.I)
    # Struck-through text is withdrawn: "~~60~~ **64** pages".
    text = re.sub(
        r"~~[^~\n]*~~|<(del|s|strike)>.*?</\1>|\\(?:sout|st|cancel|bcancel|xcancel)\{[^{}]*\}",
        " ",
        text,
        flags=re.IGNORECASE,
    )
    text = re.sub(r"\\(?:nicefrac|sfrac|cfrac)(?![A-Za-z])", r"\\frac", text)
    text = re.sub(r"\{\s*([^{}]+?)\s*\\over\s*([^{}]+?)\s*\}", r"\\frac{\1}{\2}", text)  # {1 \over 2}
    text = re.sub(
        r"\\(?:textcolor|color)\s*\{[^{}]*\}", "", text
    )  # \textcolor{green}{x = 7}: the colour goes
    text = _unwrap_emphasis(text)
    text = re.sub(r"(?<![\\\w}])\{\s*([-+])\s*\}(?=\s*(?:\\[,;:! ]\s*)*[\d\\])", r"\1", text)  # "{-}5" is -5
    # Python's power between operands ("x**2", "(x+1)**3") before Markdown's bold ("**64**") goes.
    text = re.sub(r"(?<=[\w)])\*\*(?=[\w(]|-\d)", "^", text)
    text = text.replace("**", "").replace("__", "").replace("`", "")
    # A program's printed output on the lines after its label is what "Output:" states: "Output:\n\n7.0".
    text = _OUTPUT_BLOCK.sub(r"\1 \2", text)
    # Sizing commands are layout: "\\left( -4 \\right)" is (-4).
    text = re.sub(
        r"\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|big|Big|bigg|Bigg)(?![A-Za-z])\s*", "", text
    )
    text = _FRENCH_INTERVAL.sub(_interval, text)
    text = _PRECISION.sub(" ", text)
    text = code_forms(nested_lists_as_matrices(text))
    text = _regional_groups(text)
    text = _ALIGNED.sub(_aligned_lines, text)
    text = re.sub(r"\^\s*-\s*(\d+)", r"^{-\1}", text)  # "A^-1" is A^{-1}, as TeX reads only "A^-" unbraced
    # "x^2 = 4 ⇒ x = 2": what an implication arrow leads to is the conclusion; inside a display, the display
    # ends there ("$$\\therefore d = 12\\sqrt2$$" states d = 12√2).
    text = MATH_REGION.sub(_split_at_implications, text)
    text = re.sub(r"\\(?:implies|Rightarrow|Longrightarrow|therefore)(?![A-Za-z])", " so ", text)
    text = re.sub(r"\\because(?![A-Za-z])", " because ", text)
    # Ordinal suffixes: "the $12^{\\text{th}}$ row" is row 12.
    text = re.sub(r"(?<=\d)\s*\^\s*\{\s*(?:\\text(?:rm)?\s*\{\s*)?(?:st|nd|rd|th)\s*\}?\s*\}", "", text)
    return re.sub(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])", r"\1", text)  # *emphasis*


_EUROPEAN_TRIG_NAMES = {
    "tg": "tan",
    "ctg": "cot",
    "cotg": "cot",
    "cosec": "csc",
    "arctg": "arctan",
    "arcctg": "arccot",
}
_EUROPEAN_TRIG = re.compile(r"(?<![A-Za-z])\\?(arcctg|arctg|cotg|cosec|ctg|tg)(?![A-Za-z])")
# Citation marks of an answer with sources: "The answer is 17.[2]", "17 [1][3]." (not an index: "a[2]", "[3]").
_CITATION = re.compile(r"(?:(?<=[.!?)])|(?<=[\w%]) )(?:\[\d{1,3}\])+(?=[\s.,;:!?)]|$)")
# A proof's end mark closes the answer and is no part of it: "Therefore $n = 12$. $\\blacksquare$", "∎", "Q.E.D.".
_QED = re.compile(
    r"[ \t]*(?:\$\s*\\(?:blacksquare|square|qed|Box)\s*\$|\\(?:blacksquare|square|qed|Box)(?![A-Za-z])|[∎□■]"
    r"|\bQ\.\s?E\.\s?D\.?|\bQED\b\.?)(?=[ \t]*(?:\n|$))"
)
# A root's multiplicity said beside it is not another value: "x = -1 (a double root)", "x = 1 (multiplicity 2)".
_MULTIPLICITY = re.compile(
    r"\s*\(\s*(?:(?:a|with|of)\s+)?(?:(?:double|triple|repeated|simple|single|multiple)\s+(?:root|zero|solution)s?"
    r"|repeated|multiplicity\s*(?:of\s*)?\d+|(?:counted\s+)?twice)\s*\)",
    re.IGNORECASE,
)
# "Output:" (or "Out[3]=") alone on its line, the printed value on the next non-empty line.
_OUTPUT_BLOCK = re.compile(
    r"(?im)^([ \t]*(?:output|printed\s+output|console\s+output|it\s+prints|prints|out\[\d+\]\s*=)\s*:?)[ \t]*\n"
    r"(?:[ \t]*\n)*[ \t]*(\S[^\n]*)"
)


# French interval notation, a reversed bracket for an open end and a semicolon between the ends: "]2 ; 5[" is
# (2, 5), "[-3 ,1[" is [-3, 1), "]-\\infty ; 4]" is (-\\infty, 4]. At least one bracket must be reversed.
_END = r"[-+]?\s*(?:\\infty|[\w.\\{}/^]+?)"
_GAP = r"(?:\s|\\[,;: !])*"
_FRENCH_INTERVAL = re.compile(
    rf"(?<![\w\]\[)])([\]\[]){_GAP}({_END}){_GAP}[;,]{_GAP}({_END}){_GAP}([\]\[])(?![\w\[\]])"
)


def _interval(m: re.Match[str]) -> str:
    opening, closing = m.group(1), m.group(4)
    if opening == "[" and closing == "]":
        return m.group(0)  # an ordinary closed interval (or a list)
    return f"{'(' if opening == ']' else '['}{m.group(2)}, {m.group(3)}{')' if closing == '[' else ']'}"


_IMPLIES = re.compile(r"\\(?:implies|Rightarrow|Longrightarrow|therefore)(?![A-Za-z])")


def _split_at_implications(m: re.Match[str]) -> str:
    whole = m.group(0)
    if not _IMPLIES.search(whole):
        return whole
    size = 2 if whole.startswith(("$$", "\\[", "\\(")) else 1
    opening, closing, inner = whole[:size], whole[-size:], whole[size:-size]
    return " so ".join(f"{opening}{piece}{closing}" for piece in _IMPLIES.split(inner) if piece.strip())


def _single_escapes(text: str) -> str:
    """LaTeX escaped twice, as JSON strings carry it (``\\\\frac{3}{4}``, ``\\\\(x\\\\)``), when the text has
    no command escaped once: written once."""
    if re.search(r"\\\\[A-Za-z(\[]", text) and not re.search(r"(?<!\\)\\[A-Za-z]", text):
        return re.sub(r"\\\\(?=[A-Za-z(\[)\]{}])", r"\\", text)
    return text


# A fraction stacked over a bar of dashes, as plain text writes it:
#       3
#   x = ---
#       4
_BAR = re.compile(r"^(?P<pre>.*?)(?P<bar>[-─—–_]{2,})\s*$")
_STACKED = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*$")


def stacked_fractions(text: str) -> str:
    """Each fraction written on three lines (numerator, a bar of dashes, denominator; the bar's line may open
    with "x = " or a sign) as one line ``x = 3/4``; the numerator and denominator must stand over the bar."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        bar = _BAR.match(lines[i]) if 0 < i < len(lines) - 1 else None
        top = _STACKED.match(lines[i - 1]) if bar else None
        bottom = _STACKED.match(lines[i + 1]) if bar else None
        if bar and top and bottom and out:
            start, end = bar.start("bar"), bar.end("bar")
            over = all(start - 2 <= m.start(1) and m.end(1) <= end + 2 for m in (top, bottom))
            pre = bar.group("pre")
            if over and not re.search(r"\d\s*$", pre):
                out[-1] = f"{pre}{top.group(1)}/{bottom.group(1)}"
                i += 2
                continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


_ALIGNED = re.compile(r"\\begin\{(aligned|align\*?|eqnarray\*?|split|gathered)\}(.*?)\\end\{\1\}", re.DOTALL)


def _aligned_lines(m: re.Match[str]) -> str:
    """An aligned display without its alignment marks: lines that continue the first ("&= \\sqrt{20}") make one
    chain of equalities (its last side is the answer); other lines (a system) stay lines."""
    lines = [ln.replace("&", " ").strip() for ln in re.split(r"\\\\", m.group(2)) if ln.strip()]
    chained = all(re.match(r"(?:=|<|>|\\(?:le|ge|leq|geq|approx|neq)(?![A-Za-z]))", ln) for ln in lines[1:])
    return (" " if chained else "\n").join(lines)


_INDIAN_GROUPS = re.compile(
    r"(?<![\d,.])\d{1,2}(?:,\d{2})+,\d{3}(?![\d,])"
)  # 1,25,000 (a lakh and a quarter)
_APOSTROPHE_GROUPS = re.compile(r"(?<![\d'])\d{1,3}(?:'\d{3})+(?![\d'])")  # Swiss 12'500
_DOT_GROUPS = re.compile(r"(?<![\d.,])\d{1,3}(?:\.\d{3})+(?![\d.,]|\.\d)")
# Function words of languages that group thousands with a dot (German, Spanish, Italian, Portuguese, Dutch,
# Indonesian): in their sentences "1.250" is 1250.
_DOT_GROUP_LANGUAGE = re.compile(
    r"(?i)\b(?:die|der|das|und|ist|lautet|antwort|beträgt|insgesamt|la|el|los|las|es|respuesta|son|total|pesos"
    r"|risposta|è|sono|resposta|são|é|het|een|antwoord|jawaban|adalah|sebesar)\b"
)


def _regional_groups(text: str) -> str:
    """Thousands grouped as other regions write them, as plain digits: Indian "1,25,000", Swiss "12'500", and
    "1.250" in a sentence of a language that groups with a dot (in English it stays 1.25)."""
    text = _INDIAN_GROUPS.sub(lambda m: m.group(0).replace(",", ""), text)
    text = _APOSTROPHE_GROUPS.sub(lambda m: m.group(0).replace("'", ""), text)
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if (
            _DOT_GROUPS.search(line)
            and _DOT_GROUP_LANGUAGE.search(line)
            and not re.search(r"\d,\d{1,2}(?!\d)", line)
        ):
            lines[i] = _DOT_GROUPS.sub(lambda m: m.group(0).replace(".", ""), line)
    return "\n".join(lines)


_EMPHASIS = re.compile(r"\\(?:textbf|mathbf|boldsymbol|bm|textit|emph|underline)\s*\{")


def _unwrap_emphasis(text: str) -> str:
    """``\\mathbf{\\frac{2}{3}}`` -> ``\\frac{2}{3}``: emphasis wrappers removed around balanced braces."""
    while m := _EMPHASIS.search(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth:
            return text  # unbalanced: left as written
        text = text[: m.start()] + text[m.end() : i - 1] + text[i:]
    return text


_REVISION = re.compile(
    r"\b(?:wrong|incorrect|mistake|actually|instead|redo|redoing|should\s+be|correct(?:ed)?\s+(?:answer|value)"
    r"|so\s+the\s+answer)\b|\\neq\b|≠",
    re.IGNORECASE,
)


def _before_check(text: str) -> str:
    """``text`` up to a check of its answer that follows it ("So x = 4. Check: 3(4) - 2 = 10 ✓"), when the part
    before states a value and the check states no answer of its own; else ``text``."""
    for m in reversed(list(_CHECK.finditer(text))):
        before, after = text[: m.start()], text[m.start() :]
        if _MARKERS.search(after) or _boxed_spans(after) or _REVISION.search(after):
            return text  # the check states or changes the answer: it is read as written
        if _NUMBER.search(before) or MATH_REGION.search(before):
            return before.rstrip()
    return text


def _sentence_end(text: str, start: int) -> int:
    m = re.compile(r"\.(?:\s|$)|\n|;").search(text, start)
    return m.start() if m else len(text)


# Where a generation should have stopped: a chat template's end or turn token, an invented next turn, or a new
# question the model makes up and answers after its own answer ("Question: Tim has 30 marbles ...").
_END_TOKEN = re.compile(
    r"<\|(?:im_end|eot_id|endoftext|end|user|assistant|im_start)\|>|</s>|\[/?INST\]", re.IGNORECASE
)
_INVENTED_TURN = re.compile(
    r"\n\s*(?:#+\s*)?(?:user|human|assistant|question|problem|q|instruction|new\s+problem|exercise)\s*(?:\d+\s*)?[:：]",
    re.IGNORECASE,
)


def _oscillation(found: list[tuple[int, int, str, bool]]) -> str:
    """Why the stated answers go back to one already left for another ("the answer is 9 ... 8 ... 9"): a loop,
    not a correction; "" otherwise."""
    said = [x for x in (re.sub(r"\\(?:boxed|fbox)|[{}\s.$*]+", "", f[2]) for f in sorted(found)) if x]
    for i, a in enumerate(said):
        others = [j for j in range(i + 1, len(said)) if said[j] != a]
        if others and a in said[others[0] + 1 :]:
            return f"the stated answers go back and forth ({', '.join(dict.fromkeys(said))})"
    return ""


_LEADING_ROLE = re.compile(r"^\s*(?:<\|(?:assistant|im_start|start_header_id)\|>\s*(?:assistant)?\s*)+")


def _own_answer(text: str) -> str:
    """``text`` up to where its generation should have ended (:data:`_END_TOKEN`), and before a new turn or
    question it invents once it has stated an answer."""
    text = _LEADING_ROLE.sub("", text)
    for m in _END_TOKEN.finditer(text):
        if text[: m.start()].strip():
            text = text[: m.start()]
            break
    for m in _INVENTED_TURN.finditer(text):
        before = text[: m.start()]
        if _MARKERS.search(before) or _boxed_spans(before):
            return before
    return text


def final_answer(response: str) -> FinalAnswer | None:
    """The final answer of a response (see the module docstring), or None when it states none. What follows the
    end of its turn is not read, but a different answer stated there (a "correction" in an invented next turn)
    makes the answer read two ways: hedged."""
    cleaned = _LEADING_ROLE.sub("", _clean(response))
    own = _own_answer(cleaned)
    answer = _final_answer(own)
    if (
        answer is not None
        and not answer.hedged
        and not answer.boxed
        and (why := _read_from_printout(response, answer))
    ):
        return FinalAnswer(answer.text, answer.boxed, why, answer.parts)
    rest = cleaned[len(own) :] if cleaned.startswith(own) else ""
    if answer is not None and not answer.hedged and _END_TOKEN.search(rest):
        after = _final_answer(_END_TOKEN.sub("\n", rest))
        if after is not None and _plain_answer(after.text) != _plain_answer(answer.text):
            return FinalAnswer(
                answer.text, answer.boxed, f"another answer after the end of the turn: {after.text[:60]}"
            )
    return answer


_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)


def _read_from_printout(response: str, answer: FinalAnswer) -> str:
    """Why ``answer`` is not stated ("" when it is): it was read from the last code block of the response — no
    prose after the block states a number — whose last line with a number is a status line (words beside the
    number: "(1 row)", "Done in 1 s") while an earlier line prints a value alone: which of them answers is not
    said, and the status line's number is not the value the program printed."""
    blocks = list(_FENCE.finditer(response))
    if not blocks or re.search(r"\d", response[blocks[-1].end() :]):
        return ""
    body = blocks[-1].group(1)
    if answer.text.strip() not in _clean(body):
        return ""
    lines = [line for line in body.splitlines() if re.search(r"\d", line)]
    if not lines or not re.search(r"[A-Za-z]", lines[-1]) or _ANSWER_KEY.search(lines[-1]):
        return ""
    printed = [line.strip(" |+\t") for line in lines[:-1] if _VALUE_LINE.match(line)]
    if not printed:
        return ""
    return (
        f"read from a program's printout: its last line is a status line ({lines[-1].strip()[:40]!r}) after the "
        f"printed value {printed[-1][:20]!r}; none is stated as the answer"
    )


_VALUE_LINE = re.compile(r"^[\s|+]*-?\d[\d.,/]*[\s|+]*$")
_ANSWER_KEY = re.compile(r"\b(?:answer|result|total|final|output|value|solution)\b", re.IGNORECASE)


def _plain_answer(text: str) -> str:
    values = [m.group(0) for m in _plain_numbers(numbers_from_words(_strip_latex(text)))]
    return values[-1] if values else re.sub(r"\W+", "", text).lower()


# A closing remark after the answer ("(Note: the bound 2 claimed in some sources is not attained.)", "Note: I
# assumed ..."): its numbers are not the answer, unless it states one itself or revises the answer ("Note: actually
# it is 4").
_NOTE = re.compile(r"^\s*\(?\s*(?:note|n\.\s?b\.|remark|p\.\s?s\.|aside|caveat)\s*[:.,—-]", re.IGNORECASE)
# An offer or a sign-off after the answer ("Feel free to ask ... 1 or 2 more practice problems!", "Let me know if
# you want the 3 other cases"): its numbers are about the conversation, not the answer.
_SIGN_OFF = re.compile(
    r"^\s*(?:feel\s+free|let\s+me\s+know|(?:i\s+)?hope\s+(?:this|that|it)\s+helps|if\s+you\s+(?:have|need|want|would|'d)"
    r"|(?:i'?m|i\s+am|i'?d\s+be|i\s+would\s+be)\s+happy\s+to|happy\s+to\s+help|good\s+luck|would\s+you\s+like|do\s+you\s+want"
    r"|want\s+me\s+to|shall\s+i|should\s+i)\b",
    re.IGNORECASE,
)


_DEFINITION = re.compile(
    r"^\s*(?:where|with|here|for)\s+[^\n]{0,60}?\b(?:arbitrary|constants?|integers?|parameters?|real\s+numbers?)\b"
    r"[^\n=]*$",
    re.IGNORECASE,
)


def _without_closing_notes(text: str) -> str:
    paragraphs = re.split(r"\n\s*\n", text)
    while (
        len(paragraphs) > 1
        and (_NOTE.match(paragraphs[-1]) or _SIGN_OFF.match(paragraphs[-1]))
        and not (
            _MARKERS.search(paragraphs[-1])
            or _boxed_spans(paragraphs[-1])
            or _REVISION.search(paragraphs[-1])
        )
        and _NUMBER.search("\n".join(paragraphs[:-1]))
    ):
        paragraphs.pop()
    text = "\n\n".join(paragraphs)
    # What the answer's letters stand for, said after it: "where $A$ is an arbitrary constant", "with k an integer".
    lines = text.rstrip().split("\n")
    if len(lines) > 1 and _DEFINITION.match(lines[-1]) and _NUMBER.search("\n".join(lines[:-1])):
        text = "\n".join(lines[:-1])
    return text


def _before_proof(text: str) -> str:
    """``text`` up to the proof of a claim it states first ("Claim. The only such prime is p = 3. Proof. ..."),
    when the claim states a value and the proof states no answer of its own (its numbers are the working); else
    ``text``."""
    m = _PROOF_HEAD.search(text)
    if m is None:
        return text
    before, after = text[: m.start()], text[m.start() :]
    if _MARKERS.search(after) or _boxed_spans(after) or not _NUMBER.search(before):
        return text
    return before.rstrip()


# An aside in brackets after the answer that begins with a word ("$x^2$ (check: $x = 2$ gives 4, same as $2^x$)",
# "(at $x = 1$ both give 4)"): working, not the answer. Hedges in brackets ("(or 6)", "(if ..., it would be 7)")
# are not asides: they are read as hedges first.
_TRAILING_ASIDE = re.compile(
    r"\s*\((?!\s*(?:or|if|would|otherwise|alternatively|either|maybe|perhaps|possibly)\b)"
    r"(?!\s*(?:sin|cos|tan|cot|sec|csc|log|ln|exp|sqrt|arcsin|arccos|arctan|sinh|cosh|tanh|mod|cis)\b)"
    r"\s*[A-Za-z]{2,}[\s:,][^()]*\)\s*[.!]?\s*$"
)


def without_aside(text: str) -> str:
    """``text`` without an aside in brackets that ends it and begins with a word, when what stands before it
    holds a number or mathematics; else ``text``."""
    m = _TRAILING_ASIDE.search(text)
    if m is None:
        return text
    before = text[: m.start()]
    if _NUMBER.search(before) or MATH_REGION.search(before) or re.search(r"[A-Za-z]\^|\\", before):
        return before.rstrip()
    return text


# The answer states an operation on a number, not the number: "It is the reciprocal of 2/3", "twice 12".
_OPERATION_OF = re.compile(
    r"\b(?:reciprocal|inverse|negative|opposite|square|cube|square\s+root|cube\s+root|half|double|twice|triple"
    r"|complement|supplement|multiple|factor|sum|product|difference|quotient|logarithm|log|absolute\s+value)"
    r"\s+(?:of\s+)?\$?\s*-?\d[\d.,/]*\s*\$?\s*[.!]?\s*$",
    re.IGNORECASE,
)


def states_an_operation(text: str) -> bool:
    """``text`` ends with an operation on a number ("the reciprocal of 2/3") and states no other number: the
    number is not the answer."""
    plain = _strip_latex(text)
    return _OPERATION_OF.search(plain) is not None and len(_plain_numbers(plain)) == 1


# "1,234" in a sentence of a language that writes a decimal comma (German, French, Spanish, Italian, Portuguese,
# Dutch): 1.234 there, 1234 in English.
_THREE_AFTER_COMMA = re.compile(r"(?<![\d,.])\d{1,3},\d{3}(?![\d,])")
_DECIMAL_COMMA_LANGUAGE = re.compile(
    r"(?i)\b(?:die|der|das|und|ist|lautet|antwort|beträgt|wiegt|insgesamt|le|les|est|réponse|vaut|pèse|soit|donc"
    r"|el|los|las|es|respuesta|pesa|son|risposta|è|sono|pesa|resposta|são|é|pesa|het|een|antwoord|weegt)\b"
)


def comma_reads_two_ways(text: str) -> str:
    """Why ``text`` holds a number with a comma before three digits in a sentence of a language that writes a
    decimal comma ("Die Antwort ist 1,234."); "" when it does not."""
    m = _THREE_AFTER_COMMA.search(text)
    if m and _DECIMAL_COMMA_LANGUAGE.search(text) and not re.search(r"\d,\d{3},\d{3}", text):
        written = m.group(0)
        return (
            f"{written} in a language that writes a decimal comma: "
            f"{written.replace(',', '.')} or {written.replace(',', '')}"
        )
    return ""


_RELATION = r"(?:\\neq|\\ne|\\geqslant|\\geq|\\ge|\\leqslant|\\leq|\\le|[<>])(?![A-Za-z])"
_DOMAIN_ASIDE = re.compile(
    rf"\s*\(\s*(?:for|where|when|if|with|valid\s+for)\s+\$?\s*[A-Za-z]\s*{_RELATION}[^()\n]*\)", re.IGNORECASE
)
_DOMAIN_TAIL = re.compile(
    rf"(?:,|\\q?quad)\s*(?:\\q?quad|\\[,;:! ]|\s)*(?:\\text\{{\s*(?:for|where|when|if)\s*\}}\s*|(?:for|where)\s+)?"
    rf"[A-Za-z]\s*{_RELATION}"
)


def has_relation(text: str) -> bool:
    """``text`` states an inequation or inequality (``x \\neq 2``, ``x \\geq 0``, ``<``)."""
    return re.search(_RELATION, text) is not None


def without_domain(text: str) -> str:
    """``text`` without the domain said after an expression ("$x + 2$ (for $x \\neq 2$)", "$f^{-1}(x) = x^2 + 1,
    \\quad x \\geq 0$", "x + 2, x ≠ 2"): for a reference that is an expression and states no domain. A condition
    after something that is itself a relation ("x < 3, x \\neq 0") is part of the answer and stays."""
    text = _DOMAIN_ASIDE.sub("", text)

    def cut(content: str) -> str:
        tail = _DOMAIN_TAIL.search(content)
        if tail is None or not content[: tail.start()].strip() or has_relation(content[: tail.start()]):
            return content
        return content[: tail.start()].rstrip()

    if not MATH_REGION.search(text):
        return cut(text)

    def region(m: re.Match[str]) -> str:
        i = next(i for i, g in enumerate(m.groups(), 1) if g is not None)
        return m.group(0)[: m.start(i) - m.start()] + cut(m.group(i)) + m.group(0)[m.end(i) - m.start() :]

    return MATH_REGION.sub(region, text)


# Labels of the parts of a question answered on one line: "(a) 3 and (b) 7", "(i) 28 cm, (ii) 48 cm²", "a) a = 2;
# b) b = -1".
_PART_LABEL = re.compile(r"(?:^|(?<=[\s:;,]))\(?([a-h]|i{1,3}|iv|vi{0,3})\)(?=\s)")
_ROMAN_PARTS = ["i", "ii", "iii", "iv", "v", "vi", "vii", "viii"]


def _parts_joined(line: str) -> tuple[str, tuple[str, ...]]:
    """A line that answers the parts of a question in order ("So the answers are (a) $3$ and (b) $7$.") as the list
    of the parts' values ("So the answers are 3, 7"): each part's value is what it states last (after its last
    "="), without units, in order: a tuple; a line with fewer than two labels, or labels out of order, as it is."""
    labels = list(_PART_LABEL.finditer(line))
    names = [m.group(1) for m in labels]
    if len(labels) < 2 or names not in (
        [chr(ord("a") + k) for k in range(len(names))],
        _ROMAN_PARTS[: len(names)],
    ):
        return line, ()
    parts = []
    for m, nxt in zip(labels, [*labels[1:], None], strict=True):
        part = line[m.end() : nxt.start() if nxt else len(line)]
        part = re.sub(r"(?:\s|[,;.]|\band\b)+$", "", part.strip(), flags=re.IGNORECASE)
        part = part.rsplit("=", 1)[-1].strip().strip("$").strip()
        part = re.sub(
            r"(?<=\d)\s*(?:\\,)?\s*(?:\\(?:text|mathrm)\{[^{}]*\}|[A-Za-z]+)(?:\^\{?\d\}?)?$", "", part
        )
        if not part:
            return line, ()
        parts.append(part)
    return line[: labels[0].start()].rstrip() + " (" + ", ".join(parts) + ")", tuple(parts)


def _final_answer(cleaned: str) -> FinalAnswer | None:
    lines, answered = [], {}
    for line in cleaned.split("\n"):
        joined, parts = _parts_joined(line) if ")" in line else (line, ())
        lines.append(joined)
        if parts:
            answered["(" + ", ".join(parts) + ")"] = parts
    answer = _stated_answer("\n".join(lines))
    for written, parts in answered.items():
        if answer is not None and written in answer.text:
            return FinalAnswer(answer.text, answer.boxed, answer.hedged, parts)
    return answer


def _stated_answer(cleaned: str) -> FinalAnswer | None:
    text = _before_proof(_before_check(_without_closing_notes(cleaned.strip())))
    if not text:
        return None
    found: list[tuple[int, int, str, bool]] = []  # (position, end, span, boxed)
    for start, end, content in _boxed_spans(text):
        found.append((start, end, content, True))
    for m in _MARKERS.finditer(text):
        if in_counterfactual(text, m.start()):
            continue
        group = next(g for g in ("hash", "ans", "opt", "zh") if m.group(g) is not None)
        span = m.group(group)
        if group == "ans":
            span = span[: _sentence_end(span, 0)]
        if span.strip() or group == "opt":
            found.append((m.start(), m.end(), span.strip(), False))
    if found:
        position, end, span, boxed = max(found, key=lambda f: (f[0], -f[1]))
        # Markers nested in one statement ("Final Answer: The final answer is $64$"): the innermost one wins.
        tail = text[position : _sentence_end(text, end) if not boxed else end]
        hedge = _hedge_between_boxes(text, found) or _hedge_in(tail if not boxed else span)
        boxes = {re.sub(r"\s+", "", f[2]) for f in found if f[3]}
        if len(boxes) >= 3 and not hedge:
            hedge = f"{len(boxes)} different boxed answers"
        hedge = hedge or _listed(span) or _oscillation(found)
        after = text[_sentence_end(text, end) if not boxed else end :]
        if (revision := _CORRECTION.search(after)) and _NUMBER.search(
            numbers_from_words(after[revision.end() :])
        ):
            # "The answer is 12. Wait, I made an error: it should be 15." The answer is what the revision states.
            revised = _stated_answer(after[revision.end() :])
            if revised is None:
                return FinalAnswer(span, boxed, "a correction after the answer states no one answer")
            return revised
        return FinalAnswer(_spoken(span) if not boxed else span, boxed, hedge)
    if _is_spam(text):
        return FinalAnswer(text, False, "a list of candidates, not an answer")
    if listed := _listed_answers(text):
        return FinalAnswer(listed, False, "")
    if (json_answer := _json_answer(text)) is not None:
        return FinalAnswer(json_answer, False, "")
    sentences = [s for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]
    # The answer first, then its explanation announced as such ("27 students remain. Here's how: ..."): the
    # first sentence states the answer, the numbers after it are the working.
    if (
        len(sentences) >= 2
        and _EXPLANATION.match(sentences[1])
        and _NUMBER.search(numbers_from_words(sentences[0]))
    ):
        sentences = sentences[:1]
    for sentence in reversed(sentences):
        if _NUMBER.search(numbers_from_words(sentence)) or re.search(r"\$[^$]+\$|\\\(|\\infty", sentence):
            # A bare list of numbers ("8 7", "3, 4, 5") is several answers here as after a marker.
            # Its full stop ends the sentence, not the answer: "x^2+2x+1." is x^2+2x+1 (an ellipsis stays).
            text = re.sub(r"(?<=[^.\s])\s*\.\s*$", "", sentence.strip())
            text = re.sub(r"(?<=[^.\s])\s*[.,]\s*(\$\$|\$|\\\]|\\\))$", r"\1", text)  # "$$x = 2.$$"
            text = _last_cell(text)
            return FinalAnswer(_spoken(text), False, _hedge_in(sentence) or _listed(sentence))
    if sentences and choice_letter(sentences[-1]) is not None:
        return FinalAnswer(sentences[-1].strip(), False, _hedge_in(sentences[-1]))
    return None


# A sentence after the answer that takes it back: "Wait, ...", "Actually, ...", "Oops", "I made an error", "No —".
_CORRECTION = re.compile(
    r"(?:^|(?<=[.!?])\s+|\n)\s*(?:wait|actually|oops|sorry|hmm+|correction|erratum|on\s+second\s+thought"
    r"|no\s*[,—–-]|let\s+me\s+(?:re-?check|double[- ]check|recompute|recalculate|redo|fix)"
    r"|i\s+(?:made|see)\s+(?:an?\s+)?(?:error|mistake)|that'?s\s+(?:wrong|incorrect|not\s+right))\b[^\n]*?(?:[:,.!—–-]\s|$)",
    re.IGNORECASE,
)


def _last_cell(row: str) -> str:
    """The last cell of a table row the response ends with ("P & \\tfrac{1}{6}", "| Total | 36 |"): the value of
    the row's label; any other text as it is."""
    bare = re.sub(r"\\\\\s*(?:\\hline)?\s*$", "", row.strip())
    if re.fullmatch(r"[^&$]*&[^&$]*(?:&[^&$]*)*", bare) and "\\begin" not in bare:
        return bare.rsplit("&", 1)[-1].strip()
    if re.fullmatch(r"\|[^|]+(?:\|[^|]+)+\|?", bare):
        return [c for c in bare.split("|") if c.strip()][-1].strip()
    return row


_EXPLANATION = re.compile(
    r"\s*(?:here(?:'s|\s+is)\s+(?:how|why|the\s+(?:working|reasoning|explanation))|this\s+is\s+because|explanation\s*:"
    r"|reasoning\s*:|let\s+me\s+explain|to\s+see\s+why|why\s*:|how\s*:)",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.+?)\s*$")
_LIST_LEAD = re.compile(
    r"\b(?:solutions?|roots?|answers?|values?|zeros|zeroes|pairs?)\b[^\n]*(?::|\b(?:are|is)|\bbe)\s*$",
    re.IGNORECASE,
)


_JSON_ANSWER_KEYS = ("final_answer", "answer", "result", "solution", "value")


def _json_answer(text: str) -> str | None:
    """The value under an answer key of a JSON object the response ends with (``{"total": 2000, "answer":
    1500}`` -> "1500"); None when it ends with no such object."""
    m = re.search(r"\{[^{}]*\}\s*$", text)
    if m is None:
        return None
    try:
        obj = json.loads(m.group(0))
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    key = next((k for k in _JSON_ANSWER_KEYS if k in {str(x).lower() for x in obj}), None)
    if key is None:
        return None
    value = next(v for k, v in obj.items() if str(k).lower() == key)
    return str(value) if isinstance(value, str | int | float) and not isinstance(value, bool) else None


def _listed_answers(text: str) -> str:
    """The answers of a response that ends with a bulleted list its last line introduces as the solutions ("The
    solutions are:\\n- x = 3\\n- x = 5" -> "x = 3, x = 5"); "" otherwise (a list of steps ends with its answer)."""
    lines = [ln for ln in text.rstrip().split("\n") if ln.strip()]
    items: list[str] = []
    while lines and (m := _BULLET.match(lines[-1])):
        items.insert(0, m.group(1).rstrip(".;,"))
        lines.pop()
    if len(items) < 2 or not lines or not _LIST_LEAD.search(lines[-1]):
        return ""
    return ", ".join(items)


_SPOKEN_OPERATORS = {"root", "over", "times", "plus", "minus", "squared", "cubed", "power", "divided", "pi"}
_SPOKEN_WORDS = _SPOKEN_OPERATORS | {"square", "cube", "of", "to", "the", "by", "radians", "degrees"}


def _spoken(text: str) -> str:
    """``text`` with the mathematics it ends with said in words written as mathematics ("The side is three root
    two" -> "The side is 3\\sqrt{2}", "pi over four radians" -> "\\frac{\\pi}{4} radians", "x squared minus
    one" -> "x^{2} - 1"); ``text`` unchanged when it ends with no such words."""
    words = numbers_from_words(text).rstrip(" .!").split(" ")

    words = [w for w in words if w]
    words = ["pi" if w == "\\pi" else w for w in words]

    def spoken(w: str) -> bool:
        return w.lower() in _SPOKEN_WORDS or bool(re.fullmatch(r"-?\d+(?:\.\d+)?|[a-z]", w))

    start = len(words)
    while start > 0 and spoken(words[start - 1]):
        start -= 1
    tail = [w.lower() for w in words[start:]]
    while tail and tail[0] in ("the", "of", "to", "by"):
        tail, start = tail[1:], start + 1
    if len(tail) < 2 or not _SPOKEN_OPERATORS & set(tail):
        return text
    said = " ".join(tail)
    said = re.sub(r"\bsquare root of (\S+)", r"\\sqrt{\1}", said)
    said = re.sub(r"\bcube root of (\S+)", r"\\sqrt[3]{\1}", said)
    said = re.sub(r"\broot (\S+)", r"\\sqrt{\1}", said)
    said = re.sub(r"\bpi\b", r"\\pi", said)
    said = re.sub(r"(\S+) over (\S+)", r"\\frac{\1}{\2}", said)
    said = re.sub(r"\s*\bsquared\b", "^{2}", said)
    said = re.sub(r"\s*\bcubed\b", "^{3}", said)
    said = re.sub(r"\s*\bto the power of (\S+)", r"^{\1}", said)
    said = re.sub(r"\bdivided by\b", "/", said)
    said = re.sub(r"\btimes\b", r"\\cdot", said)
    said = re.sub(r"\bplus\b", "+", said)
    said = re.sub(r"\bminus\b", "-", said)
    if re.search(r"\b(?:square|cube|of|to|the|by|over|root|power|divided)\b", said):
        return text  # words left over: not one expression
    said = re.sub(r"(?<=\d) (?=\\sqrt|\\pi|\\frac)", "", said)  # "3 \\sqrt{2}" is 3\\sqrt{2}
    return " ".join([*words[:start], said]).strip()


def _listed(span: str) -> str:
    """Why ``span`` is a list of several numbers ("3, 4, 5, 6", "10 11 12", "2 and 7"); "" when it is not."""
    s = numbers_from_words(_strip_latex(span)).strip().rstrip(".")
    values = {
        v[0] / 100 if v[1] else v[0] for m in _NUMBER.finditer(s) if (v := _number(m.group(0))) is not None
    }
    rest = _NUMBER.sub(" ", s)
    if len(values) >= 2 and re.fullmatch(r"(?:[\s,;&]|\band\b|\bor\b)*", rest, re.IGNORECASE):
        return f"a list of {len(values)} values, not one answer"
    # A list as code prints it, ending the answer: "The solutions are [-8, 5]".
    if (printed := re.search(r"\[\s*(-?[\d.]+(?:\s*,\s*-?[\d.]+)+)\s*\]\s*$", s)) and len(
        set(re.findall(r"-?[\d.]+", printed.group(1)))
    ) >= 2:
        return f"a list of values ({printed.group(0).strip()}), not one answer"
    return ""


def _hedge_between_boxes(text: str, found: list[tuple[int, int, str, bool]]) -> str:
    boxes = sorted((f for f in found if f[3]), key=lambda f: f[0])
    if len(boxes) >= 2:
        (_, end1, first, _), (start2, _, second, _) = boxes[-2], boxes[-1]
        between = text[end1:start2]
        if re.search(r"\bor\b", between, re.IGNORECASE) and first.strip() != second.strip():
            return f"two answers offered: {first} or {second}"
    return ""


# A conditional aside that gives another value: "the 4th term (if you count from 0 it would be index 3)".
_CONDITIONAL_ASIDE = re.compile(
    r"\(([^()]*\b(?:if|would|otherwise|alternatively|or)\b[^()]*)\)", re.IGNORECASE
)


def _hedge_in(span: str) -> str:
    """Why ``span`` offers more than one value ("" when it does not)."""
    words = numbers_from_words(span)
    for m in _CONDITIONAL_ASIDE.finditer(words):
        inside = {v for v in _values_in(m.group(1)) if not isinstance(v, str)}
        outside = {
            v for v in _values_in(words[: m.start()] + " " + words[m.end() :]) if not isinstance(v, str)
        }
        if inside and outside and inside - outside:
            return f"a conditional aside gives another value: ({m.group(1).strip()[:60]})"
    for m in _HEDGE.finditer(words):
        before, after = words[: m.start()], words[m.end() :]
        if m.group(0).lower().startswith("to") and re.search(r"\bfrom\s+\S+\s*$", before, re.IGNORECASE):
            continue  # "from 5 to 10" is a change, not two answers
        left = _values_in(before[-40:])
        right = _values_in(after[:40])
        if left and right and left[-1] != right[0] and not _same_in_another_form(left[-1], right[0]):
            return f"hedged between {left[-1]} and {right[0]}"
        if m.group(0).lower() in ("either", "between") and len(set(_values_in(after[:60]))) >= 2:
            return "hedged between several values"
    if _HEDGE_WORDS.search(words):
        values = {v for n in _NUMBER.finditer(words) if (v := _number(n.group(0))) is not None}
        if len(values) >= 2:
            return f"hedged ('{_HEDGE_WORDS.search(words).group(0)}') between {len(values)} values"  # type: ignore[union-attr]
    return ""


def _same_in_another_form(a: Any, b: Any) -> bool:
    """Two values read from a response are one value in two forms: "0.75 or 75%", "1/2, i.e. 50%"."""
    if isinstance(a, str) or isinstance(b, str):
        return False
    (x, x_percent), (y, y_percent) = a, b
    return (x / 100 if x_percent else x) == (y / 100 if y_percent else y)


def _values_in(text: str) -> list[Any]:
    out: list[Any] = []
    for m in _NUMBER.finditer(text):
        value = _number(m.group(0))
        if value is not None:
            out.append(value)
    for m in re.finditer(r"(?<![A-Za-z\\])\(?([A-E])\)?(?![A-Za-z\d])", text):
        out.append(m.group(1))
    return out


def _is_spam(text: str) -> bool:
    """A response that is only a list of three or more numbers or choice letters."""
    stripped = re.sub(r"[\s,;]+", " ", text.strip().rstrip("."))
    tokens = stripped.split()
    if len(tokens) >= 3 and all(_NUMBER.fullmatch(t) or re.fullmatch(r"\(?[A-E]\)?", t) for t in tokens):
        return True
    return bool(re.fullmatch(r"[A-E]{3,5}", text.strip()))


def _number(token: str) -> tuple[Fraction, bool] | None:
    """(value, written with a percent sign) of one number token."""
    percent = bool(re.search(_PERCENT + r"\s*$", token))
    token = re.sub(_PERCENT + r"\s*$", "", token).strip()
    compact = token.replace(" ", "")
    try:
        if m := re.fullmatch(r"(-?)(\d+)\\[dt]?frac\{(\d+)\}\{(\d+)\}", compact):
            value = int(m.group(2)) + Fraction(int(m.group(3)), int(m.group(4)))
            return (-value if m.group(1) else value), percent
        if m := re.fullmatch(r"(-?)\\[dt]?frac\{(-?\d+)\}\{(-?\d+)\}", compact):
            value = Fraction(int(m.group(2)), int(m.group(3)))
            return (-value if m.group(1) else value), percent
        if m := re.fullmatch(r"(-?\d+(?:\.\d+)?)(?:\\times|\\cdot|×|[xX*])10\^\{?([-+]?\d+)\}?", compact):
            return Fraction(m.group(1)) * Fraction(10) ** int(m.group(2)), percent
        if m := re.fullmatch(r"(-?\d+(?:\.\d+)?)[eE]([+-]?\d+)", compact):
            return Fraction(m.group(1)) * Fraction(10) ** int(m.group(2)), percent
        if m := re.fullmatch(r"10\^\{?(-?\d+)\}?", compact):
            return Fraction(10) ** int(m.group(1)), percent
        if m := re.fullmatch(r"(-?)(\d+)\s+(\d+)/(\d+)", token):
            value = int(m.group(2)) + Fraction(int(m.group(3)), int(m.group(4)))
            return (-value if m.group(1) else value), percent
        if m := re.fullmatch(r"(-?\d+(?:\.\d+)?)/(\d+(?:\.\d+)?)", compact):
            return Fraction(m.group(1)) / Fraction(m.group(2)), percent
        if m := re.fullmatch(r"(-?\d{1,3}(?:\.\d{3})+|-?\d+),(\d+)", compact):
            if "." in m.group(1) or len(m.group(2)) != 3:  # a decimal comma (see _NUM)
                return Fraction(m.group(1).replace(".", "") + "." + m.group(2)), percent
        return Fraction(compact.replace(",", "")), percent
    except (ValueError, ZeroDivisionError):
        return None


def _strip_latex(span: str) -> str:
    s = span.strip()
    for _ in range(3):
        boxed = _boxed_spans(s)
        if len(boxed) == 1 and boxed[0][0] == 0 and boxed[0][1] == len(s):
            s = boxed[0][2].strip()
        s = re.sub(r"^\$+|\$+$", "", s.strip()).strip()
        s = re.sub(r"^\\\(|\\\)$|^\\\[|\\\]$", "", s).strip()
    s = repeating_to_fraction(s)
    s = re.sub(r"\\text\{\s*([^{}]*)\}", r" \1", s)
    s = re.sub(r"\\mbox\{\s*([^{}]*)\}", r" \1", s)
    s = re.sub(r"\\(?:left|right|displaystyle|,|!|;|:)", "", s)
    s = re.sub(r"\^\s*\{?\\circ\}?|°|\bdegrees?\b", "", s)
    s = re.sub(r"\\?\$\s*(?=[-\d.])", "", s)  # currency before a number
    return s.replace("{,}", ",").strip()


def scalar_value(span: str) -> tuple[Fraction, bool] | None:
    """(value, percent sign) when ``span`` is one plain number, possibly with units or trailing words."""
    s = numbers_from_words(_strip_latex(span))
    if m := _SPACE_GROUPS.match(s):
        s = re.sub(r"[ \u00a0\u2009\u202f]", "", m.group(0)) + s[m.end() :]
    m = _SCALAR.match(s)
    if m is None or not _units_or_words(m.group("rest") or ""):
        return None
    value = _number(m.group("num"))
    if value is None:
        return None
    return value[0], value[1] or bool(m.group("pct"))


def _units_or_words(rest: str) -> bool:
    """What follows a number is units or words ("540 m", "12cm^2", "8 apples left", "3rd"), not the rest of a
    product ("3x^2y" is no number 3): written against it, it must be a unit; a power needs its unit."""
    word = rest.strip().rstrip(".!").strip()
    if not word:
        return True
    if re.search(r"(?<![\^A-Za-z])\d", word):
        return False  # another number among the words ("2 of the 3 cases ... 2/3"): a sentence, not one value
    if not rest[0].isspace() and not re.fullmatch(r"st|nd|rd|th", word):
        return structured.is_unit(word)
    if "^" in word:
        return structured.is_unit(word.split()[0])
    return True


def last_value(span: str) -> tuple[Fraction, bool] | None:
    """The last number written in ``span`` (words and currency normalised), or None."""
    s = numbers_from_words(_strip_latex(span))
    matches = _plain_numbers(s)
    return _number(matches[-1].group(0)) if matches else None


_POWER_AFTER = re.compile(r"\s*[)}]?\s*(?:\^|\*\*)")
_POWER_BEFORE = re.compile(r"(?:\^|\*\*)\s*[{(]?\s*$")


# A number that multiplies what follows it: a constant, a root or a function ("3\\pi", "2\\sqrt{3}", "4\\ln 2"),
# or a variable written against it ("5x").
_FACTOR_AFTER = re.compile(
    r"\s*\\(?:pi|sqrt|ln|log|sin|cos|tan|exp|cdot\s*\\pi|mathrm\{e\}|mathrm\{i\})(?![A-Za-z])|[xyzabnpq](?![A-Za-z])"
)
_NEGATED_GROUP = re.compile(r"-\s*\(\s*$")
_COMMAND_ARGUMENT = re.compile(
    r"\\(?:sqrt(?:\[[^\]]*\])?|[dt]?frac|binom|log_|ln|log)\s*\{[^{}]*$|\}\s*\{[^{}]*$"
)


def _plain_numbers(s: str, start: int = 0) -> list[re.Match[str]]:
    """The numbers of ``s`` from ``start`` that are values of their own: not the base or the exponent of a power
    ("8^(2/3)" states no 8 and no 2/3; the library evaluates it), not a factor of a constant, root, function or
    variable ("3\\pi", "2\\sqrt{3}", "5x"), not inside a command's braces (the 3 of "\\sqrt{3}", the 2 of
    "\\frac{\\pi}{2}"). ``10^5`` and ``\\frac{1}{2}`` are one number each."""
    return [
        m
        for m in _NUMBER.finditer(s, start)
        if not _POWER_AFTER.match(s, m.end())
        and not _POWER_BEFORE.search(s[: m.start()])
        and not _FACTOR_AFTER.match(s, m.end())
        and not _COMMAND_ARGUMENT.search(s[: m.start()])
        and not _NEGATED_GROUP.search(s[: m.start()])  # "-(-3)" is 3: the library evaluates it
    ]


_GIVEN_BEFORE = re.compile(
    r"\b(?:for|(?<!total )(?<!sum )of|in|after|from|with|by|per|each|on|at|among|over|into|than|every"
    r"|across|within|during|above|below|under|beyond)\s+"
    r"(?:(?:the|a|an|his|her|their|its|our|my|your|all|original|first|other|remaining|those|these)\s+)*\$?\s*$",
    re.IGNORECASE,
)
# A condition on a variable gives its number, it does not state the answer: "... as x \\to 2", "when n = 5", "for
# t \\ge 0", "if x \\neq 1".
_CONDITION_BEFORE = re.compile(
    r"\b(?:as|when|whenever|where|if|for|given|while|once|provided)\s+\$?\s*[A-Za-z](?:_\{?\w+\}?)?\s*"
    r"(?:\\to|\\rightarrow|->|=|\\neq?|\\ne|<|>|\\[lg]eq?|approaches|tends\s+to|goes\s+to)\s*[-+]?\s*\$?\s*$",
    re.IGNORECASE,
)
_CUE_BEFORE = re.compile(
    r"(?:\b(?:is|are|was|were|be|has|have|had|gets?|got|makes?|made|earns?|earned|pays?|paid|costs?|spends?|spent"
    r"|saves?|saved|needs?|needed|takes?|took|sells?|sold|buys?|bought|packs?|packed|covers?|covered|uses?|used"
    r"|drives?|drove|eats?|ate|left|totals?|equals?|gives|scores?|scored|weighs?|holds?|collects?|collected|owns?"
    r"|receives?|received)|=|:|\\to|\\rightarrow|->|approaches|tends\s+to)\s+(?:(?:a\s+total\s+of|exactly|only|just|about|now|still|then|left\s+with)\s+)*"
    r"\$?\s*$",
    re.IGNORECASE,
)
_CONCLUSION = re.compile(
    r"\b(?:so|therefore|thus|hence|in\s+total|altogether|overall|in\s+all|which\s+means|that\s+means)\b"
    # a restatement of the value just given in other units: "1 hour and 30 minutes, which is 90 minutes" (not
    # "which is 5 fewer than 12", nor "which is the price of 5 tickets")
    r"|\b(?:which\s+(?:is|makes|comes\s+to)|that\s+is|i\.e\.,?)\s+(?=\$?\d[\d,.]*\s*(?:[A-Za-z]+)?\s*(?:in\s+total)?\s*[.,;]?\s*$)"
    r"|所以|因此|因而|故|答\s*[：:]",  # Chinese "so", "therefore", "answer:"
    re.IGNORECASE,
)
_RESULT = re.compile(rf"=\s*\$?\s*(?:\(\s*(?P<paren>{_NUM})\s*\)(?![\d(])|(?P<num>{_NUM}))")


_ASIDE = re.compile(r"\([^()]*(?:[A-Za-z]{3,}|=|\bat\b)[^()]*\)")


def stated_value(span: str, response: str = "") -> tuple[Fraction, bool] | None:
    """The value a sentence states as its answer when it holds several numbers ("In total, he will pay $48 for
    the 4 shirts" -> 48): within the clause after its last "so" / "therefore" / "in total" (when that clause holds
    a number), the number the response computed last (``... = 20``), else the first number not introduced by a
    preposition ("for the 4 shirts", "after 3 weeks", "at $2 each") that follows a verb of result ("has 20",
    "pays $48", "are 7"), else the last number not introduced by a preposition, else the last number."""
    s = numbers_from_words(_strip_latex(span))
    clause_start = 0
    for m in _CONCLUSION.finditer(s):
        if _NUMBER.search(s, m.end()):
            clause_start = m.end()
    found = [(m, _number(m.group(0))) for m in _plain_numbers(s, clause_start)]
    candidates = [(m, v) for m, v in found if v is not None]
    # A number a condition gives ("The minimum is 5 when x = 2") is not the answer when another number stands.
    candidates = [(m, v) for m, v in candidates if not _CONDITION_BEFORE.search(s[: m.start()])] or candidates
    # A remark in brackets is not the answer ("64 pages (I forgot the last 4 pages)") when a number stands outside.
    asides = [a.span() for a in _ASIDE.finditer(s)]
    outside = [(m, v) for m, v in candidates if not any(a <= m.start() < b for a, b in asides)]
    candidates = outside or candidates
    if len(candidates) <= 1:
        return candidates[0][1] if candidates else last_value(span)
    work = numbers_from_words(_strip_latex(_clean(response)))
    results = [
        v for r in _RESULT.finditer(work) if (v := _number(r.group("num") or r.group("paren"))) is not None
    ]
    for result in reversed(results):
        chosen = [v for _, v in candidates if v[0] == result[0]]
        if chosen:
            return chosen[0]
    stated = [(m, v) for m, v in candidates if not _GIVEN_BEFORE.search(s[: m.start()])]
    cued = [v for m, v in stated if _CUE_BEFORE.search(s[: m.start()])]
    if cued:
        return cued[0]
    return stated[-1][1] if stated else candidates[-1][1]


# Two or three coordinates in brackets; not "(1,200)", an amount in thousands (an accounting loss).
_POINT = re.compile(
    r"\(\s*(-?\d+(?:\.\d+)?)\s*,(?!\d{3}\s*\))\s*(-?\d+(?:\.\d+)?)\s*(?:,\s*(-?\d+(?:\.\d+)?)\s*)?\)"
)
_AXIS = re.compile(r"\b([xy])\s*-?\s*(?:intercept|axis)", re.IGNORECASE)


def stated_point(span: str) -> tuple[tuple[Fraction, ...], str] | None:
    """The point a sentence ends on ("The vertex is at (3, 0).") as its coordinates, with the axis the sentence
    names ("x" for "the x-intercept", "crosses the x-axis"; "" for none); None when its last number is not a
    coordinate of a point."""
    s = numbers_from_words(_strip_latex(span))
    numbers = _plain_numbers(s)
    points = list(_POINT.finditer(s))
    if not numbers or not points or not points[-1].start() < numbers[-1].start() < points[-1].end():
        return None
    coordinates = tuple(Fraction(g) for g in points[-1].groups() if g is not None)
    axes = {m.group(1).lower() for m in _AXIS.finditer(s)}
    return coordinates, (axes.pop() if len(axes) == 1 else "")


# A bound, not a value: "more than 3", "fewer than 8", "x > 2", "x ≥ 10" (not "at least 5 boxes": the least
# number needed is a value).
_STRICT_BOUND = re.compile(
    r"\b(?:more|greater|larger|higher|bigger|fewer|less|lower|smaller)\s+than\s+\$?\s*-?\d"
    r"|(?<![<>=\\-])(?:<|>|\\lt|\\gt)(?!=)\s*\$?\s*-?\d"
    r"|[A-Za-z]\s*(?:\\ge|\\le|\\geq|\\leq|>=|<=)\s*\$?\s*-?\d",
    re.IGNORECASE,
)
_RANGE = re.compile(
    r"\bfrom\s+\$?\s*-?\d[\d.,]*\s*(?:[^\W\d]+\s+)?(?:to|through|until)\s+\$?\s*-?\d", re.IGNORECASE
)
# ... unless a change is told: "The price went from 5 to 10" states the new value, 10.
_CHANGE_BEFORE = re.compile(
    r"\b(?:went|goes|go|rose|rises|risen|increas\w*|decreas\w*|fell|falls|fallen|dropp?\w*|grew|grows|grown"
    r"|chang\w*|mov\w*|jump\w*|climb\w*|declin\w*|shr[ai]nk\w*|rais\w*|cut|reduc\w*)\b[^.!?]{0,30}$",
    re.IGNORECASE,
)
_NAMED_VALUE = re.compile(r"(?<![\w\\])([A-Za-z])\s*=\s*\$?\s*-?\d")


def not_one_value(span: str, value: Fraction) -> str:
    """Why a sentence whose number ``value`` was read states something else than that one value: ``value`` as a
    strict bound ("more than 3", "x > 2", "x \\ge 10") or as an end of a range ("from 10 to 15"), or the values of
    several unknowns ("x = 2 and y = 3", one of which the question asked for); "" when none of these."""
    s = re.sub(r"</?[A-Za-z][^<>]*>", " ", _strip_latex(span))  # markup tags are no comparisons

    def holds_value(m: re.Match[str], ends: int) -> bool:
        numbers = [_number(n.group(0)) for n in _NUMBER.finditer(s, m.start(), m.end() + 24)]
        return any(n is not None and n[0] == value for n in numbers[:ends])

    if any(holds_value(m, 1) for m in _STRICT_BOUND.finditer(s)):
        return "the answer states a bound, not a value"
    if any(holds_value(m, 2) and not _CHANGE_BEFORE.search(s[: m.start()]) for m in _RANGE.finditer(s)):
        return "the answer states a range, not a value"
    if len({m.group(1) for m in _NAMED_VALUE.finditer(s)}) >= 2:
        return "the answer gives several unknowns, the reference one value"
    return ""


def condition_values(span: str) -> list[Fraction]:
    """The numbers a condition on a variable gives in ``span`` ("when $x = 2$", "as x \\to 3", "for n = 5"): a
    reference equal to one of them may ask for where the answer holds, not for the answer."""
    s = numbers_from_words(_strip_latex(span))
    return [
        v[0]
        for m in _plain_numbers(s)
        if _CONDITION_BEFORE.search(s[: m.start()]) and (v := _number(m.group(0))) is not None
    ]


_WRITTEN_FORM = re.compile(r"\^|!|\\(?:sqrt|pi|[dt]?frac|d?binom|log|ln|infty)(?![A-Za-z])|\be\^")


def value_form(span: str) -> bool:
    """``span`` is one number written in a form the number rules do not evaluate — a power, a factorial, a
    binomial, a radical, a fraction or multiple of pi, a logarithm (``2^{3}``, ``5!``, ``2\\sqrt{3}``,
    ``\\frac{\\pi}{6}``) — and not arithmetic left undone between plain numbers (``3 + 4``, ``2 \\cdot 3``), an
    equation or words: the library compares it with the reference's value."""
    s = _strip_latex(span)
    if not s or "=" in s or not _WRITTEN_FORM.search(s):
        return False
    if re.search(r"[A-Za-z]{2,}", re.sub(r"\\[A-Za-z]+", " ", s)):
        return False
    flat = s
    for _ in range(4):  # drop brace groups: what is inside \frac{..}{..} or ^{..} is not top-level arithmetic
        flat = re.sub(r"\{[^{}]*\}", "{}", flat)
    return not re.search(r"\d\s*(?:[-+*/]|\\times|\\cdot|\\div)\s*\d", flat)


_ARITHMETIC_SIGNS = (
    ("\\times", "*"), ("\\cdot", "*"), ("×", "*"), ("·", "*"), ("\\div", "/"), ("÷", "/"), ("^", "**"),
)  # fmt: skip


_ARITHMETIC_WORDS = (
    ("plus", "+"), ("minus", "-"), ("times", "*"), ("multiplied by", "*"), ("divided by", "/"), ("over", "/"),
)  # fmt: skip


def arithmetic_text(text: str) -> str:
    """``text`` with its arithmetic signs and words ("30 plus 41") written as Python's and no spaces: what
    :func:`arithmetic` expressions are looked for in (an answer's arithmetic that the query holds is the query's,
    not an answer)."""
    s = numbers_from_words(_strip_latex(text)).replace("$", " ")
    for sign, op in _ARITHMETIC_SIGNS + _ARITHMETIC_WORDS:
        s = re.sub(
            rf"(?<=[\d\s]){re.escape(sign)}(?=[\s\d(])" if sign[0].isalpha() else re.escape(sign), op, s
        )
    return re.sub(r"\s+", "", re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", s))


def arithmetic(span: str) -> str | None:
    """The arithmetic between plain numbers that ``span`` ends with, left undone ("N = 32 × 9", "7 × 8 + 2",
    "P = 3 ÷ 4"), as a Python expression ("32*9"); None when it ends with anything else (a single number, letters,
    a function)."""
    s = _strip_latex(span).replace("$", " ")
    s = s.rsplit("=", 1)[-1] if "=" in s else re.sub(r"^.*?\b(?:is|are|was|equals?|gives?)\s+", "", s)
    s = re.sub(r"\\[dt]?frac\{([^{}]+)\}\{([^{}]+)\}", r"((\1)/(\2))", s)
    for sign, op in _ARITHMETIC_SIGNS:
        s = s.replace(sign, op)
    s = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", s).strip().rstrip(".")
    if re.search(r"\d\s+[\d(]", s):
        return None  # "1 1/2" is a mixed number, "2 500" a grouping: read by the number rules
    if not re.fullmatch(r"[\d.\s+\-*/()]+", s) or not re.search(r"[\d)]\s*(?:\*\*?|/|\+|-)\s*[\d(]", s):
        return None
    return re.sub(r"\s+", "", s)


def arithmetic_value(expression: str) -> Fraction | None:
    """The exact value of an expression from :func:`arithmetic` (numbers, + - * / ** and brackets), None when it
    has none (division by zero, a huge or fractional power)."""

    def value(node: ast.AST) -> Fraction:
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return Fraction(str(node.value))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            v = value(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            a, b = value(node.left), value(node.right)
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            if isinstance(node.op, ast.Div):
                return a / b
            if isinstance(node.op, ast.Pow) and b.denominator == 1 and abs(b) <= 64:
                return a ** int(b)
        raise ValueError("not plain arithmetic")

    try:
        return value(ast.parse(expression, mode="eval"))
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        return None


# GAOKAO's numbered statements, circled (①③, "② ④"), and the ones a response chooses, circled or as "(1), (2) and
# (4)" in its conclusion.
_CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩⑪⑫⑬⑭⑮⑯⑰⑱⑲⑳"
_CIRCLED_SET = re.compile(
    rf"^\s*(?:\\text\{{)?\s*[{_CIRCLED}](?:[\s,、，;和与及and]*[{_CIRCLED}])*\s*\}}?\s*[.。]?\s*$"
)
_CHOSEN_CUE = re.compile(
    r"所以|因此|故|综上|答案|正确|选|\b(?:correct|true|answer|so|therefore|hence|thus)\b", re.IGNORECASE
)
_NUMBERED = re.compile(r"\((\d{1,2})\)")


def circled_choices(text: str) -> frozenset[int] | None:
    """The statements a reference names by circled numbers ("①③" -> {1, 3}); None when it is not only those."""
    if not _CIRCLED_SET.match(text):
        return None
    return frozenset(_CIRCLED.index(c) + 1 for c in text if c in _CIRCLED)


def chosen_statements(response: str) -> frozenset[int] | None:
    """The numbered statements a response concludes are the answer: its last sentence that names circled numbers
    (one with a word of conclusion — 所以, 故, 正确, "correct", "therefore" — before the others), else, when it
    writes none circled, its last sentence of conclusion naming "(1)", "(2)"."""
    sentences = [x for x in re.split(r"(?<=[.!?。；;])\s*|\n+", response) if x.strip()]
    circled = [x for x in sentences if any(c in _CIRCLED for c in x)]
    if circled:
        cued = [x for x in circled if _CHOSEN_CUE.search(x)]
        last = (cued or circled)[-1]
        return frozenset(_CIRCLED.index(c) + 1 for c in last if c in _CIRCLED)
    for sentence in reversed(sentences):
        numbers = _NUMBERED.findall(sentence)
        if (
            numbers
            and _CHOSEN_CUE.search(sentence)
            and not re.search(r"\b(?:false|incorrect|wrong)\b|错误", sentence)
        ):
            return frozenset(int(n) for n in numbers)
    return None


_ROMAN = re.compile(r"^M{0,4}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$")
_ROMAN_VALUES = {"M": 1000, "D": 500, "C": 100, "L": 50, "X": 10, "V": 5, "I": 1}


def roman_value(span: str) -> int | None:
    """The value of the Roman numeral ``span`` ends with ("The answer is XL." -> 40, ``\\text{XIV}`` -> 14) when it
    is written with two letters or more (one letter may be an option, a variable or the word "I"), and valid."""
    words = re.findall(r"[A-Za-z]+", _strip_latex(span))
    token = words[-1] if words else ""
    if len(token) < 2 or not token.isupper() or not _ROMAN.match(token):
        return None
    values = [_ROMAN_VALUES[c] for c in token]
    return sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))


def _machine_float(x: Fraction) -> bool:
    """``x`` is a decimal fraction of 15 or more significant digits: a program's printout of a double."""
    if x.denominator == 1:
        return False  # an integer is exact, however long
    for places in range(41):
        scaled = x * 10**places
        if scaled.denominator == 1:
            return len(str(abs(scaled.numerator)).lstrip("0").rstrip("0")) >= 15
    return False  # not a finite decimal


def same_number(gold: tuple[Fraction, bool], answer: tuple[Fraction, bool]) -> bool:
    """Equal, with the percent rule: ``X%`` equals ``X`` (for ``|X| >= 1``: below 1 a percent sign against a
    fraction is the slip "0.4%" for 0.4) and ``X/100``; a decimal of 15 or more significant digits (a program's
    printout, ``0.8333333333333334``, ``0.30000000000000004``) equals the reference it is within 1e-14 of (relative:
    the rounding of a double)."""
    (g, gp), (a, ap) = gold, answer
    if g != a and gp == ap and _machine_float(a) and abs(a - g) <= abs(g) * Fraction(1, 10**14):
        return (
            True  # "0.8333333333333334", a program's printout of 5/6: equal to within a few units of a double
        )
    if g == a:
        # "0.4%" against a probability of 0.4: below 1, the percent sign is the slip of a fraction for a percent
        return gp == ap or abs(g) >= 1
    return (gp and not ap and g / 100 == a) or (ap and not gp and a / 100 == g)


# A worked solution's working: an equation with numbers ("3x = 8x - 120", "= 10 m/s"), and a last sentence that
# concludes with a number ("So the number is 24.", "Therefore, 2 people have ...").
_EQUATION = re.compile(r"(?:\d|[a-z])\s*=\s*-?\$?\s*\d|\d\s*=\s*")
_CONCLUDES = re.compile(
    r"^\s*(?:so|therefore|thus|hence|in\s+total|altogether|the\s+answer|finally|this\s+means)\b",
    re.IGNORECASE,
)


# The heading of a proof that follows the claim it proves: "Proof.", "**Proof:**" on a line of its own or after a
# sentence.
_PROOF_HEAD = re.compile(
    r"(?:^|\n|(?<=[.!?])[ \t]+)[ \t]*(?:proof|demonstration|preuve|beweis)\s*[.:]", re.IGNORECASE
)
# A proof concludes a statement, not a value ("Therefore no rational number has square 12.").
_PROOF = re.compile(
    r"\b(?:suppose|assume|contradict\w*|we\s+(?:prove|show)|which\s+proves|q\.?e\.?d)\b|∎|\\blacksquare",
    re.IGNORECASE,
)


def is_worked_solution(text: str) -> bool:
    """``text`` is a worked solution that states its answer without a marker (Orca-Math, MathInstruct): two or more
    lines or sentences, working (an equation with numbers, or three or more different numbers), no ``####`` and no
    ``\\boxed{}``, no proof, and a last sentence that concludes with a number ("So the number is 24.")."""
    if "####" in text or "\\boxed" in text or _PROOF.search(text):
        return False
    sentences = [s for s in re.split(r"(?<=[.!?])\s+|\n+", text.strip()) if s.strip()]
    if len(sentences) < 2 or not _CONCLUDES.match(sentences[-1]):
        return False
    if _NUMBER.search(numbers_from_words(sentences[-1])) is None:
        return False
    working = " ".join(sentences[:-1])
    return bool(_EQUATION.search(working)) or len(set(_NUMBER.findall(working))) >= 3


@functools.lru_cache(maxsize=4096)  # a GRPO group's samples share their reference: it is read once
def gold_answer(reference: str, marker: str = "####") -> str:
    """The final answer in a reference: after the last ``marker``, else its last ``\\boxed{}``, else — for a worked
    solution without a marker (:func:`is_worked_solution`) — the answer it states last, else all of it."""
    text = _clean(reference)
    if marker and marker in text:
        text = text.rsplit(marker, 1)[1]
    boxed = _boxed_spans(text)
    if boxed and not text.strip().startswith("\\boxed") and len(boxed) == 1:
        return boxed[0][2].strip()
    if is_worked_solution(text) and (stated := _final_answer(text)) is not None and not stated.hedged:
        value = scalar_value(stated.text) or stated_value(stated.text, text)
        if value is None:
            return stated.text.strip()
        number, percent = value
        written = str(number) if number.denominator == 1 else f"{number.numerator}/{number.denominator}"
        return written + ("%" if percent else "")
    return text.strip()


_LETTER_SET_REF = re.compile(r"^\s*(?:\\text\{\s*)?([A-E](?:\s*[,、]?\s*[A-E]){1,4})\s*\}?\s*$")


def choice_letters(text: str, reference: bool = False) -> frozenset[str] | None:
    """The set of option letters a multiple-answer reference is (``AC``, ``B, C, D``: two or more, distinct), or
    that an answer chooses ("A and C", "B、C、D", "D, A", "AC"); None when it names no such set."""
    s = _strip_latex(text).strip().rstrip(".。")
    if reference:
        m = _LETTER_SET_REF.match(s)
        letters = re.findall(r"[A-E]", m.group(1)) if m else []
        return frozenset(letters) if len(letters) == len(set(letters)) >= 2 else None
    m = re.search(r"(?:^|[:：\s])([A-E](?:\s*(?:,|、|and|&|\+)?\s*[A-E]){1,4})\s*$", s)
    if m is None or re.search(r"[A-E][a-z]", m.group(1)):
        return None
    letters = re.findall(r"[A-E]", m.group(1))
    return frozenset(letters) if len(letters) == len(set(letters)) >= 2 else None


def choice_letter(text: str, reference: bool = False) -> str | None:
    """The multiple-choice letter ``text`` names: for a reference, only when it is a bare letter (``C``,
    ``(C)``, ``\\text{(C)}``); for an answer span, a leading letter ("C", "(c)", "C) 12", "C. 42", "c ) 15")."""
    s = _strip_latex(text) if not reference else text.replace("$", "").strip()
    if reference:
        m = _CHOICE_REF.match(s) or _CHOICE_REF.match(_strip_latex(text))
        return m.group(1) if m else None
    s = re.sub(r"^(?:\\to|\\rightarrow|\\Rightarrow|->|=>)\s*", "", s.strip())  # "→ E) 2"
    s = re.sub(r"^(?:option|choice)\s+", "", s.strip(), flags=re.IGNORECASE)
    s = re.sub(rf"^[\[(]\s*({_LETTER})\s*[\])]", r"(\1)", s)  # "[E]", "( b )"
    m = re.match(rf"^\(?({_LETTER})\)?(?:$|[\s.):,])", s)
    # A lower-case letter is a choice when bracketed, alone, or followed by its bracket (MathQA's "c ) 15").
    if m and (m.group(1).isupper() or s.startswith("(") or len(s) == 1 or re.match(r"^.\s*\)", s)):
        return m.group(1).upper()
    return None


_MATH_WORDS = {
    "sin",
    "cos",
    "tan",
    "cot",
    "sec",
    "csc",
    "log",
    "exp",
    "sqrt",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "tanh",
    "max",
    "min",
    "gcd",
    "lcm",
    "mod",
    "det",
    "inf",
    "infty",
    "and",
    "pi",
}


def is_prose(text: str) -> bool:
    """Words rather than mathematics: a reference like "no number here" is not read as a product of letters."""
    s = re.sub(r"\\(?:begin|end)\{\w+\}|\\text\{[^{}]*\}|\\[A-Za-z]+", " ", text)
    words = [w.lower() for w in re.findall(r"[A-Za-z]{3,}", s)]
    return any(w not in _MATH_WORDS for w in words)
