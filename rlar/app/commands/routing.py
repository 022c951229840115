"""``rlar tools route FILE``, ``rlar tools decisions`` and ``rlar bench routing``: reward routing from the CLI.

``add_tools_subcommands(tools_sub)`` adds ``route`` and ``decisions`` to the ``rlar tools`` group (created by
:mod:`rlar.app.commands.tools`, which calls it); ``register(sub, bench)`` adds ``rlar bench routing``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

# rlar.agent, rlar.tools, bus.client, bus.config, bus.topology, rlar.registry, rlar.benchmarks, rlar.routing,
# rlar.app, nats and rlar.resources are imported where used: a command's implementation loads when the command
# runs, so rlar --help stays instant.


def _agent(a: argparse.Namespace) -> Any:
    from rlar.agent.base import AnthropicAgentConfig, OfflineAgentConfig
    from rlar.agent.factory import default_agent_config, make_agent

    if a.backend == "auto":
        cfg: AnthropicAgentConfig | OfflineAgentConfig = default_agent_config()
    elif a.backend == "anthropic":
        cfg = AnthropicAgentConfig(**{k: v for k, v in (("model", a.model), ("base_url", a.base_url)) if v})
    else:
        cfg = OfflineAgentConfig()
    return make_agent(cfg)


def _agent_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--backend",
        choices=("auto", "offline", "anthropic"),
        default="auto",
        help="auto: anthropic when ANTHROPIC_API_KEY/ANTHROPIC_BASE_URL is set, else offline",
    )
    p.add_argument("--model", help="model name for the anthropic backend")
    p.add_argument("--base-url", help="Messages API root for the anthropic backend")
    p.add_argument(
        "--require-ready",
        action="store_true",
        help="offer only tools that can score here, as the router does (default: every tool, the"
        " question being which fits)",
    )


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
    from rlar.benchmarks.routing import route_records
    from rlar.routing import usable_candidates
    from rlar.routing.exemplars import load_labelled

    try:
        records = load_labelled(a.file, labelled=False)
    except (OSError, ValueError) as exc:
        print(f"rlar tools route: {exc}", file=sys.stderr)
        return 2
    specs, dropped = usable_candidates(await _candidates(a.nats), require_ready=a.require_ready)
    for name, why in dropped.items():
        print(f"not offered: {name} ({why})", file=sys.stderr)
    agent = _agent(a)
    unfit: dict[str, list[dict[str, Any]]] = {}  # records no tool fits, by kind (for --synthesize)
    try:
        for row, rec in zip(await route_records(records, agent, specs), records, strict=True):
            row.pop("latency_s", None)
            row.pop("usage", None)
            print(json.dumps(row, ensure_ascii=False), flush=True)
            if row["none_fit"]:
                unfit.setdefault(row["signature"], []).append(rec)
        if a.synthesize:
            from rlar.app.commands.synthesis import synthesize_unfit

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
    from rlar.app.attach import attach
    from rlar.routing.probes import ProbeReport

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
        print(
            f"{r['signature']:<25} {r['task'][:16]:<16} {r['state']:<12} {r['confidence']:5.2f} "
            f"{r['backend'][:9]:<9} {tools} | {r['reason'][:80]}"
        )
        for p in r.get("probes") or []:  # the hack probes each tool got for this signature, with their scores
            print(f"{'':<25} probes: {ProbeReport.from_dict(p).summary()}")
    return 0


def cmd_bench_routing(a: argparse.Namespace) -> int:
    from rlar.benchmarks.routing import run
    from rlar.resources import packaged
    from rlar.routing import usable_candidates
    from rlar.tools.base import builtin_specs

    specs, _ = usable_candidates(builtin_specs(), require_ready=a.require_ready)
    agent = _agent(a)
    done: list[str] = []

    def progress(group: str) -> None:
        done.append(group)
        if not a.json and len(done) % 10 == 0:
            print(f"  held out {len(done)} types ...", file=sys.stderr)

    try:
        doc = asyncio.run(
            run(
                packaged(a.data) if a.data else None,
                agent,
                seed=a.seed,
                random_trials=a.trials,
                held_out=not a.no_held_out,
                tools_held_out=not a.no_held_out,
                save=a.save,
                candidates=specs,
                progress=progress,
            )
        )
    finally:
        asyncio.run(agent.aclose())
    if not a.json:
        _print_summary(doc)
    print(json.dumps(doc, ensure_ascii=False), flush=True)
    return 0


def _print_summary(doc: dict[str, Any]) -> None:
    ag, rnd = doc["agent"], doc["random"]
    out = sys.stderr
    print(
        f"records {doc['records']} ({doc['types']} types, {doc['tasks']} tasks, {doc['signatures']} signatures)",
        file=out,
    )
    print(
        f"{ag['backend']:>10} as deployed: {ag['accuracy']:.3f} (strict {ag['strict_accuracy']:.3f};"
        f" {ag['bank_overlap']:.0%} of the records are its exemplars)",
        file=out,
    )
    if "leave_one_type_out" in doc:
        lo, ind = doc["leave_one_type_out"], doc["in_distribution"]
        cal = lo["calibration"]
        print(
            f"  leave-one-type-out: {lo['accuracy']:.3f} ({lo['correct']}/{lo['n']}); ECE {cal['ece']:.3f},"
            f" Brier {cal['brier']:.3f}",
            file=out,
        )
        print(f"  in-distribution (leave-one-record-out): {ind['accuracy']:.3f}", file=out)
        print(f"  descriptions only (no exemplars): {doc['descriptions_only']['accuracy']:.3f}", file=out)
        for name, t in doc.get("tool_held_out", {}).items():
            print(
                f"  {name} never seen in exemplars: {t['accuracy']:.3f} right, chosen {t['chose_it']:.3f} ({t['n']})",
                file=out,
            )
        worst = sorted(lo["by_type"].items(), key=lambda kv: kv[1])[:8]
        print("  weakest held-out types: " + ", ".join(f"{k} {v:.2f}" for k, v in worst), file=out)
    for name, u in doc.get("unseen", {}).items():
        print(
            f"  unseen formats ({name}, {u['records']} records, {u['types']} types): strict"
            f" {u['strict_accuracy']:.3f} ({u['correct']}/{u['records']})",
            file=out,
        )
    print(
        f"{'random':>10}: {rnd['expected_accuracy']:.3f} expected, {rnd['sampled_accuracy_mean']:.3f}"
        f" ± {rnd['sampled_accuracy_std']:.3f} sampled; random among eligible"
        f" {doc['random_eligible']['expected_accuracy']:.3f}; majority among eligible"
        f" {doc['majority_eligible']['accuracy']:.3f}",
        file=out,
    )


def add_tools_subcommands(tools_sub: Any) -> None:
    """Add ``route`` and ``decisions`` to the ``rlar tools`` subparsers."""
    from rlar.app.attach import add_arguments as add_bus_arguments

    q = tools_sub.add_parser(
        "route", help="route JSONL records {task, query, reference, metadata, ...}: one JSON line each"
    )
    q.add_argument("file", help="JSONL records {task, query, reference, metadata}")
    _agent_args(q)
    q.add_argument("--nats", help="choose among the live registry's tools (default: the built-in tools)")
    from rlar.app.commands.synthesis import add_synthesize_arguments

    add_synthesize_arguments(q)
    q.set_defaults(fn=cmd_route)

    q = tools_sub.add_parser("decisions", help="the router's cached decisions (KV rlar_decisions)")
    add_bus_arguments(q)
    q.add_argument("--json", action="store_true", help="one JSON object per line")
    q.set_defaults(fn=cmd_decisions)


def register(sub: Any, bench: Any) -> None:
    p = bench.add_parser(
        "routing", help="tool-selection accuracy: as deployed, leave-one-type-out, in-distribution, vs random"
    )
    p.add_argument("--data", help="labelled JSONL (default: the shipped set, data/routing/labelled.jsonl)")
    p.add_argument(
        "--no-held-out", action="store_true", help="only the backend as deployed and the baselines"
    )
    p.add_argument(
        "--save",
        action="store_true",
        help="write the shipped set's vectors and fitted model (data/routing/vectors.npz, model.json)",
    )
    p.add_argument("--json", action="store_true", help="only the JSON line")
    p.add_argument("--seed", type=int, default=0, help="seed of the random baseline")
    p.add_argument("--trials", type=int, default=200, help="sampled runs of the random baseline")
    _agent_args(p)
    p.set_defaults(fn=cmd_bench_routing)
