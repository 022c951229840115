"""Per-sample deadlines of a user's reward function that hangs: wall time of ``--samples`` samples, each
sleeping 30 s, under a ``--deadline`` through ``ToolExecutor``, for each ``--concurrency`` (the tool's own
pool of that many killable worker processes; 1 is the one-worker path every sample used to take in sequence).
The workers are started before the clock (``prepare``), so the figure is deadlines and respawns, not start-up.
Prints one line per concurrency, then the whole result as one JSON line (last)."""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
import uuid
from pathlib import Path

from rlar.tools import ToolExecutor, ToolInput
from rlar.tools.pyfunc import PythonToolConfig, python_tool_spec

SOURCE = "import time\n\n\ndef sleeper(query, response, reference, metadata):\n    time.sleep(30)\n    return 1.0\n"


async def measure(samples: int, deadline_s: float, concurrency: int) -> dict[str, float | int]:
    with tempfile.TemporaryDirectory() as tmp:
        module = f"bench_sleeper_{uuid.uuid4().hex[:8]}"
        (Path(tmp) / f"{module}.py").write_text(SOURCE)
        cfg = PythonToolConfig(
            name="sleeper",
            python=f"{module}:sleeper",
            description="sleeps 30 s",
            path=tmp,
            deadline_s=deadline_s,
            concurrency=concurrency,
        )
        spec = python_tool_spec(cfg)
        async with ToolExecutor(timeout_s=deadline_s, allowed_prefixes=["rlar.", module]) as ex:
            await ex.prepare(spec)
            t0 = time.perf_counter()
            got = await ex.score_batch(spec, [ToolInput("q", f"r{i}") for i in range(samples)])
            wall = time.perf_counter() - t0
    timeouts = sum(r.reason == f"timeout after {deadline_s:g}s" for r in got)
    return {
        "concurrency": concurrency,
        "wall_s": round(wall, 2),
        "timeouts": timeouts,
        "deadlines_in_sequence_s": samples * deadline_s,
    }


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--deadline", type=float, default=2.0, help="per-sample deadline (s)")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[8, 4, 1])
    a = ap.parse_args(argv)
    rows = [asyncio.run(measure(a.samples, a.deadline, c)) for c in a.concurrency]
    for r in rows:
        print(
            f"concurrency {r['concurrency']}: {a.samples} hung samples x {a.deadline:g}s deadline in "
            f"{r['wall_s']}s ({r['timeouts']} timeouts)"
        )
    print(
        json.dumps(
            {"bench": "reward_deadlines", "samples": a.samples, "deadline_s": a.deadline, "rows": rows}
        )
    )


if __name__ == "__main__":
    main()
