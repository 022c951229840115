"""A small offline mirror of the model hub, for tests and the demo: pages, API and files on 127.0.0.1.

:class:`MirrorSite` serves, in the shapes described in /work/shared/HUB.md:

- ``/models?search=&pipeline_tag=&sort=&p=`` — a search page: ``ModelList`` data-props plus
  ``article.overview-card-wrapper`` result cards (all whitespace-separated terms must occur in the id,
  case-insensitively, as on the hub); ``/models-json`` the same items as JSON;
- ``/{org}/{name}`` — a model page: ``ModelHeader`` and ``ModelSafetensorsParams`` data-props, h1, tag chips,
  licence chip, tabs, the card in ``div.model-card-content``, a sidebar with downloads and model size;
  ``/{org}/{name}/tree/main`` — the files page (``ViewerIndexTreeList``);
- ``/api/models`` and ``/api/models/{id}[/revision/{rev}]`` — the API (siblings with sizes and LFS sha256);
- ``/{id}/resolve/{rev}/{file}`` — files, GET and HEAD, with ``X-Repo-Commit``, ``ETag``/``X-Linked-Etag``,
  ``X-Linked-Size`` and ``Content-Length`` (what huggingface_hub reads); unknown repos answer 401;
- ``/spaces/{org}/{name}`` — a leaderboard page: an HTML table of models and scores.

Per-model ``behaviour`` makes the failures a retriever must survive: ``404`` (listed, but the page is
gone), ``hang`` (the page starts and never finishes loading), ``missing_fields`` (no embedded props, no
licence, no sizes — on the page or in the API), ``dom_only`` (no embedded props; the markup has it all).

The demo site's catalogue and leaderboard are in :mod:`rlar.retrieval.demo_catalogue`, the checkpoints it
serves in :mod:`rlar.retrieval.demo_models`. Only ever bind to loopback.
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

log = logging.getLogger("rlar.retrieval.mirror")

LFS_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".h5", ".onnx", ".msgpack")
PAGE_SIZE = 30


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
    gated: bool = False
    extra_html: str = ""  # appended to the card section as is (e.g. a resource on another host)

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


def _prepare(model: MirrorModel) -> _Repo:
    blobs: dict[str, bytes] = {}
    for name, src in model.files.items():
        blobs[name] = src if isinstance(src, bytes) else Path(src).read_bytes()
    siblings: list[dict[str, Any]] = []
    params: dict[str, int] = {}
    for name in sorted(blobs):
        data = blobs[name]
        sib: dict[str, Any] = {"rfilename": name, "size": len(data)}
        if name.endswith(LFS_SUFFIXES):
            sib["lfs"] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
        siblings.append(sib)
        if name.endswith(".safetensors"):
            for k, v in safetensors_parameters(data).items():
                params[k] = params.get(k, 0) + v
    for name, size in sorted(model.listed.items()):
        sib = {"rfilename": name, "size": size}
        if name.endswith(LFS_SUFFIXES):
            sib["lfs"] = {
                "sha256": hashlib.sha256(name.encode()).hexdigest(),
                "size": size,
                "pointerSize": 134,
            }
        siblings.append(sib)
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
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

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
        server = ThreadingHTTPServer((self.host, self.port), Handler)
        server.daemon_threads = True
        self._server = server
        self.port = int(server.server_address[1])
        self._thread = threading.Thread(target=server.serve_forever, name="mirror-hub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()  # releases hanging handlers
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

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
    ) -> None:
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
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
            if len(parts) == 2:
                items = self._search(query)[: int(query.get("limit", "100") or 100)]
                return self._json(h, 200, [self._api_item(r) for r in items], head)
            rid = "/".join(parts[2:4])
            repo = self.repos.get(rid.lower())
            if repo is None or repo.model.behaviour == "404":
                return self._json(h, 404, {"error": "Repository not found"}, head)
            return self._json(h, 200, self._api_detail(repo), head)
        if parts[0] == "spaces" and len(parts) >= 3:
            name = "/".join(parts[1:3])
            if name not in self.leaderboards:
                return self._not_found(h, head)
            return self._send(h, 200, self._leaderboard_page(name), "text/html; charset=utf-8", head)
        if len(parts) >= 2:
            repo = self.repos.get(f"{parts[0]}/{parts[1]}".lower())
            rest = parts[2:]
            if rest[:1] == ["resolve"] and len(rest) >= 3:
                return self._resolve(h, repo, "/".join(rest[2:]), head)
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

    def _resolve(self, h: BaseHTTPRequestHandler, repo: _Repo | None, name: str, head: bool) -> None:
        if repo is None or repo.model.behaviour == "404":
            body = b'{"error":"Repository not found"}'
            return self._send(h, 401, body, "application/json", head, {"X-Error-Code": "RepoNotFound"})
        data = repo.blobs.get(name)
        if data is None:
            return self._send(
                h, 404, b'{"error":"Entry not found"}', "application/json", head,
                {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": repo.sha},
            )  # fmt: skip
        headers = {"X-Repo-Commit": repo.sha, "Accept-Ranges": "bytes"}
        if name.endswith(LFS_SUFFIXES):
            sha = hashlib.sha256(data).hexdigest()
            headers.update({"ETag": f'"{sha}"', "X-Linked-Etag": f'"{sha}"', "X-Linked-Size": str(len(data))})
        else:
            headers["ETag"] = f'"{_git_blob_sha(data)}"'
        self._send(h, 200, data, "application/octet-stream", head, headers)

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

    def _api_detail(self, r: _Repo) -> dict[str, Any]:
        m = r.model
        d = self._api_item(r)
        hidden = m.behaviour == "missing_fields"
        card: dict[str, Any] = {}
        if not hidden:
            if m.license:
                card["license"] = m.license
            if m.base_model:
                card["base_model"] = m.base_model
            if m.model_index:
                card["model-index"] = m.model_index
        d.update(
            {
                "author": m.author,
                "sha": r.sha,
                "lastModified": m.last_modified,
                "gated": m.gated,
                "disabled": False,
                "cardData": card,
                "config": {} if hidden else {"architectures": m.architectures, "model_type": m.model_type},
                "transformersInfo": {}
                if hidden
                else {"auto_model": "AutoModelForSequenceClassification", "pipeline_tag": m.pipeline_tag},
                "siblings": r.siblings,
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
            "cardData": {
                k: v
                for k, v in {
                    "license": m.license,
                    "base_model": m.base_model,
                    "model-index": m.model_index,
                }.items()
                if v
            },
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
