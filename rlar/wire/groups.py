"""The learner's groups: one generation of a prompt gathered from the messages that carry its samples and its
tools' results (:class:`Group`), how its behaviour log-probs are used, and the journal of retired groups
(:func:`read_journal`). The learner actor (:mod:`actors.learner`) holds them until they are retired."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nats.aio.msg import Msg

from bus.messages import Completion, Sampling, ScoredItem, ToolRef

JOURNAL = "groups.jsonl"
"""The learner's journal of retired groups, in the run directory (one JSON line per retirement)."""


def read_journal(path: Path) -> list[dict[str, Any]]:
    """The journal's entries, oldest first; a last line cut short by a crash is skipped."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


@dataclass
class ToolResults:
    """One tool's results for a group: its weight in the route, the version used, the result per sample index."""

    weight: float
    version: int
    items: dict[int, ScoredItem] = field(default_factory=dict)


@dataclass
class Group:
    """One generation of a prompt: its samples, every tool's results, and the messages that carried them
    (held unacked until the group is retired). Samples and rewards may arrive in any order."""

    prompt_id: str
    generation: str
    task: str = ""
    group_size: int = 0
    """0 until the first sample message arrives."""
    policy_version: int = 0
    prompt_token_ids: list[int] = field(default_factory=list)
    tools: list[ToolRef] = field(default_factory=list)
    sampling: Sampling = field(default_factory=Sampling)
    created_at: float = 0.0
    completions: dict[int, Completion] = field(default_factory=dict)
    rewards: dict[str, ToolResults] = field(default_factory=dict)
    """Per tool, its results so far."""
    msgs: list[Msg] = field(default_factory=list)
    arrived: float = field(default_factory=time.time)

    @property
    def key(self) -> tuple[str, str]:
        return self.prompt_id, self.generation

    def complete(self) -> bool:
        """All G samples are in and every tool of the route has a result for each."""
        n = self.group_size
        return (
            n > 0
            and len(self.completions) >= n
            and all(t.tool in self.rewards and len(self.rewards[t.tool].items) >= n for t in self.tools)
        )
