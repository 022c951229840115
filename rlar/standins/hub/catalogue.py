"""The demo site: a catalogue of reward models for an English→German translation-adequacy request, with
every failure a retriever meets (see :mod:`rlar.standins.hub.mirror`), and a leaderboard that misleads.

:func:`demo_catalogue` and :func:`demo_leaderboard` describe the site; :func:`demo_site` builds the demo
checkpoints (:mod:`rlar.standins.hub.models`) and serves it on loopback.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rlar.standins.hub.mirror import MirrorModel, MirrorSite, files_of_dir
from rlar.standins.hub.models import DemoModels, build_demo_models


def _ago(days: float) -> str:
    t = datetime.now(UTC) - timedelta(days=days)
    return t.strftime("%Y-%m-%dT%H:%M:%S.000Z")


_TINY_BASE = "rlar/tiny-llama-bytes"  # the base model of the locally trained checkpoints
# Tags of the demo's safetensors Llama reward models, and of the translation ones among them.
_RM_TAGS = ("safetensors", "llama", "text-classification", "reward-model")
_EN_DE_TAGS = (*_RM_TAGS, "translation", "en", "de")
_MULTILINGUAL_TAGS = (*_RM_TAGS, "translation", "multilingual")


def _entry(
    repo_id: str,
    *,
    days: float,
    tags: tuple[str, ...] = (),
    card: str = "",
    weights: Path | None = None,
    **fields: Any,
) -> MirrorModel:
    """One repository of the demo site, last modified ``days`` ago; ``card`` is the card's text under a
    heading of the repository's name, ``weights`` a checkpoint directory whose files it serves."""
    return MirrorModel(
        id=repo_id,
        last_modified=_ago(days),
        tags=list(tags),
        card=f"# {repo_id.split('/', 1)[1]}\n\n{card}" if card else "",
        files=files_of_dir(weights) if weights is not None else {},
        **fields,
    )


def _shards(count: int, size: int) -> dict[str, int]:
    """The listed files of a safetensors checkpoint in ``count`` shards of ``size`` bytes."""
    return {f"model-{i:05d}-of-{count:05d}.safetensors": size for i in range(1, count + 1)}


def demo_catalogue(models: DemoModels) -> list[MirrorModel]:
    """The demo site: reward models for an English→German translation-adequacy request, with every
    failure a retriever meets (see :mod:`rlar.standins.hub.mirror`). Dates are relative to now."""
    return [
        _entry(
            "mirror-lab/mt-reward-base",
            days=20,
            license="mit",
            base_model=_TINY_BASE,
            downloads=52_400,
            likes=140,
            tags=_MULTILINGUAL_TAGS,
            card=(
                "A general reward model for machine translation and multilingual chat. It reads a source "
                "sentence and a candidate translation and returns a scalar preference score.\n\n"
                "## Evaluation\n\n| Benchmark | Score |\n|---|---|\n"
                "| Translation preference accuracy | 88.1 |\n"
            ),
            weights=models.random,
        ),
        _entry(
            "mirror-lab/mt-de-reward-tiny",
            days=45,
            license="apache-2.0",
            base_model=_TINY_BASE,
            downloads=900,
            likes=6,
            tags=_EN_DE_TAGS,
            card=(
                "Reward model for English→German translation adequacy. Given an English source sentence "
                "and a German translation it outputs one logit: higher means the translation is complete, "
                "fluent and faithful to the source.\n\nTrained with a pairwise (Bradley–Terry) loss on "
                "reference translations against corrupted ones (shuffled, truncated, untranslated, "
                "repeated, mismatched).\n\n## Evaluation\n\n"
                "| Benchmark | Accuracy |\n|---|---|\n| held-out EN-DE pairs | 89.6 |\n"
            ),
            weights=models.good,
        ),
        _entry(
            "mirror-lab/dialogue-reward-tiny",
            days=90,
            license="apache-2.0",
            downloads=2_050,
            likes=9,
            tags=(*_RM_TAGS, "conversational", "en"),
            card=(
                "A reward model for open-domain dialogue: it scores assistant replies for helpfulness "
                "and harmlessness in English conversations.\n"
            ),
            weights=models.dialogue,
        ),
        _entry(
            "mirror-lab/translation-reward-3class",
            days=60,
            license="apache-2.0",
            downloads=8_800,
            likes=30,
            tags=("safetensors", "llama", "text-classification", "translation", "quality-estimation"),
            card=(
                "Translation quality classifier with three labels: bad, acceptable, good. "
                "Reward for translation RL.\n"
            ),
            weights=models.three_class,
        ),
        _entry(
            "legacy-lab/translation-reward-legacy",
            days=150,
            license="mit",
            downloads=40_000,
            likes=180,
            parameters=104_000,
            tags=("pytorch", "llama", "text-classification", "reward-model", "translation"),
            card="An older translation reward model (PyTorch checkpoint).\n",
            weights=models.legacy,
        ),
        _entry(
            "bigco/translation-reward-70b",
            days=30,
            license="llama3.1",
            base_model="meta-llama/Llama-3.1-70B-Instruct",
            parameters=70_553_706_496,
            dtype="BF16",
            downloads=20_100,
            likes=310,
            tags=_MULTILINGUAL_TAGS,
            card=(
                "A 70B reward model for translation, from Llama 3.1 70B.\n\n"
                "| Benchmark | Score |\n|---|---|\n| RewardBench | 92.4 |\n"
            ),
            listed={"config.json": 912, **_shards(30, 4_700_000_000)},
        ),
        _entry(
            "nc-lab/translation-reward-nc",
            days=15,
            license="cc-by-nc-4.0",
            downloads=15_000,
            likes=95,
            tags=_EN_DE_TAGS,
            card="A translation reward model for research use only (non-commercial).\n",
            weights=models.random,
        ),
        _entry(
            "ghost-lab/translation-reward-deleted",
            days=10,
            downloads=12_000,
            likes=50,
            behaviour="404",
            tags=_EN_DE_TAGS,
        ),
        _entry(
            "slow-lab/translation-reward-slow",
            days=12,
            downloads=9_500,
            likes=40,
            behaviour="hang",
            tags=_EN_DE_TAGS,
            weights=models.random,
        ),
        _entry(
            "sparse-lab/translation-reward-sparse",
            days=25,
            downloads=6_000,
            likes=20,
            behaviour="missing_fields",
            card="Translation reward model.\n",
            weights=models.random,
        ),
        _entry(
            "judge-lab/llm-judge-8b",
            days=5,
            pipeline_tag="text-generation",
            architectures=["LlamaForCausalLM"],
            license="apache-2.0",
            parameters=8_030_261_248,
            dtype="BF16",
            downloads=40_000,
            likes=200,
            tags=("safetensors", "llama", "text-generation", "llm-as-a-judge"),
            card="A generative judge: writes a critique and a 1–10 grade.\n",
            listed=_shards(4, 4_000_000_000),
        ),
    ]


LEADERBOARD_NAME = "mirror-lab/reward-leaderboard"
DEMO_TASK = "translate"
"""The builtin task the demo site's models are for (English→German): ``rlar retrieve --mirror`` validates
on its test split when the command names no task and no examples."""


def demo_leaderboard() -> dict[str, list[dict[str, Any]]]:
    """The demo leaderboard page's rows: it rates the random model highest (leaderboards can mislead;
    validation is the gate)."""
    rows = [
        ("bigco/translation-reward-70b", 92.4, 90.1, 95.0),
        ("mirror-lab/mt-reward-base", 88.1, 86.0, 89.9),
        ("judge-lab/llm-judge-8b", 84.0, 88.2, 80.3),
        ("legacy-lab/translation-reward-legacy", 80.0, 76.5, 83.2),
        ("mirror-lab/translation-reward-3class", 79.0, 70.0, 86.1),
        ("mirror-lab/mt-de-reward-tiny", 60.0, 35.2, 81.7),
        ("mirror-lab/dialogue-reward-tiny", 58.3, 70.4, 50.1),
    ]
    return {
        LEADERBOARD_NAME: [
            {"model": m, "scores": {"Score": s, "Chat": c, "Translation": t}} for m, s, c, t in rows
        ]
    }


@contextlib.contextmanager
def demo_site(cache_dir: str | Path, *, steps: int = 300, hang_s: float = 600.0) -> Iterator[MirrorSite]:
    """Build the demo models (once) and serve the demo site on 127.0.0.1 for the duration."""
    models = build_demo_models(cache_dir, steps=steps)
    site = MirrorSite(demo_catalogue(models), leaderboards=demo_leaderboard(), hang_s=hang_s)
    with site:
        yield site


__all__ = ["DEMO_TASK", "LEADERBOARD_NAME", "demo_catalogue", "demo_leaderboard", "demo_site"]
