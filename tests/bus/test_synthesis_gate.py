"""The synthesis gate of issue 25: nothing rewards training that the system cannot vouch for.

A verifier is registered only when every clause of the instruction is checked and it agrees with probes that
do not come from its own reading (a second reading, a model's probes, the user's labelled examples); refused
tasks go to a declared judge or abstain, and the report and ``rlar train`` say which clauses nobody read. The
language-model path is tested against the local Messages API server (``rlar.standins.anthropic_server``),
which stands in for the paid API only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from rlar.agent.anthropic_agent import AnthropicAgent
from rlar.agent.base import AnthropicAgentConfig, OfflineAgentConfig
from rlar.agent.offline import OfflineAgent
from rlar.app.runconfig import ConfigProblems, load_run_config, validate_run_config
from rlar.constraints.checks import holds
from rlar.sandbox_client import local_runner
from rlar.standins.anthropic_server import MessagesServer
from rlar.synthesis.compose import SynthesisTask
from rlar.synthesis.loop import synthesize
from rlar.synthesis.report import outcome_row, summarize, to_markdown, unvouched, where_to
from rlar.synthesis.second_route import second_reading
from rlar.synthesis.shapes import build_shaped
from rlar.synthesis.shapes_violations import shaped_violations
from rlar.tasks.reading import read_instruction

needs_bwrap = pytest.mark.skipif(not os.access("/usr/bin/bwrap", os.X_OK), reason="bubblewrap not installed")

B_WORDS = "Write exactly 5 words, every one of them starting with the letter b."
COUNT_ONLY = (
    "def reward(query, response, reference, metadata):\n"
    "    return 1.0 if len(response.split()) == 5 else 0.0\n\nSCORE_RANGE = (0.0, 1.0)\n"
)
COUNT_AND_LETTER = (
    "def reward(query, response, reference, metadata):\n"
    "    words = response.split()\n"
    "    if len(words) != 5:\n"
    "        return 0.0\n"
    "    return 1.0 if all(w.lower().startswith('b') for w in words) else 0.0\n\nSCORE_RANGE = (0.0, 1.0)\n"
)


@pytest.fixture
def offline() -> OfflineAgent:
    return OfflineAgent(OfflineAgentConfig())


# -- the default refuses what it cannot vouch for -----------------------------------------------------------
@needs_bwrap
async def test_a_task_with_a_clause_nobody_reads_is_refused_by_default_and_names_the_clause(
    offline: OfflineAgent,
) -> None:
    task = SynthesisTask(description="Write a haiku about rain. Use exactly 3 lines and no commas.")
    out = await synthesize(task, offline, local_runner())
    assert out.spec is None and out.category == "refused_partial"
    row = outcome_row(out, request_id="r1", task="haiku")
    assert any("haiku" in u for u in row["unread"]) and "haiku" in out.reason


@needs_bwrap
async def test_a_constraint_only_our_own_reading_saw_is_refused_as_unvouched(offline: OfflineAgent) -> None:
    # "no vowels" is read by both readers; "use the word 'river' at least twice" only by the main one when the
    # second reading is told nothing — simulated by a task whose description the second reading cannot parse.
    text = "Keep it to 12 words tops, and the word 'river' must show up a couple of times."
    ours = {c["rule"] for c in read_instruction(text).constraints}
    theirs = {c["rule"] for c in second_reading(text)}
    assert "occurs" in ours and "occurs" not in theirs
    out = await synthesize(SynthesisTask(description=text), offline, local_runner())
    assert out.spec is None and out.category == "refused_unvouched"
    assert "river" in out.reason and out.coverage["unvouched"]


# -- labelled examples gate a verifier --------------------------------------------------------------------------
@needs_bwrap
async def test_a_verifier_that_disagrees_with_a_labelled_example_is_refused_with_the_disagreement(
    offline: OfflineAgent,
) -> None:
    # The composed verifier reads "4 letters only, no vowels"; the user labels "tnrs" wrong (their real rule
    # also forbids the letter s): the verifier scores it 1.0, so it is refused and the example is shown.
    labelled = [
        {"response": "tnrk", "ok": True},
        {"response": "tnrs", "ok": False, "why": "no s either"},
        {"response": "aeio", "ok": False},
    ]
    task = SynthesisTask(description="Write 4 letters only, no vowels:", labelled=labelled)
    out = await synthesize(task, offline, local_runner())
    assert out.spec is None and out.category == "rejected_examples"
    last = next(a for a in reversed(out.attempts) if a.code)
    assert (
        last.reason.startswith("examples: disagrees with 1 of 3 labelled examples")
        and "'tnrs'" in last.reason
    )
    assert last.validation["examples"]["disagree"] == [{"response": "tnrs", "ok": False, "score": 1.0}]
    agreeing = SynthesisTask(
        description="Write 4 letters only, no vowels:", labelled=[labelled[0], labelled[2]]
    )
    ok = await synthesize(agreeing, offline, local_runner())
    assert ok.spec is not None and ok.spec.validation["examples"] == {
        "labelled": 2,
        "agree": 2,
        "disagree": [],
    }


def test_task_examples_and_an_examples_file_reach_the_synthesizer(tmp_path: Path) -> None:
    (tmp_path / "labels.jsonl").write_text(json.dumps({"response": "xyz", "ok": False}) + "\n")
    (tmp_path / "run.toml").write_text(
        '[[tasks]]\nname = "letters"\nsource = "jsonl"\npath = "d.jsonl"\nexamples_file = "labels.jsonl"\n'
        'examples = [{response = "tnrk", ok = true, why = "4 consonants"}]\n'
    )
    doc = load_run_config(tmp_path / "run.toml")
    assert doc["synthesizer"]["labelled"]["letters"] == [
        {"response": "tnrk", "ok": True, "why": "4 consonants"},
        {"response": "xyz", "ok": False, "why": ""},
    ]
    built = validate_run_config(doc)  # raises on any problem
    assert built["synthesizer"].labelled["letters"][1]["response"] == "xyz"
    (tmp_path / "labels.jsonl").write_text('{"response": "xyz"}\n')
    with pytest.raises(ConfigProblems, match=r"labels.jsonl:1: not a labelled example"):
        load_run_config(tmp_path / "run.toml")


# -- where refused tasks go, and the warning -----------------------------------------------------------------
def test_the_report_says_which_tasks_were_refused_where_they_went_and_what_nobody_read() -> None:
    rows = [
        {
            "request_id": "a.1",
            "task": "haiku",
            "category": "refused_partial",
            "registered": False,
            "unread": ["Write a haiku about rain"],
        },
        {
            "request_id": "b.1",
            "task": "poem",
            "category": "refused_partial",
            "registered": False,
            "unread": ["a poem"],
        },
        {
            "request_id": "c.1",
            "task": "letters",
            "category": "registered_full",
            "registered": True,
            "unread": [],
        },
    ]
    decisions = [
        {"request_id": "a.1", "state": "abstain", "tools": []},
        {"request_id": "b.1", "state": "fallback", "tools": [{"tool": "llm_judge"}]},
    ]
    assert [where_to(r, decisions) for r in rows] == ["abstain", "judge: llm_judge", "registered"]
    # As the router announces them: RouteDecision with the signature (the request id's head) and "[state] ...".
    from bus.messages import RouteDecision, ToolRef

    announced = [
        RouteDecision(
            signature="b", task="poem", tools=[], backend="offline", reason="[pending] no tool fits"
        ),
        RouteDecision(
            signature="b",
            task="poem",
            tools=[ToolRef(tool="format_rules", version=1, kind="rule")],
            backend="offline",
            reason="[fallback] synthesis failed: b.1: refused: ...",
        ),
    ]
    assert where_to(rows[1], announced) == "fallback: format_rules"
    for r in rows:
        r["then"] = where_to(r, decisions)
    summary = summarize(rows)
    assert summary["refused_then"] == {"abstain": 1, "judge: llm_judge": 1}
    table = to_markdown(summary)
    assert "| refused: haiku (refused_partial) → abstain | not read: 'Write a haiku about rain' |" in table
    assert "refused: poem (refused_partial) → judge: llm_judge" in table
    warns = unvouched(rows, decisions)
    assert (
        len(warns) == 2
        and "'haiku'" in warns[0]
        and "ABSTAIN" in warns[0]
        and "'Write a haiku about rain'" in warns[0]
    )
    assert "llm_judge" in warns[1]


# -- the language-model path through the same gate ----------------------------------------------------------
def _model(code: str, probes: list[dict[str, Any]]) -> Any:
    """A stand-in model: independent probes for ``submit_probes``, ``code`` for ``submit_reward_function``."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        names = [t["name"] for t in body.get("tools", [])]
        name = "submit_probes" if "submit_probes" in names else "submit_reward_function"
        data: dict[str, Any] = (
            {"probes": probes}
            if name == "submit_probes"
            else {
                "code": code,
                "score_range": [0.0, 1.0],
                "needs_reference": False,
                "rationale": "counts the words",
            }
        )
        return {
            "content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": data}],
            "usage": {"input_tokens": 100, "output_tokens": 50},
        }

    return respond


MODEL_PROBES = [
    {"response": "big brown bears bake bread", "label": "good", "why": "5 words, all b"},
    {"response": "blue birds bring bright beads", "label": "good", "why": "5 words, all b"},
    {"response": "big brown bears make bread", "label": "bad", "why": "'make' does not start with b"},
    {"response": "tall brown bears bake bread", "label": "bad", "why": "'tall' does not start with b"},
    {"response": "red green cats eat fish", "label": "bad", "why": "no word starts with b"},
    {"response": "big brown bears", "label": "bad", "why": "3 words"},
]


@needs_bwrap
@pytest.mark.parametrize(("code", "registered"), [(COUNT_ONLY, False), (COUNT_AND_LETTER, True)])
async def test_model_code_that_checks_the_count_but_not_the_letter_is_refused_by_the_models_own_probes(
    no_ambient_anthropic: None, monkeypatch: pytest.MonkeyPatch, code: str, registered: bool
) -> None:
    monkeypatch.setenv("RLAR_TEST_KEY", "sk-test")
    with MessagesServer() as srv:
        srv.respond = _model(code, MODEL_PROBES)
        agent = AnthropicAgent(
            AnthropicAgentConfig(
                model="synth-test",
                base_url=srv.url,
                api_key_env="RLAR_TEST_KEY",
                timeout_s=5.0,
                backoff_base_s=0.05,
                backoff_max_s=0.2,
            )
        )
        try:
            out = await synthesize(SynthesisTask(description=B_WORDS), agent, local_runner(), max_attempts=2)
        finally:
            await agent.aclose()
        calls = [[t["name"] for t in r.get("tools", [])] for r in srv.requests]
    # The probes came from a call of their own, before any code was written, and the code call saw none of them.
    assert calls[0] == ["submit_probes"] and all(c == ["submit_reward_function"] for c in calls[1:])
    assert not any("make bread" in json.dumps(r.get("messages")) for r in srv.requests[1:])
    assert (out.spec is not None) is registered
    if registered:
        assert out.category == "registered_full" and out.spec is not None
        assert "agent" in out.spec.validation["independent"]["sources"]
        return
    assert out.category.startswith("rejected_") and len(out.attempts) == 2
    scored = out.attempts[-1].validation["probes"]
    fooled = [p for p in scored if p["source"] == "agent" and p["label"] == "bad" and p["score"] == 1.0]
    assert {p["why"] for p in fooled} >= {"'make' does not start with b", "'tall' does not start with b"}


# -- compositional probes -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "List 4 integers in increasing order whose sum is 20, separated by commas.",
        "Write an acrostic whose lines start with the letters of the word LAKE, each line at most 25 characters.",
        "Output a CSV with the header name,age,city and 3 rows, where age is an integer.",
        "Write 3 sentences where each sentence has exactly one more word than the one before.",
        "Give a number whose digits sum to 12 and that is divisible by 7, and nothing else.",
    ],
)
def test_composed_rules_are_read_and_built_responses_keep_or_break_them(text: str) -> None:
    reading = read_instruction(text)
    cons = reading.constraints
    assert reading.full and any(c["rule"] in ("each", "order", "total", "spell", "table") for c in cons)
    good = build_shaped(cons)
    assert all(holds(c, good) for c in cons), (good, cons)
    bad = shaped_violations(cons)
    assert bad and all(not all(holds(c, t) for c in cons) for _, t in bad)
