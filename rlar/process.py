"""Ending a process that is done: run the exit handlers, flush, and skip the interpreter's teardown.

After a clean drain nothing is left to do but free memory, yet CPython's finalisation of a process that
imported torch, transformers and DeepSpeed (module teardown, collection of every object) took 2-3 s of
CPU, which on a busy 2-core machine became 14-17 s between an actor's last log line and its exit: the
"stop requested, draining" that held ``rlar train`` up after the last step. :func:`exit_now` does what
finalisation does that matters — joins non-daemon threads, runs the ``atexit`` handlers (logging,
multiprocessing children, temporary files), flushes stdio — and then ends the process with ``os._exit``.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from typing import NoReturn


def exit_now(code: int) -> NoReturn:
    """End the process with ``code`` after its threads, exit handlers and output are done."""
    me = threading.current_thread()
    for t in threading.enumerate():
        if t is not me and not t.daemon:
            t.join()
    atexit._run_exitfuncs()  # the handlers ordinary exit would run (private name, public since Python 2)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
