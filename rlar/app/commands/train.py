"""``rlar train``: the main job."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rlar.app.commands.observe import add_dashboard_flags, dashboard_options

# rlar.app is imported where used: a command's implementation loads when the command runs, so rlar --help
# stays instant.


def cmd_train(a: argparse.Namespace) -> int:

    from rlar.app.train import NoSuchRun, train

    try:
        return train(a.config, overrides=a.set, run_dir=a.run_dir, dashboard=dashboard_options(a))
    except NoSuchRun as exc:  # a usage error, like argparse's: exit 2
        print(f"rlar: error: {exc}", file=sys.stderr)
        return 2


def register(sub: Any, bench: Any) -> None:
    p = sub.add_parser(
        "train",
        help="run GRPO training: bus + all actors + progress, per the config",
        description="Validate the config and every task's data, then run the bus, every actor, a progress bar, "
        "reward curves and summary.json. Exit code 0: max_steps reached or time budget spent with updates; "
        "1: config problem, crash loop, or no update; 2: --run-dir without --config names no run; 130: interrupted.",
    )
    p.add_argument(
        "--config",
        default=None,
        help="run config TOML; relative paths in it resolve against its directory (default: the run's own "
        "config.toml when --run-dir names an existing run; without --run-dir, the shipped "
        "deploy/configs/demo.toml)",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key, e.g. learner.max_steps=50 (repeatable; validated like the file; default: none)",
    )
    p.add_argument(
        "--run-dir",
        help="run directory: an existing run resumes with its own config; a new one needs --config (without "
        "it, a directory that holds no run is refused, exit 2, naming the closest runs) (default: a fresh "
        "runs/<name>-<time>)",
    )
    add_dashboard_flags(p)
    p.set_defaults(fn=cmd_train)
