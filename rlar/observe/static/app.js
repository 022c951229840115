// RLAR dashboard: renders the LiveState sections pushed over Server-Sent Events (/api/events).
// No framework, no network beyond this server. Text from the bus is always inserted as text, never as HTML.
"use strict";

const S = {};            // the sections, as last received
let clockSkew = 0;       // server time - browser time (s), for ages
let lastUpdate = 0;
const COLORS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                "#9c755f", "#bab0ac"];

const token = new URLSearchParams(location.hash.slice(1)).get("token") ||
              new URLSearchParams(location.search).get("token") || "";

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null) continue;
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(c == null ? "" : String(c)));
  return e;
}
const now = () => Date.now() / 1000 + clockSkew;
const fmt = (v, d = 3) => v == null || Number.isNaN(v) ? "–" : typeof v === "number" ? +v.toFixed(d) + ""
  : typeof v === "object" ? JSON.stringify(v) : String(v);
const pct = v => v == null ? "–" : (100 * v).toFixed(1) + "%";
const clock = t => t ? new Date(t * 1000).toLocaleTimeString() : "–";
function ago(t) {
  if (!t) return "–";
  const s = Math.max(0, now() - t);
  return s < 90 ? s.toFixed(0) + " s ago" : s < 5400 ? (s / 60).toFixed(0) + " min ago" : (s / 3600).toFixed(1) + " h ago";
}
function dur(s) { return s == null ? "–" : s < 90 ? s.toFixed(0) + " s" : s < 5400 ? (s / 60).toFixed(0) + " min" : (s / 3600).toFixed(1) + " h"; }
function fill(id, rows) {
  const body = document.querySelector(`#${id} tbody`);
  body.replaceChildren(...rows);
}
function short(text, n) { text = text == null ? "" : String(text); return text.length > n ? text.slice(0, n - 1) + "…" : text; }

const render = {
  run() {
    const r = S.run || {};
    document.getElementById("describe").textContent = r.describe || "";
  },
  actors() {
    fill("actors", (S.actors || []).map(a => {
      const info = Object.entries(a.info || {}).map(([k, v]) => k === "metrics_url"
        ? el("a", {href: v, target: "_blank"}, "metrics") : el("span", {class: "tag"}, `${k}=${short(fmt(v), 60)}`));
      const counters = Object.entries(a.counters || {}).sort().map(([k, v]) => `${k}=${v}`).join(" ");
      return el("tr", {"data-actor": a.actor, "data-instance": a.instance, "data-health": a.health},
        el("td", {}, a.actor), el("td", {class: "mono"}, a.instance),
        el("td", {}, el("span", {class: "pill " + (a.health === "running" ? "ok" : a.health === "crashed" || a.health === "silent" ? "bad" : "warn")}, a.health)),
        el("td", {}, a.host), el("td", {}, a.pid), el("td", {}, dur(a.uptime_s)),
        el("td", {"data-age": a.sent_at}, ago(a.sent_at)), el("td", {}, ...info), el("td", {class: "small"}, short(counters, 160)));
    }));
  },
  learner() {
    const l = S.learner || {};
    const items = [["step", l.step], ["policy version", l.version], ["samples/s", fmt(l.samples_per_s, 1)],
                   ["tokens/s", fmt(l.tokens_per_s, 0)], ["step time", l.step_s == null ? "–" : fmt(l.step_s, 2) + " s"],
                   ["max staleness", l.staleness_max], ["abstained", pct(l.abstain_frac)],
                   ["prompts consumed / dropped", `${fmt(l.consumed_prompts)} / ${fmt(l.dropped_prompts)}`]];
    document.getElementById("learner").replaceChildren(...items.map(([k, v]) =>
      el("div", {}, el("span", {class: "muted"}, k), el("b", {}, v == null ? "–" : v))));
    const hist = l.staleness_hist || {};
    const total = Object.values(hist).reduce((a, b) => a + b, 0) || 1;
    document.getElementById("staleness").replaceChildren(...Object.entries(hist).map(([lag, n]) =>
      el("div", {class: "bar", title: `${n} samples ${lag} version(s) behind`},
        el("span", {}, `lag ${lag}`), el("i", {style: `width:${(100 * n / total).toFixed(1)}%`}), el("span", {}, n))));
  },
  curves() {
    const curves = S.curves || {};
    const tasks = Object.keys(curves).sort((a, b) => (a === "all") - (b === "all") || a.localeCompare(b));
    const W = 640, H = 260, P = 34;
    let xmax = 1, ymin = 0, ymax = 1;
    for (const t of tasks) for (const [x, y] of curves[t]) { xmax = Math.max(xmax, x); ymin = Math.min(ymin, y); ymax = Math.max(ymax, y); }
    const sx = x => P + (W - 2 * P) * x / xmax, sy = y => H - P - (H - 2 * P) * (y - ymin) / ((ymax - ymin) || 1);
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    svg.setAttribute("data-testid", "reward-chart");
    const line = (x1, y1, x2, y2, cls) => { const l = document.createElementNS(ns, "line");
      Object.entries({x1, y1, x2, y2, class: cls}).forEach(([k, v]) => l.setAttribute(k, v)); svg.append(l); };
    const text = (x, y, s, anchor) => { const t = document.createElementNS(ns, "text");
      t.setAttribute("x", x); t.setAttribute("y", y); t.setAttribute("text-anchor", anchor || "middle"); t.textContent = s; svg.append(t); };
    for (let i = 0; i <= 4; i++) { const y = ymin + (ymax - ymin) * i / 4; line(P, sy(y), W - P, sy(y), "grid"); text(P - 4, sy(y) + 4, y.toFixed(2), "end"); }
    text(W / 2, H - 6, `learner step (max ${xmax})`);
    const legend = [];
    // Per task: the raw per-step rewards faintly, and their trend (state.py's EMA, point[2]) on top.
    const polyline = (pts, attrs) => { const pl = document.createElementNS(ns, "polyline");
      pl.setAttribute("points", pts.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(" "));
      Object.entries(attrs).forEach(([k, v]) => pl.setAttribute(k, v)); svg.append(pl); };
    tasks.forEach((t, i) => {
      const color = t === "all" ? "#333" : COLORS[i % COLORS.length];
      const pts = curves[t], kind = t === "all" ? "curve all" : "curve";
      polyline(pts, {stroke: color, class: kind + " raw", "data-raw-task": t});
      polyline(pts.map(([x, y, s]) => [x, s ?? y]), {stroke: color, class: kind + " trend", "data-task": t,
                                                     "data-points": pts.length});
      const last = pts[pts.length - 1];
      legend.push(el("span", {"data-task": t, title: last ? `last step ${fmt(last[1])}, trend ${fmt(last[2] ?? last[1])}` : ""},
        el("i", {style: `background:${color}`}), `${t} ${last ? fmt(last[2] ?? last[1]) : ""} (${pts.length})`));
    });
    document.getElementById("curves").replaceChildren(svg);
    document.getElementById("legend").replaceChildren(...legend);
  },
  bus() {
    const b = S.bus || {};
    fill("streams", (b.streams || []).map(s => el("tr", {"data-stream": s.stream},
      el("td", {}, s.stream), el("td", {}, s.messages), el("td", {}, s.bytes), el("td", {}, fmt(s.rate_per_s, 1)))));
    fill("consumers", (b.consumers || []).map(c => el("tr", {"data-consumer": c.consumer, class: c.pending > 1000 ? "hot" : ""},
      el("td", {}, `${c.stream}/${c.consumer}`), el("td", {}, c.pending), el("td", {}, c.ack_pending),
      el("td", {}, c.redelivered), el("td", {}, c.waiting))));
  },
  tools() {
    const t = S.tools || {};
    fill("tools", (t.tools || []).map(x => {
      const v = x.validation;
      const val = v == null ? el("span", {class: "muted"}, "–")
        : el("span", {class: "pill " + (v.passed ? "ok" : "bad"), title: v.reason || ""}, v.passed ? "passed" : "failed");
      const s = x.stats || {};
      return el("tr", {"data-tool": x.name, "data-version": x.version, "data-origin": x.origin},
        el("td", {title: x.description || ""}, x.name), el("td", {}, x.version), el("td", {}, x.kind),
        el("td", {}, el("span", {class: "tag origin-" + (x.origin || "").replace(/[^a-z-]/g, "")}, x.origin || "?")),
        el("td", {title: x.state_reason || ""}, x.state), el("td", {}, val), el("td", {}, s.calls ?? 0),
        el("td", {}, pct(s.abstain_rate)), el("td", {class: s.error ? "hot" : ""}, pct(s.error_rate)),
        el("td", {}, s.mean_latency_s == null ? "–" : (1000 * s.mean_latency_s).toFixed(1) + " ms"),
        el("td", {class: "small problem", "data-testid": "tool-problem"}, [
          s.top_error ? `${s.top_error.count}× ${s.top_error.reason}` : "",
          s.last_warning || (s.timeouts ? `${s.timeouts} timeouts` : "")].filter(Boolean).join(" · ") || "–"),
        el("td", {class: "small"}, `${x.registered_by || ""} ${clock(x.registered_at)}`));
    }));
  },
  routing() {
    const r = S.routing || {};
    fill("decisions", (r.decisions || []).map(d => el("tr", {"data-task": d.task},
      el("td", {}, clock(d.at)), el("td", {}, d.task),
      el("td", {}, (d.tools || []).map(t => `${t.tool} v${t.version}${t.weight !== 1 ? " ×" + t.weight : ""}`).join(", ") || "(none)"),
      el("td", {}, d.backend + (d.model ? ` (${d.model})` : "") + (d.fallback ? " · fallback" : "")),
      el("td", {}, fmt(d.confidence, 2)), el("td", {class: "small", title: d.signature}, short(d.reason, 200)))));
    fill("requests", (r.requests || []).map(q => el("tr", {},
      el("td", {}, clock(q.at)), el("td", {class: "mono"}, q.request_id), el("td", {}, q.task), el("td", {class: "small"}, short(q.description, 200)))));
  },
  samples() {
    fill("samples", (S.samples || []).map(s => el("tr", {"data-task": s.task},
      el("td", {}, clock(s.at)), el("td", {}, s.task), el("td", {class: "mono small"}, short(s.prompt, 120)),
      el("td", {class: "mono small"}, short(s.response, 120)),
      el("td", {}, s.reward == null ? s.status : fmt(s.reward)),
      el("td", {class: "small"}, (s.tools || []).map(t => `${t.tool} v${t.version}: ${t.score == null ? t.status : fmt(t.score)}` +
        ` (${(1000 * t.latency_s).toFixed(0)} ms)`).join("; ")),
      el("td", {}, s.policy_version))));
  },
  dead_letters() {
    fill("dlq", (S.dead_letters || []).map(d => el("tr", {"data-subject": d.subject},
      el("td", {}, clock(d.at)), el("td", {class: "mono small"}, d.subject), el("td", {class: "reason"}, d.reason),
      el("td", {class: "small"}, `${d.actor} ×${d.deliveries}`), el("td", {class: "mono small"}, `${d.size} B ${short(d.preview, 80)}`))));
  },
  events() {
    fill("events", (S.events || []).map(e => el("tr", {class: e.level === "error" ? "hot" : ""},
      el("td", {}, clock(e.at)), el("td", {}, e.actor), el("td", {}, e.kind), el("td", {class: "small"}, short(e.message, 300)))));
  },
};

function apply(doc) {
  clockSkew = doc.now - Date.now() / 1000;
  for (const [name, value] of Object.entries(doc.sections || {})) {
    S[name] = value;
    if (render[name]) render[name]();
  }
  lastUpdate = Date.now();
  document.body.setAttribute("data-seq", doc.seq);
  const l = S.learner || {};
  document.getElementById("headline").textContent = `step ${l.step ?? 0} · policy v${l.version ?? 0}`;
}

function connect() {
  const url = "api/events" + (token ? "?token=" + encodeURIComponent(token) : "");
  const es = new EventSource(url);
  const conn = document.getElementById("conn");
  es.addEventListener("snapshot", ev => apply(JSON.parse(ev.data)));
  es.addEventListener("update", ev => apply(JSON.parse(ev.data)));
  es.onopen = () => { conn.textContent = "live"; conn.className = "pill ok"; };
  es.onerror = () => { conn.textContent = "reconnecting…"; conn.className = "pill bad"; };
}

setInterval(() => {  // ages move without updates
  for (const td of document.querySelectorAll("td[data-age]")) td.textContent = ago(+td.getAttribute("data-age"));
  document.getElementById("updated").textContent = lastUpdate ? `updated ${((Date.now() - lastUpdate) / 1000).toFixed(0)} s ago` : "";
}, 1000);
connect();
