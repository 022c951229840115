"""The supervisor gives up on a crash loop and says why; `crash_line` finds the error in an actor's log."""

from __future__ import annotations

import asyncio
from pathlib import Path

from actors.supervisor import Supervisor, crash_line


def test_crash_line_is_the_last_exception_line_of_the_log() -> None:
    tail = (
        "2026-12-01 10:00:00,000 feeder ERROR actors.runtime: feeder/x crashed\n"
        "Traceback (most recent call last):\n"
        '  File "actors/feeder.py", line 9, in main\n'
        "rlar.tasks.loaders.TaskDataError: /d/x.jsonl, line 7: prompt field 'q' is missing\n"
        "\n"
    )
    assert (
        crash_line(tail)
        == "rlar.tasks.loaders.TaskDataError: /d/x.jsonl, line 7: prompt field 'q' is missing"
    )
    assert crash_line("killed\n") == "killed"
    assert crash_line("") == "(no log)"


async def test_a_crash_loop_stops_the_supervisor_with_the_actors_error(nats_url: str, tmp_path: Path) -> None:
    sup = Supervisor(
        [("tests.support.actors:AlwaysCrash", 1)],
        nats_url=nats_url,
        run_dir=tmp_path,
        min_backoff_s=0.05,
        max_backoff_s=0.1,
        grace_s=5,
        crash_limit=3,
        crash_window_s=600,
    )
    await asyncio.wait_for(sup.run(), 180)  # returns by itself: nobody calls stop()
    assert sup.crashes == 3 and sup.stopping.is_set()
    assert sup.fatal is not None
    assert "alwayscrash-0 crashed 3 times" in sup.fatal.lower().replace("tests.support.actors:", "")
    assert "ValueError: data/x.jsonl, line 7: prompt field 'question' is missing" in sup.fatal
