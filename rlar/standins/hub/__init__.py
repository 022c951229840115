"""A local stand-in for the model hub (pages, API, files) and the demo site it serves: used by the tests and
by ``rlar retrieve --mirror``; never by the retriever itself.

``mirror`` is the hub-shaped HTTP site, ``catalogue`` the demo site's repositories and leaderboard,
``models`` the tiny checkpoints those repositories serve (built locally in seconds).
"""
