"""Building blocks of composed verifiers: parametrised Python source, rendered into one stdlib-only module.

Two families:

- constraint checks: the module embeds the source of :mod:`rlar.constraints.checks` (the one definition of what
  each constraint rule of :mod:`rlar.constraints.vocabulary` means) and the constraints as a JSON string literal;
  each constraint scores the response alone, 1.0 when it holds (rules over many units give the fraction).
- match blocks, which compare the response with the reference: numeric comparison, exact / normalised /
  contains match, multiple-choice letter, token F1, BLEU-2 and chrF (both re-implemented in plain Python:
  the sandbox has only the standard library). Each takes the best over several references and returns 0.0
  when the response or the reference gives nothing to compare.

``render_module(checks, match, aggregate, header)`` writes the source of a module defining
``reward(query, response, reference, metadata) -> float`` in ``SCORE_RANGE = (0.0, 1.0)``. Parameters enter
the source only as literals (``repr`` of str / int / float / list, or one JSON string), so a task text can
never inject code. The module is what runs in the sandbox and what is stored in the tool's spec: it is
validated the same way as code written by a language model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from rlar.constraints.checks import embedded_source
from rlar.constraints.vocabulary import RULES

__all__ = ["MATCH_BLOCKS", "MatchBlock", "render_module"]

PRELUDE = r"""
import json
import math
import re
import unicodedata

SCORE_RANGE = (0.0, 1.0)

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:\s*/\s*\d+(?:\.\d+)?)?|-?\.\d+")


def _norm(text, articles=False):
    text = unicodedata.normalize("NFKC", str(text)).lower()
    text = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in text)
    if articles:
        text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def _refs(reference):
    if reference is None:
        return []
    if isinstance(reference, dict):
        for key in ("answers", "answer"):
            if key in reference:
                return _refs(reference[key])
        return []
    if isinstance(reference, (list, tuple)):
        return [str(r) for r in reference if r is not None and str(r).strip()]
    return [str(reference)] if str(reference).strip() else []


def _to_number(text):
    text = text.replace(",", "").replace(" ", "")
    try:
        if "/" in text:
            num, den = text.split("/", 1)
            return float(num) / float(den)
        return float(text)
    except (ValueError, ZeroDivisionError):
        return None


def _last_number(text, marker=""):
    if marker and marker in text:
        text = text.rsplit(marker, 1)[1]
    boxed = re.findall(r"\\boxed\{([^{}]*)\}", text)
    if boxed:
        text = boxed[-1]
    found = _NUMBER.findall(text)
    for candidate in reversed(found):
        value = _to_number(candidate)
        if value is not None:
            return value
    return None


def _extract(response, pattern):
    if not pattern:
        return response.strip()
    found = list(re.finditer(pattern, response, re.M))
    if not found:
        return None
    last = found[-1]
    return (last.group(1) if last.groups() else last.group(0)).strip()


def _ngrams(tokens, n):
    counts = {}
    for i in range(len(tokens) - n + 1):
        key = tuple(tokens[i : i + n])
        counts[key] = counts.get(key, 0) + 1
    return counts


def _bleu2(hyp, ref):
    h, r = re.findall(r"\w+|[^\w\s]", hyp), re.findall(r"\w+|[^\w\s]", ref)
    if not h or not r:
        return 0.0
    logs = []
    for n in (1, 2):
        hn, rn = _ngrams(h, n), _ngrams(r, n)
        total = max(sum(hn.values()), 0)
        match = sum(min(c, rn.get(g, 0)) for g, c in hn.items())
        if n == 1 and match == 0:
            return 0.0
        logs.append(math.log((match + (n > 1)) / (total + (n > 1))) if total + (n > 1) > 0 else 0.0)
    bp = 1.0 if len(h) >= len(r) else math.exp(1.0 - len(r) / len(h))
    return bp * math.exp(sum(logs) / len(logs))


def _chrf(hyp, ref, order=6, beta=2.0):
    h, r = hyp.replace(" ", ""), ref.replace(" ", "")
    if not h or not r:
        return 0.0
    precs, recs = [], []
    for n in range(1, order + 1):
        hn, rn = _ngrams(list(h), n), _ngrams(list(r), n)
        if not hn or not rn:
            continue
        match = sum(min(c, rn.get(g, 0)) for g, c in hn.items())
        precs.append(match / sum(hn.values()))
        recs.append(match / sum(rn.values()))
    if not precs:
        return 0.0
    p, rc = sum(precs) / len(precs), sum(recs) / len(recs)
    if p + rc == 0:
        return 0.0
    b2 = beta * beta
    return (1 + b2) * p * rc / (b2 * p + rc)


def _f1(hyp, ref):
    h, r = _norm(hyp, True).split(), _norm(ref, True).split()
    if not h or not r:
        return 0.0
    common = 0
    pool = {}
    for t in r:
        pool[t] = pool.get(t, 0) + 1
    for t in h:
        if pool.get(t, 0) > 0:
            common += 1
            pool[t] -= 1
    if common == 0:
        return 0.0
    p, rc = common / len(h), common / len(r)
    return 2 * p * rc / (p + rc)
"""


def _lit(value: Any) -> str:
    """A Python literal for a parameter; only plain data is accepted (no code can enter the module)."""
    if value is None or isinstance(value, bool | int | float | str):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_lit(v) for v in value) + "]"
    raise TypeError(f"block parameter of type {type(value).__name__} is not a plain literal")


@dataclass(frozen=True, slots=True)
class MatchBlock:
    """A reference comparison. ``formats``: answer formats / reference shapes it suits (the composer's rules)."""

    name: str
    description: str
    formats: tuple[str, ...]
    body: str  # uses `answer` (extracted response) and `refs` (reference strings); returns a float in [0, 1]
    params: dict[str, Any] = field(default_factory=dict)


MATCH_BLOCKS: dict[str, MatchBlock] = {
    b.name: b
    for b in (
        MatchBlock(
            "numeric",
            "Compare the final number of the response with the reference number (relative tolerance); for math,"
            " arithmetic, counting and word problems whose answer is a number.",
            ("number", "integer", "numeric", "fraction", "decimal"),
            "target = [_last_number(r, MARKER) for r in refs]\n"
            "    got = _last_number(answer)\n"
            "    if got is None:\n"
            "        return 0.0\n"
            "    for t in target:\n"
            "        if t is not None and abs(got - t) <= REL_TOL * max(1.0, abs(t)):\n"
            "            return 1.0\n"
            "    return 0.0",
            {"REL_TOL": 1e-6, "MARKER": "####"},
        ),
        MatchBlock(
            "exact",
            "Exact string equality of the stripped answer and the reference; for labels, identifiers, copy and"
            " reverse string tasks where every character matters.",
            ("label", "identifier", "string", "text", "choice"),
            "return 1.0 if any(answer == r.strip() for r in refs) else 0.0",
        ),
        MatchBlock(
            "normalized",
            "Case-, punctuation- and whitespace-insensitive equality of answer and reference; for short"
            " free-text answers such as names, entities, single words and labels.",
            ("short_text", "label", "word", "entity", "name"),
            "a = _norm(answer, True)\n    return 1.0 if a and any(a == _norm(r, True) for r in refs) else 0.0",
        ),
        MatchBlock(
            "contains",
            "The normalised reference occurs in the normalised response as whole words; for open questions"
            " answered inside a sentence.",
            ("sentence", "short_text", "open_qa"),
            "a = ' ' + _norm(answer, True) + ' '\n"
            "    return 1.0 if any(_norm(r, True) and ' ' + _norm(r, True) + ' ' in a for r in refs) else 0.0",
        ),
        MatchBlock(
            "choice",
            "The multiple-choice letter (A-E) given in the response equals the reference letter; for"
            " multiple-choice questions.",
            ("choice_letter", "multiple_choice", "letter"),
            "found = re.findall(r'(?<![A-Za-z])([A-E])(?![A-Za-z])', answer)\n"
            "    if not found:\n"
            "        return 0.0\n"
            "    return 1.0 if any(found[-1] == r.strip().strip('()').upper()[:1] for r in refs) else 0.0",
        ),
        MatchBlock(
            "token_f1",
            "Token-overlap F1 between response and reference after normalisation (SQuAD); for extractive"
            " question answering and short spans where partial overlap deserves partial credit.",
            ("span", "short_text", "sentence", "extraction"),
            "return max(_f1(answer, r) for r in refs)",
        ),
        MatchBlock(
            "bleu2",
            "BLEU-2 n-gram overlap of the response with the reference, with brevity penalty; for translation,"
            " paraphrase and summarisation with reference texts.",
            ("sentence", "paragraph", "free_text", "translation"),
            "return max(_bleu2(answer, r) for r in refs)",
        ),
        MatchBlock(
            "chrf",
            "chrF character n-gram F-score of the response against the reference; for translation,"
            " transliteration and text in morphologically rich languages.",
            ("sentence", "paragraph", "free_text", "translation", "word"),
            "return max(_chrf(answer, r) for r in refs)",
        ),
    )
}


def render_module(
    checks: list[dict[str, Any]],
    match: str | None,
    *,
    aggregate: str,
    header: str,
    answer_pattern: str | None = None,
    match_params: dict[str, Any] | None = None,
) -> str:
    """Source of a verifier module: ``checks`` (constraint dicts), an optional match block, and how to combine.

    ``aggregate``: ``mean`` (the average of all parts) or ``product`` (the match score times the fraction of
    checks that hold). A blank response scores 0.0. ``header`` becomes the module docstring (escaped).
    """
    if aggregate not in ("mean", "product"):
        raise ValueError(f"aggregate must be mean or product, got {aggregate!r}")
    if not checks and match is None:
        raise ValueError("a verifier needs at least one check or a match block")
    doc = header.replace("\\", "\\\\").replace('"""', "'''")
    parts = [f'"""{doc}\n"""', PRELUDE.strip("\n"), ""]
    for c in checks:
        if str(c.get("rule")) not in RULES:
            raise ValueError(f"no check for rule {c.get('rule')!r}")
    parts.append(embedded_source())
    # Constraints enter as a JSON string literal: data, never code.
    parts.append(f"\n_CONSTRAINTS = json.loads({json.dumps(json.dumps(list(checks), sort_keys=True))})\n")
    if match is not None:
        block = MATCH_BLOCKS[match]
        params = {**block.params, **(match_params or {})}
        for key, value in sorted(params.items()):
            parts.append(f"{key} = {_lit(value)}")
        parts.append(f"ANSWER_PATTERN = {_lit(answer_pattern)}")
        parts.append(
            f"\n\ndef _match_{block.name}(response, reference):\n"
            "    refs = _refs(reference)\n"
            "    answer = _extract(response, ANSWER_PATTERN)\n"
            "    if not refs or answer is None or not answer:\n"
            "        return 0.0\n"
            f"    {block.body}\n"
        )
    lines = [
        "\ndef reward(query, response, reference, metadata):",
        '    """Score in SCORE_RANGE; 0.0 for a blank response."""',
        "    response = str(response or '')",
        "    if not response.strip():",
        "        return 0.0",
        "    checks = [check(c, response) for c in _CONSTRAINTS]",
    ]
    if match is not None:
        lines.append(f"    matched = _match_{match}(response, reference)")
        if aggregate == "product":
            lines.append("    return matched * (sum(checks) / len(checks) if checks else 1.0)")
        else:
            lines.append("    parts = checks + [matched]")
            lines.append("    return sum(parts) / len(parts)")
    elif aggregate == "product":
        lines.append("    out = 1.0")
        lines.append("    for value in checks:")
        lines.append("        out *= value")
        lines.append("    return out")
    else:
        lines.append("    return sum(checks) / len(checks)")
    parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)
