"""``rlar tools route FILE --synthesize``, ``rlar synthesis report RUN_DIR`` and ``rlar bench synthesis``.

``--synthesize`` (added to ``rlar tools route`` by :mod:`rlar.app.commands.routing`): for every kind of record no
tool fits, a verifier is synthesised and validated on this host (:mod:`rlar.synthesis.standalone`; a local
bubblewrap jail, no actors), the clauses it checks and does not check are printed, and the specs that passed
are written in the registry's export format (``rlar tools import FILE`` registers them in a run).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

# rlar.constraints, rlar.synthesis, rlar.agent, rlar.benchmarks and rlar.resources are imported where used: a
# command's implementation loads when the command runs, so rlar --help stays instant.


def add_synthesize_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--synthesize",
        action="store_true",
        help="synthesise and validate a verifier (local sandbox) for each kind of record no tool fits",
    )
    p.add_argument(
        "--out",
        default="synthesized-tools.jsonl",
        help="with --synthesize: where the validated verifiers go (import with `rlar tools import`)",
    )
    p.add_argument(
        "--partial",
        choices=("register", "refuse"),
        default="refuse",
        help="with --synthesize: refuse a verifier that leaves clauses unchecked or that no independent "
        "route vouches for (default), or keep it marked partial",
    )
    p.add_argument("--max-attempts", type=int, default=3, help="with --synthesize: candidates per kind")


def _clause_lines(result: dict[str, Any]) -> list[str]:
    from rlar.constraints.vocabulary import describe

    lines = []
    for c in result["clauses"]:
        if c["status"] == "context":
            continue
        mark = {"checked": "✓", "partial": "~", "unchecked": "✗"}.get(c["status"], "?")
        what = "; ".join(describe(x) for x in c["constraints"]) or "-"
        note = f"  [{c['note']}]" if c["note"] else ""
        lines.append(f"    {mark} {c['text']!r} -> {what}{note}")
    return lines


async def synthesize_unfit(a: argparse.Namespace, kinds: dict[str, list[dict[str, Any]]], agent: Any) -> int:
    """Synthesise for the kinds ``rlar tools route`` found no tool for; 0 when every kind got a verifier."""
    from rlar.synthesis.standalone import synthesize_records, write_export

    if not kinds:
        print("every record has a tool: nothing to synthesise", file=sys.stderr)
        return 0
    results = await synthesize_records(kinds, agent, max_attempts=a.max_attempts, partial=a.partial)
    for r in results:
        spec = r["spec"]
        head = (
            f"{spec['name']} v{spec['version'] or 1} ({'checks every clause' if r['full'] else 'PARTIAL'})"
            if spec
            else f"no verifier: {r['reason']}"
        )
        print(f"kind {r['signature']} ({r['records']} records): {head}", file=sys.stderr)
        for line in _clause_lines(r):
            print(line, file=sys.stderr)
        print(
            json.dumps(
                {
                    "synthesized": {k: v for k, v in r.items() if k != "spec"}
                    | {"tool": spec["name"] if spec else None}
                },
                ensure_ascii=False,
                default=str,
            ),
            flush=True,
        )
    n = write_export(results, a.out)
    print(
        f"{n} of {len(results)} verifiers validated; written to {a.out} (rlar tools import {a.out})",
        file=sys.stderr,
    )
    return 0 if n == len(results) else 1


def cmd_report(a: argparse.Namespace) -> int:
    from rlar.synthesis.report import read_run, summarize, to_markdown

    rows = read_run(a.run_dir)
    summary = summarize(rows)
    print(to_markdown(summary), file=sys.stderr)
    print(json.dumps({"summary": summary, "requests": rows}, ensure_ascii=False, default=str))
    return 0


def cmd_bench(a: argparse.Namespace) -> int:
    from rlar.agent.base import OfflineAgentConfig
    from rlar.agent.factory import default_agent_config, make_agent
    from rlar.benchmarks.synthesis import run
    from rlar.resources import packaged
    from rlar.synthesis.report import to_markdown

    agent = make_agent(default_agent_config() if a.backend == "auto" else OfflineAgentConfig())
    try:
        doc = asyncio.run(
            run(str(packaged(a.data)), a.split, agent, max_attempts=a.max_attempts, partial=a.partial)
        )
    finally:
        asyncio.run(agent.aclose())
    if not a.json:
        for name, s in doc["splits"].items():
            c = s["claims"]
            print(
                f"== {name}: {s['instructions']} instructions, {s['answers']} labelled answers ({s['judged']} judged)",
                file=sys.stderr,
            )
            for key in ("full", "partial", "all_judged"):
                acc = s[key]
                shown = "-" if acc["accuracy"] is None else f"{acc['accuracy']:.3f}"
                print(
                    f"   label accuracy, {key:<10} {shown} ({acc['correct']}/{acc['answers']})",
                    file=sys.stderr,
                )
            print(
                f"   claimed full {c['claimed_full']}: checkable {c['claimed_full_and_checkable']}, NOT checkable "
                f"{c['claimed_full_not_checkable']}; checkable but partial {c['checkable_not_claimed_full']} of "
                f"{c['checkable']}",
                file=sys.stderr,
            )
            o = s["overall"]
            prec = "-" if o["precision"] is None else f"{o['precision']:.3f}"
            print(
                f"   tasks {o['tasks']}: with a verifier for every prompt {o['tasks_with_verifier']:.0%}, whole "
                f"{o['tasks_whole']:.0%}; precision {prec} ({o['right']}/{o['scored']} labels right among scored)",
                file=sys.stderr,
            )
            for tname, t in s["tasks"].items():
                print(
                    f"     {tname:<28} verifier {'yes' if t['has_verifier'] else 'no ':<3} ({t['verifier']}/"
                    f"{t['prompts']})  whole {'yes' if t['has_whole'] else 'no ':<3} ({t['whole']}/{t['prompts']})"
                    f"  labels right {t['right']}/{t['scored']}"
                    + (f"  unread: {'; '.join(t['unread'])[:120]}" if t["unread"] else ""),
                    file=sys.stderr,
                )
            print(to_markdown(s["synthesis"], title=f"synthesis ({name})"), file=sys.stderr)
    print(
        json.dumps({k: v for k, v in doc.items() if k != "instructions" or a.details}, ensure_ascii=False),
        flush=True,
    )
    return 0


def register(sub: Any, bench: Any) -> None:
    p = sub.add_parser("synthesis", help="reward synthesis: the report of a run")
    ssub = p.add_subparsers(dest="synthesis_cmd", required=True)
    q = ssub.add_parser(
        "report", help="requests, valid, rejected by reason, attempts, time (a run's synthesizer)"
    )
    q.add_argument("run_dir", help="the run directory (runs/<name>-<time>)")
    q.set_defaults(fn=cmd_report)

    p = bench.add_parser(
        "synthesis", help="synthesised verifiers vs hand-labelled answers (dev and held-out)"
    )
    p.add_argument(
        "--data", default="data/instructions_labelled.jsonl", help="labelled instruction set (JSONL)"
    )
    p.add_argument("--split", default="all", help="dev | heldout | all")
    p.add_argument(
        "--backend",
        choices=("auto", "offline"),
        default="offline",
        help="offline (default): the building-block composer; auto: the Messages API when configured",
    )
    p.add_argument("--max-attempts", type=int, default=3, help="candidates per instruction")
    p.add_argument(
        "--partial",
        choices=("register", "refuse"),
        default="refuse",
        help="refuse (default) verifiers that leave clauses unchecked or unvouched, or register them as partial",
    )
    p.add_argument("--json", action="store_true", help="only the JSON line")
    p.add_argument("--details", action="store_true", help="include every instruction's result in the JSON")
    p.set_defaults(fn=cmd_bench)
