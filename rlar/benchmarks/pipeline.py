"""``rlar bench pipeline``: the same GRPO work run synchronously and asynchronously, side by side, in one run.

Both ways use the same policy (a small byte-level Llama built locally), the same prompts (the ``arith``
mix with the same seed), the same batch (``prompts`` × ``group_size`` samples of ≤ ``max_new_tokens``
tokens at temperature 1), the same reward tool and the same DeepSpeed GRPO trainer settings; every sample
is trained on (``skip_zero_advantage = false``), so the learner's work does not depend on the rewards.

The reward tool is the built-in ``llm_judge`` pointed at a local Messages-API endpoint with a fixed latency
(:class:`ScoringJudge`: it grades by string similarity between the response and the reference, so rewards
vary and advantages are not all zero). Its latency is calibrated on the last warm-up step of the sync way so
that scoring one batch with the tool's ``max_concurrency`` calls in flight takes as long as the slower of
generation and training (on a CPU, training; generation is the same order): the reward is a full pipeline
stage, the case where overlapping stages pays off — and where the sync loop pays for it in full.

1. **sync** (as TRL's ``GRPOTrainer``): in this process, per step: generate (transformers engine) → score
   (``ToolExecutor``, the same judge) → GRPO step (``DeepSpeedPolicyTrainer``) → export the weights and load
   them into the engine. Each stage's time is recorded; nothing overlaps.
2. **async** (this project): the real actors — feeder (``reward_mode = "static:llm_judge"``), rollout,
   reward worker (``judge`` kind) and learner — as supervised child processes on an embedded nats-server,
   weights synced through the filesystem, ``max_staleness = 2``.

Measured per way, after ``warmup_steps`` learner steps (start-up and first-call costs left out):
samples/s = samples trained / wall time of the measured steps; learner-idle fraction = 1 − (time in learner
updates, weight export included) / wall time. The limit is the slowest stage's standalone throughput, taken
from the sync run where each stage runs alone: min(gen, reward, train samples/s). Reported ratios:
``async_over_sync`` and ``async_over_limit``.

Not covered: vLLM (see bench/gpu.sh), several rollout or learner replicas, the object-store weight path.
On a shared 2-core machine the async way's generation and training compete for the same two cores, so its
ratio to the limit is below what separate devices give.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import logging
import os
import re
import shutil
import statistics
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["PipelineSettings", "ScoringJudge", "run"]

log = logging.getLogger("rlar.bench.pipeline")


@dataclass(frozen=True, slots=True)
class PipelineSettings:
    steps: int = 6
    """Measured learner steps per way."""
    warmup_steps: int = 2
    prompts: int = 8
    group_size: int = 8
    max_new_tokens: int = 32
    hidden_size: int = 256
    layers: int = 4
    judge_concurrency: int = 4
    """Judge calls in flight (the tool's ``max_concurrency``; the same both ways)."""
    judge_delay_s: float | None = None
    """Fixed judge latency; None: calibrated so the reward stage takes as long as generation."""
    async_timeout_s: float = 200.0
    quick: bool = False
    """Fewer steps (for tests): 3 measured after 1 warm-up."""
    seed: int = 0
    model_dir: str | None = None
    """A local HF checkpoint to use instead of the locally built tiny Llama (e.g. a 0.5B model on a GPU)."""
    engine: str = "transformers"
    """Generation engine both ways: ``transformers`` or ``vllm``."""
    device: str = "cpu"
    """``cpu`` or ``cuda``: generation and training device (both ways)."""


# --------------------------------------------------------------------------------------------- judge
_SECTION = re.compile(r"# (Reference answer|Response to evaluate)\n(.*?)(?=\n\n# |\n\nEnd with|\Z)", re.S)


class ScoringJudge(ThreadingHTTPServer):
    """A Messages-API endpoint on 127.0.0.1 that sleeps ``delay_s`` then answers ``Score: N`` (0-10), N the
    string similarity (difflib ratio) of the response to the reference in the judge prompt. It stands in
    for a remote judge's latency; it is not a judge of quality."""

    daemon_threads = True

    def __init__(self, delay_s: float) -> None:
        super().__init__(("127.0.0.1", 0), _JudgeHandler)
        self.delay_s = delay_s
        self.calls = 0
        self.lock = threading.Lock()
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def close(self) -> None:
        self.shutdown()
        self.server_close()


class _JudgeHandler(BaseHTTPRequestHandler):
    server: ScoringJudge
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        from rlar.testing.anthropic_server import message_json

        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        text = "".join(str(m.get("content", "")) for m in body.get("messages", []) if isinstance(m, dict))
        parts = dict(_SECTION.findall(text))
        ratio = difflib.SequenceMatcher(None, parts.get("Response to evaluate", "").strip(),
                                        parts.get("Reference answer", "").strip()).ratio()  # fmt: skip
        time.sleep(self.server.delay_s)
        with self.server.lock:
            self.server.calls += 1
        data = json.dumps(message_json(f"Score: {10 * ratio:.2f}", str(body.get("model", "m")))).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


# --------------------------------------------------------------------------------------------- shared
def _engine_cfg(model: str, s: PipelineSettings) -> dict[str, Any]:
    cfg: dict[str, Any] = {"kind": s.engine, "model": model, "max_model_len": 512, "device": s.device}
    if s.engine == "transformers":
        cfg["num_threads"] = 1
    elif s.device.startswith("cuda"):
        cfg.update(dtype="bfloat16", gpu_memory_utilization=0.3)
    return cfg


def _trainer_cfg(model_dir: Path, s: PipelineSettings) -> dict[str, Any]:
    return {
        "model_dir": str(model_dir), "lr": 1e-4, "zero_stage": 1, "micro_batch_size": s.prompts * s.group_size,
        "torch_threads": 1, "seed": s.seed,
        "grpo": {"group_size": s.group_size, "max_staleness": 2, "kl_coef": 0.0, "loss_agg": "token-mean"},
    }  # fmt: skip


def _prompts(s: PipelineSettings, n: int) -> list[Any]:
    from rlar.tasks import TaskConfig, build_mix

    mix = build_mix([TaskConfig(name="arith")], seed=s.seed)
    return [next(mix).record for _ in range(n)]


def _judge_spec() -> Any:
    from rlar.tools import builtin_specs

    return next(sp for sp in builtin_specs() if sp.name == "llm_judge")


# --------------------------------------------------------------------------------------------- sync
async def _sync(model_dir: Path, s: PipelineSettings, judge: ScoringJudge, calibrate: bool) -> dict[str, Any]:
    import torch
    from pydantic import TypeAdapter

    from rlar.learn.grpo import group_advantages
    from rlar.learn.trainer import DeepSpeedPolicyTrainer, PolicyBatch, TrainerConfig
    from rlar.policy.engines import EngineConfig, make_engine
    from rlar.tools import ToolExecutor, ToolInput

    torch.set_num_threads(1)
    engine = make_engine(TypeAdapter(EngineConfig).validate_python(_engine_cfg(str(model_dir), s)))
    trainer = DeepSpeedPolicyTrainer(TrainerConfig.model_validate(_trainer_cfg(model_dir, s)))
    spec = _judge_spec()
    total = s.warmup_steps + s.steps
    records = _prompts(s, total * s.prompts)
    times: dict[str, list[float]] = {"gen": [], "reward": [], "train": [], "sync": [], "step": []}
    samples = 0
    async with ToolExecutor(workers=1) as ex:
        for step in range(total):
            batch = records[step * s.prompts : (step + 1) * s.prompts]
            t0 = time.perf_counter()
            ids = [engine.render_prompt(r.prompt) for r in batch]
            outs = engine.generate(ids, n=s.group_size, max_new_tokens=s.max_new_tokens, temperature=1.0)
            t1 = time.perf_counter()
            inputs = [ToolInput(query=str(r.prompt), response=c.text, reference=r.reference)
                      for r, group in zip(batch, outs, strict=True) for c in group]  # fmt: skip
            results = await ex.score_batch(spec, inputs)
            t2 = time.perf_counter()
            scores = torch.tensor([float(r.score or 0.0) for r in results]).view(s.prompts, s.group_size)
            mask = torch.tensor([r.ok for r in results]).view(s.prompts, s.group_size)
            adv = torch.cat([group_advantages(scores[i], mask[i]) for i in range(s.prompts)]).tolist()
            rows = [(p, c) for p, group in zip(ids, outs, strict=True) for c in group]
            pb = PolicyBatch.from_samples([p for p, _ in rows], [c.token_ids for _, c in rows],
                                          [c.logprobs for _, c in rows], adv, None, pad_id=0)  # fmt: skip
            trainer.step(pb)
            tensors = list(trainer.export_named_tensors())
            t3 = time.perf_counter()
            engine.load_weights(tensors, step + 1)
            t4 = time.perf_counter()
            if calibrate and step == max(0, s.warmup_steps - 1):
                # From the last warm-up step (not measured): the judge's latency is set so that scoring a batch
                # with max_concurrency calls in flight takes as long as the slower of generation and training.
                n = s.prompts * s.group_size
                judge.delay_s = max(0.005, max(t1 - t0, t3 - t2) * s.judge_concurrency / n)
            if step >= s.warmup_steps:
                for k, v in (("gen", t1 - t0), ("reward", t2 - t1), ("train", t3 - t2), ("sync", t4 - t3),
                             ("step", t4 - t0)):  # fmt: skip
                    times[k].append(v)
                samples += len(rows)
    engine.close()
    wall = sum(times["step"])
    n = s.prompts * s.group_size
    stage = {k: n / statistics.median(times[k]) for k in ("gen", "reward", "train")}
    return {
        "samples_per_s": samples / wall, "learner_idle_frac": 1 - sum(times["train"]) / wall,
        "stage_samples_per_s": {k: round(v, 2) for k, v in stage.items()},
        "stage_median_s": {k: round(statistics.median(v), 4) for k, v in times.items()},
        "steps": len(times["step"]), "samples": samples, "wall_s": wall,
    }  # fmt: skip


# --------------------------------------------------------------------------------------------- async
def _async_doc(s: PipelineSettings, run_dir: Path) -> dict[str, Any]:
    return {
        "run": {"dir": str(run_dir)},
        "feeder": {"seed": s.seed, "routing": "static", "reward_mode": "static:llm_judge",
                   "tasks": [{"name": "arith", "weight": 1.0}]},
        "rollout": {"group_size": s.group_size, "batch_prompts": s.prompts, "max_new_tokens": s.max_new_tokens,
                    "temperature": 1.0, "engine": _engine_cfg("{run_dir}/policy/init", s)},
        "reward": {"kinds": ["judge"]},
        "learner": {"prompts_per_step": s.prompts, "max_steps": s.warmup_steps + s.steps,
                    "checkpoint_every": 10_000, "weight_sync": "filesystem", "skip_zero_advantage": False,
                    "trainer": _trainer_cfg(run_dir / "policy" / "init", s)},
    }  # fmt: skip


async def _async(model_dir: Path, s: PipelineSettings, work: Path, judge_url: str) -> dict[str, Any]:
    import tomli_w

    from actors.supervisor import Supervisor
    from bus import subjects
    from bus.client import Bus
    from bus.config import NatsConfig
    from bus.embedded import serve
    from bus.messages import Event
    from bus.topology import TopologyConfig, declare, ensure_topology

    run_dir = work / "async"
    (run_dir / "policy").mkdir(parents=True)
    (run_dir / "policy" / "init").symlink_to(model_dir.absolute(), target_is_directory=True)
    doc = _async_doc(s, run_dir)
    with serve("embedded", run_dir) as url:
        doc["nats"] = {"url": url}
        cfg = run_dir / "config.toml"
        cfg.write_text(tomli_w.dumps(doc))
        bus = await Bus.connect(NatsConfig(url=url), name="bench-pipeline")
        await ensure_topology(bus.js, declare(TopologyConfig()))
        finished = asyncio.Event()

        async def on_event(msg: Event, raw: Any) -> None:
            if msg.kind == "finished":
                finished.set()

        await bus.subscribe(subjects.events("learner"), Event, on_event)
        env = {"DS_ACCELERATOR": os.environ.get("DS_ACCELERATOR", "cpu"), "ANTHROPIC_BASE_URL": judge_url,
               "ANTHROPIC_API_KEY": "", "TOKENIZERS_PARALLELISM": "false"}  # fmt: skip
        actors = [("feeder", 1), ("rollout", 1), ("reward", 1), ("learner", 1)]
        sup = Supervisor(actors, nats_url=url, run_dir=run_dir, config_path=str(cfg), bus=bus, extra_env=env)
        runner = asyncio.create_task(sup.run())
        t0 = time.time()
        try:
            await asyncio.wait_for(finished.wait(), s.async_timeout_s)
        except TimeoutError:
            pass
        startup_to_end = time.time() - t0
        sup.stop()
        await runner
        await bus.close()
    from rlar.plots import read_metrics

    records = read_metrics(run_dir / "metrics.jsonl")
    measured = records[s.warmup_steps :]
    if len(records) <= s.warmup_steps or not measured:
        raise RuntimeError(f"async pipeline made only {len(records)} learner steps in {s.async_timeout_s}s; "
                           f"logs under {run_dir / 'logs'}")  # fmt: skip
    start = records[s.warmup_steps - 1]["t_end"] if s.warmup_steps else records[0]["t_start"]
    wall = measured[-1]["t_end"] - start
    busy = sum(r["step_s"] for r in measured)
    samples = sum(int(r["samples"]) for r in measured)
    return {
        "samples_per_s": samples / wall, "learner_idle_frac": max(0.0, 1 - busy / wall),
        "steps": len(measured), "samples": samples, "wall_s": wall, "crashes": sup.crashes,
        "complete": len(records) >= s.warmup_steps + s.steps, "seconds_incl_startup": round(startup_to_end, 1),
        "staleness_max": max((r.get("staleness_max", 0) for r in measured), default=0),
        "learner_stage_samples_per_s": round(samples / busy, 2) if busy else None,
        "learner_step_s_median": round(statistics.median(r["step_s"] for r in measured), 4),
        # the DeepSpeed update alone (the learner's record keeps tokens and tokens/s of the update)
        "learner_update_s_median": round(statistics.median(
            r["tokens"] / r["tokens_per_s"] for r in measured if r.get("tokens_per_s")), 4)
        if any(r.get("tokens_per_s") for r in measured) else None,
    }  # fmt: skip


# --------------------------------------------------------------------------------------------- run
async def _run(s: PipelineSettings) -> dict[str, Any]:
    from rlar.policy.model import TinyPolicySpec, build_tiny_policy

    t0 = time.time()
    for name in ("httpx", "httpx2"):  # one line per judge call otherwise
        logging.getLogger(name).setLevel(logging.WARNING)
    work = Path(tempfile.mkdtemp(prefix="rlar-bench-pipeline-"))
    cleanup = True
    try:
        model_dir = Path(s.model_dir) if s.model_dir else build_tiny_policy(work / "policy", TinyPolicySpec(
            hidden_size=s.hidden_size, intermediate_size=int(s.hidden_size * 2.75), num_hidden_layers=s.layers,
            num_attention_heads=max(1, s.hidden_size // 32), seed=s.seed))  # fmt: skip
        judge = ScoringJudge(s.judge_delay_s or 0.0)
        old = {k: os.environ.get(k) for k in ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY")}
        os.environ["ANTHROPIC_BASE_URL"], os.environ["ANTHROPIC_API_KEY"] = judge.url, ""
        try:
            log.info("pipeline bench: sync way (%d + %d steps)", s.warmup_steps, s.steps)
            sync = await _sync(model_dir, s, judge, calibrate=s.judge_delay_s is None)
            judge_calls_sync = judge.calls
            log.info("pipeline bench: sync %s", json.dumps(sync))
            log.info("pipeline bench: async way (judge latency %.3fs)", judge.delay_s)
            asyn = await _async(model_dir, s, work, judge.url)
        except Exception:
            cleanup = False
            raise
        finally:
            judge.close()
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    finally:
        if cleanup:  # on failure the run directory (actor logs) stays for inspection
            shutil.rmtree(work, ignore_errors=True)
    limit = min(sync["stage_samples_per_s"].values())
    return {
        "bench": "pipeline", "settings": asdict(s),
        "judge_delay_s": round(judge.delay_s, 4), "judge_calls_sync": judge_calls_sync,
        "sync_samples_per_s": round(sync["samples_per_s"], 2), "async_samples_per_s": round(asyn["samples_per_s"], 2),
        "sync_learner_idle_frac": round(sync["learner_idle_frac"], 3),
        "async_learner_idle_frac": round(asyn["learner_idle_frac"], 3),
        "limit_samples_per_s": round(limit, 2),
        "limit_stage": min(sync["stage_samples_per_s"], key=lambda k: sync["stage_samples_per_s"][k]),
        "async_over_sync": round(asyn["samples_per_s"] / sync["samples_per_s"], 3),
        "async_over_limit": round(asyn["samples_per_s"] / limit, 3),
        "sync": {k: v for k, v in sync.items() if k not in ("samples_per_s", "learner_idle_frac")},
        "async": {k: v for k, v in asyn.items() if k not in ("samples_per_s", "learner_idle_frac")},
        "cores": os.cpu_count(), "seconds": round(time.time() - t0, 1),
    }  # fmt: skip


def run(settings: PipelineSettings | None = None) -> dict[str, Any]:
    """Run both ways and return the figures (see the module docstring)."""
    s = settings or PipelineSettings()
    if s.quick:
        s = PipelineSettings(**{**asdict(s), "steps": 3, "warmup_steps": 1, "quick": True})
    return asyncio.run(_run(s))
