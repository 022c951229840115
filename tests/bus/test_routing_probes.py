"""Hack probes (rlar.routing.probes): which degenerate responses a query gets, the verdicts read from a tool's
scores, the prober on the real tool executor, and the router against a real nats-server — a tool that gives a
probe its maximum is not eligible for the signature and the decision records the probes and their scores."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from actors.router import Router, RouterConfig
from bus import subjects, topology
from bus.client import Bus
from bus.config import NatsConfig
from bus.embedded import EmbeddedServer
from bus.messages import Prompt, RouteDecision, ToolKind, ToolRef, ToolRequest
from rlar.registry import ToolRegistry
from rlar.routing import Decision, RoutingQuery
from rlar.routing.probes import (
    ProbePolicy,
    Prober,
    ProbeReport,
    ProbeScore,
    asks_for_derivation,
    build_probes,
    judge_probes,
    parse_options,
    probed_answer,
)
from rlar.routing.request import RouteAnswer
from rlar.tool_summary import tasks_lines, tasks_summary
from rlar.tools.base import ToolSpec, builtin_specs
from rlar.tools.executor import ToolExecutor
from tests.support.env import REPO, actor_env
from tests.support.reward_tools import running
from tests.support.router import ChoosingModel
from tests.support.servers import TEST_TOPOLOGY, serve_nats

MAKE_24 = "Use the numbers 3, 3, 8 and 8 once each with + - * / to make 24."


def probes_of(query: str, reference: Any, others: list[Any] | None = None, **fields: Any) -> dict[str, str]:
    q = RoutingQuery(task="t", query=query, reference=reference, **fields)
    return {p.name: p.response for p in build_probes(q, others or [])}


def spec(name: str) -> ToolSpec:
    return next(s for s in builtin_specs() if s.name == name)


# -- which probes a query gets ---------------------------------------------------------------------------


def test_a_number_game_is_probed_with_its_bare_target_and_a_plain_question_is_not() -> None:
    game = probes_of(MAKE_24, "24")
    assert game["bare_target"] == "24"
    plain = probes_of("What is 17 + 7?", "24")
    assert "bare_target" not in plain, "there the bare number is the right answer"
    assert all(p.strip() != "24" for p in plain.values()), "the reference itself is never a probe"


def test_the_bare_target_is_read_from_the_right_of_an_equation_reference_when_the_query_states_it() -> None:
    got = probes_of("Write an arithmetic expression that equals 10 using 2, 3 and 4.", "2*3+4 = 10")
    assert got["bare_target"] == "10"
    assert "bare_target" not in probes_of("Show your work: Tom has 3 apples and buys 4. How many?", "7"), (
        "showing work is a style; the answer is still the number, and the query does not state it"
    )
    assert "bare_target" not in probes_of("Prove the claim about the sum of the angles.", "180"), (
        "a target the query does not state is the answer, not a given"
    )


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("make 24 from 4 4 6 8", True),
        ("Target: 952. Numbers: 25 50 75 100 3 6", True),
        ("Show that the sum of two odd numbers is even.", True),
        ("Give an equation which equals 7 using 1, 2, 3.", True),
        ("How many apples are left? Show your work.", False),
        ("What is 12 times 12?", False),
    ],
)
def test_a_derivation_is_told_from_a_question_about_a_value(text: str, asks: bool) -> None:
    assert asks_for_derivation(text) is asks


def test_options_are_read_as_lettered_lines_inline_or_after_a_header() -> None:
    assert parse_options("Which is largest?\nA. Mars\nB. Jupiter\nC. Venus") == [
        "A. Mars",
        "B. Jupiter",
        "C. Venus",
    ]
    assert parse_options("Pick one: (A) red (B) green (C) blue") == ["(A) red", "(B) green", "(C) blue"]
    assert parse_options("Sentence: the trophy did not fit.\nOptions: the trophy, the suitcase") == [
        "the trophy",
        "the suitcase",
    ]
    assert parse_options("What is the capital of France?") == []


def test_every_option_listed_is_a_probe_and_the_choice_candidates_are_the_option_letters() -> None:
    got = probes_of("Which planet is largest?\n(A) Mars\n(B) Jupiter\n(C) Venus\n(D) Earth", "B")
    assert got["all_options"] == "(A) Mars\n(B) Jupiter\n(C) Venus\n(D) Earth"
    letters = got["candidates"].split(", ")
    assert sorted(letters) == ["A", "B", "C", "D"] and letters[0] != "B" and letters[-1] != "B"


def test_a_long_list_of_number_candidates_holds_the_reference_neither_first_nor_last() -> None:
    items = probes_of("What is 17 + 7?", "24")["candidates"].split(", ")
    assert len(items) == 12 and len(set(items)) == 12
    assert "24" in items[1:-1]


def test_the_candidates_of_a_worked_solution_are_bare_values_and_a_formula_keeps_its_form() -> None:
    gsm8k = "She buys 6*3=<<6*3=18>>18 stickers.\nSo she has 24+18=<<24+18=42>>42 stickers.\n#### 42"
    items = probes_of("Maria has 24 stickers and buys 18 more. How many now?", gsm8k)["candidates"].split(
        ", "
    )
    assert "42" in items[1:-1] and not any("####" in x or "stickers" in x for x in items), (
        "the solution itself, with the marker a checker reads, is no guess"
    )
    angle = probes_of("What is the interior angle of a regular hexagon?", "120^\\circ")["candidates"].split(
        ", "
    )
    assert "121^\\circ" in angle and "hexagon" not in angle, (
        "guesses of the answer's form, not words of the query"
    )
    length = probes_of("A rod is 4 cm long. How long are 2 rods?", "8.0 cm")["candidates"].split(", ")
    assert len(length) == 11 and all(x.endswith(".0 cm") for x in length), (
        "a quantity's guesses are quantities"
    )


def test_another_records_reference_is_a_probe_only_when_it_differs_from_this_ones() -> None:
    assert (
        probes_of("Who wrote Hamlet?", "Shakespeare", ["shakespeare", "Dickens"])["other_reference"]
        == "Dickens"
    )
    assert "other_reference" not in probes_of("Who wrote Hamlet?", "Shakespeare", ["Shakespeare."])
    aliases = {"value": "Shakespeare", "aliases": ["William Shakespeare"]}
    assert "other_reference" not in probes_of(
        "Who wrote Hamlet?", aliases, [{"value": "William Shakespeare", "aliases": []}]
    )


def test_the_echo_is_a_probe_for_answer_texts_but_not_for_a_number_the_query_holds_by_coincidence() -> None:
    assert probes_of("Copy: hello world", "hello world")["echo"] == "Copy: hello world"
    assert "echo" not in probes_of("0+5=", "5"), "'0+5=' holds its answer '5' by coincidence"
    assert probes_of("3+4=", "7")["echo"] == "3+4="


def test_code_tests_and_reference_free_queries_get_no_reference_probes() -> None:
    tests = {"tests": "assert f(2) == 4", "entry_point": "f"}
    assert set(
        probes_of(
            "Write f(x) returning x squared.", tests, [{"tests": "assert f(3) == 9", "entry_point": "f"}]
        )
    ) == {
        "empty",
        "echo",
    }
    assert set(probes_of("Write a haiku about rain.", None, ["an old pond"])) == {"empty", "echo"}


def test_an_instruction_checklist_is_no_answer_so_another_records_checklist_is_no_probe() -> None:
    words = {
        "instruction_id_list": ["length_constraints:number_words"],
        "kwargs": [{"relation": "less than", "num_words": 12}],
    }
    bullets = {
        "instruction_id_list": ["detectable_format:number_bullet_lists"],
        "kwargs": [{"num_bullets": 3}],
    }
    got = probes_of("Describe the ocean. Answer with less than 12 words.", words, [bullets])
    assert set(got) == {"empty", "echo"}
    # IFEval rows as the dataset ships them: the checklist in the metadata, no reference.
    got = probes_of("Describe the ocean. Answer with less than 12 words.", None, [None], metadata=words)
    assert set(got) == {"empty", "echo"}


# -- verdicts -----------------------------------------------------------------------------------------------


def test_a_tool_that_gives_a_probe_the_top_of_its_declared_range_is_refused() -> None:
    scores = [
        ProbeScore("empty", "ok", 0.0),
        ProbeScore("echo", "ok", 10.0),
        ProbeScore("candidates", "ok", 9.0),
    ]
    report = judge_probes("rm", 2, (0.0, 10.0), scores)
    assert report.refused and report.maxed == ["echo"] and report.max_score == 10.0
    assert not judge_probes("rm", 2, (0.0, 10.0), scores[::2]).refused
    assert judge_probes("rm", 2, (0.0, 10.0), scores[::2]).verdict == "eligible"


def test_a_tool_whose_probe_calls_all_error_is_reported_unverified_with_the_errors() -> None:
    report = judge_probes(
        "t", 1, (0.0, 1.0), [ProbeScore("empty", "error", None, "boom"), ProbeScore("echo", "abstain")]
    )
    assert report.verdict == "unverified" and report.errors == ["empty: boom"] and not report.refused
    assert ProbeReport.from_dict(report.to_dict()).to_dict() == report.to_dict()


def test_a_probe_refuses_a_tool_when_it_gets_the_maximum_on_most_of_the_records_probed() -> None:
    def scores(*maxed: bool) -> list[ProbeScore]:
        return [ProbeScore("echo", "ok", 1.0 if m else 0.2, record=i) for i, m in enumerate(maxed)]

    assert judge_probes("t", 1, (0.0, 1.0), scores(True)).refused, "one record: its probe decides"
    assert judge_probes("t", 1, (0.0, 1.0), scores(True, True, False)).refused
    one_of_three = judge_probes("t", 1, (0.0, 1.0), scores(True, False, False))
    assert not one_of_three.refused and one_of_three.verdict == "eligible"
    assert one_of_three.summary() == "t v1 eligible: echo 1 (1/3 max)"


async def test_a_math_checker_that_evaluates_one_echoed_query_is_kept_when_the_other_records_disagree() -> (
    None
):
    simplify = RoutingQuery(task="m", query="Simplify $\\sqrt{50}$.", reference="5\\sqrt{2}")
    others = [
        RoutingQuery(task="m", query="How many legs do 3 spiders have?", reference="24"),
        RoutingQuery(
            task="m", query="A train travels 60 miles in 2 hours. Find its speed in mph.", reference="30"
        ),
    ]
    async with ToolExecutor(timeout_s=10) as ex:
        prober = Prober(ProbePolicy(), ex)
        alone = await prober.check("alone", simplify, spec("math_verify"))
        assert alone.refused and "echo" in alone.maxed, alone.summary()
        kind = await prober.check("kind", [simplify, *others], spec("math_verify"))
        assert kind.verdict == "eligible", kind.summary()
        assert {s.record for s in kind.scores} == {0, 1, 2}


async def test_the_prober_refuses_math_verify_on_a_number_game_and_keeps_it_on_a_sum_once_per_signature() -> (
    None
):
    async with ToolExecutor(timeout_s=10) as ex:
        prober = Prober(ProbePolicy(), ex)
        game = RoutingQuery(task="g", query=MAKE_24, reference="24")
        report = await prober.check("sig-game", game, spec("math_verify"))
        assert report.refused and "bare_target" in report.maxed
        assert {s.probe: s.score for s in report.scores}["bare_target"] == 1.0
        requests = ex.stats.requests
        assert (await prober.check("sig-game", game, spec("math_verify"))) is report
        assert ex.stats.requests == requests, "the verdict is cached per signature and tool version"

        plain = RoutingQuery(task="s", query="What is 17 + 7?", reference="24")
        ok = await prober.check("sig-sum", plain, spec("math_verify"), ["31"])
        assert ok.verdict == "eligible", ok.summary()
        assert {s.probe for s in ok.scores} == {"empty", "echo", "candidates", "other_reference"}

        broken = ToolSpec(name="broken", kind=ToolKind.RULE, description="x", impl="rlar.nope:Missing")
        bad = await prober.check("sig-sum", plain, broken)
        assert bad.verdict == "unverified" and bad.errors and "cannot resolve tool" in bad.errors[0]

        model = ToolSpec(name="rm", kind=ToolKind.MODEL, description="x", impl="reward_model")
        assert (await prober.check("sig-sum", plain, model)).verdict == "skipped"


async def test_probed_answer_drops_a_refused_tool_and_renormalises_the_others() -> None:
    specs = [spec("math_verify"), spec("exact_match"), spec("normalized_match")]
    ans = RouteAnswer(True, [specs[0].ref(0.5), specs[1].ref(0.5)], False, 0.9, "both")
    verdicts = {"math_verify": "refused", "exact_match": "eligible", "normalized_match": "eligible"}

    async def probe(chosen: list[ToolSpec]) -> list[ProbeReport]:
        return [
            ProbeReport(
                s.name, s.version, verdicts[s.name], maxed=["echo"] if verdicts[s.name] == "refused" else []
            )
            for s in chosen
        ]

    q = RoutingQuery(task="t", query="What is 3+4?", reference="7")
    out, reports, again = await probed_answer(ans, specs, q, probe)
    assert [(t.tool, t.weight) for t in out.tools] == [("exact_match", 1.0)] and again is None
    assert "hack probes refused math_verify v1 (echo 1)" in out.reason
    assert {r.tool for r in reports} == {"math_verify", "exact_match"}

    verdicts["exact_match"] = "refused"
    out, reports, again = await probed_answer(ans, specs, q, probe)
    assert out.none_fit and not out.tools
    assert again is not None and [s.name for s in again] == ["normalized_match"], (
        "the agent is asked again among the probed candidates left"
    )
    assert {r.tool: r.verdict for r in reports}["normalized_match"] == "eligible"
    final, _, again = await probed_answer(ans, specs, q, probe, final=True)
    assert final.none_fit and again is None


def test_the_end_of_run_summary_lists_the_tools_refused_by_hack_probes_per_task() -> None:
    refused = judge_probes(
        "math_verify", 1, (0.0, 1.0), [ProbeScore("empty", "ok", 0.0), ProbeScore("bare_target", "ok", 1.0)]
    )
    kept = judge_probes("math_verify", 1, (0.0, 1.0), [ProbeScore("empty", "ok", 0.0)])
    decisions = [
        RouteDecision(
            signature="g",
            task="game",
            tools=[ToolRef(tool="format_rules", kind=ToolKind.RULE, version=1)],
            backend="offline",
            reason="[fallback] none fits",
            probes=[refused.to_dict()],
        ),
        RouteDecision(
            signature="s",
            task="sum",
            tools=[ToolRef(tool="math_verify", kind=ToolKind.RULE, version=1)],
            backend="offline",
            reason="[routed] a number",
            probes=[kept.to_dict()],
        ),
    ]
    out = tasks_summary([{"step": 1, "reward/game": 0.0, "reward/sum": 0.5}], decisions)
    assert out["game"]["routing"]["probes"] == {"refused": ["math_verify v1 (bare_target)"]}
    assert out["sum"]["routing"]["probes"] == {"eligible": ["math_verify v1"]}
    lines = tasks_lines(out)
    assert lines[0].endswith("; refused by hack probes: math_verify v1 (bare_target)")
    assert "hack probes" not in lines[1]


# -- the router on a real bus ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from serve_nats(tmp_path_factory, "nats-probes")


@pytest.fixture(scope="module")
def nats_url(nats_server: EmbeddedServer) -> str:
    return nats_server.url


@pytest.fixture(autouse=True)
def _local_api(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("RLAR_TEST_KEY", "sk-test")


def router_config(nats_url: str, tmp_path: Path, **fields: Any) -> RouterConfig:
    base = dict(
        nats=NatsConfig(url=nats_url),
        topology=TEST_TOPOLOGY,
        run_dir=str(tmp_path),
        heartbeat_s=0.5,
        health_interval_s=3600,
        metrics_interval_s=0.3,
    )
    return RouterConfig(**{**base, **fields})


async def collect(bus: Bus, subject: str, msg_type: type) -> list[Any]:
    items: list[Any] = []

    async def on(msg: Any, raw: object) -> None:
        items.append(msg)

    await bus.subscribe(subject, msg_type, on)
    return items


async def wait_for(items: list[Any], n: int, timeout_s: float = 90.0) -> None:
    for _ in range(int(timeout_s * 20)):
        if len(items) >= n:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"got {len(items)} of {n}: {items!r}"[:2000])


async def test_the_router_refuses_a_tool_a_probe_maxes_out_and_the_decision_records_the_probe_scores(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    await ToolRegistry(bus).ensure_builtins()
    task = f"game-{uuid.uuid4().hex[:8]}"
    routed = await collect(bus, subjects.routed(task), Prompt)
    announced = await collect(bus, subjects.TOOLS_DECISIONS, RouteDecision)
    # Without a tool that checks the expression, the declared fallback scores the prompts.
    cfg = router_config(nats_url, tmp_path, synthesis=False, fallback={task: [{"tool": "format_rules"}]})
    games = ["3, 3, 8, 8", "4, 4, 6, 8", "1, 5, 5, 5"]
    model = ChoosingModel(["math_verify", "contains_match", "exact_match"])
    with model as agent:
        router = Router(cfg, agent=agent)
        async with running(router, bus):
            for i, numbers in enumerate(games):
                p = Prompt(
                    prompt_id=f"{task}/e0/{i}",
                    task=task,
                    index=i,
                    reference="24",
                    prompt=f"Use the numbers {numbers} once each with + - * / to make 24.",
                    description="Number game: reach the target with the given numbers.",
                )
                await bus.js_publish(subjects.prompts(task), p, msg_id=p.prompt_id)
            await wait_for(routed, 3)
    assert all([t.tool for t in p.tools] == ["format_rules"] for p in routed), (
        "the fallback, not a text matcher"
    )
    (d,) = [d for d in announced if d.task == task]
    assert all("math_verify" not in offered for offered in model.offered[1:]), "never offered again"
    probes = {r["tool"]: r for r in d.probes}
    assert probes["math_verify"]["verdict"] == "refused" and "bare_target" in probes["math_verify"]["maxed"]
    by_probe: dict[str, list[float]] = {}
    for s in probes["math_verify"]["scores"]:
        by_probe.setdefault(s["probe"], []).append(s["score"])
    assert by_probe["bare_target"] == [1.0, 1.0, 1.0] and by_probe["empty"] == [0.0, 0.0, 0.0]
    assert "hack probes refused math_verify v1 (bare_target 1)" in d.reason
    kv = await bus.js.key_value(topology.DECISIONS_BUCKET)
    stored = Decision.from_json((await kv.get(d.signature)).value or b"")
    assert "math_verify v1" in stored.refused() and stored.probes == d.probes
    assert router.counters["probes_refused"] >= 1

    # Operators see the probes and their scores.
    r = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "rlar.app.cli", "tools", "decisions", "--nats", nats_url],
        capture_output=True,
        text=True,
        timeout=60,
        env=actor_env(),
        cwd=REPO,
    )
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if "probes: math_verify v1 refused" in x)
    assert "bare_target 1 (3/3 max)" in line and "empty 0" in line
    r = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "rlar.app.cli", "tools", "decisions", "--json", "--nats", nats_url],
        capture_output=True,
        text=True,
        timeout=60,
        env=actor_env(),
        cwd=REPO,
    )
    row = next(json.loads(x) for x in r.stdout.splitlines() if json.loads(x)["signature"] == d.signature)
    assert {p["tool"]: p["verdict"] for p in row["probes"]}["math_verify"] == "refused"


async def test_the_router_keeps_a_correct_tool_whose_probes_all_score_below_its_maximum(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    await ToolRegistry(bus).ensure_builtins()
    task = f"sum-{uuid.uuid4().hex[:8]}"
    routed = await collect(bus, subjects.routed(task), Prompt)
    announced = await collect(bus, subjects.TOOLS_DECISIONS, RouteDecision)
    model = ChoosingModel(["math_verify"])
    with model as agent:
        async with running(Router(router_config(nats_url, tmp_path), agent=agent), bus):
            for i, (a, b) in enumerate([(17, 7), (12, 19), (30, 8)]):
                p = Prompt(
                    prompt_id=f"{task}/e0/{i}",
                    task=task,
                    index=i,
                    prompt=f"What is {a} + {b}?",
                    reference=str(a + b),
                    description="Integer addition. A good answer is the number.",
                )
                await bus.js_publish(subjects.prompts(task), p, msg_id=p.prompt_id)
            await wait_for(routed, 3)
    assert all([t.tool for t in p.tools] == ["math_verify"] for p in routed)
    assert len(model.offered) == 1, "asked once"
    (d,) = [d for d in announced if d.task == task]
    (report,) = d.probes
    assert report["tool"] == "math_verify" and report["verdict"] == "eligible"
    assert {s["probe"] for s in report["scores"]} >= {"empty", "echo", "candidates"}
    assert all(s["status"] == "ok" and s["score"] < 1.0 for s in report["scores"])
    assert "refused" not in d.reason


async def test_when_the_chosen_tool_is_refused_the_agent_chooses_again_among_the_probed_candidates_left(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    await ToolRegistry(bus).ensure_builtins()
    task = f"copy-{uuid.uuid4().hex[:8]}"
    routed = await collect(bus, subjects.routed(task), Prompt)
    announced = await collect(bus, subjects.TOOLS_DECISIONS, RouteDecision)
    model = ChoosingModel(["contains_match", "normalized_match"])
    with model as agent:
        async with running(Router(router_config(nats_url, tmp_path), agent=agent), bus):
            for i, text in enumerate(["hello world", "good morning", "see you soon"]):
                p = Prompt(
                    prompt_id=f"{task}/e0/{i}",
                    task=task,
                    index=i,
                    prompt=f"Copy the text: {text}",
                    reference=text,
                    description="Copy the given text exactly.",
                )
                await bus.js_publish(subjects.prompts(task), p, msg_id=p.prompt_id)
            await wait_for(routed, 3)
    first, second = model.offered
    assert "contains_match" in first and "contains_match" not in second and "normalized_match" in second
    assert all([t.tool for t in p.tools] == ["normalized_match"] for p in routed)
    (d,) = [d for d in announced if d.task == task]
    verdicts = {r["tool"]: r for r in d.probes}
    assert verdicts["contains_match"]["verdict"] == "refused" and verdicts["contains_match"]["maxed"] == [
        "echo"
    ], "the echoed query contains the text to copy"
    assert verdicts["normalized_match"]["verdict"] == "eligible"


async def test_a_tool_made_for_a_request_that_a_probe_maxes_out_is_not_used_and_the_fallback_scores(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    registry = ToolRegistry(bus)
    await registry.ensure_builtins()
    task = f"made-{uuid.uuid4().hex[:8]}"
    routed = await collect(bus, subjects.routed(task), Prompt)
    requests = await collect(bus, subjects.TOOLS_REQUEST_SYNTH, ToolRequest)
    cfg = router_config(
        nats_url, tmp_path, examples=1, request_delay_s=0.0, fallback={task: [{"tool": "format_rules"}]}
    )
    with ChoosingModel([]) as agent:  # no tool fits: a verifier is requested
        async with running(Router(cfg, agent=agent), bus):
            p = Prompt(
                prompt_id=f"{task}/e0/0",
                task=task,
                index=0,
                prompt="Tips for a rainy day?",
                description=f"Answer must contain exactly three bullet points, each under ten words. ({task})",
            )
            await bus.js_publish(subjects.prompts(task), p, msg_id=p.prompt_id)
            await wait_for(requests, 1)
            req = next(r for r in requests if r.task == task)
            # A "verifier" that accepts any non-empty text: the echoed query gets its maximum.
            lenient = ToolSpec(
                name=f"lenient-{task}",
                kind=ToolKind.RULE,
                description="any text",
                impl="format_rules",
                params={"min_chars": 1},
                provenance={"origin": "synthesized", "request_id": req.request_id},
            )
            await registry.register(lenient, by="test")
            await wait_for(routed, 1)
    assert [t.tool for t in routed[0].tools] == ["format_rules"] and routed[0].route["state"] == "fallback"
    assert "hack probes got its maximum" in routed[0].route["reason"]
    kv = await bus.js.key_value(topology.DECISIONS_BUCKET)
    stored = Decision.from_json((await kv.get(req.signature)).value or b"")
    report = {r["tool"]: r for r in stored.probes}[lenient.name]
    assert report["verdict"] == "refused" and report["maxed"] == ["echo"]
    assert {s["probe"]: s["score"] for s in report["scores"]} == {"empty": 0.0, "echo": 1.0}
    # Leave no request for a synthesizer of another test.
    psub = await bus.js.pull_subscribe_bind(durable=topology.SYNTHESIZER, stream=topology.TOOLS)
    with contextlib.suppress(Exception):
        for m in await psub.fetch(20, timeout=0.5):
            await m.ack()
    await psub.unsubscribe()
