"""The rollout actor: G samples per prompt, with token ids, behaviour log-probs and the policy version.

Loop: pull a batch of routed prompts from the durable ``rollout`` consumer (replicas share it, so an
unacked batch of a crashed replica is redelivered to another), load the newest announced weights if any
(between batches: in place, no restart), generate, then per prompt publish one
:class:`~bus.messages.SampleGroup` (its G samples, prompt token ids once) on ``rlar.samples.<task>`` and one
:class:`~bus.messages.ScoreGroup` per tool kind of its route (the G responses, every tool of that kind) on
``rlar.score.<kind>`` — a message larger than the server's ``max_payload`` is split by sample index — all
of the batch's publishes sent at once and their acks awaited together; then ack the prompts.

Each generation of a prompt has its own ``generation`` id, part of every message id (``Nats-Msg-Id =
<prompt>/<generation>[/<kind>]#<first index>``): a publish retried after a lost ack is stored once, and a
prompt regenerated after a crash (redelivered before its ack) makes a new, self-consistent group whose
rewards cannot mix with the earlier attempt's; the learner trains on one of them.

Prompts longer than ``max_prompt_tokens`` are cut from the left (the end of a prompt is what the answer
continues). Generation runs in a worker thread so heartbeats keep flowing.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from typing import Any

from nats.aio.msg import Msg
from pydantic import Field, model_validator

from actors.runtime import Actor, ActorConfig
from bus import subjects
from bus.client import keep_in_progress
from bus.codec import DecodeError, decode, encode_parts
from bus.messages import (
    Completion,
    Prompt,
    SampleGroup,
    Sampling,
    ScoreGroup,
    ScoreItem,
    ToolRef,
    WeightsAnnounce,
)
from bus.topology import PROMPTS, ROLLOUT
from rlar.malloc import kept as malloc_kept
from rlar.policy.broadcast import BroadcastConfig, WeightReceiver
from rlar.policy.engines import EngineConfig, GenerationEngine, make_engine
from rlar.tasks.base import query_text
from rlar.wire.weight_sync import WeightsUnavailable, fetch_weights, latest_announcement

log = logging.getLogger(__name__)


class RolloutConfig(ActorConfig):
    engine: EngineConfig
    """Generation backend: ``{kind = "transformers" | "vllm", model = "<HF dir>", …}``; ``{run_dir}`` in
    the model path is replaced by the run directory."""
    group_size: int = Field(8, ge=1)
    """G: samples per prompt (the GRPO group)."""
    batch_prompts: int = Field(8, ge=1)
    """Prompts generated together."""
    max_new_tokens: int = Field(16, ge=1)
    temperature: float = Field(1.0, ge=0.0)
    """Sampling temperature; it travels with every sample group and the learner recomputes log-probs at it.
    Below 1e-5 decoding is greedy (every sample of a group alike: no GRPO signal)."""
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    """Nucleus truncation of the sampling distribution (1: off); part of the behaviour policy only, see
    docs/architecture.md "Sampling settings and log-probs"."""
    top_k: int = Field(0, ge=0)
    """Top-k truncation of the sampling distribution (0: off); applied before top_p."""
    max_prompt_tokens: int = Field(384, ge=1)
    """Longer prompts are cut from the left."""
    fetch_timeout_s: float = Field(1.0, gt=0)
    broadcast: BroadcastConfig | None = None
    """Join the learner's weight broadcast group (its ``[learner] broadcast``) as rank ``broadcast_rank``."""
    broadcast_rank: int = Field(1, ge=1)

    @model_validator(mode="after")
    def _logprobs_fit_the_sampling(self) -> RolloutConfig:
        plain = self.temperature == 1.0 and self.top_p == 1.0 and self.top_k == 0
        if self.engine.logprobs_mode == "raw" and not plain:
            raise ValueError(
                "engine.logprobs_mode = 'raw' records temperature-1 log-probs, but this rollout samples with "
                f"temperature={self.temperature}, top_p={self.top_p}, top_k={self.top_k}: the learner's "
                "importance weights would be wrong. Use logprobs_mode = 'sampled' (the default)."
            )
        return self

    def sampling(self) -> Sampling:
        """The settings sent with every sample group."""
        return Sampling(
            temperature=self.temperature,
            top_p=self.top_p,
            top_k=self.top_k,
            logprobs=self.engine.logprobs_mode,
        )


class Rollout(Actor[RolloutConfig]):
    kind = "rollout"
    Config = RolloutConfig

    def __init__(self, config: RolloutConfig) -> None:
        super().__init__(config)
        self.engine: GenerationEngine | None = None
        self.version = 0
        self._pending: WeightsAnnounce | None = None
        self.gen_seconds = 0.0
        self.load_seconds = 0.0  # fetching and loading weight versions
        self.receiver: WeightReceiver | None = None
        self._sampling = config.sampling()

    def info(self) -> dict[str, Any]:
        # Time spent generating and loading weights so far (with the counters' batches and weight_loads: the
        # stage's time per batch, e.g. for the pipeline bench's per-stage figures).
        return {
            "policy_version": self.version,
            "gen_s": round(self.gen_seconds, 4),
            "load_s": round(self.load_seconds, 4),
            "malloc_kept": malloc_kept(),
        }

    async def setup(self) -> None:
        engine_cfg = self.config.engine.model_copy(
            update={"model": self.config.engine.model.replace("{run_dir}", self.config.run_dir)}
        )
        self.engine = await self.on_compute_thread(make_engine, engine_cfg)
        if self.config.broadcast is not None:
            self.receiver = WeightReceiver(self.config.broadcast, self.config.broadcast_rank)

        async def on_weights(msg: WeightsAnnounce, raw: Msg) -> None:
            if msg.version != self.version and (
                self._pending is None or msg.version >= self._pending.version
            ):
                self._pending = msg

        await self.bus.subscribe(subjects.WEIGHTS, WeightsAnnounce, on_weights)
        latest = await latest_announcement(self.bus)
        if latest is not None:
            self._pending = latest
        await self._maybe_load_weights()

    async def teardown(self) -> None:
        if self.receiver is not None:
            self.receiver.close()
        if self.engine is not None:
            self.engine.close()

    async def _maybe_load_weights(self) -> None:
        announce, self._pending = self._pending, None
        if announce is None or announce.version == self.version or self.engine is None:
            return
        t0 = time.perf_counter()
        try:
            data = await fetch_weights(self.bus, announce, self.receiver)
        except WeightsUnavailable as exc:
            self.counters["weights_unavailable"] += 1
            log.warning("rollout: keeps serving v%d: %s", self.version, exc)
            return
        await self.on_compute_thread(self.engine.load_weights, data, announce.version, announce.adapter)
        self.version = announce.version
        self.counters["weight_loads"] += 1
        self.load_seconds += time.perf_counter() - t0
        self.metrics.weights_loaded(time.perf_counter() - t0)
        log.info("rollout: now serving policy v%d (%.3fs)", self.version, time.perf_counter() - t0)

    async def main(self) -> None:
        psub = await self.bus.js.pull_subscribe_bind(durable=ROLLOUT, stream=PROMPTS)
        try:
            while not self.stopping.is_set():
                msgs = await self.bus.fetch(
                    psub, self.config.batch_prompts, self.config.fetch_timeout_s, ROLLOUT
                )
                prompts: list[tuple[Prompt, Msg]] = []
                for raw in msgs:
                    try:
                        prompts.append((decode(raw.data, Prompt), raw))
                    except DecodeError as exc:
                        await self.bus.dead_letter(raw.subject, raw.data, exc.reason)
                        with contextlib.suppress(Exception):
                            await raw.term()
                if prompts:
                    await self._maybe_load_weights()
                    await self._generate_and_publish(prompts)
        finally:
            with contextlib.suppress(Exception):
                await psub.unsubscribe()

    async def _generate_and_publish(self, batch: list[tuple[Prompt, Msg]]) -> None:
        assert self.engine is not None
        cfg = self.config
        ids = []
        for p, _ in batch:
            toks = self.engine.render_prompt(p.prompt)
            ids.append(toks[-cfg.max_prompt_tokens :] if len(toks) > cfg.max_prompt_tokens else toks)
        version = self.version
        t0 = time.perf_counter()
        # Generation can outlast the prompts' ack-wait (a busy machine, a big model): keep them in progress,
        # or JetStream hands them out again and the rollout regenerates what it is still generating.
        async with keep_in_progress([raw for _, raw in batch], self.config.topology.prompt_ack_wait_s):
            outs = await self.on_compute_thread(
                self.engine.generate,
                ids,
                n=cfg.group_size,
                max_new_tokens=cfg.max_new_tokens,
                temperature=cfg.temperature,
                top_p=cfg.top_p,
                top_k=cfg.top_k,
                seed=None,
            )
        self.gen_seconds += time.perf_counter() - t0
        out: list[tuple[str, bytes, str]] = []
        for (prompt, _), prompt_ids, completions in zip(batch, ids, outs, strict=True):
            out += self._group_messages(prompt, prompt_ids, completions, version)
        await self.bus.js_publish_many(out)
        for _, raw in batch:
            await raw.ack()
        self.counters["prompts"] += len(batch)
        self.counters["samples"] += len(batch) * cfg.group_size
        for prompt, _ in batch:
            self.metrics.samples(prompt.task, cfg.group_size)
        self.counters["messages"] += len(out)
        self.counters["batches"] += 1

    def _group_messages(
        self, prompt: Prompt, prompt_ids: list[int], completions: list[Any], version: int
    ) -> list[tuple[str, bytes, str]]:
        """(subject, payload, msg id) of one prompt's samples and its score requests (one per tool kind),
        each split by sample index if larger than the bus's payload limit."""
        gen = uuid.uuid4().hex[:12]
        query = query_text(prompt.prompt)
        group = SampleGroup(
            prompt_id=prompt.prompt_id,
            generation=gen,
            task=prompt.task,
            group_size=self.config.group_size,
            prompt_token_ids=prompt_ids,
            policy_version=version,
            tools=prompt.tools,
            query=query,
            engine=self.config.engine.kind,
            epoch=prompt.epoch,
            sampling=self._sampling,
            completions=[
                Completion(
                    index=i,
                    token_ids=c.token_ids,
                    logprobs=c.logprobs,
                    text=c.text,
                    finish_reason=c.finish_reason,
                )
                for i, c in enumerate(completions)
            ],
        )
        limit = self.bus.max_payload
        key = f"{prompt.prompt_id}/{gen}"
        out = [
            (subjects.samples(prompt.task), data, f"{key}#{part.completions[0].index}")
            for part, data in encode_parts(group, "completions", limit)
        ]
        by_kind: dict[str, list[ToolRef]] = {}
        for tool in prompt.tools:
            by_kind.setdefault(tool.kind, []).append(tool)
        items = [ScoreItem(index=c.index, response=c.text) for c in group.completions]
        for kind, tools in by_kind.items():
            req = ScoreGroup(
                prompt_id=prompt.prompt_id,
                generation=gen,
                task=prompt.task,
                tools=tools,
                query=query,
                items=items,
                reference=prompt.reference,
                metadata={**prompt.metadata, "task_type": prompt.task_type},
            )
            out += [
                (subjects.score(kind), data, f"{key}/{kind}#{part.items[0].index}")
                for part, data in encode_parts(req, "items", limit)
            ]
        return out
