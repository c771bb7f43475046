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

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..validation import check_int
from ._dctree import MST_METHODS, DCTree, resolve_mst_method
from ._score import NOISE, disco_parts

__all__ = [
    "MST_METHODS",
    "NOISE_STRATEGIES",
    "DCTree",
    "DiscoComponents",
    "dc_tree",
    "disco_components",
    "disco_samples",
    "disco_score",
]

NOISE_STRATEGIES = ("keep", "one_cluster", "singletons", "filter", "nearest_cluster")

# Data whose largest magnitude lies outside [2**-256, 2**256] is scaled by a power of two (exact) so
# that squared distances neither overflow nor underflow; DISCO is invariant to scaling.
_SAFE_EXPONENT = 256


def _check_X(X: Any) -> np.ndarray:
    from scipy import sparse

    if sparse.issparse(X):
        raise ValueError(
            "X is a scipy sparse matrix; DISCO needs dense data (Euclidean distances on all features): "
            "pass X.toarray() if it fits in memory"
        )
    arr = np.asarray(X)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"X must be numeric, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(
            "X must be real; got complex values (DISCO uses Euclidean distances on real features: "
            "pass e.g. np.hstack([X.real, X.imag]) to use both parts)"
        )
    if arr.dtype == bool:
        raise ValueError("X must be numeric, got dtype bool")
    if arr.ndim != 2:
        raise ValueError(f"X must be 2-D, got an array of shape {arr.shape}")
    if arr.shape[0] < 3:
        raise ValueError(f"X must have at least 3 row(s), got shape {arr.shape}")
    if arr.shape[1] < 1:
        raise ValueError(f"X must have at least one feature (column), got shape {arr.shape}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.isfinite(arr).all():
        raise ValueError("X contains NaN or infinite values")
    return arr


def _safe_scale(X: np.ndarray) -> tuple[np.ndarray, int]:
    """``(X * 2**-e, e)`` with ``e`` chosen so squared distances stay finite and normal; ``e = 0`` if
    they already are. Scaling by a power of two is exact."""
    m = float(np.max(np.abs(X)))
    if m == 0.0:
        return X, 0
    e = int(np.frexp(m)[1])
    if -_SAFE_EXPONENT <= e <= _SAFE_EXPONENT:
        return X, 0
    return np.ldexp(X, -e), e


def _encode_labels(labels: Any, n: int, noise_label: Any) -> np.ndarray:
    """Labels as int64 codes: ``-1`` for noise (``== noise_label``), ``0..k-1`` for the clusters."""
    from scipy import sparse

    if sparse.issparse(labels):
        raise ValueError("labels must be a 1-D array, got a scipy sparse matrix")
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise ValueError(f"labels must be 1-D, got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"labels must have length {n} (one per sample), got {arr.shape[0]}")
    kind = arr.dtype.kind
    if kind == "O":
        if all(isinstance(v, str) for v in arr.tolist()):
            arr = arr.astype(str)
        elif all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in arr.tolist()):
            arr = np.array(arr.tolist())  # Python ints of any size
            if arr.dtype.kind == "O":
                raise ValueError("labels hold integers too large for int64; re-encode them first")
        else:
            raise ValueError("labels must hold integers or strings, got mixed objects")
        kind = arr.dtype.kind
    if kind == "f":
        if not np.isfinite(arr).all():
            raise ValueError("labels must be finite")
        if not np.all(arr == np.round(arr)):
            raise ValueError(f"labels must hold integers (or strings), got non-integer {arr.dtype} values")
    elif kind not in "iuUS":
        raise ValueError(f"labels must hold integers or strings, got dtype {arr.dtype}")
    if kind in "US":
        noise = arr == str(noise_label)
    else:
        try:
            noise = arr == noise_label
        except (TypeError, ValueError):
            noise = np.zeros(n, dtype=bool)
        noise = np.asarray(noise, dtype=bool)
        if noise.shape != (n,):
            noise = np.zeros(n, dtype=bool)
    # Encode the cluster values themselves (no cast to int: 1e20 and 2e20 stay two clusters).
    codes = np.full(n, NOISE, dtype=np.int64)
    if (~noise).any():
        codes[~noise] = np.unique(arr[~noise], return_inverse=True)[1].ravel()
    return codes


def _apply_noise_strategy(
    X: np.ndarray, codes: np.ndarray, strategy: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """clustpy's ``handle_noise`` on encoded labels; returns ``(X, codes, kept_indices)``."""
    noise = codes == NOISE
    kept = np.arange(codes.shape[0])
    if strategy == "keep" or not noise.any():
        return X, codes, kept
    k = int(codes.max()) + 1  # new cluster ids start here
    codes = codes.copy()
    if strategy == "one_cluster":
        codes[noise] = k
    elif strategy == "singletons":
        codes[noise] = k + np.arange(int(noise.sum()))
    elif strategy == "filter":
        kept = np.flatnonzero(~noise)
        if kept.size < 3:
            raise ValueError(
                f"noise_strategy='filter' leaves {kept.size} clustered point(s); DISCO needs at least 3"
            )
        return X[kept], codes[kept], kept
    elif strategy == "nearest_cluster":
        if not (~noise).any():
            raise ValueError("noise_strategy='nearest_cluster' needs at least one clustered point")
        from scipy.spatial import cKDTree

        idx = cKDTree(X[~noise]).query(X[noise], k=1)[1]
        codes[noise] = codes[~noise][idx]
    return X, codes, kept


def _prepare(X, labels, min_points, noise_strategy, noise_label, method):
    if noise_strategy not in NOISE_STRATEGIES:
        raise ValueError(f"noise_strategy must be one of {NOISE_STRATEGIES}, got {noise_strategy!r}")
    resolve_mst_method(method)
    X = _check_X(X)
    codes = _encode_labels(labels, X.shape[0], noise_label)
    X, codes, kept = _apply_noise_strategy(X, codes, noise_strategy)
    min_points = check_int(min_points, "min_points", minimum=2, maximum=X.shape[0] - 1)
    Xs, e = _safe_scale(X)
    return Xs, e, codes, kept, min_points


@dataclass(frozen=True)
class DiscoComponents:
    """DISCO per point with its parts (see :func:`disco_components`).

    Attributes
    ----------
    samples : ndarray of shape (m,)
        DISCO of every scored point (``m = n`` unless ``noise_strategy="filter"``).
    p_sparse, p_far : ndarray of shape (m,)
        The two noise terms at noise points (DISCO there is their minimum); NaN at clustered points.
    is_noise : ndarray of shape (m,), bool
    indices : ndarray of shape (m,)
        Row of ``X`` each scored point comes from.
    tree : DCTree or None
        The dc tree (heights in the units of ``X``); None in the all-noise and one-cluster-without-noise
        cases, which need no distances.
    """

    samples: np.ndarray
    p_sparse: np.ndarray
    p_far: np.ndarray
    is_noise: np.ndarray
    indices: np.ndarray
    tree: DCTree | None

    @property
    def score(self) -> float:
        """Mean DISCO over the scored points."""
        return float(np.mean(self.samples))


def disco_components(
    X: Any,
    labels: Any,
    min_points: int = 5,
    noise_strategy: str = "keep",
    noise_label: Any = -1,
    method: str = "auto",
) -> DiscoComponents:
    """DISCO of every sample together with ``p_sparse``, ``p_far`` and the dc tree.

    Same parameters as :func:`disco_samples`.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> X, y = make_moons(n_samples=200, noise=0.05, random_state=0)
    >>> y[:5] = -1
    >>> parts = disco_components(X, y)
    >>> bool(np.all(parts.samples[:5] == np.minimum(parts.p_sparse[:5], parts.p_far[:5])))
    True
    """
    Xs, e, codes, kept, min_points = _prepare(X, labels, min_points, noise_strategy, noise_label, method)
    scores, p_sparse, p_far, tree = disco_parts(Xs, codes, min_points, method)
    if tree is not None and e:
        tree._rescale(e)
    return DiscoComponents(scores, p_sparse, p_far, codes == NOISE, kept, tree)


def dc_tree(X: Any, min_points: int = 5, method: str = "auto") -> DCTree:
    """The dc tree of ``X``: dc distances, and O(n) sums and minima of them over point sets.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    min_points : int, default=5
        As in :func:`disco_samples`.
    method : {"auto", "boruvka", "hdbscan", "prim"}, default="auto"
        As in :func:`disco_samples`.

    Returns
    -------
    DCTree
        ``tree.dc_to(i)`` gives the dc distances from point ``i``, ``tree.dc_matrix()`` all of them
        (O(n^2) memory), ``tree.core`` the core distances, ``tree.height`` the merge heights.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0], [12.0]])
    >>> dc_tree(X, min_points=2).dc_to(0).tolist()
    [0.0, 1.0, 1.0, 8.0, 8.0, 8.0]
    """
    resolve_mst_method(method)
    X = _check_X(X)
    min_points = check_int(min_points, "min_points", minimum=2, maximum=X.shape[0] - 1)
    Xs, e = _safe_scale(X)
    tree = DCTree.from_data(Xs, min_points, method=method)
    if e:
        tree._rescale(e)
    return tree


def disco_samples(
    X: Any,
    labels: Any,
    min_points: int = 5,
    noise_strategy: str = "keep",
    noise_label: Any = -1,
    method: str = "auto",
) -> np.ndarray:
    """DISCO score of every sample.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data (real, finite, dense; at least 3 samples), Euclidean distance. Any finite magnitude
        is fine: data too large or too small for squared distances is rescaled by a power of two
        (DISCO is scale-invariant).
    labels : array-like of shape (n_samples,)
        Cluster labels: integers (whole-valued floats accepted) or strings, as
        ``sklearn.metrics.silhouette_score`` takes them. Values equal to ``noise_label`` mark noise;
        every other value is a cluster.
    min_points : int, default=5
        The density parameter of the dc distance: the core distance of a point is the distance to
        its ``min_points``-th nearest neighbour, the point itself counted. ``2 <= min_points < n``.
    noise_strategy : {"keep", "one_cluster", "singletons", "filter", "nearest_cluster"}, default="keep"
        As clustpy's ``disco_samples``: keep noise as noise (DISCO proper), make all noise one more
        cluster, make every noise point its own cluster, drop the noise points (the result then has
        one value per clustered sample), or give each noise point the label of its nearest clustered
        point (Euclidean).
    noise_label : default=-1
        The label that marks noise (e.g. ``"noise"`` for string labels).
    method : {"auto", "boruvka", "hdbscan", "prim"}, default="auto"
        How the minimum spanning tree of the mutual-reachability graph is built (every method gives
        the same scores; they differ in speed): ``"boruvka"``, our exact KD-tree Borůvka compiled
        with numba; ``"hdbscan"``, hdbscan's exact dual-tree Borůvka; ``"prim"``, O(n^2 d) time and
        no dependency. ``"auto"`` takes the first installed of these three, the order of their
        measured speed (see :func:`iclr26.disco._dctree.mutual_reachability_mst`).

    Returns
    -------
    scores : ndarray of shape (n_samples,)
        Values in [-1, 1]: for clustered samples the silhouette on dc distances, for noise samples
        ``min(p_sparse, p_far)``. With ``noise_strategy="filter"`` only the clustered samples.

    Raises
    ------
    ValueError
        If ``X`` is not a 2-D finite real dense array with at least 3 rows and 1 column (scipy sparse
        and complex input are rejected with their own message), ``labels`` is not 1-D of the same
        length holding integers or strings, ``min_points`` is not an integer in ``[2, n - 1]``, or
        ``noise_strategy`` or ``method`` is unknown.
    ImportError
        If ``method`` names a method whose package (numba, hdbscan) is not installed.

    Notes
    -----
    Time about O(n log n + n * k) for ``k`` clusters in low dimensions (the KD-tree Borůvka MST;
    it grows faster in high dimensions, where KD-trees prune less); with ``method="prim"`` the MST
    takes O(n^2 d) time. Memory is O(n d) either way.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> X, y = make_moons(n_samples=200, noise=0.05, random_state=0)
    >>> float(disco_samples(X, y).mean()) > 0.5
    True
    >>> names = np.where(y == 0, "upper", "lower")
    >>> bool(np.allclose(disco_samples(X, names), disco_samples(X, y)))
    True
    """
    Xs, _, codes, _, min_points = _prepare(X, labels, min_points, noise_strategy, noise_label, method)
    return disco_parts(Xs, codes, min_points, method)[0]


def disco_score(
    X: Any,
    labels: Any,
    min_points: int = 5,
    noise_strategy: str = "keep",
    noise_label: Any = -1,
    method: str = "auto",
) -> float:
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
    return float(np.mean(disco_samples(X, labels, min_points, noise_strategy, noise_label, method)))
