"""Weight-sync time by model size and path: filesystem (shared disk) vs NATS object store.

For each size (MB of float32 tensors, split in 4 MB tensors like a model's layers) and path, the learner's
half — :func:`rlar.policy.sync.publish_weights` (serialise to safetensors, store, announce on
``rlar.weights``) — and the rollout's half — :func:`rlar.policy.sync.fetch_weights` (read, verify sha256)
— are timed on an embedded nats-server. Loading into an engine is not included (~10 ms for the tiny demo
policy; a model's own load time otherwise). Prints one line per case, then one JSON line (last).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from bus.client import Bus
from bus.config import NatsConfig
from bus.embedded import serve
from bus.topology import TopologyConfig, declare, ensure_topology
from rlar.policy.sync import fetch_weights, publish_weights


def _tensors(mb: float) -> list[tuple[str, Any]]:
    import torch

    n = max(1, int(mb * 2**20 / 4))
    chunk = 2**20  # 4 MB of float32
    out, i = [], 0
    while n > 0:
        k = min(chunk, n)
        out.append((f"layers.{i}.weight", torch.randn(k)))
        n -= k
        i += 1
    return out


async def _case(bus: Bus, root: Path, mb: float, mode: str, version: int) -> dict[str, Any]:
    tensors = _tensors(mb)
    t0 = time.perf_counter()
    ann = await publish_weights(bus, tensors, version=version, step=version, mode=mode,  # type: ignore[arg-type]
                                weights_dir=root / "weights")  # fmt: skip
    t1 = time.perf_counter()
    data = await fetch_weights(bus, ann)
    t2 = time.perf_counter()
    assert len(data) == ann.size_bytes
    return {"mb": mb, "path": mode, "publish_s": round(t1 - t0, 4), "fetch_s": round(t2 - t1, 4),
            "total_s": round(t2 - t0, 4), "mb_per_s": round(ann.size_bytes / 2**20 / (t2 - t0), 1)}  # fmt: skip


async def _run(url: str, root: Path, sizes: list[float]) -> list[dict[str, Any]]:
    bus = await Bus.connect(NatsConfig(url=url), name="bench-weight-sync")
    await ensure_topology(bus.js, declare(TopologyConfig()))
    rows, v = [], 1
    for mb in sizes:
        for mode in ("filesystem", "objstore"):
            rows.append(await _case(bus, root, mb, mode, v))
            v += 1
            print(json.dumps(rows[-1]), flush=True)
    await bus.close()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--sizes", default="3,12,50", help="MB per model, comma-separated (3 MB ~ the demo policy)"
    )
    a = ap.parse_args()
    sizes = [float(x) for x in a.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="rlar-bench-wsync-") as tmp, serve("embedded", tmp) as url:
        rows = asyncio.run(_run(url, Path(tmp), sizes))
    print(json.dumps({"bench": "weight_sync", "cases": rows}), flush=True)


if __name__ == "__main__":
    main()
