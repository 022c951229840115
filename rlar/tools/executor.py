"""Safe execution of reward tools: killable worker processes, hard deadlines, validation and a cache.

``ToolExecutor.score_batch(spec, inputs)`` returns one ``ToolResult`` per input and never raises for a
tool's misbehaviour:

- CPU tools run in worker processes (``python -m rlar.tools._worker``, msgpack frames over pipes; see that
  module). A deadline is enforced by killing the worker's process group — not by cancelling a task, which
  cannot interrupt a regex backtracking or a C extension — and the next call gets a fresh worker. The
  timed-out input gets ``abstain`` "timeout after Xs"; for non-batched tools the remaining inputs of the
  request are re-sent to the fresh worker, so one pathological response costs only its own result.
- Deadlines: ``spec.params["deadline_s"]``, else the executor's ``timeout_s``, per input for non-batched
  tools; for batched tools (reward models, embeddings, judge, sandbox) per request, scaled by
  ceil(n / unit) where unit is ``params["batch_size"]`` or ``params["max_concurrency"]`` (else 1); for
  tools with ``RewardTool.call_deadline`` (a user's batched or TRL function) per call, unscaled.
  A deadline counts from the moment the worker has the input, not from when it was queued.
  Building a tool in a worker (loading a model) has its own ``load_timeout_s``.
- Concurrency: a spec with ``params["concurrency"] = c`` (user reward functions, :mod:`rlar.tools.pyfunc`)
  gets its own pool of ``c`` worker processes, and each of its samples (each call, for batched tools) goes
  to the next free worker with its own deadline: ``c`` hung samples time out together after one deadline,
  and the next ``c`` start at once on fresh workers — never one deadline per sample in sequence. Other
  specs share the executor's ``workers`` processes.
- A tool that raises → ``error`` with the exception text. A worker that dies → ``error`` "worker died
  (exit code N)" with its stderr tail in details. Every ``ok`` result is re-checked with ``finalize``
  (NaN/inf/out-of-range → error), whatever the worker sent.
- Pure-I/O tools (``RewardTool.in_process``: judge, sandbox client) run in the caller's event loop under
  ``asyncio.timeout`` with the same deadline rule; they get the executor's ``resources`` (e.g. a
  ``run_tests`` that routes code to the sandbox actor over the bus).
- ``ok`` results are cached in an LRU keyed by (tool name, version, content hash, sha256 of query,
  response, reference, and of the metadata keys the tool declares) unless the tool opts out
  (``RewardTool.cacheable``). Cached results carry ``details["cached"] = True``.

Cancelling a caller's task mid-request kills that request's worker (its state is unknown); the next call
spawns a fresh one. Workers start on first use (python + msgpack, ~0.1-0.2 s; plus the tool's own load).

Not covered: memory limits on workers (they run our own tools, not untrusted code — untrusted programs go
to the sandbox); a tool's threads or children outside the worker's process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import os
import signal
import struct
import sys
import time
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgpack

from rlar.tools.base import (
    DEFAULT_ALLOWED_PREFIXES,
    RewardTool,
    ToolInput,
    ToolResult,
    ToolSpec,
    check_result,
    make_tool,
    resolve_tool_class,
    sha256_text,
)

__all__ = ["ExecutorStats", "ResultCache", "ToolExecutor", "cache_key"]

log = logging.getLogger(__name__)
_HEADER = struct.Struct(">I")


def cache_key(
    spec: ToolSpec, inp: ToolInput, metadata_keys: Sequence[str] = (), spec_id: str | None = None
) -> tuple[Any, ...]:
    """(name, version, content hash, sha256 of query / response / reference / declared metadata).

    ``spec_id`` (default ``spec.cache_key()``) can be passed to avoid re-hashing an unsealed spec per input.
    """
    meta = {k: inp.metadata.get(k) for k in metadata_keys} if metadata_keys else None
    return (
        spec.name,
        spec.version,
        spec_id or spec.cache_key(),
        sha256_text(inp.query),
        sha256_text(inp.response),
        sha256_text(inp.reference),
        sha256_text(meta),
    )


class ResultCache:
    """A bounded LRU of ``ok`` results. ``get`` returns a copy marked ``details["cached"] = True``."""

    def __init__(self, maxsize: int = 65536) -> None:
        self.maxsize = maxsize
        self._data: OrderedDict[tuple[Any, ...], ToolResult] = OrderedDict()

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key: tuple[Any, ...]) -> ToolResult | None:
        hit = self._data.get(key)
        if hit is None:
            return None
        self._data.move_to_end(key)
        return ToolResult(hit.status, hit.score, hit.reason, {**hit.details, "cached": True}, 0.0)

    def put(self, key: tuple[Any, ...], result: ToolResult) -> None:
        if self.maxsize <= 0 or result.status != "ok":
            return
        self._data[key] = result
        self._data.move_to_end(key)
        while len(self._data) > self.maxsize:
            self._data.popitem(last=False)

    def clear(self) -> None:
        self._data.clear()


@dataclass(slots=True)
class ExecutorStats:
    requests: int = 0
    inputs: int = 0
    cache_hits: int = 0
    timeouts: int = 0
    worker_deaths: int = 0
    spawns: int = 0
    errors: int = 0
    abstains: int = 0

    def to_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)


class _WorkerGone(Exception):
    """The worker closed its pipe (exited or was killed)."""


@dataclass(slots=True)
class _Worker:
    """One worker process. Only the executor that owns it talks to it, one request at a time."""

    index: int
    proc: asyncio.subprocess.Process | None = None
    stderr_tail: deque[str] = field(default_factory=lambda: deque(maxlen=40))
    stderr_task: asyncio.Task[None] | None = None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    def exit_text(self) -> str:
        code = None if self.proc is None else self.proc.returncode
        if code is not None and code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"exit code {code}"
        return f"exit code {code}"


class ToolExecutor:
    """Runs reward tools with hard per-call deadlines; see the module docstring for the contract.

    Use as ``async with ToolExecutor(...) as ex: results = await ex.score_batch(spec, inputs)``.
    ``workers`` processes serve requests concurrently (non-batched requests are split across them).
    """

    def __init__(
        self,
        *,
        workers: int = 1,
        timeout_s: float = 10.0,
        load_timeout_s: float = 120.0,
        cache_size: int = 65536,
        resources: dict[str, Any] | None = None,
        allowed_prefixes: Sequence[str] | None = DEFAULT_ALLOWED_PREFIXES,
        worker_env: dict[str, str] | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.timeout_s = timeout_s
        self.load_timeout_s = load_timeout_s
        self.cache = ResultCache(cache_size)
        self.resources = dict(resources or {})
        self.allowed_prefixes = None if allowed_prefixes is None else tuple(allowed_prefixes)
        self.worker_env = dict(worker_env or {})
        self.stats = ExecutorStats()
        self._workers = [_Worker(i) for i in range(workers)]
        self._idle: asyncio.Queue[_Worker] | None = None
        # Per-tool pools (spec.params["concurrency"]), by (tool name, size): a new version reuses them.
        self._pools: dict[tuple[str, int], tuple[list[_Worker], asyncio.Queue[_Worker]]] = {}
        self._local_tools: OrderedDict[str, RewardTool] = OrderedDict()
        self._request_id = 0
        self._closed = False

    # ---------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> ToolExecutor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _queue(self) -> asyncio.Queue[_Worker]:
        if self._idle is None:
            self._idle = asyncio.Queue()
            for w in self._workers:
                self._idle.put_nowait(w)
        return self._idle

    @staticmethod
    def concurrency(spec: ToolSpec) -> int | None:
        """The spec's own pool size (``params["concurrency"]``), or None to share the executor's workers."""
        c = spec.params.get("concurrency")
        return max(1, int(c)) if c else None

    def capacity(self, spec: ToolSpec, cls: type[RewardTool]) -> int | None:
        """How many of ``spec``'s calls run at once here: its own pool's size, else the shared workers' count;
        None for in-process tools (bounded by the tool itself)."""
        if cls.in_process:
            return None
        return self.concurrency(spec) or len(self._workers)

    def _pool(self, spec: ToolSpec) -> tuple[list[_Worker], asyncio.Queue[_Worker]]:
        """The workers serving ``spec`` and their idle queue (see "Concurrency" in the module docstring)."""
        size = self.concurrency(spec)
        if size is None:
            return self._workers, self._queue()
        key = (spec.name, size)
        pool = self._pools.get(key)
        if pool is None:
            first = len(self._workers) + sum(len(ws) for ws, _ in self._pools.values())
            workers = [_Worker(first + i) for i in range(size)]
            idle: asyncio.Queue[_Worker] = asyncio.Queue()
            for w in workers:
                idle.put_nowait(w)
            pool = self._pools[key] = (workers, idle)
        return pool

    def _all_workers(self) -> list[_Worker]:
        return [*self._workers, *(w for ws, _ in self._pools.values() for w in ws)]

    async def close(self) -> None:
        """Stop all workers (EOF, then kill after 2 s) and close in-process tools."""
        self._closed = True
        await asyncio.gather(*(self._stop_worker(w, graceful=True) for w in self._all_workers()))
        for tool in self._local_tools.values():
            with contextlib.suppress(Exception):
                await tool.aclose()
        self._local_tools.clear()

    async def _spawn(self, w: _Worker) -> None:
        env = {
            **os.environ,
            "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1"),
            "TOKENIZERS_PARALLELISM": "false",
            "HF_HUB_DISABLE_PROGRESS_BARS": "1",
            "TRANSFORMERS_VERBOSITY": os.environ.get("TRANSFORMERS_VERBOSITY", "error"),
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
            **self.worker_env,
        }
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "rlar.tools._worker",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            start_new_session=True,  # its own process group, so a kill reaches anything it started
        )
        w.proc = proc
        w.stderr_tail.clear()
        w.stderr_task = asyncio.create_task(self._drain_stderr(w, proc))
        self.stats.spawns += 1
        await self._send(
            w, {"op": "init", "sys_path": list(sys.path), "allowed_prefixes": self.allowed_prefixes}
        )

    async def _drain_stderr(self, w: _Worker, proc: asyncio.subprocess.Process) -> None:
        # Always drain: a full stderr pipe would block the worker mid-call. Chunks, not readline(), so a
        # huge line (a progress bar, a dumped tensor) cannot overrun the reader's limit and stop draining.
        assert proc.stderr is not None
        partial = b""
        while True:
            chunk = await proc.stderr.read(65536)
            if not chunk:
                break
            *lines, partial = (partial + chunk).split(b"\n")
            partial = partial[-4096:]
            for line in lines:
                text = line[-2000:].decode("utf-8", "replace").rstrip()
                w.stderr_tail.append(text)
                log.debug("tool worker %d: %s", w.index, text)
        if partial:
            w.stderr_tail.append(partial.decode("utf-8", "replace").rstrip())

    async def _stop_worker(self, w: _Worker, *, graceful: bool = False) -> None:
        proc = w.proc
        if proc is None:
            return
        if proc.returncode is None:
            if graceful and proc.stdin is not None:
                with contextlib.suppress(Exception):
                    proc.stdin.close()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(proc.wait(), 2.0)
            if proc.returncode is None:
                # Kill the whole group (the worker leads its own session). Not proc.kill(): Popen's
                # send_signal() polls first, which can reap the child under asyncio's child watcher and
                # lose the exit code (reported as 255).
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()
        if w.stderr_task is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(w.stderr_task, 1.0)
            w.stderr_task = None

    async def _kill(self, w: _Worker) -> None:
        await self._stop_worker(w, graceful=False)

    # ---------------------------------------------------------------- wire

    async def _send(self, w: _Worker, obj: dict[str, Any]) -> None:
        assert w.proc is not None and w.proc.stdin is not None
        data = msgpack.packb(obj, use_bin_type=True)
        try:
            w.proc.stdin.write(_HEADER.pack(len(data)) + data)
            await w.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise _WorkerGone from exc

    async def _recv(self, w: _Worker, limit_s: float) -> dict[str, Any]:
        """Next frame; raises TimeoutError (worker still running) or _WorkerGone."""
        assert w.proc is not None and w.proc.stdout is not None
        stdout = w.proc.stdout

        async def read() -> dict[str, Any]:
            try:
                header = await stdout.readexactly(_HEADER.size)
                (size,) = _HEADER.unpack(header)
                data = await stdout.readexactly(size)
            except (asyncio.IncompleteReadError, ConnectionResetError) as exc:
                raise _WorkerGone from exc
            obj = msgpack.unpackb(data, raw=False, strict_map_key=False)
            if not isinstance(obj, dict):
                raise _WorkerGone(f"bad frame {type(obj).__name__}")
            return obj

        async with asyncio.timeout(limit_s):
            return await read()

    async def _died(self, w: _Worker) -> dict[str, Any]:
        """Reap a worker that closed its pipe; the details to report."""
        if w.proc is not None:
            # It is usually exiting on its own: give it a moment so the real exit code is reported.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(w.proc.wait(), 1.0)
        await self._kill(w)
        self.stats.worker_deaths += 1
        return {"stderr_tail": "\n".join(list(w.stderr_tail)[-10:])}

    # ---------------------------------------------------------------- public API

    def _deadline(self, spec: ToolSpec, timeout_s: float | None) -> float:
        if timeout_s is not None:
            return float(timeout_s)
        return float(spec.params.get("deadline_s") or self.timeout_s)

    @staticmethod
    def _batch_unit(spec: ToolSpec) -> int:
        unit = spec.params.get("batch_size") or spec.params.get("max_concurrency") or 1
        return max(1, int(unit))

    async def score(self, spec: ToolSpec, inp: ToolInput, *, timeout_s: float | None = None) -> ToolResult:
        return (await self.score_batch(spec, [inp], timeout_s=timeout_s))[0]

    async def score_batch(
        self, spec: ToolSpec, inputs: Sequence[ToolInput], *, timeout_s: float | None = None
    ) -> list[ToolResult]:
        """One result per input, in order. Never raises for a tool's failure (see module docstring)."""
        if self._closed:
            raise RuntimeError("ToolExecutor is closed")
        self.stats.requests += 1
        self.stats.inputs += len(inputs)
        if not inputs:
            return []
        try:
            cls = resolve_tool_class(spec, allowed_prefixes=self.allowed_prefixes)
        except Exception as exc:
            reason = f"cannot resolve tool: {type(exc).__name__}: {exc}"
            return self._count([ToolResult.error(reason) for _ in inputs])
        use_cache = self.cache.maxsize > 0 and cls.cacheable(spec)
        results: list[ToolResult | None] = [None] * len(inputs)
        keys: list[tuple[Any, ...]] = []
        if use_cache:
            spec_id = spec.cache_key()
            keys = [cache_key(spec, x, cls.metadata_keys, spec_id) for x in inputs]
            for i, k in enumerate(keys):
                results[i] = self.cache.get(k)
            self.stats.cache_hits += sum(r is not None for r in results)
        todo = [i for i, r in enumerate(results) if r is None]
        if todo:
            deadline = self._deadline(spec, timeout_s)
            sub = [inputs[i] for i in todo]
            if cls.in_process:
                fresh = await self._run_local(spec, cls, sub, deadline)
            else:
                fresh = await self._run_in_workers(spec, cls, sub, deadline)
            for i, res in zip(todo, fresh, strict=True):
                res = check_result(spec, res)
                results[i] = res
                if use_cache:
                    self.cache.put(keys[i], res)
            self._count(fresh)
        return [r for r in results if r is not None]

    async def prepare(self, spec: ToolSpec) -> str | None:
        """Build the tool ahead of time (in every worker, or in-process). Returns None or the failure reason."""
        try:
            cls = resolve_tool_class(spec, allowed_prefixes=self.allowed_prefixes)
        except Exception as exc:
            return f"cannot resolve tool: {type(exc).__name__}: {exc}"
        if cls.in_process:
            try:
                self._local_tool(spec)
            except Exception as exc:
                return f"could not build tool: {type(exc).__name__}: {exc}"
            return None
        workers, _ = self._pool(spec)
        outcomes = await asyncio.gather(*(self._prepare_one(spec) for _ in workers))
        return next((o for o in outcomes if o is not None), None)

    async def _prepare_one(self, spec: ToolSpec) -> str | None:
        res = await self._run_in_worker(spec, False, [], 1.0)
        return res[0].reason if res else None

    def _count(self, results: list[ToolResult]) -> list[ToolResult]:
        for r in results:
            if r.status == "error":
                self.stats.errors += 1
            elif r.status == "abstain":
                self.stats.abstains += 1
        return results

    # ---------------------------------------------------------------- in-process tools

    def _local_tool(self, spec: ToolSpec) -> RewardTool:
        key = spec.cache_key()
        tool = self._local_tools.get(key)
        if tool is None:
            tool = make_tool(spec, allowed_prefixes=self.allowed_prefixes, **self.resources)
            self._local_tools[key] = tool
            while len(self._local_tools) > 16:
                _, old = self._local_tools.popitem(last=False)
                asyncio.get_running_loop().create_task(old.aclose())
        self._local_tools.move_to_end(key)
        return tool

    async def _run_local(
        self, spec: ToolSpec, cls: type[RewardTool], inputs: Sequence[ToolInput], deadline: float
    ) -> list[ToolResult]:
        try:
            tool = self._local_tool(spec)
        except Exception as exc:
            reason = f"could not build tool: {type(exc).__name__}: {exc}"[:2000]
            return [ToolResult.error(reason) for _ in inputs]

        async def bounded(coro: Any, limit: float, n: int) -> list[ToolResult]:
            t0 = time.perf_counter()
            try:
                async with asyncio.timeout(limit):
                    out = await coro
                return out if isinstance(out, list) else [out]
            except TimeoutError:
                self.stats.timeouts += 1
                return [_timeout_result(limit, time.perf_counter() - t0) for _ in range(n)]

        if cls.batched:
            limit = (
                deadline if cls.call_deadline else deadline * math.ceil(len(inputs) / self._batch_unit(spec))
            )
            return await bounded(tool.score_batch(inputs), limit, len(inputs))
        parts = await asyncio.gather(*(bounded(tool.score(x), deadline, 1) for x in inputs))
        return [p[0] for p in parts]

    # ---------------------------------------------------------------- worker tools

    async def _run_in_workers(
        self, spec: ToolSpec, cls: type[RewardTool], inputs: Sequence[ToolInput], deadline: float
    ) -> list[ToolResult]:
        if self.concurrency(spec) is not None and not cls.batched:
            # One sample per round trip, each to the next free worker of the tool's pool, each with its own
            # deadline: hung samples time out together, not one after another.
            parts = await asyncio.gather(*(self._run_in_worker(spec, False, [x], deadline) for x in inputs))
            return [p[0] for p in parts]
        n_workers = len(self._workers)
        if cls.batched or n_workers == 1 or len(inputs) == 1:
            return await self._run_in_worker(spec, cls.batched, inputs, deadline, scale=not cls.call_deadline)
        size = math.ceil(len(inputs) / n_workers)
        chunks = [inputs[i : i + size] for i in range(0, len(inputs), size)]
        parts = await asyncio.gather(*(self._run_in_worker(spec, False, c, deadline) for c in chunks))
        return [r for p in parts for r in p]

    async def _run_in_worker(
        self,
        spec: ToolSpec,
        batched: bool,
        inputs: Sequence[ToolInput],
        deadline: float,
        *,
        scale: bool = True,
    ) -> list[ToolResult]:
        """Run one request on one worker of the spec's pool, respawning after a kill and re-sending what was
        left. ``scale``: a batch's deadline is scaled by its number of units (else one deadline per call).

        With no inputs, builds the tool and returns [] on success or [error] on failure (for prepare).
        """
        results: list[ToolResult | None] = [None] * len(inputs)
        pending = list(range(len(inputs)))
        _, queue = self._pool(spec)
        first = True
        while pending or first:
            first = False
            w = await queue.get()
            try:
                outcome = await self._one_round(w, spec, batched, inputs, pending, results, deadline, scale)
            except BaseException:
                # Cancelled (or our bug) mid-request: the worker's state is unknown, so replace it.
                await self._kill(w)
                raise
            finally:
                queue.put_nowait(w)
            if outcome is not None:  # the whole rest of the request failed with this result
                if not inputs:
                    return [outcome]
                for i in pending:
                    results[i] = ToolResult(outcome.status, None, outcome.reason, dict(outcome.details))
                pending = []
            else:
                pending = [i for i in pending if results[i] is None]
        return [r for r in results if r is not None]

    async def _one_round(
        self,
        w: _Worker,
        spec: ToolSpec,
        batched: bool,
        inputs: Sequence[ToolInput],
        pending: list[int],
        results: list[ToolResult | None],
        deadline: float,
        scale: bool = True,
    ) -> ToolResult | None:
        """Send ``pending`` to worker ``w`` and fill ``results``. Returns a result that applies to all of
        ``pending`` still unfilled when the round cannot continue (load failure, batch timeout), else None
        (the caller re-sends whatever is still unfilled, after a per-input timeout or crash)."""
        try:
            if not w.alive:
                await self._spawn(w)
            self._request_id += 1
            rid = self._request_id
            await self._send(
                w,
                {
                    "op": "score",
                    "id": rid,
                    "spec": spec.to_dict(),
                    "inputs": [inputs[i].to_dict() for i in pending],
                    "batched": batched,
                },
            )
        except (_WorkerGone, OSError) as exc:
            details = await self._died(w)
            return ToolResult.error(f"could not start tool worker: {exc or w.exit_text()}", **details)

        # Phase 1: the tool is built (or was already).
        t0 = time.perf_counter()
        try:
            msg = await self._recv(w, self.load_timeout_s)
        except TimeoutError:
            await self._kill(w)
            self.stats.timeouts += 1
            return ToolResult.abstain(f"tool load timed out after {self.load_timeout_s:g}s")
        except _WorkerGone:
            details = await self._died(w)
            return ToolResult.error(f"worker died while building the tool ({w.exit_text()})", **details)
        if "load_error" in msg:
            return ToolResult.error(f"could not build tool: {msg['load_error']}")

        # Phase 2: results.
        if batched:
            limit = deadline * math.ceil(len(pending) / self._batch_unit(spec)) if scale else deadline
            t0 = time.perf_counter()
            try:
                msg = await self._recv(w, limit)
            except TimeoutError:
                await self._kill(w)
                self.stats.timeouts += 1
                return _timeout_result(limit, time.perf_counter() - t0)
            except _WorkerGone:
                details = await self._died(w)
                return ToolResult.error(f"worker died ({w.exit_text()})", **details)
            got = msg.get("results") or []
            if len(got) != len(pending):
                return ToolResult.error(f"worker returned {len(got)} results for {len(pending)} inputs")
            for i, d in zip(pending, got, strict=True):
                results[i] = _result_from_wire(d)
            return None
        for i in pending:
            t0 = time.perf_counter()
            try:
                msg = await self._recv(w, deadline)
            except TimeoutError:
                await self._kill(w)
                self.stats.timeouts += 1
                results[i] = _timeout_result(deadline, time.perf_counter() - t0)
                return None
            except _WorkerGone:
                details = await self._died(w)
                results[i] = ToolResult.error(f"worker died ({w.exit_text()})", **details)
                return None
            results[i] = _result_from_wire(msg.get("result"))
        return None


def _timeout_result(limit: float, elapsed: float) -> ToolResult:
    return ToolResult("abstain", None, f"timeout after {limit:g}s", {}, elapsed)


def _result_from_wire(d: Any) -> ToolResult:
    try:
        return ToolResult.from_dict(d)
    except (TypeError, ValueError, AttributeError) as exc:
        return ToolResult.error(f"malformed result from worker: {exc}")
