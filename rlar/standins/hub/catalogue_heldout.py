"""A hub-shaped site written apart from the retriever's tuning: the retriever's held-out catalogue.

22 fictional repositories in the card styles the real hub shows — metadata with ``model-index`` results,
plain prose, tables of benchmark scores, cards with no metadata at all — with licences of several kinds,
stated sizes from 22M to 8B parameters and pipeline tags ``text-classification``, ``token-classification``,
``text-generation``, ``feature-extraction`` and none. Kinds: Bradley–Terry scalar reward models, a DeBERTa
reward model, quality-estimation regressors (COMET-like, xCOMET-like, CometKiwi-like), safety and toxicity
classifiers, generative judges, and distractors (sentiment, NLI, NER, sentence embeddings, a gated repo,
a non-commercial one, one whose weights fail to download).

The requests asked of it, with the answers a right retriever picks, are in
``data/retrieval/heldout.jsonl``; ``rlar bench retrieval --catalogue heldout`` measures them. This file and
that one were written before the retriever was changed for the kinds they hold, and are not tuned on: change
neither to make a figure move.

The weights served are stand-ins (tiny random checkpoints with the head shape the card describes: one
score, two labels safe/unsafe, six toxicity labels); the sizes the pages and API state are the cards'.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rlar.standins.hub.mirror import MirrorModel, MirrorSite, files_of_dir
from rlar.tools.reward_model import build_tiny_reward_model

# torch and transformers are imported where used: heavy and optional (rlar --help imports this module).

HELDOUT_RECIPE = "heldout-models-v1"


@dataclass
class HeldoutModels:
    """Directories of the stand-in checkpoints: ``scalar`` (one score), ``safety`` (labels safe, unsafe),
    ``toxicity`` (six labels)."""

    scalar: Path
    safety: Path
    toxicity: Path


def build_heldout_models(cache_dir: str | Path) -> HeldoutModels:
    """Build (once) the tiny stand-in checkpoints under ``cache_dir`` (seconds on one core)."""
    import torch
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    root = Path(cache_dir)
    dirs = HeldoutModels(scalar=root / "scalar", safety=root / "safety", toxicity=root / "toxicity")
    marker = root / "heldout-models.json"
    if marker.is_file() and json.loads(marker.read_text()).get("recipe") == HELDOUT_RECIPE:
        return dirs
    build_tiny_reward_model(dirs.scalar, seed=11)
    for out, labels, seed in (
        (dirs.safety, ["safe", "unsafe"], 12),
        (dirs.toxicity, ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"], 13),
    ):
        config = AutoConfig.from_pretrained(dirs.scalar)
        config.num_labels = len(labels)
        config.id2label = dict(enumerate(labels))
        config.label2id = {v: k for k, v in config.id2label.items()}
        torch.manual_seed(seed)
        AutoModelForSequenceClassification.from_config(config).save_pretrained(out, safe_serialization=True)
        AutoTokenizer.from_pretrained(dirs.scalar).save_pretrained(out)
    marker.write_text(json.dumps({"recipe": HELDOUT_RECIPE}))
    return dirs


def _ago(days: float) -> str:
    return (datetime.now(UTC) - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _repo(
    repo_id: str, *, days: float, card: str = "", weights: Path | None = None, **kw: Any
) -> MirrorModel:
    return MirrorModel(
        id=repo_id,
        last_modified=_ago(days),
        card=card,
        files=files_of_dir(weights) if weights is not None else {},
        **kw,
    )


def _index(name: str, *results: tuple[str, str, float]) -> list[dict[str, Any]]:
    """A ``model-index`` entry: (dataset, metric, value) results."""
    return [
        {
            "name": name,
            "results": [
                {
                    "task": {"type": "text-classification"},
                    "dataset": {"name": ds, "type": ds.lower()},
                    "metrics": [{"type": metric, "value": value}],
                }
                for ds, metric, value in results
            ],
        }
    ]


_ST = ("transformers", "safetensors")


def heldout_catalogue(models: HeldoutModels) -> list[MirrorModel]:
    """The held-out site's repositories (see the module docstring). Dates are relative to now."""
    scalar, safety, toxicity = models.scalar, models.safety, models.toxicity
    return [
        # -- general preference reward models ------------------------------------------------------
        _repo(
            "lumen-labs/Pref-RM-0.5B",
            days=40,
            license="apache-2.0",
            parameters=494_032_768,
            dtype="BF16",
            downloads=18_300,
            likes=64,
            architectures=["Qwen2ForSequenceClassification"],
            model_type="qwen2",
            tags=[*_ST, "qwen2", "text-classification"],
            languages=["en"],
            datasets=["openbmb/UltraFeedback", "Skywork/Skywork-Reward-Preference-80K"],
            base_model="Qwen/Qwen2.5-0.5B-Instruct",
            model_index=_index(
                "Pref-RM-0.5B",
                ("RewardBench", "accuracy", 81.7),
                ("RewardBench Chat", "accuracy", 94.1),
                ("RewardBench Safety", "accuracy", 83.0),
            ),
            card=(
                "# Pref-RM-0.5B\n\nA compact Bradley-Terry reward model. Feed it a conversation (user turn "
                "and assistant turn) and it returns a single scalar: higher is a better reply.\n\n"
                "## Training\n\nFine-tuned from Qwen2.5-0.5B-Instruct on 140k preference pairs from "
                "UltraFeedback and Skywork-Reward-Preference, one epoch, pairwise loss.\n\n"
                "## Usage\n\nUse it for RLHF, best-of-n sampling or data filtering.\n"
            ),
            weights=scalar,
        ),
        _repo(
            "ostrava-nlp/deberta-v3-large-hh-rm",
            days=400,
            license="mit",
            parameters=435_063_297,
            downloads=41_000,
            likes=120,
            architectures=["DebertaV2ForSequenceClassification"],
            model_type="deberta-v2",
            tags=[*_ST, "deberta-v2", "text-classification"],
            datasets=["Anthropic/hh-rlhf", "openai/webgpt_comparisons", "openai/summarize_from_feedback"],
            card=(
                "This model was trained to predict which of two answers a human would prefer. Given a "
                "question and an answer it outputs a score; we trained it on the Anthropic HH-RLHF "
                "comparisons, WebGPT comparisons and the summarize-from-feedback data. It works best on "
                "short English question answering turns. We used it to rank samples from our chat model.\n"
            ),
            weights=scalar,
        ),
        _repo(
            "acme-research/Llama-3-8B-RM-mix",
            days=120,
            license="llama3",
            parameters=7_504_932_864,
            dtype="BF16",
            downloads=9_900,
            likes=210,
            architectures=["LlamaForSequenceClassification"],
            tags=[*_ST, "llama", "text-classification", "reward-model"],
            languages=["en"],
            card=(
                "# Llama-3-8B-RM-mix\n\nOutcome reward model on Llama 3 8B Instruct, trained on a mixture of "
                "open preference sets.\n\n## RewardBench\n\n| Subset | Score |\n|---|---|\n"
                "| Chat | 97.2 |\n| Chat Hard | 71.4 |\n| Safety | 88.6 |\n| Reasoning | 90.3 |\n"
                "| Overall | 86.9 |\n"
            ),
            weights=scalar,
        ),
        _repo(
            "kestrel/rm-gemma-2b-helpsteer",
            days=200,
            pipeline_tag=None,
            license="gemma",
            parameters=2_614_341_888,
            dtype="BF16",
            downloads=3_100,
            likes=22,
            architectures=["Gemma2ForSequenceClassification"],
            model_type="gemma2",
            tags=[*_ST, "gemma2"],
            datasets=["nvidia/HelpSteer2"],
            card=(
                "# rm-gemma-2b-helpsteer\n\nScores an assistant response for helpfulness, correctness and "
                "coherence (trained on HelpSteer2 ratings).\n\n| Benchmark | Accuracy |\n|---|---|\n"
                "| HelpSteer2 validation | 74.8 |\n| RewardBench | 76.2 |\n"
            ),
            weights=scalar,
        ),
        _repo(
            "babel-rm/mxlmr-pref-rm-560m",
            days=75,
            license="mit",
            parameters=559_890_433,
            downloads=2_400,
            likes=17,
            architectures=["XLMRobertaForSequenceClassification"],
            model_type="xlm-roberta",
            tags=[*_ST, "xlm-roberta", "text-classification", "multilingual"],
            languages=["multilingual", "en", "fr", "es", "de", "pt", "it", "ja", "zh"],
            card=(
                "# mxlmr-pref-rm-560m\n\nA multilingual preference reward model: it rates how good an "
                "assistant's reply to a user is, in 23 languages (French, Spanish, German, Portuguese, "
                "Japanese, Chinese and more). Trained on translated and native preference pairs.\n\n"
                "It reaches 71.2% accuracy on multilingual RewardBench (M-RewardBench).\n"
            ),
            weights=scalar,
        ),
        _repo(
            "nc-research/helpful-rm-nc-350m",
            days=30,
            license="cc-by-nc-4.0",
            parameters=355_359_745,
            downloads=6_700,
            likes=31,
            architectures=["RobertaForSequenceClassification"],
            model_type="roberta",
            tags=[*_ST, "roberta", "text-classification", "reward-model"],
            card=(
                "# helpful-rm-nc-350m\n\nA helpfulness reward model for chat assistants. Research use only "
                "(non-commercial licence).\n\nRewardBench score: 78.9\n"
            ),
            weights=scalar,
        ),
        _repo(
            "anon-user/rm-final-v2",
            days=600,
            pipeline_tag=None,
            library_name=None,
            license=None,
            parameters=350_000_000,
            downloads=150,
            likes=0,
            architectures=[],
            model_type=None,
            card="my reward model, trained on hh. works ok\n",
            weights=scalar,
        ),
        # -- task-specific reward models -----------------------------------------------------------
        _repo(
            "codecraft/code-reward-1.3b",
            days=60,
            license="apache-2.0",
            parameters=1_346_471_936,
            dtype="BF16",
            downloads=5_200,
            likes=44,
            architectures=["LlamaForSequenceClassification"],
            tags=[*_ST, "llama", "text-classification", "code"],
            card=(
                "# code-reward-1.3b\n\nRewards Python solutions to programming problems: trained on pairs of "
                "passing and failing solutions (unit tests decide) from competitive programming sets.\n\n"
                "| Benchmark | Pairwise accuracy |\n|---|---|\n| HumanEval pairs | 82.4 |\n| MBPP pairs | 79.0 |\n"
            ),
            weights=scalar,
        ),
        _repo(
            "mathmentor/orm-math-1.5b",
            days=50,
            license="apache-2.0",
            parameters=1_543_714_305,
            dtype="BF16",
            downloads=7_800,
            likes=58,
            architectures=["Qwen2ForSequenceClassification"],
            model_type="qwen2",
            tags=[*_ST, "qwen2", "text-classification", "math"],
            datasets=["openai/gsm8k"],
            model_index=_index("orm-math-1.5b", ("GSM8K best-of-8", "accuracy", 84.5)),
            card=(
                "# orm-math-1.5b\n\nAn outcome reward model for step-by-step math solutions: scores the whole "
                "solution for a grade-school or competition problem, higher when the final answer is right "
                "and the steps are sound.\n"
            ),
            weights=scalar,
        ),
        _repo(
            "summit-ai/summary-quality-rm-400m",
            days=90,
            license="mit",
            parameters=406_291_457,
            downloads=3_900,
            likes=25,
            architectures=["BartForSequenceClassification"],
            model_type="bart",
            tags=[*_ST, "bart", "text-classification"],
            languages=["en"],
            datasets=["openai/summarize_from_feedback", "cnn_dailymail"],
            card=(
                "# summary-quality-rm-400m\n\nJudges how well a summary captures the main points of a news "
                "article or post. Trained on human comparisons of summaries (TL;DR and CNN/DailyMail).\n\n"
                "Accuracy on held-out comparisons: 72.6%\n"
            ),
            weights=scalar,
        ),
        # -- machine-translation quality estimation ------------------------------------------------
        _repo(
            "tallinn-mt/xlmr-qe-base-multilingual",
            days=140,
            license="apache-2.0",
            parameters=278_045_185,
            downloads=4_600,
            likes=33,
            architectures=["XLMRobertaForSequenceClassification"],
            model_type="xlm-roberta",
            tags=[*_ST, "xlm-roberta", "text-classification", "quality-estimation", "multilingual"],
            languages=["multilingual", "en", "de", "zh", "ro", "et", "ne", "si"],
            datasets=["wmt/wmt20_mlqe_task1"],
            model_index=_index(
                "xlmr-qe-base-multilingual",
                ("WMT20 QE en-de", "pearson", 0.47),
                ("WMT20 QE ro-en", "pearson", 0.83),
            ),
            card=(
                "# xlmr-qe-base-multilingual\n\nSentence-level quality estimation (QE) for machine "
                "translation. Input: the source sentence and its machine translation, no reference needed. "
                "Output: one regression score (direct assessment z-score) — higher is a better translation."
                "\n\nTrained on the WMT20 MLQE-PE direct assessments for en-de, en-zh, ro-en, et-en, ne-en "
                "and si-en.\n"
            ),
            weights=scalar,
        ),
        _repo(
            "sprachwerk/qe-en-de-minilm",
            days=35,
            license="mit",
            parameters=33_360_385,
            downloads=880,
            likes=5,
            architectures=["BertForSequenceClassification"],
            model_type="bert",
            tags=[*_ST, "bert", "text-classification", "en", "de"],
            languages=["en", "de"],
            card=(
                "# qe-en-de-minilm\n\nA small COMET-style estimator for English→German: it reads an English "
                "sentence and a German translation and predicts a quality score (no reference "
                "translation).\n\n| Test set | Pearson r |\n|---|---|\n| WMT22 en-de QE | 0.52 |\n"
            ),
            weights=scalar,
        ),
        _repo(
            "tallinn-mt/comet-da-22-mini",
            days=300,
            pipeline_tag="translation",
            library_name="unbabel-comet",
            license="apache-2.0",
            parameters=118_000_000,
            downloads=12_500,
            likes=41,
            architectures=[],
            model_type=None,
            tags=["unbabel-comet", "translation", "multilingual"],
            languages=["multilingual"],
            card=(
                "# comet-da-22-mini\n\nReference-based COMET metric distilled to 118M parameters. Scores a "
                "translation given the source and a reference translation. Load with `pip install "
                "unbabel-comet` and `load_from_checkpoint`.\n"
            ),
            listed={"checkpoints/model.ckpt": 472_000_000, "hparams.yaml": 900},
        ),
        _repo(
            "lisbon-mt/xcomet-style-xl",
            days=180,
            pipeline_tag=None,
            library_name="unbabel-comet",
            license="cc-by-nc-sa-4.0",
            parameters=3_500_000_000,
            downloads=21_000,
            likes=150,
            architectures=[],
            model_type=None,
            tags=["unbabel-comet", "translation", "multilingual"],
            languages=["multilingual"],
            card=(
                "# xcomet-style-xl\n\nAn explainable translation evaluation metric: sentence-level quality "
                "score plus error spans (minor, major, critical). Works with or without a reference.\n"
            ),
            listed={"checkpoints/model.ckpt": 14_000_000_000},
        ),
        _repo(
            "lisbon-mt/kiwi-style-qe-da",
            days=220,
            pipeline_tag="translation",
            library_name="unbabel-comet",
            license="cc-by-nc-sa-4.0",
            parameters=565_000_000,
            downloads=9_100,
            likes=70,
            architectures=[],
            model_type=None,
            tags=["unbabel-comet", "translation", "multilingual"],
            languages=["multilingual"],
            gated="auto",
            card=(
                "# kiwi-style-qe-da\n\nReference-free quality estimation in the style of CometKiwi: source + "
                "translation in, DA score out. Accept the licence to download.\n"
            ),
            listed={"checkpoints/model.ckpt": 2_260_000_000},
        ),
        # -- safety and toxicity -------------------------------------------------------------------
        _repo(
            "guardrail-co/safety-guard-deberta",
            days=25,
            license="apache-2.0",
            parameters=184_423_682,
            downloads=15_800,
            likes=90,
            architectures=["DebertaV2ForSequenceClassification"],
            model_type="deberta-v2",
            tags=[*_ST, "deberta-v2", "text-classification", "safety"],
            languages=["en"],
            card=(
                "# safety-guard-deberta\n\nA safety classifier for assistant responses: labels `safe` and "
                "`unsafe`. It flags replies that give dangerous instructions, encourage self-harm, harass "
                "or include hate speech.\n\n| Eval set | F1 |\n|---|---|\n| held-out unsafe replies | 91.3 |\n"
            ),
            weights=safety,
        ),
        _repo(
            "guardrail-co/guard-llm-8b",
            days=15,
            pipeline_tag="text-generation",
            license="llama3.1",
            parameters=8_030_261_248,
            dtype="BF16",
            downloads=30_500,
            likes=400,
            architectures=["LlamaForCausalLM"],
            tags=[*_ST, "llama", "text-generation", "safety"],
            gated="manual",
            card=(
                "# guard-llm-8b\n\nA generative safety classifier: prompted with a conversation it writes "
                "`safe` or `unsafe` followed by the violated categories.\n"
            ),
            listed={
                "config.json": 880,
                "model-00001-of-00002.safetensors": 4_976_698_672,
                "model-00002-of-00002.safetensors": 1_168_138_808,
            },
        ),
        _repo(
            "clearspeech/toxic-comment-roberta",
            days=500,
            license="cc-by-4.0",
            parameters=124_650_246,
            downloads=88_000,
            likes=260,
            architectures=["RobertaForSequenceClassification"],
            model_type="roberta",
            tags=[*_ST, "roberta", "text-classification", "toxicity"],
            languages=["en"],
            datasets=["jigsaw_toxicity_pred"],
            card=(
                "# toxic-comment-roberta\n\nMulti-label toxicity classifier for English online comments: "
                "toxic, severe_toxic, obscene, threat, insult, identity_hate. Trained on the Jigsaw toxic "
                "comment data; mean ROC-AUC 0.986.\n"
            ),
            weights=toxicity,
        ),
        _repo(
            "hispano-nlp/toxicidad-es-beto",
            days=70,
            license="mit",
            parameters=109_852_418,
            downloads=2_900,
            likes=12,
            architectures=["BertForSequenceClassification"],
            model_type="bert",
            tags=[*_ST, "bert", "text-classification", "toxicity", "es"],
            languages=["es"],
            card=(
                "# toxicidad-es-beto\n\nClasificador de toxicidad para textos en español (BETO). A toxicity "
                "scorer for Spanish text: one output, higher means more polite and less toxic (trained as a "
                "regression on annotated Spanish comments).\n"
            ),
            quirks=("weights_unavailable",),
            weights=scalar,
        ),
        # -- generative judges ---------------------------------------------------------------------
        _repo(
            "sagejudge/rubric-judge-7b",
            days=100,
            pipeline_tag="text-generation",
            license="apache-2.0",
            parameters=7_241_732_096,
            dtype="BF16",
            downloads=11_000,
            likes=180,
            architectures=["MistralForCausalLM"],
            model_type="mistral",
            tags=[*_ST, "mistral", "text-generation", "llm-as-a-judge"],
            card=(
                "# rubric-judge-7b\n\nAn evaluator language model in the style of Prometheus: given an "
                "instruction, a response, a score rubric and optionally a reference answer, it writes "
                "feedback and an integer score from 1 to 5. Also does pairwise ranking (A or B).\n\n"
                "| Benchmark | Pearson |\n|---|---|\n| Feedback Bench | 0.89 |\n| MT-Bench human | 0.61 |\n"
            ),
            listed={
                "config.json": 700,
                "model-00001-of-00002.safetensors": 9_942_981_696,
                "model-00002-of-00002.safetensors": 4_540_516_344,
            },
        ),
        # -- distractors ---------------------------------------------------------------------------
        _repo(
            "moviebuff/distilbert-sst2-sentiment",
            days=800,
            license="apache-2.0",
            parameters=66_955_010,
            downloads=900_000,
            likes=600,
            architectures=["DistilBertForSequenceClassification"],
            model_type="distilbert",
            tags=[*_ST, "distilbert", "text-classification", "sentiment"],
            languages=["en"],
            datasets=["sst2"],
            card=(
                "# distilbert-sst2-sentiment\n\nPositive/negative sentiment of English movie reviews. "
                "Accuracy on SST-2 dev: 91.3\n"
            ),
            weights=toxicity,
        ),
        _repo(
            "inferlab/roberta-large-mnli-ft",
            days=650,
            license="mit",
            parameters=355_362_819,
            downloads=120_000,
            likes=150,
            architectures=["RobertaForSequenceClassification"],
            model_type="roberta",
            tags=[*_ST, "roberta", "text-classification", "nli"],
            languages=["en"],
            datasets=["multi_nli"],
            card=(
                "# roberta-large-mnli-ft\n\nNatural language inference: entailment, neutral or contradiction "
                "between a premise and a hypothesis. MNLI matched accuracy 90.2.\n"
            ),
            weights=toxicity,
        ),
        _repo(
            "tagworks/bert-base-ner-conll",
            days=700,
            pipeline_tag="token-classification",
            license="mit",
            parameters=108_317_193,
            downloads=300_000,
            likes=420,
            architectures=["BertForTokenClassification"],
            model_type="bert",
            tags=[*_ST, "bert", "token-classification", "ner"],
            languages=["en"],
            card="# bert-base-ner-conll\n\nNamed-entity recognition (PER, ORG, LOC, MISC) on CoNLL-2003: F1 91.7.\n",
        ),
        _repo(
            "vecspace/minilm-l6-sentence-embed",
            days=900,
            pipeline_tag="feature-extraction",
            library_name="sentence-transformers",
            license="apache-2.0",
            parameters=22_713_216,
            downloads=2_000_000,
            likes=900,
            architectures=["BertModel"],
            model_type="bert",
            tags=[
                "sentence-transformers",
                "safetensors",
                "bert",
                "feature-extraction",
                "sentence-similarity",
            ],
            languages=["en"],
            card=(
                "# minilm-l6-sentence-embed\n\nMaps sentences and paragraphs to a 384-dimensional vector "
                "space for semantic search and clustering. Can also be used to score answer relevance "
                "by cosine similarity.\n"
            ),
        ),
    ]


@contextlib.contextmanager
def heldout_site(cache_dir: str | Path, *, hang_s: float = 60.0) -> Iterator[MirrorSite]:
    """Build the stand-in checkpoints (once) and serve the held-out site on 127.0.0.1 for the duration."""
    site = MirrorSite(heldout_catalogue(build_heldout_models(cache_dir)), hang_s=hang_s)
    with site:
        yield site


__all__ = ["HeldoutModels", "build_heldout_models", "heldout_catalogue", "heldout_site"]
