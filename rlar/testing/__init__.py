"""Local stand-ins for remote services (the Anthropic Messages API, the model hub), for tests, benchmarks and
the demo; never used in production paths."""
