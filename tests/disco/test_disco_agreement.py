"""DISCO equals the dense reference (the authors' definition, O(n^2)) to 1e-9, edge cases included."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import DBSCAN, KMeans
from sklearn.datasets import make_blobs, make_moons

from iclr26.disco import disco_samples, disco_score
from iclr26.disco._dctree import DCTree
from iclr26.disco._score import disco_pointwise

TOL = 1e-9


def _blobs_noise(n=240, d=2, n_noise=40, seed=0):
    rng = np.random.default_rng(seed)
    X, y = make_blobs(n_samples=n, n_features=d, centers=3, cluster_std=0.6, random_state=seed)
    lo, hi = X.min(0), X.max(0)
    Xn = rng.uniform(lo, hi, size=(n_noise, d))
    return np.vstack([X, Xn]), np.concatenate([y, np.full(n_noise, -1)])


def _moons(n=200, seed=0):
    return make_moons(n_samples=n, noise=0.06, random_state=seed)


def _cases():
    rng = np.random.default_rng(12345)
    cases = {}
    X, y = make_blobs(n_samples=150, centers=3, random_state=1)
    cases["blobs-true"] = (X, y, 5)
    X, y = _blobs_noise(seed=2)
    cases["blobs+noise-true"] = (X, y, 5)
    Xm, ym = _moons(seed=3)
    cases["moons-true"] = (Xm, ym, 5)
    cases["moons-kmeans"] = (Xm, KMeans(2, n_init=3, random_state=0).fit_predict(Xm), 5)
    cases["moons-dbscan"] = (Xm, DBSCAN(eps=0.08, min_samples=4).fit_predict(Xm), 4)
    cases["moons-kmeans6"] = (Xm, KMeans(6, n_init=3, random_state=0).fit_predict(Xm), 7)
    # edge cases
    cases["one-cluster"] = (Xm, np.zeros(len(Xm), dtype=int), 5)
    cases["all-noise"] = (Xm, np.full(len(Xm), -1), 5)
    y1 = ym.copy()
    y1[ym == 1] = -1
    cases["one-cluster+noise"] = (Xm, y1, 5)
    y2 = np.full(len(Xm), -1)
    y2[7] = 3
    cases["one-singleton-cluster+noise"] = (Xm, y2, 5)
    cases["all-singletons"] = (Xm[:60], np.arange(60), 5)
    y3 = np.arange(60)
    y3[::3] = -1
    cases["singletons+noise"] = (Xm[:60], y3, 4)
    y4 = ym.copy()
    y4[:5] = np.arange(10, 15)  # five singleton clusters beside two clusters
    y4[5:15] = -1
    cases["clusters+singletons+noise"] = (Xm, y4, 5)
    # ties and duplicates
    G = rng.integers(0, 6, size=(150, 2)).astype(float)  # many exact duplicates, tied distances
    cases["grid-duplicates"] = (G, (G[:, 0] > 2).astype(int) - (G[:, 1] == 0), 5)
    Z = np.zeros((30, 3))
    cases["identical-points"] = (Z, np.r_[np.zeros(10), np.ones(10), -np.ones(10)].astype(int), 3)
    D = np.repeat(rng.normal(size=(12, 2)), 5, axis=0)  # 12 distinct points, 5 copies each
    cases["repeated-groups"] = (D, np.repeat(np.arange(12) % 3, 5) - (np.arange(60) % 7 == 0), 5)
    # dimensions, parameters, label forms
    X10, y10 = _blobs_noise(n=200, d=10, n_noise=30, seed=4)
    cases["10d-blobs+noise"] = (X10, y10, 5)
    cases["min_points-2"] = (Xm, ym, 2)
    cases["min_points-n-1"] = (Xm[:50], ym[:50], 49)
    cases["odd-labels"] = (Xm, np.where(ym == 0, -7, 1000), 5)
    cases["random-labels"] = (Xm, rng.integers(-1, 4, size=len(Xm)), 5)
    Xh, yh = _blobs_noise(n=40, n_noise=160, seed=5)
    cases["mostly-noise"] = (Xh, yh, 5)
    x1 = np.sort(rng.normal(size=(120, 1)), axis=0)
    cases["1d"] = (x1, (x1[:, 0] > 0).astype(int) - (np.abs(x1[:, 0]) < 0.1), 5)
    cases["two-points-cluster"] = (Xm, np.r_[0, 0, np.full(len(Xm) - 2, 1)], 5)
    return cases


CASES = _cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_dense_reference(name, reference):
    X, y, mp = CASES[name]
    expected = reference.disco_samples(X, y, mp)
    got = disco_samples(X, y, mp)
    assert got.shape == (len(X),)
    np.testing.assert_allclose(got, expected, rtol=0, atol=TOL)
    assert disco_score(X, y, mp) == pytest.approx(expected.mean(), abs=TOL)


@pytest.mark.parametrize("name", ["blobs+noise-true", "moons-dbscan", "grid-duplicates", "one-cluster+noise"])
def test_prim_fallback_matches_reference(name, reference):
    X, y, mp = CASES[name]
    got = disco_pointwise(np.asarray(X, float), np.asarray(y, np.int64), mp, method="prim")
    np.testing.assert_allclose(got, reference.disco_samples(X, y, mp), rtol=0, atol=TOL)


@pytest.mark.parametrize("method", ["boruvka", "hdbscan", "prim"])
@pytest.mark.parametrize("name", ["moons-true", "grid-duplicates", "10d-blobs+noise", "identical-points"])
def test_dc_distances_match_minimax(name, method, reference):
    pytest.importorskip({"boruvka": "numba", "hdbscan": "hdbscan", "prim": "numpy"}[method])
    X, _, mp = CASES[name]
    _, dc = reference.core_and_dc(np.asarray(X, float), mp)
    tree = DCTree.from_data(np.asarray(X, float), mp, method=method)
    np.testing.assert_allclose(tree.dc_matrix(), dc, rtol=0, atol=1e-12)


def test_tree_sums_match_dense(reference):
    X, _, mp = CASES["grid-duplicates"]
    _, dc = reference.core_and_dc(X, mp)
    tree = DCTree.from_data(X, mp)
    rng = np.random.default_rng(0)
    for _ in range(5):
        mask = rng.random(len(X)) < 0.3
        np.testing.assert_allclose(tree.sums_to(mask), dc[:, mask].sum(1), rtol=1e-12, atol=1e-12)
        m = tree.min_to(mask)
        np.testing.assert_array_equal(m[~mask], dc[np.ix_(~mask, mask)].min(1))


def test_clustpy_agreement():
    """The authors' packaged implementation, where it is installed (not a project dependency)."""
    clustpy_disco = pytest.importorskip("clustpy.metrics.internal.disco")
    for name in sorted(CASES):
        X, y, mp = CASES[name]
        if len(np.unique(y)) == len(y):
            continue  # clustpy rejects n_labels == n_samples (the DISCO repository returns zeros)
        theirs = np.asarray(clustpy_disco.disco_samples(np.asarray(X, float), y, mp), dtype=float)
        np.testing.assert_allclose(disco_samples(X, y, mp), theirs, rtol=0, atol=TOL, err_msg=name)


@pytest.mark.parametrize(("n", "d", "mp"), [(3, 1, 2), (4, 2, 3), (6, 3, 5), (40, 25, 5)])
def test_tiny_and_high_dimensional_inputs(n, d, mp, reference):
    """Smallest allowed sizes and d = 25 (more dimensions than points)."""
    rng = np.random.default_rng(n * 100 + d)
    X = rng.normal(size=(n, d))
    y = np.resize(np.array([0, 1, -1]), n)
    np.testing.assert_allclose(disco_samples(X, y, mp), reference.disco_samples(X, y, mp), rtol=0, atol=TOL)
