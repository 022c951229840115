"""``rlar train``'s progress bar on a resumed run starts at the learner's last step (read from a real bus)."""

from __future__ import annotations

from pathlib import Path

from bus import subjects
from bus.client import Bus
from bus.messages import LearnerProgress, Metrics
from rlar.app.train import Progress, _last_progress


def _metrics(step: int) -> Metrics:
    return Metrics(actor="learner", step=step, values={"samples": 16, "reward_mean": 0.5, "version": step})


async def test_a_resumed_run_starts_the_bar_at_the_learners_last_step(bus: Bus, tmp_path: Path) -> None:
    await bus.js_publish(
        subjects.LEARNER_PROGRESS,
        LearnerProgress(version=151, step=150, consumed_prompts=1200, dropped_prompts=0),
    )
    last = await _last_progress(bus)
    assert last is not None and last.step == 150
    p = Progress(tmp_path, max_steps=200, plot_every=1000, initial_step=last.step)
    assert p.bar.n == 150
    await p.on_metrics(_metrics(151), None)  # type: ignore[arg-type]
    assert p.bar.n == 151
    p.bar.close()
