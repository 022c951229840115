"""``rlar tail``: print live bus traffic, decoded.

Each line: time, subject, message type and the key fields; a message with scored responses (a
``RewardGroup`` on ``rlar.rewards.<task>``) also shows each response's index, status, score and reason,
compactly (``items=[0 ok 1.00 "capitalised correctly", 1 error "ValueError: boom", +3 more]``), after a
count by status. ``--json`` prints one JSON object per line with the full decoded message. Payloads that do
not decode are shown as such, with the reason.
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
    "actor",
    "instance",
    "state",
    "task",
    "prompt_id",
    "sample_id",
    "index",
    "tool",
    "tool_version",
    "kind",
    "status",
    "score",
    "policy_version",
    "version",
    "step",
    "signature",
    "backend",
    "reason",
    "message",
    "subject",
)


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


ITEMS_SHOWN = 6
"""Scored responses shown per line (the rest are counted: ``+N more``; ``--json`` has them all)."""


def scored_items(items: list[Any], *, shown: int = ITEMS_SHOWN, reason_width: int = 36) -> str:
    """``ok 6 error 2 items=[0 ok 1.00 "reason", 1 error "why", …]``: responses of a message by status, then
    each one's index, status, score and the first line of its reason; '' when ``items`` holds no scored
    responses."""
    rows = [it for it in items if isinstance(it, dict) and "status" in it]
    if not rows:
        return ""
    counts: dict[str, int] = {}
    for it in rows:
        counts[str(it["status"])] = counts.get(str(it["status"]), 0) + 1
    parts = []
    for it in rows[:shown]:
        text = f"{it.get('index', '?')} {it['status']}"
        if isinstance(it.get("score"), int | float):
            text += f" {it['score']:.2f}"
        if reason := str(it.get("reason") or "").strip():
            first = reason.splitlines()[0]  # a traceback's first line says what failed
            text += f" {json.dumps(_short(first, reason_width), ensure_ascii=False)}"
        parts.append(text)
    if len(rows) > shown:
        parts.append(f"+{len(rows) - shown} more")
    return " ".join(f"{k} {v}" for k, v in counts.items()) + " items=[" + ", ".join(parts) + "]"


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
    if isinstance(payload.get("items"), list) and (scored := scored_items(payload["items"])):
        fields += " " + scored
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
