"""The tool registry against a real nats-server: immutable versions, statuses, stats merging, export/import,
persistence across a server restart."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

from nats.js import api as js_api

from bus import subjects
from bus.client import Bus, wait_for
from bus.config import NatsConfig
from bus.embedded import EmbeddedServer
from bus.messages import ToolRegistered
from bus.topology import declare, ensure_topology
from rlar.registry import ToolRegistry, key_token, name_from_token
from rlar.tools import ToolKind, ToolSpec, builtin_specs, compute_content_hash
from rlar.tools.stats import StatsDelta
from tests.support.servers import TEST_TOPOLOGY


def _name(stem: str) -> str:
    return f"{stem}_{uuid.uuid4().hex[:8]}"


def _spec(name: str, **changes: object) -> ToolSpec:
    base = next(s for s in builtin_specs() if s.name == "exact_match")
    return base.replace(name=name, impl="exact_match", **changes)


async def test_the_same_content_keeps_its_version_and_a_change_makes_the_next_one(bus: Bus) -> None:
    reg = ToolRegistry(bus)
    name = _name("em")
    v1 = await reg.register(_spec(name), by="test")
    again = await reg.register(_spec(name, version=7, provenance={"origin": "retrieved"}), by="someone-else")
    assert v1.version == 1 and again.version == 1 and again.provenance["registered_by"] == "test"
    assert v1.content_hash == compute_content_hash(v1)
    v2 = await reg.register(_spec(name, params={"lowercase": True}), by="test")
    assert v2.version == 2 and v2.content_hash != v1.content_hash
    # Version 1 is unchanged in a fresh registry (no in-process cache) and the latest is 2.
    fresh = ToolRegistry(bus)
    old = await fresh.get(name, 1)
    assert old is not None and old.params == v1.params and old.content_hash == v1.content_hash
    latest = await fresh.get(name)
    assert latest is not None and latest.version == 2 and latest.params == {"lowercase": True}
    assert [s.version for s in await fresh.versions(name)] == [1, 2]
    assert await fresh.get(name, 3) is None and await fresh.get(_name("nope")) is None


async def test_a_new_version_is_announced_on_the_tools_subject(bus: Bus) -> None:
    seen: list[ToolRegistered] = []

    async def on_msg(msg: ToolRegistered, raw: object) -> None:
        seen.append(msg)

    await bus.subscribe(subjects.TOOLS_REGISTERED, ToolRegistered, on_msg)
    reg = ToolRegistry(bus)
    name = _name("ann")
    await reg.register(_spec(name), by="tester")
    await reg.register(_spec(name), by="tester")  # unchanged: no announcement
    await reg.disable(name, "flaky", by="tester")
    await wait_for(lambda: len([m for m in seen if m.name == name]) >= 2, 60)
    mine = [(m.action, m.version, m.kind, m.by) for m in seen if m.name == name]
    assert mine == [("registered", 1, "rule", "tester"), ("disabled", 0, "rule", "tester")]


async def test_disable_enable_and_quarantine_decide_which_version_resolves(bus: Bus) -> None:
    reg = ToolRegistry(bus)
    name = _name("st")
    await reg.register(_spec(name), by="t")
    await reg.register(_spec(name, description="second version"), by="t")
    assert (await reg.status(name))["state"] == "enabled"

    await reg.quarantine(name, 2, "returned NaN on 30% of inputs")
    got = await reg.get(name)
    assert got is not None and got.version == 1
    st2 = await reg.status(name, 2)
    assert st2["state"] == "quarantined" and "NaN" in st2["reason"]
    spec, why = await reg.resolve(name, 2)
    assert spec is not None and spec.version == 2 and "quarantined" in why and "NaN" in why
    assert (await reg.get(name, 2)) is not None  # history stays readable

    await reg.disable(name, "operator says no")
    assert await reg.get(name) is None
    st = await reg.status(name)
    assert st["state"] == "disabled" and st["reason"] == "operator says no"
    assert "disabled" in (await reg.resolve(name))[1]
    assert name in {s.name for s in await reg.list(include_disabled=True)}
    assert name not in {s.name for s in await reg.list()}

    await reg.enable(name)
    got = await reg.get(name)
    assert got is not None and got.version == 1  # the quarantine of v2 stays
    await reg.enable(name, version=2)
    got = await reg.get(name)
    assert got is not None and got.version == 2
    unknown = await reg.resolve(_name("ghost"))
    assert unknown[0] is None and "unknown tool" in unknown[1]


async def test_concurrent_registrars_agree_on_versions(bus: Bus, nats_url: str) -> None:
    buses = [await Bus.connect(NatsConfig(url=nats_url), name=f"reg{i}") for i in range(4)]
    try:
        name = _name("conc")
        same = await asyncio.gather(
            *(ToolRegistry(b).register(_spec(name), by=f"w{i}") for i, b in enumerate(buses))
        )
        assert {s.version for s in same} == {1}
        different = await asyncio.gather(
            *(ToolRegistry(b).register(_spec(name, params={"k": i}), by="w") for i, b in enumerate(buses))
        )
        assert sorted(s.version for s in different) == [2, 3, 4, 5]
        stored = await ToolRegistry(bus).versions(name)
        assert [s.params.get("k") for s in stored[1:]] == [
            next(d.params["k"] for d in different if d.version == v) for v in (2, 3, 4, 5)
        ]
    finally:
        for b in buses:
            await b.close()


async def test_stats_from_several_workers_merge_without_losing_counts(bus: Bus, nats_url: str) -> None:
    name = _name("stats")
    await ToolRegistry(bus).register(_spec(name), by="t")
    buses = [await Bus.connect(NatsConfig(url=nats_url), name=f"w{i}") for i in range(4)]

    async def worker(b: Bus, i: int) -> None:
        reg = ToolRegistry(b)
        for j in range(10):
            d = StatsDelta()
            d.add("ok", (i * 10 + j) / 40, 0.01)
            d.add("error", None, 0.03, reason="score is NaN")
            d.add("abstain", None, 0.0, cached=False, reason="timeout after 1s")
            await reg.record_stats(name, 1, d)

    try:
        await asyncio.gather(*(worker(b, i) for i, b in enumerate(buses)))
    finally:
        for b in buses:
            await b.close()
    st = await ToolRegistry(bus).stats(name, 1)
    assert st["calls"] == 120 and st["ok"] == 40 and st["error"] == 40 and st["abstain"] == 40
    assert sum(st["hist"]) == 40 and st["hist"] == [4] * 10
    assert st["reasons"] == {"score is NaN": 40, "timeout after 1s": 40}
    assert abs(st["mean_latency_s"] - 1.6 / 120) < 1e-9 and abs(st["error_rate"] - 1 / 3) < 1e-9


async def _fresh_buckets(bus: Bus) -> tuple[str, str]:
    kv, obj = f"t_tools_{uuid.uuid4().hex[:6]}", f"t_obj_{uuid.uuid4().hex[:6]}"
    await bus.js.create_key_value(config=js_api.KeyValueConfig(bucket=kv, history=8))
    await bus.js.create_object_store(obj, config=js_api.ObjectStoreConfig(bucket=obj))
    return kv, obj


async def test_export_then_import_into_an_empty_registry_reproduces_versions_code_and_status(
    bus: Bus, tmp_path: Path
) -> None:
    src = ToolRegistry(bus, bucket=(b := await _fresh_buckets(bus))[0], objects=b[1])
    code = "def score(query, response, reference):\n    return float(response.strip() == reference)\n"
    synth = ToolSpec(
        name="synth.check v2",
        kind=ToolKind.RULE,
        description="synthesised check",
        impl="exact_match",
        code=code,
        provenance={"origin": "synthesised", "author": "synthesizer", "source": "t"},
        validation={"accuracy": 0.97},
    )
    s1 = await src.register(synth, by="synthesizer")
    s2 = await src.register(synth.replace(code=code + "# v2\n"), by="synthesizer")
    await src.quarantine(synth.name, 1, "failed probes")
    await src.ensure_builtins()
    path = tmp_path / "tools.jsonl"
    lines = await src.export(path)
    assert lines == len(builtin_specs()) + 3
    assert any(json.loads(x)["spec"]["code"] == code for x in path.read_text().splitlines() if '"tool"' in x)

    dst = ToolRegistry(bus, bucket=(d := await _fresh_buckets(bus))[0], objects=d[1])
    imported = await dst.import_(path)
    assert len(imported) == len(builtin_specs()) + 2
    for want in (s1, s2):
        got = await ToolRegistry(bus, bucket=d[0], objects=d[1]).get(synth.name, want.version)
        assert got is not None
        assert (got.version, got.code, got.content_hash, got.validation) == (
            want.version,
            want.code,
            want.content_hash,
            want.validation,
        )
    assert (await dst.status(synth.name, 1))["state"] == "quarantined"
    latest = await dst.get(synth.name)
    assert latest is not None and latest.version == 2
    assert sorted(s.name for s in await dst.list()) == sorted(s.name for s in await src.list())


async def test_builtins_register_once(bus: Bus) -> None:
    reg = ToolRegistry(bus, bucket=(b := await _fresh_buckets(bus))[0], objects=b[1])
    first = await reg.ensure_builtins()
    second = await ToolRegistry(bus, bucket=b[0], objects=b[1]).ensure_builtins()
    assert [(s.name, s.version, s.content_hash) for s in first] == [
        (s.name, s.version, s.content_hash) for s in second
    ]
    assert {s.name for s in first} == {s.name for s in builtin_specs()} and {s.version for s in first} == {1}


def test_names_escape_into_valid_kv_tokens_and_back() -> None:
    for name in ("plain_name-1", "dotted.name", "with space/and*star>", "ünï", "a=b"):
        tok = key_token(name)
        assert all((c.isalnum() and c.isascii()) or c in "_-=" for c in tok), tok
        assert name_from_token(tok) == name


async def test_the_registry_survives_a_server_restart(tmp_path: Path) -> None:
    name = _name("persist")
    server = EmbeddedServer(tmp_path / "nats")
    server.start()
    try:
        b = await Bus.connect(NatsConfig(url=server.url), name="before")
        await ensure_topology(b.js, declare(TEST_TOPOLOGY))
        reg = ToolRegistry(b)
        await reg.register(_spec(name), by="t")
        await reg.register(_spec(name, params={"x": 1}), by="t")
        await reg.disable(name, "kept across restarts", version=2)
        await b.close()
    finally:
        server.stop()
    server = EmbeddedServer(tmp_path / "nats")
    server.start()
    try:
        b = await Bus.connect(NatsConfig(url=server.url), name="after")
        reg = ToolRegistry(b)
        assert [s.version for s in await reg.versions(name)] == [1, 2]
        latest = await reg.get(name)
        assert latest is not None and latest.version == 1
        assert (await reg.status(name, 2))["reason"] == "kept across restarts"
        await b.close()
    finally:
        server.stop()
