"""Monitoring recipes rendered with the rest of deploy/: a Grafana dashboard and prometheus-adapter rules.

Both read only what the actors export on ``/metrics`` (:mod:`rlar.observe.prom`); the Kubernetes manifests
(:mod:`rlar.deploy.render`) run every actor with ``metrics.port = METRICS_PORT`` on all interfaces, name the
container port ``metrics`` and carry the ``prometheus.io/*`` annotations that Prometheus' Kubernetes service
discovery examples scrape by. The reward workers' HorizontalPodAutoscaler reads ``rlar_consumer_pending``
(their durables' backlog on the SCORE stream) through prometheus-adapter, with the external rule below:

- ``grafana/rlar-dashboard.json`` — import into Grafana (a Prometheus data source, chosen at import);
- ``k8s/prometheus-adapter-values.yaml`` — ``helm install prometheus-adapter
  prometheus-community/prometheus-adapter -f deploy/k8s/prometheus-adapter-values.yaml``.
"""

from __future__ import annotations

from typing import Any

METRICS_PORT = 9100
PENDING = "rlar_consumer_pending"
"""The metric the reward autoscaler reads (backlog of a durable consumer, exported by every actor reading it)."""

# (title, unit, PromQL expressions with legend) per panel, in rows of two.
PANELS: list[tuple[str, str, list[tuple[str, str]]]] = [
    ("Actors up", "short", [("sum by (actor) (rlar_actor_up)", "{{actor}}")]),
    ("Actor uptime", "s", [("min by (actor) (rlar_actor_uptime_seconds)", "{{actor}} (youngest)")]),
    ("Dead letters /s", "short", [("sum by (actor) (rate(rlar_dead_letters_total[5m]))", "{{actor}}")]),
    ("Samples generated /s", "short", [("sum by (task) (rate(rlar_samples_total[1m]))", "{{task}}")]),
    (
        "Rewards /s by tool and status",
        "short",
        [("sum by (tool, status) (rate(rlar_rewards_total[1m]))", "{{tool}} {{status}}")],
    ),
    (
        "Abstain share by tool",
        "percentunit",
        [
            (
                'sum by (tool) (rate(rlar_rewards_total{status="abstain"}[5m])) '
                "/ sum by (tool) (rate(rlar_rewards_total[5m]))",
                "{{tool}}",
            )
        ],
    ),
    (
        "Reward latency p95 by tool",
        "s",
        [
            (
                "histogram_quantile(0.95, sum by (tool, le) (rate(rlar_reward_latency_seconds_bucket[5m])))",
                "{{tool}}",
            )
        ],
    ),
    (
        "Consumer backlog",
        "short",
        [
            (f"max by (stream, consumer) ({PENDING})", "{{stream}}/{{consumer}}"),
            ("max by (stream, consumer) (rlar_consumer_ack_pending)", "{{stream}}/{{consumer}} unacked"),
        ],
    ),
    (
        "Queue lag p95 (stream → actor)",
        "s",
        [
            (
                "histogram_quantile(0.95, sum by (consumer, le) (rate(rlar_queue_lag_seconds_bucket[5m])))",
                "{{consumer}}",
            )
        ],
    ),
    ("Learner steps /min", "short", [("60 * sum(rate(rlar_learner_steps_total[5m]))", "steps")]),
    (
        "Learner step time",
        "s",
        [
            ("histogram_quantile(0.5, sum by (le) (rate(rlar_learner_step_seconds_bucket[5m])))", "p50"),
            ("histogram_quantile(0.95, sum by (le) (rate(rlar_learner_step_seconds_bucket[5m])))", "p95"),
        ],
    ),
    (
        "Policy staleness p95 (versions)",
        "short",
        [
            ("histogram_quantile(0.95, sum by (le) (rate(rlar_policy_staleness_bucket[5m])))", "p95"),
            ("sum(rate(rlar_learner_dropped_groups_total[5m]))", "dropped groups /s"),
        ],
    ),
    (
        "Policy version served",
        "short",
        [('max by (actor) (rlar_actor_info{key="policy_version"})', "{{actor}}")],
    ),
    (
        "Weight loads /min and load time p95",
        "short",
        [
            ("60 * sum(rate(rlar_weight_loads_total[5m]))", "loads /min"),
            (
                "histogram_quantile(0.95, sum by (le) (rate(rlar_weight_load_seconds_bucket[5m])))",
                "load s p95",
            ),
        ],
    ),
    (
        "Deliveries /s by consumer",
        "short",
        [
            ("sum by (consumer) (rate(rlar_messages_consumed_total[1m]))", "{{consumer}}"),
            ("sum by (consumer) (rate(rlar_redeliveries_total[5m]))", "{{consumer}} redelivered"),
        ],
    ),
    ("Samples trained on /s", "short", [("sum(rate(rlar_learner_samples_total[1m]))", "learner")]),
    (
        "Actor counters /s",
        "short",
        [("sum by (actor, counter) (rate(rlar_actor_counter_total[5m]))", "{{actor}} {{counter}}")],
    ),
]


def grafana_dashboard() -> dict[str, Any]:
    """A Grafana dashboard (schema 39) with one time-series panel per entry of :data:`PANELS`."""
    ds = {"type": "prometheus", "uid": "${datasource}"}
    panels = []
    for i, (title, unit, exprs) in enumerate(PANELS):
        panels.append(
            {
                "id": i + 1,
                "type": "timeseries",
                "title": title,
                "datasource": ds,
                "gridPos": {"h": 8, "w": 12, "x": 12 * (i % 2), "y": 8 * (i // 2)},
                "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
                "options": {
                    "legend": {"displayMode": "list", "placement": "bottom"},
                    "tooltip": {"mode": "multi"},
                },
                "targets": [
                    {"refId": chr(65 + j), "datasource": ds, "expr": e, "legendFormat": legend}
                    for j, (e, legend) in enumerate(exprs)
                ],
            }
        )
    return {
        "title": "RLAR actors",
        "uid": "rlar-actors",
        "description": "What every RLAR actor exports on /metrics (rlar.observe.prom).",
        "tags": ["rlar"],
        "schemaVersion": 39,
        "version": 1,
        "editable": True,
        "time": {"from": "now-1h", "to": "now"},
        "refresh": "10s",
        "templating": {
            "list": [
                {"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Prometheus"}
            ]
        },
        "panels": panels,
    }


def adapter_values() -> dict[str, Any]:
    """Values for the prometheus-community/prometheus-adapter chart: the external metric the reward
    workers' HPA reads. Every actor reading a durable exports its backlog, so replicas repeat the same value:
    ``max`` per consumer, then the sum over the consumers the HPA's selector picks."""
    return {
        "rules": {
            "default": False,
            "external": [
                {
                    "seriesQuery": f'{PENDING}{{stream!="",consumer!=""}}',
                    "resources": {"overrides": {"namespace": {"resource": "namespace"}}},
                    "name": {"matches": f"^{PENDING}$", "as": PENDING},
                    "metricsQuery": "sum(max by (consumer) (<<.Series>>{<<.LabelMatchers>>}))",
                }
            ],
        }
    }
