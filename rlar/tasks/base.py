"""The task model: what a task is (``TaskSpec``), one query of it (``TaskRecord``), and a dataset of them.

Contracts
- ``TaskSpec`` and ``TaskRecord`` convert to and from plain dicts (``to_dict`` / ``from_dict``) holding only
  str, int, float, bool, None, list and dict with str keys, so they pack with msgpack unchanged.
- A record's ``prompt`` is either a plain string (completion-style, what the tiny byte-level demo policy
  reads) or a list of chat messages ``{"role": str, "content": str}`` (rendered by the policy's chat
  template). Messages keep only ``role`` and ``content``.
- A record's ``id`` is a string, stable across runs, and unique within its task; ``TaskDataset`` refuses
  duplicates.
- ``TaskDataset.order(epoch, seed)`` is a permutation of ``range(len(dataset))`` that depends only on
  (task name, epoch, seed) and the dataset length — not on the Python version or hash randomisation —
  because it is computed with our own splitmix64 generator (``Rng``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

Message = dict[str, str]
Prompt = str | list[Message]

_MASK64 = (1 << 64) - 1


class Rng:
    """A small deterministic generator (splitmix64) keyed by any parts, e.g. ``Rng("arith", seed)``.

    Python's ``random.shuffle`` is not promised to stay the same across versions; this one is ours, so
    generated data and orders stay reproducible. Not for cryptography.
    """

    __slots__ = ("_state",)

    def __init__(self, *key: object) -> None:
        digest = hashlib.sha256("\x1f".join(repr(k) for k in key).encode()).digest()
        self._state = int.from_bytes(digest[:8], "little")

    def next_u64(self) -> int:
        self._state = (self._state + 0x9E3779B97F4A7C15) & _MASK64
        z = self._state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """Uniform integer in ``[0, n)``; rejection sampling, so there is no modulo bias."""
        if n <= 0:
            raise ValueError(f"below() needs n > 0, got {n}")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            x = self.next_u64()
            if x < limit:
                return x % n

    def randint(self, lo: int, hi: int) -> int:
        """Uniform integer in ``[lo, hi]`` (both ends included)."""
        return lo + self.below(hi - lo + 1)

    def uniform(self) -> float:
        """Uniform float in ``[0, 1)`` with 53 random bits."""
        return (self.next_u64() >> 11) / float(1 << 53)

    def choice(self, seq: Sequence[Any]) -> Any:
        return seq[self.below(len(seq))]

    def shuffle(self, items: list[Any]) -> None:
        """Fisher–Yates, in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


def is_plain(value: Any) -> bool:
    """True when ``value`` is made only of msgpack-native plain types (dict keys must be str)."""
    if value is None or isinstance(value, str | bool | int | float | bytes):
        return True
    if isinstance(value, list | tuple):
        return all(is_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and is_plain(v) for k, v in value.items())
    return False


def check_prompt(prompt: Any) -> Prompt:
    """Validate a prompt and return it in canonical form (messages reduced to ``role`` and ``content``).

    Raises ``ValueError`` with the reason; loaders wrap it with the file and line.
    """
    if isinstance(prompt, str):
        if not prompt.strip():
            raise ValueError("prompt is empty")
        return prompt
    if isinstance(prompt, list | tuple):
        if not prompt:
            raise ValueError("prompt is an empty message list")
        messages: list[Message] = []
        for i, msg in enumerate(prompt):
            if not isinstance(msg, Mapping):
                raise ValueError(f"prompt message {i} is {type(msg).__name__}, expected a dict")
            role, content = msg.get("role"), msg.get("content")
            if not isinstance(role, str) or not role:
                raise ValueError(f"prompt message {i} has no string 'role'")
            if not isinstance(content, str):
                raise ValueError(f"prompt message {i} has no string 'content'")
            messages.append({"role": role, "content": content})
        return messages
    raise ValueError(
        f"prompt is {type(prompt).__name__}, expected str or a list of {{role, content}} messages"
    )


def query_text(prompt: Any) -> str:
    """The text of a prompt: a string as is; for chat messages, the last user message (no user message: all
    contents, one a line); anything else as ``str()``."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list):
        users = [m.get("content", "") for m in prompt if isinstance(m, Mapping) and m.get("role") == "user"]
        if users:
            return str(users[-1])
        return "\n".join(str(m.get("content", "")) for m in prompt if isinstance(m, Mapping))
    return str(prompt)


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """What a task is, for the router, the reward tools and the feeder.

    ``description`` says in natural language what a good answer is (the router and the reward-synthesis
    agent read it). ``default_tools`` are (tool name, weight) pairs from the reward toolset, used when no
    router runs; weights need not sum to 1 (the consumer normalises).
    """

    name: str
    domain: str  # e.g. math | code | translation | chat | string
    task_type: (
        str  # e.g. arithmetic | word_problem | code_unit_tests | translation | open_chat | copy | reverse
    )
    description: str
    answer_format: str  # e.g. number | code | text | bullets
    default_tools: tuple[tuple[str, float], ...] = ()
    data_source: str = ""
    split: str = "train"

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("TaskSpec.name is empty")
        tools = tuple((str(name), float(weight)) for name, weight in self.default_tools)
        for name, weight in tools:
            if not name or weight < 0:
                raise ValueError(f"TaskSpec {self.name!r}: bad default tool ({name!r}, {weight})")
        object.__setattr__(self, "default_tools", tools)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "domain": self.domain,
            "task_type": self.task_type,
            "description": self.description,
            "answer_format": self.answer_format,
            "default_tools": [[name, weight] for name, weight in self.default_tools],
            "data_source": self.data_source,
            "split": self.split,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TaskSpec:
        return cls(
            name=d["name"],
            domain=d["domain"],
            task_type=d["task_type"],
            description=d["description"],
            answer_format=d["answer_format"],
            default_tools=tuple((name, weight) for name, weight in d.get("default_tools", ())),
            data_source=d.get("data_source", ""),
            split=d.get("split", "train"),
        )

    def with_overrides(self, **overrides: Any) -> TaskSpec:
        """A copy with the given fields replaced; ``None`` values are ignored (meaning "keep")."""
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """One query of a task: its prompt, the reference the reward tools compare against, and metadata.

    ``reference`` is whatever the task's tools need: a string, a list of acceptable strings, ``None``
    (open chat), or a dict (code: ``{"tests", "entry_point", "style": "humaneval", ...}``). ``metadata``
    carries per-record facts such as format rules or the source row's data_source.
    """

    id: str
    prompt: Prompt
    reference: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise ValueError(f"TaskRecord.id must be a non-empty str, got {self.id!r}")
        object.__setattr__(self, "prompt", check_prompt(self.prompt))
        if not is_plain(self.reference):
            raise ValueError(f"record {self.id!r}: reference is not made of plain (msgpack) types")
        if not isinstance(self.metadata, dict) or not is_plain(self.metadata):
            raise ValueError(f"record {self.id!r}: metadata is not a dict of plain (msgpack) types")

    def messages(self) -> list[Message]:
        """The prompt as chat messages (a string prompt becomes one user message)."""
        if isinstance(self.prompt, str):
            return [{"role": "user", "content": self.prompt}]
        return [dict(m) for m in self.prompt]

    def to_dict(self) -> dict[str, Any]:
        prompt: Any = self.prompt if isinstance(self.prompt, str) else [dict(m) for m in self.prompt]
        return {"id": self.id, "prompt": prompt, "reference": self.reference, "metadata": self.metadata}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TaskRecord:
        return cls(
            id=d["id"],
            prompt=d["prompt"],
            reference=d.get("reference"),
            metadata=dict(d.get("metadata") or {}),
        )


class TaskDataset(Sequence[TaskRecord]):
    """A task's spec and its records, in source order, with deterministic per-epoch shuffles.

    Records are held in a tuple; the dataset is immutable. ``order(epoch, seed)`` is cached for the last
    (epoch, seed) asked, since consumers walk one epoch at a time.
    """

    def __init__(
        self, spec: TaskSpec, records: Sequence[TaskRecord], locations: Mapping[str, str] | None = None
    ) -> None:
        self.spec = spec
        self.records: tuple[TaskRecord, ...] = tuple(records)
        self.locations: dict[str, str] = dict(locations or {})
        """Record id → where it was read (``"/data/cap.jsonl, line 7"``), for file sources."""
        self._by_id: dict[str, int] = {}
        for i, rec in enumerate(self.records):
            if rec.id in self._by_id:
                raise ValueError(
                    f"task {spec.name!r}: duplicate record id {rec.id!r} at positions {self._by_id[rec.id]} and {i}"
                )
            self._by_id[rec.id] = i
        self._order_cache: tuple[int, int, list[int]] | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    def where(self, record: TaskRecord) -> str:
        """Where ``record`` was read (file and line or row), else its id."""
        return self.locations.get(record.id, f"record {record.id!r}")

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, i: int) -> TaskRecord:  # type: ignore[override]
        return self.records[i]

    def __iter__(self) -> Iterator[TaskRecord]:
        return iter(self.records)

    def __repr__(self) -> str:
        return f"TaskDataset({self.spec.name!r}, split={self.spec.split!r}, n={len(self)})"

    def get(self, record_id: str) -> TaskRecord:
        """The record with this id; ``KeyError`` if there is none."""
        return self.records[self._by_id[record_id]]

    def order(self, epoch: int, seed: int = 0) -> list[int]:
        """The visiting order of epoch ``epoch``: a permutation of ``range(len(self))``.

        Depends only on (task name, epoch, seed, length). Returns a fresh list the caller may keep.
        """
        if epoch < 0:
            raise ValueError(f"epoch must be >= 0, got {epoch}")
        cached = self._order_cache
        if cached is not None and cached[0] == epoch and cached[1] == seed:
            return list(cached[2])
        perm = list(range(len(self.records)))
        Rng("order", self.spec.name, seed, epoch).shuffle(perm)
        self._order_cache = (epoch, seed, perm)
        return list(perm)

    def head(self, n: int) -> TaskDataset:
        """The first ``n`` records (source order), same spec."""
        return TaskDataset(self.spec, self.records[:n], self.locations)

    def with_spec(self, spec: TaskSpec) -> TaskDataset:
        return TaskDataset(spec, self.records, self.locations)

    def to_dict(self) -> dict[str, Any]:
        return {"spec": self.spec.to_dict(), "records": [r.to_dict() for r in self.records]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TaskDataset:
        return cls(TaskSpec.from_dict(d["spec"]), [TaskRecord.from_dict(r) for r in d["records"]])
