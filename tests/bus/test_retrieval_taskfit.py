"""The retrieval's request-side parsing and gates without a browser: the task-fit gate (language, domain,
minimum fit), parameter budgets with units, benchmark scores written in prose on cards, and what becomes
of every candidate that is not tried — including a hub that does not answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from bus.embedded import free_port
from bus.messages import ToolRequest
from rlar.retrieval.adapters.base import scores_in_prose
from rlar.retrieval.browser import BrowserPool
from rlar.retrieval.config import BrowserConfig, RetrievalConfig, RetrievalRequest, parse_param_count
from rlar.retrieval.hub_api import normalize_etag
from rlar.retrieval.pipeline import RetrievalPipeline
from rlar.retrieval.probes import build_probes, examples_from_task
from rlar.retrieval.ranking import EmbeddingMatcher, apply_filters, gate_fit, task_fit_margins
from rlar.retrieval.records import Candidate, RetrievalRecord
from rlar.retrieval.taskfit import (
    candidate_languages,
    check_domain,
    languages_in_text,
    parse_languages,
    request_domains,
    request_languages,
    task_fit_filters,
)
from rlar.standins.hub.mirror import MirrorModel, MirrorSite, files_of_dir
from rlar.standins.hub.models import build_demo_models

MATCHER = EmbeddingMatcher()


def _req(description: str, **kw) -> RetrievalRequest:
    return RetrievalRequest(request_id="r", description=description, **kw)


# -- languages ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "codes"),
    [
        ("German", ["de"]),
        ("de", ["de"]),
        ("deu", ["de"]),
        ("de-DE", ["de"]),
        ("Deutsch", ["de"]),
        ("Klingon", ["tlh"]),
        ("tlh", ["tlh"]),
        ("en-de", ["en", "de"]),
        ("English to German", ["en", "de"]),
        ("en→de", ["en", "de"]),
        (["fr", "Japanese"], ["fr", "ja"]),
        ("pt-BR", ["pt"]),
        ("multilingual", ["multilingual"]),
        ("Elvish", []),
        ("", []),
    ],
)
def test_language_fields_are_read_as_iso_codes(value, codes) -> None:
    assert parse_languages(value) == codes


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        ("judge German translation adequacy", ["de"]),
        ("Rate whether a Klingon poem keeps its meter.", ["tlh"]),
        ("Score answers written in Swahili.", ["sw"]),
        ("Translate English→Japanese product reviews", ["en", "ja"]),
        ("Check English-to-French translations", ["en", "fr"]),
        ("Answer questions about the French Revolution", []),  # a language named, not the text's language
        ("Summarise news articles", []),
    ],
)
def test_a_description_names_the_language_of_its_text(text, codes) -> None:
    assert languages_in_text(text) == codes


def test_an_english_chat_model_is_refused_for_a_klingon_poetry_task_with_the_reason() -> None:
    req = _req("Judge whether a Klingon poem keeps the iambic meter.", domain="poetry")
    chat = {
        "tags": ["en", "reward-model", "conversational"],
        "card_excerpt": "A reward model for helpful, harmless chat assistants.",
    }
    f = task_fit_filters(req, "lab/chat-rm", chat)
    assert f["language"] == "the card (metadata) states en; the task (description) needs tlh"
    assert f["domain"] == "pass"  # dialogue judges cover creative writing; the language refuses it
    poet = {"languages": ["Klingon"], "card_excerpt": "Scores Klingon verse for meter and rhyme."}
    assert task_fit_filters(req, "lab/tlh-verse-rm", poet) == {"language": "pass", "domain": "pass"}
    # Stated in the card text only; multilingual covers any language; unstated passes (probes decide).
    assert candidate_languages({"card_excerpt": "Trained on Spanish chat conversations."}) == (
        ["es"],
        "card text",
    )
    assert task_fit_filters(req, "lab/m", {"tags": ["multilingual"]})["language"] == "pass"
    assert task_fit_filters(req, "lab/x", {})["language"] == "pass"
    assert request_languages(_req("any", language="de, en")) == (["de", "en"], "request")


def test_a_card_describing_another_domain_is_refused_and_general_judges_cover_writing() -> None:
    translation = _req("Score German translations of English sentences.", domain="translation")
    assert request_domains(translation) == ["translation"]
    code_rm = {"card_excerpt": "A reward model for Python code generation: correctness of programs."}
    assert task_fit_filters(translation, "lab/code-rm", code_rm)["domain"] == (
        "the card describes code; the task is translation"
    )
    assert check_domain(["creative"], ["dialogue"]) == "pass"
    assert check_domain(["math"], ["dialogue"]).startswith("the card describes dialogue")
    assert check_domain(["code"], ["general"]) == "pass"
    assert check_domain([], ["code"]) == check_domain(["code"], []) == "pass"


def test_filters_and_the_minimum_fit_record_every_reason() -> None:
    cfg = RetrievalConfig()
    req = _req("Judge German translations of English sentences.", domain="translation", language="de")
    chat = Candidate(
        "lab/chat-rm",
        "u",
        facts={
            "pipeline_tag": "text-classification",
            "license": "mit",
            "tags": ["en"],
            "card_excerpt": "Helpful chat assistant.",
        },
    )
    apply_filters(chat, req, cfg)
    assert chat.decision == "rejected" and "language:" in chat.reason and "domain:" in chat.reason
    a, b = (Candidate(f"lab/{n}", "u") for n in ("close", "far"))
    kept = gate_fit([a, b], [0.3, -0.02], min_fit=0.05)
    assert kept == [a] and b.decision == "rejected" and b.scores["fit_margin"] == -0.02
    assert b.reason.startswith("fit: task fit -0.020 < the minimum +0.050 (ranking.min_fit")


@pytest.mark.parametrize(
    ("description", "fits", "unrelated"),
    [
        (
            "Judge German translations of English sentences.",
            "Reward model for English to German translation quality.",
            ["Sentiment classifier for movie reviews.", "Reward model for Python code generation."],
        ),
        (
            "Judge helpful answers of a chat assistant",
            "Reward model for helpful and harmless dialogue.",
            ["Image segmentation of cell microscopy.", "Scores poems for meter and rhyme."],
        ),
        (
            "Judge whether a Klingon poem keeps the iambic meter.",
            "Scores poems for meter and rhyme.",
            ["Spam detection for emails.", "Natural language inference model trained on MNLI."],
        ),
    ],
)
async def test_the_minimum_fit_separates_cards_about_the_task_from_unrelated_ones(
    description: str, fits: str, unrelated: list[str]
) -> None:
    cards = [fits, *unrelated]
    cands = [
        Candidate(f"lab/m{i}", "u", facts={"card_excerpt": t, "pipeline_tag": "text-classification"})
        for i, t in enumerate(cards)
    ]
    margins = await task_fit_margins(MATCHER, _req(description), cands)
    kept = gate_fit(cands, margins, RetrievalConfig().ranking.min_fit)
    assert kept == cands[:1], dict(zip(cards, margins, strict=True))


# -- parameter budgets ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "count"),
    [
        ("1B", 1e9),
        ("500M", 5e8),
        ("1.5b", 1.5e9),
        ("150K", 1.5e5),
        ("7 billion", 7e9),
        ("7e9", 7e9),
        (7_000_000_000, 7e9),
        ("2,000,000", 2e6),
        (None, None),
    ],
)
def test_parameter_budgets_take_units(value, count) -> None:
    assert parse_param_count(value) == count


@pytest.mark.parametrize("bare", [1, "1", 500, 0.5, "12"])
def test_a_bare_small_number_is_refused_as_ambiguous(bare) -> None:
    with pytest.raises(ValueError, match=r"ambiguous \(1B\? 1M\?\); write it with a unit"):
        parse_param_count(bare)
    with pytest.raises(ValueError):
        RetrievalRequest(request_id="r", description="d", max_params=bare)


def test_a_tool_request_may_state_its_budget_with_a_unit() -> None:
    msg = ToolRequest(
        request_id="a", signature="s", task="t", description="d", constraints={"max_params": "500M"}
    )
    assert RetrievalRequest.from_tool_request(msg).max_params == 5e8
    with pytest.raises(ValueError, match="banana"):
        parse_param_count("3 banana")


# -- card scores in prose -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "scores"),
    [
        ("It achieves 89.6% accuracy on held-out EN-DE pairs.", {"held-out EN-DE pairs": 89.6}),
        ("RewardBench score: 85.4", {"RewardBench": 85.4}),
        (
            "The model scores 92.1 on RewardBench and 71.3 on RM-Bench.",
            {"RewardBench": 92.1, "RM-Bench": 71.3},
        ),
        ("It reaches an accuracy of 0.91 on our test set.", {"test set": 0.91}),
        ("It obtains an overall score of 88.2 on RewardBench.", {"RewardBench": 88.2}),
        ("Accuracy on HelpSteer2: 74%", {"HelpSteer2": 74.0}),
        ("On RewardBench, the model reaches 87.1.", {"RewardBench": 87.1}),
        ("RewardBench (overall) = 91.3", {"RewardBench": 91.3}),
        # sizes, counts, dates and versions are not scores
        ("Trained for 300 steps on 20 languages in 2024.", {}),
        ("A 7B model trained on 1.5 million pairs.", {}),
        ("Version 2 on the hub.", {}),
        ("It was trained in 3 days on 8 GPUs.", {}),
    ],
)
def test_benchmark_scores_written_in_sentences_are_read(text, scores) -> None:
    assert scores_in_prose(text) == scores


def test_etags_are_normalised_as_huggingface_hub_does() -> None:
    assert (
        normalize_etag('W/"abc"') == "abc"
        and normalize_etag('"d3f"') == "d3f"
        and normalize_etag(None) is None
    )


# -- candidates not tried, and a hub that does not answer ------------------------------------------------
@pytest.fixture(scope="module")
def small_site(tmp_path_factory: pytest.TempPathFactory):
    models = build_demo_models(tmp_path_factory.getbasetemp() / "retrieval-demo-untrained", steps=0)
    repos = [MirrorModel(id=f"lab/rm-{i}", files=files_of_dir(models.random)) for i in range(4)]
    repos.append(
        MirrorModel(
            id="lab/pickled",
            files={"config.json": models.legacy / "config.json", "pytorch_model.bin": b"x" * 64},
        )
    )
    with MirrorSite(repos) as s:
        yield s


def _pipeline(hub: str, tmp_path: Path, **validation) -> RetrievalPipeline:
    cfg = RetrievalConfig(hub_url=hub, validation=validation, fetch={"connect_timeout_s": 2})
    return RetrievalPipeline(cfg, BrowserPool(BrowserConfig()), tmp_path, matcher=MATCHER)


async def test_every_candidate_not_tried_says_why_and_cheap_refusals_do_not_spend_the_budget(
    small_site: MirrorSite, tmp_path: Path
) -> None:
    pipe = _pipeline(small_site.url, tmp_path, max_candidates=2, n_probes=8)
    probes = build_probes(examples_from_task("translate"), 8)
    ranked = [
        Candidate(m, "u", decision="not_tried") for m in ["lab/pickled", *(f"lab/rm-{i}" for i in range(4))]
    ]
    record = RetrievalRecord(request_id="r", request={}, config={})
    await pipe._deploy(_req("d"), record, tmp_path, ranked, probes, None)
    assert ranked[0].decision == "refused" and "pickle" in ranked[0].reason
    assert [c.decision for c in ranked[1:3]] == ["failed", "failed"]  # random models fail validation
    for c in ranked[3:]:
        assert c.decision == "not_tried"
        assert c.reason == (
            "not tried: 2 higher-ranked candidates were downloaded and validated already "
            "(validation.max_candidates)"
        )


async def test_an_unreachable_hub_is_its_own_outcome_before_any_page_is_read(tmp_path: Path) -> None:
    pipe = _pipeline(f"http://127.0.0.1:{free_port()}", tmp_path)
    record = await pipe.retrieve(_req("Judge German translations", task="translate"))
    assert record.outcome == "hub_unreachable" and record.pages == []
    assert record.reason.startswith("hub: hub unreachable: ConnectError")
    assert (tmp_path / "retrievals" / "r" / "record.json").is_file()


# -- the command line -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--task", "translate", "--max-params", "1"], "ambiguous (1B? 1M?)"),
        ([], "give --task NAME (a builtin task: "),
        (["--mirror", "--hub", "http://h"], "--mirror serves its own hub"),
        (["--task", "haiku"], "'haiku' is not a builtin task"),
    ],
)
def test_rlar_retrieve_refuses_bad_arguments_before_anything_starts(args, message, tmp_path, capsys) -> None:
    from rlar.app.cli import main

    assert main(["retrieve", "judge German translation adequacy", "--run-dir", str(tmp_path), *args]) == 1
    assert message in capsys.readouterr().err
    assert not (tmp_path / "retrievals").exists()
