"""Weight sync between the learner and the rollouts: four routes, one announcement.

- ``filesystem`` (the default on one machine): a safetensors blob in an atomic version directory on a shared
  path (:mod:`rlar.policy.weights`);
- ``objstore`` (across machines without a shared disk): the blob in the NATS object store, written and read
  with pipelined, ``max_payload``-sized chunks (:mod:`rlar.policy.objstore`). The version is announced as
  soon as its sha256 is known, before its chunks go out (the uri names the write: ``objstore://b/name#nuid``),
  so rollouts read it while the learner writes it; a write that dies leaves readers with
  :class:`WeightsUnavailable` after ``stall_s``;
- ``broadcast`` (learner → a fixed set of rollout engines): the tensors themselves over a
  ``torch.distributed`` group — gloo on CPU, NCCL on GPUs — in their own dtype (bf16 stays bf16)
  (:mod:`rlar.policy.broadcast`). Versions published while the group is not formed, or after it broke, go
  through its ``fallback`` route, so a rollout outside the group still gets every version;
- ``http`` (across machines, any number of rollouts): the learner keeps the last versions in memory and serves
  them over HTTP; rollouts pull the announced uri (:mod:`rlar.policy.httpweights`).

Whatever the route, the learner announces a :class:`bus.messages.WeightsAnnounce` with the uri, sha256 (of
the blob; for a broadcast, of its manifest) and size on ``rlar.weights``; rollouts fetch, verify and load in
place between batches.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import torch

from bus import subjects
from bus.client import Bus
from bus.messages import WeightsAnnounce
from bus.topology import OBJECTS_BUCKET, WEIGHTS
from rlar.policy.broadcast import SCHEME as BROADCAST_SCHEME
from rlar.policy.broadcast import WeightReceiver, WeightSender
from rlar.policy.httpweights import SCHEMES as HTTP_SCHEMES
from rlar.policy.httpweights import FetchError, WeightServer, fetch_blob
from rlar.policy.objstore import DEFAULT_STALL_S, BlobStalled, get_blob, prepare_blob, write_blob
from rlar.policy.weights import (
    WeightsIntegrityError,
    WeightsRef,
    objstore_nuid,
    objstore_uri,
    parse_objstore_uri,
    read_weights_bytes,
    safetensors_parts,
    write_weights_dir,
)

SyncMode = Literal["filesystem", "objstore", "broadcast", "http"]


class WeightsUnavailable(RuntimeError):
    """An announced version this rollout cannot get (a broadcast it is not part of, or one it missed)."""


async def publish_weights(
    bus: Bus,
    named_tensors: Iterable[tuple[str, torch.Tensor]],
    *,
    version: int,
    step: int,
    mode: SyncMode,
    weights_dir: str | Path,
    keep_last: int = 3,
    sender: WeightSender | None = None,
    adapter: dict[str, Any] | None = None,
    server: WeightServer | None = None,
) -> WeightsAnnounce:
    """Store one version and announce it. Returns the announcement. ``broadcast`` needs the ``sender``,
    ``http`` the ``server``.
    ``adapter``: the LoRA config when the tensors are adapters only (see :mod:`rlar.policy.lora`). The
    ``objstore`` route sends from the tensors' own memory: they must not change until this returns."""
    fmt = "safetensors"
    if mode == "broadcast":
        if sender is None:
            raise ValueError("weight_sync 'broadcast' needs a WeightSender")
        named_tensors = list(named_tensors)
        sent = await asyncio.to_thread(sender.send, version, named_tensors)
        if sent is not None:
            uri, sha, size = sent
            return await _announce(bus, version, uri, sha, size, step, "tensors", adapter)
        mode = sender.cfg.fallback
    if mode == "http":
        if server is None:
            raise ValueError("weight_sync 'http' needs a WeightServer")
        uri, sha, size = await asyncio.to_thread(server.put, version, safetensors_parts(named_tensors))
        return await _announce(bus, version, uri, sha, size, step, fmt, adapter)
    if mode == "objstore":
        return await _publish_objstore(bus, named_tensors, version, step, keep_last, adapter)
    # Not fsynced: a version lost in a power cut fails its sha256 check, and the learner makes new ones.
    ref = await asyncio.to_thread(write_weights_dir, weights_dir, version, named_tensors, durable=False)
    _prune_dirs(Path(weights_dir), keep_last)
    return await _announce(bus, version, ref.uri, ref.sha256, ref.size_bytes, step, fmt, adapter)


async def _announce(
    bus: Bus,
    version: int,
    uri: str,
    sha256: str,
    size: int,
    step: int,
    fmt: str,
    adapter: dict[str, Any] | None,
) -> WeightsAnnounce:
    """Publish a stored version's announcement on ``rlar.weights`` (de-duplicated by version and digest)."""
    announce = WeightsAnnounce(
        version=version, uri=uri, sha256=sha256, size_bytes=size, step=step, format=fmt, adapter=adapter
    )
    await bus.js_publish(subjects.WEIGHTS, announce, msg_id=f"weights-{version}-{sha256[:16]}")
    return announce


async def _publish_objstore(
    bus: Bus,
    named_tensors: Iterable[tuple[str, torch.Tensor]],
    version: int,
    step: int,
    keep_last: int,
    adapter: dict[str, Any] | None,
) -> WeightsAnnounce:
    """Plan the write (sha256 of the tensors' own memory, no serialised copy), announce it, then write it
    while rollouts already read; older versions are deleted last."""
    name = f"policy/v{version:08d}.safetensors"
    plan = await prepare_blob(bus.js, OBJECTS_BUCKET, name, safetensors_parts(named_tensors))
    announce = await _announce(
        bus,
        version,
        objstore_uri(OBJECTS_BUCKET, name, plan.nuid),
        plan.sha256,
        plan.size,
        step,
        "safetensors",
        adapter,
    )
    await write_blob(bus.js, plan, chunk_size=bus.max_payload)
    if version - keep_last >= 0:
        with contextlib.suppress(Exception):
            store = await bus.js.object_store(OBJECTS_BUCKET)
            await store.delete(f"policy/v{version - keep_last:08d}.safetensors")
    return announce


def _prune_dirs(root: Path, keep_last: int) -> None:
    versions = sorted(p for p in root.glob("v*") if p.is_dir())
    for old in versions[: max(0, len(versions) - keep_last)]:
        shutil.rmtree(old, ignore_errors=True)


async def fetch_weights(
    bus: Bus,
    announce: WeightsAnnounce,
    receiver: WeightReceiver | None = None,
    timeout_s: float = 60.0,
    stall_s: float = DEFAULT_STALL_S,
) -> bytes | list[tuple[str, torch.Tensor]]:
    """The verified weights of an announced version: safetensors bytes, or the tensors of a broadcast (which
    ``receiver`` took). Raises on a hash mismatch; :class:`WeightsUnavailable` for a broadcast this process
    cannot get, an object-store version that is gone or whose write stopped (no chunk for ``stall_s``), or an
    http version the learner no longer serves (refused, not kept, cut short, no byte for ``timeout_s``)."""
    if announce.uri.startswith(BROADCAST_SCHEME):
        if receiver is None:
            raise WeightsUnavailable(
                f"v{announce.version} was broadcast and this process is not in the group"
            )
        got = await asyncio.to_thread(receiver.latest, announce.version, timeout_s)
        if got is None:
            raise WeightsUnavailable(f"v{announce.version} was not received within {timeout_s:g}s")
        version, sha, tensors = got
        if version != announce.version:  # its own announcement follows; the rollout takes that one
            raise WeightsUnavailable(f"v{announce.version} was superseded by v{version} before it was loaded")
        if sha != announce.sha256:
            raise ValueError(
                f"broadcast v{version}: manifest sha256 {sha[:12]}… != announced {announce.sha256[:12]}…"
            )
        return tensors
    ref = WeightsRef(
        version=announce.version, uri=announce.uri, sha256=announce.sha256, size_bytes=announce.size_bytes
    )
    if announce.uri.startswith(HTTP_SCHEMES):
        try:
            data, sha = await asyncio.to_thread(fetch_blob, announce.uri, announce.size_bytes, timeout_s)
        except FetchError as exc:
            raise WeightsUnavailable(f"v{announce.version}: {exc}") from exc
        if sha != ref.sha256:
            raise WeightsIntegrityError(ref, len(data), sha)
        return data
    if ref.is_objstore:
        bucket, name = parse_objstore_uri(ref.uri)
        nuid = objstore_nuid(ref.uri)
        try:
            if nuid is None:  # announced before writes were streamed: the object is complete
                data, sha = await get_blob(bus.js, bucket, name)
            else:
                data, sha = await get_blob(
                    bus.js, bucket, name, nuid=nuid, size=ref.size_bytes, sha256=ref.sha256, stall_s=stall_s
                )
        except (KeyError, BlobStalled) as exc:
            raise WeightsUnavailable(f"v{announce.version} at {ref.uri}: {exc}") from exc
        if len(data) != ref.size_bytes or sha != ref.sha256:
            raise WeightsIntegrityError(ref, len(data), sha)
        return data
    return read_weights_bytes(ref)


async def latest_announcement(bus: Bus) -> WeightsAnnounce | None:
    """The newest valid announcement kept in the WEIGHTS stream (for a rollout that starts late)."""
    return await bus.last_valid(WEIGHTS, subjects.WEIGHTS, WeightsAnnounce)
