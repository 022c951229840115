"""A deterministic, resumable interleaving of several task datasets.

Algorithm
- A mix epoch has ``epoch_size`` slots (default: the total number of records). Task ``i`` gets a quota
  ``n_i`` of them by largest-remainder apportionment of its weight (default weight: its size, so with no
  weights every record appears exactly once per mix epoch); a task with a positive weight gets at least one.
- The slots of mix epoch ``e`` are interleaved evenly but not rigidly: task ``i``'s ``k``-th slot gets the
  key ``(k + u) / n_i`` with ``u`` uniform in [0, 1) from a generator keyed by (seed, e, task), and slots
  are visited in key order (ties by task position). Every prefix of the epoch is thus close to the quotas.
- Each task draws from its own stream: the concatenation of its per-epoch permutations
  ``dataset.order(0, seed), dataset.order(1, seed), ...``. Task ``i``'s draw at mix position ``(e, p)`` is
  stream element ``e * n_i + (its slots before p in epoch e)``. So within any pass over a task no record
  repeats and none is skipped, whatever the quotas; an over-weighted task simply passes more often.
- The cursor is ``(epoch, position)`` of the next item plus a fingerprint of the mix (names, sizes,
  quotas, seed). Rebuilding the same mix from a cursor continues exactly where it stopped.

Limits: a mix epoch's schedule is built in memory when the epoch starts (about 1 s per million slots);
one instance is not thread-safe.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rlar.tasks.base import Rng, TaskDataset, TaskRecord, TaskSpec


@dataclass(frozen=True, slots=True)
class MixCursor:
    """Where a mix stands: the next item is slot ``position`` of mix epoch ``epoch``.

    ``fingerprint`` identifies the mix it came from ("" skips the check).
    """

    epoch: int = 0
    position: int = 0
    fingerprint: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "position": self.position, "fingerprint": self.fingerprint}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> MixCursor:
        return cls(
            epoch=int(d["epoch"]), position=int(d["position"]), fingerprint=str(d.get("fingerprint", ""))
        )


@dataclass(frozen=True, slots=True)
class MixItem:
    """One draw: the task's spec, the record, the task's own pass number, and the record's index in it.

    Unpacks like a tuple: ``task, record, epoch, index = item``.
    """

    task: TaskSpec
    record: TaskRecord
    epoch: int
    index: int

    def __iter__(self) -> Iterator[Any]:
        return iter((self.task, self.record, self.epoch, self.index))


def apportion(total: int, weights: Sequence[float]) -> list[int]:
    """Split ``total`` into integer parts proportional to ``weights`` (largest remainder, ties to the
    earlier weight); every part is then raised to at least 1, so the sum can exceed ``total``."""
    wsum = float(sum(weights))
    exact = [total * w / wsum for w in weights]
    parts = [int(x) for x in exact]
    short = total - sum(parts)
    by_remainder = sorted(range(len(weights)), key=lambda i: (-(exact[i] - parts[i]), i))
    for i in by_remainder[:short]:
        parts[i] += 1
    return [max(1, p) for p in parts]


class TaskMix:
    """Interleave ``datasets`` by ``weights``; iterate forever (``next``, ``take``), resume from ``cursor``.

    ``datasets`` may be a sequence (names must be unique) or a name -> dataset mapping; ``weights`` a
    matching sequence or mapping of positive numbers (default: dataset sizes).
    """

    def __init__(
        self,
        datasets: Sequence[TaskDataset] | Mapping[str, TaskDataset],
        weights: Sequence[float] | Mapping[str, float] | None = None,
        seed: int = 0,
        *,
        epoch_size: int | None = None,
        cursor: MixCursor | None = None,
    ) -> None:
        self.datasets: list[TaskDataset] = list(
            datasets.values() if isinstance(datasets, Mapping) else datasets
        )
        if not self.datasets:
            raise ValueError("TaskMix needs at least one dataset")
        names = [ds.name for ds in self.datasets]
        if len(set(names)) != len(names):
            raise ValueError(f"TaskMix task names must be unique, got {names}")
        for ds in self.datasets:
            if len(ds) == 0:
                raise ValueError(f"task {ds.name!r} has no records")
        if weights is None:
            w = [float(len(ds)) for ds in self.datasets]
        elif isinstance(weights, Mapping):
            missing = set(names) - set(weights)
            if missing or set(weights) - set(names):
                raise ValueError(f"weights must name exactly the tasks {names}, got {sorted(weights)}")
            w = [float(weights[n]) for n in names]
        else:
            w = [float(x) for x in weights]
            if len(w) != len(names):
                raise ValueError(f"got {len(w)} weights for {len(names)} tasks")
        if any(not x > 0 for x in w):
            raise ValueError(f"weights must be positive, got {w}")
        if epoch_size is not None and epoch_size < 1:
            raise ValueError(f"epoch_size must be >= 1, got {epoch_size}")
        self.seed = seed
        self.weights = w
        self.quotas = apportion(epoch_size or sum(len(ds) for ds in self.datasets), w)
        self.epoch_size = sum(self.quotas)
        spec = repr((seed, [(ds.name, len(ds), q) for ds, q in zip(self.datasets, self.quotas, strict=True)]))
        self.fingerprint = hashlib.sha256(spec.encode()).hexdigest()[:16]
        self._schedule_epoch = -1
        self._schedule: list[int] = []
        self._orders: dict[int, tuple[int, list[int]]] = {}  # task -> (its pass, its permutation)
        self.seek(cursor or MixCursor())

    @property
    def cursor(self) -> MixCursor:
        """The position of the next item (serialise it with ``to_dict``)."""
        return MixCursor(self._epoch, self._position, self.fingerprint)

    def quota_by_name(self) -> dict[str, int]:
        return {ds.name: q for ds, q in zip(self.datasets, self.quotas, strict=True)}

    def seek(self, cursor: MixCursor) -> None:
        """Move to ``cursor``; ``ValueError`` if it is out of range or from a different mix."""
        if cursor.fingerprint and cursor.fingerprint != self.fingerprint:
            raise ValueError(
                f"cursor fingerprint {cursor.fingerprint} is from a different mix (this one is {self.fingerprint}):"
                " tasks, sizes, weights, epoch_size or seed changed"
            )
        if cursor.epoch < 0 or not 0 <= cursor.position < self.epoch_size:
            raise ValueError(f"cursor {cursor} out of range (epoch_size {self.epoch_size})")
        self._epoch, self._position = cursor.epoch, cursor.position
        schedule = self._schedule_for(cursor.epoch)
        self._counts = [0] * len(self.datasets)
        for i in schedule[: cursor.position]:
            self._counts[i] += 1

    def _schedule_for(self, epoch: int) -> list[int]:
        if epoch != self._schedule_epoch:
            keyed: list[tuple[float, int]] = []
            for i, (ds, quota) in enumerate(zip(self.datasets, self.quotas, strict=True)):
                rng = Rng("mix", self.seed, epoch, ds.name)
                keyed.extend(((k + rng.uniform()) / quota, i) for k in range(quota))
            keyed.sort()
            self._schedule = [i for _, i in keyed]
            self._schedule_epoch = epoch
        return self._schedule

    def _order(self, task: int, task_epoch: int) -> list[int]:
        cached = self._orders.get(task)
        if cached is None or cached[0] != task_epoch:
            cached = (task_epoch, self.datasets[task].order(task_epoch, self.seed))
            self._orders[task] = cached
        return cached[1]

    def __iter__(self) -> Iterator[MixItem]:
        return self

    def __next__(self) -> MixItem:
        schedule = self._schedule_for(self._epoch)
        task = schedule[self._position]
        ds = self.datasets[task]
        stream = self._epoch * self.quotas[task] + self._counts[task]
        task_epoch, offset = divmod(stream, len(ds))
        index = self._order(task, task_epoch)[offset]
        self._counts[task] += 1
        self._position += 1
        if self._position == self.epoch_size:
            self._epoch += 1
            self._position = 0
            self._counts = [0] * len(self.datasets)
        return MixItem(ds.spec, ds.records[index], task_epoch, index)

    def take(self, n: int) -> list[MixItem]:
        """The next ``n`` items."""
        return [next(self) for _ in range(n)]
