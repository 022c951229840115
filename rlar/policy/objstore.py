"""Large blobs (policy weights) in the NATS object store, at the speed of the bus rather than of nats-py's client.

The layout is NATS's own object store (stream ``OBJ_<bucket>``, chunks on ``$O.<bucket>.C.<nuid>``, the
object's info on ``$O.<bucket>.M.<base64url(name)>`` with a rollup header, digest ``SHA-256=<base64url>``),
so ``nats object get`` and nats-py's ``ObjectStore.get`` read what :func:`put_blob` writes. What differs:

- chunks as large as the server's ``max_payload`` allows (nats-py: 128 kB), published pipelined —
  ``window`` acks outstanding at once — instead of one round trip per chunk;
- the reader (:func:`get_blob`) copies chunks into one preallocated buffer (nats-py appends to a ``bytes``,
  which copies the whole object again for every chunk: quadratic) and hashes as it goes;
- the sha256 is computed once per side: the writer returns it (the weights announcement carries it), the
  reader checks the object's digest and returns its hex form for the caller to compare.

A failed put purges the chunks it wrote. Replacing a name purges the old object's chunks afterwards.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from datetime import UTC, datetime
from typing import Any

from nats.js import JetStreamContext
from nats.js.api import ObjectInfo, ObjectMetaOptions
from nats.js.errors import NotFoundError

__all__ = ["BlobIntegrityError", "get_blob", "put_blob"]

DEFAULT_WINDOW = 32
"""Chunk publishes awaiting their ack at once."""


class BlobIntegrityError(ValueError):
    """The chunks read do not add up to the object's recorded size and digest."""


def _meta_subject(bucket: str, name: str) -> str:
    return f"$O.{bucket}.M.{base64.urlsafe_b64encode(name.encode()).decode()}"


def _chunk_subject(bucket: str, nuid: str) -> str:
    return f"$O.{bucket}.C.{nuid}"


async def _info(js: JetStreamContext, bucket: str, name: str) -> ObjectInfo | None:
    try:
        msg = await js.get_last_msg(f"OBJ_{bucket}", _meta_subject(bucket, name))
    except NotFoundError:
        return None
    info = ObjectInfo.from_response(json.loads(msg.data or b"{}"))
    return None if info.deleted else info


async def put_blob(
    js: JetStreamContext,
    bucket: str,
    name: str,
    data: bytes,
    *,
    chunk_size: int,
    window: int = DEFAULT_WINDOW,
) -> str:
    """Store ``data`` as object ``name``; returns its sha256 (hex). ``chunk_size`` must fit the server's
    ``max_payload`` (see :attr:`bus.client.Bus.max_payload`)."""
    stream = f"OBJ_{bucket}"
    nuid = js._nc._nuid.next().decode()
    subject = _chunk_subject(bucket, nuid)
    old = await _info(js, bucket, name)
    view = memoryview(data)
    digest = hashlib.sha256(view).digest()
    sem = asyncio.Semaphore(max(1, window))

    async def chunk(i: int) -> None:
        async with sem:
            await js.publish(subject, bytes(view[i : i + chunk_size]), timeout=30.0)

    starts = range(0, len(data), chunk_size)
    try:
        await asyncio.gather(*(chunk(i) for i in starts))
        info = ObjectInfo(
            name=name, bucket=bucket, nuid=nuid, size=len(data), chunks=len(starts),
            mtime=datetime.now(UTC).isoformat(), digest="SHA-256=" + base64.urlsafe_b64encode(digest).decode(),
            options=ObjectMetaOptions(max_chunk_size=chunk_size),
        )  # fmt: skip
        await js.publish(
            _meta_subject(bucket, name), json.dumps(info.as_dict()).encode(), headers={"Nats-Rollup": "sub"}
        )
    except BaseException:
        await js.purge_stream(stream, subject=subject)
        raise
    if old is not None and old.nuid:
        await js.purge_stream(stream, subject=_chunk_subject(bucket, old.nuid))
    return digest.hex()


async def get_blob(
    js: JetStreamContext, bucket: str, name: str, *, timeout_s: float = 300.0
) -> tuple[bytes, str]:
    """The bytes of object ``name`` and their sha256 (hex), checked against the object's size and digest.
    Raises ``KeyError`` when there is no such object and :class:`BlobIntegrityError` on a mismatch."""
    info = await _info(js, bucket, name)
    if info is None or not info.nuid:
        raise KeyError(f"no object {name!r} in bucket {bucket!r}")
    size = int(info.size or 0)
    buf = bytearray(size)
    h = hashlib.sha256()
    if size:
        pos = 0
        done = asyncio.get_running_loop().create_future()

        async def on_chunk(msg: Any) -> None:
            nonlocal pos
            n = len(msg.data)
            if pos + n > size:
                if not done.done():
                    done.set_exception(BlobIntegrityError(f"object {name!r} has more than its {size} bytes"))
                return
            buf[pos : pos + n] = msg.data
            h.update(msg.data)
            pos += n
            if msg.metadata.num_pending == 0 and not done.done():
                done.set_result(None)

        sub = await js.subscribe(
            _chunk_subject(bucket, info.nuid), cb=on_chunk, ordered_consumer=True,
            pending_bytes_limit=256 * 2**20, pending_msgs_limit=4096,
        )  # fmt: skip
        try:
            await asyncio.wait_for(done, timeout_s)
        finally:
            await sub.unsubscribe()
        if pos != size:
            raise BlobIntegrityError(f"object {name!r}: got {pos} of {size} bytes")
    digest = h.digest()
    want = (info.digest or "").removeprefix("SHA-256=").removeprefix("sha-256=")
    if base64.urlsafe_b64decode(want + "=" * (-len(want) % 4)) != digest:
        raise BlobIntegrityError(f"object {name!r}: sha256 does not match its recorded digest")
    return bytes(buf), digest.hex()
