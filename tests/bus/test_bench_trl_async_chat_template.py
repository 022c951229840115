"""``rlar bench pipeline --baseline trl-async``: the peer's prompts are the tokens the project's engines would feed,
also for a tokenizer without a chat template (building the model runs a child process: platform's uname)."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from rlar.app.benchmarks import pipeline
from rlar.benchmarks.trl_async_peer import PLAIN_CHAT_TEMPLATE, plain_chat


def test_a_tokenizer_without_a_chat_template_renders_the_prompt_as_the_projects_engines_do(
    tmp_path: Path,
) -> None:
    """...and TRL's rollout worker can read its completions: with the chat template alone it refuses the
    tokenizer (an unknown template, no response template)."""
    from transformers import AutoTokenizer
    from trl.chat_template_utils import add_response_schema, parse_response

    from rlar.policy.model import build_tiny_policy

    model_dir = build_tiny_policy(tmp_path / "policy", pipeline.tiny_policy_spec())
    bare = AutoTokenizer.from_pretrained(model_dir)
    assert not getattr(bare, "chat_template", None)
    bare.chat_template = PLAIN_CHAT_TEMPLATE
    with pytest.raises(ValueError, match="Unrecognized chat template"):
        add_response_schema(bare)
    tok = pickle.loads(pickle.dumps(plain_chat(AutoTokenizer.from_pretrained(model_dir))))  # as TRL spawns it
    assert tok.chat_template == PLAIN_CHAT_TEMPLATE
    text = "What is 12 + 30? Answer with the number."
    ids = tok.apply_chat_template(
        [{"role": "user", "content": text}], add_generation_prompt=True, return_dict=False
    )
    assert list(ids) == list(tok.encode(text, add_special_tokens=False))  # rlar.policy.engines: render_prompt
    for completion in ("it is 42", "4"):
        out = tok.encode(completion, add_special_tokens=False)
        assert parse_response(tok, [*out, tok.eos_token_id], prefix=ids) == {
            "role": "assistant",
            "content": completion,
        }
        assert parse_response(tok, out, prefix=ids)["content"] == completion  # cut at max tokens: no EOS
