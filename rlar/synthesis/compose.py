"""The synthesis task, a draft verifier, and offline composition of drafts from building blocks.

``SynthesisTask`` is what the code agent is asked to solve (built from a ``ToolRequest``): the task's
description, domain, type and answer format, examples ``{query, reference, metadata}``, and the checkable
constraints. ``Draft`` is a candidate: source, declared range, whether it needs a reference, and how it was
made.

``compose(task, attempt, feedback, embed)`` is the offline code agent. It chooses blocks by the same matching
the offline router uses — embedding similarity of the task text to each block's description plus rules on the
reference's shape and the answer format — and renders them with :func:`rlar.synthesis.blocks.render_module`:

- constraints (given, or read from the description and the examples' ``format_rules``) each become a check
  block;
- when the examples carry references (other than code tests), the best-ranked match block compares the
  response with the reference;
- parts combine by ``mean`` (constraint checks only) or ``product`` (match × fraction of checks that hold).

Retries use the feedback: after a separation failure the next-ranked match block is tried, and a constraint-only
verifier switches from ``mean`` to ``product``; other failures (which composed code should not produce) retry
with the same plan. It cannot write a verifier for a task with neither references nor constraints it can read:
it says so (``ComposeError``) instead of guessing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rlar.constraints.vocabulary import canonical, from_metadata, valid_only
from rlar.synthesis.blocks import MATCH_BLOCKS, render_module
from rlar.tasks.reading import Reading, read_instruction
from rlar.tasks.references import is_code_tests, reference_shape

__all__ = ["ComposeError", "Draft", "SynthesisTask", "compose", "rank_match_blocks"]

Embed = Callable[[list[str]], list[list[float]]]
COMPOSER_VERSION = "blocks-v1"


class ComposeError(ValueError):
    """The offline composer has nothing to build a verifier from (no reference, no readable constraint)."""


@dataclass(slots=True)
class SynthesisTask:
    description: str
    task: str = ""
    domain: str = ""
    task_type: str = ""
    answer_format: str = ""
    examples: list[dict[str, Any]] = field(default_factory=list)
    constraints: list[dict[str, Any]] = field(default_factory=list)
    signature: str = ""
    request_id: str = ""
    labelled: list[dict[str, Any]] = field(default_factory=list)
    """The user's labelled examples ``{response, ok, why?, query?}`` (``[[tasks]] examples``): independent
    probes the verifier must agree with, every one."""

    @classmethod
    def from_request(cls, req: Any) -> SynthesisTask:
        """From a ``bus.messages.ToolRequest`` (or anything with the same attributes)."""
        cons = list((req.constraints or {}).get("rules", [])) if isinstance(req.constraints, Mapping) else []
        return cls(
            description=req.description,
            task=req.task,
            domain=req.domain,
            task_type=req.task_type,
            answer_format=req.answer_format,
            examples=[dict(e) for e in req.examples],
            constraints=valid_only(cons),
            signature=req.signature,
            request_id=req.request_id,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "description": self.description,
            "task": self.task,
            "domain": self.domain,
            "task_type": self.task_type,
            "answer_format": self.answer_format,
            "examples": list(self.examples),
            "constraints": list(self.constraints),
            "signature": self.signature,
            "request_id": self.request_id,
            "labelled": list(self.labelled),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SynthesisTask:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})  # type: ignore[attr-defined]

    @property
    def reference_based(self) -> bool:
        """Examples carry comparable references (code tests are the code tool's job, not a composed one's)."""
        refs = [e.get("reference") for e in self.examples]
        return any(_has_reference(r) and not is_code_tests(r) for r in refs)

    def instruction(self) -> str:
        """The text whose every clause the verifier must check: the description and the first example's query."""
        query = str(self.examples[0].get("query") or "") if self.examples else ""
        return self.description if not query or query in self.description else f"{self.description}\n{query}"

    def reading(self) -> Reading:
        return read_instruction(self.instruction())

    def all_constraints(self) -> list[dict[str, Any]]:
        """Constraints given with the request and read from the instruction, plus the first example's
        ``format_rules``."""
        first = self.examples[0].get("metadata") if self.examples else None
        return canonical([*self.constraints, *self.reading().constraints, *from_metadata(first)])

    def coverage(self) -> dict[str, Any]:
        """Which clauses of the instruction the verifier checks. Content clauses count as covered only when a
        reference is compared (the reference says what the content should be); every other clause left unread
        is listed. ``full``: nothing unread."""
        reading = self.reading()
        unread: list[dict[str, Any]] = []
        req = 0
        for cl in reading.clauses:
            if cl.status == "context":
                continue
            req += 1
            left = [u for u in cl.unread if not (self.reference_based and u.startswith("content:"))]
            if left:
                unread.append({"clause": cl.text, "why": "; ".join(left)})
        checked = req - len(unread)
        has_checks = bool(self.all_constraints()) or self.reference_based
        return {
            "full": has_checks and not unread,
            "coverage": round(checked / req, 4) if req else (1.0 if has_checks else 0.0),
            "clauses": req,
            "checked": checked,
            "unchecked": unread,
        }


def _has_reference(ref: Any) -> bool:
    """A reference that says something: not None, not an empty or blank string, not an empty list or dict."""
    if ref is None:
        return False
    if isinstance(ref, str):
        return bool(ref.strip())
    if isinstance(ref, list | tuple | Mapping):
        return len(ref) > 0
    return True


@dataclass(slots=True)
class Draft:
    code: str
    score_range: tuple[float, float] = (0.0, 1.0)
    needs_reference: bool = False
    rationale: str = ""
    blocks: dict[str, Any] = field(default_factory=dict)

    def to_tool_input(self) -> dict[str, Any]:
        """The ``submit_reward_function`` tool input carrying this draft (the offline agent's reply)."""
        return {
            "code": self.code,
            "score_range": [self.score_range[0], self.score_range[1]],
            "needs_reference": self.needs_reference,
            "rationale": self.rationale,
            "blocks": dict(self.blocks),
        }


_SHAPE_BONUS: dict[str, dict[str, float]] = {
    "number": {"numeric": 0.6},
    "choice": {"choice": 0.6, "exact": 0.1},
    "short_text": {"normalized": 0.3, "exact": 0.2, "token_f1": 0.15, "contains": 0.1},
    "text": {"chrf": 0.25, "bleu2": 0.25, "token_f1": 0.15},
}


def _task_text(task: SynthesisTask) -> str:
    parts = [
        f"Task type: {task.task_type or 'unknown'}; domain: {task.domain or 'unknown'}; answer format:"
        f" {task.answer_format or 'unknown'}.",
        task.description,
    ]
    if task.examples:
        ex = task.examples[0]
        parts.append(f"Example query: {str(ex.get('query', ''))[:200]}")
        if ex.get("reference") is not None:
            parts.append(f"Reference: {str(ex.get('reference'))[:120]}")
    return " ".join(p for p in parts if p)


def _cos(a: Sequence[float], b: Sequence[float]) -> float:
    return float(sum(x * y for x, y in zip(a, b, strict=True)))


def rank_match_blocks(task: SynthesisTask, embed: Embed | None) -> list[tuple[str, float]]:
    """Match blocks by suitability: cosine(task text, block description) + reference-shape and format rules."""
    shapes = [reference_shape(e.get("reference")) for e in task.examples if e.get("reference") is not None]
    shape = max(set(shapes), key=shapes.count) if shapes else "none"
    names = list(MATCH_BLOCKS)
    sims = [0.0] * len(names)
    if embed is not None:
        vecs = embed([_task_text(task), *(MATCH_BLOCKS[n].description for n in names)])
        sims = [_cos(vecs[0], v) for v in vecs[1:]]
    fmt = task.answer_format.lower()
    ranked = []
    for name, sim in zip(names, sims, strict=True):
        block = MATCH_BLOCKS[name]
        score = (
            sim + _SHAPE_BONUS.get(shape, {}).get(name, 0.0) + (0.15 if fmt and fmt in block.formats else 0.0)
        )
        ranked.append((name, round(score, 6)))
    ranked.sort(key=lambda x: -x[1])
    return ranked


def compose(
    task: SynthesisTask, *, attempt: int = 0, feedback: Sequence[str] = (), embed: Embed | None = None
) -> Draft:
    """The offline agent's draft for ``task`` (see the module docstring); raises ``ComposeError``."""
    constraints = task.all_constraints()
    reference_based = task.reference_based
    if not reference_based and not constraints:
        raise ComposeError(
            "no reference in the examples and no checkable constraint in the description or the records: "
            "the building blocks cannot express this task"
        )
    if any(f.startswith(("independent", "examples")) for f in feedback):
        raise ComposeError(
            "probes from an independent route or the user's labelled examples disagree with this reading of the"
            " instruction (or there are none); the building blocks cannot read it differently: "
            + next(f for f in feedback if f.startswith(("independent", "examples")))[:300]
        )
    separation_failures = sum(1 for f in feedback if f.startswith("separates"))
    match: str | None = None
    ranking: list[tuple[str, float]] = []
    if reference_based:
        ranking = rank_match_blocks(task, embed)
        match = ranking[min(separation_failures, len(ranking) - 1)][0]
    if match is not None:
        aggregate = "product"
    else:
        aggregate = "product" if separation_failures % 2 == 1 else "mean"
    plan = ", ".join([*(c["rule"] for c in constraints), *([f"match:{match}"] if match else [])])
    header = (
        "Reward function composed by the RLAR offline synthesizer from parametrised building blocks\n"
        f"({COMPOSER_VERSION}; no language model wrote this code). Attempt {attempt + 1}.\n"
        f"Task: {task.description[:300]}\n"
        f"Blocks: {plan}. Aggregate: {aggregate}."
    )
    code = render_module(constraints, match, aggregate=aggregate, header=header)
    rationale = f"composed {plan} with {aggregate}"
    if ranking:
        rationale += "; match blocks ranked " + ", ".join(f"{n}={s:.3f}" for n, s in ranking[:4])
    if feedback:
        rationale += f"; after {len(feedback)} rejected attempt(s), last: {feedback[-1][:160]}"
    return Draft(
        code=code,
        score_range=(0.0, 1.0),
        needs_reference=match is not None,
        rationale=rationale,
        blocks={"checks": constraints, "match": match, "aggregate": aggregate, "composer": COMPOSER_VERSION},
    )
