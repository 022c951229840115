"""The library's wire parts: what moves over the bus on behalf of packages that know no bus.

- :mod:`rlar.wire.weight_sync` — announcing and fetching policy weights (filesystem, object store,
  broadcast and HTTP routes) on ``rlar.weights``; the engines (:mod:`rlar.policy`) only load tensors.
- :mod:`rlar.wire.groups` — the learner's groups (one generation of a prompt as the sample and reward
  messages carried it, held unacked) and its journal of retired groups; the GRPO maths
  (:mod:`rlar.learn`) read them but import no bus.

``pyproject.toml``'s import contract forbids ``rlar.learn`` and ``rlar.policy`` a direct ``bus`` import.
"""
