"""Checks made before any actor starts (``rlar train``, ``rlar up``): every task's data, the policy, the tools.

:func:`preflight` takes a validated run document (:func:`rlar.app.runconfig.validate_run_config`) and

- opens every task's data: resolved path(s), records parsed — all of them for files up to
  ``FULL_LOAD_BYTES`` and for built-in tasks, the first ``HEAD_RECORDS`` of larger files (the feeder reads the
  rest; a bad row further down still stops the run, through the supervisor's crash limit, with its line);
- checks that each task's default tools exist (built-in or ``[[tools]]``) when routing is static;
- refuses a file task's records without a reference (null, blank) where a reference is needed — beside
  records that have one, or when a tool scoring the task compares with one — naming file and line
  (:func:`reference_problem`); a task whose records all lack one is reference-free under the router;
- checks the policy checkpoint directory, and the supervised warm-up's tasks;
- builds the spec of every ``[[tools]]`` entry (trusted modules are imported, sandbox ones only read).

Problems come back as one line each in a :class:`rlar.runconfig.ConfigProblems`; what was checked comes back
as :class:`Preflight` (one summary line per task, for the console).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlar.runconfig import ConfigProblems
from rlar.tasks import TaskConfig, TaskDataError, load_task
from rlar.tasks.builtin import BUILTIN_NAMES
from rlar.tasks.loaders import expand_paths
from rlar.tasks.references import is_reference_free
from rlar.tools import builtin_specs
from rlar.tools.base import BUILTIN_IMPLS
from rlar.tools.pyfunc import PythonToolError, python_tool_spec

__all__ = ["FULL_LOAD_BYTES", "HEAD_RECORDS", "Preflight", "TaskCheck", "preflight"]

FULL_LOAD_BYTES = 50 * 1024 * 1024
HEAD_RECORDS = 8


@dataclass(slots=True)
class TaskCheck:
    """What was found for one task."""

    name: str
    source: str
    paths: list[str]
    records: int
    complete: bool
    example: tuple[str, str]
    tools: list[tuple[str, float]]
    routed: bool = False

    def line(self) -> str:
        where = ", ".join(self.paths) if self.paths else self.source
        count = f"{self.records} records" if self.complete else f"first {self.records} records parsed"
        prompt, ref = self.example
        tools = ", ".join(n if w == 1.0 else f"{n}×{w:g}" for n, w in self.tools) or "-"
        how = "the router chooses its tools" if self.routed else f"tools {tools}"
        return f"task {self.name}: {self.source} {where} — {count}, e.g. {prompt!r} → {ref!r}; {how}"


@dataclass(slots=True)
class Preflight:
    tasks: list[TaskCheck] = field(default_factory=list)
    tool_specs: list[Any] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _short(value: Any, n: int = 40) -> str:
    if isinstance(value, list):
        value = next((m.get("content", "") for m in reversed(value) if isinstance(m, dict)), str(value))
    text = str(value).replace("\n", " ")
    return text if len(text) <= n else text[: n - 1] + "…"


def _check_task(cfg: Any, problems: list[str]) -> tuple[TaskCheck, Any] | None:

    paths: list[str] = []
    complete = True
    try:
        if cfg.source != "builtin":
            files = expand_paths(cfg.paths)
            paths = [str(p) for p in files]
            if sum(p.stat().st_size for p in files) > FULL_LOAD_BYTES:
                complete = False
                cfg = cfg.model_copy(update={"limit": min(cfg.limit or HEAD_RECORDS, HEAD_RECORDS)})
        ds = load_task(cfg)
    except TaskDataError as exc:
        problems.append(f"task {cfg.name!r}: {exc}")
        return None
    except (ValueError, ImportError, OSError) as exc:
        problems.append(f"task {cfg.name!r}: {type(exc).__name__}: {exc}")
        return None
    first = ds.records[0]
    return TaskCheck(
        name=cfg.name,
        source=cfg.source if cfg.source != "builtin" else f"builtin {cfg.builtin or cfg.name}",
        paths=paths,
        records=len(ds),
        complete=complete,
        example=(_short(first.prompt), _short(first.reference)),
        tools=[(str(n), float(w)) for n, w in ds.spec.default_tools],
    ), ds


def _places(ds: Any, records: list[Any], n: int = 3) -> str:
    shown = "; ".join(ds.where(r) for r in records[:n])
    return shown + (f" and {len(records) - n} more" if len(records) > n else "")


def reference_problem(name: str, ds: Any, tools: list[tuple[str, str]] | None) -> str | None:
    """Why the records of task ``name`` cannot be scored for want of a reference, or None.

    ``tools``: (name, what it needs as a reference: ``text``/``tests``/``instructions``/``none``) of the tools
    that will score the task, or None when the router chooses them. Records without a reference (null, blank,
    empty) are refused

    - beside records that have one (a data error: some rows lost their answer), unless every tool scoring the
      task is known to be reference-free;
    - when every record lacks one and a tool that scores the task compares with a reference.

    A task whose records all lack a reference, routed by the router, is a reference-free task: the router
    gives it a reference-free tool (or asks for one), and says so while it waits.
    """

    missing = [r for r in ds.records if is_reference_free(r.reference)]
    if not missing:
        return None
    needing = [t for t, need in tools or [] if need != "none"]
    where = _places(ds, missing)
    if len(missing) < len(ds.records):
        if tools is not None and not needing:
            return None
        why = (
            f"the task's tools compare with one ({', '.join(needing)}), so they could never be scored"
            if needing
            else "the router would route them apart from the others and wait for a tool that needs none"
        )
        return (
            f"task {name!r}: {len(missing)} of {len(ds.records)} records have no reference (null or empty): "
            f"{where} — fix or drop them; {why}"
        )
    if needing:
        return (
            f"task {name!r}: no record has a reference ({where}), but tool {needing[0]!r} compares with one — "
            "map the reference field (fields = { reference = ... }) or give the task a reference-free tool"
        )
    return None


def preflight(
    built: dict[str, Any], *, base_dir: str | Path | None = None, where: str = "config"
) -> Preflight:
    """Check what the actors will need (see the module docstring); raise ``ConfigProblems`` listing every
    problem. ``built`` is what ``validate_run_config`` returned."""

    problems: list[str] = []
    out = Preflight()
    for cfg in built.get("tools") or []:
        if cfg.name in BUILTIN_IMPLS:
            problems.append(f"[[tools]] {cfg.name!r}: the name is a built-in tool's; choose another")
            continue
        try:
            out.tool_specs.append(python_tool_spec(cfg, base_dir=base_dir))
        except PythonToolError as exc:
            problems.append(f"[[tools]] {cfg.name!r}: {exc}")
    names = [*BUILTIN_IMPLS, *(c.name for c in built.get("tools") or [])]
    feeder = built.get("feeder")
    if feeder is not None:
        if not feeder.tasks:
            problems.append(
                "no tasks: add [[tasks]] tables (or [feeder] tasks = [...]); see docs/datasets.md"
            )
        needs = _reference_needs(out.tool_specs)
        for cfg in feeder.tasks:
            checked = _check_task(cfg, problems)
            if checked is None:
                continue
            check, ds = checked
            check.routed = not feeder.static
            out.tasks.append(check)
            if cfg.source != "builtin":
                scoring = _scoring_tools(feeder, check)
                known = None if scoring is None else [(t, needs.get(t, "none")) for t in scoring]
                if (problem := reference_problem(cfg.name, ds, known)) is not None:
                    problems.append(problem)
            if feeder.static and feeder.reward_mode == "default":
                for tool, _ in check.tools:
                    if tool not in names:
                        close = difflib.get_close_matches(tool, names, n=1)
                        hint = f" (did you mean {close[0]!r}?)" if close else ""
                        problems.append(
                            f"task {cfg.name!r}: default tool {tool!r} is neither built in nor a "
                            f"[[tools]] entry{hint}"
                        )
        mode = feeder.reward_mode
        if mode.startswith("static:") and mode.removeprefix("static:") not in names:
            problems.append(f"[feeder] reward_mode: tool {mode.removeprefix('static:')!r} is not known")
    policy = built.get("policy")
    if policy is not None:
        _check_policy(policy, problems)
    if problems:
        raise ConfigProblems(where, problems)
    return out


def _reference_needs(user_specs: list[Any]) -> dict[str, str]:
    """Tool name → what it needs as a reference (built-in tools and this config's ``[[tools]]``)."""

    return {s.name: s.reference_need for s in [*builtin_specs(), *user_specs]}


def _scoring_tools(feeder: Any, check: TaskCheck) -> list[str] | None:
    """The tools that will score a task, or None when the router (or a random draw) chooses them."""
    mode = feeder.reward_mode
    if mode.startswith("static:"):
        return [mode.removeprefix("static:")]
    if feeder.static and mode == "default":
        return [t for t, _ in check.tools]
    return None


def _check_policy(policy: Any, problems: list[str]) -> None:

    if policy.source == "path":
        p = Path(policy.path).expanduser() if policy.path else None
        if p is None:
            problems.append('[policy] source = "path" needs path = "/a/checkpoint/dir"')
        elif not (p / "config.json").is_file():
            what = (
                "does not exist" if not p.exists() else "has no config.json (not a Hugging Face checkpoint)"
            )
            problems.append(f"[policy] path {str(p)!r} {what}")
        return
    if policy.sft_steps == 0:
        return
    for entry in policy.sft_tasks:
        try:
            cfg = TaskConfig.model_validate({"name": entry} if isinstance(entry, str) else entry)
        except ValueError as exc:
            problems.append(f"[policy] sft_tasks: {exc}".splitlines()[0])
            continue
        if cfg.source == "builtin":
            if (cfg.builtin or cfg.name) not in BUILTIN_NAMES:
                problems.append(f"[policy] sft_tasks: unknown builtin task {cfg.builtin or cfg.name!r}")
