"""ROUGE-L F-measure (Lin, 2004) with the tokenizer of Google's ``rouge-score`` (its ``rougeL``).

Tokens: the text lower-cased, every run of characters outside ``[a-z0-9]`` a separator, empty pieces
dropped (no stemming). ``P = LCS / |prediction|``, ``R = LCS / |reference|``, ``F = 2PR / (P + R)``;
0 when either side has no token or nothing is shared.
"""

from __future__ import annotations

import re

_SEPARATORS = re.compile(r"[^a-z0-9]+")


def tokens(text: str) -> list[str]:
    """``rouge-score``'s default tokens of ``text`` (lower-cased alphanumeric runs)."""
    return [t for t in _SEPARATORS.split(text.lower()) if t]


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of two token lists, bit-parallel over ``a``.

    Allison & Dix (1986): bit ``k`` of ``v`` is cleared once ``a[k]`` is matched; per token of ``b``,
    ``u = v & match[token]`` and ``v = (v + u) | (v - u)``. ``O(|a| · |b| / word)`` with Python ints
    instead of the ``O(|a| · |b|)`` table.
    """
    if not a or not b:
        return 0
    match: dict[str, int] = {}
    for k, tok in enumerate(a):
        match[tok] = match.get(tok, 0) | (1 << k)
    full = (1 << len(a)) - 1
    v = full
    for tok in b:
        u = v & match.get(tok, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()


def rouge_l_f(prediction: str, reference: str) -> float:
    """ROUGE-L F-measure of one prediction against one reference."""
    pred, ref = tokens(prediction), tokens(reference)
    common = lcs_length(ref, pred)
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)
