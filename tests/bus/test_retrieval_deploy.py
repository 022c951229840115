"""Fetching and vetting checkpoints from the local hub mirror, which answers as the real hub does (file
metadata only with ``blobs=true``, LFS files redirected with ``X-Linked-*`` headers, 401 for unknown and
gated repos): sizes and hashes before any GET, the byte cap enforced before and while downloading, errors
that name the file and status; and the validation gate's failures."""

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

from bus.embedded import free_port
from rlar.retrieval.config import FetchConfig
from rlar.retrieval.deploy import WeightFetcher
from rlar.retrieval.hub_api import HubClient
from rlar.retrieval.probes import build_probes, examples_from_task
from rlar.retrieval.validate import validate_checkpoint
from rlar.standins.hub.catalogue import demo_catalogue
from rlar.standins.hub.mirror import MirrorModel, MirrorSite, files_of_dir
from rlar.standins.hub.models import DemoModels, build_demo_models
from tests.support.env import REPO, actor_env

torch.set_num_threads(1)
GOOD = "mirror-lab/mt-de-reward-tiny"


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> DemoModels:
    return build_demo_models(tmp_path_factory.getbasetemp() / "retrieval-demo-untrained", steps=0)


@pytest.fixture(scope="module")
def site(models: DemoModels) -> Iterator[MirrorSite]:
    def repo(rid: str, **kw) -> MirrorModel:
        return MirrorModel(id=rid, files=files_of_dir(models.good), **kw)

    extra = [
        repo("evil-lab/tampered-reward"),
        repo("quiet-lab/no-sizes-reward", quirks=("no_api_sizes",)),
        repo("quiet-lab/silent-reward", quirks=("no_api_sizes", "no_length_headers")),
        repo("quiet-lab/unhashed-reward", quirks=("no_hashes",)),
        repo("liar-lab/undersized-reward", quirks=("undersized",)),
        repo("gate-lab/gated-reward", gated="manual"),
        repo("odd-lab/branch-only-reward", quirks=("branch_only",)),
        repo("odd-lab/no-head-reward", quirks=("no_head",)),
    ]
    with MirrorSite([*demo_catalogue(models), *extra], hang_s=5) as s:
        for sib in s.repos["evil-lab/tampered-reward"].siblings:  # the API now lies about the weights
            if sib["rfilename"] == "model.safetensors":
                sib["lfs"] = {**sib["lfs"], "sha256": "0" * 64}
        yield s


def _fetcher(site: MirrorSite | str, tmp_path: Path, **cfg) -> WeightFetcher:
    url = site if isinstance(site, str) else site.url
    return WeightFetcher(FetchConfig(**cfg), url, tmp_path / "models")


def _hits(site: MirrorSite, model_id: str, start: int = 0) -> list[tuple[str, str]]:
    """(method, file) of the resolve requests for ``model_id`` since ``start``."""
    prefix = f"/{model_id}/resolve/"
    return [(m, p.rsplit("/", 1)[1]) for _, m, p, _ in site.requests[start:] if p.startswith(prefix)]


def _gets(site: MirrorSite, model_id: str, start: int = 0) -> list[str]:
    return [f for m, f in _hits(site, model_id, start) if m == "GET"]


async def test_sizes_and_hashes_come_with_blobs_true_every_file_is_headed_before_its_get_and_checked(
    site: MirrorSite, tmp_path: Path
) -> None:
    fetcher = _fetcher(site, tmp_path)
    start = len(site.requests)
    res = await fetcher.fetch(GOOD)
    assert res.ok and res.backend == "http" and len(res.revision) == 40, res
    api = [p for _, _, p, _ in site.requests[start:] if p.startswith(f"/api/models/{GOOD}")]
    assert api and all("blobs=true" in p for p in api)
    hits = _hits(site, GOOD, start)
    for name in {f for _, f in hits}:
        assert hits.index(("HEAD", name)) < hits.index(("GET", name)), hits
    repo = site.repos[GOOD]
    lfs = {s["rfilename"]: s["lfs"]["sha256"] for s in repo.siblings if "lfs" in s}
    got = {f["name"]: f for f in res.files}
    assert got["model.safetensors"]["sha256"] == lfs["model.safetensors"]
    assert (got["model.safetensors"]["size_source"], got["model.safetensors"]["sha_source"]) == ("api", "api")
    assert {"config.json", "tokenizer_config.json"} <= set(got)
    assert any(p.startswith("/lfs-cdn/") for _, _, p, _ in site.requests[start:])  # followed the redirect
    assert (Path(res.path) / "model.safetensors").is_file() and len(res.config["id2label"]) == 1
    start = len(site.requests)
    again = await fetcher.fetch(GOOD)
    assert again.ok and again.path == res.path and "reused" in again.notes[-1]
    assert _gets(site, GOOD, start) == []


async def test_the_cap_refuses_before_any_get_whether_sizes_come_from_the_api_or_from_head(
    site: MirrorSite, tmp_path: Path
) -> None:
    small = _fetcher(site, tmp_path, max_download_mb=0.1)  # 100 kB; the weights are ~0.5 MB
    start = len(site.requests)
    res = await small.fetch(GOOD)
    assert res.status == "refused" and "> the cap of 100.0 kB" in res.reason
    assert "largest: model.safetensors" in res.reason and _gets(site, GOOD, start) == []
    assert {p["name"]: p["size_source"] for p in res.planned}["model.safetensors"] == "api"
    # A site that ignores blobs=true: the sizes come from HEAD (X-Linked-Size), still before any GET.
    quiet = "quiet-lab/no-sizes-reward"
    res = await small.fetch(quiet)
    assert res.status == "refused" and "> the cap of 100.0 kB" in res.reason, res
    assert {p["name"]: p["size_source"] for p in res.planned}["model.safetensors"] == "head:x-linked-size"
    assert ("HEAD", "model.safetensors") in _hits(site, quiet, start) and _gets(site, quiet, start) == []
    # 70B under a 4 GB cap: the API's sizes refuse it without a single file request.
    big = await _fetcher(site, tmp_path, max_download_mb=4096).fetch("bigco/translation-reward-70b")
    assert big.status == "refused" and "> the cap of 4,096.0 MB" in big.reason
    assert _hits(site, "bigco/translation-reward-70b", start) == []
    ok = await _fetcher(site, tmp_path / "big").fetch(quiet)
    assert ok.ok, ok


async def test_a_file_whose_size_nobody_states_is_stopped_at_the_cap_while_streaming(
    site: MirrorSite, tmp_path: Path
) -> None:
    silent = "quiet-lab/silent-reward"  # no sizes in the API, none in HEAD, none on the GET
    res = await _fetcher(site, tmp_path, max_download_mb=0.1).fetch(silent)
    assert res.status == "refused" and "model.safetensors: more than" in res.reason, res
    assert "(the limit) arriving; stopped at" in res.reason
    assert any("size unknown before download" in n for n in res.notes)
    assert not any((tmp_path / "models").rglob("*.safetensors*"))  # nothing partial is kept
    ok = await _fetcher(site, tmp_path / "ample", max_download_mb=5).fetch(silent)
    assert ok.ok and {f["name"]: f["sha_source"] for f in ok.files}["model.safetensors"] == "head", ok


async def test_bytes_that_differ_from_what_was_announced_are_refused_and_nothing_is_kept(
    site: MirrorSite, tmp_path: Path
) -> None:
    start = len(site.requests)
    tampered = await _fetcher(site, tmp_path).fetch("evil-lab/tampered-reward")
    assert tampered.status == "refused" and "model.safetensors" in tampered.reason
    assert "X-Linked-Etag" in tampered.reason and "model.safetensors" not in _gets(
        site, "evil-lab/tampered-reward", start
    )
    under = await _fetcher(site, tmp_path).fetch("liar-lab/undersized-reward")
    assert under.status == "refused" and "model.safetensors: more than the" in under.reason, under
    assert "bytes announced arriving" in under.reason
    unhashed = await _fetcher(site, tmp_path).fetch("quiet-lab/unhashed-reward")
    assert unhashed.status == "refused" and "no sha256 stated for model.safetensors" in unhashed.reason
    assert not any((tmp_path / "models").rglob("*.safetensors*"))
    lax = await _fetcher(site, tmp_path, require_sha256=False).fetch("quiet-lab/unhashed-reward")
    assert lax.ok and {f["name"]: f["sha_source"] for f in lax.files}["model.safetensors"] == ""


async def test_errors_name_the_file_and_the_status_and_an_unreachable_hub_is_its_own_status(
    site: MirrorSite, tmp_path: Path
) -> None:
    gated = await _fetcher(site, tmp_path).fetch("gate-lab/gated-reward")
    assert gated.status == "refused" and gated.reason.startswith("config.json: HTTP 401 GatedRepo"), gated
    assert "no access for an anonymous client" in gated.reason
    gone = await _fetcher(site, tmp_path).fetch("ghost-lab/translation-reward-deleted")
    assert gone.status == "refused"
    assert gone.reason.startswith("model info of ghost-lab/translation-reward-deleted: HTTP 401 RepoNotFound")
    rev = await _fetcher(site, tmp_path, revision="v9").fetch(GOOD)
    assert rev.status == "error" and "HTTP 404 RevisionNotFound" in rev.reason
    dead = f"http://127.0.0.1:{free_port()}"
    down = await _fetcher(dead, tmp_path, connect_timeout_s=2).fetch(GOOD)
    assert (
        down.status == "unreachable" and f"model info of {GOOD}: hub unreachable: ConnectError" in down.reason
    )
    assert HubClient(site.url).probe() == 200


async def test_servers_that_resolve_branches_only_or_refuse_head_are_still_fetched_and_checked(
    site: MirrorSite, tmp_path: Path
) -> None:
    branch = await _fetcher(site, tmp_path).fetch("odd-lab/branch-only-reward")  # no sha in the API either
    assert branch.ok and branch.revision == site.repos["odd-lab/branch-only-reward"].sha, branch
    assert {f["name"]: f["sha_source"] for f in branch.files}["model.safetensors"] == "api"
    nohead = await _fetcher(site, tmp_path).fetch("odd-lab/no-head-reward")
    assert nohead.ok and any("answers HEAD with 405" in n for n in nohead.notes), nohead
    capped = await _fetcher(site, tmp_path / "c", max_download_mb=0.1).fetch("odd-lab/no-head-reward")
    assert capped.status == "refused" and "> the cap of 100.0 kB" in capped.reason  # the API's sizes


async def test_repos_we_must_not_load_are_refused_before_their_weights_are_fetched(
    site: MirrorSite, tmp_path: Path
) -> None:
    fetcher = _fetcher(site, tmp_path, max_download_mb=100)
    start = len(site.requests)
    three = await fetcher.fetch("mirror-lab/translation-reward-3class")
    assert three.status == "refused" and "not a scalar head: 3 labels (bad, acceptable, good)" in three.reason
    assert _gets(site, "mirror-lab/translation-reward-3class", start) == ["config.json"]
    legacy = await fetcher.fetch("legacy-lab/translation-reward-legacy")
    assert legacy.status == "refused" and "pickle" in legacy.reason
    assert _hits(site, "legacy-lab/translation-reward-legacy", start) == []


async def test_auto_is_http_and_an_explicit_hf_hub_backend_is_refused_while_hf_hub_offline(
    site: MirrorSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)  # what HF_HUB_OFFLINE=1 at import gives
    auto = await _fetcher(site, tmp_path, backend="auto").fetch("mirror-lab/dialogue-reward-tiny")
    assert auto.ok and auto.backend == "http"
    hf = await _fetcher(site, tmp_path / "b", backend="hf_hub").fetch("mirror-lab/dialogue-reward-tiny")
    assert hf.status == "refused" and "HF_HUB_OFFLINE" in hf.reason


def test_huggingface_hubs_own_client_reads_the_mirror_as_it_reads_the_hub(
    site: MirrorSite, models: DemoModels, tmp_path: Path
) -> None:
    # A child process without HF_HUB_OFFLINE: huggingface_hub reads it once, at import. Loading the local
    # embedding model and a reward model first must not switch the hub off for the process.
    env = actor_env()
    env.pop("HF_HUB_OFFLINE", None)
    env.pop("TRANSFORMERS_OFFLINE", None)
    env["HF_HOME"] = str(tmp_path / "hf-home")
    code = (
        "import asyncio, json, os, sys\n"
        "from pathlib import Path\n"
        "from rlar.agent.offline import Embedder\n"
        "from rlar.tools import builtin_specs, make_tool\n"
        "specs = {s.name: s for s in builtin_specs()}\n"
        "make_tool(specs['embedding_similarity']); Embedder()(['x'])\n"
        "rm = specs['reward_model']\n"
        "make_tool(rm.replace(params={**rm.params, 'path': sys.argv[4]}))\n"
        "from huggingface_hub import HfApi, constants, get_hf_file_metadata, hf_hub_url\n"
        "offline = [os.environ.get('HF_HUB_OFFLINE'), constants.is_offline_mode()]\n"
        "from rlar.retrieval.config import FetchConfig\n"
        "from rlar.retrieval.deploy import WeightFetcher\n"
        "url, out, rid = sys.argv[1:4]\n"
        "api = HfApi(endpoint=url)\n"
        "plain = {s.rfilename: s.size for s in api.model_info(rid).siblings}\n"
        "full = {s.rfilename: [s.size, s.lfs.sha256 if s.lfs else None] for s in\n"
        "        api.model_info(rid, files_metadata=True).siblings}\n"
        "meta = get_hf_file_metadata(hf_hub_url(rid, 'model.safetensors', endpoint=url))\n"
        "f = WeightFetcher(FetchConfig(backend='hf_hub'), url, Path(out))\n"
        "res = asyncio.run(f.fetch(rid)).to_dict()\n"
        "print(json.dumps({'plain': plain, 'full': full, 'meta': [meta.size, meta.etag, meta.commit_hash],\n"
        "                  'res': res, 'offline': offline}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, site.url, str(tmp_path / "models"), GOOD, str(models.random)],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["offline"] == [None, False]
    repo = site.repos[GOOD]
    weights = next(s for s in repo.siblings if s["rfilename"] == "model.safetensors")
    assert set(got["plain"].values()) == {None}  # no blobs=true: names only, as on the hub
    assert got["full"]["model.safetensors"] == [weights["size"], weights["lfs"]["sha256"]]
    assert got["meta"] == [weights["size"], weights["lfs"]["sha256"], repo.sha]  # from the 302's X-Linked-*
    res = got["res"]
    assert res["status"] == "ok" and res["backend"] == "hf_hub", res
    assert {f["name"]: f["sha256"] for f in res["files"]}["model.safetensors"] == weights["lfs"]["sha256"]


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
