#!/usr/bin/env bash
# GPU benchmark: the pipeline benchmark (sync vs async, vLLM engine) and a short GRPO training run with a
# ~0.5B-parameter model from a local directory; prints the same JSON figures, the merged document last.
#
#   MODEL_DIR=/models/Qwen2.5-0.5B-Instruct bench/gpu.sh        # needs an NVIDIA GPU and the vllm wheel
#
# Budget: pipeline ≤ 300 s + training ≤ 240 s (+ start-up) — under 8 minutes on one GPU. Results also go to
# $OUT (default: runs/gpu-bench-<timestamp>). Nothing is downloaded: MODEL_DIR must be a local HF checkpoint.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
MODEL_DIR=${MODEL_DIR:?set MODEL_DIR to a local ~0.5B Hugging Face checkpoint directory}
OUT=${OUT:-runs/gpu-bench-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
command -v nvidia-smi >/dev/null || { echo "gpu.sh: no nvidia-smi: this script needs an NVIDIA GPU" >&2; exit 2; }
"$PY" -c "import vllm, torch; assert torch.cuda.is_available()" \
  || { echo "gpu.sh: vllm not importable or CUDA unavailable" >&2; exit 2; }
[ -f "$MODEL_DIR/config.json" ] || { echo "gpu.sh: $MODEL_DIR has no config.json" >&2; exit 2; }
unset DS_ACCELERATOR  # DeepSpeed picks CUDA
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"

# 1. sync vs async on the bus, vLLM (in-process engine) on the GPU, same work both ways
timeout 330 "$PY" -m rlar.cli --log-level WARNING bench pipeline --model-dir "$MODEL_DIR" --engine vllm \
  --device cuda --steps 6 --warmup 2 --prompts 8 --group-size 8 --max-new-tokens 128 --json \
  | tee "$OUT/pipeline.log" | tail -1 > "$OUT/pipeline.json"

# 2. a short GRPO run of the real system (all actors over an embedded bus) on the learnable demo tasks
cat > "$OUT/train.toml" <<TOML
[train]
name = "gpu"
max_minutes = 4.0
actors = { reward = 1, learner = 1, rollout = 1, feeder = 1 }
[nats]
url = "embedded"
[policy]
source = "path"
path = "$MODEL_DIR"
[feeder]
seed = 0
tasks = [{ name = "arith", weight = 2.0 }, { name = "word_arith", weight = 1.0 }, { name = "copy", weight = 1.0 }]
[rollout]
group_size = 8
batch_prompts = 16
max_new_tokens = 32
engine = { kind = "vllm", model = "{run_dir}/policy/init", device = "cuda", dtype = "bfloat16", max_model_len = 1024, gpu_memory_utilization = 0.3 }
[reward]
kinds = ["rule"]
[learner]
prompts_per_step = 16
max_steps = 30
checkpoint_every = 1000
trainer = { model_dir = "{run_dir}/policy/init", lr = 1e-6, zero_stage = 0, micro_batch_size = 32, torch_threads = 4, dtype = "bf16", grpo = { group_size = 8, max_staleness = 2 } }
TOML
timeout 330 "$PY" -m rlar.cli --log-level WARNING train --config "$OUT/train.toml" --run-dir "$OUT/train" \
  | tee "$OUT/train.log" | tail -1 > "$OUT/train.json"

"$PY" - "$OUT" <<'PYEOF'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
pipe = json.loads((out / "pipeline.json").read_text())
train = json.loads((out / "train.json").read_text())
recs = [json.loads(x) for x in (out / "train" / "metrics.jsonl").read_text().splitlines()]
steps_s = [r["step_s"] for r in recs[2:]] or [0.0]
doc = {"bench": "gpu", "gpu": (out / "gpu.txt").read_text().strip(),
       "sync_samples_per_s": pipe["sync_samples_per_s"], "async_samples_per_s": pipe["async_samples_per_s"],
       "async_over_sync": pipe["async_over_sync"], "async_over_limit": pipe["async_over_limit"],
       "sync_learner_idle_frac": pipe["sync_learner_idle_frac"], "async_learner_idle_frac": pipe["async_learner_idle_frac"],
       "train_steps": train["steps"], "train_minutes": train["minutes"], "train_reason": train["reason"],
       "train_samples_per_s": round(sum(r["samples"] for r in recs) / max(1e-9, recs[-1]["t_end"] - recs[0]["t_start"]), 2) if recs else None,
       "train_reward_first10_last10": train["reward_first10_last10"], "train_step_s_median": sorted(steps_s)[len(steps_s) // 2]}
(out / "gpu.json").write_text(json.dumps(doc, indent=2) + "\n")
print(json.dumps(doc), flush=True)
PYEOF
