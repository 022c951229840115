"""``rlar up``, ``rlar tail``, ``rlar status``, ``rlar bench bus``."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

# rlar.app and rlar.benchmarks are imported where used: a command's implementation loads when the command
# runs, so rlar --help stays instant.


def cmd_up(a: argparse.Namespace) -> int:
    from rlar.app.up import up

    return up(
        a.actors,
        nats=a.nats,
        config=a.config,
        overrides=a.set,
        run_dir=a.run_dir,
        creds_dir=a.creds_dir,
        crash_limit=a.crash_limit or None,
        crash_window_s=a.crash_window,
    )


def cmd_tail(a: argparse.Namespace) -> int:
    from rlar.app.attach import attach
    from rlar.app.tail import tail

    if a.nats == "embedded":
        print(
            "rlar tail: --nats embedded would start an empty bus that nothing publishes to; "
            "attach to a run with --run DIR (or leave --nats out for the newest live run)",
            file=sys.stderr,
        )
        return 2
    try:
        with attach(a.nats, a.run) as bus:
            return asyncio.run(tail(bus.url, a.pattern, as_json=a.json, count=a.count, timeout_s=a.timeout))
    except KeyboardInterrupt:
        return 0


def cmd_status(a: argparse.Namespace) -> int:
    from rlar.app.attach import attach
    from rlar.app.status import status

    with attach(a.nats, a.run) as bus:
        return asyncio.run(status(bus.url, as_json=a.json, rate_window_s=a.window))


def cmd_bench_bus(a: argparse.Namespace) -> int:
    from rlar.benchmarks.bus import run

    doc = asyncio.run(run(a.nats or "embedded", n_pub=a.n))
    if not a.json:
        for k, v in doc.items():
            print(f"{k:>32}: {v}")
    print(json.dumps(doc), flush=True)
    return 0


def register(sub: Any, bench: Any) -> None:
    from rlar.app.attach import add_arguments as add_bus_arguments

    p = sub.add_parser("up", help="start actors with replica counts (supervised, restarted on crash)")
    p.add_argument("--actors", required=True, help="e.g. reward=4,sandbox=2,feeder")
    p.add_argument("--nats", help="nats://host:4222[,nats://…] or 'embedded' (default: config or embedded)")
    p.add_argument("--config", help="run config TOML")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key (repeatable; default: none)",
    )
    p.add_argument("--run-dir", help="where logs go (default: the config's [run] dir, else runs/up)")
    p.add_argument(
        "--creds-dir", help="per-role NATS passwords (<role>.password; default $RLAR_NATS_CREDS_DIR)"
    )
    p.add_argument(
        "--crash-limit",
        type=int,
        default=5,
        help="stop everything when one replica crashed this many times with the same error within "
        "--crash-window; 0 restarts forever (default: 5)",
    )
    p.add_argument(
        "--crash-window",
        type=float,
        default=600.0,
        help="seconds over which --crash-limit counts crashes (default: 600)",
    )
    p.set_defaults(fn=cmd_up)

    p = sub.add_parser("tail", help="print live bus traffic, decoded")
    p.add_argument("pattern", nargs="?", default="rlar.>", help="subject pattern (default rlar.>)")
    p.add_argument("--json", action="store_true", help="one JSON object per line, full message")
    add_bus_arguments(p, embedded_ok=False)
    p.add_argument("--count", type=int, help="exit after N messages")
    p.add_argument("--timeout", type=float, help="exit after S seconds")
    p.set_defaults(fn=cmd_tail)

    p = sub.add_parser("status", help="live actors, stream depths, consumer backlogs, rates")
    add_bus_arguments(p)
    p.add_argument("--json", action="store_true", help="one JSON document instead of the table")
    p.add_argument("--window", type=float, default=1.0, help="seconds over which rates are measured")
    p.set_defaults(fn=cmd_status)

    p = bench.add_parser("bus", help="bus throughput and latency, msgpack included")
    p.add_argument("--json", action="store_true", help="only the JSON line")
    p.add_argument("--nats", help="benchmark an existing server instead of an embedded one")
    p.add_argument("-n", type=int, default=200_000, help="messages for the throughput figures")
    p.set_defaults(fn=cmd_bench_bus)
