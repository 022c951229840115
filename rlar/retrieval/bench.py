"""``rlar bench retrieval``: how often the retriever picks a right model on a hub-shaped site of known content.

Each request of a JSONL file (``data/retrieval/heldout.jsonl``: ``id``, ``description``, ``constraints``
with ``language`` / ``max_params`` / ``licences``, ``examples`` of ``{query, reference}`` for the probes,
``acceptable``: the repo ids a right retriever picks, or ``"none"``) runs through the whole pipeline
(search, read, filter, rank, deploy, validate) in real headless Chromium against a local site
(:mod:`rlar.standins.hub`: ``heldout`` — written apart from the retriever's tuning — or ``demo``).

Per request: ``top`` is the candidate ranked first (the one deployed first); it is a **hit** when it is one
of the acceptable repos, or, for ``"none"``, when no candidate is ranked at all. Also reported: whether an
acceptable repo was listed by a search (``found``), read, and eligible, with the reason it was set aside,
and the retrieval's outcome. The stand-in weights are random, so validation fails and outcomes are
``no_candidate`` unless a download fails first (``download_failed``); the figure is the choice, not the
model's quality. The last line printed is the summary as JSON.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rlar.retrieval.browser import BrowserPool
from rlar.retrieval.config import RetrievalConfig, RetrievalRequest
from rlar.retrieval.pipeline import RetrievalPipeline

CATALOGUES = ("heldout", "demo")
DEFAULT_DATA = {"heldout": "data/retrieval/heldout.jsonl"}


@dataclass
class BenchCase:
    """One request of the bench file and the repo ids that answer it right (empty: none should)."""

    id: str
    description: str
    constraints: dict[str, Any] = field(default_factory=dict)
    examples: list[dict[str, Any]] = field(default_factory=list)
    acceptable: list[str] = field(default_factory=list)
    note: str = ""

    def request(self) -> RetrievalRequest:
        c = self.constraints
        licences = c.get("licences", c.get("licenses"))
        return RetrievalRequest(
            request_id=f"bench-{self.id}",
            description=self.description,
            domain=str(c.get("domain", "")),
            task_type=str(c.get("task_type", "")),
            language=str(c.get("language", "")),
            max_params=c.get("max_params"),
            max_vram_gb=c.get("max_vram_gb"),
            licences=[str(x).lower() for x in licences] if licences is not None else None,
            examples=list(self.examples),
        )


def load_cases(path: str | Path) -> list[BenchCase]:
    cases = []
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        acc = row.get("acceptable")
        if acc != "none" and not (isinstance(acc, list) and acc):
            raise ValueError(f"{path}:{n}: 'acceptable' must be a list of repo ids or \"none\"")
        cases.append(
            BenchCase(
                id=str(row["id"]),
                description=str(row["description"]),
                constraints=dict(row.get("constraints") or {}),
                examples=list(row.get("examples") or []),
                acceptable=[] if acc == "none" else [str(x) for x in acc],
                note=str(row.get("note", "")),
            )
        )
    return cases


@dataclass
class CaseResult:
    id: str
    hit: bool
    top: str | None
    outcome: str
    reason: str
    acceptable: list[str]
    found: list[str]
    read: list[str]
    eligible: list[str]
    set_aside: dict[str, str]
    queries: list[str]
    seconds: float


def score_record(case: BenchCase, record: dict[str, Any], seconds: float = 0.0) -> CaseResult:
    """A bench verdict from one retrieval record (see the module docstring)."""
    cands = record.get("candidates") or []
    ranked = sorted((c for c in cands if c.get("rank") is not None), key=lambda c: c["rank"])
    top = ranked[0]["model_id"] if ranked else None
    acc = {a.lower() for a in case.acceptable}
    mine = [c for c in cands if c["model_id"].lower() in acc]
    hit = (top is None) if not acc else (top is not None and top.lower() in acc)
    return CaseResult(
        id=case.id,
        hit=hit,
        top=top,
        outcome=str(record.get("outcome")),
        reason=str(record.get("reason", ""))[:300],
        acceptable=list(case.acceptable),
        found=[c["model_id"] for c in mine],
        read=[c["model_id"] for c in mine if (c.get("page") or {}).get("status") == "ok"],
        eligible=[c["model_id"] for c in mine if c.get("rank") is not None],
        set_aside={c["model_id"]: str(c.get("reason", ""))[:300] for c in mine if c.get("rank") is None},
        queries=list(record.get("queries") or []),
        seconds=round(seconds, 2),
    )


def bench_config(hub_url: str, overrides: dict[str, Any] | None = None) -> RetrievalConfig:
    """The retrieval settings of the bench: the defaults, a fast local browser, one model validated."""
    doc: dict[str, Any] = {
        "hub_url": hub_url,
        "browser": {"min_interval_s": 0.05, "page_timeout_s": 8.0},
        "validation": {"max_candidates": 1, "n_probes": 32},
    }
    for k, v in (overrides or {}).items():
        if isinstance(v, dict):
            doc.setdefault(k, {}).update(v)
        else:
            doc[k] = v
    return RetrievalConfig.model_validate(doc)


async def run_cases(
    cases: list[BenchCase], hub_url: str, run_dir: Path, overrides: dict[str, Any] | None = None
) -> list[CaseResult]:

    cfg = bench_config(hub_url, overrides)
    out = []
    async with BrowserPool(cfg.browser) as pool:
        pipeline = RetrievalPipeline(cfg, pool, run_dir, worker="rlar-bench-retrieval")
        for case in cases:
            t0 = time.monotonic()
            record = await pipeline.retrieve(case.request())
            out.append(score_record(case, record.to_dict(), time.monotonic() - t0))
    return out


def summary(catalogue: str, data: str, results: list[CaseResult]) -> dict[str, Any]:
    hits = sum(r.hit for r in results)
    with_answer = [r for r in results if r.acceptable]
    return {
        "bench": "retrieval",
        "catalogue": catalogue,
        "data": data,
        "requests": len(results),
        "hits": hits,
        "hit_rate": round(hits / len(results), 3) if results else 0.0,
        "acceptable_found": sum(bool(r.found) for r in with_answer),
        "acceptable_eligible": sum(bool(r.eligible) for r in with_answer),
        "requests_with_an_answer": len(with_answer),
        "outcomes": {o: sum(r.outcome == o for r in results) for o in sorted({r.outcome for r in results})},
        "cases": [asdict(r) for r in results],
    }


def render(s: dict[str, Any]) -> str:
    lines = [f"retrieval bench · catalogue {s['catalogue']} · {s['data']}"]
    for c in s["cases"]:
        mark = "HIT " if c["hit"] else "miss"
        want = ", ".join(c["acceptable"]) or "none"
        lines.append(f"  {mark} {c['id']:<18} top={c['top'] or '-'}  (want {want})  outcome={c['outcome']}")
        lines.append(f"       queries: {' | '.join(c['queries'])}")
        for mid, why in c["set_aside"].items():
            lines.append(f"       {mid}: {why[:160]}")
    lines.append(
        f"hits {s['hits']}/{s['requests']} · acceptable found by a search {s['acceptable_found']}/"
        f"{s['requests_with_an_answer']} · eligible {s['acceptable_eligible']}/{s['requests_with_an_answer']}"
        f" · outcomes {s['outcomes']}"
    )
    return "\n".join(lines)


__all__ = [
    "CATALOGUES",
    "BenchCase",
    "CaseResult",
    "bench_config",
    "load_cases",
    "run_cases",
    "score_record",
    "summary",
]
