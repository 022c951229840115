"""The run report: one self-contained HTML file (``<run>/report.html``) a person can open or attach.

Written at the end of ``rlar train`` (and for ``rlar ablate``, one comparing the modes, ``<out>/report.html``);
``rlar report RUN_DIR`` writes it again from the files. Inputs, all in the run directory: the learner's
``metrics.jsonl``, ``summary.json``, ``config.toml`` and ``observed.json`` (the tool registry, routing
decisions, tool requests and registrations, events and dead letters seen on the bus,
:mod:`rlar.observe.session`). Sections: outcome, reward curves per task, learner curves (throughput, step
time, staleness, abstain rate, loss …), per-task table (reward first/last, tools with their origin and
counts), tool registry (origin, validation, status, live stats) and registrations, routing summary per task
and the newest decisions, timings, events and dead letters, tracking outputs, the config.

Charts are inline SVG drawn here; the file loads nothing (no script, font, image or style from anywhere).
"""

from __future__ import annotations

import html
import itertools
import json
import math
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from rlar.plots import read_metrics

__all__ = ["line_chart", "write_ablation_report", "write_report"]

COLORS = [
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
]
LEARNER_CURVES = [
    ("samples", "samples per step"),
    ("step_s", "step time (s)"),
    ("staleness_max", "max staleness"),
    ("abstain_frac", "abstained share"),
    ("loss", "loss"),
    ("grad_norm", "grad norm"),
    ("tokens_per_s", "trained tokens/s"),
    ("groups_with_signal", "groups with signal"),
    ("trained_rows", "trained rows"),
    ("kl", "KL"),
    ("clip_frac", "clipped share"),
    ("lr", "lr"),
]

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d232b;\
margin:24px auto;max-width:1200px;padding:0 16px}
h1{font-size:22px;margin-bottom:4px}\
h2{font-size:17px;margin-top:28px;border-bottom:1px solid #e3e6ea;padding-bottom:4px}
table{border-collapse:collapse;margin:6px 0 12px;width:100%}\
th,td{text-align:left;padding:3px 8px;border-bottom:1px solid #e3e6ea;vertical-align:top}
th{color:#6b7480;font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums}
.muted{color:#6b7480}.ok{color:#2f8a4c}.bad{color:#c2362f}\
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(360px,1fr));gap:12px}
.card{border:1px solid #e3e6ea;border-radius:6px;padding:8px}\
.kpi{display:flex;flex-wrap:wrap;gap:24px}.kpi b{display:block;font-size:20px}
pre{background:#f6f7f9;padding:10px;overflow:auto;font-size:12px}\
svg{width:100%;height:auto}svg text{font-size:10px;fill:#6b7480}
.legend span{margin-right:14px;font-size:12px}\
.legend i{display:inline-block;width:12px;height:3px;margin-right:4px;vertical-align:middle}
"""


def esc(v: Any) -> str:
    return html.escape("" if v is None else str(v))


def num(v: Any, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return esc(v)


def when(t: Any) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(t))) if t else "–"


def _smooth(ys: list[float], window: int) -> list[float]:
    out, acc = [], 0.0
    for i, y in enumerate(ys):
        acc += y
        if i >= window:
            acc -= ys[i - window]
        out.append(acc / min(i + 1, window))
    return out


def line_chart(
    series: dict[str, list[tuple[float, float]]],
    *,
    title: str = "",
    smooth: int = 0,
    width: int = 560,
    height: int = 220,
) -> str:
    """An inline SVG line chart of ``series`` (name → points); with ``smooth``, raw lines are faint and a
    moving mean over ``smooth`` points is drawn on top."""
    pts = [p for s in series.values() for p in s]
    if not pts:
        return f'<p class="muted">{esc(title)}: no data</p>'
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y0, y1 = min(p[1] for p in pts), max(p[1] for p in pts)
    if y0 == y1:
        y0, y1 = y0 - 0.5, y1 + 0.5
    pad_l, pad_r, pad_t, pad_b = 46, 10, 18, 24
    sx = lambda x: pad_l + (width - pad_l - pad_r) * ((x - x0) / (x1 - x0) if x1 > x0 else 0.5)  # noqa: E731
    sy = lambda y: height - pad_b - (height - pad_t - pad_b) * (y - y0) / (y1 - y0)  # noqa: E731
    out = [
        f'<svg viewBox="0 0 {width} {height}" role="img" aria-label="{esc(title)}">',
        f'<text x="{pad_l}" y="12" style="font-size:12px;fill:#1d232b">{esc(title)}</text>',
    ]
    for i in range(5):
        y = y0 + (y1 - y0) * i / 4
        out.append(
            f'<line x1="{pad_l}" x2="{width - pad_r}" y1="{sy(y):.1f}" y2="{sy(y):.1f}" stroke="#e3e6ea"/>'
            f'<text x="{pad_l - 4}" y="{sy(y) + 3:.1f}" text-anchor="end">{y:.3g}</text>'
        )
    out.append(
        f'<text x="{pad_l}" y="{height - 6}">{x0:g}</text>'
        f'<text x="{width - pad_r}" y="{height - 6}" text-anchor="end">{x1:g}</text>'
    )
    legend = []
    for i, (name, s) in enumerate(series.items()):
        if not s:
            continue
        color = COLORS[i % len(COLORS)]
        xs, ys = [p[0] for p in s], [p[1] for p in s]
        line = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in zip(xs, ys, strict=True))
        faint = ' stroke-opacity="0.3"' if smooth else ""
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.3"{faint} points="{line}"/>')
        if smooth:
            sm = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in zip(xs, _smooth(ys, smooth), strict=True))
            out.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{sm}"/>')
        legend.append(f'<span><i style="background:{color}"></i>{esc(name)}</span>')
    out.append("</svg>")
    if len(series) > 1:
        out.append(f'<div class="legend">{"".join(legend)}</div>')
    return "".join(out)


def table(columns: list[str], rows: list[list[Any]], numeric: set[int] | None = None) -> str:
    if not rows:
        return '<p class="muted">none</p>'
    numeric = numeric or set()
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = "".join(
        "<tr>"
        + "".join(f'<td class="n">{c}</td>' if i in numeric else f"<td>{c}</td>" for i, c in enumerate(r))
        + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def _records(run_dir: Path) -> list[dict[str, Any]]:

    by_step: dict[int, dict[str, Any]] = {}
    for r in read_metrics(run_dir / "metrics.jsonl"):
        if "step" in r:
            by_step[int(r["step"])] = r  # a resumed learner re-writes steps: keep the last
    return [by_step[s] for s in sorted(by_step)]


def _tasks(records: list[dict[str, Any]]) -> list[str]:
    return sorted({k.split("/", 1)[1] for r in records for k in r if k.startswith("reward/")})


def _first_last(values: list[float], n: int = 10) -> tuple[float, float] | None:
    w = min(n, len(values) // 2)
    if w < 1:
        return None
    return sum(values[:w]) / w, sum(values[-w:]) / w


def _outcome(summary: dict[str, Any], records: list[dict[str, Any]]) -> str:
    kpis = [
        ("reason", summary.get("reason", "–")),
        ("learner steps", len(records)),
        ("updates", sum(1 for r in records if r.get("trained_rows", 0) > 0)),
        ("minutes", summary.get("minutes", "–")),
        ("crashes", summary.get("crashes", "–")),
        ("policy version", records[-1].get("version") if records else "–"),
        ("max staleness", max((r.get("staleness_max", 0) for r in records), default="–")),
    ]
    rewards = [r["reward_mean"] for r in records if r.get("reward_mean") is not None]
    fl = _first_last(rewards)
    if fl:
        kpis.append(("mean reward first → last", f"{fl[0]:.3f} → {fl[1]:.3f}"))
    html_ = (
        '<div class="kpi">'
        + "".join(f"<div><span class='muted'>{esc(k)}</span><b>{esc(v)}</b></div>" for k, v in kpis)
        + "</div>"
    )
    for w in summary.get("warnings", []) or []:
        html_ += f'<p class="bad">{esc(w)}</p>'
    if summary.get("fatal"):
        html_ += f'<p class="bad">fatal: {esc(summary["fatal"])}</p>'
    return html_


def _curves(records: list[dict[str, Any]]) -> str:
    tasks = _tasks(records)
    charts = []
    window = max(1, min(10, len(records) // 5))
    for task in tasks:
        pts = [
            (float(r["step"]), float(r[f"reward/{task}"]))
            for r in records
            if r.get(f"reward/{task}") is not None
        ]
        charts.append(
            f'<div class="card">{line_chart({task: pts}, title=f"reward: {task}", smooth=window)}</div>'
        )
    overall = [
        (float(r["step"]), float(r["reward_mean"])) for r in records if r.get("reward_mean") is not None
    ]
    charts.insert(
        0, f'<div class="card">{line_chart({"all tasks": overall}, title="mean reward", smooth=window)}</div>'
    )
    return '<div class="grid">' + "".join(charts) + "</div>"


def _learner_curves(records: list[dict[str, Any]]) -> str:
    charts = []
    for key, title in LEARNER_CURVES:
        pts = [
            (float(r["step"]), float(r[key]))
            for r in records
            if isinstance(r.get(key), (int, float)) and math.isfinite(float(r[key]))
        ]
        if pts:
            charts.append(f'<div class="card">{line_chart({key: pts}, title=title)}</div>')
    return (
        '<div class="grid">' + "".join(charts) + "</div>"
        if charts
        else '<p class="muted">no learner steps</p>'
    )


def _origin_index(tools: list[dict[str, Any]]) -> dict[str, str]:
    return {f"{t['name']} v{t['version']}": t.get("origin", "") for t in tools}


def _per_task(records: list[dict[str, Any]], tools: list[dict[str, Any]], summary: dict[str, Any]) -> str:
    """Reward first → last per task, the abstained share, and the tools that scored it (the ``tasks`` part of
    ``summary.json``, :mod:`rlar.tool_summary`: tool, version, origin, steps, shadow)."""
    origins = _origin_index(tools)
    tasks_part = summary.get("tasks")
    described: dict[str, Any] = tasks_part if isinstance(tasks_part, dict) else {}
    rows = []
    for task in sorted({*_tasks(records), *described}):
        vals = [float(r[f"reward/{task}"]) for r in records if r.get(f"reward/{task}") is not None]
        abst = [float(r[f"abstain/{task}"]) for r in records if r.get(f"abstain/{task}") is not None]
        fl = _first_last(vals)
        used = []
        for t in (described.get(task) or {}).get("tools", []) or []:
            if not isinstance(t, dict):
                continue
            name = f"{t.get('tool', t.get('name', '?'))} v{t.get('version', '?')}"
            rest = ", ".join(
                f"{esc(k)} {num(v)}" for k, v in t.items() if k not in ("tool", "name", "version", "origin")
            )
            used.append(
                f"{esc(name)} <span class='muted'>({esc(t.get('origin') or origins.get(name, '?'))})"
                f"</span>{': ' + rest if rest else ''}"
            )
        rows.append(
            [
                esc(task),
                len(vals),
                num(fl[0]) if fl else "–",
                num(fl[1]) if fl else "–",
                num(fl[1] - fl[0]) if fl else "–",
                num(sum(abst) / len(abst)) if abst else "–",
                "<br>".join(used) or "–",
            ]
        )
    return table(
        ["task", "steps", "reward first", "reward last", "Δ", "abstained", "tools (origin)"],
        rows,
        {1, 2, 3, 4, 5},
    )


def _tools(observed: dict[str, Any]) -> str:
    rows = []
    for t in observed.get("tools", []):
        v = t.get("validation")
        val = (
            "–"
            if not v
            else (
                "<span class='ok'>passed</span>"
                if v.get("passed")
                else f"<span class='bad'>failed</span> {esc(v.get('reason', ''))}"
            )
        )
        s = t.get("stats") or {}
        lat = s.get("mean_latency_s")
        rows.append(
            [
                esc(t["name"]),
                t["version"],
                esc(t.get("kind")),
                esc(t.get("origin")),
                esc(t.get("state")),
                val,
                s.get("calls", 0),
                num(s.get("abstain_rate")),
                num(s.get("error_rate")),
                "–" if lat is None else f"{1000 * lat:.1f}",
                f"{esc(t.get('registered_by', ''))} {when(t.get('registered_at'))}",
            ]
        )
    out = table(
        [
            "tool",
            "v",
            "kind",
            "origin",
            "state",
            "validation",
            "calls",
            "abstain",
            "error",
            "latency ms",
            "registered",
        ],
        rows,
        {1, 6, 7, 8, 9},
    )
    by_origin = Counter(t.get("origin", "?") for t in observed.get("tools", []))
    if by_origin:
        out = (
            "<p>"
            + ", ".join(f"{n} {esc(o)}" for o, n in by_origin.most_common())
            + " tool versions</p>"
            + out
        )
    regs = [
        [
            when(r.get("at")),
            esc(r.get("name")),
            r.get("version"),
            esc(r.get("kind")),
            esc(r.get("action")),
            esc(r.get("by")),
        ]
        for r in reversed(observed.get("registrations", []))
    ]
    return (
        out
        + "<h3>Registry changes during the run</h3>"
        + table(["time", "tool", "v", "kind", "action", "by"], regs)
    )


def _routing(observed: dict[str, Any]) -> str:
    decisions = list(reversed(observed.get("decisions", [])))  # oldest first
    if not decisions and not observed.get("requests"):
        return '<p class="muted">no routing decisions (static routing: each task used its default tools)</p>'
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for d in decisions:
        by_task[d["task"]].append(d)
    rows = []
    for task, ds in sorted(by_task.items()):
        last = ds[-1]
        tools = ", ".join(f"{t['tool']} v{t['version']}" for t in last.get("tools", [])) or "(none)"
        rows.append(
            [
                esc(task),
                len(ds),
                sum(1 for d in ds if d.get("fallback")),
                esc(tools),
                esc(last.get("backend")),
                num(last.get("confidence"), 2),
                esc(last.get("reason")),
            ]
        )
    out = table(
        ["task", "decisions", "fallbacks", "latest tools", "backend", "confidence", "reason"], rows, {1, 2, 5}
    )
    reqs = [
        [when(r.get("at")), esc(r.get("task")), esc(r.get("request_id")), esc(r.get("description"))]
        for r in reversed(observed.get("requests", []))
    ]
    return (
        out + "<h3>Tool requests (nothing fit)</h3>" + table(["time", "task", "request", "description"], reqs)
    )


def _timings(summary: dict[str, Any], records: list[dict[str, Any]]) -> str:
    if not records:
        return '<p class="muted">no learner steps</p>'
    steps = [float(r["step_s"]) for r in records if isinstance(r.get("step_s"), (int, float))]
    gaps = [b["t_end"] - a["t_end"] for a, b in itertools.pairwise(records) if "t_end" in a and "t_end" in b]
    samples = sum(int(r.get("samples", 0)) for r in records)
    span = records[-1].get("t_end", 0) - records[0].get("t_start", 0)
    q = lambda xs, p: sorted(xs)[min(len(xs) - 1, int(p * len(xs)))] if xs else None  # noqa: E731
    rows = [
        [
            "learner update (s)",
            num(statistics.fmean(steps) if steps else None),
            num(q(steps, 0.5)),
            num(q(steps, 0.95)),
            num(max(steps) if steps else None),
        ],
        [
            "between steps (s)",
            num(statistics.fmean(gaps) if gaps else None),
            num(q(gaps, 0.5)),
            num(q(gaps, 0.95)),
            num(max(gaps) if gaps else None),
        ],
    ]
    out = table(["", "mean", "p50", "p95", "max"], rows, {1, 2, 3, 4})
    out += (
        f"<p>{samples} samples scored and trained on in {span / 60:.1f} min of learning "
        f"({samples / span if span > 0 else 0:.1f} samples/s); run wall time {esc(summary.get('minutes', '–'))} min, "
        f"first step at {when(records[0].get('t_start'))}, last at {when(records[-1].get('t_end'))}.</p>"
    )
    return out


def _events(observed: dict[str, Any]) -> str:
    ev = [
        [
            when(e.get("at")),
            esc(e.get("actor")),
            esc(e.get("kind")),
            esc(e.get("level")),
            esc(e.get("message")),
        ]
        for e in reversed(observed.get("events", []))
    ]
    dl = observed.get("dead_letters", [])
    reasons = Counter(d.get("reason", "") for d in dl)
    out = table(["time", "actor", "kind", "level", "message"], ev)
    out += f"<h3>Dead letters ({len(dl)} kept)</h3>"
    out += table(["reason", "count"], [[esc(r), n] for r, n in reasons.most_common(20)], {1})
    return out


def _tracking(observed: dict[str, Any]) -> str:
    t = observed.get("tracking")
    if not t:
        return '<p class="muted">no tracking backend ([train] report_to = [])</p>'
    rows = [[esc(name), esc(where)] for name, where in t.get("backends", {}).items()]
    rows += [[esc(name), f"<span class='bad'>{esc(err)}</span>"] for name, err in t.get("errors", {}).items()]
    return table(["backend", "where"], rows) + f"<p>{t.get('logged_steps', 0)} steps logged.</p>"


def page(title: str, body: str) -> str:
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
        f"<style>{CSS}</style></head><body>{body}<p class='muted'>written {when(time.time())} by rlar</p>"
        "</body></html>\n"
    )


def write_report(run_dir: str | Path, summary: dict[str, Any] | None = None) -> Path:
    """Write ``<run_dir>/report.html`` from the run's files (see the module docstring); return its path."""
    run = Path(run_dir)
    summary = summary if summary is not None else (_read_json(run / "summary.json") or {})
    observed = _read_json(run / "observed.json") or {}
    records = _records(run)
    config = (run / "config.toml").read_text() if (run / "config.toml").is_file() else ""
    parts = [
        f"<h1>RLAR run report</h1><p class='muted'>{esc(run.resolve())}</p>",
        "<h2>Outcome</h2>" + _outcome(summary, records),
        "<h2>Reward per task</h2>" + _curves(records),
        "<h2>Learner</h2>" + _learner_curves(records),
        "<h2>Tasks</h2>" + _per_task(records, observed.get("tools", []), summary),
        "<h2>Tools</h2>" + _tools(observed),
        "<h2>Routing</h2>" + _routing(observed),
        "<h2>Timings</h2>" + _timings(summary, records),
        "<h2>Events and dead letters</h2>" + _events(observed),
        "<h2>Tracking</h2>" + _tracking(observed),
        f"<h2>Config</h2><pre>{esc(config) or 'config.toml not found'}</pre>",
    ]
    path = run / "report.html"
    path.write_text(page(f"RLAR report {run.name}", "".join(parts)))
    return path


def write_ablation_report(
    out: str | Path,
    rows: list[dict[str, Any]],
    curves: dict[str, list[tuple[int, float]]],
    *,
    title: str = "",
) -> Path:
    """``<out>/report.html`` comparing the modes of ``rlar ablate``, with links to each mode's own report."""
    root = Path(out)
    series = {m: [(float(x), float(y)) for x, y in pts] for m, pts in curves.items()}
    window = max(1, min(10, max((len(p) for p in series.values()), default=0) // 5))
    metrics = sorted({k for r in rows for k in r.get("eval", {})})
    body_rows = []
    for r in rows:
        fl = r.get("reward_all") or {}
        link = Path(r.get("run_dir", "")) / "report.html"
        rel = link.relative_to(root) if link.is_relative_to(root) else link
        label = f"{r['mode']} s{r['seed']}" if "seed" in r else r["mode"]
        body_rows.append(
            [
                esc(label),
                r.get("steps", "–"),
                r.get("minutes", "–"),
                num(fl.get("first")),
                num(fl.get("last")),
                *[num(r.get("eval", {}).get(m)) for m in metrics],
                f'<a href="{esc(rel)}">report</a>' if link.exists() else "–",
            ]
        )
    n = len(metrics)
    body = (
        f"<h1>RLAR ablation</h1><p class='muted'>{esc(title or root.resolve())}</p>"
        "<h2>Mean training reward per mode</h2><p class='muted'>each mode's reward comes from its own tools, so "
        "these curves do not compare across modes; the eval columns do</p>"
        + line_chart(series, title="mean reward (own tools)", smooth=window)
        + "<h2>Modes</h2>"
        + table(
            ["mode", "steps", "minutes", "reward first", "reward last", *metrics, "run"],
            body_rows,
            set(range(1, 5 + n)),
        )
    )
    path = root / "report.html"
    path.write_text(page("RLAR ablation", body))
    return path
