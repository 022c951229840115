"""Loading typed configuration: TOML files plus ``section.key=value`` overrides from the command line."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


class ConfigError(ValueError):
    """A config file or override is malformed; the message names the file, key and problem."""


def load_toml(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"config file not found: {p}")
    try:
        return tomllib.loads(p.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: invalid TOML: {exc}") from None


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        try:
            return tomllib.loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError:
            return text


def apply_overrides(doc: dict[str, Any], overrides: list[str] | None) -> dict[str, Any]:
    """Apply ``a.b.c=value`` overrides (value parsed as JSON/TOML, else kept as a string)."""
    for item in overrides or []:
        if "=" not in item:
            raise ConfigError(f"override {item!r} is not of the form key.path=value")
        key, _, raw = item.partition("=")
        parts = [k for k in key.strip().split(".") if k]
        if not parts:
            raise ConfigError(f"override {item!r} has an empty key")
        node = doc
        for k in parts[:-1]:
            nxt = node.setdefault(k, {})
            if not isinstance(nxt, dict):
                raise ConfigError(f"override {item!r}: {k} is not a table")
            node = nxt
        node[parts[-1]] = _parse_value(raw.strip())
    return doc


def build(model: type[M], data: dict[str, Any], where: str = "config") -> M:
    """Validate ``data`` into ``model`` with an error message that names the offending fields."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        lines = [f"{where}: invalid {model.__name__}:"]
        for err in exc.errors():
            loc = ".".join(str(x) for x in err["loc"])
            lines.append(f"  {loc}: {err['msg']}")
        raise ConfigError("\n".join(lines)) from None
