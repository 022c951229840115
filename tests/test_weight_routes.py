"""Weight routes: large blobs through the NATS object store (rlar/policy/objstore.py) and tensors over a
torch.distributed group (rlar/policy/broadcast.py), announced on the bus (rlar/policy/sync.py)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import torch

from bus.client import Bus
from bus.embedded import free_port
from bus.topology import OBJECTS_BUCKET
from rlar.policy.broadcast import BroadcastConfig, WeightReceiver, WeightSender
from rlar.policy.objstore import BlobIntegrityError, get_blob, put_blob
from rlar.policy.sync import WeightsUnavailable, fetch_weights, publish_weights
from tests.conftest import REPO, actor_env


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
        [sys.executable, "-m", "rlar.policy.broadcast", "--address", address, "--rank", str(rank), "--timeout-s", "5"],
        stdout=subprocess.PIPE, text=True, env=actor_env(), cwd=REPO,
    )  # fmt: skip
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
        ann = await publish_weights(bus, _model_tensors(), version=1, step=1, mode="broadcast", weights_dir=tmp_path,
                                    sender=sender)  # fmt: skip
        assert ann.uri.startswith("broadcast://")
        assert first.stdout is not None and json.loads(first.stdout.readline())["version"] == 1
        first.kill()
        first.wait()
        ann = await publish_weights(bus, _model_tensors(), version=2, step=2, mode="broadcast", weights_dir=tmp_path,
                                    sender=sender)  # fmt: skip
        assert not ann.uri.startswith("broadcast://") and Path(ann.uri).exists()  # the fallback route
        assert isinstance(await fetch_weights(bus, ann), bytes)
        second = _receiver(address)
        assert await asyncio.to_thread(sender.wait_ready, 60)  # a new group epoch with the successor
        ann = await publish_weights(bus, _model_tensors(), version=3, step=3, mode="broadcast", weights_dir=tmp_path,
                                    sender=sender)  # fmt: skip
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
