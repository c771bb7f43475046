"""The compiled KD-tree Borůvka MST against Prim's (the exact O(n^2) reference) and the method choice."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from iclr26.disco import MST_METHODS, dc_tree, disco_samples
from iclr26.disco._dctree import _mst_prim, core_distances, mutual_reachability_mst, resolve_mst_method

pytest.importorskip("numba")
from iclr26.disco._boruvka import boruvka_mst  # noqa: E402


def _clustered_plus_uniform(n, d, seed):
    X, _ = make_blobs(n_samples=n - n // 5, n_features=d, centers=3, cluster_std=0.7, random_state=seed)
    rng = np.random.default_rng(seed)
    return np.vstack([X, rng.uniform(X.min(0), X.max(0), size=(n // 5, d))])


def _data(kind, n, d, seed):
    rng = np.random.default_rng(seed)
    if kind == "gaussian":
        return rng.normal(size=(n, d))
    if kind == "clustered+uniform":
        return _clustered_plus_uniform(n, d, seed)
    if kind == "grid-ties":  # few distinct values: many exact duplicates and tied distances
        return rng.integers(0, 3, size=(n, d)).astype(float)
    if kind == "duplicated":  # every point repeated 1-4 times
        base = rng.normal(size=(max(n // 3, 2), d))
        return base[rng.integers(0, len(base), size=n)]
    raise AssertionError(kind)


@pytest.mark.parametrize("d", [1, 2, 3, 5, 10, 20, 30])
@pytest.mark.parametrize("kind", ["gaussian", "clustered+uniform", "grid-ties", "duplicated"])
def test_boruvka_weights_equal_prim(kind, d):
    """Sorted MST weights and core distances bit-identical to Prim's on the same core distances."""
    for seed, (n, mp) in enumerate([(7, 5), (60, 2), (300, 5), (500, 11)]):
        X = _data(kind, n, d, seed)
        mst, core = boruvka_mst(X, mp)
        np.testing.assert_array_equal(core, core_distances(X, mp))
        assert mst.shape == (n - 1, 3)
        np.testing.assert_array_equal(np.sort(mst[:, 2]), np.sort(_mst_prim(X, core)[:, 2]))
        # A spanning tree: n - 1 edges joining all points, weights equal to mr of the endpoints.
        i, j = mst[:, 0].astype(int), mst[:, 1].astype(int)
        assert len(np.unique(np.concatenate([i, j]))) == n or n == 1
        mr = np.maximum(np.maximum(core[i], core[j]), np.sqrt(((X[i] - X[j]) ** 2).sum(1)))
        np.testing.assert_allclose(mst[:, 2], mr, rtol=1e-13, atol=0)


@pytest.mark.parametrize("n", [2, 3, 5, 6])
def test_tiny_n_up_to_min_points(n):
    """n <= min_points (k-NN lists hold every point) and n = 2."""
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, 4))
    for mp in range(1, n + 1):
        mst, core = boruvka_mst(X, mp)
        np.testing.assert_array_equal(np.sort(mst[:, 2]), np.sort(_mst_prim(X, core)[:, 2]))


def test_all_points_identical():
    X = np.ones((50, 10))
    mst, core = boruvka_mst(X, 5)
    assert np.all(core == 0) and np.all(mst[:, 2] == 0) and mst.shape == (49, 3)


@pytest.mark.parametrize("method", ["boruvka", "hdbscan", "prim"])
def test_every_method_gives_the_same_scores(method):
    pytest.importorskip({"boruvka": "numba", "hdbscan": "hdbscan", "prim": "numpy"}[method])
    X = _clustered_plus_uniform(400, 6, 3)
    y = np.where(np.arange(400) < 320, np.arange(400) % 3, -1)
    np.testing.assert_allclose(
        disco_samples(X, y, method=method), disco_samples(X, y, method="prim"), rtol=0, atol=1e-12
    )
    tree = dc_tree(X, method=method)
    np.testing.assert_array_equal(tree.core, core_distances(X, 5))


def test_method_is_validated():
    X = np.random.default_rng(0).normal(size=(30, 2))
    y = np.arange(30) % 2
    for bad in ["kruskal", "Boruvka", None, 3]:
        with pytest.raises(ValueError, match="method must be one of"):
            disco_samples(X, y, method=bad)
        with pytest.raises(ValueError, match="method must be one of"):
            dc_tree(X, method=bad)
    assert MST_METHODS == ("auto", "boruvka", "hdbscan", "prim")


def test_auto_prefers_the_compiled_boruvka():
    assert resolve_mst_method("auto") == "boruvka"
    mst, core = mutual_reachability_mst(np.random.default_rng(1).normal(size=(40, 3)), 4)
    assert mst.shape == (39, 3) and core.shape == (40,)
