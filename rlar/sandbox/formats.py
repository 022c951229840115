"""One code-test schema, many dataset shapes: ``parse_code_tests(reference)`` turns a code task's reference into
``CodeTests`` (``rlar.sandbox.schema``), or raises ``CodeTestsFormatError`` naming the shapes it accepts.

Accepted shapes (a JSON string holding any of them is decoded first; ``docs/code_tests.md`` shows an example of
each):

- ``CodeTests`` or its ``to_dict()`` (has ``style``).
- HumanEval: ``{"test": "def check(candidate): ...", "entry_point": "f", "prompt"?}`` (``tests`` is accepted for
  ``test``). The prompt is trusted context: it runs before the test, so helpers it defines (``poly``,
  ``encode_cyclic``) are the dataset's, not the response's. A trailing top-level ``check(f)`` call gives the
  entry point when the record has none.
- LeetCode style: the same with a method entry point, ``"entry_point": "Solution().twoSum"``.
- Bare asserts in ``test`` (``{"test": "assert f(1) == 2\\n...", "entry_point"?}``), a list of assert strings, or
  one string of asserts: each top-level ``assert`` is one test; the other statements (imports, helpers) run
  before each.
- MBPP: ``{"test_list": [...], "test_setup_code"?, "test_imports"?}`` (``challenge_test_list`` is left out,
  as in the paper's evaluation).
- APPS: ``{"input_output": {"inputs": [...], "outputs": [...], "fn_name"?}}`` (or a JSON string of it, or those
  keys at the top level). Without ``fn_name`` each pair is a stdin/stdout case (a list of lines is joined with
  newlines); with it each input is the argument list of a call to ``fn_name`` (a top-level function, else a
  method of ``class Solution``) and the output the expected return value (APPS rule: a tuple result is
  compared as a list, and a one-element expected list also matches its element).
- CodeContests: ``{"public_tests": {"input": [...], "output": [...]}, "private_tests"?, "generated_tests"?}``
  (generated tests are used only when there are no others).
- LiveCodeBench: ``{"public_test_cases": [{"input", "output", "testtype": "stdin" | "functional"}],
  "private_test_cases"?, "metadata"?: {"func_name"}, "starter_code"?}``; a functional input is one JSON value per
  line (the arguments), its output one JSON value. Private cases stored compressed (base64 zlib pickle) are
  refused: unpickling dataset text can run code on this host.
- stdin/stdout pairs: ``{"inputs": [...], "outputs": [...]}``, ``[{"input": ..., "output": ...}]`` or
  ``[[input, output], ...]``.
- ODEX: ``{"test_start": "def check(candidate):", "test": ["    assert ...", ...], "entry_point"}``: the check
  written as its header and its lines.
- A test file of pytest-style ``test_*`` functions (no fixtures, no decorators) or ``unittest.TestCase`` classes
  (BigCodeBench): one test per function or ``test*`` method, passed when it returns without raising / its unittest
  run succeeds. Refused when it imports beyond the standard library (the jail's interpreter has no third-party
  packages, so right programs would fail too) or patches with ``unittest.mock`` (a patch acts in the checker's
  process, not the program's).
- ``{"tests": <any of these>, "prompt"?}``.

``is_code_tests(reference)`` says whether a reference is one of these (for routing).
"""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from rlar.sandbox.schema import CodeTests

__all__ = ["ACCEPTED_SHAPES", "CodeTestsFormatError", "is_code_tests", "parse_code_tests"]

ACCEPTED_SHAPES = (
    "HumanEval {test: 'def check(candidate)...', entry_point, prompt?}; LeetCode {test, entry_point: "
    "'Solution().method'}; asserts (a list of assert strings, one string of asserts, or {test: asserts}); "
    "MBPP {test_list, test_setup_code?, test_imports?}; APPS {input_output: {inputs, outputs, fn_name?}}; "
    "CodeContests {public_tests: {input, output}, private_tests?}; LiveCodeBench {public_test_cases: "
    "[{input, output, testtype}], metadata?: {func_name}}; stdin/stdout {inputs, outputs} or "
    "[{input, output}]; ODEX {test_start, test: [lines], entry_point}; a test file of test_* functions or "
    "unittest.TestCase classes (standard library only, no mocks or fixtures); {tests: <any of these>}; a CodeTests "
    "dict (with style)"
)


class CodeTestsFormatError(ValueError):
    """A reference that holds no tests in an accepted shape; the message names the shapes."""

    def __init__(self, why: str) -> None:
        self.why = why
        super().__init__(f"{why}. Accepted code-test shapes: {ACCEPTED_SHAPES}")


def is_code_tests(reference: Any) -> bool:
    """True when ``parse_code_tests`` accepts ``reference``."""
    try:
        parse_code_tests(reference)
    except CodeTestsFormatError:
        return False
    return True


def parse_code_tests(reference: Any, *, prompt: str = "") -> CodeTests:
    """The ``CodeTests`` a code task's reference holds; ``CodeTestsFormatError`` (a ``ValueError``) otherwise.

    ``prompt`` is the trusted source the response may continue (HumanEval); a ``prompt`` in the reference wins.
    """
    try:
        return _parse(reference, prompt, depth=0)
    except CodeTestsFormatError:
        raise
    except (ValueError, TypeError, KeyError, SyntaxError, RecursionError) as exc:
        raise CodeTestsFormatError(f"malformed code tests: {type(exc).__name__}: {exc}"[:500]) from None


def _parse(ref: Any, prompt: str, depth: int) -> CodeTests:
    if depth > 3:
        raise CodeTestsFormatError("code tests nested too deeply")
    if isinstance(ref, CodeTests):
        return ref
    if isinstance(ref, bytes | bytearray):
        ref = bytes(ref).decode("utf-8", "replace")
    if isinstance(ref, str):
        text = ref.strip()
        if text[:1] in ("{", "["):
            try:
                decoded = json.loads(text)
            except ValueError:
                decoded = None
            if decoded is not None:
                return _parse(decoded, prompt, depth + 1)
        return _from_source(text, "", prompt)
    if isinstance(ref, Mapping):
        return _from_mapping(ref, prompt, depth)
    if isinstance(ref, Sequence) and ref:
        return _from_sequence(list(ref), prompt)
    raise CodeTestsFormatError(f"no tests in a reference of type {type(ref).__name__}")


def _text(value: Any, what: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    raise CodeTestsFormatError(f"{what} must be a string, got {type(value).__name__}")


def _from_mapping(ref: Mapping[str, Any], prompt: str, depth: int) -> CodeTests:
    prompt = str(ref["prompt"]) if isinstance(ref.get("prompt"), str) else prompt
    if "style" in ref and set(ref) <= set(CodeTests.__dataclass_fields__):
        data = dict(ref)
        if prompt and not data.get("prompt"):
            data["prompt"] = prompt
        return CodeTests.from_dict(data)
    entry = str(ref.get("entry_point") or "")
    if isinstance(ref.get("test_start"), str) and isinstance(ref.get("test"), list | tuple):
        # ODEX: the check's header and its assert lines apart ({"test_start": "def check(candidate):", "test": [...]}).
        return _from_source(
            ref["test_start"] + "".join(_text(t, "test") for t in ref["test"]) + "\n", entry, prompt
        )
    for key in ("test", "tests"):
        if isinstance(ref.get(key), str) and ref[key].strip():
            return _from_source(ref[key], entry, prompt)
    if "test_list" in ref:
        setup = "\n".join(
            [*(str(x) for x in ref.get("test_imports") or []), str(ref.get("test_setup_code") or "")]
        ).strip()
        statements = [str(x) for x in ref["test_list"]]
        if not statements:
            raise CodeTestsFormatError("MBPP test_list is empty")
        return CodeTests.asserts(statements, setup=setup, prompt=prompt)
    if "input_output" in ref:
        io = ref["input_output"]
        if isinstance(io, str):
            io = json.loads(io)
        if not isinstance(io, Mapping):
            raise CodeTestsFormatError("APPS input_output must be an object with inputs and outputs")
        return _io_pairs(io, prompt, str(io.get("fn_name") or ref.get("fn_name") or ""))
    if "inputs" in ref and "outputs" in ref:
        return _io_pairs(ref, prompt, str(ref.get("fn_name") or ""))
    if "public_tests" in ref or "private_tests" in ref:
        return _code_contests(ref, prompt)
    if "public_test_cases" in ref or "private_test_cases" in ref:
        return _live_code_bench(ref, prompt)
    if "tests" in ref and ref["tests"] is not None:
        return _parse(ref["tests"], prompt, depth + 1)
    if "test_cases" in ref and ref["test_cases"] is not None:
        return _parse(ref["test_cases"], prompt, depth + 1)
    raise CodeTestsFormatError(f"no tests in a reference with fields {sorted(map(str, ref))[:12]}")


def _from_sequence(items: list[Any], prompt: str) -> CodeTests:
    if all(isinstance(x, str) for x in items):
        statements: list[str] = []
        setup: list[str] = []
        for item in items:
            found = _split_source(item)
            statements += found[0]
            setup += found[1]
        if not statements:
            raise CodeTestsFormatError("a list of strings must hold assert statements")
        return CodeTests.asserts(statements, setup="\n".join(setup), prompt=prompt)
    if all(isinstance(x, Mapping) and "input" in x and "output" in x for x in items):
        return _case_dicts(items, prompt, "")
    if all(isinstance(x, list | tuple) and len(x) == 2 for x in items):
        return CodeTests.stdio_cases(
            [(_text(i, "input"), _text(o, "output")) for i, o in items], prompt=prompt
        )
    raise CodeTestsFormatError("a list reference must hold assert strings, {input, output} objects or pairs")


def _split_source(source: str) -> tuple[list[str], list[str]]:
    """(top-level assert statements, other top-level statements) of a Python source."""
    tree = ast.parse(source)
    asserts: list[str] = []
    other: list[str] = []
    for node in tree.body:
        text = ast.get_source_segment(source, node) or ast.unparse(node)
        (asserts if isinstance(node, ast.Assert) else other).append(text)
    return asserts, other


def _check_call_target(tree: ast.Module) -> tuple[str, int] | None:
    """(entry point, index) of a top-level ``check(<name>)`` call, as some test files end with."""
    for index, node in enumerate(tree.body):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "check"
            and len(node.value.args) == 1
            and not node.value.keywords
        ):
            return ast.unparse(node.value.args[0]), index
    return None


# The module a test file imports the program under test from (KodCode: "from solution import f"): the program runs
# in the tests' namespace, so those names are already there.
_PROGRAM_MODULES = frozenset({"solution", "submission"})


def _without_program_imports(source: str) -> str:
    tree = ast.parse(source)
    drop = [
        n
        for n in tree.body
        if isinstance(n, ast.ImportFrom)
        and n.level == 0
        and n.module in _PROGRAM_MODULES
        and all(a.name != "*" and a.asname is None for a in n.names)
    ]
    if not drop:
        return source
    lines = source.splitlines()
    for node in reversed(drop):
        del lines[node.lineno - 1 : (node.end_lineno or node.lineno)]
    return "\n".join(lines) + "\n"


def _from_source(source: str, entry: str, prompt: str) -> CodeTests:
    source = _without_program_imports(source)
    tree = ast.parse(source)
    defines_check = any(isinstance(n, ast.FunctionDef) and n.name == "check" for n in tree.body)
    if defines_check:
        call = _check_call_target(tree)
        if call is not None:  # the harness calls check itself; drop the file's own call
            entry = entry or call[0]
            lines = source.splitlines()
            node = tree.body[call[1]]
            end = node.end_lineno or node.lineno
            source = "\n".join(lines[: node.lineno - 1] + lines[end:]) + "\n"
        if not entry:
            raise CodeTestsFormatError("a test defining check(candidate) needs an entry_point")
        return CodeTests.humaneval(source, entry, prompt=prompt)
    asserts, other = _split_source(source)
    if not asserts:
        checks = _test_units(tree)
        if not checks:
            raise CodeTestsFormatError(
                "test source has neither check(candidate), top-level asserts, test_* functions nor TestCase classes"
            )
        _refuse_what_the_jail_cannot_run(tree)
        return CodeTests.asserts(checks, setup=f"{source}\n{_UNIT_IMPORTS}", prompt=prompt)
    return CodeTests.asserts(asserts, setup="\n".join(other), prompt=prompt)


_UNIT_IMPORTS = "import io as _rlar_io\nimport unittest as _rlar_unittest"


def _test_units(tree: ast.Module) -> list[str]:
    """One check per test of a pytest-style or unittest test file: ``test_*`` functions without parameters or
    decorators (pass: it returns without raising) and the ``test*`` methods of ``TestCase`` classes (pass: the
    method's unittest run succeeds). Empty when the file has neither."""
    checks: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            if node.args.args or node.args.vararg or node.args.kwonlyargs or node.decorator_list:
                raise CodeTestsFormatError(
                    f"{node.name} takes fixtures or is decorated (pytest parametrize/fixtures are not run)"
                )
            checks.append(f"assert {node.name}() is None")
        elif isinstance(node, ast.ClassDef) and any(
            (isinstance(b, ast.Name) and b.id == "TestCase")
            or (isinstance(b, ast.Attribute) and b.attr == "TestCase")
            for b in node.bases
        ):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name.startswith("test"):
                    checks.append(
                        "assert _rlar_unittest.TextTestRunner(stream=_rlar_io.StringIO(), verbosity=0)"
                        f".run({node.name}({item.name!r})).wasSuccessful()"
                    )
    return checks


def _refuse_what_the_jail_cannot_run(tree: ast.Module) -> None:
    """Test files the checker cannot run faithfully raise ``CodeTestsFormatError``: imports beyond the standard
    library (the jail's interpreter has no third-party packages: every run would fail, right programs too), and
    ``unittest.mock`` (a patch applies in the checker's process, not in the program's)."""
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        for name in names:
            if name.split(".")[0] not in sys.stdlib_module_names:
                raise CodeTestsFormatError(
                    f"the tests import {name}, which the sandbox's interpreter does not have"
                )
            if name == "unittest.mock" or name.startswith("unittest.mock."):
                raise CodeTestsFormatError(
                    "the tests patch with unittest.mock, which acts on the checker, not the program"
                )


def _joined(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "\n".join(str(v) for v in value)
    return str(value)


def _io_pairs(io: Mapping[str, Any], prompt: str, fn_name: str) -> CodeTests:
    inputs, outputs = io.get("inputs"), io.get("outputs")
    if not isinstance(inputs, list | tuple) or not isinstance(outputs, list | tuple):
        raise CodeTestsFormatError("inputs and outputs must be lists")
    if len(inputs) != len(outputs) or not inputs:
        raise CodeTestsFormatError(
            f"inputs ({len(inputs)}) and outputs ({len(outputs)}) must pair up, non-empty"
        )
    if fn_name:
        calls = []
        for args, expected in zip(inputs, outputs, strict=True):
            calls.append((list(args) if isinstance(args, list | tuple) else [args], expected))
        return CodeTests.call_cases(calls, fn_name, prompt=prompt)
    return CodeTests.stdio_cases(
        [(_joined(i), _joined(o)) for i, o in zip(inputs, outputs, strict=True)], prompt=prompt
    )


def _code_contests(ref: Mapping[str, Any], prompt: str) -> CodeTests:
    pairs: list[tuple[str, str]] = []
    for key in ("public_tests", "private_tests"):
        pairs += _contest_pairs(ref.get(key), key)
    if not pairs:
        pairs = _contest_pairs(ref.get("generated_tests"), "generated_tests")
    if not pairs:
        raise CodeTestsFormatError("CodeContests record has no test cases")
    return CodeTests.stdio_cases(pairs, prompt=prompt)


def _contest_pairs(block: Any, key: str) -> list[tuple[str, str]]:
    if block is None:
        return []
    if isinstance(block, str):
        block = json.loads(block)
    if not isinstance(block, Mapping):
        raise CodeTestsFormatError(f"{key} must be an object with input and output lists")
    inputs, outputs = block.get("input") or [], block.get("output") or []
    if len(inputs) != len(outputs):
        raise CodeTestsFormatError(f"{key}: {len(inputs)} inputs but {len(outputs)} outputs")
    return [(str(i), str(o)) for i, o in zip(inputs, outputs, strict=True)]


def _live_code_bench(ref: Mapping[str, Any], prompt: str) -> CodeTests:
    meta = ref.get("metadata") or {}
    if isinstance(meta, str):
        meta = json.loads(meta) if meta.strip() else {}
    fn_name = str(meta.get("func_name") or "") if isinstance(meta, Mapping) else ""
    starter = str(ref.get("starter_code") or "")
    if fn_name and "class Solution" in starter:
        fn_name = f"Solution().{fn_name}"
    cases: list[Any] = []
    for key in ("public_test_cases", "private_test_cases"):
        block = ref.get(key)
        if isinstance(block, str) and block.strip():
            if block.lstrip()[:1] != "[":
                raise CodeTestsFormatError(
                    f"{key} is not JSON (compressed pickled tests are refused: unpickling can run code)"
                )
            block = json.loads(block)
        cases += list(block or [])
    if not cases:
        raise CodeTestsFormatError("LiveCodeBench record has no test cases")
    return _case_dicts(cases, prompt, fn_name)


def _case_dicts(cases: list[Any], prompt: str, fn_name: str) -> CodeTests:
    kinds = {str(c.get("testtype") or "stdin") for c in cases}
    if kinds == {"functional"}:
        if not fn_name:
            raise CodeTestsFormatError("functional test cases need metadata.func_name")
        calls = []
        for case in cases:
            args = [json.loads(line) for line in str(case["input"]).split("\n") if line.strip()]
            calls.append((args, json.loads(str(case["output"]))))
        return CodeTests.call_cases(calls, fn_name, compare="exact", prompt=prompt)
    if kinds != {"stdin"}:
        raise CodeTestsFormatError(f"mixed or unknown testtype values {sorted(kinds)}")
    return CodeTests.stdio_cases(
        [(_text(c["input"], "input"), _text(c["output"], "output")) for c in cases], prompt=prompt
    )
