"""The routing decision lifecycle as pure transitions (:mod:`rlar.routing.lifecycle`): no bus, no agent call."""

from __future__ import annotations

import dataclasses

import pytest

from bus.messages import ToolKind, ToolRef
from rlar.agent.base import AgentReply
from rlar.routing import Decision, RouteAnswer, RoutingQuery, lifecycle
from rlar.tools.base import ToolSpec

POLICY = lifecycle.Policy(wait_s=300.0, agent_retry_s=60.0, request_tools=True)
NO_REQUESTS = lifecycle.Policy(wait_s=300.0, agent_retry_s=60.0, request_tools=False)
REPLY = AgentReply(status="ok", backend="offline", model="rules-v1", prompt_hash="ph")
JUDGE = [ToolRef(tool="judge", version=2, weight=1.0, kind=ToolKind.JUDGE)]
NOW = 1000.0


def answer(*, ok: bool = True, none_fit: bool = False, tools: list[ToolRef] | None = None) -> RouteAnswer:
    return RouteAnswer(
        ok,
        tools or [],
        none_fit,
        0.8,
        "because",
        constraints=[{"rule": "x"}],
        provenance={"cost": {"usd": 0.01}},
    )


def decide(
    ans: RouteAnswer, policy: lifecycle.Policy = POLICY, fallback: list[ToolRef] | None = None
) -> lifecycle.Transition:
    return lifecycle.on_agent_answer(
        ans,
        signature="sig1",
        task="math",
        fields={"domain": "math"},
        reply=REPLY,
        probes=[{"tool": "t", "verdict": "eligible"}],
        fallback=fallback or [],
        policy=policy,
        now=NOW,
    )


def pending() -> Decision:
    t = decide(answer(none_fit=True))
    return t.decision


def made(name: str = "made", **params: object) -> ToolSpec:
    return ToolSpec(
        name=name,
        kind=ToolKind.RULE,
        description="made for sig1",
        version=3,
        params=dict(params),
        provenance={"origin": "synthesized", "author": "anthropic", "model": "m2", "request_id": "sig1.1000"},
        validation={"reason": "separates", "pairwise": 0.9},
    )


# -- the first decision --------------------------------------------------------------------------------
def test_an_answer_with_tools_is_routed_stored_counted_and_not_requested() -> None:
    tools = [ToolRef(tool="exact", version=1, weight=1.0, kind=ToolKind.RULE)]
    t = decide(answer(tools=tools))
    d = t.decision
    assert (d.state, d.tools, d.confidence, d.reason) == ("routed", tools, 0.8, "because")
    assert (d.backend, d.model, d.prompt_hash, d.cost, d.decided_at) == (
        "offline",
        "rules-v1",
        "ph",
        {"usd": 0.01},
        NOW,
    )
    assert d.fields == {"domain": "math"} and d.probes == [{"tool": "t", "verdict": "eligible"}]
    assert (t.store, t.count, t.request_tool, t.release) == (True, "decisions", False, False)
    assert d.expires_at == 0.0 and lifecycle.is_live(d, NOW + 1e9)


def test_no_tool_fits_with_requests_on_is_pending_with_a_request() -> None:
    t = decide(answer(none_fit=True))
    d = t.decision
    assert d.state == "pending" and d.tools == [] and d.constraints == [{"rule": "x"}]
    assert d.request_id == "sig1.1000" and d.requested_at == NOW
    assert t.request_tool and t.count == "decisions"
    assert not lifecycle.needs_fallback(answer(none_fit=True), POLICY)


def test_no_tool_fits_with_requests_off_falls_back_at_once() -> None:
    assert lifecycle.needs_fallback(answer(none_fit=True), NO_REQUESTS)
    t = decide(answer(none_fit=True), NO_REQUESTS, fallback=JUDGE)
    assert t.decision.state == "fallback" and t.decision.tools == JUDGE and not t.request_tool
    assert t.decision.reason == "no tool fits and synthesis is off; fallback to judge (because)"
    bare = decide(answer(none_fit=True), NO_REQUESTS).decision
    assert bare.state == "unroutable" and bare.expires_at == NOW + 300.0  # decided afresh after wait_s


def test_a_failed_agent_falls_back_in_memory_only_and_is_asked_again_later() -> None:
    failed = answer(ok=False)
    assert lifecycle.needs_fallback(failed, POLICY)
    t = decide(failed, fallback=JUDGE)
    assert t.decision.state == "fallback" and t.decision.tools == JUDGE
    assert not t.store and t.count == "" and t.decision.reason == "agent failed (because); fallback"
    assert lifecycle.is_live(t.decision, NOW + 59.0) and not lifecycle.is_live(t.decision, NOW + 60.0)
    with pytest.raises(lifecycle.NoFallback, match="declares no fallback"):
        decide(failed)


# -- selective routing -------------------------------------------------------------------------------
EXACT = [ToolRef(tool="exact_match", version=1, weight=1.0, kind=ToolKind.RULE)]


def calibrated(confidence: float, *, threshold: float | None = 0.9, none_fit: bool = False) -> RouteAnswer:
    return dataclasses.replace(
        answer(tools=[] if none_fit else EXACT, none_fit=none_fit),
        confidence=confidence,
        calibrated=True,
        why="nearest formats gsm8k (0.41); reference structure list:number",
        threshold=threshold,
    )


def test_a_calibrated_answer_below_the_threshold_goes_to_the_fallback_in_memory_only() -> None:
    ans = calibrated(0.42)
    assert lifecycle.unsure(ans, POLICY) == 0.9 and lifecycle.needs_fallback(ans, POLICY)
    t = decide(ans, fallback=JUDGE)
    d = t.decision
    assert (d.state, d.tools, d.confidence) == ("fallback", JUDGE, 0.42) and d.why == ans.why
    assert not t.store and t.count == "decisions_unsure" and not t.request_tool
    assert d.reason.startswith("low confidence 0.42 < threshold 0.90: fallback to judge;")
    assert 'in [router]: fallback."math" = [{ tool = "exact_match" }]' in d.reason
    assert "nearest formats gsm8k (0.41)" in d.reason and d.reason.endswith(
        "it would have chosen exact_match"
    )
    assert lifecycle.is_live(d, NOW + 1e9), "kept for the life of this router, decided afresh by the next"


def test_without_a_fallback_an_unsure_kind_abstains_and_says_so() -> None:
    t = decide(calibrated(0.42))
    d = t.decision
    assert d.state == "abstain" and d.tools == [] and not t.store and lifecycle.delivery(d) == "route"
    assert "no fallback declared: its samples ABSTAIN" in d.reason


def test_only_calibrated_answers_below_the_threshold_are_unsure() -> None:
    assert lifecycle.unsure(calibrated(0.95), POLICY) is None
    assert lifecycle.unsure(dataclasses.replace(calibrated(0.42), calibrated=False), POLICY) is None
    assert lifecycle.unsure(dataclasses.replace(calibrated(0.42), ok=False), POLICY) is None
    assert lifecycle.unsure(calibrated(0.42, threshold=None), POLICY) is None
    # "No tool fits" gives no reward of its own: it takes its own path (a tool request, else the fallback).
    assert lifecycle.unsure(calibrated(0.42, none_fit=True), POLICY) is None
    assert decide(calibrated(0.42, none_fit=True)).decision.state == "pending"
    assert decide(calibrated(0.42, none_fit=True), NO_REQUESTS).decision.state == "unroutable"
    strict = dataclasses.replace(POLICY, min_confidence=0.99)
    assert lifecycle.unsure(calibrated(0.95), strict) == 0.99, "the configured threshold wins"
    lax = dataclasses.replace(POLICY, min_confidence=0.3)
    t = decide(calibrated(0.42), lax)
    assert t.decision.state == "routed" and t.count == "decisions" and t.decision.confidence == 0.42


def test_the_model_agents_answer_says_why_it_was_asked() -> None:
    model = dataclasses.replace(answer(tools=JUDGE), reason="a judge reads free text")
    out = lifecycle.escalated(model, calibrated(0.42), 0.9)
    assert out.tools == JUDGE and not out.calibrated and lifecycle.unsure(out, POLICY) is None
    assert out.reason.startswith(
        "a judge reads free text [asked the model agent: offline confidence 0.42 < 0.90"
    )
    assert decide(out).decision.state == "routed"


def test_the_pin_line_is_toml_under_router() -> None:
    import tomllib

    line = lifecycle.pin_line('qa "hard"', "exact_match")
    assert tomllib.loads(line) == {"fallback": {'qa "hard"': [{"tool": "exact_match"}]}}


# -- waiting ----------------------------------------------------------------------------------------------
def test_a_prompt_of_a_pending_kind_is_held_until_the_wait_is_over() -> None:
    d = pending()
    assert lifecycle.prompt_action(d, NOW + 299.0, POLICY) == "hold"
    assert not lifecycle.overdue(d, NOW + 299.0, POLICY)
    assert lifecycle.prompt_action(d, NOW + 300.0, POLICY) == "expire"
    assert lifecycle.overdue(d, NOW + 300.0, POLICY)


def test_prompts_of_decided_kinds_are_routed_and_unroutable_ones_dead_lettered() -> None:
    routed = decide(answer(tools=JUDGE)).decision
    assert lifecycle.prompt_action(routed, NOW, POLICY) == "route"
    gone = lifecycle.fall_back(pending(), "no tool registered within 300s", [], POLICY, NOW)
    assert gone.state == "unroutable" and lifecycle.prompt_action(gone, NOW, POLICY) == "dead_letter"
    abstain = lifecycle.fall_back(
        pending(), "synthesis failed: refused: no verifier checks 2", [], POLICY, NOW
    )
    assert abstain.state == "abstain" and lifecycle.delivery(abstain) == "route"
    assert abstain.expires_at == 0.0 and abstain.reason.endswith(
        "no fallback declared: its samples abstain (because)"
    )


def test_the_end_of_a_wait_falls_back_counts_the_new_state_and_releases_the_held_prompts() -> None:
    d = pending()
    t = lifecycle.on_wait_over(d, "no tool registered within 300s", JUDGE, POLICY, NOW + 300)
    new = t.decision
    assert (new.state, new.tools, new.request_id, new.requested_at) == ("fallback", JUDGE, d.request_id, NOW)
    assert (t.count, t.release, t.store) == ("decisions_fallback", True, True)
    assert new.decided_at == NOW + 300 and new.expires_at == 0.0 and new.confidence == 0.0
    assert lifecycle.on_wait_over(d, "x", [], POLICY, NOW).count == "decisions_unroutable"


def test_a_synthesis_failure_ends_only_the_wait_of_its_own_request() -> None:
    d = pending()
    assert lifecycle.synthesis_failed(d, "sig1.1000")
    assert not lifecycle.synthesis_failed(d, "sig1.999")
    assert not lifecycle.synthesis_failed(None, "sig1.1000")
    assert not lifecycle.synthesis_failed(decide(answer(tools=JUDGE)).decision, "")


# -- a tool arrives ---------------------------------------------------------------------------------------
def test_a_tool_is_made_for_a_decision_that_its_provenance_or_params_name() -> None:
    d = pending()
    assert lifecycle.made_for(made(), d)
    other = made()
    other.provenance["request_id"] = "elsewhere"
    assert not lifecycle.made_for(other, d)
    by_sig = ToolSpec(name="s", kind=ToolKind.RULE, description="d", params={"signature": "sig1"})
    assert lifecycle.made_for(by_sig, d)


def test_the_made_tool_routes_alone_or_in_canary_beside_the_fallback() -> None:
    d = pending()
    t = lifecycle.on_tool_made(d, made(), shadow_beside=None, now=NOW + 5)
    new = t.decision
    assert new.state == "synthesized" and [(x.tool, x.version, x.weight) for x in new.tools] == [
        ("made", 3, 1.0)
    ]
    assert new.reason == "tool made v3 made for request sig1.1000: separates" and new.confidence == 0.9
    assert (new.backend, new.model, new.prompt_hash) == ("anthropic", "m2", "ph")
    assert (t.count, t.release) == ("synthesized_routes", True)
    canary = lifecycle.on_tool_made(d, made(), shadow_beside=JUDGE, now=NOW + 5).decision
    assert canary.state == "canary" and [(x.tool, x.weight) for x in canary.tools] == [
        ("judge", 1.0),
        ("made", 0.0),
    ]


def test_a_tool_the_probes_refuse_leaves_the_kind_on_its_fallback_with_the_verdicts() -> None:
    d = pending()
    verdicts = [{"tool": "made", "version": 3, "verdict": "refused"}]
    t = lifecycle.on_tool_refused(d, made(), "made v3 (echo 1)", verdicts, JUDGE, POLICY, NOW + 5)
    assert t.decision.state == "fallback" and t.decision.probes == verdicts and t.release
    assert t.decision.reason.startswith(
        "tool made v3 made for request sig1.1000 is not eligible: hack probes got its maximum (made v3 (echo 1)); "
    )
    assert t.decision.refused() == ["made v3"] and t.count == "decisions_fallback"


def test_which_decisions_an_event_concerns() -> None:
    waiting = pending()
    fell = lifecycle.on_wait_over(pending(), "x", JUDGE, POLICY, NOW).decision
    failed = decide(answer(ok=False), fallback=JUDGE).decision  # a fallback without a request
    canary = lifecycle.on_tool_made(waiting, made(), shadow_beside=JUDGE, now=NOW).decision
    routed = decide(answer(tools=[ToolRef(tool="exact", version=1, weight=1.0, kind=ToolKind.RULE)])).decision
    every = [waiting, fell, failed, canary, routed]
    assert lifecycle.awaiting_tool(every) == [waiting, fell]
    assert lifecycle.in_canary_for(every, "made", 3) == [canary]
    assert lifecycle.in_canary_for(every, "made", 4) == []
    assert lifecycle.using(every, "judge", None) == [fell, failed, canary]
    assert lifecycle.using(every, "judge", 1) == []


# -- the quarantine policy ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("builtin", "kind", "canary_passed", "quarantine_builtins", "expected"),
    [
        (True, "error_rate", False, False, "warn"),  # built-ins only warn by default
        (True, "collapsed", False, True, "quarantine"),
        (False, "error_rate", False, False, "quarantine"),
        (False, "all_max", True, False, "quarantine"),  # a passed canary excuses only a collapse
        (False, "collapsed", True, False, "warn"),  # the policy settled
        (False, "collapsed", False, False, "quarantine"),
    ],
)
def test_a_suspect_tool_is_quarantined_unless_built_in_or_settled(
    builtin: bool, kind: str, canary_passed: bool, quarantine_builtins: bool, expected: str
) -> None:
    got = lifecycle.suspect_action(
        builtin=builtin, kind=kind, canary_passed=canary_passed, quarantine_builtins=quarantine_builtins
    )
    assert got == expected


def test_the_canary_is_read_only_for_a_collapse_of_a_made_tool() -> None:
    assert lifecycle.needs_canary_check(builtin=False, kind="collapsed")
    assert not lifecycle.needs_canary_check(builtin=True, kind="collapsed")
    assert not lifecycle.needs_canary_check(builtin=False, kind="error_rate")


# -- what the actions send ------------------------------------------------------------------------------
def test_the_announcement_carries_the_state_in_its_reason_and_flags_a_fallback() -> None:
    fell = lifecycle.on_wait_over(pending(), "no tool registered within 300s", JUDGE, POLICY, NOW).decision
    msg = lifecycle.announcement(fell)
    assert msg.signature == "sig1" and msg.task == "math" and msg.tools == JUDGE and msg.fallback
    assert msg.reason.startswith("[fallback] no tool registered within 300s; fallback to judge")
    routed = lifecycle.announcement(decide(answer(tools=JUDGE)).decision)
    assert not routed.fallback and routed.reason == "[routed] because" and routed.backend == "offline"


def test_the_tool_request_sends_the_held_queries_as_examples_or_the_deciding_one() -> None:
    d = pending()
    q = RoutingQuery(
        task="math", query="2+2?", reference="4", domain="math", description="", data_source="gsm"
    )
    held = [RoutingQuery(task="math", query=f"{i}+1?", reference=str(i + 1)) for i in range(2)]
    req = lifecycle.tool_request(d, q, held)
    assert (req.request_id, req.signature, req.task, req.description) == ("sig1.1000", "sig1", "math", "2+2?")
    assert [e["query"] for e in req.examples] == ["0+1?", "1+1?"]
    assert req.constraints == {"rules": [{"rule": "x"}], "reason": "because", "data_source": "gsm"}
    alone = lifecycle.tool_request(d, q, [])
    assert alone.examples == [{"query": "2+2?", "reference": "4", "metadata": {}}]
