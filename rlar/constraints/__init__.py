"""The constraint model at the bottom of the library: what an instruction's checkable rules are and what they mean.

This package imports nothing of RLAR above it (its own layer in pyproject's import-linter contract); the reader
(:mod:`rlar.tasks.reading`), the second reading (:mod:`rlar.synthesis.second`), the verifier builder and the
near-miss maker (:mod:`rlar.synthesis`) sit above it.

- :mod:`~rlar.constraints.model`: the vocabulary as types — one dataclass per kind of rule (:class:`Count`,
  :class:`Each`, :class:`Figure`, ...) with its parameters as fields, validated on construction, and its dict
  form (``to_dict`` / :func:`parse`), which is what verifiers, stored tool params and the wire carry;
- :mod:`~rlar.constraints.vocabulary`: the rules and their parameters, canonical sets (merged, ordered),
  constraints a record declares, a constraint in words;
- :mod:`~rlar.constraints.checks`: what every rule means, as standard-library code embedded in every composed
  verifier (``check``, ``holds``; number tests in one module, :mod:`~rlar.constraints.checks.numbers`);
- :mod:`~rlar.constraints.families`: the constraint families, one module each holding its types, checks,
  wordings, response builder and near misses (:mod:`~rlar.constraints.family`: what a family is), with what they
  share: :mod:`~rlar.constraints.reading` (the clause a family reads, wordings as tables) and
  :mod:`~rlar.constraints.responses` (finding constraints of a set, counts within bounds, the words of a built
  response).
"""

from rlar.constraints.checks import check, holds
from rlar.constraints.model import Constraint
from rlar.constraints.vocabulary import RULES, canonical, describe, parse

__all__ = ["RULES", "Constraint", "canonical", "check", "describe", "holds", "parse"]
