"""What the GRPO step reads of a group, as protocols: the learner's groups (:class:`rlar.wire.groups.Group`, built
from the bus's messages) fit them, and so does anything else that carries the same fields (a test's groups, a
replayed journal). The step depends on these shapes, not on the messages that carried them.

Also here: how the step uses a group's behaviour log-probs (:func:`learner_temperature`,
:func:`logprobs_usable`), which depends only on the sampling settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from rlar.policy.engines.base import GREEDY_TEMPERATURE

__all__ = [
    "GroupSample",
    "SampledGroup",
    "SamplingSettings",
    "ScoredSample",
    "ToolScores",
    "learner_temperature",
    "logprobs_usable",
]


class SamplingSettings(Protocol):
    """How the rollout sampled: the decoding settings and which log-probs it returned ("sampled" or "raw")."""

    @property
    def temperature(self) -> float: ...
    @property
    def top_p(self) -> float: ...
    @property
    def top_k(self) -> int: ...
    @property
    def logprobs(self) -> str: ...


class GroupSample(Protocol):
    """One sample of a group: its index, its tokens and their behaviour log-probs, why it stopped."""

    @property
    def index(self) -> int: ...
    @property
    def token_ids(self) -> list[int]: ...
    @property
    def logprobs(self) -> list[float]: ...
    @property
    def finish_reason(self) -> str: ...


class ScoredSample(Protocol):
    """One tool's result for one sample: ``ok`` with a score, or another status (an abstain)."""

    @property
    def status(self) -> str: ...
    @property
    def score(self) -> float | None: ...


class ToolScores(Protocol):
    """One tool's results for a group: its weight in the route (0: a shadow), its version, per sample index."""

    @property
    def weight(self) -> float: ...
    @property
    def version(self) -> int: ...
    @property
    def items(self) -> Mapping[int, ScoredSample]: ...


class SampledGroup(Protocol):
    """One generation of a prompt, complete: its samples and every tool's results for each."""

    @property
    def prompt_id(self) -> str: ...
    @property
    def task(self) -> str: ...
    @property
    def policy_version(self) -> int: ...
    @property
    def prompt_token_ids(self) -> list[int]: ...
    @property
    def sampling(self) -> SamplingSettings: ...
    @property
    def created_at(self) -> float: ...
    @property
    def completions(self) -> Mapping[int, GroupSample]: ...
    @property
    def rewards(self) -> Mapping[str, ToolScores]: ...


def learner_temperature(sampling: SamplingSettings) -> float:
    """The temperature at which the learner recomputes a group's log-probs: the rollout's, or 1 for greedy
    decoding (whose log-probs are the raw ones)."""
    return sampling.temperature if sampling.temperature >= GREEDY_TEMPERATURE else 1.0


def logprobs_usable(sampling: SamplingSettings) -> bool:
    """Behaviour log-probs fit the importance weight: "sampled" ones always, "raw" ones only when sampling
    was plain (temperature 1, no truncation) or greedy."""
    plain = sampling.temperature == 1.0 and sampling.top_p == 1.0 and sampling.top_k == 0
    return sampling.logprobs == "sampled" or plain or sampling.temperature < GREEDY_TEMPERATURE
