"""Weights over ``torch.distributed``: the learner broadcasts each version to the rollout engines, the bus
carries only the announcement (as verl, PipelineRL and prime-rl do).

The group is its own: a ``TCPStore`` hosted by the learner (``address``) and a process group built directly on
it (``ProcessGroupGloo`` on CPU, ``ProcessGroupNCCL`` on GPUs), so it never touches the default group the
learner's DeepSpeed ranks use. Rank 0 is the learner; the ``receivers`` rollout engines are ranks 1…N.

One version on the wire: a header (``[version, manifest bytes, buffers]``), the manifest (JSON: per tensor its
name, dtype, shape and place in a buffer), then one flat buffer per dtype — a bf16 model travels as bf16,
nothing is up-cast. Receivers rebuild the tensors as views of those buffers.

Membership is fixed per group *epoch*. The learner forms epoch e in the background (the store key ``epoch``
tells receivers which one to join); until every receiver has joined, and after any failure (a receiver died:
the broadcast fails or times out), the learner publishes through its fallback route (a file or the object
store) and forms epoch e+1 for the receivers that come back. A receiver loops: join the current epoch, take
versions as they come (:meth:`WeightReceiver.latest`), and on any failure wait for the next epoch (or a new
store, after a learner restart).

Not covered: NCCL straight into vLLM's GPU workers (vLLM's ``collective_rpc`` weight-update hooks); here
the receiver is the rollout process, which then loads the tensors into its engine.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import logging
import sys
import threading
import time
import uuid
from collections.abc import Iterable
from typing import Any, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field

# torch is imported where used: heavy and optional (the CLI starts without it).

__all__ = ["BroadcastConfig", "WeightReceiver", "WeightSender", "broadcast_uri"]

log = logging.getLogger(__name__)

SCHEME = "broadcast://"


class BroadcastConfig(BaseModel):
    """The learner→rollouts weight group."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    address: str = "127.0.0.1:29650"
    """host:port of the TCPStore the learner hosts (reachable from every rollout)."""
    receivers: int = Field(1, ge=1)
    """Rollout engines in the group (ranks 1..receivers)."""
    backend: Literal["auto", "gloo", "nccl"] = "auto"
    """auto: nccl when CUDA is available, else gloo."""
    timeout_s: float = Field(60.0, gt=0)
    """Longest wait for a collective (forming the group, one broadcast)."""
    fallback: Literal["filesystem", "objstore"] = "filesystem"
    """Route of versions published while the group is not formed (or after it broke)."""


def broadcast_uri(address: str, epoch: int, version: int) -> str:
    return f"{SCHEME}{address}/e{epoch}/v{version}"


def _backend(cfg: BroadcastConfig) -> str:
    if cfg.backend != "auto":
        return cfg.backend
    return "nccl" if torch.cuda.is_available() else "gloo"


def _group(cfg: BroadcastConfig, store: Any, epoch: str, rank: int) -> Any:
    import torch.distributed as dist

    timeout = datetime.timedelta(seconds=cfg.timeout_s)
    prefixed = dist.PrefixStore(f"rlar-weights/{epoch}", store)
    world = cfg.receivers + 1
    if _backend(cfg) == "nccl":
        opts = dist.ProcessGroupNCCL.Options()
        opts._timeout = timeout
        return dist.ProcessGroupNCCL(prefixed, rank, world, opts)
    return dist.ProcessGroupGloo(prefixed, rank, world, timeout)


def _device(cfg: BroadcastConfig) -> torch.device:
    return (
        torch.device("cuda", torch.cuda.current_device()) if _backend(cfg) == "nccl" else torch.device("cpu")
    )


def _bcast(pg: Any, t: torch.Tensor) -> None:
    pg.broadcast([t]).wait()


def pack(named: Iterable[tuple[str, torch.Tensor]]) -> tuple[list[dict[str, Any]], list[torch.Tensor]]:
    """(manifest, one flat buffer per dtype) for a list of named tensors."""
    groups: dict[torch.dtype, list[torch.Tensor]] = {}
    manifest = []
    offsets: dict[torch.dtype, int] = {}
    for name, t in named:
        t = t.detach()
        flat = t.reshape(-1)
        buf = list(groups).index(t.dtype) if t.dtype in groups else len(groups)
        groups.setdefault(t.dtype, []).append(flat)
        off = offsets.get(t.dtype, 0)
        manifest.append(
            {
                "name": name,
                "dtype": str(t.dtype).removeprefix("torch."),
                "shape": list(t.shape),
                "buffer": buf,
                "offset": off,
                "numel": flat.numel(),
            }
        )
        offsets[t.dtype] = off + flat.numel()
    return manifest, [torch.cat(parts) for parts in groups.values()]


def unpack(manifest: list[dict[str, Any]], buffers: list[torch.Tensor]) -> list[tuple[str, torch.Tensor]]:
    return [
        (m["name"], buffers[m["buffer"]][m["offset"] : m["offset"] + m["numel"]].view(m["shape"]))
        for m in manifest
    ]


class WeightSender:
    """Rank 0 (the learner): hosts the store, forms the group in the background, broadcasts versions."""

    def __init__(self, cfg: BroadcastConfig) -> None:
        from torch.distributed import TCPStore

        self.cfg = cfg
        host, port = cfg.address.rsplit(":", 1)
        self.store = TCPStore(
            host,
            int(port),
            cfg.receivers + 1,
            is_master=True,
            timeout=datetime.timedelta(seconds=cfg.timeout_s),
            wait_for_workers=False,
        )
        self.epoch = -1
        self.session = uuid.uuid4().hex[:12]  # a restarted learner's epochs are new to the receivers
        self.pg: Any = None
        self._lock = threading.Lock()
        self._forming: threading.Thread | None = None
        self.sent = 0
        self.failures = 0
        self._form_next()

    def _form_next(self) -> None:
        """Start forming the next epoch's group in a thread (receivers join when they see the epoch)."""
        self.epoch += 1
        epoch = self.epoch
        self.store.set("epoch", f"{self.session}/{epoch}")

        def form() -> None:
            while True:
                try:
                    pg = _group(self.cfg, self.store, f"{self.session}/{epoch}", 0)
                    _bcast(pg, torch.zeros(1, dtype=torch.int64, device=_device(self.cfg)))  # everyone is in
                except Exception as exc:  # not every receiver came within the timeout: keep waiting
                    log.info("weight group epoch %d not formed yet (%s); retrying", epoch, exc)
                    if self.epoch != epoch:
                        return
                    continue
                with self._lock:
                    if self.epoch == epoch:
                        self.pg = pg
                        log.info("weight group epoch %d formed (%d receivers)", epoch, self.cfg.receivers)
                return

        self._forming = threading.Thread(target=form, name=f"weights-group-e{epoch}", daemon=True)
        self._forming.start()

    @property
    def ready(self) -> bool:
        return self.pg is not None

    def wait_ready(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while not self.ready and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.ready

    def send(self, version: int, named: Iterable[tuple[str, torch.Tensor]]) -> tuple[str, str, int] | None:
        """Broadcast one version (blocking); (uri, sha256 of the manifest, bytes) or None when the group is not
        formed or broke (the caller publishes through the fallback route; the next epoch is being formed)."""
        with self._lock:
            pg, epoch = self.pg, self.epoch
        if pg is None:
            return None
        manifest, buffers = pack(named)
        blob = json.dumps(manifest).encode()
        dev = _device(self.cfg)
        try:
            _bcast(pg, torch.tensor([version, len(blob), len(buffers)], dtype=torch.int64, device=dev))
            _bcast(pg, torch.frombuffer(bytearray(blob), dtype=torch.uint8).to(dev))
            for b in buffers:
                _bcast(pg, b.to(dev).contiguous())
        except Exception as exc:
            log.warning("weight broadcast of v%d failed (%s); forming a new group", version, exc)
            self.failures += 1
            with self._lock:
                if self.epoch == epoch:
                    self.pg = None
                    self._form_next()
            return None
        self.sent += 1
        nbytes = sum(b.numel() * b.element_size() for b in buffers)
        return broadcast_uri(self.cfg.address, epoch, version), hashlib.sha256(blob).hexdigest(), nbytes


class WeightReceiver:
    """Rank r of the group (a rollout engine): a thread joins and takes every version broadcast."""

    def __init__(self, cfg: BroadcastConfig, rank: int) -> None:
        if not 1 <= rank <= cfg.receivers:
            raise ValueError(f"receiver rank must be in 1..{cfg.receivers}, got {rank}")
        self.cfg = cfg
        self.rank = rank
        self._cond = threading.Condition()
        self._latest: tuple[int, str, list[tuple[str, torch.Tensor]]] | None = None
        self._stop = threading.Event()
        self.received = 0
        self._thread = threading.Thread(target=self._run, name=f"weights-receiver-{rank}", daemon=True)
        self._thread.start()

    def latest(
        self, min_version: int, timeout_s: float
    ) -> tuple[int, str, list[tuple[str, torch.Tensor]]] | None:
        """(version, manifest sha256, tensors) of the newest version received if it is ``min_version`` or
        newer, waiting up to ``timeout_s`` for it; else None."""
        with self._cond:
            self._cond.wait_for(
                lambda: self._latest is not None and self._latest[0] >= min_version, timeout_s
            )
            got = self._latest
        return got if got is not None and got[0] >= min_version else None

    def close(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        from torch.distributed import TCPStore

        host, port = self.cfg.address.rsplit(":", 1)
        timeout = datetime.timedelta(seconds=self.cfg.timeout_s)
        joined = ""
        while not self._stop.is_set():
            try:
                store = TCPStore(host, int(port), self.cfg.receivers + 1, is_master=False, timeout=timeout)
                epoch = store.get("epoch").decode()
                if epoch == joined:  # the group we were in broke: wait for the learner to announce the next
                    time.sleep(0.2)
                    continue
                pg = _group(self.cfg, store, epoch, self.rank)
                joined = epoch
                _bcast(pg, torch.zeros(1, dtype=torch.int64, device=_device(self.cfg)))
                self._receive(pg)
            except Exception as exc:
                if not self._stop.is_set():
                    log.info("weight receiver %d: %s; rejoining", self.rank, exc)
                    time.sleep(0.5)

    def _receive(self, pg: Any) -> None:
        dev = _device(self.cfg)
        while not self._stop.is_set():
            header = torch.zeros(3, dtype=torch.int64, device=dev)
            _bcast(pg, header)
            version, mlen, nbuf = (int(x) for x in header.tolist())
            blob = torch.zeros(mlen, dtype=torch.uint8, device=dev)
            _bcast(pg, blob)
            raw = bytes(blob.cpu().numpy().tobytes())
            manifest = json.loads(raw)
            sizes: dict[int, tuple[str, int]] = {}
            for m in manifest:
                end = m["offset"] + m["numel"]
                sizes[m["buffer"]] = (m["dtype"], max(end, sizes.get(m["buffer"], ("", 0))[1]))
            buffers = []
            for i in range(nbuf):
                dtype, numel = sizes[i]
                b = torch.empty(numel, dtype=getattr(torch, dtype), device=dev)
                _bcast(pg, b)
                buffers.append(b)
            with self._cond:
                self._latest = (version, hashlib.sha256(raw).hexdigest(), unpack(manifest, buffers))
                self.received += 1
                self._cond.notify_all()


def main() -> None:
    """``python -m rlar.policy.broadcast --address H:P --receivers N --rank R``: a receiver that prints one JSON
    line per version it takes (for benchmarks and tests)."""

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--address", required=True)
    ap.add_argument("--receivers", type=int, default=1)
    ap.add_argument("--rank", type=int, default=1)
    ap.add_argument("--timeout-s", type=float, default=60.0)
    a = ap.parse_args()
    torch.set_num_threads(1)
    rx = WeightReceiver(
        BroadcastConfig(address=a.address, receivers=a.receivers, timeout_s=a.timeout_s), a.rank
    )
    print(json.dumps({"ready": True}), flush=True)
    seen = 0
    while True:
        got = rx.latest(seen + 1, 3600.0)
        if got is None:
            continue
        version, sha, tensors = got
        seen = version
        nbytes = sum(t.numel() * t.element_size() for _, t in tensors)
        dtypes = sorted({str(t.dtype).removeprefix("torch.") for _, t in tensors})
        sys.stdout.write(
            json.dumps(
                {"version": version, "sha256": sha, "bytes": nbytes, "dtypes": dtypes, "at": time.time()}
            )
            + "\n"
        )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
