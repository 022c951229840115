"""GPU placement on a CPU machine: the plan per replica, the environment and command each child gets, and
`rlar plan` checking a config against a GPU count."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from actors.supervisor import Replica, Supervisor
from rlar.placement import KindPlacement, PlacementError, PlacementSection, from_doc, plan


def test_replicas_get_disjoint_devices_explicit_ids_first() -> None:
    section = PlacementSection(
        learner=KindPlacement(gpus_per_replica=2, device_ids=[6, 7]),
        rollout=KindPlacement(gpus_per_replica=2),
        reward=KindPlacement(gpus_per_replica=0),
    )
    got = {
        a.name: a.devices
        for a in plan(section, {"learner": 1, "rollout": 3, "reward": 2, "feeder": 1}, gpus=8)
    }
    assert got == {
        "learner-0": (6, 7),
        "rollout-0": (0, 1),
        "rollout-1": (2, 3),
        "rollout-2": (4, 5),
        "reward-0": (),
        "reward-1": (),
    }
    with pytest.raises(PlacementError, match="has 7"):
        plan(section, {"learner": 1, "rollout": 3}, gpus=7)
    with pytest.raises(PlacementError, match="also given to learner"):
        plan(
            PlacementSection(learner=KindPlacement(device_ids=[0]), rollout=KindPlacement(device_ids=[0])),
            {"learner": 1, "rollout": 1},
        )
    with pytest.raises(PlacementError, match="need 2"):
        plan(PlacementSection(rollout=KindPlacement(device_ids=[0])), {"rollout": 2})


def test_rollout_gpus_must_match_its_tensor_parallelism() -> None:
    doc = {
        "placement": {"rollout": {"gpus_per_replica": 1}},
        "rollout": {"engine": {"kind": "vllm", "tensor_parallel_size": 2}},
    }
    with pytest.raises(PlacementError, match="tensor_parallel_size = 2"):
        from_doc(doc, {"rollout": 1}, check=False)
    assert from_doc({}, {"rollout": 1}) == []


def test_each_child_starts_with_its_devices_and_a_multi_gpu_learner_under_torchrun(tmp_path: Path) -> None:
    """The real child processes: each replica prints the CUDA_VISIBLE_DEVICES it was started with."""
    section = PlacementSection(
        learner=KindPlacement(gpus_per_replica=2),
        rollout=KindPlacement(gpus_per_replica=1),
        reward=KindPlacement(gpus_per_replica=0),
    )
    replicas = {"learner": 1, "rollout": 2, "reward": 1, "feeder": 1}
    sup = Supervisor(
        list(replicas.items()),
        nats_url="nats://127.0.0.1:1",
        run_dir=tmp_path,
        placement=plan(section, replicas, gpus=4),
    )
    seen = {}
    for r in sup.replicas:
        env = {
            **sup.child_env(r),
            "CUDA_VISIBLE_DEVICES_PARENT": os.environ.get("CUDA_VISIBLE_DEVICES", "<unset>"),
        }
        out = subprocess.run(
            [sys.executable, "-c", "import os; print(os.environ.get('CUDA_VISIBLE_DEVICES', '<unset>'))"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        seen[r.name] = out.stdout.strip()
    parent = os.environ.get("CUDA_VISIBLE_DEVICES", "<unset>")
    assert seen == {
        "learner-0": "0,1",
        "rollout-0": "2",
        "rollout-1": "3",
        "reward-0": "",
        "feeder-0": parent,
    }
    learner_cmd = sup.command(Replica("learner", 0))
    assert learner_cmd[1:5] == ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    assert sup.command(Replica("rollout", 0))[1:4] == ["-m", "actors", "rollout"]


def test_rlar_plan_prints_the_placement_and_memory_and_refuses_what_does_not_fit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rlar.app.cli import main
    from rlar.policy.model import build_tiny_policy

    model = build_tiny_policy(tmp_path / "tiny")
    config = tmp_path / "run.toml"
    config.write_text(f"""
[train]
actors = {{ learner = 1, rollout = 2, feeder = 1 }}
[placement]
learner = {{ gpus_per_replica = 2 }}
rollout = {{ gpus_per_replica = 1 }}
[learner]
trainer = {{ model_dir = "{model}", dtype = "bf16" }}
[rollout]
engine = {{ kind = "transformers", model = "{model}" }}
""")
    assert main(["plan", "--config", str(config), "--gpus", "4"]) == 0
    ok = capsys.readouterr()
    assert "learner-0" in ok.out and "CUDA_VISIBLE_DEVICES=0,1, 2 ranks" in ok.out
    assert "rollout-1" in ok.out and "CUDA_VISIBLE_DEVICES=3" in ok.out
    assert "memory estimate per rank" in ok.out and "bf16" in ok.out
    doc = json.loads(ok.out.strip().splitlines()[-1])
    assert doc["placement"] == {"learner-0": [0, 1], "rollout-0": [2], "rollout-1": [3]}
    assert doc["learner_bytes_per_rank"] > 0 and doc["rollout_weights_bytes_per_gpu"] > 0
    assert main(["plan", "--config", str(config), "--gpus", "3"]) == 1
    assert "this machine has 3" in capsys.readouterr().err


def test_rlar_train_checks_the_placement_against_the_gpus_present_before_starting() -> None:
    from rlar.app.train import load_checked
    from rlar.placement import detect_gpus
    from rlar.resources import DEMO_CONFIG

    too_many = detect_gpus()[0] + 1
    with pytest.raises(PlacementError, match=f"this machine has {too_many - 1}"):
        load_checked(DEMO_CONFIG, [f"placement.rollout.gpus_per_replica={too_many}"], None)
