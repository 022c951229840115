"""``bus.client.keep_in_progress``: a held message is not redelivered while the block runs, and is after.

Against a real nats-server: a stream of its own with a 1 s ack-wait, one pull consumer.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
from nats.aio.msg import Msg
from nats.js.api import AckPolicy, ConsumerConfig, StreamConfig

from bus.client import Bus, keep_in_progress, mark_in_progress
from bus.config import NatsConfig

ACK_WAIT_S = 1.0


@pytest.fixture
async def held(nats_url: str) -> AsyncIterator[tuple[Bus, object, str]]:
    """A bus, a pull subscription on a fresh stream with a 1 s ack-wait, and the stream's subject."""
    bus = await Bus.connect(NatsConfig(url=nats_url), name="test-keep")
    name = f"KEEP{uuid.uuid4().hex[:8]}"
    subject = f"keep.{name}"
    await bus.js.add_stream(StreamConfig(name=name, subjects=[subject]))
    await bus.js.add_consumer(
        name,
        ConsumerConfig(durable_name="w", ack_policy=AckPolicy.EXPLICIT, ack_wait=ACK_WAIT_S, max_deliver=5),
    )
    psub = await bus.js.pull_subscribe_bind(durable="w", stream=name)
    try:
        yield bus, psub, subject
    finally:
        await psub.unsubscribe()
        await bus.js.delete_stream(name)
        await bus.close()


async def _redelivered(psub: object, within_s: float) -> bool:
    try:
        msgs = await psub.fetch(1, timeout=within_s)  # type: ignore[attr-defined]
    except TimeoutError:
        return False
    return bool(msgs)


async def test_a_held_message_is_not_redelivered_while_kept_in_progress(
    held: tuple[Bus, object, str],
) -> None:
    bus, psub, subject = held
    await bus.js.publish(subject, b"work")
    (raw,) = await psub.fetch(1, timeout=5)  # type: ignore[attr-defined]
    async with keep_in_progress(raw, ACK_WAIT_S):
        # Three ack-waits pass with the message in hand; none comes back.
        assert not await _redelivered(psub, 3 * ACK_WAIT_S)
    await raw.ack()


async def test_marking_stops_with_the_block_and_the_message_comes_back(held: tuple[Bus, object, str]) -> None:
    bus, psub, subject = held
    await bus.js.publish(subject, b"work")
    (raw,) = await psub.fetch(1, timeout=5)  # type: ignore[attr-defined]
    async with keep_in_progress(raw, ACK_WAIT_S):
        await asyncio.sleep(0.5)
    assert await _redelivered(psub, 10 * ACK_WAIT_S)


async def test_a_growing_collection_is_followed(held: tuple[Bus, object, str]) -> None:
    bus, psub, subject = held
    await bus.js.publish(subject, b"first")
    await bus.js.publish(subject, b"second")
    (first,) = await psub.fetch(1, timeout=5)  # type: ignore[attr-defined]
    hold = [first]
    async with keep_in_progress(hold, ACK_WAIT_S):
        (second,) = await psub.fetch(1, timeout=5)  # type: ignore[attr-defined]
        hold.append(second)  # taken in after the block began: marked from the next round on
        assert not await _redelivered(psub, 3 * ACK_WAIT_S)
    for raw in hold:
        await raw.ack()


async def test_an_error_in_the_block_stops_the_marking_and_propagates(held: tuple[Bus, object, str]) -> None:
    bus, psub, subject = held
    await bus.js.publish(subject, b"work")
    (raw,) = await psub.fetch(1, timeout=5)  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="boom"):
        async with keep_in_progress(raw, ACK_WAIT_S):
            raise ValueError("boom")
    assert await _redelivered(psub, 10 * ACK_WAIT_S)


async def test_a_mark_that_fails_is_skipped_and_the_others_are_sent(held: tuple[Bus, object, str]) -> None:
    bus, psub, subject = held
    await bus.js.publish(subject, b"work")
    (raw,) = await psub.fetch(1, timeout=5)  # type: ignore[attr-defined]
    core = Msg(bus.nc, subject=subject, data=b"not from JetStream")  # no reply subject: cannot be marked
    assert await mark_in_progress([core, raw]) == 1
    await raw.ack()
