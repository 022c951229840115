"""A routing decision as the router stores it (KV ``rlar_decisions``), announces it and copies it into prompts."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bus.messages import ToolRef

__all__ = ["Decision"]


@dataclass(slots=True)
class Decision:
    """One routing decision for one signature: what the router stores in KV ``rlar_decisions`` (key = the
    signature), publishes as a ``RouteDecision`` and copies into each routed prompt's ``route``.

    ``state``: ``routed`` (tools chosen by the agent), ``pending`` (no tool fits; a new tool was requested
    and prompts wait for it), ``synthesized`` (routed to the tool made for the request), ``fallback`` (the
    wait ended without a tool; routed to the declared fallback), ``abstain`` (synthesis refused and no
    fallback: routed with no tool, the samples abstain), ``unroutable`` (no tool and no fallback:
    prompts are dead-lettered). ``expires_at`` (0: never) makes a decision taken without the agent (it
    failed) be asked again later. ``probes``: the hack-probe verdict of every tool probed for the signature
    (:meth:`rlar.routing.probes.ProbeReport.to_dict`: which probes ran, what each scored, ``eligible``,
    ``refused``, ``unverified`` or ``skipped``); a refused tool is not among ``tools``.
    """

    signature: str
    task: str
    state: str
    tools: list[ToolRef] = field(default_factory=list)
    reason: str = ""
    confidence: float = 0.0
    why: str = ""
    """The confidence in words, when it is calibrated (the offline router's): the nearest labelled formats, the
    reference's structure, what lowers it most."""
    backend: str = ""
    model: str = ""
    prompt_hash: str = ""
    cost: dict[str, Any] = field(default_factory=dict)
    constraints: list[dict[str, Any]] = field(default_factory=list)
    request_id: str = ""
    requested_at: float = 0.0
    decided_at: float = 0.0
    expires_at: float = 0.0
    fields: dict[str, str] = field(default_factory=dict)
    probes: list[dict[str, Any]] = field(default_factory=list)

    def refused(self) -> list[str]:
        """``tool vN`` of every tool the hack probes refused for this signature."""
        return [f"{p['tool']} v{p['version']}" for p in self.probes if p.get("verdict") == "refused"]

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}  # type: ignore[attr-defined]
        out["tools"] = [t.to_dict() for t in self.tools]
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Decision:
        kw = {k: d[k] for k in cls.__dataclass_fields__ if k in d}  # type: ignore[attr-defined]
        kw["tools"] = [ToolRef.from_dict(t) for t in kw.get("tools") or []]
        return cls(**kw)

    def to_json(self) -> bytes:
        return json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes) -> Decision:
        return cls.from_dict(json.loads(data))

    def route_info(self) -> dict[str, Any]:
        """Provenance copied into ``Prompt.route``."""
        return {
            "signature": self.signature,
            "state": self.state,
            "backend": self.backend,
            "model": self.model,
            "prompt_hash": self.prompt_hash,
            "confidence": self.confidence,
            "why": self.why,
            "cost": dict(self.cost),
            "reason": self.reason,
            "request_id": self.request_id,
            "decided_at": self.decided_at,
        }

    def uses(self, name: str, version: int | None = None) -> bool:
        return any(t.tool == name and (version is None or t.version == int(version)) for t in self.tools)
