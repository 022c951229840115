"""Local stand-ins for remote services: the Anthropic Messages API (``anthropic_server``) and a model hub
(``hub``: a hub-shaped site of known content, the demo's and the held-out catalogue). They are runtime parts, not
test code: ``rlar retrieve --mirror`` serves the hub for the offline demo, ``rlar bench retrieval`` and ``rlar bench
reward`` measure against them, and the tests use them too. Never on a production path: nothing selects them
without ``--mirror`` or a benchmark."""
