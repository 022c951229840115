"""Reward workers against a real bus: built-in tools, the code tool through the sandbox actor, tools that hang,
throw or return garbage, a user's function that raises or hangs (errors with tracebacks, deadlines that run
together, throughput warnings), batching, stats, and a worker process killed mid-batch."""

from __future__ import annotations

import asyncio
import logging
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from actors.reward import RewardConfig, RewardWorker
from actors.sandbox import SandboxActor, SandboxActorConfig
from bus import codec, subjects, topology
from bus.client import Bus, wait_for
from bus.config import NatsConfig
from bus.messages import Event, Heartbeat, RewardGroup, ScoredItem, ScoreGroup, ScoreItem, ToolRef
from rlar.registry import ToolRegistry
from rlar.tools.pyfunc import PythonToolConfig, python_tool_spec
from tests.support.env import REPO, actor_env
from tests.support.reward_tools import running, spec
from tests.support.servers import TEST_TOPOLOGY


def _uid() -> str:
    return uuid.uuid4().hex[:8]


def _worker(nats_url: str, tmp_path: Path, **fields: Any) -> RewardWorker:
    cfg = RewardConfig(
        nats=NatsConfig(url=nats_url),
        topology=TEST_TOPOLOGY,
        run_dir=str(tmp_path),
        heartbeat_s=0.5,
        allowed_prefixes=["rlar.", "tests."],
        stats_flush_s=0.2,
        **fields,
    )
    return RewardWorker(cfg)


def _req(
    task: str, i: int | str, tool: str, kind: str, response: str, reference: Any = None, **kw: Any
) -> ScoreGroup:
    """A request of one response (prompt id ``<task>-<i>``)."""
    return ScoreGroup(
        prompt_id=f"{task}-{i}",
        generation="g",
        task=task,
        tools=[ToolRef(tool=tool, kind=kind, **kw)],
        query="q",
        items=[ScoreItem(index=0, response=response)],
        reference=reference,
    )


@dataclass
class _Got:
    """One response's result with its message's fields."""

    group: RewardGroup
    item: ScoredItem

    def __getattr__(self, name: str) -> Any:
        return getattr(self.item, name) if hasattr(self.item, name) else getattr(self.group, name)


async def _score(bus: Bus, reqs: list[ScoreGroup], timeout_s: float = 30.0) -> dict[str, _Got]:
    """Publish the one-response requests and wait for one reward each (all of one task), by prompt id."""
    got: dict[str, _Got] = {}
    done = asyncio.Event()

    async def on_reward(msg: RewardGroup, raw: object) -> None:
        got.setdefault(msg.prompt_id, _Got(msg, msg.items[0]))
        if len(got) >= len(reqs):
            done.set()

    sub = await bus.subscribe(subjects.rewards(reqs[0].task), RewardGroup, on_reward)
    for r in reqs:
        await bus.js_publish(subjects.score(r.tools[0].kind), r, msg_id=f"req/{r.prompt_id}")
    try:
        await asyncio.wait_for(done.wait(), timeout_s)
    finally:
        await sub.unsubscribe()
    return got


# -- scoring through the bus ----------------------------------------------------------------------------
async def test_rule_metric_and_code_tools_score_through_the_bus(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    task = f"mix_{_uid()}"
    code_ref = ["assert add(1, 2) == 3", "assert add(2, 2) == 5"]
    reqs = [
        _req(task, 0, "exact_match", "rule", "42", "42", weight=0.7),
        _req(task, 1, "exact_match", "rule", "41", "42"),
        _req(task, 2, "bleu2", "metric", "the cat sat on the mat", "the cat sat on the mat"),
        _req(task, 3, "code_tests", "sandbox", "```python\ndef add(a, b):\n    return a + b\n```", code_ref),
        _req(task, 4, "code_tests", "sandbox", "def add(a, b):\n    return a - b\n", code_ref),
    ]
    sandbox = SandboxActor(
        SandboxActorConfig(
            nats=NatsConfig(url=nats_url), topology=TEST_TOPOLOGY, run_dir=str(tmp_path), mode="rlimit-only"
        )
    )
    worker = _worker(nats_url, tmp_path, kinds=["rule", "metric", "sandbox"])
    async with running(sandbox), running(worker):
        got = await _score(bus, reqs)
        assert sandbox.counters["requests"] == 2  # the code tool went to the sandbox actor
    r = {k.rsplit("-", 1)[1]: v for k, v in got.items()}
    assert (r["0"].status, r["0"].score, r["0"].weight) == ("ok", 1.0, 0.7)
    assert (r["1"].status, r["1"].score) == ("ok", 0.0)
    assert r["2"].status == "ok" and r["2"].score == pytest.approx(1.0)
    assert (r["3"].status, r["3"].score) == ("ok", 0.5) and r["3"].details["passed"] == 1
    assert (r["4"].status, r["4"].score) == ("ok", 0.0)
    for rw in got.values():
        assert rw.tool_version >= 1 and rw.worker == worker.instance and rw.latency_s > 0


async def test_a_group_is_scored_by_each_tool_of_its_kind_in_one_call_and_answered_in_one_message_per_tool(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    task = f"group_{_uid()}"
    responses = [["42", "42 apples", "41"][i % 3] for i in range(16)]  # "42 apples" contains 42 but is not it
    req = ScoreGroup(
        prompt_id=f"{task}-p",
        generation="g7",
        task=task,
        query="6*7=",
        reference="42",
        tools=[
            ToolRef(tool="exact_match", kind="rule", weight=0.6),
            ToolRef(tool="contains_match", kind="rule", weight=0.4),
        ],
        items=[ScoreItem(index=i, response=r) for i, r in enumerate(responses)],
    )
    got: list[RewardGroup] = []
    two = asyncio.Event()

    async def on_reward(msg: RewardGroup, raw: object) -> None:
        got.append(msg)
        if len(got) == 2:
            two.set()

    await bus.subscribe(subjects.rewards(task), RewardGroup, on_reward)
    async with running(_worker(nats_url, tmp_path, kinds=["rule"], cache_size=0)) as worker:
        await bus.js_publish(subjects.score("rule"), req, msg_id=f"req/{task}")
        await asyncio.wait_for(two.wait(), 30)
        assert worker.executors["rule"].stats.requests == 2  # one executor call per tool, not per response
    by_tool = {g.tool: g for g in got}
    assert sorted(by_tool) == ["contains_match", "exact_match"]
    assert (by_tool["exact_match"].weight, by_tool["contains_match"].weight) == (0.6, 0.4)
    for g in got:
        assert (g.prompt_id, g.generation) == (f"{task}-p", "g7") and [it.index for it in g.items] == list(
            range(16)
        )
        assert all(it.status == "ok" for it in g.items)
    assert [it.score for it in by_tool["exact_match"].items] == [1.0 if r == "42" else 0.0 for r in responses]
    assert [it.score for it in by_tool["contains_match"].items] == [
        0.0 if r == "41" else 1.0 for r in responses
    ]


async def test_requests_of_one_fetch_share_one_executor_call_per_tool_and_each_gets_its_own_results(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    """Requests pulled together are scored in one executor call per tool (one round trip to the tool worker);
    each request gets back exactly its own responses' results, and a hung response times out alone."""
    uid = _uid()
    hang = await ToolRegistry(bus).register(spec(f"hang_{uid}", "HangTool", deadline_s=1.0), by="test")
    task = f"merge_{uid}"
    reqs = [
        ScoreGroup(
            prompt_id=f"{task}-{i}",
            generation="g",
            task=task,
            query="q",
            reference=f"r{i}",
            tools=[ToolRef(tool="exact_match", kind="rule")],
            items=[
                ScoreItem(index=j, response=r) for j, r in enumerate([f"r{i}", f"r{i + 1}", "x"][: 1 + i % 3])
            ],
        )
        for i in range(6)
    ]
    reqs.append(
        ScoreGroup(
            prompt_id=f"{task}-hang",
            generation="g",
            task=task,
            query="q",
            tools=[ToolRef(tool=hang.name, kind="rule")],
            items=[ScoreItem(index=j, response=r) for j, r in enumerate(["fine", "hang", "also fine"])],
        )
    )
    got: dict[str, RewardGroup] = {}

    async def on_reward(msg: RewardGroup, raw: object) -> None:
        got[msg.prompt_id] = msg

    await bus.subscribe(subjects.rewards(task), RewardGroup, on_reward)
    # Published before the worker starts: its first fetch holds them all.
    await bus.js_publish_many([(subjects.score("rule"), codec.encode(r), f"req/{r.prompt_id}") for r in reqs])
    async with running(_worker(nats_url, tmp_path, kinds=["rule"], cache_size=0)) as worker:
        assert await wait_for(lambda: len(got) == len(reqs), 60), sorted(got)
        calls = worker.info()["merged_calls"]
        assert 2 <= calls < len(reqs)  # two tools; fewer calls than requests
        assert worker.executors["rule"].stats.requests == calls
    for i, req in enumerate(reqs[:-1]):
        reward = got[req.prompt_id]
        assert [it.index for it in reward.items] == [it.index for it in req.items]
        assert [(it.status, it.score) for it in reward.items] == [
            ("ok", 1.0 if it.response == f"r{i}" else 0.0) for it in req.items
        ]
    hung = got[f"{task}-hang"].items
    assert [(it.status, it.score) for it in hung[::2]] == [("ok", 1.0), ("ok", 1.0)]
    assert (hung[1].status, hung[1].reason) == ("abstain", "timeout after 1s")


async def test_hanging_throwing_nan_and_huge_tools_give_reasons_and_the_worker_keeps_serving(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    uid = _uid()
    reg = ToolRegistry(bus)
    hang = await reg.register(spec(f"hang_{uid}", "HangTool", deadline_s=1.0), by="test")
    throw = await reg.register(spec(f"throw_{uid}", "ThrowTool"), by="test")
    value = await reg.register(spec(f"value_{uid}", "ValueTool"), by="test")
    task = f"bad_{uid}"
    bad = [
        _req(task, "hang", hang.name, "rule", "hang"),
        _req(task, "throw", throw.name, "rule", "throw"),
        _req(task, "nan", value.name, "rule", "nan"),
        _req(task, "inf", value.name, "rule", "inf"),
        _req(task, "huge", value.name, "rule", "1e9"),
    ]
    async with running(_worker(nats_url, tmp_path, kinds=["rule"])) as worker:
        got = await _score(bus, bad)
        r = {k.rsplit("-", 1)[1]: v for k, v in got.items()}
        assert (r["hang"].status, r["hang"].reason) == ("abstain", "timeout after 1s")
        assert r["throw"].status == "error" and "deliberate failure in ThrowTool" in r["throw"].reason
        assert (r["nan"].status, r["nan"].reason) == ("error", "score is NaN")
        assert r["inf"].status == "error" and "inf" in r["inf"].reason
        assert r["huge"].status == "error" and "outside declared range" in r["huge"].reason
        assert all(x.score is None for x in got.values())
        assert worker.executors["rule"].stats.timeouts == 1  # the hung worker process was killed

        good = [
            _req(f"{task}_after", i, t.name, "rule", resp)
            for i, (t, resp) in enumerate([(hang, "fine"), (throw, "fine"), (value, "0.25")])
        ]
        after = await _score(bus, good)
        assert sorted((x.status, x.score) for x in after.values()) == [("ok", 0.25), ("ok", 0.5), ("ok", 1.0)]

        for _ in range(100):  # stats are merged into the registry every 0.2 s
            st = await reg.stats(value.name, value.version)
            if st["calls"] == 4:
                break
            await asyncio.sleep(0.05)
        assert st["calls"] == 4 and st["error"] == 3 and st["ok"] == 1
        assert st["reasons"]["score is NaN"] == 1 and any(
            "outside declared range" in k for k in st["reasons"]
        )
        assert (await reg.stats(hang.name, hang.version))["abstain"] == 1


def _user_tool(name: str, fn: str, **kw: Any) -> Any:
    return python_tool_spec(
        PythonToolConfig(
            name=name,
            python=f"tests.support.reward_tools:{fn}",
            description="a user's reward function",
            path=str(REPO),
            **kw,
        )
    )


async def _wait_stats(reg: ToolRegistry, name: str, version: int, calls: int) -> dict[str, Any]:
    for _ in range(200):  # stats are merged into the registry every 0.2 s
        st = await reg.stats(name, version)
        if st["calls"] >= calls:
            return st
        await asyncio.sleep(0.05)
    return st


async def test_a_user_function_that_raises_is_an_error_with_its_traceback_in_the_reward_the_log_and_the_stats(
    bus: Bus, nats_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    uid = _uid()
    reg = ToolRegistry(bus)
    tool = await reg.register(_user_tool(f"plural_{uid}", "plural_reward"), by="test")
    task = f"raise_{uid}"
    reqs = [_req(task, i, tool.name, "rule", word) for i, word in enumerate(["apples", "pear", "plums"])]
    caplog.set_level(logging.WARNING, logger="actors.reward")
    async with running(_worker(nats_url, tmp_path, kinds=["rule"])):
        got = await _score(bus, reqs)
        st = await _wait_stats(reg, tool.name, tool.version, 3)
    r = [got[f"{task}-{i}"] for i in range(3)]
    assert (r[1].status, r[1].score) == ("ok", 1.0)
    for bad in (r[0], r[2]):
        assert (bad.status, bad.score) == ("error", None)  # an error, not an abstain
        assert bad.reason.startswith("raised ValueError: boom (at reward_tools.py:")
        assert bad.reason.endswith(" in plural_reward)")
        assert 'raise ValueError("boom")' in bad.details["traceback"]
    logged = [rec.getMessage() for rec in caplog.records if tool.name in rec.getMessage()]
    assert len(logged) == 1, logged  # the first occurrence, with its traceback; the second is counted
    assert "raised ValueError: boom" in logged[0] and 'raise ValueError("boom")' in logged[0]
    assert (st["calls"], st["ok"], st["error"], st["abstain"]) == (3, 1, 2, 0)
    assert st["top_error"] == {"reason": r[0].reason, "count": 2}


async def test_hung_samples_of_a_user_function_time_out_together_and_the_tool_is_named_in_a_warning(
    bus: Bus, nats_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    uid = _uid()
    reg = ToolRegistry(bus)
    tool = await reg.register(
        _user_tool(f"sleepy_{uid}", "sleepy_reward", deadline_s=2.0, concurrency=8), by="test"
    )
    task = f"slow_{uid}"

    def group(tag: str, prefix: str) -> ScoreGroup:
        return ScoreGroup(
            prompt_id=f"{task}-{tag}",
            generation="g",
            task=task,
            query="q",
            tools=[ToolRef(tool=tool.name, kind="rule")],
            items=[ScoreItem(index=i, response=f"{prefix}{i}") for i in range(8)],
        )

    got: dict[str, RewardGroup] = {}
    events: list[Event] = []

    async def on_reward(msg: RewardGroup, raw: object) -> None:
        got[msg.prompt_id] = msg

    async def on_event(msg: Event, raw: object) -> None:
        events.append(msg)

    await bus.subscribe(subjects.rewards(task), RewardGroup, on_reward)
    await bus.subscribe(subjects.events("reward"), Event, on_event)
    caplog.set_level(logging.WARNING, logger="actors.reward")
    async with running(_worker(nats_url, tmp_path, kinds=["rule"])):
        # Eight quick samples first, so the tool's eight worker processes are up before the clock starts.
        await bus.js_publish(subjects.score("rule"), group("warm", "fast"), msg_id=f"req/{task}-warm")
        assert await wait_for(lambda: f"{task}-warm" in got, 60)
        t0 = time.perf_counter()
        await bus.js_publish(subjects.score("rule"), group("hung", "slow"), msg_id=f"req/{task}-hung")
        assert await wait_for(lambda: f"{task}-hung" in got, 60)
        wall = time.perf_counter() - t0
        st = await _wait_stats(reg, tool.name, tool.version, 16)
        assert await wait_for(lambda: bool(events), 10)
    assert all(it.status == "ok" for it in got[f"{task}-warm"].items)
    hung = got[f"{task}-hung"].items
    assert [(it.status, it.reason) for it in hung] == [("abstain", "timeout after 2s")] * 8
    # Serialised, 8 x 2 s deadlines would take 16 s and more; together they take about one.
    assert wall < 8.0, f"8 hung samples with a 2 s deadline took {wall:.1f}s"
    (event,) = [e for e in events if e.data.get("tool") == tool.name]
    assert event.kind == "reward_slow" and event.level == "warning"
    assert f"{tool.name} v{tool.version}: 3 timeouts in a row at its 2s deadline" in event.message
    assert any(event.message in rec.getMessage() for rec in caplog.records)
    assert st["timeouts"] == 8 and st["timeout_streak"] >= 3 and st["last_warning"] == event.message


async def test_unknown_disabled_and_misrouted_tools_abstain_with_the_reason(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    uid = _uid()
    reg = ToolRegistry(bus)
    off = await reg.register(spec(f"off_{uid}", "ThrowTool"), by="test")
    await reg.disable(off.name, "broken on unicode")
    task = f"abst_{uid}"
    reqs = [
        _req(task, 0, f"ghost_{uid}", "rule", "x"),
        _req(task, 1, off.name, "rule", "x"),
        _req(task, 2, "bleu2", "rule", "x", "x"),  # a metric tool sent to the rule queue
        _req(task, 3, "exact_match", "rule", "x", "x", version=999),
    ]
    async with running(_worker(nats_url, tmp_path, kinds=["rule"])):
        got = await _score(bus, reqs)
    r = [got[f"{task}-{i}"] for i in range(4)]
    assert all(x.status == "abstain" and x.score is None for x in r)
    assert "unknown tool" in r[0].reason
    assert "disabled" in r[1].reason and "broken on unicode" in r[1].reason and r[1].tool_version == 1
    assert "is a metric tool" in r[2].reason
    assert "no version 999" in r[3].reason


async def test_a_repeated_sample_is_served_from_the_cache(bus: Bus, nats_url: str, tmp_path: Path) -> None:
    task = f"cache_{_uid()}"
    async with running(_worker(nats_url, tmp_path, kinds=["rule"])) as worker:
        first = await _score(bus, [_req(task, 0, "exact_match", "rule", "7", "7")])
        second = await _score(bus, [_req(task, 1, "exact_match", "rule", "7", "7")])
        assert await wait_for(lambda: worker.counters["cached"] == 1, 5)  # counted once the publish is acked
    assert not first[f"{task}-0"].cached and second[f"{task}-1"].cached
    assert (
        second[f"{task}-1"].score == 1.0
        and second[f"{task}-1"].tool_version == first[f"{task}-0"].tool_version
    )


async def test_requests_for_a_batched_model_tool_are_scored_together(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    uid = _uid()
    tool = await ToolRegistry(bus).register(spec(f"rm_{uid}", "BatchSizeTool", kind="model"), by="test")
    task = f"batch_{uid}"
    reqs = [_req(task, i, tool.name, "model", f"response {i}") for i in range(12)]
    async with running(_worker(nats_url, tmp_path, kinds=["model"], batch_wait_s=0.05)) as worker:
        got = await _score(bus, reqs)
        assert worker.info()["batches"] < 12
    assert all(x.status == "ok" and x.score == 1.0 for x in got.values())
    assert max(x.details["batch"] for x in got.values()) > 1


# -- a worker killed mid-batch ----------------------------------------------------------------------------
def _spawn_worker(nats_url: str, tmp_path: Path, instance: str) -> subprocess.Popen[bytes]:
    log = open(tmp_path / f"{instance}.log", "wb")
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "actors",
            "reward-rule",
            "--nats",
            nats_url,
            "--instance",
            instance,
            "--set",
            f"run.dir={tmp_path}",
            "--set",
            "topology.score_ack_wait_s=2",
            "--set",
            'reward.allowed_prefixes=["rlar.", "tests."]',
            "--set",
            "reward.concurrency.rule=4",
            "--set",
            "reward.max_timeout_s=600",
            "--set",
            "reward.executor_workers.rule=2",
            "--set",
            "reward.heartbeat_s=0.3",
        ],
        env=actor_env(),
        cwd=REPO,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


async def _wait_running(bus: Bus, instance: str, timeout_s: float = 30.0) -> None:
    seen = asyncio.Event()

    async def on_hb(msg: Heartbeat, raw: object) -> None:
        if msg.state == "running":
            seen.set()

    sub = await bus.subscribe(subjects.heartbeat("reward", instance), Heartbeat, on_hb)
    try:
        await asyncio.wait_for(seen.wait(), timeout_s)
    finally:
        await sub.unsubscribe()


async def test_killing_a_worker_mid_batch_loses_no_sample(bus: Bus, nats_url: str, tmp_path: Path) -> None:
    uid = _uid()
    n, free = 24, 3
    # Worker A scores the first three at once and holds the rest (its tool waits for a gate file) until it is
    # killed: mid-batch by construction, not by timing. The gate opens for B. (Deadline: past the test's.) The
    # tool has its own pool of four processes, one per request in hand, so each request is scored and answered
    # on its own (in the shared workers, the requests of one fetch share one call that the gated ones hold).
    gate = tmp_path / "gate"
    gated = await ToolRegistry(bus).register(
        spec(
            f"gated_{uid}",
            "GatedTool",
            gate=str(gate),
            free=[f"r{i}" for i in range(free)],
            deadline_s=600,
            concurrency=4,
        ),
        by="test",
    )
    task = f"kill_{uid}"
    reqs = [_req(task, i, gated.name, "rule", f"r{i}") for i in range(n)]
    got: dict[str, list[RewardGroup]] = {}

    async def on_reward(msg: RewardGroup, raw: object) -> None:
        got.setdefault(msg.prompt_id, []).append(msg)

    await bus.subscribe(subjects.rewards(task), RewardGroup, on_reward)
    a = _spawn_worker(nats_url, tmp_path, f"a{uid}")
    b: subprocess.Popen[bytes] | None = None
    try:
        await _wait_running(bus, f"a{uid}", timeout_s=120)
        for r in reqs:
            await bus.js_publish(subjects.score("rule"), r, msg_id=f"req/{r.prompt_id}")
        assert await wait_for(lambda: len(got) >= free, 120), f"worker A scored {len(got)} of {free}"
        a.send_signal(signal.SIGKILL)
        a.wait(60)
        before = len(got)
        assert before == free, f"worker A was not killed mid-batch ({before} of {n} done)"
        gate.touch()
        b = _spawn_worker(nats_url, tmp_path, f"b{uid}")
        await wait_for(lambda: len(got) >= n, 180)
        assert sorted(got) == sorted(r.prompt_id for r in reqs), (tmp_path / f"b{uid}.log").read_text()[
            -3000:
        ]
        workers = {rw.worker for rws in got.values() for rw in rws}
        assert f"b{uid}" in workers  # the rest, including A's unacked requests, went to B
        assert all(it.status == "ok" for rws in got.values() for rw in rws for it in rw.items)
        # A redelivered request may be scored twice; the Nats-Msg-Id keeps one reward per sample in the stream.
        await asyncio.sleep(0.3)
        info = await bus.js.stream_info(topology.REWARDS, subjects_filter=subjects.rewards(task))
        assert info.state.subjects == {subjects.rewards(task): n}
    finally:
        for p in (a, b):
            if p is not None and p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(15)
                except subprocess.TimeoutExpired:
                    p.kill()
