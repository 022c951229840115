"""Hack probes: degenerate responses a reward tool must not give its maximum, built from a signature's records.

Before a tool scores a task signature the router scores these responses with it (:mod:`actors.router`); a tool
that gives any of them its maximum (the top of its declared ``score_range``) is not eligible for the
signature. They are the cheapest defence against a policy that learns to game a mis-chosen reward: each is a
response a policy can produce without solving the task. Which probes apply follows from what the task asks
and what its reference is, never from a list of datasets:

========================  =============================================================================
probe                     applies when
========================  =============================================================================
``empty``                 always (the empty response)
``echo``                  the query has text (the query echoed back, whole) — unless the reference is a
                          number, letter, label or formula that the query itself states: then it is a
                          derivation's target (``bare_target``) or there by coincidence ("0+5=" holds "5")
``bare_target``           the query asks for a derivation, an expression or a proof ("make 24 from …",
                          "write an expression", "show that", "prove", "derive") **and** the reference's
                          target — the reference when it is a bare number or word, else what follows its
                          last ``=`` — is stated in the query: the target is given, so it is not the
                          answer. A plain question whose answer is a number is never probed with it
                          (there the bare number *is* the correct answer), nor is a derivation whose
                          answer the query does not state ("show your work" asks for a style, not a proof)
``all_options``           the query lists two or more answer options (lettered or numbered lines, inline
                          ``(A) … (B) …``, an ``Options:`` list): every option, one per line
``candidates``            the reference is an answer text (a number, a choice, a label, a short text, an
                          expression): twelve guesses of its kind, the reference among them (never first
                          or last) — numbers around it, a formula with its numbers shifted, the option
                          letters, the labels, other references and the query's words for texts; a worked
                          solution counts by its final answer (after ``####``, in its last ``\\boxed{}``).
                          A policy that lists guesses must not collect the reward
``other_reference``       another record of the signature has a reference whose answers differ from this
                          one's: that reference as the response (a tool that scores it as high as the
                          right answer does not read the reference)
========================  =============================================================================

Code tests, instruction checklists (IFEval's ``{instruction_id_list, kwargs}``) and reference-free queries get no
reference-based probes (``candidates``, ``other_reference``): a test file, a list of instructions to check or a
missing reference is not a response (another record's checklist, written out, is a short text that satisfies
"answer in fewer than N words": it would refuse the one tool that reads the record). Apart from ``bare_target``
(which applies only where the target is not the answer), a probe whose text equals one of the reference's
acceptable answers (normalised: case, spacing, trailing punctuation) is dropped: the reference itself is never a
probe. Each of the first records of a signature gets its own probes; a probe refuses a tool when it gets the
maximum on most of the records it was built from (:func:`judge_probes`).

:func:`build_probes` is pure (no bus, no tools); :func:`judge_probes` reads the scores one tool gave them and
says whether the tool stays eligible (:class:`ProbeReport`). :class:`Prober` scores the probes with a tool
through a :class:`~rlar.tools.executor.ToolExecutor` — the killable worker processes and deadlines the reward
workers use — and caches the verdict per (signature, tool, version, content hash), so probes cost once per
signature. A probe call that errors or abstains is reported in the verdict (``errors``; ``unverified`` when
no probe got a score), never counted as passed silently; a tool of a kind the policy does not probe
(``kinds``: reward models by default, whose loading in the router would duplicate the model) is ``skipped``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rlar.routing.discrimination import build_discrimination_probes, final_answer, undiscriminated
from rlar.routing.query import RoutingQuery
from rlar.routing.request import RouteAnswer
from rlar.routing.rules import eligibility, instructions_of
from rlar.tasks.references import answer_strings, reference_shape
from rlar.tools.base import ToolInput, ToolKind, ToolResult, ToolSpec

if TYPE_CHECKING:
    from rlar.tools.executor import ToolExecutor

__all__ = [
    "PROBE_NAMES",
    "Probe",
    "ProbePolicy",
    "ProbeReport",
    "ProbeScore",
    "Prober",
    "asks_for_derivation",
    "build_probes",
    "judge_probes",
    "parse_options",
    "probed_answer",
]

PROBE_NAMES = ("empty", "echo", "bare_target", "all_options", "candidates", "other_reference")
N_CANDIDATES = 12
_NO_REFERENCE_PROBES = frozenset({"none", "code_tests"})
_VALUE_SHAPES = frozenset({"number", "choice", "label", "math"})

# What asks for a derivation, an expression or a proof rather than for a value (read in the query and the
# task's description). "Show your work" is not among them: it asks how to present an answer that is a value.
_DERIVATION = re.compile(
    r"""
    \b(?:make|form|reach|obtain|produce|hit)\s+(?:the\s+)?(?:number\s+|target\s+|value\s+|total\s+)?-?\d
  | \btarget\s*(?:number|value)?\s*(?:is|of|:|=)\s*-?\d
  | \b(?:write|give|find|construct|create|build|come\s+up\s+with)\s+(?:an?|the|one)\s+
        (?:(?:arithmetic|mathematical|algebraic|valid|single|correct)\s+)*(?:expression|equation|formula)
  | \b(?:expression|equation|formula)\s+(?:that|which)\s+(?:equals|evaluates\s+to|gives|yields|makes)\b
  | \bshow\s+that\b | \bprove\b | \bproof\b | \bderive\b | \bderivation\b | \bdemonstrate\s+that\b
    """,
    re.IGNORECASE | re.VERBOSE,
)
_NUMBER = re.compile(r"^[-+]?(?:\d+(?:[.,]\d+)*|\.\d+)$")
_NUM_IN = re.compile(r"(?<![\w.])(\d+)(\.\d+)?(?!\d)")
_OPTION_LINE = re.compile(r"^\s*(?:\(([A-Za-z]|\d{1,2})\)|([A-Za-z]|\d{1,2})[).:])\s+(\S.*?)\s*$")
_OPTION_INLINE = re.compile(r"\(([A-J])\)\s*(.+?)(?=\s*\([A-J]\)|\n|$)")
_OPTION_HEADER = re.compile(
    r"\b(?:options|choices|answer\s+choices|candidates)\s*:\s*(.+)", re.IGNORECASE | re.DOTALL
)


@dataclass(frozen=True, slots=True)
class Probe:
    """One degenerate response: ``name`` (one of :data:`PROBE_NAMES`), the ``response`` and ``why`` it was built."""

    name: str
    response: str
    why: str


@dataclass(frozen=True, slots=True)
class ProbeScore:
    """What one tool gave one probe: ``status`` ok | abstain | error, the ``score`` (ok only), the reason."""

    probe: str
    status: str
    score: float | None = None
    reason: str = ""
    record: int = 0
    """Which of the signature's records the probe was built from (0: the first)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "probe": self.probe,
            "status": self.status,
            "score": self.score,
            "reason": self.reason[:160],
            "record": self.record,
        }


@dataclass(slots=True)
class ProbeReport:
    """One tool's verdict for one signature. ``verdict``: ``eligible`` (every hack probe scored below the maximum
    and the discrimination probes were told apart), ``refused`` (a hack probe got the maximum: listed in
    ``maxed``; or the tool failed a discrimination probe — a right answer below the maximum or a wrong one at it:
    listed in ``undiscriminated``, their scores in ``discrimination``, see :mod:`rlar.routing.discrimination`),
    ``unverified`` (no probe got a score: every call abstained or errored — reported, the tool is not refused for
    it) or ``skipped`` (the router does not probe tools of this kind: ``reason`` says why)."""

    tool: str
    version: int
    verdict: str
    max_score: float = 1.0
    scores: list[ProbeScore] = field(default_factory=list)
    maxed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    reason: str = ""
    discrimination: list[ProbeScore] = field(default_factory=list)
    undiscriminated: list[str] = field(default_factory=list)
    vouch: dict[str, Any] | None = None
    """For a judge: its vouching on labelled pairs (:meth:`rlar.routing.judge_vouch.VouchReport.to_dict`); a
    judge that is not vouched for is ``refused`` with the agreement and its interval in ``reason``."""

    @property
    def refused(self) -> bool:
        return self.verdict == "refused"

    def summary(self) -> str:
        """``math_verify v1 refused: bare_target 1, echo 0.5 (1/3 max)`` — per probe the highest score over the
        signature's records (and how many gave the maximum when several were probed), on one line."""
        if self.verdict == "skipped":
            return f"{self.tool} v{self.version} not probed ({self.reason})"
        if self.vouch and self.refused:
            return f"{self.tool} v{self.version} refused: {self.reason}"
        parts = []
        for name, group in _by_probe(self.scores).items():
            ok = [s.score for s in group if s.status == "ok" and s.score is not None]
            text = f"{name} {max(ok):.3g}" if ok else f"{name} {group[0].status}"
            top = sum(1 for x in ok if x >= self.max_score - 1e-9)
            parts.append(text + (f" ({top}/{len(group)} max)" if len(group) > 1 and top else ""))
        failed = (
            "; cannot tell right from wrong: " + ", ".join(self.undiscriminated)
            if self.undiscriminated
            else ""
        )
        return f"{self.tool} v{self.version} {self.verdict}: {', '.join(parts) or '-'}{failed}"

    def short(self) -> str:
        """``math_verify v1 (bare_target 1)``: the tool, the probes it gave its maximum and the discrimination
        probes it failed (``right_period below 1``, ``wrong_sign 1``); a judge refused by its vouching:
        ``llm_judge v2 (judge not vouched: agreement ...)``."""
        if self.vouch and not self.maxed and not self.undiscriminated:
            return f"{self.tool} v{self.version} (judge not vouched: {self.reason})"
        parts = [f"{p} {self.max_score:g}" for p in self.maxed] + [
            f"{p} {'below ' if p.startswith('right') else ''}{self.max_score:g}" for p in self.undiscriminated
        ]
        return f"{self.tool} v{self.version} ({', '.join(parts)})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "version": self.version,
            "verdict": self.verdict,
            "max_score": self.max_score,
            "scores": [s.to_dict() for s in self.scores],
            "maxed": list(self.maxed),
            "errors": list(self.errors),
            "reason": self.reason[:300],
            "discrimination": [s.to_dict() for s in self.discrimination],
            "undiscriminated": list(self.undiscriminated),
            **({"vouch": dict(self.vouch)} if self.vouch is not None else {}),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ProbeReport:
        return cls(
            tool=str(d.get("tool", "")),
            version=int(d.get("version", 0)),
            verdict=str(d.get("verdict", "")),
            max_score=float(d.get("max_score", 1.0)),
            scores=[_score_from_dict(s) for s in d.get("scores") or []],
            maxed=[str(x) for x in d.get("maxed") or []],
            errors=[str(x) for x in d.get("errors") or []],
            reason=str(d.get("reason", "")),
            discrimination=[_score_from_dict(s) for s in d.get("discrimination") or []],
            undiscriminated=[str(x) for x in d.get("undiscriminated") or []],
            vouch=dict(d["vouch"]) if isinstance(d.get("vouch"), Mapping) else None,
        )


def _score_from_dict(s: Mapping[str, Any]) -> ProbeScore:
    return ProbeScore(
        str(s.get("probe", "")),
        str(s.get("status", "")),
        s.get("score"),
        str(s.get("reason", "")),
        int(s.get("record", 0)),
    )


def _norm(text: str) -> str:
    return " ".join(text.casefold().split()).strip(" .!?;:")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _answers(reference: Any) -> list[str]:
    """The reference's acceptable answers as texts (its serialised form when it is no answer text)."""
    answers = answer_strings(reference)
    if answers is None:
        return [] if reference is None else [_text(reference)]
    return [a for a in answers if a.strip()]


def asks_for_derivation(text: str) -> bool:
    """The text asks for a derivation, an expression or a proof (see the module docstring)."""
    return bool(_DERIVATION.search(text))


def _stated(target: str, query: str) -> bool:
    """``target`` occurs in ``query`` as a whole token (a number is not a part of a longer number)."""
    if not target:
        return False
    pattern = r"(?<![\w.])" + re.escape(target) + r"(?![\w]|\.\d)"
    return re.search(pattern, query, re.IGNORECASE) is not None


def _target(q: RoutingQuery) -> str:
    """The reference's bare target when the query states it and asks for a derivation; else ``""``."""
    if not asks_for_derivation(f"{q.description}\n{q.query}"):
        return ""
    for answer in _answers(q.reference):
        for cand in (answer.rsplit("=", 1)[-1].strip(), answer.strip()):
            cand = cand.strip(" .$")
            if cand and len(cand.split()) <= 3 and _stated(cand, q.query):
                return cand
    return ""


def parse_options(query: str) -> list[str]:
    """The answer options a query lists, each with its label as written (``"(A) Paris"``); [] below two."""
    lines = [m for m in (_OPTION_LINE.match(line) for line in query.splitlines()) if m]
    if len(lines) >= 2:
        labels = [(m.group(1) or m.group(2)) for m in lines]
        # Options count up (A, B, C or 1, 2, 3): numbered steps of a recipe mixed with prose are not options.
        if len(set(labels)) == len(labels):
            return [line.group(0).strip() for line in lines]
    inline = _OPTION_INLINE.findall(query)
    if len(inline) >= 2:
        return [f"({label}) {text.strip()}" for label, text in inline]
    m = _OPTION_HEADER.search(query)
    if m:
        body = m.group(1).strip().split("\n\n", 1)[0]
        items = [x.strip(" -*•\t") for x in re.split(r"\n|,|;|\s+/\s+|\s+or\s+", body)]
        items = [x for x in items if x and len(x) <= 200]
        if len(items) >= 2:
            return items
    return []


def _number_candidates(value: str) -> list[str]:
    x = float(value.replace(",", ""))
    integral = x.is_integer() and "." not in value
    steps = [1, 2, 3, 5, 10, -1, -2, -3, -5, -10]
    out = [x + s for s in steps] + [x * 2, x / 2 if not integral else math.floor(x / 2), 0, 1]
    return [str(int(v)) if integral and float(v).is_integer() else f"{v:g}" for v in out]


def _formula_candidates(ref: str) -> list[str]:
    """Answers of the same form as ``ref`` with other values: every number in it shifted (``120^\\circ`` ->
    ``121^\\circ``, ``3, -3`` -> ``4, -4``, ``4.0 cm`` -> ``5.0 cm``); without numbers, simple transforms of it."""
    if not _NUM_IN.search(ref):
        return [f"-{ref}", f"2{ref}", f"{ref}+1", f"{ref}-1", f"\\frac{{{ref}}}{{2}}", f"{ref}^2"]

    def shifted(k: int) -> str:
        return _NUM_IN.sub(lambda m: f"{int(m.group(1)) + k}{m.group(2) or ''}", ref)

    return [shifted(k) for k in (1, 2, 3, 5, 10, -1, -2, -3, -5, -10)]


def _candidates(
    q: RoutingQuery, shape: str, answers: Sequence[str], others: Sequence[str], options: Sequence[str]
) -> list[str]:
    # A list of guesses of the reference's own kind: for numbers and formulas, bare values (a worked
    # solution's final answer, never the solution with its "####" or \\boxed that a checker would read).
    ref = final_answer(answers[0]) if shape in ("number", "math") else answers[0].strip()
    if shape == "number" and _NUMBER.match(ref):
        pool = _number_candidates(ref)
    elif shape in ("number", "math"):
        pool = _formula_candidates(ref)
        others = [final_answer(o) for o in others]
    elif shape not in ("choice", "label") and _NUM_IN.search(ref):
        pool = _formula_candidates(ref)  # a quantity, a date, a code: the same text with other numbers
    elif shape == "choice":
        letters = [re.sub(r"[^A-Za-z0-9]", "", o.split()[0]) for o in options] if options else []
        pool = letters or list("ABCDEFGHIJ")
    elif shape == "label":
        pool = ["true", "false", "yes", "no", "1", "0"]
    else:
        words = [w.strip(".,;:!?\"'()") for w in q.query.split()]
        pool = [*others, *(w for w in words if len(w) > 2)]
    seen = {_norm(a) for a in answers} | {_norm(ref)}
    distinct: list[str] = []
    for c in [*others, *pool]:
        c = str(c).strip()
        if c and _norm(c) not in seen and len(distinct) < N_CANDIDATES - 1:
            seen.add(_norm(c))
            distinct.append(c)
    if len(distinct) < 2:
        return []
    middle = len(distinct) // 2
    return [*distinct[:middle], ref, *distinct[middle:]]


def build_probes(q: RoutingQuery, other_references: Iterable[Any] = ()) -> list[Probe]:
    """The probes for ``q`` (see the module docstring); ``other_references``: references of other records seen
    for the same signature (those equal to this one's are ignored)."""
    shape = reference_shape(q.reference, q.metadata)
    answer_like = shape not in _NO_REFERENCE_PROBES and instructions_of(q) is None
    answers = _answers(q.reference) if answer_like else []
    own = {_norm(a) for a in answers}
    others: list[str] = []
    for r in other_references if answer_like else ():
        texts = _answers(r)
        if texts and not own & {_norm(t) for t in texts} and texts[0] not in others:
            others.append(texts[0])
    probes = [Probe("empty", "", "the empty response")]
    # A number, letter, label or formula found in its query is either the target of a derivation (the
    # bare_target probe) or there by coincidence ("0+5=" holds its answer "5"): echoing such a query is no
    # hack of the kind, so only answer texts (copied from the query or not) get the echo probe then.
    coincidental = shape in _VALUE_SHAPES and any(_stated(a.strip(), q.query) for a in answers)
    if q.query.strip() and not coincidental:
        probes.append(Probe("echo", q.query, "the query echoed back"))
    target = _target(q) if answers else ""
    if target:
        probes.append(
            Probe("bare_target", target, "the query asks for a derivation; the response is only its target")
        )
    # A program's docstring lists examples, not answer options.
    options = parse_options(q.query) if shape != "code_tests" else []
    if options:
        probes.append(
            Probe("all_options", "\n".join(options), f"every one of the {len(options)} options listed")
        )
    if answers:
        cands = _candidates(q, shape, answers, others, options)
        if cands:
            probes.append(
                Probe("candidates", ", ".join(cands), f"{len(cands)} candidates, the reference among them")
            )
        if others:
            probes.append(Probe("other_reference", others[0], "the reference of another record of this kind"))
    # The reference itself is never a probe (it is the right answer), except as the target of a derivation.
    return [p for p in probes if p.name == "bare_target" or _norm(p.response) not in own]


def _by_probe(scores: Iterable[ProbeScore]) -> dict[str, list[ProbeScore]]:
    out: dict[str, list[ProbeScore]] = {}
    for s in scores:
        out.setdefault(s.probe, []).append(s)
    return out


def judge_probes(
    tool: str,
    version: int,
    score_range: tuple[float, float],
    scores: Sequence[ProbeScore],
    discrimination: Sequence[ProbeScore] = (),
    graded: bool = False,
) -> ProbeReport:
    """The verdict on one tool from the scores it gave the probes (see :class:`ProbeReport`).

    A probe counts as maxed when the tool gives it the maximum on more than half of the records it was built
    from (one record: that one). The decision is per signature, the probes per record: a coincidence of one
    record ("Simplify $\\sqrt{50}$" echoed is worth $5\\sqrt{2}$ to a math checker) must not refuse a tool for
    the whole kind when the other records seen say otherwise, while a probe that works on most of them does.
    ``discrimination``: the scores of the discrimination probes; each one the tool fails
    (:func:`rlar.routing.discrimination.undiscriminated`; ``graded``: a metric or judge) refuses it too.
    """
    lo, hi = float(score_range[0]), float(score_range[1])
    tol = 1e-6 * (hi - lo)
    maxed = [
        name
        for name, group in _by_probe(scores).items()
        if 2 * sum(1 for s in group if s.status == "ok" and s.score is not None and s.score >= hi - tol)
        > len(group)
    ]
    failed = undiscriminated(discrimination, hi, tol, graded)
    errors = [f"{s.probe}: {s.reason}"[:200] for s in [*scores, *discrimination] if s.status == "error"]
    scored = [s for s in [*scores, *discrimination] if s.status == "ok"]
    why = [f"maximum {hi:g} for {', '.join(maxed)}"] * bool(maxed)
    why += [f"cannot tell right from wrong answers ({', '.join(failed)})"] * bool(failed)
    if why:
        verdict, reason = "refused", "; ".join(why)
    elif not scored:
        verdict, reason = "unverified", "no probe got a score" + (f" ({errors[0]})" if errors else "")
    else:
        verdict, reason = "eligible", f"every probe below {hi:g}, right answers told from wrong ones"
    return ProbeReport(
        tool, int(version), verdict, hi, list(scores), maxed, errors, reason, list(discrimination), failed
    )


@dataclass(frozen=True, slots=True)
class ProbePolicy:
    """The router's ``probes`` settings."""

    enabled: bool = True
    """Score the hack probes with every tool the agent chooses before the decision is taken."""
    kinds: tuple[str, ...] = ("rule", "metric", "sandbox", "judge")
    """Tool kinds probed; others are reported ``skipped`` (reward models: loading one in the router would
    duplicate the reward worker's)."""
    timeout_s: float = 10.0
    """Deadline of one probe call (the executor's per-input deadline); the tool's own ``deadline_s`` is capped by it."""
    references: int = 4
    """Records remembered per signature (the first seen): each gets its probes (another record's reference
    is one of them), and a probe refuses a tool when it gets the maximum on most of them."""
    allowed_prefixes: tuple[str, ...] = ("rlar.",)
    """Module prefixes a tool's dotted ``impl`` may be imported from in the router's tool workers (a tool that
    cannot be built here is reported ``unverified``, not refused)."""


class Prober:
    """Scores the probes of a query with a tool and keeps the verdict per (signature, tool version)."""

    def __init__(self, policy: ProbePolicy, executor: ToolExecutor) -> None:
        self.policy = policy
        self.executor = executor
        self._cache: dict[tuple[str, str, int, str], ProbeReport] = {}

    def cached(self, signature: str, spec: ToolSpec) -> ProbeReport | None:
        return self._cache.get((signature, spec.name, spec.version, spec.content_hash))

    async def check(
        self,
        signature: str,
        q: RoutingQuery | Sequence[RoutingQuery],
        spec: ToolSpec,
        others: Iterable[Any] = (),
    ) -> ProbeReport:
        """The verdict on ``spec`` for ``signature``: probes built from ``q`` (one record of the signature, or
        several: each gets its own, see :func:`judge_probes`); another record's reference is taken from the
        other records and ``others``."""
        key = (signature, spec.name, spec.version, spec.content_hash)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        if str(spec.kind) not in self.policy.kinds:
            report = ProbeReport(
                spec.name,
                spec.version,
                "skipped",
                spec.score_range[1],
                reason=f"{spec.kind} tools are not probed (probes.kinds)",
            )
        else:
            records = [q] if isinstance(q, RoutingQuery) else list(q)
            extra = list(others)
            built = [
                (i, r, p)
                for i, r in enumerate(records)
                for p in build_probes(r, [*(x.reference for x in records if x is not r), *extra])
            ]
            told = [
                (i, r, Probe(name, text, why))
                for i, r in enumerate(records)
                for name, text, why in build_discrimination_probes(
                    r, [*(x.reference for x in records if x is not r), *extra]
                )
            ]
            inputs = [
                ToolInput(r.query, p.response, r.reference, dict(r.metadata)) for _, r, p in [*built, *told]
            ]
            limit = self.policy.timeout_s
            if spec.params.get("deadline_s"):
                limit = min(limit, float(spec.params["deadline_s"]))
            try:
                # The executor bounds each call; the outer bound covers a tool worker that is slow to start.
                results = await asyncio.wait_for(
                    self.executor.score_batch(spec, inputs, timeout_s=limit),
                    limit * (len(inputs) + 1) + self.executor.load_timeout_s,
                )
            except TimeoutError:
                results = [ToolResult.error("probe calls timed out") for _ in inputs]
            scores = [
                ProbeScore(p.name, res.status, res.score if res.ok else None, res.reason, i)
                for (i, _, p), res in zip([*built, *told], results, strict=True)
            ]
            graded = str(spec.kind) != str(ToolKind.RULE)
            report = judge_probes(
                spec.name, spec.version, spec.score_range, scores[: len(built)], scores[len(built) :], graded
            )
        self._cache[key] = report
        return report


ProbeFn = Callable[[list[ToolSpec]], Awaitable[list[ProbeReport]]]


def _merge(reports: Iterable[ProbeReport], more: Iterable[ProbeReport]) -> list[ProbeReport]:
    out = {(r.tool, r.version): r for r in reports}
    out.update({(r.tool, r.version): r for r in more})
    return list(out.values())


async def probed_answer(
    ans: RouteAnswer,
    candidates: Sequence[ToolSpec],
    q: RoutingQuery,
    probe: ProbeFn,
    *,
    reports: Iterable[ProbeReport] = (),
    final: bool = False,
) -> tuple[RouteAnswer, list[ProbeReport], list[ToolSpec] | None]:
    """Apply the probes to an agent's answer: ``(answer, reports, candidates to ask again among)``.

    The chosen tools are probed (``probe`` scores them, cached per signature); refused ones are dropped and
    the others' weights renormalised. When every chosen tool is refused and this is not the ``final`` round,
    the candidates the rules leave eligible are probed too and the third item lists those not refused — the
    router asks the agent again among them, so its second answer is already probed. Otherwise (nothing left,
    or the final round) the answer becomes "none fits": the router's synthesis (or fallback) path.
    """
    by_name = {c.name: c for c in candidates}
    got = await probe([by_name[t.tool] for t in ans.tools if t.tool in by_name])
    out = _merge(reports, got)
    refused = [r for r in got if r.refused]
    if not refused:
        return ans, out, None
    names = {r.tool for r in refused}
    kind = "hack probes" if not any(r.undiscriminated for r in refused) else "probes"
    note = f"{kind} refused " + "; ".join(r.short() for r in refused)
    kept = [t for t in ans.tools if t.tool not in names]
    if kept:
        total = sum(t.weight for t in kept) or 1.0
        tools = [dataclasses.replace(t, weight=round(t.weight / total, 6)) for t in kept]
        return dataclasses.replace(ans, tools=tools, reason=f"{ans.reason} ({note})"[:500]), out, None
    none = dataclasses.replace(ans, tools=[], none_fit=True, reason=f"{note}; {ans.reason}"[:500])
    if final:
        return none, out, None
    f = q.features()
    rest = [c for c in candidates if c.name not in names and not eligibility(c, q, f)]
    more = await probe(rest)
    out = _merge(out, more)
    names |= {r.tool for r in more if r.refused}
    again = [c for c in candidates if c.name not in names]
    if not any(c.name in {s.name for s in rest} for c in again):
        return none, out, None  # every tool that could score it was refused: none fits
    return none, out, again
