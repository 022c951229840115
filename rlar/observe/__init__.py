"""Seeing a run: experiment tracking, the live dashboard, Prometheus metrics and the run report.

- :mod:`rlar.observe.feed` — the read-only bus subscriber every observer shares (sample and reward groups,
  learner metrics, heartbeats, tool and routing messages, dead letters);
- :mod:`rlar.observe.tracking` (+ :mod:`~rlar.observe.backends`) — ``[train] report_to``: TensorBoard,
  Weights & Biases (offline) and MLflow through the libraries themselves;
- :mod:`rlar.observe.state` and :mod:`rlar.observe.dashboard` — ``rlar dashboard`` / ``rlar train
  --dashboard``: the live page (Starlette, Server-Sent Events, assets in ``static/``);
- :mod:`rlar.observe.prom` — each actor's ``/metrics`` (``[metrics] port``);
- :mod:`rlar.observe.report` — ``report.html`` at the end of ``rlar train`` and ``rlar ablate``;
- :mod:`rlar.observe.session` — what ``rlar train`` runs beside the actors.

Nothing here is imported by ``rlar --help``; the heavy libraries load only when used.
"""
