"""The app: what starts, orchestrates or attaches to processes — the ``rlar`` command (:mod:`rlar.app.cli`,
:mod:`rlar.app.commands`), ``rlar train``/``rlar up`` (:mod:`rlar.app.train`, :mod:`rlar.app.up`), the
operator commands (:mod:`rlar.app.attach`, :mod:`rlar.app.status`, :mod:`rlar.app.tail`), the run
document's validation against the actors' configs (:mod:`rlar.app.runconfig`), the generated reference
(:mod:`rlar.app.docgen`), ``rlar export`` and the benchmarks that start actors (:mod:`rlar.app.benchmarks`).

Layers (``make lint`` checks them with import-linter, ``[tool.importlinter]`` in pyproject.toml): ``bus`` ←
library (the other ``rlar`` packages, which know no actor) ← ``actors`` ← app. Only the app imports
``actors``.
"""
