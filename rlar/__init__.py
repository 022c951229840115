"""RLAR: multi-task GRPO with agentic rewards. Shared library (config, tasks, tools, policy, CLI)."""
