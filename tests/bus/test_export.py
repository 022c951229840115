"""`rlar export`: a run's newest (or chosen) weights as a Hugging Face checkpoint that transformers and vLLM load."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rlar.app.export import export_run
from rlar.config import ConfigError
from tests.support.env import actor_env
from tests.support.runs import exported_run_dir

PROMPT = "12+7="


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return exported_run_dir(tmp_path_factory)


def test_export_writes_a_checkpoint_transformers_loads_with_the_trained_weights(
    run_dir: Path, tmp_path: Path
) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    r = subprocess.run(
        [sys.executable, "-m", "rlar.app.cli", "export", str(run_dir), "--out", str(tmp_path / "hf")],
        capture_output=True,
        text=True,
        timeout=300,
        env=actor_env(),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout.strip().splitlines()[-1])
    assert doc["version"] == 4
    out = tmp_path / "hf"
    assert {"config.json", "generation_config.json", "model.safetensors", "README.md"} <= set(doc["files"])
    card = (out / "README.md").read_text()
    assert "| arith | 2.0 | 0.2 | 0.4 | 5% | math_verify v1 (built-in, 12) |" in card
    assert "updates: 11" in card
    # hyperparameters as numbers: the config's own (lr, prompts per step) and the defaults it left out
    assert "learning rate 0.0001, group size 8, prompts per step 8, KL coefficient 0.0" in card
    assert "| KL coefficient | `learner.trainer.grpo.kl_coef` | 0.0 |" in card
    assert "| max new tokens | `rollout.max_new_tokens` | 16 |" in card
    assert "default" not in card.lower().replace("docs/reference/config.md", "")
    model = AutoModelForCausalLM.from_pretrained(out)
    want = torch.load(run_dir / "v4_state.pt")
    got = model.state_dict()
    assert all(torch.equal(got[k], v) for k, v in want.items())
    tok = AutoTokenizer.from_pretrained(out)
    ids = tok(PROMPT, return_tensors="pt", add_special_tokens=False).input_ids
    assert model.generate(ids, max_new_tokens=4, do_sample=False).shape[1] > ids.shape[1]


def test_export_of_a_missing_version_or_into_a_used_directory_is_refused(
    run_dir: Path, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match=r"weights version 1 is not kept; available: \[3, 4\]"):
        export_run(run_dir, tmp_path / "a", version=1)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x").write_text("x")
    with pytest.raises(ConfigError, match="not empty"):
        export_run(run_dir, tmp_path / "b")
    assert export_run(run_dir, tmp_path / "c", version=3)["version"] == 3


def _card_snippet(card: str, path: Path) -> str:
    code = card.split("```python\n", 1)[1].split("```", 1)[0]
    assert 'path = "path/to/this/dir"' in code
    return code.replace("path/to/this/dir", str(path))


def test_the_cards_transformers_example_generates_what_rlar_eval_generates(
    run_dir: Path, tmp_path: Path
) -> None:
    import contextlib
    import io

    import torch

    from rlar.policy.engines import make_engine
    from rlar.policy.weights import latest_weights_ref, read_weights_bytes

    export_run(run_dir, tmp_path / "hf")
    snippet = _card_snippet((tmp_path / "hf" / "README.md").read_text(), tmp_path / "hf")
    printed = io.StringIO()
    scope: dict[str, object] = {}
    torch.manual_seed(0)
    with contextlib.redirect_stdout(printed):
        exec(compile(snippet, "README.md", "exec"), scope)  # the card's example as a user runs it
    prompt_ids = scope["ids"][0].tolist()  # type: ignore[index]
    card_new = scope["out"][0, len(prompt_ids) :].tolist()  # type: ignore[index]
    assert prompt_ids[-1] != 1  # no </s> after the prompt

    # The project's greedy generation on the run's newest weights: what `rlar eval --checkpoint RUN` shows.
    from rlar.eval.runner import EngineSettings, resolve_checkpoint

    ck = resolve_checkpoint(run_dir)
    engine = make_engine(EngineSettings().config(ck.model_dir, 0))
    try:
        engine.load_weights(read_weights_bytes(latest_weights_ref(run_dir / "weights")), 4)
        ids = engine.render_prompt(PROMPT)
        assert ids == prompt_ids  # the card encodes the prompt as training does
        ((done,),) = engine.generate([ids], n=1, max_new_tokens=16, temperature=0.0, top_p=1.0, seed=0)
    finally:
        engine.close()
    assert card_new == done.token_ids and len(card_new) > 0
    assert printed.getvalue() == done.text + "\n"


def test_the_cards_example_encodes_as_training_for_chat_templates_and_tokenizers_that_add_tokens(
    tmp_path: Path,
) -> None:
    from transformers import ByT5Tokenizer

    from rlar.app.export import _use_snippet, byte_tokenizer
    from rlar.eval.runner import EngineSettings
    from rlar.policy.engines import make_engine
    from rlar.policy.model import build_tiny_policy

    chat = byte_tokenizer(ByT5Tokenizer())
    chat.chat_template = "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}<assistant>"
    for name, tok in (("chat", chat), ("eos", ByT5Tokenizer())):  # ByT5 as is appends </s> by default
        model_dir = build_tiny_policy(tmp_path / name)
        tok.save_pretrained(model_dir)
        snippet = "\n".join(_use_snippet(tok, 4)[1:-1]).replace("path/to/this/dir", str(model_dir))
        assert ("add_special_tokens=False" in snippet) and (
            ("apply_chat_template" in snippet) == (name == "chat")
        )
        scope: dict[str, object] = {}
        exec(compile(snippet, f"card-{name}", "exec"), scope)
        engine = make_engine(EngineSettings().config(model_dir, 0))
        try:
            assert scope["ids"][0].tolist() == engine.render_prompt("12+7=")  # type: ignore[index]
        finally:
            engine.close()


def test_the_exported_byte_tokenizer_encodes_and_decodes_like_byt5_and_appends_nothing(
    tmp_path: Path,
) -> None:
    import random

    from transformers import AutoTokenizer, ByT5Tokenizer

    from rlar.app.export import byte_tokenizer

    slow = ByT5Tokenizer()
    byte_tokenizer(slow).save_pretrained(tmp_path)
    fast = AutoTokenizer.from_pretrained(tmp_path)
    assert slow("12+7=").input_ids[-1] == slow.eos_token_id  # what the exported ByT5 tokenizer used to do
    rng = random.Random(0)
    alphabet = [
        "a",
        "Z",
        " ",
        "  ",
        "\n",
        "\t",
        "7",
        "+",
        "é",
        "ß",
        "中",
        "✓",
        "🙂",
        "</s>",
        " </s> ",
        "<pad>",
        "<extra_id_3>",
        " <extra_id_0> ",
        "<unk>",
        "\x00",
    ]
    texts = ["", "12+7=", "cap:apple="] + [
        "".join(rng.choices(alphabet, k=rng.randrange(1, 12))) for _ in range(300)
    ]
    for text in texts:
        want = slow.encode(text, add_special_tokens=False)
        assert fast(text).input_ids == want and fast.encode(text, add_special_tokens=False) == want, text
    for _ in range(2000):  # any ids a policy may generate, invalid UTF-8 and special tokens included
        ids = [rng.randrange(len(slow)) for _ in range(rng.randrange(0, 10))]
        for skip in (True, False):
            assert fast.decode(ids, skip_special_tokens=skip) == slow.decode(ids, skip_special_tokens=skip), (
                ids
            )
    assert (fast.eos_token_id, fast.pad_token_id, len(fast)) == (
        slow.eos_token_id,
        slow.pad_token_id,
        len(slow),
    )
    assert set(fast.all_special_ids) == set(slow.all_special_ids)
