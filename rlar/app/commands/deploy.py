"""``rlar deploy``: render the shipped NATS configs, make credentials, bootstrap a bus, print the roles.

- ``rlar deploy render [--out deploy]`` — deploy/nats/*.conf and deploy/nats/helm-values.yaml from the
  role table and :mod:`rlar.deploy.natsconf` (CI checks the committed files match).
- ``rlar deploy credentials DIR`` — a fresh password per role in ``DIR/<role>.password`` (0600) and
  ``DIR/credentials.env``.
- ``rlar deploy bootstrap --nats URL [--config run.toml] [--builtins]`` — as an ``admin`` or ``supervisor``
  user (``RLAR_NATS_USER``/``RLAR_NATS_PASSWORD`` or the config's ``[nats]``): create the declared
  topology; with ``--builtins`` (admin only) also register the built-in reward tools.
- ``rlar deploy roles [--json]`` — the permission table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

# rlar.deploy, bus.client, bus.config, bus.topology, rlar.registry and rlar.config are imported where used: a
# command's implementation loads when the command runs, so rlar --help stays instant.


def cmd_render(a: argparse.Namespace) -> int:
    from rlar.deploy.render import write_all

    for path in write_all(a.out):
        print(path)
    return 0


def cmd_credentials(a: argparse.Namespace) -> int:
    from rlar.deploy.auth import generate_credentials

    roles = generate_credentials(a.dir, overwrite=a.overwrite)
    print(
        f"{len(roles)} role passwords in {a.dir} (credentials.env holds them all as RLAR_NATS_PASSWORD_<ROLE>)"
    )
    return 0


async def bootstrap(url: str, doc: dict[str, Any], *, builtins: bool) -> dict[str, Any]:
    """Create the declared topology (and optionally register the built-in tools); returns what was done."""
    from bus.client import Bus
    from bus.config import NatsConfig
    from bus.topology import TopologyConfig, declare, ensure_topology

    cfg = NatsConfig.model_validate({**doc.get("nats", {}), "url": url})
    bus = await Bus.connect(cfg, name="rlar-bootstrap")
    try:
        topo = await ensure_topology(bus.js, declare(TopologyConfig.model_validate(doc.get("topology", {}))))
        out: dict[str, Any] = {
            "streams": len(topo.streams),
            "consumers": len(topo.consumers),
            "replicas": topo.replicas,
        }
        if builtins:
            from rlar.registry import ToolRegistry

            specs = await ToolRegistry(bus).ensure_builtins(by="bootstrap")
            out["builtin_tools"] = sorted(s.name for s in specs)
        return out
    finally:
        await bus.close()


def cmd_bootstrap(a: argparse.Namespace) -> int:
    from rlar.config import apply_overrides, load_toml

    doc = load_toml(a.config) if a.config else {}
    apply_overrides(doc, a.set)
    url = a.nats or doc.get("nats", {}).get("url")
    if not url or url == "embedded":
        print("rlar deploy bootstrap: give the bus with --nats nats://host:4222[,…]")
        return 2
    print(json.dumps(asyncio.run(bootstrap(url, doc, builtins=a.builtins))), flush=True)
    return 0


def cmd_roles(a: argparse.Namespace) -> int:
    from rlar.deploy.auth import ROLES

    if a.json:
        print(json.dumps({n: r.permissions() for n, r in ROLES.items()}, indent=2))
        return 0
    for role in ROLES.values():
        print(f"{role.name}: {role.description}")
        print(f"  publish:   {' '.join(role.publish)}")
        print(f"  subscribe: {' '.join(role.subscribe)}" + ("  (+ replies)" if role.allow_responses else ""))
    return 0


def register(sub: Any, bench: Any) -> None:
    p = sub.add_parser("deploy", help="NATS configs, credentials, bootstrap, roles")
    d = p.add_subparsers(dest="deploy", required=True)

    q = d.add_parser("render", help="write deploy/nats/*.conf and helm-values.yaml from the role table")
    q.add_argument("--out", default="deploy", help="the deploy/ directory (default: ./deploy)")
    q.set_defaults(fn=cmd_render)

    q = d.add_parser("credentials", help="write a fresh password per role to DIR")
    q.add_argument("dir", help="directory for <role>.password files and credentials.env")
    q.add_argument("--overwrite", action="store_true", help="replace existing passwords (rotation)")
    q.set_defaults(fn=cmd_credentials)

    q = d.add_parser("bootstrap", help="create the declared topology (and the built-in tools) on a bus")
    q.add_argument("--nats", help="nats://host:4222[,…] (default: the config's [nats].url)")
    q.add_argument("--config", help="run config TOML ([nats], [topology])")
    q.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key (repeatable; default: none)",
    )
    q.add_argument("--builtins", action="store_true", help="also register the built-in reward tools (admin)")
    q.set_defaults(fn=cmd_bootstrap)

    q = d.add_parser("roles", help="print every role's permissions")
    q.add_argument("--json", action="store_true", help="JSON instead of the table")
    q.set_defaults(fn=cmd_roles)
