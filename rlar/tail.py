"""``rlar tail``: print live bus traffic, decoded.

Each line: time, subject, message type and the key fields; ``--json`` prints one JSON object per line
with the full decoded message. Payloads that do not decode are shown as such, with the reason.
"""

from __future__ import annotations

import asyncio
import base64
import json
import signal
import sys
import time
from typing import Any

from bus.client import Bus
from bus.codec import TYPE_KEY, VERSION_KEY, describe
from bus.config import NatsConfig

# Fields worth a glance, in the order shown, when a message has them.
KEY_FIELDS = (
    "actor", "instance", "state", "task", "prompt_id", "sample_id", "index", "tool", "kind", "status",
    "score", "policy_version", "version", "step", "signature", "backend", "reason", "message", "subject",
)  # fmt: skip


def _jsonable(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"bytes_b64": base64.b64encode(value).decode()}
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def _short(value: Any, width: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(_jsonable(value))
    text = text.replace("\n", "\\n")
    return text if len(text) <= width else text[: width - 1] + "…"


def format_line(subject: str, data: bytes, *, as_json: bool, at: float | None = None) -> str:
    at = time.time() if at is None else at
    type_name, payload, error = describe(data)
    if as_json:
        record: dict[str, Any] = {"time": at, "subject": subject, "type": type_name}
        if payload is not None:
            record["message"] = _jsonable(
                {k: v for k, v in payload.items() if k not in (TYPE_KEY, VERSION_KEY)}
            )
        if error is not None:
            record["error"] = error
            if payload is None:
                record["size"] = len(data)
        return json.dumps(record, ensure_ascii=False)
    stamp = time.strftime("%H:%M:%S", time.localtime(at)) + f".{int(at * 1000) % 1000:03d}"
    if payload is None:
        return f"{stamp} {subject} <undecodable: {error}> {len(data)} bytes"
    fields = " ".join(
        f"{k}={_short(payload[k])}" for k in KEY_FIELDS if k in payload and payload[k] not in ("", None)
    )
    suffix = f" <invalid: {error}>" if error else ""
    return f"{stamp} {subject} {type_name} {fields}{suffix}"


async def tail(url: str, pattern: str, *, as_json: bool, count: int | None, timeout_s: float | None) -> int:
    bus = await Bus.connect(NatsConfig(url=url, initial_attempts=1), name="rlar-tail")
    seen = 0
    done = asyncio.Event()

    async def on_msg(raw: Any) -> None:
        nonlocal seen
        sys.stdout.write(format_line(raw.subject, raw.data, as_json=as_json) + "\n")
        sys.stdout.flush()
        seen += 1
        if count is not None and seen >= count:
            done.set()

    await bus.nc.subscribe(pattern, cb=on_msg)
    # Stop on Ctrl-C and SIGTERM explicitly: a process started from a script's background job inherits SIGINT
    # ignored, and Python then raises no KeyboardInterrupt, so `kill -INT` would not end it.
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, done.set)
    try:
        if timeout_s is not None:
            await asyncio.wait_for(done.wait(), timeout_s)
        else:
            await done.wait()
    except TimeoutError:
        pass
    finally:
        await bus.close()
    return 0
