"""Overhead of experiment tracking on a training step: the same run with and without ``[train] report_to``.

Runs ``rlar train --config CONFIG --set learner.max_steps=STEPS`` once per arm and repeat, alternating the
arms (A B A B …) so the machine's background load falls on both alike: arm ``off`` sets
``train.report_to=[]``, each other arm a list of backends (default: ``tensorboard`` — the default — and
``tensorboard,wandb,mlflow``). Per run it reads the learner's ``metrics.jsonl``: the time between learner
steps (``t_end`` to ``t_end``, the first ``--skip`` steps dropped: warm-up) and the learner update time
(``step_s``), and from ``observed.json`` the CPU seconds the ``rlar train`` process itself used (feed,
tracking, progress bar, supervisor). Prints one line per run, then one JSON line: per arm the median step
interval and update time over its runs, and their ratio to ``off``.

    rlar bench tracking-overhead --config deploy/configs/demo.toml --steps 30 --repeats 2

``--hooks``: instead, the cost of the actors' Prometheus hooks (:class:`rlar.observe.prom.ActorMetrics`) on
the per-sample message path of ``rlar bench bus-overhead`` (rollout publish, reward worker, learner acks on real
durables, one process, an embedded nats-server): the same path with the hooks off (no ``[metrics] port``,
the default) and on (every pulled message, reward result, sample and learner step reported), alternated
``--repeats`` times; prints the median ms per sample of each (wall, and CPU of the bench process — where the
hooks run; it is less disturbed by other load on the machine) and their ratio.

    rlar bench tracking-overhead --hooks --samples 4096 --repeats 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

from bus.embedded import serve
from rlar.benchmarks.bus_overhead import _bus_path
from rlar.observe.prom import ActorMetrics


def _run(config: str, steps: int, report_to: list[str], out: Path, extra: list[str]) -> dict[str, Any]:
    sets = [f"learner.max_steps={steps}", f"train.report_to={json.dumps(report_to)}", *extra]
    cmd = [
        sys.executable,
        "-m",
        "rlar.app.cli",
        "--log-level",
        "WARNING",
        "train",
        "--config",
        config,
        "--run-dir",
        str(out),
    ] + [x for s in sets for x in ("--set", s)]
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.time() - t0
    if proc.returncode != 0:
        raise SystemExit(f"rlar train failed ({proc.returncode}): {proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    records: dict[int, dict[str, Any]] = {}
    for line in (out / "metrics.jsonl").read_text().splitlines():
        r = json.loads(line)
        records[int(r["step"])] = r
    observed = json.loads((out / "observed.json").read_text())
    return {
        "records": [records[s] for s in sorted(records)],
        "wall_s": wall,
        "driver_cpu_s": observed.get("driver_cpu_s"),
    }


def _hooks(samples: int, repeats: int) -> None:
    g, batch_prompts = 8, 8
    n_prompts = max(1, samples // g)
    per: dict[str, dict[str, list[float]]] = {"off": {"wall": [], "cpu": []}, "on": {"wall": [], "cpu": []}}
    with tempfile.TemporaryDirectory(prefix="rlar-bench-hooks-") as tmp, serve("embedded", tmp) as url:
        for rep in range(repeats):
            for arm in ("off", "on"):
                metrics = ActorMetrics("bench") if arm == "on" else None
                cpu0 = time.process_time()
                wall = asyncio.run(_bus_path(url, n_prompts, g, batch_prompts, metrics))
                cpu = time.process_time() - cpu0
                per[arm]["wall"].append(1000 * wall / (n_prompts * g))
                per[arm]["cpu"].append(1000 * cpu / (n_prompts * g))
                print(
                    f"{arm:>3} #{rep}: {per[arm]['wall'][-1]:.4f} ms/sample wall, {per[arm]['cpu'][-1]:.4f} ms/sample"
                    " CPU of this process",
                    flush=True,
                )
    med = {arm: {k: statistics.median(v) for k, v in d.items()} for arm, d in per.items()}
    print(
        json.dumps(
            {
                "bench": "metric_hooks",
                "samples": n_prompts * g,
                "repeats": repeats,
                "off_ms_per_sample": {k: round(v, 4) for k, v in med["off"].items()},
                "on_ms_per_sample": {k: round(v, 4) for k, v in med["on"].items()},
                "on_ratio": {k: round(med["on"][k] / med["off"][k], 3) for k in ("wall", "cpu")},
                "runs": per,
            }
        )
    )


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    ap = argparse.ArgumentParser(
        prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--config", default="deploy/configs/demo.toml")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--skip", type=int, default=5, help="first learner steps left out (warm-up)")
    ap.add_argument(
        "--arms",
        default="tensorboard;tensorboard,wandb,mlflow",
        help="';'-separated backend lists compared with no tracking",
    )
    ap.add_argument("--set", action="append", default=[], help="more config overrides for every run")
    ap.add_argument("--hooks", action="store_true", help="measure the actors' Prometheus hooks instead")
    ap.add_argument("--samples", type=int, default=4096, help="--hooks: samples per run")
    a = ap.parse_args(argv)
    if a.hooks:
        _hooks(a.samples, a.repeats)
        return
    arms: dict[str, list[str]] = {"off": []}
    arms.update({s: s.split(",") for s in a.arms.split(";") if s})
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in arms}
    with tempfile.TemporaryDirectory(prefix="rlar-tracking-bench-") as tmp:
        for rep in range(a.repeats):
            for name, report_to in arms.items():
                out = Path(tmp) / f"{rep}-{name.replace(',', '+')}"
                r = _run(a.config, a.steps, report_to, out, a.set)
                recs = r["records"][a.skip :]
                gaps = [b["t_end"] - x["t_end"] for x, b in pairwise(recs)]
                upd = [x["step_s"] for x in recs]
                row = {
                    "arm": name,
                    "repeat": rep,
                    "steps": len(r["records"]),
                    "interval_s": statistics.median(gaps),
                    "update_s": statistics.median(upd),
                    "driver_cpu_s": r["driver_cpu_s"],
                    "wall_s": round(r["wall_s"], 1),
                }
                runs[name].append(row)
                print(
                    f"{name:>28} #{rep}: step interval {row['interval_s']:.3f} s, update {row['update_s']:.3f} s,"
                    f" train-process CPU {row['driver_cpu_s']} s, wall {row['wall_s']} s",
                    flush=True,
                )
    summary: dict[str, Any] = {}
    for name, rows in runs.items():
        summary[name] = {
            k: round(statistics.median(r[k] for r in rows), 4) for k in ("interval_s", "update_s")
        }
        cpu = [r["driver_cpu_s"] for r in rows if r["driver_cpu_s"] is not None]
        summary[name]["driver_cpu_s"] = round(statistics.median(cpu), 2) if cpu else None
    for name in arms:
        if name != "off":
            summary[name]["interval_ratio"] = round(
                summary[name]["interval_s"] / summary["off"]["interval_s"], 3
            )
            summary[name]["update_ratio"] = round(summary[name]["update_s"] / summary["off"]["update_s"], 3)
    print(
        json.dumps(
            {
                "config": a.config,
                "steps": a.steps,
                "repeats": a.repeats,
                "skip": a.skip,
                "arms": summary,
                "runs": runs,
            }
        )
    )


if __name__ == "__main__":
    main()
