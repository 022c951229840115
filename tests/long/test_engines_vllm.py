"""The vLLM generation engine on the tiny policy (rlar/policy/engines/vllm_engine.py): log-probs against a
teacher-forced transformers recomputation (tests/support/engines.py), weights loaded in place, generation from
a fresh thread."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from rlar.policy.engines import (
    VLLMEngineConfig,
    make_engine,
)
from rlar.policy.engines.hf import TransformersEngine
from rlar.policy.engines.vllm_engine import _RELOAD_LOGGER
from rlar.policy.model import build_tiny_policy
from rlar.policy.weights import state_dict_to_safetensors_bytes
from tests.support.engines import (
    EOS,
    PROMPTS,
    max_logprob_error,
    reference_model,
    teacher_forced,
    train_towards_eos,
    transformers_engine,
)

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def policy_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_policy(tmp_path_factory.mktemp("policy") / "tiny")


@pytest.fixture
def engine(policy_dir: Path) -> TransformersEngine:
    return transformers_engine(policy_dir)


# -- vLLM engine -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def vllm_engine(policy_dir: Path) -> Iterator[Any]:
    start = time.perf_counter()
    engine = make_engine(VLLMEngineConfig(model=str(policy_dir), max_model_len=256))
    print(f"\nvLLM engine init (incl. import): {time.perf_counter() - start:.2f} s")
    yield engine
    engine.close()


def _vllm_prompt_logprobs(engine: Any, ids: list[int]) -> list[float]:
    """vLLM's log-probs of ids[1:] given their prefixes (a fixed continuation, no sampling)."""
    from vllm import SamplingParams
    from vllm.inputs import TokensPrompt

    params = SamplingParams(max_tokens=1, prompt_logprobs=0)
    (out,) = engine.llm.generate([TokensPrompt(prompt_token_ids=ids)], params, use_tqdm=False)
    return [step[tok].logprob for tok, step in zip(ids[1:], out.prompt_logprobs[1:], strict=True)]


@pytest.mark.vllm
@pytest.mark.slow
def test_vllm_generates_from_a_fresh_thread_when_torch_uses_fewer_threads_than_cores(
    vllm_engine: Any,
) -> None:
    """The rollout (its compute thread) and `rlar eval` (asyncio.to_thread) call the engine from worker
    threads, and the actors set torch to one thread: vLLM's CPU attention then saw OpenMP's default in that
    thread and aborted (on any machine with 2+ cores; on one core both counts are 1 and this cannot fail)."""
    import threading

    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    got: dict[str, Any] = {}

    def work() -> None:
        try:
            got["out"] = vllm_engine.generate(
                [[1, 2, 3], [4, 5, 6, 7]], n=1, max_new_tokens=4, temperature=0.0
            )
        except Exception as exc:  # the failure to report, from the other thread
            got["error"] = exc

    try:
        t = threading.Thread(target=work)
        t.start()
        t.join(300)
    finally:
        torch.set_num_threads(before)
    assert "error" not in got, got.get("error")
    assert [len(s) for s in got["out"]] == [1, 1]


@pytest.mark.vllm
@pytest.mark.slow
def test_vllm_logprobs_match_a_transformers_recomputation(vllm_engine: Any, policy_dir: Path) -> None:
    ref = reference_model(policy_dir)
    prompts = [vllm_engine.render_prompt(p) for p in PROMPTS]
    out = vllm_engine.generate(prompts, n=4, max_new_tokens=12, temperature=1.0, top_p=1.0, seed=0)
    assert [len(s) for s in out] == [4, 4, 4]
    assert all(len(c.logprobs) == len(c.token_ids) > 0 for s in out for c in s)
    assert max_logprob_error(ref, prompts, out) < 1e-3
    tempered = vllm_engine.generate(prompts, n=4, max_new_tokens=12, temperature=0.7, top_p=0.8, seed=0)
    assert max_logprob_error(ref, prompts, tempered, temperature=0.7, top_p=0.8) < 1e-3
    again = vllm_engine.generate(prompts, n=4, max_new_tokens=12, temperature=0.7, top_p=0.8, seed=0)
    assert [[c.token_ids for c in s] for s in again] == [[c.token_ids for c in s] for s in tempered]


@pytest.mark.vllm
@pytest.mark.slow
def test_vllm_loads_new_weights_in_place_without_a_restart(vllm_engine: Any, policy_dir: Path) -> None:
    original = reference_model(policy_dir)
    block = vllm_engine.llm.llm_engine.vllm_config.cache_config.block_size
    # A prompt longer than a KV block, generated from before the update, so its prefix is cached.
    long_prompt = vllm_engine.render_prompt(
        "The quick brown fox jumps over the lazy dog. " * (block // 40 + 1)
    )
    assert len(long_prompt) > block
    fixed = long_prompt + vllm_engine.render_prompt(" and then it sleeps.")
    before = _vllm_prompt_logprobs(vllm_engine, fixed)
    assert (
        max(abs(a - b) for a, b in zip(before, teacher_forced(original, fixed[:1], fixed[1:]), strict=True))
        < 1e-3
    )
    vllm_engine.generate([long_prompt], n=2, max_new_tokens=4, seed=0)
    llm = vllm_engine.llm

    trained = reference_model(policy_dir)
    new_weights = train_towards_eos(trained)
    start = time.perf_counter()
    seen = _LogRecords()
    logging.getLogger(_RELOAD_LOGGER).addHandler(seen)
    try:
        vllm_engine.load_weights(state_dict_to_safetensors_bytes(new_weights), version=1)
    finally:
        logging.getLogger(_RELOAD_LOGGER).removeHandler(seen)
    # The tied head and the rotary cache are never in an update; vLLM's warnings for them are expected and dropped.
    assert not [m for m in seen.messages if "Failed to load weights" in m], seen.messages
    print(f"\nvLLM in-place weight update: {1000 * (time.perf_counter() - start):.1f} ms")
    assert vllm_engine.version == 1 and vllm_engine.llm is llm

    after = _vllm_prompt_logprobs(vllm_engine, fixed)
    expected = teacher_forced(trained, fixed[:1], fixed[1:])
    assert max(abs(a - b) for a, b in zip(after, expected, strict=True)) < 1e-3
    assert max(abs(a - b) for a, b in zip(after, before, strict=True)) > 0.1
    out = vllm_engine.generate([long_prompt], n=8, max_new_tokens=8, seed=1)  # cached prefix must be gone
    assert max_logprob_error(trained, [long_prompt], out) < 1e-3
    assert any(c.finish_reason == "stop" and c.token_ids[-1] == EOS for c in out[0])

    vllm_engine.load_weights(original.named_parameters(), version=2)  # named tensors, back to the start
    assert (
        max(abs(a - b) for a, b in zip(_vllm_prompt_logprobs(vllm_engine, fixed), before, strict=True)) < 1e-5
    )


class _LogRecords(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())
