"""The reward-tool contract: specs, inputs, results, the tool base class, and the factory.

A reward tool turns one (query, response, reference) into a score in a declared range. Everything a
worker needs to rebuild a tool lives in its ``ToolSpec`` (plain data, msgpack-able), so the registry can
store specs and any process can call ``make_tool(spec)``:

- ``spec.impl`` names the implementation: a built-in name (``math_verify``, ``bleu2``, ...; see
  ``builtin_specs()``) or a dotted path ``package.module:Class`` to a ``RewardTool`` subclass.
  Empty ``impl`` means ``impl == name``. Dotted paths are only imported from the module prefixes in
  ``allowed_prefixes`` (default ``rlar.``), because a spec may come from a shared store.
- ``spec.params`` are the implementation's parameters; ``spec.score_range`` the declared range.

Result statuses — who is at fault decides which one:

- ``ok``: a score in the declared range.
- ``abstain``: the tool could not judge (no judge configured, reference unparseable, timeout, remote
  API failure). Callers should drop the sample from the reward, not score it 0.
- ``error``: the tool misbehaved (raised, returned NaN/inf or a value clearly outside its range).

``finalize`` is the single place that turns a raw number into a result, for every path (built-in and
Python tools, TRL-style functions, synthesised and sandbox verifiers, judges): ``check_score`` is the one
type rule — ``int``, ``float`` and numpy integer/floating scalars are scores; ``str`` (``"0.7"`` is never
parsed), ``bytes``, ``bool`` (a check's True/False is not a graded score: return ``float(ok)``), ``None``,
tensors, lists and anything else are refused, as are NaN and ±inf. Values within a small tolerance of the
range are clipped (float noise such as 1.0000000002); clearly out-of-range values become ``error`` with a
reason, never silently clipped. A refused value is an ``error`` with the reason, never trained on.

A tool that raises is an ``error`` whose reason is ``raised <Type>: <message> (at <file>:<line> in <fn>)``
(the innermost frame outside ``rlar.tools``) and whose ``details["traceback"]`` holds the first lines of
the traceback from the tool's own code (:func:`exception_result`).

Not covered here: running tools safely (time limits, crashes) — see ``rlar.tools.executor``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import inspect
import json
import math
import numbers
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Literal

from bus.messages import ToolKind, ToolRef

__all__ = [
    "BUILTIN_IMPLS",
    "BUILTIN_REFERENCE",
    "Origin",
    "RewardTool",
    "ToolInput",
    "ToolKind",
    "ToolRef",
    "ToolResult",
    "ToolSpec",
    "builtin_specs",
    "canonical_json",
    "check_score",
    "compute_content_hash",
    "exception_result",
    "finalize",
    "make_tool",
    "resolve_tool_class",
    "sha256_text",
]

Status = Literal["ok", "abstain", "error"]
ReferenceNeed = Literal["text", "tests", "instructions", "none"]
STATUSES: tuple[str, ...] = ("ok", "abstain", "error")

# Relative tolerance (of the range width) within which an out-of-range score is float noise and clipped.
RANGE_TOLERANCE = 1e-6


def canonical_json(obj: Any) -> str:
    """Deterministic JSON (sorted keys, no spaces); tuples become lists. Used for hashing."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_json_default)


def _json_default(obj: Any) -> Any:
    if isinstance(obj, bytes):
        return {"__bytes_sha256__": hashlib.sha256(obj).hexdigest()}
    if isinstance(obj, set | frozenset):
        return sorted(obj, key=repr)
    raise TypeError(f"not JSON-serialisable for hashing: {type(obj).__name__}")


def sha256_text(obj: Any) -> str:
    """sha256 hex of a string, or of the canonical JSON of any other plain value (None included)."""
    data = obj if isinstance(obj, str) else canonical_json(obj)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


class Origin(StrEnum):
    """Where a tool came from: ``provenance["origin"]`` of its spec (stored as the plain value)."""

    BUILT_IN = "built-in"
    SYNTHESIZED = "synthesized"
    RETRIEVED = "retrieved"
    USER = "user"


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """Everything needed to rebuild and route a tool. Plain data; ``to_dict()`` is msgpack-able.

    ``content_hash`` is ``compute_content_hash(spec)``: sha256 over the canonical spec (all fields except
    ``content_hash``, ``provenance`` and ``validation``, which describe the tool rather than define it) plus
    its code — ``code`` when the spec carries source (synthesised tools), else the source of the module
    implementing it (if importable under the default allowed prefixes). Use ``sealed()`` to fill it in.
    """

    name: str
    kind: ToolKind
    description: str
    task_types: list[str] = field(default_factory=list)
    answer_formats: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    score_range: tuple[float, float] = (0.0, 1.0)
    version: int = 1
    impl: str = ""  # built-in name or "package.module:Class"; "" means the same as `name`
    code: str = ""  # source for synthesised tools; empty for built-ins
    content_hash: str = ""
    provenance: dict[str, Any] = field(
        default_factory=lambda: {"origin": Origin.BUILT_IN.value, "author": "rlar", "source": ""}
    )
    validation: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Our own specs must be well-formed: fail fast on construction, not at score time.
        if not self.name:
            raise ValueError("ToolSpec.name must be non-empty")
        object.__setattr__(self, "kind", ToolKind(self.kind))
        lo, hi = (float(x) for x in self.score_range)
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(f"ToolSpec.score_range must be finite with lo < hi, got {self.score_range!r}")
        object.__setattr__(self, "score_range", (lo, hi))
        if self.version < 1:
            raise ValueError("ToolSpec.version must be >= 1")

    @property
    def impl_name(self) -> str:
        return self.impl or self.name

    @property
    def reference_need(self) -> ReferenceNeed:
        """What the tool needs as a reference (see ``BUILTIN_REFERENCE``); plug-ins without
        ``params["needs_reference"]`` are taken as reference-free."""
        if "needs_reference" in self.params:
            return "text" if self.params["needs_reference"] else "none"
        return BUILTIN_REFERENCE.get(self.impl_name, "none")

    def ref(self, weight: float = 1.0) -> ToolRef:
        """This tool version as an entry of a prompt's reward route."""
        return ToolRef(
            tool=self.name,
            kind=self.kind,
            version=self.version,
            weight=float(weight),
            needs_reference=self.reference_need != "none",
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": str(self.kind),
            "description": self.description,
            "task_types": list(self.task_types),
            "answer_formats": list(self.answer_formats),
            "params": dict(self.params),
            "score_range": [self.score_range[0], self.score_range[1]],
            "version": self.version,
            "impl": self.impl,
            "code": self.code,
            "content_hash": self.content_hash,
            "provenance": dict(self.provenance),
            "validation": dict(self.validation),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ToolSpec:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown ToolSpec fields: {sorted(unknown)}")
        kwargs = dict(d)
        if "score_range" in kwargs:
            kwargs["score_range"] = tuple(kwargs["score_range"])
        if "task_types" in kwargs:
            kwargs["task_types"] = list(kwargs["task_types"])
        if "answer_formats" in kwargs:
            kwargs["answer_formats"] = list(kwargs["answer_formats"])
        return cls(**kwargs)

    def replace(self, **changes: Any) -> ToolSpec:
        """A copy with fields changed; ``content_hash`` is cleared unless given (re-seal afterwards)."""
        changes.setdefault("content_hash", "")
        return dataclasses.replace(self, **changes)

    def sealed(self) -> ToolSpec:
        """A copy with ``content_hash`` computed."""
        return dataclasses.replace(self, content_hash=compute_content_hash(self))

    def cache_key(self) -> str:
        """A stable identity for caching built tools: the content hash, or the spec's canonical hash."""
        return self.content_hash or sha256_text(self.to_dict())


def _code_of(spec: ToolSpec) -> str:
    if spec.code:
        return spec.code
    try:
        # The whole module, so helpers the class calls count too. Only allowed modules are imported:
        # hashing a spec from a shared store must not import arbitrary code.
        cls = resolve_tool_class(spec)
        return inspect.getsource(inspect.getmodule(cls) or cls)
    except (ImportError, AttributeError, ValueError, OSError, TypeError):
        # Unresolvable here (e.g. a plug-in not installed in this process): hash the spec alone.
        return ""


def compute_content_hash(spec: ToolSpec) -> str:
    """sha256 of the canonical spec (minus hash/provenance/validation) and its code (see ``ToolSpec``)."""
    d = spec.to_dict()
    for k in ("content_hash", "provenance", "validation"):
        d.pop(k)
    return hashlib.sha256((canonical_json(d) + "\0" + _code_of(spec)).encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class ToolInput:
    """One sample to score. ``reference`` is whatever the task's answer format needs:
    a string, several acceptable strings, a dict (e.g. unit tests) or None (reference-free tools)."""

    query: str
    response: str
    reference: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "response": self.response,
            "reference": self.reference,
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ToolInput:
        return cls(
            query=d.get("query", ""),
            response=d.get("response", ""),
            reference=d.get("reference"),
            metadata=dict(d.get("metadata") or {}),
        )


@dataclass(slots=True)
class ToolResult:
    """The outcome of scoring one input. ``score`` is None unless ``status == "ok"``."""

    status: Status
    score: float | None = None
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    latency_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "score": self.score,
            "reason": self.reason,
            "details": self.details,
            "latency_s": self.latency_s,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ToolResult:
        status = d.get("status")
        if status not in STATUSES:
            raise ValueError(f"invalid ToolResult status {status!r}")
        score = d.get("score")
        problem = "" if score is None else _score_type_problem(score)
        if problem:  # a str "0.7" from elsewhere is refused here too, never coerced
            raise ValueError(f"invalid ToolResult {problem}")
        return cls(
            status=status,
            score=None if score is None else float(score),
            reason=str(d.get("reason", "")),
            details=dict(d.get("details") or {}),
            latency_s=float(d.get("latency_s", 0.0)),
        )

    @staticmethod
    def abstain(reason: str, **details: Any) -> ToolResult:
        return ToolResult(status="abstain", score=None, reason=reason, details=details)

    @staticmethod
    def error(reason: str, **details: Any) -> ToolResult:
        return ToolResult(status="error", score=None, reason=reason, details=details)


def _score_type_problem(raw: Any) -> str:
    """Why ``raw`` is not a score by its type ("" when it is one); see ``check_score``."""
    if isinstance(raw, bool) or (type(raw).__module__ == "numpy" and type(raw).__name__ in ("bool", "bool_")):
        return (
            f"score is a bool ({raw!r}), not a number: a check's True/False is refused so that a "
            "forgotten comparison is not trained as a grade; return float(...) for 1.0/0.0"
        )
    if isinstance(raw, str):
        return f"score is a str ({raw!r:.60}), not a number: strings are never parsed; return a float"
    if isinstance(raw, bytes | bytearray):
        return f"score is {type(raw).__name__} ({raw!r:.60}), not a number; return a float"
    if raw is None:
        return "score is None, not a number"
    if isinstance(raw, numbers.Real):  # int, float, Fraction, numpy integer and floating scalars
        return ""
    return f"score is a {type(raw).__name__} ({raw!r:.60}), not a number; return a float (e.g. x.item())"


def check_score(raw: Any) -> float | str:
    """The one score type rule of every tool path: the value as a finite float, or the reason it is refused.

    Accepted: ``int``, ``float`` and numpy integer/floating scalars (anything registered as
    ``numbers.Real`` except ``bool``), when finite. Refused: ``bool`` and numpy bools, ``str`` (even
    ``"0.7"``), ``bytes``, ``None``, tensors, containers, NaN and ±inf.
    """
    problem = _score_type_problem(raw)
    if problem:
        return problem
    try:
        value = float(raw)
    except (TypeError, ValueError, OverflowError) as exc:  # an odd Real subclass, a huge int
        return f"score {raw!r:.60} cannot be a float: {exc}"
    if math.isnan(value):
        return "score is NaN"
    if math.isinf(value):
        return f"score is {value}"
    return value


def finalize(
    spec: ToolSpec,
    raw_score: Any,
    *,
    reason: str = "",
    details: dict[str, Any] | None = None,
    latency_s: float = 0.0,
) -> ToolResult:
    """Turn a raw score into a ``ToolResult`` checked by ``check_score`` and against ``spec.score_range``.

    Within ``RANGE_TOLERANCE`` × width of the range: clipped, status ok. Refused types, NaN, ±inf and
    anything further out: status error with the reason (the value is kept in ``details["raw_score"]``).
    """
    details = dict(details or {})
    lo, hi = spec.score_range
    value = check_score(raw_score)
    if isinstance(value, str):
        return ToolResult("error", None, value, {**details, "raw_score": repr(raw_score)[:80]}, latency_s)
    tol = RANGE_TOLERANCE * (hi - lo)
    if value < lo - tol or value > hi + tol:
        return ToolResult(
            "error",
            None,
            f"score {value:.6g} outside declared range [{lo:g}, {hi:g}]",
            {**details, "raw_score": value},
            latency_s,
        )
    return ToolResult("ok", min(max(value, lo), hi), reason, details, latency_s)


def check_result(spec: ToolSpec, result: ToolResult) -> ToolResult:
    """Re-validate a result that came from elsewhere (a worker process, a plug-in): ok scores must pass
    ``finalize``; non-ok results carry no score."""
    if result.status == "ok":
        return finalize(
            spec, result.score, reason=result.reason, details=result.details, latency_s=result.latency_s
        )
    if result.score is not None:
        result.score = None
    return result


Outcome = ToolResult | float | int | bool


class RewardTool:
    """Base class for reward tools.

    Subclasses implement ``_score(inp)`` (return a float, or a ``ToolResult`` made with ``self.ok(...)`` /
    ``ToolResult.abstain(...)``) and, where batching helps (reward models), ``_score_batch(inputs)``.
    The public ``score``/``score_batch`` never raise for a tool's failure: exceptions become ``error``
    results with the exception text, raw numbers go through ``finalize``, and ``latency_s`` is filled in
    (for batched tools, the wall time of the whole batch).

    Class attributes the executor reads without building the tool:

    - ``batched``: ``_score_batch`` does real batching; the executor sends whole batches with one deadline.
    - ``in_process``: pure async I/O (judge, remote sandbox); safe to run in the caller's event loop.
    - ``self_timed``: the tool bounds its own waits with deadlines that count from the start of execution
      (the code tool: time queued for a sandbox slot and time running are bounded separately), so a worker
      applies its declared ``deadline_s`` as a safety net without capping it.
    - ``call_deadline``: for a batched tool, the deadline is per call whatever its size (a user's batched or
      TRL function), not scaled by the number of batches; the reward worker sends each request as one call.
    - ``metadata_keys``: keys of ``ToolInput.metadata`` that affect the score (part of the cache key).

    CPU-bound tools block the event loop they are called from; use ``ToolExecutor`` to isolate them.
    """

    batched: ClassVar[bool] = False
    in_process: ClassVar[bool] = False
    self_timed: ClassVar[bool] = False
    call_deadline: ClassVar[bool] = False
    metadata_keys: ClassVar[tuple[str, ...]] = ()
    default_spec: ClassVar[ToolSpec | None] = None

    def __init__(self, spec: ToolSpec, **resources: Any) -> None:
        # `resources` are process-local objects a tool may use (e.g. a sandbox client); unknown ones are
        # ignored so one executor can hand the same resources to every tool.
        self.spec = spec

    @classmethod
    def imported_modules(cls, spec: ToolSpec) -> list[str]:
        """Modules the tool imports because the spec names them (a user's reward function): ``make_tool``
        checks them against the allowed prefixes like a dotted ``impl``. Default: none."""
        return []

    @classmethod
    def cacheable(cls, spec: ToolSpec) -> bool:
        """Whether results for this spec may be cached by (tool, input) — False for group-dependent output."""
        return True

    @property
    def params(self) -> dict[str, Any]:
        return self.spec.params

    def ok(self, score: Any, reason: str = "", **details: Any) -> ToolResult:
        return finalize(self.spec, score, reason=reason, details=details)

    async def _score(self, inp: ToolInput) -> Outcome:
        # Batching tools need implement only _score_batch; a single input is a batch of one.
        if type(self)._score_batch is RewardTool._score_batch:
            raise NotImplementedError(f"{type(self).__name__} implements neither _score nor _score_batch")
        outs = await self._score_batch([inp])
        if len(outs) != 1:
            raise RuntimeError(f"_score_batch returned {len(outs)} results for 1 input")
        return outs[0]

    async def _score_batch(self, inputs: Sequence[ToolInput]) -> list[Outcome]:
        return [await self._score(x) for x in inputs]

    def _to_result(self, out: Any, latency_s: float) -> ToolResult:
        if isinstance(out, ToolResult):
            res = check_result(self.spec, out)
        else:
            res = finalize(self.spec, out)
        res.latency_s = latency_s
        return res

    async def score(self, inp: ToolInput) -> ToolResult:
        t0 = time.perf_counter()
        try:
            out = await self._score(inp)
        except Exception as exc:
            return exception_result(exc, time.perf_counter() - t0)
        return self._to_result(out, time.perf_counter() - t0)

    async def score_batch(self, inputs: Sequence[ToolInput]) -> list[ToolResult]:
        if not self.batched:
            return [await self.score(x) for x in inputs]
        if not inputs:
            return []
        t0 = time.perf_counter()
        try:
            outs = await self._score_batch(inputs)
        except Exception as exc:
            dt = time.perf_counter() - t0
            return [exception_result(exc, dt) for _ in inputs]
        dt = time.perf_counter() - t0
        if len(outs) != len(inputs):
            msg = f"tool returned {len(outs)} results for {len(inputs)} inputs"
            return [ToolResult("error", None, msg, {}, dt) for _ in inputs]
        return [self._to_result(o, dt) for o in outs]

    async def aclose(self) -> None:
        """Release resources (HTTP clients, models). Default: nothing."""


_OWN_DIR = __file__.rsplit("/", 1)[0] + "/"
TRACEBACK_LINES = 12


def exception_result(exc: BaseException, latency_s: float = 0.0) -> ToolResult:
    """The ``error`` result of a tool that raised: reason ``raised <Type>: <message> (at <file>:<line> in
    <function>)``, naming the innermost frame outside ``rlar.tools`` (the user's or plug-in's code), and
    ``details`` with ``exception`` (the type's name) and ``traceback`` (the first ``TRACEBACK_LINES`` lines
    of the traceback from that code on, our own wrapper frames left out)."""
    frames = traceback.extract_tb(exc.__traceback__)
    theirs = [f for f in frames if not f.filename.startswith(_OWN_DIR)] or frames[-1:]
    where = ""
    if theirs:
        last = theirs[-1]
        where = f" (at {last.filename.rsplit('/', 1)[-1]}:{last.lineno} in {last.name})"
    message = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
    reason = f"raised {type(exc).__name__}" + (f": {message}" if message else "") + where
    lines = "".join(traceback.format_list(theirs)).splitlines()
    lines.append(f"{type(exc).__name__}: {str(exc)[:500]}")
    tb = "\n".join(lines[: TRACEBACK_LINES - 1] + lines[-1:] if len(lines) > TRACEBACK_LINES else lines)
    return ToolResult(
        "error", None, reason[:2000], {"exception": type(exc).__name__, "traceback": tb[:4000]}, latency_s
    )


# Built-in implementations by name, as "module:Class" so nothing heavy is imported until used.
BUILTIN_IMPLS: dict[str, str] = {
    "math_verify": "rlar.tools.math_verify_tool:MathVerifyTool",
    "exact_match": "rlar.tools.rules:ExactMatchTool",
    "normalized_match": "rlar.tools.rules:NormalizedMatchTool",
    "contains_match": "rlar.tools.rules:ContainsMatchTool",
    "format_rules": "rlar.tools.rules:FormatRulesTool",
    "bleu2": "rlar.tools.metrics:Bleu2Tool",
    "chrf": "rlar.tools.metrics:ChrFTool",
    "embedding_similarity": "rlar.tools.metrics:EmbeddingSimilarityTool",
    "code_tests": "rlar.tools.code:CodeTestsTool",
    "ifeval": "rlar.tools.instructions:IFEvalTool",
    "reward_model": "rlar.tools.reward_model:RewardModelTool",
    "llm_judge": "rlar.tools.judge:LLMJudgeTool",
    "set_f1": "rlar.tools.item_sets:SetF1Tool",
    "sequence_match": "rlar.tools.structured:SequenceMatchTool",
    "quantity_match": "rlar.tools.structured:QuantityMatchTool",
}

# What each built-in implementation needs as a reference: "text" (any comparable answer), "tests" (code
# tests), "instructions" (IFEval's {instruction_id_list, kwargs}), "none" (reference-free; a reference is optional).
# Synthesised tools say it in params["needs_reference"].
BUILTIN_REFERENCE: dict[str, ReferenceNeed] = {
    "math_verify": "text",
    "exact_match": "text",
    "normalized_match": "text",
    "contains_match": "text",
    "bleu2": "text",
    "chrf": "text",
    "embedding_similarity": "text",
    "code_tests": "tests",
    "ifeval": "instructions",
    "format_rules": "none",
    "reward_model": "none",
    "llm_judge": "none",
    "set_f1": "text",
    "sequence_match": "text",
    "quantity_match": "text",
}

DEFAULT_ALLOWED_PREFIXES: tuple[str, ...] = ("rlar.",)


def _import_class(path: str) -> type[RewardTool]:
    module_name, _, attr = path.partition(":")
    if not module_name or not attr:
        raise ValueError(f"tool implementation must be 'package.module:Class', got {path!r}")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not (isinstance(obj, type) and issubclass(obj, RewardTool)):
        raise TypeError(f"{path} is not a RewardTool subclass")
    return obj


def _allowed(module_name: str, prefixes: Sequence[str]) -> bool:
    """A prefix (``rlar.`` or ``rlar``, ``my_rewards``) allows that module or package and everything in it."""
    return any(module_name == p.rstrip(".") or module_name.startswith(p.rstrip(".") + ".") for p in prefixes)


def resolve_tool_class(
    spec: ToolSpec, *, allowed_prefixes: Sequence[str] | None = DEFAULT_ALLOWED_PREFIXES
) -> type[RewardTool]:
    """The ``RewardTool`` subclass implementing ``spec``. Raises ``ValueError`` for unknown names or a
    dotted path outside ``allowed_prefixes`` (None allows any module)."""
    impl = spec.impl_name
    if impl in BUILTIN_IMPLS:
        return _import_class(BUILTIN_IMPLS[impl])
    if ":" not in impl:
        raise ValueError(f"unknown built-in tool {impl!r}; known: {sorted(BUILTIN_IMPLS)}")
    module_name = impl.partition(":")[0]
    if allowed_prefixes is not None and not _allowed(module_name, allowed_prefixes):
        raise ValueError(
            f"tool module {module_name!r} is not under an allowed prefix {list(allowed_prefixes)}"
        )
    return _import_class(impl)


def make_tool(
    spec: ToolSpec, *, allowed_prefixes: Sequence[str] | None = DEFAULT_ALLOWED_PREFIXES, **resources: Any
) -> RewardTool:
    """Build the tool a spec describes. ``resources`` are passed to the constructor (e.g. ``run_tests=``
    for the code tool). Raises for an unknown implementation or invalid params (a spec bug)."""
    cls = resolve_tool_class(spec, allowed_prefixes=allowed_prefixes)
    for module in cls.imported_modules(spec):
        if allowed_prefixes is not None and not _allowed(module, allowed_prefixes):
            raise ValueError(
                f"tool {spec.name!r} imports module {module!r}, which is not under an allowed prefix "
                f"{list(allowed_prefixes)} (trust it with [reward] allowed_prefixes)"
            )
    return cls(spec, **resources)


def builtin_specs() -> list[ToolSpec]:
    """The default spec of every built-in tool, sealed (content hash filled in)."""
    specs = []
    for name in BUILTIN_IMPLS:
        cls = _import_class(BUILTIN_IMPLS[name])
        if cls.default_spec is None:
            raise TypeError(f"built-in {name} has no default_spec")
        specs.append(cls.default_spec.sealed())
    return specs
