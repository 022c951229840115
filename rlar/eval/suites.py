"""What ``rlar eval`` evaluates: suites, data files and a run's own tasks, as a list of :class:`EvalTask`.

Metric families follow the task's domain (``TaskSpec.domain``; computed in :mod:`rlar.eval.runner`):

- ``math``: NEM, normalised exact match of the greedy answer (``math_verify``: ``12`` = ``12.0`` =
  ``\\frac{24}{2}``; GSM8K's ``1,000`` = ``1000``) — ``nem``;
- ``string`` (copy, reverse): exact match of the greedy answer — ``exact``;
- ``qa`` (short factual answers, a reference or a list of its accepted names): the greedy answer read out of its
  sentence matches one of them (``normalized_match``) — ``match``;
- ``code``: ``n`` samples per problem at ``temperature``, run against the problem's tests in the sandbox;
  unbiased pass@k (Chen et al. 2021) for every k in ``ks`` with k <= n — ``pass@k``;
- ``translation``: corpus BLEU-2 (sacrebleu, 0-100) of the greedy outputs — ``bleu2`` — and the LLM judge's
  mean score (0-1) — ``judge``;
- ``chat``: the LLM judge's mean score — ``judge``;
- ``instruction_following`` (IFEval): the verifier's prompt- and instruction-level accuracy, strict and
  loose — ``prompt_strict``, ``inst_strict``, ``prompt_loose``, ``inst_loose`` — and ``judge``;
- ``format`` (a format stated in words, no reference: ``consonants``): the share of samples (all of them, not
  only the greedy one) that meet every constraint :func:`rlar.tasks.reading.read_instruction` reads from the
  prompt, judged by :mod:`rlar.constraints.checks` — ``format``;
- every task: average response length in tokens — ``avg_len``; tasks named with ``--task``: also ``score``,
  the mean reward of the task's own default tools (combined as the learner combines them).
Per-record metrics (all but BLEU-2, ``avg_len``) are kept per record too, so two checkpoints compare with a paired
bootstrap interval (:mod:`rlar.eval.report`).

Built-in suites (no ``--data``): ``demo`` (test splits of every built-in task, sized to run in well under 2
minutes on one CPU core with the tiny policy), ``humaneval`` (the 33 test problems of the built-in HumanEval
split, 10 samples each), ``math`` (the full arith and word_arith test splits), ``learnable`` (the four tasks
the tiny policy can learn, full test splits), ``agentic`` (the learnable tasks, capped, the format task
``consonants`` with 8 samples per prompt, and a few translate and humaneval test prompts: the reward-mode
ablation's suite, one task per kind of judge in its mix).

Data suites (``--suite NAME --data PATH``): ``gsm8k``, ``math``, ``humaneval``, ``mbpp``, ``ifeval``, ``wmt``
(WMT or FLORES files) and ``chat`` (messages or Alpaca/AlpacaEval): the file in its published format
(:mod:`rlar.tasks.formats`) with the generation settings in ``DATA_SUITES``. ``--data`` alone detects the
format. ``--task NAME`` takes a task from a run's config (its test split, or ``--data`` in its place).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rlar.tasks import BUILTIN_NAMES, builtin_task, load_task
from rlar.tasks.formats import detect_format, matching_formats

__all__ = ["DATA_SUITES", "SUITES", "EvalTask", "config_tasks", "data_task", "get_suite", "plan"]


@dataclass(frozen=True, slots=True)
class EvalTask:
    """One task to evaluate: a builtin task's test split (``source is None``) or any task config."""

    name: str
    limit: int | None = None
    """First N records (generated builtin tasks are listed in a seeded random order)."""
    max_new_tokens: int = 12
    n_samples: int = 1
    """Samples per prompt: 1 means greedy decoding; code tasks use n > 1 at ``temperature`` for pass@k."""
    temperature: float = 0.0
    ks: tuple[int, ...] = (1,)
    """pass@k values reported for code tasks (those with k <= n_samples)."""
    extra: dict[str, object] = field(default_factory=dict)
    source: dict[str, Any] | None = None
    """A ``rlar.tasks.TaskConfig`` as a dict; None: the builtin task ``name``, split ``test``."""
    base_dir: str | None = None
    """Where the source's relative paths resolve."""
    tool_score: bool = False
    """Also report ``score``: the mean reward of the task's own default tools."""

    def load(self) -> Any:
        """The task's dataset (``rlar.tasks.TaskDataset``), cut to ``limit``."""

        ds = builtin_task(self.name, "test") if self.source is None else load_task(self.source, self.base_dir)
        return ds.head(self.limit) if self.limit else ds


SUITES: dict[str, list[EvalTask]] = {
    "demo": [
        EvalTask("arith", limit=100),
        EvalTask("word_arith", limit=60),
        EvalTask("copy", limit=100),
        EvalTask("reverse", limit=100),
        EvalTask("translate", limit=24, max_new_tokens=48),
        EvalTask("chat", limit=12, max_new_tokens=64),
        EvalTask("humaneval", limit=8, max_new_tokens=64, n_samples=4, temperature=0.8, ks=(1, 4)),
        EvalTask("consonants", n_samples=8, temperature=1.0),
    ],
    "humaneval": [
        EvalTask("humaneval", max_new_tokens=256, n_samples=10, temperature=0.8, ks=(1, 5, 10)),
    ],
    "math": [EvalTask("arith"), EvalTask("word_arith")],
    "learnable": [EvalTask("arith"), EvalTask("word_arith"), EvalTask("copy"), EvalTask("reverse")],
    "agentic": [
        EvalTask("arith", limit=200),
        EvalTask("word_arith", limit=150),
        EvalTask("copy", limit=200),
        EvalTask("reverse", limit=200),
        EvalTask("consonants", n_samples=8, temperature=1.0),
        EvalTask("translate", limit=24, max_new_tokens=48),
        EvalTask("humaneval", limit=8, max_new_tokens=64, n_samples=4, temperature=0.8, ks=(1, 4)),
    ],
}

# suite -> (formats its data may be in, generation settings)
DATA_SUITES: dict[str, tuple[tuple[str, ...], EvalTask]] = {
    "gsm8k": (("gsm8k",), EvalTask("gsm8k", max_new_tokens=512)),
    "math": (("math",), EvalTask("math", max_new_tokens=1024)),
    "humaneval": (
        ("humaneval",),
        EvalTask("humaneval", max_new_tokens=512, n_samples=10, temperature=0.8, ks=(1, 5, 10)),
    ),
    "mbpp": (("mbpp",), EvalTask("mbpp", max_new_tokens=512, n_samples=10, temperature=0.8, ks=(1, 5, 10))),
    "ifeval": (("ifeval",), EvalTask("ifeval", max_new_tokens=1024)),
    "wmt": (("wmt", "flores"), EvalTask("wmt", max_new_tokens=256)),
    "chat": (("chat", "alpaca"), EvalTask("chat", max_new_tokens=1024)),
}
_BY_DOMAIN = {
    "math": "math",
    "code": "humaneval",
    "translation": "wmt",
    "chat": "chat",
    "instruction_following": "ifeval",
}


def get_suite(name: str, *, limit: int | None = None, tasks: list[str] | None = None) -> list[EvalTask]:
    """The built-in suite ``name``; ``limit`` caps every task's records, ``tasks`` keeps only those task names."""
    if name not in SUITES:
        data_only = [s for s in DATA_SUITES if s not in SUITES]
        hint = f" ({name} reads a file: add --data PATH)" if name in data_only else ""
        raise ValueError(
            f"unknown eval suite {name!r}{hint}; built-in suites: {', '.join(SUITES)}; "
            f"with --data: {', '.join(DATA_SUITES)}"
        )
    out = [t for t in SUITES[name] if tasks is None or t.name in tasks]
    if tasks is not None and not out:
        names = ", ".join(t.name for t in SUITES[name])
        raise ValueError(
            f"suite {name!r} has none of the tasks {tasks} (its tasks: {names}); to evaluate a task "
            "of your own, name it with --task and give --config, a run directory, or --data"
        )
    return [_limited(t, limit) for t in out]


def _limited(task: EvalTask, limit: int | None) -> EvalTask:
    return replace(task, limit=min(limit, task.limit) if task.limit else limit) if limit is not None else task


def _settings(domain: str) -> EvalTask:
    """Generation settings for a task of ``domain`` (those of the matching data suite; short otherwise)."""
    suite = _BY_DOMAIN.get(domain)
    return DATA_SUITES[suite][1] if suite else EvalTask("", max_new_tokens=256)


def data_task(
    path: str, suite: str | None = None, *, name: str | None = None, options: dict[str, Any] | None = None
) -> EvalTask:
    """An :class:`EvalTask` for a data file: in the format ``suite`` reads (a ``DATA_SUITES`` name; FLORES or
    WMT for ``wmt``, chat or Alpaca for ``chat``), or detected when ``suite`` is None.

    Raises ``ValueError`` (a ``TaskDataError`` names the file) when the file is not in a format the suite reads.
    """

    if suite is not None and suite not in DATA_SUITES:
        raise ValueError(
            f"suite {suite!r} does not read data files; with --data use one of {', '.join(DATA_SUITES)}"
        )
    if suite is None:
        fmt = detect_format(path)
    else:
        formats = DATA_SUITES[suite][0]
        _, columns, found = matching_formats(path)
        fits = [f for f in found if f in formats]
        if not fits:
            looks = f"looks like {' or '.join(found)} data" if found else f"has columns {columns}"
            raise ValueError(f"{path}: {looks}, but suite {suite!r} reads {' or '.join(formats)} data")
        fmt = fits[0]
    source: dict[str, Any] = {
        "name": name or suite or fmt,
        "source": fmt,
        "path": str(Path(path).absolute()),
        "split": "test",
    }
    if options:
        source["options"] = options
    if suite is None:
        domain = load_task({**source, "limit": 1}).spec.domain
        return replace(_settings(domain), name=source["name"], source=source)
    return replace(DATA_SUITES[suite][1], name=source["name"], source=source)


def config_tasks(config: str | Path) -> tuple[list[dict[str, Any]], Path]:
    """The task configs of a run config (``[feeder] tasks`` and any ``[[tasks]]`` tables) and the directory
    their relative paths resolve against (the config file's)."""
    path = Path(config)
    if not path.is_file():
        raise ValueError(f"config file not found: {path}")
    doc = tomllib.loads(path.read_text())
    entries = list(doc.get("feeder", {}).get("tasks", [])) + list(doc.get("tasks", []))
    tasks = [{"name": e} if isinstance(e, str) else dict(e) for e in entries]
    return tasks, path.absolute().parent


def _named_task(name: str, configs: list[dict[str, Any]]) -> dict[str, Any] | None:

    for cfg in configs:
        if cfg.get("name") == name:
            return cfg
    if name in BUILTIN_NAMES:
        return {"name": name}
    return None


def _heldout(cfg: dict[str, Any], split: str, data: str | None, name: str) -> dict[str, Any]:
    """The task config pointed at its held-out split, or at ``data`` (the whole file, same format and tools)."""
    source = cfg.get("source", "builtin")
    cfg = {k: v for k, v in cfg.items() if k not in ("limit", "weight")}  # training knobs, not the eval's
    if data is not None:
        out = {k: v for k, v in cfg.items() if k not in ("path", "split_field")}
        if source == "builtin":
            out = {"name": cfg["name"], "source": "auto", "spec": cfg.get("spec", {})}
        return {**out, "path": str(Path(data).absolute()), "split": split}
    if source == "builtin":
        return {**cfg, "split": split}
    if cfg.get("split_field") is None and cfg.get("split", "train") != split:
        raise ValueError(
            f"task {name!r} has no held-out split: its file has no split column (split_field); pass "
            f"--data FILE with held-out records, or --split {cfg.get('split', 'train')} to evaluate "
            "on its training data"
        )
    return {**cfg, "split": split}


def plan(
    *,
    suite: str | None = None,
    data: str | None = None,
    tasks: list[str] | None = None,
    config: str | Path | None = None,
    split: str = "test",
    limit: int | None = None,
    options: dict[str, Any] | None = None,
    overrides: dict[str, Any] | None = None,
) -> list[EvalTask]:
    """The tasks one ``rlar eval`` evaluates (see the module docstring for the three ways to name them; with a
    built-in ``suite`` and no ``data``, ``tasks`` picks a subset of the suite).

    ``config`` is the run config the tasks come from (``--config``, or the checkpoint run's
    ``config.toml``). ``overrides`` replace generation settings (``max_new_tokens``, ``n_samples``,
    ``temperature``, ``ks``). Raises ``ValueError`` with what to do instead when the request does not fit.
    """
    out: list[EvalTask]
    if tasks and suite in SUITES and data is None:
        out = get_suite(suite, tasks=tasks)
    elif tasks:
        configs, base = config_tasks(config) if config else ([], None)
        out = []
        for name in tasks:
            cfg = _named_task(name, configs)
            if cfg is None:
                if data is None:
                    where = (
                        f"the config {config}" if config else "the built-in tasks (no --config or run config)"
                    )
                    raise ValueError(
                        f"task {name!r} is not in {where}; give --config RUN.toml (or a run "
                        "directory as --checkpoint) that defines it, or --data FILE"
                    )
                out.append(
                    replace(
                        data_task(data, suite if suite in DATA_SUITES else None, name=name, options=options),
                        tool_score=True,
                    )
                )
                continue
            source = _heldout(cfg, split, data, name)

            domain = load_task({**source, "limit": 1}, base).spec.domain
            out.append(
                replace(
                    _settings(domain),
                    name=name,
                    source=source,
                    base_dir=str(base) if base else None,
                    tool_score=True,
                )
            )
    elif data is not None:
        out = [data_task(data, suite, options=options)]
    else:
        out = get_suite(suite or "demo")
    out = [_limited(t, limit) for t in out]
    if overrides:
        out = [replace(t, **{k: v for k, v in overrides.items() if v is not None}) for t in out]
    return out
