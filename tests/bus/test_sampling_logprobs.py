"""The learner's log-probs under the rollout's sampling settings (temperature, top-p, top-k).

Samples come from the real engines (transformers, and vLLM's ``processed_logprobs``) at temperatures 0.7
and 1.3; the DeepSpeed trainer recomputes their log-probs teacher-forced at the temperature each row was
sampled at. Without truncation they must agree to float32 rounding; with top-p/top-k, exp(learner −
behaviour) must be the probability mass the truncation kept at that position — computed here from a plain
transformers forward pass, sharing no code with either side (rlar/learn/trainer.py documents why).
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from transformers import AutoModelForCausalLM

from rlar.learn.trainer import DeepSpeedPolicyTrainer, PolicyBatch, TrainerConfig
from rlar.policy.engines import Completion, TransformersEngineConfig, VLLMEngineConfig, make_engine
from rlar.policy.model import build_tiny_policy

torch.set_num_threads(1)
PROMPTS = ["The quick brown fox", "2+2=", "hello there"]
TEMPERATURES = (0.7, 1.3)


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_policy(tmp_path_factory.mktemp("policy") / "tiny")


@pytest.fixture(scope="module")
def trainer(policy: Path) -> DeepSpeedPolicyTrainer:
    return DeepSpeedPolicyTrainer(TrainerConfig(model_dir=policy, zero_stage=0))


def _batch(prompts: list[list[int]], outs: list[list[Completion]], temperature: float | None) -> PolicyBatch:
    rows = [(p, c) for p, cs in zip(prompts, outs, strict=True) for c in cs]
    return PolicyBatch.from_samples(
        [p for p, _ in rows],
        [c.token_ids for _, c in rows],
        [c.logprobs for _, c in rows],
        [1.0] * len(rows),
        temperatures=None if temperature is None else [temperature] * len(rows),
    )


def _learner_minus_behaviour(trainer: DeepSpeedPolicyTrainer, batch: PolicyBatch) -> torch.Tensor:
    """log π_learner − log μ at every response token (flat)."""
    return (trainer.logprobs(batch) - batch.behav_logprobs)[batch.response_mask]


def _kept_mass(
    policy: Path, batch: PolicyBatch, temperature: float, top_p: float, top_k: int
) -> torch.Tensor:
    """Per response token: the tempered probability mass of the tokens a top-k-then-top-p sampler keeps
    (the smallest most-likely set reaching top_p within the top k; vLLM's rule), from one forward pass."""
    model = AutoModelForCausalLM.from_pretrained(policy, dtype=torch.float32).eval()
    out = []
    with torch.no_grad():
        for i in range(len(batch)):
            n = int(batch.attention_mask[i].sum())
            probs = torch.softmax(model(batch.input_ids[i : i + 1, :n]).logits[0].float() / temperature, -1)
            for t in range(1, n):
                if not batch.response_mask[i, t]:
                    continue
                p = probs[t - 1].sort(descending=True).values
                if top_k:
                    p = p[:top_k]
                cum = p.cumsum(0) / p.sum()
                keep = int((cum < top_p).sum()) + 1  # the smallest prefix whose share reaches top_p
                out.append(float(p[:keep].sum()))
    return torch.tensor(out)


@pytest.mark.parametrize("temperature", TEMPERATURES)
def test_the_learner_recomputes_the_transformers_engines_logprobs_at_the_sampling_temperature(
    policy: Path, trainer: DeepSpeedPolicyTrainer, temperature: float
) -> None:
    engine = make_engine(TransformersEngineConfig(model=str(policy), max_model_len=128))
    prompts = [engine.render_prompt(p) for p in PROMPTS]
    outs = engine.generate(prompts, n=6, max_new_tokens=10, temperature=temperature, seed=1)
    engine.close()
    diff = _learner_minus_behaviour(trainer, _batch(prompts, outs, temperature)).abs().max().item()
    untempered = _learner_minus_behaviour(trainer, _batch(prompts, outs, None)).abs().max().item()
    print(
        f"\ntransformers engine T={temperature}: max |learner - behaviour| {diff:.2e} (at T=1: {untempered:.2e})"
    )
    assert diff < 1e-4
    assert untempered > 1e-2  # the same samples recomputed at temperature 1 are visibly off


@pytest.mark.parametrize(("top_p", "top_k"), [(0.8, 0), (1.0, 20), (0.9, 50)])
def test_under_truncation_the_importance_weight_is_the_mass_the_sampler_kept(
    policy: Path, trainer: DeepSpeedPolicyTrainer, top_p: float, top_k: int
) -> None:
    temperature = 1.3
    engine = make_engine(TransformersEngineConfig(model=str(policy), max_model_len=128))
    prompts = [engine.render_prompt(p) for p in PROMPTS]
    outs = engine.generate(
        prompts, n=4, max_new_tokens=8, temperature=temperature, top_p=top_p, top_k=top_k, seed=2
    )
    engine.close()
    batch = _batch(prompts, outs, temperature)
    weight = _learner_minus_behaviour(trainer, batch).exp()
    kept = _kept_mass(policy, batch, temperature, top_p, top_k)
    assert bool((weight <= 1 + 1e-5).all()) and float(weight.min()) < 0.99  # truncation did cut something
    assert (weight - kept).abs().max().item() < 1e-4


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
        diff = _learner_minus_behaviour(trainer, _batch(prompts, outs, temperature)).abs().max().item()
        print(f"\nvLLM processed_logprobs T={temperature}: max |learner - behaviour| {diff:.2e}")
        assert diff < 1e-4
    outs = vllm_engine.generate(prompts, n=4, max_new_tokens=8, temperature=1.3, top_p=0.9, top_k=50, seed=4)
    batch = _batch(prompts, outs, 1.3)
    kept = _kept_mass(policy, batch, 1.3, 0.9, 50)
    assert (_learner_minus_behaviour(trainer, batch).exp() - kept).abs().max().item() < 1e-4


# -- the settings travel with the samples ----------------------------------------------------------


async def test_the_learner_takes_each_groups_temperature_from_its_message(
    policy: Path, trainer: DeepSpeedPolicyTrainer, tmp_path: Path
) -> None:
    """Three groups sampled at T=1.3 reach a learner on the bus: labelled 1.3, their importance weights are
    exactly 1 (recomputed at the right temperature); labelled 1.0, they are not; raw log-probs with a
    non-plain temperature are refused (not trained on, counted)."""
    from actors.launch import make_actor
    from bus import subjects, topology
    from bus.client import Bus, wait_for
    from bus.config import NatsConfig
    from bus.embedded import EmbeddedServer
    from bus.messages import Completion as Wire
    from bus.messages import RewardGroup, SampleGroup, Sampling, ScoredItem, ToolKind, ToolRef
    from tests.support.servers import TEST_TOPOLOGY

    engine = make_engine(TransformersEngineConfig(model=str(policy), max_model_len=128))
    prompt = engine.render_prompt("The quick brown fox")
    (samples,) = engine.generate([prompt], n=4, max_new_tokens=8, temperature=1.3, seed=5)
    engine.close()
    tool = ToolRef(tool="exact_match", version=1, kind=ToolKind.RULE)
    run = tmp_path / "run"
    with EmbeddedServer(tmp_path / "nats") as srv:
        bus = await Bus.connect(NatsConfig(url=srv.url), "test")
        await topology.ensure_topology(bus.js, topology.declare(TEST_TOPOLOGY))
        doc = {
            "nats": {"url": srv.url},
            "topology": TEST_TOPOLOGY.model_dump(),
            "run": {"dir": str(run)},
            "learner": {
                "prompts_per_step": 1,
                "max_steps": 3,
                "keepalive_s": 1.0,
                "trainer": {
                    "model_dir": str(policy),
                    "lr": 1e-12,
                    "zero_stage": 0,
                    "grpo": {"group_size": 4, "max_staleness": 4},
                },
            },
        }
        learner = make_actor("learner", doc, instance="t")
        task = asyncio.create_task(learner.run(bus))
        try:
            assert await wait_for(lambda: learner.state == "running", 120), learner.state
            labels = [
                Sampling(temperature=1.3),
                Sampling(temperature=1.0),
                Sampling(temperature=1.3, logprobs="raw"),
            ]
            for k, sampling in enumerate(labels):
                group = SampleGroup(
                    prompt_id=f"p{k}",
                    generation="g",
                    task="arith",
                    group_size=4,
                    prompt_token_ids=prompt,
                    policy_version=learner.version,
                    tools=[tool],
                    sampling=sampling,
                    completions=[
                        Wire(index=i, token_ids=c.token_ids, logprobs=c.logprobs, text=c.text)
                        for i, c in enumerate(samples)
                    ],
                )
                await bus.js_publish(subjects.samples("arith"), group)
                await bus.js_publish(
                    subjects.rewards("arith"),
                    RewardGroup(
                        prompt_id=f"p{k}",
                        generation="g",
                        task="arith",
                        tool="exact_match",
                        tool_version=1,
                        items=[ScoredItem(index=i, status="ok", score=float(i % 2)) for i in range(4)],
                    ),
                )
                assert await wait_for(lambda k=k: learner.counters["steps"] == k + 1, 120), learner.step
        finally:
            await learner.stop()
            task.cancel()
            await bus.close()
    records = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    right, wrong, raw = records
    assert math.isclose(right["is_weight_mean"], 1.0, abs_tol=1e-4) and right["trained_rows"] == 4
    # Labelled 1.0, the learner recomputes at temperature 1: the weights it reports are those of T = 1, per
    # token far from 1 (their mean over samples drawn at 1.3 is near 1 by construction, so compare exactly).
    batch = _batch([prompt], [samples], None)
    at_one = (trainer.logprobs(batch) - batch.behav_logprobs)[batch.response_mask]
    assert at_one.abs().max() > 1e-2
    assert math.isclose(wrong["is_weight_mean"], float(at_one.exp().clamp(max=2.0).mean()), abs_tol=1e-4)
    assert raw["trained_rows"] == 0 and learner.counters["groups_with_raw_logprobs"] == 1


def test_a_rollout_whose_raw_logprobs_would_not_match_its_sampling_is_refused(policy: Path) -> None:
    from actors.rollout import RolloutConfig

    engine = {"kind": "transformers", "model": str(policy), "logprobs_mode": "raw"}
    with pytest.raises(ValueError, match="logprobs_mode = 'raw'"):
        RolloutConfig(engine=engine, temperature=0.7)  # type: ignore[arg-type]
    plain = RolloutConfig(engine=engine)  # type: ignore[arg-type]
    assert plain.sampling().logprobs == "raw" and plain.sampling().temperature == 1.0
    tempered = RolloutConfig(engine={**engine, "logprobs_mode": "sampled"}, temperature=0.7, top_k=5)  # type: ignore[arg-type]
    assert (tempered.sampling().temperature, tempered.sampling().top_k) == (0.7, 5)


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
    diff = _learner_minus_behaviour(lora, _batch(prompts, outs, 0.7)).abs().max().item()
    base = _learner_minus_behaviour(trainer, _batch(prompts, outs, 0.7)).abs().max().item()
    print(f"\nvLLM LoRA adapter v7 T=0.7: max |learner - behaviour| {diff:.2e} (base model: {base:.2e})")
    assert base > 1e-2  # the adapters changed the policy, and vLLM served the change
    assert vllm_engine.version == 7 and diff < 1e-3
    with pytest.raises(ValueError, match="max_lora_rank"):
        vllm_engine.load_weights(tensors, 8, {**adapter, "r": 16})
