"""Fetch a candidate's weights and vet them before anything is loaded.

:meth:`WeightFetcher.fetch` returns a :class:`FetchResult` (status ok | refused | error); it never raises
for what a remote repository contains or how its server behaves. Steps:

1. A checkpoint already under one of ``local_dirs`` (``<dir>/<org>/<name>``) is used as it is.
2. Otherwise the file list comes from ``<hub>/api/models/<id>/revision/<rev>`` (names, sizes, LFS sha256,
   the commit sha). Refused: repos without safetensors weights (pickle checkpoints execute code when
   loaded; they are never fetched), repos whose files to fetch exceed ``max_download_mb``.
3. ``config.json`` is fetched first and vetted: no ``auto_map`` (remote code is never trusted), a
   ``…ForSequenceClassification`` architecture, exactly one label (a scalar score).
4. The rest is fetched — with huggingface_hub (``hf_hub_download(endpoint=<hub>)``) or our own HTTP GETs
   of the same ``/resolve/`` URLs — into ``<models_dir>/<org>__<name>/<sha[:12]>/``, and every file is
   checked against the listed size and, for LFS files, sha256. A completed fetch is reused.

huggingface_hub refuses every request while ``HF_HUB_OFFLINE`` is set (the Makefile sets it for the whole
test run), so ``backend="auto"`` uses HTTP then, and says so in the result.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import re
import shutil
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rlar.retrieval.adapters.hub import HubAdapter
from rlar.retrieval.config import FetchConfig

log = logging.getLogger("rlar.retrieval.deploy")

# Files a sequence-classification checkpoint needs (weights + config + tokenizer); nothing else is fetched.
_WANTED = re.compile(
    r"^(config\.json|model(-\d{5}-of-\d{5})?\.safetensors|model\.safetensors\.index\.json|"
    r"tokenizer\.json|tokenizer_config\.json|special_tokens_map\.json|added_tokens\.json|"
    r"vocab\.(json|txt)|merges\.txt|spiece\.model|sentencepiece\.bpe\.model|tokenizer\.model|"
    r"chat_template\.(jinja|json)|generation_config\.json)$"
)
_PICKLE = (".bin", ".pt", ".pth", ".pkl", ".ckpt")
USER_AGENT = "rlar-retriever/0.1"


@dataclass(slots=True)
class FetchResult:
    status: str  # ok | refused | error
    reason: str = ""
    path: str = ""
    revision: str = ""
    backend: str = ""
    files: list[dict[str, Any]] = field(default_factory=list)
    bytes: int = 0
    seconds: float = 0.0
    config: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        cfg = d.pop("config")
        d["config"] = {
            k: cfg.get(k) for k in ("architectures", "model_type", "num_labels", "id2label") if k in cfg
        }
        return d


class Refused(Exception):
    """A repository we will not load (reason in the message)."""


def vet_config(config: dict[str, Any]) -> None:
    """Raise :class:`Refused` unless ``config`` is a one-label sequence classifier without remote code."""
    if "auto_map" in config:
        raise Refused("config.json has auto_map: the model needs trust_remote_code, which is never granted")
    archs = [str(a) for a in config.get("architectures") or []]
    if not archs:
        raise Refused("config.json names no architecture")
    bad = [a for a in archs if not a.endswith("ForSequenceClassification")]
    if bad:
        raise Refused(f"not a sequence-classification head: {', '.join(bad)}")
    id2label = config.get("id2label")
    # transformers' default is two labels when neither field is present.
    n = len(id2label) if isinstance(id2label, dict) else int(config.get("num_labels", 2))
    if n != 1:
        names = ", ".join(str(v) for v in (id2label or {}).values())
        raise Refused(f"not a scalar head: {n} labels" + (f" ({names})" if names else ""))


def choose_files(siblings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The siblings to fetch; raises :class:`Refused` for pickle-only repos and repos without weights."""
    names = [str(s.get("rfilename", "")) for s in siblings]
    if not any(n.endswith(".safetensors") for n in names):
        pickles = [n for n in names if n.endswith(_PICKLE)]
        if pickles:
            raise Refused(
                f"no safetensors weights, only pickle files ({', '.join(pickles[:3])}): never loaded"
            )
        raise Refused("no weight files in the repository")
    chosen = [s for s in siblings if _WANTED.match(str(s.get("rfilename", "")))]
    if not any(str(s["rfilename"]) == "config.json" for s in chosen):
        raise Refused("no config.json in the repository")
    return chosen


class WeightFetcher:
    """Fetches and vets checkpoints (see the module docstring)."""

    def __init__(self, cfg: FetchConfig, hub: HubAdapter, models_dir: Path) -> None:
        self.cfg = cfg
        self.hub = hub
        self.models_dir = Path(models_dir)

    async def fetch(self, model_id: str) -> FetchResult:
        """Blocking I/O runs in a worker thread; see the module docstring for the steps."""
        t0 = time.monotonic()
        try:
            res = await asyncio.to_thread(self._fetch, model_id)
        except Refused as exc:
            res = FetchResult("refused", str(exc))
        except (OSError, ValueError, urllib.error.URLError) as exc:
            res = FetchResult("error", f"{type(exc).__name__}: {exc}"[:500])
        res.seconds = round(time.monotonic() - t0, 3)
        return res

    # -- internals ----------------------------------------------------------------------------------
    def _backend(self, notes: list[str]) -> str:
        if self.cfg.backend == "http":
            return "http"
        from huggingface_hub import constants

        if constants.is_offline_mode():
            if self.cfg.backend == "hf_hub":
                raise Refused(
                    "fetch.backend = hf_hub but HF_HUB_OFFLINE is set: huggingface_hub refuses requests"
                )
            notes.append("HF_HUB_OFFLINE is set: huggingface_hub refuses requests, fetched over HTTP instead")
            return "http"
        return "hf_hub"

    def _get_json(self, url: str) -> Any:
        req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept": "application/json"})
        with urllib.request.urlopen(req, timeout=self.cfg.timeout_s) as resp:
            return json.loads(resp.read())

    def _local(self, model_id: str) -> Path | None:
        for d in self.cfg.local_dirs:
            p = Path(d) / model_id
            if (p / "config.json").is_file():
                return p
        return None

    def _fetch(self, model_id: str) -> FetchResult:
        notes: list[str] = []
        local = self._local(model_id)
        if local is not None:
            config = json.loads((local / "config.json").read_text())
            vet_config(config)
            names = [p.name for p in local.iterdir() if p.is_file()]
            if not any(n.endswith(".safetensors") for n in names):
                raise Refused("local checkpoint has no safetensors weights")
            files: list[dict[str, Any]] = [
                {"name": n, "size": (local / n).stat().st_size} for n in sorted(names)
            ]
            return FetchResult(
                "ok", "", str(local), "local", "local", files, sum(f["size"] for f in files), config=config
            )
        try:
            info = self._get_json(self.hub.api_model_url(model_id, self.cfg.revision))
        except urllib.error.HTTPError as exc:
            if exc.code != 404:
                raise
            info = self._get_json(self.hub.api_model_url(model_id))  # mirrors without /revision/
        sha = str(info.get("sha") or "")
        if not re.fullmatch(r"[0-9a-f]{40}", sha):
            raise Refused(f"the API gives no commit sha for {model_id} (got {sha!r})")
        chosen = choose_files(list(info.get("siblings") or []))
        total = sum(int(s.get("size") or 0) for s in chosen)
        if total > self.cfg.max_download_mb * 1e6:
            raise Refused(f"files to fetch add up to {total / 1e6:.0f} MB > {self.cfg.max_download_mb:g} MB")
        dest = self.models_dir / model_id.replace("/", "__") / sha[:12]
        done = dest / ".rlar-fetched.json"
        if done.is_file():
            meta = json.loads(done.read_text())
            config = json.loads((dest / "config.json").read_text())
            vet_config(config)
            notes.append("reused a completed fetch of the same commit")
            return FetchResult(
                "ok",
                "",
                str(dest),
                sha,
                meta["backend"],
                meta["files"],
                meta["bytes"],
                config=config,
                notes=notes,
            )
        backend = self._backend(notes)
        # A private staging directory: other retrievals (threads or replicas) may fetch the same commit.
        staging = dest.with_name(f"{dest.name}.partial-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        staging.mkdir(parents=True)
        by_name = {str(s["rfilename"]): s for s in chosen}
        try:
            # config.json first: a repo we would refuse costs one small file, not its weights.
            self._get_file(model_id, sha, "config.json", staging, backend, by_name["config.json"])
            config = json.loads((staging / "config.json").read_text())
            vet_config(config)
            files = [self._file_record(staging, by_name["config.json"])]
            for name in sorted(by_name):
                if name == "config.json":
                    continue
                self._get_file(model_id, sha, name, staging, backend, by_name[name])
                files.append(self._file_record(staging, by_name[name]))
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        size = sum(f["size"] for f in files)
        (staging / ".rlar-fetched.json").write_text(
            json.dumps({"backend": backend, "files": files, "bytes": size, "revision": sha})
        )
        try:
            staging.rename(dest)
        except OSError:
            if not done.is_file():
                raise
            # Another fetch of the same commit finished first: keep its copy.
            shutil.rmtree(staging, ignore_errors=True)
            notes.append("a concurrent fetch of the same commit finished first; using its copy")
        return FetchResult("ok", "", str(dest), sha, backend, files, size, config=config, notes=notes)

    def _file_record(self, staging: Path, sib: dict[str, Any]) -> dict[str, Any]:
        p = staging / str(sib["rfilename"])
        return {"name": str(sib["rfilename"]), "size": p.stat().st_size, "sha256": _sha256(p)}

    def _get_file(
        self, model_id: str, sha: str, name: str, staging: Path, backend: str, sib: dict[str, Any]
    ) -> None:
        target = staging / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if backend == "hf_hub":
            from huggingface_hub import hf_hub_download

            try:
                got = hf_hub_download(
                    repo_id=model_id,
                    filename=name,
                    revision=sha,
                    endpoint=self.hub.base_url,
                    local_dir=str(staging),
                    etag_timeout=self.cfg.timeout_s,
                )
            except Exception as exc:  # the remote side's failure, in huggingface_hub's many error types
                raise OSError(f"huggingface_hub could not fetch {name}: {type(exc).__name__}: {exc}") from exc
            if Path(got).resolve() != target.resolve():
                shutil.copyfile(got, target)
        else:
            url = self.hub.resolve_url(model_id, name, sha)
            req = urllib.request.Request(
                url, headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
            )
            tmp = target.with_name(target.name + ".incomplete")
            with urllib.request.urlopen(req, timeout=self.cfg.timeout_s) as resp, tmp.open("wb") as out:
                commit = resp.headers.get("X-Repo-Commit")
                if commit and commit != sha:
                    raise Refused(f"{name}: served from commit {commit}, expected {sha}")
                shutil.copyfileobj(resp, out, length=1 << 20)
            tmp.replace(target)
        size = target.stat().st_size
        want = sib.get("size")
        if want is not None and int(want) != size:
            raise Refused(f"{name}: {size} bytes received, the API lists {want}")
        lfs = sib.get("lfs") or {}
        if lfs.get("sha256") and _sha256(target) != lfs["sha256"]:
            raise Refused(f"{name}: sha256 does not match the API's LFS pointer")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
