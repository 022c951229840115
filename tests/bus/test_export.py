"""`rlar export`: a run's newest (or chosen) weights as a Hugging Face checkpoint that transformers and vLLM load."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rlar.app.export import export_run
from rlar.config import ConfigError
from tests.support.env import REPO, actor_env

PROMPT = "12+7="


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run directory as `rlar train` leaves it: the initial policy, two weight versions, a summary."""
    import torch

    from rlar.policy.model import build_tiny_policy
    from rlar.policy.weights import write_weights_dir

    run = tmp_path_factory.mktemp("run")
    init = build_tiny_policy(run / "policy" / "init")
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(init)
    gen = torch.Generator().manual_seed(0)
    for version in (3, 4):
        with torch.no_grad():
            for p in model.parameters():
                p.add_(torch.randn(p.shape, generator=gen) * 0.05)
        write_weights_dir(run / "weights", version, dict(model.named_parameters()))
    (run / "config.toml").write_text(
        '[feeder]\ntasks = [{ name = "arith", weight = 2.0 }]\n'
        "[learner]\nprompts_per_step = 8\ntrainer = { lr = 1e-4 }\n"
    )
    summary = {
        "reason": "finished",
        "steps": 12,
        "updates": 11,
        "minutes": 1.5,
        "tasks": {
            "arith": {
                "reward": {"first": 0.2, "last": 0.4, "steps": 12},
                "abstain": {"mean": 0.05},
                "tools": [
                    {"tool": "math_verify", "version": 1, "origin": "built-in", "steps": 12, "shadow": False}
                ],
            }
        },
    }
    (run / "summary.json").write_text(json.dumps(summary))
    torch.save(model.state_dict(), run / "v4_state.pt")
    return run


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


_VLLM_CHECK = """
import sys, torch
from transformers import AutoModelForCausalLM, AutoTokenizer
from vllm import LLM, SamplingParams
from vllm.inputs import TokensPrompt
path = sys.argv[1]
tok = AutoTokenizer.from_pretrained(path)
ids = tok("12+7=19 and 3+4=7", add_special_tokens=False).input_ids
llm = LLM(model=path, dtype="float32", enforce_eager=True, max_model_len=128, seed=0,
          distributed_executor_backend="uni")
out = llm.generate([TokensPrompt(prompt_token_ids=ids)], SamplingParams(max_tokens=1, prompt_logprobs=0))[0]
got = [d[t].logprob for t, d in zip(ids[1:], out.prompt_logprobs[1:])]
logits = AutoModelForCausalLM.from_pretrained(path)(torch.tensor([ids])).logits[0, :-1]
ref = torch.log_softmax(logits.float(), -1).gather(1, torch.tensor(ids[1:])[:, None])[:, 0].tolist()
print("MAXDIFF", max(abs(a - b) for a, b in zip(got, ref)), len(got))
text = llm.generate(["12+7=19 and 3+4=7"], SamplingParams(max_tokens=1))[0]  # a text prompt, as vLLM users write it
print("TEXT_PROMPT_IDS_AS_TRAINED", list(text.prompt_token_ids) == list(ids))
"""


@pytest.mark.vllm
@pytest.mark.slow
def test_vllm_loads_the_exported_checkpoint_and_scores_tokens_like_transformers(
    run_dir: Path, tmp_path: Path
) -> None:
    export_run(run_dir, tmp_path / "hf")
    env = {
        **actor_env(),
        "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2"),
    }
    r = subprocess.run(
        [sys.executable, "-c", _VLLM_CHECK, str(tmp_path / "hf")],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=REPO,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    line = next(x for x in r.stdout.splitlines() if x.startswith("MAXDIFF"))
    diff, n = line.split()[1:]
    assert int(n) > 10 and float(diff) < 1e-3, line  # vLLM scores every token as transformers does
    assert "TEXT_PROMPT_IDS_AS_TRAINED True" in r.stdout  # vLLM's own encoding of a text prompt adds no </s>
