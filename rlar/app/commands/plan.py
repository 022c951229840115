"""``rlar plan --config FILE``: the GPU placement of a run and its memory per GPU, checked before it starts
(:mod:`rlar.placement`, :mod:`rlar.learn.memory`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

# rlar.app, rlar.learn and rlar.placement are imported where used: a command's implementation loads when the
# command runs, so rlar --help stays instant.


def _shape_dir(model: str | None, doc: dict[str, Any], section: str, key: str) -> Path | None:
    """The checkpoint to estimate for: --model, else the section's model directory when it has a config."""
    if model:
        return Path(model)
    node: Any = doc.get(section, {})
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return Path(node) if node and (Path(str(node)) / "config.json").is_file() else None


def cmd_plan(a: argparse.Namespace) -> int:
    from rlar.app.runconfig import load_run_config, validate_run_config
    from rlar.app.train import TrainSection
    from rlar.learn.memory import ModelShape, estimate_learner, estimate_rollout, fmt_bytes
    from rlar.placement import PlacementSection, detect_gpus, from_doc, plan

    doc = load_run_config(a.config, a.set)
    actors = TrainSection.model_validate(doc.get("train", {})).actors
    built = validate_run_config(
        doc, actors=[k for k, n in actors.items() if n > 0], where=a.config, from_set=a.set
    )
    gpus, how = (a.gpus, "--gpus") if a.gpus is not None else detect_gpus()
    assignments = from_doc(doc, actors, check=False)
    print(f"GPUs present: {gpus} ({how})")
    if not assignments:
        print("no [placement] section: every actor inherits this environment's CUDA_VISIBLE_DEVICES")
    for x in assignments:
        launch = f", {x.ranks()} ranks (torch.distributed.run)" if x.ranks() > 1 else ""
        print(f"  {x.name:<14} CUDA_VISIBLE_DEVICES={x.env()['CUDA_VISIBLE_DEVICES'] or '(none)'}{launch}")
    out: dict[str, Any] = {"gpus": gpus, "placement": {x.name: list(x.devices) for x in assignments}}
    learner = built.get("learner")
    learner_dir = _shape_dir(a.model, doc, "learner", "trainer.model_dir")
    if learner is not None and learner_dir is not None:
        cfg = learner.trainer.model_copy(update={"model_dir": learner_dir})
        ranks = next((x.ranks() for x in assignments if x.kind == "learner"), 1)
        est = estimate_learner(cfg, world_size=ranks, shape=ModelShape.from_config(learner_dir))
        print(f"learner ({learner_dir}): {est.summary()}")
        out["learner_bytes_per_rank"] = est.total
    elif learner is not None:
        print("learner: no memory estimate (its model_dir has no config.json yet; pass --model DIR)")
    rollout = built.get("rollout")
    rollout_dir = _shape_dir(a.model, doc, "rollout", "engine.model")
    if rollout is not None and rollout_dir is not None:
        engine = rollout.engine
        tp = getattr(engine, "tensor_parallel_size", 1)
        mem = estimate_rollout(ModelShape.from_config(rollout_dir), engine.dtype, tp)
        print(
            f"rollout ({engine.kind}, {engine.dtype}, tensor parallel {tp}): weights {fmt_bytes(mem.weights)} "
            f"per GPU, KV cache {fmt_bytes(mem.kv_per_token)} per token"
        )
        out["rollout_weights_bytes_per_gpu"] = mem.weights
    if doc.get("placement"):  # the same plan, now against the GPUs present (PlacementError: exit 1)
        plan(PlacementSection.model_validate(doc["placement"]), actors, gpus)
        print(f"fits: the placement uses {len({d for x in assignments for d in x.devices})} of {gpus} GPUs")
    print(json.dumps(out), flush=True)
    return 0


def register(sub: Any, bench: Any) -> None:
    p = sub.add_parser(
        "plan",
        help="print a run's GPU placement and memory per GPU, and check them against this machine",
        description="Reads [placement] and [train] actors of the run config; exits 1 when the placement does not "
        "fit the GPUs present.",
    )
    p.add_argument("--config", required=True, help="the run config (TOML) (required)")
    p.add_argument(
        "--set", action="append", default=[], help="KEY=VALUE override, as for rlar train (repeatable)"
    )
    p.add_argument(
        "--gpus", type=int, help="plan for this many GPUs instead of counting them (default: detected)"
    )
    p.add_argument("--model", help="checkpoint directory to estimate memory for (default: the config's)")
    p.set_defaults(fn=cmd_plan)
