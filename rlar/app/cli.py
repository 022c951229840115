"""The ``rlar`` command. Command groups live in :mod:`rlar.app.commands`; each imports what it needs lazily,
so ``rlar --help`` is instant."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from rlar.app.commands import MODULES

# bus.client, rlar.config and rlar.process are imported where used: a command's implementation loads when the
# command runs, so rlar --help stays instant.


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="rlar", description="Multi-task GRPO with agentic rewards over NATS.")
    ap.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING or ERROR")
    sub = ap.add_subparsers(dest="command", required=True)
    bench_parser = sub.add_parser("bench", help="benchmarks (JSON on the last line)")
    bench = bench_parser.add_subparsers(dest="bench", required=True)
    for name in MODULES:
        importlib.import_module(name).register(sub, bench)
    _state_defaults(ap)
    return ap


def _state_defaults(parser: argparse.ArgumentParser) -> None:
    """Append ``(default: X)`` to every flag's help that does not state its default itself."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _state_defaults(sub)
        elif (
            action.option_strings
            and action.help
            and action.default not in (None, False, argparse.SUPPRESS)
            and "default" not in action.help
        ):
            shown = (
                ", ".join(map(str, action.default)) or "none"
                if isinstance(action.default, list)
                else action.default
            )
            action.help += f" (default: {shown})".replace("%", "%%")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    from bus.client import BusUnreachable
    from rlar.config import ConfigError

    try:
        code = int(args.fn(args) or 0)
    except (BusUnreachable, ConfigError) as exc:
        for line in str(exc).splitlines() or [type(exc).__name__]:
            print(f"rlar: error: {line}", file=sys.stderr)
        code = 1
    if argv is None:  # the process is ours: skip the interpreter's slow teardown (rlar.process)
        from rlar.process import exit_now

        exit_now(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
