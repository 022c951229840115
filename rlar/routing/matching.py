"""The offline router: which registered tools fit a kind of query, by rules and embedding similarity.

No language model is involved. The method, in order:

1. Read the query. Reference shape (:func:`rlar.synthesis.compose.reference_shape`: none, code tests,
   choice letter, number, short text, text) and checkable constraints (read from the description and the
   query, and the record's ``format_rules``; :mod:`rlar.tasks.constraints`).
2. Eligibility (hard rules). A tool that needs a reference is out when there is none; the code-test tool needs
   test cases as the reference and nothing else does; a tool whose answer formats are all mathematical needs a
   math-like reference; a synthesised tool is eligible only for its own signature or for exactly its
   constraint set; with ``require_ready``, tools that would only abstain here are out (a judge without an
   endpoint, a reward model without a checkpoint); format rules with no rule configured are always out.
3. Constraint coverage. A task with no reference whose description states checkable constraints needs a tool
   that checks exactly those (a synthesised tool made for its signature or its constraint set: chosen at once);
   if none is eligible, no tool fits (so a verifier gets written) — a judge is not accepted as a checker of
   countable constraints.
4. Score each eligible tool: ``0.5 * cos(query text, tool text) + 0.25 * type match + 0.15 * answer-format
   match + 0.3 * reference-shape match``. The cosine is between all-MiniLM-L6-v2 embeddings of a text built from
   the task fields, description, query and reference, and of the tool's description, task types and answer
   formats. Type match is 1 for the task type (or domain) among the tool's task types, 0.5 for a shared word;
   format match is 1 for a shared word with a tool's answer format and 0.3 for a tool that takes ``any``;
   shape match is 1 when the tool declares an answer format suited to the reference's shape. The weights were
   set by hand before the labelled set was scored, not fitted to it.
5. Choose the best; a second metric tool joins when within ``combine_margin`` (weights proportional to score).
   Below ``min_score`` nothing fits. Confidence is a logistic of the margin over the runner-up (0.5 at a tie).

``mode`` selects ablations for the benchmark: ``full`` (all of the above), ``semantic`` (cosine alone over
every candidate, no rules) and ``rules`` (steps 1-5 without the cosine term).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rlar.routing.query import RoutingQuery
from rlar.tasks.constraints import canonical, constraints_key, extract_constraints, from_metadata
from rlar.tasks.references import reference_shape
from rlar.tools.base import ToolKind, ToolSpec

__all__ = ["Match", "OfflineRouter", "needs_reference", "tool_ready", "usable_candidates"]

Embed = Callable[[list[str]], list[list[float]]]

W_SEM, W_TYPE, W_FMT, W_SHAPE = 0.5, 0.25, 0.15, 0.3

_MATH_FORMATS = {"number", "latex", "boxed", "expression", "fraction"}
_SHAPE_FORMATS: dict[str, set[str]] = {
    "number": {"number", "expression", "fraction", "latex", "boxed"},
    "choice": {"choice_letter", "label"},
    "short_text": {"short_text", "label", "word"},
    "text": {"sentence", "paragraph", "free_text"},
    "code_tests": {"python_code", "code_block", "function", "program"},
    "none": {"any", "free_text", "paragraph"},
    "structured": set(),
}
_FORMAT_RULE_PARAMS = ("required_patterns", "forbidden_patterns", "forbidden_phrases", "min_words", "max_words",
                       "min_chars", "max_chars")  # fmt: skip


def needs_reference(spec: ToolSpec) -> str:
    """``text`` | ``tests`` | ``instructions`` | ``none``: :attr:`rlar.tools.base.ToolSpec.reference_need`."""
    return spec.reference_need


def tool_ready(spec: ToolSpec) -> tuple[bool, str]:
    """Whether the tool can give scores in this deployment (else it would only abstain), and why not."""
    impl = spec.impl_name
    if impl == "llm_judge":
        env = spec.params.get("api_key_env") or "ANTHROPIC_API_KEY"
        if not (spec.params.get("base_url") or os.environ.get("ANTHROPIC_BASE_URL") or os.environ.get(env)):
            return False, "no judge endpoint configured"
    if impl == "reward_model" and not spec.params.get("path"):
        return False, "no reward-model checkpoint configured"
    return True, ""


def usable_candidates(
    specs: Sequence[ToolSpec], *, require_ready: bool
) -> tuple[list[ToolSpec], dict[str, str]]:
    """The tools to offer the agent, and why the others are left out: with ``require_ready``, tools that would
    only abstain in this deployment (:func:`tool_ready`) are left out, for every backend alike."""
    if not require_ready:
        return list(specs), {}
    kept: list[ToolSpec] = []
    dropped: dict[str, str] = {}
    for s in specs:
        ready, why = tool_ready(s)
        if ready:
            kept.append(s)
        else:
            dropped[s.name] = why
    return kept, dropped


def configured(spec: ToolSpec) -> tuple[bool, str]:
    """Whether the spec itself is configured to check anything (format rules with no rule check nothing)."""
    if spec.impl_name == "format_rules" and not any(spec.params.get(k) for k in _FORMAT_RULE_PARAMS):
        return False, "no format rule configured"
    return True, ""


def _tokens(text: str) -> set[str]:
    return {t for t in re.split(r"[^a-z0-9]+", text.lower()) if t}


def _math_like(reference: Any) -> bool:
    text = str(reference if not isinstance(reference, list | tuple) else (reference[0] if reference else ""))
    if "####" in text:
        text = text.rsplit("####", 1)[1]
    text = text.strip()
    return bool(text) and len(text.split()) <= 4 and bool(re.search(r"\d|\\[a-z]+|[=^/]", text))


def query_text_for_matching(q: RoutingQuery) -> str:
    ref = q.reference if isinstance(q.reference, str) else ("" if q.reference is None else str(q.reference))
    return (
        f"Task type: {q.task_type or '-'}; domain: {q.domain or '-'}; answer format: {q.answer_format or '-'}. "
        f"{q.description} Query: {q.query[:300]} Reference: {ref[:150] or 'none'}"
    )


def tool_text(spec: ToolSpec) -> str:
    return f"{spec.description} Task types: {', '.join(spec.task_types)}. Answer formats: {', '.join(spec.answer_formats)}."


@dataclass(slots=True)
class Match:
    """The offline router's answer: the tool-call input of ``choose_reward_tools`` plus diagnostics."""

    tools: list[dict[str, Any]]
    none_fit: bool
    confidence: float
    reason: str
    constraints: list[dict[str, Any]] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)
    excluded: dict[str, str] = field(default_factory=dict)

    def tool_input(self) -> dict[str, Any]:
        return {
            "tools": [{"name": t["name"], "weight": t["weight"]} for t in self.tools],
            "none_fit": self.none_fit,
            "confidence": self.confidence,
            "reason": self.reason,
            "constraints": self.constraints,
            "scores": self.scores,
            "excluded": self.excluded,
        }


class OfflineRouter:
    """See the module docstring. ``embed`` maps texts to L2-normalised vectors (None: no cosine term)."""

    def __init__(
        self,
        embed: Embed | None,
        *,
        min_score: float = 0.30,
        combine_margin: float = 0.03,
        require_ready: bool = True,
        mode: str = "full",
    ) -> None:
        if mode not in ("full", "semantic", "rules"):
            raise ValueError(f"mode must be full, semantic or rules, got {mode!r}")
        if mode != "rules" and embed is None:
            raise ValueError(f"mode {mode!r} needs an embedding function")
        self.embed = embed
        self.min_score = min_score
        self.combine_margin = combine_margin
        self.require_ready = require_ready
        self.mode = mode
        self._tool_vecs: dict[str, list[float]] = {}

    def _vectors(self, q: RoutingQuery, specs: Sequence[ToolSpec]) -> tuple[list[float], list[list[float]]]:
        assert self.embed is not None
        missing = [s for s in specs if (s.content_hash or s.name) + tool_text(s) not in self._tool_vecs]
        texts = [query_text_for_matching(q), *(tool_text(s) for s in missing)]
        vecs = self.embed(texts)
        for s, v in zip(missing, vecs[1:], strict=True):
            self._tool_vecs[(s.content_hash or s.name) + tool_text(s)] = v
        return vecs[0], [self._tool_vecs[(s.content_hash or s.name) + tool_text(s)] for s in specs]

    def constraints_of(self, q: RoutingQuery) -> list[dict[str, Any]]:
        return canonical([*extract_constraints(f"{q.description}\n{q.query}"), *from_metadata(q.metadata)])

    def eligibility(self, q: RoutingQuery, spec: ToolSpec, shape: str, ckey: str) -> str:
        """'' if ``spec`` may score ``q``, else why not."""
        need = needs_reference(spec)
        if spec.params.get("signature") or spec.params.get("constraints"):
            own = spec.params.get("signature") == q.signature()
            same = (
                bool(spec.params.get("constraints")) and constraints_key(spec.params["constraints"]) == ckey
            )
            if not (own or same):
                return "synthesised for another kind of query"
        if need == "text" and shape in ("none", "code_tests"):
            return "needs a comparable reference" if shape == "none" else "the reference is code tests"
        if need == "tests" and shape != "code_tests":
            return "needs code tests as the reference"
        if need == "instructions" and not (
            isinstance(q.reference, dict) and "instruction_id_list" in q.reference
        ):
            return "needs IFEval instructions as the reference"
        if need == "text" and set(spec.answer_formats) and set(spec.answer_formats) <= _MATH_FORMATS:
            if not _math_like(q.reference):
                return "needs a mathematical reference"
        ok, why = configured(spec)
        if not ok:
            return why
        if self.require_ready:
            ready, why = tool_ready(spec)
            if not ready:
                return why
        return ""

    def _rule_terms(self, q: RoutingQuery, spec: ToolSpec, shape: str) -> tuple[float, float, float]:
        types = {t.lower() for t in spec.task_types}
        type_tokens = set().union(*(_tokens(t) for t in types)) if types else set()
        qt = (q.task_type or "").lower()
        dom = (q.domain or "").lower()
        if (qt and qt in types) or (dom and dom in types):
            t_match = 1.0
        elif (_tokens(qt) | _tokens(dom)) & type_tokens - {"open", "short", "unit", "tests"}:
            t_match = 0.5
        else:
            t_match = 0.0
        fmts = {f.lower() for f in spec.answer_formats}
        fmt_tokens = set().union(*(_tokens(f) for f in fmts)) if fmts else set()
        qf = _tokens(q.answer_format or "")
        f_match = 1.0 if qf and qf & fmt_tokens - {"text"} else (0.3 if "any" in fmts else 0.0)
        if qf == {"text"} and fmts & {"short_text", "free_text"}:
            f_match = max(f_match, 0.5)
        s_match = 1.0 if fmts & _SHAPE_FORMATS.get(shape, set()) else 0.0
        return t_match, f_match, s_match

    def decide(self, q: RoutingQuery, candidates: Sequence[ToolSpec]) -> Match:
        specs = [s for s in candidates]
        if not specs:
            return Match([], True, 1.0, "no tools are registered")
        shape = reference_shape(q.reference)
        cons = self.constraints_of(q)
        ckey = constraints_key(cons)
        if self.mode == "semantic":
            qv, tvs = self._vectors(q, specs)
            cos = {
                s.name: sum(a * b for a, b in zip(qv, tv, strict=True))
                for s, tv in zip(specs, tvs, strict=True)
            }
            best = max(specs, key=lambda s: cos[s.name])
            return Match(
                [{"name": best.name, "weight": 1.0}], False, 0.5, "highest cosine",
                scores={k: round(v, 4) for k, v in cos.items()},
            )  # fmt: skip
        excluded: dict[str, str] = {}
        eligible: list[ToolSpec] = []
        for s in specs:
            why = self.eligibility(q, s, shape, ckey)
            if why:
                excluded[s.name] = why
            else:
                eligible.append(s)
        if shape == "none" and cons:
            covering = [s for s in eligible if s.params.get("constraints") or s.params.get("signature")]
            if covering:
                # Made for exactly this signature or constraint set: no threshold, the newest wins ties.
                best = max(covering, key=lambda s: (s.params.get("signature") == q.signature(), s.version))
                return Match(
                    [{"name": best.name, "weight": 1.0}], False, 0.95,
                    f"{best.name} v{best.version} checks exactly these constraints "
                    f"({', '.join(c['rule'] for c in cons)})",
                    constraints=cons, excluded=excluded,
                )  # fmt: skip
            rules = ", ".join(c["rule"] for c in cons)
            return Match(
                [], True, 0.9,
                f"no reference and checkable constraints ({rules}) that no registered tool checks",
                constraints=cons, excluded=excluded,
            )  # fmt: skip
        if not eligible:
            why = "no eligible tool" + (f" (reference shape {shape})" if shape else "")
            return Match([], True, 0.9, why, constraints=cons, excluded=excluded)
        sims = [0.0] * len(eligible)
        if self.mode == "full":
            qv, tvs = self._vectors(q, eligible)
            sims = [sum(a * b for a, b in zip(qv, tv, strict=True)) for tv in tvs]
        scored: list[tuple[float, ToolSpec]] = []
        for s, sim in zip(eligible, sims, strict=True):
            t, f, sh = self._rule_terms(q, s, shape)
            scored.append((W_SEM * sim + W_TYPE * t + W_FMT * f + W_SHAPE * sh, s))
        scored.sort(key=lambda x: (-x[0], x[1].name))
        scores = {s.name: round(v, 4) for v, s in scored}
        best_score, best = scored[0]
        if best_score < self.min_score:
            return Match(
                [], True, 0.6, f"best eligible tool {best.name} scores {best_score:.3f} < {self.min_score}",
                constraints=cons, scores=scores, excluded=excluded,
            )  # fmt: skip
        chosen = [(best_score, best)]
        if len(scored) > 1:
            s2, second = scored[1]
            if (
                best.kind == ToolKind.METRIC
                and second.kind == ToolKind.METRIC
                and best_score - s2 <= self.combine_margin
            ):
                chosen.append((s2, second))
        runner_up = scored[len(chosen)][0] if len(scored) > len(chosen) else best_score - 0.3
        confidence = 1.0 / (1.0 + math.exp(-(best_score - runner_up) / 0.05))
        total = sum(v for v, _ in chosen)
        tools = [{"name": s.name, "weight": round(v / total, 4)} for v, s in chosen]
        reason = f"best match {best.name} ({best_score:.3f}; reference shape {shape})"
        if len(chosen) > 1:
            reason += f", combined with {chosen[1][1].name} ({chosen[1][0]:.3f})"
        return Match(
            tools, False, round(confidence, 4), reason, constraints=cons, scores=scores, excluded=excluded
        )


def coerce_specs(items: Sequence[Mapping[str, Any] | ToolSpec]) -> list[ToolSpec]:
    return [s if isinstance(s, ToolSpec) else ToolSpec.from_dict(s) for s in items]
