"""The supervisor gives up on a crash loop and says why (``crash_line``: tests/unit/test_supervisor_crash_line.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from actors.supervisor import Supervisor


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
