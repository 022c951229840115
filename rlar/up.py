"""``rlar up``: start a set of actors with replica counts, against an existing bus or an embedded one."""

from __future__ import annotations

import asyncio
import logging
import signal
from pathlib import Path

from actors.supervisor import Supervisor, parse_actor_specs
from bus.client import Bus
from bus.config import NatsConfig
from bus.embedded import serve
from bus.topology import TopologyConfig, declare, ensure_topology
from rlar.config import apply_overrides, load_toml

log = logging.getLogger("rlar.up")


async def _supervise(sup: Supervisor, url: str, doc: dict[str, object]) -> None:
    nats_doc = dict(doc.get("nats", {}))  # type: ignore[call-overload]
    nats_doc["url"] = url
    bus = await Bus.connect(NatsConfig.model_validate(nats_doc), name="supervisor")
    topo_cfg = TopologyConfig.model_validate(doc.get("topology", {}))
    await ensure_topology(bus.js, declare(topo_cfg))
    sup.bus = bus
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, sup.stop)
    try:
        await sup.run()
    finally:
        await bus.close()


def up(
    actors: str, *, nats: str | None, config: str | None, overrides: list[str], run_dir: str | None
) -> int:
    specs = parse_actor_specs(actors)
    doc = load_toml(config) if config else {}
    apply_overrides(doc, overrides)
    url = nats or doc.get("nats", {}).get("url", "embedded")
    rdir = Path(run_dir or doc.get("run", {}).get("dir", "runs/up"))
    rdir.mkdir(parents=True, exist_ok=True)
    with serve(url, rdir) as real_url:
        print(f"rlar up: bus {real_url} — actors {', '.join(f'{k}×{n}' for k, n in specs)} — logs {rdir}/logs",
              flush=True)  # fmt: skip
        sup = Supervisor(specs, nats_url=real_url, run_dir=rdir, config_path=config, overrides=overrides)
        asyncio.run(_supervise(sup, real_url, doc))
    return 0
