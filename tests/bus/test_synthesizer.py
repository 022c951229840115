"""The code agent: constraint reading, probes, composition, sandbox validation (which must reject broken
candidates with the reason), the synthesised tool, and the synthesizer actor over a real bus and sandbox."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from actors.sandbox import SandboxActor, SandboxActorConfig
from actors.synthesizer import Synthesizer, SynthesizerConfig
from bus import subjects
from bus.client import Bus, wait_for
from bus.config import NatsConfig
from bus.messages import Event, ToolRegistered, ToolRequest
from rlar.agent.base import OfflineAgentConfig
from rlar.agent.offline import OfflineAgent
from rlar.registry import ToolRegistry
from rlar.sandbox_client import bus_runner, local_runner
from rlar.synthesis.compose import ComposeError, SynthesisTask, compose
from rlar.synthesis.probes import holds, make_probes
from rlar.synthesis.second_route import write_probes
from rlar.synthesis.validate import CHECKS, validate
from rlar.tasks.constraints import extract_constraints
from rlar.tools import ToolInput, builtin_specs, make_tool
from rlar.tools.synthesized import SynthesizedTool, synthesized_spec
from tests.support.reward_tools import running
from tests.support.servers import TEST_TOPOLOGY

pytestmark = pytest.mark.skipif(not os.access("/usr/bin/bwrap", os.X_OK), reason="bubblewrap not installed")
BULLETS = "Answer must contain exactly three bullet points, each under ten words."


def bullets_probes() -> Any:
    cons = extract_constraints(BULLETS)
    second = [{**p, "source": "second_route"} for p in write_probes(BULLETS, [], cons)]
    return make_probes(
        [{"query": "How to stay focused?"}],
        cons,
        description=BULLETS,
        reference_based=False,
        independent=second,
    )


def test_constraints_are_read_from_plain_english() -> None:
    assert extract_constraints(BULLETS) == [
        {"rule": "bullets", "min": 3, "max": 3},
        {"rule": "words", "max": 9, "per": "item"},
    ]
    assert extract_constraints("Explain it in at most 2 sentences, all lowercase.") == [
        {"rule": "lowercase"},
        {"rule": "sentences", "max": 2},
    ]
    assert extract_constraints("Reply with a JSON object with keys name and age.") == [
        {"rule": "json_keys", "keys": ["name", "age"]},
        {"rule": "json"},
    ]
    assert extract_constraints("Do not use the word 'very'; include the word 'sky'.") == [
        {"rule": "exclude", "words": ["very"]},
        {"rule": "include", "words": ["sky"]},
    ]
    assert extract_constraints("Translate the sentence into natural German.") == [
        {"rule": "language", "lang": "de"}
    ]


def test_probes_are_labelled_by_an_independent_oracle() -> None:
    ps = bullets_probes()
    assert ps.usable and not ps.problems
    cons = extract_constraints(BULLETS)
    for p in ps.good:
        assert all(holds(c, p.response) for c in cons)
    for p in ps.bad:
        assert p.response == "" or not all(holds(c, p.response) for c in cons), p.why
    whys = " | ".join(p.why for p in ps.bad)
    assert "bullets: 5" in whys and "bullets: 1" in whys and "words/item" in whys


@pytest.mark.parametrize(
    "description",
    [
        BULLETS,
        "Give a numbered list of 5 steps, each at most 8 words.",
        "Respond in all lowercase and include the words 'river' and 'stone'. Do not use the word 'very'.",
        "Reply with a JSON object with keys name, age and city.",
        "Write between 20 and 40 words and end with a question.",
        "Start with 'Dear team' and write no more than 3 sentences without commas.",
    ],
)
async def test_composed_verifiers_pass_validation_in_the_sandbox(description: str) -> None:
    task = SynthesisTask(description=description, examples=[{"query": "Write about the sea"}])
    draft = compose(task)
    second = [
        {**p, "source": "second_route"}
        for p in write_probes(task.instruction(), task.examples, task.all_constraints())
    ]
    probes = make_probes(
        task.examples,
        task.all_constraints(),
        description=description,
        reference_based=False,
        independent=second,
    )
    rec = await validate(draft.code, draft.score_range, probes, local_runner())
    assert rec.passed, rec.reason
    assert rec.checks == {k: True for k in CHECKS} and rec.independent["usable"]
    assert {r["isolation"] for r in rec.runs} == {"bwrap"} and rec.good_mean == 1.0


async def test_a_reference_task_composes_a_matcher_chosen_by_the_reference_shape() -> None:
    task = SynthesisTask(
        description="Add the numbers.",
        answer_format="number",
        examples=[{"query": "2+2=", "reference": "4"}, {"query": "5+6=", "reference": "11"}],
    )
    draft = compose(task)
    assert draft.blocks["match"] == "numeric" and draft.needs_reference
    probes = make_probes(task.examples, [], reference_based=True)
    rec = await validate(draft.code, draft.score_range, probes, local_runner())
    assert rec.passed, rec.reason
    with pytest.raises(ComposeError, match="no checkable constraint"):
        compose(SynthesisTask(description="Be nice.", examples=[{"query": "hi"}]))


BROKEN = {
    "raises": (
        "def reward(query, response, reference, metadata):\n    raise KeyError('boom')\n",
        "executes",
        "KeyError",
    ),
    "raises at import": (
        "import no_such_module\ndef reward(q, r, ref, m):\n    return 1.0\n",
        "executes",
        "ModuleNotFoundError",
    ),
    "out of range": (
        "def reward(q, r, ref, m):\n    return 1.5 if r else 0.0\n",
        "in_range",
        "outside [0, 1]",
    ),
    "nan": ("def reward(q, r, ref, m):\n    return float('nan')\n", "in_range", "nan"),
    "not a number": ("def reward(q, r, ref, m):\n    return 'yes'\n", "executes", "not a number"),
    "non-deterministic": (
        "import random\ndef reward(q, r, ref, m):\n    return random.random()\n",
        "deterministic",
        "differently",
    ),
    "hash order": (
        "def reward(q, r, ref, m):\n    return (hash(r) % 1000) / 1000\n",
        "deterministic",
        "differently",
    ),
    "bad above good": (
        "def reward(q, r, ref, m):\n    return 0.0 if r.count('- ') == 3 else 1.0\n",
        "separates",
        "do not score above",
    ),
    "constant": ("def reward(q, r, ref, m):\n    return 0.5\n", "separates", "0/"),
    "too slow": (
        "import time\ndef reward(q, r, ref, m):\n    time.sleep(0.3)\n    return 1.0\n",
        "within_budget",
        "budget",
    ),
    "hangs": ("def reward(q, r, ref, m):\n    while True:\n        pass\n", "within_budget", "timeout"),
    "exits": (
        "import os\nos._exit(0)\ndef reward(q, r, ref, m):\n    return 1.0\n",
        "executes",
        "no result line",
    ),
    "wrong signature": ("def reward(response):\n    return 1.0\n", "static", "takes 1 positional parameters"),
    "syntax error": ("def reward(q, r, ref, m) return 1\n", "static", "does not parse"),
    "no reward": ("def score(q, r, ref, m):\n    return 1.0\n", "static", "defines no top-level reward"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
async def test_a_broken_candidate_is_rejected_with_the_reason(case: str) -> None:
    code, check, words = BROKEN[case]
    t0 = time.monotonic()
    rec = await validate(code, (0.0, 1.0), bullets_probes(), local_runner())
    assert not rec.passed and not rec.infrastructure
    assert rec.reason.startswith(f"{check}:") and words in rec.reason, rec.reason
    assert rec.checks[check] is False and time.monotonic() - t0 < 20


async def test_synthesised_code_runs_only_in_the_sandbox(tmp_path: Path) -> None:
    marker = tmp_path / f"escaped-{uuid.uuid4().hex}"
    code = (
        "import os\n"
        f"try:\n    open({str(marker)!r}, 'w').write('ran on the host')\nexcept OSError:\n    pass\n"
        "PID = os.getpid()\n"
        "def reward(query, response, reference, metadata):\n"
        "    items = [ln[2:] for ln in response.splitlines() if ln.startswith('- ')]\n"
        "    return 1.0 if len(items) == 3 and all(len(it.split()) < 10 for it in items) else 0.0\n"
    )
    rec = await validate(code, (0.0, 1.0), bullets_probes(), local_runner())
    assert rec.passed, rec.reason
    spec = synthesized_spec(
        name="t-isolated",
        description="t",
        code=code,
        score_range=(0.0, 1.0),
        task_types=[],
        answer_formats=[],
        params={},
        provenance={"origin": "synthesized"},
        validation={},
    )
    tool = make_tool(spec)
    res = await tool.score_batch([ToolInput("q", "- a\n- b\n- c"), ToolInput("q", "no")])
    assert [r.score for r in res] == [1.0, 0.0]
    assert not marker.exists(), "the candidate's file write reached the host"
    assert {r["isolation"] for r in rec.runs} == {"bwrap"}


async def test_the_synthesised_tool_reports_a_misbehaving_verifier_per_sample() -> None:
    code = (
        "def reward(q, r, ref, m):\n    if 'x' in r:\n        raise ValueError('no x')\n"
        "    return 2.0 if 'y' in r else 0.5\n"
    )
    spec = synthesized_spec(
        name="t-misbehaving",
        description="t",
        code=code,
        score_range=(0.0, 1.0),
        task_types=[],
        answer_formats=[],
        params={"needs_reference": True},
        provenance={},
        validation={},
    )
    res = await make_tool(spec).score_batch(
        [
            ToolInput("q", "x", "r"),
            ToolInput("q", "y", "r"),
            ToolInput("q", "ok", "r"),
            ToolInput("q", "ok", None),
        ]
    )
    assert [r.status for r in res] == ["error", "error", "ok", "abstain"]
    assert "ValueError: no x" in res[0].reason and "outside declared range" in res[1].reason
    assert res[2].score == 0.5 and res[3].reason == "no reference"
    assert SynthesizedTool.cacheable(spec), (
        "it never reads metadata, so (query, response, reference) is its key"
    )
    reads = spec.replace(code="def reward(q, r, ref, meta):\n    return float(bool(meta.get('x')))\n")
    assert not SynthesizedTool.cacheable(reads)


@pytest.fixture(scope="module")
def agent() -> OfflineAgent:
    return OfflineAgent(OfflineAgentConfig())


async def _events(bus: Bus) -> list[Event]:
    got: list[Event] = []

    async def on(msg: Event, raw: object) -> None:
        got.append(msg)

    await bus.subscribe(subjects.events("synthesizer"), Event, on)
    return got


async def test_the_actor_validates_over_the_bus_registers_and_reports_failures(
    bus: Bus, nats_url: str, tmp_path: Path, agent: OfflineAgent
) -> None:
    common: dict[str, Any] = dict(
        nats=NatsConfig(url=nats_url), topology=TEST_TOPOLOGY, run_dir=str(tmp_path), heartbeat_s=0.5
    )
    events = await _events(bus)
    registered: list[ToolRegistered] = []

    async def on_reg(msg: ToolRegistered, raw: object) -> None:
        registered.append(msg)

    await bus.subscribe(subjects.TOOLS_REGISTERED, ToolRegistered, on_reg)
    tag = uuid.uuid4().hex[:8]
    good = ToolRequest(
        request_id=f"req-{tag}-ok",
        signature=f"sig-{tag}",
        task=f"ts-{tag}",
        description=BULLETS,
        task_type="instruction_following",
        answer_format="bullets",
        examples=[{"query": "Tips for focus?", "reference": None, "metadata": {}}],
        constraints={"rules": []},
    )
    hopeless = ToolRequest(
        request_id=f"req-{tag}-no",
        signature=f"sig2-{tag}",
        task=f"ts2-{tag}",
        description="Be a friendly assistant.",
        examples=[{"query": "hi"}],
    )
    # "Tips for focus?" is content no rule can judge: registered only as partial (the default refuses it).
    synth = Synthesizer(SynthesizerConfig(**common, sandbox="bus", partial="register"), agent=agent)
    async with running(SandboxActor(SandboxActorConfig(**common)), bus), running(synth, bus):
        await bus.js_publish(subjects.TOOLS_REQUEST_SYNTH, good, msg_id=good.request_id)
        await bus.js_publish(subjects.TOOLS_REQUEST_SYNTH, hopeless, msg_id=hopeless.request_id)
        assert await wait_for(
            lambda: (
                any(
                    e.kind == "synthesis_failed" and e.data["request_id"] == hopeless.request_id
                    for e in events
                )
                and any(r.name.startswith(f"synth-ts-{tag}") for r in registered)
            ),
            30.0,
        )
        # The same request again (a redelivery) is recognised and costs nothing.
        await bus.js_publish(subjects.TOOLS_REQUEST_SYNTH, good, msg_id=good.request_id + "-again")
        assert await wait_for(lambda: synth.counters["duplicates"] == 1, 30.0)
        reg = next(r for r in registered if r.name.startswith(f"synth-ts-{tag}"))
        spec = await ToolRegistry(bus).get(reg.name, reg.version)
        assert (
            spec is not None
            and reg.kind == "sandbox"
            and spec.impl == "rlar.tools.synthesized:SynthesizedTool"
        )
        assert spec.validation["passed"] and spec.validation["n_bad"] >= 3
        assert spec.provenance["author"] == "offline" and "no language model wrote this code" in spec.code
        assert (
            spec.provenance["request_id"] == good.request_id
            and spec.params["constraints"][0]["rule"] == "bullets"
        )
        tool = make_tool(spec, run_code=bus_runner(bus))
        scores = await tool.score_batch(
            [ToolInput("q", "- One two\n- Three four\n- Five six"), ToolInput("q", "Nope.")]
        )
        assert [r.score for r in scores] == [1.0, 0.5]  # "Nope." breaks the bullet count, not the item length
    failed = next(e for e in events if e.kind == "synthesis_failed")
    assert "no checkable constraint" in failed.data["reason"] and failed.level == "error"
    assert (tmp_path / "synthesis" / f"{good.request_id}.jsonl").exists()
    assert synth.counters["registered"] == 1 and synth.counters["failed"] == 1


async def test_a_refused_synthesis_without_a_fallback_routes_its_prompts_to_abstain_and_says_why(
    bus: Bus, nats_url: str, tmp_path: Path, agent: OfflineAgent
) -> None:
    from actors.router import Router
    from bus.messages import Prompt
    from tests.support.router import inbox, prompt, router_config

    task = f"haiku-{uuid.uuid4().hex[:8]}"
    common: dict[str, Any] = dict(
        nats=NatsConfig(url=nats_url), topology=TEST_TOPOLOGY, run_dir=str(tmp_path), heartbeat_s=0.5
    )
    # Tools other tests of this worker registered on its server ("hang_…") are no candidates here: this test is
    # about a query no registered tool fits.
    registry, builtin = ToolRegistry(bus), {b.name for b in builtin_specs()}
    for other in await registry.list():
        if other.name not in builtin:
            await registry.disable(other.name, "another test's tool", by="test")
    events = await _events(bus)
    routed = await inbox(bus, subjects.routed(task), Prompt)
    router = Router(router_config(nats_url, tmp_path, wait_s=600), agent=agent)
    synth = Synthesizer(
        SynthesizerConfig(**common, sandbox="local"), agent=agent
    )  # partial = "refuse" (default)
    async with running(synth, bus), running(router, bus):
        p = prompt(
            task,
            0,
            query="Rain on the roof",
            description="Write a haiku about the topic. Use exactly 3 lines.",
        )
        await bus.js_publish(subjects.prompts(task), p, msg_id=p.prompt_id)
        got = (await routed.wait(1, timeout_s=120))[0]
    # Not dead-lettered, not waiting out wait_s (600 s): routed with no tool, so its samples abstain.
    assert (
        got.route["state"] == "abstain" and got.tools == [] and "its samples abstain" in got.route["reason"]
    )
    failed = next(e for e in events if e.kind == "synthesis_failed")
    assert failed.data["category"] == "refused_partial"
    assert any("haiku" in u for u in failed.data["unread"]) and synth.counters["failed"] == 1
