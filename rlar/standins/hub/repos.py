"""The mirror's repositories: what a model is made of (:class:`MirrorModel`) and what the hub derives from it —
siblings with git blob ids and LFS pointers, parameter counts from safetensors headers, the repo's sha, tags,
card data and listing items. Used by :mod:`rlar.standins.hub.mirror` (API and files) and
:mod:`rlar.standins.hub.pages` (HTML)."""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LFS_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".h5", ".onnx", ".msgpack")
QUIRKS = (
    "no_api_sizes",
    "no_length_headers",
    "no_hashes",
    "undersized",
    "no_head",
    "branch_only",
    "weights_unavailable",
)


@dataclass
class MirrorModel:
    """One repository of the mirror. ``files`` maps a repo path to a local file or to bytes; ``listed``
    adds files the API lists (with a size) that cannot be downloaded (e.g. a 70B checkpoint)."""

    id: str
    pipeline_tag: str | None = "text-classification"
    library_name: str | None = "transformers"
    license: str | None = "apache-2.0"
    base_model: str | None = None
    parameters: int | None = (
        None  # the stated size (wins over the served files'); computed from them when None
    )
    dtype: str = "F32"
    downloads: int = 0
    likes: int = 0
    last_modified: str = "2026-01-01T00:00:00.000Z"
    created_at: str = "2025-01-01T00:00:00.000Z"
    tags: list[str] = field(default_factory=list)
    card: str = ""
    files: dict[str, Path | bytes] = field(default_factory=dict)
    listed: dict[str, int] = field(default_factory=dict)
    behaviour: str = "ok"  # ok | 404 | hang | missing_fields | dom_only (no data-props, markup only)
    architectures: list[str] = field(default_factory=lambda: ["LlamaForSequenceClassification"])
    model_type: str | None = "llama"
    model_index: list[dict[str, Any]] | None = None
    gated: bool | str = False  # False, or the hub's "auto" / "manual": files then answer 401 GatedRepo
    extra_html: str = ""  # appended to the card section as is (e.g. a resource on another host)
    languages: list[str] = field(default_factory=list)  # the card's ``language`` metadata (ISO codes)
    datasets: list[str] = field(default_factory=list)  # the card's ``datasets`` metadata
    quirks: tuple[str, ...] = ()  # no_api_sizes | no_length_headers | no_hashes | undersized (module doc)

    @property
    def author(self) -> str:
        return self.id.split("/", 1)[0]


def files_of_dir(directory: Path) -> dict[str, Path | bytes]:
    """Every file under ``directory`` by its relative path (for ``MirrorModel.files``)."""
    return {str(p.relative_to(directory)): p for p in sorted(directory.rglob("*")) if p.is_file()}


def safetensors_parameters(data: bytes) -> dict[str, int]:
    """Parameter counts per dtype from a safetensors file's header (no tensor is read)."""
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    out: dict[str, int] = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        count = 1
        for d in t["shape"]:
            count *= int(d)
        out[t["dtype"]] = out.get(t["dtype"], 0) + count
    return out


@dataclass
class Repo:
    model: MirrorModel
    blobs: dict[str, bytes]
    siblings: list[dict[str, Any]]
    sha: str
    params_by_dtype: dict[str, int]

    @property
    def total_params(self) -> int | None:
        if self.params_by_dtype:
            return sum(self.params_by_dtype.values())
        return self.model.parameters


def git_blob_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _sibling(name: str, size: int, sha256: str, blob_id: str) -> dict[str, Any]:
    """A sibling as ``/api/models/{id}?blobs=true`` lists it (LFS files with their pointer's blob id)."""
    if not name.endswith(LFS_SUFFIXES):
        return {"rfilename": name, "blobId": blob_id, "size": size}
    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()
    return {
        "rfilename": name,
        "blobId": git_blob_sha(pointer),
        "size": size,
        "lfs": {"sha256": sha256, "size": size, "pointerSize": len(pointer)},
    }


def prepare(model: MirrorModel) -> Repo:
    blobs: dict[str, bytes] = {}
    for name, src in model.files.items():
        blobs[name] = src if isinstance(src, bytes) else Path(src).read_bytes()
    siblings: list[dict[str, Any]] = []
    params: dict[str, int] = {}
    unknown = set(model.quirks) - set(QUIRKS)
    if unknown:
        raise ValueError(f"{model.id}: unknown quirks {sorted(unknown)}; known: {QUIRKS}")
    for name in sorted(blobs):
        data = blobs[name]
        siblings.append(_sibling(name, len(data), hashlib.sha256(data).hexdigest(), git_blob_sha(data)))
        if name.endswith(".safetensors"):
            for k, v in safetensors_parameters(data).items():
                params[k] = params.get(k, 0) + v
    for name, size in sorted(model.listed.items()):
        # Listed only (a checkpoint too big to serve): made-up hashes, the real size.
        siblings.append(_sibling(name, size, hashlib.sha256(name.encode()).hexdigest(), git_blob_sha(b"")))
    if "undersized" in model.quirks:
        for sib in siblings:
            if "lfs" in sib:
                sib["size"] = sib["lfs"]["size"] = max(1, sib["size"] // 10)
    if model.parameters:
        # The size the repository states: a stand-in checkpoint may serve tiny weights for a big model.
        params = {model.dtype: model.parameters}
    digest = hashlib.sha1(model.id.encode())
    for s in siblings:
        digest.update(json.dumps(s, sort_keys=True).encode())
    return Repo(model, blobs, siblings, digest.hexdigest(), params)


def list_item(r: Repo) -> dict[str, Any]:
    m = r.model
    return {
        "id": m.id,
        "author": m.author,
        "downloads": m.downloads,
        "likes": m.likes,
        "pipeline_tag": m.pipeline_tag,
        "gated": m.gated,
        "numParameters": r.total_params,
        "lastModified": m.last_modified,
        "private": False,
        "isLikedByUser": False,
    }


def tags(m: MirrorModel) -> list[str]:
    tags = list(m.tags)
    if m.library_name:
        tags.insert(0, m.library_name)
    if m.license:
        tags.append(f"license:{m.license}")
    if m.base_model:
        tags.append(f"base_model:{m.base_model}")
    tags += [lang for lang in m.languages if lang not in tags]  # the hub tags a card's languages
    return tags


def card_data(m: MirrorModel) -> dict[str, Any]:
    card = {
        "license": m.license,
        "base_model": m.base_model,
        "language": list(m.languages),
        "datasets": list(m.datasets),
        "model-index": m.model_index,
    }
    return {k: v for k, v in card.items() if v}
