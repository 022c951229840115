"""The canary stage: a new synthesised tool scores live samples in shadow before its scores reward anyone.

Probes are written before training; the policy's real outputs are not probes (odd bytes, empty answers,
run-on text). So a registered verifier first runs as a shadow: the router routes its kind to the declared
fallback tools plus the new tool with weight 0 (the learner's ``combine`` ignores weight-0 scores; with no
fallback the samples abstain and are masked), and :class:`Canary` watches the shadow tool's ``Reward`` messages
and the samples they score. After ``samples`` shadow results (or ``timeout_s``) it decides:

- coverage: the share of shadow results with status ``ok`` (not ``error`` / ``abstain``) must reach ``min_ok``;
- agreement: where an independent labeller exists (the second route's reading of the instruction, applied to
  the live responses; or the fallback tools' scores), the share of samples where the tool's pass/fail equals
  the labeller's must reach ``min_agreement``. Agreement is recorded with the number of samples each side
  called good, since a policy that fails everything makes agreement easy;
- latency (p95 of the shadow results) is recorded, not judged: a sandboxed tool's latency is mostly the jail
  start and the queue, which validation already bounds per call (``within_budget``).

``verdict()`` returns ``None`` while it is still watching, else a :class:`CanaryVerdict` (passed, reason, the
figures). The synthesizer then marks the tool ``passed`` in the registry (:meth:`ToolRegistry.set_canary`) and
announces ``ToolRegistered(action="promoted")`` so the router routes to it alone, or quarantines it, which
makes the router drop it and ask for a new verifier with the reason.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rlar.constraints.checks import holds

__all__ = ["Canary", "CanaryPolicy", "CanaryVerdict", "independent_labeller"]

Labeller = Callable[[str, str], bool | None]
"""(query, response) -> the independent verdict (True good, False bad), or None when it has none."""


class CanaryPolicy(BaseModel):
    """How a new synthesised tool is tried on live samples before it rewards (0 samples: no canary)."""

    model_config = ConfigDict(extra="forbid")
    samples: int = Field(32, ge=0)
    """Shadow results to judge on (0 turns the canary off: the tool rewards at once)."""
    min_ok: float = Field(0.9, ge=0, le=1)
    """Share of shadow results that must be ``ok`` (not error or abstain)."""
    min_agreement: float = Field(0.7, ge=0, le=1)
    """Share of samples where the tool and the independent labeller agree on pass/fail."""
    timeout_s: float = Field(900.0, gt=0)
    """Judge with what has been seen after this long (quarantine if nothing was seen)."""


@dataclass(slots=True)
class CanaryVerdict:
    passed: bool
    reason: str
    figures: dict[str, Any] = field(default_factory=dict)


def independent_labeller(constraints: list[dict[str, Any]]) -> Labeller | None:
    """A labeller from an independent reading's constraints (see :mod:`rlar.synthesis.second_route`)."""
    if not constraints:
        return None

    def label(query: str, response: str) -> bool | None:
        return all(holds(c, response) for c in constraints)

    return label


class Canary:
    """Watches one tool version's shadow scores; see the module docstring."""

    def __init__(
        self,
        name: str,
        version: int,
        score_range: tuple[float, float],
        policy: CanaryPolicy,
        labeller: Labeller | None = None,
        *,
        started: float | None = None,
    ) -> None:
        self.name, self.version = name, version
        self.lo, self.hi = float(score_range[0]), float(score_range[1])
        self.policy = policy
        self.labeller = labeller
        self.started = time.time() if started is None else started
        self.texts: OrderedDict[str, tuple[str, str]] = OrderedDict()
        self.results: dict[str, tuple[str, float | None, float]] = {}
        self.others: dict[str, list[tuple[float, float]]] = {}

    def observe_sample(self, sample_id: str, query: str, response: str) -> None:
        self.texts[sample_id] = (query, response)
        while len(self.texts) > 4096:
            self.texts.popitem(last=False)

    def observe_reward(self, reward: Any) -> None:
        """A ``bus.messages.Reward`` of any tool for this task (the shadow tool's, or a fallback's)."""
        if reward.tool == self.name and int(reward.tool_version) == self.version:
            self.results[reward.sample_id] = (str(reward.status), reward.score, float(reward.latency_s))
        elif reward.status == "ok" and reward.score is not None and float(reward.weight) > 0:
            self.others.setdefault(reward.sample_id, []).append((float(reward.weight), float(reward.score)))

    def _top(self, score: float | None) -> bool:
        return score is not None and score >= self.hi - 1e-6 * (self.hi - self.lo)

    def figures(self) -> dict[str, Any]:
        n = len(self.results)
        ok = sum(1 for s, _, _ in self.results.values() if s == "ok")
        lat = sorted(x for _, _, x in self.results.values())
        p95 = lat[min(len(lat) - 1, max(0, math.ceil(0.95 * len(lat)) - 1))] * 1000 if lat else 0.0
        pairs: list[tuple[bool, bool]] = []
        source = ""
        if self.labeller is not None:
            source = "second reading"
            for sid, (status, score, _) in self.results.items():
                if status == "ok" and sid in self.texts:
                    want = self.labeller(*self.texts[sid])
                    if want is not None:
                        pairs.append((self._top(score), bool(want)))
        if not pairs and self.others:
            source = "fallback tools"
            for sid, (status, score, _) in self.results.items():
                if status == "ok" and sid in self.others:
                    got = self.others[sid]
                    total = sum(w for w, _ in got) or 1.0
                    pairs.append((self._top(score), sum(w * s for w, s in got) / total >= 0.5))
        agree = sum(1 for a, b in pairs if a == b)
        return {
            "tool": f"{self.name} v{self.version}",
            "shadow_results": n,
            "ok_rate": round(ok / n, 4) if n else None,
            "errors": sum(1 for s, _, _ in self.results.values() if s == "error"),
            "p95_ms": round(p95, 2),
            "agreement": round(agree / len(pairs), 4) if pairs else None,
            "agreement_source": source,
            "agreement_n": len(pairs),
            "tool_pass": sum(1 for a, _ in pairs if a),
            "labeller_pass": sum(1 for _, b in pairs if b),
            "mean_score": round(
                sum(s for st, s, _ in self.results.values() if st == "ok" and s is not None) / max(1, ok), 4
            ),
            "waited_s": round(time.time() - self.started, 1),
        }

    def verdict(self, now: float | None = None) -> CanaryVerdict | None:
        now = time.time() if now is None else now
        n = len(self.results)
        timed_out = now - self.started >= self.policy.timeout_s
        if n < self.policy.samples and not timed_out:
            return None
        f = self.figures()
        if n == 0:
            return CanaryVerdict(False, f"canary: no shadow result within {self.policy.timeout_s:g}s", f)
        problems = []
        if f["ok_rate"] < self.policy.min_ok:
            problems.append(f"only {f['ok_rate']:.0%} of {n} live samples scored ok ({f['errors']} errors)")
        if f["agreement"] is not None and f["agreement"] < self.policy.min_agreement:
            problems.append(
                f"agrees with the {f['agreement_source']} on {f['agreement']:.0%} of {f['agreement_n']} live samples"
            )
        if problems:
            return CanaryVerdict(False, "canary: " + "; ".join(problems), f)
        agreement = "no independent labeller" if f["agreement"] is None else f"agreement {f['agreement']:.0%}"
        return CanaryVerdict(
            True, f"canary passed on {n} live samples: ok {f['ok_rate']:.0%}, {agreement}", f
        )


def canary_params(policy: CanaryPolicy) -> dict[str, Any] | None:
    """What a spec carries in ``params["canary"]`` (None: no canary)."""
    return policy.model_dump() if policy.samples > 0 else None


def read_canary(params: Mapping[str, Any]) -> CanaryPolicy | None:
    raw = params.get("canary")
    return CanaryPolicy.model_validate(raw) if isinstance(raw, Mapping) else None
