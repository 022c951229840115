"""What a retrieval leaves behind: every page read, every candidate with its evidence, every decision.

A retrieval's record is written as ``<run_dir>/retrievals/<request_id>/record.json`` with the screenshots
next to it (``screenshots/*.png``); paths inside the record are relative to that directory. The record is
plain JSON; ``RetrievalRecord.to_dict()`` is its exact content.

Candidate ``decision`` values, in pipeline order:

- ``unread``: listed but its page could not be read (``reason`` says why: HTTP 404, timeout, no data);
- ``rejected``: read, and a filter refused it (``reason`` joins every failed filter: head, licence,
  budget, access, language, domain, fit);
- ``not_tried``: eligible but not deployed; ``reason`` says why (a higher-ranked one passed first, the
  deploy budget ``validation.max_candidates`` was spent, the hub became unreachable);
- ``refused``: deployed but refused before loading (access, sizes over the cap, hashes, files, head
  shape), with the file and status in ``reason`` and the size plan in ``deploy.planned``;
- ``download_failed``: its files were refused by nobody but could not be downloaded (an HTTP error, a
  broken transfer): ``reason`` names the file and the status; it says nothing about its fit;
- ``failed``: loaded but failed validation (or could not be loaded);
- ``registered`` / ``validated``: passed validation (``validated`` when no registry was given).
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(slots=True)
class PageEvidence:
    """One page the browser visited. ``status``: ok | http_error | timeout | error | blocked."""

    url: str
    purpose: str  # search | leaderboard | model
    status: str
    http_status: int | None = None
    reason: str = ""
    elapsed_s: float = 0.0
    screenshot: str = ""  # relative to the retrieval directory; "" when none was taken
    screenshot_error: str = ""  # why the screenshot was not taken, when it failed
    final_url: str = ""
    title: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(slots=True)
class Candidate:
    """A model found on a result page, and everything learned and decided about it."""

    model_id: str
    url: str
    found_by: list[str] = field(default_factory=list)  # the listing/leaderboard URLs it came from
    listing: dict[str, Any] = field(default_factory=dict)  # fields read from result pages
    facts: dict[str, Any] = field(default_factory=dict)  # fields read from the model page
    sources: dict[str, str] = field(default_factory=dict)  # field -> props | dom | listing | leaderboard
    missing: list[str] = field(default_factory=list)  # fields the pages did not state
    leaderboard: dict[str, Any] = field(default_factory=dict)  # {"url", "scores": {column: value}}
    page: PageEvidence | None = None
    kind: str = ""  # rlar.retrieval.kinds.KINDS: scalar_rm | qe_regression | safety_classifier | …
    kind_reason: str = ""  # what on its pages made it that kind
    fit_evidence: str = ""  # why its card alone shows task fit ("" when the similarity margin decided)
    filters: dict[str, str] = field(default_factory=dict)  # filter -> "pass" | reason it failed
    scores: dict[str, float] = field(default_factory=dict)  # ranking components and "total"
    rank: int | None = None
    decision: str = "unread"
    reason: str = ""
    deploy: dict[str, Any] = field(default_factory=dict)
    validation: dict[str, Any] = field(default_factory=dict)

    @property
    def eligible(self) -> bool:
        return bool(self.filters) and all(v == "pass" for v in self.filters.values())

    def rejection_reasons(self) -> list[str]:
        return [f"{k}: {v}" for k, v in self.filters.items() if v != "pass"]


@dataclass(slots=True)
class RetrievalRecord:
    """The full account of one retrieval (see the module docstring for ``decision`` values).

    ``outcome``: registered | validated | no_candidate | download_failed (no candidate passed and the
    download of at least one that fits failed: the reason names them) | hub_unreachable (the hub gave no
    HTTP answer: to the first API request, to every search page, or to a file download) | failed. ``tool`` holds the
    registered spec's name, version and content hash (empty unless registered/validated).
    """

    request_id: str
    request: dict[str, Any]
    config: dict[str, Any]
    started_at: float = field(default_factory=time.time)
    finished_at: float = 0.0
    outcome: str = "running"
    reason: str = ""
    worker: str = ""
    pages: list[PageEvidence] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    matcher: str = ""
    tool: dict[str, Any] = field(default_factory=dict)
    screenshots: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def candidate(self, model_id: str) -> Candidate | None:
        for c in self.candidates:
            if c.model_id.lower() == model_id.lower():
                return c
        return None

    def ranked(self) -> list[Candidate]:
        """Eligible candidates in rank order, then the others (by model id)."""
        ranked = sorted((c for c in self.candidates if c.rank is not None), key=lambda c: c.rank or 0)
        rest = sorted((c for c in self.candidates if c.rank is None), key=lambda c: c.model_id)
        return ranked + rest

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["candidates"] = [dataclasses.asdict(c) for c in self.ranked()]
        d["duration_s"] = round((self.finished_at or time.time()) - self.started_at, 3)
        return d

    def write(self, directory: Path) -> Path:
        """Write ``record.json`` atomically into ``directory`` and return its path."""
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / "record.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=2, ensure_ascii=False, default=str))
        tmp.replace(path)
        return path


def load_record(path: str | Path) -> dict[str, Any]:
    """Read a written record back (plain dict)."""
    data: dict[str, Any] = json.loads(Path(path).read_text())
    return data
