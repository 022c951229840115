"""``rlar tools list|show|export|import|disable|enable``: manage the reward tool registry (KV ``rlar_tools``)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from bus.subjects import TOOL_KINDS

# bus.client, bus.config, bus.topology, rlar.registry, rlar.app, rlar.config and rlar.tools are imported where
# used: a command's implementation loads when the command runs, so rlar --help stays instant.

T = TypeVar("T")


async def _with_registry(url: str, fn: Callable[[Any], Awaitable[T]], *, builtins: bool = False) -> T:
    from bus.client import Bus
    from bus.config import NatsConfig
    from bus.topology import ensure_topology
    from rlar.registry import ToolRegistry

    bus = await Bus.connect(NatsConfig(url=url), name="rlar-tools")
    try:
        await ensure_topology(bus.js)
        registry = ToolRegistry(bus)
        if builtins:  # a fresh bus: register the built-ins, as reward workers do when they start
            await registry.ensure_builtins()
        return await fn(registry)
    finally:
        await bus.close()


def _run(a: argparse.Namespace, fn: Callable[[Any], Awaitable[T]]) -> T:
    from rlar.app.attach import attach

    with attach(a.nats, a.run) as bus:
        if bus.fresh_embedded:
            print("rlar tools: this fresh bus holds only the built-in tools", file=sys.stderr)
        return asyncio.run(_with_registry(bus.url, fn, builtins=bus.fresh_embedded))


async def _rows(reg: Any, include_disabled: bool) -> list[dict[str, Any]]:
    rows = []
    for spec in await reg.list(include_disabled=include_disabled):
        st = await reg.status(spec.name)
        stats = await reg.stats(spec.name, spec.version)
        vouch = (await reg.status(spec.name, spec.version)).get("vouch") or {}
        rows.append(
            {
                "name": spec.name,
                "version": spec.version,
                "kind": str(spec.kind),
                "state": st["state"],
                "reason": st["reason"],
                "description": spec.description,
                "task_types": list(spec.task_types),
                "origin": spec.provenance.get("origin", ""),
                "content_hash": spec.content_hash,
                "stats": stats,
                "vouch": vouch,
            }
        )
    return rows


def cmd_list(a: argparse.Namespace) -> int:
    rows = _run(a, lambda reg: _rows(reg, a.all))
    if a.json:
        print(json.dumps(rows))
        return 0
    if not rows:
        print("no tools registered (reward workers register the built-ins when they start)")
        return 0
    head = (
        f"{'name':<28} {'v':>3} {'kind':<8} {'state':<11} {'calls':>7} "
        f"{'ok%':>5} {'abst%':>5} {'err%':>5} {'lat ms':>7}"
    )
    print(head)
    for r in rows:
        s = r["stats"]
        calls = s["calls"]
        pct = {k: f"{100 * s[k] / calls:5.1f}" if calls else "    -" for k in ("ok", "abstain", "error")}
        print(
            f"{r['name'][:28]:<28} {r['version']:>3} {r['kind']:<8} {r['state']:<11} {calls:>7} {pct['ok']} "
            f"{pct['abstain']} {pct['error']} {1000 * s['mean_latency_s']:7.1f}"
        )
        for task, v in sorted(r["vouch"].items()):  # a judge's vouching on labelled pairs, per task
            print(
                f"{'':<4}vouch {task}: {v.get('verdict')} — agreement {v.get('agreement', 0):.2f}"
                f" ({100 * v.get('confidence', 0.95):.0f}% CI {v.get('ci_low', 0):.2f}-{v.get('ci_high', 0):.2f})"
                f" on {v.get('pairs', 0)} pairs, threshold {v.get('threshold', 0):g}"
            )
    return 0


async def _show(reg: Any, name: str, version: int | None) -> dict[str, Any] | None:
    spec = await reg.get(name, version) if version else None
    if spec is None:
        st = await reg.status(name)
        if st["state"] == "unknown":
            return None
        spec = await reg.get(name, version or st["latest_enabled"] or st["latest"])
    if spec is None:
        return None
    return {
        "spec": spec.to_dict(),
        "status": await reg.status(name, spec.version),
        "stats": await reg.stats(name, spec.version),
        "versions": [
            {
                "version": s.version,
                "content_hash": s.content_hash,
                "registered_by": s.provenance.get("registered_by", ""),
                "registered_at": s.provenance.get("registered_at"),
            }
            for s in await reg.versions(name)
        ],
    }


def cmd_show(a: argparse.Namespace) -> int:
    doc = _run(a, lambda reg: _show(reg, a.name, a.version))
    if doc is None:
        print(f"rlar tools: unknown tool {a.name!r}" + (f" v{a.version}" if a.version else ""))
        return 1
    print(json.dumps(doc, indent=2, ensure_ascii=False))
    return 0


def cmd_export(a: argparse.Namespace) -> int:
    n = _run(a, lambda reg: reg.export(a.file))
    print(f"exported {n} records to {a.file}")
    return 0


def cmd_import(a: argparse.Namespace) -> int:
    specs = _run(a, lambda reg: reg.import_(a.file, by=a.by))
    for s in specs:
        print(f"{s.name} v{s.version} {s.content_hash[:12]}")
    print(f"imported {len(specs)} tool versions from {a.file}")
    return 0


def _mark(a: argparse.Namespace, action: str) -> int:
    async def go(reg: Any) -> None:
        if action == "disable":
            await reg.disable(a.name, a.reason, version=a.version, by="rlar tools")
        else:
            await reg.enable(a.name, version=a.version, by="rlar tools")

    try:
        _run(a, go)
    except KeyError as exc:
        print(f"rlar tools: {exc.args[0]}")
        return 1
    print(f"{action}d {a.name}" + (f" v{a.version}" if a.version else ""))
    return 0


def cmd_register(a: argparse.Namespace) -> int:
    from rlar.config import ConfigError
    from rlar.tools.pyfunc import PythonToolConfig, PythonToolError, python_tool_spec

    fields: dict[str, Any] = {
        "name": a.name or a.python.partition(":")[2].rsplit(".", 1)[-1],
        "python": a.python,
        "kind": a.kind,
        "description": a.description,
        "style": a.style,
        "path": a.path,
        "needs_reference": a.needs_reference,
        "task_types": _csv(a.task_types),
        "answer_formats": _csv(a.answer_formats),
        "score_range": tuple(float(x) for x in a.score_range.split(",")),
        "deadline_s": a.deadline,
        "reference_kwarg": a.reference_kwarg,
        "conversational": a.conversational,
    }
    try:
        spec = python_tool_spec(PythonToolConfig.model_validate(fields))
    except (ValueError, PythonToolError) as exc:  # pydantic's ValidationError is a ValueError
        raise ConfigError(f"rlar tools register: {exc}") from None
    got = _run(a, lambda reg: reg.register(spec, by="rlar tools register"))
    print(
        f"registered {got.name} v{got.version} ({got.kind}, {got.params.get('style', '')} style, "
        f"{got.content_hash[:12]})"
    )
    if str(got.kind) == "sandbox":
        print("it runs in the sandbox actor's jail (stdlib only)")
    else:
        module = a.python.partition(":")[0]
        print(
            f"trusted: reward workers serving {got.kind} tools run it once {module!r} is in their "
            f'[reward] allowed_prefixes and importable (e.g. --set \'reward.allowed_prefixes=["rlar.", '
            f'"{module}"]\' --set \'reward.python_path=["{got.provenance.get("python_path", ".")}"]\')'
        )
    return 0


def _csv(text: str | None) -> list[str]:
    return [x.strip() for x in (text or "").split(",") if x.strip()]


def cmd_disable(a: argparse.Namespace) -> int:
    return _mark(a, "disable")


def cmd_enable(a: argparse.Namespace) -> int:
    return _mark(a, "enable")


def register(sub: Any, bench: Any) -> None:
    p = sub.add_parser("tools", help="the reward tool registry: list, show, export, import, disable, enable")
    tsub = p.add_subparsers(dest="tools_command", required=True)

    from rlar.app.attach import add_arguments as common

    q = tsub.add_parser("list", help="latest version of each tool with its state and live stats")
    q.add_argument("--all", action="store_true", help="include disabled tools")
    q.add_argument("--json", action="store_true", help="JSON instead of the table")
    common(q)
    q.set_defaults(fn=cmd_list)

    q = tsub.add_parser("show", help="one tool: spec, status, stats, versions (JSON)")
    q.add_argument("name", help="tool name")
    q.add_argument("--version", type=int, help="a specific version (default: the latest usable)")
    common(q)
    q.set_defaults(fn=cmd_show)

    q = tsub.add_parser("export", help="every version of every tool, and statuses, as JSONL")
    q.add_argument("file", help="JSONL file to write")
    common(q)
    q.set_defaults(fn=cmd_export)

    q = tsub.add_parser(
        "import", help="register the tools of an export file (unchanged ones keep their version)"
    )
    q.add_argument("file", help="JSONL file written by rlar tools export")
    q.add_argument("--by", default="import", help="recorded as registered_by")
    common(q)
    q.set_defaults(fn=cmd_import)

    q = tsub.add_parser(
        "register",
        help="register your own Python reward function as a tool (see docs/rewards.md)",
        description="Register fn(query, response, reference, metadata) -> float | {score, reason} | None, a batched "
        "fn(queries, responses, references, metadatas) or a TRL reward function (prompts, completions, **kwargs) "
        "as a versioned tool the router can choose. Registering changed code makes a new version.",
    )
    q.add_argument(
        "--python",
        required=True,
        metavar="MODULE:FUNCTION",
        help="the function, e.g. my_rewards:capitalised (required)",
    )
    q.add_argument(
        "--description",
        required=True,
        help="what it checks, in plain words; the router matches tasks to tools by it (required)",
    )
    q.add_argument("--name", help="tool name (default: the function's name)")
    q.add_argument(
        "--kind",
        choices=TOOL_KINDS,
        default="rule",
        help="sandbox: untrusted, runs in the jail (stdlib only); others: trusted, imported by the "
        "reward workers of that kind (default: rule)",
    )
    q.add_argument(
        "--style",
        choices=("auto", "sample", "batched", "trl"),
        default="auto",
        help="call style; auto reads the parameter names (default: auto)",
    )
    q.add_argument("--path", help="directory the module is imported from (default: the working directory)")
    q.add_argument("--task-types", help="comma-separated task types it fits (default: none)")
    q.add_argument("--answer-formats", help="comma-separated answer formats it fits (default: none)")
    q.add_argument("--score-range", default="0,1", help="LOW,HIGH declared score range (default: 0,1)")
    q.add_argument(
        "--needs-reference",
        action="store_true",
        help="samples without a reference abstain; not routed to reference-free tasks (default: off)",
    )
    q.add_argument(
        "--deadline", type=float, help="per-call deadline in seconds (default: the worker's timeout_s)"
    )
    q.add_argument(
        "--reference-kwarg",
        default="reference",
        help="trl style: keyword the references are passed under (default: reference)",
    )
    q.add_argument(
        "--conversational",
        action="store_true",
        help="trl style: prompts and completions as chat messages (default: off)",
    )
    common(q)
    q.set_defaults(fn=cmd_register)

    q = tsub.add_parser("disable", help="take a tool (or one version) out of service")
    q.add_argument("name", help="tool name")
    q.add_argument("--reason", default="disabled by operator", help="recorded with the status")
    q.add_argument("--version", type=int, help="only this version (default: the whole tool)")
    common(q)
    q.set_defaults(fn=cmd_disable)

    q = tsub.add_parser("enable", help="re-enable a tool, or clear one version's disable/quarantine")
    q.add_argument("name", help="tool name")
    q.add_argument("--version", type=int, help="clear only this version's mark (default: the whole tool)")
    common(q)
    q.set_defaults(fn=cmd_enable)

    # `rlar tools route` and `rlar tools decisions`
    from rlar.app.commands.routing import add_tools_subcommands

    add_tools_subcommands(tsub)
