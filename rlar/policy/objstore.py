"""Large blobs (policy weights) in the NATS object store, at the speed of the bus rather than of nats-py's client.

The layout is NATS's own object store (stream ``OBJ_<bucket>``, chunks on ``$O.<bucket>.C.<nuid>``, the
object's info on ``$O.<bucket>.M.<base64url(name)>`` with a rollup header, digest ``SHA-256=<base64url>``),
so ``nats object get`` and nats-py's ``ObjectStore.get`` read what :func:`put_blob` writes. What differs:

- chunks as large as the server's ``max_payload`` allows (nats-py: 128 kB), published pipelined —
  ``window`` acks outstanding at once — instead of one round trip per chunk;
- the blob may be a list of buffers (a safetensors header and the tensors' own memory,
  :func:`rlar.policy.weights.safetensors_parts`): chunks are cut from them without first joining them;
- hashing runs in a worker thread (hashlib releases the GIL), next to the chunks' I/O on the event loop;
- **streaming**: a write is planned first (:func:`prepare_blob`: nuid, size, sha256), so the writer can
  announce it before the chunks go out (:func:`write_blob`), and a reader that knows the plan
  (``get_blob(..., nuid=, size=, sha256=)``) consumes the chunks while they are being written — the object's
  info (written last) is not needed. A reader gives up with :class:`BlobStalled` when no chunk arrives for
  ``stall_s`` (its writer died, or the object was deleted);
- the reader keeps the chunks as they come and joins them once (nats-py appends to a ``bytes``, which copies
  the whole object again for every chunk: quadratic).

A failed write purges the chunks it wrote. Replacing a name purges the old object's chunks afterwards.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from nats.js import JetStreamContext
from nats.js.api import ObjectInfo, ObjectMetaOptions
from nats.js.errors import NotFoundError

__all__ = [
    "BlobIntegrityError",
    "BlobPlan",
    "BlobStalled",
    "get_blob",
    "prepare_blob",
    "put_blob",
    "write_blob",
]

DEFAULT_WINDOW = 32
"""Chunk publishes awaiting their ack at once."""
DEFAULT_STALL_S = 30.0
"""A reader gives up on an object when no chunk of it arrived for this long."""

Blob = bytes | bytearray | memoryview | Sequence[bytes | bytearray | memoryview]


class BlobIntegrityError(ValueError):
    """The chunks read do not add up to the object's recorded size and digest."""


class BlobStalled(TimeoutError):
    """No chunk of the object being read arrived for ``stall_s`` (its writer died, or it was deleted)."""


@dataclass(slots=True)
class BlobPlan:
    """One write, decided before its first chunk: where it goes and what a reader must get."""

    bucket: str
    name: str
    nuid: str
    size: int
    sha256: str  # hex
    parts: list[memoryview] = field(repr=False)


def _meta_subject(bucket: str, name: str) -> str:
    return f"$O.{bucket}.M.{base64.urlsafe_b64encode(name.encode()).decode()}"


def _chunk_subject(bucket: str, nuid: str) -> str:
    return f"$O.{bucket}.C.{nuid}"


async def _meta(js: JetStreamContext, bucket: str, name: str) -> ObjectInfo | None:
    """The object's info as last written (``deleted`` included), or None when it never existed."""
    try:
        msg = await js.get_last_msg(f"OBJ_{bucket}", _meta_subject(bucket, name))
    except NotFoundError:
        return None
    return ObjectInfo.from_response(json.loads(msg.data or b"{}"))


def _views(data: Blob) -> list[memoryview]:
    parts = [data] if isinstance(data, bytes | bytearray | memoryview) else list(data)
    return [memoryview(p).cast("B") for p in parts]


def _sha256(parts: list[memoryview]) -> bytes:
    h = hashlib.sha256()
    for p in parts:
        h.update(p)
    return h.digest()


def _chunks(parts: list[memoryview], chunk_size: int) -> Iterator[bytes | memoryview]:
    """Consecutive ``chunk_size`` pieces of the concatenated parts: a slice of one part as it is (no copy),
    a piece that spans parts joined."""
    pending: list[memoryview] = []
    have = 0
    for part in parts:
        pos = 0
        while pos < len(part):
            take = min(chunk_size - have, len(part) - pos)
            piece = part[pos : pos + take]
            pos += take
            if not pending and take == chunk_size:
                yield piece
                continue
            pending.append(piece)
            have += take
            if have == chunk_size:
                yield b"".join(pending)
                pending, have = [], 0
    if pending:
        yield b"".join(pending) if len(pending) > 1 else pending[0]


async def prepare_blob(js: JetStreamContext, bucket: str, name: str, data: Blob) -> BlobPlan:
    """Plan a write of ``data`` (bytes, or buffers to be stored one after another): a fresh nuid, the size and
    the sha256, hashed off the event loop. The buffers must not change until :func:`write_blob` returns."""
    parts = _views(data)
    digest = await asyncio.to_thread(_sha256, parts) if parts else hashlib.sha256().digest()
    return BlobPlan(
        bucket=bucket,
        name=name,
        nuid=js._nc._nuid.next().decode(),
        size=sum(p.nbytes for p in parts),
        sha256=digest.hex(),
        parts=parts,
    )


async def write_blob(
    js: JetStreamContext, plan: BlobPlan, *, chunk_size: int, window: int = DEFAULT_WINDOW
) -> None:
    """Store the planned object: its chunks (pipelined), then its info. ``chunk_size`` must fit the server's
    ``max_payload`` (see :attr:`bus.client.Bus.max_payload`)."""
    if chunk_size <= 0:
        raise ValueError(f"chunk_size must be positive, got {chunk_size}")
    bucket, name = plan.bucket, plan.name
    stream = f"OBJ_{bucket}"
    subject = _chunk_subject(bucket, plan.nuid)
    old = await _meta(js, bucket, name)
    sem = asyncio.Semaphore(max(1, window))

    async def send(payload: bytes | memoryview) -> None:
        async with sem:
            await js.publish(subject, payload, timeout=30.0)  # type: ignore[arg-type]  # any buffer is sent as is

    pieces = list(_chunks(plan.parts, chunk_size))
    try:
        await asyncio.gather(*(send(p) for p in pieces))
        info = ObjectInfo(
            name=name,
            bucket=bucket,
            nuid=plan.nuid,
            size=plan.size,
            chunks=len(pieces),
            mtime=datetime.now(UTC).isoformat(),
            digest="SHA-256=" + base64.urlsafe_b64encode(bytes.fromhex(plan.sha256)).decode(),
            options=ObjectMetaOptions(max_chunk_size=chunk_size),
        )
        await js.publish(
            _meta_subject(bucket, name), json.dumps(info.as_dict()).encode(), headers={"Nats-Rollup": "sub"}
        )
    except BaseException:
        await js.purge_stream(stream, subject=subject)
        raise
    if old is not None and old.nuid and old.nuid != plan.nuid:
        await js.purge_stream(stream, subject=_chunk_subject(bucket, old.nuid))


async def put_blob(
    js: JetStreamContext,
    bucket: str,
    name: str,
    data: Blob,
    *,
    chunk_size: int,
    window: int = DEFAULT_WINDOW,
) -> str:
    """Store ``data`` as object ``name`` (:func:`prepare_blob` then :func:`write_blob`); returns its sha256
    (hex)."""
    plan = await prepare_blob(js, bucket, name, data)
    await write_blob(js, plan, chunk_size=chunk_size, window=window)
    return plan.sha256


async def get_blob(
    js: JetStreamContext,
    bucket: str,
    name: str,
    *,
    nuid: str | None = None,
    size: int | None = None,
    sha256: str | None = None,
    timeout_s: float = 300.0,
    stall_s: float = DEFAULT_STALL_S,
) -> tuple[bytes, str]:
    """The bytes of object ``name`` and their sha256 (hex), checked against its size and digest.

    Without ``nuid`` the object must be complete: its info gives the chunks, size and digest (``KeyError``
    when there is no such object). With ``nuid``, ``size`` and ``sha256`` (a writer's :class:`BlobPlan`, as
    announced) the chunks are read as they are written. Raises :class:`BlobIntegrityError` on a mismatch,
    :class:`BlobStalled` when no chunk came for ``stall_s``, ``TimeoutError`` after ``timeout_s`` in all."""
    info = await _meta(js, bucket, name)
    complete = info is not None and not info.deleted and bool(info.nuid)
    if nuid is None:
        if not complete:
            raise KeyError(f"no object {name!r} in bucket {bucket!r}")
        assert info is not None and info.nuid is not None
        nuid, size = info.nuid, int(info.size or 0)
        want = (info.digest or "").removeprefix("SHA-256=").removeprefix("sha-256=")
        digest_wanted = base64.urlsafe_b64decode(want + "=" * (-len(want) % 4))
    else:
        if size is None or sha256 is None:
            raise ValueError("reading by nuid needs the planned size and sha256")
        complete = complete and info is not None and info.nuid == nuid
        digest_wanted = bytes.fromhex(sha256)
    chunks, digest = await _read_chunks(js, bucket, name, nuid, size, complete, timeout_s, stall_s)
    if digest != digest_wanted:
        raise BlobIntegrityError(f"object {name!r}: sha256 does not match its recorded digest")
    return (chunks[0] if len(chunks) == 1 else b"".join(chunks)), digest.hex()


async def _read_chunks(
    js: JetStreamContext,
    bucket: str,
    name: str,
    nuid: str,
    size: int,
    complete: bool,
    timeout_s: float,
    stall_s: float,
) -> tuple[list[bytes], bytes]:
    h = hashlib.sha256()
    if size == 0:
        return [b""], h.digest()
    loop = asyncio.get_running_loop()
    chunks: list[bytes] = []
    hashed: list[asyncio.Future[None]] = []
    hasher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="blob-sha256")  # one worker: in order
    done: asyncio.Future[None] = loop.create_future()
    got, last = 0, loop.time()

    def fail(exc: Exception) -> None:
        if not done.done():
            done.set_exception(exc)

    async def on_chunk(msg: Any) -> None:
        nonlocal got, last
        data = msg.data
        if got + len(data) > size:
            fail(BlobIntegrityError(f"object {name!r} has more than its {size} bytes"))
            return
        chunks.append(data)
        hashed.append(loop.run_in_executor(hasher, h.update, data))
        got += len(data)
        last = loop.time()
        if got == size:
            if not done.done():
                done.set_result(None)
        elif complete and msg.metadata.num_pending == 0:
            fail(BlobIntegrityError(f"object {name!r}: got {got} of {size} bytes"))

    sub = await js.subscribe(
        _chunk_subject(bucket, nuid),
        cb=on_chunk,
        ordered_consumer=True,
        pending_bytes_limit=256 * 2**20,
        pending_msgs_limit=4096,
    )
    deadline = loop.time() + timeout_s
    try:
        while not done.done():
            now = loop.time()
            if now >= deadline:
                raise TimeoutError(f"object {name!r}: {got} of {size} bytes after {timeout_s:g}s")
            if now - last >= stall_s:
                raise BlobStalled(f"object {name!r}: no chunk for {stall_s:g}s ({got} of {size} bytes)")
            await asyncio.wait({done}, timeout=min(deadline, last + stall_s) - now)
        done.result()
        await asyncio.gather(*hashed)
    finally:
        await sub.unsubscribe()
        hasher.shutdown(wait=True)
    return chunks, h.digest()
