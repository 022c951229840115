"""Render every generated deployment file from the role table, so users, secrets and permissions agree.

``rlar deploy render`` writes, under deploy/:
- nats/*.conf — :func:`rlar.deploy.natsconf.shipped_files` (3 cluster nodes, leaf site, single server, auth);
- nats/helm-values.yaml — values for the official NATS Helm chart (chart 1.x/2.x layout: ``config.*``,
  ``container.env``, ``promExporter``): 3-node JetStream cluster, TLS, leaf nodes, monitoring and the
  Prometheus exporter, the role table's accounts through ``config.merge``;
- k8s/rlar.yaml — namespace, one Deployment per actor role (GPU for rollout and learner; each serving its
  Prometheus ``/metrics`` on port ``metrics``), the bootstrap Job and the reward workers'
  HorizontalPodAutoscaler on their queue depth as the actors export it;
- k8s/prometheus-adapter-values.yaml and grafana/rlar-dashboard.json — :mod:`rlar.deploy.monitoring`;
- compose/compose.yaml — the single-host recipe.

tests/bus/test_deploy_manifests.py checks that the committed files equal what this renders, and validates
them (Kubernetes schemas, the Compose spec).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# yaml (pyyaml) is imported where used: it comes with the dev extra and only rendering needs it
from rlar.deploy import monitoring, natsconf
from rlar.deploy.auth import ROLES, password_env
from rlar.kinds import ACTOR_KINDS

IMAGE = "rlar:0.1.0"
"""The image built by deploy/compose/Dockerfile (push it to your registry and change this)."""
IMAGE_CUDA = "rlar:0.1.0-cuda"
"""The image of GPU workloads, built by deploy/compose/Dockerfile.cuda (CUDA torch and vLLM)."""
NAMESPACE = "rlar"
PASSWORD_SECRET = "rlar-nats-passwords"
TLS_SECRET = "rlar-nats-tls"
CONFIG = "deploy/configs/demo.toml"
"""Run config inside the image; mount your own over it (see docs/operations.md)."""
CLUSTER_URL = "tls://nats.rlar.svc:4222"


@dataclass(frozen=True, slots=True)
class Workload:
    """One actor role as a Deployment: its ``python -m actors`` kind, replicas and resource requests."""

    kind: str
    role: str
    replicas: int
    cpu: str
    memory: str
    gpu: int = 0
    compose: int = 1
    """Replicas in the Compose recipe (0: left out)."""
    unconfined: bool = False
    """Runs bubblewrap: no default seccomp profile."""


WORKLOADS: tuple[Workload, ...] = tuple(
    Workload(
        k.name,
        k.role,
        k.workload.replicas,
        k.workload.cpu,
        k.workload.memory,
        k.workload.gpu,
        k.workload.compose,
        k.workload.unconfined,
    )
    for k in ACTOR_KINDS.values()
    if k.workload is not None
)
"""One Deployment per actor kind with a workload in :data:`rlar.kinds.ACTOR_KINDS`."""

# Cluster-wide run settings passed to every actor on top of the image's run config.
CLUSTER_SETS = (
    "topology.replicas=3",
    'learner.weight_sync="objstore"',
    "nats.ping_interval_s=5",
    f"metrics.port={monitoring.METRICS_PORT}",
    'metrics.host="0.0.0.0"',
)


def _secret_env(name: str, key: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": PASSWORD_SECRET, "key": key}}}


def helm_values() -> dict[str, Any]:
    env = {
        password_env(r): {"valueFrom": {"secretKeyRef": {"name": PASSWORD_SECRET, "key": password_env(r)}}}
        for r in [*ROLES, "sys", "leaf"]
    }
    tls = {"enabled": True, "secretName": TLS_SECRET, "cert": "tls.crt", "key": "tls.key"}
    return {
        "config": {
            "cluster": {
                "enabled": True,
                "replicas": 3,
                "tls": {**tls, "merge": {"verify": True}},
            },
            "jetstream": {
                "enabled": True,
                "fileStore": {"pvc": {"size": "20Gi"}},
                "memoryStore": {"enabled": True, "maxSize": "1Gi"},
                "merge": {"domain": natsconf.JS_DOMAIN},
            },
            "nats": {"tls": tls},
            "leafnodes": {"enabled": True, "tls": tls},
            "monitor": {"enabled": True},
            "merge": {**natsconf.helm_accounts(), "ping_interval": "10s", "ping_max": 3},
        },
        "tlsCA": {"enabled": True, "secretName": TLS_SECRET, "key": "ca.crt"},
        "container": {
            "env": env,
            "resources": {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"memory": "4Gi"}},
        },
        "promExporter": {"enabled": True, "podMonitor": {"enabled": True}},
        "podTemplate": {"topologySpreadConstraints": {"kubernetes.io/hostname": {"maxSkew": 1}}},
    }


def _deployment(w: Workload) -> dict[str, Any]:
    labels = {"app.kubernetes.io/name": "rlar", "app.kubernetes.io/component": w.role}
    args = ["-m", "actors", w.kind, "--nats", "$(RLAR_NATS_URL)", "--config", CONFIG]
    for s in CLUSTER_SETS:
        args += ["--set", s]
    requests: dict[str, Any] = {"cpu": w.cpu, "memory": w.memory}
    limits: dict[str, Any] = {"memory": w.memory}
    if w.gpu:
        requests["nvidia.com/gpu"] = w.gpu
        limits["nvidia.com/gpu"] = w.gpu
    container: dict[str, Any] = {
        "name": w.role,
        "image": IMAGE_CUDA if w.gpu else IMAGE,
        "command": ["python"],
        "args": args,
        "env": [
            {"name": "RLAR_NATS_URL", "value": CLUSTER_URL},
            {"name": "RLAR_NATS_USER", "value": w.role},
            _secret_env("RLAR_NATS_PASSWORD", password_env(w.role)),
            {"name": "RLAR_NATS_TLS_CA", "value": "/etc/rlar/tls/ca.crt"},
            {"name": "OMP_NUM_THREADS", "value": "1" if w.cpu.endswith("m") else w.cpu},
        ],
        "ports": [{"name": "metrics", "containerPort": monitoring.METRICS_PORT}],
        "resources": {"requests": requests, "limits": limits},
        "volumeMounts": [
            {"name": "tls", "mountPath": "/etc/rlar/tls", "readOnly": True},
            {"name": "run", "mountPath": "/app/runs"},
        ],
    }
    pod: dict[str, Any] = {
        "terminationGracePeriodSeconds": 60,
        "containers": [container],
        "volumes": [
            {
                "name": "tls",
                "secret": {"secretName": TLS_SECRET, "items": [{"key": "ca.crt", "path": "ca.crt"}]},
            },
            {"name": "run", "emptyDir": {}},
        ],
    }
    if w.unconfined:
        # bubblewrap makes user namespaces: the default seccomp profile forbids them.
        container["securityContext"] = {"seccompProfile": {"type": "Unconfined"}}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": w.role, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "replicas": w.replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {
                    "labels": labels,
                    "annotations": {
                        "prometheus.io/scrape": "true",
                        "prometheus.io/port": str(monitoring.METRICS_PORT),
                        "prometheus.io/path": "/metrics",
                    },
                },
                "spec": pod,
            },
        },
    }


def k8s_documents() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "rlar-bootstrap", "namespace": NAMESPACE},
            "spec": {
                "backoffLimit": 10,
                "template": {
                    "spec": {
                        "restartPolicy": "OnFailure",
                        "containers": [
                            {
                                "name": "bootstrap",
                                "image": IMAGE,
                                "command": ["rlar"],
                                "args": [
                                    "deploy",
                                    "bootstrap",
                                    "--nats",
                                    "$(RLAR_NATS_URL)",
                                    "--config",
                                    CONFIG,
                                    "--set",
                                    "topology.replicas=3",
                                    "--builtins",
                                ],
                                "env": [
                                    {"name": "RLAR_NATS_URL", "value": CLUSTER_URL},
                                    {"name": "RLAR_NATS_USER", "value": "admin"},
                                    _secret_env("RLAR_NATS_PASSWORD", password_env("admin")),
                                    {"name": "RLAR_NATS_TLS_CA", "value": "/etc/rlar/tls/ca.crt"},
                                ],
                                "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}},
                                "volumeMounts": [
                                    {"name": "tls", "mountPath": "/etc/rlar/tls", "readOnly": True}
                                ],
                            }
                        ],
                        "volumes": [{"name": "tls", "secret": {"secretName": TLS_SECRET}}],
                    }
                },
            },
        },
    ]
    docs += [_deployment(w) for w in WORKLOADS]
    docs.append(
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "reward", "namespace": NAMESPACE},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "reward"},
                "minReplicas": 2,
                "maxReplicas": 32,
                # Backlog of the reward workers' durables (SCORE stream) as the workers export it on /metrics
                # (rlar_consumer_pending), served to the HPA by prometheus-adapter's external rule
                # (k8s/prometheus-adapter-values.yaml): about 200 waiting requests per replica.
                "metrics": [
                    {
                        "type": "External",
                        "external": {
                            "metric": {
                                "name": monitoring.PENDING,
                                "selector": {"matchLabels": {"stream": "SCORE"}},
                            },
                            "target": {"type": "AverageValue", "averageValue": "200"},
                        },
                    }
                ],
                "behavior": {
                    "scaleUp": {
                        "stabilizationWindowSeconds": 30,
                        "policies": [{"type": "Percent", "value": 100, "periodSeconds": 60}],
                    },
                    "scaleDown": {
                        "stabilizationWindowSeconds": 300,
                        "policies": [{"type": "Pods", "value": 2, "periodSeconds": 60}],
                    },
                },
            },
        }
    )
    return docs


def compose_document() -> dict[str, Any]:
    common_env = {"RLAR_NATS_URL": "nats://nats:4222"}
    services: dict[str, Any] = {
        "nats": {
            "image": "nats:2.11-alpine",
            "command": ["-c", "/etc/nats/single.conf"],
            "env_file": ["secrets/credentials.env"],
            "volumes": ["../nats:/etc/nats:ro", "nats-data:/data"],
            "ports": ["4222:4222", "8222:8222"],
            "restart": "unless-stopped",
        },
        "bootstrap": {
            "image": IMAGE,
            "build": {"context": "../..", "dockerfile": "deploy/compose/Dockerfile"},
            "command": [
                "rlar",
                "deploy",
                "bootstrap",
                "--nats",
                "nats://nats:4222",
                "--config",
                CONFIG,
                "--builtins",
            ],
            "environment": {
                **common_env,
                "RLAR_NATS_USER": "admin",
                "RLAR_NATS_PASSWORD": "${RLAR_NATS_PASSWORD_ADMIN:?run rlar deploy credentials}",
            },
            "depends_on": {"nats": {"condition": "service_started"}},
            "restart": "on-failure",
        },
    }
    for w in WORKLOADS:
        if not w.compose:
            continue  # the synthesizer and retriever need an agent backend; add them when you have one
        svc: dict[str, Any] = {
            "image": IMAGE,
            "command": [
                "python",
                "-m",
                "actors",
                w.kind,
                "--nats",
                "nats://nats:4222",
                "--config",
                CONFIG,
                "--set",
                'run.dir="/app/runs/compose"',
            ],
            "environment": {
                **common_env,
                "RLAR_NATS_USER": w.role,
                "RLAR_NATS_PASSWORD": f"${{{password_env(w.role)}:?run rlar deploy credentials}}",
            },
            "volumes": ["runs:/app/runs"],
            "depends_on": {"bootstrap": {"condition": "service_completed_successfully"}},
            "restart": "unless-stopped",
        }
        deploy: dict[str, Any] = {}
        if w.compose > 1:
            deploy["replicas"] = w.compose
        if w.unconfined:
            svc["security_opt"] = ["seccomp=unconfined"]
        if deploy:
            svc["deploy"] = deploy
        if not w.gpu:
            services[w.role] = svc
            continue
        # GPU actors come in two profiles: `cpu` (the CPU image) and `gpu` (the CUDA image, one GPU each, the
        # policy on CUDA); `docker compose --profile cpu|gpu up` picks one.
        services[w.role] = {**svc, "profiles": ["cpu"]}
        gpu_sets = ["--set", f"{w.kind}.{GPU_SETS[w.kind]}"] if w.kind in GPU_SETS else []
        services[f"{w.role}-gpu"] = {
            **copy.deepcopy(svc),
            "image": IMAGE_CUDA,
            "build": {"context": "../..", "dockerfile": "deploy/compose/Dockerfile.cuda"},
            "command": [*svc["command"], *gpu_sets],
            "profiles": ["gpu"],
            "deploy": {
                "resources": {
                    "reservations": {
                        "devices": [{"driver": "nvidia", "count": w.gpu, "capabilities": ["gpu"]}]
                    }
                }
            },
        }
    return {"name": "rlar", "services": services, "volumes": {"nats-data": {}, "runs": {}}}


GPU_SETS = {"rollout": 'engine.device="cuda"'}
"""What a GPU replica overrides in the run config (the learner's DeepSpeed finds CUDA by itself)."""


HEADER = "# Rendered by `rlar deploy render` from rlar/deploy/render.py; edit that, not this file.\n"


def rendered_files() -> dict[str, str]:
    """Path under deploy/ -> text."""
    import yaml

    def dump(doc: Any) -> str:
        return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, width=110)

    files = {f"nats/{name}": text for name, text in natsconf.shipped_files().items()}
    files["nats/helm-values.yaml"] = (
        HEADER
        + "# helm install nats nats/nats -n rlar -f deploy/nats/helm-values.yaml\n"
        + dump(helm_values())
    )
    files["k8s/rlar.yaml"] = HEADER + "---\n".join(dump(d) for d in k8s_documents())
    files["k8s/prometheus-adapter-values.yaml"] = (
        HEADER
        + "# helm install prometheus-adapter prometheus-community/prometheus-adapter -f "
        + "deploy/k8s/prometheus-adapter-values.yaml\n"
        + dump(monitoring.adapter_values())
    )

    files["grafana/rlar-dashboard.json"] = json.dumps(monitoring.grafana_dashboard(), indent=1) + "\n"
    files["compose/compose.yaml"] = (
        HEADER
        + "# docker compose --env-file deploy/compose/secrets/credentials.env -f deploy/compose/compose.yaml \\\n"
        + "#   --profile cpu up    (or --profile gpu: rollout and learner on GPUs, deploy/compose/Dockerfile.cuda)\n"
        + dump(compose_document())
    )
    return files


def write_all(deploy_dir: str | Path) -> list[Path]:
    root = Path(deploy_dir)
    out = []
    for rel, text in rendered_files().items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        out.append(path)
    return out
