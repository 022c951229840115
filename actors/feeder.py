"""The feeder: publishes the task mix's prompts, paced by the learner, resumable without gaps or repeats.

Pacing: at most ``(max_staleness + 1) * prompts_per_step`` prompts are in flight (published but not yet
consumed or dropped by the learner), with both numbers taken from the learner's own
:class:`~bus.messages.LearnerProgress` — one source of truth — unless ``max_in_flight`` overrides it.

Resume: prompts go out in batches (up to ``publish_batch``, as many as the pacing bound allows, acks awaited
together); after each batch the mix cursor and the published count go to the KV bucket ``rlar_state``.
Each prompt is published with ``Nats-Msg-Id = prompt_id`` (``<task>/e<epoch>/<index>``), so prompts
re-published after a crash between a batch and its cursor write are dropped by JetStream's duplicate
window: within an epoch no prompt is skipped or repeated.

Routing: ``static`` publishes straight to ``rlar.routed.<task>`` with the task's default tools (kinds and
versions resolved in the tool registry); ``router`` publishes to ``rlar.prompts.<task>`` for the router.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
from typing import Any, Literal

from nats.aio.msg import Msg
from nats.js.errors import KeyNotFoundError
from pydantic import Field, field_validator

from actors.runtime import Actor, ActorConfig
from bus import subjects
from bus.codec import encode
from bus.messages import LearnerProgress, Prompt, ToolRef
from bus.topology import PROGRESS, STATE_BUCKET
from rlar.registry import ToolRegistry
from rlar.tasks import MixCursor, MixItem, Rng, TaskConfig, build_mix
from rlar.tools.base import ToolSpec

log = logging.getLogger(__name__)


class FeederConfig(ActorConfig):
    tasks: list[TaskConfig] = Field(default_factory=list)
    """The task mix (built-in names or dataset files); each task's ``weight`` sets its share."""
    seed: int = 0
    """Seed of the mix order (the same seed gives the same prompt order)."""
    epoch_size: int | None = None
    """Prompts per mix epoch (default: the sum of the task sizes)."""
    routing: Literal["auto", "static", "router"] = "auto"
    """``router``: the router actor chooses every prompt's tools; ``static``: each task's default tools; ``auto``:
    the router when a task of the mix comes with no tools of its own (a JSONL or parquet file without
    ``spec.default_tools``: :attr:`rlar.tasks.TaskConfig.declares_tools`), else static. ``rlar train`` then
    starts a router and a synthesizer too when ``[train] actors`` is not given."""
    max_epochs: int | None = None
    """Stop publishing after this many epochs (None: forever)."""
    max_in_flight: int | None = Field(None, ge=1)
    """Override of the pacing bound; default (max_staleness + 1) * prompts_per_step from the learner."""
    publish_batch: int = Field(64, ge=1)
    """Most prompts published at once (acks awaited together), followed by one cursor write."""
    state_key: str = "feeder"
    """KV key (bucket rlar_state) of this feeder's cursor; two feeders of one run need two keys."""
    reward_mode: str = "default"
    """Ablations: ``default`` (per ``routing``), ``static:<tool>`` (that one tool for every task), ``random``
    (a registered tool drawn per prompt, seeded), ``agentic`` / ``no-synthesis`` (the router chooses; the
    router's ``synthesis``/``retrieval`` switches tell the two apart)."""

    @field_validator("reward_mode")
    @classmethod
    def _known_mode(cls, v: str) -> str:
        if v in ("default", "random", "agentic", "no-synthesis") or (v.startswith("static:") and len(v) > 7):
            return v
        raise ValueError(f"reward_mode must be default|random|agentic|no-synthesis|static:<tool>, got {v!r}")

    @property
    def static(self) -> bool:
        """Tools are chosen here (not by the router)."""
        if self.reward_mode in ("agentic", "no-synthesis"):
            return False
        if self.reward_mode != "default":
            return True
        if self.routing == "auto":
            return all(t.declares_tools for t in self.tasks)
        return self.routing == "static"


class Feeder(Actor[FeederConfig]):
    kind = "feeder"
    Config = FeederConfig

    def __init__(self, config: FeederConfig) -> None:
        super().__init__(config)
        self.published = 0
        self.progress: LearnerProgress | None = None
        self._progress_changed = asyncio.Event()
        self._tools: dict[str, ToolSpec] = {}
        self._names: list[str] = []

    def info(self) -> dict[str, Any]:
        return {"published": self.published, "in_flight": self.in_flight, "bound": self.bound}

    @property
    def in_flight(self) -> int:
        done = (self.progress.consumed_prompts + self.progress.dropped_prompts) if self.progress else 0
        return max(0, self.published - done)

    @property
    def bound(self) -> int | None:
        if self.config.max_in_flight is not None:
            return self.config.max_in_flight
        if self.progress is None or self.progress.prompts_per_step <= 0:
            return None
        return (self.progress.max_staleness + 1) * self.progress.prompts_per_step

    async def _load_state(self) -> tuple[MixCursor | None, int]:
        kv = await self.bus.js.key_value(STATE_BUCKET)
        try:
            entry = await kv.get(self.config.state_key)
        except KeyNotFoundError:
            return None, 0
        doc = json.loads(entry.value or b"{}")
        return MixCursor.from_dict(doc["cursor"]), int(doc["published"])

    async def _save_state(self, cursor: MixCursor) -> None:
        doc = {"cursor": cursor.to_dict(), "published": self.published}
        await self.bus.kv_put(STATE_BUCKET, self.config.state_key, json.dumps(doc).encode())

    @functools.cached_property
    def registry(self) -> ToolRegistry:
        return ToolRegistry(self.bus)

    async def _resolve_tools(self, names: list[tuple[str, float]]) -> list[ToolRef]:
        out = []
        for name, weight in names:
            if name not in self._tools:
                spec = await self.registry.get(name)
                if spec is None:
                    raise ValueError(f"default tool {name!r} is not in the tool registry")
                self._tools[name] = spec
            out.append(self._tools[name].ref(weight))
        return out

    async def _tool_names(self, item: MixItem) -> list[tuple[str, float]]:
        mode = self.config.reward_mode
        if mode.startswith("static:"):
            return [(mode.removeprefix("static:"), 1.0)]
        if mode == "random":
            if not self._names:  # the registered toolset, read once (new tools join on a restart)
                self._names = sorted(s.name for s in await self.registry.list())
            names = self._names
            key = f"{item.task.name}/e{item.epoch}/{item.index}"
            return [(Rng("random-reward", self.config.seed, key).choice(names), 1.0)]
        return list(item.task.default_tools)

    async def setup(self) -> None:
        if not self.config.tasks:
            raise ValueError("feeder: no tasks configured ([feeder] tasks = [...])")
        if self.config.static:
            await self.registry.ensure_builtins()

        async def on_progress(msg: LearnerProgress, raw: Msg) -> None:
            self.progress = msg
            self._progress_changed.set()

        await self.bus.subscribe(subjects.LEARNER_PROGRESS, LearnerProgress, on_progress)
        # The learner may have reported before we subscribed (else it re-announces within its keepalive).
        last = await self.bus.last_valid(PROGRESS, subjects.LEARNER_PROGRESS, LearnerProgress)
        self.progress = self.progress or last

    def _prompt(self, item: MixItem, tools: list[ToolRef]) -> Prompt:
        spec, rec = item.task, item.record
        return Prompt(
            prompt_id=f"{spec.name}/e{item.epoch}/{item.index}",
            task=spec.name,
            prompt=rec.prompt if isinstance(rec.prompt, str) else [dict(m) for m in rec.prompt],
            reference=rec.reference,
            domain=spec.domain,
            task_type=spec.task_type,
            answer_format=spec.answer_format,
            description=spec.description,
            data_source=spec.data_source,
            metadata={**rec.metadata, "record_id": rec.id},
            epoch=item.epoch,
            index=item.index,
            tools=tools,
        )

    async def main(self) -> None:
        cursor, self.published = await self._load_state()
        mix = build_mix(
            self.config.tasks, seed=self.config.seed, epoch_size=self.config.epoch_size, cursor=cursor
        )
        log.info(
            "feeder: %d tasks, epoch of %d prompts, resuming at %s",
            len(mix.datasets),
            mix.epoch_size,
            mix.cursor,
        )
        while not self.stopping.is_set():
            bound = self.bound
            if bound is None or self.in_flight >= bound:
                self._progress_changed.clear()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._progress_changed.wait(), 1.0)
                self.counters["paced_waits"] += 1
                continue
            out: list[tuple[str, bytes, str]] = []
            while len(out) < min(bound - self.in_flight, self.config.publish_batch) and not (
                self.config.max_epochs is not None and mix.cursor.epoch >= self.config.max_epochs
            ):
                item = next(mix)
                tools = await self._resolve_tools(await self._tool_names(item)) if self.config.static else []
                prompt = self._prompt(item, tools)
                subject = subjects.routed(prompt.task) if tools else subjects.prompts(prompt.task)
                # The router republishes a prompt on rlar.routed.<task> in the same stream under Nats-Msg-Id =
                # prompt_id, so the unrouted copy's id must differ or the routed one is dropped as a duplicate.
                out.append(
                    (subject, encode(prompt), prompt.prompt_id if tools else f"unrouted/{prompt.prompt_id}")
                )
            if not out:
                await self.sleep_or_stop(1.0)
                continue
            await self.bus.js_publish_many(out)
            self.published += len(out)
            self.counters["published"] += len(out)
            await self._save_state(mix.cursor)
