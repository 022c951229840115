"""Every task scored through the reward service: the cases, a stand-in judge and the scoring round trip."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

from actors.reward import RewardConfig, RewardWorker
from actors.sandbox import SandboxActor, SandboxActorConfig
from bus.client import Bus
from bus.config import NatsConfig
from bus.messages import RewardGroup, ScoreGroup, ScoreItem, ToolRef
from rlar.app.benchmarks.reward import collect_rewards
from rlar.registry import ToolRegistry
from rlar.standins.anthropic_server import MessagesServer
from rlar.tasks import TaskRecord
from rlar.tools import builtin_specs
from rlar.tools.combine import combine
from tests.support.reward_tools import running
from tests.support.servers import TEST_TOPOLOGY

Case = tuple[str, TaskRecord, tuple[tuple[str, float], ...], str, str]  # label, record, tools, right, wrong


def judge_by_reference(body: dict[str, Any]) -> dict[str, Any]:
    """A stand-in judge: with a reference, 10 when the response shown equals it, else 0; without one, it reads
    the one instruction the reference-free built-in task gives ("N letters only, no vowels")."""
    text = body["messages"][-1]["content"]
    text = text if isinstance(text, str) else "".join(b.get("text", "") for b in text)
    ref = re.search(r"# Reference answer\n(.*?)\n\n# Response to evaluate\n", text, re.S)
    resp = re.search(r"# Response to evaluate\n(.*?)\n\nEnd with 'Score: N'", text, re.S)
    answer = resp.group(1).strip() if resp else ""
    if ref is not None:
        good = ref.group(1).strip() == answer
    else:
        wanted = re.search(r"(\d+) letters only, (?:and )?no vowels", text)
        good = (
            wanted is not None
            and re.fullmatch(rf"[b-df-hj-np-tv-z]{{{wanted.group(1)}}}", answer) is not None
        )
    return {"text": f"Score: {10 if good else 0}"}


async def score_cases(
    bus: Bus, cases: list[Case], timeout_s: float
) -> dict[tuple[str, str], tuple[str, Any, str]]:
    """Publish (right, wrong, empty) x tools for every case; the combined (status, score, reasons) per answer."""
    task = f"every_{uuid.uuid4().hex[:8]}"
    registry = ToolRegistry(bus)
    kinds = {}
    for name in {tool for _, _, tools, _, _ in cases for tool, _ in tools}:
        spec, why = await registry.resolve(name, None)
        assert spec is not None and not why, (name, why)
        kinds[name] = spec.kind
    want: dict[str, tuple[str, str]] = {}
    reqs = []
    for label, rec, tools, right, wrong in cases:
        query = rec.prompt if isinstance(rec.prompt, str) else json.dumps(rec.prompt)
        for kind_of_answer, response in (("right", right), ("wrong", wrong), ("empty", "")):
            for tool, weight in tools:
                pid = uuid.uuid4().hex
                want[pid] = (label, kind_of_answer)
                reqs.append(
                    ScoreGroup(
                        prompt_id=pid,
                        generation="g",
                        task=task,
                        tools=[ToolRef(tool=tool, kind=kinds[tool], weight=weight)],
                        query=query,
                        items=[ScoreItem(index=0, response=response)],
                        reference=rec.reference,
                        metadata=dict(rec.metadata),
                    )
                )
    _, rewards = await collect_rewards(bus, task, reqs, timeout_s)
    grouped: dict[tuple[str, str], list[RewardGroup]] = {}
    for r in rewards:
        grouped.setdefault(want[r.prompt_id], []).append(r)
    assert len(rewards) == len(reqs)
    out = {}
    for key, group in grouped.items():
        status, score = combine([(r.weight, r.items[0].status, r.items[0].score) for r in group])
        out[key] = (
            status,
            score,
            "; ".join(f"{r.tool}: {r.items[0].status} {r.items[0].reason[:150]}" for r in group),
        )
    return out


async def score_with_reward_service(
    bus: Bus, nats_url: str, tmp_path: Path, cases: list[Case], timeout_s: float
) -> dict:
    nats = NatsConfig(url=nats_url)
    with MessagesServer() as judge:
        judge.respond = judge_by_reference
        registry = ToolRegistry(bus)
        await registry.ensure_builtins(by="test")
        base = next(s for s in builtin_specs() if s.name == "llm_judge")
        params = {
            **base.params,
            "base_url": judge.url,
            "api_key_env": "RLAR_TEST_JUDGE_KEY",
            "max_retries": 0,
        }
        await registry.register(base.replace(params=params), by="test")
        sandbox = SandboxActor(SandboxActorConfig(nats=nats, topology=TEST_TOPOLOGY, run_dir=str(tmp_path)))
        worker = RewardWorker(
            RewardConfig(
                nats=nats,
                topology=TEST_TOPOLOGY,
                run_dir=str(tmp_path),
                register_builtins=False,
                spec_ttl_s=0.0,
            )
        )
        async with running(sandbox, bus), running(worker, bus):
            return await score_cases(bus, cases, timeout_s)
