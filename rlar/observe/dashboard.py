"""``rlar dashboard``: a live web page of a run, served by the project (Starlette + uvicorn, no CDN).

The page (``rlar/observe/static``: one HTML file, one script, one stylesheet, shipped with the package) is
fed by Server-Sent Events: ``GET /api/events`` sends the whole :class:`~rlar.observe.state.LiveState`
once, then every section that changed, at most every ``push_s`` (0.2 s) — a bus message reaches the page
in well under a second on a quiet machine. ``GET /api/state`` returns the same document once (JSON).

Read-only: only GET and HEAD exist (anything else is 405). Binds to 127.0.0.1 unless told otherwise. With a
bearer token (``--token`` or ``$RLAR_DASHBOARD_TOKEN``) every ``/api/`` request must carry
``Authorization: Bearer <token>`` or ``?token=<token>`` (the page's EventSource cannot set headers; the
page reads the token from the URL fragment ``#token=…``, which browsers never send to servers); the page
itself and its assets hold no run data and stay public.

:class:`Dashboard` runs the server inside an existing event loop (``rlar train --dashboard`` beside the
run, the ``rlar dashboard`` command, tests) without taking over the process's signal handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import signal
from collections.abc import AsyncIterator, Iterator
from importlib import resources
from typing import Any
from urllib.parse import parse_qs

from bus.client import Bus
from bus.config import NatsConfig
from rlar.observe.feed import Feed
from rlar.observe.state import LiveState

# starlette and uvicorn are imported where used: heavy and optional (rlar --help imports this module).

log = logging.getLogger("rlar.observe.dashboard")

__all__ = ["Dashboard", "create_app"]

STATIC = "static"


def _dumps(obj: Any) -> str:
    return json.dumps(obj, default=str, separators=(",", ":"))


class _BearerToken:
    """ASGI middleware: ``/api/…`` needs the token (header or ``token`` query parameter)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = token.encode()

    def _ok(self, scope: dict[str, Any]) -> bool:

        headers = dict(scope.get("headers") or [])
        auth = headers.get(b"authorization", b"")
        if auth[:7].lower() == b"bearer " and hmac.compare_digest(auth[7:].strip(), self.token):
            return True
        query = parse_qs((scope.get("query_string") or b"").decode())
        return any(hmac.compare_digest(t.encode(), self.token) for t in query.get("token", []))

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/api/") and not self._ok(scope):
            body = b'{"error":"bearer token required"}'
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


def create_app(
    state: LiveState, *, token: str | None = None, push_s: float = 0.2, closing: asyncio.Event | None = None
) -> Any:
    """The ASGI app serving ``state`` (see the module docstring)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, StreamingResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    index = (resources.files("rlar.observe") / STATIC / "index.html").read_text()
    closing = closing or asyncio.Event()

    async def page(request: Request) -> HTMLResponse:
        return HTMLResponse(index, headers={"Cache-Control": "no-store"})

    async def snapshot(request: Request) -> JSONResponse:
        return JSONResponse(json.loads(_dumps(state.snapshot())))

    async def events(request: Request) -> StreamingResponse:
        async def stream() -> AsyncIterator[str]:
            first = state.snapshot()
            seen = first["seq"]
            yield f"event: snapshot\ndata: {_dumps(first)}\n\n"
            while not closing.is_set():
                if await state.wait_change(seen, 10.0) == seen:
                    yield ": keep-alive\n\n"
                    continue
                now = state.seq
                names = state.changed_since(seen)
                seen = now
                yield f"event: update\ndata: {_dumps(state.snapshot(names))}\n\n"
                await asyncio.sleep(push_s)  # coalesce bursts (every sample bumps a section)

        return StreamingResponse(
            stream(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def health(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    routes = [
        Route("/", page, methods=["GET"]),
        Route("/api/state", snapshot, methods=["GET"]),
        Route("/api/events", events, methods=["GET"]),
        Route("/healthz", health, methods=["GET"]),
        Mount("/static", StaticFiles(packages=[("rlar.observe", STATIC)]), name="static"),
    ]
    app: Any = Starlette(routes=routes)
    return _BearerToken(app, token) if token else app


class Dashboard:
    """The dashboard server in the running event loop: ``url = await d.start()``, later ``await d.stop()``."""

    def __init__(
        self,
        state: LiveState,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        push_s: float = 0.2,
    ) -> None:
        self.state = state
        self.host = host
        self.port = port
        self.token = token
        self.closing = asyncio.Event()
        self.app = create_app(state, token=token, push_s=push_s, closing=self.closing)
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None
        self.url = ""

    async def start(self, timeout_s: float = 30.0) -> str:
        import uvicorn

        class _Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:  # the host process owns its signals
                yield

        config = uvicorn.Config(
            self.app,
            host=self.host,
            port=self.port,
            log_level="warning",
            lifespan="off",
            access_log=False,
            timeout_graceful_shutdown=2,
        )
        self._server = _Server(config)
        self._task = asyncio.create_task(self._server.serve(), name="dashboard")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while not self._server.started:
            if self._task.done():
                self._task.result()  # raises the bind error
                raise RuntimeError("dashboard server exited at start")
            if loop.time() > deadline:
                raise TimeoutError(f"dashboard did not start within {timeout_s:.0f} s")
            await asyncio.sleep(0.02)
        sock = self._server.servers[0].sockets[0]
        port = sock.getsockname()[1]
        host = self.host if self.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
        self.url = f"http://{host if ':' not in host else f'[{host}]'}:{port}/"
        return self.url

    def link(self) -> str:
        """The URL to open (with the token in the fragment when one is set)."""
        return self.url + (f"#token={self.token}" if self.token else "")

    async def stop(self) -> None:
        self.closing.set()
        if self._server is not None:
            self._server.should_exit = True
        if self._task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._task, 10)


async def serve(
    url: str,
    *,
    describe: str,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    ready: Any = None,
) -> int:
    """``rlar dashboard``: attach to the bus at ``url`` (replaying what its streams keep), serve the page
    until SIGINT/SIGTERM. ``ready(link)`` is called once the page is up (default: print it)."""

    bus = await Bus.connect(NatsConfig(url=url), name="rlar-dashboard")
    stop = asyncio.Event()
    state = LiveState(bus=bus, describe=describe)
    feed = Feed(bus, [state], replay=True)
    dashboard = Dashboard(state, host=host, port=port, token=token)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    pollers = asyncio.create_task(state.run_pollers(stop))
    try:
        await feed.start()
        await dashboard.start()
        (ready or (lambda link: print(f"dashboard: {link}", flush=True)))(dashboard.link())
        await stop.wait()
    finally:
        stop.set()
        await dashboard.stop()
        await pollers
        await feed.stop()
        await bus.close()
    return 0
