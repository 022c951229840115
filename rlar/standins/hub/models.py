"""The tiny reward-model checkpoints the demo site serves, built locally in seconds on CPU.

:func:`build_demo_models` builds them: a reward model trained briefly (:func:`train_pairwise`) to prefer
good English→German translations (it passes validation), random ones (they fail it), a 3-label classifier
(not a scalar head) and a pickle-only repo (refused). :mod:`rlar.standins.hub.catalogue` lists them on
the demo site.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlar.retrieval.probes import build_probes, examples_from_task
from rlar.tools.reward_model import build_tiny_reward_model

# torch and transformers are imported where used: heavy and optional (the CLI starts without them).

DEMO_RECIPE = "demo-models-v2"


@dataclass
class DemoModels:
    """Directories of the demo checkpoints (see :func:`build_demo_models`)."""

    good: Path
    random: Path
    dialogue: Path
    three_class: Path
    legacy: Path
    training: dict[str, Any] = field(default_factory=dict)


def train_pairwise(
    model_dir: Path,
    examples: list[Any],
    *,
    steps: int = 300,
    lr: float = 3e-3,
    batch: int = 16,
    seed: int = 0,
) -> dict[str, Any]:
    """Train a sequence-classification reward model in place with the pairwise (Bradley–Terry) loss on
    probe-like pairs (reference vs. corruption) of ``examples``; seconds for the tiny model on one core."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(model_dir, dtype=torch.float32)
    pairs = build_probes(examples, n=len(examples) * 5, seed=seed + 1000)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.05, 1.0 - s / steps)
    )
    g = torch.Generator().manual_seed(seed)
    model.train()
    losses: list[float] = []
    t0 = time.perf_counter()
    # Tokenise once; each step pads its pairs and runs preferred and rejected in one forward pass.
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    good_ids = [tok(p.query, p.preferred, truncation=True, max_length=256)["input_ids"] for p in pairs]
    bad_ids = [tok(p.query, p.rejected, truncation=True, max_length=256)["input_ids"] for p in pairs]
    for _ in range(steps):
        idx = torch.randint(len(pairs), (batch,), generator=g).tolist()
        seqs = [good_ids[i] for i in idx] + [bad_ids[i] for i in idx]
        width = max(len(x) for x in seqs)
        ids = torch.tensor([x + [pad] * (width - len(x)) for x in seqs])
        mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in seqs])
        logits = model(input_ids=ids, attention_mask=mask).logits[:, 0]
        loss = -torch.nn.functional.logsigmoid(logits[:batch] - logits[batch:]).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    model.eval()
    model.save_pretrained(model_dir, safe_serialization=True)
    tail = losses[-20:]
    return {
        "steps": steps,
        "pairs": len(pairs),
        "final_loss": sum(tail) / len(tail),
        "seconds": time.perf_counter() - t0,
    }


def _build_three_class(src: Path, out: Path) -> None:
    import torch
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    config = AutoConfig.from_pretrained(src)
    config.num_labels = 3
    config.id2label = {0: "bad", 1: "acceptable", 2: "good"}
    config.label2id = {v: k for k, v in config.id2label.items()}
    torch.manual_seed(3)
    model = AutoModelForSequenceClassification.from_config(config)
    model.save_pretrained(out, safe_serialization=True)
    AutoTokenizer.from_pretrained(src).save_pretrained(out)


def build_demo_models(cache_dir: str | Path, *, steps: int = 300) -> DemoModels:
    """Build (once; idempotent per recipe) the demo checkpoints under ``cache_dir``.

    ``good``: tiny Llama RM trained ``steps`` pairwise steps on the builtin ``translate`` train split
    (held-out probe accuracy 0.9 at 300 steps, 15–35 s on one busy core; ``steps=0`` leaves it untrained,
    for tests that only read pages); ``random`` and ``dialogue``: untrained (≈0.5, they fail validation);
    ``three_class``: a 3-label classifier; ``legacy``: config and tokenizer with a pickle ``.bin`` only.
    """
    root = Path(cache_dir)
    marker = root / "demo-models.json"
    dirs = DemoModels(
        good=root / "good",
        random=root / "random",
        dialogue=root / "dialogue",
        three_class=root / "three_class",
        legacy=root / "legacy",
    )
    root.mkdir(parents=True, exist_ok=True)
    # One builder at a time per cache (processes of a test session, two `rlar retrieve --mirror` sharing the user
    # cache): the others wait, then find the marker and reuse what it built.
    with open(root.parent / f".{root.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.exists():
            with contextlib.suppress(ValueError, KeyError):
                meta = json.loads(marker.read_text())
                if meta.get("recipe") == DEMO_RECIPE and meta.get("steps") == steps:
                    dirs.training = meta.get("training", {})
                    return dirs
        _build(dirs, marker, steps)
    return dirs


def _build(dirs: DemoModels, marker: Path, steps: int) -> None:

    marker.unlink(missing_ok=True)
    for d in (dirs.good, dirs.random, dirs.dialogue, dirs.three_class, dirs.legacy):
        shutil.rmtree(d, ignore_errors=True)
    build_tiny_reward_model(dirs.good, seed=0)
    if steps > 0:
        dirs.training = train_pairwise(dirs.good, examples_from_task("translate", split="train"), steps=steps)
    build_tiny_reward_model(dirs.random, seed=1)
    build_tiny_reward_model(dirs.dialogue, seed=2)
    _build_three_class(dirs.random, dirs.three_class)
    dirs.legacy.mkdir(parents=True, exist_ok=True)
    for f in dirs.random.iterdir():
        if f.is_file() and not f.name.endswith(".safetensors"):
            shutil.copy2(f, dirs.legacy / f.name)
    # Never a real pickle: the retriever must refuse the repo from its file list, before downloading.
    (dirs.legacy / "pytorch_model.bin").write_bytes(b"not a checkpoint: pickle weights are refused\n" * 64)
    marker.write_text(json.dumps({"recipe": DEMO_RECIPE, "steps": steps, "training": dirs.training}))


__all__ = ["DemoModels", "build_demo_models", "train_pairwise"]
