"""A dense O(n^2)-memory reference for DISCO, following the authors' definition step by step.

It shares no code with ``iclr26.disco``: Euclidean distances from ``scipy.spatial.distance.pdist``,
core distances by partitioning each row (the point itself included), mutual reachability as a full
matrix, dc distances as all-pairs minimax path lengths by a Floyd-Warshall sweep (no spanning tree),
``sklearn.metrics.silhouette_samples`` on the dc matrix, and ``p_sparse`` / ``p_far`` by explicit
loops over clusters, with the authors' edge cases.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform
from sklearn.metrics import silhouette_samples


def ref_core_and_dc(X: np.ndarray, min_points: int) -> tuple[np.ndarray, np.ndarray]:
    D = squareform(pdist(X, metric="euclidean"))
    core = np.partition(D, min_points - 1, axis=1)[:, min_points - 1]
    R = np.maximum(D, np.maximum.outer(core, core))
    np.fill_diagonal(R, 0.0)
    M = R.copy()
    for k in range(M.shape[0]):  # minimax (bottleneck) shortest paths
        np.minimum(M, np.maximum(M[:, k : k + 1], M[k : k + 1, :]), out=M)
    return core, M


def ref_p_cluster(dc: np.ndarray, labels: np.ndarray) -> np.ndarray:
    n = len(labels)
    if n == 1:
        return np.zeros(1)
    k = len(set(labels.tolist()))
    if k == 1 or k == n:
        return np.zeros(n)
    return silhouette_samples(dc, labels, metric="precomputed")


def ref_p_noise(core: np.ndarray, dc: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    noise = labels == -1
    p_sparse = np.full(noise.sum(), np.inf)
    p_far = np.full(noise.sum(), np.inf)
    for c in sorted(set(labels[~noise].tolist())):
        max_core = core[labels == c].max()
        num = core[noise] - max_core
        den = np.maximum(core[noise], max_core)
        p_sparse = np.minimum(p_sparse, np.divide(num, den, out=np.zeros_like(num), where=den != 0))
        nearest = dc[np.ix_(noise, labels == c)].min(axis=1)
        num = nearest - max_core
        den = np.maximum(nearest, max_core)
        p_far = np.minimum(p_far, np.divide(num, den, out=np.zeros_like(num), where=den != 0))
    return p_sparse, p_far


def ref_disco_samples(X: np.ndarray, labels: np.ndarray, min_points: int = 5) -> np.ndarray:
    labels = np.asarray(labels).astype(np.int64)
    X = np.asarray(X, dtype=np.float64)
    n = len(X)
    label_set = set(labels.tolist())
    if label_set == {-1}:
        return np.full(n, -1.0)
    if len(label_set) == 1:
        return np.zeros(n)
    core, dc = ref_core_and_dc(X, min_points)
    noise = labels == -1
    out = np.empty(n)
    if len(label_set) == 2 and -1 in label_set:
        relabelled = labels.copy()
        relabelled[noise] = labels.max() + 1 + np.arange(noise.sum())  # noise -> singleton clusters
        out[~noise] = ref_p_cluster(dc, relabelled)[~noise]
    else:
        out[~noise] = ref_p_cluster(dc[np.ix_(~noise, ~noise)], labels[~noise])
    if noise.any():
        out[noise] = np.minimum(*ref_p_noise(core, dc, labels))
    return out


@pytest.fixture(scope="session")
def reference():
    """The dense reference functions."""

    class _Ref:
        core_and_dc = staticmethod(ref_core_and_dc)
        disco_samples = staticmethod(ref_disco_samples)

    return _Ref
