"""docs/architecture.md's recipes, followed with throwaway names: a new tool kind and a new dataset format.

Each recipe names the files a change edits by hand; everything else must pick the new name up by itself.
A subprocess makes the change the recipe makes (the new enum member before the modules that derive from it
are imported; the new ``FORMATS`` entry written into a copy of the tree), then checks every derived list.
(The actor-kind recipe is followed by tests/test_kinds.py.)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _run(code: str, cwd: Path, tree: Path = REPO) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    out: dict[str, object] = json.loads(r.stdout.strip().splitlines()[-1])
    return out


TOOL_KIND = """
import json
from enum import StrEnum
import bus.messages as m

# Recipe step 1: the member of bus.messages.ToolKind (here a copy of the enum with one more member).
m.ToolKind = StrEnum("ToolKind", {**{k.name: k.value for k in m.ToolKind}, "PROBE": "probe"})

from bus import subjects, topology
from rlar.deploy.auth import ROLES
from rlar.kinds import ACTOR_KINDS
from rlar.tools.pyfunc import PythonToolConfig, TRUSTED_KINDS
from rlar.app.cli import build_parser

out = {
    "subjects": list(subjects.TOOL_KINDS),
    "score_subject": subjects.score("probe"),
    "consumer": any(c.durable == topology.reward_consumer("probe") for c in topology.declare().consumers),
    "role_consumes": any("reward-probe" in p for p in ROLES["reward"].publish),
    "actor_kind": dict(ACTOR_KINDS["reward-probe"].implied),
    "pyfunc": PythonToolConfig(name="p", python="m:f", description="d", kind="probe").kind,
    "trusted": "probe" in TRUSTED_KINDS,
}
ns = build_parser().parse_args(["tools", "register", "--python", "m:f", "--description", "d", "--kind", "probe"])
out["cli"] = ns.kind
print(json.dumps(out))
"""


def test_a_new_tool_kind_by_the_recipe_reaches_every_per_kind_list(tmp_path: Path) -> None:
    out = _run(TOOL_KIND, tmp_path)
    assert out["subjects"] == ["rule", "metric", "sandbox", "model", "judge", "probe"]
    assert out["score_subject"] == "rlar.score.probe"
    assert out["consumer"] is True
    assert out["role_consumes"] is True
    assert out["actor_kind"] == {"kinds": ["probe"]}
    assert out["pyfunc"] == "probe"
    assert out["trusted"] is True
    assert out["cli"] == "probe"


# Recipe step 1, as text: the converter and the entry, inserted into a copy of rlar/tasks/formats.py.
FORMAT_ENTRY = """
    def _probe(row, opts):
        return row["q"], row["a"], {}

    formats.append(DataFormat("probe", "q, a", _has("q", "a"), _probe, TaskSpec(
        name="probe", domain="qa", task_type="short_answer", answer_format="text", description="Answer the sum.")))
"""

DATA_FORMAT = """
import json
from rlar.tasks import TaskConfig, load_task
from rlar.tasks.config import SOURCES
from rlar.tasks.formats import detect_format

with open("probe.jsonl", "w") as f:
    f.write(json.dumps({"q": "2+2?", "a": "4"}) + "\\n" + json.dumps({"q": "3+3?", "a": "6"}) + "\\n")
ds = load_task(TaskConfig(name="sums", source="probe", path="probe.jsonl"), ".")
records = [(r.prompt, r.reference) for r in ds]
print(json.dumps({"sources": list(SOURCES), "records": records, "detected": detect_format(["probe.jsonl"], ".")}))
"""


def test_a_new_dataset_format_by_the_recipe_is_a_source_and_loads(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    for pkg in ("bus", "actors", "rlar"):
        shutil.copytree(
            REPO / pkg, tree / pkg, ignore=shutil.ignore_patterns("__pycache__", "static", "testing")
        )
    path = tree / "rlar" / "tasks" / "formats.py"
    text = path.read_text()
    end = "    return {f.name: f for f in formats}\n"
    assert text.count(end) == 1
    path.write_text(text.replace(end, textwrap.dedent(FORMAT_ENTRY).replace("\n", "\n    ") + "\n" + end))
    work = tmp_path / "work"
    work.mkdir()
    out = _run(DATA_FORMAT, work, tree)
    assert "probe" in out["sources"]  # TaskConfig.source accepts it: derived from FORMATS
    assert out["records"] == [["2+2?", "4"], ["3+3?", "6"]]
    assert out["detected"] == "probe"


def test_every_tool_kind_has_the_reward_workers_defaults() -> None:
    # Recipe step (3) of a new tool kind: a reward worker serving it needs its per-kind defaults.
    from actors.reward import DEFAULT_CONCURRENCY, DEFAULT_EXECUTOR_WORKERS, DEFAULT_FETCH
    from bus.messages import ToolKind

    for table in (DEFAULT_CONCURRENCY, DEFAULT_FETCH, DEFAULT_EXECUTOR_WORKERS):
        assert set(table) == {k.value for k in ToolKind}
