"""The learning core: GRPO maths (grpo), the DeepSpeed learner (trainer), supervised warm-up (sft)."""
