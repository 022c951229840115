"""The bus the tests run on: short ack-waits, and the body of a ``nats_server`` fixture."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bus.embedded import EmbeddedServer
from bus.topology import TopologyConfig

# Short ack-waits so redelivery tests take seconds, not minutes.
TEST_TOPOLOGY = TopologyConfig(
    prompt_ack_wait_s=2.0, score_ack_wait_s=2.0, learner_ack_wait_s=30.0, tool_request_ack_wait_s=5.0
)


def serve_nats(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[EmbeddedServer]:
    """The body of a ``nats_server`` fixture: a real nats-server storing under a fresh temp dir ``name``,
    stopped at teardown. A module that must not share the session's bus overrides ``nats_server`` (and
    ``nats_url``, whose scope must not outlive it) at module scope with its own ``name``."""
    with EmbeddedServer(tmp_path_factory.mktemp(name)) as server:
        yield server
