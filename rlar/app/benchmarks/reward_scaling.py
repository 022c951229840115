"""Reward-worker scaling: an I/O-bound tool (LLM judge on a fixed-latency local endpoint) served by 1, 2, 4
and 8 reward-worker processes. Runs :func:`rlar.app.benchmarks.reward.run` (``rlar bench reward``, which also
measures sandbox and rule-tool rates) and prints the scaling figures, then the whole document as one JSON line
(last). ``--quick``: 1 and 2 workers only."""

from __future__ import annotations

import argparse
import asyncio
import json

from rlar.app.benchmarks.reward import run


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--latency", type=float, default=0.05, help="judge endpoint latency (s)")
    ap.add_argument("--concurrency", type=int, default=2, help="judge calls in flight per worker")
    a = ap.parse_args(argv)
    doc = asyncio.run(run(quick=a.quick, judge_latency_s=a.latency, judge_concurrency=a.concurrency))
    for workers, rate in doc["judge_rewards_per_s"].items():
        print(
            f"{workers} worker(s): {rate} rewards/s ({doc['judge_scaling_vs_linear'][workers]:.2f} of linear)"
        )
    print(json.dumps({"bench": "reward_scaling", **doc}), flush=True)


if __name__ == "__main__":
    main()
