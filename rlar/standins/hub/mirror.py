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
``/revision/`` API route, no ``sha`` in the model info, files resolve at ``main`` only) and
``weights_unavailable`` (the pages, the API and HEAD describe the weight files as usual, but a GET of one
answers 503 from the CDN: a download that fails).

The demo site's catalogue and leaderboard are in :mod:`rlar.standins.hub.catalogue`, the checkpoints it
serves in :mod:`rlar.standins.hub.models`; repositories (siblings, hashes, parameter counts) in
:mod:`rlar.standins.hub.repos`, the HTML pages in :mod:`rlar.standins.hub.pages`. Only ever bind to loopback.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from rlar.standins.hub.pages import (
    PAGE_SIZE,
    html_page,
    leaderboard_page,
    markdown_to_html,
    model_page,
    search_page,
    tree_page,
)
from rlar.standins.hub.repos import (
    LFS_SUFFIXES,
    QUIRKS,
    MirrorModel,
    Repo,
    card_data,
    files_of_dir,
    git_blob_sha,
    list_item,
    prepare,
    safetensors_parameters,
    tags,
)

log = logging.getLogger("rlar.standins.hub.mirror")


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
        self.repos = {m.id.lower(): prepare(m) for m in models}
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
        body = html_page(
            "404 – Hugging Face", "<h1>404</h1><p>Sorry, we can't find the page you are looking for.</p>"
        )
        self._send(h, 404, body, "text/html; charset=utf-8", head)

    def _route(self, h: BaseHTTPRequestHandler, path: str, query: dict[str, str], head: bool) -> None:
        parts = [p for p in path.split("/") if p]
        if not parts:
            body = html_page("Mirror Hub", "<h1>Mirror Hub</h1><p><a href='/models'>Models</a></p>")
            return self._send(h, 200, body, "text/html; charset=utf-8", head)
        if parts == ["models"]:
            return self._send(
                h, 200, search_page(self._search(query), query), "text/html; charset=utf-8", head
            )
        if parts == ["models-json"]:
            items = self._search(query)
            page = int(query.get("p", "0") or 0)
            return self._json(
                h,
                200,
                {
                    "models": [list_item(r) for r in items[page * PAGE_SIZE : (page + 1) * PAGE_SIZE]],
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
            return self._send(
                h, 200, leaderboard_page(name, self.leaderboards[name]), "text/html; charset=utf-8", head
            )
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
                return self._send(h, 200, model_page(repo), "text/html; charset=utf-8", head)
            if rest[:2] == ["tree", "main"]:
                return self._send(h, 200, tree_page(repo), "text/html; charset=utf-8", head)
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
        self._send(
            h,
            status,
            body,
            "application/json; charset=utf-8",
            head,
            {"X-Error-Code": code, "X-Error-Message": message, **headers},
        )

    def _repo_or_error(self, h: BaseHTTPRequestHandler, rid: str, head: bool) -> Repo | None:
        repo = self.repos.get(rid.lower())
        if repo is None or repo.model.behaviour == "404":
            # The hub does not tell an anonymous client whether a repo exists: 401, not 404.
            msg = "Repository not found. Make sure you are authenticated and the repo exists."
            self._error(h, 401, "RepoNotFound", msg, head)
            return None
        return repo

    def _revision_ok(self, h: BaseHTTPRequestHandler, repo: Repo, rev: str, head: bool) -> bool:
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

    def _resolve(self, h: BaseHTTPRequestHandler, repo: Repo | None, rev_and_name: str, head: bool) -> None:
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
            headers["ETag"] = f'"{git_blob_sha(data)}"'
            return self._send(h, 200, data, "application/octet-stream", head, headers, length=not quiet)
        # The file server hashes what it holds (a test may make the API lie about it).
        sha = hashlib.sha256(repo.blobs[name]).hexdigest() if name in repo.blobs else sib["lfs"]["sha256"]
        if "no_hashes" in m.quirks:
            headers["ETag"] = f'W/"{git_blob_sha(sha.encode())[:20]}"'
        else:
            headers["ETag"] = headers["X-Linked-Etag"] = f'"{sha}"'
        if not quiet:
            headers["X-Linked-Size"] = str(sib["size"])
        # The hub answers LFS files with a redirect to its CDN (an absolute URL on another host).
        headers["Location"] = f"{self.cdn_url}/lfs-cdn/{m.id}/{sha}"
        body = f"Found. Redirecting to {headers['Location']}".encode()
        self._send(h, 302, body, "text/plain; charset=utf-8", head, headers)

    def _cdn(self, h: BaseHTTPRequestHandler, repo: Repo | None, sha: str, head: bool) -> None:
        if repo is not None and "weights_unavailable" in repo.model.quirks and not head:
            return self._send(h, 503, b"SlowDown: service unavailable", "text/plain", head)
        for name, data in (repo.blobs if repo else {}).items():
            if name.endswith(LFS_SUFFIXES) and hashlib.sha256(data).hexdigest() == sha:
                quirks = set(repo.model.quirks) if repo else set()
                etag = {} if {"no_length_headers", "no_hashes"} & quirks else {"ETag": f'"{sha}"'}
                length = "no_length_headers" not in quirks
                return self._send(h, 200, data, "binary/octet-stream", head, etag, length=length)
        self._send(h, 404, b"NoSuchKey", "text/plain", head)

    # -- data ---------------------------------------------------------------------------------------
    def _search(self, query: dict[str, str]) -> list[Repo]:
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

    def _api_item(self, r: Repo) -> dict[str, Any]:
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
            "tags": [] if hidden else tags(m),
            "pipeline_tag": None if hidden else m.pipeline_tag,
            "library_name": None if hidden else m.library_name,
            "createdAt": m.created_at,
        }

    def _siblings(self, r: Repo, blobs: bool) -> list[dict[str, Any]]:
        """The siblings as the API lists them: names only unless ``blobs``; quirks remove what they say."""
        if not blobs:
            return [{"rfilename": s["rfilename"]} for s in r.siblings]
        if "no_api_sizes" in r.model.quirks:
            return [{"rfilename": s["rfilename"], "blobId": s["blobId"]} for s in r.siblings]
        if "no_hashes" in r.model.quirks:
            return [{k: v for k, v in s.items() if k != "lfs"} for s in r.siblings]
        return [dict(s) for s in r.siblings]

    def _api_tree(self, r: Repo) -> list[dict[str, Any]]:
        out = []
        for s in self._siblings(r, blobs=True):
            e: dict[str, Any] = {"type": "file", "oid": s["blobId"], "path": s["rfilename"]}
            if "size" in s:
                e["size"] = s["size"]
            if "lfs" in s:
                e["lfs"] = {
                    "oid": s["lfs"]["sha256"],
                    "size": s["lfs"]["size"],
                    "pointerSize": s["lfs"]["pointerSize"],
                }
            out.append(e)
        return out

    def _api_detail(self, r: Repo, blobs: bool = False) -> dict[str, Any]:
        m = r.model
        d = self._api_item(r)
        hidden = m.behaviour == "missing_fields"
        card = {} if hidden else card_data(m)
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


__all__ = [
    "LFS_SUFFIXES",
    "QUIRKS",
    "MirrorModel",
    "MirrorSite",
    "files_of_dir",
    "markdown_to_html",
    "safetensors_parameters",
]
