"""The rollout actor: G samples per prompt, with token ids, behaviour log-probs and the policy version.

Loop: pull a batch of routed prompts from the durable ``rollout`` consumer (replicas share it, so an
unacked batch of a crashed replica is redelivered to another), load the newest announced weights if any
(between batches: in place, no restart), generate, publish one :class:`~bus.messages.Sample` per sample on
``rlar.samples.<task>`` and one :class:`~bus.messages.ScoreRequest` per (sample, tool) on
``rlar.score.<kind>``, then ack the prompts. Publishes carry ``Nats-Msg-Id`` so a redelivered prompt
regenerated after a crash cannot double its samples within the duplicate window.

Prompts longer than ``max_prompt_tokens`` are cut from the left (the end of a prompt is what the answer
continues). Generation runs in a worker thread so heartbeats keep flowing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from nats.aio.msg import Msg
from pydantic import Field

from actors.runtime import Actor, ActorConfig
from bus import subjects
from bus.codec import DecodeError, decode
from bus.messages import Prompt, Sample, ScoreRequest, WeightsAnnounce
from bus.topology import PROMPTS, ROLLOUT
from rlar.policy.engines import EngineConfig, GenerationEngine, make_engine
from rlar.policy.sync import fetch_weights, latest_announcement

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
    """1.0 for training: behaviour log-probs then equal what the learner recomputes."""
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    max_prompt_tokens: int = Field(384, ge=1)
    """Longer prompts are cut from the left."""
    fetch_timeout_s: float = Field(1.0, gt=0)


def query_text(prompt: str | list[Any]) -> str:
    """The text a reward tool sees as the query: the prompt, or the last user turn of a chat."""
    if isinstance(prompt, str):
        return prompt
    users = [m.get("content", "") for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
    return str(users[-1] if users else (prompt[-1].get("content", "") if prompt else ""))


class Rollout(Actor[RolloutConfig]):
    kind = "rollout"
    Config = RolloutConfig

    def __init__(self, config: RolloutConfig) -> None:
        super().__init__(config)
        self.engine: GenerationEngine | None = None
        self.version = 0
        self._pending: WeightsAnnounce | None = None
        self.gen_seconds = 0.0

    def info(self) -> dict[str, Any]:
        return {"policy_version": self.version}

    async def setup(self) -> None:
        engine_cfg = self.config.engine.model_copy(
            update={"model": self.config.engine.model.replace("{run_dir}", self.config.run_dir)}
        )
        self.engine = await asyncio.to_thread(make_engine, engine_cfg)

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
        if self.engine is not None:
            self.engine.close()

    async def _maybe_load_weights(self) -> None:
        announce, self._pending = self._pending, None
        if announce is None or announce.version == self.version or self.engine is None:
            return
        t0 = time.perf_counter()
        data = await fetch_weights(self.bus, announce)
        await asyncio.to_thread(self.engine.load_weights, data, announce.version)
        self.version = announce.version
        self.counters["weight_loads"] += 1
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
        outs = await asyncio.to_thread(
            self.engine.generate, ids, n=cfg.group_size, max_new_tokens=cfg.max_new_tokens,
            temperature=cfg.temperature, top_p=cfg.top_p, seed=None,
        )  # fmt: skip
        self.gen_seconds += time.perf_counter() - t0
        for (prompt, raw), prompt_ids, completions in zip(batch, ids, outs, strict=True):
            query = query_text(prompt.prompt)
            for i, c in enumerate(completions):
                sample = Sample(
                    sample_id=f"{prompt.prompt_id}#{i}", prompt_id=prompt.prompt_id, task=prompt.task, index=i,
                    group_size=cfg.group_size, prompt_token_ids=prompt_ids, response_token_ids=c.token_ids,
                    behaviour_logprobs=c.logprobs, response_text=c.text, policy_version=version, tools=prompt.tools,
                    query=query, finish_reason=c.finish_reason, engine=cfg.engine.kind, epoch=prompt.epoch,
                )  # fmt: skip
                await self.bus.js_publish(subjects.samples(prompt.task), sample, msg_id=sample.sample_id)
                for tool in prompt.tools:
                    req = ScoreRequest(
                        sample_id=sample.sample_id, prompt_id=prompt.prompt_id, task=prompt.task, tool=tool,
                        query=query, response=c.text, reference=prompt.reference,
                        metadata={**prompt.metadata, "task_type": prompt.task_type},
                    )  # fmt: skip
                    await self.bus.js_publish(
                        subjects.score(tool.kind), req, msg_id=f"{sample.sample_id}/{tool.tool}"
                    )
                self.counters["samples"] += 1
            await raw.ack()
            self.counters["prompts"] += 1
        self.counters["batches"] += 1
