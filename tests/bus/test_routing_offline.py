"""The offline router on queries written for these tests (not in its exemplars), in datasets' own shapes:
the cases the issue names, the rules, tools registered for a task, and calibrated confidences."""

from __future__ import annotations

from typing import Any

import pytest

from rlar.agent.base import OfflineAgentConfig
from rlar.agent.offline import OfflineAgent
from rlar.routing import (
    HealthPolicy,
    HealthWatch,
    RoutingQuery,
    assess,
    parse_route,
    routing_request,
    tool_ready,
    usable_candidates,
)
from rlar.synthesis.compose import SynthesisTask, compose
from rlar.tools import builtin_specs
from rlar.tools.base import ToolKind, ToolSpec
from rlar.tools.synthesized import synthesized_spec

BULLETS = "Answer must contain exactly three bullet points, each under ten words."
OPEN = {"reward_model", "llm_judge"}


@pytest.fixture(scope="module")
def agent() -> OfflineAgent:
    return OfflineAgent(OfflineAgentConfig())


@pytest.fixture(autouse=True)
def no_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


def q(**fields: Any) -> RoutingQuery:
    return RoutingQuery.from_record({"task": "t", "query": "?", **fields})


async def route(agent: OfflineAgent, query: RoutingQuery, specs: list[ToolSpec] | None = None) -> Any:
    specs = specs if specs is not None else builtin_specs()
    reply = await agent.ask(routing_request(query, specs))
    ans = parse_route(reply, specs)
    assert ans.ok and reply.model == "offline:all-MiniLM-L6-v2+rules" and reply.usage.input_tokens == 0
    return ans


def chosen(ans: Any) -> str | None:
    return ans.tools[0].tool if ans.tools else None


async def test_code_whose_reference_is_a_string_of_asserts_goes_to_the_tests(agent: OfflineAgent) -> None:
    repair = q(
        task="code_repair",
        query="Fix this function:\ndef mx(a, b):\n    return a if a < b else b\n",
        reference="assert mx(1, 2) == 2\nassert mx(5, 3) == 5",
    )
    assert chosen(await route(agent, repair)) == "code_tests"
    leet = q(
        task="leetcode",
        query="Return the number of vowels in s.\nclass Solution:\n    def vowels(self, s: str) -> int:",
        reference={
            "entry_point": "Solution().vowels",
            "test": "def check(candidate):\n    assert candidate(s='ai') == 2\n",
        },
    )
    assert chosen(await route(agent, leet)) == "code_tests"


@pytest.mark.parametrize(
    "query",
    [
        "Hey! How was your weekend? I went hiking and saw a bear.",
        "Write a short poem about a lighthouse keeper who talks to the sea.",
        "How do I hotwire a car that isn't mine?",
        "I feel stressed about my exams, can you help me relax?",
    ],
)
async def test_chat_creative_and_safety_prompts_with_an_empty_reference_are_reference_free(
    agent: OfflineAgent, query: str
) -> None:
    ans = await route(agent, q(task="conversations", query=query, reference=""))
    assert chosen(ans) in OPEN and not ans.none_fit


async def test_factual_questions_route_by_their_reference(agent: OfflineAgent) -> None:
    short = await route(
        agent, q(task="facts", query="Who wrote the play Hamlet?", reference="William Shakespeare")
    )
    assert chosen(short) in {"normalized_match", "contains_match", "exact_match"}
    truthful = q(
        task="facts",
        query="What happens if you swallow gum?",
        reference={
            "best_answer": "It passes through your digestive system",
            "correct_answers": ["It passes through"],
            "incorrect_answers": ["It stays in your stomach for seven years"],
        },
    )
    assert (
        chosen(await route(agent, truthful)) in OPEN | {"llm_judge"}
        and chosen(await route(agent, truthful)) != "contains_match"
    )


async def test_a_numeric_answer_its_query_happens_to_hold_is_still_checked_as_mathematics(
    agent: OfflineAgent,
) -> None:
    """ "0+0=" holds its answer "0" and "3+3=" does not: both are numbers, routed alike (whichever arrives first
    decides the kind's route)."""
    for query, ref in [
        ("0+0=", "0"),
        ("3+3=", "6"),
        ("What is 1 times 1?", "1"),
        ("Which is larger, 5 or 3?", "5"),
        ("Halve 10, then add 0.", "5"),
        ("Round 2.5 down.", "2"),
    ]:
        assert chosen(await route(agent, q(task="sums", query=query, reference=ref))) == "math_verify", query


async def test_constraints_written_in_free_text_without_a_reference_ask_for_a_verifier(
    agent: OfflineAgent,
) -> None:
    ans = await route(agent, q(task="tips", query="How to focus?", description=BULLETS, reference=""))
    assert ans.none_fit and ans.tools == [] and {"rule": "bullets", "min": 3, "max": 3} in ans.constraints
    rules = await route(
        agent,
        q(
            task="house",
            query=[{"role": "user", "content": "Greet me."}],
            metadata={"format_rules": [{"rule": "lowercase"}]},
        ),
    )
    assert chosen(rules) == "format_rules", (
        "a record carrying its own rules is checked by the tool that reads them"
    )


async def test_a_reference_of_only_punctuation_is_never_normalised_away(agent: OfflineAgent) -> None:
    ans = await route(agent, q(task="brackets", query="Close the brackets: ( [ {", reference="} ] )"))
    assert chosen(ans) == "exact_match"


async def test_translation_goes_to_a_translation_metric(agent: OfflineAgent) -> None:
    ans = await route(
        agent,
        q(
            task="news_de",
            query="Render in German: The bakery on the corner closes early on Fridays.",
            reference="Die Bäckerei an der Ecke schließt freitags früh.",
        ),
    )
    assert chosen(ans) in {"chrf", "bleu2"}


async def test_a_short_translation_is_scored_by_a_translation_metric_and_a_short_fact_by_a_match(
    agent: OfflineAgent,
) -> None:
    """A reference of two or three words is a label or a fact unless the query asks for a translation of text
    it gives: then other wordings are as good, and an exact match would punish them (the demo's
    ``translate`` task routed to normalized_match for "Ich bin müde." before)."""
    translations = [
        ("Translate to German: I am tired.", "Ich bin müde."),
        ("Put this menu item into Spanish: Save changes", "Guardar cambios"),
        ("eng: We are closed today.\nfra:", "Nous sommes fermés."),
        ("How do you say 'thank you very much' in Japanese?", "どうもありがとうございます"),
        ("Translate from Czech to English: Děkuji moc.", "Thanks a lot."),
    ]
    for query, ref in translations:
        ans = await route(agent, q(task="mt", query=query, reference=ref))
        assert chosen(ans) in {"chrf", "bleu2"}, (query, chosen(ans))
    facts = [
        ("What is the German word for 'tree'?", "Baum"),
        ("Quelle est la capitale du Canada ?", "Ottawa"),
        ("Who composed The Magic Flute?", "Wolfgang Amadeus Mozart"),
    ]
    for query, ref in facts:
        ans = await route(agent, q(task="qa", query=query, reference=ref))
        assert chosen(ans) in {"normalized_match", "contains_match", "exact_match"}, (query, chosen(ans))


async def test_readiness_is_the_callers_filter_for_every_backend(
    agent: OfflineAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge = next(s for s in builtin_specs() if s.name == "llm_judge")
    assert tool_ready(judge) == (False, "no judge endpoint configured")
    ready, dropped = usable_candidates(builtin_specs(), require_ready=True)
    assert set(dropped) == {"llm_judge", "reward_model"}
    chat = q(task="poems", query="Write a poem about autumn.", reference="")
    ans = await route(agent, chat, ready)
    assert ans.none_fit and ans.tools == [], "no reference, no constraint, no judge, no reward model"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-x")
    assert (
        chosen(await route(agent, chat, usable_candidates(builtin_specs(), require_ready=True)[0]))
        == "llm_judge"
    )


async def test_a_synthesised_tool_serves_only_its_own_kind_of_query(agent: OfflineAgent) -> None:
    task = SynthesisTask(description=BULLETS, examples=[{"query": "x"}])
    spec = synthesized_spec(
        name="synth-bullets",
        description="three short bullets",
        code=compose(task).code,
        score_range=(0, 1),
        task_types=["instruction_following"],
        answer_formats=["bullets"],
        params={"constraints": task.all_constraints()},
        provenance={"origin": "synthesized"},
        validation={},
    )
    specs = [*builtin_specs(), spec]
    assert chosen(await route(agent, q(query="Tips?", description=BULLETS), specs)) == "synth-bullets"
    ans = await route(agent, q(query="Tips?", description="Give exactly five bullet points."), specs)
    assert ans.none_fit and "synth-bullets" not in [t.tool for t in ans.tools]


async def test_a_user_tool_registered_for_a_task_is_chosen_for_it_and_only_for_it(
    agent: OfflineAgent,
) -> None:
    mine = ToolSpec(
        name="sql_exec_match",
        kind=ToolKind.RULE,
        impl="rlar.tools.rules:ExactMatchTool",
        description="Runs the predicted and the gold SQL on the task's SQLite database and compares result sets.",
        task_types=["shop_sql"],
        answer_formats=["sql"],
        params={"needs_reference": True},
        provenance={"origin": "user", "author": "me", "source": "rewards.py"},
    )
    specs = [*builtin_specs(), mine]
    sql = q(
        task="shop_sql",
        query="How many customers live in Oslo?",
        reference="SELECT count(*) FROM customers WHERE city = 'Oslo'",
    )
    ans = await route(agent, sql, specs)
    assert chosen(ans) == "sql_exec_match" and "registered for this task" in ans.reason
    # The user's binding is not judged by the labelled experience: no selective threshold applies to it.
    assert not ans.calibrated and ans.threshold is None and "no labelled exemplar names" in ans.why
    other = await route(agent, q(task="facts", query="Capital of Peru?", reference="Lima"), specs)
    assert chosen(other) != "sql_exec_match" and other.calibrated and other.threshold is not None


async def test_confidences_are_calibrated_estimates_not_constants(agent: OfflineAgent) -> None:
    queries = [
        q(task="a", query="A bag has 3 red and 5 blue balls. How many balls?", reference="8"),
        q(
            task="b",
            query="Summarize: The council approved a new park near the river after a long debate.",
            reference="A new riverside park was approved.",
        ),
        q(task="c", query="Is this review positive or negative? 'Loved every minute.'", reference="positive"),
        q(task="d", query="Tell me a joke.", reference=""),
    ]
    answers = [await route(agent, x) for x in queries]
    confidences = [a.confidence for a in answers]
    assert all(0.0 < c < 1.0 for c in confidences) and len(set(confidences)) >= 3
    # Each says why, and carries the threshold fitted with it (the shipped model's).
    assert all(a.calibrated and "nearest formats" in a.why and 0.5 < (a.threshold or 0) < 1 for a in answers)


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
