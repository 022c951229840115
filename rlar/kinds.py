"""The actor kinds: one table, from which every per-kind list of the code is derived.

A row (:class:`ActorKind`) names the kind (``rlar up --actors NAME=N``, ``python -m actors NAME``), its class
and config model by dotted path (imported lazily, and only by the layers above: ``actors`` and ``rlar.app``;
this module imports no actor), its run-document section, the NATS role it runs as, its workload (Kubernetes
Deployment and Compose service), whether ``[placement]`` may give it GPUs and
how many replicas ``rlar train`` starts by default. Derived:

- ``actors.KINDS`` / ``actors.resolve`` — name → (class, section, implied config fields);
- ``rlar.app.runconfig.SECTIONS`` — the actor sections of the run document (and the config reference);
- ``rlar.deploy.auth.role_of`` — kind → role (every role an actor runs as must be in the role table);
- ``rlar.deploy.render.WORKLOADS`` — one Deployment (and Compose service) per kind with a workload;
- ``rlar.placement.PlacementSection`` — one ``[placement.<kind>]`` table per GPU-eligible kind;
- ``rlar.app.train.TrainSection.actors`` — the default actor mix of ``rlar train``.

``tests/bus/test_kinds.py`` checks the table is complete (every class and config importable, every role in the
role table) and follows the recipe of docs/architecture.md with a throwaway kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from bus.subjects import TOOL_KINDS

__all__ = ["ACTOR_KINDS", "ActorKind", "Workload", "gpu_kinds", "section_kinds", "train_defaults"]


@dataclass(frozen=True, slots=True)
class Workload:
    """How the kind runs as a Kubernetes Deployment (replicas, resource requests, GPUs) and as a service of
    the single-host Compose recipe."""

    replicas: int
    cpu: str
    memory: str
    gpu: int = 0
    compose: int = 1
    """Replicas in deploy/compose (0: left out — it needs an agent backend to do anything)."""
    unconfined: bool = False
    """Runs bubblewrap, which makes user namespaces: the default seccomp profile would forbid them."""


@dataclass(frozen=True, slots=True)
class ActorKind:
    """One actor kind; see the module docstring for what is derived from each field."""

    name: str
    actor: str
    """The actor class, ``module:Class``."""
    config: str
    """Its config model, ``module:Class`` (the run document's :attr:`section` plus the shared sections)."""
    section: str
    doc: str
    """One line for the config reference (the section's description)."""
    role: str
    """The NATS role (user) it runs as: a name in ``rlar.deploy.auth.ROLES``."""
    implied: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """Config fields the name implies (``reward-model`` = a reward worker serving ``model`` tools only)."""
    workload: Workload | None = None
    """Its Deployment in deploy/k8s (None: not deployed by itself)."""
    gpus: str = ""
    """Non-empty: ``[placement.<name>]`` may give it GPUs; the text documents the table."""
    gpu_rank: int = 0
    """Among GPU kinds, the order in which they get the lowest free devices (1 first)."""
    train_default: int = 0
    """Replicas ``rlar train`` starts when ``[train] actors`` is not given (in table order: consumers first)."""


def _kinds(*rows: ActorKind) -> Mapping[str, ActorKind]:
    return MappingProxyType({r.name: r for r in rows})


ACTOR_KINDS: Mapping[str, ActorKind] = _kinds(
    ActorKind(
        "sandbox",
        "actors.sandbox:SandboxActor",
        "actors.sandbox:SandboxActorConfig",
        "sandbox",
        "The sandbox actor (bubblewrap jail).",
        "sandbox",
        workload=Workload(2, "1", "2Gi", unconfined=True),
        train_default=1,
    ),
    ActorKind(
        "reward",
        "actors.reward:RewardWorker",
        "actors.reward:RewardConfig",
        "reward",
        "Reward workers: concurrency, deadlines, trusted modules.",
        "reward",
        workload=Workload(4, "1", "2Gi", compose=2),
        gpus="Reward workers (reward models, judges served locally).",
        gpu_rank=3,
        train_default=1,
    ),
    *(
        ActorKind(
            f"reward-{k}",
            "actors.reward:RewardWorker",
            "actors.reward:RewardConfig",
            "reward",
            f"A reward worker for `{k}` tools only.",
            "reward",
            implied=MappingProxyType({"kinds": [k]}),
        )
        for k in TOOL_KINDS
    ),
    ActorKind(
        "learner",
        "actors.learner:Learner",
        "actors.learner:LearnerConfig",
        "learner",
        "The learner: DeepSpeed GRPO, steps, checkpoints.",
        "learner",
        workload=Workload(1, "8", "64Gi", gpu=1),
        gpus="The learner (DeepSpeed ranks).",
        gpu_rank=1,
        train_default=1,
    ),
    ActorKind(
        "rollout",
        "actors.rollout:Rollout",
        "actors.rollout:RolloutConfig",
        "rollout",
        "Rollout actors: generation engine and sampling.",
        "rollout",
        workload=Workload(2, "4", "32Gi", gpu=1),
        gpus="Rollout engines (vLLM or transformers).",
        gpu_rank=2,
        train_default=1,
    ),
    ActorKind(
        "feeder",
        "actors.feeder:Feeder",
        "actors.feeder:FeederConfig",
        "feeder",
        "The feeder actor: task mix, routing, pacing.",
        "feeder",
        workload=Workload(1, "500m", "1Gi"),
        train_default=1,
    ),
    ActorKind(
        "router",
        "actors.router:Router",
        "actors.router:RouterConfig",
        "router",
        "The router: which reward tool scores each task.",
        "router",
        workload=Workload(1, "1", "4Gi"),
    ),
    ActorKind(
        "synthesizer",
        "actors.synthesizer:Synthesizer",
        "actors.synthesizer:SynthesizerConfig",
        "synthesizer",
        "The synthesizer: writes new verifiers.",
        "synthesizer",
        workload=Workload(1, "1", "2Gi", compose=0),
    ),
    ActorKind(
        "retriever",
        "actors.retriever:Retriever",
        "actors.retriever:RetrieverConfig",
        "retriever",
        "The retriever: finds reward models on a hub.",
        "retriever",
        workload=Workload(1, "1", "4Gi", compose=0),
        gpus="The retriever (validating candidate reward models).",
        gpu_rank=4,
    ),
    ActorKind(
        "monitor",
        "actors.monitor:Monitor",
        "actors.monitor:MonitorConfig",
        "monitor",
        "The monitor: telemetry to a file.",
        "monitor",
        workload=Workload(1, "100m", "256Mi"),
    ),
)


def section_kinds() -> list[ActorKind]:
    """One kind per run-document section (the first row that reads it), in table order."""
    seen: dict[str, ActorKind] = {}
    for k in ACTOR_KINDS.values():
        seen.setdefault(k.section, k)
    return list(seen.values())


def gpu_kinds() -> list[ActorKind]:
    """The kinds ``[placement]`` may give GPUs, in the order they get free devices."""
    return sorted((k for k in ACTOR_KINDS.values() if k.gpus), key=lambda k: k.gpu_rank)


def train_defaults() -> dict[str, int]:
    """``rlar train``'s default actor mix: kind → replicas."""
    return {k.name: k.train_default for k in ACTOR_KINDS.values() if k.train_default}
