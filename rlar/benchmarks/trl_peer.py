"""The peer in ``rlar bench pipeline --baseline trl``: TRL's ``GRPOTrainer`` on the same work, in a child process.

``python -m rlar.benchmarks.trl_peer SETTINGS.json`` trains ``warmup_steps + steps`` steps and prints one JSON
line: step times (from one ``on_step_end`` to the next; the first ``warmup_steps`` left out), samples/s over
the measured steps, the mean reward, and each stage's median time per step (generate, reward, train: TRL's
generate-and-score phase timed, the reward function inside it timed, the rest of the step is training). A
child process keeps TRL's and accelerate's global state (and its torch threads) away from the project's DeepSpeed
trainer in the benchmark's own process.

Same work as the project's ways: the same model directory, the same prompt texts and references in the same order,
``prompts`` × ``group_size`` completions of at most ``max_new_tokens`` tokens per step at the same temperature, the
same learning rate and precision (``bf16``: TRL's autocast), and the same reward — the project's own tool (its spec
in the settings), called in-process from an ``async`` reward function: a rule tool computes in place; the LLM judge
makes its HTTP calls with ``max_concurrency`` in flight on its pooled client (TRL awaits them all: they overlap
each other, never generation or training). TRL's defaults are kept otherwise (beta 0, ``dapo`` loss, gradient
checkpointing). With a ByT5 tokenizer (the tiny model), prompts are encoded without the ``</s>`` ByT5 appends to
every text, as the project's engines encode them.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from typing import Any

from rlar.malloc import keep_freed_memory
from rlar.tools import ToolInput, ToolSpec, make_tool

# transformers, torch, datasets and trl are imported where used: heavy and optional (the CLI starts without
# them).


def _tokenizer(model_dir: str) -> Any:
    from transformers import AutoTokenizer, ByT5Tokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    if isinstance(tok, ByT5Tokenizer):

        class _PromptByT5(ByT5Tokenizer):
            def build_inputs_with_special_tokens(
                self, token_ids_0: list[int], token_ids_1: list[int] | None = None
            ) -> list[int]:
                return token_ids_0 + (token_ids_1 or [])

        tok = _PromptByT5.from_pretrained(model_dir)
    return tok


def run(s: dict[str, Any]) -> dict[str, Any]:
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    torch.set_num_threads(int(s["torch_threads"]))
    malloc = keep_freed_memory() if s.get("keep_freed_memory") else "not asked"
    torch.manual_seed(int(s["seed"]))
    tok = _tokenizer(s["model_dir"])
    chat = bool(getattr(tok, "chat_template", None))
    prompts = [[{"role": "user", "content": p}] if chat else p for p in s["prompts"]]
    data = Dataset.from_dict({"prompt": prompts, "reference": s["references"]})
    tool = make_tool(ToolSpec.from_dict(s["tool_spec"]))
    rewards: list[float] = []
    reward_by_step: list[float | None] = []
    reward_s: list[float] = []  # per step: the reward function's wall time
    gen_score_s: list[float] = []  # per step: generate + score (TRL's _generate_and_score_completions)

    async def project_reward(
        prompts: list[Any], completions: list[Any], reference: list[Any], **kw: Any
    ) -> list[float]:
        t0 = time.perf_counter()
        texts = [c if isinstance(c, str) else c[-1]["content"] for c in completions]
        queries = [p if isinstance(p, str) else p[-1]["content"] for p in prompts]
        results = await tool.score_batch(
            [
                ToolInput(query=q, response=t, reference=r)
                for q, t, r in zip(queries, texts, reference, strict=True)
            ]
        )
        out = [float(r.score) if r.ok and r.score is not None else 0.0 for r in results]
        rewards.extend(out)
        scored = [float(r.score) for r in results if r.ok and r.score is not None]
        reward_by_step.append(sum(scored) / len(scored) if scored else None)
        reward_s.append(time.perf_counter() - t0)
        return out

    class _TimedGRPO(GRPOTrainer):  # type: ignore[misc]
        """TRL's trainer, its generate-and-score phase timed (one per step: steps_per_generation = 1)."""

        def _generate_and_score_completions(self, *a: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return super()._generate_and_score_completions(*a, **kw)
            finally:
                gen_score_s.append(time.perf_counter() - t0)

    stamps: list[tuple[float, float]] = []  # (wall, process cpu)

    class _Clock(TrainerCallback):  # stamps[0]: training starts; stamps[k]: step k ends
        def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            stamps.append((time.perf_counter(), time.process_time()))

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            stamps.append((time.perf_counter(), time.process_time()))

    total = int(s["warmup_steps"]) + int(s["steps"])
    n = int(s["prompts_per_step"]) * int(s["group_size"])
    with tempfile.TemporaryDirectory(prefix="rlar-trl-") as out:
        cfg = GRPOConfig(
            output_dir=out,
            use_cpu=True,
            bf16=bool(s.get("bf16", False)),
            num_generations=int(s["group_size"]),
            per_device_train_batch_size=n,
            gradient_accumulation_steps=1,
            max_completion_length=int(s["max_new_tokens"]),
            learning_rate=float(s["lr"]),
            temperature=float(s.get("temperature", 1.0)),
            logging_steps=1,
            use_vllm=False,
            report_to=[],
            max_steps=total,
            save_strategy="no",
            seed=int(s["seed"]),
            shuffle_dataset=False,
            dataloader_num_workers=0,
        )
        model = AutoModelForCausalLM.from_pretrained(s["model_dir"], dtype=torch.float32)
        trainer = _TimedGRPO(
            model=model,
            reward_funcs=[project_reward],  # type: ignore[list-item]
            args=cfg,
            train_dataset=data,
            processing_class=tok,
            callbacks=[_Clock()],
        )
        t0 = time.perf_counter()
        trainer.train()
        wall_all = time.perf_counter() - t0
    asyncio.run(tool.aclose())
    warm = int(s["warmup_steps"])
    steps = step_figures(stamps, warm, n, "TRL")
    # Per measured step: generate = generate-and-score minus the reward function; train = the rest of the step
    # (TRL's order: nothing overlaps, so the largest stage is the one that bounds it).
    k = range(warm, min(len(stamps) - 1, len(gen_score_s), len(reward_s)))
    stage = {
        "generate": statistics.median(gen_score_s[i] - reward_s[i] for i in k) if k else None,
        "reward": statistics.median(reward_s[i] for i in k) if k else None,
        "train": statistics.median(stamps[i + 1][0] - stamps[i][0] - gen_score_s[i] for i in k)
        if k
        else None,
    }
    timed = {name: v for name, v in stage.items() if v is not None}
    return {
        "stage_median_s": {name: round(v, 4) for name, v in timed.items()},
        "bound_stage": max(timed, key=lambda name: timed[name]) if timed else None,
        **steps,
        "seconds_incl_startup": round(wall_all, 1),
        "reward_mean": sum(rewards) / len(rewards) if rewards else None,
        "reward_by_step": reward_by_step,
        "torch_threads": int(s["torch_threads"]),
        "malloc": "freed memory kept" if malloc is None else malloc,
    }


def step_figures(
    stamps: list[tuple[float, float]], warm: int, samples_per_step: int, what: str
) -> dict[str, Any]:
    """Throughput over the steps after ``warm``, from ``stamps`` ((wall, CPU) at training start, then at each
    step's end): samples/s, steps, samples, wall, median step and CPU-s per step."""
    measured = [stamps[k + 1][0] - stamps[k][0] for k in range(warm, len(stamps) - 1)]
    cpu = [stamps[k + 1][1] - stamps[k][1] for k in range(warm, len(stamps) - 1)]
    if not measured:
        raise RuntimeError(f"{what} ran {len(stamps) - 1} steps; need more than the {warm} warm-up steps")
    wall = sum(measured)
    return {
        "samples_per_s": samples_per_step * len(measured) / wall,
        "steps": len(measured),
        "samples": samples_per_step * len(measured),
        "wall_s": round(wall, 4),
        "step_median_s": round(statistics.median(measured), 4),
        "cpu_s_per_step": round(sum(cpu) / len(cpu), 4),
    }


def main() -> None:
    settings = json.loads(open(sys.argv[1]).read())
    print(json.dumps(run(settings)), flush=True)


if __name__ == "__main__":
    main()
