"""Local stand-ins for paid remote services, for tests and benchmarks (never used in production paths)."""
