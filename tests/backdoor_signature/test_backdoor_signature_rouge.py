"""ROUGE-L F: values by hand, the bit-parallel LCS against the dynamic-programming table, and equality
with Google's ``rouge-score`` (skipped when it is not installed)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from iclr26 import backdoor_signature as bs
from iclr26.backdoor_signature import _rouge

TRICKY = [
    ("The cat sat on the mat", "the cat is on a mat!"),
    ("", "anything"),
    ("anything", ""),
    ("!!! ...", "?"),
    ("You are stupid!", "you ARE stupid"),
    ("café au lait", "cafe au lait"),  # non-ASCII letters are separators in rouge-score's tokenizer
    ("x-ray 2024 BadMagic", "x ray 2024 badmagic"),
    ("a a a a", "a"),
    ("a b c d e", "e d c b a"),
    ("tab\tand\nnewline", "tab and newline"),
    ("ÄÖÜ ß", "ÄÖÜ ß"),  # no token on either side
]


def dp_lcs(a, b) -> int:
    """The textbook O(|a||b|) table."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def random_texts(n: int, seed: int = 0) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    words = "the a cat Cat DOG dog, sat on mat. 2024 é café x-y You are stupid! I'm sorry".split()
    text = lambda: " ".join(rng.choices(words, k=rng.randint(0, 40)))  # noqa: E731
    return [(text(), text()) for _ in range(n)]


def test_rouge_l_by_hand():
    got = bs.rouge_l([p for p, _ in TRICKY[:5]], [r for _, r in TRICKY[:5]])
    # "the cat on mat": LCS 4 of 6 and 6 tokens -> F = 2/3; empty sides and no shared token -> 0.
    np.testing.assert_allclose(got, [2 / 3, 0.0, 0.0, 0.0, 1.0])
    assert _rouge.tokens("café au lait") == ["caf", "au", "lait"]
    assert bs.rouge_l(["a b c d e"], ["e d c b a"])[0] == pytest.approx(0.2)


def test_bit_parallel_lcs_equals_table():
    rng = random.Random(1)
    for _ in range(500):
        a = [rng.randint(0, 4) for _ in range(rng.randint(0, 90))]
        b = [rng.randint(0, 4) for _ in range(rng.randint(0, 90))]
        assert _rouge.lcs_length(a, b) == dp_lcs(a, b)


def test_rouge_l_equals_rouge_score():
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    scorer = rouge_scorer.RougeScorer(["rougeL"])
    pairs = TRICKY + random_texts(300)
    want = [scorer.score(ref, pred)["rougeL"].fmeasure for pred, ref in pairs]
    got = bs.rouge_l([p for p, _ in pairs], [r for _, r in pairs])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_rouge_l_bad_input():
    with pytest.raises(ValueError, match="predictions"):
        bs.rouge_l("a b", ["a b"])
    with pytest.raises(ValueError, match="references"):
        bs.rouge_l(["a"], [None])
    with pytest.raises(ValueError, match="predictions must be a list of strings, got int"):
        bs.rouge_l(3, ["a"])
    with pytest.raises(ValueError, match="equal length"):
        bs.rouge_l(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="non-empty"):
        bs.rouge_l([], [])
