"""Validate a downloaded reward model on a task's probe pairs before it may be registered.

:func:`validate_checkpoint` loads the checkpoint as the ``reward_model`` tool (transformers; on a GPU when
one is visible, in bf16, else CPU float32; raw logits via the ``identity`` transform) and scores every
probe's preferred and rejected response. It
passes only if all checks pass (each is recorded, passed or not):

- ``load``: it loads within ``max_load_s``;
- ``sane_range``: every output is ok, finite and within ±``max_abs_logit``;
- ``not_constant``: the outputs' standard deviation is at least ``min_score_std``;
- ``preference``: the preferred response scores strictly higher on at least ``min_pass_share`` of probes
  (the share per corruption kind is recorded too);
- ``latency``: mean scoring time per (query, response), batched, is at most ``max_latency_ms``.

A model that passes gets a calibration for the registered tool: ``shift`` = median logit, ``temperature``
= logit standard deviation, so ``sigmoid((logit - shift) / temperature)`` spreads its scores over (0, 1)
whatever the model's native logit scale.

Blocking (loads a model, runs it): call it in a worker thread. Never raises for the checkpoint's
misbehaviour; a model that cannot load fails the ``load`` check with the exception text.

A two-label safety classifier (``label_index`` given) is scored by the probability of its good label
(``softmax``), the same score its registered tool gives; no calibration is made for it.

The registered tool keeps the reward-model defaults (``device``/``dtype``/``backend`` auto: vLLM's pooling
runner on a GPU host); validation itself always uses transformers, which loads and frees in seconds.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from rlar.retrieval.probes import ProbePair
from rlar.tools import ToolInput, make_tool
from rlar.tools.reward_model import RewardModelTool


@dataclass(slots=True)
class ValidationReport:
    passed: bool
    reason: str
    checks: dict[str, str] = field(default_factory=dict)  # check -> "pass" | why it failed
    n_probes: int = 0
    pass_share: float = 0.0
    min_pass_share: float = 0.0
    by_kind: dict[str, float] = field(default_factory=dict)
    logits: dict[str, float] = field(default_factory=dict)  # min, max, mean, std, median
    latency_ms_per_item: float = 0.0
    max_latency_ms: float = 0.0
    load_s: float = 0.0
    calibration: dict[str, float] = field(default_factory=dict)
    samples: list[dict[str, Any]] = field(default_factory=list)  # a few probes with their logits

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def validate_checkpoint(
    path: str,
    probes: list[ProbePair],
    *,
    min_pass_share: float,
    max_latency_ms: float,
    max_abs_logit: float = 1e4,
    min_score_std: float = 1e-4,
    max_load_s: float = 300.0,
    batch_size: int = 8,
    label_index: int | None = None,
) -> ValidationReport:
    """Load ``path`` as a reward-model tool and check it on ``probes`` (see the module docstring).
    ``label_index``: for a two-label safety classifier, the good label — it is then scored by that label's
    probability (the ``softmax`` transform) instead of the raw logit."""

    report = ValidationReport(
        passed=False,
        reason="",
        n_probes=len(probes),
        min_pass_share=min_pass_share,
        max_latency_ms=max_latency_ms,
    )
    if not probes:
        report.reason = "no probes"
        report.checks["preference"] = "no probes to validate on"
        return report
    base = RewardModelTool.default_spec
    assert base is not None
    spec = base.replace(
        params={
            **base.params,
            "path": path,
            "transform": "identity" if label_index is None else "softmax",
            **({} if label_index is None else {"label_index": label_index}),
            "batch_size": batch_size,
            "backend": "transformers",
        },
        score_range=(-max_abs_logit, max_abs_logit),
    )
    t0 = time.perf_counter()
    try:
        tool = make_tool(spec)
    except Exception as exc:  # the checkpoint's failure, not ours: recorded
        report.load_s = round(time.perf_counter() - t0, 3)
        report.checks["load"] = f"could not load: {type(exc).__name__}: {str(exc)[:300]}"
        report.reason = report.checks["load"]
        return report
    report.load_s = round(time.perf_counter() - t0, 3)
    report.checks["load"] = (
        "pass" if report.load_s <= max_load_s else f"loading took {report.load_s:.1f}s > {max_load_s:g}s"
    )
    inputs = [ToolInput(p.query, p.preferred) for p in probes] + [
        ToolInput(p.query, p.rejected) for p in probes
    ]
    t1 = time.perf_counter()
    results = asyncio.run(tool.score_batch(inputs))
    elapsed = time.perf_counter() - t1
    del tool
    gc.collect()
    report.latency_ms_per_item = round(1000.0 * elapsed / len(inputs), 3)
    report.checks["latency"] = (
        "pass"
        if report.latency_ms_per_item <= max_latency_ms
        else f"{report.latency_ms_per_item:.1f} ms per item > {max_latency_ms:g} ms"
    )
    bad = [r for r in results if r.status != "ok" or r.score is None]
    if bad:
        report.checks["sane_range"] = f"{len(bad)}/{len(results)} outputs not usable: {bad[0].reason[:200]}"
    else:
        report.checks["sane_range"] = "pass"
    values = [float(r.score) for r in results if r.status == "ok" and r.score is not None]
    if values:
        std = statistics.pstdev(values)
        report.logits = {
            "min": min(values),
            "max": max(values),
            "mean": statistics.fmean(values),
            "std": std,
            "median": statistics.median(values),
        }
        report.checks["not_constant"] = (
            "pass" if std >= min_score_std else f"outputs barely vary (std {std:.2e} < {min_score_std:g})"
        )
    else:
        report.checks["not_constant"] = "no usable outputs"
    n = len(probes)
    wins: dict[str, list[int]] = {}
    for i, p in enumerate(probes):
        good, rej = results[i], results[n + i]
        win = int(good.score is not None and rej.score is not None and float(good.score) > float(rej.score))
        wins.setdefault(p.kind, []).append(win)
        if i < 6:
            report.samples.append(
                {**p.to_dict(), "preferred_logit": good.score, "rejected_logit": rej.score, "win": bool(win)}
            )
    total = sum(sum(v) for v in wins.values())
    report.pass_share = round(total / n, 4)
    report.by_kind = {k: round(sum(v) / len(v), 4) for k, v in sorted(wins.items())}
    report.checks["preference"] = (
        "pass"
        if report.pass_share >= min_pass_share
        else f"prefers the good response on {report.pass_share:.0%} of {n} probes (< {min_pass_share:.0%})"
    )
    failed = [f"{k}: {v}" for k, v in report.checks.items() if v != "pass"]
    report.passed = not failed
    report.reason = "; ".join(failed)
    if report.passed and label_index is None:
        report.calibration = {
            "shift": round(report.logits["median"], 6),
            "temperature": round(max(report.logits["std"], 1e-3), 6),
        }
    return report
