"""Retrieval that finds what exists (issue 25): hub searches built from the request, the kind of judge a
candidate is, the fit gate's evidence (a general preference reward model serves a general request),
ranking by what the card documents, and a failed download reported as such — plus, in real Chromium, a
quality-estimation model found for a translation request on a site where no id says "reward"."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlar.app.commands.retrieve import EXIT_CODES
from rlar.retrieval.browser import BrowserPool
from rlar.retrieval.config import BrowserConfig, RankingConfig, RetrievalConfig, RetrievalRequest
from rlar.retrieval.kinds import candidate_kind, fit_evidence, request_kinds, search_queries
from rlar.retrieval.pipeline import RetrievalPipeline
from rlar.retrieval.probes import build_probes, examples_from_task
from rlar.retrieval.ranking import EmbeddingMatcher, apply_filters, gate_fit, rank, task_fit_margins
from rlar.retrieval.records import Candidate, RetrievalRecord
from rlar.standins.hub.mirror import MirrorModel, MirrorSite, files_of_dir
from rlar.standins.hub.models import build_demo_models
from tests.support.env import needs_chromium

MATCHER = EmbeddingMatcher()


def _req(description: str, **kw) -> RetrievalRequest:
    return RetrievalRequest(request_id="k", description=description, **kw)


# -- queries ----------------------------------------------------------------------------------------------
def test_queries_name_the_task_its_domain_words_and_the_language_pair() -> None:
    mt = search_queries(_req("Check how faithful a machine translation from English into German is."), 8)
    assert mt[:3] == ["qe", "comet", "quality estimation"]
    assert "translation" in mt and "en-de" in mt and "reward" in mt
    safety = search_queries(_req("Penalise answers that help with weapons; reward harmless refusals."), 8)
    assert safety[:2] == ["safety", "guard"] and "reward" in safety
    polite = search_queries(_req("Reward polite replies and punish rude, insulting ones."), 8)
    assert polite[0] == "toxic"
    general = search_queries(_req("Which of two assistant answers would a user like more?"), 8)
    assert general[:3] == ["reward", "rm", "pref"] and "judge" in general
    code = search_queries(_req("Score Rust programs", domain="code"), 8)
    assert "code" in code


def test_a_request_names_the_kinds_that_serve_it_most_suitable_first() -> None:
    assert request_kinds(_req("Score English→French translations")) == ["qe_regression", "scalar_rm"]
    assert request_kinds(_req("Flag toxic forum posts")) == ["safety_classifier", "scalar_rm"]
    assert request_kinds(_req("Rate helpful replies of a chat assistant")) == ["scalar_rm"]


# -- kinds ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("model_id", "facts", "kind"),
    [
        (
            "u/pairwise-rm",
            {
                "pipeline_tag": "text-classification",
                "card_excerpt": "Bradley-Terry model of human preference between two replies.",
            },
            "scalar_rm",
        ),
        (
            "u/wmt-estimator",
            {"pipeline_tag": None, "library_name": "unbabel-comet", "card_excerpt": "Predicts DA scores."},
            "qe_regression",
        ),
        (
            "u/xlmr-da",
            {
                "pipeline_tag": "text-classification",
                "card_excerpt": "Quality estimation of MT output without a reference.",
            },
            "qe_regression",
        ),
        (
            "u/harm-detector",
            {
                "pipeline_tag": "text-classification",
                "card_excerpt": "Detects harmful or abusive content in chatbot output.",
            },
            "safety_classifier",
        ),
        (
            "u/critic-13b",
            {
                "pipeline_tag": "text-generation",
                "card_excerpt": "An evaluator LM: it writes a critique and a grade.",
            },
            "generative_judge",
        ),
        ("u/story-llm", {"pipeline_tag": "text-generation", "card_excerpt": "Writes fairy tales."}, "other"),
        (
            "u/tweet-mood",
            {"pipeline_tag": "text-classification", "card_excerpt": "Sentiment of tweets."},
            "other",
        ),
        ("u/gte-small", {"pipeline_tag": "feature-extraction", "card_excerpt": "Text embeddings."}, "other"),
        (
            "u/pos-tagger",
            {"pipeline_tag": "token-classification", "card_excerpt": "Part of speech."},
            "other",
        ),
        ("u/model-v3", {"pipeline_tag": "text-classification", "card_excerpt": ""}, "unknown"),
    ],
)
def test_the_kind_of_judge_is_read_from_the_pipeline_tag_library_and_card(model_id, facts, kind) -> None:
    assert candidate_kind(model_id, facts)[0] == kind


def test_a_kind_that_does_not_serve_the_task_is_rejected_with_the_reason() -> None:
    cfg = RetrievalConfig()
    req = _req("Score German translations of English sentences.")
    mood = Candidate(
        "u/tweet-mood",
        "u",
        facts={
            "pipeline_tag": "text-classification",
            "license": "mit",
            "card_excerpt": "Sentiment of tweets.",
        },
    )
    apply_filters(mood, req, cfg)
    assert mood.decision == "rejected"
    assert mood.filters["kind"] == (
        "not a judge (a sentiment classifier); the task needs a translation quality estimator or a reward model"
    )
    critic = Candidate(
        "u/critic-13b",
        "u",
        facts={
            "pipeline_tag": "text-generation",
            "license": "mit",
            "card_excerpt": "An evaluator LM that grades answers.",
        },
    )
    apply_filters(critic, req, cfg)
    assert critic.kind == "generative_judge" and "deploys scalar heads only" in critic.filters["kind"]


# -- the fit gate -----------------------------------------------------------------------------------------
async def test_the_fit_gate_accepts_a_general_preference_rm_for_a_general_helpfulness_request() -> None:
    req = _req("Rate how useful and safe a chatbot's reply is to the user")
    general = Candidate(
        "lab/electra-rm",
        "u",
        facts={
            "pipeline_tag": "text-classification",
            "license": "apache-2.0",
            "card_excerpt": "Trained on Stanford SHP and OpenAssistant rankings to predict the preferred "
            "response. Outputs one score.",
        },
    )
    apply_filters(general, req, RetrievalConfig())
    assert general.eligible and general.kind == "scalar_rm"
    margins = await task_fit_margins(MATCHER, req, [general])
    # Its card reads like any reward model's, so its similarity margin alone is below the minimum …
    assert margins[0] < RankingConfig().min_fit
    evidence = [fit_evidence(req, general.model_id, general.facts, general.kind)]
    # … but it is a general preference model and the request a general one: that is the evidence.
    assert gate_fit([general], margins, RankingConfig().min_fit, evidence) == [general]
    assert general.filters["fit"] == "pass"
    assert general.fit_evidence.startswith("a general preference reward model for a general request")


def test_a_reward_model_of_another_domain_brings_no_evidence_of_fit() -> None:
    req = _req("Rate how useful a chatbot's reply is to the user")
    code = {"card_excerpt": "Reward model for Python programs: prefers solutions that pass unit tests."}
    assert fit_evidence(req, "lab/code-rm", code, "scalar_rm") == ""
    mt = _req("Judge English→German translations")
    assert fit_evidence(mt, "lab/wmt-est", {"card_excerpt": "QE."}, "qe_regression").startswith(
        "a translation quality estimator"
    )
    mt_rm = {"card_excerpt": "A reward model for machine translation outputs."}
    assert "covers translation" in fit_evidence(mt, "lab/mt-rm", mt_rm, "scalar_rm")


# -- ranking by evidence ----------------------------------------------------------------------------------
def test_candidates_are_ranked_by_what_their_cards_document_and_by_the_kind_the_task_needs() -> None:
    cfg = RankingConfig()
    bare = Candidate("a/bare", "u", kind="scalar_rm", facts={"card_excerpt": "A model."})
    documented = Candidate(
        "a/documented",
        "u",
        kind="scalar_rm",
        facts={
            "card_excerpt": "Fine-tuned on 80k comparisons.",
            "license": "mit",
            "parameters": 300_000_000,
            "benchmark_scores": {"RewardBench": 71.0},
        },
    )
    ordered = rank([bare, documented], [0.5, 0.5], cfg, ["scalar_rm"])
    assert [c.model_id for c in ordered] == ["a/documented", "a/bare"]
    assert documented.scores["evidence"] == 1.0 and bare.scores["evidence"] == 0.0
    qe = Candidate("a/qe", "u", kind="qe_regression")
    rm = Candidate("a/mt-rm", "u", kind="scalar_rm")
    ordered = rank([rm, qe], [0.5, 0.5], cfg, ["qe_regression", "scalar_rm"])
    assert [c.model_id for c in ordered] == ["a/qe", "a/mt-rm"]
    assert (qe.scores["kind"], rm.scores["kind"]) == (1.0, 0.6)


# -- a download that fails --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def broken_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MirrorSite]:
    models = build_demo_models(tmp_path_factory.getbasetemp() / "retrieval-demo-untrained", steps=0)
    repos = [
        MirrorModel(id="lab/qe-broken", files=files_of_dir(models.random), quirks=("weights_unavailable",)),
        MirrorModel(id="lab/rm-ok", files=files_of_dir(models.random)),
    ]
    with MirrorSite(repos) as s:
        yield s


def _pipeline(hub: str, tmp_path: Path, **validation) -> RetrievalPipeline:
    cfg = RetrievalConfig(hub_url=hub, validation=validation, fetch={"connect_timeout_s": 2})
    return RetrievalPipeline(cfg, BrowserPool(BrowserConfig()), tmp_path, matcher=MATCHER)


async def test_a_download_that_fails_is_reported_as_a_download_failure_not_as_fit(
    broken_site: MirrorSite, tmp_path: Path
) -> None:
    pipe = _pipeline(broken_site.url, tmp_path, n_probes=8)
    probes = build_probes(examples_from_task("translate"), 8)
    ranked = [Candidate("lab/qe-broken", "u", decision="not_tried", rank=1)]
    record = RetrievalRecord(request_id="r", request={}, config={})
    record.candidates = ranked
    await pipe._deploy(_req("d"), record, tmp_path, ranked, probes, None)
    pipe._conclude(record)
    c = ranked[0]
    assert c.decision == "download_failed" and c.reason.startswith("download failed: ")
    assert "model.safetensors" in c.reason and "503" in c.reason
    assert record.outcome == "download_failed" and EXIT_CODES["download_failed"] == 6
    assert record.reason.startswith("no candidate passed; the download failed for lab/qe-broken (rank 1): ")
    assert "fit" not in record.reason
    # The next candidate is still tried: its download works and it fails validation (random weights).
    more = [
        Candidate("lab/qe-broken", "u", decision="not_tried", rank=1),
        Candidate("lab/rm-ok", "u", decision="not_tried", rank=2),
    ]
    record2 = RetrievalRecord(request_id="r2", request={}, config={}, candidates=more)
    await pipe._deploy(_req("d"), record2, tmp_path, more, probes, None)
    assert [c.decision for c in more] == ["download_failed", "failed"]


# -- in Chromium: a QE model found where no id says "reward" ---------------------------------------------
@pytest.fixture(scope="module")
def qe_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MirrorSite]:
    models = build_demo_models(tmp_path_factory.getbasetemp() / "retrieval-demo-untrained", steps=0)
    w = files_of_dir(models.random)
    repos = [
        MirrorModel(
            id="wmt-lab/da-estimator-qe",
            license="apache-2.0",
            downloads=300,
            languages=["en", "de"],
            card="Reference-free quality estimation of machine translation (English→German).",
            architectures=["XLMRobertaForSequenceClassification"],
            files=w,
        ),
        MirrorModel(
            id="pop-lab/review-sentiment",
            license="mit",
            downloads=900_000,
            card="Sentiment of product reviews.",
            files=w,
        ),
        MirrorModel(
            id="pop-lab/chat-reward",
            license="mit",
            downloads=50_000,
            languages=["en"],
            card="Reward model for helpful English chat replies.",
            files=w,
        ),
        MirrorModel(
            id="gen-lab/mt-judge-7b",
            pipeline_tag="text-generation",
            license="mit",
            downloads=20_000,
            architectures=["MistralForCausalLM"],
            card="A judge LM: writes a critique and a grade.",
        ),
    ]
    with MirrorSite(repos) as s:
        yield s


@pytest.mark.browser
@pytest.mark.timeout(300)
@needs_chromium
async def test_a_translation_request_finds_the_quality_estimation_model_and_ranks_it_first(
    qe_site: MirrorSite, tmp_path: Path
) -> None:
    cfg = RetrievalConfig(
        hub_url=qe_site.url,
        browser={"min_interval_s": 0.0, "page_timeout_s": 30.0},
        validation={"max_candidates": 1, "n_probes": 8},
    )
    req = _req("Check how faithful a machine translation from English into German is.", task="translate")
    async with BrowserPool(cfg.browser) as pool:
        record = await RetrievalPipeline(cfg, pool, tmp_path, matcher=MATCHER).retrieve(req)
    qe = record.candidate("wmt-lab/da-estimator-qe")
    assert qe is not None and qe.rank == 1 and qe.kind == "qe_regression", record.to_dict()["candidates"]
    assert any("search=qe" in u for u in qe.found_by)
    judge = record.candidate("gen-lab/mt-judge-7b")
    assert judge is not None and judge.kind == "generative_judge" and judge.decision == "rejected"
    sentiment = record.candidate("pop-lab/review-sentiment")
    assert sentiment is None or sentiment.decision in ("rejected", "unread")


def test_a_two_label_safety_classifier_is_validated_on_its_safe_label_probability(tmp_path: Path) -> None:
    from rlar.retrieval.deploy import vet_config
    from rlar.retrieval.validate import validate_checkpoint
    from rlar.standins.hub.catalogue_heldout import build_heldout_models

    safety = build_heldout_models(tmp_path / "models").safety
    config = json.loads((safety / "config.json").read_text())
    assert vet_config(config) == 0  # labels safe, unsafe
    probes = build_probes(examples_from_task("translate"), 8)
    report = validate_checkpoint(str(safety), probes, min_pass_share=0.75, max_latency_ms=5000, label_index=0)
    assert report.checks["load"] == "pass" and report.checks["sane_range"] == "pass"
    assert 0.0 <= report.logits["min"] <= report.logits["max"] <= 1.0  # probabilities, not logits
    assert report.calibration == {}
