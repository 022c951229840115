"""Code unit-test reward: run the response's program against the reference tests in the sandbox.

Score = fraction of tests passed. The program is the last fenced code block of the response (an
unterminated fence — a truncated generation — runs to the end), or the whole response if it has no fence.
When the prompt (``reference["prompt"]``, else the query) is Python source, it goes before the response (see
``build_program``), since a HumanEval response either continues it or restates the function.

References become ``rlar.sandbox.schema.CodeTests`` through ``rlar.sandbox.formats.parse_code_tests`` (HumanEval,
LeetCode, asserts, MBPP, APPS, CodeContests, LiveCodeBench, stdin/stdout pairs; see docs/code_tests.md). A
reference in no accepted shape abstains with a message naming the shapes.

Execution is injected: ``run_tests`` is an async callable ``(program, tests, **kw) -> result`` (``kw`` holds
``limits`` when the spec sets them), where the result is a ``rlar.sandbox`` ``RunResult`` or its
``to_dict()`` — e.g. after a trip over the bus to a sandbox actor. Default: ``rlar.sandbox.run_tests_async``,
imported on first use, with the ``sandbox_config`` resource (a ``SandboxConfig``) if one is given. The tool
itself only waits (the sandbox enforces limits), so it runs in-process.

Outcomes: ``ok``/``failed``/``timeout``/``oom``/``crashed`` are the program's doing → score = pass fraction
(tests that never ran count as failed). Violations the sandbox detected (network, signals, processes left behind,
writes outside, forbidden reads; ``RunResult.violations``) are in ``details["violations"]``; with
``params["on_violation"] = "zero"`` (the default) they make the score 0, with ``"report"`` they are only
reported. ``rejected`` (the sandbox could not run anything: no bubblewrap, bad
interpreter) and an exception from the executor (sandbox or bus unavailable) → abstain: not the policy's fault.

``pass_at_k(n, c, k)`` is the unbiased estimator of Chen et al. (2021). With ``params["pass_at_k"] = [1, 5]``
``score_batch`` groups samples of the same problem (same query and reference) and adds pass@k to each
sample's details, counting a sample as correct when all its tests pass.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import inspect
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, ClassVar

from rlar.tools.base import (
    Outcome,
    RewardTool,
    ToolInput,
    ToolKind,
    ToolResult,
    ToolSpec,
    check_score,
    sha256_text,
)

__all__ = [
    "CodeTestsTool",
    "RunTests",
    "extract_code",
    "pass_at_k",
    "reference_tests",
    "sandbox_result_fields",
]

RunTests = Callable[..., Awaitable[Any]]

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+\-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_PROGRAM_STATUSES = ("ok", "failed", "timeout", "oom", "crashed")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n samples of which c are correct: 1 - C(n-c, k) / C(n, k).

    Computed as a product to stay stable for large n. Requires 0 <= c <= n and 1 <= k <= n.
    """
    if not (0 <= c <= n) or not (1 <= k <= n):
        raise ValueError(f"pass_at_k needs 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")
    if n - c < k:
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


def extract_code(response: str) -> str:
    """The last fenced code block (python/py/unlabelled preferred over other languages), else the text."""
    blocks = [(m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(response)]
    if not blocks:
        return response
    python_like = [code for lang, code in blocks if lang in ("", "python", "py", "python3")]
    return (python_like or [code for _, code in blocks])[-1]


def sandbox_result_fields(result: Any) -> tuple[str, list[dict[str, Any]], float | None, str]:
    """(status, per-test dicts, pass fraction or None, message) from a SandboxResult or its dict."""
    d = result.to_dict() if hasattr(result, "to_dict") else result
    if not isinstance(d, Mapping):
        raise TypeError(
            f"sandbox executor returned {type(result).__name__}, expected a SandboxResult or dict"
        )
    status = str(d.get("status", ""))
    tests = [t.to_dict() if hasattr(t, "to_dict") else dict(t) for t in d.get("tests") or []]
    frac = None
    for key in ("pass_fraction", "pass_rate", "fraction_passed"):
        if d.get(key) is not None:
            value = check_score(d[key])  # the one score type rule: a str "0.7" is refused here too
            if isinstance(value, str):
                raise TypeError(f"sandbox result {key}: {value}")
            frac = value
            break
    message = str(d.get("reason") or d.get("message") or d.get("error") or "")
    return status, tests, frac, message


def reference_tests(reference: Any, query: str = "") -> tuple[Any, str]:
    """(``rlar.sandbox.schema.CodeTests``, prompt) from a reference (``rlar.sandbox.formats.parse_code_tests``:
    every accepted dataset shape); raises ``CodeTestsFormatError`` (a ValueError naming the accepted shapes)
    otherwise. The prompt is the reference's, else the query."""
    formats = importlib.import_module("rlar.sandbox.formats")
    tests = formats.parse_code_tests(reference)
    return tests, tests.prompt or query


def _is_python(source: str) -> bool:
    try:
        compile(source, "response", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def _is_code_prompt(prompt: str) -> bool:
    """Python source with a definition or import at top level (a HumanEval prompt), not prose."""
    try:
        tree = ast.parse(prompt)
    except (SyntaxError, ValueError):
        return False
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
    return any(isinstance(node, kinds) for node in tree.body)


def _test_passed(test: Mapping[str, Any]) -> bool:
    # A TestOutcome's dict has status "passed"; other executors may send a boolean "passed".
    return bool(test["passed"]) if "passed" in test else test.get("status") == "passed"


def _default_runner(config: Any = None) -> RunTests:
    """``rlar.sandbox.run_tests_async`` bound to an operator ``SandboxConfig`` (None: the sandbox default)."""

    async def run(program: str, tests: Any, **kwargs: Any) -> Any:
        # Imported on first use: the sandbox pulls in process machinery only a code task needs.
        sandbox = importlib.import_module("rlar.sandbox")
        fn = getattr(sandbox, "run_tests_async", None) or sandbox.run_tests
        out = (
            fn(program, tests, config=config, **kwargs)
            if config is not None
            else fn(program, tests, **kwargs)
        )
        return await out if inspect.isawaitable(out) else out

    return run


class CodeTestsTool(RewardTool):
    """Pass fraction of the reference unit tests, executed through an injectable sandbox executor."""

    batched: ClassVar[bool] = True
    in_process: ClassVar[bool] = True
    self_timed: ClassVar[bool] = True  # the sandbox client times queueing and running separately
    default_spec: ClassVar[ToolSpec] = ToolSpec(
        name="code_tests",
        kind=ToolKind.SANDBOX,
        description=(
            "Code correctness by unit tests: extracts the program from the response (last ```python block,"
            " else the whole text; HumanEval completions are appended to the prompt) and runs it against"
            " the reference tests (assert statements, HumanEval check(), or stdin/stdout pairs) in the"
            " sandbox. Score = fraction of tests passed; 0 when the code attempted an escape (network, signals,"
            " leftover processes, writes outside, forbidden reads; on_violation=report only reports them)."
            " Optional pass@k per problem group in details."
            " Use for programming tasks with executable tests."
        ),
        task_types=["code", "programming", "humaneval", "mbpp", "competitive_programming"],
        answer_formats=["python_code", "code_block", "function", "program"],
        params={
            "pass_at_k": [],
            "prepend_prompt": "auto",
            "max_concurrency": 4,
            "limits": None,
            "deadline_s": 960,
            "on_violation": "zero",
        },
    )

    def __init__(
        self,
        spec: ToolSpec,
        *,
        run_tests: RunTests | None = None,
        sandbox_config: Any = None,
        **resources: Any,
    ) -> None:
        super().__init__(spec, **resources)
        self.run_tests: RunTests = run_tests or _default_runner(sandbox_config)
        self.prepend = spec.params.get("prepend_prompt", "auto")
        if self.prepend not in ("auto", "always", "never"):
            raise ValueError(f"prepend_prompt must be auto|always|never, got {self.prepend!r}")
        self.ks = [int(k) for k in spec.params.get("pass_at_k") or []]
        self.on_violation = spec.params.get("on_violation", "zero")
        if self.on_violation not in ("zero", "report"):
            raise ValueError(f"on_violation must be zero|report, got {self.on_violation!r}")
        self._sem = asyncio.Semaphore(int(spec.params.get("max_concurrency", 4)))
        limits = spec.params.get("limits")
        self.limits = (
            importlib.import_module("rlar.sandbox.schema").Limits.from_dict(limits) if limits else None
        )

    @classmethod
    def cacheable(cls, spec: ToolSpec) -> bool:
        # pass@k details depend on the whole group, so per-sample cache entries would be wrong.
        return not spec.params.get("pass_at_k")

    def build_program(self, inp: ToolInput) -> tuple[str, Any]:
        """(program, CodeTests) for one input; raises ValueError when the reference holds no valid tests.

        ``prepend_prompt = "auto"``: when the prompt is Python source (a HumanEval prompt, not prose), a
        response that does not compile alone continues it (``prompt + response``), and one that does is put
        after it (``prompt + "\\n" + response``), so the prompt's imports and helpers are there either way and the
        response's definitions win."""
        tests, prompt = reference_tests(inp.reference, inp.query)
        code = extract_code(inp.response)
        if self.prepend == "always":
            return f"{prompt}{code}", tests
        if self.prepend == "auto" and _is_code_prompt(prompt):
            code = f"{prompt}\n{code}" if _is_python(code) else f"{prompt}{code}"
        return code, tests

    async def _run_one(self, inp: ToolInput) -> ToolResult:
        try:
            program, tests = self.build_program(inp)
        except ValueError as exc:  # the reference's fault, not the response's
            return ToolResult.abstain(f"invalid tests in reference: {exc}"[:500])
        kwargs: dict[str, Any] = {}
        if self.limits is not None:
            kwargs["limits"] = self.limits
        async with self._sem:
            try:
                raw = await self.run_tests(program, tests, **kwargs)
            except Exception as exc:
                return ToolResult.abstain(f"sandbox unavailable: {type(exc).__name__}: {exc}"[:500])
        status, per_test, frac, message = sandbox_result_fields(raw)
        violations = list((raw.to_dict() if hasattr(raw, "to_dict") else raw).get("violations") or [])
        n_tests = len(per_test) or len(tests)
        n_passed = sum(1 for t in per_test if _test_passed(t))
        if per_test:
            frac = n_passed / n_tests
        details: dict[str, Any] = {
            "sandbox_status": status,
            "tests": per_test,
            "passed": n_passed,
            "n_tests": n_tests,
            "violations": violations,
        }
        if status == "rejected":
            # The sandbox could not run anything (no bubblewrap, bad interpreter): not the policy's fault.
            return ToolResult.abstain(f"sandbox rejected the run: {message}"[:500], **details)
        if status not in _PROGRAM_STATUSES:
            return ToolResult.error(f"unknown sandbox status {status!r}", **details)
        if frac is None:
            frac = 1.0 if status == "ok" else 0.0
        if violations and self.on_violation == "zero":
            kinds = ", ".join(sorted({str(v.get("kind")) for v in violations}))
            first = violations[0]
            return self.ok(0.0, f"violation ({kinds}): {first.get('detail', '')}"[:500], **details)
        reason = f"{status}: {n_passed}/{n_tests} tests passed" + (
            f" ({message})" if message and status != "ok" else ""
        )
        return self.ok(frac, reason[:500], **details)

    async def _score_batch(self, inputs: Sequence[ToolInput]) -> list[Outcome]:
        results = list(await asyncio.gather(*(self._run_one(x) for x in inputs)))
        if self.ks:
            groups: dict[str, list[int]] = {}
            for i, inp in enumerate(inputs):
                groups.setdefault(sha256_text([inp.query, inp.reference]), []).append(i)
            for members in groups.values():
                scored = [results[i] for i in members if results[i].ok]
                n = len(scored)
                c = sum(1 for r in scored if r.score == 1.0)
                pak = {str(k): pass_at_k(n, c, k) for k in self.ks if 1 <= k <= n}
                for i in members:
                    results[i].details.update(pass_at_k=pak, group_n=n, group_c=c)
        return list(results)
