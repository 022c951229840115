"""The table of actor kinds (rlar.kinds): complete, and the one place every per-kind list comes from.

The last test follows docs/architecture.md's recipe for a new actor kind with a throwaway one (its module in
a temporary directory, its row added to the table, its role to the role table) and checks that `rlar up`'s
names, the run document's sections and validation, the config reference, the deployment (roles, workloads,
manifests), the placement and `rlar train`'s defaults all pick it up.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support.env import REPO


def _load(path: str) -> object:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def test_every_kind_names_a_class_and_config_that_import_and_agree() -> None:
    from actors.runtime import Actor
    from rlar.kinds import ACTOR_KINDS

    for kind in ACTOR_KINDS.values():
        cls, config = _load(kind.actor), _load(kind.config)
        assert isinstance(cls, type) and issubclass(cls, Actor), kind.name
        assert cls.Config is config, kind.name


def test_every_actor_class_in_actors_has_a_row() -> None:
    # A new actor module without a row would be started by nothing and deployed nowhere.
    from rlar.kinds import ACTOR_KINDS

    rows = {k.actor for k in ACTOR_KINDS.values()}
    found = set()
    for path in sorted((REPO / "actors").glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and any(
                isinstance(b, ast.Subscript) and getattr(b.value, "id", "") == "Actor" for b in node.bases
            ):
                found.add(f"actors.{path.stem}:{node.name}")
    assert found and found == rows, (sorted(found - rows), sorted(rows - found))


def test_every_per_kind_list_is_derived_from_the_table() -> None:
    from actors import KINDS, resolve
    from rlar.app.runconfig import SECTIONS
    from rlar.app.train import TrainSection
    from rlar.deploy.auth import ROLES, role_of
    from rlar.deploy.render import WORKLOADS
    from rlar.kinds import ACTOR_KINDS
    from rlar.placement import PlacementSection

    assert set(KINDS) == set(ACTOR_KINDS)
    sections = {s.name: s for s in SECTIONS}
    for kind in ACTOR_KINDS.values():
        _cls, section, implied = resolve(kind.name)
        assert (section, implied) == (kind.section, dict(kind.implied))
        assert sections[kind.section].actor and sections[kind.section].model == kind.config
        assert role_of(kind.name) == kind.role and kind.role in ROLES
    assert {w.kind for w in WORKLOADS} == {k.name for k in ACTOR_KINDS.values() if k.workload}
    assert list(PlacementSection.model_fields) == ["learner", "rollout", "reward", "retriever"]
    assert TrainSection().actors == {"sandbox": 1, "reward": 1, "learner": 1, "rollout": 1, "feeder": 1}
    assert KINDS["reward-model"] == ("actors.reward:RewardWorker", "reward", {"kinds": ["model"]})


PROBE_ACTOR = '''
from actors.runtime import Actor, ActorConfig


class ProbeConfig(ActorConfig):
    depth: int = 3
    """How deep the probe looks."""


class Probe(Actor[ProbeConfig]):
    kind = "probe"
    Config = ProbeConfig
'''

RECIPE = """
import json, sys
from rlar import kinds

# Recipe step 2: the kind's row in the table (here added at run time; in the code, a line in rlar/kinds.py).
row = kinds.ActorKind("probe", "probe_actor:Probe", "probe_actor:ProbeConfig", "probe", "A throwaway probe.",
                      "probe", workload=kinds.Workload(1, "100m", "128Mi"), gpus="Probes.", gpu_rank=5,
                      train_default=1)
kinds.ACTOR_KINDS = kinds._kinds(*kinds.ACTOR_KINDS.values(), row)

# Recipe step 3: its role's grants (in the code, an entry of rlar.deploy.auth.build_roles).
from rlar.deploy import auth
auth.ROLES["probe"] = auth._role("probe", "probe: looks", auth.actor_base("probe"))

from actors import resolve
from rlar.app.docgen import config_reference
from rlar.app.runconfig import ConfigProblems, SECTIONS, validate_run_config
from rlar.app.train import TrainSection
from rlar.deploy.render import WORKLOADS, rendered_files
from rlar.placement import from_doc

out = {}
cls, section, implied = resolve("probe")
out["resolved"] = [cls.__name__, section]
out["sections"] = [s.name for s in SECTIONS if s.actor]
built = validate_run_config({"probe": {"depth": 5}}, actors=["probe"])
out["built_depth"] = built["probe"].depth
try:
    validate_run_config({"probe": {"dpeth": 5}}, actors=["probe"])
except ConfigProblems as exc:
    out["problem"] = str(exc)
out["reference"] = "## `[probe]`" in config_reference() and "How deep the probe looks." in config_reference()
out["role"] = auth.role_of("probe")
out["workloads"] = [w.kind for w in WORKLOADS]
files = {str(p): text for p, text in rendered_files().items()}
out["manifest"] = any("name: probe" in t and "- probe" in t for p, t in files.items() if p.endswith("rlar.yaml"))
out["placement"] = [a.kind + ":" + ",".join(map(str, a.devices))
                    for a in from_doc({"placement": {"probe": {"gpus_per_replica": 1}}}, {"probe": 1}, check=False)]
out["train"] = TrainSection().actors
print(json.dumps(out))
"""


def test_a_new_actor_kind_by_the_recipe_is_picked_up_everywhere(tmp_path: Path) -> None:
    (tmp_path / "probe_actor.py").write_text(textwrap.dedent(PROBE_ACTOR))  # recipe step 1: the actor module
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    r = subprocess.run(
        [sys.executable, "-c", RECIPE], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["resolved"] == ["Probe", "probe"]
    assert "probe" in out["sections"]
    assert out["built_depth"] == 5
    assert "[probe]: unknown key 'dpeth' (did you mean 'depth'?)" in out["problem"]
    assert out["reference"] is True
    assert out["role"] == "probe"
    assert "probe" in out["workloads"]
    assert out["manifest"] is True
    assert out["placement"] == ["probe:0"]
    assert out["train"]["probe"] == 1
