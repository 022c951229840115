"""Reward tools: the contract (``base``), built-ins, and safe execution (``executor``).

Built-ins (``builtin_specs()``): ``math_verify``, ``exact_match``, ``normalized_match``, ``contains_match``,
``format_rules`` (rules.py); ``ifeval`` (instructions.py);
``bleu2``, ``chrf``, ``embedding_similarity`` (metrics.py); ``code_tests`` (code.py); ``reward_model``
(reward_model.py); ``llm_judge`` (judge.py). Heavy libraries (torch,
transformers, sacrebleu, math-verify, anthropic) are imported only when a tool is built.
"""

from rlar.tools.base import (
    BUILTIN_IMPLS,
    RewardTool,
    ToolInput,
    ToolKind,
    ToolResult,
    ToolSpec,
    builtin_specs,
    compute_content_hash,
    finalize,
    make_tool,
    resolve_tool_class,
)
from rlar.tools.code import pass_at_k
from rlar.tools.executor import ResultCache, ToolExecutor

__all__ = [
    "BUILTIN_IMPLS",
    "ResultCache",
    "RewardTool",
    "ToolExecutor",
    "ToolInput",
    "ToolKind",
    "ToolResult",
    "ToolSpec",
    "builtin_specs",
    "compute_content_hash",
    "finalize",
    "make_tool",
    "pass_at_k",
    "resolve_tool_class",
]
