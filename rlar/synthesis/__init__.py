"""Reward synthesis (the code agent's library): write a verifier, test it in the sandbox, keep it or say why not.

What a task's instruction asks for is read clause by clause by :mod:`rlar.tasks.reading` into the constraints of
:mod:`rlar.constraints` (the typed vocabulary, and what each rule means as stdlib code embedded in verifiers).

- :mod:`~rlar.synthesis.blocks`: parametrised building blocks rendered into stdlib-only verifier source.
- :mod:`~rlar.synthesis.compose`: the synthesis task (its instruction, coverage), drafts, the offline composer.
- :mod:`~rlar.synthesis.drafting`: synthesis as an agent question (request, retry turns, parsing).
- :mod:`~rlar.synthesis.builder`: responses written to satisfy, or to break one of, a set of constraints.
- :mod:`~rlar.synthesis.second_route`: probes written from the task description by another route.
- :mod:`~rlar.synthesis.probes`: good and bad probe responses and where each came from.
- :mod:`~rlar.synthesis.validate`: the gate (executes, in range, deterministic, fast, separates, independent).
- :mod:`~rlar.synthesis.loop`: write → validate → retry, returning a sealed spec or the reasons.
- :mod:`~rlar.synthesis.canary`: a new tool's shadow stage on live samples before it rewards.
- :mod:`~rlar.synthesis.report`: the synthesis report (requests, valid, rejected by reason, attempts, time).
- :mod:`~rlar.synthesis.standalone`: synthesis on this host without actors (``rlar tools route --synthesize``).

Below it: :mod:`rlar.tools.verifier_harness` (the program that runs a candidate inside the sandbox, shared with the
synthesised tool that scores with it) and :mod:`rlar.sandbox_client` (how code reaches the sandbox: a local jail or
the sandbox actor). Nothing here executes candidate code in the calling process.
"""
