"""``python -m rlar.benchmarks.routing_set [PATH]``: write the routing labelled set (default data/routing/labelled.jsonl)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from rlar.benchmarks.routing_set import OUT, build, render

rows = build()
out = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
out.parent.mkdir(parents=True, exist_ok=True)
out.write_text(render(rows), encoding="utf-8")
types = Counter(r["type"] for r in rows)
print(f"{len(rows)} records, {len(types)} types -> {out}", file=sys.stderr)
