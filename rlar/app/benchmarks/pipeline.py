"""``rlar bench pipeline``: the same GRPO work run by TRL, synchronously and asynchronously, in one run.

Every way uses the same policy (``model_dir``, else the tiny config: a Llama with hidden 64, 2 layers, 1 head,
ByT5's byte vocabulary, random init, seed 0, built locally; the real SmolLM2-135M-Instruct: ``--model-dir $(rlar
models prepare smollm2)``), the same prompts (the ``arith`` mix, or the JSONL task ``data``, with the same seed,
in the same order), the same batch (``prompts`` × ``group_size`` completions of at most ``max_new_tokens`` tokens
at ``temperature``), the same learning rate and training precision (``dtype``) and the same reward tool:

- ``reward = "rule"``: a built-in rule tool (``rule_tool``, default ``contains_match``: the reference number
  appears in the completion);
- ``reward = "judge"``: the built-in LLM judge (registered as ``bench_judge``) pointed at a local judge
  endpoint in its own process (:mod:`rlar.benchmarks.judge_endpoint`) that answers after
  ``judge_latency_ms``, with ``judge_concurrency`` calls in flight (the tool's ``max_concurrency``). The
  endpoint counts the calls it holds at once; the report gives what it saw in each way.

The ways, one after the other:

1. **trl** (with ``baseline = "trl"``): TRL's ``GRPOTrainer`` in a child process (:mod:`.trl_peer`), with
   ``trl_threads`` torch threads; the reward tool is called from an async reward function.
   **trl-async** (with ``baseline = "trl-async"``, or ``"trl,trl-async"`` for both): TRL's
   ``AsyncGRPOTrainer`` (``trl.experimental.async_grpo``) with its vLLM server, launched as TRL documents it, in a
   child process (:mod:`rlar.benchmarks.trl_async_peer`): the server on one CUDA device, the trainer on another,
   weights sent over NCCL. Before any way runs, the bench checks what it needs (two CUDA devices, NCCL, vLLM,
   ``kernels``); where something is missing — any CPU machine — the report's ``trl_async`` is ``{"skipped": true,
   "reason": ...}`` naming it and ``async_over_trl_async`` is null. Where it runs, the project's ways must run on
   the GPU too (``engine = "vllm"``, ``device = "cuda"``; otherwise ValueError).
2. **sync** (the project's components in TRL's order, in this process, one torch thread): generate
   (``rlar.policy.engines``) → score (``ToolExecutor``) → GRPO step (``DeepSpeedPolicyTrainer``) → export the
   weights and load them into the engine. Each stage's time is recorded; nothing overlaps.
3. **async** (this project): the real feeder (``reward_mode = static:<tool>``), rollout, reward worker and
   learner as supervised processes on an embedded nats-server, weights by ``weight_sync`` (default: the
   filesystem), ``max_staleness = 2``.

Measured per way after ``warmup_steps`` steps (start-up and first-call costs left out): samples/s = samples
trained / wall time of the measured steps. The **limit** is what a perfect pipeline of the project's own stages
could do: each stage on its own resources, no overhead, so one step takes as long as the slowest stage —
rollout (generate + load weights), reward (score the batch) or learner (update + export weights) — each the
median of its standalone time in the sync way, where nothing overlaps. ``limit = n / max(stage)``, n the
samples per step; ``async_over_limit`` says how much of that the asynchronous way achieves (on a shared 2-core
machine the stages compete for the same cores, so it stays below 1). The **machine limit** adds the cores:
a perfect pipeline can go no faster than the slowest stage, nor than this machine's cores can do all the stages'
work — ``machine_limit = n / max(max(stage), cpu_s_per_step(sync) / cores)`` — and
``async_over_machine_limit`` is measured against it. Ratios reported: ``async_over_trl``,
``async_over_sync``, ``async_over_limit`` (and ``async_over_trl_async`` where that peer ran) — each from figures
of the same run. ``cpu_s_per_step`` per way: CPU seconds (user + system) of all the way's processes over the
measured steps / steps — trl: its process; trl_async: its trainer, TRL's rollout worker and the vLLM server's
processes; sync: this process and its tool worker; async: every actor, nats-server and this process — never the
judge endpoint's (it stands in for a remote service). On a machine the ways do not have to themselves, it tells
work from waiting: samples/s moves with the load, CPU per step much less.

``cpu_window_s`` gives the wall time each way's CPU was measured over; under 3 s ``cpu_note`` says the CPU
figures are imprecise (10 ms ticks per process, and whatever periodic work falls in the window): the tiny case's
12 steps are under a second, ``--steps 60`` gives a figure.

Memory: with ``keep_freed_memory`` (default; ``--malloc system`` turns it off) every way's torch processes keep
the memory a step frees for the next (:mod:`rlar.malloc`) — the project's trainer and transformers engine, and
TRL's process, given the same setting — and each way reports what it set (``trl.malloc``, ``sync.malloc``,
``async.malloc_kept`` from the rollout's and learner's heartbeats).

Learning: every way reports its mean reward per step (``reward_by_step``) and ``reward_last_steps`` — the mean
over the last quarter of its steps — so the ways are compared after the same number of samples, not only in
speed.

Not covered: vLLM on GPU (``--engine vllm --device cuda``, see rlar bench gpu), several rollout or learner
replicas (weight-route speed alone: rlar bench weight-sync).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import psutil
import tomli_w
from pydantic import TypeAdapter

from actors.supervisor import Supervisor
from bus import subjects
from bus.client import Bus
from bus.codec import decode
from bus.config import NatsConfig
from bus.embedded import serve
from bus.messages import Event, Heartbeat, Metrics, WeightsAnnounce
from bus.topology import WEIGHTS, TopologyConfig, declare, ensure_topology
from rlar.benchmarks import trl_async_peer
from rlar.benchmarks.judge_endpoint import JudgeEndpoint
from rlar.malloc import keep_freed_memory, kept
from rlar.plots import read_metrics
from rlar.policy.engines import EngineConfig, make_engine
from rlar.policy.model import TinyPolicySpec, build_tiny_policy
from rlar.registry import ToolRegistry
from rlar.tasks import TaskConfig, build_mix
from rlar.tasks.base import query_text
from rlar.tools import ToolExecutor, ToolInput, builtin_specs

# trl and torch are imported where used: heavy and optional (the CLI starts without them).
# rlar.learn.grpo and rlar.learn.trainer are imported where used: they import torch at their top.

__all__ = [
    "BASELINES",
    "TINY_POLICY",
    "PipelineSettings",
    "baselines",
    "run",
    "trl_async_skip_reason",
    "validate",
]

BASELINES = ("trl", "trl-async")
"""The TRL peers ``baseline`` can name."""

log = logging.getLogger("rlar.bench.pipeline")

JUDGE_TOOL = "bench_judge"


@dataclass(frozen=True, slots=True)
class PipelineSettings:
    steps: int = 12
    """Measured steps per way."""
    warmup_steps: int = 4
    """Steps left out of the measurement (start-up, first calls). At least max_staleness + 1 (3): by then the
    prompts the async way buffered while its learner started are used up, so a rollout-bound run is not
    timed on a head start."""
    prompts: int = 8
    """Prompts per step."""
    group_size: int = 8
    max_new_tokens: int = 16
    reward: Literal["rule", "judge"] = "judge"
    rule_tool: str = "contains_match"
    """The built-in rule tool of ``reward = "rule"``."""
    judge_latency_ms: float = 50.0
    """The judge endpoint's fixed latency per call."""
    judge_concurrency: int = 64
    """Judge calls in flight (the tool's ``max_concurrency``; the same in every way)."""
    baseline: str = "none"
    """TRL peers to run on the same work, comma-separated (:data:`BASELINES`): ``trl`` (TRL's GRPOTrainer, needs
    the ``bench`` extra), ``trl-async`` (TRL's AsyncGRPOTrainer with its vLLM server: GPUs only — where this
    machine lacks what it needs, the report says what and skips it), ``trl,trl-async``, or ``none``."""
    trl_threads: int = 2
    """torch threads of the TRL process (it runs alone: both cores of the dev machine)."""
    lr: float = 1e-4
    async_timeout_s: float = 300.0
    trl_timeout_s: float = 900.0
    trl_async_timeout_s: float = 900.0
    """The whole trl-async peer: its vLLM server's start-up, the trainer's, and the steps."""
    trl_async_gpu_memory_utilization: float = 0.5
    """The trl-async vLLM server's share of its own device (it has one to itself)."""
    quick: bool = False
    """Fewer steps (tests): 2 measured after 1 warm-up."""
    seed: int = 0
    model_dir: str | None = None
    """A local HF checkpoint instead of the tiny config (e.g. a 0.5B model on a GPU; ``rlar models prepare
    smollm2`` prints the real model's)."""
    data: str | None = None
    """A JSONL task instead of the built-in ``arith`` mix: ``prompt``/``reference`` or ``question``/``answer``
    fields (e.g. data/mix/arith_words.jsonl); its ``split`` field, when it has one, keeps the train rows. Every way
    reads the same rows in the same order."""
    temperature: float = 1.0
    """Sampling temperature of every way (a chat model samples coherently around 0.7; the tiny one at 1)."""
    dtype: Literal["fp32", "bf16"] = "fp32"
    """Training precision of every way: the project's trainer (DeepSpeed bf16 over fp32 master weights) and TRL's
    (``bf16=True``: autocast, fp32 weights)."""
    engine: str = "transformers"
    """Generation engine of the project's ways: ``transformers`` or ``vllm``."""
    device: str = "cpu"
    """``cpu`` or ``cuda``: generation and training device of the project's ways."""
    weight_sync: Literal["filesystem", "objstore", "http"] = "filesystem"
    """The async way's weight route from the learner to the rollout (``[learner] weight_sync``)."""
    keep_freed_memory: bool = True
    """Every way's torch processes keep freed memory for the next step (:mod:`rlar.malloc`; the project's
    trainer and transformers engine do by default, and TRL's processes are given the same); False: glibc's
    usual malloc in every way."""


def tiny_policy_spec() -> Any:
    """The comparison's default policy: hidden 64, 2 layers, 1 head, ByT5 vocabulary, untied head, seed 0."""

    return TinyPolicySpec(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=1,
        tie_word_embeddings=False,
        seed=0,
    )


TINY_POLICY = (
    "hidden 64, intermediate 128, 2 layers, 1 head, ByT5 vocabulary (384), untied, random init (seed 0)"
)


# --------------------------------------------------------------------------------------------- shared
def _engine_cfg(model: str, s: PipelineSettings) -> dict[str, Any]:
    cfg: dict[str, Any] = {"kind": s.engine, "model": model, "max_model_len": 512, "device": s.device}
    if s.engine == "transformers":
        cfg["num_threads"] = 1
        cfg["keep_freed_memory"] = s.keep_freed_memory
    elif s.device.startswith("cuda"):
        cfg.update(dtype="bfloat16", gpu_memory_utilization=0.3)
    return cfg


def _trainer_cfg(model_dir: Path, s: PipelineSettings) -> dict[str, Any]:
    return {
        "model_dir": str(model_dir),
        "lr": s.lr,
        "dtype": s.dtype,
        "zero_stage": 1,
        "micro_batch_size": s.prompts * s.group_size,
        "torch_threads": 1,
        "keep_freed_memory": s.keep_freed_memory,
        "seed": s.seed,
        "grpo": {"group_size": s.group_size, "max_staleness": 2, "kl_coef": 0.0, "loss_agg": "token-mean"},
    }


def task_config(s: PipelineSettings) -> dict[str, Any]:
    """The task every way trains on (see ``data``), as ``[feeder] tasks`` takes it."""
    if s.data is None:
        return {"name": "arith", "weight": 1.0}

    first = json.loads(Path(s.data).read_text(encoding="utf-8").splitlines()[0])
    prompt, reference = ("question", "answer") if "question" in first else ("prompt", "reference")
    cfg: dict[str, Any] = {
        "name": "bench",
        "source": "jsonl",
        "path": str(Path(s.data).absolute()),
        "fields": {"prompt": prompt, "reference": reference},
        "weight": 1.0,
    }
    if "split" in first:
        cfg["split_field"] = "split"
    return cfg


def _records(s: PipelineSettings) -> list[Any]:

    mix = build_mix([TaskConfig.model_validate(task_config(s))], seed=s.seed)
    return [next(mix).record for _ in range((s.warmup_steps + s.steps) * s.prompts)]


def _tool_spec(s: PipelineSettings, judge_url: str | None) -> Any:
    """The reward tool every way uses (a sealed spec)."""

    specs = {sp.name: sp for sp in builtin_specs()}
    if s.reward == "rule":
        spec = specs.get(s.rule_tool)
        if spec is None or spec.kind != "rule":
            raise ValueError(f"rule_tool {s.rule_tool!r} is not a built-in rule tool")
        return spec
    base = specs["llm_judge"]
    params = {
        **base.params,
        "base_url": judge_url,
        "max_concurrency": s.judge_concurrency,
        "timeout_s": 30.0,
        "cache": False,
        "deadline_s": 120.0,
    }
    return base.replace(name=JUDGE_TOOL, impl="llm_judge", params=params).sealed()


def _reset(judge: Any) -> None:
    if judge is not None:
        judge.reset()


def _judge_seen(judge: Any) -> dict[str, Any] | None:
    return judge.stats() if judge is not None else None


def _way_cpu(exclude: int | None) -> list[tuple[Any, float]]:
    """(process, CPU seconds so far, user + system) of this process and every live descendant (actors,
    nats-server, tool workers) except the process ``exclude`` (the judge endpoint: it stands in for a remote
    service)."""

    me = psutil.Process()
    out = []
    for p in [me, *me.children(recursive=True)]:
        if p.pid == exclude:
            continue
        try:
            t = p.cpu_times()
        except psutil.Error:
            continue
        out.append((p, t.user + t.system))
    return out


def _cpu_s(exclude: int | None) -> float:
    return sum(c for _, c in _way_cpu(exclude))


def _cpu_by_process(exclude: int | None, labels: dict[int, str]) -> dict[str, float]:
    """:func:`_way_cpu` summed by process label: an actor by its kind (``python -m actors KIND``), another by its
    program's name, this process as ``bench``. ``labels`` caches each pid's label (read once per process)."""
    out: dict[str, float] = {}
    for p, cpu in _way_cpu(exclude):
        if p.pid not in labels:
            try:
                cmd = p.cmdline() or [p.name()]
            except Exception:  # exited since its CPU was read
                cmd = ["exited"]
            i = cmd.index("-m") if "-m" in cmd else -1
            if p.pid == os.getpid():
                labels[p.pid] = "bench"
            elif 0 <= i < len(cmd) - 2 and cmd[i + 1] == "actors":
                labels[p.pid] = cmd[i + 2]
            else:
                labels[p.pid] = Path(cmd[0]).name
        out[labels[p.pid]] = out.get(labels[p.pid], 0.0) + cpu
    return out


# --------------------------------------------------------------------------------------------- trl
def _trl(model_dir: Path, s: PipelineSettings, spec: Any, work: Path) -> dict[str, Any]:
    try:
        import trl  # noqa: F401
    except ImportError:
        raise RuntimeError("--baseline trl needs TRL: pip install 'rlar[bench]'") from None
    records = _records(s)
    settings = {
        "model_dir": str(model_dir),
        "prompts": [str(r.prompt) for r in records],
        "references": [r.reference for r in records],
        "group_size": s.group_size,
        "prompts_per_step": s.prompts,
        "max_new_tokens": s.max_new_tokens,
        "steps": s.steps,
        "warmup_steps": s.warmup_steps,
        "lr": s.lr,
        "temperature": s.temperature,
        "bf16": s.dtype == "bf16",
        "seed": s.seed,
        "torch_threads": s.trl_threads,
        "keep_freed_memory": s.keep_freed_memory,
        "tool_spec": spec.to_dict(),
    }
    env = {"TOKENIZERS_PARALLELISM": "false", "ACCELERATE_USE_CPU": "true"}
    return _run_peer("trl_peer", settings, work / "trl", env, (), s.trl_timeout_s, "TRL run")


_LAUNCHER_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")


def _run_peer(
    module: str,
    settings: dict[str, Any],
    stem: Path,
    env_set: dict[str, str],
    env_drop: tuple[str, ...],
    timeout_s: float,
    what: str,
) -> dict[str, Any]:
    """Run ``rlar.benchmarks.<module>`` on ``<stem>.json`` (its settings) in a child process without the
    launcher's rank variables, stderr to ``<stem>.log``; its result is the last JSON line it prints."""
    path, log_path = stem.with_suffix(".json"), stem.with_suffix(".log")
    path.write_text(json.dumps(settings))
    env = {**os.environ, **env_set}
    for k in (*_LAUNCHER_VARS, *env_drop):
        env.pop(k, None)
    with open(log_path, "wb") as logf:
        proc = subprocess.run(
            [sys.executable, "-m", f"rlar.benchmarks.{module}", str(path)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=logf,
            timeout=timeout_s,
        )
    lines = [x for x in proc.stdout.decode().splitlines() if x.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = log_path.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"{what} failed (exit {proc.returncode}):\n{tail}")
    return dict(json.loads(lines[-1]))


# --------------------------------------------------------------------------------------------- trl-async
def trl_async_skip_reason(s: PipelineSettings) -> str | None:
    """Why TRL's AsyncGRPOTrainer cannot run on this machine (what it lacks, checked: CUDA devices, NCCL, vLLM,
    kernels — :func:`rlar.benchmarks.trl_async_peer.missing`), or None when it can. Where it can, the project's
    ways must run on the GPU too (``--engine vllm --device cuda``): a GPU peer against CPU ways measures nothing."""

    lacking = trl_async_peer.missing()
    if lacking:
        return "; ".join(lacking)
    if not s.device.startswith("cuda") or s.engine != "vllm":
        raise ValueError(
            "--baseline trl-async runs TRL's AsyncGRPOTrainer on GPUs: run the project's ways there too "
            "(--engine vllm --device cuda)"
        )
    return None


def _trl_async(
    model_dir: Path, s: PipelineSettings, spec: Any, work: Path, reason: str | None
) -> dict[str, Any]:
    """TRL's AsyncGRPOTrainer and its vLLM server on the same work, in a child process
    (:mod:`rlar.benchmarks.trl_async_peer`); ``{"skipped": true, "reason": ...}`` where this machine cannot run it."""
    if reason is not None:
        return {"skipped": True, "reason": reason}

    server_dev, trainer_dev = trl_async_peer.devices()
    records = _records(s)
    settings = {
        "model_dir": str(model_dir.absolute()),
        "prompts": [str(r.prompt) for r in records],
        "references": [r.reference for r in records],
        "group_size": s.group_size,
        "prompts_per_step": s.prompts,
        "max_new_tokens": s.max_new_tokens,
        "steps": s.steps,
        "warmup_steps": s.warmup_steps,
        "lr": s.lr,
        "seed": s.seed,
        "tool_spec": spec.to_dict(),
        "dtype": "bfloat16",  # the project's vLLM engine's dtype on CUDA (_engine_cfg)
        "max_model_len": 512,
        "gpu_memory_utilization": s.trl_async_gpu_memory_utilization,
        "server_timeout_s": min(600.0, s.trl_async_timeout_s),
        "server_device": server_dev,
        "trainer_device": trainer_dev,
        "work_dir": str(work),
    }
    env = {"TOKENIZERS_PARALLELISM": "false", "CUDA_VISIBLE_DEVICES": trainer_dev}
    doc = _run_peer(
        "trl_async_peer",
        settings,
        work / "trl_async",
        env,
        ("DS_ACCELERATOR",),
        s.trl_async_timeout_s,
        "TRL async run",
    )
    return {"skipped": False, **doc}


# --------------------------------------------------------------------------------------------- sync
async def _sync(model_dir: Path, s: PipelineSettings, spec: Any, judge_pid: int | None) -> dict[str, Any]:
    import torch

    from rlar.learn.grpo import group_advantages
    from rlar.learn.trainer import DeepSpeedPolicyTrainer, PolicyBatch, TrainerConfig

    torch.set_num_threads(1)
    engine = make_engine(TypeAdapter(EngineConfig).validate_python(_engine_cfg(str(model_dir), s)))
    trainer = DeepSpeedPolicyTrainer(TrainerConfig.model_validate(_trainer_cfg(model_dir, s)))
    total = s.warmup_steps + s.steps
    records = _records(s)
    times: dict[str, list[float]] = {"gen": [], "reward": [], "train": [], "sync": [], "step": [], "cpu": []}
    rewards: list[float | None] = []  # per step: the mean reward of the samples that scored
    samples = 0
    async with ToolExecutor(workers=1) as ex:
        for step in range(total):
            batch = records[step * s.prompts : (step + 1) * s.prompts]
            c0 = _cpu_s(judge_pid)  # read before the clock starts: reading it takes ~2 ms of the bench's own
            t0 = time.perf_counter()
            ids = [engine.render_prompt(r.prompt) for r in batch]
            outs = engine.generate(
                ids, n=s.group_size, max_new_tokens=s.max_new_tokens, temperature=s.temperature
            )
            t1 = time.perf_counter()
            inputs = [
                ToolInput(query=query_text(r.prompt), response=c.text, reference=r.reference)
                for r, group in zip(batch, outs, strict=True)
                for c in group
            ]
            results = await ex.score_batch(spec, inputs)
            t2 = time.perf_counter()
            scored = [float(r.score) for r in results if r.ok and r.score is not None]
            rewards.append(sum(scored) / len(scored) if scored else None)
            scores = torch.tensor([float(r.score or 0.0) for r in results]).view(s.prompts, s.group_size)
            mask = torch.tensor([r.ok for r in results]).view(s.prompts, s.group_size)
            adv = torch.cat([group_advantages(scores[i], mask[i]) for i in range(s.prompts)]).tolist()
            rows = [(p, c) for p, group in zip(ids, outs, strict=True) for c in group]
            pb = PolicyBatch.from_samples(
                [p for p, _ in rows],
                [c.token_ids for _, c in rows],
                [c.logprobs for _, c in rows],
                adv,
                None,
                pad_id=0,
            )
            trainer.step(pb)
            tensors = list(trainer.export_named_tensors())
            t3 = time.perf_counter()
            engine.load_weights(tensors, step + 1)
            t4 = time.perf_counter()
            if step >= s.warmup_steps:
                for k, v in (
                    ("gen", t1 - t0),
                    ("reward", t2 - t1),
                    ("train", t3 - t2),
                    ("sync", t4 - t3),
                    ("step", t4 - t0),
                    ("cpu", _cpu_s(judge_pid) - c0),
                ):
                    times[k].append(v)
                samples += len(rows)
    engine.close()
    wall = sum(times["step"])
    med = {k: statistics.median(v) for k, v in times.items() if k != "cpu"}
    # The stages of a pipeline: the rollout generates and loads weights, the learner updates and exports.
    stages = {"rollout": med["gen"] + med["sync"], "reward": med["reward"], "learner": med["train"]}
    return {
        "samples_per_s": samples / wall,
        "learner_idle_frac": 1 - sum(times["train"]) / wall,
        "stage_median_s": {k: round(v, 4) for k, v in med.items()},
        "pipeline_stage_s": {k: round(v, 4) for k, v in stages.items()},
        # nothing overlaps: every stage is on the step's path; the largest is the one that bounds it
        "bound_stage": max(stages, key=lambda k: stages[k]),
        "cpu_s_per_step": round(sum(times["cpu"]) / len(times["cpu"]), 4),  # this process and its tool worker
        "malloc": _malloc_state(),
        "reward_by_step": rewards,
        "steps": len(times["step"]),
        "samples": samples,
        "wall_s": round(wall, 4),
    }


def _malloc_state() -> str:

    return "freed memory kept" if kept() else keep_freed_memory.__name__ + " not set"


# --------------------------------------------------------------------------------------------- async
def _async_doc(s: PipelineSettings, run_dir: Path, tool: str, kind: str) -> dict[str, Any]:
    return {
        "run": {"dir": str(run_dir)},
        "feeder": {
            "seed": s.seed,
            "routing": "static",
            "reward_mode": f"static:{tool}",
            "tasks": [task_config(s)],
        },
        "rollout": {
            "group_size": s.group_size,
            "batch_prompts": s.prompts,
            "max_new_tokens": s.max_new_tokens,
            "temperature": s.temperature,
            "engine": _engine_cfg("{run_dir}/policy/init", s),
        },
        "reward": {"kinds": [kind]},
        "learner": {
            "prompts_per_step": s.prompts,
            "max_steps": s.warmup_steps + s.steps,
            "checkpoint_every": 10_000,
            "weight_sync": s.weight_sync,
            "skip_zero_advantage": False,
            "trainer": _trainer_cfg(run_dir / "policy" / "init", s),
        },
    }


async def _async(
    model_dir: Path, s: PipelineSettings, work: Path, spec: Any, judge_pid: int | None
) -> dict[str, Any]:

    run_dir = work / "async"
    (run_dir / "policy").mkdir(parents=True)
    (run_dir / "policy" / "init").symlink_to(model_dir.absolute(), target_is_directory=True)
    doc = _async_doc(s, run_dir, spec.name, str(spec.kind))
    with serve("embedded", run_dir) as url:
        doc["nats"] = {"url": url}
        cfg = run_dir / "config.toml"
        cfg.write_text(tomli_w.dumps(doc))
        bus = await Bus.connect(NatsConfig(url=url), name="bench-pipeline")
        await ensure_topology(bus.js, declare(TopologyConfig()))
        registry = ToolRegistry(bus)
        await registry.ensure_builtins(by="bench pipeline")
        if spec.name == JUDGE_TOOL:
            await registry.register(spec, by="bench pipeline")
        finished = asyncio.Event()

        async def on_event(msg: Event, raw: Any) -> None:
            if msg.kind == "finished":
                finished.set()

        await bus.subscribe(subjects.events("learner"), Event, on_event)
        cpu: dict[int, dict[str, float]] = {}  # learner step → CPU seconds of each process of the way then
        labels: dict[int, str] = {}
        last_metrics = asyncio.Event()

        async def on_metrics(msg: Metrics, raw: Any) -> None:
            # Only the two readings the figure uses (each walks /proc, in this process, on the way's cores).
            if msg.step == s.warmup_steps or msg.step >= s.warmup_steps + s.steps:
                cpu[msg.step] = _cpu_by_process(judge_pid, labels)
            if msg.step >= s.warmup_steps + s.steps:
                last_metrics.set()

        await bus.subscribe(subjects.metrics("learner"), Metrics, on_metrics)
        beats: dict[str, Heartbeat] = {}  # each actor kind's last heartbeat (the last one says "stopped")

        async def on_heartbeat(msg: Heartbeat, raw: Any) -> None:
            beats[msg.actor] = msg

        await bus.subscribe(subjects.HEARTBEAT_ALL, Heartbeat, on_heartbeat)
        env = {"DS_ACCELERATOR": os.environ.get("DS_ACCELERATOR", "cpu"), "TOKENIZERS_PARALLELISM": "false"}
        actors = [("feeder", 1), ("rollout", 1), ("reward", 1), ("learner", 1)]
        sup = Supervisor(actors, nats_url=url, run_dir=run_dir, config_path=str(cfg), bus=bus, extra_env=env)
        runner = asyncio.create_task(sup.run())
        t0 = time.time()
        try:
            await asyncio.wait_for(finished.wait(), s.async_timeout_s)
            # the learner publishes its last metrics before "finished": read the CPU before the actors stop
            await asyncio.wait_for(last_metrics.wait(), 10.0)
        except TimeoutError:
            pass
        startup_to_end = time.time() - t0
        sup.stop()
        await runner
        routes = await _announced_routes(bus)
        await bus.close()

    records = read_metrics(run_dir / "metrics.jsonl")
    measured = records[s.warmup_steps :]
    if len(records) <= s.warmup_steps or not measured:
        raise RuntimeError(
            f"async pipeline made only {len(records)} learner steps in {s.async_timeout_s}s; "
            f"logs under {run_dir / 'logs'}"
        )
    start = records[s.warmup_steps - 1]["t_end"] if s.warmup_steps else records[0]["t_start"]
    wall = measured[-1]["t_end"] - start
    busy = sum(r["step_s"] for r in measured)
    samples = sum(int(r["samples"]) for r in measured)
    updates = [r["tokens"] / r["tokens_per_s"] for r in measured if r.get("tokens_per_s")]
    stage_s = _async_stages(beats, s, statistics.median(r["step_s"] for r in measured))
    wall_per_step = wall / len(measured)
    last = max(cpu, default=0)
    per_process: dict[str, float] = {}
    if s.warmup_steps in cpu and last > s.warmup_steps:
        first = cpu[s.warmup_steps]
        per_process = {
            k: round((v - first.get(k, 0.0)) / (last - s.warmup_steps), 4) for k, v in cpu[last].items()
        }
    return {
        "samples_per_s": samples / wall,
        "learner_idle_frac": max(0.0, 1 - busy / wall),
        "steps": len(measured),
        "samples": samples,
        "wall_s": round(wall, 4),
        "crashes": sup.crashes,
        "complete": len(records) >= s.warmup_steps + s.steps,
        "seconds_incl_startup": round(startup_to_end, 1),
        "staleness_max": max((r.get("staleness_max", 0) for r in measured), default=0),
        "learner_step_s_median": round(statistics.median(r["step_s"] for r in measured), 4),
        # each stage's time per step (rollout: generate + load weights, per batch; reward: wall time with a
        # request in flight, per batch; learner: its step) and the share of a measured step it is busy: the
        # stage closest to 1 bounds the pipeline
        "stage_s_per_step": stage_s,
        "stage_busy_frac": {k: round(v / wall_per_step, 3) for k, v in stage_s.items()},
        "bound_stage": max(stage_s, key=lambda k: stage_s[k]) if stage_s else None,
        # the DeepSpeed update alone (the learner's record keeps tokens and tokens/s of the update)
        "learner_update_s_median": round(statistics.median(updates), 4) if updates else None,
        # every process of the way (actors, nats-server, this one) from the end of the warm-up to the last step
        "cpu_s_per_step": round(sum(per_process.values()), 4) if per_process else None,
        "cpu_s_per_step_by_process": per_process or None,
        # versions the learner announced, by the scheme of their uri, and versions the rollout loaded
        "weights_announced": routes,
        "rollout_weight_loads": _rollout_loads(run_dir),
        # whether each torch actor kept freed memory (rlar.malloc), from its last heartbeat
        "malloc_kept": {k: beats[k].info.get("malloc_kept") for k in ("rollout", "learner") if k in beats},
        # the mean reward of every learner step, warm-up included (the other ways report theirs the same way)
        "reward_by_step": [r.get("reward_mean") for r in records],
    }


def reward_tail(by_step: list[float | None] | None) -> dict[str, Any] | None:
    """The mean of the last quarter (at least one) of a way's per-step rewards, with how many steps it spans and
    after how many; steps where nothing scored are left out. None without steps."""
    if not by_step:
        return None
    k = max(1, len(by_step) // 4)
    tail = [r for r in by_step[-k:] if r is not None]
    return {
        "mean": round(sum(tail) / len(tail), 4) if tail else None,
        "steps": k,
        "after_steps": len(by_step),
    }


def _async_stages(beats: dict[str, Any], s: PipelineSettings, learner_step_s: float) -> dict[str, float]:
    """The async way's stage times per step from the actors' last heartbeats (whole run: every batch the
    rollout generated and the reward worker scored, warm-up included) and the learner's measured steps."""
    out: dict[str, float] = {}
    roll = beats.get("rollout")
    if roll is not None and roll.counters.get("batches"):
        batches = roll.counters["batches"]
        out["rollout"] = round((roll.info.get("gen_s", 0.0) + roll.info.get("load_s", 0.0)) / batches, 4)
        out["generate"] = round(roll.info.get("gen_s", 0.0) / batches, 4)
    rew = beats.get("reward")
    if rew is not None and rew.counters.get("requests"):
        # one request per prompt group (one tool kind): a step's batch is s.prompts requests
        out["reward"] = round(rew.info.get("busy_s", 0.0) / rew.counters["requests"] * s.prompts, 4)
    out["learner"] = round(learner_step_s, 4)
    return out


async def _announced_routes(bus: Any) -> dict[str, int]:
    """Weight announcements kept on the bus (the stream keeps the last 16) by uri scheme (a path: ``file``)."""

    info = await bus.js.stream_info(WEIGHTS)
    out: dict[str, int] = {}
    for seq in range(info.state.first_seq, info.state.last_seq + 1):
        try:
            ann = decode((await bus.js.get_msg(WEIGHTS, seq)).data or b"", WeightsAnnounce)
        except Exception:  # deleted, or not an announcement: not counted
            continue
        scheme = ann.uri.split("://", 1)[0] if "://" in ann.uri else "file"
        out[scheme] = out.get(scheme, 0) + 1
    return out


def _rollout_loads(run_dir: Path) -> int:
    """Versions the rollout replicas loaded (their logs' "now serving policy vN" lines)."""
    return sum(
        log_file.read_text(errors="replace").count("now serving policy v")
        for log_file in (run_dir / "logs").glob("rollout-*.log")
    )


# --------------------------------------------------------------------------------------------- run
async def _run(s: PipelineSettings) -> dict[str, Any]:

    t0 = time.time()
    peers = baselines(s)
    skip = trl_async_skip_reason(s) if "trl-async" in peers else None  # before any way runs: it may refuse
    work = Path(tempfile.mkdtemp(prefix="rlar-bench-pipeline-"))
    cleanup = True
    seen: dict[str, Any] = {}
    try:
        model_dir = (
            Path(s.model_dir) if s.model_dir else build_tiny_policy(work / "policy", tiny_policy_spec())
        )
        judge = JudgeEndpoint(s.judge_latency_ms / 1000.0) if s.reward == "judge" else None
        try:
            spec = _tool_spec(s, judge.url if judge is not None else None)
            judge_pid = judge.proc.pid if judge is not None else None
            trl_doc = trl_async_doc = None
            if "trl" in peers:
                log.info("pipeline bench: trl (%d + %d steps)", s.warmup_steps, s.steps)
                _reset(judge)
                trl_doc = await asyncio.to_thread(_trl, model_dir, s, spec, work)
                seen["trl"] = _judge_seen(judge)
            if "trl-async" in peers:
                log.info("pipeline bench: trl-async (%s)", "skipped: " + skip if skip else "running")
                _reset(judge)
                trl_async_doc = await asyncio.to_thread(_trl_async, model_dir, s, spec, work, skip)
                if not trl_async_doc["skipped"]:
                    seen["trl_async"] = _judge_seen(judge)
            log.info("pipeline bench: sync way (%d + %d steps)", s.warmup_steps, s.steps)
            _reset(judge)
            sync = await _sync(model_dir, s, spec, judge_pid)
            seen["sync"] = _judge_seen(judge)
            log.info("pipeline bench: async way")
            _reset(judge)
            asyn = await _async(model_dir, s, work, spec, judge_pid)
            seen["async"] = _judge_seen(judge)
        except Exception:
            cleanup = False
            raise
        finally:
            if judge is not None:
                judge.close()
    finally:
        if cleanup:  # on failure the run directory (actor logs) stays for inspection
            shutil.rmtree(work, ignore_errors=True)
    n = s.prompts * s.group_size
    stages = sync["pipeline_stage_s"]
    limit = n / max(stages.values())
    # What the same stages could do on this machine's cores: no faster than the slowest stage, and no faster
    # than the cores can do all of their work (the sync way's CPU seconds per step, every process counted).
    cores = os.cpu_count() or 1
    machine_limit = n / max(max(stages.values()), sync["cpu_s_per_step"] / cores)
    a, y = asyn["samples_per_s"], sync["samples_per_s"]
    ta = trl_async_doc if trl_async_doc is not None and not trl_async_doc["skipped"] else None
    # the wall time each way's CPU per step was measured over: its measured steps
    windows: dict[str, float | None] = {
        "trl": trl_doc.get("wall_s") if trl_doc else None,
        "trl_async": ta.get("wall_s") if ta else None,
        "sync": sync["wall_s"],
        "async": asyn["wall_s"],
    }
    cpu_note = cpu_window_note(windows)
    if cpu_note:
        log.warning("pipeline bench: %s", cpu_note)
    doc: dict[str, Any] = {
        "bench": "pipeline",
        "settings": asdict(s),
        "policy": s.model_dir or TINY_POLICY,
        "reward_tool": spec.name,
        "samples_per_step": n,
        "trl_samples_per_s": round(trl_doc["samples_per_s"], 2) if trl_doc else None,
        "sync_samples_per_s": round(y, 2),
        "async_samples_per_s": round(a, 2),
        "limit_samples_per_s": round(limit, 2),
        "limit_stage": max(stages, key=lambda k: stages[k]),
        "async_over_trl": round(a / trl_doc["samples_per_s"], 3) if trl_doc else None,
        "trl_async_samples_per_s": round(ta["samples_per_s"], 2) if ta else None,
        "async_over_trl_async": round(a / ta["samples_per_s"], 3) if ta else None,
        "async_over_sync": round(a / y, 3),
        "async_over_limit": round(a / limit, 3),
        "machine_limit_samples_per_s": round(machine_limit, 2),
        "async_over_machine_limit": round(a / machine_limit, 3),
        "sync_learner_idle_frac": round(sync["learner_idle_frac"], 3),
        "async_learner_idle_frac": round(asyn["learner_idle_frac"], 3),
        "cpu_s_per_step": {
            "trl": trl_doc["cpu_s_per_step"] if trl_doc else None,
            "trl_async": ta["cpu_s_per_step"] if ta else None,
            "sync": sync["cpu_s_per_step"],
            "async": asyn["cpu_s_per_step"],
        },
        # each way's stage times per step and the stage that bounds it (trl and sync: the largest, nothing
        # overlaps; async: the busiest, see async.stage_busy_frac)
        "stage_s_per_step": {
            "trl": trl_doc.get("stage_median_s") if trl_doc else None,
            "sync": sync["stage_median_s"],
            "async": asyn["stage_s_per_step"],
        },
        "bound_stage": {
            "trl": trl_doc.get("bound_stage") if trl_doc else None,
            "sync": sync["bound_stage"],
            "async": asyn["bound_stage"],
        },
        # the cores each way kept busy: its CPU seconds per step over its seconds per step. A pipeline can only
        # overlap stages on cores it gets: on a machine other jobs load, async near 1 means it had one core
        "cores_busy": {
            "trl": _cores(trl_doc["cpu_s_per_step"], n / trl_doc["samples_per_s"]) if trl_doc else None,
            "trl_async": _cores(ta["cpu_s_per_step"], n / ta["samples_per_s"]) if ta else None,
            "sync": _cores(sync["cpu_s_per_step"], n / y),
            "async": _cores(asyn["cpu_s_per_step"], n / a),
        },
        "cpu_window_s": windows,
        "cpu_note": cpu_note,
        # the mean reward over the last quarter of the steps (at least one), every way after the same samples
        "reward_last_steps": {
            "trl": reward_tail(trl_doc.get("reward_by_step")) if trl_doc else None,
            "sync": reward_tail(sync.get("reward_by_step")),
            "async": reward_tail(asyn.get("reward_by_step")),
        },
        "judge_seen": seen if s.reward == "judge" else None,
        "trl": trl_doc,
        "trl_async": trl_async_doc,
        "sync": {k: v for k, v in sync.items() if k not in ("samples_per_s", "learner_idle_frac")},
        "async": {k: v for k, v in asyn.items() if k not in ("samples_per_s", "learner_idle_frac")},
        "cores": os.cpu_count(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "seconds": round(time.time() - t0, 1),
    }
    return doc


CPU_WINDOW_MIN_S = 3.0
"""Measured wall time below which a way's CPU per step is flagged: psutil reads each process's CPU in 10 ms
ticks, and a short window is at the mercy of whatever periodic work (heartbeats, stream flushes, collection)
falls inside it — 12 steps of the tiny rule case are 0.7 s, and gave async/sync CPU 1.01–1.79 for one commit
where 60 steps gave 1.36–1.48."""


def cpu_window_note(windows: dict[str, float | None], min_s: float = CPU_WINDOW_MIN_S) -> str | None:
    """A warning naming the ways whose CPU per step was measured over fewer than ``min_s`` seconds of wall time
    (``windows``: way -> measured seconds, None for a way that did not run), or None when every way's was long
    enough."""
    short = {k: v for k, v in windows.items() if v is not None and v < min_s}
    if not short:
        return None
    parts = ", ".join(f"{k} {v:.2f} s" for k, v in sorted(short.items()))
    return (
        f"CPU per step measured over a short window ({parts}; under {min_s:g} s): ratios of cpu_s_per_step are "
        f"imprecise, measure them with more --steps"
    )


def _cores(cpu_s_per_step: float | None, s_per_step: float) -> float | None:
    return round(cpu_s_per_step / s_per_step, 3) if cpu_s_per_step is not None and s_per_step > 0 else None


def baselines(s: PipelineSettings) -> frozenset[str]:
    """The peers ``s.baseline`` names (``none``: none); ValueError for a name not in :data:`BASELINES`."""
    names = {b.strip() for b in s.baseline.split(",") if b.strip()} - {"none"}
    unknown = names - set(BASELINES)
    if unknown:
        raise ValueError(f"unknown baseline {sorted(unknown)}: choose from none, {', '.join(BASELINES)}")
    return frozenset(names)


def validate(settings: PipelineSettings | None = None) -> PipelineSettings:
    """The settings a run uses (``quick``: 2 measured steps after 1 warm-up), or ValueError for ones it cannot."""
    s = settings or PipelineSettings()
    if s.quick:
        s = PipelineSettings(**{**asdict(s), "steps": 2, "warmup_steps": 1, "quick": True})
    if s.steps < 1 or s.prompts < 1 or s.group_size < 1 or s.judge_concurrency < 1 or s.max_new_tokens < 1:
        raise ValueError("steps, prompts, group_size, max_new_tokens and judge_concurrency must be >= 1")
    if s.warmup_steps < 0:
        raise ValueError("warmup_steps must be >= 0")
    if not 0.0 < s.trl_async_gpu_memory_utilization <= 1.0:
        raise ValueError("trl_async_gpu_memory_utilization must be in (0, 1]")
    baselines(s)
    return s


def run(settings: PipelineSettings | None = None) -> dict[str, Any]:
    """Run the ways and return the figures (see the module docstring)."""
    return asyncio.run(_run(validate(settings)))
