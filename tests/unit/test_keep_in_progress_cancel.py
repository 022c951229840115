"""``bus.client.keep_in_progress``: its block ends even when a mark swallows the cancel (no server)."""

from __future__ import annotations

import asyncio

from bus.client import keep_in_progress


class _SwallowingMsg:
    """Stands in for a message whose mark swallows a cancel, as nats-py's publish does (``_flush_pending``)."""

    subject = "keep.swallow"

    def __init__(self) -> None:
        self.marks = 0
        self.inside = asyncio.Event()

    async def in_progress(self) -> None:
        self.marks += 1
        self.inside.set()
        try:
            await asyncio.sleep(0.5)
        except asyncio.CancelledError:
            pass


async def test_the_block_ends_even_when_a_mark_swallows_the_cancel() -> None:
    raw = _SwallowingMsg()
    async with keep_in_progress([raw], 0.3):  # type: ignore[list-item]
        await asyncio.wait_for(raw.inside.wait(), 5)  # the block ends while a mark is in flight
    marks = raw.marks
    await asyncio.sleep(0.5)
    assert marks >= 1 and raw.marks == marks  # no mark after the block
