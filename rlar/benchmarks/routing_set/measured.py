"""Formats of held-out sets that have been measured and reported, joined to the labelled set as experience.

A blind set is written by someone who read no routing code, committed, and routed once; its figures are reported
in docs/benchmarks.md. After that its mistakes have been read and it no longer measures anything unseen, so its
formats are worth more as exemplars: a router that has seen more public formats, written by more hands, meets a
new one nearer to something it knows, and the correctness model fitted on formats held out from it sees more
kinds of novelty. The blind sets kept for measuring (``heldout_blind7.jsonl``, ``heldout_blind8.jsonl``) never
join; ``heldout_blind4.jsonl`` and ``heldout_blind5.jsonl`` were written to be measured once and then serve as
development data; ``heldout_blind2.jsonl``, ``heldout_blind3.jsonl`` and ``heldout_blind6.jsonl``, each measured
untouched over several rounds, were then read and joined.

The records join as written (their ``note`` dropped: a reason for a label, which the router never reads), each
with its ``origin`` (the set's name): the correctness model learns from routes with each author's formats held
out together (``rlar.routing.training.Trainer.hand_held_out_routes``).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

ROUTING_DATA = Path(__file__).resolve().parents[3] / "data" / "routing"
MEASURED = (
    "heldout_unseen.jsonl",  # 24 formats the set lacked then, measured at d35fa1a and e78a1c8
    "heldout_short_answers.jsonl",  # short translations beside short facts (11), measured 2026-12-03
    "heldout_short_answers2.jsonl",  # the same, second set (14)
    "heldout_public_formats.jsonl",  # the first blind set of public formats (52), measured at 9461082 and 8851d74
    "heldout_blind4.jsonl",  # the fourth blind set (66 formats), measured untouched once at f567fc6
    "heldout_blind5.jsonl",  # the fifth blind set (76 formats), measured untouched once at bc8f028
    "heldout_blind2.jsonl",  # the second blind set (40 formats), measured untouched from 2026-12-06 to 88adbde
    "heldout_blind3.jsonl",  # the third blind set (50 formats), measured untouched from 2026-12-06 to 8253b4f
    "heldout_blind6.jsonl",  # the sixth blind set (70 formats), measured untouched from 88adbde to c0ac8d0
)


def measured_sets(rng: random.Random) -> list[dict[str, Any]]:
    """Every record of the measured held-out sets, in file order (``rng`` unused: the records are fixed)."""
    del rng
    rows = []
    for name in MEASURED:
        for line in (ROUTING_DATA / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                rec.pop("note", None)
                rec["origin"] = name.removesuffix(".jsonl")  # who wrote it: the hand-held-out folds
                rows.append(rec)
    return rows


ALL = [measured_sets]
