"""``rlar retrieve "TASK DESCRIPTION"``: one web retrieval of a reward model, printed with its evidence.

Runs the retrieval pipeline in this process with its own headless Chromium. Without ``--nats`` the
validated model is recorded but not registered; with ``--nats URL`` (or ``embedded``) it is registered in
the tool registry on that bus. ``--mirror`` serves the local demo mirror of the hub (tiny models built once
under ``--mirror-cache``) and retrieves from it — nothing leaves 127.0.0.1. The full record (JSON) and the
screenshots are written under ``<run-dir>/retrievals/<request id>/``.

A model is only registered after it passed validation on probe pairs of the task, so a task is needed:
``--task NAME`` (a builtin task: its test split) or ``--examples FILE.jsonl`` ({query, reference} lines).
With ``--mirror`` and neither, the demo site's own task (English→German ``translate``) is used, and said.

Exit status: 0 a model passed validation (registered or validated); 1 bad arguments; 3 no candidate
passed; 4 the hub is unreachable; 5 the retrieval failed before searching; 6 no candidate passed and the
download of at least one that fits failed (the record names the file and the status).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time
import uuid
from pathlib import Path
from typing import Any

from rlar.resources import cache_dir

# rlar.config, rlar.retrieval, rlar.tasks, rlar.standins, bus.client, bus.config, bus.embedded, bus.topology
# and rlar.registry are imported where used: a command's implementation loads when the command runs, so rlar
# --help stays instant.

EXIT_CODES = {
    "registered": 0,
    "validated": 0,
    "no_candidate": 3,
    "hub_unreachable": 4,
    "failed": 5,
    "download_failed": 6,
}


def cmd_retrieve(a: argparse.Namespace) -> int:
    from rlar.config import ConfigError, apply_overrides, build, load_toml
    from rlar.retrieval.config import RetrievalConfig, RetrievalRequest
    from rlar.retrieval.probes import examples_from_task
    from rlar.tasks.builtin import BUILTIN_NAMES

    if a.mirror and a.hub:
        raise ConfigError("--mirror serves its own hub; drop --hub")
    if a.mirror and not a.task and not a.examples:
        from rlar.standins.hub.catalogue import DEMO_TASK

        a.task = DEMO_TASK
        print(
            f"--mirror without --task/--examples: validating on the demo site's task {DEMO_TASK!r}",
            flush=True,
        )
    if not a.examples and not (a.task and examples_from_task(a.task)):
        raise ConfigError(
            "a retrieved model is validated on probes of the task before it is used: give --task NAME "
            f"(a builtin task: {', '.join(sorted(BUILTIN_NAMES))}) or --examples FILE.jsonl "
            "({query, reference} lines)" + (f"; {a.task!r} is not a builtin task" if a.task else "")
        )
    doc: dict[str, Any] = {}
    if a.config:
        doc = dict(load_toml(a.config).get("retriever", {}).get("retrieval", {}))
    apply_overrides(doc, a.set)
    if a.hub:
        doc["hub_url"] = a.hub
    if a.leaderboard:
        doc["leaderboard_urls"] = list(a.leaderboard)
    browser = doc.setdefault("browser", {})
    if a.page_timeout is not None:
        browser["page_timeout_s"] = a.page_timeout
    if a.pace is not None:
        browser["min_interval_s"] = a.pace
    if a.max_candidates is not None:
        doc.setdefault("validation", {})["max_candidates"] = a.max_candidates
    if a.max_download_mb is not None:
        doc.setdefault("fetch", {})["max_download_mb"] = a.max_download_mb
    examples: list[dict[str, Any]] = []
    if a.examples:
        examples = [json.loads(line) for line in Path(a.examples).read_text().splitlines() if line.strip()]
    req_data = {
        "request_id": a.request_id or f"cli-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}",
        "description": a.description,
        "task": a.task or "",
        "domain": a.domain or "",
        "task_type": a.task_type or "",
        "language": a.language or "",
        "max_params": a.max_params,
        "max_vram_gb": a.max_vram_gb,
        "licences": [x.lower() for x in a.licence] if a.licence else None,
        "allow_unknown_licence": a.allow_unknown_licence,
        "min_pass_share": a.min_pass_share,
        "examples": examples,
    }
    request = build(RetrievalRequest, req_data, where="rlar retrieve")
    run_dir = Path(a.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        if a.mirror:
            from rlar.standins.hub.catalogue import LEADERBOARD_NAME, demo_site

            cache = Path(a.mirror_cache) if a.mirror_cache else cache_dir() / "mirror-models"
            print(f"building/reusing the demo mirror's models under {cache} …", flush=True)
            site = stack.enter_context(demo_site(cache, hang_s=60.0))
            doc["hub_url"] = site.url
            doc.setdefault("leaderboard_urls", [site.leaderboard_url(LEADERBOARD_NAME)])
            browser.setdefault("min_interval_s", 0.05)
            browser.setdefault("page_timeout_s", 5.0)
            print(f"mirror hub serving on {site.url}", flush=True)
        cfg = build(RetrievalConfig, doc, where="rlar retrieve")
        record = asyncio.run(_run(cfg, request, run_dir, a.nats))
    from rlar.retrieval.report import render

    rdir = run_dir / "retrievals"
    if a.json:
        print(json.dumps(record, indent=2, default=str))
    else:
        print(render(record))
        print(f"record: {rdir}/{record['request_id']}/record.json")
    return EXIT_CODES.get(record["outcome"], 5)


async def _run(cfg: Any, request: Any, run_dir: Path, nats: str | None) -> dict[str, Any]:
    from rlar.retrieval.browser import BrowserPool
    from rlar.retrieval.pipeline import RetrievalPipeline

    async with BrowserPool(cfg.browser) as pool:
        pipeline = RetrievalPipeline(cfg, pool, run_dir, worker="rlar-retrieve")
        if not nats:
            rec = await pipeline.retrieve(request)
            return rec.to_dict()
        from bus.client import Bus
        from bus.config import NatsConfig
        from bus.embedded import serve
        from bus.topology import declare, ensure_topology
        from rlar.registry import ToolRegistry

        with serve(nats, run_dir) as url:
            bus = await Bus.connect(NatsConfig(url=url), name="rlar-retrieve")
            try:
                await ensure_topology(bus.js, declare())
                registry = ToolRegistry(bus)

                async def register(spec: Any) -> Any:
                    return await registry.register(spec, by="rlar-retrieve")

                rec = await pipeline.retrieve(request, register=register)
            finally:
                await bus.close()
        return rec.to_dict()


def cmd_bench_retrieval(a: argparse.Namespace) -> int:
    from rlar.config import ConfigError, apply_overrides
    from rlar.retrieval import bench

    data = a.data or bench.DEFAULT_DATA.get(a.catalogue)
    if not data:
        raise ConfigError(f"--catalogue {a.catalogue} has no default request file: give --data FILE.jsonl")
    cases = bench.load_cases(data)
    if a.only:
        cases = [c for c in cases if c.id in set(a.only)]
    overrides: dict[str, Any] = {}
    apply_overrides(overrides, a.set)
    run_dir = Path(a.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    cache = Path(a.mirror_cache) if a.mirror_cache else cache_dir() / "mirror-models"
    with contextlib.ExitStack() as stack:
        if a.catalogue == "heldout":
            from rlar.standins.hub.catalogue_heldout import heldout_site

            site = stack.enter_context(heldout_site(cache / "heldout"))
        else:
            from rlar.standins.hub.catalogue import demo_site

            site = stack.enter_context(demo_site(cache / "demo", steps=0, hang_s=30.0))
        results = asyncio.run(bench.run_cases(cases, site.url, run_dir, overrides))
    s = bench.summary(a.catalogue, str(data), results)
    if a.out:
        Path(a.out).write_text(json.dumps(s, indent=2) + "\n")
    print(bench.render(s))
    print(json.dumps({k: v for k, v in s.items() if k != "cases"}))
    return 0


def register(sub: Any, bench: Any) -> None:
    b = bench.add_parser(
        "retrieval",
        help="hits of the web retriever on a local hub-shaped site of known content (real Chromium)",
        description=(
            "Runs each request of a JSONL file (id, description, constraints, examples, acceptable) through "
            "the retrieval pipeline against a local hub-shaped site and counts the requests whose first-"
            'ranked candidate is an acceptable repo (or, for acceptable = "none", where nothing is ranked).'
        ),
    )
    b.add_argument(
        "--catalogue",
        choices=["heldout", "demo"],
        default="heldout",
        help="the site served: heldout (rlar.standins.hub.catalogue_heldout) or demo",
    )
    b.add_argument("--data", help="requests JSONL (default for heldout: data/retrieval/heldout.jsonl)")
    b.add_argument("--only", action="append", help="run only this request id (repeatable)")
    b.add_argument("--run-dir", default="runs/bench-retrieval", help="records and screenshots go here")
    b.add_argument(
        "--mirror-cache",
        help="where the stand-in checkpoints are built once and reused (default <cache>/mirror-models: "
        "$RLAR_CACHE_DIR, else runs/.cache)",
    )
    b.add_argument("--out", help="write the full summary (every case) as JSON here")
    b.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="override a retrieval setting"
    )
    b.set_defaults(fn=cmd_bench_retrieval)

    p = sub.add_parser(
        "retrieve",
        help="find, vet, deploy and validate a reward model from the web for a task",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("description", help="what a good response to the task is")
    p.add_argument(
        "--hub", help="hub base URL (default https://huggingface.co, or [retriever.retrieval].hub_url)"
    )
    p.add_argument("--mirror", action="store_true", help="serve the local demo mirror and retrieve from it")
    p.add_argument(
        "--mirror-cache",
        help="where the mirror's tiny models are built once and reused (default <cache>/mirror-models: "
        "$RLAR_CACHE_DIR, else runs/.cache)",
    )
    p.add_argument("--leaderboard", action="append", help="leaderboard page URL (repeatable)")
    p.add_argument("--task", help="task name (a builtin task supplies validation probes)")
    p.add_argument("--examples", help="JSONL of {query, reference} items to build validation probes from")
    p.add_argument("--domain", help="task domain, e.g. translation (default: none)")
    p.add_argument("--task-type", help="task type, e.g. translation (default: none)")
    p.add_argument(
        "--language", help="language(s) the model must read: a name or ISO code (de, German, en-de)"
    )
    p.add_argument(
        "--max-params",
        help="parameter budget with a unit: 1B, 500M, 150K (a bare number must be a full count ≥ 1,000,000)",
    )
    p.add_argument("--max-vram-gb", type=float, help="VRAM budget: weight bytes × overhead must fit")
    p.add_argument(
        "--max-download-mb", type=float, help="byte cap per candidate in MB (default 4096; 0.1 = 100 kB)"
    )
    p.add_argument("--licence", "--license", action="append", help="allowed licence (repeatable)")
    p.add_argument("--allow-unknown-licence", action="store_true", help="accept models without a licence")
    p.add_argument(
        "--min-pass-share",
        type=float,
        help="share of probe pairs it must rank right (default: the config's, 0.75)",
    )
    p.add_argument("--max-candidates", type=int, help="candidates deployed and validated at most")
    p.add_argument("--page-timeout", type=float, help="seconds per page")
    p.add_argument("--pace", type=float, help="seconds between two pages of one host")
    p.add_argument("--request-id", help="id of this retrieval (default: cli-<time>-<random>)")
    p.add_argument("--run-dir", default="runs/retrieve", help="where the record and screenshots go")
    p.add_argument("--config", help="run config TOML (its [retriever.retrieval] section)")
    p.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="override a retrieval setting"
    )
    p.add_argument(
        "--nats", help="register the tool on this bus (URL or 'embedded'); default: do not register"
    )
    p.add_argument("--json", action="store_true", help="print the record as JSON")
    p.set_defaults(fn=cmd_retrieve)
