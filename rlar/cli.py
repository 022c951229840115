"""The ``rlar`` command. Command groups live in :mod:`rlar.commands`; each imports what it needs lazily,
so ``rlar --help`` is instant."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from rlar.commands import MODULES


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="rlar", description="Multi-task GRPO with agentic rewards over NATS.")
    ap.add_argument("--log-level", default="INFO")
    sub = ap.add_subparsers(dest="command", required=True)
    bench_parser = sub.add_parser("bench", help="benchmarks (JSON on the last line)")
    bench = bench_parser.add_subparsers(dest="bench", required=True)
    for name in MODULES:
        importlib.import_module(name).register(sub, bench)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    from bus.client import BusUnreachable
    from rlar.config import ConfigError

    try:
        return int(args.fn(args) or 0)
    except (BusUnreachable, ConfigError) as exc:
        print(f"rlar: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
