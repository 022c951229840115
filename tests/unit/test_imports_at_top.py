"""Imports sit at the top of a module, except imports of heavy optional dependencies.

An import inside a function body is allowed when it loads something heavy that the CLI (and the core install)
starts without, and the module says so once, in a comment near its top imports that names it and says
"imported where used" (``# torch is imported where used: heavy and optional; the CLI starts without it``):

- a third-party package of :data:`HEAVY`, or of :data:`OPTIONAL` (light, but from an extra that some users of
  the importing module do not install);
- one of our modules that imports one of those at its top, directly or through another of our modules
  (found here from the modules' top-level imports, not listed by hand);
- in the CLI's entry (:data:`CLI_ENTRY` and every command module), anything but the standard library: a
  command's implementation is imported when the command runs, so ``rlar --help`` stays instant;
- in a module on the CLI's start path (what ``rlar --help`` imports: :data:`CLI_ENTRY`, every command module
  and what they import at their top), anything that loads a third-party package outside the core install
  (``[project].dependencies``): ``rlar --help`` must run, and stay quick, with the core install alone;
- an optional import whose absence the function handles itself (in a ``try`` that catches ``ImportError``);
- an import whose line, or the line above it, has a comment saying which import cycle it avoids
  (``import cycle``).

The two programs of the sandbox jail (:data:`EXEMPT`) make their imports where used on purpose.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Iterator
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from tests.support.env import REPO

ROOT = REPO
PACKAGES = ("bus", "actors", "rlar")

# Third-party packages that are optional (extras in pyproject.toml) and slow to import (a fraction of a second
# to seconds each): the learner's and the engines' stack, the agents' clients, experiment trackers, plotting,
# data sets, symbolic maths, the dashboard's web server.
HEAVY = frozenset(
    {
        "torch", "vllm", "transformers", "deepspeed", "trl", "peft", "safetensors", "sentence_transformers",
        "playwright", "anthropic",
        "mlflow", "tensorboard", "wandb", "matplotlib",
        "datasets", "pyarrow",
        "sympy", "math_verify",
        "starlette", "uvicorn",
    }
)  # fmt: skip
# Light packages of an extra that not every user of the importing module installs: jsonschema (the agents extra)
# checks a model's tool calls, but rlar.agent is imported by every run config; yaml (pyyaml, the dev extra) writes
# the deploy manifests, whose module the CLI's deploy commands import.
OPTIONAL = frozenset({"jsonschema", "yaml"})
# Programs run inside the sandbox jail on its bare interpreter: their startup is part of every sandboxed run, so
# they import (standard library only) where needed; see their docstrings.
EXEMPT = frozenset({"rlar/sandbox/harness.py", "rlar/sandbox/rpc.py"})
# The CLI's start path: `rlar --help` imports these and what they import at their top.
CLI_ENTRY = ("rlar.app.cli", "rlar.app.commands")

MARKER = "imported where used"
CYCLE = "import cycle"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _files() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


@cache
def _tree(name: str) -> ast.Module:
    return ast.parse(_files()[name].read_text())


def _imported(node: ast.Import | ast.ImportFrom, module: str) -> list[str]:
    """Full names of the modules an import statement names (``from a import b``: ``a``, and ``a.b`` when that
    is one of our modules)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        is_pkg = module in _files() and _files()[module].name == "__init__.py"
        parts = module.split(".")[: len(module.split(".")) - node.level + (1 if is_pkg else 0)]
        base = ".".join([*parts, *([node.module] if node.module else [])])
    subs = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in _files()]
    return [base, *subs]


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST, in_function: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield from _walk(child, True)
        elif isinstance(child, ast.Import | ast.ImportFrom):
            yield child, in_function
        elif isinstance(child, ast.If) and _is_type_checking(child):
            continue  # annotations only
        else:
            yield from _walk(child, in_function)


def _with_parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


@cache
def _top_imports(module: str) -> frozenset[str]:
    """Every module that importing ``module`` imports at once (its top-level imports and their parents)."""
    names = {
        parent
        for node, in_function in _walk(_tree(module), False)
        if not in_function
        for name in _imported(node, module)
        for parent in _with_parents(name)
    }
    return frozenset(names | set(_with_parents(module)[:-1]))


@cache
def _closure(module: str) -> frozenset[str]:
    seen: set[str] = set()
    todo = [module]
    while todo:
        for name in _top_imports(todo.pop()):
            if name not in seen:
                seen.add(name)
                if name in _files():
                    todo.append(name)
    return frozenset(seen)


def _cli_entry() -> set[str]:
    return {*CLI_ENTRY, *(m for m in _files() if m.startswith("rlar.app.commands."))}


@cache
def _cli_start_path() -> frozenset[str]:
    commands = {m for m in _files() if m.startswith("rlar.app.commands.")}
    return frozenset({*CLI_ENTRY, *commands}.union(*(_closure(m) for m in {*CLI_ENTRY, *commands})))


@cache
def _core() -> frozenset[str]:
    """Top-level names of the standard library and of the core install's packages."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    dists = {re.split(r"[<>=!~ \[;]", d)[0].lower().replace("_", "-") for d in project["dependencies"]}
    core = {
        m for m, ds in packages_distributions().items() if {d.lower().replace("_", "-") for d in ds} & dists
    }
    return frozenset(core | set(sys.stdlib_module_names) | set(PACKAGES) | {"__future__"})


def _loads(name: str) -> set[str]:
    """The top-level packages importing ``name`` loads (ours followed through their top-level imports)."""
    loaded = {name, *_with_parents(name)} | (_closure(name) if name in _files() else set())
    return {n.split(".")[0] for n in loaded}


def _heavy(name: str, importer: str) -> bool:
    """Whether importing ``name`` (from ``importer``) loads a heavy package."""
    if importer in _cli_entry():  # a command's implementation loads when the command runs
        return name.split(".")[0] not in sys.stdlib_module_names
    if importer in _cli_start_path():
        return not _loads(name) <= _core()
    return bool(_loads(name) & (HEAVY | OPTIONAL))


def _header_comments(tree: ast.Module, source: str) -> str:
    """The comments above the module's first function or class, one block of text."""
    first = next((n.lineno for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)), 10**9)
    lines = source.splitlines()[: first - 1]
    return " ".join(
        word for line in lines if line.strip().startswith("#") for word in line.strip()[1:].split()
    )


def _named(name: str, comments: str) -> bool:
    """Whether a comment names ``name``, or a package it is in (``rlar.policy`` for ``rlar.policy.hf``; a bare
    ``rlar``, ``bus`` or ``actors`` does not count)."""
    candidates = [n for n in _with_parents(name) if n not in PACKAGES or n == name]
    return any(re.search(rf"(?<![\w.]){re.escape(n)}(?![\w]|\.\w)", comments) for n in candidates)


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(k, ast.Name) and k.id in ("ImportError", "ModuleNotFoundError") for k in kinds)


def _violations_in(module: str, rel: str, source: str) -> list[str]:
    tree = ast.parse(source)
    lines = source.splitlines()
    comments = _header_comments(tree, source)
    optional = {
        node
        for try_ in ast.walk(tree)
        if isinstance(try_, ast.Try) and any(_catches_import_error(h) for h in try_.handlers)
        for stmt in try_.body
        for node in ast.walk(stmt)
    }
    found = []
    for node, in_function in _walk(tree, False):
        if not in_function or node in optional:
            continue
        here = lines[node.lineno - 1] + (lines[node.lineno - 2] if node.lineno > 1 else "")
        if CYCLE in here:
            continue
        names = _imported(node, module)
        heavy = [name for name in names if _heavy(name, module)]
        where = f"{rel}:{node.lineno}: {names[-1]}"
        if not heavy:
            found.append(f"{where} (not heavy: import it at the top)")
        elif not (MARKER in comments and any(_named(name, comments) for name in heavy)):
            found.append(f"{where} (heavy: say so near the top imports, naming it, '{MARKER}')")
    return found


def violations() -> list[str]:
    found = []
    for module, path in _files().items():
        rel = path.relative_to(ROOT).as_posix()
        if rel not in EXEMPT:
            found += _violations_in(module, rel, path.read_text())
    return found


def test_imports_sit_at_the_top_of_a_module_unless_heavy_and_declared() -> None:
    found = violations()
    assert not found, "in-function imports:\n" + "\n".join(found)


def test_rlar_help_imports_only_the_core_install() -> None:
    optional = {m.split(".")[0] for m in _cli_start_path()} - _core()
    assert not optional, f"rlar --help imports packages outside the core install: {sorted(optional)}"


@pytest.mark.parametrize(
    ("source", "ok"),
    [
        ("import json\n\n\ndef f():\n    return json\n", True),
        ("def f():\n    import json\n", False),
        ("def f():\n    from bus import subjects\n", False),
        ("def f():\n    import torch\n", False),  # heavy, but not declared
        ("# torch is imported where used: heavy and optional\n\n\ndef f():\n    import torch\n", True),
        ("# torch is imported where used: heavy and optional\n\n\ndef f():\n    import json\n", False),
        ("# torch is imported where used: heavy\n\n\ndef f():\n    import torch\n    import vllm\n", False),
        (
            "def f():\n    from bus import subjects  # import cycle: bus.subjects imports this at its top\n",
            True,
        ),
    ],
)
def test_the_check_flags_an_in_function_import_unless_heavy_and_declared(source: str, ok: bool) -> None:
    got = _violations_in("rlar.probe", "rlar/probe.py", source)
    assert (not got) == ok, got
