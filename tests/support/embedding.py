"""A bag-of-words embedding: routing tests that need vectors but no model."""

from __future__ import annotations

import hashlib

import numpy as np


def bag_of_words(texts: list[str]) -> list[list[float]]:
    out = []
    for t in texts:
        v = np.zeros(64)
        for w in t.lower().split():
            v[int(hashlib.sha256(w.encode()).hexdigest(), 16) % 64] += 1.0
        out.append(list(v / (np.linalg.norm(v) or 1.0)))
    return out
