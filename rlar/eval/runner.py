"""``rlar eval``: generate on held-out splits with one checkpoint and score them with the paper's metrics.

Algorithm, per checkpoint:

1. Resolve it (:func:`resolve_checkpoint`): a Hugging Face directory is loaded as is; a run directory means
   its initial policy ``<run>/policy/init`` with the newest weights of ``<run>/weights`` loaded on top
   (what the learner last announced), or the initial policy alone when no weights were written yet.
2. One engine (``EngineSettings``: transformers with one torch thread, or vLLM; float32 unless ``dtype``
   says otherwise) generates for every task: greedy decoding for exact-match and reference metrics, ``n``
   samples at the task's temperature for pass@k. The answer budget is at most half the model's context;
   prompts longer than the rest are cut from the left.
3. Scoring (:func:`score_responses`) reuses the reward tools (:mod:`rlar.tools`) through a
   :class:`~rlar.tools.ToolExecutor`: ``math_verify`` for NEM, ``exact_match`` for string tasks,
   ``code_tests`` for code (programs run in the local bubblewrap sandbox, :mod:`rlar.sandbox`), ``ifeval``
   for instruction following, ``llm_judge`` for judge scores; ``score`` comes from the tools the run used for
   the task (:mod:`rlar.eval.tools`: the run's routing, its registry snapshot with user and synthesised tools,
   else the task's ``default_tools``), named in the result's ``tools``.
   BLEU-2 is corpus-level sacrebleu (``max_ngram_order=2``, tokenised for the target language), not a mean
   of sentence scores.
4. The judge is the Anthropic Messages API (``ANTHROPIC_API_KEY``, or a base URL such as a local gateway:
   ``ANTHROPIC_BASE_URL`` or ``judge_url``). Without one, judge metrics are ``None`` and shown as
   "no judge" — never a made-up number. Judge calls that abstain (API errors) are left out of the mean and
   counted in ``judge_abstained``.

Limits: sampling for pass@k is seeded (``seed``) so two checkpoints see the same random stream, but samples
still differ with the weights; the two engine kinds draw different samples for the same seed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sacrebleu.metrics import BLEU

from rlar.constraints.checks import holds
from rlar.eval.suites import EvalTask
from rlar.eval.tools import executor_options
from rlar.policy.engines import TransformersEngineConfig, VLLMEngineConfig, make_engine
from rlar.policy.weights import (
    WeightsIntegrityError,
    latest_weights_ref,
    read_manifest,
    read_weights_bytes,
)
from rlar.tasks.base import query_text
from rlar.tasks.parallel import bleu_tokenizer
from rlar.tasks.reading import read_instruction
from rlar.tools import ToolExecutor, ToolInput, builtin_specs, pass_at_k
from rlar.tools.combine import combine

__all__ = [
    "Checkpoint",
    "EngineSettings",
    "EvalResult",
    "evaluate",
    "judge_status",
    "resolve_checkpoint",
    "score_responses",
]


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

    p = Path(path).absolute()
    if (p / "config.json").exists():
        return Checkpoint(p, p, None, 0, _run_dir_of(p))
    init = p / "policy" / "init"
    if (init / "config.json").exists():
        ref = latest_weights_ref(p / "weights")
        if ref is None:
            return Checkpoint(p, init, None, 0, p)
        return Checkpoint(p, init, ref.uri, ref.version, p)
    raise FileNotFoundError(
        f"{path}: neither a Hugging Face checkpoint (config.json) nor a run directory (policy/init)"
    )


def judge_status(judge_url: str | None = None) -> str | None:
    """``None`` when no judge is reachable by configuration, else a description of the judge used."""

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
    tools: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Per task with a ``score``: the tools that gave it (name, version, weight, origin, why chosen)."""
    per_record: dict[str, dict[str, list[Any]]] = field(default_factory=dict)
    """Per task: ``ids`` (the records in order) and each per-record metric's values (None: abstained)."""

    def to_dict(self) -> dict[str, Any]:
        ck = self.checkpoint
        return {
            "suite": self.suite,
            "label": ck.label,
            "path": str(ck.path),
            "model_dir": str(ck.model_dir),
            "weights": ck.weights_uri,
            "version": ck.version,
            "judge": self.judge or "no judge",
            "seconds": round(self.seconds, 2),
            "counts": self.counts,
            "metrics": self.metrics,
            "per_record": self.per_record,
            "tools": self.tools,
            "examples": {t: [_example(x) for x in s[:3]] for t, s in self.samples.items()},
        }


def _example(sample: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": sample["id"],
        "prompt": sample["prompt"][-200:],
        "reference": str(sample["reference"])[:200],
        "response": sample["responses"][0][:200],
    }


def _spec(name: str, **params: Any) -> Any:

    spec = next((s for s in builtin_specs() if s.name == name), None)
    if spec is None:
        names = ", ".join(s.name for s in builtin_specs())
        raise ValueError(f"tool {name!r} is not a built-in reward tool (built-ins: {names})")
    return spec.replace(params={**spec.params, **params}).sealed() if params else spec


def _bleu2(hyps: list[str], refs: list[str], tokenize: str = "13a") -> float:

    return float(
        BLEU(max_ngram_order=2, effective_order=True, tokenize=tokenize).corpus_score(hyps, [refs]).score
    )


async def _score(ex: Any, spec: Any, inputs: list[Any], chunk: int = 16) -> list[Any]:
    """Score in chunks, so that one executor deadline never covers more than ``chunk`` inputs."""
    out: list[Any] = []
    for i in range(0, len(inputs), chunk):
        out += list(await ex.score_batch(spec, inputs[i : i + chunk]))
    return out


def _mean_ok(results: list[Any]) -> tuple[float | None, int]:
    ok = [float(r.score) for r in results if r.ok]
    return (sum(ok) / len(ok) if ok else None), len(results) - len(ok)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


async def _code_metrics(
    task: EvalTask,
    ex: Any,
    records: list[Any],
    texts: list[list[str]],
    per_record: dict[str, list[float | None]],
) -> dict[str, float]:

    flat = [
        ToolInput(
            query=query_text(rec.prompt), response=s, reference=rec.reference, metadata=dict(rec.metadata)
        )
        for rec, t in zip(records, texts, strict=True)
        for s in t
    ]
    res = await _score(ex, _spec("code_tests"), flat)
    n = len(texts[0]) if texts else task.n_samples
    metrics: dict[str, float] = {}
    for k in task.ks:
        if k > n:
            continue
        per = []
        for i in range(len(records)):
            c = sum(1 for r in res[i * n : (i + 1) * n] if r.ok and r.score == 1.0)
            per.append(pass_at_k(n, c, k))
        metrics[f"pass@{k}"] = _mean(per)
        per_record[f"pass@{k}"] = list(per)
    metrics["sandbox_abstained"] = float(sum(1 for r in res if not r.ok))
    return metrics


async def _ifeval_metrics(
    ex: Any, inputs: list[Any], per_record: dict[str, list[float | None]]
) -> dict[str, float]:
    res = await _score(ex, _spec("ifeval"), inputs)
    per_record["prompt_strict"] = [float(all(r.details["strict"])) if r.ok else None for r in res]
    strict = [r.details["strict"] for r in res if r.ok]
    loose = [r.details["loose"] for r in res if r.ok]
    return {
        "prompt_strict": _mean([float(all(s)) for s in strict]),
        "inst_strict": _mean([float(x) for s in strict for x in s]),
        "prompt_loose": _mean([float(all(s)) for s in loose]),
        "inst_loose": _mean([float(x) for s in loose for x in s]),
        "ifeval_abstained": float(len(res) - len(strict)),
    }


async def _tool_score(
    tools: list[tuple[Any, float]],
    ex: Any,
    inputs: list[Any],
    judge: str | None,
    judge_url: str | None,
    per_record: dict[str, list[float | None]] | None = None,
) -> dict[str, float | None]:
    """``score``: the mean combined reward of ``tools`` (spec, weight) as the learner combines them
    (``rlar.tools.combine``), None when every sample abstains; ``score_abstained`` and ``score_errors``:
    samples whose tools all abstained, and tool results that were errors (e.g. a user function raising).
    The judge tool is left out when no judge is configured."""

    per_tool = []
    for spec, weight in tools:
        if spec.impl_name == "llm_judge" and judge is None:
            continue
        if judge_url and spec.impl_name == "llm_judge":
            spec = spec.replace(params={**spec.params, "base_url": judge_url}).sealed()
        per_tool.append((weight, await _score(ex, spec, inputs)))
    scores = []
    each: list[float | None] = []
    for i in range(len(inputs)):
        status, score = combine((w, res[i].status, res[i].score) for w, res in per_tool)
        ok = status == "ok" and score is not None
        each.append(float(score) if ok and score is not None else None)
        if ok and score is not None:
            scores.append(score)
    if per_record is not None:
        per_record["score"] = each
    errors = sum(1 for _, res in per_tool for r in res if r.status == "error")
    return {
        "score": _mean(scores) if scores else None,
        "score_abstained": float(len(inputs) - len(scores)),
        "score_errors": float(errors),
    }


def _format_pass(records: list[Any], texts: list[list[str]]) -> float:
    """Share of all samples meeting every constraint read from their prompt (see the suites' docstring)."""

    verdicts = []
    for rec, samples in zip(records, texts, strict=True):
        cons = read_instruction(query_text(rec.prompt)).constraints
        verdicts += [float(bool(cons) and all(holds(c, t) for c in cons)) for t in samples]
    return _mean(verdicts)


async def score_responses(
    task: EvalTask,
    ds: Any,
    texts: list[list[str]],
    ex: Any,
    judge: str | None,
    judge_url: str | None,
    tools: list[tuple[Any, float]] | None = None,
    per_record: dict[str, list[float | None]] | None = None,
) -> dict[str, float | None]:
    """The task's metrics (by domain, see :mod:`rlar.eval.suites`) for given responses: ``texts[i]`` holds the
    samples for record ``i`` (the first is the greedy one for exact match, BLEU and judge metrics).

    ``tools`` (spec, weight) give ``score`` when ``task.tool_score``; None: the built-in tools the task's
    ``default_tools`` name. ``per_record``, when given, receives each per-record metric's value for every
    record (``None`` where the record's scoring abstained): what a paired comparison of two checkpoints
    resamples (:func:`rlar.eval.report.paired_bootstrap`). Corpus-level metrics (BLEU-2) have none."""

    records = list(ds.records)
    domain = ds.spec.domain
    metrics: dict[str, float | None] = {}
    per_record = per_record if per_record is not None else {}
    inputs = [
        ToolInput(
            query=query_text(rec.prompt),
            response=t[0],
            reference=rec.reference,
            metadata={**rec.metadata, "task_type": ds.spec.task_type},
        )
        for rec, t in zip(records, texts, strict=True)
    ]
    if domain in ("math", "string", "qa"):
        tool, name = {
            "math": ("math_verify", "nem"),
            "string": ("exact_match", "exact"),
            "qa": ("normalized_match", "match"),
        }[domain]
        res = await _score(ex, _spec(tool), inputs)
        per_record[name] = [float(r.ok and r.score == 1.0) for r in res]
        metrics[name] = _mean([v for v in per_record[name] if v is not None])
    elif domain == "code":
        metrics.update(await _code_metrics(task, ex, records, texts, per_record))
    elif domain == "instruction_following":
        metrics.update(await _ifeval_metrics(ex, inputs, per_record))
    elif domain == "format":
        metrics["format"] = _format_pass(records, texts)
    if domain == "translation":
        refs = [rec.reference if isinstance(rec.reference, str) else str(rec.reference) for rec in records]
        langs = {str(rec.metadata.get("target_lang", "")) for rec in records}
        tokenize = bleu_tokenizer(langs.pop()) if len(langs) == 1 else "13a"
        metrics["bleu2"] = _bleu2([t[0] for t in texts], refs, tokenize)
    if domain in ("translation", "chat", "instruction_following"):
        if judge is None:
            metrics["judge"] = None
        else:
            params: dict[str, Any] = {"base_url": judge_url} if judge_url else {}
            res = await _score(ex, _spec("llm_judge", **params), inputs)
            metrics["judge"], abstained = _mean_ok(res)
            metrics["judge_abstained"] = float(abstained)
    if task.tool_score:
        chosen = tools if tools is not None else [(_spec(n), w) for n, w in ds.spec.default_tools]
        metrics.update(await _tool_score(chosen, ex, inputs, judge, judge_url, per_record))
    return metrics


def _generate(task: EvalTask, ds: Any, engine: Any, seed: int) -> tuple[list[list[str]], float]:
    """Samples for every record (prompts cut from the left to fit) and the mean response length in tokens."""
    max_new = min(task.max_new_tokens, engine.cfg.max_model_len // 2)
    budget = engine.cfg.max_model_len - max_new - 1
    ids = []
    for rec in ds.records:
        toks = engine.render_prompt(rec.prompt)
        ids.append(toks[-budget:] if len(toks) > budget else toks)
    outs = engine.generate(
        ids, n=task.n_samples, max_new_tokens=max_new, temperature=task.temperature, top_p=1.0, seed=seed
    )
    lengths = [float(len(c.token_ids)) for group in outs for c in group]
    return [[c.text for c in group] for group in outs], _mean(lengths)


def _read_newest(ck: Checkpoint, attempts: int = 5) -> tuple[Checkpoint, bytes]:
    """The weights bytes of a run's newest version, read now. A live learner keeps only its last few
    versions, so the one resolved earlier may be gone: re-resolve and retry a few times."""

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

    cfg = json.loads((model_dir / "config.json").read_text())
    return int(min(cfg.get("max_position_embeddings") or 2048, 4096))


@dataclass(frozen=True, slots=True)
class EngineSettings:
    """Which engine generates, on what device and in which dtype (``--engine``, ``--device``, ``--dtype``)."""

    kind: str = "transformers"
    """``transformers`` or ``vllm`` (vLLM on CPU needs float32, head_dim >= 32; see MEASURED.md)."""
    device: str = "cpu"
    dtype: str = "float32"
    threads: int | None = None
    """CPU threads of the engine: None — every core this process may use (an eval runs alone; the training
    actors' one thread each is for processes that share the cores)."""

    def config(self, model_dir: Path, seed: int) -> Any:

        common = {
            "model": str(model_dir),
            "max_model_len": _max_len(model_dir),
            "seed": seed,
            "device": self.device,
            "dtype": self.dtype,
        }
        threads = self.threads or len(os.sched_getaffinity(0))
        if self.kind == "vllm":
            cores = sorted(os.sched_getaffinity(0))[:threads]
            return VLLMEngineConfig(**common, cpu_cores=",".join(map(str, cores)))
        if self.kind == "transformers":
            return TransformersEngineConfig(**common, num_threads=threads)
        raise ValueError(f"unknown engine {self.kind!r} (transformers | vllm)")


async def evaluate_async(
    checkpoint: Checkpoint,
    suite: str,
    tasks: list[tuple[EvalTask, Any]],
    *,
    seed: int = 0,
    judge_url: str | None = None,
    engine: EngineSettings | None = None,
    tools: dict[str, list[Any]] | None = None,
) -> EvalResult:
    """Evaluate one checkpoint on ``tasks`` (pairs of an :class:`EvalTask` and its loaded dataset).
    ``tools``: per task name, the :class:`rlar.eval.tools.ChosenTool` list its ``score`` comes from."""

    t0 = time.perf_counter()
    cfg = (engine or EngineSettings()).config(checkpoint.model_dir, seed)
    gen = await asyncio.to_thread(make_engine, cfg)
    try:
        if checkpoint.weights_uri is not None:
            checkpoint, data = _read_newest(checkpoint)
            await asyncio.to_thread(gen.load_weights, data, checkpoint.version)
        judge = judge_status(judge_url)
        metrics: dict[str, dict[str, float | None]] = {}
        per_record: dict[str, dict[str, list[Any]]] = {}
        counts: dict[str, int] = {}
        samples: dict[str, list[dict[str, Any]]] = {}
        tools = tools or {}
        options = executor_options([t for chosen in tools.values() for t in chosen])
        async with ToolExecutor(workers=1, timeout_s=30.0, **options) as ex:
            for task, ds in tasks:
                texts, avg_len = await asyncio.to_thread(_generate, task, ds, gen, seed)
                chosen = tools.get(task.name)
                pairs = None if chosen is None else [(t.spec, t.weight) for t in chosen]
                each: dict[str, list[float | None]] = {}
                m = await score_responses(task, ds, texts, ex, judge, judge_url, pairs, each)
                m["avg_len"] = avg_len
                per_record[task.name] = {"ids": [str(rec.id) for rec in ds.records], **each}
                metrics[task.name], counts[task.name] = m, len(ds)
                samples[task.name] = [
                    {
                        "id": rec.id,
                        "prompt": query_text(rec.prompt),
                        "reference": rec.reference,
                        "responses": t,
                    }
                    for rec, t in zip(ds.records, texts, strict=True)
                ]
    finally:
        gen.close()
    named = {name: [t.to_dict() for t in chosen] for name, chosen in tools.items()}
    return EvalResult(
        suite, checkpoint, metrics, counts, judge, time.perf_counter() - t0, samples, named, per_record
    )


def evaluate(
    checkpoint: Checkpoint,
    suite: str,
    tasks: list[tuple[EvalTask, Any]],
    *,
    seed: int = 0,
    judge_url: str | None = None,
    engine: EngineSettings | None = None,
    tools: dict[str, list[Any]] | None = None,
) -> EvalResult:
    """Synchronous wrapper of :func:`evaluate_async`."""
    return asyncio.run(
        evaluate_async(checkpoint, suite, tasks, seed=seed, judge_url=judge_url, engine=engine, tools=tools)
    )
