"""``rlar export RUN [--version N] --out DIR``: a run's trained policy as a Hugging Face checkpoint.

The run directory holds the initial policy (``policy/init``: config, tokenizer, base weights) and the
learner's published weights (``weights/vNNNNNNNN/model.safetensors``; the newest few are kept). Export loads the
initial model with transformers, puts version N's tensors into it (the newest by default; a tied ``lm_head``
missing from the blob is re-tied, anything else missing or unexpected is an error), and writes with
``save_pretrained``: ``config.json``, ``generation_config.json``, ``model.safetensors``, the tokenizer files,
``rlar_summary.json``, ``rlar_config.toml`` and ``rlar_tools.jsonl`` (the run's summary, config and tool
registry snapshot: ``rlar eval --checkpoint DIR --task NAME`` scores the export with the run's own tasks and
tools), and ``README.md`` — a model card with the training summary (steps, updates, reward per task, the tools each task
used, the config's task mix, and the hyperparameters as numbers: keys the config left out at their values in
the config models). The result loads with ``AutoModelForCausalLM.from_pretrained(DIR)`` and
``vllm.LLM(model=DIR)``.

The export encodes like training. Training (and ``rlar eval``) encode a prompt with the tokenizer's chat
template when it has one, else as plain text, and never add special tokens
(:meth:`rlar.policy.engines.base.GenerationEngine.render_prompt`). transformers' ``ByT5Tokenizer`` (the tiny
policy's) appends ``</s>`` to every text it encodes by default — so ``tokenizer(prompt)`` and
``vllm.LLM.generate(prompt)`` would ask the model something it was never trained on. A ByT5 tokenizer is
therefore exported as the same byte-level vocabulary in a ``tokenizer.json`` (:func:`byte_tokenizer`: same
ids, same special tokens, same decoding, nothing appended). The card's example generates greedily along that
path, with ``add_special_tokens=False`` written out for any other tokenizer that adds tokens by default.

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

from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

from rlar.config import ConfigError
from rlar.learn.config import GRPOConfig, TrainerConfig
from rlar.plots import read_metrics
from rlar.policy.weights import read_manifest, read_weights
from rlar.summary import run_totals, unique_steps
from rlar.tool_summary import tasks_summary

# transformers and torch are imported where used: heavy and optional (the CLI starts without them).
# actors.learner and actors.rollout are imported where used: they import torch at their top.

__all__ = ["byte_tokenizer", "export_run", "hyperparameters", "model_card"]


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

    steps = unique_steps(read_metrics(run / "metrics.jsonl"))
    return {
        "reason": "no summary.json (run still going, or stopped hard); from metrics.jsonl",
        **run_totals(steps),
        "tasks": tasks_summary(steps),
    }


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character map (what ``tokenizers``' ByteLevel stages use)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars = list(keep)
    extra = 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + extra)
            extra += 1
    return {b: chr(c) for b, c in zip(keep, chars, strict=True)}


def byte_tokenizer(slow: Any) -> Any:
    """A ``tokenizers``-backed copy of a ``ByT5Tokenizer``: byte ``b`` is id ``b + 3``, the special tokens
    (``<pad>`` 0, ``</s>`` 1, ``<unk>`` 2, the ``<extra_id_N>``) keep their ids and stripping, decoding drops
    invalid UTF-8 as ByT5 does, and encoding appends nothing. Raises ``RuntimeError`` if an id would move."""
    from transformers import PreTrainedTokenizerFast

    offset = 3
    chars = _bytes_to_unicode()
    added = sorted(slow.added_tokens_decoder.items())
    vocab = {t.content: i for i, t in added if i < offset} | {chars[b]: b + offset for b in range(256)}
    tk = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token=str(slow.unk_token)))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    # ByteLevel decodes invalid UTF-8 to U+FFFD; ByT5 drops it (errors="ignore").
    tk.decoder = decoders.Sequence([decoders.ByteLevel(), decoders.Replace("\ufffd", "")])
    tk.add_special_tokens(
        [
            AddedToken(
                t.content,
                lstrip=t.lstrip,
                rstrip=t.rstrip,
                single_word=t.single_word,
                normalized=False,
                special=True,
            )
            for _, t in added
        ]
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tk,
        eos_token=str(slow.eos_token),
        pad_token=str(slow.pad_token),
        unk_token=str(slow.unk_token),
        additional_special_tokens=[t.content for i, t in added if i >= offset],
        clean_up_tokenization_spaces=bool(slow.clean_up_tokenization_spaces),
        model_max_length=slow.model_max_length,
    )
    moved = [(i, t.content) for i, t in added if fast.convert_tokens_to_ids(t.content) != i]
    if moved or len(fast) != len(slow):
        raise RuntimeError(f"byte tokenizer does not match {type(slow).__name__}: moved {moved[:5]}")
    return fast


def _export_tokenizer(init: Path, out: Path) -> Any:
    """Save the initial policy's tokenizer to ``out`` so that it encodes like training (module docstring);
    returns it as reloaded from ``out``."""
    from transformers import AutoTokenizer, ByT5Tokenizer

    tok = AutoTokenizer.from_pretrained(init)
    (byte_tokenizer(tok) if isinstance(tok, ByT5Tokenizer) else tok).save_pretrained(out)
    return AutoTokenizer.from_pretrained(out)


def _setting(model: Any, section: dict[str, Any], key: str) -> Any:
    """``section[key]``, else the config model's default for it."""
    return section[key] if key in section else model.model_fields[key].get_default(call_default_factory=True)


def hyperparameters(config: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """(name, config key, value) of the training settings a model card states; values the run's config left
    out are the config models' defaults, so every value is a number (or a word such as ``token-mean``)."""
    from actors.learner import LearnerConfig
    from actors.rollout import RolloutConfig

    learner = dict(config.get("learner") or {})
    trainer = dict(learner.get("trainer") or {})
    grpo = dict(trainer.get("grpo") or {})
    rollout = dict(config.get("rollout") or {})
    rows = [
        ("learning rate", "learner.trainer.lr", TrainerConfig, trainer, "lr"),
        ("learning-rate schedule", "learner.trainer.lr_schedule", TrainerConfig, trainer, "lr_schedule"),
        ("warm-up steps", "learner.trainer.warmup_steps", TrainerConfig, trainer, "warmup_steps"),
        ("KL coefficient", "learner.trainer.grpo.kl_coef", GRPOConfig, grpo, "kl_coef"),
        ("clip epsilon low", "learner.trainer.grpo.clip_eps_low", GRPOConfig, grpo, "clip_eps_low"),
        ("clip epsilon high", "learner.trainer.grpo.clip_eps_high", GRPOConfig, grpo, "clip_eps_high"),
        ("loss aggregation", "learner.trainer.grpo.loss_agg", GRPOConfig, grpo, "loss_agg"),
        ("group size", "learner.trainer.grpo.group_size", GRPOConfig, grpo, "group_size"),
        ("max staleness (versions)", "learner.trainer.grpo.max_staleness", GRPOConfig, grpo, "max_staleness"),
        ("prompts per step", "learner.prompts_per_step", LearnerConfig, learner, "prompts_per_step"),
        ("max learner steps", "learner.max_steps", LearnerConfig, learner, "max_steps"),
        ("sampling temperature", "rollout.temperature", RolloutConfig, rollout, "temperature"),
        ("top-p", "rollout.top_p", RolloutConfig, rollout, "top_p"),
        ("max new tokens", "rollout.max_new_tokens", RolloutConfig, rollout, "max_new_tokens"),
    ]
    return [(name, key, _setting(model, section, field)) for name, key, model, section, field in rows]


def _use_snippet(tokenizer: Any, max_new_tokens: int) -> list[str]:
    """The card's transformers example: greedy generation, the prompt encoded exactly as in training."""
    probe = "12+7="
    plain = list(tokenizer(probe).input_ids) == list(tokenizer.encode(probe, add_special_tokens=False))
    extra = "" if plain else ", add_special_tokens=False"
    lines = [
        "```python",
        "from transformers import AutoModelForCausalLM, AutoTokenizer",
        'path = "path/to/this/dir"',
        "model = AutoModelForCausalLM.from_pretrained(path)",
        "tokenizer = AutoTokenizer.from_pretrained(path)",
        f'prompt = "{probe}"',
    ]
    if getattr(tokenizer, "chat_template", None):
        lines += [
            'text = tokenizer.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False, '
            "add_generation_prompt=True)",
            'ids = tokenizer(text, add_special_tokens=False, return_tensors="pt").input_ids',
        ]
    else:
        lines.append(f'ids = tokenizer(prompt{extra}, return_tensors="pt").input_ids')
    lines += [
        f"out = model.generate(ids, max_new_tokens={max_new_tokens}, do_sample=False)",
        "print(tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True))",
        "```",
    ]
    return lines


def model_card(
    run: Path, version: int, summary: dict[str, Any], config: dict[str, Any], tokenizer: Any = None
) -> str:
    """The README.md of an exported checkpoint; ``tokenizer`` (as exported) shapes its example."""
    tasks = config.get("feeder", {}).get("tasks", [])
    params = hyperparameters(config)
    value = {key: v for _, key, v in params}
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
        f"- learning rate {value['learner.trainer.lr']}, group size {value['learner.trainer.grpo.group_size']}, "
        f"prompts per step {value['learner.prompts_per_step']}, KL coefficient "
        f"{value['learner.trainer.grpo.kl_coef']}",
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
        tools = (
            ", ".join(
                f"{x['tool']} v{x['version']} ({x.get('origin') or '?'}, {x.get('steps', '?')})"
                for x in row.get("tools", [])
            )
            or "-"
        )
        lines.append(
            f"| {name} | {t.get('weight', 1.0)} | {rw.get('first', '-')} | {rw.get('last', '-')} | "
            f"{'-' if abstain is None else f'{abstain:.0%}'} | {tools} |"
        )
    lines += [
        "",
        "## Hyperparameters",
        "",
        "| setting | config key | value |",
        "|---|---|---|",
        *(f"| {name} | `{key}` | {v} |" for name, key, v in params),
        "",
        "Keys the run's config left out have the values of docs/reference/config.md, shown here.",
        "",
        "## Use",
        "",
        "Greedy generation as `rlar eval` does it (prompts are encoded as in training: no special tokens added):",
        "",
        *(_use_snippet(tokenizer, int(value["rollout.max_new_tokens"])) if tokenizer is not None else []),
        'vLLM: `vllm.LLM(model="path/to/this/dir")`.',
        "",
    ]
    return "\n".join(lines)


def export_run(run_dir: str | Path, out: str | Path, *, version: int | None = None) -> dict[str, Any]:
    """Write version ``version`` (default: the newest) of a run's policy to ``out``; see the module docstring.
    Raises ``ConfigError`` for a run that has no such weights."""
    import torch
    from transformers import AutoModelForCausalLM, GenerationConfig

    run = Path(run_dir).expanduser()
    init = run / "policy" / "init"
    if not (init / "config.json").is_file():
        raise ConfigError(f"{run}: not a run directory (no policy/init/config.json)")
    versions = _versions(run)
    if not versions:
        raise ConfigError(
            f"{run}: no trained weights in {run / 'weights'} (the learner made no update yet, or "
            "the run used weight_sync = 'objstore', 'broadcast' or 'http')"
        )
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
    tokenizer = _export_tokenizer(init, tmp)
    try:
        GenerationConfig.from_pretrained(init).save_pretrained(tmp)
    except OSError:
        GenerationConfig.from_model_config(model.config).save_pretrained(tmp)
    summary = _summary(run)
    config_path = run / "config.toml"
    config = tomllib.loads(config_path.read_text()) if config_path.is_file() else {}
    (tmp / "README.md").write_text(model_card(run, v, summary, config, tokenizer))
    (tmp / "rlar_summary.json").write_text(
        json.dumps({"run_dir": str(run), "version": v, **summary}, indent=2)
    )
    # What `rlar eval` of the export needs to score like an eval of the run: its tasks and its tools.
    for name, copy in (("config.toml", "rlar_config.toml"), ("tools.jsonl", "rlar_tools.jsonl")):
        if (run / name).is_file():
            shutil.copyfile(run / name, tmp / copy)
    if dest.exists():
        dest.rmdir()
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp.rename(dest)
    return {"out": str(dest), "version": v, "files": sorted(p.name for p in dest.iterdir())}
