"""Small actors used by the runtime and supervisor tests (importable by child processes)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from actors.runtime import Actor, ActorConfig
from actors.sandbox import SandboxActor, SandboxActorConfig
from bus.config import NatsConfig
from tests.support.servers import TEST_TOPOLOGY


class CrashOnceConfig(ActorConfig):
    marker: str = "crashed-once"


class CrashOnce(Actor[CrashOnceConfig]):
    """Crashes on its first start in a run directory, then runs normally."""

    kind = "crashonce"
    Config = CrashOnceConfig

    async def main(self) -> None:
        marker = Path(self.config.run_dir) / self.config.marker
        if not marker.exists():
            marker.write_text(str(os.getpid()))
            raise RuntimeError("deliberate crash on first start")
        await self.stopping.wait()


class AlwaysCrashConfig(ActorConfig):
    message: str = "data/x.jsonl, line 7: prompt field 'question' is missing"


class AlwaysCrash(Actor[AlwaysCrashConfig]):
    """Crashes on every start with the same error (a crash loop)."""

    kind = "alwayscrash"
    Config = AlwaysCrashConfig

    async def main(self) -> None:
        raise ValueError(self.config.message)


class Counting(Actor[ActorConfig]):
    """Counts its starts and some work: its counters should carry on when it is restarted."""

    kind = "counting"
    Config = ActorConfig

    async def main(self) -> None:
        self.counters["starts"] += 1
        self.counters["work"] += 3
        await self.stopping.wait()


def sandbox_actor(nats_url: str, tmp_path: Path, **fields: Any) -> SandboxActor:
    cfg = SandboxActorConfig(
        nats=NatsConfig(url=nats_url),
        topology=TEST_TOPOLOGY,
        run_dir=str(tmp_path),
        heartbeat_s=0.5,
        **fields,
    )
    return SandboxActor(cfg)
