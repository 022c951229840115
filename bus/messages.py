"""Every wire message type. Each is a slotted dataclass registered with the codec under its class name.

The comment above each type says who sends it to whom. Fields hold only MessagePack-native values
(str, int, float, bool, bytes, None, lists and maps of those) or the nested structs declared here (sent as
plain maps), so any language can read the bus.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from bus.codec import wire, wire_struct


def _now() -> float:
    return time.time()


class ToolKind(StrEnum):
    """What a reward tool is: where it may run, and the score subject and reward-worker queue group it owns."""

    RULE = "rule"  # deterministic rules over strings (match, format, math equivalence)
    METRIC = "metric"  # reference-based similarity metrics (BLEU, chrF, embeddings)
    SANDBOX = "sandbox"  # executes untrusted code (unit tests)
    MODEL = "model"  # a learned reward model
    JUDGE = "judge"  # an LLM judge behind an API


# Nested in Prompt, SampleGroup, ScoreGroup and RouteDecision: one reward tool of a prompt's route.
# feeder/router build it from a registered ToolSpec (rlar.tools.base.ToolSpec.ref); everyone else reads it.
@wire_struct
@dataclass(slots=True, frozen=True, kw_only=True)
class ToolRef:
    tool: str
    kind: ToolKind
    version: int = 0
    """0: the newest usable version when scored."""
    weight: float = 1.0
    """Share of this tool in the sample's combined reward (a route's weights sum to 1)."""
    needs_reference: bool = False
    """The tool cannot score without a reference answer (reference-optional tools: False)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", ToolKind(self.kind))
        if self.version < 0 or not self.weight >= 0:
            raise ValueError(f"ToolRef {self.tool!r}: version must be >= 0 and weight >= 0")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able map (KV records, reports)."""
        return {
            "tool": self.tool,
            "kind": self.kind.value,
            "version": self.version,
            "weight": self.weight,
            "needs_reference": self.needs_reference,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ToolRef:
        """From :meth:`to_dict`'s map (unknown keys ignored; records written before ``needs_reference``
        existed read as reference-optional)."""
        return cls(
            tool=str(d["tool"]),
            kind=d["kind"],
            version=int(d.get("version", 0)),
            weight=float(d.get("weight", 1.0)),
            needs_reference=bool(d.get("needs_reference", False)),
        )


# every actor -> `rlar status`, supervisors (core NATS, rlar.heartbeat.<actor>.<id>)
@wire
@dataclass(slots=True, kw_only=True)
class Heartbeat:
    actor: str
    instance: str
    host: str
    pid: int
    uptime_s: float
    state: str = "running"
    counters: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    sent_at: float = field(default_factory=_now)


# any subscriber -> operators (rlar.dlq.<original subject>): a payload that could not be handled
@wire
@dataclass(slots=True, kw_only=True)
class DeadLetter:
    subject: str
    reason: str
    payload: bytes
    actor: str = ""
    deliveries: int = 1
    at: float = field(default_factory=_now)


# supervisors and actors -> operators (rlar.events.<actor>): crashes, restarts, quarantines
@wire
@dataclass(slots=True, kw_only=True)
class Event:
    actor: str
    kind: str
    message: str
    level: str = "info"
    data: dict[str, Any] = field(default_factory=dict)
    at: float = field(default_factory=_now)


# learner, reward workers -> metrics sinks (rlar.metrics.<actor>)
@wire
@dataclass(slots=True, kw_only=True)
class Metrics:
    actor: str
    step: int
    values: dict[str, Any]
    at: float = field(default_factory=_now)


# feeder -> router (rlar.prompts.<task>) and router/feeder -> rollout (rlar.routed.<task>)
@wire
@dataclass(slots=True, kw_only=True)
class Prompt:
    prompt_id: str
    task: str
    prompt: str | list[Any]
    reference: Any = None
    domain: str = ""
    task_type: str = ""
    answer_format: str = ""
    description: str = ""
    data_source: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    epoch: int = 0
    index: int = 0
    # Reward route, filled by the router (or the feeder in static routing).
    tools: list[ToolRef] = field(default_factory=list)
    route: dict[str, Any] = field(default_factory=dict)
    created_at: float = field(default_factory=_now)


# Nested in SampleGroup: one of the G samples of a prompt.
@wire_struct
@dataclass(slots=True, kw_only=True)
class Completion:
    index: int
    """0 … group_size-1 within the group."""
    token_ids: list[int]
    logprobs: list[float]
    """Behaviour log-probs of ``token_ids`` under the generating policy."""
    text: str
    finish_reason: str = ""


# Nested in SampleGroup: how the rollout sampled, so the learner recomputes log-probs under the same settings
# (rlar/learn/trainer.py, "What the importance weight means") and never guesses them.
@wire_struct
@dataclass(slots=True, frozen=True, kw_only=True)
class Sampling:
    temperature: float = 1.0
    """The rollout's temperature; below 1e-5 decoding was greedy (log-probs then at temperature 1)."""
    top_p: float = 1.0
    top_k: int = 0
    """0: no top-k truncation."""
    logprobs: str = "sampled"
    """"sampled": each behaviour log-prob is of the distribution the token was drawn from (temperature, then
    top-k, then top-p, renormalised); "raw": of the model at temperature 1 (only equal to it when sampling
    used temperature 1 and no truncation)."""

    def __post_init__(self) -> None:
        if not (self.temperature >= 0 and 0 < self.top_p <= 1 and self.top_k >= 0):
            raise ValueError(f"Sampling: need temperature >= 0, 0 < top_p <= 1, top_k >= 0, got {self}")
        if self.logprobs not in ("sampled", "raw"):
            raise ValueError(f"Sampling.logprobs must be 'sampled' or 'raw', got {self.logprobs!r}")


# rollout -> learner (rlar.samples.<task>): the G samples of one prompt, made by one generation (one policy
# version). A group too large for one message is sent in parts (by sample index) that share `generation`.
@wire
@dataclass(slots=True, kw_only=True)
class SampleGroup:
    prompt_id: str
    generation: str
    """Id of this generation of the prompt: a prompt regenerated after a crash gets a new one, so its
    samples and rewards never mix with an earlier attempt's."""
    task: str
    group_size: int
    prompt_token_ids: list[int]
    completions: list[Completion]
    policy_version: int
    tools: list[ToolRef] = field(default_factory=list)
    query: str = ""
    engine: str = ""
    epoch: int = 0
    sampling: Sampling = field(default_factory=Sampling)
    """The sampling settings the completions were drawn with (the same for the whole group); the learner
    recomputes log-probs at its temperature. The default is plain sampling (temperature 1, no truncation)."""
    created_at: float = field(default_factory=_now)

    def sample_id(self, index: int) -> str:
        """A sample's id across messages: ``<prompt>/<generation>#<index>``."""
        return sample_id(self.prompt_id, self.generation, index)


def sample_id(prompt_id: str, generation: str, index: int) -> str:
    """The id of sample ``index`` of a prompt generation, the same in samples, score requests and rewards."""
    return f"{prompt_id}/{generation}#{index}"


# Nested in ScoreGroup: one response to score.
@wire_struct
@dataclass(slots=True, kw_only=True)
class ScoreItem:
    index: int
    response: str


# rollout -> reward workers of one kind (rlar.score.<kind>): score responses of one prompt generation with
# each of the prompt's tools of that kind (a large group is sent in parts by sample index).
@wire
@dataclass(slots=True, kw_only=True)
class ScoreGroup:
    prompt_id: str
    generation: str
    task: str
    tools: list[ToolRef]
    query: str
    items: list[ScoreItem]
    reference: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: float = field(default_factory=_now)


# Nested in RewardGroup: one response's result. status is ok | abstain | error.
@wire_struct
@dataclass(slots=True, kw_only=True)
class ScoredItem:
    index: int
    status: str
    score: float | None = None
    reason: str = ""
    latency_s: float = 0.0
    cached: bool = False
    details: dict[str, Any] = field(default_factory=dict)


# reward workers -> learner (rlar.rewards.<task>): one tool's results for responses of one prompt generation
@wire
@dataclass(slots=True, kw_only=True)
class RewardGroup:
    prompt_id: str
    generation: str
    task: str
    tool: str
    tool_version: int
    """The version actually used (0 when the tool could not be resolved)."""
    items: list[ScoredItem]
    weight: float = 1.0
    worker: str = ""
    latency_s: float = 0.0
    """Wall time of scoring the whole request."""
    created_at: float = field(default_factory=_now)

    def sample_id(self, index: int) -> str:
        return sample_id(self.prompt_id, self.generation, index)


# learner -> rollout (rlar.weights): a new policy version is available at `uri`
@wire
@dataclass(slots=True, kw_only=True)
class WeightsAnnounce:
    version: int
    uri: str
    sha256: str
    size_bytes: int
    step: int
    format: str = "safetensors"
    adapter: dict[str, Any] | None = None
    """None: the weights are the whole model. Otherwise they are LoRA adapter tensors only, and this is
    their PEFT LoraConfig as a dict (rlar/policy/lora.py): rollouts merge or serve them over the base."""
    created_at: float = field(default_factory=_now)


# learner -> feeder (rlar.learner.progress): how many prompts the learner has consumed or dropped
@wire
@dataclass(slots=True, kw_only=True)
class LearnerProgress:
    version: int
    step: int
    consumed_prompts: int
    dropped_prompts: int
    # The pacing contract: the feeder keeps at most (max_staleness + 1) * prompts_per_step in flight.
    prompts_per_step: int = 0
    max_staleness: int = 0
    consumed_ids: list[str] = field(default_factory=list)
    at: float = field(default_factory=_now)


# reward workers, synthesizer -> sandbox (request/reply on rlar.sandbox.exec, queue group "sandbox")
@wire
@dataclass(slots=True, kw_only=True)
class SandboxRequest:
    code: str
    tests: Any = None
    style: str = "script"
    entry_point: str = ""
    stdin: str = ""
    limits: dict[str, Any] = field(default_factory=dict)
    request_id: str = ""


# sandbox -> requester: the result object (status ok | failed | timeout | oom | crashed | rejected)
@wire
@dataclass(slots=True, kw_only=True)
class SandboxReply:
    request_id: str
    status: str
    result: dict[str, Any] = field(default_factory=dict)


# synthesizer, retriever, `rlar tools` -> everyone (rlar.tools.registered): the registry changed
@wire
@dataclass(slots=True, kw_only=True)
class ToolRegistered:
    name: str
    version: int
    kind: str
    action: str = "registered"
    by: str = ""
    at: float = field(default_factory=_now)


# router -> observers (rlar.tools.decisions): which tools score a kind of query, and why
@wire
@dataclass(slots=True, kw_only=True)
class RouteDecision:
    signature: str
    task: str
    tools: list[ToolRef]
    backend: str
    confidence: float = 0.0
    model: str = ""
    prompt_hash: str = ""
    cost: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    fallback: bool = False
    at: float = field(default_factory=_now)
    probes: list[dict[str, Any]] = field(default_factory=list)
    """Hack-probe verdicts per tool probed for the signature (``tool``, ``version``, ``verdict`` eligible |
    refused | unverified | skipped, ``scores`` per probe, ``maxed``); optional: older senders leave it out."""


# router -> synthesizer / retriever (rlar.tools.request.*): no tool fits this kind of task
@wire
@dataclass(slots=True, kw_only=True)
class ToolRequest:
    request_id: str
    signature: str
    task: str
    description: str
    domain: str = ""
    task_type: str = ""
    answer_format: str = ""
    examples: list[dict[str, Any]] = field(default_factory=list)
    constraints: dict[str, Any] = field(default_factory=dict)
    at: float = field(default_factory=_now)
