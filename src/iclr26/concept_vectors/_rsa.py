"""Representational similarity analysis of attention heads, head ranking, steering metrics.

RSA (Kriegeskorte et al., 2008) as in Opiełka et al. (ICLR 2026): for each head, the cosine
similarity matrix of its last-token activations over prompts, condensed to its upper triangle, is
rank-correlated (Spearman, average ranks for ties as ``scipy.stats.spearmanr``) with a design matrix
that is 1 where two prompts share a label (concept, or format) and 0 otherwise.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata


def condensed_cosine(acts: np.ndarray) -> np.ndarray:
    """``(N, L, H, d)`` → ``(L, H, N*(N-1)/2)`` upper-triangle cosine similarities (row-major pairs)."""
    x = acts.astype(np.float64)
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    x = x / np.where(norm > 0, norm, 1.0)
    sims = np.einsum("nlhd,mlhd->lhnm", x, x)
    i, j = np.triu_indices(acts.shape[0], k=1)
    return sims[:, :, i, j]


def design_vector(labels: np.ndarray) -> np.ndarray:
    """Condensed same-label design matrix: ``1.0`` for pairs ``(i < j)`` sharing a label."""
    i, j = np.triu_indices(len(labels), k=1)
    return (labels[i] == labels[j]).astype(np.float64)


def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman correlation of every row of ``x`` (``(..., P)``) with ``y`` (``(P,)``); NaN for constants."""
    rx = rankdata(x, axis=-1)
    ry = rankdata(y)
    rx = rx - rx.mean(axis=-1, keepdims=True)
    ry = ry - ry.mean()
    num = (rx * ry).sum(axis=-1)
    den = np.sqrt((rx**2).sum(axis=-1) * (ry**2).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def rank_heads(scores: np.ndarray, k: int) -> list[tuple[int, int]]:
    """The ``k`` highest-scoring ``(layer, head)`` ids, best first (NaN ranks last, ties by index)."""
    flat = np.where(np.isnan(scores), -np.inf, scores).ravel()
    order = np.argsort(-flat, kind="stable")[:k]
    n_heads = scores.shape[1]
    return [(int(o // n_heads), int(o % n_heads)) for o in order]


def kl_rows(log_p: np.ndarray, log_q: np.ndarray) -> np.ndarray:
    """``KL(p ‖ q)`` per row from log-probabilities ``(N, V)`` (0 log 0 = 0)."""
    p = np.exp(log_p)
    return np.sum(np.where(p > 0, p * (log_p - log_q), 0.0), axis=-1)
