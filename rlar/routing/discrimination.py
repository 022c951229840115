"""Discrimination probes: before a tool scores a signature, it must tell the signature's right answers from wrong
answers of the same form.

The hack probes (:mod:`rlar.routing.probes`) catch a tool that rewards what is no answer at all; these catch a tool
that cannot read the answer it is given. Built per record from its reference, for answer texts only (shapes
``number``, ``math``, ``choice``, ``label``, ``short_text``, one answer: a code test, an instruction set, a long text,
a plain list of several entries — aliases, items or a tag sequence — or no reference is no answer a response
repeats):

====================  =========================================================================================
probe                 the response
====================  =========================================================================================
``right``             the reference's first acceptable answer as written (a worked solution: its final answer)
``right_sentence``    the same answer in a sentence: "The answer is X."
``right_bold``        the same answer in Markdown bold: "**X**"
``right_period``      the same answer with a full stop: "X." — not where the reference is copied from the query
                      or transforms its text (copy, reverse, Morse: there the characters are the task), nor where
                      it already ends in punctuation
``wrong_sign``        a number with its sign flipped ("-3" for "3", "3" for "-3"; not for 0)
``wrong_value``       the same form with another value: a number plus one, a formula with every number shifted,
                      the next option letter, the other of a yes/no or true/false label
``wrong_other``       another record's answer of the same shape, as written (another entity)
====================  =========================================================================================

Each ``right*`` probe must get the tool's maximum and no ``wrong*`` probe may, on most of the records it was built
from (:func:`undiscriminated`) — except that a graded tool (a metric, a judge: not a rule) needs only score the
answer in a sentence, in bold or with a full stop above every wrong answer of its record, the reference as written
still at its maximum; a tool that fails either way is not eligible for the signature, and the failures
are recorded in its :class:`~rlar.routing.probes.ProbeReport` (``undiscriminated``) beside the hack probes'.
Probe calls that abstain or error are not counted (a tool that abstains on every one is reported unverified, as
for the hack probes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from rlar.routing.query import RoutingQuery
from rlar.tasks.references import answer_strings, reference_shape

__all__ = ["DISCRIMINATION_NAMES", "build_discrimination_probes", "undiscriminated"]

DISCRIMINATION_NAMES = (
    "right",
    "right_sentence",
    "right_bold",
    "right_period",
    "wrong_sign",
    "wrong_value",
    "wrong_other",
)
ANSWER_SHAPES = frozenset({"number", "math", "choice", "label", "short_text"})
_NUMBER = re.compile(r"^([-+−]?)(\d+(?:[.,]\d+)*)(\s*%?)$")
_NUM_IN = re.compile(r"(?<![\w.])(\d+)(\.\d+)?(?!\d)")
_OPPOSITE = {"yes": "no", "no": "yes", "true": "false", "false": "true"}


def final_answer(text: str) -> str:
    """A worked solution's final answer (after GSM8K's ``####``, in its last ``\\boxed{}``), else the text."""
    if "####" in text and text.rsplit("####", 1)[1].strip():
        return text.rsplit("####", 1)[1].strip()
    start = text.rfind("\\boxed{")
    if start >= 0:
        depth, i = 0, start + len("\\boxed")
        for j in range(i, len(text)):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                return text[i + 1 : j].strip()
    return text.strip()


def _answer(reference: Any) -> str:
    """The reference's first acceptable answer; "" for a plain list of several entries, which may be aliases, items
    that must all be given or a tag sequence — no one answer to write in other forms."""
    if isinstance(reference, list | tuple) and len([r for r in reference if r not in (None, "")]) > 1:
        return ""
    answers = [a for a in (answer_strings(reference) or []) if a.strip()]
    return final_answer(answers[0]) if answers else ""


def _wrong_forms(answer: str, shape: str) -> list[tuple[str, str]]:
    """(probe name, response) of the answers of ``answer``'s own form with another value."""
    out: list[tuple[str, str]] = []
    if m := _NUMBER.match(answer):
        sign, digits, tail = m.groups()
        if re.sub(r"[0.,]", "", digits):
            out.append(("wrong_sign", f"{digits}{tail}" if sign in ("-", "−") else f"-{digits}{tail}"))
    if shape == "choice":
        letter = re.sub(r"[^A-Za-z]", "", answer)[:1]
        if letter:
            base = "a" if letter.islower() else "A"
            other = chr(ord(base) + (ord(letter) - ord(base) + 1) % 5)
            out.append(("wrong_value", answer.replace(letter, other, 1)))
    elif answer.strip().lower() in _OPPOSITE:  # a label, or a yes/no answer written as text
        opposite = _OPPOSITE[answer.strip().lower()]
        out.append(("wrong_value", opposite.capitalize() if answer[:1].isupper() else opposite))
    elif _NUM_IN.search(answer):
        out.append(("wrong_value", _NUM_IN.sub(lambda n: f"{int(n.group(1)) + 1}{n.group(2) or ''}", answer)))
    return out


def build_discrimination_probes(
    q: RoutingQuery, other_references: Iterable[Any] = ()
) -> list[tuple[str, str, str]]:
    """The discrimination probes of ``q`` as ``(name, response, why)`` (module docstring); [] when its reference is
    not an answer text."""
    shape = reference_shape(q.reference, q.metadata)
    features = q.features()
    # A short translation is read as a text (``QueryFeatures.answer_shape``): other wordings of it can be as good.
    answer = _answer(q.reference) if shape in ANSWER_SHAPES and features.answer_shape != "text" else ""
    if not answer:
        return []
    copied = features.relation.extractive or features.reference_kind == "transformation"
    probes = [
        ("right", answer, "the reference as written"),
        ("right_sentence", f"The answer is {answer}.", "the reference in a sentence"),
        ("right_bold", f"**{answer}**", "the reference in bold"),
    ]
    if not copied and re.search(r"[\w)}\]]$", answer):
        probes.append(("right_period", f"{answer}.", "the reference with a full stop"))
    probes += [
        (name, text, "an answer of the reference's form with another value")
        for name, text in _wrong_forms(answer, shape)
    ]
    own = {a.strip().casefold() for a in (answer_strings(q.reference) or [])} | {answer.casefold()}
    for other in other_references:
        text = _answer(other)
        if text and text.casefold() not in own and reference_shape(text) == shape:
            probes.append(("wrong_other", text, "another record's answer of the same shape"))
            break
    # A wrong form that happens to be an acceptable answer is no wrong answer.
    return [p for p in probes if p[0].startswith("right") or p[1].strip().casefold() not in own]


def undiscriminated(scores: Sequence[Any], top: float, tol: float, graded: bool = False) -> list[str]:
    """The discrimination probes a tool failed, from its ``ProbeScore``s (``probe``, ``status``, ``score``,
    ``record``), each on most of the records it got a score on: ``right`` below ``top``; another ``right*`` probe
    below ``top`` — for a ``graded`` tool (a metric, a judge: partial credit by nature, a sentence around the answer
    is not the reference's text) not above every ``wrong*`` probe of its record instead; a ``wrong*`` probe at
    ``top``. Abstains and errors are not counted."""
    scored = [s for s in scores if s.status == "ok" and s.score is not None]
    wrong_top: dict[int, float] = {}
    for s in scored:
        if s.probe.startswith("wrong"):
            wrong_top[s.record] = max(wrong_top.get(s.record, float("-inf")), s.score)
    by_name: dict[str, list[bool]] = {}
    for s in scored:
        if s.probe.startswith("wrong"):
            failed = s.score >= top - tol
        elif graded and s.probe != "right":
            failed = s.score <= wrong_top.get(s.record, float("-inf"))
        else:
            failed = s.score < top - tol
        by_name.setdefault(s.probe, []).append(failed)
    return [n for n in DISCRIMINATION_NAMES if n in by_name and 2 * sum(by_name[n]) > len(by_name[n])]
