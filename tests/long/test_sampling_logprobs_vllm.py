"""The learner's log-probs of vLLM's samples: its ``processed_logprobs`` at temperatures 0.7 and 1.3, and the
learner's LoRA adapters served by vLLM, against the DeepSpeed trainer's teacher-forced recomputation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from rlar.learn.trainer import DeepSpeedPolicyTrainer, TrainerConfig
from rlar.policy.engines import VLLMEngineConfig, make_engine
from rlar.policy.model import build_tiny_policy
from tests.support.sampling import PROMPTS, TEMPERATURES, completion_batch, kept_mass, learner_minus_behaviour

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_policy(tmp_path_factory.mktemp("policy") / "tiny")


@pytest.fixture(scope="module")
def trainer(policy: Path) -> DeepSpeedPolicyTrainer:
    return DeepSpeedPolicyTrainer(TrainerConfig(model_dir=policy, zero_stage=0))


# -- vLLM ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def vllm_engine(policy: Path, trainer: DeepSpeedPolicyTrainer) -> Iterator[Any]:
    # After the trainer: DeepSpeed starts its 1-rank process group before vLLM's in-process engine does (the
    # other way round DeepSpeed finds no LOCAL_RANK).
    engine = make_engine(VLLMEngineConfig(model=str(policy), max_model_len=256, max_lora_rank=8))
    yield engine
    engine.close()


@pytest.mark.vllm
@pytest.mark.slow
def test_the_learner_recomputes_vllms_processed_logprobs_at_07_and_13(
    policy: Path, trainer: DeepSpeedPolicyTrainer, vllm_engine: Any
) -> None:
    prompts = [vllm_engine.render_prompt(p) for p in PROMPTS]
    for temperature in TEMPERATURES:
        outs = vllm_engine.generate(prompts, n=6, max_new_tokens=12, temperature=temperature, seed=3)
        diff = (
            learner_minus_behaviour(trainer, completion_batch(prompts, outs, temperature)).abs().max().item()
        )
        print(f"\nvLLM processed_logprobs T={temperature}: max |learner - behaviour| {diff:.2e}")
        assert diff < 1e-4
    outs = vllm_engine.generate(prompts, n=4, max_new_tokens=8, temperature=1.3, top_p=0.9, top_k=50, seed=4)
    batch = completion_batch(prompts, outs, 1.3)
    kept = kept_mass(policy, batch, 1.3, 0.9, 50)
    assert (learner_minus_behaviour(trainer, batch).exp() - kept).abs().max().item() < 1e-4


@pytest.mark.vllm
@pytest.mark.slow
def test_vllm_serves_the_learners_lora_adapters_with_the_learners_logprobs(
    policy: Path, trainer: DeepSpeedPolicyTrainer, vllm_engine: Any
) -> None:
    """Only the adapters travel: vLLM serves them as a LoRA request over the base, and its sampled log-probs
    are what the LoRA learner recomputes."""
    from rlar.learn.config import LoraSettings
    from tests.support.trainer import make_batch

    lora = DeepSpeedPolicyTrainer(
        TrainerConfig(model_dir=policy, zero_stage=0, lr=1e-2, lora=LoraSettings(r=4, alpha=8))
    )
    for _ in range(2):
        lora.step(make_batch())
    tensors, adapter = dict(lora.export_named_tensors()), lora.adapter_config()
    assert adapter is not None
    vllm_engine.load_weights(tensors, 7, adapter)
    prompts = [vllm_engine.render_prompt(p) for p in PROMPTS]
    outs = vllm_engine.generate(prompts, n=4, max_new_tokens=10, temperature=0.7, seed=6)
    diff = learner_minus_behaviour(lora, completion_batch(prompts, outs, 0.7)).abs().max().item()
    base = learner_minus_behaviour(trainer, completion_batch(prompts, outs, 0.7)).abs().max().item()
    print(f"\nvLLM LoRA adapter v7 T=0.7: max |learner - behaviour| {diff:.2e} (base model: {base:.2e})")
    assert base > 1e-2  # the adapters changed the policy, and vLLM served the change
    assert vllm_engine.version == 7 and diff < 1e-3
    with pytest.raises(ValueError, match="max_lora_rank"):
        vllm_engine.load_weights(tensors, 8, {**adapter, "r": 16})
