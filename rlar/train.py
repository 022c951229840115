"""``rlar train --config FILE``: the main job — bus, all actors, progress, metrics, curves, one command.

1. A fresh run directory ``runs/<name>-<timestamp>`` (or ``--run-dir`` to resume one).
2. The policy: ``[policy] source = "tiny"`` builds the demo's tiny Llama locally and warms it up with a
   short supervised phase on the train splits of ``sft_tasks`` (cached under ``runs/.cache`` by its
   settings, so later runs start at once); ``source = "path"`` uses any local Hugging Face checkpoint.
   The actors find it at ``{run_dir}/policy/init``.
3. The bus: ``[nats] url`` (``embedded`` starts nats-server for the run), every stream ensured.
4. The actors of ``[train] actors`` as supervised child processes (crashes restarted, see ``rlar up``).
5. A progress bar from the learner's metrics (steps, reward, samples/s, staleness); reward-curve PNGs per
   task redrawn as the run goes; at the end (``max_steps`` reached, or ``max_minutes``), ``summary.json``: the
   first-10 vs last-10 step mean reward per task, and per task the tools used with their origin (built-in,
   synthesised vN, retrieved), the routing decisions and the abstain rate (:mod:`rlar.tool_summary`), and the
   synthesis report (:mod:`rlar.synthesis.report`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import shutil
import signal
import time
from pathlib import Path
from typing import Any, Literal

import tomli_w
from nats.aio.msg import Msg
from pydantic import BaseModel, ConfigDict, Field

from actors.supervisor import Supervisor
from bus import subjects
from bus.client import Bus
from bus.config import NatsConfig
from bus.embedded import serve
from bus.messages import Event, Metrics, RouteDecision
from bus.topology import TopologyConfig, declare, ensure_topology
from rlar.config import apply_overrides, build, load_toml
from rlar.plots import first_last_summary, plot_reward_curves, read_metrics

log = logging.getLogger("rlar.train")


class PolicySection(BaseModel):
    """Where the initial policy comes from."""

    model_config = ConfigDict(extra="forbid")
    source: Literal["tiny", "path"] = "tiny"
    """``tiny``: build the demo policy locally; ``path``: a local Hugging Face checkpoint directory."""
    path: str | None = None
    """The checkpoint directory when ``source = "path"``."""
    seed: int = 0
    sft_tasks: list[str | dict[str, Any]] = Field(
        default_factory=lambda: list[str | dict[str, Any]](["arith", "copy", "reverse"])
    )
    """Tasks (names or task configs, as in ``[feeder] tasks``) whose train split warms the tiny policy up
    (supervised); their test split measures the warm-up's greedy accuracy."""
    sft_steps: int = Field(1500, ge=0)
    """Most supervised steps (stops earlier once every task reaches ``sft_target`` greedy accuracy)."""
    sft_lr: float = Field(1e-3, gt=0)
    sft_batch: int = Field(32, ge=1)
    sft_target: float | None = Field(0.3, ge=0, le=1)
    """Greedy accuracy on each task's test split at which the warm-up stops (30-50% is a good start)."""
    sft_eval_every: int = Field(50, ge=1)


class TrainSection(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = "run"
    """Run name: the run directory is runs/<name>-<timestamp>."""
    actors: dict[str, int] = Field(
        default_factory=lambda: {"sandbox": 1, "reward": 1, "learner": 1, "rollout": 1, "feeder": 1}
    )
    """Actor kinds and replica counts started for the run."""
    max_minutes: float = Field(15.0, gt=0)
    """Wall-clock budget; the run stops (gracefully) when it is spent even if max_steps is not reached."""
    plot_every: int = Field(10, ge=1)
    """Redraw the reward curves every N learner steps."""


def _cache_key(section: PolicySection) -> str:
    return hashlib.sha256(section.model_dump_json().encode()).hexdigest()[:12]


def prepare_policy(section: PolicySection, run_dir: Path, cache_root: Path) -> Path:
    """Make ``<run_dir>/policy/init`` (a directory or a link to one) and return it."""
    target = run_dir / "policy" / "init"
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        return target
    if section.source == "path":
        if not section.path or not Path(section.path).is_dir():
            raise FileNotFoundError(f"[policy] path is not a directory: {section.path!r}")
        target.symlink_to(Path(section.path).resolve())
        return target
    cached = cache_root / f"tiny-{_cache_key(section)}"
    if not (cached / "init" / "config.json").exists():
        from rlar.learn.sft import sft_warmup
        from rlar.policy.model import TinyPolicySpec, build_tiny_policy
        from rlar.tasks import TaskConfig, load_task

        base = build_tiny_policy(cached / "base", TinyPolicySpec(seed=section.seed))
        if section.sft_steps == 0:
            shutil.copytree(base, cached / "init")
            shutil.copytree(cached / "init", target)
            return target
        # Per-task pairs turn on sft_warmup's curriculum: a task that reached the target stops training.
        pairs: dict[str, list[tuple[str, str]]] = {}
        evals: dict[str, list[tuple[str, str]]] = {}
        for entry in section.sft_tasks:
            cfg = TaskConfig.model_validate({"name": entry} if isinstance(entry, str) else entry)
            for split, sink in (
                ("train", pairs.setdefault(cfg.name, [])),
                ("test", evals.setdefault(cfg.name, [])),
            ):
                for rec in load_task(cfg.model_copy(update={"split": split})).records:
                    if isinstance(rec.prompt, str) and isinstance(rec.reference, str):
                        sink.append((rec.prompt, rec.reference))
            evals[cfg.name] = evals[cfg.name][:100]
        print(
            f"warming up the tiny policy: ≤{section.sft_steps} supervised steps on {', '.join(evals)}",
            flush=True,
        )
        import torch

        torch.set_num_threads(1)  # two threads on two shared cores run 20-30x slower under load (MEASURED.md)
        tmp = cached / "init.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        sft_warmup(base, pairs, section.sft_steps, lr=section.sft_lr, batch=section.sft_batch, seed=section.seed,
                   out_dir=tmp, eval_pairs=evals, target_accuracy=section.sft_target,
                   eval_every=section.sft_eval_every)  # fmt: skip
        tmp.rename(cached / "init")
    shutil.copytree(cached / "init", target)
    return target


class Progress:
    """Follows the learner's metrics on the bus; draws the bar and the curves."""

    def __init__(self, run_dir: Path, max_steps: int | None, plot_every: int) -> None:
        from tqdm import tqdm

        self.run_dir = run_dir
        self.plot_every = plot_every
        self.bar = tqdm(total=max_steps, unit="step", dynamic_ncols=True, desc="train")
        self.finished = asyncio.Event()
        self.t0 = time.time()
        self.samples = 0
        self.last_step = 0

    async def on_metrics(self, msg: Metrics, raw: Msg) -> None:
        v = msg.values
        self.samples += int(v.get("samples", 0))
        self.bar.update(max(0, msg.step - self.last_step))
        self.last_step = msg.step
        reward = v.get("reward_mean")
        self.bar.set_postfix(
            reward="-" if reward is None else f"{reward:.3f}",
            samples_s=f"{self.samples / max(1e-6, time.time() - self.t0):.1f}",
            stale=v.get("staleness_max", 0),
            version=v.get("version"),
        )
        if msg.step % self.plot_every == 0:
            await asyncio.to_thread(plot_reward_curves, self.run_dir / "metrics.jsonl", self.run_dir)

    async def on_event(self, msg: Event, raw: Msg) -> None:
        if msg.kind == "finished":
            self.finished.set()


async def _drive(doc: dict[str, Any], run_dir: Path, url: str, config_path: Path) -> dict[str, Any]:
    train = build(TrainSection, doc.get("train", {}), where="[train]")
    nats_cfg = NatsConfig.model_validate({**doc.get("nats", {}), "url": url})
    bus = await Bus.connect(nats_cfg, name="rlar-train")
    await ensure_topology(bus.js, declare(TopologyConfig.model_validate(doc.get("topology", {}))))
    max_steps = doc.get("learner", {}).get("max_steps", 200)
    progress = Progress(run_dir, max_steps, train.plot_every)
    await bus.subscribe(subjects.metrics("learner"), Metrics, progress.on_metrics)
    await bus.subscribe(subjects.events("learner"), Event, progress.on_event)
    decisions: list[RouteDecision] = []

    async def on_decision(msg: RouteDecision, raw: Msg) -> None:
        decisions.append(msg)

    await bus.subscribe(subjects.TOOLS_DECISIONS, RouteDecision, on_decision)
    sup = Supervisor(list(train.actors.items()), nats_url=url, run_dir=run_dir, config_path=str(config_path), bus=bus,
                     extra_env={"DS_ACCELERATOR": os.environ.get("DS_ACCELERATOR", "cpu")})  # fmt: skip
    runner = asyncio.create_task(sup.run())
    loop = asyncio.get_running_loop()
    interrupted = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, interrupted.set)
    reason = "finished"
    waits = [asyncio.create_task(progress.finished.wait()), asyncio.create_task(interrupted.wait())]
    done, _ = await asyncio.wait(waits, timeout=train.max_minutes * 60, return_when=asyncio.FIRST_COMPLETED)
    if not done:
        reason = f"time budget of {train.max_minutes} min spent"
    elif interrupted.is_set():
        reason = "interrupted"
    for w in waits:
        w.cancel()
    progress.bar.close()
    print(f"stopping actors ({reason}) …", flush=True)
    sup.stop()
    await runner
    specs, statuses = await _registry_view(bus)
    await bus.close()
    plot_reward_curves(run_dir / "metrics.jsonl", run_dir)
    records = read_metrics(run_dir / "metrics.jsonl")
    from rlar.synthesis.report import read_run, summarize
    from rlar.tool_summary import tasks_summary

    synthesis = read_run(run_dir)
    summary = {
        "run_dir": str(run_dir), "reason": reason, "steps": len(records), "crashes": sup.crashes,
        "minutes": round((time.time() - progress.t0) / 60, 2), "reward_first10_last10": first_last_summary(records),
        "max_staleness_seen": max((r.get("staleness_max", 0) for r in records), default=0),
        "tasks": tasks_summary(records, decisions, specs, statuses),
        "synthesis": {**summarize(synthesis), "requests_detail": synthesis} if synthesis else None,
    }  # fmt: skip
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


async def _registry_view(bus: Bus) -> tuple[dict[tuple[str, int], Any], dict[tuple[str, int], str]]:
    """Every tool version used in the run with its status, for the summary's origins (empty when the registry
    cannot be read)."""
    from rlar.registry import ToolRegistry

    specs: dict[tuple[str, int], Any] = {}
    statuses: dict[tuple[str, int], str] = {}
    try:
        reg = ToolRegistry(bus)
        for name in await reg.names():
            for spec in await reg.versions(name):
                specs[(spec.name, spec.version)] = spec
                statuses[(spec.name, spec.version)] = (await reg.status(spec.name, spec.version))["state"]
    except Exception as exc:  # the summary is still written, without origins
        log.warning("summary: could not read the tool registry: %s", exc)
    return specs, statuses


def train(config: str, *, overrides: list[str], run_dir: str | None) -> int:
    doc = load_toml(config)
    apply_overrides(doc, overrides)
    section = build(TrainSection, doc.get("train", {}), where="[train]")
    rdir = Path(run_dir) if run_dir else Path("runs") / f"{section.name}-{time.strftime('%Y%m%d-%H%M%S')}"
    rdir.mkdir(parents=True, exist_ok=True)
    doc.setdefault("run", {})["dir"] = str(rdir)
    policy = build(PolicySection, doc.get("policy", {}), where="[policy]")
    init = prepare_policy(policy, rdir, Path("runs") / ".cache")
    print(f"run directory: {rdir}   policy: {init}", flush=True)
    url = doc.get("nats", {}).get("url", "embedded")
    with serve(url, rdir, live_run=True) as real_url:
        doc.setdefault("nats", {})["url"] = real_url
        config_path = rdir / "config.toml"
        config_path.write_text(tomli_w.dumps(doc))
        summary = asyncio.run(_drive(doc, rdir, real_url, config_path))
    print(json.dumps(summary), flush=True)
    return 0
