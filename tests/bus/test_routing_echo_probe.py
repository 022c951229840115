"""The echo probe, run by the tool executor in worker processes: a format rule is refused only where the echoed
prompt already meets it."""

from __future__ import annotations

from tests.support.routing import SPECS, format_chat


async def test_the_echo_probe_refuses_format_rules_only_where_the_echoed_prompt_meets_the_rule() -> None:
    from rlar.routing.probes import ProbePolicy, Prober
    from rlar.tools.executor import ToolExecutor

    spec = next(s for s in SPECS if s.name == "format_rules")
    commas = [
        format_chat(t, [{"rule": "no_commas"}])
        for t in ("Describe rain without using commas.", "Explain tides without any commas.")
    ]
    bullets = [
        format_chat(t, [{"rule": "bullets", "min": 3, "max": 3}])
        for t in (
            "Give exactly 3 bullet points on how to save water.",
            "List 3 uses of salt as exactly 3 bullet points.",
        )
    ]
    async with ToolExecutor(timeout_s=10) as ex:
        prober = Prober(ProbePolicy(), ex)
        echoed = await prober.check("sig-commas", commas, spec)
        kept = await prober.check("sig-bullets", bullets, spec)
    assert echoed.refused and "echo" in echoed.maxed, echoed.summary()
    assert kept.verdict == "eligible", kept.summary()
