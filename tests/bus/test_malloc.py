"""rlar.malloc: a process that keeps freed memory does not page-fault a large tensor back at every step."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rlar.malloc import keep_freed_memory

_STEPS = """
import json, resource, sys
import torch
from rlar.malloc import keep_freed_memory, kept

before = kept()
reason = keep_freed_memory() if sys.argv[1] == "keep" else "not asked"
def step():  # what a CPU training step does with its logits: a large tensor allocated, filled, freed
    return float(torch.ones(16_000_000).sum())
for _ in range(10):  # glibc settles the heap's layout over the first few rounds
    step()
f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    step()
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
print(json.dumps({"before": before, "reason": reason, "kept": kept(), "again": keep_freed_memory(), "faults": faults}))
"""


def _run(mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", _STEPS, mode], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_kept_freed_memory_is_not_faulted_back_at_every_step() -> None:
    system, keep = _run("system"), _run("keep")
    if keep["reason"] is not None:
        pytest.skip(f"not glibc here: {keep['reason']}")
    assert system["kept"] is False and keep["before"] is False and keep["kept"] is True
    assert keep["again"] is None  # a second call changes nothing and says it is set
    # 64 MB filled five times: 15,625 pages each time when glibc maps it afresh, at most once when it is kept
    assert system["faults"] >= 5 * 15_000, system
    assert keep["faults"] <= 16_000, keep


def test_a_trim_threshold_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="trim_threshold"):
        keep_freed_memory(trim_threshold=0)
    with pytest.raises(ValueError, match="trim_threshold"):
        keep_freed_memory(trim_threshold=1 << 31)
