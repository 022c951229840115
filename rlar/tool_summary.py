"""Per task, which reward tools a run used and where they came from: the ``tasks`` part of ``summary.json``.

``tasks_summary(records, decisions, specs, synthesis_rows, canaries)`` joins what the run left behind:

- the learner's metrics (``metrics.jsonl``): per step and task the mean reward (``reward/<task>``), the share of
  samples that abstained (``abstain/<task>``) and the tools whose results reached the learner (``tools``:
  ``"name vN"``, ``" (shadow)"`` for weight 0);
- the router's decisions (``RouteDecision`` on ``rlar.tools.decisions``): how many, in which state (routed,
  pending, synthesized, canary, fallback, unroutable), the last one per task, and the hack probes
  (:mod:`rlar.routing.probes`): per verdict (refused, eligible, unverified, skipped) the tools probed for the
  task's signatures, a refused one with the probes it gave its maximum (a judge refused by its vouching, with
  its agreement and interval: :mod:`rlar.routing.judge_vouch`);
- the registry's specs: each tool's origin — ``built-in``, ``synthesised vN`` (``partial`` when its verifier
  leaves clauses unchecked), ``retrieved`` or what the spec's provenance says — and its status;
- the synthesizer's outcome rows and canary verdicts (:mod:`rlar.synthesis.report`).

Per task the result holds ``tools`` (name, version, origin, status, learner steps it scored in, shadow steps),
``routing`` (decisions by state, last decision), ``abstain`` (first/last 10 steps and overall) and ``reward``
(first/last 10 steps), plus ``synthesis`` (the report's summary) for the whole run. ``tasks_lines`` writes it
as one line per task for the end of ``rlar train``'s output.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rlar.tools.base import Origin

__all__ = ["origin_label", "tasks_lines", "tasks_summary"]


def origin_label(spec: Any, status: str = "enabled") -> str:
    """``built-in`` | ``synthesised vN`` [``partial``] | ``retrieved`` | the provenance's own word."""
    origin = str((spec.provenance or {}).get("origin", "")) if spec is not None else ""
    if origin == Origin.SYNTHESIZED:
        cov = (spec.params or {}).get("coverage") or {}
        label = f"synthesised v{spec.version}" + ("" if cov.get("full", True) else " (partial)")
    elif origin in (Origin.BUILT_IN, Origin.RETRIEVED):
        label = origin
    else:
        label = origin or "unknown"
    return label if status in ("enabled", "") else f"{label}, {status}"


def _first_last(values: Sequence[float], n: int = 10) -> dict[str, float] | None:
    if not values:
        return None
    k = min(n, max(1, len(values) // 2))
    return {
        "first": round(sum(values[:k]) / k, 4),
        "last": round(sum(values[-k:]) / k, 4),
        "steps": len(values),
    }


def _state(reason: str) -> str:
    m = re.match(r"\[(\w+)\]", reason or "")
    return m.group(1) if m else "routed"


def tasks_summary(
    records: Sequence[Mapping[str, Any]],
    decisions: Iterable[Any] = (),
    specs: Mapping[tuple[str, int], Any] | None = None,
    statuses: Mapping[tuple[str, int], str] | None = None,
) -> dict[str, Any]:
    """See the module docstring. ``specs``/``statuses`` are keyed by (name, version)."""
    specs = specs or {}
    statuses = statuses or {}
    tasks: set[str] = set()
    for r in records:
        tasks |= {k.split("/", 1)[1] for k in r if k.startswith(("reward/", "abstain/"))}
        tasks |= set((r.get("tools") or {}).keys())
    by_task: dict[str, list[Any]] = {}
    for d in decisions:
        by_task.setdefault(str(d.task), []).append(d)
        tasks.add(str(d.task))
    out: dict[str, Any] = {}
    for task in sorted(tasks):
        used: Counter[str] = Counter()
        for r in records:
            for entry in (r.get("tools") or {}).get(task, []):
                used[entry] += 1
        tools = []
        for entry, steps in sorted(used.items()):
            m = re.fullmatch(r"(.+) v(\d+)( \(shadow\))?", entry)
            if not m:
                continue
            key = (m.group(1), int(m.group(2)))
            tools.append(
                {
                    "tool": key[0],
                    "version": key[1],
                    "origin": origin_label(specs.get(key), statuses.get(key, "")),
                    "steps": steps,
                    "shadow": bool(m.group(3)),
                }
            )
        ds = by_task.get(task, [])
        last = ds[-1] if ds else None
        verdicts: dict[tuple[str, str, int], dict[str, Any]] = {}  # the last verdict per signature and tool
        for d in ds:
            for p in getattr(d, "probes", None) or []:
                verdicts[(str(d.signature), str(p.get("tool")), int(p.get("version", 0)))] = p
        probes: dict[str, list[str]] = {}
        for p in verdicts.values():
            maxed = f" ({', '.join(p.get('maxed') or [])})" if p.get("verdict") == "refused" else ""
            v = p.get("vouch")
            if isinstance(v, dict) and p.get("verdict") == "refused":  # a judge refused by its vouching
                maxed = (
                    f" (judge not vouched: agreement {v.get('agreement', 0):.2f}, CI {v.get('ci_low', 0):.2f}-"
                    f"{v.get('ci_high', 0):.2f} on {v.get('pairs', 0)} pairs)"
                )
            label = f"{p.get('tool')} v{p.get('version')}{maxed}"
            if label not in probes.setdefault(str(p.get("verdict")), []):
                probes[str(p.get("verdict"))].append(label)
        abstain = [float(r[f"abstain/{task}"]) for r in records if r.get(f"abstain/{task}") is not None]
        reward = [float(r[f"reward/{task}"]) for r in records if r.get(f"reward/{task}") is not None]
        out[task] = {
            "tools": tools,
            "routing": {
                "decisions": len(ds),
                "states": dict(Counter(_state(d.reason) for d in ds)),
                "last": None
                if last is None
                else {
                    "state": _state(last.reason),
                    "reason": str(last.reason)[:300],
                    "backend": last.backend,
                    "tools": [f"{t.tool} v{t.version} x{t.weight:g}" for t in last.tools],
                },
                "probes": probes,
            },
            "abstain": {**(_first_last(abstain) or {}), "mean": round(sum(abstain) / len(abstain), 4)}
            if abstain
            else None,
            "reward": _first_last(reward),
        }
    return out


WAITING_STATES = ("pending", "unroutable")
"""Decision states in which a task's prompts wait for (or found no) tool: ``tasks_lines`` gives the reason."""


def _waiting(task: Mapping[str, Any], width: int = 160) -> str:
    """`` (last pending: <the router's reason>)`` when the task's last decision left it waiting, else ''."""
    last = (task.get("routing") or {}).get("last") or {}
    if last.get("state") not in WAITING_STATES:
        return ""
    why = re.sub(r"^\[\w+\]\s*", "", str(last.get("reason", ""))) or "no reason given"
    return f" (last {last['state']}: {why[:width]}{'…' if len(why) > width else ''})"


def tasks_lines(tasks: Mapping[str, Any]) -> list[str]:
    """One line per task of a ``tasks_summary``: reward first -> last 10 steps, abstain rate, the tools with
    their origin (steps scored; shadow steps apart) and the routing decisions by state — with the router's
    reason when the last decision left the task waiting (``pending``) or without a tool (``unroutable``)."""
    lines = []
    for task, t in tasks.items():
        r, a = t.get("reward"), t.get("abstain")
        reward = f"{r['first']:.3f} -> {r['last']:.3f}" if r else "-"
        abstain = f"{a['mean']:.0%}" if a else "-"
        tools = ", ".join(
            f"{x['tool']} v{x['version']} [{x['origin']}] {x['steps']}{' shadow' if x['shadow'] else ''}"
            for x in t.get("tools", [])
        )
        states = " ".join(f"{k} {v}" for k, v in ((t.get("routing") or {}).get("states") or {}).items())
        refused = ((t.get("routing") or {}).get("probes") or {}).get("refused") or []
        unvouched = [r for r in refused if "(judge not vouched" in r]
        hacks = [r for r in refused if r not in unvouched]
        lines.append(
            f"  {task}: reward {reward}, abstain {abstain}; tools {tools or '-'}; "
            f"routing {states or 'by the feeder'}{_waiting(t)}"
            + (f"; refused by hack probes: {', '.join(hacks)}" if hacks else "")
            + (f"; refused: {', '.join(unvouched)}" if unvouched else "")
        )
    return lines
