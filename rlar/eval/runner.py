"""``rlar eval``: generate on held-out splits with one checkpoint and score them with the paper's metrics.

Algorithm, per checkpoint:

1. Resolve it (:func:`resolve_checkpoint`): a Hugging Face directory is loaded as is; a run directory means
   its initial policy ``<run>/policy/init`` with the newest weights of ``<run>/weights`` loaded on top
   (what the learner last announced), or the initial policy alone when no weights were written yet.
2. One transformers engine (one torch thread, float32) generates for every task of the suite: greedy
   decoding for exact-match and reference metrics, ``n`` samples at the task's temperature for pass@k.
   Prompts longer than the model's context minus the answer budget are cut from the left.
3. Scoring reuses the reward tools (:mod:`rlar.tools`) through a :class:`~rlar.tools.ToolExecutor`:
   ``math_verify`` / ``exact_match`` for exact match, ``code_tests`` for code (programs run in the local
   bubblewrap sandbox, :mod:`rlar.sandbox`), ``llm_judge`` for judge
   scores. BLEU-2 is corpus-level sacrebleu (``max_ngram_order=2``), not a mean of sentence scores.
4. The judge is the Anthropic Messages API (``ANTHROPIC_API_KEY``, or a base URL such as a local gateway:
   ``ANTHROPIC_BASE_URL`` or ``judge_url``). Without one, judge metrics are ``None`` and shown as
   "no judge" — never a made-up number. Judge calls that abstain (API errors) are left out of the mean and
   counted in ``judge_abstained``.

Limits: one engine kind (transformers) — enough for CPU and for small GPU models; sampling for pass@k is
seeded (``seed``) so two checkpoints see the same random stream, but samples still differ with the weights.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlar.eval.suites import EvalTask

__all__ = ["Checkpoint", "EvalResult", "evaluate", "judge_status", "resolve_checkpoint"]


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """What gets evaluated: an HF directory plus, optionally, a weights file from a run loaded on top."""

    path: Path
    """What the user named (a run directory or an HF directory)."""
    model_dir: Path
    weights_uri: str | None
    version: int
    run_dir: Path | None
    """The run directory the checkpoint belongs to, where results are written (None: not in a run)."""

    @property
    def label(self) -> str:
        base = self.run_dir.name if self.run_dir else self.path.name
        if self.weights_uri is None and self.run_dir is not None:
            return f"{base}@init"
        return f"{base}@v{self.version}" if self.weights_uri else base


def _run_dir_of(path: Path) -> Path | None:
    """The run directory an HF directory lives in (``<run>/policy/...``), if any."""
    for p in path.parents:
        if (p / "policy" / "init").exists() and path.is_relative_to(p / "policy"):
            return p
    return None


def resolve_checkpoint(path: str | Path) -> Checkpoint:
    """A run directory (newest weights on its initial policy) or an HF checkpoint directory.

    Raises ``FileNotFoundError`` when ``path`` is neither.
    """
    from rlar.policy.weights import latest_weights_ref

    p = Path(path).absolute()
    if (p / "config.json").exists():
        return Checkpoint(p, p, None, 0, _run_dir_of(p))
    init = p / "policy" / "init"
    if (init / "config.json").exists():
        ref = latest_weights_ref(p / "weights")
        if ref is None:
            return Checkpoint(p, init, None, 0, p)
        return Checkpoint(p, init, ref.uri, ref.version, p)
    raise FileNotFoundError(f"{path}: neither a Hugging Face checkpoint (config.json) nor a run directory "
                            "(policy/init)")  # fmt: skip


def judge_status(judge_url: str | None = None) -> str | None:
    """``None`` when no judge is reachable by configuration, else a description of the judge used."""
    from rlar.tools import builtin_specs

    spec = next(s for s in builtin_specs() if s.name == "llm_judge")
    url = judge_url or os.environ.get("ANTHROPIC_BASE_URL")
    key = os.environ.get(str(spec.params.get("api_key_env") or "ANTHROPIC_API_KEY"))
    if not (url or key):
        return None
    return f"{spec.params['model']} via {url or 'api.anthropic.com'}"


@dataclass(slots=True)
class EvalResult:
    """Metrics per task (``None`` = not measurable here, e.g. no judge) and what produced them."""

    suite: str
    checkpoint: Checkpoint
    metrics: dict[str, dict[str, float | None]]
    counts: dict[str, int]
    judge: str | None
    seconds: float
    samples: dict[str, list[dict[str, Any]]]

    def to_dict(self) -> dict[str, Any]:
        ck = self.checkpoint
        return {
            "suite": self.suite, "label": ck.label, "path": str(ck.path), "model_dir": str(ck.model_dir),
            "weights": ck.weights_uri, "version": ck.version, "judge": self.judge or "no judge",
            "seconds": round(self.seconds, 2), "counts": self.counts, "metrics": self.metrics,
            "examples": {t: s[:3] for t, s in self.samples.items()},
        }  # fmt: skip


def _spec(name: str, **params: Any) -> Any:
    from rlar.tools import builtin_specs

    spec = next(s for s in builtin_specs() if s.name == name)
    return spec.replace(params={**spec.params, **params}).sealed() if params else spec


def _bleu2(hyps: list[str], refs: list[str]) -> float:
    from sacrebleu.metrics import BLEU

    return float(BLEU(max_ngram_order=2, effective_order=True).corpus_score(hyps, [refs]).score)


async def _score(ex: Any, spec: Any, inputs: list[Any]) -> list[Any]:
    return list(await ex.score_batch(spec, inputs)) if inputs else []


def _mean_ok(results: list[Any]) -> tuple[float | None, int]:
    ok = [float(r.score) for r in results if r.ok]
    return (sum(ok) / len(ok) if ok else None), len(results) - len(ok)


async def _evaluate_task(
    task: EvalTask, engine: Any, ex: Any, judge: str | None, judge_url: str | None, seed: int
) -> tuple[dict[str, float | None], int, list[dict[str, Any]]]:
    from rlar.tasks import builtin_task
    from rlar.tools import ToolInput, pass_at_k

    ds = builtin_task(task.name, "test")
    records = list(ds.records)[: task.limit] if task.limit else list(ds.records)
    domain = ds.spec.domain
    budget = engine.cfg.max_model_len - task.max_new_tokens - 1
    ids = []
    for rec in records:
        toks = engine.render_prompt(rec.prompt)
        ids.append(toks[-budget:] if len(toks) > budget else toks)
    outs = await asyncio.to_thread(
        engine.generate, ids, n=task.n_samples, max_new_tokens=task.max_new_tokens,
        temperature=task.temperature, top_p=1.0, seed=seed,
    )  # fmt: skip
    metrics: dict[str, float | None] = {}
    texts = [[c.text for c in group] for group in outs]
    lengths = [len(c.token_ids) for group in outs for c in group]
    metrics["avg_len"] = sum(lengths) / len(lengths) if lengths else 0.0
    inputs = [
        ToolInput(query=_query(rec.prompt), response=t[0], reference=rec.reference,
                  metadata={**rec.metadata, "task_type": ds.spec.task_type})
        for rec, t in zip(records, texts, strict=True)
    ]  # fmt: skip
    if domain in ("math", "string"):
        tool = "math_verify" if domain == "math" else "exact_match"
        res = await _score(ex, _spec(tool), inputs)
        metrics["exact"] = sum(1.0 for r in res if r.ok and r.score == 1.0) / max(1, len(res))
    elif domain == "code":
        flat = [
            ToolInput(query=_query(rec.prompt), response=s, reference=rec.reference, metadata=dict(rec.metadata))
            for rec, t in zip(records, texts, strict=True) for s in t
        ]  # fmt: skip
        res = await _score(ex, _spec("code_tests"), flat)
        n = task.n_samples
        for k in task.ks:
            if k > n:
                continue
            per = []
            for i in range(len(records)):
                group = res[i * n : (i + 1) * n]
                c = sum(1 for r in group if r.ok and r.score == 1.0)
                per.append(pass_at_k(n, c, k))
            metrics[f"pass@{k}"] = sum(per) / len(per) if per else 0.0
        metrics["sandbox_abstained"] = float(sum(1 for r in res if not r.ok))
    if domain == "translation":
        refs = [rec.reference if isinstance(rec.reference, str) else str(rec.reference) for rec in records]
        metrics["bleu2"] = _bleu2([t[0] for t in texts], refs)
    if domain in ("translation", "chat"):
        if judge is None:
            metrics["judge"] = None
        else:
            params: dict[str, Any] = {"base_url": judge_url} if judge_url else {}
            res = await _score(ex, _spec("llm_judge", **params), inputs)
            metrics["judge"], abstained = _mean_ok(res)
            metrics["judge_abstained"] = float(abstained)
    examples = [
        {"id": rec.id, "prompt": _query(rec.prompt)[-200:], "reference": str(rec.reference)[:200],
         "response": t[0][:200]}
        for rec, t in zip(records, texts, strict=True)
    ]  # fmt: skip
    return metrics, len(records), examples


def _query(prompt: Any) -> str:
    """The text a reward tool sees as the query: the prompt, or the last user turn of a chat."""
    if isinstance(prompt, str):
        return prompt
    users = [m.get("content", "") for m in prompt if m.get("role") == "user"]
    return str(users[-1] if users else prompt[-1].get("content", ""))


def _read_newest(ck: Checkpoint, attempts: int = 5) -> tuple[Checkpoint, bytes]:
    """The weights bytes of a run's newest version, read now. A live learner keeps only its last few
    versions, so the one resolved earlier may be gone: re-resolve and retry a few times."""
    import dataclasses

    from rlar.policy.weights import (
        WeightsIntegrityError,
        latest_weights_ref,
        read_manifest,
        read_weights_bytes,
    )

    assert ck.weights_uri is not None
    for attempt in range(attempts):
        try:
            if ck.run_dir is not None and (ck.run_dir / "weights").is_dir() and ck.path == ck.run_dir:
                ref = latest_weights_ref(ck.run_dir / "weights")
            else:
                ref = read_manifest(Path(ck.weights_uri).parent)
            if ref is None:
                raise FileNotFoundError(f"{ck.path}: no weights")
            return dataclasses.replace(ck, weights_uri=ref.uri, version=ref.version), read_weights_bytes(ref)
        except (FileNotFoundError, WeightsIntegrityError):
            if attempt == attempts - 1:
                raise
            time.sleep(0.5)
    raise AssertionError("unreachable")


def _max_len(model_dir: Path) -> int:
    import json

    cfg = json.loads((model_dir / "config.json").read_text())
    return int(min(cfg.get("max_position_embeddings") or 2048, 4096))


async def evaluate_async(
    checkpoint: Checkpoint, suite: str, tasks: list[EvalTask], *, seed: int = 0, judge_url: str | None = None,
    device: str = "cpu",
) -> EvalResult:  # fmt: skip
    """Evaluate one checkpoint on ``tasks`` (see the module docstring)."""
    from rlar.policy.engines import TransformersEngineConfig, make_engine
    from rlar.tools import ToolExecutor

    t0 = time.perf_counter()
    cfg = TransformersEngineConfig(model=str(checkpoint.model_dir), max_model_len=_max_len(checkpoint.model_dir),
                                   num_threads=1, seed=seed, device=device)  # fmt: skip
    engine = await asyncio.to_thread(make_engine, cfg)
    try:
        if checkpoint.weights_uri is not None:
            checkpoint, data = _read_newest(checkpoint)
            await asyncio.to_thread(engine.load_weights, data, checkpoint.version)
        judge = judge_status(judge_url)
        metrics: dict[str, dict[str, float | None]] = {}
        counts: dict[str, int] = {}
        samples: dict[str, list[dict[str, Any]]] = {}
        async with ToolExecutor(workers=1, timeout_s=30.0) as ex:
            for task in tasks:
                m, n, examples = await _evaluate_task(task, engine, ex, judge, judge_url, seed)
                metrics[task.name], counts[task.name], samples[task.name] = m, n, examples
    finally:
        engine.close()
    return EvalResult(suite, checkpoint, metrics, counts, judge, time.perf_counter() - t0, samples)


def evaluate(
    checkpoint: Checkpoint, suite: str, tasks: list[EvalTask], *, seed: int = 0, judge_url: str | None = None,
    device: str = "cpu",
) -> EvalResult:  # fmt: skip
    """Synchronous wrapper of :func:`evaluate_async`."""
    return asyncio.run(
        evaluate_async(checkpoint, suite, tasks, seed=seed, judge_url=judge_url, device=device)
    )
