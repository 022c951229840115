"""The router actor against a real nats-server, the real registry, the offline agent and (end to end) the
synthesizer, sandbox actor and a reward worker. Each test uses its own task names, so signatures and
subjects do not collide with other tests sharing the server."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nats.js.errors
import pytest
from nats.aio.msg import Msg

from actors.reward import RewardConfig, RewardWorker
from actors.router import Router
from actors.sandbox import SandboxActor, SandboxActorConfig
from actors.synthesizer import Synthesizer, SynthesizerConfig
from bus import subjects, topology
from bus.client import Bus
from bus.embedded import EmbeddedServer
from bus.messages import (
    DeadLetter,
    Event,
    Prompt,
    RewardGroup,
    RouteDecision,
    ScoreGroup,
    ScoreItem,
    ToolKind,
    ToolRef,
    ToolRequest,
)
from rlar.agent.anthropic_agent import AnthropicAgent
from rlar.agent.base import AnthropicAgentConfig, OfflineAgentConfig
from rlar.agent.offline import OfflineAgent
from rlar.registry import ToolRegistry
from rlar.routing import Decision
from rlar.standins.anthropic_server import MessagesServer
from rlar.synthesis.compose import SynthesisTask, compose
from rlar.tools.synthesized import synthesized_spec
from tests.support.env import REPO, actor_env
from tests.support.reward_tools import running
from tests.support.router import ChoosingModel, actor_fields, inbox, prompt, router_config
from tests.support.servers import serve_nats

needs_bwrap = pytest.mark.skipif(not os.access("/usr/bin/bwrap", os.X_OK), reason="bubblewrap not installed")
BULLETS = "Answer must contain exactly three bullet points, each under ten words."


@pytest.fixture(scope="module")
def nats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    """A bus of this module's own: routing depends on what the registry holds, so tools registered by
    other modules' tests (synthesised or retrieved ones) must not be visible here."""
    yield from serve_nats(tmp_path_factory, "nats-router")


@pytest.fixture(scope="module")
def nats_url(nats_server: EmbeddedServer) -> str:
    return nats_server.url


@pytest.fixture(scope="module")
def agent() -> OfflineAgent:
    # One embedding model for the whole file; judge and reward model are not configured here, so the
    # readiness rules apply as in an offline deployment.
    a = OfflineAgent(OfflineAgentConfig())
    a.embedder(["warm up"])
    return a


@pytest.fixture
async def registry(bus: Bus) -> ToolRegistry:
    reg = ToolRegistry(bus)
    await reg.ensure_builtins()
    return reg


async def drop_requests(bus: Bus, durable: str, request_ids: set[str]) -> None:
    """Ack our own leftover tool requests so later tests' synthesizers do not pick them up."""
    psub = await bus.js.pull_subscribe_bind(durable=durable, stream=topology.TOOLS)
    try:
        for _ in range(3):
            try:
                msgs = await psub.fetch(20, timeout=0.5)
            except Exception:
                break
            for m in msgs:
                if any(rid in m.data.decode("latin-1") for rid in request_ids):
                    await m.ack()
                else:
                    await m.nak()
    finally:
        await psub.unsubscribe()


@pytest.fixture
def task_name() -> str:
    return f"rt-{uuid.uuid4().hex[:8]}"


async def test_prompts_of_one_kind_cost_one_agent_call_and_carry_provenance(
    bus: Bus, nats_url: str, tmp_path: Path, agent: OfflineAgent, registry: ToolRegistry, task_name: str
) -> None:
    routed = await inbox(bus, subjects.routed(task_name), Prompt)
    decisions = await inbox(bus, subjects.TOOLS_DECISIONS, RouteDecision)
    desc = f"Evaluate the integer addition ({task_name}). A good answer is the number."
    router = Router(router_config(nats_url, tmp_path), agent=agent)
    async with running(router, bus):
        for i in range(6):
            p = prompt(
                task_name,
                i,
                query=f"{i}+{i}=",
                reference=str(2 * i),
                description=desc,
                domain="math",
                task_type="arithmetic",
                answer_format="number",
                data_source="test",
            )
            await bus.js_publish(subjects.prompts(task_name), p, msg_id=p.prompt_id)
        got = await routed.wait(6)
    assert sorted(p.prompt_id for p in got) == sorted(f"{task_name}/e0/{i}" for i in range(6))
    for p in got:
        assert [t.tool for t in p.tools] == ["math_verify"] and p.tools[0].kind == "rule"
        assert p.tools[0].version >= 1 and p.tools[0].weight == 1.0 and p.tools[0].needs_reference
        assert p.route["backend"] == "offline" and p.route["model"].startswith("offline:all-MiniLM-L6-v2")
        assert (
            p.route["state"] == "routed" and len(p.route["prompt_hash"]) == 16 and p.route["confidence"] > 0.5
        )
    assert router.counters["agent_calls"] == 1 and router.counters["routed"] == 6
    mine = [d for d in decisions.items if d.task == task_name]
    assert len(mine) == 1 and mine[0].backend == "offline" and mine[0].signature == got[0].route["signature"]
    kv = await bus.js.key_value(topology.DECISIONS_BUCKET)
    stored = Decision.from_json((await kv.get(mine[0].signature)).value or b"")
    assert stored.state == "routed" and stored.tools[0].tool == "math_verify"

    # A restarted router reuses the stored decision: the agent is not asked again.
    router2 = Router(router_config(nats_url, tmp_path), agent=agent)
    async with running(router2, bus):
        p = prompt(
            task_name,
            99,
            query="40+2=",
            reference="42",
            description=desc,
            domain="math",
            task_type="arithmetic",
            answer_format="number",
            data_source="test",
        )
        await bus.js_publish(subjects.prompts(task_name), p, msg_id=p.prompt_id)
        await routed.wait(7)
    assert router2.counters["agent_calls"] == 0 and router2.counters["kv_hits"] == 1

    # The decision is visible to operators.
    r = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "rlar.app.cli", "tools", "decisions", "--json", "--nats", nats_url],
        capture_output=True,
        text=True,
        timeout=60,
        env=actor_env(),
        cwd=REPO,
    )
    assert r.returncode == 0, r.stderr
    listed = [json.loads(line) for line in r.stdout.splitlines()]
    row = next(x for x in listed if x["signature"] == mine[0].signature)
    assert row["task"] == task_name and row["state"] == "routed" and row["backend"] == "offline"


class Delivery(Msg):
    """One delivery of a prompt as the router's handler receives it: records what the router answers on it."""

    def __init__(self, subject: str) -> None:
        super().__init__(_client=None, subject=subject)  # type: ignore[arg-type]
        self.answers: list[str] = []

    async def ack(self) -> None:
        self.answers.append("ack")

    async def in_progress(self) -> None:
        self.answers.append("in_progress")

    async def term(self) -> None:
        self.answers.append("term")


class GatedAgent:
    """The offline agent, answering only once ``gate`` is set: a decision slower than the ack-wait."""

    def __init__(self, agent: OfflineAgent) -> None:
        self.agent, self.gate, self.asked = agent, asyncio.Event(), asyncio.Event()
        self.backend, self.model = agent.backend, agent.model

    async def ask(self, request: Any) -> Any:
        self.asked.set()
        await self.gate.wait()
        return await self.agent.ask(request)

    def metrics(self) -> dict[str, Any]:
        return self.agent.metrics()

    async def aclose(self) -> None:
        return None


async def test_a_prompt_redelivered_while_decided_or_after_it_was_routed_is_routed_once(
    bus: Bus, nats_url: str, tmp_path: Path, agent: OfflineAgent, registry: ToolRegistry, task_name: str
) -> None:
    """At-least-once delivery: a prompt comes again while its first delivery waits for the agent (its
    in-progress marks came late on a loaded host), or after it was routed (the redelivery crossed the ack).
    Either way one routed copy is published and every delivery is acked."""
    routed = await inbox(bus, subjects.routed(task_name), Prompt)
    gated = GatedAgent(agent)
    router = Router(router_config(nats_url, tmp_path), agent=gated)  # type: ignore[arg-type]
    p = prompt(task_name, 0, query="3+4=", reference="7", description="Integer addition.", domain="math")
    first, second, third = (Delivery(subjects.prompts(task_name)) for _ in range(3))
    async with running(router, bus):
        handling = asyncio.create_task(router._on_prompt(p, first))
        await asyncio.wait_for(gated.asked.wait(), 30)
        redelivered = asyncio.create_task(router._on_prompt(dataclasses.replace(p), second))
        await asyncio.wait([redelivered], timeout=10)  # taken over at once: it waits for nothing
        gated.gate.set()
        await asyncio.wait_for(asyncio.gather(handling, redelivered), 60)
        await router._on_prompt(dataclasses.replace(p), third)
        await routed.wait(1)
        # Every publish of the router was confirmed before its handler returned; after this round trip a
        # second routed copy would be in our subscription's queue, and the counters say what was published.
        await bus.nc.flush()
    assert [x.prompt_id for x in routed.items] == [p.prompt_id]
    assert "ack" in second.answers and "ack" in third.answers, "the live deliveries are acked"
    assert router.counters["routed"] == 1 and router.counters["agent_calls"] == 1
    assert router.counters["redelivered_deciding"] == 1 and router.counters["redelivered_routed"] == 1


async def test_queries_of_one_task_that_differ_get_their_own_decisions(
    bus: Bus, nats_url: str, tmp_path: Path, agent: OfflineAgent, registry: ToolRegistry, task_name: str
) -> None:
    routed = await inbox(bus, subjects.routed(task_name), Prompt)
    router = Router(router_config(nats_url, tmp_path), agent=agent)
    mixed = [
        ("What is 6 times 7?", "42"),
        ("Write f(x) returning x squared.", "assert f(3) == 9\nassert f(0) == 0"),
        ("What is 5 plus 8?", "13"),
        ("Write g(s) returning s reversed.", "assert g('ab') == 'ba'"),
    ]
    async with running(router, bus):
        for i, (query, ref) in enumerate(mixed):
            p = prompt(task_name, i, query=query, reference=ref, description="Mixed practice set.")
            await bus.js_publish(subjects.prompts(task_name), p, msg_id=p.prompt_id)
        got = await routed.wait(4)
    tools = {p.prompt_id: p.tools[0].tool for p in got}
    assert [tools[f"{task_name}/e0/{i}"] for i in range(4)] == [
        "math_verify",
        "code_tests",
        "math_verify",
        "code_tests",
    ]
    assert router.counters["agent_calls"] == 2, "one decision per kind of query, not per prompt nor per task"


async def test_without_a_tool_the_prompts_wait_then_take_the_declared_fallback(
    bus: Bus, nats_url: str, tmp_path: Path, agent: OfflineAgent, registry: ToolRegistry, task_name: str
) -> None:
    routed = await inbox(bus, subjects.routed(task_name), Prompt)
    requests = await inbox(bus, subjects.TOOLS_REQUEST_SYNTH, ToolRequest)
    wait_s = 5.0
    cfg = router_config(
        nats_url,
        tmp_path,
        wait_s=wait_s,
        examples=3,
        fallback={task_name: [{"tool": "exact_match", "weight": 1}]},
    )
    router = Router(cfg, agent=agent)
    # All three are in the stream before the router starts, so it holds them together as soon as it asks for a
    # tool (published while it runs, a loaded machine could pass wait_s between them). The wait is checked from
    # the router's own records, not by looking while it waits.
    for i in range(3):
        p = prompt(task_name, i, query=f"Tips for topic {i}?", description=f"{BULLETS} ({task_name})")
        await bus.js_publish(subjects.prompts(task_name), p, msg_id=p.prompt_id)
    async with running(router, bus):
        await requests.wait(1)
        got = await routed.wait(3, timeout_s=120)
    req = next(r for r in requests.items if r.task == task_name)
    assert {c["rule"] for c in req.constraints["rules"]} == {"bullets", "words"}
    assert [e["query"] for e in req.examples] == [f"Tips for topic {i}?" for i in range(3)], (
        "the request waits for several held prompts and sends them all"
    )
    assert router.counters["held"] == 3, "the prompts wait for a tool"
    kv = await bus.js.key_value(topology.DECISIONS_BUCKET)
    stored = Decision.from_json((await kv.get(got[0].route["signature"])).value or b"")
    assert stored.state == "fallback" and stored.decided_at - stored.requested_at >= wait_s
    for p in got:
        assert p.route["state"] == "fallback" and [t.tool for t in p.tools] == ["exact_match"]
        assert f"no tool registered within {wait_s:g}s" in p.route["reason"]
    await drop_requests(bus, topology.SYNTHESIZER, {req.request_id})


async def test_a_stopping_router_leaves_its_tool_request_to_the_next_router(
    bus: Bus, nats_url: str, tmp_path: Path, agent: OfflineAgent, registry: ToolRegistry, task_name: str
) -> None:
    """A request still waiting for examples when the router stops is not sent (it would reach a synthesizer and a
    sandbox that are stopping too, and its failure would dead-letter the prompts): the decision stays pending
    and the prompt unacked, and the next router adopts the decision and sends the request."""
    requests = await inbox(bus, subjects.TOOLS_REQUEST_SYNTH, ToolRequest)
    first = Router(
        router_config(nats_url, tmp_path, wait_s=600, examples=3, request_delay_s=600), agent=agent
    )
    p = prompt(task_name, 0, query="Tips for the garden?", description=f"{BULLETS} ({task_name})")
    await bus.js_publish(subjects.prompts(task_name), p, msg_id=p.prompt_id)
    async with running(first, bus):
        for _ in range(1200):
            if first.counters["held"]:
                break
            await asyncio.sleep(0.05)
        assert first.counters["held"] == 1, "the prompt waits for a tool"
        (d,) = [d for d in first.decisions.values() if d.task == task_name]
    # Stopped (its connection drained): a request it had published would be on the server before this marker.
    marker = ToolRequest(request_id=f"marker-{task_name}", signature="", task=task_name, description="")
    await bus.publish(subjects.TOOLS_REQUEST_SYNTH, marker)
    await requests.wait(1)
    assert [r.request_id for r in requests.items if r.task == task_name] == [marker.request_id]
    assert first.counters["tool_requests"] == 0
    kv = await bus.js.key_value(topology.DECISIONS_BUCKET)
    assert Decision.from_json((await kv.get(d.signature)).value or b"").state == "pending"
    # The next router gets the prompt redelivered after the ack-wait, adopts the pending decision, and asks.
    routed = await inbox(bus, subjects.routed(task_name), Prompt)
    cfg = router_config(
        nats_url,
        tmp_path,
        wait_s=600,
        examples=3,
        request_delay_s=0.2,
        fallback={task_name: [{"tool": "exact_match", "weight": 1}]},
    )
    second = Router(cfg, agent=agent)
    async with running(second, bus):
        await requests.wait(2, timeout_s=120)
        assert [r.request_id for r in requests.items if r.task == task_name][1] == d.request_id
        # A running router takes a failure report: the prompt falls back and is acked (no later test's router
        # gets it redelivered).
        failed = {"request_id": d.request_id, "signature": d.signature, "task": task_name}
        await bus.publish(
            subjects.events("synthesizer"),
            Event(actor="synthesizer", kind="synthesis_failed", message="test: no verifier", data=failed),
        )
        (got,) = await routed.wait(1, timeout_s=120)
    assert got.route["state"] == "fallback" and "synthesis failed" in got.route["reason"]
    await drop_requests(bus, topology.SYNTHESIZER, {d.request_id, marker.request_id})


async def test_unroutable_prompts_are_dead_lettered_with_the_reason(
    bus: Bus, nats_url: str, tmp_path: Path, agent: OfflineAgent, registry: ToolRegistry, task_name: str
) -> None:
    dead = await inbox(bus, subjects.dlq(subjects.prompts(task_name)), DeadLetter)
    router = Router(router_config(nats_url, tmp_path, synthesis=False), agent=agent)
    async with running(router, bus):
        p = prompt(task_name, 0, query="Anything?", description=f"Write exactly four lines. ({task_name})")
        await bus.js_publish(subjects.prompts(task_name), p, msg_id=p.prompt_id)
        letters = await dead.wait(1)
    assert "unroutable" in letters[0].reason and "no fallback declared" in letters[0].reason
    assert router.counters["dead_lettered"] == 1


async def test_when_the_agent_fails_prompts_take_the_fallback_and_the_agent_is_asked_again_later(
    bus: Bus,
    nats_url: str,
    tmp_path: Path,
    registry: ToolRegistry,
    task_name: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("RLAR_TEST_KEY", "sk-test")
    routed = await inbox(bus, subjects.routed(task_name), Prompt)
    with MessagesServer() as srv:
        srv.default = {"status": 503, "etype": "overloaded_error"}
        model = AnthropicAgent(
            AnthropicAgentConfig(
                base_url=srv.url, api_key_env="RLAR_TEST_KEY", max_retries=1, backoff_base_s=0.01, timeout_s=5
            )
        )
        cfg = router_config(
            nats_url, tmp_path, agent_retry_s=0.5, fallback={"*": [{"tool": "normalized_match", "weight": 1}]}
        )
        router = Router(cfg, agent=model)
        async with running(router, bus):
            for i in range(2):
                p = prompt(task_name, i, query="Capital of France?", reference="Paris", description=task_name)
                await bus.js_publish(subjects.prompts(task_name), p, msg_id=p.prompt_id)
                await routed.wait(i + 1)
                await asyncio.sleep(0.6)
        assert srv.count == 4, (
            "two prompts 0.6 s apart: the failed decision expired, so the agent was asked twice"
        )
    for p in routed.items:
        assert p.route["state"] == "fallback" and p.tools[0].tool == "normalized_match"
        assert "agent failed" in p.route["reason"] and "503" in p.route["reason"]
    decided = await bus.kv_keys(topology.DECISIONS_BUCKET)
    assert p.route["signature"] not in decided, "a decision made without the agent is not stored"


async def _register_verifier(registry: ToolRegistry, task: str, description: str, **params: Any) -> Any:
    st = SynthesisTask(description=description, task=task, examples=[{"query": "q"}])
    draft = compose(st)
    spec = synthesized_spec(
        name=f"synth-{task}",
        description=f"verifier for {task}",
        code=draft.code,
        score_range=(0.0, 1.0),
        task_types=[task],
        answer_formats=[],
        params={"constraints": st.all_constraints(), **params},
        provenance={"origin": "synthesized", "author": "offline", "request_id": f"manual-{task}"},
        validation={"passed": True, "reason": "test", "pairwise": 1.0},
    )
    return await registry.register(spec, by="test")


async def test_a_collapsed_synthesised_tool_is_quarantined_and_its_task_rerouted(
    bus: Bus, nats_url: str, tmp_path: Path, agent: OfflineAgent, registry: ToolRegistry, task_name: str
) -> None:
    desc = f"Write exactly five lines of verse. ({task_name})"
    spec = await _register_verifier(registry, task_name, desc)
    routed = await inbox(bus, subjects.routed(task_name), Prompt)
    events = await inbox(bus, subjects.events("router"), Event)
    cfg = router_config(
        nats_url,
        tmp_path,
        wait_s=1.0,
        fallback={task_name: [{"tool": "exact_match", "weight": 1}]},
        health={"min_calls": 20},
    )
    router = Router(cfg, agent=agent)
    async with running(router, bus):
        p = prompt(task_name, 0, query="A poem about rain", description=desc)
        await bus.js_publish(subjects.prompts(task_name), p, msg_id=p.prompt_id)
        first = (await routed.wait(1))[0]
        assert first.tools == [
            ToolRef(tool=spec.name, version=spec.version, kind=ToolKind.SANDBOX, weight=1.0)
        ]
        assert await router.check_health() == [], "no calls yet: nothing to judge"
        # Every score at the top of the range: it rewards everything.
        await registry.record_stats(spec.name, spec.version, {"calls": 40, "ok": 40, "hist": [0] * 9 + [40]})
        flagged = await router.check_health()
        assert flagged and flagged[0][:2] == (spec.name, spec.version) and "all max" in flagged[0][2]
        status = await registry.status(spec.name, spec.version)
        assert status["state"] == "quarantined" and "all max" in status["reason"]
        # The event is published on core NATS during check_health; its delivery to this inbox is asynchronous.
        deadline = asyncio.get_running_loop().time() + 60
        while True:
            reroutes = [e for e in events.items if e.kind == "reroute" and e.data["task"] == task_name]
            if reroutes or asyncio.get_running_loop().time() > deadline:
                break
            await asyncio.sleep(0.05)
        assert reroutes and reroutes[0].level == "warning"
        calls_before = router.counters["agent_calls"]
        p = prompt(task_name, 1, query="A poem about snow", description=desc)
        await bus.js_publish(subjects.prompts(task_name), p, msg_id=p.prompt_id)
        second = (await routed.wait(2, timeout_s=120))[1]
    assert router.counters["agent_calls"] == calls_before + 1, "the task was decided afresh"
    assert second.route["state"] == "fallback" and all(t.tool != spec.name for t in second.tools)
    await drop_requests(bus, topology.SYNTHESIZER, {second.route["request_id"]})


@needs_bwrap
async def test_a_task_no_tool_fits_gets_a_synthesised_verifier_and_its_prompts_get_rewards(
    bus: Bus, nats_url: str, tmp_path: Path, agent: OfflineAgent, registry: ToolRegistry, task_name: str
) -> None:
    common = actor_fields(nats_url, tmp_path)
    routed = await inbox(bus, subjects.routed(task_name), Prompt)
    rewards = await inbox(bus, subjects.rewards(task_name), RewardGroup)
    desc = f"{BULLETS} Topic varies. ({task_name})"
    # wait_s far beyond the test: state "synthesized" (not "fallback") shows the tool came before the wait ended.
    router = Router(router_config(nats_url, tmp_path, wait_s=900), agent=agent)
    # The queries are content no rule judges: registered as partial (the default, "refuse", would not).
    synth = Synthesizer(
        SynthesizerConfig(**common, sandbox="bus", canary={"samples": 0}, partial="register"), agent=agent
    )
    sandbox = SandboxActor(SandboxActorConfig(**common))
    worker = RewardWorker(RewardConfig(**common, kinds=["sandbox"], register_builtins=False))
    async with running(sandbox, bus), running(synth, bus), running(worker, bus), running(router, bus):
        for i in range(3):
            p = prompt(
                task_name,
                i,
                query=f"How to stay focused, part {i}?",
                description=desc,
                domain="chat",
                task_type="instruction_following",
                answer_format="bullets",
            )
            await bus.js_publish(subjects.prompts(task_name), p, msg_id=p.prompt_id)
        got = await routed.wait(3, timeout_s=120)
        tool = got[0].tools[0]
        good = "- Put the phone in another room\n- Work in short timed blocks\n- Take a walk between blocks"
        bad = "Just focus harder and stop procrastinating, it is not that difficult really."
        for p in got:
            req = ScoreGroup(
                prompt_id=p.prompt_id,
                generation="g",
                task=task_name,
                tools=[tool],
                query=str(p.prompt),
                items=[ScoreItem(index=0, response=good), ScoreItem(index=1, response=bad)],
                reference=p.reference,
                metadata=p.metadata,
            )
            await bus.js_publish(subjects.score(tool.kind), req, msg_id=f"{p.prompt_id}/{tool.tool}")
        got_rewards = await rewards.wait(3, timeout_s=120)
    assert {p.route["state"] for p in got} == {"synthesized"} and tool.kind == "sandbox"
    assert tool.tool.startswith(f"synth-{task_name}")
    spec = await registry.get(tool.tool, tool.version)
    assert spec is not None and spec.validation["passed"] and spec.provenance["origin"] == "synthesized"
    assert spec.provenance["request_id"] == got[0].route["request_id"] and spec.code.startswith(
        '"""Reward function'
    )
    assert {r["isolation"] for r in spec.validation["runs"]} == {"bwrap"}
    by_prompt = {r.prompt_id: r.items for r in got_rewards}
    for p in got:
        good_r, bad_r = by_prompt[p.prompt_id]
        assert good_r.status == "ok" and good_r.score == 1.0
        assert bad_r.status == "ok" and bad_r.score is not None and bad_r.score < 0.5
    log_file = tmp_path / "synthesis" / f"{got[0].route['request_id']}.jsonl"
    assert log_file.exists() and '"passed": true' in log_file.read_text()


async def test_when_synthesis_fails_the_waiting_prompts_fall_back_at_once(
    bus: Bus, nats_url: str, tmp_path: Path, agent: OfflineAgent, registry: ToolRegistry, task_name: str
) -> None:
    common = actor_fields(nats_url, tmp_path)
    routed = await inbox(bus, subjects.routed(task_name), Prompt)
    # Open chat with no judge and no reward model configured: nothing fits, and nothing can be composed.
    cfg = router_config(
        nats_url, tmp_path, wait_s=600, fallback={task_name: [{"tool": "contains_match", "weight": 1}]}
    )
    router = Router(cfg, agent=agent)
    synth = Synthesizer(SynthesizerConfig(**common, sandbox="local"), agent=agent)
    async with running(synth, bus), running(router, bus):
        p = prompt(
            task_name, 0, query="Tell me about your day.", description=f"Friendly small talk ({task_name})."
        )
        await bus.js_publish(subjects.prompts(task_name), p, msg_id=p.prompt_id)
        got = (await routed.wait(1, timeout_s=120))[0]
    # The failure report, not wait_s (600 s), ended the wait: the reason says so.
    assert got.route["state"] == "fallback" and "synthesis failed" in got.route["reason"]
    # Small talk is content no rule judges: refused at once (partial = "refuse"), before any composing.
    assert "would not check every clause" in got.route["reason"] and got.tools[0].tool == "contains_match"
    assert synth.counters["failed"] == 1


async def test_a_kind_the_router_is_unsure_of_goes_to_the_model_agent_else_the_fallback_else_abstains(
    bus: Bus,
    nats_url: str,
    tmp_path: Path,
    agent: OfflineAgent,
    registry: ToolRegistry,
    task_name: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Selective routing: with ``min_confidence = 1.0`` no calibrated decision is sure enough (a confidence is
    a probability below 1). Without a model agent or a fallback the samples abstain, loudly; a declared
    fallback takes the kind; a model agent decides it."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("RLAR_TEST_KEY", "sk-test")
    events = await inbox(bus, subjects.events("router"), Event)

    async def route_one(name: str, router: Router) -> Prompt:
        routed = await inbox(bus, subjects.routed(name), Prompt)
        async with running(router, bus):
            p = prompt(
                name, 0, query="Capital of France?", reference="Paris", description=f"Answer ({name})."
            )
            await bus.js_publish(subjects.prompts(name), p, msg_id=p.prompt_id)
            got = await routed.wait(1)
        # On a loaded host a prompt can be redelivered before its first decision is taken (the route is then
        # published twice under one message id): every copy carries the one decision.
        assert {(x.prompt_id, x.route["signature"], x.route["state"]) for x in got} == {
            (p.prompt_id, got[0].route["signature"], got[0].route["state"])
        }
        return got[0]

    alone = await route_one(
        task_name, Router(router_config(nats_url, tmp_path, min_confidence=1.0), agent=agent)
    )
    assert alone.tools == [] and alone.route["state"] == "abstain" and 0 < alone.route["confidence"] < 1
    assert alone.route["reason"].startswith(
        f"low confidence {alone.route['confidence']:.2f} < threshold 1.00"
    )
    assert "no fallback declared: its samples ABSTAIN" in alone.route["reason"] and alone.route["why"]
    warned = [e for e in events.items if e.kind == "low_confidence" and e.data["task"] == task_name]
    assert len(warned) == 1 and warned[0].level == "warning" and warned[0].data["state"] == "abstain"
    assert f'in [router]: fallback."{task_name}" = [{{ tool = "' in warned[0].message
    kv = await bus.js.key_value(topology.DECISIONS_BUCKET)
    with pytest.raises(nats.js.errors.KeyNotFoundError):
        await kv.get(
            alone.route["signature"]
        )  # in memory only: a router with a fallback declared decides anew

    second = f"{task_name}-fb"
    cfg = router_config(
        nats_url, tmp_path, min_confidence=1.0, fallback={second: [{"tool": "normalized_match", "weight": 1}]}
    )
    fell = await route_one(second, Router(cfg, agent=agent))
    assert [t.tool for t in fell.tools] == ["normalized_match"] and fell.route["state"] == "fallback"

    third = f"{task_name}-model"
    with ChoosingModel(["exact_match"]) as model:
        router = Router(router_config(nats_url, tmp_path, min_confidence=1.0), agent=agent, model_agent=model)
        asked = await route_one(third, router)
    assert [t.tool for t in asked.tools] == ["exact_match"] and asked.route["state"] == "routed"
    assert (
        asked.route["backend"] == "anthropic"
        and "asked the model agent: offline confidence" in asked.route["reason"]
    )
    assert router.counters["model_agent_calls"] == 1 and router.counters["escalated"] == 1
