"""The run document: one TOML file for every actor, loaded and its paths resolved. No actor is known here.

``load_run_config(path, overrides)`` is what ``rlar train``, ``rlar up`` and every actor process read:

1. The TOML file. ``[[tasks]]`` tables are the same as ``[feeder] tasks = [...]`` (one or the other).
2. Relative file paths resolve against the config file's directory (:data:`PATH_KEYS`; model directories
   in :data:`MODEL_KEYS` only when they exist there, since a bare name may be a hub id), and a ``[[tools]]``
   table without ``path`` gets that directory as its ``path`` — so the document, saved anywhere (a run's
   ``config.toml``), means the same files. ``--set``
   overrides are applied next; the relative paths they bring resolve against the working directory.

:func:`actor_config_dict` is one actor's fields of the document (its section plus ``[nats]``, ``[topology]``,
``[metrics]`` and ``[run] dir``; for the router and the synthesizer, the ``agent`` their ``[llm]`` role names:
:mod:`rlar.agent.endpoints`). Validating the document against every section's model is the app's job
(:func:`rlar.app.runconfig.validate_run_config`), since those models include each actor's config class.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from rlar.agent.endpoints import LLMSection, agent_config_for
from rlar.config import ConfigError, apply_overrides, load_toml
from rlar.tasks.config import TaskConfig

__all__ = [
    "MODEL_KEYS",
    "PATH_KEYS",
    "ConfigProblems",
    "RunSection",
    "actor_config_dict",
    "load_run_config",
    "resolve_paths",
]


# File paths resolved against the config file's directory ("[]" = every element of a list).
PATH_KEYS: tuple[str, ...] = (
    "tasks[].path",
    "feeder.tasks[].path",
    "tasks[].examples_file",
    "feeder.tasks[].examples_file",
    "policy.path",
    "policy.sft_tasks[].path",
    "tools[].path",
    "reward.python_path[]",
    "nats.password_file",
    "nats.creds_file",
    "nats.storage_dir",
    "nats.tls.ca_file",
    "nats.tls.cert_file",
    "nats.tls.key_file",
)
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
            raise ConfigProblems(
                where, ["tasks are given twice: as [[tasks]] tables and as [feeder] tasks; keep one"]
            )
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
    _labelled_to_actors(doc, where)
    return doc


def _labelled_to_actors(doc: dict[str, Any], where: str) -> None:
    """The tasks' labelled examples (``examples``, ``examples_file``) go to ``[synthesizer] labelled`` and
    ``[router] labelled`` by task name: the synthesizer refuses a verifier that disagrees with any of them, the
    router vouches for a judge with them (:mod:`rlar.routing.judge_vouch`)."""

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
        # The synthesizer refuses a verifier that disagrees with them; the router vouches for judges on them.
        for section in ("synthesizer", "router"):
            table = doc.setdefault(section, {})
            if isinstance(table, dict):
                table["labelled"] = {**dict(table.get("labelled") or {}), **found}


def actor_config_dict(doc: dict[str, Any], section: str, implied: dict[str, Any]) -> dict[str, Any]:
    """The fields of one actor's config, from the run document."""
    data = dict(doc.get(section, {}))
    data.update(implied)
    if "nats" in doc:
        data.setdefault("nats", doc["nats"])
    if "topology" in doc:
        data.setdefault("topology", doc["topology"])
    if "metrics" in doc:
        data.setdefault("metrics", doc["metrics"])
    run = doc.get("run", {})
    if "dir" in run:
        data.setdefault("run_dir", run["dir"])
    _agent_from_llm(doc, section, data)
    return data


def _agent_from_llm(doc: dict[str, Any], section: str, data: dict[str, Any]) -> None:
    """The ``agent`` of the router or the synthesizer from the endpoint its ``[llm]`` role names; both set is
    ambiguous and refused. An invalid ``[llm]`` is left to its own validation; an endpoint whose server is not
    started yet (``serve`` without ``base_url``) gives nothing here (``rlar train`` sets the URL first)."""
    llm = doc.get("llm")
    if section not in ("router", "synthesizer") or not isinstance(llm, dict) or not llm.get(section):
        return

    try:
        endpoint = LLMSection.model_validate(llm).endpoint_for(section)
    except ValidationError:
        return
    if endpoint is None or endpoint.base_url is None:
        return
    if "agent" in data:
        raise ConfigProblems(
            "config",
            [f"[{section}] agent and [llm] {section} = {llm[section]!r} both name its agent: keep one"],
        )
    data["agent"] = agent_config_for(endpoint)
