"""GPU placement: which devices each actor replica sees, checked against the machine before anything starts.

The run document's ``[placement]`` section gives, per actor kind, GPUs per replica and optionally the
device ids (``[placement.rollout] gpus_per_replica = 2``, ``[placement.learner] device_ids = [0, 1]``).
:func:`plan` turns it and the replica counts into one :class:`Assignment` per replica: explicit ids are
split among a kind's replicas in order, the others get the lowest free devices. The supervisor starts each
child with its ``CUDA_VISIBLE_DEVICES`` (:meth:`Assignment.env`; a kind placed with 0 GPUs gets an empty one,
so it cannot grab a GPU by accident; kinds not in the section inherit the parent's). A learner replica with
several GPUs runs under ``torch.distributed.run`` (one rank per GPU; DeepSpeed ZeRO over them). A vLLM
rollout must have as many GPUs per replica as its ``tensor_parallel_size``.

``rlar plan --config FILE`` prints the placement, the learner's memory estimate and the rollout's weights
and KV cache per GPU, and checks the GPUs needed against those present (``nvidia-smi``, else torch).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, create_model

from rlar.config import ConfigError
from rlar.kinds import gpu_kinds

__all__ = [
    "Assignment",
    "KindPlacement",
    "PlacementError",
    "PlacementSection",
    "detect_gpus",
    "from_doc",
    "plan",
]


class PlacementError(ConfigError):
    """The placement cannot be satisfied (overlapping ids, too few GPUs, a replica count that does not fit)."""


class KindPlacement(BaseModel):
    """Devices for the replicas of one actor kind."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    gpus_per_replica: int = Field(1, ge=0)
    """GPUs each replica sees (0: none — its CUDA_VISIBLE_DEVICES is empty). A learner replica with several
    runs one DeepSpeed rank per GPU; a vLLM rollout needs as many as its engine.tensor_parallel_size."""

    device_ids: list[int] | None = None
    """The kind's devices, split among its replicas in order (replicas × gpus_per_replica ids); None: the
    lowest devices no other kind was given."""


class _Placement(BaseModel):
    """Which GPUs each actor kind gets; kinds not named here inherit the parent's CUDA_VISIBLE_DEVICES."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    def kinds(self) -> dict[str, KindPlacement]:
        return {k: v for k in type(self).model_fields if (v := getattr(self, k)) is not None}


# One optional table per GPU-eligible kind of the table of actor kinds, in the order they get free devices.
PlacementSection: type[_Placement] = create_model(
    "PlacementSection",
    __base__=_Placement,
    __doc__=_Placement.__doc__,
    __module__=__name__,
    **{k.name: (KindPlacement | None, Field(None, description=k.gpus)) for k in gpu_kinds()},  # type: ignore[call-overload]
)


@dataclass(frozen=True, slots=True)
class Assignment:
    kind: str
    index: int
    devices: tuple[int, ...]

    @property
    def name(self) -> str:
        return f"{self.kind}-{self.index}"

    def env(self) -> dict[str, str]:
        return {"CUDA_VISIBLE_DEVICES": ",".join(map(str, self.devices))}

    def ranks(self) -> int:
        """Processes to launch: one per GPU for a multi-GPU learner, else one."""
        return len(self.devices) if self.kind == "learner" and len(self.devices) > 1 else 1


def plan(section: _Placement, replicas: Mapping[str, int], gpus: int | None = None) -> list[Assignment]:
    """One assignment per replica of every kind in ``section`` that runs (``replicas``: kind → count).
    ``gpus``: devices present (None: not checked). Raises :class:`PlacementError`."""
    placed = {k: p for k, p in section.kinds().items() if replicas.get(k, 0) > 0}
    taken: dict[int, str] = {}
    for kind, p in placed.items():
        if p.device_ids is None:
            continue
        want = replicas[kind] * p.gpus_per_replica
        if len(p.device_ids) != want:
            raise PlacementError(
                f"[placement.{kind}] device_ids has {len(p.device_ids)} ids, but {replicas[kind]} "
                f"replicas × {p.gpus_per_replica} GPUs need {want}"
            )
        for d in p.device_ids:
            if d < 0 or d in taken:
                raise PlacementError(
                    f"[placement.{kind}] device {d} is "
                    + ("negative" if d < 0 else f"also given to {taken[d]}")
                )
            taken[d] = kind
    free = (d for d in range(1 << 16) if d not in taken)
    out: list[Assignment] = []
    for kind, p in placed.items():
        ids = (
            list(p.device_ids)
            if p.device_ids is not None
            else [next(free) for _ in range(replicas[kind] * p.gpus_per_replica)]
        )
        for i in range(replicas[kind]):
            out.append(Assignment(kind, i, tuple(ids[i * p.gpus_per_replica : (i + 1) * p.gpus_per_replica])))
    used = sorted({d for a in out for d in a.devices})
    if gpus is not None and used and used[-1] >= gpus:
        raise PlacementError(
            f"the placement uses GPUs {used} ({len(used)} in all, up to id {used[-1]}), but this "
            f"machine has {gpus}"
        )
    return out


def detect_gpus(timeout_s: float = 10.0) -> tuple[int, str]:
    """(GPUs present, how they were counted): ``nvidia-smi -L``, else torch, else 0."""
    if shutil.which("nvidia-smi"):
        try:
            res = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=timeout_s)
            if res.returncode == 0:
                return sum(1 for line in res.stdout.splitlines() if line.startswith("GPU ")), "nvidia-smi"
        except (OSError, subprocess.TimeoutExpired):
            pass
    try:
        import torch

        return int(torch.cuda.device_count()), "torch"
    except ImportError:
        return 0, "none (no nvidia-smi, no torch)"


def from_doc(
    doc: Mapping[str, object], replicas: Mapping[str, int], *, check: bool = True
) -> list[Assignment]:
    """The assignments of a validated run document's ``[placement]`` (none without one), checked against the
    GPUs present when ``check`` and against the rollout engine's tensor parallelism."""
    raw = doc.get("placement")
    if not raw:
        return []
    section = PlacementSection.model_validate(raw)
    rollout = doc.get("rollout")
    engine = rollout.get("engine", {}) if isinstance(rollout, Mapping) else {}
    vllm = isinstance(engine, Mapping) and engine.get("kind") == "vllm"
    tp = int(engine.get("tensor_parallel_size", 1)) if vllm else 0
    placed = section.kinds().get("rollout")
    if vllm and placed is not None and replicas.get("rollout", 0) and tp != placed.gpus_per_replica:
        raise PlacementError(
            f"[rollout] engine.tensor_parallel_size = {tp}, but [placement.rollout] gives each "
            f"replica {placed.gpus_per_replica} GPUs: make them equal"
        )
    return plan(section, replicas, detect_gpus()[0] if check else None)
