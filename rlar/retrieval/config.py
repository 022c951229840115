"""Typed settings of the web retrieval agent and the request it serves.

``RetrievalConfig`` is the retriever actor's ``[retriever.retrieval]`` section (and what ``rlar retrieve``
builds from its flags). ``RetrievalRequest`` is one retrieval: what the reward model is for, and the
budget and policy it must meet; the actor builds it from a bus ``ToolRequest`` with
:meth:`RetrievalRequest.from_tool_request`, reading these keys of ``ToolRequest.constraints``:
``language``, ``max_params``, ``max_vram_gb``, ``licenses`` (or ``licences``), ``allow_unknown_license``,
``min_pass_share``, ``max_latency_ms``. Unknown constraint keys are kept in ``extra`` and recorded.
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

# Licences that allow using a model's outputs to train another model, commercially included. A request's
# policy can narrow or widen this list; anything else (non-commercial, "other", unknown) is refused.
DEFAULT_LICENCES: tuple[str, ...] = (
    "apache-2.0",
    "mit",
    "bsd-2-clause",
    "bsd-3-clause",
    "cc-by-4.0",
    "cc-by-sa-4.0",
    "openrail",
    "llama3",
    "llama3.1",
    "llama3.2",
    "gemma",
)


_PARAM_UNITS = {
    "k": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "million": 1e6,
    "b": 1e9,
    "billion": 1e9,
    "t": 1e12,
    "trillion": 1e12,
}
MIN_BARE_PARAMS = 1_000_000


def parse_param_count(value: Any) -> float | None:
    """A parameter budget: "1B", "1.5b", "500M", "150K", "7 billion", or a full count (7000000000, "7e9").

    A bare number below :data:`MIN_BARE_PARAMS` is refused rather than guessed at: ``1`` could mean one
    billion or one million. Write it with a unit (``1B``, ``500M``, ``150K``)."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError("max_params must be a parameter count such as 1B, 500M or 7000000000")
    unit = 1.0
    if isinstance(value, str):
        m = re.fullmatch(
            r"\s*([0-9][0-9_,]*(?:\.[0-9]+)?(?:e[0-9]+)?)\s*([a-z]*)\s*(?:params|parameters)?\s*",
            value.lower(),
        )
        if m is None or (m.group(2) and m.group(2) not in _PARAM_UNITS):
            raise ValueError(
                f"max_params {value!r}: write a count with a unit (1B, 500M, 150K) or a full count"
            )
        number = float(m.group(1).replace(",", "").replace("_", ""))
        unit = _PARAM_UNITS.get(m.group(2), 1.0)
    elif isinstance(value, int | float):
        number = float(value)
    else:
        raise ValueError(f"max_params {value!r}: expected a count such as 1B or 500M")
    if not math.isfinite(number) or number <= 0:
        raise ValueError(f"max_params {value!r} must be positive")
    if unit == 1.0 and number < MIN_BARE_PARAMS:
        raise ValueError(
            f"max_params {value!r} is a bare number below {MIN_BARE_PARAMS:,}: ambiguous (1B? 1M?); "
            f"write it with a unit (1B, 500M, 150K) or as the full count (1000000000)"
        )
    return number * unit


class BrowserConfig(BaseModel):
    """How the headless browser is launched and paced."""

    model_config = ConfigDict(extra="forbid")

    executable_path: str = "/usr/bin/chromium"
    """Chromium binary (Debian's); Playwright's bundled browsers are not used."""
    headless: bool = True
    args: list[str] = Field(
        default_factory=lambda: [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-quic",
        ]
    )
    """Command-line flags (measured to work on this machine: /work/shared/MEASURED.md)."""
    contexts: int = Field(2, ge=1, le=16)
    """Browser contexts in the pool: how many pages may load at once."""
    page_timeout_s: float = Field(20.0, gt=0)
    """Navigation + extraction budget of one page; a page that never finishes loading fails after it."""
    min_interval_s: float = Field(1.0, ge=0)
    """Pacing: at least this many seconds between two navigations to the same host."""
    user_agent: str = "rlar-retriever/0.1 (reward-model retrieval; one page at a time per host)"
    viewport: tuple[int, int] = (1280, 900)
    screenshots: bool = True
    """Save a PNG of every page read (visible viewport) as evidence."""
    screenshot_timeout_s: float = Field(30.0, gt=0)
    """A screenshot's own budget, after the page loaded (not what navigation left of ``page_timeout_s``: on a
    loaded machine a page that took most of its budget still gets its evidence). A screenshot that fails is
    recorded in the page's evidence (``screenshot_error``); the visit's status stands."""
    restrict_hosts: bool = True
    """Abort any request whose host is not an allowed host (the configured sites and ``extra_hosts``)."""
    extra_hosts: list[str] = Field(default_factory=list)
    """More hosts (and their subdomains) pages may load resources from, e.g. a CDN."""
    block_resource_types: list[str] = Field(default_factory=lambda: ["media", "font"])
    """Resource types never loaded (they carry no evidence and cost bandwidth)."""


class SearchConfig(BaseModel):
    """Which result pages are read."""

    model_config = ConfigDict(extra="forbid")

    max_queries: int = Field(8, ge=1, le=16)
    """Searches per retrieval, built from the request (:func:`rlar.retrieval.kinds.search_queries`: the
    terms of the judge kinds it needs, its domain words, its language pair, then "judge")."""
    per_query: int = Field(10, ge=1, le=30)
    """Results taken from each search page."""
    pipeline_tags: list[str] = Field(default_factory=lambda: [""])
    """Each query is searched once per entry (hub ``pipeline_tag`` filter); ``""`` is no filter: every
    pipeline tag and none (QE models, safety classifiers and judges are not all ``text-classification``)."""
    sort: Literal["downloads", "likes", "trending", "modified", "created"] = "downloads"
    max_model_pages: int = Field(24, ge=1, le=100)
    """Model pages read per retrieval (those found by the most specific searches first, then by downloads)."""


class RankingConfig(BaseModel):
    """Weights of the ranking score; every component is in [0, 1] and recorded per candidate."""

    model_config = ConfigDict(extra="forbid")

    fit: float = Field(0.35, ge=0)
    """Task fit: similarity between the request and the model's card, tags and name."""
    kind: float = Field(0.15, ge=0)
    """1 for the kind of judge the request needs most (a QE model for translation quality, a safety
    classifier for safety), 0.6 for another kind that serves it, 0.3 for an unknown kind."""
    evidence: float = Field(0.15, ge=0)
    """What the card documents: benchmark results, training data, its size, its licence (a quarter each)."""
    leaderboard: float = Field(0.15, ge=0)
    """Leaderboard score (or half of the best benchmark score stated on the card)."""
    downloads: float = Field(0.1, ge=0)
    """log10(downloads + 1) / 7."""
    likes: float = Field(0.03, ge=0)
    """log10(likes + 1) / 4."""
    recency: float = Field(0.07, ge=0)
    """1 for updated today, decaying with a half-life of ``recency_half_life_days``."""
    recency_half_life_days: float = Field(365.0, gt=0)
    min_fit: float = Field(0.05, ge=-1, le=1)
    """Minimum task fit: how much more similar to the request a candidate's card must be than a card saying
    only "a reward model" (cosines of all-MiniLM-L6-v2 embeddings, whichever matcher ranks). Below it the
    candidate is rejected before ranking, with its score — unless its card is evidence of fit by itself (its
    kind is the one the request needs and its domain the request's, or it is a general preference reward
    model and the request a general one: :func:`rlar.retrieval.kinds.fit_evidence`). Measured on 15
    cards × 5 requests: relevant cards +0.07…+0.48, unrelated ones −0.13…+0.06."""
    matcher: Literal["auto", "agent", "embedding"] = "auto"
    """Task-fit backend: the routing agent's matcher (``rlar.routing``) when importable, else embeddings."""


class ValidationConfig(BaseModel):
    """The gate a downloaded model must pass before it is registered."""

    model_config = ConfigDict(extra="forbid")

    min_pass_share: float = Field(0.75, gt=0, le=1)
    """Share of probe pairs on which the preferred response must score strictly higher."""
    n_probes: int = Field(48, ge=4, le=2000)
    """Probe pairs built from the request's examples and corruptions of their references."""
    max_abs_logit: float = Field(1e4, gt=0)
    """Sane range: every raw model output must be finite and within ±this."""
    min_score_std: float = Field(1e-4, ge=0)
    """A model whose outputs barely vary over the probes is constant, not a judge."""
    max_latency_ms: float = Field(500.0, gt=0)
    """Mean scoring latency per (query, response) on this machine, batched."""
    max_load_s: float = Field(300.0, gt=0)
    """Loading the model (tokenizer included) must take less than this."""
    max_candidates: int = Field(4, ge=1, le=20)
    """Candidates downloaded and validated per retrieval before giving up (candidates refused before their
    weights are downloaded — access, size cap, pickle files, head shape in config.json — do not count)."""
    batch_size: int = Field(8, ge=1)
    seed: int = 0


class FetchConfig(BaseModel):
    """How weights are fetched (see :mod:`rlar.retrieval.deploy`)."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["auto", "hf_hub", "http"] = "auto"
    """``http``: our own streamed GETs of the hub's resolve URLs, stopped at the byte cap; ``hf_hub``:
    huggingface_hub's ``hf_hub_download`` against the hub URL (it cannot stop mid-file, so every file's size
    must be known beforehand; refused while HF_HUB_OFFLINE is set); ``auto``: http."""
    local_dirs: list[str] = Field(default_factory=list)
    """Directories holding ``<org>/<name>`` checkpoints; a candidate found there is not downloaded."""
    max_download_mb: float = Field(4096.0, gt=0)
    """Byte cap per candidate (MB = 10^6 bytes): refused before any weight is fetched when the sizes the
    API and HEAD announce add up to more, and stopped mid-file when a server sends more than announced or
    announced nothing."""
    require_sha256: bool = True
    """Refuse weight files whose sha256 neither the API (``lfs.sha256``) nor the file server
    (``X-Linked-Etag``) states: their bytes could not be checked."""
    timeout_s: float = Field(60.0, gt=0)
    """Per request: no answer (or no bytes) for this long is an error naming the file."""
    connect_timeout_s: float = Field(10.0, gt=0)
    """Connecting to the hub; no connection at all makes the retrieval's outcome ``hub_unreachable``."""
    file_deadline_s: float = Field(3600.0, gt=0)
    """Wall clock for downloading one file."""
    revision: str = "main"


class RetrievalConfig(BaseModel):
    """Everything the retrieval pipeline needs besides the request."""

    model_config = ConfigDict(extra="forbid")

    hub_url: str = "https://huggingface.co"
    """Base URL of the model hub (or a mirror of it with the same page shapes and API)."""
    leaderboard_urls: list[str] = Field(default_factory=list)
    """Leaderboard pages (HTML tables of model ids and scores) read for quality signals."""
    leaderboard_score_column: str = ""
    """Column of the leaderboard used for ranking; empty: the first of Score/Average/Overall found."""
    browser: BrowserConfig = Field(default_factory=BrowserConfig)
    search: SearchConfig = Field(default_factory=SearchConfig)
    ranking: RankingConfig = Field(default_factory=RankingConfig)
    validation: ValidationConfig = Field(default_factory=ValidationConfig)
    fetch: FetchConfig = Field(default_factory=FetchConfig)
    licences: list[str] = Field(default_factory=lambda: list(DEFAULT_LICENCES))
    """Default licence policy (lower-case hub licence ids); a request may bring its own."""
    vram_overhead: float = Field(1.2, ge=1.0)
    """VRAM estimate = weight bytes × this (activations and the CUDA context)."""
    models_dir: str = ""
    """Where weights are stored; empty: ``<run_dir>/models``."""
    tool_prefix: str = "rm"
    """Registered tool names are ``<prefix>-<org>-<name>`` (lower case, safe characters)."""

    @field_validator("hub_url")
    @classmethod
    def _strip_slash(cls, v: str) -> str:
        if not v.startswith(("http://", "https://")):
            raise ValueError(f"hub_url must be an http(s) URL, got {v!r}")
        return v.rstrip("/")


class RetrievalRequest(BaseModel):
    """One retrieval: the task a learned judge is wanted for, with its budget and licence policy."""

    model_config = ConfigDict(extra="forbid")

    request_id: str
    description: str
    """What a good response is, in words (the task's description)."""
    task: str = ""
    """Task name; when it names a builtin task and no examples are given, its test split makes probes."""
    domain: str = ""
    task_type: str = ""
    language: str = ""
    max_params: float | None = Field(None, gt=0)
    """Parameter budget: a count, or a string with a unit ("1B", "500M"); see :func:`parse_param_count`."""
    max_vram_gb: float | None = Field(None, gt=0)
    """VRAM budget: weight bytes × overhead must fit."""
    licences: list[str] | None = None
    """Allowed licences; None: the config's list."""
    allow_unknown_licence: bool = False
    """Accept models whose page states no licence (off: an unstated licence is not a permission)."""
    min_pass_share: float | None = Field(None, gt=0, le=1)
    max_latency_ms: float | None = Field(None, gt=0)
    examples: list[dict[str, Any]] = Field(default_factory=list)
    """``{"query" | "prompt", "reference"}`` items: probes are built from them."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Constraint keys this version does not understand (recorded, not acted on)."""

    @field_validator("max_params", mode="before")
    @classmethod
    def _params(cls, v: Any) -> float | None:
        return parse_param_count(v)

    def search_text(self) -> str:
        """The request as one text, for task-fit matching."""
        parts = [self.description, self.domain, self.task_type, self.language]
        return " ".join(p for p in parts if p)

    @classmethod
    def from_tool_request(cls, req: Any) -> RetrievalRequest:
        """Build from a ``bus.messages.ToolRequest`` (duck-typed so this module does not import ``bus``)."""
        c = dict(req.constraints or {})
        known = {
            "language",
            "max_params",
            "max_vram_gb",
            "licenses",
            "licences",
            "allow_unknown_license",
            "allow_unknown_licence",
            "min_pass_share",
            "max_latency_ms",
        }
        licences = c.get("licenses", c.get("licences"))
        return cls(
            request_id=req.request_id,
            description=req.description,
            task=req.task,
            domain=req.domain,
            task_type=req.task_type,
            language=str(c.get("language", "")),
            max_params=c.get("max_params"),
            max_vram_gb=c.get("max_vram_gb"),
            licences=[str(x).lower() for x in licences] if licences is not None else None,
            allow_unknown_licence=bool(c.get("allow_unknown_license", c.get("allow_unknown_licence", False))),
            min_pass_share=c.get("min_pass_share"),
            max_latency_ms=c.get("max_latency_ms"),
            examples=list(req.examples or []),
            extra={k: v for k, v in c.items() if k not in known},
        )
