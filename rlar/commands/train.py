"""``rlar train``: the main job."""

from __future__ import annotations

import argparse
from typing import Any


def cmd_train(a: argparse.Namespace) -> int:
    from rlar.train import train

    return train(a.config, overrides=a.set, run_dir=a.run_dir)


def register(sub: Any, bench: Any) -> None:
    p = sub.add_parser("train", help="run GRPO training: bus + all actors + progress, per the config")
    p.add_argument("--config", default="deploy/configs/demo.toml")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    p.add_argument("--run-dir", help="use (or resume) this run directory instead of a fresh one")
    p.set_defaults(fn=cmd_train)
