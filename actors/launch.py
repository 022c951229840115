"""Build an actor from a run config and run it in this process: ``python -m actors KIND [options]``.

The run config is one TOML document: ``[nats]``, ``[topology]``, ``[run]`` and ``[metrics]`` apply to every
actor; a section named after the actor (``[rollout]``, ``[reward]`` …) holds its own fields.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from typing import Any

from actors import resolve
from actors.runtime import Actor
from rlar.config import build
from rlar.runconfig import actor_config_dict, load_run_config


def make_actor(kind: str, doc: dict[str, Any], *, instance: str | None = None) -> Actor[Any]:
    cls, section, implied = resolve(kind)
    data = actor_config_dict(doc, section, implied)
    if instance:
        data["instance"] = instance
    config = build(cls.Config, data, where=f"[{section}]")
    actor: Actor[Any] = cls(config)
    return actor


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m actors", description=__doc__)
    ap.add_argument("kind")
    ap.add_argument("--config", help="run config TOML")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    ap.add_argument("--nats", help="NATS URL(s); overrides [nats].url")
    ap.add_argument("--instance", help="instance id (default: host-pid-random)")
    ap.add_argument("--log-level", default="INFO")
    args = ap.parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(), format=f"%(asctime)s {args.kind} %(levelname)s %(name)s: %(message)s"
    )
    # Relative paths in the file resolve against its directory (rlar.runconfig), as for `rlar train`.
    doc = load_run_config(args.config, args.set)
    if args.nats:
        doc.setdefault("nats", {})["url"] = args.nats
    if doc.get("nats", {}).get("url", "embedded") == "embedded":
        print(
            "error: an actor process needs a NATS URL (--nats nats://host:4222); "
            "`rlar up --nats embedded` starts a server and passes its URL",
            file=sys.stderr,
        )
        return 2
    actor = make_actor(args.kind, doc, instance=args.instance)
    asyncio.run(actor.run(install_signals=True))
    return 0
