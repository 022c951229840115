"""The policy: model construction, generation engines, weight transport."""
