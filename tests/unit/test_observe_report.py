"""The run report: one self-contained HTML file from a run directory's files (curves, per-task table, tools
with origins and validation, routing, timings, events, config), text from the bus escaped, nothing loaded
from anywhere; and the ablation report linking each mode's run."""

from __future__ import annotations

import json
import random
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from rlar.app.cli import main
from rlar.observe.report import write_ablation_report, write_report

VOID = {"meta", "br", "hr", "img", "input", "link", "line"}


class _Checker(HTMLParser):
    """Collects tags and checks that every element is closed in order."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, (
            f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
        )
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(text: str) -> _Checker:
    c = _Checker()
    c.feed(text)
    c.close()
    assert c.stack == [], c.stack
    return c


def _run_dir(tmp: Path, steps: int, tasks: list[str], *, seed: int = 0) -> Path:
    rng = random.Random(seed)
    run = tmp / f"run-{seed}"
    run.mkdir()
    t = 1_800_000_000.0
    with open(run / "metrics.jsonl", "w") as f:
        for step in range(1, steps + 1):
            rec: dict[str, Any] = {
                "step": step,
                "version": step,
                "samples": 32,
                "t_start": t,
                "t_end": t + 1.5,
                "step_s": 1.5,
                "loss": rng.random(),
                "staleness_max": step % 3,
                "abstain_frac": 0.1,
                "trained_rows": 8,
                "reward_mean": step / steps,
            }
            for task in tasks:
                if rng.random() < 0.8:
                    rec[f"reward/{task}"] = rng.random()
                    rec[f"abstain/{task}"] = 0.25
            f.write(json.dumps(rec) + "\n")
            t += 2.0
        f.write(
            '{"step": 2, "version": 2, "samples": 32, "reward_mean": 0.0}\n'
        )  # a resumed learner's repeat
        f.write('{"step": 3, "trunc')  # a line being written
    (run / "summary.json").write_text(
        json.dumps(
            {
                "reason": "finished",
                "minutes": 1.5,
                "crashes": 0,
                "warnings": ["no signal <in> 20 steps"],
                "tasks": {
                    t: {
                        "tools": [
                            {"tool": "vowel_free", "version": 2, "origin": "synthesised v2", "steps": 7}
                        ]
                    }
                    for t in tasks
                },
            }
        )
    )
    (run / "config.toml").write_text('[train]\nname = "r&d"\n[learner]\nmax_steps = 40\n')
    observed = {
        "tools": [
            {
                "name": "math_verify",
                "version": 1,
                "kind": "rule",
                "origin": "built-in",
                "state": "enabled",
                "validation": None,
                "stats": {"calls": 90, "abstain_rate": 0.1, "error_rate": 0.0, "mean_latency_s": 0.002},
                "registered_by": "builtin",
                "registered_at": t,
            },
            {
                "name": "vowel_free",
                "version": 2,
                "kind": "sandbox",
                "origin": "synthesized",
                "state": "quarantined",
                "validation": {"passed": True, "reason": "", "checks": {}},
                "stats": {"calls": 3},
            },
            {
                "name": "reward-model-x",
                "version": 1,
                "kind": "model",
                "origin": "retrieved",
                "state": "enabled",
                "validation": {"passed": False, "reason": "good < bad on 3 probes", "checks": {}},
                "stats": {},
            },
        ],
        "registrations": [
            {
                "name": "vowel_free",
                "version": 2,
                "kind": "sandbox",
                "action": "registered",
                "by": "synthesizer",
                "at": t,
            }
        ],
        "decisions": [
            {
                "task": tasks[0],
                "tools": [{"tool": "math_verify", "version": 1}],
                "backend": "offline",
                "confidence": 0.9,
                "reason": "<script>alert(1)</script>",
                "fallback": False,
                "at": t,
            }
        ],
        "requests": [{"request_id": "r1", "task": tasks[-1], "description": "count the vowels", "at": t}],
        "events": [
            {"actor": "supervisor", "kind": "crash", "level": "error", "message": "rollout-0 exited", "at": t}
        ],
        "dead_letters": [{"subject": "rlar.samples.arith", "reason": "not valid MessagePack", "at": t}],
        "tracking": {
            "backends": {"tensorboard": str(run / "tensorboard")},
            "errors": {},
            "logged_steps": steps,
        },
    }
    (run / "observed.json").write_text(json.dumps(observed))
    return run


@pytest.mark.parametrize("steps,tasks", [(40, ["arith", "copy", "x<y&z"]), (1, ["translate"]), (0, ["chat"])])
def test_the_report_is_one_self_contained_file_with_every_section(
    tmp_path: Path, steps: int, tasks: list[str]
) -> None:
    run = _run_dir(tmp_path, steps, tasks)
    text = write_report(run).read_text()
    doc = _parse(text)
    names = [t for t, _ in doc.tags]
    # loads nothing: no script, no external style or image, no URL with a scheme
    assert "script" not in names and "img" not in names and "link" not in names
    assert not re.search(r"(?i)(https?:)?//[a-z]|url\(|@import", text.replace("http://www.w3.org", ""))
    body = "".join(doc.text)
    for heading in (
        "Outcome",
        "Reward per task",
        "Learner",
        "Tasks",
        "Tools",
        "Routing",
        "Timings",
        "Events and dead letters",
        "Tracking",
        "Config",
    ):
        assert heading in [d for d in doc.text], heading
    # bus text is escaped, config shown as text
    assert "<script>alert(1)</script>" in body and "&lt;script&gt;" in text
    assert 'name = "r&d"' in body and "no signal <in> 20 steps" in body
    # tools with origin, state and validation; registry changes; routing; events; dead letters
    for word in (
        "built-in",
        "synthesized",
        "retrieved",
        "quarantined",
        "good < bad on 3 probes",
        "count the vowels",
        "rollout-0 exited",
        "not valid MessagePack",
    ):
        assert word in body, word
    # per task, the tools that scored it (summary.json) and the abstained share (metrics.jsonl)
    assert "vowel_free v2 (synthesised v2): steps 7" in body
    abstained = re.findall(r'<td class="n">[^<]*</td><td class="n">([^<]*)</td><td>[^<]*vowel_free', text)
    assert abstained == (["0.250"] * len(tasks) if steps else ["–"] * len(tasks))
    charts = [a for t, a in doc.tags if t == "svg"]
    assert len(charts) >= (1 + len(tasks) if steps else 1)
    if steps > 1:
        assert f"{steps} steps logged." in body
        assert any(t == "polyline" for t, _ in doc.tags)
        # the repeated step counts once; its last record wins
        assert re.search(rf"learner steps</span><b>{steps}</b>", text)
        for task in tasks:
            assert f"reward: {task}" in body


def test_the_ablation_report_compares_modes_and_links_their_reports(tmp_path: Path) -> None:
    runs = [_run_dir(tmp_path, 12, ["arith"], seed=s) for s in (1, 2)]
    for r in runs:
        write_report(r)
    rows = [
        {
            "mode": "agentic",
            "seed": 1,
            "run_dir": str(runs[0]),
            "steps": 12,
            "reward_all": {"first": 0.1, "last": 0.4},
            "eval": {"arith/nem": 0.5},
        },
        {
            "mode": "static:exact_match",
            "seed": 2,
            "run_dir": str(runs[1]),
            "steps": 12,
            "eval": {"arith/nem": 0.3},
        },
    ]
    curves = {"agentic s1": [(1, 0.1), (2, 0.3)], "static:exact_match s2": [(1, 0.2), (2, 0.2)]}
    text = write_ablation_report(tmp_path, rows, curves, title="demo").read_text()
    doc = _parse(text)
    hrefs = [a["href"] for t, a in doc.tags if t == "a"]
    assert hrefs == ["run-1/report.html", "run-2/report.html"]
    body = "".join(doc.text)
    assert (
        "agentic s1" in body and "static:exact_match s2" in body and "arith/nem" in body and "0.500" in body
    )


def test_rlar_report_rewrites_a_run_report_and_refuses_a_directory_that_is_no_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run_dir(tmp_path, 5, ["arith"])
    assert main(["report", str(run)]) == 0
    assert (run / "report.html").stat().st_size > 1000
    assert main(["report", str(tmp_path / "nothing")]) == 1
    assert "not a run directory" in capsys.readouterr().err
