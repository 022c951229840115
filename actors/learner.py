"""The learner: DeepSpeed GRPO on complete scored groups, with a bounded off-policy lag.

It consumes two durables — ``learner-samples`` (``SampleGroup``: a prompt generation's samples with token
ids, behaviour log-probs, policy version) and ``learner-rewards`` (``RewardGroup``: one tool's results for
them) — joining messages split by sample index, and holds them unacked (kept alive with ``in_progress``)
until the group is used, so a crashed learner's successor gets them redelivered. Groups are keyed by
(prompt, generation): a prompt regenerated after a rollout crash never mixes one attempt's samples with
another's rewards; one complete generation is trained on and the others' messages are acked with it.
Retiring groups (trained on, or dropped as stale) first appends one line to the run's journal
``<run dir>/groups.jsonl`` (step, policy version, outcome ``trained``/``dropped``, the prompt ids, the
counters), then writes the counters and the retired prompt ids to the ``learner`` key of the state
bucket, then acks with server confirmation (:meth:`Bus.ack`): a successor that gets a retired group's
messages redelivered (its predecessor died in between, or an ack was lost in a failover) recognises them
— from the whole journal (a lost ack is redelivered only after its ack-wait, many steps later) and the state
key — and acks them instead of training on them again. The
journal is the learner's record of which prompts every step used.

A group is complete when all G samples are in and every sample has a result from every tool of its
route. Each learner step takes ``prompts_per_step`` complete groups in arrival order:
1. groups whose policy version lags more than ``max_staleness`` versions are dropped (acked, counted);
2. per sample, tool results are combined (:func:`rlar.tools.combine.combine`); ``abstain`` masks it;
3. group-relative advantages (mean/std over unmasked members); all-equal groups carry no signal;
4. one DeepSpeed update with the decoupled-PPO / truncated-IS objective (:mod:`rlar.learn.grpo`);
5. the new weights are stored and announced (:mod:`rlar.wire.weight_sync`), metrics are appended to
   ``<run dir>/metrics.jsonl`` and published, progress goes to the feeder, messages are acked;
6. every ``checkpoint_every`` steps a DeepSpeed checkpoint (optimizer included) is written, and on a
   graceful stop (SIGTERM) when steps were taken since the last one; a restarted learner resumes from the
   newest one and announces its weights under a fresh version.

Multi-rank (``torchrun``/``deepspeed`` launchers): rank 0 talks to the bus and broadcasts each command
(step, checkpoint, export, stop) to the other ranks, which only run the collective trainer calls.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import os
import time
from pathlib import Path
from typing import Any, Literal

from nats.aio.msg import Msg
from nats.js.errors import KeyNotFoundError
from pydantic import Field

from actors.runtime import Actor, ActorConfig
from bus import subjects, topology
from bus.client import Bus, mark_in_progress
from bus.messages import (
    Event,
    LearnerProgress,
    Metrics,
    RewardGroup,
    SampleGroup,
)
from rlar.learn.config import TrainerConfig
from rlar.learn.memory import estimate_line
from rlar.learn.step import plan_step
from rlar.malloc import kept as malloc_kept
from rlar.policy.broadcast import BroadcastConfig, WeightSender
from rlar.policy.httpweights import HttpWeightsConfig, WeightServer
from rlar.policy.weights import write_weights_dir
from rlar.wire.groups import JOURNAL, Group, ToolResults, read_journal
from rlar.wire.weight_sync import SyncMode, latest_announcement, publish_weights

# torch is imported where used: heavy and optional (the CLI starts without it).
# rlar.learn.trainer is imported where used: it imports torch at its top.

log = logging.getLogger(__name__)

STATE_KEY = "learner"
"""Key of the learner's counters and recently retired prompt ids in the state bucket."""
DONE_LIMIT = 200_000
"""Retired prompt ids the learner remembers (its own and, at a restart, the journal's) to ack a redelivered
group instead of training on it again."""


class LearnerConfig(ActorConfig):
    trainer: TrainerConfig
    """DeepSpeed trainer and GRPO objective; ``{run_dir}`` in ``model_dir`` is the run directory."""
    prompts_per_step: int = Field(8, ge=1)
    """Complete groups consumed per learner step."""
    max_steps: int | None = Field(200, ge=1)
    """Stop training (announce ``finished``) after this many learner steps; None: run forever."""
    checkpoint_every: int = Field(25, ge=1)
    keep_checkpoints: int = Field(2, ge=1)
    weight_sync: SyncMode = "filesystem"
    """``filesystem`` (shared path, one machine), ``objstore`` (NATS object store, across machines),
    ``broadcast`` (torch.distributed to the rollouts in ``broadcast``) or ``http`` (this learner serves the
    last versions, rollouts pull them; settings in ``http``). See :mod:`rlar.wire.weight_sync`."""
    broadcast: BroadcastConfig = Field(default_factory=BroadcastConfig)
    """The weight group of ``weight_sync = "broadcast"`` (rollouts join it with the same settings)."""
    http: HttpWeightsConfig = Field(default_factory=HttpWeightsConfig)
    """The weight server of ``weight_sync = "http"`` (rollouts need no setting: the announcement has the uri)."""
    weights_dtype: Literal["float32", "bfloat16"] = "float32"
    """Dtype of the weights published to the rollouts every step. ``bfloat16`` halves what every step writes and
    moves (a 135M-parameter model: 270 MB instead of 538 MB); the rollout's model keeps its own dtype (the tensors
    are cast as they load), so it samples from the bf16-rounded policy — the behaviour log-probs it reports are
    that policy's, and the learner's importance weights correct for the difference. Training precision and
    checkpoints are unchanged. LoRA adapters are published in this dtype too."""
    skip_zero_advantage: bool = True
    """Leave samples with zero advantage out of the update (they carry no gradient, only cost)."""
    keepalive_s: float = Field(15.0, gt=0)
    """How often held (unacked) messages are marked in progress; below the learner ack-wait."""
    remember_steps: int = Field(8, ge=1)
    """Retired prompt ids of this many recent retirements are kept in the state bucket for a successor."""
    orphan_s: float = Field(600.0, gt=0)
    """Rewards whose samples never arrive (e.g. from ``rlar reward score`` on a live bus) are acked and
    forgotten after this long."""


def _rank() -> int:
    return int(os.environ.get("RANK", "0"))


class Learner(Actor[LearnerConfig]):
    kind = "learner"
    Config = LearnerConfig

    def __init__(self, config: LearnerConfig) -> None:
        super().__init__(config)
        self.trainer: Any = None
        self.sender: WeightSender | None = None
        self.server: WeightServer | None = None
        self.version = 0
        self.step = 0
        self.training_steps = 0
        """Steps that were not all-abstained: what ``max_steps`` and ``checkpoint_every`` count."""
        self.abstained_rounds = 0
        self.consumed = 0
        self.dropped = 0
        self.groups: dict[tuple[str, str], Group] = {}
        self.ready: collections.OrderedDict[tuple[str, str], None] = collections.OrderedDict()
        self.done: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._wake = asyncio.Event()
        self._prev_interval: tuple[float, float] | None = None
        self._finished_sent = False
        self._checkpointed = 0
        self._stale: list[Group] = []
        self._recent: collections.deque[list[str]] = collections.deque(maxlen=config.remember_steps)

    def info(self) -> dict[str, Any]:
        return {
            "policy_version": self.version,
            "step": self.step,
            "pending_groups": len(self.groups),
            "malloc_kept": malloc_kept(),
        }

    # -- set-up and resume ------------------------------------------------------------------------
    @property
    def ckpt_dir(self) -> Path:
        return self.run_dir / "checkpoints"

    @property
    def journal_path(self) -> Path:
        return self.run_dir / JOURNAL

    def _trainer_config(self) -> TrainerConfig:
        model_dir = str(self.config.trainer.model_dir).replace("{run_dir}", self.config.run_dir)
        return self.config.trainer.model_copy(update={"model_dir": Path(model_dir)})

    def _total_updates(self) -> int | None:
        """Optimizer updates in the run (the default end of a linear/cosine schedule)."""
        steps = self.config.max_steps
        return None if steps is None else steps * self.config.trainer.minibatches_per_step

    def _memory_line(self) -> str:

        return estimate_line(self._trainer_config(), world_size=int(os.environ.get("WORLD_SIZE", "1")))

    async def setup(self) -> None:
        from rlar.learn.trainer import DeepSpeedPolicyTrainer

        log.info("learner: %s", await asyncio.to_thread(self._memory_line))
        self.trainer = await self.on_compute_thread(
            DeepSpeedPolicyTrainer, self._trainer_config(), total_updates=self._total_updates()
        )
        extra = await self.on_compute_thread(self._collective, "load", str(self.ckpt_dir))
        if extra:
            self.step, self.version = int(extra["step"]), int(extra["version"])
            self.training_steps = int(extra.get("training_steps", self.step))
            self.abstained_rounds = int(extra.get("abstained_rounds", 0))
            self._checkpointed = self.step
            self.consumed, self.dropped = int(extra["consumed"]), int(extra["dropped"])
        kv = await self.bus.js.key_value(topology.STATE_BUCKET)
        try:
            saved = json.loads((await kv.get(STATE_KEY)).value or b"{}")
        except KeyNotFoundError:
            saved = {}
        # The journal's tail wins over the state key: a predecessor may have died between the two writes.
        journal = read_journal(self.journal_path)
        tail = journal[-self.config.remember_steps :]
        # Every prompt the run retired is done, not only the recent ones: a group whose ack the bus lost (a
        # nats-server killed before it stored the ack) is redelivered after its ack-wait, many steps later.
        for entry in journal:
            self.done.update(dict.fromkeys(entry["prompt_ids"]))
        while len(self.done) > DONE_LIMIT:
            self.done.popitem(last=False)
        recent = [list(e["prompt_ids"]) for e in tail] if tail else saved.get("recent", [])
        for counts in (saved, tail[-1] if tail else {}):
            self.consumed = max(self.consumed, int(counts.get("consumed", 0)))
            self.dropped = max(self.dropped, int(counts.get("dropped", 0)))
        for ids in recent:
            self._recent.append(list(ids))
            self.done.update((pid, None) for pid in ids)
        last = await latest_announcement(self.bus)
        if extra or (last is not None and last.version >= self.version):
            # Announce the restored weights under a version newer than anything rollouts may serve.
            self.version = max(self.version, last.version if last else 0) + 1
            await self._publish_weights()
        if extra or last is not None or saved or tail:
            # A successor (also one that found no checkpoint yet and starts over from the initial policy): the
            # operator's progress bar and step counters move back to where it resumed.
            where = (
                f"the checkpoint of step {self.step}" if extra else "the initial policy (no checkpoint yet)"
            )
            log.info("learner: resumed at step %d as policy v%d", self.step, self.version)
            await self.bus.publish(
                subjects.events("learner"),
                Event(
                    actor=f"learner/{self.instance}",
                    kind="resumed",
                    data={"step": self.step, "version": self.version},
                    message=f"resumed from {where} as policy v{self.version}",
                ),
            )
        self.bus.consume(
            topology.SAMPLES,
            topology.LEARNER_SAMPLES,
            SampleGroup,
            self._on_samples,
            auto_ack=False,
            batch=256,
        )
        self.bus.consume(
            topology.REWARDS,
            topology.LEARNER_REWARDS,
            RewardGroup,
            self._on_rewards,
            auto_ack=False,
            batch=256,
        )
        await self._publish_progress()

    # -- intake -----------------------------------------------------------------------------------
    def _group(self, prompt_id: str, generation: str) -> Group:
        g = self.groups.get((prompt_id, generation))
        if g is None:
            g = self.groups[(prompt_id, generation)] = Group(prompt_id, generation)
        return g

    async def _on_samples(self, m: SampleGroup, raw: Msg) -> None:
        if m.prompt_id in self.done:
            await raw.ack()
            return
        g = self._group(m.prompt_id, m.generation)
        new = [c for c in m.completions if c.index not in g.completions]
        if not new:  # a redelivery of what we hold
            await raw.ack()
            return
        if not g.group_size:
            g.task, g.group_size, g.policy_version = m.task, m.group_size, m.policy_version
            g.prompt_token_ids, g.tools, g.created_at = m.prompt_token_ids, m.tools, m.created_at
            g.sampling = m.sampling
        g.completions.update((c.index, c) for c in new)
        g.msgs.append(raw)
        self._check_complete(g)

    async def _on_rewards(self, m: RewardGroup, raw: Msg) -> None:
        if m.prompt_id in self.done:
            await raw.ack()
            return
        g = self._group(m.prompt_id, m.generation)
        got = g.rewards.setdefault(m.tool, ToolResults(m.weight, m.tool_version)).items
        new = [it for it in m.items if it.index not in got]
        if not new:
            await raw.ack()
            return
        got.update((it.index, it) for it in new)
        g.msgs.append(raw)
        self._check_complete(g)

    def _check_complete(self, g: Group) -> None:
        # One generation per prompt is trained on; the others are acked when that prompt is retired.
        if g.key in self.ready or not g.complete():
            return
        if any(k[0] == g.prompt_id for k in self.ready):
            return
        self.ready[g.key] = None
        self._wake.set()

    # -- the loop ---------------------------------------------------------------------------------
    async def main(self) -> None:
        keepalive = asyncio.create_task(self._keepalive())
        try:
            while not self.stopping.is_set():
                if self.config.max_steps is not None and self.training_steps >= self.config.max_steps:
                    await self._finish()
                    await self.stopping.wait()
                    break
                batch = self._take_batch()
                if self._stale:
                    stale, self._stale = self._stale, []
                    await self._retire(stale, dropped=True)
                    # The feeder paces on retired prompts: dropped ones free room as trained ones do (without
                    # this, drops that fill its bound while too few fresh groups remain stall the run).
                    await self._publish_progress()
                if batch is None:
                    self._wake.clear()
                    try:
                        await asyncio.wait_for(self._wake.wait(), 1.0)
                    except TimeoutError:
                        pass
                    continue
                await self._learn(batch)
            # A graceful stop keeps the final weights (what rlar eval reads; small) first, then the updates since the
            # last checkpoint (optimizer state included).
            await self._keep_final_weights()
            if self.step > self._checkpointed:
                await self._checkpoint()
        finally:
            keepalive.cancel()
            if self.trainer is not None and int(os.environ.get("WORLD_SIZE", "1")) > 1:
                await self.on_compute_thread(self._collective, "stop", None)

    def _take_batch(self) -> list[Group] | None:
        """Pop ``prompts_per_step`` complete groups within the staleness bound; drop the stale ones."""
        max_stale = self.config.trainer.grpo.max_staleness
        fresh = []
        for key in list(self.ready):
            g = self.groups[key]
            if self.version - g.policy_version > max_stale:
                self.ready.pop(key)
                self._stale.append(g)
                continue
            fresh.append(key)
            if len(fresh) == self.config.prompts_per_step:
                break
        if len(fresh) < self.config.prompts_per_step:
            return None
        for key in fresh:
            self.ready.pop(key)
        return [self.groups[key] for key in fresh]

    async def _retire(self, groups: list[Group], *, dropped: bool) -> None:
        """Count the groups, save that (with their prompt ids) for a successor, then ack their messages and
        those of any other generation of the same prompts."""
        prompts = {g.prompt_id for g in groups}
        msgs: list[Msg] = []
        for key in [k for k in self.groups if k[0] in prompts]:
            msgs += self.groups.pop(key).msgs
            self.ready.pop(key, None)
        self.done.update(dict.fromkeys(prompts))
        while len(self.done) > DONE_LIMIT:
            self.done.popitem(last=False)
        if dropped:
            self.dropped += len(groups)
            self.counters["dropped_groups"] += len(groups)
            self.metrics.dropped(len(groups))
        else:
            self.consumed += len(groups)
        ids = [g.prompt_id for g in groups]
        self._recent.append(ids)
        entry = {
            "t": time.time(),
            "step": self.step,
            "version": self.version,
            "outcome": "dropped" if dropped else "trained",
            "prompt_ids": ids,
            "consumed": self.consumed,
            "dropped": self.dropped,
        }
        with open(self.journal_path, "a") as f:
            f.write(json.dumps(entry) + "\n")
        state = {"consumed": self.consumed, "dropped": self.dropped, "recent": list(self._recent)}
        await self.bus.kv_put(topology.STATE_BUCKET, STATE_KEY, json.dumps(state).encode())
        await asyncio.gather(*(self.bus.ack(m) for m in msgs))

    async def _learn(self, groups: list[Group]) -> None:
        t_start = time.time()
        plan = plan_step(
            groups,
            version=self.version,
            grpo=self.config.trainer.grpo,
            skip_zero_advantage=self.config.skip_zero_advantage,
            world_size=int(os.environ.get("WORLD_SIZE", "1")),
            prev_interval=self._prev_interval,
        )
        for g in plan.unusable:
            self.counters["groups_with_raw_logprobs"] += 1
            log.error(
                "learner: group %s was sampled with %s but carries raw log-probs: not trained on",
                g.prompt_id,
                g.sampling,
            )
        train_metrics: dict[str, float] = {}
        batch = plan.batch()
        if batch is not None:
            train_metrics = await self.on_compute_thread(self._collective, "step", batch)
            self.version += 1
            t_weights = time.time()
            await self._publish_weights()
            train_metrics["weights_s"] = time.time() - t_weights  # export, store, announce
        # A step whose every sample abstained (no tool could vouch for any reward) trains nothing: it is recorded
        # and counted apart, never towards max_steps, so such rounds cannot spend a run's budget of steps.
        all_abstained = plan.abstained == plan.samples
        self.step += 1
        if all_abstained:
            self.abstained_rounds += 1
            await self._say_all_abstained(groups)
        else:
            self.training_steps += 1
        t_retire = time.time()
        await self._retire(groups, dropped=False)
        t_end = time.time()
        train_metrics["retire_s"] = t_end - t_retire
        self._prev_interval = (t_start, t_end)
        record = plan.record(
            step=self.step,
            version=self.version,
            t_start=t_start,
            t_end=t_end,
            consumed=self.consumed,
            dropped=self.dropped,
            train=train_metrics,
        ).to_dict()
        record.update(
            training_steps=self.training_steps,
            all_abstained=all_abstained,
            abstained_rounds=self.abstained_rounds,
        )
        with open(self.run_dir / "metrics.jsonl", "a") as f:
            f.write(json.dumps(record) + "\n")
        await self.bus.publish(
            subjects.metrics("learner"), Metrics(actor="learner", step=self.step, values=record)
        )
        self.counters["steps"] += 1
        self.metrics.learner_step(record)
        await self._publish_progress()
        if not all_abstained and (
            self.training_steps % self.config.checkpoint_every == 0
            or (self.config.max_steps is not None and self.training_steps >= self.config.max_steps)
        ):
            await self._checkpoint()

    async def _say_all_abstained(self, groups: list[Group]) -> None:
        tasks = sorted({g.task for g in groups})
        message = (
            f"every sample of {len(groups)} groups ({', '.join(tasks)}) abstained: no reward could be vouched "
            f"for, nothing trained, not counted as a training step ({self.abstained_rounds} such rounds so far)"
        )
        log.warning("learner: %s", message)
        await self.bus.publish(
            subjects.events("learner"),
            Event(
                actor=f"learner/{self.instance}",
                kind="all_abstained",
                message=message,
                data={"step": self.step, "tasks": tasks, "abstained_rounds": self.abstained_rounds},
            ),
        )

    # -- outputs ----------------------------------------------------------------------------------
    async def _publish_weights(self) -> None:
        tensors = await self.on_compute_thread(self._collective, "export", self.config.weights_dtype)
        if self.config.weight_sync == "broadcast" and self.sender is None:
            self.sender = WeightSender(self.config.broadcast)
        if self.config.weight_sync == "http" and self.server is None:
            self.server = WeightServer(self.config.http)
        adapter = await self.on_compute_thread(self.trainer.adapter_config)
        await publish_weights(
            self.bus,
            tensors,
            version=self.version,
            step=self.step,
            mode=self.config.weight_sync,
            weights_dir=self.run_dir / "weights",
            sender=self.sender,
            adapter=adapter,
            server=self.server,
        )

    async def _keep_final_weights(self) -> None:
        """On a graceful stop, the last version in ``<run>/weights`` when the route kept it elsewhere (in memory
        for ``http``, the object store, a broadcast): ``rlar eval``, ``rlar export`` and ``make run``'s final eval
        read a run's trained policy from there. The filesystem route wrote it already."""
        # Adapters alone (LoRA) are no policy a reader can load from that directory: they stay with the route.
        if (
            self.config.weight_sync == "filesystem"
            or self.version == 0
            or self.config.trainer.lora is not None
        ):
            return

        tensors = await self.on_compute_thread(self._collective, "export", self.config.weights_dtype)
        ref = await asyncio.to_thread(write_weights_dir, self.run_dir / "weights", self.version, tensors)
        log.info("learner: kept the final weights v%d at %s", self.version, ref.uri)

    async def teardown(self) -> None:
        if self.server is not None:
            self.server.close()

    async def _publish_progress(self) -> None:
        progress = LearnerProgress(
            version=self.version,
            step=self.step,
            consumed_prompts=self.consumed,
            dropped_prompts=self.dropped,
            prompts_per_step=self.config.prompts_per_step,
            max_staleness=self.config.trainer.grpo.max_staleness,
        )
        await self.bus.js_publish(subjects.LEARNER_PROGRESS, progress)

    async def _reannounce_progress(self) -> None:
        """Publish the progress again when the newest entry on its subject is not this learner's state.

        The feeder paces on it, and one reading it at start takes the newest valid entry; were that entry
        garbage published over the real one (or older than this learner's state), a feeder restarted now
        would wait for a step that cannot come without its prompts.
        """
        last = await self.bus.last_valid(
            topology.PROGRESS, subjects.LEARNER_PROGRESS, LearnerProgress, scan=1
        )
        if last is None or (last.step, last.consumed_prompts, last.dropped_prompts) != (
            self.step,
            self.consumed,
            self.dropped,
        ):
            await self._publish_progress()

    async def _checkpoint(self) -> None:
        self._checkpointed = self.step
        extra = {
            "step": self.step,
            "training_steps": self.training_steps,
            "abstained_rounds": self.abstained_rounds,
            "version": self.version,
            "consumed": self.consumed,
            "dropped": self.dropped,
        }
        await self.on_compute_thread(self._collective, "save", extra)
        log.info("learner: checkpoint at step %d", self.step)

    async def _finish(self) -> None:
        if self._finished_sent:
            return
        self._finished_sent = True
        await self.bus.publish(
            subjects.events("learner"),
            Event(
                actor=f"learner/{self.instance}",
                kind="finished",
                message=f"reached max_steps={self.config.max_steps}",
                data={"step": self.step},
            ),
        )

    async def _drop_orphans(self) -> None:
        """Ack and forget results whose samples never came (e.g. ``rlar reward score`` on a live bus)."""
        cutoff = time.time() - self.config.orphan_s
        for key, g in list(self.groups.items()):
            if not g.group_size and g.arrived < cutoff:
                self.groups.pop(key)
                await asyncio.gather(*(raw.ack() for raw in g.msgs))
                self.counters["orphan_rewards"] += len(g.msgs)

    async def _keepalive(self) -> None:
        while True:
            await asyncio.sleep(self.config.keepalive_s)
            await self._drop_orphans()
            try:
                await self._reannounce_progress()
            except Exception as exc:  # the bus reconnecting: next tick
                log.debug("progress check failed: %s", exc)
            await mark_in_progress(raw for g in list(self.groups.values()) for raw in g.msgs)

    # -- collective trainer calls (rank 0 broadcasts; followers mirror) ---------------------------
    def _collective(self, cmd: str, arg: Any) -> Any:
        if int(os.environ.get("WORLD_SIZE", "1")) > 1:
            import torch.distributed as dist

            dist.broadcast_object_list([(cmd, arg)], src=0)
        return _run_command(self.trainer, cmd, arg, self.ckpt_dir, self.config.keep_checkpoints)

    async def run(self, bus: Bus | None = None, *, install_signals: bool = False) -> None:
        if _rank() == 0:
            await super().run(bus, install_signals=install_signals)
            return
        await asyncio.to_thread(self._follow)

    def _follow(self) -> None:
        """Ranks > 0: build the trainer, then mirror rank 0's commands until it says stop."""
        import torch.distributed as dist

        from rlar.learn.trainer import DeepSpeedPolicyTrainer

        self.trainer = DeepSpeedPolicyTrainer(self._trainer_config(), total_updates=self._total_updates())
        while True:
            box: list[Any] = [None]
            dist.broadcast_object_list(box, src=0)
            cmd, arg = box[0]
            if cmd == "stop":
                return
            _run_command(self.trainer, cmd, arg, self.ckpt_dir, self.config.keep_checkpoints)


def _run_command(trainer: Any, cmd: str, arg: Any, ckpt_dir: Path, keep: int) -> Any:
    if cmd == "step":
        return trainer.step(arg)
    if cmd == "load":
        return trainer.load_latest(arg)
    if cmd == "save":
        return trainer.save_checkpoint(ckpt_dir, arg["step"], arg, keep_last=keep)
    if cmd == "export":
        import torch

        return list(trainer.export_named_tensors(getattr(torch, arg or "float32")))
    if cmd == "stop":
        return None
    raise ValueError(f"unknown learner command {cmd!r}")
