"""Live usage stats of one tool version: what a reward worker counts between flushes (:class:`StatsDelta`)
and how the registry merges such deltas into the stored record (``stats.<name>.v<N>``, see
:mod:`rlar.registry`); and :class:`ThroughputWatch`, the reward worker's warning when one tool holds reward
throughput down."""

from __future__ import annotations

import math
import statistics
import time
from collections import deque
from typing import Any

HIST_BINS = 10
MAX_REASONS = 20


class StatsDelta:
    """Counts one worker accumulates for one tool version between flushes (``record_stats`` merges them).

    ``to_dict()`` is the delta format ``record_stats`` takes: ``calls``, ``ok``, ``abstain``, ``error``,
    ``cached`` (ints), ``latency_sum_s`` (float; cached results count 0), ``hist`` (10 ints: ok scores
    normalised to [0, 1] over the declared range, bin ``min(int(10 x), 9)``), ``reasons`` ({reason: count}
    for abstain/error, reasons cut to 120 characters), ``error_reasons`` (the same for errors alone: what
    the end-of-run summary and the dashboard name), ``timeouts`` (abstains "timeout after …"),
    ``timeout_streak`` (the longest run of consecutive timeouts a worker saw; merged as a maximum),
    ``warnings`` (throughput warnings raised) and ``last_warning`` (the newest one's text).
    """

    def __init__(self, score_range: tuple[float, float] = (0.0, 1.0)) -> None:
        self.score_range = score_range
        self.calls = 0
        self.ok = 0
        self.abstain = 0
        self.error = 0
        self.cached = 0
        self.latency_sum_s = 0.0
        self.hist = [0] * HIST_BINS
        self.reasons: dict[str, int] = {}
        self.error_reasons: dict[str, int] = {}
        self.timeouts = 0
        self.timeout_streak = 0
        self.warnings = 0
        self.last_warning = ""

    def warn(self, text: str, streak: int = 0) -> None:
        """Record a throughput warning (and the timeout streak behind it, if any)."""
        self.warnings += 1
        self.last_warning = text[:500]
        self.timeout_streak = max(self.timeout_streak, streak)

    def add(
        self, status: str, score: float | None, latency_s: float, *, cached: bool = False, reason: str = ""
    ) -> None:
        self.calls += 1
        self.latency_sum_s += float(latency_s)
        if cached:
            self.cached += 1
        if status == "ok" and score is not None:
            self.ok += 1
            lo, hi = self.score_range
            x = (float(score) - lo) / (hi - lo) if hi > lo else 0.0
            self.hist[min(max(int(x * HIST_BINS), 0), HIST_BINS - 1)] += 1
        elif status == "abstain":
            self.abstain += 1
            self.timeouts += reason.startswith("timeout after")
        else:
            self.error += 1
        if status != "ok":
            key = (reason or "?")[:120]
            self.reasons[key] = self.reasons.get(key, 0) + 1
            if status == "error":
                self.error_reasons[key] = self.error_reasons.get(key, 0) + 1

    @property
    def empty(self) -> bool:
        return self.calls == 0

    def merge(self, other: StatsDelta) -> None:
        """Add another delta's counts to this one (e.g. one that failed to flush)."""
        self.calls += other.calls
        self.ok += other.ok
        self.abstain += other.abstain
        self.error += other.error
        self.cached += other.cached
        self.latency_sum_s += other.latency_sum_s
        self.hist = [a + b for a, b in zip(self.hist, other.hist, strict=True)]
        for r, n in other.reasons.items():
            self.reasons[r] = self.reasons.get(r, 0) + n
        for r, n in other.error_reasons.items():
            self.error_reasons[r] = self.error_reasons.get(r, 0) + n
        self.timeouts += other.timeouts
        self.timeout_streak = max(self.timeout_streak, other.timeout_streak)
        self.warnings += other.warnings
        self.last_warning = other.last_warning or self.last_warning

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "ok": self.ok,
            "abstain": self.abstain,
            "error": self.error,
            "cached": self.cached,
            "latency_sum_s": self.latency_sum_s,
            "hist": list(self.hist),
            "reasons": dict(self.reasons),
            "error_reasons": dict(self.error_reasons),
            "timeouts": self.timeouts,
            "timeout_streak": self.timeout_streak,
            "warnings": self.warnings,
            "last_warning": self.last_warning,
        }


def _fold(reasons: dict[str, int]) -> dict[str, int]:
    """Keep the most frequent reasons; fold the rest into "(other)" so the record stays small."""
    if len(reasons) <= MAX_REASONS:
        return reasons
    ranked = sorted(reasons.items(), key=lambda kv: -kv[1])
    kept = dict(ranked[: MAX_REASONS - 1])
    kept["(other)"] = kept.get("(other)", 0) + sum(n for _, n in ranked[MAX_REASONS - 1 :])
    return kept


def merge_stats(cur: dict[str, Any] | None, delta: dict[str, Any]) -> dict[str, Any]:
    """A stored stats record plus a worker's delta (``StatsDelta.to_dict()``); rare reasons are folded."""
    out = dict(cur or {})
    for k in ("calls", "ok", "abstain", "error", "cached", "timeouts", "warnings"):
        out[k] = int(out.get(k, 0)) + int(delta.get(k, 0))
    out["timeout_streak"] = max(int(out.get("timeout_streak", 0)), int(delta.get("timeout_streak", 0)))
    out["last_warning"] = str(delta.get("last_warning") or out.get("last_warning") or "")
    errors: dict[str, int] = dict(out.get("error_reasons") or {})
    for r, n in (delta.get("error_reasons") or {}).items():
        errors[r] = errors.get(r, 0) + int(n)
    out["error_reasons"] = _fold(errors)
    out["latency_sum_s"] = float(out.get("latency_sum_s", 0.0)) + float(delta.get("latency_sum_s", 0.0))
    hist = list(out.get("hist") or [0] * HIST_BINS)
    for i, v in enumerate(delta.get("hist") or []):
        if i < HIST_BINS:
            hist[i] += int(v)
    out["hist"] = hist
    reasons: dict[str, int] = dict(out.get("reasons") or {})
    for r, n in (delta.get("reasons") or {}).items():
        reasons[r] = reasons.get(r, 0) + int(n)
    out["reasons"] = _fold(reasons)
    out["updated_at"] = time.time()
    return out


def derived_stats(stats: dict[str, Any]) -> dict[str, Any]:
    """A stored stats record with every field present and mean latency, error and abstain rates added."""
    calls = int(stats.get("calls", 0))
    out = dict(stats)
    for k in ("calls", "ok", "abstain", "error", "cached", "timeouts", "timeout_streak", "warnings"):
        out.setdefault(k, 0)
    out.setdefault("latency_sum_s", 0.0)
    out.setdefault("hist", [0] * HIST_BINS)
    out.setdefault("reasons", {})
    out.setdefault("error_reasons", {})
    out.setdefault("last_warning", "")
    top = max(out["error_reasons"].items(), key=lambda kv: kv[1], default=None)
    out["top_error"] = {"reason": top[0], "count": int(top[1])} if top else None
    out["mean_latency_s"] = out["latency_sum_s"] / calls if calls else 0.0
    out["error_rate"] = out["error"] / calls if calls else 0.0
    out["abstain_rate"] = out["abstain"] / calls if calls else 0.0
    return out


class ThroughputWatch:
    """Watches one tool version in a reward worker and says, in words naming the tool, when it holds reward
    throughput down:

    - ``streak_warn`` timeouts in a row: each cost the whole deadline, so at most ``concurrency`` samples
      finish per deadline (warned once per streak);
    - a backlog: ``ceil(in flight / concurrency) × p50 latency`` (over the last ``window`` uncached calls)
      at or above ``backlog_warn_s`` — the samples waiting for the tool take that long to score (at most
      once per ``every_s``).

    ``started(n)`` / ``finished(results)`` return the new warnings (texts); the caller logs and publishes them.
    ``concurrency`` None (an in-process tool without a bound, a reward model batching across requests) skips
    the backlog check. ``per_call``: the tool scores a request's samples in one call (batched tools), so one
    call is the unit — a call that times out is one timeout, and in-flight work is counted in calls.
    """

    def __init__(
        self,
        name: str,
        version: int,
        *,
        concurrency: int | None,
        deadline_s: float,
        streak_warn: int = 3,
        backlog_warn_s: float = 30.0,
        every_s: float = 60.0,
        window: int = 64,
        per_call: bool = False,
    ) -> None:
        self.tool = f"{name} v{version}"
        self.per_call = per_call
        self.unit = "calls" if per_call else "samples"
        self.concurrency = concurrency
        self.deadline_s = deadline_s
        self.streak_warn = streak_warn
        self.backlog_warn_s = backlog_warn_s
        self.every_s = every_s
        self.latencies: deque[float] = deque(maxlen=window)
        self.inflight = 0
        self.streak = 0
        self._streak_warned = False
        self._backlog_warned_at = -math.inf

    def p50(self) -> float | None:
        return statistics.median(self.latencies) if self.latencies else None

    def started(self, n: int, now: float | None = None) -> list[str]:
        """``n`` samples of one call started."""
        self.inflight += min(n, 1) if self.per_call else n
        return self._backlog(time.monotonic() if now is None else now)

    def finished(self, results: list[Any], n: int | None = None, now: float | None = None) -> list[str]:
        """``results``: the ``ToolResult``s of one call (status, reason, latency_s, details); ``n``: how many
        ``started`` was given for it (default ``len(results)``; a cancelled call has no results)."""
        n = len(results) if n is None else n
        if self.per_call:
            results, n = results[:1], min(n, 1)
        self.inflight = max(0, self.inflight - n)
        out = []
        for r in results:
            if r.status == "abstain" and r.reason.startswith("timeout after"):
                self.streak += 1
            else:
                self.streak, self._streak_warned = 0, False
            if not r.details.get("cached"):
                self.latencies.append(float(r.latency_s))
            if self.streak >= self.streak_warn and not self._streak_warned:
                self._streak_warned = True
                c = self.concurrency or 1
                out.append(
                    f"{self.tool}: {self.streak} timeouts in a row at its {self.deadline_s:g}s deadline — each costs "
                    f"the whole deadline, so reward throughput is down to at most {c} {self.unit} per "
                    f"{self.deadline_s:g}s ({c / self.deadline_s:.2g}/s); make it faster, or raise its deadline_s "
                    "or concurrency"
                )
        return out + self._backlog(time.monotonic() if now is None else now)

    def _backlog(self, now: float) -> list[str]:
        p50 = self.p50()
        c = self.concurrency
        if c is None or p50 is None or p50 <= 0 or self.inflight <= c:
            return []
        backlog = math.ceil(self.inflight / c) * p50
        if backlog < self.backlog_warn_s or now - self._backlog_warned_at < self.every_s:
            return []
        self._backlog_warned_at = now
        return [
            f"{self.tool} limits reward throughput: {self.inflight} {self.unit} in flight at concurrency {c} with "
            f"a p50 latency of {p50:.2g}s take ~{backlog:.0f}s to score (at most {c / p50:.2g} {self.unit}/s); "
            "raise its concurrency or make it faster"
        ]
