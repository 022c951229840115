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

from tests.support.env import REPO


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


# A new constraint family, recipe step 1: its module (a throwaway rule: every line in square brackets).
FAMILY_MODULE = '''
"""Lines in square brackets: every non-empty line starts with "[" and ends with "]"."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rlar.constraints.family import Family
from rlar.constraints.model import Constraint
from rlar.constraints.reading import Phrase, WorkingClause, read_phrases
from rlar.constraints.responses import count_wanted, one_rule, phrase


@dataclass(frozen=True, kw_only=True)
class BracketedLines(Constraint):
    RULES = ("bracketed_lines",)

    def describe(self) -> str:
        return "every line in square brackets"


def bracketed_lines_score(c, text):
    lines = [x.strip() for x in text.split("\\n") if x.strip()]
    inside = [x for x in lines if x.startswith("[") and x.endswith("]")]
    return len(inside) / len(lines) if lines else 0.0


PHRASES = (
    Phrase(
        r"\\b(?:and\\s+)?(?:put|wrap)\\s+(?:every|each)\\s+line\\s+in\\s+square\\s+brackets\\b",
        lambda m, cl: [BracketedLines(rule="bracketed_lines")],
    ),
)


def read(cl: WorkingClause, sentence: str, whole: str) -> None:
    if re.search(r"square\\s+brackets", whole):
        read_phrases(cl, PHRASES)


def build(cons: Sequence[Mapping[str, Any]]) -> str | None:
    if one_rule(cons, "bracketed_lines") is None:
        return None
    return "\\n".join(f"[{phrase(i, 3)}]" for i in range(count_wanted(cons, "lines", 3)))


def near_misses(c: Mapping[str, Any], good: str, cons: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    rows = good.split("\\n")
    return [("bracketed_lines: a line without them", "\\n".join([rows[0].strip("[]"), *rows[1:]]))]


FAMILY = Family(
    name="bracketed_lines",
    types=(BracketedLines,),
    checks={"bracketed_lines": bracketed_lines_score},
    read=read,
    build=build,
    near_misses=near_misses,
    examples=("Write 4 lines and put every line in square brackets.",),
)
'''

NEW_FAMILY = """
import json
from rlar.constraints import holds
from rlar.constraints.checks import embedded_source
from rlar.constraints.vocabulary import RULES, canonical, describe
from rlar.synthesis.blocks import render_module
from rlar.synthesis.builder import build, violations
from rlar.tasks.reading import read_instruction

reading = read_instruction("Write 4 lines and put every line in square brackets.")
cons = reading.constraints
good = build(cons)
bad = [(why, text) for why, text in violations(cons) if why.startswith("bracketed_lines")]
ns = {}
exec(render_module(cons, None, aggregate="mean", header="recipe"), ns)
print(json.dumps({
    "rules": "bracketed_lines" in RULES,
    "canonical": canonical([{"rule": "bracketed_lines"}]),
    "describe": describe({"rule": "bracketed_lines"}),
    "full": reading.full,
    "constraints": cons,
    "good": good,
    "good_holds": all(holds(c, good) for c in cons),
    "bad": [why for why, _ in bad],
    "bad_breaks": [not holds({"rule": "bracketed_lines"}, text) for _, text in bad],
    "verifier": [ns["reward"]("", good, None, {}), *(ns["reward"]("", text, None, {}) for _, text in bad)],
    "embedded": "def bracketed_lines_score(" in embedded_source(),
}))
"""


def test_a_new_constraint_family_by_the_recipe_is_read_checked_built_and_near_missed(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    for pkg in ("bus", "actors", "rlar"):
        shutil.copytree(
            REPO / pkg, tree / pkg, ignore=shutil.ignore_patterns("__pycache__", "static", "testing")
        )
    families = tree / "rlar" / "constraints" / "families"
    # Recipe step 1: the family's module.
    (families / "bracketed_lines.py").write_text(textwrap.dedent(FAMILY_MODULE))
    # Recipe step 2: its place in the registry.
    registry = (families / "__init__.py").read_text()
    anchor_import = "from rlar.constraints.families import "
    anchor_entry = "FAMILIES: tuple[Family, ...] = (\n"
    assert registry.count(anchor_import) == 1 and registry.count(anchor_entry) == 1
    registry = registry.replace(anchor_import, anchor_import + "bracketed_lines, ")
    registry = registry.replace(anchor_entry, anchor_entry + "    bracketed_lines.FAMILY,\n")
    (families / "__init__.py").write_text(registry)
    out = _run(NEW_FAMILY, tmp_path, tree)
    assert out["rules"] is True
    assert out["canonical"] == [{"rule": "bracketed_lines"}]
    assert out["describe"] == "every line in square brackets"
    assert out["full"] is True  # read whole: no clause left unread
    assert {"rule": "bracketed_lines"} in out["constraints"]
    assert {"rule": "lines", "min": 4, "max": 4} in out["constraints"]
    assert out["good_holds"] is True and str(out["good"]).count("\n") == 3
    assert out["bad"] == ["bracketed_lines: a line without them"] and out["bad_breaks"] == [True]
    assert out["verifier"][0] == 1.0 and all(score < 1.0 for score in out["verifier"][1:])
    assert out["embedded"] is True
