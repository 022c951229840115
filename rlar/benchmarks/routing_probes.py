"""Hack probes on a labelled routing file: which tools they refuse, the right ones and the wrong ones.

    rlar bench routing-probes --data data/routing/labelled.jsonl [--json] [--limit N]

Records (``{type, query, reference, metadata, acceptable: [tools]}``, the routing sets' format) are grouped by
signature as the router groups them; each group's first records (``probes.references``) get the probes of
:func:`rlar.routing.probes.build_probes`, and every built-in tool that could score the group — the rules leave
it eligible for its first record, it is ready here (no judge endpoint or reward-model checkpoint needed) and of
a kind the router probes — scores them through the tool executor with the router's verdict
(:class:`rlar.routing.probes.Prober`). Reported: of the acceptable tools (the first record's label), how many
the probes refuse (false refusals: each costs a right route), of the other eligible tools how many (catches),
per type and per probe.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from rlar.routing.probes import ProbePolicy, Prober
from rlar.routing.query import RoutingQuery
from rlar.routing.rules import eligibility, usable_candidates
from rlar.tools.base import builtin_specs
from rlar.tools.executor import ToolExecutor


async def run(path: Path, limit: int | None = None) -> dict[str, Any]:
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()][:limit]
    tools, _ = usable_candidates(builtin_specs(), require_ready=True)
    policy = ProbePolicy()
    tools = [t for t in tools if str(t.kind) in policy.kinds]
    # As the router sees them: one decision per signature, probed with its first records.
    groups: dict[str, list[tuple[dict[str, Any], RoutingQuery]]] = defaultdict(list)
    for r in records:
        q = RoutingQuery.from_record(r)
        groups[q.signature()].append((r, q))
    counts: Counter[str] = Counter()
    per_type: dict[str, Counter[str]] = defaultdict(Counter)
    maxed_by: Counter[str] = Counter()
    false_refusals: list[dict[str, Any]] = []
    seconds: dict[str, float] = defaultdict(float)
    t0 = time.perf_counter()
    async with ToolExecutor(timeout_s=policy.timeout_s) as ex:
        prober = Prober(policy, ex)
        for sig, members in groups.items():
            first, q = members[0]
            f = q.features()
            acceptable = set(first.get("acceptable") or [])
            queries = [m[1] for m in members[: policy.references]]
            for spec in tools:
                if eligibility(spec, q, f):
                    continue
                t = time.perf_counter()
                report = await prober.check(sig, queries, spec)
                seconds[spec.name] += time.perf_counter() - t
                right = spec.name in acceptable
                key = f"{'acceptable' if right else 'other'}_{report.verdict}"
                counts[key] += 1
                per_type[str(first.get("type", ""))][key] += 1
                for p in report.maxed:
                    maxed_by[f"{p} ({'acceptable' if right else 'other'})"] += 1
                if report.refused and right:
                    false_refusals.append(
                        {"id": first.get("id"), "tool": spec.name, "summary": report.summary()}
                    )
    acc = sum(v for k, v in counts.items() if k.startswith("acceptable_"))
    oth = sum(v for k, v in counts.items() if k.startswith("other_"))
    return {
        "data": str(path),
        "records": len(records),
        "signatures": len(groups),
        "tools": [t.name for t in tools],
        "acceptable_pairs": acc,
        "acceptable_refused": counts["acceptable_refused"],
        "other_pairs": oth,
        "other_refused": counts["other_refused"],
        "unverified": counts["acceptable_unverified"] + counts["other_unverified"],
        "maxed_by_probe": dict(maxed_by.most_common()),
        "false_refusals": false_refusals,
        "refusals_by_type": {
            t: {"acceptable": c["acceptable_refused"], "other": c["other_refused"]}
            for t, c in sorted(per_type.items())
            if c["acceptable_refused"] or c["other_refused"]
        },
        "seconds": round(time.perf_counter() - t0, 1),
        "seconds_by_tool": {k: round(v, 1) for k, v in sorted(seconds.items(), key=lambda kv: -kv[1])},
    }


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument(
        "--data",
        type=Path,
        action="append",
        required=True,
        help="a labelled routing file (JSONL); repeatable",
    )
    ap.add_argument("--limit", type=int, default=None, help="first N records of each file (default: all)")
    ap.add_argument("--json", action="store_true", help="one JSON object per file")
    a = ap.parse_args(argv)
    for path in a.data:
        out = asyncio.run(run(path, a.limit))
        if a.json:
            print(json.dumps(out, ensure_ascii=False))
            continue
        print(
            f"{out['data']}: {out['records']} records, {out['signatures']} signatures, {out['seconds']}s "
            f"({out['seconds_by_tool']}); tools {', '.join(out['tools'])}"
        )
        print(
            f"  acceptable tool pairs refused: {out['acceptable_refused']}/{out['acceptable_pairs']} (false refusals)"
        )
        print(f"  other eligible tool pairs refused: {out['other_refused']}/{out['other_pairs']}")
        print(f"  unverified: {out['unverified']}; probes that got a maximum: {out['maxed_by_probe']}")
        for row in out["false_refusals"][:20]:
            print(f"  false refusal: {row['id']}: {row['summary']}")
        for t, c in out["refusals_by_type"].items():
            print(f"  {t}: refused {c['acceptable']} acceptable, {c['other']} other")
    return 0


if __name__ == "__main__":
    sys.exit(main())
