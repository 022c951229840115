"""A small offline stand-in for the model hub, for tests and the demo: pages, API and files on 127.0.0.1.

:class:`MirrorSite` serves, in the shapes of the real hub (/work/shared/HUB.md, huggingface_hub's client):

- ``/models?search=&pipeline_tag=&sort=&p=`` — a search page: ``ModelList`` data-props plus
  ``article.overview-card-wrapper`` result cards (all whitespace-separated terms must occur in the id,
  case-insensitively, as on the hub); ``/models-json`` the same items as JSON;
- ``/{org}/{name}`` — a model page: ``ModelHeader`` and ``ModelSafetensorsParams`` data-props, h1, tag chips,
  licence chip, tabs, the card in ``div.model-card-content``, a sidebar with downloads and model size;
  ``/{org}/{name}/tree/main`` — the files page (``ViewerIndexTreeList``);
- ``/api/models`` and ``/api/models/{id}[/revision/{rev}]`` — the API. As on the hub, ``siblings`` carry
  only ``rfilename`` unless the request says ``?blobs=true``; then each has ``size`` and ``blobId`` (the
  git blob id) and LFS files an ``lfs`` object with their ``sha256``. ``/api/models/{id}/tree/{rev}`` lists
  ``{type, path, size, oid, lfs: {oid, size}}``. Unknown repos answer 401 ``RepoNotFound`` (what an
  anonymous client gets), unknown revisions 404 ``RevisionNotFound``;
- ``/{id}/resolve/{rev}/{file}`` — files, GET and HEAD. A plain file answers 200 with ``ETag`` (its git
  blob id), ``Content-Length`` and ``X-Repo-Commit``; an LFS file answers ``302`` to its CDN (another
  origin: ``cdn_url``, ``/lfs-cdn/{id}/<sha256>``) with ``X-Linked-Size``, ``X-Linked-Etag`` (its sha256) and
  ``X-Repo-Commit``, as the hub does. Unknown and gated repos answer 401 (``RepoNotFound`` /
  ``GatedRepo``) to an anonymous client;
- ``/spaces/{org}/{name}`` — a leaderboard page: an HTML table of models and scores.

Per-model ``behaviour`` makes the failures a retriever must survive: ``404`` (listed, but the page is
gone), ``hang`` (the page starts and never finishes loading), ``missing_fields`` (no embedded props, no
licence, no sizes — on the page or in the API), ``dom_only`` (no embedded props; the markup has it all).
Per-model ``quirks`` make file servers that tell less than the hub: ``no_api_sizes`` (the API and the tree
give no sizes or LFS objects, even with ``blobs=true``), ``no_length_headers`` (HEAD and GET give no
size header; the body ends when the connection closes), ``no_hashes`` (no LFS sha256 anywhere: no ``lfs``
object, no ``X-Linked-Etag``, a weak ``ETag``), ``undersized`` (the API and headers announce a tenth of
the real size of each weight file), ``no_head`` (HEAD answers 405) and ``branch_only`` (no
``/revision/`` API route, no ``sha`` in the model info, files resolve at ``main`` only).

The demo site's catalogue and leaderboard are in :mod:`rlar.testing.hub.catalogue`, the checkpoints it
serves in :mod:`rlar.testing.hub.models`. Only ever bind to loopback.
"""

from __future__ import annotations

import hashlib
import html
import json
import logging
import re
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

log = logging.getLogger("rlar.testing.hub.mirror")

LFS_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".h5", ".onnx", ".msgpack")
PAGE_SIZE = 30
QUIRKS = ("no_api_sizes", "no_length_headers", "no_hashes", "undersized", "no_head", "branch_only")


@dataclass
class MirrorModel:
    """One repository of the mirror. ``files`` maps a repo path to a local file or to bytes; ``listed``
    adds files the API lists (with a size) that cannot be downloaded (e.g. a 70B checkpoint)."""

    id: str
    pipeline_tag: str | None = "text-classification"
    library_name: str | None = "transformers"
    license: str | None = "apache-2.0"
    base_model: str | None = None
    parameters: int | None = None  # computed from safetensors files when None
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
class _Repo:
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


def _git_blob_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _sibling(name: str, size: int, sha256: str, blob_id: str) -> dict[str, Any]:
    """A sibling as ``/api/models/{id}?blobs=true`` lists it (LFS files with their pointer's blob id)."""
    if not name.endswith(LFS_SUFFIXES):
        return {"rfilename": name, "blobId": blob_id, "size": size}
    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()
    return {
        "rfilename": name,
        "blobId": _git_blob_sha(pointer),
        "size": size,
        "lfs": {"sha256": sha256, "size": size, "pointerSize": len(pointer)},
    }


def _prepare(model: MirrorModel) -> _Repo:
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
        siblings.append(_sibling(name, len(data), hashlib.sha256(data).hexdigest(), _git_blob_sha(data)))
        if name.endswith(".safetensors"):
            for k, v in safetensors_parameters(data).items():
                params[k] = params.get(k, 0) + v
    for name, size in sorted(model.listed.items()):
        # Listed only (a checkpoint too big to serve): made-up hashes, the real size.
        siblings.append(_sibling(name, size, hashlib.sha256(name.encode()).hexdigest(), _git_blob_sha(b"")))
    if "undersized" in model.quirks:
        for sib in siblings:
            if "lfs" in sib:
                sib["size"] = sib["lfs"]["size"] = max(1, sib["size"] // 10)
    if not params and model.parameters:
        params = {model.dtype: model.parameters}
    digest = hashlib.sha1(model.id.encode())
    for s in siblings:
        digest.update(json.dumps(s, sort_keys=True).encode())
    return _Repo(model, blobs, siblings, digest.hexdigest(), params)


def _fmt_count(n: int | None) -> str:
    if n is None:
        return "?"
    for div, suf in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            return f"{n / div:.1f}{suf}"
    return str(n)


def _attr_json(obj: Any) -> str:
    return html.escape(json.dumps(obj, separators=(",", ":")), quote=True)


def markdown_to_html(md: str) -> str:
    """A tiny Markdown subset (headings, tables, bullet lists, paragraphs) for mirror cards."""
    out: list[str] = []
    lines = md.strip("\n").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if not line.strip():
            i += 1
            continue
        if line.startswith("#"):
            level = min(6, len(line) - len(line.lstrip("#")))
            out.append(f"<h{level}>{html.escape(line.lstrip('#').strip())}</h{level}>")
            i += 1
        elif line.lstrip().startswith("|"):
            rows: list[list[str]] = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
                if not all(re.fullmatch(r":?-{2,}:?", c) for c in cells):
                    rows.append(cells)
                i += 1
            head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0]) if rows else ""
            body = "".join(
                "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows[1:]
            )
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        elif line.lstrip().startswith("- "):
            items = []
            while i < len(lines) and lines[i].lstrip().startswith("- "):
                items.append(f"<li>{html.escape(lines[i].lstrip()[2:])}</li>")
                i += 1
            out.append("<ul>" + "".join(items) + "</ul>")
        else:
            para = []
            while i < len(lines) and lines[i].strip() and not lines[i].lstrip().startswith(("#", "|", "- ")):
                para.append(lines[i].strip())
                i += 1
            out.append(f"<p>{html.escape(' '.join(para))}</p>")
    return "\n".join(out)


_STYLE = """<style>body{font-family:sans-serif;margin:0}header.top{padding:8px 16px;border-bottom:1px solid #ddd}
main{padding:16px}.tag{display:inline-block;border:1px solid #ccc;border-radius:8px;padding:2px 8px;margin:2px}
article.overview-card-wrapper{border:1px solid #eee;border-radius:8px;padding:8px;margin:6px 0;max-width:720px}
.grid{display:grid;grid-template-columns:2fr 1fr;gap:24px}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:3px 8px}h4{margin:0}.text-gray-400{color:#999}</style>"""


def _page(title: str, body: str) -> bytes:
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>{_STYLE}"
        f"</head><body><header class='top'><a href='/'>Mirror Hub</a> "
        f"<input type='text' placeholder='Search models, datasets, users...'></header>"
        f"<main class='flex flex-1 flex-col'>{body}</main></body></html>"
    ).encode()


class MirrorSite:
    """The mirror's HTTP server (threads), on 127.0.0.1 and a free port unless told otherwise."""

    def __init__(
        self,
        models: list[MirrorModel],
        *,
        leaderboards: dict[str, list[dict[str, Any]]] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        hang_s: float = 600.0,
    ) -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("the mirror only binds to loopback")
        self.repos = {m.id.lower(): _prepare(m) for m in models}
        self.leaderboards = leaderboards or {}
        self.host = host
        self.port = port
        self.hang_s = hang_s
        self.requests: list[tuple[float, str, str, str]] = []  # (time, method, path, user agent)
        self.cdn_port = 0
        self._stop = threading.Event()
        self._servers: list[tuple[ThreadingHTTPServer, threading.Thread]] = []

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def cdn_url(self) -> str:
        """The LFS file server: another origin (port), as the hub's CDN is another host."""
        return f"http://{self.host}:{self.cdn_port}"

    def leaderboard_url(self, name: str) -> str:
        return f"{self.url}/spaces/{name}"

    def start(self) -> MirrorSite:
        site = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "MirrorHub/1.0"

            def log_message(self, fmt: str, *args: Any) -> None:
                log.debug("mirror: " + fmt, *args)

            def do_GET(self) -> None:
                site._handle(self, head=False)

            def do_HEAD(self) -> None:
                site._handle(self, head=True)

        self._stop.clear()
        ports = []
        for name, port in (("mirror-hub", self.port), ("mirror-cdn", 0)):
            server = ThreadingHTTPServer((self.host, port), Handler)
            server.daemon_threads = True
            thread = threading.Thread(target=server.serve_forever, name=name, daemon=True)
            thread.start()
            self._servers.append((server, thread))
            ports.append(int(server.server_address[1]))
        self.port, self.cdn_port = ports
        return self

    def stop(self) -> None:
        self._stop.set()  # releases hanging handlers
        for server, thread in self._servers:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)
        self._servers = []

    def __enter__(self) -> MirrorSite:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def hits(self, path_prefix: str) -> list[tuple[float, str, str, str]]:
        return [r for r in self.requests if r[2].startswith(path_prefix)]

    # -- routing ------------------------------------------------------------------------------------
    def _handle(self, h: BaseHTTPRequestHandler, *, head: bool) -> None:
        parsed = urlparse(h.path)
        path = unquote(parsed.path)
        query = {k: v[0] for k, v in parse_qs(parsed.query).items()}
        self.requests.append((time.time(), h.command, h.path, h.headers.get("User-Agent", "")))
        try:
            self._route(h, path, query, head)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _send(
        self,
        h: BaseHTTPRequestHandler,
        status: int,
        body: bytes,
        ctype: str,
        head: bool,
        headers: dict[str, str] | None = None,
        *,
        length: bool = True,
    ) -> None:
        """Send one answer; ``length=False`` omits Content-Length (the body ends when the connection
        closes: HTTP/1.0)."""
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        if length:
            h.send_header("Content-Length", str(len(body)))
        else:
            h.close_connection = True
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        if not head:
            h.wfile.write(body)

    def _json(self, h: BaseHTTPRequestHandler, status: int, obj: Any, head: bool) -> None:
        self._send(h, status, json.dumps(obj).encode(), "application/json; charset=utf-8", head)

    def _not_found(self, h: BaseHTTPRequestHandler, head: bool) -> None:
        body = _page(
            "404 – Hugging Face", "<h1>404</h1><p>Sorry, we can't find the page you are looking for.</p>"
        )
        self._send(h, 404, body, "text/html; charset=utf-8", head)

    def _route(self, h: BaseHTTPRequestHandler, path: str, query: dict[str, str], head: bool) -> None:
        parts = [p for p in path.split("/") if p]
        if not parts:
            body = _page("Mirror Hub", "<h1>Mirror Hub</h1><p><a href='/models'>Models</a></p>")
            return self._send(h, 200, body, "text/html; charset=utf-8", head)
        if parts == ["models"]:
            return self._send(h, 200, self._search_page(query), "text/html; charset=utf-8", head)
        if parts == ["models-json"]:
            items = self._search(query)
            page = int(query.get("p", "0") or 0)
            return self._json(
                h,
                200,
                {
                    "models": [self._list_item(r) for r in items[page * PAGE_SIZE : (page + 1) * PAGE_SIZE]],
                    "numItemsPerPage": PAGE_SIZE,
                    "numTotalItems": len(items),
                    "pageIndex": page,
                },
                head,
            )
        if parts[:2] == ["api", "models"]:
            return self._api(h, parts[2:], query, head)
        if parts[0] == "lfs-cdn" and len(parts) == 4:
            return self._cdn(h, self.repos.get(f"{parts[1]}/{parts[2]}".lower()), parts[3], head)
        if parts[0] == "spaces" and len(parts) >= 3:
            name = "/".join(parts[1:3])
            if name not in self.leaderboards:
                return self._not_found(h, head)
            return self._send(h, 200, self._leaderboard_page(name), "text/html; charset=utf-8", head)
        if len(parts) >= 2:
            repo = self.repos.get(f"{parts[0]}/{parts[1]}".lower())
            rest = parts[2:]
            if rest[:1] == ["resolve"] and len(rest) >= 3:
                return self._resolve(h, repo, "/".join(rest[1:]), head)
            if repo is None or repo.model.behaviour == "404":
                return self._not_found(h, head)
            if not rest:
                if repo.model.behaviour == "hang":
                    return self._hang(h)
                return self._send(h, 200, self._model_page(repo), "text/html; charset=utf-8", head)
            if rest[:2] == ["tree", "main"]:
                return self._send(h, 200, self._tree_page(repo), "text/html; charset=utf-8", head)
        return self._not_found(h, head)

    def _hang(self, h: BaseHTTPRequestHandler) -> None:
        # Headers and the start of a document, then nothing: the DOM never finishes loading.
        h.send_response(200)
        h.send_header("Content-Type", "text/html; charset=utf-8")
        h.end_headers()
        h.wfile.write(b"<!doctype html><html><head><title>Loading...</title></head><body><main>Loading")
        h.wfile.flush()
        self._stop.wait(self.hang_s)
        h.close_connection = True

    def _error(
        self, h: BaseHTTPRequestHandler, status: int, code: str, message: str, head: bool, **headers: str
    ) -> None:
        body = json.dumps({"error": message}).encode()
        self._send(h, status, body, "application/json; charset=utf-8", head,
                   {"X-Error-Code": code, "X-Error-Message": message, **headers})  # fmt: skip

    def _repo_or_error(self, h: BaseHTTPRequestHandler, rid: str, head: bool) -> _Repo | None:
        repo = self.repos.get(rid.lower())
        if repo is None or repo.model.behaviour == "404":
            # The hub does not tell an anonymous client whether a repo exists: 401, not 404.
            msg = "Repository not found. Make sure you are authenticated and the repo exists."
            self._error(h, 401, "RepoNotFound", msg, head)
            return None
        return repo

    def _revision_ok(self, h: BaseHTTPRequestHandler, repo: _Repo, rev: str, head: bool) -> bool:
        if rev == "main" or (rev == repo.sha and "branch_only" not in repo.model.quirks):
            return True
        self._error(h, 404, "RevisionNotFound", f"Invalid rev id: {rev}", head, **{"X-Repo-Commit": repo.sha})
        return False

    def _api(self, h: BaseHTTPRequestHandler, rest: list[str], query: dict[str, str], head: bool) -> None:
        if not rest:
            items = self._search(query)[: int(query.get("limit", "100") or 100)]
            return self._json(h, 200, [self._api_item(r) for r in items], head)
        repo = self._repo_or_error(h, "/".join(rest[:2]), head)
        if repo is None:
            return None
        more = rest[2:]
        blobs = query.get("blobs", "").lower() in ("1", "true")
        if not more:
            return self._json(h, 200, self._api_detail(repo, blobs), head)
        if more[0] == "revision" and len(more) == 2 and "branch_only" not in repo.model.quirks:
            if self._revision_ok(h, repo, more[1], head):
                self._json(h, 200, self._api_detail(repo, blobs), head)
            return None
        if more[0] == "tree" and len(more) >= 2:
            if self._revision_ok(h, repo, more[1], head):
                self._json(h, 200, self._api_tree(repo), head)
            return None
        return self._error(h, 404, "EntryNotFound", "Not found", head)

    def _resolve(self, h: BaseHTTPRequestHandler, repo: _Repo | None, rev_and_name: str, head: bool) -> None:
        if repo is None or repo.model.behaviour == "404":
            msg = "Repository not found. Make sure you are authenticated and the repo exists."
            return self._error(h, 401, "RepoNotFound", msg, head)
        m = repo.model
        if m.gated:
            msg = f"Access to model {m.id} is restricted. You must have access to it and be authenticated."
            return self._error(h, 401, "GatedRepo", msg, head, **{"X-Repo-Commit": repo.sha})
        if head and "no_head" in m.quirks:
            return self._send(h, 405, b"", "text/plain", head)
        rev, _, name = rev_and_name.partition("/")
        if not self._revision_ok(h, repo, rev, head):
            return None
        sib = next((x for x in repo.siblings if x["rfilename"] == name), None)
        if sib is None:
            msg = f"{name} does not exist at revision {rev}"
            return self._error(h, 404, "EntryNotFound", msg, head, **{"X-Repo-Commit": repo.sha})
        quiet = "no_length_headers" in m.quirks
        headers = {"X-Repo-Commit": repo.sha, "Accept-Ranges": "bytes"}
        if "lfs" not in sib:
            data = repo.blobs[name]
            headers["ETag"] = f'"{_git_blob_sha(data)}"'
            return self._send(h, 200, data, "application/octet-stream", head, headers, length=not quiet)
        # The file server hashes what it holds (a test may make the API lie about it).
        sha = hashlib.sha256(repo.blobs[name]).hexdigest() if name in repo.blobs else sib["lfs"]["sha256"]
        if "no_hashes" in m.quirks:
            headers["ETag"] = f'W/"{_git_blob_sha(sha.encode())[:20]}"'
        else:
            headers["ETag"] = headers["X-Linked-Etag"] = f'"{sha}"'
        if not quiet:
            headers["X-Linked-Size"] = str(sib["size"])
        # The hub answers LFS files with a redirect to its CDN (an absolute URL on another host).
        headers["Location"] = f"{self.cdn_url}/lfs-cdn/{m.id}/{sha}"
        body = f"Found. Redirecting to {headers['Location']}".encode()
        self._send(h, 302, body, "text/plain; charset=utf-8", head, headers)

    def _cdn(self, h: BaseHTTPRequestHandler, repo: _Repo | None, sha: str, head: bool) -> None:
        for name, data in (repo.blobs if repo else {}).items():
            if name.endswith(LFS_SUFFIXES) and hashlib.sha256(data).hexdigest() == sha:
                quirks = set(repo.model.quirks) if repo else set()
                etag = {} if {"no_length_headers", "no_hashes"} & quirks else {"ETag": f'"{sha}"'}
                length = "no_length_headers" not in quirks
                return self._send(h, 200, data, "binary/octet-stream", head, etag, length=length)
        self._send(h, 404, b"NoSuchKey", "text/plain", head)

    # -- data ---------------------------------------------------------------------------------------
    def _search(self, query: dict[str, str]) -> list[_Repo]:
        terms = [t.lower() for t in query.get("search", "").split() if t]
        tag = query.get("pipeline_tag", "")
        items = [
            r
            for r in self.repos.values()
            if all(t in r.model.id.lower() for t in terms) and (not tag or r.model.pipeline_tag == tag)
        ]
        sort = query.get("sort", "downloads")
        keys = {
            "likes": lambda r: r.model.likes,
            "modified": lambda r: r.model.last_modified,
            "created": lambda r: r.model.created_at,
        }
        items.sort(key=keys.get(sort, lambda r: r.model.downloads), reverse=True)
        return items

    def _list_item(self, r: _Repo) -> dict[str, Any]:
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

    def _tags(self, m: MirrorModel) -> list[str]:
        tags = list(m.tags)
        if m.library_name:
            tags.insert(0, m.library_name)
        if m.license:
            tags.append(f"license:{m.license}")
        if m.base_model:
            tags.append(f"base_model:{m.base_model}")
        tags += [lang for lang in m.languages if lang not in tags]  # the hub tags a card's languages
        return tags

    def _api_item(self, r: _Repo) -> dict[str, Any]:
        m = r.model
        hidden = m.behaviour == "missing_fields"
        return {
            "_id": hashlib.md5(m.id.encode()).hexdigest()[:24],
            "id": m.id,
            "modelId": m.id,
            "likes": m.likes,
            "trendingScore": 0,
            "private": False,
            "downloads": m.downloads,
            "tags": [] if hidden else self._tags(m),
            "pipeline_tag": None if hidden else m.pipeline_tag,
            "library_name": None if hidden else m.library_name,
            "createdAt": m.created_at,
        }

    def _siblings(self, r: _Repo, blobs: bool) -> list[dict[str, Any]]:
        """The siblings as the API lists them: names only unless ``blobs``; quirks remove what they say."""
        if not blobs:
            return [{"rfilename": s["rfilename"]} for s in r.siblings]
        if "no_api_sizes" in r.model.quirks:
            return [{"rfilename": s["rfilename"], "blobId": s["blobId"]} for s in r.siblings]
        if "no_hashes" in r.model.quirks:
            return [{k: v for k, v in s.items() if k != "lfs"} for s in r.siblings]
        return [dict(s) for s in r.siblings]

    def _api_tree(self, r: _Repo) -> list[dict[str, Any]]:
        out = []
        for s in self._siblings(r, blobs=True):
            e: dict[str, Any] = {"type": "file", "oid": s["blobId"], "path": s["rfilename"]}
            if "size" in s:
                e["size"] = s["size"]
            if "lfs" in s:
                e["lfs"] = {"oid": s["lfs"]["sha256"], "size": s["lfs"]["size"],
                            "pointerSize": s["lfs"]["pointerSize"]}  # fmt: skip
            out.append(e)
        return out

    def _card_data(self, m: MirrorModel) -> dict[str, Any]:
        card = {
            "license": m.license,
            "base_model": m.base_model,
            "language": list(m.languages),
            "model-index": m.model_index,
        }
        return {k: v for k, v in card.items() if v}

    def _api_detail(self, r: _Repo, blobs: bool = False) -> dict[str, Any]:
        m = r.model
        d = self._api_item(r)
        hidden = m.behaviour == "missing_fields"
        card = {} if hidden else self._card_data(m)
        d.update(
            {
                "author": m.author,
                "lastModified": m.last_modified,
                "gated": m.gated,
                "disabled": False,
                "cardData": card,
                "config": {} if hidden else {"architectures": m.architectures, "model_type": m.model_type},
                "transformersInfo": {}
                if hidden
                else {"auto_model": "AutoModelForSequenceClassification", "pipeline_tag": m.pipeline_tag},
                "siblings": self._siblings(r, blobs),
                **({} if "branch_only" in m.quirks else {"sha": r.sha}),
                "spaces": [],
            }
        )
        if not hidden and r.params_by_dtype:
            d["safetensors"] = {"parameters": r.params_by_dtype, "total": r.total_params}
        return d

    # -- pages --------------------------------------------------------------------------------------
    def _search_page(self, query: dict[str, str]) -> bytes:
        items = self._search(query)
        page = int(query.get("p", "0") or 0)
        shown = items[page * PAGE_SIZE : (page + 1) * PAGE_SIZE]
        props = {
            "initialValues": {
                "models": [self._list_item(r) for r in shown],
                "numItemsPerPage": PAGE_SIZE,
                "numTotalItems": len(items),
                "pageIndex": page,
            },
            "searchParams": query,
        }
        cards = []
        for r in shown:
            m = r.model
            cards.append(
                f"<article class='overview-card-wrapper group'><a class='block p-2' href='/{m.id}'>"
                f"<header class='flex' title='{html.escape(m.id)}'><h4 class='text-md'>{html.escape(m.id)}</h4>"
                f"</header><div class='text-sm text-gray-400'>{html.escape(m.pipeline_tag or '')} • "
                f"<span title='Number of parameters in this model'>{_fmt_count(r.total_params)}</span> • "
                f"Updated <time datetime='{m.last_modified}'>{m.last_modified[:10]}</time> • "
                f"{_fmt_count(m.downloads)} • {m.likes}</div></a></article>"
            )
        body = (
            f"<div class='SVELTE_HYDRATER contents' data-target='ModelList' data-props=\"{_attr_json(props)}\">"
            f"<h1>Models <span class='text-gray-400'>{len(items)}</span></h1>"
            f"<section>{''.join(cards)}</section></div>"
        )
        return _page("Models - Hugging Face", body)

    def _model_page(self, r: _Repo) -> bytes:
        m = r.model
        org, name = m.id.split("/", 1)
        card_html = markdown_to_html(m.card)
        if m.behaviour == "missing_fields":
            # An old or broken page: a title and a card, nothing else.
            body = (
                f"<header><h1><a href='/{org}'>{html.escape(org)}</a>/"
                f"<a class='font-mono' href='/{m.id}'>{html.escape(name)}</a></h1></header>"
                f"<div class='model-card-content prose hf-sanitized'>{card_html}</div>"
            )
            return _page(f"{m.id} · Hugging Face", body)
        model_props: dict[str, Any] = {
            "id": m.id,
            "author": m.author,
            "cardData": self._card_data(m),
            "config": {"architectures": m.architectures, "model_type": m.model_type},
            "createdAt": m.created_at,
            "downloads": m.downloads,
            "downloadsAllTime": m.downloads * 7,
            "lastModified": m.last_modified,
            "likes": m.likes,
            "pipeline_tag": m.pipeline_tag,
            "library_name": m.library_name,
            "private": False,
            "gated": m.gated,
            "tags": self._tags(m),
            "tag_objs": [{"id": t, "label": t, "type": "other"} for t in m.tags],
        }
        if r.params_by_dtype:
            model_props["safetensors"] = {"parameters": r.params_by_dtype, "total": r.total_params}
        header_props = {
            "model": model_props,
            "author": {"name": m.author, "fullname": m.author, "type": "org"},
        }
        chips = []
        if m.pipeline_tag:
            chips.append(
                f"<a class='rounded-lg' href='/models?pipeline_tag={m.pipeline_tag}'><div class='tag tag-white'>"
                f"<span>{html.escape(m.pipeline_tag.replace('-', ' ').title())}</span></div></a>"
            )
        if m.library_name:
            chips.append(
                f"<a class='rounded-lg' href='/models?library={m.library_name}'><div class='tag tag-white'>"
                f"<span>{html.escape(m.library_name)}</span></div></a>"
            )
        for t in m.tags:
            chips.append(
                f"<a class='rounded-lg' href='/models?other={html.escape(t)}'><div class='tag tag-white'>"
                f"<span>{html.escape(t)}</span></div></a>"
            )
        if m.license:
            chips.append(
                f"<a class='rounded-lg' href='/models?license=license:{m.license}'><div class='tag tag-white'>"
                f"<span class='-mr-1 text-gray-400'>License:</span><span>{html.escape(m.license)}</span></div></a>"
            )
        st_props = {"safetensors": {"parameters": r.params_by_dtype, "total": r.total_params}}
        size_block = (
            f"<div class='SVELTE_HYDRATER contents' data-target='ModelSafetensorsParams' "
            f'data-props="{_attr_json(st_props)}"><div>Model size</div><div>{_fmt_count(r.total_params)} params</div>'
            f"<div>Tensor type</div><div>{' · '.join(r.params_by_dtype)}</div></div>"
            if r.params_by_dtype
            else ""
        )
        tree = (
            f"<div>Model tree for {html.escape(m.id)}</div><div>Base model</div><div>{html.escape(m.base_model)}</div>"
            f"<div>Finetuned</div><div>(this model)</div>"
            if m.base_model
            else ""
        )
        body = (
            f"<div class='SVELTE_HYDRATER contents' data-target='ModelHeader' data-props=\"{_attr_json(header_props)}\">"
            f"<header><h1><a href='/{org}'>{html.escape(org)}</a>/"
            f"<a class='font-mono' href='/{m.id}'>{html.escape(name)}</a></h1>"
            f"<div class='tags'>{''.join(chips)}</div>"
            f"<div><a class='tab-alternate active' href='/{m.id}'>Model card</a> "
            f"<a class='tab-alternate' href='/{m.id}/tree/main'>Files and versions</a></div></header></div>"
            f"<div class='container grid grid-cols-12'>"
            f"<section class='col-span-12 md:col-span-8'><div class='model-card-content prose hf-sanitized'>"
            f"{card_html}</div>{m.extra_html}</section>"
            f"<section class='col-span-12 md:col-span-4'><div>Downloads last month</div>"
            f"<div>{m.downloads:,}</div>{size_block}{tree}</section></div>"
        )
        if m.behaviour == "dom_only":
            body = re.sub(r' data-props="[^"]*"', "", body)
        return _page(f"{m.id} · Hugging Face", body)

    def _tree_page(self, r: _Repo) -> bytes:
        entries = [{"type": "file", "path": s["rfilename"], "size": s["size"]} for s in r.siblings]
        rows = "".join(f"<li>{html.escape(e['path'])} — {e['size']} bytes</li>" for e in entries)
        body = (
            f"<div class='SVELTE_HYDRATER contents' data-target='ViewerIndexTreeList' "
            f'data-props="{_attr_json({"entries": entries})}"><ul>{rows}</ul></div>'
        )
        return _page(f"{r.model.id} at main", body)

    def _leaderboard_page(self, name: str) -> bytes:
        rows = self.leaderboards[name]
        cols: list[str] = []
        for row in rows:
            for k in row.get("scores", {}):
                if k not in cols:
                    cols.append(k)
        head = "<th>Model</th>" + "".join(f"<th>{html.escape(c)}</th>" for c in cols)
        body_rows = []
        for row in rows:
            mid = row["model"]
            cells = "".join(f"<td>{row['scores'].get(c, '')}</td>" for c in cols)
            body_rows.append(f"<tr><td><a href='/{mid}'>{html.escape(mid)}</a></td>{cells}</tr>")
        body = (
            f"<h1>{html.escape(name)} — Reward Model Leaderboard</h1>"
            f"<p>Accuracy (%) of reward models at preferring the chosen response.</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body_rows)}</tbody></table>"
        )
        return _page(f"{name} leaderboard", body)


__all__ = [
    "MirrorModel",
    "MirrorSite",
    "files_of_dir",
    "markdown_to_html",
    "safetensors_parameters",
]
