"""The role table enforced by a real nats-server: each role's allowed and forbidden publishes and
subscriptions, the JetStream operations each actor needs, and how violations and bad credentials surface.

The expectations below are written by hand from the policy (only the learner publishes weights, only the
synthesizer/retriever write tool specs, reward workers publish no prompts, observers publish nothing …),
not derived from rlar.deploy.auth, so a table change that breaks the policy fails here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import nats
import nats.errors
import pytest

from actors.runtime import Actor, ActorConfig
from bus import subjects
from bus.client import Bus, BusAuthError
from bus.config import NatsConfig
from bus.messages import Prompt, RewardGroup, ScoreGroup, ScoreItem, ToolKind, ToolRef, WeightsAnnounce
from bus.topology import SCORE, TopologyConfig, declare, ensure_topology, reward_consumer
from rlar.deploy.auth import ROLES, generate_credentials, role_settings
from rlar.deploy.servers import ServerProcess, local_server
from tests.support.env import REPO, actor_env
from tests.support.servers import TEST_TOPOLOGY

PASSWORDS = {r: secrets.token_urlsafe(12) for r in [*ROLES, "sys", "leaf"]}

# Subjects whose publication the policy restricts. JetStream API subjects name a stream that does not
# exist, so the admin's allowed publishes are harmless.
GUARDED_PUB = [
    "rlar.weights",
    "rlar.learner.progress",
    "rlar.prompts.t",
    "rlar.routed.t",
    "rlar.samples.t",
    "rlar.score.rule",
    "rlar.rewards.t",
    "rlar.tools.registered",
    "rlar.tools.request.synthesize",
    "rlar.sandbox.exec",
    "rlar.heartbeat.learner.spoof",
    "$KV.rlar_tools.tools.x.v1",
    "$KV.rlar_tools.stats.x.v1",
    "$KV.rlar_state.feeder",
    "$KV.rlar_state.learner",
    "$O.rlar_objects.M.x",
    "$JS.API.STREAM.CREATE.NOPE",
    "$JS.API.STREAM.DELETE.NOPE",
    "$JS.API.STREAM.PURGE.NOPE",
    "$JS.API.CONSUMER.DELETE.NOPE.x",
]
MAY_PUBLISH: dict[str, set[str]] = {
    "admin": set(GUARDED_PUB),
    "supervisor": {"$JS.API.STREAM.CREATE.NOPE"},
    "observer": set(),
    "monitor": set(),
    "feeder": {"rlar.prompts.t", "rlar.routed.t", "$KV.rlar_state.feeder"},
    "router": {"rlar.routed.t", "rlar.tools.request.synthesize", "rlar.sandbox.exec"},
    "rollout": {"rlar.samples.t", "rlar.score.rule"},
    "reward": {"rlar.rewards.t", "$KV.rlar_tools.stats.x.v1", "rlar.sandbox.exec"},
    "sandbox": set(),
    "learner": {
        "rlar.weights",
        "rlar.learner.progress",
        "rlar.heartbeat.learner.spoof",
        "$KV.rlar_state.learner",
        "$O.rlar_objects.M.x",
    },
    "synthesizer": {
        "rlar.tools.registered",
        "rlar.sandbox.exec",
        "$KV.rlar_tools.tools.x.v1",
        "$KV.rlar_tools.stats.x.v1",
        "$O.rlar_objects.M.x",
    },
    "retriever": {
        "rlar.tools.registered",
        "rlar.sandbox.exec",
        "$KV.rlar_tools.tools.x.v1",
        "$KV.rlar_tools.stats.x.v1",
        "$O.rlar_objects.M.x",
    },
}
GUARDED_SUB = [
    "rlar.weights",
    "rlar.prompts.t",
    "rlar.sandbox.exec",
    "rlar.reward.rpc",
    "rlar.learner.progress",
    "rlar.tools.registered",
    "rlar.heartbeat.x.y",
    "$KV.rlar_tools.tools.x",
    "_INBOX.abc",
]
MAY_SUBSCRIBE: dict[str, set[str]] = {
    "admin": set(GUARDED_SUB),
    "supervisor": {"_INBOX.abc"},
    "observer": {s for s in GUARDED_SUB if s.startswith("rlar.")} | {"_INBOX.abc"},
    "monitor": {"rlar.heartbeat.x.y", "_INBOX.abc"},
    "feeder": {"rlar.learner.progress", "_INBOX.abc"},
    "router": {"rlar.tools.registered", "_INBOX.abc"},
    "rollout": {"rlar.weights", "_INBOX.abc"},
    "reward": {"rlar.reward.rpc", "rlar.tools.registered", "_INBOX.abc"},
    "sandbox": {"rlar.sandbox.exec", "_INBOX.abc"},
    "learner": {"_INBOX.abc"},
    "synthesizer": {"rlar.tools.registered", "_INBOX.abc"},
    "retriever": {"rlar.tools.registered", "_INBOX.abc"},
}


def test_every_role_of_the_table_has_written_expectations() -> None:
    assert set(MAY_PUBLISH) == set(ROLES) == set(MAY_SUBSCRIBE)


@pytest.fixture(scope="module")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = local_server("auth", tmp_path_factory.mktemp("auth"), passwords=PASSWORDS)
    server.start()
    yield server
    server.stop()


def cfg(server: ServerProcess, role: str, **kw: Any) -> NatsConfig:
    return NatsConfig(url=server.url, user=role, password=PASSWORDS[role], **kw)


@contextlib.asynccontextmanager
async def connected(server: ServerProcess, role: str) -> AsyncIterator[Bus]:
    """A bus connected as ``role`` (and named after it), closed on leaving."""
    bus = await Bus.connect(cfg(server, role), name=role)
    try:
        yield bus
    finally:
        await bus.close()


@pytest.fixture(scope="module")
async def admin(auth_server: ServerProcess) -> AsyncIterator[Bus]:
    # The topology is created by the supervisor role, as `rlar up` does on a real cluster.
    async with connected(auth_server, "supervisor") as sup:
        await ensure_topology(sup.js, declare(TEST_TOPOLOGY))
        assert sup.permission_errors == 0
    async with connected(auth_server, "admin") as bus:
        yield bus


async def _connect_raw(server: ServerProcess, role: str) -> tuple[Any, list[str]]:
    errors: list[str] = []

    async def on_error(exc: Exception) -> None:
        errors.append(str(exc).lower())

    nc = await nats.connect(server.url, user=role, password=PASSWORDS[role], error_cb=on_error)
    return nc, errors


async def _violation_for(errors: list[str], subject: str, before: int, timeout_s: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout_s
    needle = f'"{subject.lower()}"'
    while time.monotonic() < deadline:
        if any("permissions violation" in e and needle in e for e in errors[before:]):
            return True
        await asyncio.sleep(0.01)
    return False


async def _subscribed(admin: Bus, subject: str) -> Any:
    """An admin subscription known to be active: nats-py 2.16's flush() writes its PING ahead of pending
    commands, so a flush does not prove the SUB reached the server; an echo of our own publish does."""
    sub = await admin.nc.subscribe(subject)
    await admin.nc.publish(subject, b"ready")
    assert (await sub.next_msg(timeout=30)).data == b"ready"
    return sub


async def _receives(sub: Any, admin: Bus, subject: str, timeout_s: float) -> bool:
    """Publish from the admin until ``sub`` gets a message (its SUB may still be in flight)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        await admin.nc.publish(subject, b"probe")
        with contextlib.suppress(nats.errors.TimeoutError):
            if (await sub.next_msg(timeout=0.05)).data == b"probe":
                return True
    return False


@pytest.mark.parametrize("role", sorted(ROLES))
async def test_each_role_publishes_only_what_the_policy_allows(
    role: str, auth_server: ServerProcess, admin: Bus
) -> None:
    nc, errors = await _connect_raw(auth_server, role)
    try:
        for subject in GUARDED_PUB:
            probe = await _subscribed(admin, subject)
            before = len(errors)
            await nc.publish(subject, b"probe")
            await nc.flush()
            if subject in MAY_PUBLISH[role]:
                assert (await probe.next_msg(timeout=30)).data == b"probe", subject
                assert not await _violation_for(errors, subject, before, 0.05), f"{role} denied {subject}"
            else:
                assert await _violation_for(errors, subject, before), (
                    f"{role} was allowed to publish {subject}"
                )
                with pytest.raises(nats.errors.TimeoutError):
                    await probe.next_msg(timeout=0.05)
            await probe.unsubscribe()
        assert nc.is_connected, "a permission violation must not close the connection"
    finally:
        await nc.close()


@pytest.mark.parametrize("role", sorted(ROLES))
async def test_each_role_subscribes_only_to_what_the_policy_allows(
    role: str, auth_server: ServerProcess, admin: Bus
) -> None:
    nc, errors = await _connect_raw(auth_server, role)

    async def check(subject: str) -> None:
        sub = await nc.subscribe(subject)
        if subject in MAY_SUBSCRIBE[role]:
            assert await _receives(sub, admin, subject, 2.0), f"{role} cannot subscribe to {subject}"
            assert not await _violation_for(errors, subject, 0, 0.05)
        else:
            assert await _violation_for(errors, subject, 0), f"{role} may subscribe to {subject}"
            assert not await _receives(sub, admin, subject, 0.2)
        await sub.unsubscribe()

    try:
        await asyncio.gather(*(check(s) for s in GUARDED_SUB))  # distinct subjects: checks are independent
        assert nc.is_connected
    finally:
        await nc.close()


async def test_reward_worker_consumes_scores_publishes_rewards_and_merges_stats(
    auth_server: ServerProcess, admin: Bus
) -> None:
    from rlar.registry import ToolRegistry

    async with connected(auth_server, "reward") as reward:
        await ensure_topology(reward.js, declare(TEST_TOPOLOGY))  # lookups only
        req = ScoreGroup(
            prompt_id="p1",
            generation="g",
            task="t",
            tools=[ToolRef(tool="exact", kind=ToolKind.RULE)],
            query="q",
            items=[ScoreItem(index=0, response="r")],
        )
        await admin.js_publish(subjects.score("rule"), req, msg_id="perm-s1")
        psub = await reward.js.pull_subscribe_bind(durable=reward_consumer("rule"), stream=SCORE)
        (msg,) = await psub.fetch(1, timeout=30)
        await msg.in_progress()
        ack = await reward.js_publish(
            subjects.rewards("t"),
            RewardGroup(prompt_id="p1", generation="g", task="t", tool="exact", tool_version=1, items=[]),
        )
        assert ack.stream == "REWARDS"
        await msg.ack_sync()
        await ToolRegistry(reward).record_stats("exact", 1, {"calls": 1, "ok": 1})
        assert reward.permission_errors == 0


async def test_only_the_learner_publishes_weights_and_rollouts_read_them(
    auth_server: ServerProcess, admin: Bus
) -> None:
    from rlar.policy.objstore import get_blob, put_blob
    from rlar.wire.weight_sync import latest_announcement

    async with connected(auth_server, "learner") as learner, connected(auth_server, "rollout") as rollout:
        name = "policy/v00000007.safetensors"
        sha = await put_blob(learner.js, "rlar_objects", name, b"\0" * 4096, chunk_size=1000)
        sha = await put_blob(learner.js, "rlar_objects", name, b"\0" * 4096, chunk_size=1000)  # replaces it
        announce = WeightsAnnounce(
            version=7, uri=f"objstore://rlar_objects/{name}", sha256=sha, size_bytes=4096, step=7
        )
        await learner.js_publish(subjects.WEIGHTS, announce)
        got = await latest_announcement(rollout)
        assert got is not None and got.version == 7
        data, got_sha = await get_blob(rollout.js, "rlar_objects", name)
        assert len(data) == 4096 and got_sha == sha
        assert rollout.permission_errors == 0 and learner.permission_errors == 0
        with pytest.raises(nats.errors.TimeoutError):
            await rollout.js_publish(subjects.WEIGHTS, announce, timeout_s=1.0)
        assert rollout.permission_errors == 1
        assert (await latest_announcement(rollout)).version == 7  # type: ignore[union-attr]


async def test_the_learner_and_the_feeder_read_the_progress_they_pace_on(auth_server: ServerProcess) -> None:
    """The learner re-announces its progress when the newest entry is not its state (it reads it back); the
    feeder reads it at start. Both walk back over garbage with plain message gets."""
    from bus.messages import LearnerProgress
    from bus.topology import PROGRESS

    async with connected(auth_server, "learner") as learner, connected(auth_server, "feeder") as feeder:
        real = LearnerProgress(
            version=2, step=2, consumed_prompts=8, dropped_prompts=0, prompts_per_step=4, max_staleness=1
        )
        await learner.js_publish(subjects.LEARNER_PROGRESS, real)
        await learner.js.publish(subjects.LEARNER_PROGRESS, b"\xc1 not MessagePack")
        for bus in (learner, feeder):
            assert await bus.last_valid(PROGRESS, subjects.LEARNER_PROGRESS, LearnerProgress) == real
            assert bus.permission_errors == 0


async def test_only_registrars_write_tool_specs_and_everyone_reads_them(
    auth_server: ServerProcess, admin: Bus
) -> None:
    from rlar.registry import ToolRegistry
    from rlar.tools.base import ToolKind, ToolSpec

    async with connected(auth_server, "synthesizer") as synth, connected(auth_server, "reward") as reward:
        spec = ToolSpec(
            name="perm_probe",
            kind=ToolKind.SANDBOX,
            description="probe",
            code="def score(q, r):\n    return 1.0\n",
        )
        stored = await ToolRegistry(synth).register(spec, by="test")
        got = await ToolRegistry(reward).get("perm_probe")
        assert got is not None and got.version == stored.version and "return 1.0" in got.code
        reward.js = reward.nc.jetstream(timeout=1.0)  # a denied publish gets no ack: fail fast
        changed = ToolSpec(
            name="perm_probe",
            kind=ToolKind.SANDBOX,
            description="tampered",
            code="def score(q, r):\n    return 0.0\n",
        )
        with pytest.raises(nats.errors.TimeoutError):
            await ToolRegistry(reward).register(changed, by="reward")
        assert reward.permission_errors >= 1
        assert (await ToolRegistry(synth).get("perm_probe")).description == "probe"  # type: ignore[union-attr]


async def test_a_responder_may_send_several_replies_to_one_request(
    auth_server: ServerProcess, admin: Bus
) -> None:
    """The sandbox answers one request with "queued" notices, "started" and the result: every reply must reach the
    requester (nats-server's ``allow_responses: true`` alone lets one through and drops the rest)."""
    async with connected(auth_server, "sandbox") as sandbox, connected(auth_server, "reward") as reward:

        async def serve(msg: Any) -> None:
            for i in range(5):
                await sandbox.nc.publish(msg.reply, f"reply {i}".encode())

        await sandbox.nc.subscribe(subjects.SANDBOX_EXEC, queue="sandbox", cb=serve)
        await sandbox.nc.flush()
        got: list[bytes] = []
        unheard = asyncio.Event()
        inbox = reward.nc.new_inbox()

        async def on_reply(msg: Any) -> None:
            if msg.headers and msg.headers.get("Status") == "503":  # the server did not see the responder yet
                unheard.set()
            else:
                got.append(msg.data)

        await reward.nc.subscribe(inbox, cb=on_reply)
        deadline = time.monotonic() + 60
        await reward.nc.publish(subjects.SANDBOX_EXEC, b"run", reply=inbox)
        while len(got) < 5 and time.monotonic() < deadline:
            if unheard.is_set():
                unheard.clear()
                await reward.nc.publish(subjects.SANDBOX_EXEC, b"run", reply=inbox)
            await asyncio.sleep(0.05)
        assert got == [f"reply {i}".encode() for i in range(5)] and sandbox.permission_errors == 0


async def test_observer_reads_status_and_publishes_nothing(auth_server: ServerProcess, admin: Bus) -> None:
    from rlar.app.status import collect

    async with connected(auth_server, "observer") as observer:
        doc = await collect(observer, rate_window_s=0.1)
        assert {s["stream"] for s in doc["streams"]} >= {"PROMPTS", "SCORE", "WEIGHTS"}
        assert observer.permission_errors == 0
        await observer.publish(subjects.prompts("t"), Prompt(prompt_id="x", task="t", prompt="p"))
        await observer.nc.flush()
        await asyncio.sleep(0.1)
        assert observer.permission_errors == 1 and observer.nc.is_connected


async def test_actor_roles_cannot_create_topology_on_an_empty_server(tmp_path: Path) -> None:
    server = local_server("empty", tmp_path, passwords=PASSWORDS).start()
    try:
        async with connected(server, "reward") as reward:
            with pytest.raises(nats.errors.TimeoutError):
                await ensure_topology(reward.nc.jetstream(timeout=1.0), declare(TopologyConfig()))
            assert reward.permission_errors >= 1
    finally:
        server.stop()


class ForbiddenPublisherConfig(ActorConfig):
    pass


class ForbiddenPublisher(Actor[ForbiddenPublisherConfig]):
    """A reward worker that tries to publish a prompt, then keeps working."""

    kind = "reward"
    Config = ForbiddenPublisherConfig

    async def main(self) -> None:
        await self.bus.publish(subjects.prompts("t"), Prompt(prompt_id="evil", task="t", prompt="p"))
        self.counters["attempted"] += 1
        await self.bus.nc.flush()
        while not await self.sleep_or_stop(0.05):
            self.counters["ticks"] += 1


async def test_permission_violation_is_logged_and_the_actor_keeps_running(
    auth_server: ServerProcess, admin: Bus, caplog: pytest.LogCaptureFixture
) -> None:
    actor = ForbiddenPublisher(
        ForbiddenPublisherConfig(nats=cfg(auth_server, "reward"), topology=TEST_TOPOLOGY, heartbeat_s=0.2)
    )
    with caplog.at_level(logging.ERROR, logger="rlar.bus"):
        task = asyncio.create_task(actor.run())
        deadline = time.monotonic() + 120
        while actor.counters["ticks"] < 10 and time.monotonic() < deadline:
            assert not task.done(), "the actor died"
            await asyncio.sleep(0.05)
        assert actor.state == "running" and actor.bus.permission_errors == 1
        await actor.stop()
        await task
    assert any(
        "permission violation" in r.getMessage() and "rlar.prompts.t" in r.getMessage()
        for r in caplog.records
    )


async def test_wrong_password_fails_fast_with_a_readable_message(auth_server: ServerProcess) -> None:
    t0 = time.monotonic()
    with pytest.raises(BusAuthError) as err:
        await Bus.connect(NatsConfig(url=auth_server.url, user="reward", password="wrong"), name="reward/x")
    assert time.monotonic() - t0 < 30  # refused at once, not retried like an unreachable server
    text = str(err.value)
    assert "refused the credentials" in text and "'reward'" in text and "Authorization Violation" in text


def test_cli_with_wrong_credentials_prints_one_readable_error_line(auth_server: ServerProcess) -> None:
    env = {**actor_env(), "RLAR_NATS_USER": "observer", "RLAR_NATS_PASSWORD": "nope"}
    proc = subprocess.run(
        [sys.executable, "-m", "rlar.app.cli", "status", "--nats", auth_server.url],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert proc.returncode == 1
    assert (
        "rlar: error:" in proc.stderr
        and "refused the credentials" in proc.stderr
        and "'observer'" in proc.stderr
    )
    assert "Traceback" not in proc.stderr


def test_role_settings_put_the_password_in_the_environment_only(tmp_path: Path) -> None:
    generate_credentials(tmp_path, ["reward", "supervisor"])
    overrides, env = role_settings("reward-rule", tmp_path)
    assert overrides == ["nats.user=reward"]
    assert env["RLAR_NATS_PASSWORD"] == (tmp_path / "reward.password").read_text().strip()
    assert oct((tmp_path / "reward.password").stat().st_mode & 0o777) == "0o600"
    assert not any(env["RLAR_NATS_PASSWORD"] in o for o in overrides)


def _connz_users(monitor_url: str) -> dict[str, str]:
    with urllib.request.urlopen(f"{monitor_url}/connz?auth=true", timeout=2) as r:
        doc = json.load(r)
    return {c.get("name", ""): c.get("authorized_user", "") for c in doc.get("connections", [])}


def test_rlar_up_joins_as_supervisor_and_runs_each_replica_under_its_role(
    auth_server: ServerProcess, tmp_path: Path
) -> None:
    creds = tmp_path / "creds"
    creds.mkdir()
    for role in ("supervisor", "monitor"):
        (creds / f"{role}.password").write_text(PASSWORDS[role] + "\n")
    env = {k: v for k, v in actor_env().items() if not k.startswith("RLAR_NATS_")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rlar.app.cli",
            "up",
            "--actors",
            "monitor=1",
            "--nats",
            auth_server.url,
            "--creds-dir",
            str(creds),
            "--run-dir",
            str(tmp_path / "run"),
            "--set",
            f"topology.score_ack_wait_s={TEST_TOPOLOGY.score_ack_wait_s}",
            "--set",
            f"topology.prompt_ack_wait_s={TEST_TOPOLOGY.prompt_ack_wait_s}",
            "--set",
            f"topology.learner_ack_wait_s={TEST_TOPOLOGY.learner_ack_wait_s}",
            "--set",
            f"topology.tool_request_ack_wait_s={TEST_TOPOLOGY.tool_request_ack_wait_s}",
        ],
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        users: dict[str, str] = {}
        deadline = time.monotonic() + 45
        while time.monotonic() < deadline and proc.poll() is None:
            users = _connz_users(auth_server.monitor_url)
            if (
                any(n.startswith("monitor/") and u == "monitor" for n, u in users.items())
                and "supervisor" in users
            ):
                break
            time.sleep(0.2)
        assert users.get("supervisor") == "supervisor", users
        assert any(n.startswith("monitor/") and u == "monitor" for n, u in users.items()), users
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        if proc.poll() is None:
            proc.kill()
    out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
    log = (tmp_path / "run" / "logs" / "monitor-0.log").read_text(errors="replace")
    assert "permission violation" not in log.lower() + out.lower()
    assert PASSWORDS["monitor"] not in out and os.environ.get("RLAR_NATS_PASSWORD", "\0") not in out
