"""The offline backend: what it answers, the routing rules it applies, and honest provenance."""

from __future__ import annotations

import pytest

from rlar.agent.base import AgentRequest, AgentTool, OfflineAgentConfig
from rlar.agent.offline import OfflineAgent
from rlar.routing import (
    HealthPolicy,
    HealthWatch,
    OfflineRouter,
    RoutingQuery,
    assess,
    parse_route,
    routing_request,
    tool_ready,
    usable_candidates,
)  # fmt: skip
from rlar.synthesis.compose import SynthesisTask, compose
from rlar.synthesis.drafting import parse_draft, synthesis_request
from rlar.tools import builtin_specs
from rlar.tools.synthesized import synthesized_spec

BULLETS = "Answer must contain exactly three bullet points, each under ten words."


@pytest.fixture(scope="module")
def agent() -> OfflineAgent:
    return OfflineAgent(OfflineAgentConfig())


@pytest.fixture(autouse=True)
def no_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


def q(**fields: object) -> RoutingQuery:
    base: dict[str, object] = {"task": "t", "query": "?"}
    return RoutingQuery.from_record({**base, **fields})


async def route(
    agent: OfflineAgent, query: RoutingQuery, specs: list | None = None
) -> tuple[list[str], bool, str]:
    specs = specs if specs is not None else builtin_specs()
    reply = await agent.ask(routing_request(query, specs))
    ans = parse_route(reply, specs)
    assert ans.ok and reply.model == "offline:all-MiniLM-L6-v2+rules" and reply.usage.input_tokens == 0
    return [t.tool for t in ans.tools], ans.none_fit, ans.reason


async def test_clear_cases_route_by_reference_shape_and_task(agent: OfflineAgent) -> None:
    code = q(query="def add(a, b):", reference={"tests": "def check(c): pass", "entry_point": "add"},
             description="Complete the function.")  # fmt: skip
    assert (await route(agent, code))[0] == ["code_tests"]
    gsm = q(
        query="Tom has 3 apples and buys 4 more. How many?",
        reference="3+4 = 7 #### 7",
        task_type="word_problem",
    )
    assert (await route(agent, gsm))[0] == ["math_verify"]
    mcq = q(query="Which is largest? A) 1 B) 9", reference="B", answer_format="choice_letter")
    assert (await route(agent, mcq))[0][0] in ("exact_match", "normalized_match")


async def test_reference_free_constraints_without_a_checker_mean_no_tool_fits(agent: OfflineAgent) -> None:
    tools, none_fit, reason = await route(agent, q(query="How to focus?", description=BULLETS))
    assert none_fit and tools == [] and "bullets, words" in reason


async def test_a_judge_without_an_endpoint_is_not_offered(
    agent: OfflineAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge = next(s for s in builtin_specs() if s.name == "llm_judge")
    assert tool_ready(judge) == (False, "no judge endpoint configured")
    chat = q(
        query="Write a poem about autumn.", description="Open-ended creative writing.", task_type="open_chat"
    )
    ready, dropped = usable_candidates(builtin_specs(), require_ready=True)
    assert dropped == {
        "llm_judge": "no judge endpoint configured",
        "reward_model": "no reward-model checkpoint configured",
    }
    tools, none_fit, _ = await route(agent, chat, ready)
    assert none_fit and tools == [], (
        "no reference, no constraint, no judge, no reward model: nothing can score it"
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-x")
    assert (await route(agent, chat, usable_candidates(builtin_specs(), require_ready=True)[0]))[0] == [
        "llm_judge"
    ]


async def test_a_synthesised_tool_serves_only_its_own_kind_of_query(agent: OfflineAgent) -> None:
    task = SynthesisTask(description=BULLETS, examples=[{"query": "x"}])
    spec = synthesized_spec(
        name="synth-bullets", description="three short bullets", code=compose(task).code, score_range=(0, 1),
        task_types=["instruction_following"], answer_formats=["bullets"],
        params={"constraints": task.all_constraints()}, provenance={"origin": "synthesized"}, validation={},
    )  # fmt: skip
    specs = [*builtin_specs(), spec]
    assert (await route(agent, q(query="Tips?", description=BULLETS), specs))[0] == ["synth-bullets"]
    other = q(query="Tips?", description="Give exactly five bullet points.")
    tools, none_fit, _ = await route(agent, other, specs)
    assert none_fit and "synth-bullets" not in tools


async def test_only_tools_with_an_offline_handler_are_answered(agent: OfflineAgent) -> None:
    tool = AgentTool("write_poem", "Write a poem", {"type": "object", "properties": {}})
    reply = await agent.ask(AgentRequest(system="s", messages=[{"role": "user", "content": "hi"}], tools=[tool],
                                         tool_choice="write_poem"))  # fmt: skip
    assert reply.status == "unsupported" and not reply.tool_calls
    draft_reply = await agent.ask(
        synthesis_request(SynthesisTask(description=BULLETS, examples=[{"query": "x"}]))
    )
    draft, why, _ = parse_draft(draft_reply)
    assert draft is not None and not why and "no language model wrote this code" in draft.code
    assert agent.metrics()["status_unsupported"] == 1 and agent.metrics()["input_tokens"] == 0


def test_the_rules_ablation_needs_no_embedding_model() -> None:
    router = OfflineRouter(None, mode="rules", require_ready=False)
    m = router.decide(
        q(query="12+7=", reference="19", task_type="arithmetic", answer_format="number"), builtin_specs()
    )
    assert [t["name"] for t in m.tools] == ["math_verify"] and not m.none_fit


def test_health_flags_error_spikes_and_collapse_in_the_window_since_the_last_look() -> None:
    p = HealthPolicy(min_calls=10)
    assert not assess({"calls": 5, "error": 5}, p).suspect
    assert "error rate" in assess({"calls": 20, "error": 6, "hist": [14] + [0] * 9}, p).reason
    assert "all max" in assess({"calls": 20, "ok": 20, "hist": [0] * 9 + [20]}, p).reason
    assert "collapsed" in assess({"calls": 20, "ok": 20, "hist": [0, 0, 0, 20] + [0] * 6}, p).reason
    assert not assess({"calls": 20, "ok": 20, "hist": [10] + [0] * 8 + [10]}, p).suspect
    watch = HealthWatch(p)
    healthy = {"calls": 100, "ok": 100, "error": 0, "hist": [50] + [0] * 8 + [50]}
    assert not watch.observe("t", 1, healthy).suspect
    broke = {"calls": 130, "ok": 100, "error": 30, "hist": [50] + [0] * 8 + [50]}
    verdict = watch.observe("t", 1, broke)
    assert verdict.suspect and verdict.window["calls"] == 30 and "100%" in verdict.reason
