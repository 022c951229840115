"""``rlar tools route FILE``, ``rlar tools decisions`` and ``rlar bench routing``: reward routing from the CLI.

``add_tools_subcommands(tools_sub)`` adds ``route`` and ``decisions`` to the ``rlar tools`` group (created by
:mod:`rlar.commands.tools`, which calls it); ``register(sub, bench)`` adds ``rlar bench routing``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any


def _agent(a: argparse.Namespace) -> Any:
    from rlar.agent.base import AnthropicAgentConfig, OfflineAgentConfig, default_agent_config, make_agent

    if a.backend == "auto":
        cfg: AnthropicAgentConfig | OfflineAgentConfig = default_agent_config()
    elif a.backend == "anthropic":
        cfg = AnthropicAgentConfig(**{k: v for k, v in (("model", a.model), ("base_url", a.base_url)) if v})
    else:
        cfg = OfflineAgentConfig()
    return make_agent(cfg)


def _agent_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", choices=("auto", "offline", "anthropic"), default="auto",
                   help="auto: anthropic when ANTHROPIC_API_KEY/ANTHROPIC_BASE_URL is set, else offline")  # fmt: skip
    p.add_argument("--model", help="model name for the anthropic backend")
    p.add_argument("--base-url", help="Messages API root for the anthropic backend")


async def _candidates(nats: str | None) -> list[Any]:
    from rlar.tools.base import builtin_specs

    if not nats:
        return builtin_specs()
    from bus.client import Bus
    from bus.config import NatsConfig
    from bus.topology import ensure_topology
    from rlar.registry import ToolRegistry

    bus = await Bus.connect(NatsConfig(url=nats), name="rlar-tools-route")
    try:
        await ensure_topology(bus.js)
        return await ToolRegistry(bus).list()
    finally:
        await bus.close()


async def _route(a: argparse.Namespace) -> int:
    from rlar.routing import RoutingQuery, parse_route, routing_request, usable_candidates

    specs, _ = usable_candidates(await _candidates(a.nats), require_ready=not a.ignore_readiness)
    agent = _agent(a)
    unfit: dict[str, list[dict[str, Any]]] = {}  # records no tool fits, by kind (for --synthesize)
    try:
        with open(a.file, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                rec = json.loads(line)
                q = RoutingQuery.from_record(rec)
                reply = await agent.ask(routing_request(q, specs))
                ans = parse_route(reply, specs)
                out = {
                    "line": n,
                    "id": rec.get("id"),
                    "task": q.task,
                    "signature": q.signature(),
                    "tools": [t.to_dict() for t in ans.tools],
                    "none_fit": ans.none_fit,
                    "confidence": ans.confidence,
                    "reason": ans.reason,
                    "constraints": ans.constraints,
                    "ok": ans.ok,
                    "backend": reply.backend,
                    "model": reply.model,
                    "prompt_hash": reply.prompt_hash,
                    "cost": ans.provenance.get("cost", {}),
                }
                print(json.dumps(out, ensure_ascii=False), flush=True)
                if ans.none_fit:
                    unfit.setdefault(out["signature"], []).append(rec)
        if a.synthesize:
            from rlar.commands.synthesis import synthesize_unfit

            return await synthesize_unfit(a, unfit, agent)
    finally:
        await agent.aclose()
    return 0


def cmd_route(a: argparse.Namespace) -> int:
    return asyncio.run(_route(a))


async def _decisions(url: str) -> list[dict[str, Any]]:
    import nats.js.errors

    from bus.client import Bus
    from bus.config import NatsConfig
    from bus.topology import DECISIONS_BUCKET, ensure_topology
    from rlar.routing import Decision

    bus = await Bus.connect(NatsConfig(url=url), name="rlar-tools-decisions")
    try:
        await ensure_topology(bus.js)
        kv = await bus.js.key_value(DECISIONS_BUCKET)
        rows = []
        for key in await bus.kv_keys(DECISIONS_BUCKET):
            try:
                entry = await kv.get(key)
            except nats.js.errors.KeyNotFoundError:
                continue
            rows.append(Decision.from_json(entry.value or b"{}").to_dict())
        return rows
    finally:
        await bus.close()


def cmd_decisions(a: argparse.Namespace) -> int:
    from rlar.attach import attach

    with attach(a.nats, a.run) as bus:
        rows = asyncio.run(_decisions(bus.url))
    if a.json:
        for r in rows:
            print(json.dumps(r, ensure_ascii=False))
        return 0
    if not rows:
        print("no routing decisions yet")
        return 0
    print(f"{'signature':<25} {'task':<16} {'state':<12} {'conf':>5} {'backend':<9} tools / reason")
    for r in rows:
        tools = ", ".join(f"{t['tool']} v{t['version']} x{t['weight']:g}" for t in r["tools"]) or "-"
        print(f"{r['signature']:<25} {r['task'][:16]:<16} {r['state']:<12} {r['confidence']:5.2f} "
              f"{r['backend'][:9]:<9} {tools} | {r['reason'][:80]}")  # fmt: skip
    return 0


def cmd_bench_routing(a: argparse.Namespace) -> int:
    from rlar.benchmarks.routing import run
    from rlar.resources import packaged

    agent = _agent(a)
    embed = getattr(agent, "embedder", None)
    try:
        doc = asyncio.run(run(str(packaged(a.data)), agent, seed=a.seed, random_trials=a.trials, embed=embed))
    finally:
        asyncio.run(agent.aclose())
    if not a.json:
        ag, rnd = doc["agent"], doc["random"]
        print(
            f"records {doc['records']} ({doc['tasks']} tasks, {doc['signatures']} signatures)",
            file=sys.stderr,
        )
        print(
            f"{ag['backend']:>10}: {ag['accuracy']:.3f} (strict {ag['strict_accuracy']:.3f})", file=sys.stderr
        )
        print(f"{'random':>10}: {rnd['expected_accuracy']:.3f} expected, {rnd['sampled_accuracy_mean']:.3f}"
              f" ± {rnd['sampled_accuracy_std']:.3f} sampled", file=sys.stderr)  # fmt: skip
        for task, acc in ag["by_task"].items():
            print(f"  {task:<16} {acc:.3f}  (random {rnd['by_task'][task]:.3f})", file=sys.stderr)
    print(json.dumps(doc, ensure_ascii=False), flush=True)
    return 0


def add_tools_subcommands(tools_sub: Any) -> None:
    """Add ``route`` and ``decisions`` to the ``rlar tools`` subparsers."""
    from rlar.attach import add_arguments as add_bus_arguments

    q = tools_sub.add_parser(
        "route", help="route JSONL records {task, query, reference, metadata}: one JSON line each"
    )
    q.add_argument("file", help="JSONL records {task, query, reference, metadata}")
    _agent_args(q)
    q.add_argument("--nats", help="choose among the live registry's tools (default: the built-in tools)")
    q.add_argument("--ignore-readiness", action="store_true",
                   help="offline: consider tools that would abstain here (judge without endpoint, ...)")  # fmt: skip
    from rlar.commands.synthesis import add_synthesize_arguments

    add_synthesize_arguments(q)
    q.set_defaults(fn=cmd_route)

    q = tools_sub.add_parser("decisions", help="the router's cached decisions (KV rlar_decisions)")
    add_bus_arguments(q)
    q.add_argument("--json", action="store_true", help="one JSON object per line")
    q.set_defaults(fn=cmd_decisions)


def register(sub: Any, bench: Any) -> None:
    p = bench.add_parser("routing", help="tool-selection accuracy on labelled records vs random choice")
    p.add_argument("--data", default="data/routing_labelled.jsonl", help="labelled routing set (JSONL)")
    p.add_argument("--json", action="store_true", help="only the JSON line")
    p.add_argument("--seed", type=int, default=0, help="seed of the random baseline")
    p.add_argument("--trials", type=int, default=200, help="sampled runs of the random baseline")
    _agent_args(p)
    p.set_defaults(fn=cmd_bench_routing)
