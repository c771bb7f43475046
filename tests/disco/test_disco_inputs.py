"""DISCO at the input boundary: extreme magnitudes, label forms, noise strategies, public parts."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse
from sklearn.datasets import make_moons

from iclr26.disco import DCTree, dc_tree, disco_components, disco_samples, disco_score


@pytest.fixture(scope="module")
def moons():
    X, y = make_moons(n_samples=200, noise=0.06, random_state=0)
    rng = np.random.default_rng(0)
    noise = rng.uniform(X.min(0) - 0.5, X.max(0) + 0.5, size=(25, 2))
    return np.vstack([X, noise]), np.concatenate([y, np.full(25, -1)])


@pytest.mark.parametrize("factor", [1e200, 1e-200, 1e150, 2.0**600])
def test_extreme_magnitudes_give_the_true_scores(moons, factor):
    """Squared distances of X * 1e200 overflow float64 and those of X * 1e-200 underflow; both must
    score exactly as X does (DISCO is scale-invariant), not 0 with warnings."""
    X, y = moons
    base = disco_samples(X, y)
    with np.errstate(all="raise"):
        got = disco_samples(X * factor, y)
    np.testing.assert_allclose(got, base, rtol=0, atol=1e-12)
    assert disco_score(X * factor, y) == pytest.approx(disco_score(X, y), abs=1e-12)
    assert abs(disco_score(X, y)) > 0.1  # the comparison is not 0 == 0


def test_dc_tree_of_huge_data_is_in_original_units():
    X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0], [12.0]])
    np.testing.assert_allclose(dc_tree(X * 1e200, 2).dc_to(0), dc_tree(X, 2).dc_to(0) * 1e200, rtol=1e-15)
    with pytest.raises(ValueError, match="exceed the float64 range"):
        dc_tree(np.array([[-1.0], [-0.95], [-0.9], [0.9], [0.95], [1.0]]) * 1e308, 2)


def test_float_labels_beyond_int64_stay_distinct(moons):
    """1e20 and 2e20 overflow an int64 cast into one value; they are two clusters."""
    X, y = moons
    big = np.where(y == 0, 1e20, np.where(y == 1, 2e20, -1.0))
    np.testing.assert_allclose(disco_samples(X, big), disco_samples(X, y), rtol=0, atol=1e-12)
    huge_ints = np.array([10**30 if v == 0 else (2 * 10**30 if v == 1 else -1) for v in y], dtype=object)
    with pytest.raises(ValueError, match="too large for int64"):
        disco_samples(X, huge_ints)


def test_string_labels_like_silhouette(moons):
    X, y = moons
    names = np.where(y == 0, "upper", np.where(y == 1, "lower", "noise"))
    np.testing.assert_allclose(disco_samples(X, names, noise_label="noise"), disco_samples(X, y), atol=1e-12)
    np.testing.assert_allclose(disco_samples(X, names.tolist(), noise_label="noise"), disco_samples(X, y))
    # without naming the noise label, "noise" is a third cluster
    three = np.where(y == -1, 2, y)
    np.testing.assert_allclose(disco_samples(X, names), disco_samples(X, three), atol=1e-12)


@pytest.mark.parametrize(
    ("X", "labels", "kwargs", "match"),
    [
        (np.zeros((10, 2), dtype=complex), np.zeros(10), {}, "X must be real; got complex"),
        (sparse.random(10, 3, density=0.5, format="csr", random_state=0), np.zeros(10), {}, "sparse"),
        (np.zeros((10, 2), dtype=bool), np.zeros(10), {}, "X must be numeric"),
        (np.zeros((10, 2)), np.full(10, np.nan), {}, "labels must be finite"),
        (np.zeros((10, 2)), np.zeros(10, dtype=complex), {}, "labels must hold integers or strings"),
        (np.zeros((10, 2)), np.array([1, "a"] * 5, dtype=object), {}, "mixed objects"),
        (np.zeros((10, 2)), np.zeros(10), {"noise_strategy": "drop"}, "noise_strategy must be one of"),
        (np.zeros((10, 2)), np.r_[np.full(8, -1), 0, 0], {"noise_strategy": "filter"}, "leaves 2"),
        (np.zeros((10, 2)), np.full(10, -1), {"noise_strategy": "nearest_cluster"}, "at least one clustered"),
    ],
)
def test_bad_input_raises(X, labels, kwargs, match):
    with pytest.raises(ValueError, match=match):
        disco_samples(X, labels, **kwargs)


def test_noise_strategies_match_their_relabelling(moons):
    """clustpy's noise_strategy: each equals DISCO of the relabelled (or filtered) data."""
    X, y = moons
    noise = y == -1
    assert disco_score(X, y, noise_strategy="keep") == disco_score(X, y)
    one = np.where(noise, 2, y)
    np.testing.assert_array_equal(disco_samples(X, y, noise_strategy="one_cluster"), disco_samples(X, one))
    single = y.copy()
    single[noise] = 2 + np.arange(noise.sum())
    np.testing.assert_array_equal(disco_samples(X, y, noise_strategy="singletons"), disco_samples(X, single))
    filt = disco_samples(X, y, noise_strategy="filter")
    assert filt.shape == ((~noise).sum(),)
    np.testing.assert_array_equal(filt, disco_samples(X[~noise], y[~noise]))
    from iclr26.disco.experiment import force_noise_to_nearest_cluster

    forced = force_noise_to_nearest_cluster(X, y)
    nearest = disco_samples(X, y, noise_strategy="nearest_cluster")
    np.testing.assert_array_equal(nearest, disco_samples(X, forced))


def test_components_and_public_tree(moons, reference):
    X, y = moons
    parts = disco_components(X, y, min_points=5)
    noise = y == -1
    np.testing.assert_array_equal(parts.samples, disco_samples(X, y))
    np.testing.assert_array_equal(parts.is_noise, noise)
    assert np.isnan(parts.p_sparse[~noise]).all() and np.isnan(parts.p_far[~noise]).all()
    np.testing.assert_array_equal(parts.samples[noise], np.minimum(parts.p_sparse, parts.p_far)[noise])
    assert parts.score == pytest.approx(disco_score(X, y))
    # p_sparse from the dense reference's core distances
    core, dc = reference.core_and_dc(X, 5)
    maxcore = [core[y == c].max() for c in (0, 1)]
    expect = np.min([(core[noise] - m) / np.maximum(core[noise], m) for m in maxcore], axis=0)
    np.testing.assert_allclose(parts.p_sparse[noise], expect, atol=1e-12)
    assert isinstance(parts.tree, DCTree)
    np.testing.assert_allclose(parts.tree.dc_matrix(), dc, atol=1e-12)
    np.testing.assert_allclose(dc_tree(X, 5).core, core, atol=1e-12)
    np.testing.assert_allclose(dc_tree(X, 5).dc_to(3), dc[3], atol=1e-12)
    assert disco_components(X, np.zeros(len(X), dtype=int)).tree is None
