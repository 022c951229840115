"""``crash_line`` finds the error in an actor's log: the last exception line."""

from __future__ import annotations

from actors.supervisor import crash_line


def test_crash_line_is_the_last_exception_line_of_the_log() -> None:
    tail = (
        "2026-12-01 10:00:00,000 feeder ERROR actors.runtime: feeder/x crashed\n"
        "Traceback (most recent call last):\n"
        '  File "actors/feeder.py", line 9, in main\n'
        "rlar.tasks.loaders.TaskDataError: /d/x.jsonl, line 7: prompt field 'q' is missing\n"
        "\n"
    )
    assert (
        crash_line(tail)
        == "rlar.tasks.loaders.TaskDataError: /d/x.jsonl, line 7: prompt field 'q' is missing"
    )
    assert crash_line("killed\n") == "killed"
    assert crash_line("") == "(no log)"
