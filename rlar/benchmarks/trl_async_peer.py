"""The peer of ``rlar bench pipeline --baseline trl-async``: TRL's ``AsyncGRPOTrainer`` with its vLLM server.

``python -m rlar.benchmarks.trl_async_peer SETTINGS.json`` starts the vLLM server the way TRL documents it for
this trainer — ``trl vllm-serve``'s own command line (``trl.scripts.vllm_serve.build_command``: ``vllm serve`` with
``--weight-transfer-config '{"backend": "nccl"}'``, ``--logprobs-mode processed_logprobs``, and
``VLLM_SERVER_DEV_MODE=1``) on one CUDA device — then trains ``warmup_steps + steps`` steps of
``trl.experimental.async_grpo.AsyncGRPOTrainer`` on another (the server and the trainer must not share a device:
their NCCL weight-transfer group has one rank on each) and prints one JSON line: step times (from one
``on_step_end`` to the next, the first ``warmup_steps`` left out), samples/s over the measured steps, CPU seconds
per step of the whole peer (trainer, TRL's rollout-worker child, the vLLM server and its engine processes).

The same work as the project's ways: the same model directory, prompt texts and references in the same order,
``prompts`` × ``group_size`` completions of at most ``max_new_tokens`` tokens per step at temperature 1 (a step
is exactly that many samples: ``token_budget = 0`` batches a fixed count), the same learning rate,
``max_staleness = 2`` as the project's async way, and the same reward: the project's own tool (its spec in the
settings), in a picklable async reward (:class:`ProjectReward`), since TRL scores in a spawned child process. A
tokenizer without a chat template (the tiny ByT5 model) gets one that renders the prompt text as it is, as the
project's engines render it, and a response template that reads a completion as its text (:func:`plain_chat`).
TRL's defaults are kept otherwise.

What it needs, checked by :func:`missing` before anything starts (the bench reports the list and skips the peer
when it is not empty): CUDA with at least two devices, torch's NCCL backend (the weight transfer), vLLM, and the
``kernels`` package (the trainer's tree attention loads its FlashAttention-3 kernel through it: on a machine that
cannot reach the Hub, that kernel must be in the local cache).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import psutil

from rlar.benchmarks import trl_async_peer
from rlar.benchmarks.trl_peer import step_figures
from rlar.tools import ToolInput, ToolSpec, make_tool

# torch, trl, datasets and transformers are imported where used: heavy and optional (the CLI starts without
# them).

__all__ = ["ProjectReward", "devices", "missing", "plain_chat", "run"]

PLAIN_CHAT_TEMPLATE = "{{ messages | map(attribute='content') | join('\n') }}"
"""The template given to a tokenizer that has none: the messages' contents, nothing added (the project's engines
render such a prompt as its text)."""


def plain_chat(tok: Any) -> Any:
    """``tok`` given what TRL's rollout worker needs of a tokenizer that has no chat template (the tiny ByT5
    model): :data:`PLAIN_CHAT_TEMPLATE`, and a response template that reads a completion as plain text up to EOS
    (TRL parses every completion with one, and refuses a chat template it does not know). A tokenizer with a chat
    template is returned as it is."""
    if getattr(tok, "chat_template", None):
        return tok
    tok.chat_template = PLAIN_CHAT_TEMPLATE
    if getattr(tok, "response_template", None) is None and getattr(tok, "response_schema", None) is None:
        eos = re.escape(tok.eos_token) + r"\s*|$" if tok.eos_token else "$"
        tok.response_template = {
            "defaults": {"role": "assistant"},
            "fields": {"content": {"close_pattern": eos, "content": "text"}},
        }
    return tok


def missing() -> list[str]:
    """What this machine lacks to run TRL's asynchronous trainer as TRL documents it (empty: nothing)."""
    out: list[str] = []
    try:
        import torch
    except ImportError:
        return ["torch is not installed"]
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if n == 0:
        out.append(
            "no CUDA device (torch.cuda.is_available() is False): TRL's AsyncGRPOTrainer generates on a vLLM "
            "server on a GPU and sends it its weights over NCCL"
        )
    elif n < 2:
        out.append(
            f"{n} CUDA device: the vLLM server and the trainer need one each (their NCCL weight-transfer group "
            "has a rank on each, and NCCL refuses two ranks on one device)"
        )
    dist = getattr(torch, "distributed", None)
    if dist is None or not dist.is_available() or not dist.is_nccl_available():
        out.append(
            "torch.distributed has no NCCL backend (trl/experimental/async_grpo/weight_transfer.py needs it)"
        )
    if importlib.util.find_spec("vllm") is None:
        out.append("vllm is not installed (the generation server)")
    if importlib.util.find_spec("trl") is None:
        out.append("trl is not installed (pip install 'rlar[bench]')")
    if importlib.util.find_spec("kernels") is None:
        out.append(
            "the kernels package is not installed (the trainer's tree attention loads FlashAttention-3 with it)"
        )
    return out


def devices() -> tuple[str, str]:
    """(the server's device, the trainer's device) as ``CUDA_VISIBLE_DEVICES`` values: the first two visible."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible:
        ids = [d.strip() for d in visible.split(",") if d.strip()]
    else:
        import torch

        ids = [str(i) for i in range(torch.cuda.device_count())]
    if len(ids) < 2:
        raise RuntimeError(f"trl-async needs two CUDA devices, {len(ids)} visible")
    return ids[0], ids[1]


class ProjectReward:
    """The project's reward tool as TRL's async reward function: picklable (the spec travels, the tool is built
    in the rollout worker's process on first use), scores a group's completions with the tool's own concurrency."""

    __name__ = "project_reward"

    def __init__(self, tool_spec: dict[str, Any]) -> None:
        self.tool_spec = tool_spec
        self._tool: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {"tool_spec": self.tool_spec}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.tool_spec = state["tool_spec"]
        self._tool = None

    async def __call__(
        self, prompts: list[Any], completions: list[Any], reference: list[Any], **kw: Any
    ) -> list[float]:

        if self._tool is None:
            self._tool = make_tool(ToolSpec.from_dict(self.tool_spec))
        texts = [c if isinstance(c, str) else c[-1]["content"] for c in completions]
        queries = [p if isinstance(p, str) else p[-1]["content"] for p in prompts]
        results = await self._tool.score_batch(
            [
                ToolInput(query=q, response=t, reference=r)
                for q, t, r in zip(queries, texts, reference, strict=True)
            ]
        )
        return [float(r.score) if r.ok and r.score is not None else 0.0 for r in results]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tree_cpu_s(root: int) -> float:
    """CPU seconds (user + system) of the process ``root`` and every live descendant."""

    me = psutil.Process(root)
    total = 0.0
    for p in [me, *me.children(recursive=True)]:
        try:
            t = p.cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system
    return total


def _wait_ready(url: str, server: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(
                f"the vLLM server exited (code {server.returncode}) before it answered /health"
            )
        try:
            with urllib.request.urlopen(url + "/health", timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(1.0)
    raise TimeoutError(f"the vLLM server did not answer {url}/health in {timeout_s:.0f}s")


def run(s: dict[str, Any]) -> dict[str, Any]:
    """Serve, train, measure. The bench chose the devices (:func:`devices`) and started this process with
    ``CUDA_VISIBLE_DEVICES`` set to the trainer's."""
    server_dev, trainer_dev = str(s["server_device"]), str(s["trainer_device"])
    if os.environ.get("CUDA_VISIBLE_DEVICES") != trainer_dev:
        raise RuntimeError(f"start the peer with CUDA_VISIBLE_DEVICES={trainer_dev} (the trainer's device)")
    from trl.scripts.vllm_serve import ScriptArguments, build_command

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    serve_args = ScriptArguments(
        model=s["model_dir"],
        host="127.0.0.1",
        port=port,
        gpu_memory_utilization=float(s["gpu_memory_utilization"]),
        dtype=s["dtype"],
        max_model_len=int(s["max_model_len"]),
    )
    server_env = {**os.environ, "VLLM_SERVER_DEV_MODE": "1", "CUDA_VISIBLE_DEVICES": server_dev}
    log_path = Path(s["work_dir"]) / "trl-async-vllm.log"
    with open(log_path, "wb") as logf:
        server = subprocess.Popen(
            build_command(serve_args), env=server_env, stdout=logf, stderr=subprocess.STDOUT
        )
    try:
        _wait_ready(url, server, float(s["server_timeout_s"]))
        doc = _train(s, url)
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    doc["server"] = {
        "url": url,
        "device": server_dev,
        "command": "vllm " + " ".join(build_command(serve_args)[3:]),
    }
    doc["trainer_device"] = trainer_dev
    return doc


def _train(s: dict[str, Any], url: str) -> dict[str, Any]:
    import torch
    from datasets import Dataset
    from transformers import AutoTokenizer, TrainerCallback
    from trl.experimental.async_grpo import AsyncGRPOConfig, AsyncGRPOTrainer

    torch.manual_seed(int(s["seed"]))
    tok = plain_chat(AutoTokenizer.from_pretrained(s["model_dir"]))
    tok.padding_side = "left"
    data = Dataset.from_dict(
        {"prompt": [[{"role": "user", "content": p}] for p in s["prompts"]], "reference": s["references"]}
    )
    stamps: list[tuple[float, float]] = []  # (wall, CPU of the whole peer)
    rewards: list[float] = []
    me = os.getpid()

    class _Clock(TrainerCallback):  # stamps[0]: training starts; stamps[k]: step k ends
        def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            stamps.append((time.perf_counter(), _tree_cpu_s(me)))

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            stamps.append((time.perf_counter(), _tree_cpu_s(me)))

        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kw: Any) -> None:
            if logs and isinstance(logs.get("reward"), int | float):
                rewards.append(float(logs["reward"]))

    total = int(s["warmup_steps"]) + int(s["steps"])
    n = int(s["prompts_per_step"]) * int(s["group_size"])
    with tempfile.TemporaryDirectory(prefix="rlar-trl-async-") as out:
        cfg = AsyncGRPOConfig(
            output_dir=out,
            dtype=s["dtype"],
            num_generations=int(s["group_size"]),
            per_device_train_batch_size=n,
            gradient_accumulation_steps=1,
            token_budget=0,  # a step is exactly n samples, as in the other ways
            max_completion_length=int(s["max_new_tokens"]),
            learning_rate=float(s["lr"]),
            temperature=1.0,
            max_staleness=2,
            vllm_server_base_url=url,
            logging_steps=1,
            report_to=[],
            max_steps=total,
            save_strategy="no",
            seed=int(s["seed"]),
            dataloader_num_workers=0,
        )
        trainer = AsyncGRPOTrainer(
            model=s["model_dir"],
            reward_funcs=[ProjectReward(s["tool_spec"])],  # type: ignore[list-item]  # async: TRL awaits it
            args=cfg,
            train_dataset=data,
            processing_class=tok,
            callbacks=[_Clock()],
        )
        t0 = time.perf_counter()
        trainer.train()
        wall_all = time.perf_counter() - t0
    return {
        **step_figures(stamps, int(s["warmup_steps"]), n, "TRL async"),
        "seconds_incl_startup": round(wall_all, 1),
        "reward_mean": sum(rewards) / len(rewards) if rewards else None,
        "max_staleness": 2,
    }


def main() -> None:
    # Through the module's own name, so ProjectReward pickles as rlar.benchmarks.trl_async_peer.ProjectReward
    # (TRL's rollout worker is a spawned process that must import it), not as __main__.ProjectReward.

    settings = json.loads(Path(sys.argv[1]).read_text())
    print(json.dumps(trl_async_peer.run(settings)), flush=True)


if __name__ == "__main__":
    main()
