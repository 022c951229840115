"""The hub's HTTP API as the retriever uses it: model info with file metadata, file metadata by HEAD, and
streamed downloads that stop at a byte cap and hash as they go.

Shapes follow the real hub (and huggingface_hub's client, /work/shared/HUB.md):

- ``GET /api/models/{id}/revision/{rev}?blobs=true`` — without ``blobs=true`` the hub lists file names
  only; with it each sibling has ``size`` and, for LFS files, ``lfs.sha256``. A site without the
  ``/revision/`` route is asked ``/api/models/{id}?blobs=true`` (only for ``main``).
- ``GET /api/models/{id}/tree/{rev}?recursive=true`` — ``[{path, size, lfs: {oid, size}}]``: the second
  source of sizes and hashes when the model info has none.
- ``HEAD /{id}/resolve/{rev}/{file}`` without following redirects — the hub answers LFS files with a
  redirect to its CDN carrying ``X-Linked-Size`` and ``X-Linked-Etag`` (the sha256); plain files answer 200
  with ``Content-Length`` and ``ETag``; both carry ``X-Repo-Commit``. A redirect's own Content-Length is
  the redirect body's and is never taken as the file's size.
- ``GET`` of the same URL, following redirects, streamed: the body is refused as soon as it runs past the
  expected size or the byte cap, whatever the headers said (a server may send no length at all).

Every failure is an exception that names what was asked for and why: :class:`HubStatusError` (an HTTP
status, with the hub's ``X-Error-Code`` / ``X-Error-Message``), :class:`HubUnreachable` (no HTTP answer:
connection refused, DNS, timeout), :class:`OverCap` (more bytes than allowed) and :class:`BadFile`
(size or sha256 differs from what was announced). Blocking (httpx, sync): call it from a worker thread.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

USER_AGENT = "rlar-retriever/0.1 (reward-model retrieval)"
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class HubError(Exception):
    """Base of the errors below; ``what`` names the file or API call."""


class HubStatusError(HubError):
    def __init__(self, what: str, url: str, status: int, code: str = "", message: str = "") -> None:
        self.what, self.url, self.status, self.code, self.message = what, url, status, code, message
        detail = " ".join(x for x in (code, message[:200]) if x)
        super().__init__(f"{what}: HTTP {status}" + (f" {detail}" if detail else "") + f" ({url})")

    @property
    def access_denied(self) -> bool:
        """401/403: unknown to an anonymous client, gated, or private."""
        return self.status in (401, 403)


class HubUnreachable(HubError):
    def __init__(self, what: str, url: str, exc: BaseException) -> None:
        self.what, self.url = what, url
        text = str(exc).strip() or type(exc).__name__
        super().__init__(f"{what}: hub unreachable: {type(exc).__name__}: {text[:200]} ({url})")


class OverCap(HubError):
    """The file (or the fetch) would exceed its byte limit; nothing past the limit was read."""


class BadFile(HubError):
    """The bytes received differ from what the API or the headers announced."""


@dataclass(slots=True)
class FileMeta:
    """What a HEAD of a resolve URL tells: size, sha256 (from ``X-Linked-Etag``), the commit it resolves to."""

    name: str
    size: int | None = None
    size_source: str = ""  # x-linked-size | content-length | ""
    sha256: str | None = None
    etag: str | None = None
    commit: str | None = None


def normalize_etag(etag: str | None) -> str | None:
    """``W/"x"`` / ``"x"`` → ``x`` (as huggingface_hub does)."""
    if etag is None:
        return None
    return etag.removeprefix("W/").strip('"') or None


def _int_or_none(v: str | None) -> int | None:
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


class HubClient:
    """Sync HTTP client of one hub base URL (anonymous: no token is ever sent)."""

    def __init__(self, base_url: str, *, timeout_s: float = 60.0, connect_timeout_s: float = 10.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = httpx.Timeout(timeout_s, connect=connect_timeout_s)
        self.headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}

    def _client(self, follow: bool) -> httpx.Client:
        return httpx.Client(
            timeout=self.timeout, headers=self.headers, follow_redirects=follow, max_redirects=5
        )

    # -- URLs --------------------------------------------------------------------------------------
    def api_url(self, model_id: str, *parts: str) -> str:
        tail = "".join(f"/{quote(p, safe='')}" for p in parts)
        return f"{self.base_url}/api/models/{quote(model_id, safe='/')}{tail}"

    def resolve_url(self, model_id: str, filename: str, revision: str) -> str:
        rev = quote(revision, safe="")
        return f"{self.base_url}/{quote(model_id, safe='/')}/resolve/{rev}/{quote(filename)}"

    # -- requests ----------------------------------------------------------------------------------
    def _request(self, what: str, method: str, url: str, *, follow: bool = True, **kw: Any) -> httpx.Response:
        try:
            with self._client(follow) as c:
                r = c.request(method, url, **kw)
        except httpx.TransportError as exc:  # connect, DNS, timeouts, protocol errors: no usable answer
            raise HubUnreachable(what, url, exc) from exc
        if r.status_code >= 400:
            raise _status_error(what, url, r)
        return r

    def probe(self) -> int:
        """One request to the hub's API; any HTTP answer proves the hub is reachable (the status is
        returned). Raises :class:`HubUnreachable` when nothing answers."""
        url = f"{self.base_url}/api/models?limit=1"
        try:
            with self._client(False) as c:
                return c.get(url).status_code
        except httpx.TransportError as exc:
            raise HubUnreachable("hub", url, exc) from exc

    def get_json(self, what: str, url: str, params: dict[str, str] | None = None) -> Any:
        r = self._request(what, "GET", url, params=params, headers={"Accept": "application/json"})
        try:
            return r.json()
        except ValueError as exc:
            raise HubStatusError(what, str(r.url), r.status_code, "", "the answer is not JSON") from exc

    def model_info(self, model_id: str, revision: str) -> dict[str, Any]:
        """Model info with file sizes and LFS hashes (``blobs=true``)."""
        what = f"model info of {model_id}"
        try:
            info = self.get_json(what, self.api_url(model_id, "revision", revision), {"blobs": "true"})
        except HubStatusError as exc:
            if exc.status != 404 or exc.code == "RevisionNotFound" or revision != "main":
                raise
            info = self.get_json(what, self.api_url(model_id), {"blobs": "true"})  # no /revision/ route
        if not isinstance(info, dict):
            raise HubStatusError(what, self.api_url(model_id), 200, "", "the answer is not a JSON object")
        return info

    def tree(self, model_id: str, revision: str) -> list[dict[str, Any]]:
        """The files of ``revision`` with sizes and LFS oids (``[]`` when the site has no tree route)."""
        try:
            out = self.get_json(
                f"file tree of {model_id}", self.api_url(model_id, "tree", revision), {"recursive": "true"}
            )
        except HubStatusError:
            return []
        return [e for e in out if isinstance(e, dict)] if isinstance(out, list) else []

    def head(self, model_id: str, filename: str, revision: str) -> FileMeta:
        """HEAD of the file's resolve URL, redirects not followed (see the module docstring)."""
        url = self.resolve_url(model_id, filename, revision)
        r = self._request(filename, "HEAD", url, follow=False)
        h = r.headers
        meta = FileMeta(name=filename, commit=h.get("X-Repo-Commit"))
        linked = _int_or_none(h.get("X-Linked-Size"))
        plain = None if r.is_redirect else _int_or_none(h.get("Content-Length"))
        if linked is not None:
            meta.size, meta.size_source = linked, "x-linked-size"
        elif plain is not None:
            meta.size, meta.size_source = plain, "content-length"
        linked_etag = normalize_etag(h.get("X-Linked-Etag"))
        meta.etag = linked_etag or normalize_etag(h.get("ETag"))
        # Only X-Linked-Etag is the file's sha256 (LFS); a plain ETag is a git blob id or anything else.
        if linked_etag and _SHA256.match(linked_etag.lower()):
            meta.sha256 = linked_etag.lower()
        return meta

    def download(
        self,
        model_id: str,
        filename: str,
        revision: str,
        target: Path,
        *,
        max_bytes: int,
        expect_size: int | None,
        expect_sha256: str | None,
        expect_commit: str | None = None,
        deadline_s: float,
    ) -> tuple[int, str]:
        """Stream the file into ``target`` (written via ``<target>.incomplete``); returns (bytes, sha256).

        Stops and raises :class:`OverCap` as soon as more than ``max_bytes`` arrive (or a Content-Length
        says so before anything is read), :class:`BadFile` when the body runs past ``expect_size`` or ends
        at another size or hash than announced, :class:`HubStatusError` / :class:`HubUnreachable` for the
        server's answers and silences (``deadline_s``: wall clock for the whole file)."""
        url = self.resolve_url(model_id, filename, revision)
        limit = max_bytes if expect_size is None else min(max_bytes, expect_size)
        tmp = target.with_name(target.name + ".incomplete")
        h = hashlib.sha256()
        n = 0
        t_end = time.monotonic() + deadline_s
        try:
            with self._client(True) as c, c.stream("GET", url) as r:
                if r.status_code >= 400:
                    r.read()
                    raise _status_error(filename, url, r)
                commit = next(
                    (
                        x.headers.get("X-Repo-Commit")
                        for x in [*r.history, r]
                        if x.headers.get("X-Repo-Commit")
                    ),
                    None,
                )
                if commit and expect_commit and commit != expect_commit:
                    raise BadFile(
                        f"{filename}: served from commit {commit}, expected {expect_commit} ({url})"
                    )
                announced = _int_or_none(r.headers.get("Content-Length"))
                if announced is not None and announced > max_bytes:
                    raise OverCap(
                        f"{filename}: the server announces {announced:,} bytes, over the limit of "
                        f"{max_bytes:,} bytes; not downloaded ({url})"
                    )
                with tmp.open("wb") as out:
                    for chunk in r.iter_raw(1 << 20):
                        n += len(chunk)
                        if n > limit:
                            if n > max_bytes:
                                raise OverCap(
                                    f"{filename}: more than {max_bytes:,} bytes (the limit) arriving; "
                                    f"stopped at {n:,} ({url})"
                                )
                            raise BadFile(
                                f"{filename}: more than the {expect_size:,} bytes announced arriving; "
                                f"stopped at {n:,} ({url})"
                            )
                        if time.monotonic() > t_end:
                            raise HubUnreachable(
                                filename, url, TimeoutError(f"not done after {deadline_s:g}s")
                            )
                        h.update(chunk)
                        out.write(chunk)
        except httpx.TransportError as exc:
            tmp.unlink(missing_ok=True)
            raise HubUnreachable(filename, url, exc) from exc
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        sha = h.hexdigest()
        if expect_size is not None and n != expect_size:
            tmp.unlink(missing_ok=True)
            raise BadFile(f"{filename}: {n:,} bytes received, {expect_size:,} announced ({url})")
        if expect_sha256 and sha != expect_sha256.lower():
            tmp.unlink(missing_ok=True)
            raise BadFile(
                f"{filename}: sha256 {sha[:12]}… differs from the announced {expect_sha256[:12]}… ({url})"
            )
        tmp.replace(target)
        return n, sha


def _status_error(what: str, url: str, r: httpx.Response) -> HubStatusError:
    code = r.headers.get("X-Error-Code", "")
    message = r.headers.get("X-Error-Message", "")
    if not message:
        try:
            body = r.json()
            message = str(body.get("error", "")) if isinstance(body, dict) else ""
        except (ValueError, httpx.ResponseNotRead):
            message = ""
    return HubStatusError(what, url, r.status_code, code, message)
