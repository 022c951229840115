"""The agentic path on a real language model served locally: SmolLM2-135M-Instruct behind `rlar serve-model`.

One vLLM server for the module (started by the CLI as a user would, ~100-130 s on a loaded 2-core machine);
every test bounds its calls (small ``max_tokens``, one synthesis attempt, a handful of judged responses). The
model is weak on purpose: what is tested is that whatever it answers is parsed, validated, repaired once or
refused with the reason; that its code goes through the same gates; and that a judge which cannot order
labelled pairs is refused for the task, which then abstains loudly. Nothing here is scripted.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from actors.router import Router
from bus import subjects
from bus.client import Bus
from bus.embedded import EmbeddedServer
from bus.messages import Event, Prompt
from rlar.agent import AnthropicAgentConfig, OpenAIAgentConfig, make_agent
from rlar.agent.endpoints import ModelEndpoint, judge_params
from rlar.agent.json_tools import validate_input
from rlar.agent.openai_agent import OpenAIAgent
from rlar.registry import ToolRegistry
from rlar.routing import CHOOSE_TOOL, RoutingQuery, parse_route, routing_request
from rlar.sandbox_client import local_runner
from rlar.synthesis.compose import SynthesisTask
from rlar.synthesis.drafting import SUBMIT_TOOL
from rlar.synthesis.loop import synthesize
from rlar.tools import ToolInput, builtin_specs, make_tool
from tests.support.env import REPO
from tests.support.reward_tools import running
from tests.support.router import inbox, prompt, router_config
from tests.support.servers import serve_nats

pytestmark = pytest.mark.timeout(900)

MODEL = "smollm2"
SKY = "Answer in exactly three words: what colour is the sky?"
EXAMPLES = [
    {"response": "The sky's blue.", "ok": True},
    {"response": "Blue, usually, friend.", "ok": True},
    {"response": "Raster discipline broadcasters", "ok": False},
    {"response": "The sky is usually a light blue colour.", "ok": False},
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`rlar serve-model smollm2` on a free port, as a user starts it: its first stdout line is the base URL."""
    log = tmp_path_factory.mktemp("model") / "vllm.log"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("RLAR_CACHE_DIR", None)  # rlar's own cache: the checkpoint is converted once per machine
    cmd = [sys.executable, "-m", "rlar.app.cli", "serve-model", MODEL, "--name", MODEL, "--log", str(log)]
    cmd += ["--max-model-len", "4096", "--timeout", "420"]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    deadline = time.monotonic() + 480
    url = ""
    while time.monotonic() < deadline and proc.poll() is None:
        ready, _, _ = select.select([proc.stdout], [], [], 2.0)
        if ready:
            url = proc.stdout.readline().decode().strip()
            break
    if not url.startswith("http://127.0.0.1:"):
        proc.kill()
        err = proc.stderr.read().decode()[-2000:] if proc.stderr else ""
        tail = log.read_text()[-2000:] if log.exists() else ""
        pytest.fail(f"rlar serve-model did not print a URL (rc {proc.poll()}):\n{err}\n{tail}")
    try:
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)  # the CLI stops the server's whole process group
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()


def endpoint(url: str, **kw: Any) -> ModelEndpoint:
    return ModelEndpoint(base_url=url, model=MODEL, timeout_s=180, **kw)


async def test_both_api_shapes_answer_and_a_refused_tool_request_is_a_status(served: str) -> None:
    from rlar.agent.base import AgentRequest

    hello = AgentRequest(system="", messages=[{"role": "user", "content": "Say hello."}], max_tokens=8)
    chat = OpenAIAgent(OpenAIAgentConfig(model=MODEL, base_url=served))
    reply = await chat.ask(hello)
    assert reply.ok and reply.text.strip() and reply.model == MODEL, reply
    assert reply.usage.input_tokens > 5 and 0 < reply.usage.output_tokens <= 8 and reply.latency_s > 0
    # vLLM without --tool-call-parser refuses a named tool_choice: an error status, never an exception.
    routed = await chat.ask(
        routing_request(RoutingQuery(task="t", query="1+1=", reference="2"), builtin_specs()[:3])
    )
    assert (
        routed.status == "error"
        and routed.reason.startswith("HTTP 400")
        and "tool-call-parser" in routed.reason
    )
    await chat.aclose()
    # The same server speaks the Messages API: the anthropic backend reaches it with a base URL and no key.
    messages = make_agent(
        AnthropicAgentConfig(model=MODEL, base_url=served.removesuffix("/v1"), max_retries=0)
    )
    reply = await messages.ask(hello)
    assert reply.ok and reply.text.strip() and reply.usage.output_tokens > 0, reply
    await messages.aclose()


async def test_a_routing_question_gets_a_validated_answer_or_a_refusal_with_the_reason(served: str) -> None:
    specs = [
        s for s in builtin_specs() if s.name in ("math_verify", "exact_match", "llm_judge", "format_rules")
    ]
    agent = make_agent(OpenAIAgentConfig(model=MODEL, base_url=served, max_tokens=96))
    q = RoutingQuery(task="arith", query="12+7=", reference="19", answer_format="number")
    reply = await agent.ask(routing_request(q, specs))
    metrics = agent.metrics()
    await agent.aclose()
    # auto: the server refused the native request, so the json protocol answered (schema-constrained decoding).
    assert metrics["native_refused"].startswith("HTTP 400") and reply.attempts[0] == "HTTP 400"
    route = parse_route(reply, specs)
    if reply.ok:
        assert validate_input(reply.call(CHOOSE_TOOL.name).input, CHOOSE_TOOL) == ""  # type: ignore[union-attr]
        assert route.ok and {t.tool for t in route.tools} <= {s.name for s in specs}
    else:
        assert reply.reason.startswith("malformed tool call"), reply.reason
        assert not route.ok and route.reason.startswith("agent error: malformed tool call")
    assert reply.usage.input_tokens > 300 and reply.usage.output_tokens > 0
    print(f"\nrouting: {reply.status} {reply.reason[:200]!r} tokens {reply.usage} {reply.latency_s:.1f}s")


async def test_model_written_verifier_code_goes_through_the_same_gates(served: str) -> None:
    agent = make_agent(OpenAIAgentConfig(model=MODEL, base_url=served, max_tokens=128))
    # The project's first labelled instruction (data/instructions_labelled.jsonl d01): every clause checkable.
    record = json.loads((REPO / "data" / "instructions_labelled.jsonl").read_text().splitlines()[0])
    task = SynthesisTask(
        task="short_answer",
        description=record["instruction"],
        examples=[{"query": record["instruction"], "reference": None, "metadata": {}}],
        labelled=[{"response": a["text"], "ok": a["ok"]} for a in record["answers"]],
    )
    outcome = await synthesize(task, agent, local_runner(), max_attempts=1)
    await agent.aclose()
    print(f"\nsynthesis: {outcome.category} {outcome.reason[:300]!r} tokens {outcome.usage}")
    assert (
        outcome.usage.input_tokens > 0
    )  # the model was asked (probes and a draft), not the offline composer
    assert len(outcome.attempts) == 1
    attempt = outcome.attempts[0]
    if outcome.spec is None:
        assert not attempt.passed and attempt.reason
        # Either its reply never became a valid submit_reward_function call, or the gates rejected its code.
        assert outcome.category != "registered_full"
    else:  # registered only because it passed validation in the jail, the labelled examples included
        assert attempt.passed and outcome.spec.validation.get("passed", True)
    if attempt.code:
        assert (
            validate_input(
                {"code": attempt.code, "score_range": [0, 1], "needs_reference": False, "rationale": ""},
                SUBMIT_TOOL,
            )
            == ""
        )


async def test_the_judge_grades_over_chat_completions_with_its_tokens(served: str) -> None:
    base = next(s for s in builtin_specs() if s.name == "llm_judge")
    params = judge_params(endpoint(served, judge_max_tokens=32))
    tool = make_tool(base.replace(params={**base.params, **params}))
    (res,) = await tool.score_batch([ToolInput("Where does the sun rise?", "In the east.", "the east")])
    await tool.aclose()
    assert res.status in ("ok", "abstain"), res  # never an error: a reply without a score abstains
    assert res.details["tokens"]["input"] > 50 and res.details["tokens"]["output"] > 0
    if res.status == "abstain":
        assert "after one repair" in res.reason and res.details["first_reply_tail"]
    else:
        assert 0.0 <= (res.score or 0.0) <= 1.0 and res.details["judge_score"] is not None


@pytest.fixture(scope="module")
def nats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    """A bus of this module's own: its registry holds only the judge this module configures."""
    yield from serve_nats(tmp_path_factory, "nats-local-model")


@pytest.fixture(scope="module")
def nats_url(nats_server: EmbeddedServer) -> str:
    return nats_server.url


async def test_a_judge_that_cannot_order_labelled_pairs_is_refused_and_the_task_abstains_loudly(
    served: str, bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    task = f"sky-{uuid.uuid4().hex[:6]}"
    registry = ToolRegistry(bus)
    base = next(s for s in builtin_specs() if s.name == "llm_judge")
    judge = await registry.register(
        base.replace(params={**base.params, **judge_params(endpoint(served, judge_max_tokens=24))}), by="test"
    )
    routed = await inbox(bus, subjects.routed(task), Prompt)
    events = await inbox(bus, subjects.events("router"), Event)
    cfg = router_config(
        nats_url,
        tmp_path,
        agent=OpenAIAgentConfig(model=MODEL, base_url=served, max_tokens=64),
        synthesis=False,
        fallback={task: [{"tool": "llm_judge"}]},
        labelled={task: EXAMPLES},
        probes={"enabled": False},
        judge_vouch={"min_pairs": 4, "max_pairs": 4, "timeout_s": 180},
    )
    router = Router(cfg)
    async with running(router, bus, timeout_s=60):
        p = prompt(task, 0, query=SKY, description="Answer the question in exactly three words.")
        await bus.js_publish(subjects.prompts(task), p, msg_id=p.prompt_id)
        (got,) = await routed.wait(1, timeout_s=600)
        decision = next(d for d in router.decisions.values() if d.task == task)
    # The prompt still trains, with no tool: its samples abstain (masked), never a judge nobody vouched for.
    assert got.tools == [] and got.route["state"] == "abstain", got.route
    assert decision.state == "abstain" and "not vouched" in decision.reason
    (report,) = [p for p in decision.probes if p["tool"] == "llm_judge"]
    vouch = report["vouch"]
    assert report["verdict"] == "refused" and vouch["verdict"] == "refused" and vouch["pairs"] == 4
    assert vouch["ci_low"] < 0.6 and vouch["ci_low"] <= vouch["agreement"] <= vouch["ci_high"]
    assert vouch["sources"] == {"example": 4} and "lower bound" in report["reason"]
    # Kept in the registry, shown by `rlar tools list`.
    status = await registry.status("llm_judge", judge.version)
    assert (
        status["vouch"][task]["verdict"] == "refused"
        and status["vouch"][task]["signature"] == decision.signature
    )
    # Loud: a warning event with the figure and the config lines that would change it.
    (warning,) = [e for e in events.items if e.kind == "judge_refused" and e.data.get("task") == task]
    assert warning.level == "warning" and f"{vouch['agreement']:.2f}" in warning.message
    assert (
        'judge_vouch.trusted = ["llm_judge"]' in warning.message and "[[tasks]] examples" in warning.message
    )
    listing = subprocess.run(
        [sys.executable, "-m", "rlar.app.cli", "tools", "list", "--nats", nats_url],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert f"vouch {task}: refused — agreement {vouch['agreement']:.2f}" in listing.stdout, listing.stdout
    print(f"\njudge vouching: {json.dumps(vouch)}\n{warning.message}")
