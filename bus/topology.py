"""All JetStream streams, durable consumers, key-value buckets and object stores, declared in one place.

:func:`ensure_topology` creates what is missing and reconciles what exists, idempotently: running it
again, on every actor start, never fails on existing objects and never deletes or purges data. A stream
whose declared config changed is updated in place (JetStream keeps its messages); a consumer whose config
changed is left as it is with a warning, since re-creating it would drop its ack state.

Work consumers (prompts, samples, score requests, rewards, tool requests) use explicit acks with an
ack-wait: a message a consumer took but did not ack is redelivered to another member of the same durable.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import nats.errors
from nats.js import JetStreamContext
from nats.js import api as js_api
from nats.js.errors import APIError, BucketNotFoundError, NotFoundError
from pydantic import BaseModel, ConfigDict, Field

from bus import subjects

log = logging.getLogger("rlar.bus.topology")

DAY_S = 86_400.0

# Stream names.
PROMPTS = "PROMPTS"
SAMPLES = "SAMPLES"
SCORE = "SCORE"
REWARDS = "REWARDS"
WEIGHTS = "WEIGHTS"
PROGRESS = "PROGRESS"
TOOLS = "TOOLS"
DLQ = "DLQ"
HEARTBEATS = "HEARTBEATS"
TELEMETRY = "TELEMETRY"

# Durable consumer names.
ROUTER = "router"
ROLLOUT = "rollout"
LEARNER_SAMPLES = "learner-samples"
LEARNER_REWARDS = "learner-rewards"
SYNTHESIZER = "synthesizer"
RETRIEVER = "retriever"


def reward_consumer(kind: str) -> str:
    """Durable shared by all reward workers of one tool kind (JetStream's queue group)."""
    subjects.score(kind)  # validates the kind
    return f"reward-{kind}"


# Key-value buckets and object store.
TOOLS_BUCKET = "rlar_tools"
STATE_BUCKET = "rlar_state"
DECISIONS_BUCKET = "rlar_decisions"
OBJECTS_BUCKET = "rlar_objects"


class TopologyConfig(BaseModel):
    """Tunables of the declared topology."""

    model_config = ConfigDict(extra="forbid")

    replicas: int = Field(1, ge=1, le=5)
    """Replicas of every stream, bucket and consumer (3 on a 3-node cluster)."""
    work_max_age_s: float = Field(7 * DAY_S, gt=0)
    """How long work messages are kept in their streams."""
    prompt_ack_wait_s: float = Field(120.0, gt=0)
    """Rollout/router: seconds before an unacked prompt is redelivered."""
    score_ack_wait_s: float = Field(60.0, gt=0)
    """Reward workers: seconds before an unacked score request is redelivered (> the tool timeout)."""
    learner_ack_wait_s: float = Field(60.0, gt=0)
    """Learner: it holds samples until their group is trained on and keeps them with ``in_progress``;
    after a learner crash they are redelivered to its successor after this long."""
    tool_request_ack_wait_s: float = Field(600.0, gt=0)
    """Synthesizer/retriever: a synthesis or retrieval may take minutes."""
    max_deliver: int = Field(20, ge=1)
    """Deliveries before the server stops redelivering a work message."""
    duplicate_window_s: float = Field(600.0, gt=0)
    """Window in which a repeated Nats-Msg-Id is dropped (feeder restarts rely on it)."""


@dataclass(frozen=True, slots=True)
class StreamDecl:
    name: str
    subjects: tuple[str, ...]
    max_age_s: float = 0.0
    max_msgs_per_subject: int = -1
    memory: bool = False
    duplicate_window_s: float = 120.0


@dataclass(frozen=True, slots=True)
class ConsumerDecl:
    stream: str
    durable: str
    filter_subject: str
    ack_wait_s: float
    max_deliver: int
    max_ack_pending: int = 10_000


@dataclass(frozen=True, slots=True)
class Topology:
    streams: tuple[StreamDecl, ...]
    consumers: tuple[ConsumerDecl, ...]
    kv_buckets: tuple[tuple[str, int], ...] = field(default=())
    object_stores: tuple[str, ...] = field(default=())
    replicas: int = 1


def declare(cfg: TopologyConfig | None = None) -> Topology:
    """The whole topology of the system, from its tunables."""
    cfg = cfg or TopologyConfig()
    age = cfg.work_max_age_s
    dup = cfg.duplicate_window_s
    streams = (
        StreamDecl(PROMPTS, (subjects.PROMPTS_ALL, subjects.ROUTED_ALL), age, duplicate_window_s=dup),
        StreamDecl(SAMPLES, (subjects.SAMPLES_ALL,), age, duplicate_window_s=dup),
        StreamDecl(SCORE, (subjects.SCORE_ALL,), age, duplicate_window_s=dup),
        StreamDecl(REWARDS, (subjects.REWARDS_ALL,), age, duplicate_window_s=dup),
        StreamDecl(WEIGHTS, (subjects.WEIGHTS,), age, max_msgs_per_subject=16),
        StreamDecl(PROGRESS, (subjects.LEARNER_PROGRESS,), age, max_msgs_per_subject=16),
        StreamDecl(TOOLS, (subjects.TOOLS_ALL,), age, duplicate_window_s=dup),
        StreamDecl(DLQ, (subjects.DLQ_ALL,), age),
        StreamDecl(HEARTBEATS, (subjects.HEARTBEAT_ALL,), 120.0, max_msgs_per_subject=1, memory=True),
        StreamDecl(TELEMETRY, (subjects.METRICS_ALL, subjects.EVENTS_ALL), DAY_S),
    )
    md = cfg.max_deliver
    consumers = [
        ConsumerDecl(PROMPTS, ROUTER, subjects.PROMPTS_ALL, cfg.prompt_ack_wait_s, md),
        ConsumerDecl(PROMPTS, ROLLOUT, subjects.ROUTED_ALL, cfg.prompt_ack_wait_s, md),
        ConsumerDecl(SAMPLES, LEARNER_SAMPLES, subjects.SAMPLES_ALL, cfg.learner_ack_wait_s, md, 1_000_000),
        ConsumerDecl(REWARDS, LEARNER_REWARDS, subjects.REWARDS_ALL, cfg.learner_ack_wait_s, md, 1_000_000),
        ConsumerDecl(TOOLS, SYNTHESIZER, subjects.TOOLS_REQUEST_SYNTH, cfg.tool_request_ack_wait_s, md),
        ConsumerDecl(TOOLS, RETRIEVER, subjects.TOOLS_REQUEST_RETRIEVE, cfg.tool_request_ack_wait_s, md),
    ]
    for kind in subjects.TOOL_KINDS:
        consumers.append(
            ConsumerDecl(SCORE, reward_consumer(kind), subjects.score(kind), cfg.score_ack_wait_s, md)
        )
    return Topology(
        streams=streams,
        consumers=tuple(consumers),
        kv_buckets=((TOOLS_BUCKET, 64), (STATE_BUCKET, 8), (DECISIONS_BUCKET, 8)),
        object_stores=(OBJECTS_BUCKET,),
        replicas=cfg.replicas,
    )


def _stream_config(decl: StreamDecl, replicas: int) -> js_api.StreamConfig:
    return js_api.StreamConfig(
        name=decl.name,
        subjects=list(decl.subjects),
        retention=js_api.RetentionPolicy.LIMITS,
        storage=js_api.StorageType.MEMORY if decl.memory else js_api.StorageType.FILE,
        max_age=decl.max_age_s or None,
        max_msgs_per_subject=decl.max_msgs_per_subject,
        duplicate_window=decl.duplicate_window_s,
        num_replicas=replicas,
        allow_direct=True,
    )


def _consumer_config(decl: ConsumerDecl, replicas: int) -> js_api.ConsumerConfig:
    return js_api.ConsumerConfig(
        durable_name=decl.durable,
        filter_subject=decl.filter_subject,
        ack_policy=js_api.AckPolicy.EXPLICIT,
        ack_wait=decl.ack_wait_s,
        max_deliver=decl.max_deliver,
        max_ack_pending=decl.max_ack_pending,
        deliver_policy=js_api.DeliverPolicy.ALL,
        num_replicas=replicas,
    )


async def ensure_topology(js: JetStreamContext, topo: Topology | None = None) -> Topology:
    """Create or reconcile every declared object. Safe to run any number of times, concurrently too."""
    topo = topo or declare()
    for s in topo.streams:
        config = _stream_config(s, topo.replicas)
        try:
            info = await js.stream_info(s.name)
        except NotFoundError:
            info = None
        if info is None:
            try:
                await js.add_stream(config=config)
                continue
            except APIError as exc:  # created concurrently by another actor
                if exc.err_code not in (10058,):
                    raise
                info = await js.stream_info(s.name)
        current = info.config
        if (
            sorted(current.subjects or []) != sorted(config.subjects or [])
            or (current.max_msgs_per_subject or -1) != config.max_msgs_per_subject
            or abs((current.max_age or 0) - (config.max_age or 0)) > 1e-3
        ):
            log.info("updating stream %s to its declared config (messages are kept)", s.name)
            try:
                await js.update_stream(config=config)
            except (APIError, nats.errors.TimeoutError) as exc:
                # Roles that may not change topology (rlar.deploy.auth) use the stream as it is.
                log.warning("stream %s differs from its declared config; not updated: %r", s.name, exc)
    for c in topo.consumers:
        try:
            await js.consumer_info(c.stream, c.durable)
            continue
        except NotFoundError:
            pass
        try:
            await js.add_consumer(c.stream, config=_consumer_config(c, topo.replicas))
        except APIError as exc:
            # Another actor created it between our lookup and our create: fine.
            log.debug("consumer %s/%s: %s", c.stream, c.durable, exc)
            await js.consumer_info(c.stream, c.durable)
    for bucket, history in topo.kv_buckets:
        try:
            await js.key_value(bucket)
        except BucketNotFoundError:
            try:
                await js.create_key_value(
                    config=js_api.KeyValueConfig(bucket=bucket, history=history, replicas=topo.replicas)
                )
            except APIError:
                await js.key_value(bucket)
    for bucket in topo.object_stores:
        try:
            await js.object_store(bucket)
        except (BucketNotFoundError, NotFoundError):
            try:
                await js.create_object_store(
                    bucket, config=js_api.ObjectStoreConfig(bucket=bucket, replicas=topo.replicas)
                )
            except APIError:
                await js.object_store(bucket)
    return topo
