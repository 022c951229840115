"""Markup and layout around a written answer, read before its characters are: what a chat model wraps an answer in
when it writes for a renderer (MathML, Typst, a Julia or Python REPL, a chat client) rather than for LaTeX.

``plain_markup(text)`` rewrites, in order:

- MathML (``<math>...</math>``): presentation elements become LaTeX (``<mfrac>`` is ``\\frac``, ``<msqrt>``,
  ``<mroot>``, ``<msup>``, ``<msub>``, ``<mrow>``, ``<mfenced>``, tokens ``<mn>``/``<mi>``/``<mo>``/``<mtext>``).
  A block that is not well-formed XML, or holds an element this reader does not know, stays as written: the
  checker then meets markup it cannot read and does not score it as a number;
- Typst math functions inside ``$...$`` (``frac(3, 4)``, ``root(3, 2)``, ``binom(5, 2)``) become LaTeX; outside
  mathematics they are code, where ``root(2, 3)`` is sympy's cube root of 2 — the other order;
- Julia rationals (``7//12``) are fractions, only in a response that shows Julia (a ``julia>`` prompt or a
  fenced ``julia`` block): elsewhere ``//`` is Python's floor division;
- digit-group underscores of Python, Rust, Java and Julia literals (``1_250_000``) go;
- a frame of box-drawing characters around an answer (``┌──┐ / │ 42 │ / └──┘``) goes, its content stays; a box
  character anywhere else (a fraction bar of a pretty-printer) stays;
- spoiler marks (``>!64!<``) go, their content stays;
- footnotes: a footnote's text (``[^1]: ...`` or a line starting with a superscript digit) and a list of sources
  after the answer (``Sources:`` with ``[1] ...`` lines) are not part of the answer; their marks in the text
  (``[^1]``, ``¹`` after a word, ``[1][2]``) go. A mark goes only when its note or source is there: ``[2]`` alone
  is a list of one number.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

__all__ = ["plain_markup"]

_MATHML = re.compile(r"<math\b[^>]*>.*?</math\s*>", re.DOTALL | re.IGNORECASE)
_TOKENS = {"mn", "mi", "mo", "mtext", "ms"}
_OPERATORS = {"×": "\\times ", "⋅": "\\cdot ", "·": "\\cdot ", "−": "-", "±": "\\pm ", "÷": "\\div "}


class _Unknown(Exception):
    pass


def _latex(el: ET.Element) -> str:
    tag = el.tag.rsplit("}", 1)[-1].lower()
    kids = list(el)
    if tag in _TOKENS:
        text = (el.text or "").strip()
        return _OPERATORS.get(text, text)
    if tag in ("math", "mrow", "mstyle", "semantics", "mpadded", "mphantom"):
        if tag == "mphantom":
            return ""
        parts = [_latex(k) for k in kids if k.tag.rsplit("}", 1)[-1].lower() != "annotation"]
        return "".join(parts)
    if tag == "mfrac" and len(kids) == 2:
        return f"\\frac{{{_latex(kids[0])}}}{{{_latex(kids[1])}}}"
    if tag == "msqrt":
        return f"\\sqrt{{{''.join(_latex(k) for k in kids)}}}"
    if tag == "mroot" and len(kids) == 2:
        return f"\\sqrt[{_latex(kids[1])}]{{{_latex(kids[0])}}}"
    if tag == "msup" and len(kids) == 2:
        return f"{{{_latex(kids[0])}}}^{{{_latex(kids[1])}}}"
    if tag == "msub" and len(kids) == 2:
        return f"{{{_latex(kids[0])}}}_{{{_latex(kids[1])}}}"
    if tag == "msubsup" and len(kids) == 3:
        return f"{{{_latex(kids[0])}}}_{{{_latex(kids[1])}}}^{{{_latex(kids[2])}}}"
    if tag == "mfenced":
        opening, closing = el.get("open", "("), el.get("close", ")")
        separator = el.get("separators", ",")[:1] or ","
        return opening + f"{separator} ".join(_latex(k) for k in kids) + closing
    raise _Unknown(tag)


def _mathml(m: re.Match[str]) -> str:
    block = re.sub(r"\sxmlns(?::\w+)?=\"[^\"]*\"", "", m.group(0))
    try:
        return f" ${_latex(ET.fromstring(block))}$ "
    except (ET.ParseError, _Unknown, RecursionError):
        return m.group(0)


def _balanced_args(text: str, start: int) -> tuple[list[str], int] | None:
    """The comma-separated arguments of the call whose '(' is at ``start``, and the index after its ')'."""
    depth, i, args, last = 0, start, [], start + 1
    while i < len(text):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                args.append(text[last:i].strip())
                return args, i + 1
        elif ch == "," and depth == 1:
            args.append(text[last:i].strip())
            last = i + 1
        elif ch == "\n":
            return None
        i += 1
    return None


_TYPST_CALL = re.compile(r"(?<![\\\w.])(frac|root|binom)\(")
_DOLLARS = re.compile(r"\$([^$\n]+)\$")


def _typst(text: str) -> str:
    out, pos = [], 0
    for m in _TYPST_CALL.finditer(text):
        if m.start() < pos:
            continue
        got = _balanced_args(text, m.end() - 1)
        if got is None:
            continue
        args, end = got
        name = m.group(1)
        if name == "frac" and len(args) == 2:
            latex = f"\\frac{{{_typst(args[0])}}}{{{_typst(args[1])}}}"
        elif name == "binom" and len(args) == 2:
            latex = f"\\binom{{{_typst(args[0])}}}{{{_typst(args[1])}}}"
        elif name == "root" and len(args) == 2:
            latex = f"\\sqrt[{_typst(args[0])}]{{{_typst(args[1])}}}"
        else:
            continue
        out.append(text[pos : m.start()] + latex)
        pos = end
    return "".join(out) + text[pos:]


_JULIA = re.compile(r"julia>|```\s*julia\b", re.IGNORECASE)
_RATIONAL = re.compile(r"(?<![\w/.])(-?\d+)\s*//\s*(\d+)(?![\w/.])")
_UNDERSCORE_GROUPS = re.compile(r"(?<![\w.])(\d{1,3})((?:_\d{3})+)(?![\w])")

_BOX_CHARS = "".join(map(chr, range(0x2500, 0x2580)))
_CORNERS = "┌┐└┘╔╗╚╝╭╮╰╯┏┓┗┛╒╕╘╛╓╖╙╜"
_FRAME_RULE = re.compile(rf"^[ \t]*[{_CORNERS}][{_BOX_CHARS} \t]*$")
_FRAME_SIDE = re.compile(r"^[ \t]*[│║┃](.*?)[│║┃][ \t]*$")

_SPOILER = re.compile(r">!\s*(.+?)\s*!<")

_FOOTNOTE_TEXT = re.compile(r"(?m)^[ \t]*\[\^([\w-]+)\]:[^\n]*(?:\n(?:[ \t]{2,}|\t)[^\n]*)*")
_SUPERSCRIPT_DIGITS = "¹²³⁴⁵⁶⁷⁸⁹"
_SUPERSCRIPT_NOTE = re.compile(rf"(?m)^[ \t]*([{_SUPERSCRIPT_DIGITS}])[ \t]+\S[^\n]*$")
_SOURCES = re.compile(
    r"(?im)^[ \t]*(?:\*\*)?(?:sources?|references?|citations?|bibliography)(?:\*\*)?[ \t]*:?(?:\*\*)?[ \t]*\n"
    r"((?:[ \t]*(?:[-*][ \t]*)?\[\d{1,2}\][^\n]*(?:\n|$))+)"
)
_RULE_LINE = re.compile(r"(?m)^[ \t]*(?:-{3,}|\*{3,}|_{3,})[ \t]*$")


def _footnotes(text: str) -> str:
    notes = set(_FOOTNOTE_TEXT.findall(text))
    if notes:
        text = _FOOTNOTE_TEXT.sub("", text)
        text = re.sub(r"\[\^(" + "|".join(map(re.escape, notes)) + r")\]", "", text)
    marks = set(_SUPERSCRIPT_NOTE.findall(text))
    if marks:
        text = _SUPERSCRIPT_NOTE.sub("", text)
        # the mark against what it annotates: "**x = 9**¹", "edges¹" (a digit before it is an exponent: 10¹)
        text = re.sub(rf"(?<=[^\s\d])[{''.join(marks)}](?![{_SUPERSCRIPT_DIGITS}\d])", "", text)
    sources = _SOURCES.search(text)
    if sources:
        numbers = set(re.findall(r"\[(\d{1,2})\]", sources.group(1)))
        text = text[: sources.start()] + text[sources.end() :]
        text = re.sub(r"[ \t]*\[(" + "|".join(numbers) + r")\]", "", text)
    if notes or marks or sources:
        text = _RULE_LINE.sub("", text.rstrip()).rstrip()  # the rule that set the notes apart
    return text


def _frames(text: str) -> str:
    lines = text.split("\n")
    if not any(_FRAME_RULE.match(ln) for ln in lines):
        return text
    out = []
    for ln in lines:
        if _FRAME_RULE.match(ln):
            continue
        side = _FRAME_SIDE.match(ln)
        out.append(side.group(1).strip() if side else ln)
    return "\n".join(out)


def plain_markup(text: str) -> str:
    """``text`` with the markup and layout of the module docstring read; everything else as written."""
    if "<math" in text.lower():
        text = _MATHML.sub(_mathml, text)
    if "(" in text and "$" in text:
        text = _DOLLARS.sub(lambda m: "$" + _typst(m.group(1)) + "$", text)
    if "//" in text and _JULIA.search(text):
        text = _RATIONAL.sub(r"\\frac{\1}{\2}", text)
    if "_" in text:
        text = _UNDERSCORE_GROUPS.sub(lambda m: m.group(1) + m.group(2).replace("_", ""), text)
    if any(c in text for c in _CORNERS):
        text = _frames(text)
    if ">!" in text:
        text = _SPOILER.sub(r"\1", text)
    return _footnotes(text)
