"""Which reward tools ``rlar eval`` scores a task with: the ones the run used, from what the run left behind.

Sources:

1. the built-in tools (:func:`rlar.tools.builtin_specs`);
2. the run's registry snapshot ``<run>/tools.jsonl`` — every version of every tool registered on the run's bus,
   synthesised verifiers with their code and user functions with their module's sha256, and each name's
   status — written by ``rlar train`` at the end of a run (:func:`save_tool_snapshot`; the same format as
   ``rlar tools export``, so ``rlar tools import`` reads it too);
3. the run config's ``[[tools]]`` whose names the snapshot does not have (your own Python functions, built
   with :func:`rlar.tools.pyfunc.python_tool_spec` against the config's directory, as version 1).

Per task (:meth:`ToolCatalog.task_tools`), the tools are, in this order of preference:

- ``run-router``: the run's last routing decision for the task that named tools (``summary.json`` tasks →
  routing → last), with its versions and weights;
- ``run-learner``: the tools whose rewards reached the learner for the task (``summary.json`` tasks → tools,
  shadow tools left out), weighted as the task's ``default_tools`` weigh them (1 otherwise);
- ``default_tools``: the task spec's own ``default_tools``, each name resolved to its newest usable version
  in the catalogue.

A user function whose module changed since the run registered it refuses to run (its sha256 differs): the
samples are errors, counted in the eval's ``score_errors`` — never a silent score from another tool.

Not covered: tools served by another bus's workers only (a plug-in module not importable here), and runs
that ended before writing ``tools.jsonl`` (a crash, ``kill -9``): then a user tool comes from the config's
``[[tools]]`` and a synthesised one is not available (the error names it).
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlar.registry import ToolRegistry
from rlar.tool_summary import origin_label
from rlar.tools import ToolSpec, builtin_specs
from rlar.tools.base import DEFAULT_ALLOWED_PREFIXES
from rlar.tools.pyfunc import PythonToolConfig, PythonToolError, python_tool_spec

__all__ = ["SNAPSHOT", "ChosenTool", "ToolCatalog", "save_tool_snapshot"]

SNAPSHOT = "tools.jsonl"
"""The registry snapshot's file name in a run directory."""


async def save_tool_snapshot(bus: Any, run_dir: str | Path) -> Path:
    """Write every tool version registered on ``bus`` (code inline) and each name's status to
    ``<run_dir>/tools.jsonl`` (written to a temporary file, then renamed); returns the path."""

    path = Path(run_dir) / SNAPSHOT
    tmp = path.with_name(f".{SNAPSHOT}.tmp")
    await ToolRegistry(bus).export(tmp)
    tmp.replace(path)
    return path


@dataclass(frozen=True, slots=True)
class ChosenTool:
    """One tool a task is scored with, and why."""

    spec: Any
    """The :class:`~rlar.tools.ToolSpec` (the exact version)."""
    weight: float
    source: str
    """``run-router`` | ``run-learner`` | ``default_tools`` (see the module docstring)."""
    state: str = "enabled"
    """The version's status in the run's registry (``enabled``, ``disabled``, ``quarantined``)."""

    def label(self) -> str:

        return (
            f"{self.spec.name} v{self.spec.version} x{self.weight:g} ({origin_label(self.spec, self.state)})"
        )

    def to_dict(self) -> dict[str, Any]:

        return {
            "tool": self.spec.name,
            "version": self.spec.version,
            "weight": self.weight,
            "kind": str(self.spec.kind),
            "origin": origin_label(self.spec, self.state),
            "source": self.source,
            "content_hash": self.spec.content_hash,
        }


_ROUTED = re.compile(r"(.+) v(\d+) x([0-9.eE+-]+)")
_USED = re.compile(r"(.+) v(\d+)( \(shadow\))?")


@dataclass(slots=True)
class ToolCatalog:
    """Tool specs by (name, version), with each name's status, and the run's per-task record of use."""

    specs: dict[tuple[str, int], Any] = field(default_factory=dict)
    status: dict[str, dict[str, Any]] = field(default_factory=dict)
    run_tasks: dict[str, Any] = field(default_factory=dict)
    """``summary.json``'s ``tasks`` (empty when the checkpoint is not a run, or the run wrote none)."""
    sources: list[str] = field(default_factory=list)
    """What the catalogue was read from (for the eval's document)."""

    @classmethod
    def for_eval(
        cls, run_dir: Path | None, config: str | Path | None, model_dir: Path | None = None
    ) -> ToolCatalog:
        """Built-ins, ``run_dir``'s snapshot, ``config``'s ``[[tools]]`` and ``run_dir``'s summary (see the module
        docstring); without a run, an exported checkpoint's copies of them in ``model_dir`` (``rlar_tools.jsonl``,
        ``rlar_summary.json``, written by ``rlar export``). Raises ``ValueError`` when a ``[[tools]]`` entry
        cannot become a tool."""

        cat = cls()
        for spec in builtin_specs():
            cat.specs[(spec.name, spec.version)] = spec
        snapshot: Path | None
        summary: Path | None
        if run_dir is not None:
            snapshot, summary = run_dir / SNAPSHOT, run_dir / "summary.json"
        elif model_dir is not None:
            snapshot, summary = model_dir / f"rlar_{SNAPSHOT}", model_dir / "rlar_summary.json"
        else:
            snapshot = summary = None
        if snapshot is not None and snapshot.is_file():
            cat._add_snapshot(snapshot)
        if config is not None and Path(config).is_file():
            cat._add_config_tools(Path(config))
        if summary is not None and summary.is_file():
            cat.run_tasks = dict(json.loads(summary.read_text()).get("tasks") or {})
            cat.sources.append(str(summary))
        return cat

    def _add_config_tools(self, config: Path) -> None:

        known = set(self.names())
        entries = [
            e for e in tomllib.loads(config.read_text()).get("tools") or [] if e.get("name") not in known
        ]
        for entry in entries:
            try:
                spec = python_tool_spec(
                    PythonToolConfig.model_validate(entry), base_dir=config.absolute().parent
                )
            except (ValueError, PythonToolError) as exc:  # pydantic's ValidationError is a ValueError
                raise ValueError(f"{config}: [[tools]] {entry.get('name', '?')!r}: {exc}") from None
            # Not registered: the version the run's registry gave it is in the snapshot; 1 otherwise.
            self.specs.setdefault((spec.name, spec.version), spec)
        if entries:
            self.sources.append(f"{config} [[tools]]")

    def _add_snapshot(self, path: Path) -> None:

        for n, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            rec = json.loads(line)
            if rec.get("type") == "tool":
                spec = ToolSpec.from_dict(rec["spec"])
                self.specs[(spec.name, spec.version)] = spec
            elif rec.get("type") == "status":
                self.status[str(rec["name"])] = dict(rec["status"])
            else:
                raise ValueError(f"{path}:{n}: unknown record type {rec.get('type')!r}")
        self.sources.append(str(path))

    # -- lookups ------------------------------------------------------------------------------------------
    def state(self, name: str, version: int) -> str:
        st = self.status.get(name) or {}
        if st.get("disabled"):
            return "disabled"
        mark = (st.get("versions") or {}).get(str(version))
        return str(mark["state"]) if mark else "enabled"

    def latest(self, name: str) -> Any | None:
        """The newest usable version of ``name`` (not disabled or quarantined), else None."""
        versions = sorted((v for (n, v) in self.specs if n == name), reverse=True)
        for v in versions:
            if self.state(name, v) == "enabled":
                return self.specs[(name, v)]
        return None

    def names(self) -> list[str]:
        return sorted({n for n, _ in self.specs})

    def resolve(self, name: str, version: int = 0) -> Any:
        """The spec of ``name`` (``version`` 0: the newest usable); ``ValueError`` naming what is known."""
        spec = self.specs.get((name, version)) if version else self.latest(name)
        if spec is None:
            which = f"{name!r} v{version}" if version else repr(name)
            where = ", ".join(self.sources) or "no run snapshot, no [[tools]]"
            raise ValueError(
                f"tool {which} is neither built in nor in the run's tools ({where}); known: "
                f"{', '.join(self.names())}"
            )
        return spec

    def task_tools(self, task: str, default_tools: Any) -> list[ChosenTool]:
        """The tools ``task`` is scored with (see the module docstring for the order). Raises ``ValueError``
        when one of them is not in the catalogue."""
        run = self.run_tasks.get(task) or {}
        last = (run.get("routing") or {}).get("last") or {}
        routed = [m for t in last.get("tools") or [] if (m := _ROUTED.fullmatch(str(t)))]
        if routed:
            return [
                self._chosen(m.group(1), int(m.group(2)), float(m.group(3)), "run-router") for m in routed
            ]
        weights = {str(n): float(w) for n, w in default_tools}
        used = [t for t in run.get("tools") or [] if not t.get("shadow")]
        if used:
            return [
                self._chosen(
                    str(t["tool"]), int(t["version"]), weights.get(str(t["tool"]), 1.0), "run-learner"
                )
                for t in used
            ]
        return [self._chosen(name, 0, weight, "default_tools") for name, weight in weights.items()]

    def _chosen(self, name: str, version: int, weight: float, source: str) -> ChosenTool:
        spec = self.resolve(name, version)
        return ChosenTool(spec, weight, source, self.state(spec.name, spec.version))


def executor_options(tools: list[ChosenTool]) -> dict[str, Any]:
    """``ToolExecutor`` keyword arguments that let its workers import the trusted user modules among
    ``tools`` (their directories go on ``sys.path``, which the workers inherit)."""

    prefixes = list(DEFAULT_ALLOWED_PREFIXES)
    for t in tools:
        spec = t.spec
        if str(spec.kind) == "sandbox" or "function" not in spec.params:
            continue
        module = str(spec.params["function"]).partition(":")[0]
        if module not in prefixes:
            prefixes.append(module)
        where = (spec.provenance or {}).get("python_path")
        if where and where not in sys.path:
            sys.path.insert(0, str(where))
    return {"allowed_prefixes": prefixes}
