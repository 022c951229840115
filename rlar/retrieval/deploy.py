"""Fetch a candidate's weights and vet them before anything is loaded.

:meth:`WeightFetcher.fetch` returns a :class:`FetchResult` (status ok | refused | error | unreachable); it
never raises for what a remote repository contains or how its server behaves. Steps:

1. A checkpoint already under one of ``local_dirs`` (``<dir>/<org>/<name>``) is used as it is.
2. The file list, sizes and LFS sha256 come from the model info with ``blobs=true`` (then the file tree
   for what it lacks; :mod:`rlar.retrieval.hub_api`), with the commit sha everything is pinned to.
   Refused: repos without safetensors weights (pickle checkpoints execute code when loaded; never
   fetched), repos the hub denies to an anonymous client (401/403: unknown, gated, private).
3. Every file to fetch is asked for with a HEAD first (``X-Linked-Size`` / ``Content-Length``,
   ``X-Linked-Etag``, ``X-Repo-Commit``). Refused before any GET: sizes or hashes that disagree between the
   API and the file server, a total over ``max_download_mb``, weights whose sha256 nobody states (with
   ``require_sha256``). The plan (per file: size and sha256, and where each came from) is recorded.
4. ``config.json`` is fetched first and vetted: no ``auto_map`` (remote code is never trusted), a
   ``…ForSequenceClassification`` architecture, one score: exactly one label, or two labels of a
   safe/unsafe (non-toxic/toxic) classifier, whose good label's probability is then the score.
5. The rest is fetched into ``<models_dir>/<org>__<name>/<sha[:12]>/``, streamed: a file is stopped as
   soon as it runs past its announced size or the cap's remainder (a file of unknown size gets what is
   left of the cap), and checked against its size and sha256. A completed fetch is reused.

Errors name the file and the status (``model.safetensors: HTTP 401 GatedRepo … (url)``); no answer at all
is ``unreachable``.
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
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from huggingface_hub import constants, hf_hub_download

from rlar.retrieval.config import FetchConfig
from rlar.retrieval.hub_api import BadFile, HubClient, HubError, HubStatusError, HubUnreachable, OverCap

log = logging.getLogger("rlar.retrieval.deploy")
# Files a sequence-classification checkpoint needs (weights + config + tokenizer); nothing else is fetched.
_WANTED = re.compile(
    r"^(config\.json|model(-\d{5}-of-\d{5})?\.safetensors|model\.safetensors\.index\.json|"
    r"tokenizer\.json|tokenizer_config\.json|special_tokens_map\.json|added_tokens\.json|"
    r"vocab\.(json|txt)|merges\.txt|spiece\.model|sentencepiece\.bpe\.model|tokenizer\.model|"
    r"chat_template\.(jinja|json)|generation_config\.json)$"
)
_PICKLE = (".bin", ".pt", ".pth", ".pkl", ".ckpt")
_WEIGHTS = (".safetensors",)
_COMMIT = re.compile(r"[0-9a-f]{40}")


@dataclass(slots=True)
class FetchResult:
    status: str  # ok | refused | error | unreachable
    reason: str = ""
    path: str = ""
    revision: str = ""
    backend: str = ""
    files: list[dict[str, Any]] = field(default_factory=list)
    bytes: int = 0
    seconds: float = 0.0
    config: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    planned: list[dict[str, Any]] = field(default_factory=list)
    """Per file to fetch: name, size, size_source, sha256, sha_source (api | tree | head | "")."""

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


# Label names of the good class of a two-label safety/toxicity classifier, and of its bad class.
_GOOD_LABELS = frozenset(
    {
        "safe",
        "benign",
        "harmless",
        "non-toxic",
        "non_toxic",
        "not_toxic",
        "nontoxic",
        "not toxic",
        "non toxic",
        "acceptable",
        "ok",
    }
)
_BAD_LABELS = frozenset(
    {
        "unsafe",
        "harmful",
        "toxic",
        "not_safe",
        "not safe",
        "unacceptable",
        "offensive",
        "hate",
        "jailbreak",
        "injection",
    }
)


def vet_config(config: dict[str, Any]) -> int:
    """Raise :class:`Refused` unless ``config`` is a sequence classifier without remote code whose output is
    one score: a single label, or two labels of which one names the good class of a safety/toxicity
    classifier (``safe``/``unsafe``, ``non-toxic``/``toxic``, …). Returns the index of the label that
    scores: 0 for a single label, the good label's for a two-label classifier (its probability is the
    reward)."""
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
    if n == 1:
        return 0
    if n == 2 and isinstance(id2label, dict):
        names = {int(k): str(v).strip().lower() for k, v in id2label.items()}
        good = [i for i, v in names.items() if v in _GOOD_LABELS]
        if len(good) == 1 and any(v in _BAD_LABELS for i, v in names.items() if i != good[0]):
            return good[0]
    names_s = ", ".join(str(v) for v in (id2label or {}).values())
    raise Refused(
        f"not a scalar head: {n} labels"
        + (f" ({names_s})" if names_s else "")
        + ("" if n != 2 else "; two labels score only as a safe/unsafe (non-toxic/toxic) classifier")
    )


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

    def __init__(self, cfg: FetchConfig, hub_url: str, models_dir: Path) -> None:
        self.cfg = cfg
        self.client = HubClient(hub_url, timeout_s=cfg.timeout_s, connect_timeout_s=cfg.connect_timeout_s)
        self.models_dir = Path(models_dir)

    @property
    def cap_bytes(self) -> int:
        return int(self.cfg.max_download_mb * 1e6)

    async def fetch(self, model_id: str) -> FetchResult:
        """Blocking I/O runs in a worker thread; see the module docstring for the steps."""
        t0 = time.monotonic()
        res = FetchResult("error")
        try:
            await asyncio.to_thread(self._fetch, model_id, res)
        except (Refused, OverCap, BadFile) as exc:
            res.status, res.reason = "refused", str(exc)
        except HubStatusError as exc:
            res.status = "refused" if exc.access_denied else "error"
            res.reason = str(exc) + (" — no access for an anonymous client" if exc.access_denied else "")
        except HubUnreachable as exc:
            res.status, res.reason = "unreachable", str(exc)
        except (HubError, OSError, ValueError) as exc:
            res.status, res.reason = "error", f"{type(exc).__name__}: {exc}"[:500]
        res.seconds = round(time.monotonic() - t0, 3)
        return res

    # -- internals ----------------------------------------------------------------------------------
    def _backend(self) -> str:
        if self.cfg.backend in ("auto", "http"):
            return "http"

        if constants.is_offline_mode():
            raise Refused(
                "fetch.backend = hf_hub but HF_HUB_OFFLINE is set: huggingface_hub refuses requests"
            )
        return "hf_hub"

    def _local(self, model_id: str) -> Path | None:
        for d in self.cfg.local_dirs:
            p = Path(d) / model_id
            if (p / "config.json").is_file():
                return p
        return None

    def _fetch(self, model_id: str, res: FetchResult) -> None:
        local = self._local(model_id)
        if local is not None:
            config = json.loads((local / "config.json").read_text())
            vet_config(config)
            names = [p.name for p in local.iterdir() if p.is_file()]
            if not any(n.endswith(_WEIGHTS) for n in names):
                raise Refused("local checkpoint has no safetensors weights")
            res.files = [{"name": n, "size": (local / n).stat().st_size} for n in sorted(names)]
            res.status, res.path, res.revision, res.backend = "ok", str(local), "local", "local"
            res.bytes, res.config = sum(f["size"] for f in res.files), config
            return
        info = self.client.model_info(model_id, self.cfg.revision)
        api_sha = str(info.get("sha") or "")
        chosen = choose_files(list(info.get("siblings") or []))
        plan, rev = self._plan(model_id, api_sha if _COMMIT.fullmatch(api_sha) else None, chosen, res)
        sha = res.revision
        dest = self.models_dir / model_id.replace("/", "__") / sha[:12]
        done = dest / ".rlar-fetched.json"
        if done.is_file():
            meta = json.loads(done.read_text())
            res.config = json.loads((dest / "config.json").read_text())
            vet_config(res.config)
            res.notes.append("reused a completed fetch of the same commit")
            res.status, res.path, res.backend = "ok", str(dest), meta["backend"]
            res.files, res.bytes = meta["files"], meta["bytes"]
            return
        backend = self._backend()
        res.backend = backend
        # A private staging directory: other retrievals (threads or replicas) may fetch the same commit.
        staging = dest.with_name(f"{dest.name}.partial-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        staging.mkdir(parents=True)
        try:
            # config.json first: a repo we would refuse costs one small file, not its weights.
            order = ["config.json", *sorted(n for n in plan if n != "config.json")]
            for name in order:
                res.files.append(self._get_file(model_id, rev, sha, plan, name, staging, backend, res.files))
                if name == "config.json":
                    res.config = json.loads((staging / "config.json").read_text())
                    vet_config(res.config)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        res.bytes = sum(f["size"] for f in res.files)
        (staging / ".rlar-fetched.json").write_text(
            json.dumps({"backend": backend, "files": res.files, "bytes": res.bytes, "revision": sha})
        )
        try:
            staging.rename(dest)
        except OSError:
            if not done.is_file():
                raise
            # Another fetch of the same commit finished first: keep its copy.
            shutil.rmtree(staging, ignore_errors=True)
            res.notes.append("a concurrent fetch of the same commit finished first; using its copy")
        res.status, res.path = "ok", str(dest)

    def _plan(
        self, model_id: str, sha: str | None, chosen: list[dict[str, Any]], res: FetchResult
    ) -> tuple[dict[str, dict[str, Any]], str]:
        """Size and sha256 of every file to fetch, from the API, the tree and a HEAD of each file, and the
        revision to resolve files at; refuses what cannot be fetched within the cap or checked (see the
        module docstring). Sets ``res.revision`` to the commit sha everything is pinned to."""
        plan: dict[str, dict[str, Any]] = {}
        for s in chosen:
            lfs: dict[str, Any] = s["lfs"] if isinstance(s.get("lfs"), dict) else {}
            size = s.get("size", lfs.get("size"))
            sha256 = lfs.get("sha256")
            plan[str(s["rfilename"])] = {
                "name": str(s["rfilename"]),
                "size": int(size) if isinstance(size, int) else None,
                "size_source": "api" if isinstance(size, int) else "",
                "sha256": str(sha256).lower() if sha256 else None,
                "sha_source": "api" if sha256 else "",
            }
        res.planned = list(plan.values())  # the same dicts, completed below: recorded even on refusal
        notes = res.notes
        if any(p["size"] is None for p in plan.values()):
            notes.append(
                "the model info lists no size for some files (no blobs=true support?); read the tree"
            )
            self._from_tree(model_id, sha or self.cfg.revision, plan)
        self._check_cap(plan)  # sizes the API states already over the cap: no HEAD needed
        sha, rev = self._from_heads(model_id, sha, plan, notes)
        self._check_cap(plan)
        unknown = [n for n, p in plan.items() if p["size"] is None]
        if unknown:
            notes.append(
                f"size unknown before download (no size in the API, the tree or HEAD): {', '.join(unknown)}; "
                f"capped while streaming at what is left of {_mb(self.cap_bytes)}"
            )
        if sha is None:
            raise Refused(f"no commit sha for {model_id}: neither the API nor X-Repo-Commit names one")
        res.revision = sha
        unchecked = [n for n, p in plan.items() if n.endswith(_WEIGHTS) and not p["sha256"]]
        if unchecked and self.cfg.require_sha256:
            raise Refused(
                f"no sha256 stated for {', '.join(unchecked)} (no lfs.sha256 in the API or tree, no "
                "X-Linked-Etag): its bytes cannot be checked (fetch.require_sha256)"
            )
        return plan, rev

    def _from_tree(self, model_id: str, rev: str, plan: dict[str, dict[str, Any]]) -> None:
        """Sizes and LFS oids the plan lacks, from the file tree (``[]`` where the site has none)."""
        for e in self.client.tree(model_id, rev):
            p = plan.get(str(e.get("path")))
            if p is None:
                continue
            lfs = e["lfs"] if isinstance(e.get("lfs"), dict) else {}
            if p["size"] is None and isinstance(e.get("size"), int):
                p["size"], p["size_source"] = e["size"], "tree"
            oid = str(lfs.get("oid") or lfs.get("sha256") or "").lower()
            if p["sha256"] is None and re.fullmatch(r"[0-9a-f]{64}", oid):
                p["sha256"], p["sha_source"] = oid, "tree"

    def _from_heads(
        self, model_id: str, sha: str | None, plan: dict[str, dict[str, Any]], notes: list[str]
    ) -> tuple[str | None, str]:
        """HEAD every file (config.json first): sizes, sha256 and the commit, cross-checked with what the API
        said. Returns (the commit sha, the revision files resolve at)."""
        rev = sha or self.cfg.revision
        for name, p in sorted(plan.items(), key=lambda kv: kv[0] != "config.json"):
            try:
                meta = self.client.head(model_id, name, rev)
            except HubStatusError as exc:
                if exc.status in (405, 501):
                    notes.append(
                        f"the file server answers HEAD with {exc.status}: sizes from the API only, "
                        "capped while streaming"
                    )
                    break
                if exc.status != 404 or exc.code == "EntryNotFound" or rev == self.cfg.revision:
                    raise
                notes.append(
                    f"the file server does not resolve commit ids ({rev[:12]}…): files fetched "
                    f"from {self.cfg.revision!r}, checked against X-Repo-Commit"
                )
                rev = self.cfg.revision  # a server that resolves branch names only
                meta = self.client.head(model_id, name, rev)
            if meta.commit and _COMMIT.fullmatch(meta.commit):
                if sha is None:
                    sha = meta.commit
                elif meta.commit != sha:
                    raise Refused(f"{name}: the file server resolves commit {meta.commit}, the API {sha}")
            if meta.size is not None:
                if p["size"] is not None and p["size"] != meta.size:
                    raise Refused(
                        f"{name}: the API lists {p['size']:,} bytes, the file server ({meta.size_source}) "
                        f"{meta.size:,}"
                    )
                if p["size"] is None:
                    p["size"], p["size_source"] = meta.size, f"head:{meta.size_source}"
            if meta.sha256:
                if p["sha256"] is not None and p["sha256"] != meta.sha256:
                    raise Refused(f"{name}: the API's sha256 differs from the file server's X-Linked-Etag")
                if p["sha256"] is None:
                    p["sha256"], p["sha_source"] = meta.sha256, "head"
        return sha, rev

    def _check_cap(self, plan: dict[str, dict[str, Any]]) -> None:
        known = sum(p["size"] for p in plan.values() if p["size"] is not None)
        if known > self.cap_bytes:
            biggest = max(plan.values(), key=lambda p: p["size"] or 0)
            raise Refused(
                f"files to fetch add up to {_mb(known)} > the cap of {_mb(self.cap_bytes)} "
                f"(largest: {biggest['name']}, {_mb(biggest['size'])}); nothing downloaded"
            )

    def _get_file(
        self,
        model_id: str,
        rev: str,
        sha: str,
        plan: dict[str, dict[str, Any]],
        name: str,
        staging: Path,
        backend: str,
        done: list[dict[str, Any]],
    ) -> dict[str, Any]:
        p = plan[name]
        target = staging / name
        target.parent.mkdir(parents=True, exist_ok=True)
        got = sum(f["size"] for f in done)
        reserved = sum(
            q["size"] or 0 for n, q in plan.items() if n != name and n not in {f["name"] for f in done}
        )
        allowance = self.cap_bytes - got - reserved
        if p["size"] is not None and p["size"] > allowance:
            raise OverCap(f"{name}: {_mb(p['size'])} would exceed the cap of {_mb(self.cap_bytes)}")
        if backend == "hf_hub":
            size, digest = self._hf_hub_file(model_id, rev, p, staging, target)
        else:
            size, digest = self.client.download(
                model_id,
                name,
                rev,
                target,
                max_bytes=max(0, allowance),
                expect_size=p["size"],
                expect_sha256=p["sha256"],
                expect_commit=sha,
                deadline_s=self.cfg.file_deadline_s,
            )
        return {
            "name": name,
            "size": size,
            "sha256": digest,
            "size_source": p["size_source"],
            "sha_source": p["sha_source"],
        }

    def _hf_hub_file(
        self, model_id: str, sha: str, p: dict[str, Any], staging: Path, target: Path
    ) -> tuple[int, str]:
        """huggingface_hub's download, then the same size and sha256 checks (it cannot stop at the cap, so
        a file of unknown size is refused)."""

        name = p["name"]
        if p["size"] is None:
            raise Refused(f"{name}: size unknown, and the hf_hub backend cannot stop a download at the cap")
        try:
            got = hf_hub_download(
                repo_id=model_id,
                filename=name,
                revision=sha,
                endpoint=self.client.base_url,
                local_dir=str(staging),
                etag_timeout=self.cfg.timeout_s,
            )
        except Exception as exc:  # the remote side's failure, in huggingface_hub's many error types
            raise HubStatusError(
                name, self.client.resolve_url(model_id, name, sha), 0, type(exc).__name__, str(exc)
            ) from exc
        if Path(got).resolve() != target.resolve():
            shutil.copyfile(got, target)
        size, digest = target.stat().st_size, _sha256(target)
        if size != p["size"]:
            raise BadFile(f"{name}: {size:,} bytes received, {p['size']:,} announced")
        if p["sha256"] and digest != p["sha256"]:
            raise BadFile(f"{name}: sha256 differs from the announced one")
        return size, digest


def _mb(n: int | None) -> str:
    if n is None:
        return "? MB"
    return f"{n / 1e6:,.1f} MB" if n >= 1e6 else f"{n / 1e3:,.1f} kB"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
