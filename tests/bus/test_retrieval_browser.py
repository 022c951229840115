"""The browser pool and the site adapters in real headless Chromium against the local hub mirror
(127.0.0.1 only): page shapes, failures with a status, containment, pacing, and a browser that dies."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bus.embedded import free_port
from rlar.retrieval.adapters import HubAdapter, LeaderboardAdapter
from rlar.retrieval.browser import BrowserPool
from rlar.retrieval.config import BrowserConfig
from rlar.standins.hub.catalogue import LEADERBOARD_NAME, demo_catalogue, demo_leaderboard
from rlar.standins.hub.mirror import MirrorModel, MirrorSite, files_of_dir
from rlar.standins.hub.models import build_demo_models

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian chromium at /usr/bin/chromium (apt install chromium)"
    ),
]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MirrorSite]:
    # Untrained checkpoints are enough to read pages; shared with other test files of the session.
    models = build_demo_models(tmp_path_factory.getbasetemp() / "retrieval-demo-untrained", steps=0)
    extra = [
        MirrorModel(
            id="plain-lab/markup-only-reward",
            license="mit",
            downloads=77,
            likes=3,
            behaviour="dom_only",
            tags=["reward-model"],
            files=files_of_dir(models.good),
        ),
        MirrorModel(
            id="leaky-lab/external-pixel-reward",
            license="mit",
            extra_html="<img src='http://192.0.2.1/pixel.png'>",
            files=files_of_dir(models.good),
        ),
    ]
    with MirrorSite(demo_catalogue(models) + extra, leaderboards=demo_leaderboard(), hang_s=20) as s:
        yield s


@pytest.fixture(scope="module")
async def pool(site: MirrorSite) -> AsyncIterator[BrowserPool]:
    # A page's budget only a broken page misses (a loaded machine takes seconds for a real one); the hang test
    # gives its visit a short one.
    cfg = BrowserConfig(contexts=2, page_timeout_s=60.0, min_interval_s=0.0)
    async with BrowserPool(cfg, [site.url]) as p:
        yield p


async def test_search_and_model_pages_are_read_from_their_embedded_props(
    site: MirrorSite, pool: BrowserPool, tmp_path: Path
) -> None:
    hub = HubAdapter(site.url)
    ev, data = await pool.visit(
        hub.search_url("translation reward", pipeline_tag="text-classification"),
        purpose="search",
        extract_js=hub.search_js,
        screenshot=tmp_path / "s.png",
        screenshot_rel="s.png",
    )
    assert ev.status == "ok" and ev.http_status == 200 and ev.screenshot == "s.png"
    assert (tmp_path / "s.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    items, problems = hub.parse_search(data)
    ids = [i.model_id for i in items]
    assert problems == [] and "mirror-lab/translation-reward-3class" in ids
    assert all("translation" in i and "reward" in i for i in ids)  # every term in the id, as on the hub
    downloads = [i.downloads or 0 for i in items]
    assert downloads == sorted(downloads, reverse=True)  # sort=downloads
    assert len(data["cards"]) == len(items) and data["has_search_box"]

    ev, data = await pool.visit(
        hub.model_url("mirror-lab/mt-de-reward-tiny"), purpose="model", extract_js=hub.model_js
    )
    f = hub.parse_model(data, "mirror-lab/mt-de-reward-tiny", ev.url)
    assert (f.pipeline_tag, f.library_name, f.license) == (
        "text-classification",
        "transformers",
        "apache-2.0",
    )
    assert f.parameters and f.parameters > 100_000 and f.dtype_params == {"F32": f.parameters}
    assert (f.downloads, f.likes, f.architectures) == (900, 6, ["LlamaForSequenceClassification"])
    assert f.base_model == ["rlar/tiny-llama-bytes"] and "held-out EN-DE pairs" in f.benchmark_scores
    assert f.missing == [] and set(f.sources.values()) == {"props"}


async def test_a_page_without_embedded_props_is_read_from_its_markup(
    site: MirrorSite, pool: BrowserPool
) -> None:
    hub = HubAdapter(site.url)
    ev, data = await pool.visit(
        hub.model_url("plain-lab/markup-only-reward"), purpose="model", extract_js=hub.model_js
    )
    f = hub.parse_model(data, "plain-lab/markup-only-reward", ev.url)
    assert (f.license, f.pipeline_tag, f.library_name, f.downloads) == (
        "mit",
        "text-classification",
        "transformers",
        77,
    )
    assert f.parameters and f.parameters > 100_000
    assert {f.sources[k] for k in ("license", "pipeline_tag", "downloads", "parameters")} == {"dom"}
    assert "architectures" in f.missing  # only the props carry the architecture


async def test_a_missing_page_and_a_page_that_never_loads_return_a_status_and_the_pool_keeps_serving(
    site: MirrorSite, pool: BrowserPool, tmp_path: Path
) -> None:
    hub = HubAdapter(site.url)
    ev, data = await pool.visit(
        hub.model_url("ghost-lab/translation-reward-deleted"),
        purpose="model",
        extract_js=hub.model_js,
        screenshot=tmp_path / "404.png",
    )
    assert (ev.status, ev.http_status, ev.reason, data) == ("http_error", 404, "HTTP 404", None)
    assert (tmp_path / "404.png").exists()  # the error page is evidence too
    t0 = time.monotonic()
    ev, data = await pool.visit(
        hub.model_url("slow-lab/translation-reward-slow"),
        purpose="model",
        extract_js=hub.model_js,
        timeout_s=2.0,
    )
    assert ev.status == "timeout" and "did not finish loading within 2s" in ev.reason and data is None
    assert time.monotonic() - t0 < site.hang_s / 4, "the visit ends at its budget, not when the page would"
    ev, data = await pool.visit(
        hub.model_url("mirror-lab/mt-reward-base"), purpose="model", extract_js=hub.model_js
    )
    assert ev.status == "ok" and data["h1"]
    ev, _ = await pool.visit(f"http://127.0.0.1:{free_port()}/", purpose="model")  # nothing listens there
    assert ev.status == "error" and "ERR_CONNECTION_REFUSED" in ev.reason


async def test_hosts_outside_the_allowed_set_are_refused_and_their_resources_aborted(
    site: MirrorSite, pool: BrowserPool
) -> None:
    ev, data = await pool.visit("http://example.com/", purpose="search")
    assert (ev.status, data) == ("blocked", None) and "not an allowed host" in ev.reason
    before = pool.blocked_requests
    hub = HubAdapter(site.url)
    ev, _ = await pool.visit(
        hub.model_url("leaky-lab/external-pixel-reward"), purpose="model", extract_js=hub.model_js
    )
    assert ev.status == "ok" and pool.blocked_requests == before + 1


async def test_navigations_to_one_host_are_paced(site: MirrorSite) -> None:
    cfg = BrowserConfig(contexts=2, page_timeout_s=60.0, min_interval_s=0.5)
    async with BrowserPool(cfg, [site.url]) as paced:
        await paced.visit(f"{site.url}/models?search=warmup", purpose="search")  # first navigations are slow
        start = len(site.requests)
        await asyncio.gather(
            *(paced.visit(f"{site.url}/models?search=pace{i}", purpose="search") for i in range(3))
        )
        starts = [t for t, _ in list(paced.navigations)[-3:]]
    assert all(b - a >= 0.5 - 1e-3 for a, b in itertools.pairwise(starts)), starts
    times = sorted(t for t, _, path, _ in site.requests[start:] if "search=pace" in path)
    # What the site sees: no burst (unpaced, the three arrive within ~0.05 s). The browser adds its own
    # jitter of up to a few tenths of a second per request on a busy machine, hence the slack.
    assert len(times) == 3 and times[-1] - times[0] >= 0.4, times
    agents = {ua for _, _, path, ua in site.requests[start:] if "search=pace" in path}
    assert agents == {cfg.user_agent}


async def test_the_leaderboard_page_is_read_into_scores(site: MirrorSite, pool: BrowserPool) -> None:
    lb = LeaderboardAdapter(site.leaderboard_url(LEADERBOARD_NAME), hub_url=site.url)
    ev, data = await pool.visit(lb.url, purpose="leaderboard", extract_js=lb.tables_js)
    table = lb.parse(data)
    assert ev.status == "ok" and table.problems == [] and table.score_column == "Score"
    assert table.score("mirror-lab/mt-reward-base") == pytest.approx(0.881)
    assert table.scores_of("mirror-lab/mt-de-reward-tiny")["Translation"] == 81.7


async def test_a_browser_that_died_is_relaunched_on_the_next_visit(site: MirrorSite) -> None:
    async with BrowserPool(
        BrowserConfig(contexts=1, page_timeout_s=60.0, min_interval_s=0.0), [site.url]
    ) as p:
        await p._browser.close()  # what a crashed chromium looks like to Playwright: disconnected
        ev, _ = await p.visit(f"{site.url}/models", purpose="search")
        assert ev.status == "ok" and p.launches == 2


def test_rlar_retrieve_exits_4_when_the_hub_does_not_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from rlar.app.cli import main

    dead = f"http://127.0.0.1:{free_port()}"
    args = [
        "retrieve",
        "judge German translations",
        "--task",
        "translate",
        "--hub",
        dead,
        "--run-dir",
        str(tmp_path),
        "--request-id",
        "down",
    ]
    assert main(args) == 4
    out = capsys.readouterr().out
    assert "outcome: hub_unreachable" in out and "hub: hub unreachable: ConnectError" in out
    assert (tmp_path / "retrievals" / "down" / "record.json").is_file()
