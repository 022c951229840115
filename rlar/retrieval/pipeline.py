"""One retrieval, top to bottom: search, read, filter, rank, deploy, validate, register — with evidence.

:meth:`RetrievalPipeline.retrieve` runs these steps and returns the :class:`RetrievalRecord`, also written
to ``<run_dir>/retrievals/<request_id>/record.json`` with the screenshots beside it:

1. Probes: from the request's examples, else the builtin task it names. None → outcome ``failed``
   (nothing can be validated, so nothing may be registered) before any page is read.
2. Reachability: one request to the hub's API. No HTTP answer → outcome ``hub_unreachable``.
3. Search: up to ``max_queries`` hub searches built from the request (:func:`rlar.retrieval.kinds.search_queries`:
   "qe", "comet", "quality estimation" for translation quality; "safety", "guard", "toxic" for safety;
   "reward", "rm", "pref" for reward models; domain words; the language pair; "judge"), each once per
   configured pipeline tag (default: no tag filter) in the configured sort, plus each configured leaderboard
   page; every model they list becomes a candidate. No search page answering at all → ``hub_unreachable``.
4. Read: the model pages of the most promising ``max_model_pages`` candidates (on a leaderboard first,
   then those found by the earliest, most specific searches, then listed downloads), concurrently through
   the browser pool. A page that fails (404, timeout, not a
   model page) leaves its candidate ``unread`` with the reason. Fields a page does not state are looked up in
   the hub API (``/api/models/<id>``) before they count as missing.
5. Filter (kind of judge, head, licence, budget, access, and the task-fit gate: language, domain, fit by
   the card's evidence or by similarity) and rank the eligible ones by fit and evidence
   (``rlar.retrieval.kinds``, ``rlar.retrieval.ranking``, ``rlar.retrieval.taskfit``).
6. Deploy in rank order: fetch and vet the files (``rlar.retrieval.deploy``: sizes and hashes first, the
   byte cap), validate on the probes (``rlar.retrieval.validate``), until one passes or
   ``validation.max_candidates`` have been downloaded and validated. The first that passes becomes a
   ``reward_model`` tool spec with its provenance and validation record and is registered through the
   given ``register`` callable; the others keep the reason they were refused or failed, and every eligible
   candidate not tried says why. A download with no answer from the hub ends the retrieval as
   ``hub_unreachable``; a download that fails otherwise (an HTTP error, a broken transfer) marks its
   candidate ``download_failed`` and the next is tried; when none passes, the outcome is
   ``download_failed`` naming the files and statuses — a failed download is never reported as a misfit.

Never raises for what sites, repositories or models do: each failure is a recorded reason. Our own bugs
raise (after the record is written with outcome ``failed`` and the traceback).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from rlar.retrieval.adapters import HubAdapter, LeaderboardAdapter, LeaderboardTable
from rlar.retrieval.browser import BrowserPool
from rlar.retrieval.config import RetrievalConfig, RetrievalRequest
from rlar.retrieval.deploy import FetchResult, WeightFetcher, vet_config
from rlar.retrieval.hub_api import HubUnreachable
from rlar.retrieval.kinds import fit_evidence, request_kinds, search_queries
from rlar.retrieval.probes import ProbePair, build_probes, examples_from_items, examples_from_task
from rlar.retrieval.ranking import (
    TaskFitMatcher,
    apply_filters,
    gate_fit,
    make_matcher,
    rank,
    task_fit_margins,
)
from rlar.retrieval.records import Candidate, PageEvidence, RetrievalRecord
from rlar.retrieval.taskfit import request_domains
from rlar.retrieval.validate import ValidationReport, validate_checkpoint
from rlar.tools.base import Origin, ToolKind, ToolSpec
from rlar.tools.reward_model import RewardModelTool

log = logging.getLogger("rlar.retrieval")

Register = Callable[[ToolSpec], Awaitable[ToolSpec]]

API_JS = "() => document.body ? document.body.innerText : ''"


def slug(text: str) -> str:
    """A lower-case token of letters, digits and '-' (file names, tool names)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def tool_name(prefix: str, model_id: str) -> str:
    return f"{prefix}-{slug(model_id)}"


class RetrievalPipeline:
    """Runs retrievals with one browser pool (shared by concurrent retrievals) and one matcher."""

    def __init__(
        self,
        cfg: RetrievalConfig,
        pool: BrowserPool,
        run_dir: str | Path,
        *,
        matcher: TaskFitMatcher | None = None,
        worker: str = "",
    ) -> None:
        self.cfg = cfg
        self.pool = pool
        self.run_dir = Path(run_dir)
        self.hub = HubAdapter(cfg.hub_url)
        self.leaderboards = [
            LeaderboardAdapter(u, cfg.leaderboard_score_column, cfg.hub_url) for u in cfg.leaderboard_urls
        ]
        pool.allow(cfg.hub_url, *cfg.leaderboard_urls)
        self.matcher = matcher or make_matcher(cfg.ranking.matcher)
        self.worker = worker
        models_dir = Path(cfg.models_dir) if cfg.models_dir else self.run_dir / "models"
        self.fetcher = WeightFetcher(cfg.fetch, cfg.hub_url, models_dir)

    def retrieval_dir(self, request_id: str) -> Path:
        return self.run_dir / "retrievals" / slug(request_id)

    # -- the whole retrieval -------------------------------------------------------------------------
    async def retrieve(self, req: RetrievalRequest, *, register: Register | None = None) -> RetrievalRecord:
        rdir = self.retrieval_dir(req.request_id)
        rdir.mkdir(parents=True, exist_ok=True)
        record = RetrievalRecord(
            request_id=req.request_id,
            request=req.model_dump(),
            config=self.cfg.model_dump(),
            worker=self.worker,
            matcher=self.matcher.name,
        )
        try:
            await self._run(req, record, rdir, register)
        except BaseException as exc:
            record.outcome = "failed"
            record.reason = f"internal error: {type(exc).__name__}: {exc}"
            record.notes.append(traceback.format_exc()[-4000:])
            raise
        finally:
            record.finished_at = time.time()
            record.screenshots = sorted(
                {p.screenshot for p in record.pages if p.screenshot}
                | {c.page.screenshot for c in record.candidates if c.page and c.page.screenshot}
            )
            record.write(rdir)
        return record

    async def _run(
        self, req: RetrievalRequest, record: RetrievalRecord, rdir: Path, register: Register | None
    ) -> None:
        t0 = time.monotonic()
        probes = self._probes(req, record)
        if not probes:
            record.outcome = "failed"
            record.reason = (
                "no probe examples: the request carries no usable examples and "
                f"task {req.task!r} is not a builtin task — a model cannot be validated, so none is "
                "registered"
            )
            return
        try:
            await asyncio.to_thread(self.fetcher.client.probe)
        except HubUnreachable as exc:
            record.outcome, record.reason = "hub_unreachable", str(exc)
            return
        await self._search(req, record, rdir)
        record.timings["search_s"] = round(time.monotonic() - t0, 3)
        hub_pages = [p for p in record.pages if p.purpose == "search"]
        if hub_pages and all(p.http_status is None and not p.ok for p in hub_pages):
            record.outcome = "hub_unreachable"
            record.reason = f"no search page of {self.cfg.hub_url} answered: {hub_pages[0].reason}"
            return
        t1 = time.monotonic()
        await self._read(record, rdir)
        record.timings["read_s"] = round(time.monotonic() - t1, 3)
        t2 = time.monotonic()
        read = [c for c in record.candidates if c.page is not None and c.page.ok]
        for c in read:
            apply_filters(c, req, self.cfg)
        eligible = [c for c in read if c.eligible]
        margins = await task_fit_margins(self.matcher, req, eligible)
        evidence = [fit_evidence(req, c.model_id, c.facts, c.kind) for c in eligible]
        fitting = gate_fit(eligible, margins, self.cfg.ranking.min_fit, evidence)
        fits = await self.matcher.fit(req, fitting)
        ranked = rank(fitting, fits, self.cfg.ranking, request_kinds(req), request_domains(req))
        record.timings["rank_s"] = round(time.monotonic() - t2, 3)
        t3 = time.monotonic()
        await self._deploy(req, record, rdir, ranked, probes, register)
        record.timings["deploy_validate_s"] = round(time.monotonic() - t3, 3)
        self._conclude(record)

    @staticmethod
    def _conclude(record: RetrievalRecord) -> None:
        """The outcome of a retrieval that registered nothing: ``download_failed`` when a candidate's
        download failed (its fit is not in question), else ``no_candidate`` with the count per decision."""
        if record.outcome != "running":
            return
        broken = [c for c in record.candidates if c.decision == "download_failed"]
        if broken:
            record.outcome = "download_failed"
            record.reason = "no candidate passed; the download failed for " + "; ".join(
                f"{c.model_id} (rank {c.rank}): {c.reason.removeprefix('download failed: ')[:200]}"
                for c in broken
            )
            return
        record.outcome = "no_candidate"
        counts: dict[str, int] = {}
        for c in record.candidates:
            counts[c.decision] = counts.get(c.decision, 0) + 1
        summary = ", ".join(f"{n} {d}" for d, n in sorted(counts.items()))
        if not summary:
            pages = "; ".join(f"{p.purpose} {p.status} {p.reason}".strip() for p in record.pages[:4])
            summary = f"the search found no candidate: {pages or 'no page read'}"
        record.reason = f"no candidate passed ({summary})"

    async def _deploy(
        self,
        req: RetrievalRequest,
        record: RetrievalRecord,
        rdir: Path,
        ranked: list[Candidate],
        probes: list[ProbePair],
        register: Register | None,
    ) -> None:
        """Fetch and validate ``ranked`` in order until one passes; every candidate not tried says why."""
        min_pass = req.min_pass_share or self.cfg.validation.min_pass_share
        max_lat = req.max_latency_ms or self.cfg.validation.max_latency_ms
        budget = self.cfg.validation.max_candidates
        validated = 0  # refusals before any weight is downloaded are cheap and do not count
        for c in ranked:
            if record.outcome == "hub_unreachable":
                c.reason = "not tried: the hub became unreachable"
                continue
            if record.outcome != "running":
                c.reason = f"not tried: a higher-ranked candidate passed first ({record.reason[:120]})"
                continue
            if validated >= budget:
                c.reason = (
                    f"not tried: {budget} higher-ranked candidates were downloaded and validated already "
                    "(validation.max_candidates)"
                )
                continue
            fetched = await self.fetcher.fetch(c.model_id)
            c.deploy = fetched.to_dict()
            if fetched.status == "unreachable":
                c.decision, c.reason = "failed", f"deploy unreachable: {fetched.reason}"
                record.outcome, record.reason = "hub_unreachable", fetched.reason
                continue
            if fetched.status == "error":
                # Nobody refused it: the transfer failed. Its fit is not in question; the next is tried.
                c.decision, c.reason = "download_failed", f"download failed: {fetched.reason}"
                continue
            if not fetched.ok:
                c.decision, c.reason = "refused", f"deploy {fetched.status}: {fetched.reason}"
                continue
            validated += 1
            label = vet_config(fetched.config) if fetched.config else 0
            safety_head = label != 0 or len(fetched.config.get("id2label") or {}) == 2
            report = await asyncio.to_thread(
                validate_checkpoint,
                fetched.path,
                probes,
                min_pass_share=min_pass,
                max_latency_ms=max_lat,
                max_abs_logit=self.cfg.validation.max_abs_logit,
                min_score_std=self.cfg.validation.min_score_std,
                max_load_s=self.cfg.validation.max_load_s,
                batch_size=self.cfg.validation.batch_size,
                label_index=label if safety_head else None,
            )
            c.validation = report.to_dict()
            if not report.passed:
                c.decision, c.reason = "failed", f"validation failed: {report.reason}"
                continue
            spec = self._spec(req, c, fetched, report, rdir, label if safety_head else None)
            if register is None:
                c.decision, c.reason = "validated", "passed validation (no registry given)"
                record.outcome = "validated"
                record.tool = {
                    "name": spec.name,
                    "version": 0,
                    "content_hash": spec.content_hash,
                    "spec": spec.to_dict(),
                }
            else:
                stored = await register(spec)
                c.decision, c.reason = (
                    "registered",
                    f"passed validation; registered as {stored.name} v{stored.version}",
                )
                record.outcome = "registered"
                record.tool = {
                    "name": stored.name,
                    "version": stored.version,
                    "content_hash": stored.content_hash,
                    "spec": stored.to_dict(),
                }
            record.reason = f"{c.model_id}: {c.reason}"

    # -- steps ---------------------------------------------------------------------------------------
    def _probes(self, req: RetrievalRequest, record: RetrievalRecord) -> list[ProbePair]:
        examples = examples_from_items(req.examples)
        source = "request examples"
        if not examples and req.task:
            examples = examples_from_task(req.task, split="test")
            source = f"builtin task {req.task!r} (test split)"
        probes = build_probes(examples, self.cfg.validation.n_probes, seed=self.cfg.validation.seed)
        record.notes.append(f"{len(probes)} probe pairs from {len(examples)} examples of {source}")
        return probes

    def _candidate(self, record: RetrievalRecord, model_id: str, found_by: str) -> Candidate:
        c = record.candidate(model_id)
        if c is None:
            c = Candidate(model_id=model_id, url=self.hub.model_url(model_id))
            record.candidates.append(c)
        if found_by not in c.found_by:
            c.found_by.append(found_by)
        return c

    async def _search(self, req: RetrievalRequest, record: RetrievalRecord, rdir: Path) -> None:
        s = self.cfg.search
        record.queries = search_queries(req, s.max_queries)
        for i, q in enumerate(record.queries):
            for tag in dict.fromkeys(s.pipeline_tags or [""]):
                url = self.hub.search_url(q, pipeline_tag=tag, sort=s.sort)
                name = f"search-{i}-{slug(q)}" + (f"-{slug(tag)}" if tag else "")
                ev, data = await self._visit(url, "search", rdir, name, self.hub.search_js)
                record.pages.append(ev)
                if data is None:
                    continue
                items, problems = self.hub.parse_search(data)
                if problems:
                    ev.reason = "; ".join(problems)[:500]
                for item in items[: s.per_query]:
                    c = self._candidate(record, item.model_id, url)
                    if not c.listing:
                        c.listing = item.to_dict()
        for j, lb in enumerate(self.leaderboards):
            ev, data = await self._visit(lb.url, "leaderboard", rdir, f"leaderboard-{j}", lb.tables_js)
            record.pages.append(ev)
            if data is None:
                continue
            table: LeaderboardTable = lb.parse(data)
            if table.problems:
                ev.reason = "; ".join(table.problems)[:500]
            for mid in table.rows:
                c = self._candidate(record, mid, lb.url)
                c.leaderboard = {
                    "url": lb.url,
                    "column": table.score_column,
                    "score": table.score(mid),
                    "scores": table.scores_of(mid),
                }

    async def _read(self, record: RetrievalRecord, rdir: Path) -> None:
        searches = [p.url for p in record.pages if p.purpose == "search"]

        def promise(c: Candidate) -> tuple[float, float, float, str]:
            # On a leaderboard first; then found by the earliest (most specific) search; then downloads.
            first = min((searches.index(u) for u in c.found_by if u in searches), default=len(searches))
            downloads = float(c.listing.get("downloads") or 0)
            return (0.0 if c.leaderboard else 1.0, float(first), -downloads, c.model_id)

        order = sorted(record.candidates, key=promise)
        to_read = order[: self.cfg.search.max_model_pages]
        for c in order[self.cfg.search.max_model_pages :]:
            c.decision = "unread"
            c.reason = f"not read: beyond the {self.cfg.search.max_model_pages} most promising candidates"
        await asyncio.gather(*(self._read_one(c, rdir) for c in to_read))

    async def _read_one(self, c: Candidate, rdir: Path) -> None:
        ev, data = await self._visit(c.url, "model", rdir, f"model-{slug(c.model_id)}", self.hub.model_js)
        c.page = ev
        if data is None:
            c.decision = "unread"
            c.reason = f"model page {ev.status}: {ev.reason}" if ev.reason else f"model page {ev.status}"
            return
        facts = self.hub.parse_model(data, c.model_id, c.url)
        if any("not a hub model page" in p for p in facts.problems):
            ev.status = "error"
        if facts.missing:
            await self._fill_from_api(c, facts, rdir)
        c.facts = facts.to_dict()
        c.sources = dict(facts.sources)
        c.missing = list(facts.missing)
        if facts.problems:
            ev.reason = "; ".join(facts.problems)[:500]
        if not ev.ok:
            c.decision = "unread"
            c.reason = f"model page unusable: {ev.reason}"

    async def _fill_from_api(self, c: Candidate, facts: Any, rdir: Path) -> None:
        """Look up fields the page did not state in ``/api/models/<id>`` (read through the browser)."""
        url = self.hub.api_model_url(c.model_id)
        ev, text = await self._visit(url, "api", rdir, "", API_JS, screenshot=False)
        if text is None:
            facts.problems.append(f"API lookup for missing fields failed: {ev.status} {ev.reason}".strip())
            return
        try:
            info = json.loads(text)
        except json.JSONDecodeError:
            facts.problems.append("API lookup for missing fields returned no JSON")
            return
        if not isinstance(info, dict):
            return
        card = info.get("cardData") or {}
        st = info.get("safetensors") or {}
        cfg = info.get("config") or {}
        facts.set("pipeline_tag", info.get("pipeline_tag"), "api")
        facts.set("library_name", info.get("library_name"), "api")
        lic = card.get("license")
        facts.set("license", lic.lower() if isinstance(lic, str) else None, "api")
        facts.set("parameters", st.get("total"), "api")
        if isinstance(st.get("parameters"), dict):
            facts.set("dtype_params", dict(st["parameters"]), "api")
        facts.set("downloads", info.get("downloads"), "api")
        facts.set("likes", info.get("likes"), "api")
        facts.set("last_modified", info.get("lastModified"), "api")
        archs = cfg.get("architectures")
        facts.set("architectures", list(archs) if isinstance(archs, list) else None, "api")
        facts.set("tags", [t for t in info.get("tags") or [] if isinstance(t, str)], "api")
        langs = card.get("language")
        facts.set("languages", [langs] if isinstance(langs, str) else [str(x) for x in langs or []], "api")
        data = card.get("datasets")
        facts.set("datasets", [data] if isinstance(data, str) else [str(x) for x in data or []], "api")
        facts.finish()

    async def _visit(
        self, url: str, purpose: str, rdir: Path, name: str, js: str, *, screenshot: bool = True
    ) -> tuple[PageEvidence, Any]:
        rel = f"screenshots/{name}.png" if screenshot and name else ""
        return await self.pool.visit(
            url,
            purpose=purpose,
            extract_js=js,
            screenshot=rdir / rel if rel else None,
            screenshot_rel=rel,
        )

    def _spec(
        self,
        req: RetrievalRequest,
        c: Candidate,
        fetched: FetchResult,
        report: ValidationReport,
        rdir: Path,
        label_index: int | None = None,
    ) -> ToolSpec:

        base = RewardModelTool.default_spec
        assert base is not None
        card = " ".join((c.facts.get("card_excerpt") or "").split())[:300]
        description = (
            f"Learned reward model {c.model_id} (retrieved from {self.cfg.hub_url}) for: "
            f"{req.description[:300]}"
            f" Model card: {card} Validated on {report.n_probes} probe pairs of this task: prefers the good"
            f" response on {report.pass_share:.0%}. Reference-free; "
            + (
                "a sigmoid of the calibrated logit"
                if label_index is None
                else f"the probability of its label {label_index} (the good class)"
            )
            + ", in [0,1]."
        )
        types = [t for t in (req.task_type, req.domain, "learned_judge") if t]
        head: dict[str, Any]
        if label_index is None:
            head = {
                "transform": "sigmoid",
                "shift": report.calibration["shift"],
                "temperature": report.calibration["temperature"],
            }
        else:
            head = {"transform": "softmax", "label_index": label_index}
        return ToolSpec(
            name=tool_name(self.cfg.tool_prefix, c.model_id),
            kind=ToolKind.MODEL,
            description=description,
            task_types=list(dict.fromkeys(types)),
            answer_formats=["free_text", "sentence", "paragraph", "any"],
            impl="reward_model",
            params={**base.params, "path": fetched.path, **head},
            provenance={
                "origin": Origin.RETRIEVED.value,
                "author": c.model_id.split("/", 1)[0],
                "source": c.url,
                "repo": c.model_id,
                "kind": c.kind,
                "revision": fetched.revision,
                "hub": self.cfg.hub_url,
                "license": c.facts.get("license"),
                "fetch_backend": fetched.backend,
                "files": fetched.files,
                "request_id": req.request_id,
                "record": str(rdir / "record.json"),
                "retrieved_by": self.worker,
                "evidence": {
                    "fields": {k: c.facts.get(k) for k in c.sources},
                    "sources": c.sources,
                    "scores": c.scores,
                    "leaderboard": c.leaderboard,
                },
            },
            validation={
                k: v
                for k, v in report.to_dict().items()
                if k
                in (
                    "passed",
                    "n_probes",
                    "pass_share",
                    "min_pass_share",
                    "by_kind",
                    "logits",
                    "latency_ms_per_item",
                    "max_latency_ms",
                    "load_s",
                    "calibration",
                    "checks",
                )
            },
        ).sealed()
