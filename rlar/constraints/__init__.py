"""The constraint model at the bottom of the library: what an instruction's checkable rules are and what they mean.

This package imports nothing of RLAR above it (its own layer in pyproject's import-linter contract); the reader
(:mod:`rlar.tasks.reading`), the second reading (:mod:`rlar.synthesis.second`), the verifier builder and the
near-miss maker (:mod:`rlar.synthesis`) sit above it.

- :mod:`~rlar.constraints.checks`: what every rule means, as standard-library code embedded in every composed
  verifier (``check``, ``holds``; number tests in one module, :mod:`~rlar.constraints.checks.numbers`).
"""

from rlar.constraints.checks import check, holds

__all__ = ["check", "holds"]
