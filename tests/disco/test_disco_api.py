"""DISCO's public API: input validation, invariances, behaviour the paper describes, mid-size exactness."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.cluster.hierarchy import cophenet, linkage
from scipy.spatial.distance import pdist, squareform
from sklearn.cluster import DBSCAN
from sklearn.datasets import make_blobs, make_moons
from sklearn.metrics import silhouette_samples

from iclr26.disco import disco_samples, disco_score
from iclr26.disco.experiment import force_noise_to_nearest_cluster, make_density_clusters


@pytest.fixture(scope="module")
def moons():
    X, y = make_moons(n_samples=300, noise=0.05, random_state=0)
    rng = np.random.default_rng(0)
    noise = rng.uniform(X.min(0) - 0.5, X.max(0) + 0.5, size=(30, 2))
    return np.vstack([X, noise]), np.concatenate([y, np.full(30, -1)])


@pytest.mark.parametrize(
    ("X", "labels", "kwargs", "match"),
    [
        (np.zeros(10), np.zeros(10), {}, "X must be 2-D"),
        (np.full((10, 2), np.nan), np.zeros(10), {}, "NaN or infinite"),
        (np.array([["a", "b"]] * 10), np.zeros(10), {}, "X must be numeric"),
        (np.zeros((10, 0)), np.zeros(10), {}, "at least one feature"),
        (np.zeros((2, 2)), np.zeros(2), {"min_points": 2}, "at least 3 row"),
        (np.zeros((10, 2)), np.zeros(9), {}, "labels must have length 10"),
        (np.zeros((10, 2)), np.zeros((10, 1)), {}, "labels must be 1-D"),
        (np.zeros((10, 2)), np.full(10, 0.5), {}, "labels must hold integers"),
        (np.zeros((10, 2)), np.zeros(10), {"min_points": 1}, "min_points must be >= 2"),
        (np.zeros((10, 2)), np.zeros(10), {"min_points": 10}, "min_points must be <= 9"),
        (np.zeros((10, 2)), np.zeros(10), {"min_points": 5.0}, "min_points must be an integer"),
        (np.zeros((10, 2)), np.zeros(10), {"min_points": True}, "min_points must be an integer"),
    ],
)
def test_bad_input_raises(X, labels, kwargs, match):
    with pytest.raises(ValueError, match=match):
        disco_samples(X, labels, **kwargs)


def test_float_labels_and_lists_accepted(moons):
    X, y = moons
    assert disco_score(X.tolist(), y.astype(float).tolist()) == pytest.approx(disco_score(X, y), abs=1e-12)


def test_range_and_type(moons):
    X, y = moons
    s = disco_samples(X, y)
    assert s.dtype == np.float64 and s.shape == (len(X),)
    assert np.all(s >= -1) and np.all(s <= 1)
    assert isinstance(disco_score(X, y), float)


def test_invariances(moons):
    X, y = moons
    base = disco_samples(X, y)
    rng = np.random.default_rng(1)
    perm = rng.permutation(len(X))
    np.testing.assert_allclose(disco_samples(X[perm], y[perm]), base[perm], atol=1e-12)
    relabel = np.where(y == 0, 7, np.where(y == 1, 3, -1))
    np.testing.assert_allclose(disco_samples(X, relabel), base, atol=1e-12)
    theta = 0.7
    R = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    np.testing.assert_allclose(disco_samples(3.0 * X @ R.T + 5.0, y), base, atol=1e-9)


def test_edge_case_values(moons):
    X, y = moons
    np.testing.assert_array_equal(disco_samples(X, np.full(len(X), -1)), -1.0)
    np.testing.assert_array_equal(disco_samples(X, np.zeros(len(X), dtype=int)), 0.0)
    s = disco_samples(X, np.arange(len(X)))  # all singletons
    np.testing.assert_array_equal(s, 0.0)


def test_true_moons_beat_straight_cut(moons):
    X, y = moons
    cut = (X[:, 0] > 0.5).astype(int)
    assert disco_score(X, y) > disco_score(X, cut) + 0.2


def test_correct_noise_beats_forced_and_wrong_noise(moons):
    X, y = moons
    forced = force_noise_to_nearest_cluster(X, y)
    assert (forced != -1).all()
    assert disco_score(X, y) > disco_score(X, forced)
    wrong = y.copy()
    wrong[np.flatnonzero(y != -1)[::8]] = -1  # dense cluster points called noise
    assert disco_score(X, y) > disco_score(X, wrong)
    s = disco_samples(X, wrong)
    assert s[(wrong == -1) & (y != -1)].mean() < 0  # they are penalised individually


def test_matches_scipy_cophenetic_reference_mid_size():
    """n = 2,000 with dozens of DBSCAN clusters: dc distances as cophenetic distances of the single
    linkage of the full mutual-reachability matrix (scipy), silhouette by sklearn."""
    X, _ = make_blobs(n_samples=2000, centers=6, cluster_std=1.2, random_state=3)
    labels = DBSCAN(eps=0.25, min_samples=4).fit_predict(X)
    assert len(np.unique(labels)) > 10 and (labels == -1).any()
    mp = 5
    D = squareform(pdist(X))
    core = np.partition(D, mp - 1, axis=1)[:, mp - 1]
    R = np.maximum(D, np.maximum.outer(core, core))
    np.fill_diagonal(R, 0)
    dc = squareform(cophenet(linkage(squareform(R, checks=False), "single")))
    noise = labels == -1
    expected = np.empty(len(X))
    expected[~noise] = silhouette_samples(dc[np.ix_(~noise, ~noise)], labels[~noise], metric="precomputed")
    ids = np.unique(labels[~noise])
    maxcore = {c: core[labels == c].max() for c in ids}
    p_sparse = np.min([(core[noise] - maxcore[c]) / np.maximum(core[noise], maxcore[c]) for c in ids], axis=0)
    near = [dc[np.ix_(noise, labels == c)].min(1) for c in ids]
    p_far = np.min(
        [(near[i] - maxcore[c]) / np.maximum(near[i], maxcore[c]) for i, c in enumerate(ids)], axis=0
    )
    expected[noise] = np.minimum(p_sparse, p_far)
    np.testing.assert_allclose(disco_samples(X, labels, mp), expected, rtol=0, atol=1e-9)


def test_density_generator_shapes():
    X, y = make_density_clusters(400, np.random.default_rng(0), n_clusters=3)
    assert X.shape == (400, 2) and y.shape == (400,)
    assert set(np.unique(y)) == {-1, 0, 1, 2}
