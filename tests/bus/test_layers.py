"""The import layers (bus <- constraints <- the library's own layers <- actors <- app) as pyproject.toml's
import-linter contract states them.

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

from tests.support.env import REPO


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
    app, actors, *library, constraints, bus = _layers()
    assert (
        "rlar.app" in app and actors == ["actors"] and constraints == ["rlar.constraints"] and bus == ["bus"]
    )
    assert len(library) >= 2, "the library is ordered in layers of its own"
    named = set(app) | {m for layer in library for m in layer} | set(constraints)
    assert _top_level("rlar") == named, (
        f"not in a layer: {sorted(_top_level('rlar') - named)}; no such module: {sorted(named - _top_level('rlar'))}"
    )
    listed = [m for layer in _layers() for m in layer]
    assert len(listed) == len(set(listed)), "a package is in two layers"


def _index(package: str) -> int:
    return next(i for i, layer in enumerate(_layers()) if package in layer)


def test_the_library_order_puts_tools_below_tasks_below_routing_below_synthesis() -> None:
    # The order the reward-reading code depends on: a tool reads answers, a task reads instructions with the
    # tools, routing chooses among tools for tasks, synthesis writes verifiers with all three.
    assert _index("rlar.synthesis") < _index("rlar.routing") < _index("rlar.tasks") < _index("rlar.tools")
    assert _index("rlar.learn") < _index("rlar.tools") and _index("rlar.wire") < _index("rlar.policy")


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

    def lint_with(module: str, imports: str) -> subprocess.CompletedProcess[str]:
        """lint-imports on the copy with ``module`` (a path under it) importing ``imports``, then without it."""
        path = tmp_path / module
        path.write_text(f"import {imports}\n")
        try:
            return subprocess.run(
                [lint, "--no-cache"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
            )
        finally:
            path.unlink()

    ok = subprocess.run(
        [lint, "--no-cache"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # The library importing an actor is an upward import: the contract must break, naming it.
    bad = lint_with("rlar/tools/upward.py", "actors.feeder")
    assert bad.returncode != 0 and "rlar.tools.upward -> actors.feeder" in bad.stdout
    # The constraint model importing the library above it (the reader) is an upward import too.
    model = lint_with("rlar/constraints/upward.py", "rlar.tasks.reading")
    assert model.returncode != 0 and "rlar.constraints.upward -> rlar.tasks.reading" in model.stdout
    # The GRPO maths importing the bus directly breaks the second contract (their wire parts are rlar.wire).
    wired = lint_with("rlar/learn/wired.py", "bus.client")
    assert wired.returncode != 0
    assert "rlar.learn.wired -> bus.client" in wired.stdout and "Layers: bus" in wired.stdout
    # ... and through another module: the GRPO step reading the learner's groups as the wire carries them.
    indirect = lint_with("rlar/learn/wired.py", "rlar.wire.groups")
    assert indirect.returncode != 0 and "rlar.learn.wired -> rlar.wire.groups" in indirect.stdout
    # Inside the library: a tool reading a task's module is an upward import.
    inner = lint_with("rlar/tools/upward.py", "rlar.tasks.reading")
    assert inner.returncode != 0 and "rlar.tools.upward -> rlar.tasks.reading" in inner.stdout
