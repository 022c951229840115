"""Synthesis after validation: coverage decisions (partial / refuse), the canary on live samples, the synthesis
report, the per-task tool summary of a run, and synthesis without the actor stack (``rlar tools route
--synthesize``, ``rlar bench synthesis``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bus import subjects
from bus.client import Bus, wait_for
from bus.config import NatsConfig
from bus.messages import Prompt, RouteDecision, ScoreGroup, ScoreItem, ToolRef
from rlar.agent.base import OfflineAgentConfig
from rlar.agent.offline import OfflineAgent
from rlar.registry import ToolRegistry
from rlar.sandbox_client import local_runner
from rlar.synthesis.canary import Canary, CanaryPolicy, independent_labeller
from rlar.synthesis.compose import SynthesisTask
from rlar.synthesis.loop import synthesize
from rlar.synthesis.report import summarize, to_markdown
from rlar.tool_summary import origin_label, tasks_lines, tasks_summary
from rlar.tools.base import ToolSpec
from tests.support.env import REPO
from tests.support.servers import TEST_TOPOLOGY

needs_bwrap = pytest.mark.skipif(not os.access("/usr/bin/bwrap", os.X_OK), reason="bubblewrap not installed")


def reward(
    sample_id: str,
    status: str = "ok",
    score: float | None = 1.0,
    tool: str = "synth-x",
    weight: float = 0.0,
    version: int = 1,
) -> Any:
    return SimpleNamespace(
        sample_id=sample_id,
        tool=tool,
        tool_version=version,
        status=status,
        score=score,
        weight=weight,
        latency_s=0.002,
    )


def test_the_canary_waits_for_enough_shadow_samples_then_judges_them() -> None:
    labeller = independent_labeller([{"rule": "letters", "min": 3, "max": 3}])
    canary = Canary("synth-x", 1, (0.0, 1.0), CanaryPolicy(samples=4), labeller, started=0.0)
    for i, text in enumerate(["tnr", "tnrs", "abc", "xyz"]):
        canary.observe_sample(f"s{i}", "3 letters:", text)
    canary.observe_reward(reward("s0", score=1.0))
    canary.observe_reward(reward("s1", score=0.0))
    canary.observe_reward(reward("s0", tool="exact_match", weight=1.0))  # another tool: not the shadow's
    assert canary.verdict(now=1.0) is None, "still watching"
    canary.observe_reward(reward("s2", score=1.0))
    canary.observe_reward(reward("s3", score=1.0))
    verdict = canary.verdict(now=2.0)
    assert verdict is not None and verdict.passed, verdict
    assert verdict.figures["agreement"] == 1.0 and verdict.figures["agreement_n"] == 4


def test_a_canary_that_errors_or_disagrees_on_live_samples_fails_with_the_reason() -> None:
    labeller = independent_labeller([{"rule": "letters", "min": 3, "max": 3}])
    errors = Canary("synth-x", 1, (0.0, 1.0), CanaryPolicy(samples=3), None, started=0.0)
    for i in range(3):
        errors.observe_reward(reward(f"s{i}", status="error", score=None))
    v = errors.verdict(now=1.0)
    assert v is not None and not v.passed and "0% of 3 live samples scored ok" in v.reason
    wrong = Canary("synth-x", 1, (0.0, 1.0), CanaryPolicy(samples=4), labeller, started=0.0)
    for i, text in enumerate(["tnr", "abc", "tnrs", "tnrsl"]):
        wrong.observe_sample(f"s{i}", "3 letters:", text)
        wrong.observe_reward(
            reward(f"s{i}", score=0.0 if len(text) == 3 else 1.0)
        )  # the opposite of the truth
    v = wrong.verdict(now=1.0)
    assert v is not None and not v.passed and "agrees with the second reading on 0%" in v.reason
    silent = Canary("synth-x", 1, (0.0, 1.0), CanaryPolicy(samples=4, timeout_s=10), None, started=0.0)
    v = silent.verdict(now=11.0)
    assert v is not None and not v.passed and "no shadow result" in v.reason


def test_the_report_counts_requests_valid_rejections_attempts_and_time() -> None:
    rows = [
        {
            "category": "registered_full",
            "registered": True,
            "attempts": 1,
            "rejections": [],
            "wall_s": 1.0,
            "coverage": {"coverage": 1.0},
        },
        {
            "category": "registered_partial",
            "registered": True,
            "attempts": 2,
            "rejections": ["separates"],
            "wall_s": 3.0,
            "coverage": {"coverage": 0.5},
        },
        {
            "category": "rejected_independent",
            "registered": False,
            "attempts": 1,
            "rejections": ["independent"],
            "wall_s": 2.0,
        },
        {"category": "no_probes", "registered": False, "attempts": 0, "rejections": [], "wall_s": 0.1},
    ]
    s = summarize(rows)
    assert (s["requests"], s["valid"], s["valid_full"], s["valid_partial"]) == (4, 2, 1, 1)
    assert s["failed_by_reason"] == {"no_probes": 1, "rejected_independent": 1}
    assert s["rejected_attempts_by_check"] == {"independent": 1, "separates": 1}
    assert s["attempts_total"] == 4 and s["attempts_per_valid"] == 2.0 and s["time_s_median"] == 1.5
    assert s["coverage_mean"] == 0.75 and "| requests | 4 |" in to_markdown(s)


def test_the_summary_lists_each_tasks_tools_with_their_origin_decisions_and_abstain_rate() -> None:
    synth = ToolSpec(
        name="synth-fmt",
        kind="sandbox",
        description="d",
        version=2,
        code="x",
        provenance={"origin": "synthesized"},
        params={"coverage": {"full": False}},
    )
    builtin = ToolSpec(name="exact_match", kind="rule", description="d", version=1)
    records = [
        {"step": 1, "reward/fmt": 0.1, "abstain/fmt": 1.0, "tools": {"fmt": ["synth-fmt v2 (shadow)"]}},
        {
            "step": 2,
            "reward/fmt": 0.5,
            "abstain/fmt": 0.0,
            "reward/copy": 0.4,
            "tools": {"fmt": ["synth-fmt v2"], "copy": ["exact_match v1"]},
        },
    ]
    decisions = [
        RouteDecision(
            signature="a", task="fmt", tools=[], backend="offline", reason="[pending] no tool fits"
        ),
        RouteDecision(
            signature="a",
            task="fmt",
            tools=[ToolRef(tool="synth-fmt", kind="sandbox", version=2)],
            backend="offline",
            reason="[synthesized] made for the request",
        ),
    ]
    out = tasks_summary(records, decisions, {("synth-fmt", 2): synth, ("exact_match", 1): builtin})
    fmt = out["fmt"]
    assert [(t["tool"], t["origin"], t["shadow"]) for t in fmt["tools"]] == [
        ("synth-fmt", "synthesised v2 (partial)", False),
        ("synth-fmt", "synthesised v2 (partial)", True),
    ]
    assert (
        fmt["routing"]["states"] == {"pending": 1, "synthesized": 1}
        and fmt["routing"]["last"]["state"] == "synthesized"
    )
    assert fmt["abstain"]["mean"] == 0.5 and out["copy"]["tools"][0]["origin"] == "built-in"
    assert origin_label(builtin, "quarantined") == "built-in, quarantined"
    assert tasks_lines(out) == [
        "  copy: reward 0.400 -> 0.400, abstain -; tools exact_match v1 [built-in] 1; routing by the feeder",
        "  fmt: reward 0.100 -> 0.500, abstain 50%; tools synth-fmt v2 [synthesised v2 (partial)] 1, "
        "synth-fmt v2 [synthesised v2 (partial)] 1 shadow; routing pending 1 synthesized 1",
    ]


@needs_bwrap
async def test_a_verifier_with_clauses_it_cannot_check_is_partial_or_refused() -> None:
    agent = OfflineAgent(OfflineAgentConfig())
    task = SynthesisTask(
        description="Write a haiku about rain. Use exactly 3 lines and no commas.",
        examples=[{"query": "Rain haiku", "reference": None}],
    )
    partial = await synthesize(task, agent, local_runner(), partial="register")
    assert partial.spec is not None and partial.category == "registered_partial"
    cov = partial.spec.params["coverage"]
    assert not cov["full"] and cov["checked"] == 2 and "haiku" in cov["unchecked"][0]["why"]
    assert "PARTIAL" in partial.spec.description and "Write a haiku about rain" in partial.spec.description
    refused = await synthesize(task, agent, local_runner(), partial="refuse")
    assert refused.spec is None and refused.category == "refused_partial" and "haiku" in refused.reason
    full = await synthesize(
        SynthesisTask(description="Write 4 letters only, no vowels:"), agent, local_runner()
    )
    assert (
        full.spec is not None and full.category == "registered_full" and full.spec.params["coverage"]["full"]
    )
    assert (
        full.spec.validation["independent"]["usable"]
        and "second_route" in full.spec.validation["independent"]["sources"]
    )


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "rlar.app.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@needs_bwrap
def test_tools_route_synthesize_gives_a_validated_verifier_without_the_actor_stack(tmp_path: Path) -> None:
    records = tmp_path / "records.jsonl"
    records.write_text(
        json.dumps(
            {"id": "f1", "task": "fmt", "query": "Write 4 letters only, no vowels:", "reference": None}
        )
        + "\n"
        + json.dumps(
            {"id": "f2", "task": "fmt", "query": "Write 4 letters only, no vowels:", "reference": None}
        )
        + "\n"
    )
    out = tmp_path / "tools.jsonl"
    proc = _cli(
        "tools",
        "route",
        str(records),
        "--backend",
        "offline",
        "--synthesize",
        "--out",
        str(out),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [json.loads(x) for x in proc.stdout.splitlines() if x.strip()]
    assert [x["none_fit"] for x in lines[:2]] == [True, True], "no tool checks a format stated in words"
    synthesized = [x["synthesized"] for x in lines if "synthesized" in x]
    assert len(synthesized) == 1 and synthesized[0]["full"] and synthesized[0]["records"] == 2
    assert "checks every clause" in proc.stderr and "✓ 'Write 4 letters only'" in proc.stderr
    exported = [json.loads(x) for x in out.read_text().splitlines()]
    spec = ToolSpec.from_dict(exported[0]["spec"])
    assert exported[0]["type"] == "tool" and spec.validation["passed"] and spec.kind == "sandbox"


@needs_bwrap
def test_bench_synthesis_scores_labelled_answers_and_reports_both_splits(tmp_path: Path) -> None:
    data = tmp_path / "labelled.jsonl"
    rows = [
        {
            "id": "a",
            "split": "dev",
            "instruction": "Answer in 5 words or fewer.",
            "checkable": True,
            "answers": [
                {"text": "Yes, it works.", "ok": True},
                {"text": "One two three four five six.", "ok": False},
            ],
        },
        {
            "id": "b",
            "split": "heldout",
            "instruction": "Write a poem about the sea in lowercase.",
            "checkable": False,
            "answers": [{"text": "the sea is wide", "ok": True}, {"text": "The sea is wide", "ok": False}],
        },
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = _cli("bench", "synthesis", "--data", str(data), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(proc.stdout.splitlines()[-1])
    dev, held = doc["splits"]["dev"], doc["splits"]["heldout"]
    assert dev["full"]["accuracy"] == 1.0 and dev["claims"]["claimed_full_and_checkable"] == 1
    # The poem's content is a clause no rule reads: refused (its answers would go to a judge or abstain).
    assert held["claims"]["claimed_full"] == 0 and held["synthesis"]["failed_by_reason"] == {
        "refused_partial": 1
    }
    assert held["judged"] == 0 and dev["synthesis"]["requests"] == 1
    assert dev["overall"]["precision"] == 1.0 and dev["overall"]["tasks_whole"] == 1.0
    assert held["overall"]["tasks_with_verifier"] == 0.0 and held["tasks"]["b"]["has_verifier"] is False
    proc = _cli("bench", "synthesis", "--data", str(data), "--json", "--partial", "register", cwd=tmp_path)
    held = json.loads(proc.stdout.splitlines()[-1])["splits"]["heldout"]
    assert held["synthesis"]["valid_partial"] == 1 and held["partial"]["answers"] == 2


@needs_bwrap
async def test_a_new_tool_scores_in_shadow_until_its_canary_passes_then_rewards(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    from actors.reward import RewardConfig, RewardWorker
    from actors.router import Router
    from actors.sandbox import SandboxActor, SandboxActorConfig
    from actors.synthesizer import Synthesizer, SynthesizerConfig
    from tests.support.reward_tools import running
    from tests.support.router import inbox, prompt, router_config

    task = f"canary-{uuid.uuid4().hex[:8]}"
    common: dict[str, Any] = dict(
        nats=NatsConfig(url=nats_url), topology=TEST_TOPOLOGY, run_dir=str(tmp_path), heartbeat_s=0.5
    )
    routed = await inbox(bus, subjects.routed(task), Prompt)
    agent = OfflineAgent(OfflineAgentConfig())
    router = Router(router_config(nats_url, tmp_path, wait_s=60), agent=agent)
    synth = Synthesizer(SynthesizerConfig(**common, sandbox="bus", canary={"samples": 4}), agent=agent)
    worker = RewardWorker(RewardConfig(**common, kinds=["sandbox"], register_builtins=False))
    async with (
        running(SandboxActor(SandboxActorConfig(**common)), bus),
        running(synth, bus),
        running(worker, bus),
        running(router, bus),
    ):
        await bus.js_publish(
            subjects.prompts(task),
            prompt(task, 0, query="Write 4 letters only, no vowels:"),
            msg_id=f"{task}/0",
        )
        # A delivery routed twice under load (a redelivery) is dropped by the routed stream (msg_id = prompt id).
        first = (await routed.wait(1, timeout_s=60))[0]
        (shadow,) = first.tools
        assert first.route["state"] == "canary" and shadow.weight == 0.0, "no fallback: the shadow tool alone"
        texts = ("tnrs", "abcd", "tn", "xyzw")  # live samples, scored in shadow
        req = ScoreGroup(
            prompt_id=first.prompt_id,
            generation="g",
            task=task,
            tools=[shadow],
            query=str(first.prompt),
            items=[ScoreItem(index=j, response=t) for j, t in enumerate(texts)],
        )
        await bus.js_publish(subjects.score(shadow.kind), req, msg_id=f"{req.prompt_id}/{shadow.tool}")
        assert await wait_for(lambda: synth.counters["canary_passed"] == 1, 60.0)
        status = await ToolRegistry(bus).status(shadow.tool, shadow.version)
        assert status["canary"]["state"] == "passed" and status["canary"]["info"]["shadow_results"] == 4
        await bus.js_publish(
            subjects.prompts(task),
            prompt(task, 1, query="Write 4 letters only, no vowels:"),
            msg_id=f"{task}/1",
        )
        assert await wait_for(lambda: len({p.prompt_id for p in routed.items}) == 2, 60.0)
    promoted = next(p for p in routed.items if p.prompt_id != first.prompt_id)
    assert promoted.route["state"] == "synthesized" and [(t.tool, t.weight) for t in promoted.tools] == [
        (shadow.tool, 1.0)
    ]
    canaries = (tmp_path / "synthesis" / "canaries.jsonl").read_text().splitlines()
    assert json.loads(canaries[0])["passed"] and (tmp_path / "synthesis" / "outcomes.jsonl").exists()


WRONG = "def reward(q, r, ref, m):\n    return 1.0 if len(r.split()) == 20 else 0.0\n"  # "20 words or fewer" misread
RIGHT = "def reward(q, r, ref, m):\n    n = len(r.split())\n    return 1.0 if 1 <= n <= 20 else 0.0\n"


@needs_bwrap
async def test_a_models_misreading_is_caught_by_the_probes_it_wrote_for_the_task(
    monkeypatch: pytest.MonkeyPatch, no_ambient_anthropic: None
) -> None:
    """With the Messages API backend the second route is the model asked, separately, for test answers; the
    verifier it then writes with the classic misreading fails on them, and the retry (told why) passes."""
    from rlar.agent.anthropic_agent import AnthropicAgent
    from rlar.agent.base import AnthropicAgentConfig
    from rlar.standins.anthropic_server import MessagesServer

    monkeypatch.setenv("RLAR_TEST_KEY", "sk-test")
    seen: list[str] = []

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        tool = body["tool_choice"]["name"]
        seen.append(tool)
        if tool == "submit_probes":
            data = {
                "probes": [
                    {"response": "Short and clear.", "label": "good", "why": "3 words"},
                    {"response": " ".join(["word"] * 30), "label": "bad", "why": "30 words"},
                ]
            }
        else:
            retry = any(
                b.get("type") == "tool_result"
                for m in body["messages"]
                for b in (m["content"] if isinstance(m["content"], list) else [])
            )
            data = {
                "code": RIGHT if retry else WRONG,
                "score_range": [0, 1],
                "needs_reference": False,
                "rationale": "r",
            }
        block = {"type": "tool_use", "id": f"toolu_{len(seen)}", "name": tool, "input": data}
        return {"content": [block]}

    with MessagesServer() as srv:
        srv.respond = respond
        agent = AnthropicAgent(
            AnthropicAgentConfig(
                base_url=srv.url,
                api_key_env="RLAR_TEST_KEY",
                max_retries=1,
                backoff_base_s=0.01,
                timeout_s=10,
            )
        )
        try:
            out = await synthesize(
                SynthesisTask(description="Answer in 20 words or fewer."), agent, local_runner()
            )
        finally:
            await agent.aclose()
    assert seen == ["submit_probes", "submit_reward_function", "submit_reward_function"]
    assert [r.passed for r in out.attempts] == [False, True]
    first = out.attempts[0].validation
    assert any(
        p["source"] == "agent" and p["label"] == "good" and p["score"] == 0.0 for p in first["probes"]
    ), "the model's own good answer fails its misread verifier"
    assert out.spec is not None and out.spec.validation["independent"]["sources"] == ["agent", "dataset"]
