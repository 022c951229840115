"""The tool contract: specs round-trip and hash, finalize's type and range rules, exceptions as errors, the
factory and the built-in list."""

from __future__ import annotations

import math

import msgpack
import numpy as np
import pytest

from rlar.tools import (
    BUILTIN_IMPLS,
    ToolInput,
    ToolKind,
    ToolResult,
    ToolSpec,
    builtin_specs,
    compute_content_hash,
    finalize,
    make_tool,
)
from rlar.tools.base import RewardTool, check_result, check_score, exception_result, resolve_tool_class

SPEC = ToolSpec(name="t", kind=ToolKind.RULE, description="d", score_range=(0.0, 1.0))


def test_every_builtin_spec_round_trips_through_msgpack_and_keeps_its_hash():
    specs = builtin_specs()
    assert [s.name for s in specs] == list(BUILTIN_IMPLS)
    for spec in specs:
        wire = msgpack.unpackb(msgpack.packb(spec.to_dict()), raw=False)
        back = ToolSpec.from_dict(wire)
        assert back == spec
        assert back.content_hash == compute_content_hash(back) and len(back.content_hash) == 64


def test_builtin_specs_describe_themselves_for_the_router():
    kinds = {s.name: s.kind for s in builtin_specs()}
    assert kinds["math_verify"] is ToolKind.RULE and kinds["bleu2"] is ToolKind.METRIC
    assert kinds["code_tests"] is ToolKind.SANDBOX and kinds["reward_model"] is ToolKind.MODEL
    assert kinds["llm_judge"] is ToolKind.JUDGE
    for spec in builtin_specs():
        assert len(spec.description) > 80 and spec.task_types and spec.answer_formats
        assert spec.provenance["origin"] == "built-in"


def test_content_hash_changes_with_params_and_code_but_not_provenance():
    spec = next(s for s in builtin_specs() if s.name == "format_rules")
    changed = spec.replace(params={**spec.params, "max_words": 10}).sealed()
    assert changed.content_hash != spec.content_hash
    relabelled = spec.replace(provenance={"origin": "retrieved", "author": "x", "source": "y"}).sealed()
    assert relabelled.content_hash == spec.content_hash
    synthesised = spec.replace(impl="rlar.tools.rules:FormatRulesTool", code="def f(): pass").sealed()
    assert (
        synthesised.content_hash
        != spec.replace(impl="rlar.tools.rules:FormatRulesTool").sealed().content_hash
    )


def test_spec_rejects_bad_ranges_and_unknown_fields():
    with pytest.raises(ValueError):
        ToolSpec(name="x", kind=ToolKind.RULE, description="", score_range=(1.0, 0.0))
    with pytest.raises(ValueError):
        ToolSpec(name="x", kind="nonsense", description="")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown ToolSpec fields"):
        ToolSpec.from_dict({**SPEC.to_dict(), "surprise": 1})


@pytest.mark.parametrize(
    ("raw", "status", "score", "reason_part"),
    [
        (0.5, "ok", 0.5, ""),
        (1, "ok", 1.0, ""),
        (True, "error", None, "bool"),
        (1.0 + 1e-9, "ok", 1.0, ""),  # float noise is clipped
        (-1e-9, "ok", 0.0, ""),
        (1.01, "error", None, "outside declared range"),
        (1e9, "error", None, "outside declared range"),
        (float("nan"), "error", None, "NaN"),
        (float("inf"), "error", None, "inf"),
        ("0.7x", "error", None, "not a number"),
        (None, "error", None, "not a number"),
    ],
)
def test_finalize_clips_only_float_noise_and_reports_the_rest(raw, status, score, reason_part):
    res = finalize(SPEC, raw)
    assert res.status == status and res.score == score
    assert reason_part in res.reason


@pytest.mark.parametrize(
    ("raw", "score"),
    [
        (0.25, 0.25),
        (1, 1.0),
        (0, 0.0),
        (np.float32(0.5), 0.5),
        (np.float64(0.75), 0.75),
        (np.int64(1), 1.0),
        (np.float16(0.125), 0.125),
    ],
)
def test_ints_floats_and_numpy_scalars_are_scores(raw, score):
    assert check_score(raw) == score
    res = finalize(SPEC, raw)
    assert res.status == "ok" and res.score == score and type(res.score) is float


@pytest.mark.parametrize(
    ("raw", "reason_part"),
    [
        ("0.7", "score is a str ('0.7')"),
        ("1", "strings are never parsed"),
        (b"0.7", "bytes"),
        (bytearray(b"1"), "bytearray"),
        (True, "score is a bool (True)"),
        (False, "return float(...)"),
        (np.bool_(True), "bool"),
        (None, "score is None"),
        ([0.5], "score is a list"),
        (np.array([0.5]), "ndarray"),
        ({"score": 0.5}, "dict"),
        (float("nan"), "NaN"),
        (np.float64("inf"), "inf"),
        (-math.inf, "-inf"),
        (10**400, "cannot be a float"),
    ],
)
def test_strings_bytes_bools_none_containers_and_non_finite_values_are_refused_with_a_reason(
    raw, reason_part
):
    assert isinstance(check_score(raw), str)
    res = finalize(SPEC, raw)
    assert res.status == "error" and res.score is None
    assert reason_part in res.reason


def test_a_string_score_from_elsewhere_is_refused_not_coerced():
    res = check_result(SPEC, ToolResult("ok", "0.7"))  # type: ignore[arg-type]
    assert res.status == "error" and "str" in res.reason
    with pytest.raises(ValueError, match="score is a str"):
        ToolResult.from_dict({"status": "ok", "score": "0.7"})
    with pytest.raises(ValueError, match="bool"):
        ToolResult.from_dict({"status": "ok", "score": True})


class _Raises(RewardTool):
    async def _score(self, inp: ToolInput) -> float:
        return _user_helper(inp.response)


def _user_helper(text: str) -> float:
    raise ValueError(f"boom on {text}\nsecond line")


async def test_an_exception_is_an_error_naming_its_type_message_and_the_line_that_raised():
    res = await _Raises(SPEC).score(ToolInput("q", "r"))
    assert res.status == "error" and res.score is None
    assert res.reason.startswith("raised ValueError: boom on r (at test_tools_base.py:")
    assert res.reason.endswith(" in _user_helper)")
    assert res.details["exception"] == "ValueError"
    tb = res.details["traceback"].splitlines()
    assert any("_user_helper" in line for line in tb) and tb[-2:] == ["ValueError: boom on r", "second line"]
    assert not any("rlar/tools/base.py" in line for line in tb)  # our wrapper frames are left out


def test_a_long_traceback_keeps_its_first_lines_and_the_exception():
    def recurse(n: int) -> None:
        if n == 0:
            raise RecursionError("deep")
        recurse(n - 1)

    try:
        recurse(30)
    except RecursionError as exc:
        res = exception_result(exc)
    lines = res.details["traceback"].splitlines()
    assert len(lines) == 12 and lines[-1] == "RecursionError: deep" and "recurse(30)" in lines[1]


def test_finalize_respects_a_declared_non_unit_range():
    spec = SPEC.replace(score_range=(-5.0, 5.0))
    assert finalize(spec, -4.5).score == -4.5
    assert finalize(spec, 5.5).status == "error"


def test_check_result_catches_an_ok_result_that_bypassed_finalize():
    assert check_result(SPEC, ToolResult("ok", math.nan)).status == "error"
    abstain = check_result(SPEC, ToolResult("abstain", 0.3, "why"))
    assert abstain.status == "abstain" and abstain.score is None


def test_result_and_input_round_trip_through_msgpack():
    res = ToolResult("ok", 0.25, "fine", {"k": [1, 2]}, 0.01)
    assert ToolResult.from_dict(msgpack.unpackb(msgpack.packb(res.to_dict()), raw=False)) == res
    inp = ToolInput("q", "r", ["a", "b"], {"task": "math"})
    assert ToolInput.from_dict(msgpack.unpackb(msgpack.packb(inp.to_dict()), raw=False)) == inp
    with pytest.raises(ValueError):
        ToolResult.from_dict({"status": "maybe"})


def test_make_tool_builds_rule_tools_from_specs_and_refuses_unknown_ones():
    spec = next(s for s in builtin_specs() if s.name == "exact_match")
    assert type(make_tool(spec)).__name__ == "ExactMatchTool"
    renamed = spec.replace(name="gsm8k_exact", impl="exact_match").sealed()
    assert type(make_tool(renamed)).__name__ == "ExactMatchTool"
    with pytest.raises(ValueError, match="unknown built-in"):
        make_tool(SPEC.replace(name="no_such_tool"))
    with pytest.raises(ValueError, match="allowed prefix"):
        resolve_tool_class(SPEC.replace(impl="os:system"))


async def test_a_tool_that_raises_reports_the_exception_instead_of_raising():
    spec = next(s for s in builtin_specs() if s.name == "format_rules")
    tool = make_tool(spec.replace(params={"min_words": 1}))
    res = await tool.score(ToolInput("q", None, None))  # type: ignore[arg-type]
    assert res.status == "error" and "AttributeError" in res.reason


async def test_the_code_tool_reads_a_sandbox_pass_fraction_by_the_same_type_rule():
    from rlar.tools.code import sandbox_result_fields

    assert sandbox_result_fields({"status": "failed", "pass_fraction": np.float64(0.5)})[2] == 0.5
    with pytest.raises(TypeError, match=r"pass_fraction: score is a str \('0.7'\)"):
        sandbox_result_fields({"status": "failed", "pass_fraction": "0.7"})

    async def run_tests(program: str, tests: object, **kwargs: object) -> dict[str, object]:
        return {"status": "failed", "pass_fraction": "0.7"}  # a runner that sends text

    spec = next(s for s in builtin_specs() if s.name == "code_tests")
    tool = make_tool(spec, run_tests=run_tests)
    res = await tool.score(ToolInput("write f", "def f():\n    return 1\n", ["assert f() == 1"]))
    assert res.status == "error" and res.score is None and "score is a str ('0.7')" in res.reason
