"""Probe cases for validating a candidate verifier: good and bad responses, labelled by where they come from.

Probes are made by our code or the data, never by the candidate's author. Each probe says its ``source``:

- ``dataset``: what the task's data says. Reference-based tasks: good = the reference itself (and any good
  response an example supplies); bad = a blank response, "I don't know.", another example's reference, and
  corruptions of the reference by its shape (a different number; for text the first half of the words, the
  words reversed, the characters reversed). Examples may also carry labelled responses (``response`` = good,
  ``responses`` = ``[{"text", "ok"}]``); a blank response is bad for every task.
- ``parse``: built from *our reading* of the instruction (:mod:`rlar.synthesis.builder`): a response meant to
  satisfy every constraint with margins, and per constraint one that breaks it clearly. These test that the
  verifier executes and composes its checks as read; they cannot show the reading was right, so they never
  count as independent evidence.
- ``second_route`` / ``agent``: written from the task description by another route
  (:mod:`rlar.synthesis.second_route`), passed in as ``independent``.
- ``user``: the task's labelled examples from the run config (``[[tasks]] examples``: ``{response, ok}``),
  passed in as ``labelled``. They are independent, and :func:`rlar.synthesis.validate.validate` requires the
  verifier to agree with every one of them (top of the range exactly when ``ok``).

Every ``parse`` probe is checked with :func:`rlar.constraints.checks.holds` (good ones hold every constraint,
bad ones break their target) and dropped otherwise; a task whose good probe cannot be built reports it.
:class:`ProbeSet` keeps them per group (one group per example, at most ``max_examples``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rlar.constraints.checks import holds
from rlar.constraints.vocabulary import canonical, from_metadata
from rlar.synthesis.builder import build, violations

__all__ = ["INDEPENDENT", "Probe", "ProbeSet", "holds", "make_probes"]

INDEPENDENT = ("dataset", "second_route", "agent", "user")


@dataclass(slots=True)
class Probe:
    """One probe case. ``group`` ties probes of the same query/reference; ``why`` says how it was built."""

    query: str
    response: str
    reference: Any
    metadata: dict[str, Any]
    label: str  # good | bad
    why: str
    group: int
    source: str = "parse"

    def case(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "response": self.response,
            "reference": self.reference,
            "metadata": self.metadata,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.case(),
            "label": self.label,
            "why": self.why,
            "group": self.group,
            "source": self.source,
        }


@dataclass(slots=True)
class ProbeSet:
    probes: list[Probe] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def good(self) -> list[Probe]:
        return [p for p in self.probes if p.label == "good"]

    @property
    def bad(self) -> list[Probe]:
        return [p for p in self.probes if p.label == "bad"]

    @staticmethod
    def _usable(probes: Sequence[Probe]) -> bool:
        groups = {p.group for p in probes}
        return any(
            any(p.label == "good" for p in probes if p.group == g)
            and any(p.label == "bad" for p in probes if p.group == g)
            for g in groups
        )

    @property
    def usable(self) -> bool:
        """At least one group has both a good and a bad probe."""
        return self._usable(self.probes)

    @property
    def independent(self) -> list[Probe]:
        """Probes not built from our own reading of the instruction."""
        return [p for p in self.probes if p.source in INDEPENDENT]

    @property
    def independent_usable(self) -> bool:
        return self._usable(self.independent)

    def sources(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for p in self.probes:
            row = out.setdefault(p.source, {"good": 0, "bad": 0})
            row[p.label] += 1
        return out


# -- reference corruptions ------------------------------------------------------------------------------------
_NUM = re.compile(r"-?\d+(?:\.\d+)?")


def _ref_text(reference: Any) -> str | None:
    if reference is None:
        return None
    if isinstance(reference, Mapping):
        for key in ("answers", "answer"):
            if key in reference:
                return _ref_text(reference[key])
        return None
    if isinstance(reference, list | tuple):
        return _ref_text(reference[0]) if reference else None
    text = str(reference)
    if "####" in text:
        text = text.rsplit("####", 1)[1]
    return text.strip() or None


def _corruptions(ref: str, others: list[str]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = [("blank", ""), ("refusal", "I don't know.")]
    numbers = _NUM.findall(ref)
    if numbers and len(ref.split()) <= 3:
        value = float(numbers[-1])
        wrong = value + 1 if value == int(value) else value * 1.5 + 1
        out.append(
            (
                "wrong number",
                ref.replace(numbers[-1], f"{int(wrong)}" if wrong == int(wrong) else f"{wrong:g}"),
            )
        )
        out.append(("another wrong number", ref.replace(numbers[-1], f"{int(value * 3 + 7)}")))
    else:
        words = ref.split()
        if len(words) >= 4:
            out.append(("first half only", " ".join(words[: len(words) // 2])))
            out.append(("words reversed", " ".join(reversed(words))))
        elif len(ref) >= 3 and ref[::-1] != ref:
            out.append(("characters reversed", ref[::-1]))
    for other in others:
        if other.strip().lower() != ref.strip().lower():
            out.append(("another example's reference", other))
            break
    return out


def _labelled(ex: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(response, label, why) pairs an example carries (``response`` is good; ``responses`` are labelled)."""
    out = []
    if isinstance(ex.get("response"), str) and ex["response"].strip():
        out.append((ex["response"], "good", "the example's good response"))
    for r in ex.get("responses") or []:
        if isinstance(r, Mapping):
            text = r.get("text", r.get("response"))
            ok = r.get("ok", r.get("label") == "good")
            if isinstance(text, str):
                out.append(
                    (text, "good" if ok else "bad", f"labelled in the data: {str(r.get('why', ''))[:80]}")
                )
    return out


def make_probes(
    examples: Sequence[Mapping[str, Any]],
    constraints: Sequence[Mapping[str, Any]],
    *,
    description: str = "",
    reference_based: bool,
    max_examples: int = 4,
    independent: Sequence[Mapping[str, Any]] = (),
    labelled: Sequence[Mapping[str, Any]] = (),
) -> ProbeSet:
    """Probes for a task (module docstring). ``examples``: ``{query, reference, metadata, response?,
    responses?}``; ``independent``: probe dicts ``{query?, response, label, why, source}`` from another route
    (grouped with the first example); ``labelled``: the user's examples ``{response, ok, query?, reference?,
    why?}`` (source ``user``, grouped with the first example)."""
    chosen = list(examples)[:max_examples] or [{"query": description, "reference": None, "metadata": {}}]
    refs = [r for r in (_ref_text(e.get("reference")) for e in chosen) if r]
    out = ProbeSet()
    for g, ex in enumerate(chosen):
        query = str(ex.get("query") or description)
        reference = ex.get("reference")
        meta = dict(ex.get("metadata") or {})
        for text, label, why in _labelled(ex):
            out.probes.append(Probe(query, text, reference, meta, label, why, g, "dataset"))
        if reference_based:
            ref = _ref_text(reference)
            if ref is None:
                out.problems.append(f"example {g}: no usable reference")
                continue
            out.probes.append(Probe(query, ref, reference, meta, "good", "the reference", g, "dataset"))
            for why, text in _corruptions(ref, [r for r in refs if r != ref]):
                out.probes.append(Probe(query, text, reference, meta, "bad", why, g, "dataset"))
            continue
        out.probes.append(Probe(query, "", reference, meta, "bad", "blank", g, "dataset"))
        cons = canonical([*constraints, *from_metadata(meta)])
        if not cons:
            out.problems.append(f"example {g}: no reference and no checkable constraint")
            continue
        try:
            good = build(cons, query)
            bad = violations(cons, query)
        except Exception as exc:  # the builder is ours, but an instruction must never crash synthesis
            out.problems.append(f"example {g}: the response builder failed: {type(exc).__name__}: {exc}")
            continue
        broken = [c["rule"] for c in cons if not holds(c, good)]
        if broken:
            out.problems.append(f"example {g}: could not build a response satisfying {broken} together")
        else:
            out.probes.append(
                Probe(query, good, reference, meta, "good", "built to satisfy every constraint", g)
            )
        for why, text in bad:
            target = why.split(":")[0]
            hit = [c for c in cons if target == str(c["rule"]) + (f"/{c['per']}" if c.get("per") else "")]
            if hit and not all(holds(c, text) for c in hit):
                out.probes.append(Probe(query, text, reference, meta, "bad", why, g))
    first = chosen[0]
    for p in independent:
        src = str(p.get("source", "second_route"))
        out.probes.append(
            Probe(
                str(p.get("query") or first.get("query") or description),
                str(p["response"]),
                first.get("reference"),
                dict(first.get("metadata") or {}),
                str(p["label"]),
                str(p.get("why", "")),
                0,
                src,
            )
        )
    for n, ex in enumerate(labelled):
        text = ex.get("response", ex.get("text"))
        if not isinstance(text, str):
            continue
        why = str(ex.get("why") or f"labelled example {n + 1}")[:120]
        out.probes.append(
            Probe(
                str(ex.get("query") or first.get("query") or description),
                text,
                ex.get("reference", first.get("reference")),
                dict(first.get("metadata") or {}),
                "good" if ex.get("ok") else "bad",
                f"user example {n + 1}: {why}",
                0,
                "user",
            )
        )
    return out
