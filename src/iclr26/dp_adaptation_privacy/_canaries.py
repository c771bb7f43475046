"""Canaries (Carlini et al. 2019, "The secret sharer"): insertion, exposure and greedy k-extractability."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Canary:
    """One inserted secret: ``text`` = ``template`` with ``{secret}`` replaced by ``secret`` (digits)."""

    text: str
    secret: str
    template: str


def random_secrets(rng: np.random.Generator, n: int, digits: int) -> list[str]:
    """``n`` random digit strings of length ``digits``."""
    return ["".join(map(str, row)) for row in rng.integers(0, 10, size=(n, digits))]


def distinct_secrets(rng: np.random.Generator, n: int, digits: int) -> list[str]:
    """``n`` distinct random digit strings (``n`` ≤ 10 ** ``digits``): :func:`random_secrets`, with a
    repeated draw replaced by further draws (so the same as it when no draw repeats)."""
    secrets = list(dict.fromkeys(random_secrets(rng, n, digits)))
    while len(secrets) < n:
        secrets = list(dict.fromkeys(secrets + random_secrets(rng, n - len(secrets), digits)))
    return secrets


def insert(texts: list[str], n: int, repeats: int, template: str, seed: int, digits: int):
    """Texts with ``n`` canaries (distinct secrets) × ``repeats`` copies inserted at random positions, and
    the canaries."""
    rng = np.random.default_rng(seed)
    canaries = [Canary(template.format(secret=s), s, template) for s in distinct_secrets(rng, n, digits)]
    out = list(texts)
    for c in canaries:
        for _ in range(repeats):
            out.insert(int(rng.integers(0, len(out) + 1)), c.text)
    return out, canaries


def exposure(canary_nll: float, reference_nll: np.ndarray) -> float:
    """Sampled exposure log2(m+1) − log2(rank), rank = 1 + #(references with lower NLL)."""
    rank = 1 + int(np.sum(reference_nll < canary_nll))
    return float(np.log2(len(reference_nll) + 1) - np.log2(rank))
