"""Per-channel Gram matrices of ``N`` deltas: ``G[c, i, l] = <Δ_ic, Δ_lc>``, the only pass over the
deltas that Eq. 2 needs (the norms are the diagonal).

With numba (in this system's extra) one compiled pass reads every delta once: a channel's ``N`` rows
stay in cache while their ``N(N+1)/2`` products are summed (gate/up, channels are rows), or each row of
every delta is read once into float64 per-column accumulators (down, channels are columns). Without
numba, torch computes each pair of deltas in memory order (float32 products, ``N(N+1)/2`` passes).
Products are of float32 values; numba sums them in float64.
"""

from __future__ import annotations

import numpy as np
import torch

try:
    from numba import njit
except ImportError:  # pragma: no cover - exercised where numba is absent
    njit = None

# reassociation lets the dot products vectorise; no "nnan"/"ninf": a NaN or inf in a delta must reach
# the diagonal, where the scoring checks for it
_FASTMATH = {"reassoc", "contract"}


def _gram_rows(mats):
    """``(C, N, N)`` float64 from ``N`` ``(C, D)`` float32 arrays (channels are rows)."""
    n = len(mats)
    channels, width = mats[0].shape
    out = np.zeros((channels, n, n))
    for c in range(channels):
        for i in range(n):
            xi = mats[i][c]
            for j in range(i, n):
                xj = mats[j][c]
                acc = 0.0
                for k in range(width):
                    acc += xi[k] * xj[k]
                out[c, i, j] = acc
                out[c, j, i] = acc
    return out


def _gram_columns(mats):
    """``(C, N, N)`` float64 from ``N`` ``(R, C)`` float32 arrays (channels are columns)."""
    n = len(mats)
    rows, channels = mats[0].shape
    acc = np.zeros((n, n, channels))
    for r in range(rows):
        for i in range(n):
            xi = mats[i][r]
            for j in range(i, n):
                xj = mats[j][r]
                a = acc[i, j]
                for c in range(channels):
                    a[c] += xi[c] * xj[c]
    out = np.empty((channels, n, n))
    for i in range(n):
        for j in range(i, n):
            out[:, i, j] = acc[i, j]
            out[:, j, i] = acc[i, j]
    return out


if njit is not None:
    _gram_rows = njit(cache=True, fastmath=_FASTMATH)(_gram_rows)
    _gram_columns = njit(cache=True, fastmath=_FASTMATH)(_gram_columns)


def _gram_torch(mats: list[torch.Tensor], columns: bool) -> np.ndarray:
    n = len(mats)
    if columns:
        dot = lambda x, y: (x * y).sum(0)  # noqa: E731
    else:
        dot = lambda x, y: torch.linalg.vecdot(x, y, dim=1)  # noqa: E731
    out = np.empty((mats[0].shape[1 if columns else 0], n, n))
    for i in range(n):
        for j in range(i, n):
            out[:, i, j] = out[:, j, i] = dot(mats[i], mats[j]).double().numpy()
    return out


def channel_gram(deltas: list[torch.Tensor], columns: bool) -> np.ndarray:
    """``(C, N, N)``: the Gram matrix of each channel's ``N`` vectors (rows, or columns if ``columns``)."""
    mats = [d.detach().float() for d in deltas]
    if njit is None:
        return _gram_torch(mats, columns)
    arrays = tuple(np.ascontiguousarray(m.numpy()) for m in mats)
    return _gram_columns(arrays) if columns else _gram_rows(arrays)
