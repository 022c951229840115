"""Actors: one module, one class, one job each. They import ``bus`` and ``rlar``, never each other.

:data:`KINDS` maps the names used by ``rlar up --actors NAME=N`` to the class (by dotted path, imported
lazily so the CLI starts fast) and to config fields that the name implies (``reward-model`` is a reward
worker serving only ``model`` tools); it is derived from the table of actor kinds, :mod:`rlar.kinds`.
Any ``package.module:Class`` path works as a kind too.
"""

from __future__ import annotations

import importlib
from typing import Any

from rlar.kinds import ACTOR_KINDS

KINDS: dict[str, tuple[str, str, dict[str, Any]]] = {
    # name: (dotted class path, config section, implied config fields), from the one table rlar.kinds
    k.name: (k.actor, k.section, dict(k.implied))
    for k in ACTOR_KINDS.values()
}


class UnknownActorKind(ValueError):
    pass


def resolve(kind: str) -> tuple[type[Any], str, dict[str, Any]]:
    """Return ``(actor class, config section, implied fields)`` for a kind name or a dotted path."""
    if kind in KINDS:
        path, section, implied = KINDS[kind]
    elif ":" in kind:
        path, section, implied = kind, kind.rsplit(":", 1)[1].lower(), {}
    else:
        raise UnknownActorKind(f"unknown actor kind {kind!r}; known: {', '.join(sorted(KINDS))}")
    module_name, _, cls_name = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise UnknownActorKind(f"actor kind {kind!r} is not available in this build ({path})") from None
        raise
    return getattr(module, cls_name), section, dict(implied)
