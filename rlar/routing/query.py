"""One query as the router sees it, and its signature (the key its decision is cached under).

``RoutingQuery`` is one kind of query: the task's domain, type, answer format, description and data source,
plus one sample (query text, reference, metadata) to show the shape of the reference. ``signature()`` hashes
the fields that define the kind — domain, task type, answer format, data source and the description (which
carries the constraints) — so the agent is asked once per kind, not per sample; the task name joins only when
all of them are empty.

For a query without a reference, the checkable constraints read from the query text and the record's
``format_rules`` join the signature too: IFEval-style data states different constraints per prompt, and each
set needs its own verifier.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rlar.tasks.base import query_text
from rlar.tasks.constraints import canonical, constraints_key, extract_constraints, from_metadata

__all__ = ["RoutingQuery"]


@dataclass(slots=True)
class RoutingQuery:
    task: str
    query: str
    reference: Any = None
    domain: str = ""
    task_type: str = ""
    answer_format: str = ""
    description: str = ""
    data_source: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_prompt(cls, p: Any) -> RoutingQuery:
        """From a ``bus.messages.Prompt``."""
        return cls(
            task=p.task,
            query=query_text(p.prompt),
            reference=p.reference,
            domain=p.domain,
            task_type=p.task_type,
            answer_format=p.answer_format,
            description=p.description,
            data_source=p.data_source,
            metadata=dict(p.metadata),
        )

    @classmethod
    def from_record(cls, r: Mapping[str, Any]) -> RoutingQuery:
        """From a JSON record ``{task, query, reference, metadata, domain?, task_type?, answer_format?,
        description?, data_source?}`` (missing type fields may also sit inside ``metadata``)."""
        meta = dict(r.get("metadata") or {})

        def pick(key: str) -> str:
            return str(r.get(key) or meta.get(key) or "")

        return cls(
            task=str(r.get("task") or ""),
            query=query_text(r.get("query", r.get("prompt", ""))),
            reference=r.get("reference"),
            domain=pick("domain"),
            task_type=pick("task_type"),
            answer_format=pick("answer_format"),
            description=pick("description"),
            data_source=pick("data_source"),
            metadata=meta,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "query": self.query,
            "reference": self.reference,
            "domain": self.domain,
            "task_type": self.task_type,
            "answer_format": self.answer_format,
            "description": self.description,
            "data_source": self.data_source,
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RoutingQuery:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})  # type: ignore[attr-defined]

    def signature_fields(self) -> dict[str, str]:
        fields = {
            "domain": self.domain,
            "task_type": self.task_type,
            "answer_format": self.answer_format,
            "data_source": self.data_source,
            "description": self.description,
        }
        if not any(fields.values()):
            fields["task"] = self.task
        if self.reference is None:
            # Without a reference the score comes from checkable constraints; when the query or the record
            # states its own (IFEval-style data), each distinct set is its own kind and needs its own verifier.
            own = canonical([*extract_constraints(self.query), *from_metadata(self.metadata)])
            if own:
                fields["constraints"] = constraints_key(own)
        return fields

    def signature(self) -> str:
        """sha256 (24 hex chars) of ``signature_fields()``: one routing decision per kind of query."""
        text = json.dumps(self.signature_fields(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]
