"""The tool contract: specs round-trip and hash, finalize's range rules, the factory and the built-in list."""

from __future__ import annotations

import math

import msgpack
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
from rlar.tools.base import check_result, resolve_tool_class

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
        (True, "ok", 1.0, ""),
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
