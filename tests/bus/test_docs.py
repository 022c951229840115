"""Docs that cannot drift: every runnable block of README.md and docs/*.md runs here, the generated reference
pages must match the code, each tool pitfall's example must hold, and every CLI flag has help with its default.

The convention for README.md and docs/*.md (docs/reference/ is generated, not collected):

- A ```` ```bash ````, ```` ```python ```` or ```` ```toml ```` block promises to work as written, and runs here.
  Synopses (``[--opt]``, ``a|b``), diagrams and sample output use ```` ```text ```` (or no language).
- Every page gets one temporary working directory outside the repository; its blocks run there in page order
  (a walk-through builds on its earlier steps), with the project's ``rlar`` on PATH, ``HF_HUB_OFFLINE=1`` and
  a cache shared by the session (``RLAR_CACHE_DIR``).
- bash: the block runs with bash ``set -euo pipefail``; a non-zero exit fails it.
- Long-running commands (``rlar up``; ``rlar tail`` without ``--count``/``--timeout``) start in the background,
  must still be running after :data:`RUNNING_S` seconds (the next commands run meanwhile), and must then exit 0
  on SIGINT.
- Shortened settings, the same for every block: ``rlar train`` gets :data:`SHORT_TRAIN` as ``--set`` flags;
  ``make run`` runs the Makefile's own ``run`` recipe (so shortened the same way). Per block, HTML comments
  right above it (``<!-- doctest: ... -->``, invisible when rendered) say what else it needs:
  ``bus`` (an embedded nats-server for the block: ``$RLAR_NATS_URL``, and ``nats://host:4222`` in commands
  points at it), ``setup: CMD`` (run first, e.g. to write an input file), ``append PREFIX: ARGS`` (extra
  arguments for commands starting with PREFIX, e.g. a smaller eval), ``skip: REASON`` (not run; the reason says
  which test covers it instead).
- toml: parsed and validated as a run-config fragment (every key checked; data files are not opened).
- python: run as a script in the temporary directory.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.env import REPO, actor_env
from tests.support.retrieval import session_cache

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
RUNNABLE = ("bash", "python", "toml")
SHORT_TRAIN = [
    "learner.max_steps=4",
    "train.max_minutes=6",
    "policy.sft_steps=200",
    "policy.sft_eval_every=50",
]
RUNNING_S = 8.0
COMMAND_TIMEOUT_S = 900
SLOW = re.compile(r"\b(rlar (train|ablate|eval|export|bench|retrieve)|make run)\b")


@dataclass
class Block:
    path: Path
    line: int
    lang: str
    text: str
    bus: bool = False
    setup: list[str] = field(default_factory=list)
    append: list[tuple[str, str]] = field(default_factory=list)
    skip: str = ""

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def collect() -> list[Block]:
    blocks: list[Block] = []
    for path in DOCS:
        lines = path.read_text().splitlines()
        i = 0
        while i < len(lines):
            m = re.match(r"^```(\w*)\s*$", lines[i])
            if not m:
                i += 1
                continue
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            if m.group(1) in RUNNABLE:
                block = Block(path, i + 1, m.group(1), "\n".join(lines[i + 1 : end]) + "\n")
                k = i - 1
                while k >= 0 and lines[k].startswith("<!-- doctest:"):
                    _directive(block, lines[k].removeprefix("<!-- doctest:").removesuffix("-->").strip())
                    k -= 1
                blocks.append(block)
            i = end + 1
    return blocks


def _directive(block: Block, text: str) -> None:
    if text == "bus":
        block.bus = True
    elif text.startswith("setup:"):
        block.setup.insert(0, text.removeprefix("setup:").strip())
    elif text.startswith("append "):
        prefix, _, args = text.removeprefix("append ").partition(":")
        block.append.append((prefix.strip(), args.strip()))
    elif text.startswith("skip:") and text.removeprefix("skip:").strip():
        block.skip = text.removeprefix("skip:").strip()
    else:
        raise ValueError(f"{block.id}: unknown doctest directive {text!r}")


def units(text: str) -> list[tuple[str, str]]:
    """The block as ``("script", lines)`` chunks run by bash with ``set -e``, and ``("long", command)`` for each
    long-running command (top-level lines only: heredoc bodies and ``\\`` continuations are kept whole)."""
    out: list[tuple[str, str]] = []
    chunk: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1] + " " + lines[i].strip()
        heredoc = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", line)
        if heredoc:
            body = [line]
            while i + 1 < len(lines):
                i += 1
                body.append(lines[i])
                if lines[i].strip() == heredoc.group(1):
                    break
            chunk += body
        elif _long_running(line):
            if chunk:
                out.append(("script", "\n".join(chunk)))
                chunk = []
            out.append(("long", line))
        else:
            chunk.append(line)
        i += 1
    if any(x.strip() and not x.lstrip().startswith("#") for x in chunk):
        out.append(("script", "\n".join(chunk)))
    return out


def _makefile_run(target: str = "run") -> str:
    """A run target's recipe (``run``, ``run-tiny``), as make would run it (the venv's bin dir is on PATH here)."""
    text = (REPO / "Makefile").read_text()
    recipe = re.search(rf"^{re.escape(target)}:.*\n\t(.+)$", text, re.M)
    assert recipe, f"the Makefile has no {target} recipe"
    return recipe.group(1).replace("$(VENV)/bin/", "")


def shorten(line: str, block: Block, url: str | None) -> str:
    """One top-level line with the shortened settings (see the module docstring)."""
    stripped = line.lstrip()
    if make := re.match(r"make (run(?:-tiny)?)\b", stripped):
        line = _makefile_run(make.group(1)) + stripped[make.end() :]
    if url:
        line = line.replace("nats://host:4222", url)
    head, sep, comment = line.partition("  #")
    if re.match(r"^\s*rlar train\b", head):
        head = head.rstrip() + "".join(f" --set {s}" for s in SHORT_TRAIN)
    for prefix, args in block.append:
        if head.strip().startswith(prefix):
            head = head.rstrip() + f" {args}"
    return head + (f"  #{comment}" if sep else "")


def _script(chunk: str, block: Block, url: str | None) -> str:
    lines, in_heredoc = [], ""
    for line in chunk.splitlines():
        if in_heredoc:
            lines.append(line)
            in_heredoc = "" if line.strip() == in_heredoc else in_heredoc
            continue
        m = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", line)
        in_heredoc = m.group(1) if m else ""
        lines.append(shorten(line, block, url))
    return "set -euo pipefail\n" + "\n".join(lines) + "\n"


def _long_running(line: str) -> bool:
    try:
        words = shlex.split(line.split("  #", 1)[0])
    except ValueError:
        return False
    if words[:2] == ["rlar", "up"]:
        return True
    return words[:2] == ["rlar", "tail"] and not {"--count", "--timeout"} & set(words)


BLOCKS = collect()


def _params() -> list[object]:
    """A page's blocks build on each other: they run on one xdist worker, in page order (each page is a test
    class below, and ``make`` runs xdist with ``--dist loadscope``: a class's tests stay on one worker, in order,
    while different pages spread over the workers), and in one tier (e2e for every block of a page with a slow
    block, so ``make test-e2e`` runs its earlier steps)."""
    out = []
    slow_pages = {b.path for b in BLOCKS if SLOW.search(b.text)}
    for b in BLOCKS:
        marks = [pytest.mark.slow, pytest.mark.timeout(COMMAND_TIMEOUT_S * 2)] if SLOW.search(b.text) else []
        if b.path in slow_pages:
            marks.append(pytest.mark.e2e)
        if b.skip:
            marks.append(pytest.mark.skip(reason=f"doc block skipped: {b.skip}"))
        out.append(pytest.param(b, id=b.id, marks=marks))
    return out


@pytest.fixture(scope="session")
def doc_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the session's pages, shared by its xdist workers (``<base>/popen-gwN`` is a worker's own
    base): the demo's warmed-up policy and the routing caches are built once (``rlar train`` locks its cache)."""
    return session_cache(tmp_path_factory)


def _env(cache: Path, url: str | None) -> dict[str, str]:
    env = {
        **actor_env(),
        "RLAR_CACHE_DIR": str(cache),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    if url:
        env["RLAR_NATS_URL"] = url
    return env


def _no_updates_verdict(output: str) -> bool:
    """`rlar train` ended with its documented NO UPDATES verdict (exit 1): the run finished, but the shortened
    run's few steps (:data:`SHORT_TRAIN`) happened to carry no reward signal — the command works as written."""
    return re.search(r"rlar train: NO UPDATES in \d+ steps \(finished\)", output) is not None and (
        "Traceback" not in output
    )  # "(finished)": not a crash loop, a spent time budget or an interruption (rlar.app.train._verdict)


def _run_bash(block: Block, work: Path, cache: Path, url: str | None) -> None:
    env = _env(cache, url)
    background: list[tuple[str, subprocess.Popen[str], float]] = []
    try:
        for kind, text in [("script", s) for s in block.setup] + units(block.text):
            if kind == "long":
                cmd = shorten(text, block, url)
                proc = subprocess.Popen(
                    ["bash", "-c", cmd],
                    cwd=work,
                    env=env,
                    text=True,
                    start_new_session=True,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                )
                background.append((cmd, proc, time.monotonic()))
                continue
            script = _script(text, block, url)
            r = subprocess.run(
                ["bash", "-c", script],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=COMMAND_TIMEOUT_S,
            )
            if r.returncode == 1 and _no_updates_verdict(r.stdout + r.stderr):
                continue  # a shortened run whose few steps got no reward signal: rlar train's documented verdict
            assert r.returncode == 0, (
                f"{block.id}: exited {r.returncode}:\n{script}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
            )
        for cmd, proc, started in background:
            time.sleep(max(0.0, started + RUNNING_S - time.monotonic()))
            assert proc.poll() is None, (
                f"{block.id}: `{cmd}` stopped early ({proc.returncode}):\n{proc.communicate()[0][-3000:]}"
            )
            os.killpg(proc.pid, signal.SIGINT)
            out = proc.communicate(timeout=120)[0]
            assert proc.returncode in (0, -signal.SIGINT), (
                f"{block.id}: `{cmd}` exited {proc.returncode}:\n{out[-3000:]}"
            )
    finally:
        for _, proc, _ in background:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@dataclass
class Page:
    work: Path


@pytest.fixture(scope="session")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Page]:
    return {}


def _run(block: Block, page: Page, tmp: Path, cache: Path) -> None:
    work = page.work
    if block.lang == "toml":
        from rlar.app.runconfig import load_run_config, validate_run_config

        cfg = tmp / "fragment.toml"
        cfg.write_text(block.text)
        validate_run_config(load_run_config(cfg), where=block.id)
        return
    if block.lang == "python":
        for cmd in block.setup:
            subprocess.run(["bash", "-c", cmd], cwd=work, env=_env(cache, None), check=True, timeout=300)
        script = tmp / "block.py"
        script.write_text(block.text)
        r = subprocess.run(
            [sys.executable, str(script)],
            cwd=work,
            env=_env(cache, None),
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
        )
        assert r.returncode == 0, f"{block.id}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        return
    if block.bus:
        from bus.embedded import EmbeddedServer

        with EmbeddedServer(tmp / "nats") as server:
            _run_bash(block, work, cache, server.url)
    else:
        _run_bash(block, work, cache, None)


class _PageBlocks:
    """The blocks of one page (a class per page, made below: ``TestPage_README_md``, ...)."""

    def test_doc_block_runs_as_written(
        self, block: Block, pages: dict[Path, Page], tmp_path_factory: pytest.TempPathFactory, doc_cache: Path
    ) -> None:
        """Blocks of one page share a working directory, in page order (a walk-through builds on its earlier
        steps, so a page's blocks run together)."""
        page = pages.get(block.path)
        if page is None:
            page = pages[block.path] = Page(tmp_path_factory.mktemp(f"doc-{block.path.stem}"))
        _run(block, page, tmp_path_factory.mktemp("block"), doc_cache)


def _page_classes() -> dict[str, type]:
    params = _params()
    out: dict[str, type] = {}
    for path in DOCS:
        mine = [p for p in params if p.values[0].path == path]  # type: ignore[attr-defined]
        if mine:
            name = "TestPage_" + re.sub(r"\W", "_", str(path.relative_to(REPO)))
            out[name] = pytest.mark.parametrize("block", mine)(type(name, (_PageBlocks,), {}))
    return out


globals().update(_page_classes())


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
    recipe = _makefile_run("run-tiny").split()
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


# -- the newcomer's path of docs/rewards.md, end to end -----------------------------------------------------

WALK_STEP_TIMEOUT_S = 900
TRAIN_CAP = ["rlar", "train", "--config", "cap.toml", "--run-dir", "runs/cap"]
"""The first command of docs/rewards.md's train block, which the walk-through test runs (interrupted, resumed)."""


def _page_setup_blocks(page: str, *needles: str) -> list[Block]:
    """The page's bash blocks that write the files of the walk-through (the ones holding ``needles``)."""
    found = [
        b for b in BLOCKS if b.path.name == page and b.lang == "bash" and any(n in b.text for n in needles)
    ]
    assert len(found) == len(needles), [b.id for b in found]
    return found


def _rlar_train(work: Path, env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["rlar", "train", *args],
        cwd=work,
        env=env,
        text=True,
        start_new_session=True,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )


@pytest.mark.slow
@pytest.mark.timeout(4 * WALK_STEP_TIMEOUT_S)
def test_the_rewards_walkthrough_trains_is_interrupted_resumes_with_the_printed_command_and_evals(
    tmp_path: Path, doc_cache: Path
) -> None:
    """docs/rewards.md as a newcomer runs it, with a user reward function and the router: train, Ctrl-C (exit 130,
    the INTERRUPTED line prints the resume command), that very command from the same directory (the run's
    config.toml must find the user's module; the summary's routing covers the whole run), then the rest of the
    page's train block (export, transformers loads it) and its eval block as written: `rlar eval` of the run scores
    with the run's own tool. The page's class skips those two blocks: this is their run. Steps shortened as in
    :data:`SHORT_TRAIN`."""
    work, env = tmp_path / "work", _env(doc_cache, None)
    work.mkdir()
    train_block, eval_block = _page_setup_blocks(
        "rewards.md", "rlar export runs/cap", "rlar eval --checkpoint runs/cap"
    )
    assert train_block.skip and eval_block.skip, "the page runs these blocks itself: drop their run here"
    assert train_block.text.splitlines()[0].split("  #")[0].split() == TRAIN_CAP, train_block.text
    for block in _page_setup_blocks(
        "rewards.md", "> data/cap.jsonl", "cat > my_rewards.py", "cat > cap.toml"
    ):
        r = subprocess.run(
            ["bash", "-c", _script(block.text, block, None)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 0, f"{block.id}: {r.stderr[-2000:]}"
    run = work / "runs" / "cap"
    # The shortened settings, with time for a first learner step on a loaded machine (minutes under load).
    short = [
        x
        for s in SHORT_TRAIN
        if not s.startswith(("learner.max_steps", "train.max_minutes"))
        for x in ("--set", s)
    ] + ["--set", f"train.max_minutes={WALK_STEP_TIMEOUT_S / 60 - 1:g}"]

    # 1. train until the learner's first step, then Ctrl-C (SIGINT)
    log1 = tmp_path / "train1.log"
    proc = _rlar_train(
        work,
        env,
        log1,
        *TRAIN_CAP[2:],
        *short,
        "--set",
        "learner.max_steps=40",
    )
    try:
        deadline = time.monotonic() + WALK_STEP_TIMEOUT_S
        metrics = run / "metrics.jsonl"
        while not (metrics.exists() and metrics.read_text().strip()):
            assert proc.poll() is None, f"rlar train ended before a learner step:\n{log1.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"no learner step in time:\n{log1.read_text()[-3000:]}"
            time.sleep(2)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=300) == 130, log1.read_text()[-3000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    out1 = log1.read_text()
    m = re.search(r"rlar train: INTERRUPTED after (\d+) steps .*; resume with (--run-dir \S+)", out1)
    assert m, out1[-3000:]
    first_steps, resume = int(m.group(1)), shlex.split(m.group(2))
    assert (
        resume == ["--run-dir", "runs/cap"]
        and json.loads((run / "summary.json").read_text())["exit_code"] == 130
    )

    # 2. the printed command, as it is (plus the shortened settings), from the same directory
    log2 = tmp_path / "train2.log"
    proc = _rlar_train(work, env, log2, *resume, *short, "--set", f"learner.max_steps={first_steps + 2}")
    try:
        code = proc.wait(timeout=WALK_STEP_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    out2 = log2.read_text()
    assert code == 0 or (code == 1 and _no_updates_verdict(out2)), out2[-3000:]
    assert "resuming runs/cap" in out2 and "cannot import" not in out2
    summary = json.loads((run / "summary.json").read_text())
    assert summary["steps"] >= first_steps + 1, summary
    cap = summary["tasks"]["capitalize"]
    assert cap["routing"]["decisions"] >= 1, (
        cap
    )  # decided before the interruption: read back after the resume
    assert "capitalised" in {t["tool"] for t in cap["tools"]}, cap

    # 3. the rest of the page's train block (export, load with transformers) and its eval block, as written (the
    # page's own run of these blocks is skipped: this run is theirs)
    out = {}
    for block in (train_block, eval_block):
        lines = block.text.splitlines()
        script = "\n".join(lines[1:] if block is train_block else lines) + "\n"
        r = subprocess.run(
            ["bash", "-c", _script(script, block, None)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=WALK_STEP_TIMEOUT_S,
        )
        assert r.returncode == 0, f"{block.id}: " + r.stdout[-2000:] + r.stderr[-2000:]
        out[block.id] = r.stdout + r.stderr
    # the export loads with transformers (the block prints its model type) ...
    assert (work / "models" / "cap" / "model.safetensors").exists() and "llama" in out[train_block.id]
    # ... and the eval scored with the tool the run used
    assert re.search(r"score of capitalize: capitalised v\d+ .*\(user\)", out[eval_block.id]), out[
        eval_block.id
    ][-2000:]
