"""NATS deployments on loopback, from the same renderer as deploy/nats/: TLS and plain client connections,
mutual TLS, a three-node cluster with TLS routes and R3 streams that survives losing a node, and a leaf
site whose reward worker uses the hub's JetStream but cannot publish what its roles may not."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import nats
import nats.errors
import pytest

from bus import subjects
from bus.client import Bus, BusUnreachable
from bus.config import NatsConfig, TLSConfig
from bus.embedded import free_port, free_ports
from bus.messages import RewardGroup, ScoreGroup, ScoreItem, ToolKind, ToolRef
from bus.topology import SCORE, TopologyConfig, declare, ensure_topology, reward_consumer
from rlar.deploy import natsconf
from rlar.deploy.auth import ROLES
from rlar.deploy.servers import ServerProcess, ServerStartError, local_cluster, local_server, start_all
from tests.support.env import REPO, actor_env

PW = {r: f"pw-{r}" for r in [*ROLES, "sys", "leaf"]}


def _score_group(prompt_id: str) -> ScoreGroup:
    return ScoreGroup(
        prompt_id=prompt_id,
        generation="g",
        task="t",
        tools=[ToolRef(tool="x", kind=ToolKind.RULE)],
        query="q",
        items=[ScoreItem(index=0, response="r")],
    )


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tls")
    subprocess.run(
        ["bash", str(REPO / "deploy/tls/make-certs.sh"), str(out), "IP:10.20.30.40"],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return out


def _tls(certs: Path, verify: bool = False) -> natsconf.TLSFiles:
    return natsconf.TLSFiles(
        str(certs / "server.pem"), str(certs / "server-key.pem"), str(certs / "ca.pem"), verify
    )


@pytest.fixture(scope="module")
def tls_server(certs: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    s = local_server("tls", tmp_path_factory.mktemp("tls-srv"), passwords=PW, tls=_tls(certs)).start()
    yield s
    s.stop()


def _tls_version(server: ServerProcess, name: str) -> str:
    """The TLS version the server reports for the connection called ``name`` ("" when plain)."""
    with urllib.request.urlopen(f"{server.monitor_url}/connz", timeout=2) as r:
        conns = [c for c in json.load(r)["connections"] if c.get("name") == name]
    assert conns, f"no connection named {name}"
    return str(conns[0].get("tls_version", ""))


def test_make_certs_covers_localhost_and_extra_addresses(certs: Path) -> None:
    text = subprocess.run(
        ["openssl", "x509", "-in", str(certs / "server.pem"), "-noout", "-ext", "subjectAltName"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "127.0.0.1" in text and "10.20.30.40" in text and "nats-2" in text
    assert oct((certs / "server-key.pem").stat().st_mode & 0o777) == "0o600"


async def test_tls_connection_with_the_ca_works(tls_server: ServerProcess, certs: Path) -> None:
    bus = await Bus.connect(
        NatsConfig(
            url=tls_server.url,
            user="admin",
            password=PW["admin"],
            tls=TLSConfig(ca_file=str(certs / "ca.pem")),
        ),
        name="admin",
    )
    try:
        assert _tls_version(tls_server, "admin"), "the server sees a plain connection"
        sub = await bus.nc.subscribe("_INBOX.tls")
        await bus.nc.publish("_INBOX.tls", b"over tls")
        assert (await sub.next_msg(timeout=30)).data == b"over tls"
    finally:
        await bus.close()


async def test_plain_client_against_a_tls_server_fails_with_the_tls_reason(tls_server: ServerProcess) -> None:
    with pytest.raises(BusUnreachable, match=r"(?i)certificate verify failed"):
        await Bus.connect(
            NatsConfig(
                url=tls_server.url, user="reward", password=PW["reward"], initial_attempts=1, tls=None
            ),
            name="plain",
        )


async def test_plain_connection_to_a_plain_server(tmp_path: Path) -> None:
    s = local_server("plain", tmp_path, passwords=PW).start()
    try:
        bus = await Bus.connect(
            NatsConfig(url=s.url, user="observer", password=PW["observer"], tls=None), name="o"
        )
        assert bus.nc.is_connected and _tls_version(s, "o") == ""
        await bus.close()
    finally:
        s.stop()


async def test_mutual_tls_requires_a_client_certificate(certs: Path, tmp_path: Path) -> None:
    s = local_server("mtls", tmp_path, passwords=PW, tls=_tls(certs, verify=True)).start()
    try:
        ca = str(certs / "ca.pem")
        with pytest.raises(BusUnreachable):
            await Bus.connect(
                NatsConfig(
                    url=s.url,
                    user="reward",
                    password=PW["reward"],
                    initial_attempts=1,
                    connect_timeout_s=1,
                    tls=TLSConfig(ca_file=ca),
                ),
                name="nocert",
            )
        tls = TLSConfig(
            ca_file=ca, cert_file=str(certs / "client.pem"), key_file=str(certs / "client-key.pem")
        )
        bus = await Bus.connect(
            NatsConfig(url=s.url, user="reward", password=PW["reward"], tls=tls), name="cert"
        )
        assert bus.nc.is_connected
        await bus.close()
    finally:
        s.stop()


def test_cli_reads_tls_and_credentials_from_the_environment(tls_server: ServerProcess, certs: Path) -> None:
    env = {
        **actor_env(),
        "RLAR_NATS_USER": "observer",
        "RLAR_NATS_PASSWORD": PW["observer"],
        "RLAR_NATS_TLS_CA": str(certs / "ca.pem"),
    }
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "rlar.app.cli",
            "status",
            "--nats",
            tls_server.url,
            "--json",
            "--window",
            "0.1",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    assert '"streams"' in proc.stdout


async def test_tls_cluster_replicates_r3_streams_and_survives_a_lost_node(
    certs: Path, tmp_path: Path
) -> None:
    nodes = local_cluster(tmp_path, passwords=PW, tls=_tls(certs), cluster_tls=_tls(certs, verify=True))
    start_all(nodes)
    tls = TLSConfig(ca_file=str(certs / "ca.pem"))
    try:
        sup = await Bus.connect(
            NatsConfig(url=nodes[0].url, user="supervisor", password=PW["supervisor"], tls=tls),
            name="supervisor",
        )
        await ensure_topology(sup.js, declare(TopologyConfig(replicas=3)))
        await sup.close()
        bus = await Bus.connect(
            NatsConfig(
                url=nodes[0].url,
                user="admin",
                password=PW["admin"],
                tls=tls,
                ping_interval_s=1,
                max_outstanding_pings=2,
            ),
            name="admin",
        )
        try:
            info = await bus.js.stream_info(SCORE)
            assert (
                info.config.num_replicas == 3
                and info.cluster is not None
                and len(info.cluster.replicas or []) == 2
            )
            victim = next(n for n in nodes if n.name == info.cluster.leader)
            victim.stop()
            for i in range(20):  # the stream elects a new leader among the two nodes left
                req = _score_group(f"s{i}")
                for _ in range(40):
                    try:
                        await bus.js_publish(subjects.score("rule"), req, msg_id=f"s{i}", timeout_s=1.0)
                        break
                    except (nats.errors.TimeoutError, nats.errors.NoRespondersError, Exception):
                        await asyncio.sleep(0.25)
            info = await bus.js.stream_info(SCORE)
            assert (
                info.state.messages == 20 and info.cluster is not None and info.cluster.leader != victim.name
            )
        finally:
            await bus.close()
    finally:
        for n in nodes:
            n.stop()


async def test_leaf_site_worker_uses_the_hub_jetstream_within_its_role(tmp_path: Path) -> None:
    nodes = local_cluster(tmp_path, passwords=PW, leaf_port=True)
    start_all(nodes)
    port, mport = free_port(), free_port()
    leaf = ServerProcess(
        "leaf",
        natsconf.leaf_config(
            "leaf",
            remote_urls=[f"nats-leaf://leaf:{PW['leaf']}@{nodes[0].leaf_url}"],
            host="127.0.0.1",
            client_port=port,
            http_port=mport,
            auth=natsconf.accounts_block(PW, jetstream=False),
        ),
        tmp_path,
        monitor_url=f"http://127.0.0.1:{mport}",
        url=f"nats://127.0.0.1:{port}",
    )
    leaf.start()
    try:
        sup = await Bus.connect(
            NatsConfig(url=nodes[0].url, user="supervisor", password=PW["supervisor"]), name="s"
        )
        await ensure_topology(sup.js, declare(TopologyConfig(replicas=3)))
        await sup.close()
        hub = await Bus.connect(NatsConfig(url=nodes[1].url, user="admin", password=PW["admin"]), name="hub")
        worker = await Bus.connect(
            NatsConfig(url=leaf.url, user="reward", password=PW["reward"]), name="leaf-worker"
        )
        try:
            req = _score_group("s")
            await hub.js_publish(subjects.score("rule"), req)
            await ensure_topology(worker.js, declare(TopologyConfig(replicas=3)))  # lookups through the leaf
            psub = await worker.js.pull_subscribe_bind(durable=reward_consumer("rule"), stream=SCORE)
            (msg,) = await psub.fetch(1, timeout=30)
            await msg.ack_sync()
            ack = await worker.js_publish(
                subjects.rewards("t"),
                RewardGroup(prompt_id="s", generation="g", task="t", tool="x", tool_version=1, items=[]),
            )
            assert ack.stream == "REWARDS" and worker.permission_errors == 0
            # Even a local admin at the leaf site cannot push weights into the hub: the leaf connection's
            # own permissions stop it, while a reward still gets through.
            weights = await hub.nc.subscribe(subjects.WEIGHTS)
            rewards = await hub.nc.subscribe("rlar.rewards.t")
            await hub.nc.publish(subjects.WEIGHTS, b"ready")
            assert (await weights.next_msg(timeout=30)).data == b"ready"
            local_admin = await nats.connect(leaf.url, user="admin", password=PW["admin"])
            await asyncio.sleep(0.5)  # interest reaches the leaf
            await local_admin.publish(subjects.WEIGHTS, b"forged")
            await local_admin.publish("rlar.rewards.t", b"fine")
            await local_admin.flush()
            assert (await rewards.next_msg(timeout=30)).data == b"fine"
            with pytest.raises(nats.errors.TimeoutError):
                await weights.next_msg(timeout=0.5)
            await local_admin.close()
        finally:
            await worker.close()
            await hub.close()
    finally:
        leaf.stop()
        for n in nodes:
            n.stop()


def test_free_ports_are_distinct_and_bindable() -> None:
    ports = free_ports(64)
    assert len(set(ports)) == 64
    for p in ports[:4]:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", p))


def test_start_all_fails_at_once_when_a_node_it_is_not_waiting_on_exits(tmp_path: Path) -> None:
    """With n2 and n3 unable to start, n1 never elects a meta leader; the wait names n2's exit instead of
    waiting out its timeout on n1 and reporting n1's health-check answer."""
    nodes = local_cluster(tmp_path, passwords=PW)
    for n in nodes[1:]:
        n.config_text = "this is { not a config"
    try:
        with pytest.raises(ServerStartError, match=r"^n2 exited"):
            start_all(nodes, timeout_s=60)
    finally:
        for n in nodes:
            n.stop()
