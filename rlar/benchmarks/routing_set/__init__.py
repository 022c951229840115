"""The routing labelled set (``data/routing/labelled.jsonl``): queries in public benchmarks' own shapes,
each labelled with the built-in reward tools that fit it.

Run ``python -m rlar.benchmarks.routing_set`` to rewrite the file (deterministic). Every
benchmark format is one ``type`` (the unit ``rlar bench routing`` leaves out together); its records are
spread over a few task names and descriptions a user might write, none of which uses the tools' declared
task-type vocabulary. The router never reads ``type``, ``id`` or ``acceptable``. Label policy: see
``data/routing/README.md``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from rlar.benchmarks.routing_set import answers, formats, maths, measured, open_ended, programs, texts

GENERATORS = [
    *maths.ALL,
    *programs.ALL,
    *answers.ALL,
    *texts.ALL,
    *open_ended.ALL,
    *formats.ALL,
    *measured.ALL,
]
OUT = Path(__file__).resolve().parents[3] / "data" / "routing" / "labelled.jsonl"


def build() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for gen in GENERATORS:
        rows.extend(gen(random.Random(f"routing-set/{gen.__name__}")))
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate record ids")
    return rows


def render(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in rows)
