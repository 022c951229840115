"""``rlar train``'s progress bar follows the learner's own step across restarts and resumed runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bus.messages import Event, Metrics
from rlar.app.train import Progress


def _metrics(step: int) -> Metrics:
    return Metrics(actor="learner", step=step, values={"samples": 16, "reward_mean": 0.5, "version": step})


async def test_a_learner_restarted_from_an_older_checkpoint_moves_the_bar_back_and_says_so(
    tmp_path: Path, capsys: Any
) -> None:
    p = Progress(tmp_path, max_steps=200, plot_every=1000)
    for step in range(1, 171):
        await p.on_metrics(_metrics(step), None)  # type: ignore[arg-type]
    assert p.bar.n == 170
    await p.on_event(
        Event(
            actor="learner/x",
            kind="resumed",
            message="resumed from the checkpoint of step 150",
            data={"step": 150, "version": 171},
        ),
        None,
    )  # type: ignore[arg-type]
    assert p.bar.n == 150
    await p.on_metrics(_metrics(151), None)  # type: ignore[arg-type]
    assert p.bar.n == 151 and p.samples == 171 * 16
    await p.on_event(Event(actor="learner/x", kind="finished", message="done"), None)  # type: ignore[arg-type]
    assert p.finished.is_set() and p.finished_at is not None
    p.bar.close()
    assert "steps 151-170 are redone" in capsys.readouterr().out


async def test_a_refused_verifier_warning_names_the_declared_fallback_or_says_the_samples_abstain(
    tmp_path: Path, capsys: Any
) -> None:
    refused = {"task": "chat", "category": "refused_partial", "unread": ["Write it as a haiku."]}
    p = Progress(tmp_path, max_steps=10, plot_every=1000, fallbacks={"chat": ["format_rules"]})
    await p.on_event(
        Event(actor="synthesizer", kind="synthesis_failed", message="refused", data=refused), None
    )  # type: ignore[arg-type]
    err = capsys.readouterr().err
    assert (
        "task 'chat'" in err and "declared fallback (format_rules)" in err and "'Write it as a haiku.'" in err
    )
    bare = Progress(tmp_path, max_steps=10, plot_every=1000, fallbacks={"*": []})
    await bare.on_event(
        Event(actor="synthesizer", kind="synthesis_failed", message="refused", data=refused), None
    )  # type: ignore[arg-type]
    assert "ABSTAIN" in capsys.readouterr().err


async def test_kinds_the_router_was_unsure_of_are_warned_about_once_per_task_as_they_happen_and_counted(
    tmp_path: Path, capsys: Any
) -> None:
    def unsure(task: str, n: int) -> Event:
        reason = (
            f"low confidence 0.4{n} < threshold 0.96: no fallback declared: its samples ABSTAIN (masked, no reward);"
            f' to declare a tool for this task, in [router]: fallback."{task}" = [{{ tool = "set_f1" }}]'
        )
        data = {"task": task, "signature": f"s{n}", "state": "abstain", "confidence": 0.4, "tools": []}
        return Event(
            actor="router/1",
            kind="low_confidence",
            level="warning",
            message=f"task {task!r}: {reason}",
            data=data,
        )

    p = Progress(tmp_path, max_steps=10, plot_every=1000)
    for event in (unsure("survey", 1), unsure("survey", 2), unsure("survey", 2), unsure("dates", 3)):
        await p.on_event(event, None)  # type: ignore[arg-type]
    err = capsys.readouterr().err
    assert (
        err.count("WARNING: routing task 'survey'") == 1 and err.count("WARNING: routing task 'dates'") == 1
    )
    survey, dates = p.unsure_warnings()
    assert survey.startswith("routing task 'survey': low confidence 0.41 < threshold 0.96")
    assert survey.endswith("(and 1 more kinds of this task)") and 'fallback."survey"' in survey
    assert "more kinds" not in dates
