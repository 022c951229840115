"""Which bus an operator command (``rlar status``, ``rlar tail``, ``rlar tools …``) attaches to, and saying so.

In order:
1. ``--run DIR``: that run's bus (``DIR/nats.url``, written while ``rlar train``/``rlar up`` runs); an
   error if the run is not running.
2. ``--nats embedded``: a fresh, empty embedded bus started for this one command. It belongs to no run
   (a run's embedded bus lives and dies with its ``rlar train``/``rlar up``), which the command says.
3. ``--nats URL``, then ``$RLAR_NATS_URL``.
4. The newest live run of this machine: runs recorded by ``rlar train``/``rlar up`` wherever their
   directory is (``bus.embedded.live_runs``), and runs under ``./runs``.
5. ``nats://127.0.0.1:4222``.

Every command prints one line on stderr naming the bus and the run it attached to, so the output on
stdout (JSON included) stays clean.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bus.client import BusUnreachable
from bus.embedded import URL_FILE, EmbeddedServer, answers, live_runs

LOCAL_DEFAULT = "nats://127.0.0.1:4222"


class NoRunningRun(BusUnreachable):
    """``--run DIR`` names a run whose bus is not up (or a directory that is no run)."""


@dataclass(frozen=True, slots=True)
class Attachment:
    """A bus to talk to and, in words, where it came from."""

    url: str
    source: str
    run_dir: Path | None = None
    fresh_embedded: bool = False

    def describe(self) -> str:
        run = f"run {self.run_dir}" if self.run_dir is not None else "no run"
        return f"bus {self.url} — {run} ({self.source})"


def _run_bus(run_dir: Path) -> Attachment:
    if not run_dir.is_dir():
        raise NoRunningRun(f"--run {run_dir}: no such directory")
    url_file = run_dir / URL_FILE
    if not url_file.is_file():
        raise NoRunningRun(
            f"--run {run_dir}: the run is not running (no {URL_FILE}: its bus is up only while its "
            "`rlar train`/`rlar up` runs)"
        )
    url = url_file.read_text().strip()
    if not answers(url):
        raise NoRunningRun(f"--run {run_dir}: its bus {url} does not answer (the run has ended or died)")
    return Attachment(url, "--run", run_dir)


def resolve(nats: str | None, run: str | None, *, runs_root: str | Path = "runs") -> Attachment:
    """The bus to attach to, by the rules in the module docstring (without starting anything)."""
    if nats and run:
        raise NoRunningRun("give --run DIR or --nats URL, not both")
    if run:
        return _run_bus(Path(run))
    if nats == "embedded":
        return Attachment("embedded", "--nats embedded: a fresh, empty bus for this command only", None, True)
    if nats:
        return Attachment(nats, "--nats")
    env = os.environ.get("RLAR_NATS_URL")
    if env:
        return Attachment(env, "$RLAR_NATS_URL")
    runs = live_runs(runs_root)
    if runs:
        others = f"; {len(runs) - 1} other live run(s): --run DIR picks one" if len(runs) > 1 else ""
        return Attachment(runs[0].url, f"newest live run{others}", runs[0].run_dir)
    return Attachment(LOCAL_DEFAULT, f"no live run found under {runs_root}/ or in the live-run index")


@contextlib.contextmanager
def attach(nats: str | None, run: str | None, *, quiet: bool = False) -> Iterator[Attachment]:
    """Resolve the bus, start a fresh embedded one if asked, and say on stderr which bus it is."""
    target = resolve(nats, run)
    with contextlib.ExitStack() as stack:
        if target.fresh_embedded:
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="rlar-embedded-")))
            server = stack.enter_context(EmbeddedServer(tmp / "nats"))
            target = Attachment(server.url, target.source, None, True)
        if not quiet:
            print(f"rlar: {target.describe()}", file=sys.stderr, flush=True)
        yield target


def add_arguments(parser: argparse.ArgumentParser, *, embedded_ok: bool = True) -> None:
    """The ``--nats`` and ``--run`` options every operator command takes."""
    add = parser.add_argument
    emb = ", 'embedded' (a fresh empty bus, no run)" if embedded_ok else ""
    add("--nats", help=f"NATS URL{emb} (default: $RLAR_NATS_URL, else the newest live run's bus)")
    add("--run", metavar="DIR", help="attach to the bus of the run in DIR (started by rlar train/up)")
