"""``rlar export RUN [--version N] --out DIR``: a run's trained policy as a Hugging Face checkpoint.

The run directory holds the initial policy (``policy/init``: config, tokenizer, base weights) and the
learner's published weights (``weights/vNNNNNNNN/model.safetensors``; the newest few are kept). Export loads the
initial model with transformers, puts version N's tensors into it (the newest by default; a tied ``lm_head``
missing from the blob is re-tied, anything else missing or unexpected is an error), and writes with
``save_pretrained``: ``config.json``, ``generation_config.json``, ``model.safetensors``, the tokenizer files,
and ``README.md`` — a model card with the training summary (steps, updates, reward per task, the tools each task
used, the config's task mix and optimiser settings). The result loads with
``AutoModelForCausalLM.from_pretrained(DIR)`` and ``vllm.LLM(model=DIR)``.

Not covered: runs whose weights went only to the NATS object store, a broadcast or the learner's HTTP server
(``weight_sync = "objstore" | "broadcast" | "http"``; export from a machine that has the run's ``weights/``
directory), and versions already pruned from ``weights/``.
"""

from __future__ import annotations

import json
import shutil
import time
import tomllib
from pathlib import Path
from typing import Any

from rlar.config import ConfigError

__all__ = ["export_run", "model_card"]


def _versions(run: Path) -> dict[int, Path]:
    root = run / "weights"
    if not root.is_dir():
        return {}
    return {
        int(d.name[1:]): d for d in root.iterdir() if d.is_dir() and d.name[1:].isdigit() and d.name[0] == "v"
    }


def _summary(run: Path) -> dict[str, Any]:
    path = run / "summary.json"
    if path.is_file():
        return dict(json.loads(path.read_text()))
    from rlar.plots import read_metrics
    from rlar.summary import run_totals, unique_steps
    from rlar.tool_summary import tasks_summary

    steps = unique_steps(read_metrics(run / "metrics.jsonl"))
    return {"reason": "no summary.json (run still going, or stopped hard); from metrics.jsonl",
            **run_totals(steps), "tasks": tasks_summary(steps)}  # fmt: skip


def model_card(run: Path, version: int, summary: dict[str, Any], config: dict[str, Any]) -> str:
    """The README.md of an exported checkpoint."""
    tasks = config.get("feeder", {}).get("tasks", [])
    learner = config.get("learner", {})
    trainer = learner.get("trainer", {})
    grpo = trainer.get("grpo", {})
    lines = [
        "---",
        "library_name: transformers",
        "tags: [rlar, grpo, reinforcement-learning]",
        "---",
        f"# {run.name} (policy version {version})",
        "",
        f"Trained with RLAR (GRPO, rewards chosen per task); exported from `{run}` on "
        f"{time.strftime('%Y-%m-%d %H:%M')} (weights version {version}).",
        "",
        "## Training summary",
        f"- end: {summary.get('reason', '?')}; learner steps: {summary.get('steps', '?')}; updates: "
        f"{summary.get('updates', '?')}; minutes: {summary.get('minutes', '?')}",
        f"- learning rate {trainer.get('lr', 'default')}, group size {grpo.get('group_size', 'default')}, prompts "
        f"per step {learner.get('prompts_per_step', 'default')}, KL coefficient {grpo.get('kl_coef', 'default')} "
        "(`default`: the value in docs/reference/config.md)",
        "",
        "| task | weight | reward first | reward last | abstain rate | tools (origin, learner steps) |",
        "|---|---|---|---|---|---|",
    ]
    per_task = summary.get("tasks") or {}
    for t in tasks:
        name = t.get("name", "?")
        row = per_task.get(name) or {}
        rw = row.get("reward") or {}
        abstain = (row.get("abstain") or {}).get("mean")
        tools = ", ".join(f"{x['tool']} v{x['version']} ({x.get('origin') or '?'}, {x.get('steps', '?')})"
                          for x in row.get("tools", [])) or "-"  # fmt: skip
        lines.append(f"| {name} | {t.get('weight', 1.0)} | {rw.get('first', '-')} | {rw.get('last', '-')} | "
                     f"{'-' if abstain is None else f'{abstain:.0%}'} | {tools} |")  # fmt: skip
    lines += [
        "",
        "## Use",
        "```python",
        "from transformers import AutoModelForCausalLM, AutoTokenizer",
        'model = AutoModelForCausalLM.from_pretrained("path/to/this/dir")',
        'tokenizer = AutoTokenizer.from_pretrained("path/to/this/dir")',
        "```",
        'vLLM: `vllm.LLM(model="path/to/this/dir")`.',
        "",
    ]
    return "\n".join(lines)


def export_run(run_dir: str | Path, out: str | Path, *, version: int | None = None) -> dict[str, Any]:
    """Write version ``version`` (default: the newest) of a run's policy to ``out``; see the module docstring.
    Raises ``ConfigError`` for a run that has no such weights."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    from rlar.policy.weights import read_manifest, read_weights

    run = Path(run_dir).expanduser()
    init = run / "policy" / "init"
    if not (init / "config.json").is_file():
        raise ConfigError(f"{run}: not a run directory (no policy/init/config.json)")
    versions = _versions(run)
    if not versions:
        raise ConfigError(f"{run}: no trained weights in {run / 'weights'} (the learner made no update yet, or "
                          "the run used weight_sync = 'objstore', 'broadcast' or 'http')")  # fmt: skip
    v = max(versions) if version is None else version
    if v not in versions:
        raise ConfigError(f"{run}: weights version {v} is not kept; available: {sorted(versions)}")
    dest = Path(out).expanduser()
    if dest.exists() and any(dest.iterdir()):
        raise ConfigError(f"{dest} exists and is not empty")
    tensors = read_weights(read_manifest(versions[v]))
    model = AutoModelForCausalLM.from_pretrained(init, dtype=torch.float32)
    missing, unexpected = model.load_state_dict(tensors, strict=False)
    tied = bool(getattr(model.config, "tie_word_embeddings", False))
    missing = [m for m in missing if not (tied and m == "lm_head.weight")]
    if missing or unexpected:
        raise ConfigError(
            f"weights v{v} do not fit {init}: missing {missing[:5]}, unexpected {unexpected[:5]}"
        )
    if tied:
        model.tie_weights()
    tmp = dest.with_name(f".{dest.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp, safe_serialization=True)
    AutoTokenizer.from_pretrained(init).save_pretrained(tmp)
    try:
        GenerationConfig.from_pretrained(init).save_pretrained(tmp)
    except OSError:
        GenerationConfig.from_model_config(model.config).save_pretrained(tmp)
    summary = _summary(run)
    config_path = run / "config.toml"
    config = tomllib.loads(config_path.read_text()) if config_path.is_file() else {}
    (tmp / "README.md").write_text(model_card(run, v, summary, config))
    (tmp / "rlar_summary.json").write_text(
        json.dumps({"run_dir": str(run), "version": v, **summary}, indent=2)
    )
    if dest.exists():
        dest.rmdir()
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp.rename(dest)
    return {"out": str(dest), "version": v, "files": sorted(p.name for p in dest.iterdir())}
