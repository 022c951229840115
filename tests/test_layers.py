"""The import layers (bus <- constraints <- library <- actors <- app) as pyproject.toml's import-linter contract
states them.

`make lint` runs `lint-imports`; these tests check that the contract covers every package (a new library
module that is missing from the library layer would be checked by nothing) and that it is enforced (an
upward import in a copy of the tree breaks it).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _layers() -> list[list[str]]:
    doc = tomllib.loads((REPO / "pyproject.toml").read_text())
    (contract,) = [c for c in doc["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [[m.strip() for m in layer.replace("|", ":").split(":")] for layer in contract["layers"]]


def _top_level(package: str) -> set[str]:
    root = REPO / package
    names = {p.stem for p in root.glob("*.py") if p.stem != "__init__"}
    names |= {p.name for p in root.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    return {f"{package}.{n}" for n in names}


def test_the_layers_are_app_actors_library_constraints_bus_and_name_every_rlar_module() -> None:
    app, actors, library, constraints, bus = _layers()
    assert (
        "rlar.app" in app and actors == ["actors"] and constraints == ["rlar.constraints"] and bus == ["bus"]
    )
    named = set(app) | set(library) | set(constraints)
    assert _top_level("rlar") == named, (
        f"not in a layer: {sorted(_top_level('rlar') - named)}; no such module: {sorted(named - _top_level('rlar'))}"
    )


def test_the_actors_layer_imports_no_app_module_and_the_library_no_actor() -> None:
    # The two directions the issue names, read from the source (the contract checks every import).
    for path in (REPO / "rlar").rglob("*.py"):
        rel = path.relative_to(REPO).as_posix()
        if rel.startswith("rlar/app/"):
            continue
        text = path.read_text()
        assert "from actors" not in text and "import actors" not in text, rel
        assert "from rlar.app" not in text and "import rlar.app" not in text, rel
    for path in (REPO / "actors").rglob("*.py"):
        assert "from rlar.app" not in path.read_text(), path


@pytest.mark.skipif(
    shutil.which("lint-imports", path=str(Path(sys.executable).parent)) is None,
    reason="import-linter is not installed (the dev extra)",
)
def test_lint_imports_keeps_the_tree_and_breaks_on_an_upward_import(tmp_path: Path) -> None:
    lint = str(Path(sys.executable).parent / "lint-imports")
    for pkg in ("bus", "actors", "rlar"):
        shutil.copytree(REPO / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__", "static"))
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path), "HOME": str(tmp_path)}
    ok = subprocess.run(
        [lint, "--no-cache"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # The library importing an actor is an upward import: the contract must break, naming it.
    (tmp_path / "rlar" / "tools" / "upward.py").write_text("import actors.feeder\n")
    bad = subprocess.run(
        [lint, "--no-cache"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert bad.returncode != 0
    assert "rlar.tools.upward -> actors.feeder" in bad.stdout
    # The constraint model importing the library above it (the reader) is an upward import too.
    (tmp_path / "rlar" / "tools" / "upward.py").unlink()
    (tmp_path / "rlar" / "constraints" / "upward.py").write_text("import rlar.tasks.reading\n")
    model = subprocess.run(
        [lint, "--no-cache"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert model.returncode != 0
    assert "rlar.constraints.upward -> rlar.tasks.reading" in model.stdout
    # The GRPO maths importing the bus directly breaks the second contract (their wire parts are rlar.wire).
    (tmp_path / "rlar" / "constraints" / "upward.py").unlink()
    (tmp_path / "rlar" / "learn" / "wired.py").write_text("import bus.client\n")
    wired = subprocess.run(
        [lint, "--no-cache"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert wired.returncode != 0
    assert "rlar.learn.wired -> bus.client" in wired.stdout and "Layers: bus" in wired.stdout
