"""Retrieval library parts that need no browser: probes, filters, ranking, request mapping, page parsers on
extractions, the mirror's pieces, and the record renderer."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from bus.messages import ToolRequest
from rlar.retrieval.adapters import HubAdapter, LeaderboardAdapter, parse_count, parse_number
from rlar.retrieval.config import RankingConfig, RetrievalConfig, RetrievalRequest
from rlar.retrieval.deploy import Refused, choose_files, vet_config
from rlar.retrieval.pipeline import search_queries, slug, tool_name
from rlar.retrieval.probes import KINDS, Example, build_probes, corrupt, echo_of, examples_from_task
from rlar.retrieval.ranking import (
    EmbeddingMatcher,
    apply_filters,
    check_budget,
    check_head,
    check_licence,
    quality_components,
    rank,
    weight_bytes,
)
from rlar.retrieval.records import Candidate, RetrievalRecord
from rlar.retrieval.report import render
from rlar.standins.hub.mirror import markdown_to_html, safetensors_parameters
from rlar.tasks.base import Rng


def _req(**kw) -> RetrievalRequest:
    return RetrievalRequest(request_id="r1", description="judge German translations", **kw)


# -- probes ---------------------------------------------------------------------------------------------
def test_probes_are_deterministic_cover_every_corruption_and_never_equal_the_reference():
    examples = examples_from_task("translate", split="test")
    a = build_probes(examples, 48, seed=3)
    b = build_probes(examples, 48, seed=3)
    assert a == b and len(a) == 48
    assert {p.kind for p in a} == set(KINDS)
    assert all(p.rejected.strip() != p.preferred.strip() for p in a)
    assert build_probes(examples, 48, seed=4) != a
    assert build_probes([], 10) == []


def test_each_corruption_does_what_it_says():
    ex = Example("Translate to German: The cat is black.", "Die Katze ist schwarz.")
    other = Example("Translate to German: I am tired.", "Ich bin müde.")
    rng = Rng("t")
    assert sorted(str(corrupt(ex, "shuffle", rng, [ex, other])).split()) == sorted(ex.reference.split())
    assert corrupt(ex, "truncate", rng, [ex]) == "Die Katze"
    assert corrupt(ex, "echo", rng, [ex]) == "The cat is black."
    rep = str(corrupt(ex, "repeat", rng, [ex])).split()
    assert len(rep) > 4 and rep[-4:] == ex.reference.split()
    assert corrupt(ex, "swap", rng, [ex, other]) == other.reference
    assert corrupt(ex, "swap", rng, [ex]) is None  # nothing to swap with
    assert corrupt(Example("q", "Ja."), "shuffle", rng, []) is None
    assert echo_of("no instruction prefix") == "no instruction prefix"
    with pytest.raises(ValueError):
        corrupt(ex, "reverse", rng, [ex])


# -- request mapping ------------------------------------------------------------------------------------
def test_a_tool_request_maps_to_a_retrieval_request_with_its_constraints():
    msg = ToolRequest(
        request_id="abc",
        signature="sig",
        task="translate",
        description="Translate into German",
        domain="translation",
        task_type="translation",
        examples=[{"query": "q", "reference": "r"}],
        constraints={
            "language": "de",
            "max_vram_gb": 8,
            "licenses": ["MIT"],
            "min_pass_share": 0.8,
            "allow_unknown_license": True,
            "colour": "blue",
        },
    )
    req = RetrievalRequest.from_tool_request(msg)
    assert (req.language, req.max_vram_gb, req.licences, req.min_pass_share) == ("de", 8, ["mit"], 0.8)
    assert req.allow_unknown_licence and req.examples == [{"query": "q", "reference": "r"}]
    assert req.extra == {"colour": "blue"}
    bad = ToolRequest(
        request_id="x", signature="s", task="t", description="d", constraints={"max_params": -1}
    )
    with pytest.raises(ValueError):
        RetrievalRequest.from_tool_request(bad)


def test_search_queries_and_tool_names():
    assert search_queries(_req(domain="translation", task_type="translation"), 3) == [
        "qe",
        "comet",
        "quality estimation",
    ]
    chat = RetrievalRequest(request_id="r2", description="score chat replies")
    assert search_queries(chat, 1) == ["reward"]
    assert tool_name("rm", "Org/Some.Model_v2") == "rm-org-some-model-v2"
    assert slug("a/b c") == "a-b-c"
    with pytest.raises(ValueError):
        RetrievalConfig(hub_url="ftp://x")


# -- filters --------------------------------------------------------------------------------------------
def test_head_filter_wants_a_sequence_classifier_we_can_load():
    ok = {
        "pipeline_tag": "text-classification",
        "architectures": ["LlamaForSequenceClassification"],
        "library_name": "transformers",
    }
    assert check_head(ok) == "pass"
    assert "text-generation" in check_head({**ok, "pipeline_tag": "text-generation"})
    assert "LlamaForCausalLM" in check_head({**ok, "architectures": ["LlamaForCausalLM"]})
    assert "not loadable" in check_head({**ok, "library_name": "keras"})
    assert check_head({"tags": ["reward-model"]}) == "pass"
    assert check_head({}).startswith("head unknown")


def test_licence_policy_refuses_unlisted_and_unstated_licences():
    allowed = ["apache-2.0", "mit"]
    assert check_licence({"license": "MIT"}, allowed, False) == "pass"
    assert "cc-by-nc-4.0" in check_licence({"license": "cc-by-nc-4.0"}, allowed, False)
    assert check_licence({}, allowed, False).startswith("licence not stated")
    assert check_licence({}, allowed, True) == "pass"


def test_budget_filter_uses_dtype_bytes_and_refuses_unknown_sizes():
    facts = {"parameters": 7_000_000_000, "dtype_params": {"BF16": 7_000_000_000}}
    assert weight_bytes(facts) == 14e9
    assert weight_bytes({"parameters": 10}) == 40.0  # float32 when the dtype is not stated
    assert check_budget(facts, _req(max_vram_gb=20), 1.2) == "pass"
    assert "GB VRAM" in check_budget(facts, _req(max_vram_gb=16), 1.2)  # 16.8 GB needed
    assert "parameters" in check_budget(facts, _req(max_params=1e9), 1.2)
    assert check_budget({}, _req(max_params=1e9), 1.2).startswith("size unknown")
    assert check_budget({}, _req(), 1.2) == "pass"  # no budget, nothing to check


def test_filters_reject_with_every_reason_and_mark_eligible_candidates():
    cfg = RetrievalConfig()
    c = Candidate("a/b", "u", facts={"pipeline_tag": "text-generation", "license": "other"})
    apply_filters(c, _req(max_params=1e9), cfg)
    assert c.decision == "rejected" and not c.eligible
    assert "head" in c.reason and "licence" in c.reason and "budget" in c.reason
    good = Candidate(
        "a/c", "u", facts={"pipeline_tag": "text-classification", "license": "mit", "parameters": 10}
    )
    apply_filters(good, _req(max_params=1e9), cfg)
    assert good.eligible and good.decision == "not_tried"


# -- ranking --------------------------------------------------------------------------------------------
def test_ranking_combines_fit_and_quality_and_records_every_component():
    cfg = RankingConfig()
    popular = Candidate(
        "a/popular",
        "u",
        facts={"downloads": 1_000_000, "likes": 500, "last_modified": "2020-01-01T00:00:00Z"},
    )
    fitting = Candidate("a/fitting", "u", facts={"downloads": 10, "likes": 1}, leaderboard={"score": 0.9})
    ordered = rank([popular, fitting], [0.2, 0.9], cfg)
    assert [c.model_id for c in ordered] == ["a/fitting", "a/popular"]
    assert [c.rank for c in ordered] == [1, 2]
    assert set(popular.scores) == {
        "fit",
        "kind",
        "evidence",
        "leaderboard",
        "downloads",
        "likes",
        "recency",
        "total",
    }
    assert all(0.0 <= v <= 1.0 for v in popular.scores.values())
    assert popular.scores["recency"] < 0.1  # years old
    # A score stated only on the model's own card counts half.
    carded = Candidate("a/card", "u", facts={"benchmark_scores": {"x": 80.0}})
    assert quality_components(carded, cfg)["leaderboard"] == pytest.approx(0.4)


async def test_embedding_matcher_prefers_the_card_that_describes_the_task():
    req = _req(domain="translation", language="de")
    mt = Candidate(
        "lab/mt-de-reward",
        "u",
        facts={"card_excerpt": "Reward model for English to German translation quality."},
    )
    chat = Candidate(
        "lab/chat-reward", "u", facts={"card_excerpt": "Reward model for helpful harmless dialogue."}
    )
    fits = await EmbeddingMatcher().fit(req, [mt, chat])
    assert fits[0] > fits[1] and all(0.0 <= f <= 1.0 for f in fits)


# -- parsers on saved extractions -----------------------------------------------------------------------
def test_numbers_and_counts_are_parsed_from_page_text():
    assert parse_number("85.2%") == 85.2 and parse_number("1,234") == 1234.0 and parse_number("n/a") is None
    assert parse_count("7.5B") == 7_500_000_000 and parse_count("12.3k") == 12_300 and parse_count(42) == 42
    assert parse_number(math.inf) is None


def test_hub_search_parser_reads_props_and_falls_back_to_cards():
    hub = HubAdapter("http://hub.test")
    props = {
        "initialValues": {
            "models": [
                {
                    "id": "a/b",
                    "downloads": 5,
                    "likes": 2,
                    "numParameters": 100,
                    "pipeline_tag": "text-classification",
                },
                {"nope": 1},
            ]
        }
    }
    items, problems = hub.parse_search({"hydraters": [{"target": "ModelList", "props": json.dumps(props)}]})
    assert [(i.model_id, i.downloads, i.parameters, i.source) for i in items] == [("a/b", 5, 100, "props")]
    assert problems and "without a model id" in problems[0]
    cards = [
        {
            "href": "/c/d",
            "title": "c/d",
            "params": "0.1M",
            "text": "c/d\ntext-classification • 0.1M • Updated 2 days ago • 12.3k • 45",
        }
    ]
    items, problems = hub.parse_search({"hydraters": [], "cards": cards})
    assert (items[0].model_id, items[0].downloads, items[0].likes, items[0].source) == (
        "c/d",
        12_300,
        45,
        "dom",
    )
    items, problems = hub.parse_search({"hydraters": [{"target": "ModelList", "props": "{not json"}]})
    assert items == [] and any("not JSON" in p for p in problems)


def test_hub_model_parser_prefers_props_then_markup_and_lists_missing_fields():
    hub = HubAdapter("http://hub.test")
    header = {
        "model": {
            "id": "a/b",
            "pipeline_tag": "text-classification",
            "cardData": {"license": "MIT"},
            "safetensors": {"parameters": {"BF16": 10}, "total": 10},
            "downloads": 3,
        }
    }
    data = {
        "hydraters": [{"target": "ModelHeader", "props": json.dumps(header)}],
        "chips": [{"href": "/models?library=transformers", "text": "transformers"}],
        "licence": "apache-2.0",
        "sidebar": "Downloads last month\n9,999",
        "card_text": "card",
        "tables": [[["Benchmark", "Score"], ["RewardBench", "71.5"]]],
    }
    f = hub.parse_model(data, "a/b", "http://hub.test/a/b")
    assert (f.license, f.parameters, f.downloads, f.library_name) == ("mit", 10, 3, "transformers")
    assert (f.sources["license"], f.sources["library_name"]) == ("props", "dom")
    assert f.benchmark_scores == {"RewardBench": 71.5}
    assert set(f.missing) == {"likes", "last_modified", "architectures"}
    bare = hub.parse_model(
        {"hydraters": [], "licence": "mit", "sidebar": "Model size\n7.5B params"}, "x/y", "u"
    )
    assert (bare.license, bare.parameters, bare.sources["parameters"]) == ("mit", 7_500_000_000, "dom")
    assert any("not a hub model page" in p for p in bare.problems)


def test_leaderboard_parser_reads_the_model_column_and_picks_the_score_column():
    lb = LeaderboardAdapter("http://lb.test/board", hub_url="http://hub.test")
    data = {
        "tables": [
            {
                "headers": ["Model", "Average", "Chat"],
                "rows": [
                    [{"text": "a/b", "href": "http://hub.test/a/b"}, {"text": "88.5"}, {"text": "90"}],
                    [{"text": "c/d", "href": None}, {"text": "0.7"}, {"text": "-"}],
                    [{"text": "not a model", "href": None}, {"text": "1"}, {"text": "2"}],
                ],
            }
        ]
    }
    t = lb.parse(data)
    assert t.score_column == "Average" and t.columns == ["Average", "Chat"]
    assert t.score("A/B") == pytest.approx(0.885) and t.score("c/d") == pytest.approx(0.7)
    assert t.score("e/f") is None and len(t.problems) == 1
    assert lb.parse({"tables": []}).problems == ["no table with a Model column on the page"]


# -- deploy vetting -------------------------------------------------------------------------------------
def test_config_vetting_refuses_remote_code_other_heads_and_several_labels():
    ok = {"architectures": ["LlamaForSequenceClassification"], "num_labels": 1}
    vet_config(ok)
    assert vet_config({"architectures": ["XForSequenceClassification"], "id2label": {"0": "LABEL_0"}}) == 0
    # A two-label safety classifier scores by its good label's probability: that label's index.
    guard = {"architectures": ["XForSequenceClassification"], "id2label": {"0": "UNSAFE", "1": "safe"}}
    assert vet_config(guard) == 1
    assert vet_config({**guard, "id2label": {"0": "non-toxic", "1": "toxic"}}) == 0
    cases: list[tuple[dict[str, Any], str]] = [
        ({**ok, "auto_map": {}}, "trust_remote_code"),
        ({"architectures": ["LlamaForCausalLM"]}, "not a sequence-classification head"),
        ({"architectures": ["XForSequenceClassification"], "id2label": {"0": "neg", "1": "pos"}}, "2 labels"),
        ({"architectures": ["XForSequenceClassification"]}, "2 labels"),  # transformers' default
        ({}, "no architecture"),
    ]
    for bad, why in cases:
        with pytest.raises(Refused, match=why):
            vet_config(bad)


def test_only_safetensors_checkpoints_and_their_companions_are_fetched():
    sib = [
        {"rfilename": n}
        for n in (
            "config.json",
            "model.safetensors",
            "tokenizer.json",
            "README.md",
            "pytorch_model.bin",
            "train.py",
        )
    ]
    assert [s["rfilename"] for s in choose_files(sib)] == [
        "config.json",
        "model.safetensors",
        "tokenizer.json",
    ]
    with pytest.raises(Refused, match="pickle"):
        choose_files([{"rfilename": "config.json"}, {"rfilename": "pytorch_model.bin"}])
    with pytest.raises(Refused, match=r"no config\.json"):
        choose_files([{"rfilename": "model.safetensors"}])


# -- mirror pieces and rendering ------------------------------------------------------------------------
def test_safetensors_header_gives_parameter_counts_per_dtype(tmp_path: Path):
    import torch
    from safetensors.torch import save_file

    save_file({"a": torch.zeros(3, 4), "b": torch.zeros(5, dtype=torch.bfloat16)}, tmp_path / "m.safetensors")
    assert safetensors_parameters((tmp_path / "m.safetensors").read_bytes()) == {"F32": 12, "BF16": 5}


def test_card_markdown_renders_tables_headings_and_lists():
    html = markdown_to_html("# T\n\ntext & more\n\n| A | B |\n|---|---|\n| x | 1 |\n\n- item")
    assert "<h1>T</h1>" in html and "text &amp; more" in html and "<td>x</td><td>1</td>" in html
    assert "<li>item</li>" in html


def test_a_record_renders_ranked_candidates_reasons_and_the_outcome():
    rec = RetrievalRecord(request_id="r", request={"description": "d"}, config={"hub_url": "http://h"})
    a = Candidate(
        "a/b",
        "http://h/a/b",
        facts={"license": "mit", "downloads": 5},
        sources={"license": "props"},
        rank=1,
        scores={"total": 0.5, "fit": 0.4},
        decision="registered",
        reason="passed",
    )
    b = Candidate("c/d", "http://h/c/d", decision="unread", reason="model page http_error: HTTP 404")
    rec.candidates = [a, b]
    rec.outcome, rec.tool = "registered", {"name": "rm-a-b", "version": 2}
    text = render(rec.to_dict())
    assert "license=mit (props)" in text and "HTTP 404" in text and "tool rm-a-b v2" in text
