"""Weight sync between the learner and the rollouts, over the bus.

The learner serialises a new version (safetensors) and stores it either on a shared filesystem path
(``filesystem``: the default on one machine; atomic version directories, see :mod:`rlar.policy.weights`)
or in the NATS object store (``objstore``: across machines without a shared disk; chunked by JetStream,
fine for small policies). Either way it announces a :class:`bus.messages.WeightsAnnounce` with the uri,
sha256 and size on ``rlar.weights``; rollouts fetch, verify the hash, and load in place between batches.

On GPU clusters a third route fits the same announcement: the learner broadcasts tensors over an NCCL
group that includes the inference workers (vLLM's weight-transfer API) and the announcement carries
``uri = "nccl://<group>/<version>"``; receivers join the broadcast instead of reading bytes. It is not
implemented here (no GPU on the CI machines); the announcement and version bookkeeping already allow it.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import torch

from bus import subjects
from bus.client import Bus
from bus.messages import WeightsAnnounce
from bus.topology import OBJECTS_BUCKET, WEIGHTS
from rlar.policy.weights import (
    WeightsRef,
    objstore_uri,
    parse_objstore_uri,
    read_weights_bytes,
    state_dict_to_safetensors_bytes,
    verify_weights_bytes,
    write_weights_dir,
)

SyncMode = Literal["filesystem", "objstore"]


async def publish_weights(
    bus: Bus,
    named_tensors: Iterable[tuple[str, torch.Tensor]],
    *,
    version: int,
    step: int,
    mode: SyncMode,
    weights_dir: str | Path,
    keep_last: int = 3,
) -> WeightsAnnounce:
    """Store one version and announce it. Returns the announcement."""
    if mode == "filesystem":
        ref = write_weights_dir(weights_dir, version, named_tensors)
        _prune_dirs(Path(weights_dir), keep_last)
    else:
        data = state_dict_to_safetensors_bytes(named_tensors)
        name = f"policy/v{version:08d}.safetensors"
        store = await bus.js.object_store(OBJECTS_BUCKET)
        await store.put(name, data)
        ref = WeightsRef.of_bytes(data, version=version, uri=objstore_uri(OBJECTS_BUCKET, name))
        if version - keep_last >= 0:
            with contextlib.suppress(Exception):
                await store.delete(f"policy/v{version - keep_last:08d}.safetensors")
    announce = WeightsAnnounce(
        version=version, uri=ref.uri, sha256=ref.sha256, size_bytes=ref.size_bytes, step=step
    )
    await bus.js_publish(subjects.WEIGHTS, announce, msg_id=f"weights-{version}-{ref.sha256[:16]}")
    return announce


def _prune_dirs(root: Path, keep_last: int) -> None:
    versions = sorted(p for p in root.glob("v*") if p.is_dir())
    for old in versions[: max(0, len(versions) - keep_last)]:
        shutil.rmtree(old, ignore_errors=True)


async def fetch_weights(bus: Bus, announce: WeightsAnnounce) -> bytes:
    """The verified safetensors bytes of an announced version (raises on a hash mismatch)."""
    ref = WeightsRef(
        version=announce.version, uri=announce.uri, sha256=announce.sha256, size_bytes=announce.size_bytes
    )
    if ref.is_objstore:
        bucket, name = parse_objstore_uri(ref.uri)
        store = await bus.js.object_store(bucket)
        result = await store.get(name)
        data = bytes(result.data or b"")
        verify_weights_bytes(ref, data)
        return data
    return read_weights_bytes(ref)


async def latest_announcement(bus: Bus) -> WeightsAnnounce | None:
    """The newest announcement kept in the WEIGHTS stream (for a rollout that starts late)."""
    from nats.js.errors import NotFoundError

    from bus.codec import DecodeError, decode

    try:
        raw = await bus.js.get_last_msg(WEIGHTS, subjects.WEIGHTS)
    except NotFoundError:
        return None
    try:
        return decode(raw.data or b"", WeightsAnnounce)
    except DecodeError:
        return None
