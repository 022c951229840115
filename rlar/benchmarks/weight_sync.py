"""Weight-sync speed per route and size: filesystem, NATS object store, torch.distributed broadcast, HTTP.

For each size (MB of tensors in 4 MB pieces, like a model's layers; float32, or bfloat16 with
``--dtype bf16``) and route, one version goes from the learner's side to a rollout's side on this machine:

- ``filesystem``, ``objstore`` and ``http``: :func:`rlar.wire.weight_sync.publish_weights` here (serialise to
  safetensors, store, announce on ``rlar.weights``) and :func:`rlar.wire.weight_sync.fetch_weights` (read, check
  size and sha256) in a reader *process* (``python -m rlar.benchmarks.weight_reader``) that starts on the
  announcement, as a rollout does, timed from the start of the publish until the reader has verified bytes, on
  an embedded nats-server (``objstore`` announces before it writes, so its reader reads while the learner writes;
  ``filesystem`` announces a complete file; ``http`` announces once the learner's weight server holds the
  version — a :class:`~rlar.policy.httpweights.WeightServer` in this process, as in the learner — and the
  reader pulls it over a TCP connection);
- ``broadcast``: the learner's :class:`~rlar.policy.broadcast.WeightSender` (gloo on CPU) sends the tensors to
  a receiver *process* (``python -m rlar.policy.broadcast``), timed from the start of the send until the
  receiver has every buffer (its clock and ours are the same machine's); the announcement is published too.

Loading into an engine is not included (~10 ms for the tiny demo policy; a model's own load time otherwise).
MB/s = the bytes moved (the blob, or the tensors on the wire) / that time. Prints one JSON line per case, then
one JSON line with all of them (last). The 1.2 GB case needs ~6 GB of free memory.

    rlar bench weight-sync --sizes 12,120,1200
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bus.client import Bus
from bus.config import NatsConfig
from bus.embedded import free_port, serve
from bus.topology import TopologyConfig, declare, ensure_topology
from rlar.policy.broadcast import BroadcastConfig, WeightSender
from rlar.policy.httpweights import HttpWeightsConfig, WeightServer
from rlar.wire.weight_sync import publish_weights

# torch is imported where used: heavy and optional (the CLI starts without it).

ROUTES = ("filesystem", "objstore", "broadcast", "http")


def _tensors(mb: float, dtype: str) -> list[tuple[str, Any]]:
    import torch

    dt = torch.bfloat16 if dtype == "bf16" else torch.float32
    n = max(1, int(mb * 2**20 / dt.itemsize))
    chunk = 4 * 2**20 // dt.itemsize
    out, i = [], 0
    while n > 0:
        k = min(chunk, n)
        out.append((f"layers.{i}.weight", torch.randn(k).to(dt)))
        n -= k
        i += 1
    return out


async def _bytes_case(
    bus: Bus,
    root: Path,
    tensors: list[Any],
    mode: str,
    version: int,
    reader: subprocess.Popen[str],
    server: WeightServer | None = None,
) -> dict[str, Any]:
    assert reader.stdout is not None
    t0 = time.time()
    ann = await publish_weights(
        bus,
        tensors,
        version=version,
        step=version,
        mode=mode,  # type: ignore[arg-type]
        weights_dir=root / "weights",
        server=server,
    )
    t1 = time.time()
    got = json.loads(await asyncio.to_thread(reader.stdout.readline))
    if "error" in got or got["version"] != version:
        raise RuntimeError(f"the reader did not get v{version}: {got}")
    assert got["bytes"] == ann.size_bytes and got["sha256"] == ann.sha256
    total = max(got["at"], t1) - t0
    return {
        "publish_s": round(t1 - t0, 4),
        "heard_s": round(got["heard"] - t0, 4),
        "fetch_s": round(max(0.0, got["at"] - t1), 4),
        "total_s": round(total, 4),
        "bytes": ann.size_bytes,
    }


async def _broadcast_case(
    bus: Bus, root: Path, tensors: list[Any], version: int, sender: WeightSender, rx: subprocess.Popen[str]
) -> dict[str, Any]:
    assert rx.stdout is not None
    t0 = time.time()
    ann = await publish_weights(
        bus,
        tensors,
        version=version,
        step=version,
        mode="broadcast",
        weights_dir=root / "weights",
        sender=sender,
    )
    t1 = time.time()
    if not ann.uri.startswith("broadcast://"):
        raise RuntimeError(f"the broadcast group broke; v{version} went by {ann.uri}")
    got = json.loads(await asyncio.to_thread(rx.stdout.readline))
    assert got["version"] == version and got["bytes"] == ann.size_bytes
    total = max(got["at"], t1) - t0
    return {
        "publish_s": round(t1 - t0, 4),
        "fetch_s": round(max(0.0, got["at"] - t1), 4),
        "total_s": round(total, 4),
        "bytes": ann.size_bytes,
    }


async def _run(
    url: str, root: Path, sizes: list[float], routes: list[str], dtype: str
) -> list[dict[str, Any]]:
    bus = await Bus.connect(NatsConfig(url=url), name="bench-weight-sync")
    await ensure_topology(bus.js, declare(TopologyConfig()))
    sender = rx = reader = None
    server = WeightServer(HttpWeightsConfig()) if "http" in routes else None
    if set(routes) - {"broadcast"}:
        reader = subprocess.Popen(
            [sys.executable, "-m", "rlar.benchmarks.weight_reader", "--url", url],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert reader.stdout is not None and json.loads(reader.stdout.readline()) == {"ready": True}
    if "broadcast" in routes:
        address = f"127.0.0.1:{free_port()}"
        sender = WeightSender(BroadcastConfig(address=address, receivers=1, timeout_s=300))
        rx = subprocess.Popen(
            [sys.executable, "-m", "rlar.policy.broadcast", "--address", address, "--timeout-s", "300"],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert rx.stdout is not None and json.loads(rx.stdout.readline()) == {"ready": True}
        if not await asyncio.to_thread(sender.wait_ready, 120):
            raise RuntimeError("the broadcast group did not form")
    rows, v = [], 1
    try:
        for mb in sizes:
            tensors = _tensors(mb, dtype)
            for route in routes:
                if route == "broadcast":
                    assert sender is not None and rx is not None
                    case = await _broadcast_case(bus, root, tensors, v, sender, rx)
                else:
                    assert reader is not None
                    case = await _bytes_case(bus, root, tensors, route, v, reader, server)
                row = {
                    "mb": mb,
                    "route": route,
                    "dtype": dtype,
                    **case,
                    "mb_per_s": round(case["bytes"] / 2**20 / case["total_s"], 1),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
                v += 1
                gc.collect()
            del tensors
            gc.collect()
    finally:
        for proc in (rx, reader):
            if proc is not None:
                proc.kill()
                proc.wait()
        if server is not None:
            server.close()
        await bus.close()
    return rows


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="12,120,1200", help="MB per version, comma-separated")
    ap.add_argument(
        "--routes", default=",".join(ROUTES), help=f"comma-separated subset of {','.join(ROUTES)}"
    )
    ap.add_argument(
        "--dtype", default="fp32", choices=["fp32", "bf16"], help="tensor dtype (bf16: a bf16 model)"
    )
    a = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    sizes = [float(x) for x in a.sizes.split(",")]
    routes = [r for r in a.routes.split(",") if r]
    if bad := [r for r in routes if r not in ROUTES]:
        raise SystemExit(f"unknown routes {bad}; choose from {ROUTES}")
    with tempfile.TemporaryDirectory(prefix="rlar-bench-wsync-") as tmp, serve("embedded", tmp) as url:
        rows = asyncio.run(_run(url, Path(tmp), sizes, routes, a.dtype))
    print(json.dumps({"bench": "weight_sync", "dtype": a.dtype, "cases": rows}), flush=True)


if __name__ == "__main__":
    main()
