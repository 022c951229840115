"""Every held-out figure of the reward-reading code in one JSON, at any commit, and the difference between two.

    rlar bench behaviour [--repo PATH] [--only math,answers,routing,synthesis,sandbox] --out F.json
    rlar bench behaviour --compare BEFORE.json AFTER.json

A refactor that claims "behaviour unchanged" runs this at the commit before it and at the commit after it (a
``git worktree`` of the old commit as ``--repo``) and compares. Each set runs through the CLI of the checkout
given (``python -m rlar.app.cli`` with that checkout first on ``PYTHONPATH``), so the old code is measured by
the old code:

- math: ``rlar bench math`` on every ``data/math_pairs*.jsonl`` (per pair: which are missed, false positives);
- answers: ``rlar bench answers`` on ``data/answers_heldout.jsonl`` and the labelled real-model outputs;
- routing: ``rlar bench routing --no-held-out`` on every ``data/routing/*.jsonl`` (the deployed decisions, their
  confidences and mistakes; the held-out refits are left out: they take an hour here and read the same code);
- synthesis: ``rlar bench synthesis --details`` on ``data/instructions_labelled.jsonl`` and every
  ``data/synthesis/heldout*.jsonl`` (per instruction: registered or refused and why, labels right);
- sandbox: ``test_sandbox_hacks.py`` (the hack and escape cases, each with its expected verdict), each test's
  outcome.

Timings (keys ending in ``_s``, ``seconds``, ``wall``...) are dropped: they differ from run to run. Everything
else must be equal for "unchanged"; ``--compare`` prints each path that differs and exits 1 if any does.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SETS = ("math", "answers", "routing", "synthesis", "sandbox")
_TIMING = re.compile(
    r"(_s|_ms|seconds|wall|latency|elapsed|per_s|_per_sec|started|finished_at)$|_s_|^time_|^wall|^latency",
    re.I,
)
# a duration inside a message ("p95 0.05 ms", "took 1.2 s")
_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b")
_PASSED = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+)")


def strip_timings(value: Any) -> Any:
    """``value`` without the keys that hold times (recursively)."""
    if isinstance(value, dict):
        return {k: strip_timings(v) for k, v in value.items() if not _TIMING.search(str(k))}
    if isinstance(value, list):
        return [strip_timings(v) for v in value]
    if isinstance(value, str):
        return _DURATION.sub("<duration>", value)
    return value


def _cli(repo: Path, args: list[str], timeout_s: float = 1800.0) -> dict[str, Any]:
    """The JSON line a ``rlar bench`` command of ``repo`` prints last; an error record if it failed."""
    env = {**os.environ, "PYTHONPATH": str(repo), "TOKENIZERS_PARALLELISM": "false"}
    cmd = [sys.executable, "-m", "rlar.app.cli", "--log-level", "WARNING", *args]
    try:
        done = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout_s:.0f} s: {' '.join(args)}"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"error": f"exit {done.returncode}: {' '.join(args)}: {done.stderr[-800:]}"}
    return dict(strip_timings(json.loads(lines[-1].replace(str(repo), "<repo>"))))


def _files(repo: Path, pattern: str) -> list[Path]:
    """The files of ``repo`` matching ``pattern``, relative to it (the commands run in it, and paths in their
    output must not depend on where the checkout is)."""
    return sorted(p.relative_to(repo) for p in repo.glob(pattern) if p.is_file())


def run_math(repo: Path) -> dict[str, Any]:
    return {
        p.name: _cli(repo, ["bench", "math", "--data", str(p), "--json"])
        for p in _files(repo, "data/math_pairs*.jsonl")
    }


def run_answers(repo: Path) -> dict[str, Any]:
    files = [
        repo / "data/answers_heldout.jsonl",
        repo / "data/real_outputs/smollm2_135m_instruct_labelled.jsonl",
    ]
    return {p.name: _cli(repo, ["bench", "answers", "--data", str(p), "--json"]) for p in files if p.exists()}


def run_routing(repo: Path) -> dict[str, Any]:
    return {
        p.name: _cli(
            repo, ["bench", "routing", "--backend", "offline", "--data", str(p), "--json", "--no-held-out"]
        )
        for p in _files(repo, "data/routing/*.jsonl")
    }


def run_synthesis(repo: Path) -> dict[str, Any]:
    files = [Path("data/instructions_labelled.jsonl"), *_files(repo, "data/synthesis/heldout*.jsonl")]
    return {
        p.name: _cli(repo, ["bench", "synthesis", "--data", str(p), "--split", "all", "--json", "--details"])
        for p in files
    }


def run_sandbox(repo: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(repo)}
    (cases_file,) = _files(repo, "tests/**/test_sandbox_hacks.py")  # wherever its tier folder puts it
    cmd = [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", str(cases_file)]
    done = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=1800)
    cases = {}
    for line in done.stdout.splitlines():
        m = _PASSED.match(line)
        if m:
            cases[m.group(2).rsplit("::", 1)[-1]] = m.group(1)
    return {"exit": done.returncode, "tests": dict(sorted(cases.items()))}


RUNNERS = {
    "math": run_math,
    "answers": run_answers,
    "routing": run_routing,
    "synthesis": run_synthesis,
    "sandbox": run_sandbox,
}


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """The paths where ``a`` and ``b`` differ, each with both values (shortened); lists of one length are
    compared item by item."""
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in differences(x, y, f"{path}[{i}]")
        ]
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                out.append(f"{path}/{k}: only in {'after' if k not in a else 'before'}")
            else:
                out += differences(a[k], b[k], f"{path}/{k}")
        return out
    if a != b:
        return [f"{path}: {json.dumps(a)[:200]} -> {json.dumps(b)[:200]}"]
    return []


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, default=REPO, help="the checkout measured (default: this one)")
    ap.add_argument("--only", default=",".join(SETS), help=f"comma-separated, of {', '.join(SETS)}")
    ap.add_argument("--out", type=Path, help="write the figures here (JSON)")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"), help="compare two outputs")
    args = ap.parse_args(argv)
    if args.compare:
        before, after = (strip_timings(json.loads(p.read_text())) for p in args.compare)
        diffs = differences(before.get("sets", {}), after.get("sets", {}))
        for line in diffs:
            print(line)
        counts = {k: len(v) for k, v in after.get("sets", {}).items() if isinstance(v, dict)}
        print(json.dumps({"identical": not diffs, "differences": len(diffs), "files_per_set": counts}))
        return 1 if diffs else 0
    chosen = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(chosen) - set(SETS))
    if unknown:
        ap.error(f"unknown set(s) {unknown}: choose from {', '.join(SETS)}")
    repo = args.repo.resolve()
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True
    ).stdout.strip()
    t0 = time.time()
    out: dict[str, Any] = {"repo": str(repo), "commit": commit, "sets": {}}
    for name in chosen:
        out["sets"][name] = RUNNERS[name](repo)
        print(f"{name}: done ({time.time() - t0:.0f} s)", file=sys.stderr)
    errors = [
        f"{s}/{f}"
        for s, files in out["sets"].items()
        for f, v in files.items()
        if isinstance(v, dict) and "error" in v
    ]
    out["errors"] = errors
    text = json.dumps(out, sort_keys=True)
    if args.out:
        args.out.write_text(text + "\n")
    print(
        json.dumps(
            {"commit": commit, "sets": chosen, "errors": errors, "minutes": round((time.time() - t0) / 60, 1)}
        )
    )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
