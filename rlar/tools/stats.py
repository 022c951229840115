"""Live usage stats of one tool version: what a reward worker counts between flushes (:class:`StatsDelta`)
and how the registry merges such deltas into the stored record (``stats.<name>.v<N>``, see
:mod:`rlar.registry`)."""

from __future__ import annotations

import time
from typing import Any

HIST_BINS = 10
MAX_REASONS = 20


class StatsDelta:
    """Counts one worker accumulates for one tool version between flushes (``record_stats`` merges them).

    ``to_dict()`` is the delta format ``record_stats`` takes: ``calls``, ``ok``, ``abstain``, ``error``,
    ``cached`` (ints), ``latency_sum_s`` (float; cached results count 0), ``hist`` (10 ints: ok scores
    normalised to [0, 1] over the declared range, bin ``min(int(10 x), 9)``), ``reasons`` ({reason: count}
    for abstain/error, reasons cut to 120 characters).
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
        else:
            self.error += 1
        if status != "ok":
            key = (reason or "?")[:120]
            self.reasons[key] = self.reasons.get(key, 0) + 1

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
        }


def merge_stats(cur: dict[str, Any] | None, delta: dict[str, Any]) -> dict[str, Any]:
    """A stored stats record plus a worker's delta (``StatsDelta.to_dict()``); rare reasons are folded."""
    out = dict(cur or {})
    for k in ("calls", "ok", "abstain", "error", "cached"):
        out[k] = int(out.get(k, 0)) + int(delta.get(k, 0))
    out["latency_sum_s"] = float(out.get("latency_sum_s", 0.0)) + float(delta.get("latency_sum_s", 0.0))
    hist = list(out.get("hist") or [0] * HIST_BINS)
    for i, v in enumerate(delta.get("hist") or []):
        if i < HIST_BINS:
            hist[i] += int(v)
    out["hist"] = hist
    reasons: dict[str, int] = dict(out.get("reasons") or {})
    for r, n in (delta.get("reasons") or {}).items():
        reasons[r] = reasons.get(r, 0) + int(n)
    if len(reasons) > MAX_REASONS:
        # Keep the most frequent; fold the rest into "(other)" so the record stays small.
        ranked = sorted(reasons.items(), key=lambda kv: -kv[1])
        kept = dict(ranked[: MAX_REASONS - 1])
        kept["(other)"] = kept.get("(other)", 0) + sum(n for _, n in ranked[MAX_REASONS - 1 :])
        reasons = kept
    out["reasons"] = reasons
    out["updated_at"] = time.time()
    return out


def derived_stats(stats: dict[str, Any]) -> dict[str, Any]:
    """A stored stats record with every field present and mean latency, error and abstain rates added."""
    calls = int(stats.get("calls", 0))
    out = dict(stats)
    for k in ("calls", "ok", "abstain", "error", "cached"):
        out.setdefault(k, 0)
    out.setdefault("latency_sum_s", 0.0)
    out.setdefault("hist", [0] * HIST_BINS)
    out.setdefault("reasons", {})
    out["mean_latency_s"] = out["latency_sum_s"] / calls if calls else 0.0
    out["error_rate"] = out["error"] / calls if calls else 0.0
    out["abstain_rate"] = out["abstain"] / calls if calls else 0.0
    return out
