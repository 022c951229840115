"""The run document: one TOML file for every actor — loaded, its paths resolved, and every section validated.

``load_run_config(path, overrides)`` is what ``rlar train``, ``rlar up`` and every actor process read:

1. The TOML file. ``[[tasks]]`` tables are the same as ``[feeder] tasks = [...]`` (one or the other).
2. Relative file paths resolve against the config file's directory (:data:`PATH_KEYS`; model directories
   in :data:`MODEL_KEYS` only when they exist there, since a bare name may be a hub id), and a ``[[tools]]``
   table without ``path`` gets that directory as its ``path`` — so the document, saved anywhere (a run's
   ``config.toml``), means the same files. ``--set``
   overrides are applied next; the relative paths they bring resolve against the working directory.
3. :func:`validate_run_config` checks every section against the code's own models (each actor's config
   class, ``[train]``, ``[policy]``, ``[nats]``, ``[topology]``, ``[[tasks]]``, ``[[tools]]``): an unknown
   section or key is named with the closest valid one (``[learner] unknown key 'max_stepz' (did you mean
   'max_steps'?)``), and a bad value with what was expected. Every problem is one line.

:data:`SECTIONS` is the table of sections; ``rlar/docgen.py`` renders the config reference from it.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import types
import typing
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from rlar.config import ConfigError, apply_overrides, load_toml

__all__ = [
    "MODEL_KEYS",
    "PATH_KEYS",
    "SECTIONS",
    "ConfigProblems",
    "Section",
    "load_run_config",
    "resolve_paths",
    "section_model",
    "validate_run_config",
]


@dataclass(frozen=True, slots=True)
class Section:
    """One section of the run document: its model (``module:Class``), and whether it is a list of tables."""

    name: str
    model: str
    doc: str
    array: bool = False
    actor: str = ""  # the actor kind that reads it (its config = the section + [nats], [topology], [run])


SECTIONS: tuple[Section, ...] = (
    Section("train", "rlar.train:TrainSection", "`rlar train`: run name, actors, time budget, crash limits."),
    Section(
        "policy", "rlar.train:PolicySection", "The initial policy (the demo's tiny model or a checkpoint)."
    ),
    Section("nats", "bus.config:NatsConfig", "How every actor reaches the bus."),
    Section("topology", "bus.topology:TopologyConfig", "Streams and consumers (ack waits, retention)."),
    Section(
        "metrics", "rlar.observe.config:MetricsEndpoint", "Every actor's Prometheus `/metrics` (port, host)."
    ),
    Section("run", "rlar.runconfig:RunSection", "The run directory (set by `rlar train`)."),
    Section("placement", "rlar.placement:PlacementSection", "GPUs per actor kind (`rlar plan` checks them)."),
    Section(
        "tasks",
        "rlar.tasks.config:TaskConfig",
        "The task mix, one table per task (= `[feeder] tasks`).",
        array=True,
    ),
    Section(
        "tools", "rlar.tools.pyfunc:PythonToolConfig", "Your own reward functions in Python.", array=True
    ),
    Section(
        "feeder", "actors.feeder:FeederConfig", "The feeder actor: task mix, routing, pacing.", actor="feeder"
    ),
    Section(
        "rollout",
        "actors.rollout:RolloutConfig",
        "Rollout actors: generation engine and sampling.",
        actor="rollout",
    ),
    Section(
        "reward",
        "actors.reward:RewardConfig",
        "Reward workers: concurrency, deadlines, trusted modules.",
        actor="reward",
    ),
    Section(
        "sandbox",
        "actors.sandbox:SandboxActorConfig",
        "The sandbox actor (bubblewrap jail).",
        actor="sandbox",
    ),
    Section(
        "learner",
        "actors.learner:LearnerConfig",
        "The learner: DeepSpeed GRPO, steps, checkpoints.",
        actor="learner",
    ),
    Section(
        "router",
        "actors.router:RouterConfig",
        "The router: which reward tool scores each task.",
        actor="router",
    ),
    Section(
        "synthesizer",
        "actors.synthesizer:SynthesizerConfig",
        "The synthesizer: writes new verifiers.",
        actor="synthesizer",
    ),
    Section(
        "retriever",
        "actors.retriever:RetrieverConfig",
        "The retriever: finds reward models on a hub.",
        actor="retriever",
    ),
    Section("monitor", "actors.monitor:MonitorConfig", "The monitor: telemetry to a file.", actor="monitor"),
)
_BY_NAME = {s.name: s for s in SECTIONS}

# File paths resolved against the config file's directory ("[]" = every element of a list).
PATH_KEYS: tuple[str, ...] = (
    "tasks[].path", "feeder.tasks[].path", "tasks[].examples_file", "feeder.tasks[].examples_file",
    "policy.path", "policy.sft_tasks[].path", "tools[].path",
    "reward.python_path[]", "nats.password_file", "nats.creds_file", "nats.storage_dir",
    "nats.tls.ca_file", "nats.tls.cert_file", "nats.tls.key_file",
)  # fmt: skip
# Model directories: resolved only when the config-relative directory exists (else a hub-style name).
MODEL_KEYS: tuple[str, ...] = ("rollout.engine.model", "learner.trainer.model_dir")


class RunSection(BaseModel):
    """``[run]``: where the run's files go."""

    model_config = {"extra": "forbid", "use_attribute_docstrings": True}

    dir: str = "runs/default"
    """The run directory (``rlar train`` sets it; actors write checkpoints, metrics and logs there)."""


class ConfigProblems(ConfigError):
    """Every problem found in a run document; ``str()`` is one line per problem."""

    def __init__(self, where: str, problems: list[str]) -> None:
        self.where = where
        self.problems = problems
        super().__init__("\n".join(f"{where}: {p}" for p in problems))


def section_model(name: str) -> type[BaseModel]:
    module, _, cls = _BY_NAME[name].model.partition(":")
    model: type[BaseModel] = getattr(importlib.import_module(module), cls)
    return model


# -- paths ------------------------------------------------------------------------------------------------


def _walk_key(node: Any, parts: list[str]) -> Iterator[tuple[Any, Any]]:
    """(container, key) pairs addressed by ``parts`` (``name[]`` = each element of the list at name)."""
    if not parts:
        return
    head, rest = parts[0], parts[1:]
    each = head.endswith("[]")
    key = head.removesuffix("[]")
    if not isinstance(node, dict) or key not in node:
        return
    if not each:
        if rest:
            yield from _walk_key(node[key], rest)
        else:
            yield node, key
        return
    items = node[key]
    if not isinstance(items, list):
        if not rest:  # a single value where a list is allowed (e.g. path = "a.jsonl")
            yield node, key
        return
    for i, item in enumerate(items):
        if rest:
            yield from _walk_key(item, rest)
        else:
            yield items, i


def _resolve_one(value: Any, base: Path, *, only_existing: bool = False) -> Any:
    if isinstance(value, list):
        return [_resolve_one(v, base, only_existing=only_existing) for v in value]
    if not isinstance(value, str) or not value or "{" in value or "://" in value:
        return value
    p = Path(value).expanduser()
    if p.is_absolute():
        return str(p)
    resolved = base / p
    if only_existing and not resolved.exists():
        return value
    return str(resolved)


def resolve_paths(doc: dict[str, Any], base_dir: str | Path) -> dict[str, Any]:
    """Make the relative paths of :data:`PATH_KEYS` (and existing :data:`MODEL_KEYS`) absolute against
    ``base_dir``, in place. Values holding ``{run_dir}`` templates or URLs are left alone."""
    base = Path(base_dir).expanduser().absolute()
    for keys, only_existing in ((PATH_KEYS, False), (MODEL_KEYS, True)):
        for key in keys:
            for container, k in list(_walk_key(doc, key.split("."))):
                container[k] = _resolve_one(container[k], base, only_existing=only_existing)
    return doc


def normalise(doc: dict[str, Any], where: str = "config") -> dict[str, Any]:
    """``[[tasks]]`` → ``[feeder] tasks`` (refusing both at once), in place."""
    if "tasks" in doc:
        tasks = doc["tasks"]
        feeder = doc.setdefault("feeder", {})
        if not isinstance(feeder, dict):
            return doc
        if feeder.get("tasks"):
            raise ConfigProblems(where, ["tasks are given twice: as [[tasks]] tables and as [feeder] tasks; "
                                         "keep one"])  # fmt: skip
        feeder["tasks"] = tasks
        del doc["tasks"]
    return doc


def _default_tool_paths(doc: dict[str, Any], base: Path) -> None:
    """A ``[[tools]]`` table without ``path`` imports its module from the config file's directory: say so in
    the document, so that a copy of it saved elsewhere (the run directory's ``config.toml``, which a resume
    reads) still finds the module there."""
    tools = doc.get("tools")
    for entry in tools if isinstance(tools, list) else []:
        if isinstance(entry, dict) and entry.get("path") is None:
            entry["path"] = str(base)


def load_run_config(
    path: str | Path | None, overrides: list[str] | None = None, *, cwd: str | Path | None = None
) -> dict[str, Any]:
    """The run document of ``path`` (None: an empty one) with paths resolved and ``overrides`` applied; see
    the module docstring. Not validated (:func:`validate_run_config`)."""
    if path is None:
        doc: dict[str, Any] = {}
        where = "config"
    else:
        doc = load_toml(path)
        where = str(path)
        base = Path(path).expanduser().absolute().parent
        resolve_paths(doc, base)
        _default_tool_paths(doc, base)
    normalise(doc, where)
    apply_overrides(doc, overrides)
    normalise(doc, where)
    resolve_paths(doc, Path(cwd) if cwd is not None else Path.cwd())
    _labelled_to_synthesizer(doc, where)
    return doc


def _labelled_to_synthesizer(doc: dict[str, Any], where: str) -> None:
    """The tasks' labelled examples (``examples``, ``examples_file``) go to ``[synthesizer] labelled`` by task
    name: the synthesizer refuses a verifier that disagrees with any of them."""
    from rlar.tasks.config import TaskConfig

    feeder = doc.get("feeder")
    tasks = feeder.get("tasks") if isinstance(feeder, dict) else None
    found: dict[str, list[dict[str, Any]]] = {}
    problems = []
    for entry in tasks if isinstance(tasks, list) else []:
        if not isinstance(entry, dict) or not (entry.get("examples") or entry.get("examples_file")):
            continue
        try:
            found[str(entry.get("name"))] = TaskConfig.model_validate(entry).labelled_examples()
        except ValidationError:
            continue  # validate_run_config names the problem
        except ValueError as exc:
            problems.append(str(exc))
    if problems:
        raise ConfigProblems(where, problems)
    if found:
        synth = doc.setdefault("synthesizer", {})
        if isinstance(synth, dict):
            synth["labelled"] = {**dict(synth.get("labelled") or {}), **found}


# -- validation -------------------------------------------------------------------------------------------


def _suggest(key: str, valid: list[str]) -> str:
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else f" (valid: {', '.join(sorted(valid))})"


def _where(section: str, loc: tuple[Any, ...], data: Any) -> tuple[str, tuple[Any, ...]]:
    """(prefix, rest of the location): ``[learner]``, or ``task 'name'`` for one of the feeder's tasks."""
    if section == "feeder" and len(loc) >= 2 and loc[0] == "tasks" and isinstance(loc[1], int):
        tasks = data.get("tasks") if isinstance(data, Mapping) else None
        item = tasks[loc[1]] if isinstance(tasks, list) and loc[1] < len(tasks) else None
        name = item.get("name") if isinstance(item, Mapping) else None
        return (f"task {name!r}" if name else f"task #{loc[1] + 1}"), loc[2:]
    if isinstance(data, list) and loc and isinstance(loc[0], int):
        item = data[loc[0]] if loc[0] < len(data) else None
        name = item.get("name") if isinstance(item, Mapping) else None
        return f"[[{section}]] {name!r}" if name else f"[[{section}]] #{loc[0] + 1}", loc[1:]
    return f"[{section}]", loc


def _dotted(loc: tuple[Any, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")


def _keypath(*parts: Any) -> str:
    return ".".join(str(p) for p in parts)


def _fields(model: Any) -> dict[str, Any] | None:
    """Field name (and alias) → annotation, for a pydantic model or a dataclass; None for anything else."""
    if isinstance(model, type) and issubclass(model, BaseModel):
        if model.model_config.get("extra") == "allow":
            return None
        out: dict[str, Any] = {}
        for name, f in model.model_fields.items():
            out[name] = f.annotation
            if f.alias:
                out[f.alias] = f.annotation
        return out
    if isinstance(model, type) and dataclasses.is_dataclass(model):
        hints = typing.get_type_hints(model)
        return {f.name: hints.get(f.name, Any) for f in dataclasses.fields(model)}
    return None


def _literal_values(model: Any, key: str) -> set[Any]:
    fields = _fields(model) or {}
    ann = fields.get(key)
    if typing.get_origin(ann) is typing.Literal:
        return set(typing.get_args(ann))
    return set()


def unknown_keys(model: Any, data: Any, loc: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], str, str]]:
    """Keys of ``data`` that ``model`` (recursively: nested models, lists, dicts, tagged unions) does not
    have: ``[(location, key, suggestion)]``."""
    fields = _fields(model)
    if fields is None or not isinstance(data, Mapping):
        return []
    out: list[tuple[tuple[Any, ...], str, str]] = []
    for key, value in data.items():
        if key not in fields:
            out.append((loc, str(key), _suggest(str(key), list(fields))))
        else:
            out += _unknown_in(fields[key], value, (*loc, key))
    return out


def _unknown_in(ann: Any, value: Any, loc: tuple[Any, ...]) -> list[tuple[tuple[Any, ...], str, str]]:
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if origin is typing.Annotated:
        return _unknown_in(args[0], value, loc)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
        models = [m for m in members if _fields(m) is not None]
        if isinstance(value, Mapping) and models:
            # A tagged union: the member whose Literal tag (kind, backend, ...) the value carries.
            tagged = [m for m in models if any(value.get(k) in _literal_values(m, k) for k in value)]
            pick = tagged or models
            if len(pick) == 1:
                return unknown_keys(pick[0], value, loc)
            found = [unknown_keys(m, value, loc) for m in pick]
            return min(found, key=len)
        for m in members:
            if typing.get_origin(m) in (list, tuple, dict) and isinstance(value, list | tuple | Mapping):
                return _unknown_in(m, value, loc)
        return []
    if origin in (list, tuple, set, frozenset) and isinstance(value, list | tuple):
        item = args[0] if args else Any
        return [x for i, v in enumerate(value) for x in _unknown_in(item, v, (*loc, i))]
    if origin in (dict, Mapping) and isinstance(value, Mapping) and len(args) == 2:
        return [x for k, v in value.items() for x in _unknown_in(args[1], v, (*loc, k))]
    if _fields(ann) is not None:
        return unknown_keys(ann, value, loc)
    return []


class _Shifted:
    """A ValidationError's errors with an index put in front of every location (one item of a list)."""

    def __init__(self, exc: ValidationError, index: int) -> None:
        self._errors = [{**e, "loc": (index, *e["loc"])} for e in exc.errors()]

    def errors(self) -> list[Any]:
        return self._errors


def _value_problems(
    section: str, exc: Any, data: Any, shared: tuple[str, ...] = ()
) -> list[tuple[str, tuple[Any, ...]]]:
    """(one line, location) per value error of ``exc`` (a ValidationError or :class:`_Shifted`)."""
    out: dict[str, tuple[Any, ...]] = {}
    for err in exc.errors():
        loc = tuple(err["loc"])
        if err["type"] == "extra_forbidden" or (loc and loc[0] in shared):
            continue  # unknown keys are reported with a suggestion; shared sections on their own
        # Drop pydantic's union-member tags (e.g. 'function-after[...]', 'transformers') from locations.
        loc = tuple(
            p for p in loc if not (isinstance(p, str) and ("[" in p or p in ("transformers", "vllm")))
        )
        msg = err["msg"]
        if err["type"] != "missing" and not isinstance(err.get("input"), dict | list | type(None)):
            msg += f" (got {err['input']!r})"
        prefix, rest = _where(section, loc, data)
        out.setdefault(f"{prefix} {_dotted(rest)}: {msg}" if rest else f"{prefix}: {msg}", loc)
    return list(out.items())


def validate_run_config(
    doc: dict[str, Any],
    *,
    actors: list[str] | None = None,
    where: str = "config",
    from_set: Sequence[str] = (),
) -> dict[str, Any]:
    """Validate every section of ``doc`` and the config of every actor kind in ``actors`` (built-in names or
    ``module:Class`` paths, whose section is the class name in lower case); return the built models by
    section (a list for ``[[...]]`` sections). Raises :class:`ConfigProblems` listing every problem."""
    from actors import UnknownActorKind, resolve
    from actors.launch import actor_config_dict

    problems: list[str] = []
    built: dict[str, Any] = {}
    set_keys = {o.partition("=")[0].strip(): o for o in from_set}

    def note(text: str, key_path: str = "") -> None:
        hit = next(
            (
                o
                for k, o in set_keys.items()
                if key_path
                and (k == key_path or key_path.startswith(k + ".") or k.startswith(key_path + "."))
            ),
            None,
        )
        problems.append(text + (f" (from --set {hit})" if hit else ""))

    # Sections the started actors read: (config class, implied fields) by section name.
    started: dict[str, tuple[type[BaseModel], dict[str, Any]]] = {}
    for kind in actors or []:
        try:
            cls, section, implied = resolve(kind)
        except UnknownActorKind as exc:
            note(f"[train] actors: {exc}", "train.actors")
            continue
        except ImportError as exc:
            note(f"[train] actors: actor {kind!r} cannot be imported: {exc}", "train.actors")
            continue
        started.setdefault(section, (cls.Config, implied))
    for name in doc:
        if name not in _BY_NAME and name not in started:
            note(f"unknown section [{name}]{_suggest(name, [*_BY_NAME, *started])}", name)
    names = [s.name for s in SECTIONS if s.name != "tasks" and (s.name in doc or s.name in started)]
    names += [n for n in started if n not in _BY_NAME]
    for name in names:
        sec = _BY_NAME.get(name) or Section(name, "", "", actor=name)
        data = doc.get(name, [] if sec.array else {})
        if not isinstance(data, list if sec.array else dict):
            shape = f"[[{name}]] must be a list of tables" if sec.array else f"[{name}] must be a table"
            note(f"{shape}, got {type(data).__name__}", name)
            continue
        if sec.actor:
            model, implied = started.get(name) or (resolve(sec.actor)[0].Config, {})
        else:
            model, implied = section_model(name), {}
        found = (
            [x for i, item in enumerate(data) for x in unknown_keys(model, item, (i,))]
            if sec.array else unknown_keys(model, data)
        )  # fmt: skip
        for loc, key, hint in found:
            prefix, rest = _where(name, loc, data)
            note(f"{prefix}: unknown key {_dotted((*rest, key))!r}{hint}", _keypath(name, *loc, key))
        if sec.array:
            items = []
            for i, item in enumerate(data):
                try:
                    items.append(model.model_validate(item))
                except ValidationError as exc:
                    for line, loc in _value_problems(name, _Shifted(exc, i), data):
                        note(line, _keypath(name, *loc))
            built[name] = items
            continue
        shared = (
            tuple(k for k in ("nats", "topology", "metrics", "run_dir") if k not in data) if sec.actor else ()
        )
        try:
            value = actor_config_dict(doc, name, implied) if sec.actor else data
            built[name] = model.model_validate(value)
        except ValidationError as exc:
            for line, loc in _value_problems(name, exc, data, shared):
                note(line, _keypath(name, *loc))
    if problems:
        raise ConfigProblems(where, problems)
    return built
