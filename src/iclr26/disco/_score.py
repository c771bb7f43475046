"""DISCO: silhouette on dc distances for clustered points, ``min(p_sparse, p_far)`` for noise."""

from __future__ import annotations

import numpy as np

from ._dctree import DCTree, core_distances, mutual_reachability_mst

NOISE = -1


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` with 0 where ``den == 0`` (the authors' ``np.divide(..., where=den != 0)``)."""
    out = np.zeros_like(num, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def silhouette_on_tree(tree: DCTree, labels: np.ndarray, considered: np.ndarray) -> np.ndarray:
    """Silhouette coefficient on dc distances, over the points where ``considered`` is true.

    Same conventions as ``sklearn.metrics.silhouette_samples`` with a precomputed matrix: ``a`` is
    the mean dc distance to the other members of the own cluster, ``b`` the smallest mean dc
    distance to another cluster, ``s = (b - a) / max(a, b)``, 0 where that is 0/0 and for members of
    singleton clusters. Returns an array of shape ``(n,)`` (0 outside ``considered``).
    Singleton clusters are handled together: the smallest mean distance to a singleton cluster is
    the dc distance to the nearest singleton point.
    """
    n = tree.n
    a = np.zeros(n)
    b = np.full(n, np.inf)
    ids, inverse, counts = np.unique(labels[considered], return_inverse=True, return_counts=True)
    lab = np.full(n, -1, dtype=np.int64)
    lab[considered] = inverse
    singleton_ids = np.flatnonzero(counts == 1)
    for c in np.flatnonzero(counts > 1):
        members = lab == c
        total = tree.sums_to(members)
        a[members] = total[members] / (counts[c] - 1)
        others = considered & ~members
        np.minimum(b, total / counts[c], out=b, where=others)
    if singleton_ids.size:
        single = np.isin(lab, singleton_ids)
        nearest = tree.min_to(single)
        np.minimum(b, nearest, out=b, where=considered & ~single)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = (b - a) / np.maximum(a, b)
    s = np.nan_to_num(s, nan=0.0)
    s[~considered] = 0.0
    s[np.isin(lab, singleton_ids)] = 0.0
    return s


def noise_scores(tree: DCTree, labels: np.ndarray, core: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(p_sparse, p_far)`` for the noise points (in their order), given at least one cluster.

    With ``M_c`` the largest core distance in cluster ``c``:
    ``p_sparse(x) = min_c (core(x) - M_c) / max(core(x), M_c)`` and
    ``p_far(x) = min_c (dc(x, c) - M_c) / max(dc(x, c), M_c)`` with ``dc(x, c)`` the smallest dc
    distance from ``x`` to a member of ``c``; a 0/0 ratio counts as 0.
    """
    noise = labels == NOISE
    core_noise = core[noise]
    p_sparse = np.full(core_noise.size, np.inf)
    p_far = np.full(core_noise.size, np.inf)
    for c in np.unique(labels[~noise]):
        members = labels == c
        max_core = core[members].max()
        p_sparse = np.minimum(p_sparse, _ratio(core_noise - max_core, np.maximum(core_noise, max_core)))
        nearest = tree.min_to(members)[noise]
        p_far = np.minimum(p_far, _ratio(nearest - max_core, np.maximum(nearest, max_core)))
    return p_sparse, p_far


def disco_parts(
    X: np.ndarray, labels: np.ndarray, min_points: int, method: str = "auto"
) -> tuple[np.ndarray, np.ndarray, np.ndarray, DCTree | None]:
    """DISCO per point for validated inputs (``X`` float (n, d), ``labels`` int64 (n,), noise ``-1``).

    Returns ``(scores, p_sparse, p_far, tree)``: ``p_sparse`` and ``p_far`` have shape ``(n,)`` with NaN
    at clustered points (and at every point when there is no cluster); ``tree`` is None in the
    all-noise and one-cluster-without-noise cases, which need no distances. ``method``: the MST
    method (:func:`iclr26.disco._dctree.mutual_reachability_mst`). Core distances are computed once:
    by the MST search (``"boruvka"``, ``"prim"``), or separately when there is noise (``p_sparse``
    needs them) and the MST came from ``"hdbscan"``.
    """
    n = X.shape[0]
    noise = labels == NOISE
    cluster_ids = np.unique(labels[~noise])
    p_sparse = np.full(n, np.nan)
    p_far = np.full(n, np.nan)
    if cluster_ids.size == 0:  # only noise
        return np.full(n, -1.0), p_sparse, p_far, None
    if cluster_ids.size == 1 and not noise.any():  # one cluster, no noise
        return np.zeros(n), p_sparse, p_far, None

    mst, core = mutual_reachability_mst(X, min_points, method=method)
    if core is None and noise.any():  # hdbscan's MST does not return them
        core = core_distances(X, min_points)
    tree = DCTree(n, mst, core=core)
    out = np.empty(n)
    if cluster_ids.size == 1:
        # One cluster plus noise: every noise point is its own (singleton) cluster for p_cluster.
        relabelled = labels.copy()
        relabelled[noise] = cluster_ids[0] + 1 + np.arange(int(noise.sum()))
        s = silhouette_on_tree(tree, relabelled, np.ones(n, dtype=bool))
    else:
        s = silhouette_on_tree(tree, labels, ~noise)
    out[~noise] = s[~noise]
    if noise.any():
        p_sparse[noise], p_far[noise] = noise_scores(tree, labels, core)
        out[noise] = np.minimum(p_sparse[noise], p_far[noise])
    return out, p_sparse, p_far, tree


def disco_pointwise(X: np.ndarray, labels: np.ndarray, min_points: int, method: str = "auto") -> np.ndarray:
    """DISCO per point for validated inputs (``X`` float (n, d), ``labels`` int64 (n,))."""
    return disco_parts(X, labels, min_points, method)[0]
