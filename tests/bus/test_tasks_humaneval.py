"""HumanEval as a task: 164 problems whose references run (in a child interpreter)."""

from __future__ import annotations

import subprocess
import sys

from rlar.tasks import (
    builtin_task,
)


def test_humaneval_loads_164_problems_with_runnable_references() -> None:
    train, test = builtin_task("humaneval", "train"), builtin_task("humaneval", "test")
    assert (len(train), len(test)) == (131, 33)
    assert all(int(r.id.split("/")[1]) % 5 == 0 for r in test)
    rec = train.get("HumanEval/1")
    assert rec.reference["style"] == "humaneval" and rec.reference["entry_point"] == "separate_paren_groups"
    assert "def check(candidate)" in rec.reference["tests"] and rec.reference["prompt"] == rec.prompt
    # The reference contract (prompt + completion + tests + check(entry_point)) holds for the package's own
    # known-good solutions; run in a child process with a timeout, never exec'd in ours.
    for r in list(train)[:4]:
        ref = r.reference
        program = (
            ref["prompt"]
            + r.metadata["canonical_solution"]
            + "\n"
            + ref["tests"]
            + f"\ncheck({ref['entry_point']})\n"
        )
        done = subprocess.run([sys.executable, "-c", program], capture_output=True, timeout=30)
        assert done.returncode == 0, (r.id, done.stderr[-500:])
