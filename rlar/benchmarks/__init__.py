"""Benchmarks behind ``rlar bench …``: each reports figures measured in one run and prints JSON last."""
