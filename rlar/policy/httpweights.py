"""Weights over HTTP: the learner serves each version from its own memory, rollouts pull it; the bus carries
only the announcement (``http://host:port/weights/v<N>``, the blob's sha256 and size).

This is the route across machines without a shared filesystem or a fixed group: any rollout that can reach the
learner's port reads any version still kept, joining or leaving at any time (the ``broadcast`` route needs a
fixed set of receivers; the ``objstore`` route copies every byte through nats-server and nats-py's parser).

- The learner keeps the last ``keep_versions`` versions as they were exported (the safetensors blob of
  :func:`rlar.policy.weights.safetensors_parts`: a header, then the exported tensors' own memory — no serialised
  copy), hashed off the event loop, and serves them with a threaded ``http.server``: ``GET /weights/v<N>``
  answers ``200`` with ``Content-Length`` and ``X-Sha256``, the body sent straight from the tensors' memory;
  ``404`` for a version not kept (evicted, or from another learner). ``GET /weights`` lists the kept versions.
- A rollout reads the body (of the announced size) straight into the bytes it loads, then hashes them; the
  connection and every read have a timeout. A refused connection, a 404, a short body or a timeout is
  :class:`WeightsUnavailable` (the rollout keeps serving its version and takes the next announcement); a body
  whose sha256 differs from the announcement raises :class:`rlar.policy.weights.WeightsIntegrityError`.

No authentication: bind it (``bind``, default 127.0.0.1) to an address only the run's machines reach. A
learner restart serves from a new port; versions of the old one are gone (rollouts take the next one).
"""

from __future__ import annotations

import hashlib
import http.client
import json
import logging
import re
import socket
import threading
from collections import OrderedDict
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["SCHEMES", "HttpWeightsConfig", "WeightServer", "fetch_blob"]

log = logging.getLogger(__name__)

SCHEMES = ("http://",)
_PATH = re.compile(r"^/weights/v(\d+)$")


class HttpWeightsConfig(BaseModel):
    """The learner's weight server of ``weight_sync = "http"``."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    bind: str = "127.0.0.1"
    """Address the server listens on; ``0.0.0.0`` for rollouts on other machines."""
    port: int = Field(0, ge=0, le=65535)
    """0: any free port (the announcement carries the one taken)."""
    advertise: str | None = None
    """Host name or address rollouts connect to; default: ``bind``, or this machine's host name when ``bind``
    is ``0.0.0.0``."""
    keep_versions: int = Field(2, ge=1)
    """Versions kept in memory to serve (a rollout that lags further takes the newest announcement)."""
    timeout_s: float = Field(30.0, gt=0)
    """Server side: longest wait on one socket operation of a request."""


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        if self.path == "/weights":
            body = json.dumps({"versions": self.server.owner.versions()}).encode()
            self._reply(200, body, "application/json")
            return
        m = _PATH.match(self.path)
        got = self.server.owner.get(int(m.group(1))) if m else None
        if got is None:
            self._reply(404, b"version not kept\n", "text/plain")
            return
        sha, size, views = got
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size))
        self.send_header("X-Sha256", sha)
        self.end_headers()
        for v in views:
            self.wfile.write(v)  # an unbuffered socket writer: sendall from the tensors' memory, no copy

    def _reply(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("weight server: " + format, *args)


def _coalesce(views: list[memoryview], small: int = 2**16) -> list[memoryview]:
    """The same bytes with each run of small buffers (norms, biases) joined, so a version of many small tensors
    is not sent a few bytes per system call."""
    out: list[memoryview] = []
    run: list[memoryview] = []
    for v in views:
        if v.nbytes < small:
            run.append(v)
            continue
        if run:
            out.append(memoryview(b"".join(run)))
            run = []
        out.append(v)
    if run:
        out.append(memoryview(b"".join(run)))
    return [v for v in out if v.nbytes]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: WeightServer


class WeightServer:
    """The learner's side: keeps the last ``keep_versions`` blobs and serves them until :meth:`close`."""

    def __init__(self, cfg: HttpWeightsConfig) -> None:
        self.cfg = cfg
        self._lock = threading.Lock()
        self._closed = False
        self._blobs: OrderedDict[int, tuple[str, int, list[memoryview]]] = OrderedDict()
        handler = type("Handler", (_Handler,), {"timeout": cfg.timeout_s})
        self._httpd = _Server((cfg.bind, cfg.port), handler)
        self._httpd.owner = self
        self.port = int(self._httpd.server_address[1])
        host = cfg.advertise or (socket.gethostname() if cfg.bind in ("0.0.0.0", "::", "") else cfg.bind)
        self.base_url = f"http://{host}:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="weight-server", daemon=True)
        self._thread.start()
        log.info("weight server: listening on %s:%d, announced as %s", cfg.bind, self.port, self.base_url)

    def put(self, version: int, parts: Sequence[memoryview | bytes]) -> tuple[str, str, int]:
        """Keep the concatenated ``parts`` (the blob) as ``version``, hashed here, and drop the oldest beyond
        ``keep_versions``; returns (uri, sha256 hex, size). The buffers are served as they are, not copied:
        they must not change while kept (the learner's exported tensors are copies of its parameters).
        Blocking (the hash): call it off the event loop."""
        views = _coalesce([memoryview(p).cast("B") for p in parts])
        h = hashlib.sha256()
        for v in views:
            h.update(v)
        sha = h.hexdigest()
        size = sum(v.nbytes for v in views)
        with self._lock:
            self._blobs[version] = (sha, size, views)
            while len(self._blobs) > self.cfg.keep_versions:
                self._blobs.popitem(last=False)
        return f"{self.base_url}/weights/v{version}", sha, size

    def get(self, version: int) -> tuple[str, int, list[memoryview]] | None:
        with self._lock:
            return self._blobs.get(version)

    def versions(self) -> list[int]:
        with self._lock:
            return list(self._blobs)

    def close(self) -> None:
        """Stop serving (idempotent); a transfer under way finishes from the buffers it holds."""
        if self._closed:
            return
        self._closed = True
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5.0)
        with self._lock:
            self._blobs.clear()


class FetchError(RuntimeError):
    """The version could not be read (refused, not kept, cut short, timed out); the text says which."""


def fetch_blob(uri: str, size: int, timeout_s: float = 60.0) -> tuple[bytes, str]:
    """Read an announced version: (the bytes, their sha256 hex). Blocking (call it off the event loop);
    ``timeout_s`` bounds the connection and each read. Raises :class:`FetchError`; the caller compares the
    digest with the announcement."""
    parts = urlsplit(uri)
    if parts.scheme != "http" or not parts.hostname:
        raise FetchError(f"{uri!r} is not an http:// weights uri")
    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout_s)
    try:
        try:
            conn.request("GET", parts.path)
            resp = conn.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            raise FetchError(f"{uri}: {type(exc).__name__}: {exc}") from exc
        if resp.status != 200:
            raise FetchError(f"{uri}: HTTP {resp.status} {resp.reason}")
        length = resp.getheader("Content-Length")
        if length is None or int(length) != size:
            raise FetchError(f"{uri}: the server sends {length} bytes, the announcement says {size}")
        try:
            data = resp.read(size)  # read straight into the bytes returned (no second copy); each recv timed
        except (OSError, http.client.HTTPException) as exc:
            raise FetchError(f"{uri}: {type(exc).__name__} while reading {size} bytes: {exc}") from exc
        if len(data) != size:
            raise FetchError(f"{uri}: the body ended after {len(data)} of {size} bytes")
        return data, hashlib.sha256(data).hexdigest()
    finally:
        conn.close()
