"""Plain-text rendering of a retrieval record (``rlar retrieve`` prints it): pages read, the ranked
candidates with their scores and evidence, the others with the reason they were set aside, and the outcome."""

from __future__ import annotations

from typing import Any

_EVIDENCE_FIELDS = ("pipeline_tag", "license", "parameters", "downloads", "likes", "last_modified")


def _fmt(v: Any) -> str:
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:.3g}"
    if isinstance(v, list):
        return ",".join(str(x) for x in v) or "-"
    return str(v)


def evidence_line(c: dict[str, Any]) -> str:
    """``field=value (source)`` for the facts that decided, plus leaderboard and missing fields."""
    facts, sources = c.get("facts") or {}, c.get("sources") or {}
    parts = []
    for k in _EVIDENCE_FIELDS:
        if facts.get(k) not in (None, "", []):
            val = facts[k][:10] if k == "last_modified" else _fmt(facts[k])
            parts.append(f"{k}={val} ({sources.get(k, '?')})")
    dtypes = facts.get("dtype_params") or {}
    if dtypes:
        parts.append("dtype=" + "/".join(dtypes))
    lb = c.get("leaderboard") or {}
    if lb.get("score") is not None:
        parts.append(f"leaderboard {lb.get('column')}={lb['score'] * 100:.1f}")
    bench = facts.get("benchmark_scores") or {}
    if bench:
        name, value = next(iter(bench.items()))
        parts.append(f"card: {name} {value:g}")
    if c.get("kind"):
        parts.append(f"kind={c['kind']}")
    if c.get("missing"):
        parts.append("missing: " + ",".join(c["missing"]))
    return " · ".join(parts)


def render(record: dict[str, Any], *, width: int = 110) -> str:
    """The record as text (see the module docstring)."""
    out: list[str] = []
    req = record.get("request") or {}
    out.append(f"retrieval {record['request_id']}: {req.get('description', '')[: width - 30]}")
    out.append(
        f"  hub {record.get('config', {}).get('hub_url', '?')} · matcher {record.get('matcher', '?')}"
        f" · queries: {' | '.join(record.get('queries') or [])}"
    )
    out.append("pages read:")
    for p in record.get("pages") or []:
        shot = f"  [{p['screenshot']}]" if p.get("screenshot") else ""
        why = f"  {p['reason']}" if p.get("reason") else ""
        out.append(f"  {p['status']:<10} {p['purpose']:<12} {p['elapsed_s']:>6.2f}s  {p['url']}{why}{shot}")
    cands = record.get("candidates") or []
    ranked = [c for c in cands if c.get("rank") is not None]
    if ranked:
        out.append("ranked candidates (eligible):")
        out.append(
            f"  {'#':>2} {'model':<42} {'total':>5} {'fit':>5} {'gate':>5} {'board':>5} {'dl':>5} "
            f"{'likes':>5} {'new':>5}  decision"
        )
        for c in ranked:
            s = c.get("scores") or {}
            out.append(
                f"  {c['rank']:>2} {c['model_id'][:42]:<42} {s.get('total', 0):5.3f} {s.get('fit', 0):5.2f} "
                f"{s.get('fit_margin', 0):+5.2f} "
                f"{s.get('leaderboard', 0):5.2f} {s.get('downloads', 0):5.2f} {s.get('likes', 0):5.2f} "
                f"{s.get('recency', 0):5.2f}  {c['decision']}"
            )
            out.append(f"       evidence: {evidence_line(c)}")
            if c.get("fit_evidence"):
                out.append(f"       fit: {c['fit_evidence']}")
            if c.get("reason"):
                out.append(f"       reason: {c['reason'][: width * 2]}")
            v = c.get("validation") or {}
            if v.get("n_probes"):
                kinds = ", ".join(f"{k} {x:.0%}" for k, x in (v.get("by_kind") or {}).items())
                out.append(
                    f"       validation: {v.get('pass_share', 0):.0%} of {v['n_probes']} probes ({kinds}); "
                    f"{v.get('latency_ms_per_item', 0):.1f} ms/item; load {v.get('load_s', 0):.2f}s"
                )
            if c.get("page", {}) and c["page"].get("screenshot"):
                out.append(f"       page: {c['url']}  [{c['page']['screenshot']}]")
    others = [c for c in cands if c.get("rank") is None]
    if others:
        out.append("set aside:")
        for c in others:
            out.append(f"  {c['model_id'][:42]:<42} {c['decision']:<9} {c.get('reason', '')[: width * 2]}")
            ev = evidence_line(c)
            if ev:
                out.append(f"  {'':<42} evidence: {ev}")
    tool = record.get("tool") or {}
    head = f"outcome: {record.get('outcome')}"
    if tool.get("name"):
        head += f" — tool {tool['name']}" + (
            f" v{tool['version']}" if tool.get("version") else " (not registered)"
        )
    out.append(head)
    if record.get("reason"):
        out.append(f"  {record['reason']}")
    out.append(
        f"  {len(record.get('screenshots') or [])} screenshots · {record.get('duration_s', 0):.1f}s · "
        f"timings {record.get('timings', {})}"
    )
    return "\n".join(out)
