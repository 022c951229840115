"""One GRPO learner step as pure functions: complete groups in, the rows to train on and the step's record out.

No bus, no process, no trainer (a group is any :class:`rlar.learn.samples.SampledGroup`): the learner actor
(:mod:`actors.learner`) calls :func:`plan_step` on the groups it took, trains on :meth:`StepPlan.batch`, then
turns the plan and the trainer's metrics into the step's :class:`StepRecord` (:meth:`StepPlan.record`) — the line
of ``metrics.jsonl``.

Per group:
1. per sample, the tools' results are combined (:func:`rlar.tools.combine.combine`); a sample whose
   combined status is not ``ok`` (an abstain) is masked: it scores 0 and is left out of the update;
2. group-relative advantages over the unmasked samples (:func:`rlar.learn.grpo.advantages`); a group
   whose rewards are all equal carries no signal;
3. a group sampled with processed log-probs (:func:`rlar.learn.samples.logprobs_usable`) that carries raw
   ones is not trained on at all (its samples still count, in the record);
4. a trainable sample becomes one row (prompt tokens, response tokens, behaviour log-probs, advantage,
   staleness weight, the temperature its log-probs are recomputed at); samples without response tokens,
   and those with zero advantage when ``skip_zero_advantage``, are left out.
The rows are cut to a multiple of the world size: every rank trains on the same number of rows.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rlar.learn.config import GRPOConfig
from rlar.learn.grpo import advantages, staleness_weight
from rlar.learn.samples import SampledGroup, learner_temperature, logprobs_usable
from rlar.tools.combine import combine

# rlar.learn.batch is imported where used: it imports torch at its top.

if TYPE_CHECKING:
    from rlar.learn.batch import PolicyBatch

__all__ = ["StepPlan", "StepRecord", "TrainRows", "plan_step"]


@dataclass(slots=True)
class TrainRows:
    """The samples one step trains on, one entry per row in each list."""

    prompts: list[list[int]] = field(default_factory=list)
    responses: list[list[int]] = field(default_factory=list)
    logprobs: list[list[float]] = field(default_factory=list)
    """Behaviour log-probs, one per response token."""
    advantages: list[float] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)
    """Staleness weights (:func:`rlar.learn.grpo.staleness_weight`)."""
    temperatures: list[float] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.prompts)

    def append(
        self,
        prompt: list[int],
        response: list[int],
        logprobs: list[float],
        advantage: float,
        weight: float,
        temperature: float,
    ) -> None:
        self.prompts.append(prompt)
        self.responses.append(response)
        self.logprobs.append(logprobs)
        self.advantages.append(advantage)
        self.weights.append(weight)
        self.temperatures.append(temperature)

    def head(self, n: int) -> TrainRows:
        """The first ``n`` rows."""
        return TrainRows(
            self.prompts[:n],
            self.responses[:n],
            self.logprobs[:n],
            self.advantages[:n],
            self.weights[:n],
            self.temperatures[:n],
        )


@dataclass(slots=True)
class StepRecord:
    """What one learner step did: one line of ``<run dir>/metrics.jsonl`` (:meth:`to_dict`), also published
    as the learner's ``Metrics`` and read by the plots and the dashboard."""

    step: int
    """Learner steps taken, this one included."""
    version: int
    """Policy version after the step (it advanced when rows were trained on)."""
    t_start: float
    t_end: float
    groups: int
    samples: int
    trained_rows: int
    groups_with_signal: int
    """Groups with at least one non-zero advantage."""
    abstain_frac: float
    reward_mean: float | None
    """Mean combined score of the unmasked samples; None when every sample abstained."""
    staleness_hist: dict[int, int]
    """Samples by policy-version lag at the step."""
    samples_created_min: float
    samples_created_max: float
    samples_generated_during_prev_step: int
    consumed_prompts: int
    dropped_prompts: int
    reward_by_task: dict[str, float]
    abstain_by_task: dict[str, float]
    truncated_by_task: dict[str, float]
    """Per task, the fraction of samples cut at the length limit (``finish_reason`` "length"): answers that never
    finished, whatever their reward."""
    tools: dict[str, list[str]]
    """Per task, the tools that scored it (``name vN``, `` (shadow)`` for weight 0)."""
    train: dict[str, float] = field(default_factory=dict)
    """The trainer's metrics of the update (none without rows) and the actor's timings (``weights_s``,
    ``retire_s``)."""

    @property
    def step_s(self) -> float:
        return self.t_end - self.t_start

    @property
    def staleness_max(self) -> int:
        return max(self.staleness_hist) if self.staleness_hist else 0

    @property
    def tokens_per_s(self) -> float | None:
        """Trained tokens per second of the trainer's own step time; None without an update."""
        tokens, seconds = self.train.get("tokens"), self.train.get("step_s")
        return tokens / seconds if tokens and seconds else None

    def to_dict(self) -> dict[str, Any]:
        """The ``metrics.jsonl`` line: the trainer's metrics first (its ``step`` as ``optimizer_step``),
        then the step's, ``reward/<task>``, ``abstain/<task>``, ``tools`` and ``tokens_per_s`` last."""
        out: dict[str, Any] = {("optimizer_step" if k == "step" else k): v for k, v in self.train.items()}
        out.update(
            step=self.step,
            version=self.version,
            t_start=self.t_start,
            t_end=self.t_end,
            step_s=self.step_s,
            groups=self.groups,
            samples=self.samples,
            trained_rows=self.trained_rows,
            groups_with_signal=self.groups_with_signal,
            abstain_frac=self.abstain_frac,
            reward_mean=self.reward_mean,
            staleness_hist={str(k): v for k, v in sorted(self.staleness_hist.items())},
            staleness_max=self.staleness_max,
            samples_created_min=self.samples_created_min,
            samples_created_max=self.samples_created_max,
            samples_generated_during_prev_step=self.samples_generated_during_prev_step,
            consumed_prompts=self.consumed_prompts,
            dropped_prompts=self.dropped_prompts,
        )
        out.update({f"reward/{t}": v for t, v in sorted(self.reward_by_task.items())})
        out.update({f"abstain/{t}": v for t, v in sorted(self.abstain_by_task.items())})
        out.update({f"truncated/{t}": v for t, v in sorted(self.truncated_by_task.items())})
        out["tools"] = {t: list(v) for t, v in sorted(self.tools.items())}
        if (tps := self.tokens_per_s) is not None:
            out["tokens_per_s"] = tps
        return out


@dataclass(slots=True)
class StepPlan:
    """What :func:`plan_step` read from the groups: the rows to train on and the counts for the record."""

    rows: TrainRows
    """Trainable rows, already cut to a multiple of the world size."""
    staleness_mode: str
    groups: int
    samples: int
    abstained: int
    groups_with_signal: int
    staleness_hist: dict[int, int]
    created: list[float]
    """Creation time of every sample."""
    during_prev: int
    """Samples created while the previous step ran."""
    rewards_by_task: dict[str, list[float]]
    """Combined scores of the unmasked samples, per task."""
    counts_by_task: dict[str, tuple[int, int]]
    """(samples, abstained), per task."""
    truncated_by_task: dict[str, int]
    """Samples cut at the length limit, per task."""
    tools: dict[str, set[str]]
    unusable: list[SampledGroup]
    """Groups not trained on: sampled with processed log-probs, carrying raw ones."""

    def batch(self) -> PolicyBatch | None:
        """The padded batch of :attr:`rows` (None without rows); staleness weights only in ``decay`` mode."""
        if not self.rows:
            return None
        from rlar.learn.batch import PolicyBatch

        r = self.rows
        return PolicyBatch.from_samples(
            r.prompts,
            r.responses,
            r.logprobs,
            r.advantages,
            r.weights if self.staleness_mode == "decay" else None,
            pad_id=0,
            temperatures=r.temperatures,
        )

    def record(
        self,
        *,
        step: int,
        version: int,
        t_start: float,
        t_end: float,
        consumed: int,
        dropped: int,
        train: dict[str, float] | None = None,
    ) -> StepRecord:
        """The step's record once trained (``train``: the trainer's metrics and the actor's timings)."""
        all_rewards = [x for v in self.rewards_by_task.values() for x in v]
        return StepRecord(
            step=step,
            version=version,
            t_start=t_start,
            t_end=t_end,
            groups=self.groups,
            samples=self.samples,
            trained_rows=len(self.rows),
            groups_with_signal=self.groups_with_signal,
            abstain_frac=self.abstained / max(1, self.samples),
            reward_mean=sum(all_rewards) / len(all_rewards) if all_rewards else None,
            staleness_hist=dict(self.staleness_hist),
            samples_created_min=min(self.created),
            samples_created_max=max(self.created),
            samples_generated_during_prev_step=self.during_prev,
            consumed_prompts=consumed,
            dropped_prompts=dropped,
            reward_by_task={t: sum(v) / len(v) for t, v in self.rewards_by_task.items()},
            abstain_by_task={t: n[1] / n[0] for t, n in self.counts_by_task.items() if n[0]},
            truncated_by_task={
                t: self.truncated_by_task.get(t, 0) / n[0] for t, n in self.counts_by_task.items() if n[0]
            },
            tools={t: sorted(v) for t, v in self.tools.items()},
            train=dict(train or {}),
        )


def plan_step(
    groups: Sequence[SampledGroup],
    *,
    version: int,
    grpo: GRPOConfig,
    skip_zero_advantage: bool = True,
    world_size: int = 1,
    prev_interval: tuple[float, float] | None = None,
) -> StepPlan:
    """Combine rewards, compute advantages and gather the rows of one step (see the module docstring).

    ``version`` is the learner's policy version before the step (a group's lag is measured from it);
    ``prev_interval`` the (start, end) of the previous step, for ``samples_generated_during_prev_step``.
    ``groups`` must be complete (every sample in, every tool's result for each:
    :meth:`rlar.wire.groups.Group.complete`) and non-empty.
    """
    if not groups:
        raise ValueError("a step needs at least one group")
    if world_size < 1:
        raise ValueError(f"world_size must be >= 1, got {world_size}")
    rows = TrainRows()
    rewards_by_task: dict[str, list[float]] = collections.defaultdict(list)
    counts: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])  # samples, abstained
    truncated: collections.Counter[str] = collections.Counter()
    tools: dict[str, set[str]] = collections.defaultdict(set)
    stale_hist: collections.Counter[int] = collections.Counter()
    abstained = total = with_signal = during_prev = 0
    created: list[float] = []
    unusable: list[SampledGroup] = []
    for g in groups:
        samples = [g.completions[i] for i in sorted(g.completions)]
        tools[g.task].update(
            f"{tool} v{r.version}" + ("" if r.weight > 0 else " (shadow)") for tool, r in g.rewards.items()
        )
        scores, mask = [], []
        for c in samples:
            results = [
                (r.weight, r.items[c.index].status, r.items[c.index].score)
                for r in g.rewards.values()
                if c.index in r.items
            ]
            status, score = combine(results)
            counts[g.task][0] += 1
            truncated[g.task] += c.finish_reason == "length"
            counts[g.task][1] += status != "ok"
            mask.append(status == "ok")
            scores.append(score if score is not None else 0.0)
            if status == "ok":
                rewards_by_task[g.task].append(float(score or 0.0))
        created += [g.created_at] * len(samples)
        if prev_interval and prev_interval[0] <= g.created_at <= prev_interval[1]:
            during_prev += len(samples)
        total += len(samples)
        abstained += mask.count(False)
        adv = advantages(scores, mask, normalize_std=grpo.normalize_std, eps=grpo.adv_eps)
        with_signal += int(any(a != 0.0 for a in adv))
        lag = max(0, version - g.policy_version)
        temperature = learner_temperature(g.sampling)
        trainable = logprobs_usable(g.sampling)
        if not trainable:
            unusable.append(g)
        weight = staleness_weight(lag, grpo.max_staleness, grpo.staleness_mode)
        for c, a, ok in zip(samples, adv, mask, strict=True):
            stale_hist[lag] += 1
            if not trainable or not ok or not c.token_ids or (skip_zero_advantage and a == 0.0):
                continue
            rows.append(g.prompt_token_ids, c.token_ids, c.logprobs, a, weight, temperature)
    return StepPlan(
        rows=rows.head(len(rows) - len(rows) % world_size),
        staleness_mode=grpo.staleness_mode,
        groups=len(groups),
        samples=total,
        abstained=abstained,
        groups_with_signal=with_signal,
        staleness_hist=dict(stale_hist),
        created=created,
        during_prev=during_prev,
        rewards_by_task=dict(rewards_by_task),
        counts_by_task={t: (n[0], n[1]) for t, n in counts.items()},
        truncated_by_task=dict(truncated),
        tools=dict(tools),
        unusable=unusable,
    )
