"""Validation of the run document against the code's own models: every section, every actor's config.

:func:`validate_run_config` checks every section against its model (each actor's config class, ``[train]``,
``[policy]``, ``[nats]``, ``[topology]``, ``[[tasks]]``, ``[[tools]]``): an unknown section or key is named
with the closest valid one (``[learner] unknown key 'max_stepz' (did you mean 'max_steps'?)``), and a bad
value with what was expected. Every problem is one line. Loading the document (TOML, paths, ``--set``) is
:mod:`rlar.runconfig`, below the actors; this module knows the actors' config classes, so it is app.

:data:`SECTIONS` is the table of sections; ``rlar/app/docgen.py`` renders the config reference from it.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from actors import UnknownActorKind, resolve
from rlar.kinds import section_kinds
from rlar.runconfig import MODEL_KEYS, PATH_KEYS, ConfigProblems, actor_config_dict, load_run_config

__all__ = [
    "MODEL_KEYS",
    "PATH_KEYS",
    "SECTIONS",
    "ConfigProblems",
    "Section",
    "load_run_config",
    "section_model",
    "unknown_keys",
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
    Section(
        "train", "rlar.app.train:TrainSection", "`rlar train`: run name, actors, time budget, crash limits."
    ),
    Section(
        "policy",
        "rlar.app.train:PolicySection",
        "The initial policy (the demo's tiny model or a checkpoint).",
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
        "llm",
        "rlar.agent.endpoints:LLMSection",
        "Language-model endpoints (a local server or an API) and the role each serves: router, synthesizer,"
        " judge.",
    ),
    # The actors' sections, from the table of actor kinds.
    *(Section(k.section, k.config, k.doc, actor=k.name) for k in section_kinds()),
)
_BY_NAME = {s.name: s for s in SECTIONS}


def section_model(name: str) -> type[BaseModel]:
    module, _, cls = _BY_NAME[name].model.partition(":")
    model: type[BaseModel] = getattr(importlib.import_module(module), cls)
    return model


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
            if sec.array
            else unknown_keys(model, data)
        )
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
