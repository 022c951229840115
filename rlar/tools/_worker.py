"""The tool worker process behind ``ToolExecutor`` (run as ``python -m rlar.tools._worker``).

Protocol: frames of a 4-byte big-endian length and a msgpack map, over stdin (requests) and the process's
original stdout (replies). Before anything else the worker moves fd 1 onto stderr and fd 0 onto /dev/null,
so a tool's prints or ``input()`` cannot corrupt or steal protocol bytes.

1. parent → ``{"op": "init", "sys_path": [...], "allowed_prefixes": [...] | None}``
2. parent → ``{"op": "score", "id": n, "spec": {...}, "inputs": [{...}], "batched": bool}``
   worker → ``{"id": n, "ready": true}`` once the tool is built (or ``{"id": n, "load_error": "..."}``),
   then for batched tools one ``{"id": n, "results": [...]}``, else one ``{"id": n, "i": k, "result": {...}}``
   per input, in order — so the parent can hold a deadline per input and know which one hung.

The worker runs every tool call in its main thread (math-verify's signal-based limits need that) and
exits on EOF. On Linux it asks the kernel to kill it when its parent dies, so a hung tool cannot outlive
the executor.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import signal
import struct
import sys
from collections import OrderedDict
from typing import Any, BinaryIO

import msgpack

from rlar.tools.base import ToolInput, ToolResult, ToolSpec, make_tool

_HEADER = struct.Struct(">I")
_MAX_TOOLS = 8


def _packable(obj: Any) -> Any:
    # numpy / torch scalars and other odd values a tool may put in details.
    item = getattr(obj, "item", None)
    if callable(item):
        try:
            return item()
        except (TypeError, ValueError):
            pass
    if isinstance(obj, tuple | set | frozenset):
        return list(obj)
    return repr(obj)


def write_frame(out: BinaryIO, obj: Any) -> None:

    data = msgpack.packb(obj, use_bin_type=True, default=_packable)
    out.write(_HEADER.pack(len(data)) + data)
    out.flush()


def read_frame(inp: BinaryIO) -> Any | None:

    header = inp.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    data = inp.read(size)
    if len(data) < size:
        return None
    return msgpack.unpackb(data, raw=False, strict_map_key=False)


def _die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except OSError:
        pass


def main() -> None:
    _die_with_parent()
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)

    init = read_frame(proto_in)
    if init is None:
        return
    # Entries the parent has and we lack go last: a parent that imported setuptools carries its _vendor
    # dir (old typing_extensions and friends), which must never shadow the real packages here.
    for p in init.get("sys_path") or []:
        if p not in sys.path:
            sys.path.append(p)
    allowed = init.get("allowed_prefixes")

    tools: OrderedDict[str, Any] = OrderedDict()
    loop = asyncio.new_event_loop()

    def send(obj: dict[str, Any]) -> None:
        try:
            write_frame(proto_out, obj)
        except (TypeError, ValueError, OverflowError) as exc:
            # Unpackable content despite the default hook (e.g. a huge int): report it as the tool's error.
            bad = ToolResult.error(f"unserialisable result: {exc}"[:500]).to_dict()
            if "result" in obj:
                obj = {**obj, "result": bad}
            elif "results" in obj:
                obj = {**obj, "results": [bad] * len(obj["results"])}
            write_frame(proto_out, obj)

    while True:
        req = read_frame(proto_in)
        if req is None:
            break
        rid = req.get("id")
        try:
            spec = ToolSpec.from_dict(req["spec"])
            key = spec.cache_key()
            tool = tools.get(key)
            if tool is None:
                tool = make_tool(spec, allowed_prefixes=allowed)
                tools[key] = tool
                if len(tools) > _MAX_TOOLS:
                    _, old = tools.popitem(last=False)
                    loop.run_until_complete(old.aclose())
            tools.move_to_end(key)
        except Exception as exc:
            send({"id": rid, "load_error": f"{type(exc).__name__}: {exc}"[:2000]})
            continue
        send({"id": rid, "ready": True})
        inputs = [ToolInput.from_dict(d) for d in req.get("inputs") or []]
        if req.get("batched"):
            results = loop.run_until_complete(tool.score_batch(inputs))
            send({"id": rid, "results": [r.to_dict() for r in results]})
        else:
            for i, inp in enumerate(inputs):
                res: ToolResult = loop.run_until_complete(tool.score(inp))
                send({"id": rid, "i": i, "result": res.to_dict()})
    for tool in tools.values():
        loop.run_until_complete(tool.aclose())
    loop.close()


if __name__ == "__main__":
    main()
