"""A rollout's side of ``rlar bench weight-sync``, in its own process: hear each weights announcement on the
bus (but a broadcast's), fetch and verify that version (:func:`rlar.wire.weight_sync.fetch_weights`),
print one JSON line.

    python -m rlar.benchmarks.weight_reader --url nats://127.0.0.1:4222

Prints ``{"ready": true}`` once subscribed, then per version ``{"version", "bytes", "sha256", "heard",
"at"}`` (``heard``/``at``: wall-clock times of the announcement's arrival and of the verified bytes), or
``{"version", "error"}``. Runs until killed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any

from bus import subjects
from bus.client import Bus
from bus.codec import decode
from bus.config import NatsConfig
from bus.messages import WeightsAnnounce
from rlar.policy.broadcast import SCHEME as BROADCAST_SCHEME
from rlar.wire.weight_sync import fetch_weights


async def _run(url: str) -> None:
    bus = await Bus.connect(NatsConfig(url=url), name="bench-weight-reader")

    async def on_announce(msg: Any) -> None:
        heard = time.time()
        ann = decode(msg.data, WeightsAnnounce)
        if ann.uri.startswith(BROADCAST_SCHEME):
            return  # the bench's broadcast receiver takes those; this reader is not in the group
        try:
            data = await fetch_weights(bus, ann)
            assert isinstance(data, bytes)
            line: dict[str, Any] = {
                "version": ann.version,
                "bytes": len(data),
                "sha256": ann.sha256,
                "heard": heard,
                "at": time.time(),
            }
        except Exception as exc:
            line = {"version": ann.version, "error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()

    await bus.nc.subscribe(subjects.WEIGHTS, cb=on_announce)
    await bus.nc.flush()
    sys.stdout.write(json.dumps({"ready": True}) + "\n")
    sys.stdout.flush()
    await asyncio.Event().wait()


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument("--url", required=True, help="the nats-server to read from")
    asyncio.run(_run(ap.parse_args(argv).url))


if __name__ == "__main__":
    main()
