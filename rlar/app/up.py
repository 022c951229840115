"""``rlar up``: start a set of actors with replica counts, against an existing bus or an embedded one."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

from actors import resolve
from actors.supervisor import Supervisor, parse_actor_specs
from bus.client import Bus
from bus.config import NatsConfig
from bus.embedded import serve
from bus.topology import TopologyConfig, declare, ensure_topology
from rlar.app.runconfig import load_run_config, validate_run_config
from rlar.config import ConfigError
from rlar.deploy.auth import CREDS_DIR_ENV, MissingCredentials, load_password, password_env, role_settings
from rlar.placement import from_doc
from rlar.preflight import preflight

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


def credentials_for(
    specs: list[tuple[str, int]], creds_dir: str | None, doc: dict[str, Any]
) -> tuple[dict[str, list[str]], dict[str, dict[str, str]]]:
    """Role credentials when a credentials directory is given (``--creds-dir`` or $RLAR_NATS_CREDS_DIR) or
    $RLAR_NATS_PASSWORD_SUPERVISOR is set; else none (every replica uses the run config's [nats])."""

    creds_dir = creds_dir or os.environ.get(CREDS_DIR_ENV)
    if not creds_dir and not os.environ.get(password_env("supervisor")):
        return {}, {}
    try:
        nats_doc = doc.setdefault("nats", {})
        nats_doc.update(user="supervisor", password=load_password("supervisor", creds_dir))
        settings = {kind: role_settings(kind, creds_dir) for kind, _ in specs}
    except (MissingCredentials, KeyError) as exc:
        raise ConfigError(f"rlar up: {exc}") from None
    return {k: o for k, (o, _) in settings.items()}, {k: e for k, (_, e) in settings.items()}


def up(
    actors: str,
    *,
    nats: str | None,
    config: str | None,
    overrides: list[str],
    run_dir: str | None,
    creds_dir: str | None = None,
    crash_limit: int | None = 5,
    crash_window_s: float = 600.0,
) -> int:
    specs = parse_actor_specs(actors)
    doc = _checked(specs, config, overrides)
    placement = from_doc(doc, dict(specs))  # GPUs checked before anything starts
    # Per-role credentials (rlar.deploy.auth): this supervisor joins as `supervisor`, each replica as its
    # kind's role, with the password passed in its environment, never on its command line.
    kind_overrides, kind_env = credentials_for(specs, creds_dir, doc)
    url = nats or doc.get("nats", {}).get("url", "embedded")
    rdir = Path(run_dir or doc.get("run", {}).get("dir", "runs/up"))
    rdir.mkdir(parents=True, exist_ok=True)
    with serve(url, rdir, live_run=True) as real_url:
        print(
            f"rlar up: bus {real_url} — actors {', '.join(f'{k}×{n}' for k, n in specs)} — logs {rdir}/logs",
            flush=True,
        )
        sup = Supervisor(
            specs,
            nats_url=real_url,
            run_dir=rdir,
            config_path=config,
            overrides=overrides,
            kind_overrides=kind_overrides,
            kind_env=kind_env,
            crash_limit=crash_limit,
            crash_window_s=crash_window_s,
            placement=placement,
        )
        asyncio.run(_supervise(sup, real_url, doc))
    if sup.fatal:
        print(f"rlar up: FAILED — {sup.fatal}", file=sys.stderr, flush=True)
        return 1
    return 0


def _checked(specs: list[tuple[str, int]], config: str | None, overrides: list[str]) -> dict[str, Any]:
    """The run document, validated for the actors to start, their data opened (``rlar.preflight``)."""

    doc = load_run_config(config, overrides)
    kinds = [k for k, n in specs if n > 0]
    built = validate_run_config(doc, actors=kinds, where=config or "rlar up", from_set=overrides)
    sections = {resolve(k)[1] for k in kinds} | {"tools"}
    base = Path(config).parent if config else Path.cwd()
    for check in preflight(
        {k: v for k, v in built.items() if k in sections}, base_dir=base, where=config or "rlar up"
    ).tasks:
        print(check.line(), flush=True)
    return doc
