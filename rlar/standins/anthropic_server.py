"""A local HTTP server speaking the Anthropic Messages API (``POST /v1/messages``), for tests and benchmarks.

It stands in for the paid remote API only: the real ``anthropic`` SDK talks to it through ``base_url``. Each
request takes the step ``respond(body)`` returns when ``respond`` is set, else the next step of ``script`` (else
``default``): ``{"text": ...}`` answers a proper message,
``{"content": [blocks], "usage": {...}}`` a message with those blocks (``tool_use`` included),
``{"status": 429, "headers": {...}}`` an error, and ``"delay"`` (else the server's ``delay_s``) is slept
before answering — a fixed-latency judge endpoint. HTTP/1.1 keep-alive, one thread per connection.

Use in-process (``with MessagesServer(delay_s=0.05) as srv: srv.url``) or as a process:
``python -m rlar.standins.anthropic_server --port 8123 --delay 0.05 --text 'Score: 7'``.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["MessagesServer", "message_json"]


def message_json(
    text: str,
    model: str,
    *,
    content: list[dict[str, Any]] | None = None,
    stop_reason: str | None = None,
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    """A Messages API response body: one text block, or the given ``content`` blocks (e.g. ``tool_use``)."""
    blocks = content if content is not None else [{"type": "text", "text": text}]
    default_stop = "tool_use" if any(b.get("type") == "tool_use" for b in blocks) else "end_turn"
    return {
        "id": "msg_local",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason or default_stop,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 10, "output_tokens": 5},
    }


class MessagesServer(ThreadingHTTPServer):
    """Messages API on 127.0.0.1 (a free port unless ``port``); see the module docstring."""

    daemon_threads = True
    request_queue_size = 1024  # listen backlog: socketserver's default of 5 delays bursts of new connections

    def __init__(
        self, *, port: int = 0, delay_s: float = 0.0, text: str = "Fine.\nScore: 7", record: bool = True
    ) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.delay_s = delay_s
        self.default: dict[str, Any] = {"text": text}
        self.script: deque[dict[str, Any]] = deque()
        # A step computed from the request body (e.g. a stand-in judge that reads the prompt); beats ``script``.
        self.respond: Callable[[dict[str, Any]], dict[str, Any]] | None = None
        self.record = record
        self.requests: list[dict[str, Any]] = []
        self.headers_seen: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self.count = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def next_step(self) -> dict[str, Any]:
        with self.lock:
            return self.script.popleft() if self.script else self.default

    def start(self) -> MessagesServer:
        """Serve in a daemon thread."""
        if self._thread is None:
            # Polled every 50 ms, not the default 0.5 s: stop() waits for the next poll, once per test.
            self._thread = threading.Thread(
                target=self.serve_forever, kwargs={"poll_interval": 0.05}, name="messages-server", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self.shutdown()
            self._thread.join(5)
            self._thread = None
        self.server_close()

    def __enter__(self) -> MessagesServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class _Handler(BaseHTTPRequestHandler):
    server: MessagesServer
    protocol_version = "HTTP/1.1"  # keep-alive: clients reuse connections, as with the real API
    # Headers and body go out in separate writes; without TCP_NODELAY, Nagle's algorithm and the client's
    # delayed ACK add ~40 ms to every reply on a kept-alive connection.
    disable_nagle_algorithm = True

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        srv = self.server
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        with srv.lock:
            srv.count += 1
            if srv.record:
                srv.requests.append(body)
                srv.headers_seen.append({k.lower(): v for k, v in self.headers.items()})
            srv.in_flight += 1
            srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
        try:
            step = srv.respond(body) if srv.respond is not None else srv.next_step()
            time.sleep(float(step.get("delay", srv.delay_s)))
            if self.path.split("?")[0] != "/v1/messages":
                self._send(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})
            elif "status" in step:
                err = {
                    "type": "error",
                    "error": {"type": step.get("etype", "api_error"), "message": "scripted"},
                }
                self._send(int(step["status"]), err, step.get("headers", {}))
            else:
                model = str(body.get("model", "m"))
                reply = message_json(
                    str(step.get("text", "")), model, content=step.get("content"), usage=step.get("usage")
                )
                self._send(200, reply)
        finally:
            with srv.lock:
                srv.in_flight -= 1

    def _send(self, status: int, obj: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout)
            pass


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--delay", type=float, default=0.05, help="seconds before each answer")
    ap.add_argument("--text", default="Fine.\nScore: 7")
    a = ap.parse_args(argv)
    srv = MessagesServer(port=a.port, delay_s=a.delay, text=a.text, record=False)
    print(srv.url, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
