"""The learner's teacher-forced log-probs with the output head applied at the response positions only are the
full computation's at those positions — values, entropies and gradients — at per-row temperatures."""

from __future__ import annotations

import torch
from transformers import LlamaConfig, LlamaForCausalLM

from rlar.learn.batch import _decoder_and_head, token_logprobs


def _model() -> LlamaForCausalLM:
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=300,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=64,
        tie_word_embeddings=True,
    )
    return LlamaForCausalLM(cfg)


def test_the_response_only_head_gives_the_full_computations_values_entropies_and_gradients() -> None:
    model = _model()
    ids = torch.randint(0, 300, (3, 12))
    mask = torch.ones_like(ids)
    mask[2, 9:] = 0  # a right-padded row
    positions = torch.zeros_like(ids, dtype=torch.bool)
    positions[0, 5:], positions[1, 3:8], positions[2, 6:9] = True, True, True  # the response tokens
    temperature = torch.tensor([1.0, 0.7, 1.3])
    assert _decoder_and_head(model) is not None

    full, full_ent = token_logprobs(model, ids, mask, temperature=temperature, with_entropy=True)
    (full * positions).sum().backward()
    full_grad = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    part, part_ent = token_logprobs(
        model, ids, mask, temperature=temperature, with_entropy=True, positions=positions
    )
    (part * positions).sum().backward()

    assert torch.allclose(part[positions], full[positions], atol=1e-5)
    assert part_ent is not None and full_ent is not None
    assert torch.allclose(part_ent[positions], full_ent[positions], atol=1e-5)
    assert not part[~positions].any()  # nothing computed elsewhere
    for g_full, p in zip(full_grad, model.parameters(), strict=True):
        assert p.grad is not None and torch.allclose(p.grad, g_full, atol=1e-5)


def test_an_architecture_with_a_scaled_or_capped_head_keeps_the_full_computation() -> None:
    model = _model()
    model.config.model_type = "gemma2"  # its logits are soft-capped after the head
    assert _decoder_and_head(model) is None
    ids = torch.randint(0, 300, (1, 6))
    positions = torch.tensor([[False, False, True, True, True, True]])
    lp, _ = token_logprobs(model, ids, torch.ones_like(ids), positions=positions)
    assert lp[0, 1] != 0  # the full path computes every position
