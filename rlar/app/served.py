"""The model servers a run starts for its agents and judge (``[llm.endpoints.NAME.serve]``), supervised.

``rlar train`` calls :func:`assign_urls` while the config is read (an endpoint with ``serve`` gets its port —
a free one for ``port = 0`` — and ``base_url = "http://127.0.0.1:PORT/v1"`` written into the run document, so
every actor's agent config and the registered judge spec name it), then :class:`ServedModels` starts each
server (:class:`rlar.agent.serve.ModelServer`, log in ``<run>/logs/model-<name>.log``) before the actors and
waits until it is healthy. While the run goes on, :meth:`ServedModels.watch` restarts a server that exits, at
most ``restarts`` times, loudly; :meth:`ServedModels.stop` stops them all at the end.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from bus.embedded import free_port
from rlar.agent.endpoints import LLMSection
from rlar.agent.serve import ModelServer, ModelServerError

__all__ = ["ServedModels", "assign_urls", "served_endpoints"]


def served_endpoints(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The ``[llm.endpoints.*]`` tables of ``doc`` that have a ``serve`` table, by name."""
    llm = doc.get("llm")
    endpoints = llm.get("endpoints") if isinstance(llm, dict) else None
    if not isinstance(endpoints, dict):
        return {}
    return {n: e for n, e in endpoints.items() if isinstance(e, dict) and isinstance(e.get("serve"), dict)}


def assign_urls(doc: dict[str, Any]) -> None:
    """Give every served endpoint without a ``base_url`` its port and URL (see the module docstring)."""
    for table in served_endpoints(doc).values():
        if table.get("base_url"):
            continue
        serve = table["serve"]
        port = int(serve.get("port") or 0) or free_port()
        serve["port"] = port
        table["base_url"] = f"http://127.0.0.1:{port}/v1"


class ServedModels:
    """The run's model servers (see the module docstring)."""

    def __init__(self, doc: dict[str, Any], run_dir: Path, *, restarts: int = 3) -> None:

        section = LLMSection.model_validate(doc.get("llm") or {})
        self.servers: dict[str, ModelServer] = {}
        for name, ep in section.endpoints.items():
            if ep.serve is None:
                continue
            s = ep.serve
            self.servers[name] = ModelServer(
                s.checkpoint,
                name=ep.model,
                port=s.port,
                device=s.device,
                threads=s.threads,
                max_model_len=s.max_model_len,
                startup_timeout_s=s.startup_timeout_s,
                extra_args=list(s.extra_args),
                log_path=run_dir / "logs" / f"model-{name}.log",
            )
        self.restarts_left = restarts
        self.events: list[str] = []

    def start(self) -> None:
        """Start every server and wait until each is healthy (``ModelServerError`` stops the others first)."""

        for name, server in self.servers.items():
            print(f"model server {name!r}: starting vLLM on {server.checkpoint} …", flush=True)
            try:
                server.start()
            except ModelServerError:
                self.stop()
                raise
            print(
                f"model server {name!r}: {server.base_url} healthy after {server.started_s:.0f} s", flush=True
            )

    async def watch(self, interval_s: float = 5.0) -> None:
        """Restart a server that exited (at most ``restarts`` times in all), saying so on stderr; with none
        left, the endpoint's callers get failed calls (statuses: the agents fall back, the judge abstains)."""
        given_up: set[str] = set()
        while True:
            await asyncio.sleep(interval_s)
            for name, server in self.servers.items():
                if name in given_up or server.alive():
                    continue
                tail = server.log_tail(5)
                if self.restarts_left <= 0:
                    given_up.add(name)
                    self._warn(f"model server {name!r} exited and no restarts are left:\n{tail}")
                    continue
                self.restarts_left -= 1
                self._warn(
                    f"model server {name!r} exited; restarting it ({self.restarts_left} left):\n{tail}"
                )
                try:
                    await asyncio.to_thread(server.start)
                except Exception as exc:  # the next round tries again while restarts are left
                    self._warn(f"model server {name!r} did not restart: {exc}")

    def _warn(self, text: str) -> None:
        self.events.append(text.splitlines()[0])
        print(f"WARNING: {text}", file=sys.stderr, flush=True)

    def stop(self) -> None:
        for server in self.servers.values():
            server.stop()
