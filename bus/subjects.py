"""Every NATS subject of the system, as constants and functions. Nothing else spells a subject.

Work traffic (prompts, samples, score requests, rewards, weights, tool events) is captured by JetStream
streams declared in :mod:`bus.topology`; heartbeats and metrics are core NATS publishes that a
short-lived stream also keeps so ``rlar status`` can read the latest ones at once.

Flow of one query::

    feeder  -> prompts.<task>      (router reads)      -> routed.<task>     (rollout reads)
    rollout -> samples.<task>      (learner reads)      + score.<kind>      (reward workers read)
    reward  -> rewards.<task>      (learner reads)
    learner -> weights             (rollout reads)      + learner.progress  (feeder paces on it)
"""

from __future__ import annotations

import re

from bus.messages import ToolKind

PREFIX = "rlar"

# -- work subjects (JetStream) -------------------------------------------------------------------
PROMPTS_ALL = f"{PREFIX}.prompts.>"
ROUTED_ALL = f"{PREFIX}.routed.>"
SAMPLES_ALL = f"{PREFIX}.samples.>"
SCORE_ALL = f"{PREFIX}.score.>"
REWARDS_ALL = f"{PREFIX}.rewards.>"
WEIGHTS = f"{PREFIX}.weights"
LEARNER_PROGRESS = f"{PREFIX}.learner.progress"
TOOLS_ALL = f"{PREFIX}.tools.>"
TOOLS_REGISTERED = f"{PREFIX}.tools.registered"
TOOLS_DECISIONS = f"{PREFIX}.tools.decisions"
TOOLS_REQUEST_SYNTH = f"{PREFIX}.tools.request.synthesize"
TOOLS_REQUEST_RETRIEVE = f"{PREFIX}.tools.request.retrieve"
DLQ_ALL = f"{PREFIX}.dlq.>"

# -- request/reply (core NATS, queue groups) -----------------------------------------------------
SANDBOX_EXEC = f"{PREFIX}.sandbox.exec"
REWARD_SCORE_RPC = f"{PREFIX}.reward.rpc"

# -- ephemeral (core NATS) -----------------------------------------------------------------------
HEARTBEAT_ALL = f"{PREFIX}.heartbeat.>"
METRICS_ALL = f"{PREFIX}.metrics.>"
EVENTS_ALL = f"{PREFIX}.events.>"

# Tool kinds (bus.messages.ToolKind) own a score subject and a reward-worker queue group each.
TOOL_KINDS: tuple[str, ...] = tuple(k.value for k in ToolKind)

_TOKEN_OK = re.compile(r"^[A-Za-z0-9_\-]+$")
_TOKEN_BAD = re.compile(r"[^A-Za-z0-9_\-]")


class SubjectError(ValueError):
    """A subject token was empty or held characters NATS reserves (``.``, ``*``, ``>``, whitespace)."""


def token(name: str) -> str:
    """Return ``name`` if it is a valid single subject token, else raise :class:`SubjectError`."""
    if not name or not _TOKEN_OK.match(name):
        raise SubjectError(f"invalid subject token {name!r}: use letters, digits, '_' or '-'")
    return name


def safe_token(name: str) -> str:
    """Map an arbitrary name (a task or actor id) to a valid token, replacing reserved characters."""
    out = _TOKEN_BAD.sub("_", name.strip())
    if not out:
        raise SubjectError("empty subject token")
    return out


def prompts(task: str) -> str:
    """Feeder -> router: a prompt of ``task`` that still needs a reward route."""
    return f"{PREFIX}.prompts.{token(task)}"


def routed(task: str) -> str:
    """Router (or a feeder in static routing) -> rollout: a prompt with its reward tools chosen."""
    return f"{PREFIX}.routed.{token(task)}"


def samples(task: str) -> str:
    """Rollout -> learner: one generated sample (token ids, behaviour log-probs, policy version)."""
    return f"{PREFIX}.samples.{token(task)}"


def score(kind: str) -> str:
    """Rollout -> reward workers of one tool kind: score one sample with one tool."""
    if kind not in TOOL_KINDS:
        raise SubjectError(f"unknown tool kind {kind!r}; expected one of {', '.join(TOOL_KINDS)}")
    return f"{PREFIX}.score.{kind}"


def rewards(task: str) -> str:
    """Reward workers -> learner: the result of one (sample, tool) score request."""
    return f"{PREFIX}.rewards.{token(task)}"


def heartbeat(actor: str, instance: str) -> str:
    """Every actor instance, every few seconds."""
    return f"{PREFIX}.heartbeat.{token(actor)}.{safe_token(instance)}"


def metrics(actor: str) -> str:
    """Per-step metrics of an actor (learner steps, reward stats)."""
    return f"{PREFIX}.metrics.{token(actor)}"


def events(actor: str) -> str:
    """Loud operational events: crashes, restarts, quarantines."""
    return f"{PREFIX}.events.{token(actor)}"


def dlq(subject: str) -> str:
    """Dead letters of ``subject``: payloads that failed to decode or to process, with the reason."""
    if subject.startswith(f"{PREFIX}.dlq."):
        return subject
    return f"{PREFIX}.dlq.{subject}"
