"""Weight routes: large blobs through the NATS object store (rlar/policy/objstore.py) and tensors over a
torch.distributed group (rlar/policy/broadcast.py), announced on the bus (rlar/wire/weight_sync.py)."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from bus import subjects
from bus.client import Bus
from bus.codec import decode
from bus.embedded import free_port
from bus.messages import WeightsAnnounce
from bus.topology import OBJECTS_BUCKET
from rlar.policy.broadcast import BroadcastConfig, WeightReceiver, WeightSender
from rlar.policy.objstore import (
    BlobIntegrityError,
    BlobStalled,
    _chunks,
    get_blob,
    prepare_blob,
    put_blob,
    write_blob,
)
from rlar.policy.weights import (
    objstore_nuid,
    safetensors_bytes_to_tensors,
    safetensors_parts,
)
from rlar.wire.weight_sync import WeightsUnavailable, fetch_weights, publish_weights
from tests.support.env import REPO, actor_env


def _name() -> str:
    return f"test/{uuid.uuid4().hex[:8]}.bin"


@pytest.mark.parametrize("size", [0, 1, 4096, 4097, 3 * 2**20 + 17])
async def test_a_blob_comes_back_byte_for_byte_with_its_sha256(bus: Bus, size: int) -> None:
    import hashlib

    data = os.urandom(size)
    name = _name()
    sha = await put_blob(bus.js, OBJECTS_BUCKET, name, data, chunk_size=4096 if size < 2**20 else 256 * 1024)
    got, got_sha = await get_blob(bus.js, OBJECTS_BUCKET, name)
    assert got == data and got_sha == sha == hashlib.sha256(data).hexdigest()


async def test_the_layout_is_the_nats_object_store_both_ways(bus: Bus) -> None:
    store = await bus.js.object_store(OBJECTS_BUCKET)
    data = os.urandom(300_000)
    mine = _name()
    await put_blob(bus.js, OBJECTS_BUCKET, mine, data, chunk_size=64 * 1024)
    assert (await store.get(mine)).data == data  # nats-py's reader (and `nats object get`) reads ours
    theirs = _name()
    await store.put(theirs, data)
    assert (await get_blob(bus.js, OBJECTS_BUCKET, theirs))[0] == data  # and we read theirs


async def test_replacing_an_object_purges_the_old_chunks(bus: Bus) -> None:
    name = _name()
    await put_blob(bus.js, OBJECTS_BUCKET, name, b"a" * 10_000, chunk_size=1000)
    info = await bus.js.stream_info(f"OBJ_{OBJECTS_BUCKET}")
    await put_blob(bus.js, OBJECTS_BUCKET, name, b"b" * 5_000, chunk_size=1000)
    after = await bus.js.stream_info(f"OBJ_{OBJECTS_BUCKET}")
    assert after.state.messages == info.state.messages - 10 + 5  # 10 old chunks gone, 5 new; meta rolled up
    assert (await get_blob(bus.js, OBJECTS_BUCKET, name))[0] == b"b" * 5_000


async def test_a_missing_object_and_a_wrong_digest_are_refused(bus: Bus) -> None:
    with pytest.raises(KeyError):
        await get_blob(bus.js, OBJECTS_BUCKET, _name())
    name = _name()
    await put_blob(bus.js, OBJECTS_BUCKET, name, b"x" * 5000, chunk_size=1000)
    meta_subject = f"$O.{OBJECTS_BUCKET}.M.{base64.urlsafe_b64encode(name.encode()).decode()}"
    raw = await bus.js.get_last_msg(f"OBJ_{OBJECTS_BUCKET}", meta_subject)
    meta = json.loads(raw.data or b"{}")
    meta["digest"] = "SHA-256=" + "A" * 43 + "="
    await bus.js.publish(meta_subject, json.dumps(meta).encode(), headers={"Nats-Rollup": "sub"})
    with pytest.raises(BlobIntegrityError, match="sha256"):
        await get_blob(bus.js, OBJECTS_BUCKET, name)


@given(st.lists(st.binary(max_size=40), max_size=8), st.integers(1, 17))
def test_chunks_cut_the_parts_into_pieces_of_the_chunk_size_in_order(parts: list[bytes], size: int) -> None:
    got = [bytes(c) for c in _chunks([memoryview(p) for p in parts], size)]
    assert b"".join(got) == b"".join(parts)
    assert all(len(c) == size for c in got[:-1]) and all(0 < len(c) <= size for c in got)


async def test_a_list_of_buffers_is_stored_as_their_concatenation(bus: Bus) -> None:
    parts = [os.urandom(n) for n in (0, 5, 4096, 1, 70_000, 3)]
    name = _name()
    sha = await put_blob(bus.js, OBJECTS_BUCKET, name, parts, chunk_size=4096)
    got, got_sha = await get_blob(bus.js, OBJECTS_BUCKET, name)
    assert got == b"".join(parts) and got_sha == sha


async def _publish_chunks_by_hand(bus: Bus, nuid: str, data: bytes, chunk: int) -> None:
    for i in range(0, len(data), chunk):
        await bus.js.publish(f"$O.{OBJECTS_BUCKET}.C.{nuid}", data[i : i + chunk])


async def test_a_reader_that_knows_the_plan_reads_chunks_as_they_are_written(bus: Bus) -> None:
    data = os.urandom(50_000)
    name = _name()
    plan = await prepare_blob(bus.js, OBJECTS_BUCKET, name, data)
    # The reader starts before anything is stored (a complete-object read refuses it) ...
    with pytest.raises(KeyError):
        await get_blob(bus.js, OBJECTS_BUCKET, name)
    reader = asyncio.create_task(
        get_blob(bus.js, OBJECTS_BUCKET, name, nuid=plan.nuid, size=plan.size, sha256=plan.sha256)
    )
    await _publish_chunks_by_hand(bus, plan.nuid, data[:20_000], 5_000)
    assert not reader.done() or reader.exception() is None  # still waiting for the rest, not failed
    await _publish_chunks_by_hand(bus, plan.nuid, data[20_000:], 5_000)
    # ... and needs no object info: the chunks and the plan are enough.
    got, sha = await asyncio.wait_for(reader, 60)
    assert got == data and sha == plan.sha256
    # The writer's own write of the same plan, read by nats-py's reader, is the same object.
    await bus.js.purge_stream(f"OBJ_{OBJECTS_BUCKET}", subject=f"$O.{OBJECTS_BUCKET}.C.{plan.nuid}")
    await write_blob(bus.js, plan, chunk_size=7_000)
    assert (await (await bus.js.object_store(OBJECTS_BUCKET)).get(name)).data == data


async def test_a_write_that_stops_half_way_stalls_its_reader_and_a_wrong_plan_is_refused(bus: Bus) -> None:
    data = os.urandom(30_000)
    plan = await prepare_blob(bus.js, OBJECTS_BUCKET, _name(), data)
    reader = asyncio.create_task(
        get_blob(
            bus.js, OBJECTS_BUCKET, plan.name, nuid=plan.nuid, size=plan.size, sha256=plan.sha256, stall_s=0.5
        )
    )
    await _publish_chunks_by_hand(bus, plan.nuid, data[:10_000], 5_000)  # the writer dies here
    with pytest.raises(BlobStalled, match="10000 of 30000"):
        await asyncio.wait_for(reader, 60)
    plan2 = await prepare_blob(bus.js, OBJECTS_BUCKET, _name(), data)
    await write_blob(bus.js, plan2, chunk_size=4096)
    with pytest.raises(BlobIntegrityError, match="sha256"):  # an announcement whose sha256 is not the data's
        await get_blob(bus.js, OBJECTS_BUCKET, plan2.name, nuid=plan2.nuid, size=plan2.size, sha256="00" * 32)


def _mixed_tensors() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(5)
    emb = torch.randn(40, 8, generator=g)
    return {
        "embed.weight": emb,
        "lm_head.weight": emb,  # tied: an alias, dropped
        "q.weight": torch.randn(8, 8, generator=g).to(torch.bfloat16),
        "norm.weight": torch.randn(7, generator=g).to(torch.float16),
        "scale": torch.tensor(3.5, dtype=torch.float64),
        "ids": torch.arange(5, dtype=torch.int64),
        "mask": torch.tensor([True, False, True]),
        "codes": torch.arange(-3, 4, dtype=torch.int8),
        "empty": torch.zeros(0, 4),
    }


def test_safetensors_parts_share_the_tensors_memory_and_load_with_safetensors() -> None:
    src = _mixed_tensors()
    parts = safetensors_parts(src)
    got = safetensors_bytes_to_tensors(b"".join(parts))
    assert set(got) == set(src) - {"lm_head.weight"}
    for name, t in got.items():
        assert t.dtype == src[name].dtype and torch.equal(t, src[name]), name
    header_len = 8 + int.from_bytes(parts[0][:8], "little")
    meta = json.loads(bytes(parts[0][8:header_len]))
    for name, info in meta.items():
        if name != "__metadata__":  # every tensor starts at a multiple of its element size
            assert info["data_offsets"][0] % src[name].element_size() == 0, name
    src["embed.weight"][0, 0] = 123.0  # no copy was made: the part is the tensor's memory
    assert safetensors_bytes_to_tensors(b"".join(parts))["embed.weight"][0, 0] == 123.0


async def test_an_objstore_version_is_announced_before_it_is_written_and_read_while_written(
    bus: Bus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import rlar.wire.weight_sync as sync

    src = _mixed_tensors()
    announced: asyncio.Queue[WeightsAnnounce] = asyncio.Queue()
    reads: list[asyncio.Task[Any]] = []

    async def on_announce(msg: Any) -> None:  # a rollout: it starts reading as soon as it hears of a version
        ann = decode(msg.data, WeightsAnnounce)
        reads.append(asyncio.create_task(fetch_weights(bus, ann)))
        announced.put_nowait(ann)

    real_write = sync.write_blob

    async def write_after_the_announcement(js: Any, plan: Any, **kw: Any) -> None:
        ann = await asyncio.wait_for(announced.get(), 30)  # times out unless announced before the write
        assert objstore_nuid(ann.uri) == plan.nuid and not reads[0].done()  # its reader waits for chunks
        with pytest.raises(KeyError):
            await get_blob(js, OBJECTS_BUCKET, plan.name)  # nothing stored yet
        await real_write(js, plan, **kw)

    monkeypatch.setattr(sync, "write_blob", write_after_the_announcement)
    sub = await bus.nc.subscribe(subjects.WEIGHTS, cb=on_announce)
    try:
        ann = await publish_weights(
            bus, src.items(), version=3, step=3, mode="objstore", weights_dir=tmp_path
        )
        data = await asyncio.wait_for(reads[0], 60)
    finally:
        await sub.unsubscribe()
    assert isinstance(data, bytes) and len(data) == ann.size_bytes
    assert torch.equal(safetensors_bytes_to_tensors(data)["q.weight"], src["q.weight"])
    gone = dataclasses.replace(ann, uri=ann.uri.rsplit("#", 1)[0] + "#NOSUCHWRITE")
    with pytest.raises(
        WeightsUnavailable, match="no chunk"
    ):  # a write that never came: unavailable, no crash
        await fetch_weights(bus, gone, stall_s=0.5)


# -- the torch.distributed broadcast route -------------------------------------------------------------------
def _model_tensors() -> list[tuple[str, torch.Tensor]]:
    g = torch.Generator().manual_seed(3)
    return [
        ("embed.weight", torch.randn(50, 8, generator=g)),
        ("layers.0.q.weight", torch.randn(8, 8, generator=g).to(torch.bfloat16)),
        ("layers.0.norm.weight", torch.ones(8)),
        ("lm_head.weight", torch.randn(50, 8, generator=g).to(torch.bfloat16)),
    ]


def _receiver(address: str, rank: int = 1) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rlar.policy.broadcast",
            "--address",
            address,
            "--rank",
            str(rank),
            "--timeout-s",
            "5",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=actor_env(),
        cwd=REPO,
    )
    assert proc.stdout is not None and json.loads(proc.stdout.readline()) == {"ready": True}
    return proc


async def test_a_broadcast_delivers_every_tensor_in_its_own_dtype_and_the_bus_only_announces(
    bus: Bus, tmp_path: Path
) -> None:
    cfg = BroadcastConfig(address=f"127.0.0.1:{free_port()}", receivers=1, timeout_s=10)
    sender = WeightSender(cfg)
    receiver = WeightReceiver(cfg, 1)  # in this process: its tensors can be compared
    try:
        assert await asyncio.to_thread(sender.wait_ready, 30)
        src = _model_tensors()
        ann = await publish_weights(
            bus, src, version=5, step=5, mode="broadcast", weights_dir=tmp_path, sender=sender
        )
        assert ann.uri.startswith("broadcast://") and ann.format == "tensors"
        assert not list(tmp_path.iterdir())  # nothing written: the bus carried only the announcement
        got = await fetch_weights(bus, ann, receiver)
        assert isinstance(got, list) and [n for n, _ in got] == [n for n, _ in src]
        for (_, a), (_, b) in zip(src, got, strict=True):
            assert a.dtype == b.dtype and torch.equal(a, b)  # bf16 stays bf16 on the wire
        assert ann.size_bytes == sum(t.numel() * t.element_size() for _, t in src)
        with pytest.raises(WeightsUnavailable):  # a rollout outside the group cannot load it, and says so
            await fetch_weights(bus, ann, None)
    finally:
        receiver.close()


async def test_a_dead_receiver_sends_versions_through_the_fallback_until_its_successor_joins(
    bus: Bus, tmp_path: Path
) -> None:
    address = f"127.0.0.1:{free_port()}"
    cfg = BroadcastConfig(address=address, receivers=1, timeout_s=5, fallback="filesystem")
    sender = WeightSender(cfg)
    first = _receiver(address)
    second: subprocess.Popen[str] | None = None
    try:
        assert await asyncio.to_thread(sender.wait_ready, 60)
        ann = await publish_weights(
            bus, _model_tensors(), version=1, step=1, mode="broadcast", weights_dir=tmp_path, sender=sender
        )
        assert ann.uri.startswith("broadcast://")
        assert first.stdout is not None and json.loads(first.stdout.readline())["version"] == 1
        first.kill()
        first.wait()
        ann = await publish_weights(
            bus, _model_tensors(), version=2, step=2, mode="broadcast", weights_dir=tmp_path, sender=sender
        )
        assert not ann.uri.startswith("broadcast://") and Path(ann.uri).exists()  # the fallback route
        assert isinstance(await fetch_weights(bus, ann), bytes)
        second = _receiver(address)
        assert await asyncio.to_thread(sender.wait_ready, 60)  # a new group epoch with the successor
        ann = await publish_weights(
            bus, _model_tensors(), version=3, step=3, mode="broadcast", weights_dir=tmp_path, sender=sender
        )
        assert ann.uri.startswith("broadcast://")
        assert second.stdout is not None
        line = json.loads(second.stdout.readline())
        assert (
            line["version"] == 3
            and line["sha256"] == ann.sha256
            and line["dtypes"] == ["bfloat16", "float32"]
        )
    finally:
        for p in (first, second):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
