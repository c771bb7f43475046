"""Shared random corpora and brute-force Python references (Counter of n-gram tuples, set membership)."""

from __future__ import annotations

import re
from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest

_WORD = r"\w+|[^\w\s]"
WORDS = [f"w{i}" for i in range(280)] + [
    "café",
    "naïve",
    "日本語",
    "straße",
    "ÉCOLE",
    ",",
    ".",
    "!",
    "'",
    "—",
]


def random_corpus(seed: int, n_docs: int = 40, length: int = 150) -> list[str]:
    """Documents of Zipf-distributed words (so that long n-grams repeat), joined by varied spacing."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, len(WORDS) + 1)
    p /= p.sum()
    docs = []
    for _ in range(n_docs):
        words = rng.choice(WORDS, size=rng.integers(1, length), p=p)
        seps = rng.choice([" ", "  ", "\n", "\t "], size=len(words))
        docs.append("".join(w + s for w, s in zip(words, seps, strict=True)))
    # a repeated passage, so long n-grams are seen more than once
    docs += [docs[0]] * 2
    return docs


@pytest.fixture(scope="session")
def corpus() -> list[str]:
    return random_corpus(0)


def units(text: str) -> list[str]:
    return [u.lower() for u in re.findall(_WORD, text)]


def ngram_counts(docs: list[str], n: int) -> Counter:
    c: Counter = Counter()
    for d in docs:
        u = units(d)
        c.update(tuple(u[i : i + n]) for i in range(len(u) - n + 1))
    return c


def originality(text: str, counts: Counter, n: int, prompt: str = "") -> float:
    u = [m.group().lower() for m in re.finditer(_WORD, text) if m.start() >= len(prompt)]
    grams = [tuple(u[i : i + n]) for i in range(len(u) - n + 1)]
    if not grams:
        return float("nan")
    return sum(g not in counts for g in grams) / len(grams)


@pytest.fixture(scope="session")
def ref() -> SimpleNamespace:
    return SimpleNamespace(
        units=units, ngram_counts=ngram_counts, originality=originality, random_corpus=random_corpus
    )
