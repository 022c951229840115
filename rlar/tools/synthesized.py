"""Synthesised verifiers as reward tools: the spec carries the code; scoring runs it in the sandbox only.

A synthesised tool's spec has ``impl = "rlar.tools.synthesized:SynthesizedTool"``, ``kind = sandbox``, the
verifier module in ``code`` (defining ``reward(query, response, reference, metadata) -> float``), the declared
``score_range``, its validation record, and in ``params``: ``needs_reference`` (abstain without one),
``case_timeout_s`` (per call, inside the jail), ``limits`` (a ``rlar.sandbox.Limits`` dict for the jail) plus
what the router matches on (``signature``, ``constraints``).

Scoring a batch is one sandbox run of :func:`rlar.tools.verifier_harness.harness_program` (the same harness that
validated it) with the inputs on stdin, so the cost is one jail (~40 ms) per batch, not per sample. The code
never runs in this process.

Execution is injected like the code tool's: ``run_code`` is an async callable ``(program, stdin, limits) ->
RunResult`` (or its dict) — e.g. :func:`rlar.sandbox_client.bus_runner` to reach the sandbox actor over the
bus; default: a local jail (:func:`rlar.sandbox_client.local_runner` with the ``sandbox_config`` resource).

Caching: results may be cached by (tool, query, response, reference) only when the verifier never reads its
``metadata`` parameter (``cacheable``, decided by parsing the source).

Outcomes: a call that raises, returns a non-number or times out → ``error`` for that sample (the tool's fault,
which the registry's stats count); a score outside the declared range → ``error`` (via ``finalize``); a
sandbox that rejects the run or cannot be reached → ``abstain`` (infrastructure); a jail killed at its
wall clock → ``error`` for the samples without a result.
"""

from __future__ import annotations

import ast
import secrets
from collections.abc import Sequence
from typing import Any, ClassVar

from rlar.sandbox.schema import Limits
from rlar.sandbox_client import as_run_result, local_runner
from rlar.tools.base import Outcome, RewardTool, ToolInput, ToolKind, ToolResult, ToolSpec
from rlar.tools.verifier_harness import harness_input, harness_program, parse_harness_output

__all__ = ["IMPL", "SynthesizedTool", "synthesized_spec"]

IMPL = "rlar.tools.synthesized:SynthesizedTool"


def synthesized_spec(
    *,
    name: str,
    description: str,
    code: str,
    score_range: tuple[float, float],
    task_types: list[str],
    answer_formats: list[str],
    params: dict[str, Any],
    provenance: dict[str, Any],
    validation: dict[str, Any],
) -> ToolSpec:
    """A sealed spec for a validated verifier (``version`` is assigned by the registry)."""
    return ToolSpec(
        name=name,
        kind=ToolKind.SANDBOX,
        description=description,
        task_types=task_types,
        answer_formats=answer_formats,
        params={"needs_reference": False, "case_timeout_s": 1.0, "limits": None, "max_batch": 256, **params},
        score_range=score_range,
        impl=IMPL,
        code=code,
        provenance=provenance,
        validation=validation,
    ).sealed()


def _reads_metadata(code: str) -> bool:
    """Whether ``reward``'s fourth parameter is used anywhere in the module (True when unsure)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return True
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "reward"), None)
    params = [*fn.args.posonlyargs, *fn.args.args] if fn is not None else []
    if len(params) < 4:
        return True
    name = params[3].arg
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(fn)) if fn is not None else True


class SynthesizedTool(RewardTool):
    """Runs a synthesised ``reward()`` in the sandbox, one jail per batch; see the module docstring."""

    batched: ClassVar[bool] = True
    in_process: ClassVar[bool] = True  # it only waits on the sandbox

    def __init__(
        self, spec: ToolSpec, *, run_code: Any = None, sandbox_config: Any = None, **resources: Any
    ) -> None:
        super().__init__(spec, **resources)
        if not spec.code.strip():
            raise ValueError(f"synthesised tool {spec.name!r} has no code")
        self.run_code = run_code or local_runner(sandbox_config)
        self.program = harness_program(spec.code)
        self.needs_reference = bool(spec.params.get("needs_reference", False))
        self.case_timeout_s = float(spec.params.get("case_timeout_s", 1.0))
        self.max_batch = int(spec.params.get("max_batch", 256))
        limits = spec.params.get("limits")
        self.limits = Limits.from_dict(limits) if limits else None

    @classmethod
    def cacheable(cls, spec: ToolSpec) -> bool:
        """Results are cached by (tool, query, response, reference), so only a verifier that never reads its
        ``metadata`` parameter may be cached (found by parsing the source; nothing is executed)."""
        return not _reads_metadata(spec.code)

    def _limits_for(self, n: int) -> Any:
        if self.limits is not None:
            return self.limits
        # One "test" is the whole batch: each call may use case_timeout_s, plus start-up slack.
        return Limits(
            test_s=min(3600.0, 5.0 + n * self.case_timeout_s),
            cpu_s=int(min(3600, 5 + n * self.case_timeout_s)),
            memory_mb=512,
        )

    async def _run(self, inputs: Sequence[ToolInput]) -> list[Outcome]:
        nonce = secrets.token_hex(8)
        stdin = harness_input([x.to_dict() for x in inputs], nonce, case_timeout_s=self.case_timeout_s)
        try:
            result = as_run_result(await self.run_code(self.program, stdin, self._limits_for(len(inputs))))
        except Exception as exc:
            return [
                ToolResult.abstain(f"sandbox unavailable: {type(exc).__name__}: {exc}"[:500]) for _ in inputs
            ]
        if result.status == "rejected":
            return [ToolResult.abstain(f"sandbox rejected the run: {result.reason}"[:500]) for _ in inputs]
        out = parse_harness_output(result.stdout, nonce, len(inputs))
        if out.load_error:
            return [ToolResult.error(f"verifier failed to load: {out.load_error}") for _ in inputs]
        if out.problem:
            why = f"sandbox {result.status}: {result.reason}; {out.problem}"[:500]
            return [ToolResult.error(why) for _ in inputs]
        outcomes: list[Outcome] = []
        for res in out.results:
            if res["error"]:
                outcomes.append(ToolResult.error(f"verifier: {res['error']}"[:500]))
            else:
                outcomes.append(self.ok(res["scores"][0], "", ms=res["ms"][0] if res["ms"] else None))
        return outcomes

    async def _score_batch(self, inputs: Sequence[ToolInput]) -> list[Outcome]:
        outs: list[Outcome | None] = [None] * len(inputs)
        todo: list[int] = []
        for i, x in enumerate(inputs):
            if self.needs_reference and x.reference is None:
                outs[i] = ToolResult.abstain("no reference")
            else:
                todo.append(i)
        for start in range(0, len(todo), self.max_batch):
            chunk = todo[start : start + self.max_batch]
            for i, o in zip(chunk, await self._run([inputs[i] for i in chunk]), strict=True):
                outs[i] = o
        return [o for o in outs if o is not None]
