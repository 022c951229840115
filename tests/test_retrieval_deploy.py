"""Fetching, vetting and validating checkpoints from the local hub mirror: HTTP and huggingface_hub
backends, integrity checks, refusals before download, and the validation gate's failures."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from rlar.retrieval.adapters import HubAdapter
from rlar.retrieval.config import FetchConfig
from rlar.retrieval.demo_catalogue import demo_catalogue
from rlar.retrieval.demo_models import DemoModels, build_demo_models
from rlar.retrieval.deploy import WeightFetcher
from rlar.retrieval.mirror import MirrorModel, MirrorSite, files_of_dir
from rlar.retrieval.probes import build_probes, examples_from_task
from rlar.retrieval.validate import validate_checkpoint
from tests.conftest import REPO, actor_env

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> DemoModels:
    return build_demo_models(tmp_path_factory.getbasetemp() / "retrieval-demo-untrained", steps=0)


@pytest.fixture(scope="module")
def site(models: DemoModels) -> Iterator[MirrorSite]:
    tampered = MirrorModel(id="evil-lab/tampered-reward", files=files_of_dir(models.good))
    with MirrorSite([*demo_catalogue(models), tampered], hang_s=5) as s:
        for sib in s.repos["evil-lab/tampered-reward"].siblings:  # the API now lies about the weights
            if sib["rfilename"] == "model.safetensors":
                sib["lfs"] = {**sib["lfs"], "sha256": "0" * 64}
        yield s


def _fetcher(site: MirrorSite, tmp_path: Path, **cfg) -> WeightFetcher:
    return WeightFetcher(FetchConfig(**cfg), HubAdapter(site.url), tmp_path / "models")


def _resolve_hits(site: MirrorSite, model_id: str, start: int = 0) -> list[str]:
    return [path for _, _, path, _ in site.requests[start:] if path.startswith(f"/{model_id}/resolve/")]


async def test_weights_are_fetched_over_http_checked_against_the_api_and_reused(
    site: MirrorSite, tmp_path: Path
) -> None:
    fetcher = _fetcher(site, tmp_path, backend="http")
    res = await fetcher.fetch("mirror-lab/mt-de-reward-tiny")
    assert res.ok and res.backend == "http" and len(res.revision) == 40, res
    repo = site.repos["mirror-lab/mt-de-reward-tiny"]
    lfs = {s["rfilename"]: s["lfs"]["sha256"] for s in repo.siblings if "lfs" in s}
    got = {f["name"]: f["sha256"] for f in res.files}
    assert got["model.safetensors"] == lfs["model.safetensors"]
    assert {"config.json", "tokenizer_config.json"} <= set(got)
    assert (Path(res.path) / "model.safetensors").is_file() and len(res.config["id2label"]) == 1
    start = len(site.requests)
    again = await fetcher.fetch("mirror-lab/mt-de-reward-tiny")
    assert again.ok and again.path == res.path and "reused" in again.notes[0]
    assert _resolve_hits(site, "mirror-lab/mt-de-reward-tiny", start) == []


async def test_a_file_that_does_not_match_the_api_is_refused_and_nothing_is_kept(
    site: MirrorSite, tmp_path: Path
) -> None:
    res = await _fetcher(site, tmp_path, backend="http").fetch("evil-lab/tampered-reward")
    assert res.status == "refused" and "model.safetensors: sha256 does not match" in res.reason
    assert not any((tmp_path / "models").rglob("*.safetensors"))


async def test_repos_we_must_not_load_are_refused_before_their_weights_are_fetched(
    site: MirrorSite, tmp_path: Path
) -> None:
    fetcher = _fetcher(site, tmp_path, backend="http", max_download_mb=100)
    start = len(site.requests)
    three = await fetcher.fetch("mirror-lab/translation-reward-3class")
    assert three.status == "refused" and "not a scalar head: 3 labels (bad, acceptable, good)" in three.reason
    assert [
        p.rsplit("/", 1)[1] for p in _resolve_hits(site, "mirror-lab/translation-reward-3class", start)
    ] == ["config.json"]  # only the config was read
    legacy = await fetcher.fetch("legacy-lab/translation-reward-legacy")
    assert legacy.status == "refused" and "pickle" in legacy.reason
    assert _resolve_hits(site, "legacy-lab/translation-reward-legacy", start) == []
    big = await fetcher.fetch("bigco/translation-reward-70b")
    assert big.status == "refused" and "MB > 100 MB" in big.reason
    gone = await fetcher.fetch("ghost-lab/translation-reward-deleted")
    assert gone.status == "error" and "404" in gone.reason


async def test_auto_uses_http_while_hf_hub_offline_and_an_explicit_hf_hub_backend_is_refused(
    site: MirrorSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)  # what HF_HUB_OFFLINE=1 at import gives
    auto = await _fetcher(site, tmp_path, backend="auto").fetch("mirror-lab/dialogue-reward-tiny")
    assert auto.ok and auto.backend == "http" and any("HF_HUB_OFFLINE" in n for n in auto.notes)
    hf = await _fetcher(site, tmp_path / "b", backend="hf_hub").fetch("mirror-lab/dialogue-reward-tiny")
    assert hf.status == "refused" and "HF_HUB_OFFLINE" in hf.reason


def test_huggingface_hub_downloads_from_the_mirror_when_online(site: MirrorSite, tmp_path: Path) -> None:
    # A child process without HF_HUB_OFFLINE: huggingface_hub reads it once, at import.
    env = actor_env()
    env.pop("HF_HUB_OFFLINE", None)
    env.pop("TRANSFORMERS_OFFLINE", None)
    env["HF_HOME"] = str(tmp_path / "hf-home")
    code = (
        "import asyncio, json, sys\n"
        "from pathlib import Path\n"
        "from rlar.retrieval.adapters import HubAdapter\n"
        "from rlar.retrieval.config import FetchConfig\n"
        "from rlar.retrieval.deploy import WeightFetcher\n"
        "f = WeightFetcher(FetchConfig(backend='hf_hub'), HubAdapter(sys.argv[1]), Path(sys.argv[2]))\n"
        "print(json.dumps(asyncio.run(f.fetch('mirror-lab/mt-de-reward-tiny')).to_dict()))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, site.url, str(tmp_path / "models")],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["status"] == "ok" and res["backend"] == "hf_hub", res
    repo = site.repos["mirror-lab/mt-de-reward-tiny"]
    lfs = next(s["lfs"]["sha256"] for s in repo.siblings if s["rfilename"] == "model.safetensors")
    assert {f["name"]: f["sha256"] for f in res["files"]}["model.safetensors"] == lfs
    heads = [m for _, m, p, _ in site.requests if p.startswith("/mirror-lab/mt-de-reward-tiny/resolve/")]
    assert "HEAD" in heads  # huggingface_hub's metadata request, answered with X-Repo-Commit and ETag


async def test_a_local_checkpoint_is_used_without_downloading(
    site: MirrorSite, models: DemoModels, tmp_path: Path
) -> None:
    local = tmp_path / "local"
    shutil.copytree(models.random, local / "acme" / "local-reward")
    start = len(site.requests)
    res = await _fetcher(site, tmp_path, local_dirs=[str(local)]).fetch("acme/local-reward")
    assert res.ok and res.backend == "local" and res.path == str(local / "acme" / "local-reward")
    assert len(site.requests) == start


# -- validation ------------------------------------------------------------------------------------------
PROBES = build_probes(examples_from_task("translate", split="test"), 24, seed=0)


def test_an_untrained_model_fails_the_preference_check_with_its_share(models: DemoModels) -> None:
    rep = validate_checkpoint(str(models.random), PROBES, min_pass_share=0.75, max_latency_ms=1000)
    assert not rep.passed and rep.checks["preference"].startswith("prefers the good response on")
    assert rep.checks["load"] == rep.checks["sane_range"] == rep.checks["latency"] == "pass"
    assert 0.0 <= rep.pass_share < 0.75 and set(rep.by_kind) == {
        "shuffle",
        "truncate",
        "echo",
        "repeat",
        "swap",
    }
    assert rep.calibration == {} and len(rep.samples) == 6


def test_a_constant_model_a_slow_model_and_one_that_cannot_load_fail_with_reasons(
    models: DemoModels, tmp_path: Path
) -> None:
    from transformers import AutoModelForSequenceClassification

    flat = tmp_path / "flat"
    shutil.copytree(models.random, flat)
    m = AutoModelForSequenceClassification.from_pretrained(flat)
    with torch.no_grad():
        m.score.weight.zero_()
    m.save_pretrained(flat)
    rep = validate_checkpoint(str(flat), PROBES, min_pass_share=0.5, max_latency_ms=1e-6)
    assert not rep.passed
    assert "barely vary" in rep.checks["not_constant"] and "ms per item" in rep.checks["latency"]
    assert rep.pass_share == 0.0  # ties are not preferences
    broken = tmp_path / "broken"
    broken.mkdir()
    shutil.copy(models.random / "config.json", broken / "config.json")
    rep = validate_checkpoint(str(broken), PROBES, min_pass_share=0.5, max_latency_ms=1000)
    assert not rep.passed and rep.checks["load"].startswith("could not load")
    assert os.path.isdir(broken)
