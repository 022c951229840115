"""``rlar dashboard`` (a live web page of a run) and ``rlar report`` (a run's HTML report, again)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

# rlar.observe and rlar.app are imported where used: a command's implementation loads when the command runs,
# so rlar --help stays instant.

TOKEN_ENV = "RLAR_DASHBOARD_TOKEN"


def add_dashboard_flags(p: argparse.ArgumentParser) -> None:
    """``rlar train``'s flags for a dashboard beside the run."""
    p.add_argument(
        "--dashboard", action="store_true", help="serve the live dashboard beside the run and print its URL"
    )
    p.add_argument("--dashboard-host", default="127.0.0.1", help="interface the dashboard binds")
    p.add_argument("--dashboard-port", type=int, default=0, help="dashboard port (0: a free one)")


def dashboard_options(a: argparse.Namespace) -> Any:
    if not a.dashboard:
        return None
    from rlar.observe.session import DashboardOptions

    return DashboardOptions(
        host=a.dashboard_host, port=a.dashboard_port, token=os.environ.get(TOKEN_ENV) or None
    )


def cmd_dashboard(a: argparse.Namespace) -> int:

    from rlar.app.attach import attach
    from rlar.observe.dashboard import serve

    with attach(a.nats, a.run) as target:
        return asyncio.run(
            serve(
                target.url,
                describe=target.describe(),
                host=a.host,
                port=a.port,
                token=a.token or os.environ.get(TOKEN_ENV) or None,
            )
        )


def cmd_report(a: argparse.Namespace) -> int:

    from rlar.observe.report import write_report

    run = Path(a.run_dir)
    if not (run / "metrics.jsonl").is_file() and not (run / "summary.json").is_file():
        print(
            f"rlar report: {run} holds no metrics.jsonl or summary.json (not a run directory?)",
            file=sys.stderr,
        )
        return 1
    print(write_report(run))
    return 0


def register(sub: Any, bench: Any) -> None:
    from rlar.app.attach import add_arguments

    p = sub.add_parser(
        "dashboard", help="live web page of a run (actors, bus, rewards, tools, routing, samples)"
    )
    add_arguments(p)
    p.add_argument(
        "--host", default="127.0.0.1", help="interface to bind (0.0.0.0: reachable from other hosts)"
    )
    p.add_argument("--port", type=int, default=8765, help="port to serve on (0: a free one)")
    p.add_argument("--token", help=f"require this bearer token for the page's data (default: ${TOKEN_ENV})")
    p.set_defaults(fn=cmd_dashboard)
    r = sub.add_parser("report", help="write a run directory's report.html again from its files")
    r.add_argument("run_dir", help="the run directory")
    r.set_defaults(fn=cmd_report)
