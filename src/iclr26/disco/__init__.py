"""DISCO: a Density-based Internal Score for Clusterings with nOise (ICLR 2026).

DISCO rates every point of a clustering, noise included, in [-1, 1]:

- a clustered point gets the silhouette coefficient computed on *density-connectivity* (dc)
  distances instead of Euclidean ones, so clusters of arbitrary shape are judged by whether they are
  density-connected and density-separated;
- a noise point (label ``-1``) gets ``min(p_sparse, p_far)``: ``p_sparse`` is high when the point
  lies in a sparser region than every cluster (its core distance exceeds each cluster's largest core
  distance), ``p_far`` when it is far, in dc distance, from every cluster.

The score of a clustering is the mean over all points. Edge cases follow the authors: only noise
scores -1 everywhere; one cluster without noise scores 0; with one cluster plus noise, the noise
points act as singleton clusters for the clustered points' silhouette; singleton clusters score 0.

Unlike the authors' code, which builds the full n x n dc-distance matrix, this implementation never
materialises it: dc distances are merge heights of the single-linkage tree of the
mutual-reachability minimum spanning tree, and the per-point sums the silhouette needs are
accumulated on that tree in O(n) memory (see :mod:`iclr26.disco._dctree`).

References
----------
DISCO: Internal Evaluation of Density-Based Clustering. ICLR 2026
(authors' code: github.com/pasiweber/DISCO, also ``clustpy.metrics.disco_score``).
A. Beer et al., "Connecting the Dots -- Density-Connectivity Distance unifies DBSCAN, k-Center and
Spectral Clustering", KDD 2023 (the dc distance).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..validation import check_array, check_int, check_labels
from ._score import disco_pointwise

__all__ = ["disco_samples", "disco_score"]


def _validate(X: Any, labels: Any, min_points: Any) -> tuple[np.ndarray, np.ndarray, int]:
    X = check_array(X, "X", ndim=2, min_rows=3)
    if X.shape[1] < 1:
        raise ValueError(f"X must have at least one feature (column), got shape {X.shape}")
    labels = check_labels(labels, X.shape[0], "labels")
    n = X.shape[0]
    min_points = check_int(min_points, "min_points", minimum=2, maximum=n - 1)
    return np.ascontiguousarray(X), labels, min_points


def disco_samples(X: Any, labels: Any, min_points: int = 5) -> np.ndarray:
    """DISCO score of every sample.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data (finite numbers, at least 3 samples), Euclidean distance.
    labels : array-like of shape (n_samples,)
        Integer cluster labels; ``-1`` marks noise, every other value is a cluster.
    min_points : int, default=5
        The density parameter of the dc distance: the core distance of a point is the distance to
        its ``min_points``-th nearest neighbour, the point itself counted. ``2 <= min_points < n``.

    Returns
    -------
    scores : ndarray of shape (n_samples,)
        Values in [-1, 1]: for clustered samples the silhouette on dc distances, for noise samples
        ``min(p_sparse, p_far)``.

    Raises
    ------
    ValueError
        If ``X`` is not a 2-D finite numeric array with at least 3 rows and 1 column, ``labels`` is
        not 1-D integer of the same length, or ``min_points`` is not an integer in ``[2, n - 1]``.

    Notes
    -----
    Time about O(n log n + n * k) for ``k`` clusters in low dimensions (KD-tree Boruvka MST, via
    ``hdbscan``); without ``hdbscan`` or above 20 dimensions the MST is built with Prim's algorithm in
    O(n^2 d) time. Memory is O(n d) either way.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> X, y = make_moons(n_samples=200, noise=0.05, random_state=0)
    >>> float(disco_samples(X, y).mean()) > 0.5
    True
    """
    X, labels, min_points = _validate(X, labels, min_points)
    return disco_pointwise(X, labels, min_points)


def disco_score(X: Any, labels: Any, min_points: int = 5) -> float:
    """Mean DISCO score over all samples (noise included); see :func:`disco_samples`.

    The best value is 1, the worst -1.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> X, y = make_moons(n_samples=200, noise=0.05, random_state=0)
    >>> disco_score(X, y) > disco_score(X, (X[:, 0] > 0.5).astype(int))
    True
    """
    return float(np.mean(disco_samples(X, labels, min_points)))
