"""``rlar export RUN --out DIR``: a run's policy as a Hugging Face checkpoint (see :mod:`rlar.app.export`)."""

from __future__ import annotations

import argparse
import json
from typing import Any

# rlar.app is imported where used: a command's implementation loads when the command runs, so rlar --help
# stays instant.


def cmd_export(a: argparse.Namespace) -> int:
    from rlar.app.export import export_run

    doc = export_run(a.run, a.out, version=a.version)
    print(f"exported {a.run} weights v{doc['version']} → {doc['out']}: {', '.join(doc['files'])}")
    print(json.dumps(doc), flush=True)
    return 0


def register(sub: Any, bench: Any) -> None:
    p = sub.add_parser(
        "export",
        help="write a run's trained policy as a Hugging Face checkpoint (transformers / vLLM load it)",
        description="Config, tokenizer, model.safetensors and a model card with the training summary.",
    )
    p.add_argument("run", help="the run directory (runs/<name>-<time>)")
    p.add_argument("--out", required=True, help="output directory; must not exist or be empty (required)")
    p.add_argument("--version", type=int, help="weights version to export (default: the newest kept)")
    p.set_defaults(fn=cmd_export)
