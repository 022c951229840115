"""Docs that cannot drift: every runnable block of the pages of README.md and docs/*.md that run no training
runs here (the pages that do: tests/long/test_docs_training_pages.py), the generated reference pages must match
the code, each tool pitfall's example must hold, and every CLI flag has help with its default. How blocks run:
tests/support/docs.py."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.support.docs import BLOCKS, Page, makefile_recipe, page_classes
from tests.support.env import REPO
from tests.support.retrieval import session_cache


@pytest.fixture(scope="session")
def doc_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the session's pages, shared by its xdist workers (``<base>/popen-gwN`` is a worker's own
    base): the demo's warmed-up policy and the routing caches are built once (``rlar train`` locks its cache)."""
    return session_cache(tmp_path_factory)


@pytest.fixture(scope="session")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Page]:
    return {}


globals().update(page_classes(training=False))


def test_the_docs_hold_runnable_blocks_and_few_skips() -> None:
    runnable = [b for b in BLOCKS if not b.skip]
    print(
        f"doc blocks: {len(BLOCKS)} runnable-language blocks, {len(runnable)} run, {len(BLOCKS) - len(runnable)} "
        f"skipped: {[(b.id, b.skip) for b in BLOCKS if b.skip]}"
    )
    assert len(runnable) >= 8 and len(runnable) >= 3 * (len(BLOCKS) - len(runnable))


def test_make_run_is_run_by_its_own_bounded_test_and_the_tiny_recipe_by_the_walkthrough() -> None:
    """README's ``make run`` block is not run here: the real-model recipe is run by tests/test_make_run.py (two
    steps, the Makefile's own recipe), and its skip says so. ``make run-tiny``'s recipe starts a command of a README
    block that does run (the walk-through's ``rlar train``), so that one cannot drift either."""
    readme = [b for b in BLOCKS if b.path.name == "README.md"]
    (make_run,) = [b for b in readme if re.match(r"make run(\s|$)", b.text.lstrip())]
    assert make_run.skip and "test_make_run" in make_run.skip, make_run.skip
    recipe = makefile_recipe("run-tiny").split()
    assert recipe[:2] == ["rlar", "train"] and "--config" in recipe, recipe
    runs = [
        line.split("  #")[0].split()
        for b in readme
        if not b.skip and b.lang == "bash"
        for line in b.text.splitlines()
    ]
    assert any(words[: len(recipe)] == recipe for words in runs), (recipe, "is in no README block that runs")


# -- generated reference pages, tool pitfalls, CLI help -----------------------------------------------------


def test_generated_reference_pages_match_the_code() -> None:
    from rlar.app.docgen import generate

    stale = [
        str(p.relative_to(REPO)) for p, text in generate().items() if not p.exists() or p.read_text() != text
    ]
    assert not stale, f"run `python -m rlar.app.docgen` to regenerate {stale}"


def test_every_builtin_tool_has_pitfalls_and_each_example_holds() -> None:
    import asyncio

    from rlar.app.docgen import PITFALLS, Pitfall
    from rlar.tools import ToolInput, builtin_specs, make_tool

    specs = {s.name: s for s in builtin_specs()}
    assert set(PITFALLS) == set(specs)

    async def outcome(spec_name: str, pit: Pitfall) -> object:
        spec = specs[spec_name]
        if pit.params:
            spec = spec.replace(params={**spec.params, **pit.params}).sealed()
        try:
            tool = make_tool(spec)
        except ValueError:
            return "error"  # cannot be built: what a worker reports for every call
        res = await tool.score(ToolInput("q", pit.response, pit.reference))
        return res.score if res.status == "ok" else res.status

    saved = {k: os.environ.pop(k) for k in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL") if k in os.environ}
    try:
        for name, pits in PITFALLS.items():
            for pit in pits:
                if pit.expect is None:
                    continue
                got = asyncio.run(outcome(name, pit))
                if isinstance(pit.expect, float):
                    assert isinstance(got, float) and abs(got - pit.expect) < 1e-3, (name, pit.text, got)
                else:
                    assert got == pit.expect, (name, pit.text, got)
    finally:
        os.environ.update(saved)


def test_every_cli_flag_has_help_and_states_its_default() -> None:
    import argparse

    from rlar.app.cli import build_parser
    from rlar.app.docgen import walk_parser

    missing = []
    for path, parser in walk_parser(build_parser()):
        for a in parser._actions:
            if isinstance(a, argparse._SubParsersAction | argparse._HelpAction):
                continue
            name = f"{' '.join(path)} {'/'.join(a.option_strings) or a.dest}"
            text = a.help or ""
            if not text.strip():
                missing.append(f"{name}: no help")
            elif (
                a.option_strings
                and a.default not in (None, False, argparse.SUPPRESS)
                and "default" not in text
            ):
                missing.append(f"{name}: help does not state its default {a.default!r}")
    assert not missing, "\n".join(missing)
