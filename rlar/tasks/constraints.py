"""The constraints the reader finds in a task's text (:func:`extract_constraints`), and the constraint vocabulary
(:mod:`rlar.constraints.vocabulary`) under the names the router imports from here."""

from __future__ import annotations

from typing import Any

from rlar.constraints.vocabulary import canonical, constraints_key, from_metadata
from rlar.tasks.reading import read_instruction

__all__ = ["canonical", "constraints_key", "extract_constraints", "from_metadata"]


def extract_constraints(text: str) -> list[dict[str, Any]]:
    """The constraints :func:`rlar.tasks.reading.read_instruction` reads from ``text`` (canonical order)."""

    return read_instruction(text).constraints
