"""The statistics of a reward-mode ablation: per-mode means with a Student's t interval over seeds
(:func:`interval`, :func:`summarize_runs`), differences between modes over seeds (:func:`difference`, Welch) and
paired by seed and prompt from every sample's verdicts (:func:`sample_verdicts`, :func:`paired_by_prompt`).
Pure functions; :mod:`rlar.app.ablate` runs the ablation and writes the tables."""

from __future__ import annotations

import random
from typing import Any

__all__ = [
    "compare_modes",
    "difference",
    "interval",
    "paired_by_prompt",
    "sample_verdicts",
    "summarize_runs",
]


# Student's t, 0.975 quantile, by degrees of freedom (1-30); beyond 30 the normal 1.96 is close enough.
_T975 = [
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
]


def interval(values: list[float]) -> dict[str, Any]:
    """Mean, sample sd, n and the 95% t-interval of ``values`` (no interval for fewer than 2)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return {"mean": round(mean, 4), "sd": None, "n": n, "lo": None, "hi": None}
    sd = (sum((v - mean) ** 2 for v in values) / (n - 1)) ** 0.5
    half = (_T975[n - 2] if n - 1 <= len(_T975) else 1.96) * sd / n**0.5
    return {
        "mean": round(mean, 4),
        "sd": round(sd, 4),
        "n": n,
        "lo": round(mean - half, 4),
        "hi": round(mean + half, 4),
    }


def summarize_runs(rows: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """``{mode: {metric: interval}}`` over the runs of each mode that have that eval metric."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for mode in dict.fromkeys(r["mode"] for r in rows):
        runs = [r for r in rows if r["mode"] == mode]
        metrics = sorted({k for r in runs for k, v in r.get("eval", {}).items() if v is not None})
        out[mode] = {
            m: interval([float(r["eval"][m]) for r in runs if r.get("eval", {}).get(m) is not None])
            for m in metrics
        }
    return out


def difference(a: list[float], b: list[float]) -> dict[str, Any]:
    """Mean of ``a`` minus mean of ``b`` with a 95% Welch interval; ``beyond_noise`` when it excludes 0.

    The t quantile is taken at the Welch degrees of freedom rounded down (conservative). Both samples without
    spread: the interval is the difference itself (``no_spread``), beyond noise only if it is not 0."""
    na, nb = len(a), len(b)
    ia, ib = interval(a), interval(b)
    diff = ia["mean"] - ib["mean"]
    if na < 2 or nb < 2:
        return {"diff": round(diff, 4), "lo": None, "hi": None, "beyond_noise": False, "no_spread": False}
    va, vb = (ia["sd"] or 0.0) ** 2 / na, (ib["sd"] or 0.0) ** 2 / nb
    if va + vb == 0:
        return {
            "diff": round(diff, 4),
            "lo": round(diff, 4),
            "hi": round(diff, 4),
            "beyond_noise": abs(diff) > 1e-12,
            "no_spread": True,
        }
    dof = (va + vb) ** 2 / ((va**2 / (na - 1) if va else 0.0) + (vb**2 / (nb - 1) if vb else 0.0))
    k = max(1, int(dof))
    half = (_T975[k - 1] if k <= len(_T975) else 1.96) * (va + vb) ** 0.5
    lo, hi = diff - half, diff + half
    return {
        "diff": round(diff, 4),
        "lo": round(lo, 4),
        "hi": round(hi, 4),
        "beyond_noise": lo > 0 or hi < 0,
        "no_spread": False,
    }


def compare_modes(rows: list[dict[str, Any]], against: str) -> dict[str, dict[str, dict[str, Any]]]:
    """``{mode: {metric: difference(mode, against)}}`` for every other mode and every eval metric both have."""
    by_mode: dict[str, dict[str, list[float]]] = {}
    for r in rows:
        for m, v in (r.get("eval") or {}).items():
            if v is not None:
                by_mode.setdefault(r["mode"], {}).setdefault(m, []).append(float(v))
    base = by_mode.get(against, {})
    return {
        mode: {m: difference(vals, base[m]) for m, vals in sorted(per.items()) if m in base}
        for mode, per in by_mode.items()
        if mode != against
    }


def sample_verdicts(doc: dict[str, Any]) -> dict[str, dict[str, float]]:
    """``{metric: {sample id: 0 or 1}}`` from a run's ``eval/ablation.json`` (every sample with its verdicts):
    ``<task>/<true metric>`` (the sample passed) and ``<task>/hack@<tool>`` (the tool scored it at least
    ``high`` and it failed), the per-sample terms of the run's eval means. Samples of one prompt get ids
    ``<id>#<k>``."""
    high = float(doc.get("high", 0.5))
    out: dict[str, dict[str, float]] = {}
    for task, samples in (doc.get("samples") or {}).items():
        names = [m for m in (doc.get("metrics") or {}).get(task, {}) if "/" not in m and m != "avg_len"]
        if len(names) != 1:
            continue  # no single true metric to pair on
        seen: dict[str, int] = {}
        for s in samples:
            k = seen[s["id"]] = seen.get(s["id"], -1) + 1
            sid = f"{s['id']}#{k}"
            out.setdefault(f"{task}/{names[0]}", {})[sid] = float(bool(s["passed"]))
            for tool, score in (s.get("scores") or {}).items():
                hack = score is not None and score >= high and not s["passed"]
                out.setdefault(f"{task}/hack@{tool}", {})[sid] = float(hack)
    return out


def paired_by_prompt(
    base: dict[tuple[int, str], float], new: dict[tuple[int, str], float], samples: int = 2000, seed: int = 0
) -> dict[str, Any] | None:
    """``mean(new) - mean(base)`` over the (seed, sample) pairs both hold, with a 95% bootstrap interval that
    resamples prompts (a prompt's pairs of every seed kept together): how far the difference could move with
    other prompts of the same tasks. The spread between training runs is not in it (that is the interval over
    seeds). None with fewer than two prompts."""
    keys = sorted(set(base) & set(new))
    by_prompt: dict[str, list[float]] = {}
    for seed_, sid in keys:
        by_prompt.setdefault(sid.split("#", 1)[0], []).append(new[(seed_, sid)] - base[(seed_, sid)])
    if len(by_prompt) < 2:
        return None
    groups = list(by_prompt.values())
    total = sum(sum(g) for g in groups) / len(keys)
    rng = random.Random(seed)
    means = []
    for _ in range(samples):
        pick = [groups[rng.randrange(len(groups))] for _ in groups]
        means.append(sum(sum(g) for g in pick) / sum(len(g) for g in pick))
    means.sort()
    lo, hi = means[int(0.025 * samples)], means[min(samples - 1, int(0.975 * samples))]
    return {
        "diff": round(total, 4),
        "lo": round(lo, 4),
        "hi": round(hi, 4),
        "beyond_noise": lo > 0 or hi < 0,
        "pairs": len(keys),
        "prompts": len(groups),
    }
