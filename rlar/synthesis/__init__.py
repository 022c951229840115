"""Reward synthesis (the code agent's library): write a verifier, test it in the sandbox, keep it or say why not.

The constraints a verifier checks are read by :mod:`rlar.tasks.constraints`.

- :mod:`~rlar.synthesis.blocks`: parametrised building blocks rendered into stdlib-only verifier source.
- :mod:`~rlar.synthesis.compose`: the synthesis task, drafts, and the offline composer.
- :mod:`~rlar.synthesis.drafting`: synthesis as an agent question (request, retry turns, parsing).
- :mod:`~rlar.synthesis.probes`: known-good and known-bad probe responses with an independent oracle.
- :mod:`~rlar.synthesis.harness`: the program that runs a candidate inside the sandbox.
- :mod:`~rlar.synthesis.validate`: the gate (executes, in range, deterministic, fast, separates).
- :mod:`~rlar.synthesis.runner`: how code reaches the sandbox (local jail or the sandbox actor).
- :mod:`~rlar.synthesis.loop`: write → validate → retry, returning a sealed spec or the reasons.

Nothing here executes candidate code in the calling process.
"""
