"""How the runnable blocks of README.md and docs/*.md are collected and run (tests/bus/test_docs.py and
tests/long/test_docs_training_pages.py run them, a test class per page).

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


def makefile_recipe(target: str = "run") -> str:
    """A run target's recipe (``run``, ``run-tiny``), as make would run it (the venv's bin dir is on PATH here)."""
    text = (REPO / "Makefile").read_text()
    recipe = re.search(rf"^{re.escape(target)}:.*\n\t(.+)$", text, re.M)
    assert recipe, f"the Makefile has no {target} recipe"
    return recipe.group(1).replace("$(VENV)/bin/", "")


def shorten(line: str, block: Block, url: str | None) -> str:
    """One top-level line with the shortened settings (see the module docstring)."""
    stripped = line.lstrip()
    if make := re.match(r"make (run(?:-tiny)?)\b", stripped):
        line = makefile_recipe(make.group(1)) + stripped[make.end() :]
    if url:
        line = line.replace("nats://host:4222", url)
    head, sep, comment = line.partition("  #")
    if re.match(r"^\s*rlar train\b", head):
        head = head.rstrip() + "".join(f" --set {s}" for s in SHORT_TRAIN)
    for prefix, args in block.append:
        if head.strip().startswith(prefix):
            head = head.rstrip() + f" {args}"
    return head + (f"  #{comment}" if sep else "")


def block_script(chunk: str, block: Block, url: str | None) -> str:
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


def doc_env(cache: Path, url: str | None) -> dict[str, str]:
    env = {
        **actor_env(),
        "RLAR_CACHE_DIR": str(cache),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    if url:
        env["RLAR_NATS_URL"] = url
    return env


def no_updates_verdict(output: str) -> bool:
    """`rlar train` ended with its documented NO UPDATES verdict (exit 1): the run finished, but the shortened
    run's few steps (:data:`SHORT_TRAIN`) happened to carry no reward signal — the command works as written."""
    return re.search(r"rlar train: NO UPDATES in \d+ steps \(finished\)", output) is not None and (
        "Traceback" not in output
    )  # "(finished)": not a crash loop, a spent time budget or an interruption (rlar.app.train._verdict)


def _run_bash(block: Block, work: Path, cache: Path, url: str | None) -> None:
    env = doc_env(cache, url)
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
            script = block_script(text, block, url)
            r = subprocess.run(
                ["bash", "-c", script],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=COMMAND_TIMEOUT_S,
            )
            if r.returncode == 1 and no_updates_verdict(r.stdout + r.stderr):
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
            subprocess.run(["bash", "-c", cmd], cwd=work, env=doc_env(cache, None), check=True, timeout=300)
        script = tmp / "block.py"
        script.write_text(block.text)
        r = subprocess.run(
            [sys.executable, str(script)],
            cwd=work,
            env=doc_env(cache, None),
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


def _params(training: bool) -> list[object]:
    """The blocks of the pages with (``training``) or without a slow block (a command that trains, evaluates,
    exports, benchmarks or retrieves: :data:`SLOW`). A page's blocks build on each other: they run on one xdist
    worker, in page order (each page is a test class, and ``make`` runs xdist with ``--dist loadscope``: a
    class's tests stay on one worker, in order, while different pages spread over the workers), and in one tier:
    the long tier holds every block of a page with a slow block, so ``make test-long`` runs its earlier steps."""
    out = []
    slow_pages = {b.path for b in BLOCKS if SLOW.search(b.text)}
    for b in BLOCKS:
        if (b.path in slow_pages) != training:
            continue
        marks = [pytest.mark.slow, pytest.mark.timeout(COMMAND_TIMEOUT_S * 2)] if SLOW.search(b.text) else []
        if b.skip:
            marks.append(pytest.mark.skip(reason=f"doc block skipped: {b.skip}"))
        out.append(pytest.param(b, id=b.id, marks=marks))
    return out


class PageBlocks:
    """The blocks of one page (a class per page, made by :func:`page_classes`: ``TestPage_README_md``, ...); the
    test module provides the ``pages`` and ``doc_cache`` fixtures."""

    def test_doc_block_runs_as_written(
        self, block: Block, pages: dict[Path, Page], tmp_path_factory: pytest.TempPathFactory, doc_cache: Path
    ) -> None:
        """Blocks of one page share a working directory, in page order (a walk-through builds on its earlier
        steps, so a page's blocks run together)."""
        page = pages.get(block.path)
        if page is None:
            page = pages[block.path] = Page(tmp_path_factory.mktemp(f"doc-{block.path.stem}"))
        _run(block, page, tmp_path_factory.mktemp("block"), doc_cache)


def page_classes(training: bool) -> dict[str, type]:
    """One test class per page with (``training``) or without a slow block, for a test module's globals."""
    params = _params(training)
    out: dict[str, type] = {}
    for path in DOCS:
        mine = [p for p in params if p.values[0].path == path]  # type: ignore[attr-defined]
        if mine:
            name = "TestPage_" + re.sub(r"\W", "_", str(path.relative_to(REPO)))
            out[name] = pytest.mark.parametrize("block", mine)(type(name, (PageBlocks,), {}))
    return out
