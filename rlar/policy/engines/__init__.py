"""Generation engines for the policy: one interface, a transformers backend and a vLLM backend.

Pick one with a config whose ``kind`` is ``"transformers"`` or ``"vllm"`` and call :func:`make_engine`.
vLLM is imported only when a vLLM engine is made. See ``base.py`` for what the log-probs mean.
"""

from __future__ import annotations

from rlar.policy.engines.base import (
    Completion,
    EngineConfig,
    GenerationEngine,
    LogprobsMode,
    TransformersEngineConfig,
    VLLMEngineConfig,
    sampling_log_probs,
)
from rlar.policy.engines.hf import TransformersEngine
from rlar.policy.engines.vllm_engine import VLLMEngine

__all__ = [
    "Completion",
    "EngineConfig",
    "GenerationEngine",
    "LogprobsMode",
    "TransformersEngineConfig",
    "VLLMEngineConfig",
    "make_engine",
    "sampling_log_probs",
]


def make_engine(cfg: TransformersEngineConfig | VLLMEngineConfig) -> GenerationEngine:
    """Build the engine ``cfg.kind`` names (imports its backend lazily)."""
    if isinstance(cfg, TransformersEngineConfig):
        return TransformersEngine(cfg)
    if isinstance(cfg, VLLMEngineConfig):
        return VLLMEngine(cfg)
    raise TypeError(f"not an engine config: {type(cfg).__name__}")
