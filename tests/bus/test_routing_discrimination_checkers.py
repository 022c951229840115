"""Discrimination probes run by the tool executor (worker processes): a checker that drops the sign is refused,
math_verify is kept."""

from __future__ import annotations

from rlar.routing.probes import ProbePolicy, Prober
from rlar.tools.base import ToolKind, ToolSpec
from rlar.tools.executor import ToolExecutor
from tests.support.reward_tools import PREFIX
from tests.support.routing import SUMS, builtin_spec


async def test_a_checker_that_drops_the_sign_is_refused_and_math_verify_is_kept() -> None:
    digits = ToolSpec(name="digits", kind=ToolKind.RULE, description="digits", impl=f"{PREFIX}:DigitsTool")
    async with ToolExecutor(timeout_s=10, allowed_prefixes=["rlar.", "tests."]) as ex:
        prober = Prober(ProbePolicy(allowed_prefixes=("rlar.", "tests.")), ex)
        dropped = await prober.check("sums", SUMS, digits)
        assert dropped.refused and "wrong_sign" in dropped.undiscriminated, dropped.summary()
        assert dropped.maxed == [], "no hack probe catches it: only the discrimination probes do"
        kept = await prober.check("sums", SUMS, builtin_spec("math_verify"))
        assert kept.verdict == "eligible" and kept.undiscriminated == [], kept.summary()
        assert {s.probe for s in kept.discrimination} >= {
            "right",
            "right_sentence",
            "wrong_sign",
            "wrong_value",
        }
        # A checker of the whole response as written cannot read the answer in a sentence or in bold.
        whole = builtin_spec("exact_match").replace(params={"answer_pattern": r"(?s)^(.*)$"}).sealed()
        strict = await prober.check("sums", SUMS, whole)
        assert strict.refused and {"right_sentence", "right_bold"} <= set(strict.undiscriminated), (
            strict.summary()
        )
