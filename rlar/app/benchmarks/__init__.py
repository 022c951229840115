"""Benchmarks that start actors (the others, which start none, are :mod:`rlar.benchmarks`)."""
