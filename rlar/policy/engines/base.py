"""The generation-engine contract shared by the transformers and vLLM backends, and their config.

An engine serves one policy version at a time: it renders prompts to token ids, samples ``n``
completions per prompt with the log-probability of every sampled token, and swaps its weights in place
between batches (``load_weights``), without a restart.

Behaviour log-probs (``Completion.logprobs``), the same in both engines:
- ``logprobs_mode="sampled"`` (default): the log-prob of each sampled token under the distribution it
  was actually drawn from — ``softmax(logits / temperature)`` restricted to the top-k tokens, then to the
  top-p nucleus, and renormalised (:func:`sampling_log_probs`). vLLM calls this ``processed_logprobs``.
- ``logprobs_mode="raw"``: the model's own log-prob at temperature 1, ignoring temperature, top-k and
  top-p (vLLM's default ``raw_logprobs``).
- ``temperature == 0`` is greedy decoding; its log-probs are the raw ones in both modes (as in vLLM).

The rollout sends its settings with every sample group (:class:`bus.messages.Sampling`) and the learner
recomputes log-probs at the same temperature, so "sampled" log-probs are what its importance weight
needs at any temperature; top-k/top-p truncation is part of the behaviour policy only (what the weight
then means: :mod:`rlar.learn.trainer`). Training needs the "sampled" mode unless sampling is plain
(temperature 1, no truncation), where both modes coincide (up to kernel numerics, ~1e-5 in float32).

Completions include the stop token (EOS) when ``finish_reason == "stop"``, with its log-prob, because
the learner must also learn when to stop; ``text`` is decoded without special tokens.
"""

from __future__ import annotations

import json
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rlar.policy.lora import adapter_pairs
from rlar.policy.weights import safetensors_bytes_to_tensors

# torch and transformers are imported where used: heavy and optional (rlar --help imports this module).

if TYPE_CHECKING:
    import torch

FinishReason = Literal["stop", "length"]
LogprobsMode = Literal["sampled", "raw"]
WeightsInput = Iterable[tuple[str, "torch.Tensor"]] | Mapping[str, "torch.Tensor"] | bytes

#: Below this temperature sampling is greedy (vLLM's threshold, so both engines switch together).
GREEDY_TEMPERATURE = 1e-5


@dataclass(slots=True)
class Completion:
    """One sampled continuation: ``logprobs[i]`` is the behaviour log-prob of ``token_ids[i]``."""

    token_ids: list[int]
    logprobs: list[float]
    text: str
    finish_reason: str  # "stop" (a stop token was sampled, and is included) or "length"


class _EngineConfigBase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    """Local Hugging Face checkpoint directory (config, safetensors, tokenizer)."""
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    """Compute dtype. vLLM on CPU needs float32."""
    device: str = "cpu"
    """'cpu', 'cuda' or 'cuda:N'. vLLM takes its device from the installed wheel; this must agree."""
    max_model_len: int = Field(default=512, ge=2)
    """Prompt plus completion tokens; generation stops with finish_reason 'length' at this length."""
    seed: int = 0
    """Seeds the engine's sampler for calls made with seed=None (a reproducible stream per engine)."""
    max_num_seqs: int = Field(default=256, ge=1)
    """Most sequences decoded together (prompts × n); larger batches are split (transformers) or
    scheduled (vLLM)."""
    logprobs_mode: LogprobsMode = "sampled"
    """What Completion.logprobs holds; see the module docstring."""


class TransformersEngineConfig(_EngineConfigBase):
    """A hand-written KV-cached sampling loop over ``AutoModelForCausalLM``: exact log-probs, any device."""

    kind: Literal["transformers"] = "transformers"
    num_threads: int | None = Field(default=1, ge=1)
    """torch.set_num_threads at start-up (CPU); None leaves torch's setting alone. One thread per busy
    process is what holds up on small shared machines."""
    keep_freed_memory: bool = True
    """Keep memory freed by one generation in the process for the next (glibc; :mod:`rlar.malloc`) instead of
    handing large blocks back to the kernel; the process stays at its peak memory. False leaves malloc alone."""
    attn_implementation: str = "sdpa"
    """Passed to from_pretrained ('sdpa' or 'eager')."""


class VLLMEngineConfig(_EngineConfigBase):
    """vLLM's offline ``LLM`` in this process, with in-place weight reloads through a worker extension."""

    kind: Literal["vllm"] = "vllm"
    in_process: bool = True
    """Run vLLM's engine core in this process (VLLM_ENABLE_V1_MULTIPROCESSING=0, 'uni' executor): a
    much faster start on CPU and no `if __name__ == "__main__"` guard. False spawns the engine core; the
    calling script then needs the guard."""
    enforce_eager: bool = True
    """No CUDA graphs / torch.compile (required on CPU; set False on GPU for speed)."""
    kv_cache_space_gib: int = Field(default=1, ge=1)
    """CPU only: VLLM_CPU_KVCACHE_SPACE, unless already set in the environment."""
    cpu_cores: str = "auto"
    """CPU only: the cores vLLM binds its OpenMP threads to, one thread each (VLLM_CPU_OMP_THREADS_BIND, unless
    already set in the environment): ``auto`` every core, ``"1"`` or ``"0-3"`` those cores, ``nobind`` torch's own
    unbound threads. On a machine the rollout shares with a learner, give each its own cores: two threads that
    share a core with another busy process run many times slower (docs/benchmarks.md)."""
    gpu_memory_utilization: float = Field(default=0.5, gt=0.0, le=1.0)
    """GPU only: fraction of device memory vLLM may take (weights + KV cache)."""
    enable_prefix_caching: bool = True
    """Reuse prompt KV across the n samples of a prompt; reset after every weight update."""
    max_lora_rank: int | None = Field(default=None, ge=1)
    """Serve LoRA adapters (a learner training with ``trainer.lora``) through vLLM's LoRA support, up to
    this rank; None: no LoRA support (an adapter update is then refused)."""
    tensor_parallel_size: int = Field(default=1, ge=1)
    """GPUs one engine shards the model over (vLLM tensor parallelism); above 1 the engine core runs in
    its own processes (in_process must be False)."""
    engine_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Extra keyword arguments for vllm.LLM (override the ones above)."""

    @model_validator(mode="after")
    def _cpu_needs_float32(self) -> VLLMEngineConfig:
        if self.cpu_cores not in ("auto", "nobind") and not re.fullmatch(
            r"\d+(-\d+)?(,\d+(-\d+)?)*", self.cpu_cores
        ):
            raise ValueError(
                f"cpu_cores must be auto, nobind or a core list such as 1 or 0-3, got {self.cpu_cores!r}"
            )
        if self.device.startswith("cpu") and self.dtype != "float32":
            raise ValueError("vLLM on CPU needs dtype='float32'")
        if self.tensor_parallel_size > 1 and (self.in_process or self.device.startswith("cpu")):
            raise ValueError(
                "tensor_parallel_size > 1 needs GPUs and in_process = false (vLLM's 'uni' "
                "in-process executor drives one device)"
            )
        return self


EngineConfig = Annotated[TransformersEngineConfig | VLLMEngineConfig, Field(discriminator="kind")]


def sampling_log_probs(
    logits: torch.Tensor, temperature: float, top_p: float, top_k: int = 0
) -> torch.Tensor:
    """Log-probs of the distribution a sampler draws from, given last-position ``logits`` [..., V].

    ``softmax(logits / temperature)``; then top-k (``top_k > 0``): keep the tokens whose logit is at
    least the k-th largest (ties kept); then top-p: sort ascending, drop the tokens whose cumulative
    probability is <= 1 - top_p (always keeping the most likely one); renormalise. This is vLLM's
    ``apply_top_k_top_p`` rule (and transformers' ``TopKLogitsWarper``/``TopPLogitsWarper`` order).
    Dropped tokens get -inf. Greedy (temperature < 1e-5) returns the raw log-probs, matching vLLM.
    """
    import torch

    x = logits.float()
    if temperature < GREEDY_TEMPERATURE:
        return torch.log_softmax(x, dim=-1)
    x = x / temperature
    if 0 < top_k < x.shape[-1]:
        kth = x.topk(top_k, dim=-1).values[..., -1:]
        x = x.masked_fill(x < kth, -math.inf)
    if top_p < 1.0:
        sorted_x, idx = x.sort(dim=-1, descending=False)
        cum = sorted_x.softmax(dim=-1).cumsum(dim=-1)
        drop = cum <= 1.0 - top_p
        drop[..., -1] = False
        sorted_x = sorted_x.masked_fill(drop, -math.inf)
        x = torch.empty_like(x).scatter_(-1, idx, sorted_x)
    return torch.log_softmax(x, dim=-1)


class GenerationEngine(ABC):
    """Samples completions from the current policy version; swaps weights in place.

    Not thread-safe: call ``generate`` and ``load_weights`` from one thread (or task) in turn — a
    weight update happens between batches, never during one.
    """

    version: int
    """Policy version currently served: 0 for the checkpoint in ``cfg.model``, then whatever the last
    successful ``load_weights`` said."""

    def __init__(self, cfg: TransformersEngineConfig | VLLMEngineConfig) -> None:
        from transformers import AutoTokenizer

        self.cfg = cfg
        self.version = 0
        self.tokenizer = AutoTokenizer.from_pretrained(cfg.model)
        self._param_shapes, self._tied_aliases = _checkpoint_param_shapes(cfg.model)

    # -- prompts -----------------------------------------------------------------------------------
    def render_prompt(self, prompt: str | list[dict[str, Any]]) -> list[int]:
        """Token ids for a prompt: the tokenizer's chat template (user turn + generation prompt) when it
        has one; otherwise the plain text (a message list becomes its contents joined by newlines).
        Never appends special tokens such as EOS (ByT5 would otherwise end every prompt with EOS)."""
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
        if getattr(self.tokenizer, "chat_template", None):
            text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            # The template already wrote any BOS it wants; encoding must not add another.
        elif isinstance(prompt, str):
            text = prompt
        else:
            text = "\n".join(str(m["content"]) for m in messages)
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    # -- sampling ----------------------------------------------------------------------------------
    @abstractmethod
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
        """``n`` completions for each prompt, in prompt order: result[i][j] is sample j of prompt i.

        Each completion stops at a stop token (included) or after ``min(max_new_tokens,
        max_model_len - len(prompt))`` tokens. With a ``seed`` the call is reproducible on the same
        engine kind, device and batch; without one it draws from the engine's own seeded stream.
        The two engine kinds do not produce the same samples for the same seed.
        """

    def _check_generate_args(
        self,
        prompt_ids: list[list[int]],
        n: int,
        max_new_tokens: int,
        temperature: float,
        top_p: float,
        top_k: int = 0,
    ) -> None:
        if n < 1 or max_new_tokens < 1:
            raise ValueError(
                f"need n >= 1 and max_new_tokens >= 1, got n={n} max_new_tokens={max_new_tokens}"
            )
        if not (temperature >= 0.0 and 0.0 < top_p <= 1.0 and top_k >= 0):
            raise ValueError(
                f"need temperature >= 0, 0 < top_p <= 1, top_k >= 0; got {temperature}, {top_p}, {top_k}"
            )
        for i, p in enumerate(prompt_ids):
            if not p:
                raise ValueError(f"prompt {i} is empty")
            if len(p) >= self.cfg.max_model_len:
                raise ValueError(f"prompt {i} has {len(p)} tokens; max_model_len is {self.cfg.max_model_len}")

    # -- weights -----------------------------------------------------------------------------------
    @abstractmethod
    def load_weights(
        self, weights: WeightsInput, version: int, adapter: Mapping[str, Any] | None = None
    ) -> None:
        """Serve ``version`` from now on, with ``weights`` replacing every parameter in place — or, with
        ``adapter`` (a PEFT LoraConfig dict), with ``weights`` as LoRA adapters over the base checkpoint
        (merged into the weights, or served through vLLM's LoRA support; :mod:`rlar.policy.lora`).

        ``weights`` is a safetensors blob or named tensors with Hugging Face parameter names (adapters:
        PEFT's names); full weights must cover every parameter (a tied ``lm_head.weight`` may be left
        out). Names and shapes are checked before anything is written, so a bad update raises
        ValueError and leaves the old weights. Call between batches.
        """

    @staticmethod
    def _items(weights: WeightsInput) -> Iterable[tuple[str, torch.Tensor]]:
        if isinstance(weights, bytes | bytearray | memoryview):
            return safetensors_bytes_to_tensors(bytes(weights)).items()
        if isinstance(weights, Mapping):
            return weights.items()
        return weights

    def _normalize_adapter(
        self, weights: WeightsInput, adapter: Mapping[str, Any]
    ) -> dict[str, torch.Tensor]:
        """Decode and validate a LoRA update against the model's shapes (names, A [r, in], B [out, r])."""

        tensors = dict(self._items(weights))
        r = int(adapter["r"])
        for weight, (a, b) in adapter_pairs(tensors).items():
            shape = self._param_shapes.get(weight)
            if shape is None or len(shape) != 2:
                raise ValueError(f"adapter targets {weight!r}, which is not a matrix of this model")
            if tuple(tensors[a].shape) != (r, shape[1]) or tuple(tensors[b].shape) != (shape[0], r):
                raise ValueError(
                    f"adapter for {weight} {shape}: A {tuple(tensors[a].shape)}, B "
                    f"{tuple(tensors[b].shape)} do not fit rank {r}"
                )
        return tensors

    def _normalize_weights(self, weights: WeightsInput) -> list[tuple[str, torch.Tensor]]:
        """Decode and validate an update: known names, right shapes, full coverage, aliases dropped."""
        items = self._items(weights)
        out: list[tuple[str, torch.Tensor]] = []
        seen: set[str] = set()
        for name, t in items:
            if name in self._tied_aliases:
                continue  # tied to the embedding, which the update also carries
            shape = self._param_shapes.get(name)
            if shape is None:
                raise ValueError(f"weights update has unknown parameter {name!r}")
            if tuple(t.shape) != shape:
                raise ValueError(f"weights update: {name} has shape {tuple(t.shape)}, model has {shape}")
            if name in seen:
                raise ValueError(f"weights update repeats {name!r}")
            seen.add(name)
            out.append((name, t))
        missing = sorted(set(self._param_shapes) - seen)
        if missing:
            raise ValueError(f"weights update lacks {len(missing)} parameters, e.g. {missing[:3]}")
        return out

    # -- lifecycle ---------------------------------------------------------------------------------
    @abstractmethod
    def close(self) -> None:
        """Free the model and any engine threads or processes; idempotent."""

    def __enter__(self) -> GenerationEngine:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _checkpoint_param_shapes(model_dir: str) -> tuple[dict[str, tuple[int, ...]], frozenset[str]]:
    """Parameter names and shapes of the checkpoint's architecture (built on the meta device, no memory),
    plus the names that alias another parameter (a tied lm_head)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(model_dir)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    aliases = frozenset(name for name, _ in model.named_parameters(remove_duplicate=False)) - set(shapes)
    return shapes, aliases


def stop_token_ids(model_dir: str | Path, tokenizer: Any) -> set[int]:
    """The ids that end a completion: the tokenizer's EOS plus generation_config's eos_token_id(s)."""

    ids: set[int] = set()
    if tokenizer.eos_token_id is not None:
        ids.add(int(tokenizer.eos_token_id))
    gen = Path(model_dir) / "generation_config.json"
    if gen.exists():
        eos = json.loads(gen.read_text()).get("eos_token_id")
        if isinstance(eos, int):
            ids.add(eos)
        elif isinstance(eos, list):
            ids.update(int(e) for e in eos)
    if not ids:
        raise ValueError(f"{model_dir}: no EOS token id in the tokenizer or generation_config")
    return ids
