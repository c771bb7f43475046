"""Originality, novelty (harmonic mean) and a deterministic fluency score.

Padmakumar et al., "Beyond Memorization: Evaluating the Novelty of LLM Generations", ICLR 2026
(arXiv:2504.09389): originality ``O`` = fraction of a generation's n-grams unseen in the training
corpus; quality ``Q`` in [0, 1]; novelty ``N = 2 O Q / (O + Q)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats

from ..validation import check_array, check_int
from ._index import windows
from ._ngram import UnitIndex


def _check_texts(texts, name: str) -> list[str]:
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise ValueError(f"{name} must be a sequence of strings, got {type(texts).__name__}")
    texts = list(texts)
    if not all(isinstance(t, str) for t in texts):
        raise ValueError(f"{name} must hold only strings")
    return texts


def _check_prompts(prompts, texts: list[str], name: str) -> list[str]:
    if prompts is None:
        return [""] * len(texts)
    prompts = _check_texts(prompts, "prompts")
    if len(prompts) != len(texts):
        raise ValueError(f"prompts must have one entry per {name} ({len(texts)}), got {len(prompts)}")
    for i, (p, t) in enumerate(zip(prompts, texts, strict=True)):
        if not t.startswith(p):
            raise ValueError(f"{name}[{i}] must start with prompts[{i}] (pass the full text)")
    return prompts


def _unit_ids(texts: list[str], prompts: list[str], index: UnitIndex) -> tuple[np.ndarray, np.ndarray]:
    """Vocabulary ids of all texts' scored units, concatenated ``(U,)``, and units per text ``(m,)``.

    A unit is scored when it starts at or after its prompt's end (a unit straddling the boundary is
    the prompt's).
    """
    return index.unit_ids(texts, skip=list(map(len, prompts)))


def _per_text_windows(ids: np.ndarray, lengths: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Order-``n`` windows of every text ``(W, n)`` (none crossing texts) and the text of each ``(W,)``.

    ``ids``: the texts' ids concatenated; ``lengths``: units per text (shape ``(m,)``).
    """
    per_text = np.maximum(lengths - n + 1, 0)
    owner = np.repeat(np.arange(len(lengths)), per_text)
    if len(owner) == 0:
        return np.zeros((0, n), dtype=np.int64), owner
    starts = np.cumsum(lengths) - lengths
    first_window = np.cumsum(per_text) - per_text
    rows = starts[owner] + np.arange(len(owner)) - first_window[owner]
    return windows(ids, n)[rows], owner


def originality(
    generations: Sequence[str], index: UnitIndex, n: int = 5, prompts: Sequence[str] | None = None
) -> np.ndarray:
    """Per-sample fraction of the generation's order-``n`` n-grams that never occur in ``index``.

    Parameters
    ----------
    generations: ``m`` texts. With ``prompts``, each must start with its prompt; only the units that
        start at or after the prompt's end are scored, so n-grams in or across the prompt are excluded.
    index: the training corpus (:class:`NgramIndex` holding order ``n``, or :class:`SuffixArrayIndex`).
    n: the n-gram order.
    prompts: ``m`` prompts, or ``None``.

    Returns
    -------
    ndarray, shape ``(m,)``
        In [0, 1]; ``NaN`` for a generation with fewer than ``n`` units (count them with
        ``np.isnan``; :func:`novelty_report` reports the count).
    """
    texts = _check_texts(generations, "generations")
    n = check_int(n, "n", minimum=1)
    if not isinstance(index, UnitIndex):
        raise ValueError(f"index must be an NgramIndex or SuffixArrayIndex, got {type(index).__name__}")
    if not index.has_order(n):
        raise ValueError(f"n must be an order held by the index {index.orders}, got {n}")
    prompts = _check_prompts(prompts, texts, "generations")
    grams, owner = _per_text_windows(*_unit_ids(texts, prompts, index), n)
    unseen = ~index.contains(grams) if len(grams) else np.zeros(0, dtype=bool)
    total = np.bincount(owner, minlength=len(texts)).astype(float)
    hits = np.bincount(owner, weights=unseen.astype(float), minlength=len(texts))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, hits / np.maximum(total, 1), np.nan)


def _check_scores(x, name: str) -> np.ndarray:
    arr = check_array(x, name, ndim=1, finite=False, min_rows=0)
    if np.isinf(arr).any():
        raise ValueError(f"{name} contains infinite values")
    finite = arr[np.isfinite(arr)]
    if ((finite < 0) | (finite > 1)).any():
        raise ValueError(f"{name} must lie in [0, 1] (NaN marks an undefined sample)")
    return arr


def novelty(originality, quality) -> np.ndarray:
    """Harmonic mean ``N = 2 O Q / (O + Q)`` per sample (0 when both are 0; NaN where either is NaN).

    ``originality`` and ``quality``: arrays of shape ``(m,)`` in [0, 1]. Returns shape ``(m,)``.
    """
    o = _check_scores(originality, "originality")
    q = _check_scores(quality, "quality")
    if o.shape != q.shape:
        raise ValueError(f"quality must have the same length as originality ({len(o)}), got {len(q)}")
    s = o + q
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(s > 0, 2.0 * o * q / np.where(s > 0, s, 1.0), np.where(np.isnan(s), np.nan, 0.0))


def novelty_report(originality, quality, reference=None) -> dict:
    """Per-sample novelty, means, and paired t-tests against a reference system on the same prompts.

    Parameters
    ----------
    originality, quality: shape ``(m,)`` in [0, 1] (NaN: undefined sample).
    reference: ``None`` or ``(originality_ref, quality_ref)``, each shape ``(m,)``, row ``i`` for the
        same prompt as row ``i`` here.

    Returns
    -------
    dict with ``N`` (per sample), ``n_samples``, ``n_undefined`` (NaN O, Q or N), ``mean_O``,
    ``mean_Q``, ``mean_N`` (over defined samples) and, with a reference, ``vs_reference``:
    for each of ``O``, ``Q``, ``N`` the mean paired difference (this minus reference), the t statistic
    and the two-sided p-value of ``scipy.stats.ttest_rel`` over the samples defined on both sides.
    """
    o = _check_scores(originality, "originality")
    q = _check_scores(quality, "quality")
    n_ = novelty(o, q)
    ok = np.isfinite(n_)
    out = {
        "N": n_,
        "n_samples": len(n_),
        "n_undefined": int((~ok).sum()),
        "mean_O": float(np.mean(o[ok])) if ok.any() else float("nan"),
        "mean_Q": float(np.mean(q[ok])) if ok.any() else float("nan"),
        "mean_N": float(np.mean(n_[ok])) if ok.any() else float("nan"),
    }
    if reference is not None:
        if len(reference) != 2:
            raise ValueError("reference must be (originality_ref, quality_ref)")
        o_r = _check_scores(reference[0], "reference")
        q_r = _check_scores(reference[1], "reference")
        if o_r.shape != o.shape or q_r.shape != o.shape:
            raise ValueError(f"reference arrays must have length {len(o)} (one per sample)")
        n_r = novelty(o_r, q_r)
        both = ok & np.isfinite(n_r)
        out["vs_reference"] = {
            k: _paired_t(a[both], b[both]) for k, a, b in (("O", o, o_r), ("Q", q, q_r), ("N", n_, n_r))
        }
    return out


def _paired_t(a: np.ndarray, b: np.ndarray) -> dict:
    if len(a) < 2:
        return {"mean_diff": float("nan"), "t": float("nan"), "p": float("nan"), "n": len(a)}
    res = stats.ttest_rel(a, b)
    return {
        "mean_diff": float(np.mean(a - b)),
        "t": float(res.statistic),
        "p": float(res.pvalue),
        "n": len(a),
    }


def fluency_score(
    texts: Sequence[str],
    index: UnitIndex,
    prompts: Sequence[str] | None = None,
    weights: tuple[float, float, float] = (0.6, 0.3, 0.1),
) -> np.ndarray:
    """Deterministic quality: a reference trigram LM of the corpus against its unigram model.

    ``Q = sigmoid(mean_i [log p_ref(w_i | w_{i-2} w_{i-1}) - log p_uni(w_i)])`` over the scored
    units ``i >= 2`` of each text's continuation (as in :func:`originality`), where ``p_ref`` linearly
    interpolates the trigram, bigram and add-one unigram estimates with ``weights`` (the unigram's > 0),
    all counted by ``index`` (which must hold orders 1, 2 and 3). 0.5 means "no more predictable than
    a bag of words"; shuffled words score below it, fluent text above. Returns shape ``(m,)``; ``NaN`` for
    texts with fewer than 3 scored units.
    """
    texts = _check_texts(texts, "texts")
    if not isinstance(index, UnitIndex) or not all(index.has_order(k) for k in (1, 2, 3)):
        raise ValueError("index must be an NgramIndex holding orders 1, 2 and 3, or a SuffixArrayIndex")
    w = _check_lm_weights(weights)
    prompts = _check_prompts(prompts, texts, "texts")
    grams, owner = _per_text_windows(*_unit_ids(texts, prompts, index), 3)
    total = np.bincount(owner, minlength=len(texts)).astype(float)
    if len(grams) == 0:
        return np.full(len(texts), np.nan)
    p_uni = (index.count(grams[:, 2:]) + 1.0) / (index.n_tokens + len(index.vocab) + 1.0)
    p_bi = _ratio(index.count(grams[:, 1:]), index.count(grams[:, 1:2]))
    p_tri = _ratio(index.count(grams), index.count(grams[:, :2]))
    log_ratio = np.log(w[0] * p_tri + w[1] * p_bi + w[2] * p_uni) - np.log(p_uni)
    mean = np.bincount(owner, weights=log_ratio, minlength=len(texts)) / np.maximum(total, 1)
    return np.where(total > 0, 1.0 / (1.0 + np.exp(-mean)), np.nan)


def _check_lm_weights(weights) -> np.ndarray:
    """Trigram, bigram, unigram weights: non-negative, summing to 1, the add-one unigram's > 0 (else an
    unseen bigram gets ``p_ref = 0``, ``log 0 = -inf``, and the whole text ``Q = 0``)."""
    w = check_array(weights, "weights", ndim=1)
    if w.shape != (3,) or (w < 0).any() or not np.isclose(w.sum(), 1.0):
        raise ValueError(f"weights must be 3 non-negative numbers summing to 1, got {weights!r}")
    if w[2] <= 0:
        raise ValueError(f"weights[2] (the add-one unigram's) must be > 0 so that p_ref > 0, got {weights!r}")
    return w


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return np.where(den > 0, num / np.maximum(den, 1), 0.0)
