"""Generation engines (rlar/policy/engines): sampling, behaviour log-probs and in-place weight updates (the vLLM
engine: tests/long/test_engines_vllm.py).

Everything runs on the tiny policy from rlar/policy/model.py. Reference log-probs come from a separate
``AutoModelForCausalLM`` fed the whole prompt + completion at once (teacher forcing), so they share no
code with the engines' incremental, padded, KV-cached decoding.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from pydantic import TypeAdapter, ValidationError

from rlar.policy.engines import (
    EngineConfig,
    GenerationEngine,
    VLLMEngineConfig,
    sampling_log_probs,
)
from rlar.policy.engines.hf import TransformersEngine
from rlar.policy.engines.vllm_engine import _RELOAD_LOGGER
from rlar.policy.model import build_tiny_policy
from rlar.policy.weights import read_weights, state_dict_to_safetensors_bytes, write_weights_dir
from tests.support.engines import (
    EOS,
    PROMPTS,
    max_logprob_error,
    reference_model,
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


# -- transformers engine ---------------------------------------------------------------------------


def test_generate_returns_n_completions_per_prompt_with_a_logprob_per_token(
    engine: TransformersEngine,
) -> None:
    prompts = [engine.render_prompt(p) for p in PROMPTS]
    out = engine.generate(prompts, n=4, max_new_tokens=10, temperature=1.0, top_p=1.0, seed=0)
    assert len(out) == len(prompts)
    for samples in out:
        assert len(samples) == 4
        for c in samples:
            assert 1 <= len(c.token_ids) <= 10
            assert len(c.logprobs) == len(c.token_ids)
            assert all(lp <= 0.0 for lp in c.logprobs)
            assert c.finish_reason in ("stop", "length")
            assert c.text == engine.tokenizer.decode(c.token_ids, skip_special_tokens=True)
    assert len({tuple(c.token_ids) for c in out[0]}) > 1  # samples, not copies


def test_behaviour_logprobs_equal_a_teacher_forced_recomputation(policy_dir: Path) -> None:
    # max_num_seqs=5 splits the 12 rows into three left-padded chunks of mixed prompt lengths.
    engine = transformers_engine(policy_dir, max_num_seqs=5)
    prompts = [engine.render_prompt(p) for p in PROMPTS]
    out = engine.generate(prompts, n=4, max_new_tokens=12, temperature=1.0, top_p=1.0, seed=1)
    assert max_logprob_error(reference_model(policy_dir), prompts, out) < 1e-4


def test_decode_steps_give_the_mask_transformers_would_build_only_for_plain_causal_sdpa(
    policy_dir: Path,
) -> None:
    from transformers import LlamaConfig

    from rlar.policy.engines.hf import _plain_causal_sdpa

    built, own = (
        transformers_engine(policy_dir, max_num_seqs=5),
        transformers_engine(policy_dir, max_num_seqs=5),
    )
    assert own._decode_mask_4d  # the tiny Llama: sdpa, full causal attention
    built._decode_mask_4d = False  # the 2D padding mask, turned into a 4D one by transformers at every step
    prompts = [own.render_prompt(p) for p in PROMPTS]  # mixed lengths: left padding in every chunk
    a = built.generate(prompts, n=4, max_new_tokens=12, seed=3)
    b = own.generate(prompts, n=4, max_new_tokens=12, seed=3)
    assert [[(c.token_ids, c.logprobs) for c in s] for s in a] == [
        [(c.token_ids, c.logprobs) for c in s] for s in b
    ]
    cfg = LlamaConfig(num_hidden_layers=2)
    assert _plain_causal_sdpa(cfg, "sdpa")
    assert not _plain_causal_sdpa(cfg, "eager")  # eager attention wants an additive float mask
    cfg.sliding_window = 64  # windowed layers need the window in the mask: transformers builds it
    assert not _plain_causal_sdpa(cfg, "sdpa")
    cfg.sliding_window = None
    cfg.layer_types = ["full_attention", "sliding_attention"]
    assert not _plain_causal_sdpa(cfg, "sdpa")
    # A composite (multimodal) config keeps the window in its text config.
    from transformers import Gemma3Config

    assert not _plain_causal_sdpa(Gemma3Config(), "sdpa")


def test_logprobs_are_those_of_the_tempered_top_p_distribution_sampled_from(policy_dir: Path) -> None:
    prompts = [[104, 105], [87, 104, 104, 35, 102]]
    ref = reference_model(policy_dir)
    sampled = transformers_engine(policy_dir)
    out = sampled.generate(prompts, n=4, max_new_tokens=12, temperature=0.7, top_p=0.8, seed=2)
    assert max_logprob_error(ref, prompts, out, temperature=0.7, top_p=0.8) < 1e-4
    # The same draws with logprobs_mode="raw" report the model's own (temperature-1) log-probs.
    raw = transformers_engine(policy_dir, logprobs_mode="raw")
    out_raw = raw.generate(prompts, n=4, max_new_tokens=12, temperature=0.7, top_p=0.8, seed=2)
    assert [[c.token_ids for c in s] for s in out_raw] == [[c.token_ids for c in s] for s in out]
    assert max_logprob_error(ref, prompts, out_raw) < 1e-4
    assert max_logprob_error(ref, prompts, out) > 0.1  # the two modes really differ at T=0.7


def test_sampling_log_probs_match_transformers_temperature_and_top_p_warpers() -> None:
    from transformers.generation.logits_process import TemperatureLogitsWarper, TopPLogitsWarper

    logits = torch.randn(6, 50, generator=torch.Generator().manual_seed(0)) * 3
    for temperature, top_p in [(1.0, 1.0), (0.7, 0.9), (1.3, 0.5), (0.5, 0.05)]:
        scores = TemperatureLogitsWarper(temperature)(None, logits.clone())  # type: ignore[arg-type]
        if top_p < 1.0:
            scores = TopPLogitsWarper(top_p)(None, scores)  # type: ignore[arg-type]
        expected = torch.log_softmax(scores, dim=-1)
        got = sampling_log_probs(logits, temperature, top_p)
        assert torch.equal(torch.isinf(got), torch.isinf(expected))
        finite = ~torch.isinf(got)
        assert torch.allclose(got[finite], expected[finite], atol=1e-5)
    assert torch.allclose(sampling_log_probs(logits, 0.0, 0.5), torch.log_softmax(logits, -1))  # greedy: raw


def test_generation_stops_at_eos_and_keeps_it_as_the_last_token(policy_dir: Path) -> None:
    engine = transformers_engine(policy_dir)
    engine.load_weights(train_towards_eos(reference_model(policy_dir)), version=1)
    prompts = [engine.render_prompt(p) for p in PROMPTS]
    out = engine.generate(prompts, n=12, max_new_tokens=6, seed=3)
    samples = [c for s in out for c in s]
    stopped = [c for c in samples if c.finish_reason == "stop"]
    capped = [c for c in samples if c.finish_reason == "length"]
    assert stopped and capped
    for c in stopped:
        assert c.token_ids[-1] == EOS and EOS not in c.token_ids[:-1]
        assert c.text == engine.tokenizer.decode(c.token_ids[:-1], skip_special_tokens=True)  # no EOS text
    for c in capped:
        assert len(c.token_ids) == 6 and EOS not in c.token_ids


def test_a_seed_makes_generation_reproducible(engine: TransformersEngine) -> None:
    prompts = [engine.render_prompt(p) for p in PROMPTS]

    def run(seed: int) -> list[list[tuple[list[int], list[float]]]]:
        out = engine.generate(prompts, n=3, max_new_tokens=8, seed=seed)
        return [[(c.token_ids, c.logprobs) for c in s] for s in out]

    first = run(7)
    assert run(7) == first
    assert run(8) != first


def test_unseeded_generation_follows_the_engine_seed(policy_dir: Path) -> None:
    a, b, c = (
        transformers_engine(policy_dir, seed=5),
        transformers_engine(policy_dir, seed=5),
        transformers_engine(policy_dir, seed=6),
    )
    prompts = [a.render_prompt("seed")]

    def ids(e: GenerationEngine) -> list[list[int]]:
        return [x.token_ids for x in e.generate(prompts, n=4, max_new_tokens=8)[0]]

    first_a, first_b = ids(a), ids(b)
    assert first_a == first_b
    assert ids(a) != first_a  # the stream advances between calls
    assert ids(c) != first_a


def test_greedy_decoding_gives_identical_argmax_samples_with_raw_logprobs(policy_dir: Path) -> None:
    engine = transformers_engine(policy_dir)
    prompts = [engine.render_prompt("greedy")]
    out = engine.generate(prompts, n=3, max_new_tokens=8, temperature=0.0)
    assert len({tuple(c.token_ids) for c in out[0]}) == 1
    ref = reference_model(policy_dir)
    ids = prompts[0] + out[0][0].token_ids
    with torch.no_grad():
        argmax = ref(torch.tensor([ids])).logits[0].argmax(-1).tolist()
    assert out[0][0].token_ids == argmax[len(prompts[0]) - 1 : -1]
    assert max_logprob_error(ref, prompts, out) < 1e-4


def test_completions_end_at_max_model_len(policy_dir: Path) -> None:
    engine = transformers_engine(policy_dir, max_model_len=16)
    prompts = [[100] * 10, [100] * 3]
    out = engine.generate(prompts, n=2, max_new_tokens=50, temperature=1.0, seed=0)
    assert {len(c.token_ids) for c in out[0]} <= set(range(1, 7))
    assert all(len(c.token_ids) == 6 for c in out[0] if c.finish_reason == "length")
    assert all(len(c.token_ids) == 13 for c in out[1] if c.finish_reason == "length")
    with pytest.raises(ValueError, match="max_model_len"):
        engine.generate([[100] * 16], n=1, max_new_tokens=1)


def test_load_weights_changes_outputs_and_sets_version(policy_dir: Path, tmp_path: Path) -> None:
    engine = transformers_engine(policy_dir)
    prompts = [engine.render_prompt(p) for p in PROMPTS]
    before = engine.generate(prompts, n=4, max_new_tokens=8, seed=4)
    trained = reference_model(policy_dir)
    new_weights = train_towards_eos(trained)
    ref = write_weights_dir(tmp_path, 1, new_weights)

    engine.load_weights(state_dict_to_safetensors_bytes(read_weights(ref)), version=1)  # as bytes
    assert engine.version == 1
    after = engine.generate(prompts, n=4, max_new_tokens=8, seed=4)
    assert [[c.token_ids for c in s] for s in after] != [[c.token_ids for c in s] for s in before]
    assert max_logprob_error(trained, prompts, after) < 1e-4

    original = reference_model(policy_dir)
    engine.load_weights(original.named_parameters(), version=2)  # as named tensors
    assert engine.version == 2
    again = engine.generate(prompts, n=4, max_new_tokens=8, seed=4)
    assert [[(c.token_ids, c.logprobs) for c in s] for s in again] == [
        [(c.token_ids, c.logprobs) for c in s] for s in before
    ]


def test_a_bad_weights_update_is_refused_and_leaves_the_old_weights(engine: TransformersEngine) -> None:
    prompts = [engine.render_prompt("keep")]
    before = engine.generate(prompts, n=2, max_new_tokens=6, seed=0)
    good = {k: v * 2 for k, v in engine.model.state_dict().items()}
    partial = dict(list(good.items())[:5])
    misshapen = {**good, "model.norm.weight": torch.ones(3)}
    unknown = {**good, "model.extra.weight": torch.ones(3)}
    for bad, match in [(partial, "lacks"), (misshapen, "shape"), (unknown, "unknown")]:
        with pytest.raises(ValueError, match=match):
            engine.load_weights(bad, version=9)
    assert engine.version == 0
    after = engine.generate(prompts, n=2, max_new_tokens=6, seed=0)
    assert [c.logprobs for c in after[0]] == [c.logprobs for c in before[0]]


def test_render_prompt_appends_no_eos_and_uses_a_chat_template_when_there_is_one(
    engine: TransformersEngine,
) -> None:
    assert engine.render_prompt("hi") == [107, 108]  # ByT5: byte + 3, and no EOS
    assert engine.render_prompt([{"role": "system", "content": "a"}, {"role": "user", "content": "b"}]) == [
        100,
        13,
        101,
    ]
    engine.tokenizer.chat_template = (
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
        "{% if add_generation_prompt %}<assistant>{% endif %}"
    )
    expected = engine.tokenizer.encode("<user>hi<assistant>", add_special_tokens=False)
    assert engine.render_prompt("hi") == expected
    assert engine.render_prompt([{"role": "user", "content": "hi"}]) == expected
    assert EOS not in expected


def test_engine_config_picks_the_backend_by_kind_and_imports_vllm_lazily(policy_dir: Path) -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(EngineConfig)
    assert isinstance(adapter.validate_python({"kind": "vllm", "model": "m"}), VLLMEngineConfig)
    with pytest.raises(ValidationError):
        adapter.validate_python({"kind": "vllm", "model": "m", "dtype": "bfloat16"})  # CPU needs float32
    with pytest.raises(ValidationError):
        adapter.validate_python({"kind": "onnx", "model": "m"})
    code = (
        "import sys; from pydantic import TypeAdapter; "
        "from rlar.policy.engines import EngineConfig, make_engine; "
        "e = make_engine(TypeAdapter(EngineConfig).validate_python("
        f"{{'kind': 'transformers', 'model': {str(policy_dir)!r}}})); "
        "print(type(e).__name__, 'vllm' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    assert out.stdout.split() == ["TransformersEngine", "False"]


def test_only_the_reload_warnings_of_layers_an_update_never_carries_are_dropped() -> None:
    from rlar.policy.engines.vllm_engine import _ExpectedReloadWarnings

    def passes(f: logging.Filter, message: str) -> bool:
        return bool(f.filter(logging.LogRecord(_RELOAD_LOGGER, logging.WARNING, "x", 1, message, None, None)))

    tied, untied = _ExpectedReloadWarnings(tied=True), _ExpectedReloadWarnings(tied=False)
    assert not passes(tied, "RotaryEmbedding: Failed to load weights")
    assert not passes(tied, "ParallelLMHead: Failed to load weights")
    assert passes(
        untied, "ParallelLMHead: Failed to load weights"
    )  # an untied head must come with the update
    assert passes(tied, "QKVParallelLinear: Failed to load weights")  # a real gap in an update stays loud
    assert passes(tied, "Allocating 12.0 MB of device memory to buffers")


@pytest.mark.parametrize(
    ("probs", "temperature", "top_p", "expected"),
    [
        # plain: the draw follows softmax(logits); a -inf logit is never drawn
        ([0.5, 0.25, 0.15, 0.1, 0.0], 1.0, 1.0, [0.5, 0.25, 0.15, 0.1, 0.0]),
        # T = 0.5 squares the probabilities: [.16, .09, .04, .01] / .30; top-p 0.8 drops the tokens whose
        # ascending cumulative mass is <= 0.2 (1/30 and 5/30), leaving .09 and .16 renormalised: 0.36 / 0.64
        ([0.4, 0.3, 0.2, 0.1, 0.0], 0.5, 0.8, [0.64, 0.36, 0.0, 0.0, 0.0]),
    ],
)
def test_sampling_draws_tokens_with_the_model_probabilities(
    engine: TransformersEngine, probs: list[float], temperature: float, top_p: float, expected: list[float]
) -> None:
    # One fixed distribution in every row of a large batch; each token's drawn frequency is a mean of n
    # Bernoulli(q) draws, std sqrt(q(1-q)/n). A correct sampler stays within 6 std of q in every token (normal
    # tail 2e-9 each); a sampler that ignored temperature or top-p misses by > 0.1, i.e. > 20 std at this n.
    n = 40_000
    logits = torch.log(torch.tensor(probs)).expand(n, -1).contiguous()
    tok, lp = engine._sample(logits, temperature, top_p, torch.Generator().manual_seed(0))
    freq = torch.bincount(tok, minlength=len(probs)).double() / n
    q = torch.tensor(expected, dtype=torch.float64)
    bound = 6 * (q * (1 - q) / n).sqrt()
    assert ((freq - q).abs() <= bound).all(), (freq.tolist(), expected)  # q = 0 → bound 0: never drawn
    assert torch.allclose(lp.double(), q.log()[tok], atol=1e-5)  # behaviour log-prob = the drawn token's
