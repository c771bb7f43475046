"""``sonnet_form_score``: a deterministic quality score for the sonnet task (lines, metre, rhyme).

A Shakespearean sonnet has 14 lines of iambic pentameter (10 syllables, 11 with a feminine ending)
rhyming ABAB CDCD EFEF GG. Each part scores in [0, 1]; the score is their weighted mean:

- ``lines``: ``max(0, 1 - |L - 14| / 14)`` for ``L`` non-empty lines;
- ``metre``: the fraction of the first 14 lines with 10 or 11 syllables;
- ``rhyme``: the fraction of the 7 rhyme pairs (1-3, 2-4, 5-7, 6-8, 9-11, 10-12, 13-14) whose last
  words rhyme: two different words sharing a rhyming part (the phones from the last stressed vowel)
  for some pair of their CMU pronunciations. A missing line counts as a failed pair.

Syllables and rhymes come from the CMU Pronouncing Dictionary (``pronouncing``, in the ``novelty``
extra). A word it lacks is counted by vowel groups and rhymes only with itself spelled alike, which
is never a rhyme here; archaic spellings (``'d``, ``-eth``) are thus approximate.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

import numpy as np

from ..validation import check_array

RHYME_PAIRS = ((0, 2), (1, 3), (4, 6), (5, 7), (8, 10), (9, 11), (12, 13))
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)*")
_VOWELS = re.compile(r"[aeiouy]+")


@cache
def _phones(word: str) -> tuple[str, ...]:
    import pronouncing

    return tuple(pronouncing.phones_for_word(word))


def _syllables(word: str) -> int:
    phones = _phones(word)
    if phones:
        return sum(ch.isdigit() for ch in phones[0])
    groups = len(_VOWELS.findall(word))
    if word.endswith("e") and not word.endswith(("le", "ee")) and groups > 1:
        groups -= 1  # silent final e
    return max(groups, 1)


def _rhyme(a: str, b: str) -> bool:
    import pronouncing

    if a == b:
        return False
    parts_a = {pronouncing.rhyming_part(p) for p in _phones(a)}
    return bool(parts_a & {pronouncing.rhyming_part(p) for p in _phones(b)})


def sonnet_form(text: str) -> dict[str, float]:
    """The three parts of the form score of one text (see the module docstring)."""
    lines = [_WORD.findall(line.lower()) for line in text.splitlines() if line.strip()]
    lines = [w for w in lines if w]
    head = lines[:14]
    metre = sum(sum(map(_syllables, w)) in (10, 11) for w in head) / 14
    last = [w[-1] for w in head]
    rhyme = sum(j < len(last) and _rhyme(last[i], last[j]) for i, j in RHYME_PAIRS) / len(RHYME_PAIRS)
    return {"lines": max(0.0, 1.0 - abs(len(lines) - 14) / 14), "metre": metre, "rhyme": rhyme}


def sonnet_form_score(
    texts: Sequence[str], weights: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3)
) -> np.ndarray:
    """Form quality of each text as a Shakespearean sonnet, in [0, 1], shape ``(m,)``.

    Parameters
    ----------
    texts: ``m`` texts, one verse line per line (the prompt's first line included).
    weights: weights of the ``lines``, ``metre`` and ``rhyme`` parts (non-negative, summing to 1).

    Deterministic: held-out Shakespeare sonnets score high, the same words shuffled within the sonnet
    (line breaks kept) lose metre and rhyme (measured in ``iclr26 run novelty``).
    """
    if (
        isinstance(texts, str)
        or not isinstance(texts, Sequence)
        or not all(isinstance(t, str) for t in texts)
    ):
        raise ValueError("texts must be a sequence of strings")
    w = check_array(weights, "weights", ndim=1)
    if w.shape != (3,) or (w < 0).any() or not np.isclose(w.sum(), 1.0):
        raise ValueError(f"weights must be 3 non-negative numbers summing to 1, got {weights!r}")
    parts = [sonnet_form(t) for t in texts]
    return np.array([w[0] * p["lines"] + w[1] * p["metre"] + w[2] * p["rhyme"] for p in parts], dtype=float)
