"""Experiment tracking: a bus subscriber that logs a run to TensorBoard, Weights & Biases and/or MLflow.

``[train] report_to`` (default ``["tensorboard"]``) names the backends (:mod:`rlar.observe.backends`). The
:class:`Tracker` is a :class:`~rlar.observe.feed.Feed` sink: it sees the learner's metrics, every sample
and reward, routing decisions, tool registrations and requests, events and dead letters as they go over
the bus, and logs at the learner's step:

- every numeric learner metric (``learner/<name>``; ``reward/<task>`` and ``abstain/<task>`` as they are);
- the staleness histogram of the step's samples (``learner/staleness``);
- per tool version, over the rewards published since the previous step: calls, abstain and error rate, mean
  score, mean and p95 latency (``tool/<tool vN>/…``) and a latency histogram;
- ``bus/dead_letters`` (cumulative) and the step's ``bus/samples`` and ``bus/rewards``;
- every ``samples_every`` steps a ``samples`` table of the newest fully scored samples (step, task, prompt,
  response, reward, status, tools, policy version);
- as they happen: ``routing/decisions``, ``tools/registered``, ``tools/requests`` and ``events`` rows.

Logging never blocks the bus: records go to a bounded queue that one writer thread drains into the
backends (which are created in that thread too, so a slow ``wandb.init`` does not delay the run). A
backend that fails is reported once (``errors``) and the others go on.
"""

from __future__ import annotations

import collections
import logging
import queue
import threading
import time
from pathlib import Path
from typing import Any

from rlar.observe.backends import Backend, make_backend
from rlar.observe.config import TrackingConfig, check_report_to
from rlar.observe.feed import RewardView, SampleJoin, SampleView, combined_reward

log = logging.getLogger("rlar.observe.tracking")

__all__ = ["Tracker", "learner_scalars"]

_SKIP = {"t_start", "t_end", "samples_created_min", "samples_created_max", "step"}
SAMPLE_COLUMNS = ["step", "task", "prompt", "response", "reward", "status", "tools", "policy_version"]
DECISION_COLUMNS = [
    "step",
    "time",
    "task",
    "tools",
    "backend",
    "model",
    "confidence",
    "fallback",
    "reason",
    "signature",
]
REGISTERED_COLUMNS = ["step", "time", "tool", "version", "kind", "action", "by"]
REQUEST_COLUMNS = ["step", "time", "task", "request_id", "description"]
EVENT_COLUMNS = ["step", "time", "actor", "kind", "level", "message"]


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def learner_scalars(values: dict[str, Any]) -> dict[str, float]:
    """The scalars of one learner metrics record (see the module docstring for the names)."""
    out: dict[str, float] = {}
    for k, v in values.items():
        if k in _SKIP:
            continue
        if isinstance(v, (dict, list)):
            continue  # staleness_hist: a histogram of its own; tools: the routes, in the tables
        elif _num(v):
            name = k if "/" in k else f"learner/{k}"
            out[name] = float(v)
    return out


class _ToolWindow:
    """Rewards of one tool version since the last learner step."""

    __slots__ = ("abstain", "cached", "error", "latencies", "scores")

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.scores: list[float] = []
        self.abstain = self.error = self.cached = 0

    def add(self, r: RewardView) -> None:
        if r.cached:
            self.cached += 1
        else:
            self.latencies.append(r.latency_s)
        if r.status == "ok" and r.score is not None:
            self.scores.append(float(r.score))
        elif r.status == "abstain":
            self.abstain += 1
        else:
            self.error += 1

    def scalars(self, prefix: str) -> dict[str, float]:
        calls = len(self.scores) + self.abstain + self.error
        out = {
            f"{prefix}/calls": float(calls),
            f"{prefix}/abstain_rate": self.abstain / calls,
            f"{prefix}/error_rate": self.error / calls,
            f"{prefix}/cached": float(self.cached),
        }
        if self.scores:
            out[f"{prefix}/mean_score"] = sum(self.scores) / len(self.scores)
        if self.latencies:
            lat = sorted(self.latencies)
            out[f"{prefix}/latency_mean_s"] = sum(lat) / len(lat)
            out[f"{prefix}/latency_p95_s"] = lat[min(len(lat) - 1, int(0.95 * len(lat)))]
        return out


class Tracker:
    """Feed sink that logs to the ``report_to`` backends (see the module docstring)."""

    def __init__(
        self,
        run_dir: str | Path,
        report_to: list[str],
        cfg: TrackingConfig | None = None,
        config_doc: dict[str, Any] | None = None,
    ) -> None:
        check_report_to(list(report_to))
        self.run_dir = Path(run_dir)
        self.report_to = list(dict.fromkeys(report_to))
        self.cfg = cfg or TrackingConfig()
        self.config_doc = config_doc or {}
        self.step = 0
        self.errors: dict[str, str] = {}
        self.logged_steps = 0
        self.dropped = 0
        self.backends: list[Backend] = []
        self._q: queue.Queue[tuple[str, tuple[Any, ...]] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._tools: dict[str, _ToolWindow] = collections.defaultdict(_ToolWindow)
        self._join = SampleJoin()
        self._complete: collections.deque[tuple[SampleView, list[RewardView]]] = collections.deque(
            maxlen=self.cfg.samples_rows
        )
        self._dead_letters = 0
        self._step_samples = 0
        self._step_rewards = 0

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the writer thread (it creates the backends first)."""
        self._thread = threading.Thread(target=self._writer, name="rlar-tracking", daemon=True)
        self._thread.start()

    def wait_ready(self, timeout_s: float = 120.0) -> bool:
        """True once every backend has been created (or has failed to be)."""
        return self._ready.wait(timeout_s)

    def close(self, timeout_s: float = 120.0) -> None:
        """Log what is queued, close every backend (``wandb`` finishes its run, MLflow ends its run)."""
        if self._thread is None:
            return
        self._q.put(None)
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            log.error("tracking: the writer did not finish within %.0f s", timeout_s)
        self._thread = None

    def _writer(self) -> None:
        for name in self.report_to:
            try:
                self.backends.append(make_backend(name, self.run_dir, self.cfg, self.config_doc))
            except Exception as exc:
                self.errors[name] = f"{type(exc).__name__}: {exc}"
                log.error("tracking: %s could not start: %s", name, self.errors[name])
        self._ready.set()
        while True:
            item = self._q.get()
            if item is None:
                break
            method, args = item
            for b in list(self.backends):
                try:
                    getattr(b, method)(*args)
                except Exception as exc:
                    self.errors[b.name] = f"{type(exc).__name__}: {exc}"
                    log.error("tracking: %s failed (%s); it logs nothing more", b.name, self.errors[b.name])
                    self.backends.remove(b)
        for b in self.backends:
            try:
                b.close()
            except Exception as exc:
                self.errors[b.name] = f"close: {type(exc).__name__}: {exc}"
                log.error("tracking: closing %s failed: %s", b.name, exc)

    def _put(self, method: str, *args: Any) -> None:
        if method != "scalars" and self._q.qsize() >= self.cfg.queue_limit:
            self.dropped += 1
            return
        self._q.put((method, args))

    # -- the sink ---------------------------------------------------------------------------------
    def observe(self, kind: str, item: Any) -> None:
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(item)

    def _on_sample(self, s: SampleView) -> None:
        self._step_samples += 1
        done = self._join.add_sample(s)
        if done:
            self._complete.append(done)

    def _on_reward(self, r: RewardView) -> None:
        self._step_rewards += 1
        self._tools[f"{r.tool} v{r.tool_version}"].add(r)
        done = self._join.add_reward(r)
        if done:
            self._complete.append(done)

    def _on_metrics(self, m: Any) -> None:
        if m.actor != "learner":
            return
        self.step = max(self.step, int(m.step))
        step = int(m.step)
        values = learner_scalars(m.values)
        for tool, window in self._tools.items():
            values.update(window.scalars(f"tool/{tool}"))
            if window.latencies:
                self._put("histogram", step, f"tool/{tool}/latency_s", list(window.latencies))
        self._tools.clear()
        values.update(
            {
                "bus/dead_letters": float(self._dead_letters),
                "bus/samples": float(self._step_samples),
                "bus/rewards": float(self._step_rewards),
            }
        )
        self._step_samples = self._step_rewards = 0
        self._put("scalars", step, values)
        hist = m.values.get("staleness_hist")
        if isinstance(hist, dict) and hist:
            lags = [float(k) for k, n in hist.items() for _ in range(int(n))]
            if lags:
                self._put("histogram", step, "learner/staleness", lags)
        if step == 1 or step % self.cfg.samples_every == 0:
            self._put("table", step, "samples", SAMPLE_COLUMNS, self.sample_rows(step))
        self.logged_steps += 1

    def sample_rows(self, step: int) -> list[list[Any]]:
        rows = []
        for s, rewards in reversed(self._complete):
            status, score = combined_reward(rewards)
            tools = ", ".join(
                f"{r.tool} v{r.tool_version}={'-' if r.score is None else round(r.score, 4)} ({r.status})"
                for r in rewards
            )
            rows.append([step, s.task, s.query, s.response, score, status, tools, s.policy_version])
        return rows

    def _stamp(self, at: float) -> str:
        return time.strftime("%H:%M:%S", time.localtime(at))

    def _on_decision(self, d: Any) -> None:
        tools = ", ".join(f"{t.tool} v{t.version} ×{t.weight:g}" for t in d.tools) or "(none)"
        self._put(
            "row",
            self.step,
            "routing/decisions",
            DECISION_COLUMNS,
            [
                self.step,
                self._stamp(d.at),
                d.task,
                tools,
                d.backend,
                d.model,
                round(float(d.confidence), 4),
                bool(d.fallback),
                d.reason,
                d.signature,
            ],
        )

    def _on_registered(self, t: Any) -> None:
        self._put(
            "row",
            self.step,
            "tools/registered",
            REGISTERED_COLUMNS,
            [self.step, self._stamp(t.at), t.name, int(t.version), t.kind, t.action, t.by],
        )

    def _on_tool_request(self, r: Any) -> None:
        self._put(
            "row",
            self.step,
            "tools/requests",
            REQUEST_COLUMNS,
            [self.step, self._stamp(r.at), r.task, r.request_id, r.description],
        )

    def _on_event(self, e: Any) -> None:
        self._put(
            "row",
            self.step,
            "events",
            EVENT_COLUMNS,
            [self.step, self._stamp(e.at), e.actor, e.kind, e.level, e.message],
        )

    def _on_dead_letter(self, d: Any) -> None:
        self._dead_letters += 1

    def where(self) -> dict[str, str]:
        """Where each running backend writes (for the closing lines of ``rlar train``)."""
        out = {}
        for b in self.backends:
            path = getattr(b, "logdir", None) or getattr(b, "dir", None) or getattr(b, "uri", "")
            out[b.name] = str(path)
        return out
