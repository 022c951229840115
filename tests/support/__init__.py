"""What the tests share that is not a fixture: paths and the child-process environment (``env``), the short
test topology and a nats-server body for module-scoped buses (``servers``), small actors and reward tools that
child processes import by path (``actors``, ``reward_tools``), what the observation tests publish
(``observe``), tiny trainer batches (``trainer``), a model-free embedding (``embedding``) and the shared
retrieval-demo cache (``retrieval``). Fixtures stay in ``tests/conftest.py``; test modules import helpers from
here, never from conftest or from each other."""
