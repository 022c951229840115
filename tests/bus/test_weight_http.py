"""The ``http`` weight route: the learner serves the versions it keeps, rollouts pull the announced uri and
verify it; every way a pull can fail is :class:`WeightsUnavailable` or an integrity error, never a hang."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from bus.client import Bus
from rlar.policy.httpweights import FetchError, HttpWeightsConfig, WeightServer, fetch_blob
from rlar.policy.weights import WeightsIntegrityError, safetensors_bytes_to_tensors, safetensors_parts
from rlar.wire.weight_sync import WeightsUnavailable, fetch_weights, latest_announcement, publish_weights


def _tensors(seed: int = 0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return {
        "embed.weight": torch.randn(300, 64, generator=g),
        "q.weight": torch.randn(64, 64, generator=g).to(torch.bfloat16),  # stays bf16 on the wire
        "norm.weight": torch.randn(64, generator=g).to(torch.float16),  # small parts, joined to send
        "norm2.weight": torch.randn(64, generator=g),
        "ids": torch.arange(5, dtype=torch.int64),
        "empty": torch.zeros(0, 4),
    }


@pytest.fixture
def server() -> Any:
    srv = WeightServer(HttpWeightsConfig(keep_versions=2))
    yield srv
    srv.close()


async def test_a_version_is_served_and_pulled_byte_for_byte_and_the_bus_only_announces(
    bus: Bus, server: WeightServer, tmp_path: Path
) -> None:
    src = _tensors()
    ann = await publish_weights(
        bus, src.items(), version=4, step=4, mode="http", weights_dir=tmp_path, server=server
    )
    assert ann.uri == f"http://127.0.0.1:{server.port}/weights/v4"
    assert ann.size_bytes == sum(p.nbytes for p in safetensors_parts(src))
    assert (await latest_announcement(bus)) == ann
    assert not list(tmp_path.iterdir())  # nothing written to disk
    data = await fetch_weights(bus, ann)
    assert isinstance(data, bytes) and len(data) == ann.size_bytes
    back = safetensors_bytes_to_tensors(data)
    assert set(back) == set(src)
    for name, t in back.items():
        assert t.dtype == src[name].dtype and torch.equal(t, src[name]), name
    assert await asyncio.to_thread(_get_json, f"http://127.0.0.1:{server.port}/weights") == {"versions": [4]}


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def test_the_server_keeps_the_last_versions_and_refuses_the_others(server: WeightServer) -> None:
    blobs = {v: [memoryview(bytes([v]) * (1000 + v))] for v in (1, 2, 3)}
    refs = {v: server.put(v, blobs[v]) for v in blobs}
    assert server.versions() == [2, 3]
    for v in (2, 3):
        uri, sha, size = refs[v]
        data, got = fetch_blob(uri, size, timeout_s=10)
        assert data == bytes([v]) * (1000 + v) and got == sha
    uri, _, size = refs[1]
    with pytest.raises(FetchError, match="HTTP 404"):
        fetch_blob(uri, size, timeout_s=10)
    with pytest.raises(FetchError, match="says 999"):  # the server's length is not the announced one
        fetch_blob(refs[2][0], 999, timeout_s=10)
    with pytest.raises(FetchError, match="not an http"):
        fetch_blob("ftp://host/weights/v2", 10, timeout_s=10)


async def test_a_wrong_digest_is_refused_and_a_gone_version_or_learner_is_unavailable(
    bus: Bus, server: WeightServer, tmp_path: Path
) -> None:
    src = _tensors(1)
    ann = await publish_weights(
        bus, src.items(), version=1, step=1, mode="http", weights_dir=tmp_path, server=server
    )
    with pytest.raises(WeightsIntegrityError):
        await fetch_weights(bus, dataclasses.replace(ann, sha256="0" * 64))
    for v in (2, 3):  # keep_versions = 2: v1 is dropped
        await publish_weights(
            bus, src.items(), version=v, step=v, mode="http", weights_dir=tmp_path, server=server
        )
    with pytest.raises(WeightsUnavailable, match="404"):
        await fetch_weights(bus, ann)
    latest = await latest_announcement(bus)
    assert latest is not None and latest.version == 3
    server.close()  # the learner is gone: refused at once, no wait
    t0 = time.monotonic()
    with pytest.raises(WeightsUnavailable, match="v3"):
        await fetch_weights(bus, latest, timeout_s=30)
    assert time.monotonic() - t0 < 25


@contextlib.contextmanager
def _fake_server(reply: bytes | None) -> Iterator[str]:
    """The url of a listening socket that reads a request and sends ``reply`` then closes (None: never
    answers)."""
    sock = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()

    def serve() -> None:
        conn, _ = sock.accept()
        conn.recv(4096)
        if reply is not None:
            conn.sendall(reply)
            conn.close()
        done.wait(30)
        conn.close()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/weights/v1"
    finally:
        done.set()
        sock.close()


def test_a_server_that_stops_answering_or_cuts_the_body_short_fails_the_pull() -> None:
    with _fake_server(None) as url, pytest.raises(FetchError, match=r"TimeoutError|timed out"):
        fetch_blob(url, 10, timeout_s=0.5)
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nX-Sha256: 00\r\n\r\n"
    with _fake_server(head + b"x" * 40) as url, pytest.raises(FetchError, match=r"40|IncompleteRead"):
        fetch_blob(url, 100, timeout_s=5)  # the connection closes after 40 of 100 bytes


def test_the_advertised_host_defaults_to_the_bind_address_or_this_machine() -> None:
    srv = WeightServer(HttpWeightsConfig(bind="0.0.0.0"))
    try:
        assert srv.base_url == f"http://{socket.gethostname()}:{srv.port}"
    finally:
        srv.close()
    srv = WeightServer(HttpWeightsConfig(advertise="learner.internal"))
    try:
        assert srv.base_url == f"http://learner.internal:{srv.port}"
    finally:
        srv.close()
