#!/usr/bin/env bash
# GPU benchmark: the pipeline benchmark (sync vs async, vLLM engine), then a 30-step GRPO run on GSM8K-format
# data with a ~0.5B-parameter model from a local directory; prints learner tokens/s, an MFU estimate and the
# weight-sync time (rlar/benchmarks/gpu.py), the merged JSON document last.
#
#   MODEL_DIR=/models/Qwen2.5-0.5B-Instruct rlar bench gpu      # needs an NVIDIA GPU and the vllm wheel
#
# Budget: pipeline ≤ 300 s + training ≤ 240 s (+ start-up) — under 8 minutes on one GPU (with two, TRL's
# AsyncGRPOTrainer runs too: give it PIPELINE_TIMEOUT_S=900; PIPELINE_BASELINE=none leaves it out). Results also go to
# $OUT (default: runs/gpu-bench-<timestamp>). Nothing is downloaded: MODEL_DIR must be a local HF checkpoint.
set -euo pipefail
cd "$(dirname "$0")/../.."  # the repository root
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

# 1. sync vs async on the bus, vLLM (in-process engine) on the GPU, same work both ways; beside them TRL's
#    AsyncGRPOTrainer with its vLLM server (its server and trainer take a GPU each: with one GPU the JSON's
#    trl_async says so and it is skipped, no time spent; with two it adds its server's and trainer's start-up)
timeout "${PIPELINE_TIMEOUT_S:-330}" "$PY" -m rlar.app.cli --log-level WARNING bench pipeline \
  --model-dir "$MODEL_DIR" --engine vllm --device cuda --baseline "${PIPELINE_BASELINE:-trl-async}" \
  --steps 6 --warmup 2 --prompts 8 --group-size 8 --max-new-tokens 128 --json \
  | tee "$OUT/pipeline.log" | tail -1 > "$OUT/pipeline.json"

# 2. a 30-step GRPO run of the real system (all actors over an embedded bus) on GSM8K-format data written here
"$PY" -m rlar.benchmarks.gpu data "$OUT/gsm8k.jsonl" >/dev/null
"$PY" -m rlar.benchmarks.gpu config "$MODEL_DIR" "$OUT/gsm8k.jsonl" --steps "${STEPS:-30}" > "$OUT/train.toml"
"$PY" -m rlar.app.cli plan --config "$OUT/train.toml" --model "$MODEL_DIR" | tee "$OUT/plan.log"
timeout 330 "$PY" -m rlar.app.cli --log-level WARNING train --config "$OUT/train.toml" --run-dir "$OUT/train" \
  | tee "$OUT/train.log" | tail -1 > "$OUT/train.json"

# 3. tokens/s, MFU estimate, weight-sync time (rlar/benchmarks/gpu.py)
"$PY" -m rlar.benchmarks.gpu summarize "$OUT" "$MODEL_DIR"
