"""Policy weights as bytes, files and references: what the learner publishes and the engines load.

One format everywhere: a safetensors blob of the model's named tensors (Hugging Face parameter names).
The learner turns its state dict into bytes (:func:`state_dict_to_safetensors_bytes`), publishes them
somewhere (a directory here; the NATS object store is wired by the bus) and announces a
:class:`WeightsRef`; a rollout worker fetches the bytes, checks them against the ref
(:func:`verify_weights_bytes`) and hands them to ``GenerationEngine.load_weights``.

This module knows nothing about the transport: a ``WeightsRef.uri`` is either a file path, which
:func:`read_weights_bytes` reads, or ``objstore://bucket/name``, which the caller fetches itself.

Contracts and limits:
- Tensors that are exact aliases of an earlier tensor (the tied ``lm_head.weight`` of a model with
  ``tie_word_embeddings``) are dropped, because safetensors cannot store shared memory; receivers treat
  a missing tied head as tied. Other tensors that share storage are cloned.
- Everything is copied to CPU memory first: the blob is ~1× the model's size in host RAM.
- :func:`write_weights_dir` is atomic per version: readers never see a half-written version directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

# safetensors and torch are imported where used: heavy and optional (rlar --help imports this module).

if TYPE_CHECKING:
    import torch

#: Scheme of a reference to a NATS object-store entry: ``objstore://<bucket>/<name>``.
OBJSTORE_SCHEME = "objstore://"
#: The only serialisation format so far.
SAFETENSORS = "safetensors"
WEIGHTS_FILE = "model.safetensors"
MANIFEST_FILE = "manifest.json"

NamedTensors = Iterable[tuple[str, "torch.Tensor"]] | Mapping[str, "torch.Tensor"]


class WeightsIntegrityError(ValueError):
    """The bytes read for a :class:`WeightsRef` do not match its size or sha256."""

    def __init__(self, ref: WeightsRef, size_bytes: int, sha256: str) -> None:
        super().__init__(
            f"weights v{ref.version} at {ref.uri}: expected {ref.size_bytes} bytes sha256={ref.sha256[:12]}…, "
            f"got {size_bytes} bytes sha256={sha256[:12]}…"
        )
        self.ref = ref
        self.size_bytes = size_bytes
        self.sha256 = sha256


@dataclass(frozen=True, slots=True)
class WeightsRef:
    """Where one version of the policy's weights lives and how to check it.

    ``uri`` is a file path or ``objstore://bucket/name``; ``sha256`` and ``size_bytes`` describe the
    serialised blob (not the tensors), so a receiver can verify before decoding.
    """

    version: int
    uri: str
    sha256: str
    size_bytes: int
    format: str = SAFETENSORS

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> WeightsRef:
        """Inverse of :meth:`to_dict`; unknown keys are ignored so manifests may carry more fields."""
        return cls(
            version=int(d["version"]),
            uri=str(d["uri"]),
            sha256=str(d["sha256"]),
            size_bytes=int(d["size_bytes"]),
            format=str(d.get("format", SAFETENSORS)),
        )

    @classmethod
    def of_bytes(cls, data: bytes, *, version: int, uri: str) -> WeightsRef:
        """The reference describing ``data`` once it is stored at ``uri`` (e.g. an object-store put)."""
        return cls(version=version, uri=uri, sha256=hashlib.sha256(data).hexdigest(), size_bytes=len(data))

    @property
    def is_objstore(self) -> bool:
        return self.uri.startswith(OBJSTORE_SCHEME)


def objstore_uri(bucket: str, name: str, nuid: str | None = None) -> str:
    """``objstore://bucket/name``, or ``objstore://bucket/name#nuid`` for one write of that name (a reader
    can then read it while it is being written; see :mod:`rlar.policy.objstore`). The bucket may not contain
    '/', the name not '#'."""
    if not bucket or "/" in bucket or not name or "#" in name or (nuid is not None and not nuid.isalnum()):
        raise ValueError(f"bad object-store location: bucket={bucket!r} name={name!r} nuid={nuid!r}")
    return f"{OBJSTORE_SCHEME}{bucket}/{name}" + (f"#{nuid}" if nuid else "")


def parse_objstore_uri(uri: str) -> tuple[str, str]:
    """``objstore://bucket/name[#nuid]`` → ``(bucket, name)``; raises ValueError for anything else."""
    if not uri.startswith(OBJSTORE_SCHEME):
        raise ValueError(f"not an object-store uri: {uri!r}")
    bucket, sep, name = uri[len(OBJSTORE_SCHEME) :].partition("/")
    name = name.partition("#")[0]
    if not bucket or not sep or not name:
        raise ValueError(f"object-store uri needs a bucket and a name: {uri!r}")
    return bucket, name


def objstore_nuid(uri: str) -> str | None:
    """The write's nuid of ``objstore://bucket/name#nuid``; None for a uri without one."""
    parse_objstore_uri(uri)
    return uri.partition("#")[2] or None


def _items(named_tensors: NamedTensors) -> Iterable[tuple[str, torch.Tensor]]:
    if isinstance(named_tensors, Mapping):
        return named_tensors.items()
    return named_tensors


def _cpu_tensors(named_tensors: NamedTensors) -> dict[str, torch.Tensor]:
    """Detached contiguous CPU tensors, exact aliases dropped and other shared storage cloned."""
    out: dict[str, torch.Tensor] = {}
    seen_views: set[tuple[Any, ...]] = set()
    seen_storage: set[int] = set()
    for name, t in _items(named_tensors):
        if name in out:
            raise ValueError(f"duplicate tensor name {name!r}")
        t = t.detach()
        if t.numel() == 0:
            out[name] = t.cpu().clone()
            continue
        ptr = t.untyped_storage().data_ptr()
        view = (t.device, ptr, t.storage_offset(), tuple(t.shape), t.stride(), t.dtype)
        if view in seen_views:
            continue  # an alias such as a tied lm_head: the receiver re-ties it
        seen_views.add(view)
        shares = ptr in seen_storage
        seen_storage.add(ptr)
        t = t.cpu().contiguous()
        if shares or t.untyped_storage().nbytes() != t.numel() * t.element_size():
            t = t.clone()  # safetensors refuses tensors that share or only partly cover a storage
        out[name] = t
    if not out:
        raise ValueError("no tensors to serialise")
    return out


def state_dict_to_safetensors_bytes(
    named_tensors: NamedTensors, metadata: Mapping[str, str] | None = None
) -> bytes:
    """Serialise named tensors to one safetensors blob (see the module docstring for aliasing).

    The same tensors give the same bytes (and sha256) unless ``metadata`` adds keys: safetensors writes
    a metadata map of several keys in no fixed order."""
    from safetensors.torch import save

    meta = {"format": "pt", **(metadata or {})}
    return save(_cpu_tensors(named_tensors), metadata=meta)


#: safetensors' dtype names (its format spec) of the torch dtypes :func:`safetensors_parts` writes.
_SAFETENSORS_DTYPES = {
    "float64": "F64",
    "float32": "F32",
    "float16": "F16",
    "bfloat16": "BF16",
    "int64": "I64",
    "int32": "I32",
    "int16": "I16",
    "int8": "I8",
    "uint8": "U8",
    "bool": "BOOL",
    "float8_e4m3fn": "F8_E4M3",
    "float8_e5m2": "F8_E5M2",
}


def safetensors_parts(named_tensors: NamedTensors) -> list[memoryview]:
    """A safetensors blob of the named tensors as buffers to be stored one after another, without copying the
    tensors: the header (8-byte little-endian length, JSON padded to 8 bytes), then each tensor's own memory.

    Tensors are laid out by element size (largest first), then name, so every tensor starts at a multiple of
    its element size. ``safetensors.torch.load`` reads the joined parts; the bytes are not those of
    :func:`state_dict_to_safetensors_bytes` (another header), so their sha256 differs. The CPU tensors passed in
    are shared, not copied: they must not change while the parts are in use."""
    import torch

    tensors = _cpu_tensors(named_tensors)
    order = sorted(tensors, key=lambda n: (-tensors[n].element_size(), n))
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    views: list[memoryview] = []
    offset = 0
    for name in order:
        t = tensors[name]
        dtype = _SAFETENSORS_DTYPES.get(str(t.dtype).removeprefix("torch."))
        if dtype is None:
            raise ValueError(f"tensor {name!r}: dtype {t.dtype} has no safetensors name here")
        n = t.numel() * t.element_size()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + n]}
        if n:
            views.append(t.reshape(-1).view(torch.uint8).numpy().data.cast("B"))
        offset += n
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    return [memoryview(len(head).to_bytes(8, "little") + head), *views]


def safetensors_bytes_to_tensors(data: bytes) -> dict[str, torch.Tensor]:
    """Decode a safetensors blob into CPU tensors (a copy; ``data`` may be dropped afterwards)."""
    from safetensors.torch import load

    return load(data)


def _dtype_summary(tensors: Mapping[str, torch.Tensor]) -> str:
    names = sorted({str(t.dtype).removeprefix("torch.") for t in tensors.values()})
    return names[0] if len(names) == 1 else "mixed:" + ",".join(names)


def version_dir_name(version: int) -> str:
    if version < 0:
        raise ValueError(f"version must be >= 0, got {version}")
    return f"v{version:08d}"


def write_weights_dir(
    path: str | Path, version: int, named_tensors: NamedTensors, *, durable: bool = True
) -> WeightsRef:
    """Write one version under ``path/v{version:08d}/`` (``model.safetensors`` + ``manifest.json``).

    Atomic: both files are written (and, with ``durable``, fsynced) in a temporary sibling directory that is
    then renamed into place, so a reader sees the whole version or none of it. Without ``durable`` a power
    loss may leave a version whose bytes no longer match its manifest: readers refuse it (sha256), so only
    use it for versions that can be made again (the learner's weight sync; its checkpoints are durable).
    Idempotent: writing a version that
    already exists with the same bytes returns its ref; different bytes raise FileExistsError
    (versions are immutable). Returns a ref whose ``uri`` is the absolute path of the weights file.
    """
    root = Path(path).absolute()
    root.mkdir(parents=True, exist_ok=True)
    final = root / version_dir_name(version)
    tensors = _cpu_tensors(named_tensors)
    data = state_dict_to_safetensors_bytes(tensors)  # no extra metadata: keeps the bytes deterministic
    ref = WeightsRef.of_bytes(data, version=version, uri=str(final / WEIGHTS_FILE))
    if final.exists():
        return _existing_or_conflict(final, ref)
    manifest = {
        **ref.to_dict(),
        "file": WEIGHTS_FILE,
        "dtype": _dtype_summary(tensors),
        "num_tensors": len(tensors),
        "created_at": time.time(),
    }
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{final.name}-", dir=root))
    try:
        _write_file(tmp / WEIGHTS_FILE, data, durable)
        _write_file(tmp / MANIFEST_FILE, json.dumps(manifest, indent=1).encode(), durable)
        try:
            os.rename(tmp, final)
        except OSError:
            # Lost a race with another writer of the same version (rename onto a non-empty dir fails).
            if final.exists():
                return _existing_or_conflict(final, ref)
            raise
        if durable:
            _fsync_dir(root)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return ref


def _existing_or_conflict(final: Path, ref: WeightsRef) -> WeightsRef:
    existing = read_manifest(final)
    if existing.sha256 != ref.sha256:
        raise FileExistsError(f"{final} already holds different weights for version {ref.version}")
    return existing


def _write_file(path: Path, data: bytes, durable: bool) -> None:
    with open(path, "wb") as f:
        f.write(data)
        if durable:
            f.flush()
            os.fsync(f.fileno())


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):  # not every filesystem lets a directory be fsynced
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def read_manifest(version_dir: str | Path) -> WeightsRef:
    """The ref recorded in ``version_dir/manifest.json`` (its uri made absolute for this machine)."""
    d = Path(version_dir).absolute()
    manifest = json.loads((d / MANIFEST_FILE).read_text())
    ref = WeightsRef.from_dict(manifest)
    return WeightsRef(
        version=ref.version,
        uri=str(d / manifest.get("file", WEIGHTS_FILE)),
        sha256=ref.sha256,
        size_bytes=ref.size_bytes,
        format=ref.format,
    )


def latest_weights_ref(path: str | Path) -> WeightsRef | None:
    """The highest complete version under ``path`` (temporary directories are ignored), or None."""
    root = Path(path)
    if not root.is_dir():
        return None
    versions = sorted(
        (d for d in root.iterdir() if d.is_dir() and d.name.startswith("v") and d.name[1:].isdigit()),
        key=lambda d: int(d.name[1:]),
    )
    return read_manifest(versions[-1]) if versions else None


def verify_weights_bytes(ref: WeightsRef, data: bytes) -> None:
    """Raise :class:`WeightsIntegrityError` unless ``data`` has the ref's size and sha256."""
    if ref.format != SAFETENSORS:
        raise ValueError(f"unsupported weights format {ref.format!r}")
    digest = hashlib.sha256(data).hexdigest()
    if len(data) != ref.size_bytes or digest != ref.sha256:
        raise WeightsIntegrityError(ref, len(data), digest)


def read_weights_bytes(ref: WeightsRef) -> bytes:
    """The verified blob of a file-backed ref; object-store refs must be fetched by the caller."""
    if ref.is_objstore:
        raise ValueError(
            f"{ref.uri} is an object-store entry: fetch its bytes over the bus, then verify_weights_bytes()"
        )
    data = Path(ref.uri).read_bytes()
    verify_weights_bytes(ref, data)
    return data


def read_weights(ref: WeightsRef) -> dict[str, torch.Tensor]:
    """The verified tensors of a file-backed ref (see :func:`read_weights_bytes`)."""
    return safetensors_bytes_to_tensors(read_weights_bytes(ref))
