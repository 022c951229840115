"""``rlar reward score FILE.jsonl`` (a standalone reward-service check) and ``rlar bench reward``.

``rlar reward score`` reads records ``{task, query, response, reference, metadata[, tools]}`` and scores each
through the bus: one ``ScoreGroup`` per (record, tool kind) on ``rlar.score.<kind>``, rewards collected from
``rlar.rewards.<a task name unique to this run>``; it prints one JSON line per record, in input order:
``{"index", "task", "status", "score", "tool", "version", "reason", "rewards": [...]}`` (several tools are
combined with ``rlar.tools.combine``; ``tool``/``version`` are then lists).

Tools: ``--tool`` (repeatable) and ``--python module:function`` (your own reward function, registered as a
tool named after the function), else the record's ``tools`` (names, ``[name, weight]`` pairs or ``{"tool",
"weight", "version"}``), else with ``--config RUN.toml`` the ``default_tools`` of the config's task of that
name, else the default tools of a built-in task of that name, else the config's one ``[[tools]]`` entry.
``--python`` and ``--config``'s ``[[tools]]`` are registered on the bus; they need ``--nats embedded`` (whose
reward worker is told to trust their modules; a running bus's workers import only modules they were
configured to trust — ``rlar tools register`` says how).

With ``--nats embedded`` it starts a nats-server, a reward worker and a sandbox actor in this process;
otherwise reward workers (and a sandbox actor for code) must be running on that bus.

Exit status: 0; 1 when a record got no reward within ``--timeout`` seconds (printed with status
``timeout``); 2 for a usage error — a missing file, a ``--python``/``--config`` tool that cannot be built —
(one line on stderr, nothing scored) or when a line is not a record with a ``response`` (that line is
printed with status ``error`` and a reason naming it, on stdout and stderr; the other records are scored).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
import tomllib
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# rlar.tools, rlar.tasks, actors.reward, actors.runtime, actors.sandbox, bus.config, bus, bus.client,
# bus.codec, bus.messages, bus.topology, rlar.registry, bus.embedded, rlar.app and rlar.benchmarks are
# imported where used: a command's implementation loads when the command runs, so rlar --help stays instant.


class UsageError(ValueError):
    """A problem with the command line (a missing file, a tool that cannot be built): exit 2, nothing scored."""


@dataclass(slots=True)
class UserTools:
    """The tools of ``--python`` and ``--config``: specs to register, and where records take their tools."""

    specs: list[Any] = field(default_factory=list)
    forced: list[str] = field(default_factory=list)
    """``--python`` tools: every record is scored with them (with ``--tool``'s)."""
    task_tools: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    """The config's tasks' ``default_tools``, by task name."""
    fallback: list[str] = field(default_factory=list)
    """The config's ``[[tools]]`` when it has exactly one: for records nothing else gives tools."""

    @property
    def modules(self) -> list[str]:
        return [str(s.params["function"]).partition(":")[0] for s in self.specs if str(s.kind) != "sandbox"]

    @property
    def paths(self) -> list[str]:
        return [str(s.provenance["python_path"]) for s in self.specs if s.provenance.get("python_path")]


def user_tools(python: list[str], config: str | None) -> UserTools:
    """Build the ``--python module:function`` tools (trusted, imported from the working directory) and the
    ``[[tools]]`` of ``config`` (against its directory). Raises :class:`UsageError` saying what is wrong."""

    from rlar.tools.base import BUILTIN_IMPLS
    from rlar.tools.pyfunc import PythonToolConfig, PythonToolError, python_tool_spec

    out = UserTools()
    entries: list[tuple[dict[str, Any], Path | None]] = []
    for target in python:
        name = target.partition(":")[2].rsplit(".", 1)[-1] or target
        entries.append(
            ({"name": name, "python": target, "description": f"{target} (rlar reward score --python)"}, None)
        )
        out.forced.append(name)
    if config is not None:
        path = Path(config)
        if not path.is_file():
            raise UsageError(f"--config {config}: no such file")
        try:
            doc = tomllib.loads(path.read_text())
        except tomllib.TOMLDecodeError as exc:
            raise UsageError(f"--config {config}: not TOML: {exc}") from None
        tables = list(doc.get("tools") or [])
        entries += [(dict(t), path.absolute().parent) for t in tables]
        if len(tables) == 1:
            out.fallback = [str(tables[0].get("name"))]
        for task in [*doc.get("feeder", {}).get("tasks", []), *doc.get("tasks", [])]:
            if isinstance(task, dict) and (task.get("spec") or {}).get("default_tools"):
                out.task_tools[str(task.get("name"))] = [
                    (str(n), float(w)) for n, w in task["spec"]["default_tools"]
                ]
    for fields, base in entries:
        where = (
            f"--python {fields['python']}" if base is None else f"{config}: [[tools]] {fields.get('name')!r}"
        )
        if fields.get("name") in BUILTIN_IMPLS:
            raise UsageError(f"{where}: {fields['name']!r} is a built-in tool's name; choose another")
        try:
            out.specs.append(python_tool_spec(PythonToolConfig.model_validate(fields), base_dir=base))
        except (ValueError, PythonToolError) as exc:  # pydantic's ValidationError is a ValueError
            raise UsageError(f"{where}: {exc}") from None
    return out


def _record_tools(
    rec: dict[str, Any], forced: list[str], user: UserTools | None = None
) -> list[tuple[str, float, int]]:
    """(tool, weight, version) for a record (see the module docstring for the order); raises ValueError when
    nothing gives it one."""
    user = user or UserTools()
    forced = [*forced, *user.forced]
    if forced:
        return [(name, 1.0, 0) for name in forced]
    tools = rec.get("tools")
    if tools:
        out = []
        for t in tools:
            if isinstance(t, str):
                out.append((t, 1.0, 0))
            elif isinstance(t, list | tuple) and len(t) == 2:
                out.append((str(t[0]), float(t[1]), 0))
            elif isinstance(t, dict) and "tool" in t:
                out.append((str(t["tool"]), float(t.get("weight", 1.0)), int(t.get("version", 0) or 0)))
            else:
                raise ValueError(f"cannot read tool entry {t!r}")
        return out
    from rlar.tasks.builtin import SPECS

    task = rec.get("task")
    if isinstance(task, str) and task in user.task_tools:
        return [(name, w, 0) for name, w in user.task_tools[task]]
    if isinstance(task, str) and task in SPECS and SPECS[task].default_tools:
        return [(name, w, 0) for name, w in SPECS[task].default_tools]
    if user.fallback:
        return [(name, 1.0, 0) for name in user.fallback]
    raise ValueError(
        f"no tools: pass --tool or --python, give the record a 'tools' field, or use a built-in task ({task!r})"
    )


def _check_record(rec: Any, line: int) -> dict[str, Any]:
    """The record of input line ``line`` (1-based); ``ValueError`` naming the line when it is not one."""
    if not isinstance(rec, dict):
        raise ValueError(f"line {line}: a record must be a JSON object, got {type(rec).__name__}")
    if "response" not in rec:
        raise ValueError(
            f"line {line}: the record has no 'response' (fields: {', '.join(sorted(rec)) or 'none'}; "
            "a record is {task, query, response, reference, metadata[, tools]})"
        )
    return rec


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@contextlib.asynccontextmanager
async def _embedded_actors(
    url: str, run_dir: Path, sandbox_mode: str, user: UserTools | None = None
) -> AsyncIterator[None]:
    from actors.reward import RewardConfig, RewardWorker
    from actors.runtime import in_process
    from actors.sandbox import SandboxActor, SandboxActorConfig
    from bus.config import NatsConfig

    nats = NatsConfig(url=url)
    user = user or UserTools()
    trust = {"allowed_prefixes": ["rlar.", *user.modules], "python_path": user.paths}
    actors: list[Any] = [
        SandboxActor(SandboxActorConfig(nats=nats, run_dir=str(run_dir), mode=sandbox_mode)),  # type: ignore[arg-type]
        RewardWorker(RewardConfig(nats=nats, run_dir=str(run_dir), **trust)),
    ]
    async with in_process(*actors, timeout_s=60, check=False):
        yield


async def score_file(
    path: str,
    *,
    tools: list[str],
    url: str,
    embedded: bool,
    timeout_s: float,
    run_dir: Path,
    sandbox_mode: str,
    user: UserTools | None = None,
) -> tuple[int, list[dict[str, Any]]]:
    """Score every record of ``path``; returns (exit status, one output dict per record). ``user``: the
    ``--python`` / ``--config`` tools, registered here before any record is read."""
    from bus import subjects
    from bus.client import Bus
    from bus.codec import encode
    from bus.config import NatsConfig
    from bus.messages import RewardGroup, ScoreGroup, ScoreItem, ToolRef
    from bus.topology import ensure_topology
    from rlar.registry import ToolRegistry
    from rlar.tools.combine import combine

    lines = Path(path).read_text().splitlines()
    run = uuid.uuid4().hex[:10]
    task_token = f"cli_{run}"
    outputs: list[dict[str, Any]] = []
    # per record: [(tool, weight, version, answer key)]; answers by (prompt id, tool)
    plans: list[list[tuple[str, float, int, tuple[str, str]]]] = []
    answers: dict[tuple[str, str], dict[str, Any]] = {}
    all_done = asyncio.Event()
    pending: set[tuple[str, str]] = set()  # (prompt id, tool) published and not yet answered

    bus = await Bus.connect(NatsConfig(url=url), name="rlar-reward-score")
    try:
        await ensure_topology(bus.js)
        async with contextlib.AsyncExitStack() as stack:
            if embedded:
                await stack.enter_async_context(_embedded_actors(url, run_dir, sandbox_mode, user))
            registry = ToolRegistry(bus)
            await registry.ensure_builtins(by="rlar reward score")
            for spec in user.specs if user else []:
                await registry.register(spec, by="rlar reward score")

            async def on_reward(msg: RewardGroup, raw: object) -> None:
                key = (msg.prompt_id, msg.tool)
                if key in pending and msg.items:
                    pending.discard(key)
                    it = msg.items[0]
                    answers[key] = {
                        "tool": msg.tool,
                        "version": msg.tool_version,
                        "status": it.status,
                        "score": it.score,
                        "weight": msg.weight,
                        "reason": it.reason,
                        "latency_s": it.latency_s,
                        "cached": it.cached,
                        "worker": msg.worker,
                    }
                    if not pending:
                        all_done.set()

            sub = await bus.subscribe(subjects.rewards(task_token), RewardGroup, on_reward)
            requests: list[ScoreGroup] = []
            invalid = False
            for i, line in enumerate(lines):
                outputs.append({"index": i})
                if not line.strip():
                    plans.append([])
                    outputs[-1].update(status="error", reason="empty line", score=None)
                    continue
                try:
                    try:
                        rec = _check_record(json.loads(line), i + 1)
                    except ValueError as exc:
                        invalid = True
                        if isinstance(exc, json.JSONDecodeError):
                            exc = ValueError(f"line {i + 1}: not JSON: {exc}")
                        print(f"rlar reward score: {path}: {exc}", file=sys.stderr, flush=True)
                        raise exc from None
                    chosen = _record_tools(rec, tools, user)
                except ValueError as exc:
                    plans.append([])
                    outputs[-1].update(status="error", reason=str(exc), score=None)
                    continue
                outputs[-1]["task"] = rec.get("task", "")
                pid = f"{run}-{i}"
                plan = []
                by_kind: dict[str, list[ToolRef]] = {}
                for name, weight, version in chosen:
                    plan.append((name, weight, version, (pid, name)))
                    spec, why = await registry.resolve(name, version or None)
                    if spec is None or why:
                        answers[(pid, name)] = {
                            "tool": name,
                            "version": spec.version if spec else version,
                            "status": "abstain",
                            "score": None,
                            "weight": weight,
                            "reason": why,
                        }
                        continue
                    pending.add((pid, name))
                    by_kind.setdefault(spec.kind, []).append(spec.ref(weight))
                requests += [
                    ScoreGroup(
                        prompt_id=pid,
                        generation=run,
                        task=task_token,
                        tools=refs,
                        query=_text(rec.get("query", "")),
                        items=[ScoreItem(index=0, response=_text(rec["response"]))],
                        reference=rec.get("reference"),
                        metadata=dict(rec.get("metadata") or {}),
                    )
                    for refs in by_kind.values()
                ]
                plans.append(plan)
            await bus.js_publish_many(
                [
                    (subjects.score(r.tools[0].kind), encode(r), f"{r.prompt_id}/{r.tools[0].kind}/req")
                    for r in requests
                ]
            )
            if pending:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(all_done.wait(), timeout_s)
            await sub.unsubscribe()
    finally:
        await bus.close()

    status = 2 if invalid else 0
    for out, plan in zip(outputs, plans, strict=True):
        if not plan:
            continue
        rewards = []
        for name, weight, version, key in plan:
            ans = answers.get(key)
            if ans is None:
                status = max(status, 1)
                ans = {
                    "tool": name,
                    "version": version,
                    "status": "timeout",
                    "score": None,
                    "weight": weight,
                    "reason": f"no reward within {timeout_s:g}s (are reward workers for this kind running?)",
                }
            rewards.append(ans)
        if any(r["status"] == "timeout" for r in rewards):
            st, score = "timeout", None
        else:
            st, score = combine([(r["weight"], r["status"], r["score"]) for r in rewards])
        single = len(rewards) == 1
        out.update(
            status=rewards[0]["status"] if single else st,
            score=rewards[0]["score"] if single else score,
            tool=rewards[0]["tool"] if single else [r["tool"] for r in rewards],
            version=rewards[0]["version"] if single else [r["version"] for r in rewards],
            reason=rewards[0]["reason"]
            if single
            else "; ".join(f"{r['tool']}: {r['reason']}" for r in rewards if r["reason"]),
            rewards=rewards,
        )
    return status, outputs


def cmd_score(a: argparse.Namespace) -> int:
    from bus.embedded import default_url, serve

    url = a.nats or default_url()
    embedded = url == "embedded"
    try:
        if not Path(a.file).is_file():
            raise UsageError(f"{a.file}: " + ("is a directory" if Path(a.file).is_dir() else "no such file"))
        user = user_tools(a.python, a.config)
        if user.specs and not embedded:
            raise UsageError(
                "--python and --config [[tools]] need --nats embedded: a running bus's reward workers "
                "import only modules they trust (see rlar tools register --python)"
            )
    except UsageError as exc:
        print(f"rlar reward score: error: {exc}", file=sys.stderr, flush=True)
        return 2
    with contextlib.ExitStack() as stack:
        run_dir = Path(a.run_dir) if a.run_dir else Path(stack.enter_context(tempfile.TemporaryDirectory()))
        real_url = stack.enter_context(serve(url, run_dir))
        status, outputs = asyncio.run(
            score_file(
                a.file,
                tools=a.tool,
                url=real_url,
                embedded=embedded,
                timeout_s=a.timeout,
                run_dir=run_dir,
                sandbox_mode=a.sandbox_mode,
                user=user,
            )
        )
    for out in outputs:
        print(json.dumps(out, ensure_ascii=False), flush=True)
    return status


def cmd_bench_reward(a: argparse.Namespace) -> int:
    from rlar.app.benchmarks.reward import run

    doc = asyncio.run(
        run(quick=a.quick, judge_latency_s=a.judge_latency, judge_concurrency=a.judge_concurrency)
    )
    if not a.json:
        for k, v in doc.items():
            print(f"{k:>36}: {v}", file=sys.stderr)
    print(json.dumps(doc), flush=True)
    return 0


def cmd_bench_math(a: argparse.Namespace) -> int:
    from rlar.benchmarks.math import run

    doc = run(a.data)
    if not a.json:
        for k, v in doc.items():
            print(f"{k:>26}: {v}", file=sys.stderr)
    print(json.dumps(doc), flush=True)
    return 0


def cmd_bench_answers(a: argparse.Namespace) -> int:
    from rlar.benchmarks.answers import run

    doc = run(a.data)
    if not a.json:
        for k, v in doc.items():
            print(f"{k:>16}: {v}", file=sys.stderr)
    print(json.dumps(doc), flush=True)
    return 0


def register(sub: Any, bench: Any) -> None:
    p = sub.add_parser("reward", help="score records through the reward service")
    rsub = p.add_subparsers(dest="reward_command", required=True)
    q = rsub.add_parser("score", help="score a JSONL file; one JSON line per record")
    q.add_argument("file", help="JSONL records {task, query, response, reference, metadata[, tools]}")
    q.add_argument("--tool", action="append", default=[], help="tool name (repeatable); default: per record")
    q.add_argument(
        "--python",
        action="append",
        default=[],
        metavar="MODULE:FUNCTION",
        help="score with your own reward function (imported from the working directory; repeatable; "
        "needs --nats embedded; default: none)",
    )
    q.add_argument(
        "--config",
        help="a run config whose [[tools]] are registered and whose tasks' default_tools "
        "score records of those tasks (needs --nats embedded)",
    )
    q.add_argument("--nats", help="NATS URL or 'embedded' (a server, reward worker and sandbox in-process)")
    q.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for all rewards")
    q.add_argument("--run-dir", help="embedded: keep the bus's storage here (default: a temporary directory)")
    q.add_argument(
        "--sandbox-mode",
        choices=["bwrap", "rlimit-only"],
        default="bwrap",
        help="embedded: the sandbox actor's mode (rlimit-only is the weaker, explicit opt-in)",
    )
    q.set_defaults(fn=cmd_score)

    b = bench.add_parser("reward", help="sandbox executions/s, rule scores/s, judge scaling over 1-8 workers")
    b.add_argument("--json", action="store_true", help="only the JSON line on stdout")
    b.add_argument("--quick", action="store_true", help="smaller runs (for tests)")
    b.add_argument("--judge-latency", type=float, default=0.05, help="fixed latency of the local judge (s)")
    b.add_argument("--judge-concurrency", type=int, default=2, help="judge calls in flight per worker")
    b.set_defaults(fn=cmd_bench_reward)

    m = bench.add_parser(
        "math", help="math_verify tool accuracy vs the math-verify library alone, same pairs"
    )
    m.add_argument(
        "--data", default="data/math_pairs.jsonl", help="JSONL {id, source, reference, response, label}"
    )
    m.add_argument("--json", action="store_true", help="only the JSON line on stdout")
    m.set_defaults(fn=cmd_bench_math)

    ans = bench.add_parser(
        "answers", help="reference-comparing tools on answers written as chat models write them (labelled)"
    )
    ans.add_argument(
        "--data", default="data/answers_heldout.jsonl", help="JSONL {id, tool, reference, response, label}"
    )
    ans.add_argument("--json", action="store_true", help="only the JSON line on stdout")
    ans.set_defaults(fn=cmd_bench_answers)
