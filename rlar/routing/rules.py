"""The routing rules: which registered tools can score a query at all, before any matching.

These follow from what a tool reads and what the query carries, not from data:

- :func:`usable_candidates` (deployment): with ``require_ready``, tools that would only abstain here (a judge
  without an endpoint, a reward model without a checkpoint) are not offered to any backend.
- :func:`needs_reference`: ``text`` (compares with a reference answer), ``tests`` (runs code tests),
  ``instructions`` (IFEval's instruction ids) or ``none`` (reference-free or reference-optional), as
  :attr:`rlar.tools.base.ToolSpec.reference_need` says; :func:`reads_reference_format`: the tool reads one
  particular reference format (tests, instructions) — when the reference is in it, that tool is the one.
- :func:`eligibility`: why a tool cannot score a query ('' if it can): a tool needing a text reference when
  the query has none, code tests, or a structured reference (fields no string matcher reads), or a matcher
  that strips punctuation when the reference is only punctuation (it would equal anything); a test runner
  without tests; an instruction checker without instructions; a math-equivalence tool without a numeric or
  mathematical reference; ``format_rules`` with no rule configured and none in the record; a synthesised
  tool made for another kind of query.
- :func:`names_query`: a registered tool (not a built-in) that names the query's task or declared task type
  among its task types was registered for that task.
- :func:`covers`: for a reference-free query with stated constraints, whether a tool checks exactly those: one
  synthesised for this query's signature or constraint set; ``ifeval`` when the record carries IFEval's
  ``instruction_id_list`` (in its reference or, as the dataset ships its rows, in its metadata); or a built-in
  that reads the record's metadata where its rules are written (``format_rules`` reads
  ``metadata["format_rules"]``) when those rules read every constraint of the instruction
  (:func:`unread_by_record_rules`: the instruction reader, :func:`rlar.tasks.reading.read_instruction`, is
  asked which clauses it understood; a constraint the record's rules do not check, or a requirement the reader
  did not understand — a style, a tone, a form — leaves the query to a judge or a synthesised verifier).
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from rlar.routing.query import UNCOMPARABLE_KINDS, QueryFeatures, RoutingQuery
from rlar.tasks.constraints import constraints_key, from_metadata
from rlar.tasks.reading import read_instruction
from rlar.tasks.references import answer_strings
from rlar.tools.base import Origin, ToolKind, ToolSpec, resolve_tool_class

__all__ = [
    "configured",
    "covers",
    "eligibility",
    "instructions_of",
    "needs_reference",
    "reads_metadata",
    "reads_reference_format",
    "tool_ready",
    "unread_by_record_rules",
    "usable_candidates",
]

SPECIALISED_REFERENCES = frozenset({"tests", "instructions"})
READS_KINDS: dict[str, frozenset[str]] = {
    "set_f1": frozenset({"span_object", "item_list"}),
    "sequence_match": frozenset({"tag_sequence", "grid"}),
    "quantity_match": frozenset({"quantity"}),
}
"""Built-ins that read one kind of reference (:data:`rlar.routing.query.REFERENCE_KINDS`), and which."""
READER_KINDS = frozenset({"span_object", "tag_sequence", "grid", "quantity"})
"""Kinds whose reader, when eligible, is the tool made to score them (as code tests for the test runner)."""
EXACT_KINDS = frozenset({"index", "transformation"})
"""Kinds with one exact answer a string match checks: partial-credit metrics and models are not right."""
_NOT_MATH = {
    "index": "an option index or digit label is not a value to compare mathematically",
    "tag_sequence": "a tag sequence is not a mathematical answer",
    "grid": "a grid or digit string is compared cell by cell, not as one number",
    "quantity": "a quantity with a unit needs a unit-aware comparison (math equivalence drops the unit)",
}
MATH_FORMATS = frozenset({"number", "latex", "boxed", "expression", "fraction"})
_FORMAT_RULE_PARAMS = (
    "required_patterns",
    "forbidden_patterns",
    "forbidden_phrases",
    "min_words",
    "max_words",
    "min_chars",
    "max_chars",
)


def _has_alphanumerics(reference: object) -> bool:
    answers = answer_strings(reference)
    return answers is None or any(any(ch.isalnum() for ch in a) for a in answers)


def needs_reference(spec: ToolSpec) -> str:
    """``text`` | ``tests`` | ``instructions`` | ``none``: :attr:`rlar.tools.base.ToolSpec.reference_need`."""
    return spec.reference_need


def reads_reference_format(spec: ToolSpec, f: QueryFeatures | None = None) -> bool:
    """The tool reads one particular reference format (code tests, IFEval instructions; with ``f``: span
    objects, tag sequences, grids, quantities — :data:`READER_KINDS`): when a query's reference is in it,
    that tool is the one made to score it."""
    if needs_reference(spec) in SPECIALISED_REFERENCES:
        return True
    return f is not None and f.reference_kind in READER_KINDS & READS_KINDS.get(spec.impl_name, frozenset())


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


@functools.lru_cache(maxsize=256)
def _class_metadata_keys(impl: str) -> tuple[str, ...]:
    try:
        cls = resolve_tool_class(ToolSpec(name="probe", kind=ToolKind.RULE, description="", impl=impl))
    except (ImportError, AttributeError, TypeError, ValueError):
        return ()
    return tuple(cls.metadata_keys)


def reads_metadata(spec: ToolSpec) -> tuple[str, ...]:
    """The record metadata keys the tool's implementation reads (its class's ``metadata_keys``)."""
    return _class_metadata_keys(spec.impl_name)


def configured(spec: ToolSpec, f: QueryFeatures) -> tuple[bool, str]:
    """Whether the tool is configured to check anything for this record (format rules need a rule, in the
    spec's params or the record's metadata)."""
    if spec.impl_name == "format_rules" and not any(spec.params.get(k) for k in _FORMAT_RULE_PARAMS):
        if not set(reads_metadata(spec)) & set(f.metadata_keys):
            return False, "no format rule configured, none in the record"
    return True, ""


def instructions_of(q: RoutingQuery) -> dict[str, Any] | None:
    """IFEval's ``{instruction_id_list, kwargs}`` of the record: its reference as the project's loader gives it,
    or its metadata as the dataset ships its rows (``key``, ``prompt``, ``instruction_id_list``, ``kwargs``)."""
    for holder in (q.reference, q.metadata):
        if isinstance(holder, Mapping) and isinstance(holder.get("instruction_id_list"), list):
            if holder["instruction_id_list"]:
                return {"instruction_id_list": holder["instruction_id_list"], "kwargs": holder.get("kwargs")}
    return None


# A record rule checks the constraints of its own family and those of these others (json_keys: a JSON object).
_RULE_FAMILY = {"json_keys": frozenset({"json", "json_keys"}), "no_commas": frozenset({"commas"})}


def _words_of(value: Any) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z]+|\d+", json.dumps(value, default=str))}


def unread_by_record_rules(q: RoutingQuery) -> list[str]:
    """What the record's own rules (``metadata["format_rules"]``) leave unchecked in the instruction, as the
    instruction reader reads it: constraints of a kind no record rule checks, and requirement words the reader
    did not understand that no record rule names (a tone, a style, a form). The task's content (what to write
    about) is no format constraint and is not listed. ``[]``: the record's rules read every constraint."""

    rules = from_metadata(q.metadata)
    checked = {fam for r in rules for fam in _RULE_FAMILY.get(str(r["rule"]), frozenset({str(r["rule"])}))}
    spoken = _words_of(rules)
    reading = read_instruction("\n".join(x for x in (q.description, q.query) if x.strip()))
    out: list[str] = []
    for c in reading.constraints:
        if str(c.get("rule")) not in checked:
            out.append(f"constraint {c.get('rule')} is not among the record's rules")
    for cl in reading.clauses:
        for item in cl.unread:
            if item.startswith("content:"):
                continue
            words = set(re.findall(r"[a-z]+|\d+", item.split(":", 1)[-1].lower())) - {"not", "understood"}
            if words - spoken:
                out.append(f"{cl.text!r}: {item}")
    return out


def _made_for(spec: ToolSpec) -> bool:
    return bool(spec.params.get("signature") or spec.params.get("constraints"))


def covers(spec: ToolSpec, q: RoutingQuery, f: QueryFeatures) -> bool:
    """The tool checks exactly this reference-free query's constraints (see the module docstring)."""
    if _made_for(spec):
        return spec.params.get("signature") == q.signature() or (
            bool(spec.params.get("constraints"))
            and constraints_key(spec.params["constraints"]) == constraints_key(f.constraints)
        )
    if needs_reference(spec) == "instructions":
        return instructions_of(q) is not None
    read = set(reads_metadata(spec)) & set(f.metadata_keys)
    if not read:
        return False
    return "format_rules" not in read or not unread_by_record_rules(q)


def names_query(spec: ToolSpec, q: RoutingQuery) -> bool:
    """A registered tool (not a built-in) whose task types name the query's task or its declared task type:
    the user bound it to this task (built-ins' task types are a vocabulary, not a binding)."""
    if spec.provenance.get("origin", Origin.BUILT_IN) == Origin.BUILT_IN:
        return False
    types = set(spec.task_types)
    return bool(q.task and q.task in types) or bool(q.task_type and q.task_type in types)


def eligibility(spec: ToolSpec, q: RoutingQuery, f: QueryFeatures) -> str:
    """'' if ``spec`` can score ``q``, else why not (see the module docstring)."""
    if _made_for(spec) and not covers(spec, q, f):
        return "synthesised for another kind of query"
    need, shape, kind = needs_reference(spec), f.reference_shape, f.reference_kind
    reads = READS_KINDS.get(spec.impl_name)
    if reads is not None and kind not in reads:
        return f"reads only {', '.join(sorted(reads))} references"
    if kind == "target" and need != "none":
        return "the reference is only the target the answer must reach: the bare target would score"
    if kind in UNCOMPARABLE_KINDS and need != "none":
        return UNCOMPARABLE_KINDS[kind]
    if kind in _NOT_MATH and spec.impl_name == "math_verify":
        return _NOT_MATH[kind]
    if kind == "quantity" and need == "text" and reads is None:
        return "a quantity with a unit needs a unit-aware comparison, not a string or text metric"
    if kind in EXACT_KINDS and (
        spec.impl_name in ("chrf", "bleu2", "embedding_similarity", "contains_match")
        or spec.kind in (ToolKind.JUDGE, ToolKind.MODEL)
    ):
        return "the reference is one exact answer: partial credit or a model's opinion is not a right reward"
    if kind == "form" and spec.kind == ToolKind.MODEL:
        return "a reward model scores preference; it cannot check a stated form (rhyme scheme, meter)"
    if reads is not None and kind in reads:
        ok, why = configured(spec, f)
        return "" if ok else why
    if need == "text":
        if shape == "none":
            return "needs a comparable reference; the query has none"
        if shape == "code_tests":
            return "the reference is code tests"
        if shape == "structured":
            return "the reference is structured (fields), not an answer text"
        if (
            set(spec.answer_formats)
            and set(spec.answer_formats) <= MATH_FORMATS
            and shape not in ("number", "math")
        ):
            return "needs a numeric or mathematical reference"
        if spec.params.get("strip_punctuation") and not _has_alphanumerics(q.reference):
            return "normalising would erase the reference (it has no letters or digits)"
    if need == "tests" and shape != "code_tests":
        return "needs code tests as the reference"
    if need == "instructions" and instructions_of(q) is None:
        return "needs IFEval instructions (instruction_id_list) in the reference or the metadata"
    ok, why = configured(spec, f)
    return "" if ok else why
