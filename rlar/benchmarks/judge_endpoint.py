"""A fixed-latency judge endpoint for benchmarks, in a process of its own (it stands in for a remote judge).

``python -m rlar.benchmarks.judge_endpoint --delay-ms 50`` serves on 127.0.0.1 (a free port, printed as the
first stdout line) with aiohttp:

- ``POST /v1/messages`` (the Messages API): sleeps the delay, then answers ``Score: N`` (0-10), N the string
  similarity (difflib ratio) of the "Response to evaluate" to the "Reference answer" in the judge prompt
  (:func:`rlar.tools.judge.build_judge_prompt`), so rewards vary. It is not a judge of quality.
- ``GET /stats`` → ``{"calls", "in_flight", "max_in_flight"}``; ``POST /stats/reset`` zeroes the counters.

:class:`JudgeEndpoint` starts and stops it and reads the counters, so a benchmark reports the concurrency the
endpoint really saw, not the one it configured.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import json
import re
import subprocess
import sys
import urllib.request
from types import TracebackType
from typing import Any

from aiohttp import web

from bus.embedded import die_with_parent
from rlar.standins.anthropic_server import message_json

__all__ = ["JudgeEndpoint"]

_SECTION = re.compile(r"# (Reference answer|Response to evaluate)\n(.*?)(?=\n\n# |\n\nEnd with|\Z)", re.S)


def score_text(user: str) -> str:
    parts = dict(_SECTION.findall(user))
    ratio = difflib.SequenceMatcher(
        None, parts.get("Response to evaluate", "").strip(), parts.get("Reference answer", "").strip()
    ).ratio()
    return f"Score: {10 * ratio:.2f}"


def _serve(delay_s: float) -> None:

    stats = {"calls": 0, "in_flight": 0, "max_in_flight": 0}

    async def messages(request: web.Request) -> web.Response:
        stats["in_flight"] += 1
        stats["max_in_flight"] = max(stats["max_in_flight"], stats["in_flight"])
        try:
            body = await request.json()
            text = "".join(str(m.get("content", "")) for m in body.get("messages", []) if isinstance(m, dict))
            await asyncio.sleep(delay_s)
            stats["calls"] += 1
            return web.json_response(message_json(score_text(text), str(body.get("model", "m"))))
        finally:
            stats["in_flight"] -= 1

    async def get_stats(request: web.Request) -> web.Response:
        return web.json_response(stats)

    async def reset(request: web.Request) -> web.Response:
        stats.update(calls=0, max_in_flight=stats["in_flight"])
        return web.json_response(stats)

    async def main() -> None:
        app = web.Application()
        app.add_routes(
            [
                web.post("/v1/messages", messages),
                web.get("/stats", get_stats),
                web.post("/stats/reset", reset),
            ]
        )
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        print(port, flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


class JudgeEndpoint:
    """The endpoint as a child process (see the module docstring)."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rlar.benchmarks.judge_endpoint", "--delay-ms", str(1000 * delay_s)],
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=die_with_parent,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.isdigit():
            self.close()
            raise RuntimeError(f"judge endpoint did not start (exit {self.proc.poll()})")
        self.url = f"http://127.0.0.1:{line}"

    def _call(self, path: str, method: str = "GET") -> dict[str, Any]:
        req = urllib.request.Request(self.url + path, method=method, data=b"" if method == "POST" else None)
        with urllib.request.urlopen(req, timeout=10) as r:
            return dict(json.loads(r.read()))

    def stats(self) -> dict[str, Any]:
        return self._call("/stats")

    def reset(self) -> dict[str, Any]:
        return self._call("/stats/reset", "POST")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> JudgeEndpoint:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--delay-ms", type=float, default=50.0)
    _serve(ap.parse_args().delay_ms / 1000.0)
