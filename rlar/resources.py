"""Files that ship with RLAR and caches it keeps, found from the package — never from the working directory.

- :data:`ROOT`: the project root next to the ``rlar`` package (the checkout the editable install points at);
  ``data/`` (shipped task data, labelled sets) and ``deploy/configs/`` (run configs) live there.
- :func:`data_file`: a shipped data file (``$RLAR_DATA_DIR`` overrides the directory).
- :func:`cache_dir`: where expensive artefacts are kept across runs (the demo's warmed-up policy):
  ``$RLAR_CACHE_DIR``, else ``<ROOT>/runs/.cache`` when that is writable, else ``~/.cache/rlar``.
- :func:`packaged`: a path given on the command line that names a shipped file (``data/x.jsonl``,
  ``deploy/configs/demo.toml``) is taken from the working directory when it exists there, else from ROOT —
  so the documented commands work from any directory.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DEMO_CONFIG", "ROOT", "cache_dir", "data_dir", "data_file", "packaged"]

ROOT = Path(__file__).resolve().parents[1]
DEMO_CONFIG = "deploy/configs/demo.toml"


def data_dir() -> Path:
    return Path(os.environ.get("RLAR_DATA_DIR") or ROOT / "data")


def data_file(name: str) -> Path:
    """A shipped data file by name (``math_pairs.jsonl``)."""
    return data_dir() / name


def packaged(path: str | Path) -> Path:
    """``path`` itself when it exists (or is absolute), else the shipped file of that relative name."""
    p = Path(path).expanduser()
    if p.is_absolute() or p.exists():
        return p
    parts = p.parts
    if parts and parts[0] == "data":
        shipped = data_dir().joinpath(*parts[1:])
    else:
        shipped = ROOT / p
    return shipped if shipped.exists() else p


def cache_dir() -> Path:
    """The cache directory (created); see the module docstring."""
    env = os.environ.get("RLAR_CACHE_DIR")
    candidates = [Path(env)] if env else [ROOT / "runs" / ".cache", Path.home() / ".cache" / "rlar"]
    for c in candidates:
        try:
            c.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(c, os.W_OK):
            return c
    raise OSError(f"no writable cache directory among {[str(c) for c in candidates]} (set RLAR_CACHE_DIR)")
