"""Tool health: read a tool version's live stats and say whether it looks broken.

The registry keeps cumulative stats per tool version (``ToolRegistry.stats``: calls, ok / abstain / error
counts, a 10-bin histogram of ok scores over the declared range). :class:`HealthWatch` remembers the last
snapshot it saw per version and judges the *window* since then, so a tool that was fine for a long time and
then broke is caught, and an old spike does not haunt it forever. A window is judged only once it holds at
least ``min_calls`` calls. Verdicts (first that applies):

- ``error rate``: errors / calls in the window above ``max_error_rate`` (the tool raises or returns
  garbage — e.g. a synthesised verifier meeting inputs its probes did not cover);
- ``all max``: every ok score in the top bin (it rewards everything: hacked or broken);
- ``collapsed``: every ok score in one bin (it no longer discriminates), when ``flag_constant``.

Abstentions are not errors (no reference, judge unavailable) and are not judged here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["HealthPolicy", "HealthWatch", "Verdict", "assess"]


@dataclass(frozen=True, slots=True)
class HealthPolicy:
    min_calls: int = 64
    max_error_rate: float = 0.2
    flag_all_max: bool = True
    flag_constant: bool = True


@dataclass(slots=True)
class Verdict:
    suspect: bool
    reason: str = ""
    window: dict[str, Any] = field(default_factory=dict)
    kind: str = ""
    """``error_rate``, ``all_max`` or ``collapsed`` for a suspect window."""


def _window(now: Mapping[str, Any], before: Mapping[str, Any] | None) -> dict[str, Any]:
    b = before or {}
    out: dict[str, Any] = {
        k: int(now.get(k, 0)) - int(b.get(k, 0)) for k in ("calls", "ok", "abstain", "error")
    }
    hist_now = list(now.get("hist") or [0] * 10)
    hist_before = list(b.get("hist") or [0] * len(hist_now))
    out["hist"] = [int(x) - int(y) for x, y in zip(hist_now, hist_before, strict=False)]
    return out


def assess(window: Mapping[str, Any], policy: HealthPolicy | None = None) -> Verdict:
    """Judge one window of counts (``calls``, ``ok``, ``error``, ``hist``); see the module docstring."""
    p = policy or HealthPolicy()
    calls = int(window.get("calls", 0))
    w = dict(window)
    if calls < p.min_calls:
        return Verdict(False, f"only {calls} calls in the window (< {p.min_calls})", w)
    rate = int(window.get("error", 0)) / calls
    if rate > p.max_error_rate:
        return Verdict(
            True, f"error rate {rate:.0%} over {calls} calls exceeds {p.max_error_rate:.0%}", w, "error_rate"
        )
    hist = [int(x) for x in window.get("hist") or []]
    ok = sum(hist)
    if ok >= p.min_calls:
        if p.flag_all_max and hist[-1] == ok:
            return Verdict(True, f"all max: every one of {ok} ok scores is in the top bin", w, "all_max")
        if p.flag_constant and max(hist) == ok:
            return Verdict(
                True,
                f"collapsed: every one of {ok} ok scores is in bin {hist.index(ok)} of {len(hist)}",
                w,
                "collapsed",
            )
    return Verdict(False, "healthy", w)


class HealthWatch:
    """Windowed verdicts per (tool, version); ``observe(name, version, stats)`` after each stats read."""

    def __init__(self, policy: HealthPolicy | None = None) -> None:
        self.policy = policy or HealthPolicy()
        self._last: dict[tuple[str, int], dict[str, Any]] = {}

    def observe(self, name: str, version: int, stats: Mapping[str, Any]) -> Verdict:
        key = (name, int(version))
        verdict = assess(_window(stats, self._last.get(key)), self.policy)
        if verdict.window["calls"] >= self.policy.min_calls or key not in self._last:
            # Start a new window once this one was judged (or on first sight: judge from zero next time).
            self._last[key] = {k: stats.get(k, 0) for k in ("calls", "ok", "abstain", "error")} | {
                "hist": list(stats.get("hist") or [])
            }
        return verdict
