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
from pathlib import Path

import pytest
import torch

from rlar.learn.trainer import DeepSpeedPolicyTrainer, TrainerConfig
from rlar.policy.engines import TransformersEngineConfig, make_engine
from rlar.policy.model import build_tiny_policy
from tests.support.sampling import PROMPTS, TEMPERATURES, completion_batch, kept_mass, learner_minus_behaviour

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_policy(tmp_path_factory.mktemp("policy") / "tiny")


@pytest.fixture(scope="module")
def trainer(policy: Path) -> DeepSpeedPolicyTrainer:
    return DeepSpeedPolicyTrainer(TrainerConfig(model_dir=policy, zero_stage=0))


@pytest.mark.parametrize("temperature", TEMPERATURES)
def test_the_learner_recomputes_the_transformers_engines_logprobs_at_the_sampling_temperature(
    policy: Path, trainer: DeepSpeedPolicyTrainer, temperature: float
) -> None:
    engine = make_engine(TransformersEngineConfig(model=str(policy), max_model_len=128))
    prompts = [engine.render_prompt(p) for p in PROMPTS]
    outs = engine.generate(prompts, n=6, max_new_tokens=10, temperature=temperature, seed=1)
    engine.close()
    diff = learner_minus_behaviour(trainer, completion_batch(prompts, outs, temperature)).abs().max().item()
    untempered = learner_minus_behaviour(trainer, completion_batch(prompts, outs, None)).abs().max().item()
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
    batch = completion_batch(prompts, outs, temperature)
    weight = learner_minus_behaviour(trainer, batch).exp()
    kept = kept_mass(policy, batch, temperature, top_p, top_k)
    assert bool((weight <= 1 + 1e-5).all()) and float(weight.min()) < 0.99  # truncation did cut something
    assert (weight - kept).abs().max().item() < 1e-4


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
    batch = completion_batch([prompt], [samples], None)
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
