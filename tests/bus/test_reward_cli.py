"""``rlar reward score``, ``rlar tools`` and ``rlar bench reward`` as an operator runs them (subprocesses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from bus.client import Bus
from bus.embedded import EmbeddedServer
from rlar.registry import ToolRegistry
from rlar.tools import builtin_specs
from tests.support.cli import rlar_cli
from tests.support.env import actor_env


def test_reward_score_with_an_embedded_bus_prints_one_line_per_record(tmp_path: Path) -> None:
    records = [
        {"task": "arith", "query": "12+7=", "response": "19", "reference": "19"},
        {"task": "copy", "query": "copy:abcd=", "response": "abdc", "reference": "abcd"},
        {
            "task": "humaneval",
            "query": "",
            "response": "def add(a, b):\n    return a + b\n",
            "reference": ["assert add(1, 2) == 3", "assert add(0, 0) == 1"],
        },
        {"task": "x", "query": "q", "response": "r", "tools": ["no_such_tool"]},
        {
            "task": "translate",
            "query": "Hello world",
            "response": "Hallo Welt",
            "reference": "Hallo Welt",
            "tools": [["chrf", 0.5], ["exact_match", 0.5]],
        },
        {"task": "not_a_task", "query": "q", "response": "r"},
    ]
    path = tmp_path / "recs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    mode = "bwrap" if os.access("/usr/bin/bwrap", os.X_OK) else "rlimit-only"
    r = rlar_cli(
        "reward", "score", str(path), "--nats", "embedded", "--timeout", "60", "--sandbox-mode", mode
    )
    assert r.returncode == 0, r.stderr[-3000:]
    out = [json.loads(line) for line in r.stdout.splitlines()]
    assert [o["index"] for o in out] == list(range(len(records)))
    assert (out[0]["tool"], out[0]["status"], out[0]["score"], out[0]["version"]) == (
        "math_verify",
        "ok",
        1.0,
        1,
    )
    assert (out[1]["tool"], out[1]["score"]) == ("exact_match", 0.0)
    assert (out[2]["tool"], out[2]["score"]) == ("code_tests", 0.5) and "1/2 tests passed" in out[2]["reason"]
    assert out[3]["status"] == "abstain" and "unknown tool" in out[3]["reason"]
    assert out[4]["tool"] == ["chrf", "exact_match"] and out[4]["status"] == "ok"
    assert out[4]["score"] == pytest.approx(1.0) and len(out[4]["rewards"]) == 2
    assert out[5]["status"] == "error" and "no tools" in out[5]["reason"]


def test_reward_score_reports_a_timeout_when_no_worker_serves_the_kind(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"task": "t", "query": "q", "response": "r", "reference": "r"}) + "\n")
    # A bus of its own with no reward worker at all (the command registers the built-in tools itself).
    with EmbeddedServer(tmp_path / "nats") as server:
        r = rlar_cli(
            "reward", "score", str(path), "--tool", "exact_match", "--nats", server.url, "--timeout", "1"
        )
    assert r.returncode == 1, r.stderr[-2000:]
    out = json.loads(r.stdout.strip())
    assert out["status"] == "timeout" and "no reward within 1s" in out["reason"]


def test_reward_score_of_a_missing_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    r = rlar_cli("reward", "score", str(tmp_path / "missing.jsonl"), "--nats", "embedded", timeout=60)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        f"rlar reward score: error: {tmp_path / 'missing.jsonl'}: no such file"
    ]


def test_reward_score_with_your_own_function_and_a_record_without_response(tmp_path: Path) -> None:
    (tmp_path / "cli_rewards.py").write_text(
        "def shout(query, response, reference, metadata):\n"
        "    return {'score': 1.0 if response.isupper() else 0.25, "
        "'reason': 'upper' if response.isupper() else 'not'}\n"
    )
    records = [
        {"task": "t", "query": "q", "response": "LOUD"},
        {"task": "t", "query": "q", "reference": "r"},
        {"task": "t", "query": "q", "response": "quiet"},
    ]
    path = tmp_path / "recs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "rlar.app.cli",
            "--log-level",
            "WARNING",
            "reward",
            "score",
            str(path),
            "--python",
            "cli_rewards:shout",
            "--nats",
            "embedded",
            "--timeout",
            "60",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env=actor_env(),
        cwd=tmp_path,
    )
    assert r.returncode == 2, r.stderr[-3000:]
    out = [json.loads(line) for line in r.stdout.splitlines()]
    assert [(o["tool"], o["status"], o["score"], o["reason"]) for o in (out[0], out[2])] == [
        ("shout", "ok", 1.0, "upper"),
        ("shout", "ok", 0.25, "not"),
    ]
    assert out[1]["status"] == "error" and out[1]["score"] is None
    assert out[1]["reason"].startswith("line 2: the record has no 'response'")
    assert "line 2: the record has no 'response'" in r.stderr and "Traceback" not in r.stderr


def test_reward_score_takes_the_tools_of_a_run_config(tmp_path: Path) -> None:
    (tmp_path / "cfg_rewards.py").write_text(
        "def longer(prompts, completions, **kwargs):\n"
        "    return [min(1.0, len(c) / 10) for c in completions]\n"
    )
    config = tmp_path / "run.toml"
    config.write_text(
        '[[tasks]]\nname = "cap"\nsource = "jsonl"\npath = "data.jsonl"\n'
        'spec = { default_tools = [["longer", 1.0], ["exact_match", 1.0]] }\n\n'
        '[[tools]]\nname = "longer"\npython = "cfg_rewards:longer"\ndescription = "Longer is better."\n'
    )
    records = [
        {"task": "cap", "query": "cap:abc=", "response": "Abc", "reference": "Abc"},
        {"task": "other", "query": "q", "response": "12345"},
    ]
    path = tmp_path / "recs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    r = rlar_cli(
        "reward", "score", str(path), "--config", str(config), "--nats", "embedded", "--timeout", "60"
    )
    assert r.returncode == 0, r.stderr[-3000:]
    cap, other = (json.loads(line) for line in r.stdout.splitlines())
    # the config's task: its default_tools, combined; another task: the config's one [[tools]] entry
    assert cap["tool"] == ["longer", "exact_match"] and cap["score"] == pytest.approx((0.3 + 1.0) / 2)
    assert (other["tool"], other["status"], other["score"]) == ("longer", "ok", 0.5)


async def test_tools_commands_list_show_disable_export_and_import(
    bus: Bus, nats_url: str, tmp_path: Path
) -> None:
    reg = ToolRegistry(bus)
    await reg.ensure_builtins()
    name = f"cli_em_{uuid.uuid4().hex[:6]}"
    base = next(s for s in builtin_specs() if s.name == "exact_match")
    await reg.register(base.replace(name=name, impl="exact_match"), by="test")
    await reg.register(base.replace(name=name, impl="exact_match", params={"lowercase": True}), by="test")

    r = rlar_cli("tools", "disable", name, "--reason", "too lenient", "--nats", nats_url)
    assert r.returncode == 0, r.stderr
    st = await reg.status(name)
    assert st["state"] == "disabled" and st["reason"] == "too lenient"

    rows = json.loads(rlar_cli("tools", "list", "--json", "--all", "--nats", nats_url).stdout)
    mine = next(x for x in rows if x["name"] == name)
    assert (mine["version"], mine["state"], mine["reason"]) == (2, "disabled", "too lenient")
    assert name not in {
        x["name"] for x in json.loads(rlar_cli("tools", "list", "--json", "--nats", nats_url).stdout)
    }
    text = rlar_cli("tools", "list", "--nats", nats_url).stdout
    assert "exact_match" in text and "kind" in text.splitlines()[0]

    shown = json.loads(rlar_cli("tools", "show", name, "--nats", nats_url).stdout)
    assert shown["spec"]["version"] == 2 and shown["status"]["state"] == "disabled"
    assert [v["version"] for v in shown["versions"]] == [1, 2]
    assert shown["versions"][0]["registered_by"] == "test"
    assert rlar_cli("tools", "show", f"ghost_{name}", "--nats", nats_url).returncode == 1

    assert rlar_cli("tools", "enable", name, "--nats", nats_url).returncode == 0
    assert (await reg.status(name))["state"] == "enabled"

    export = tmp_path / "tools.jsonl"
    r = rlar_cli("tools", "export", str(export), "--nats", nats_url)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in export.read_text().splitlines()]
    assert {(x["spec"]["name"], x["spec"]["version"]) for x in lines if x["type"] == "tool"} >= {
        (name, 1),
        (name, 2),
    }
    # Importing an unchanged export into the same registry creates no new versions.
    r = rlar_cli("tools", "import", str(export), "--nats", nats_url)
    assert r.returncode == 0, r.stderr
    assert f"{name} v2" in r.stdout and [s.version for s in await reg.versions(name)] == [1, 2]
