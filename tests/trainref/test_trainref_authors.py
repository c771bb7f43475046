"""Agreement with the authors' hook-based code (github.com/xaimm/TrainRef), run from a checkout outside
this repository: set ICLR26_TRAINREF_AUTHORS (see authors.py); skipped without it.

The authors compute in float32; their path is run with torch's default dtype set to float64 so that the
comparison tests the algorithm, not float32 rounding (which alone moves votes by up to ~1e-4 when a
reference is predicted with confidence near 1; measured in the float32 test below)."""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest
from authors import authors_dir, load_authors

pytestmark = pytest.mark.skipif(authors_dir() is None, reason="ICLR26_TRAINREF_AUTHORS not set")


def _authors_votes(a, X, y, V, yv, heads, K):
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    clf = a.MLPClassifier(X.shape[1], K, num_layers=1)
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, (W, b) in enumerate(heads):
            state = {"classifier.0.weight": torch.tensor(W), "classifier.0.bias": torch.tensor(b)}
            path = os.path.join(tmp, f"checkpoint_{10 * (i + 1)}.pt")
            torch.save({"model": state}, path)
            paths.append(path)
        dt = torch.get_default_dtype()
        tl = DataLoader(TensorDataset(torch.tensor(X, dtype=dt), torch.tensor(y)), batch_size=1000)
        vl = DataLoader(TensorDataset(torch.tensor(V, dtype=dt), torch.tensor(yv)), batch_size=1000)
        out = a.utils.get_influence_scores(clf, tl, vl, torch.nn.CrossEntropyLoss(), paths, num_classes=K)
    _, inf_vote = a.get_voting_results_optimized(
        np.arange(len(X)), out[4], out[1], [(None, int(c)) for c in yv], np.arange(len(V)), K
    )
    return inf_vote


def _case(seed):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(2, 12))
    d = int(rng.integers(3, 40))
    n = int(rng.integers(20, 400))
    m = int(rng.integers(K, 5 * K + 1))
    C = int(rng.integers(1, 4))
    centers = rng.normal(size=(K, d)) * 2
    y = rng.integers(0, K, n)
    X = centers[y] + rng.normal(size=(n, d))
    yv = np.concatenate([np.arange(K), rng.integers(0, K, m - K)])
    V = centers[yv] + rng.normal(size=(m, d))
    heads = [(rng.normal(size=(K, d)) * 0.3, rng.normal(size=K) * 0.3) for _ in range(C)]
    return X.astype(np.float32).astype(float), y, V.astype(np.float32).astype(float), yv, heads, K


@pytest.fixture(scope="module")
def authors64():
    import torch

    a = load_authors()
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield a
    torch.set_default_dtype(old)


@pytest.mark.parametrize("seed", range(20))
def test_votes_equal_authors_hook_path(authors64, seed):
    from iclr26.trainref import influence_votes

    X, y, V, yv, heads, K = _case(seed)
    ours = influence_votes(
        X,
        np.stack([X @ W.T + b for W, b in heads]),
        V,
        yv,
        K,
        ref_logits_per_ckpt=np.stack([V @ W.T + b for W, b in heads]),
    )
    theirs = _authors_votes(authors64, X, y, V, yv, heads, K)
    np.testing.assert_allclose(ours, theirs, atol=1e-5, rtol=0)


def test_votes_float32_authors_within_1e4():
    import torch

    a = load_authors()
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)
    X, y, V, yv, heads, K = _case(100)
    heads32 = [(W.astype(np.float32), b.astype(np.float32)) for W, b in heads]
    from iclr26.trainref import influence_votes

    ours = influence_votes(
        X,
        np.stack([X @ W.T + b for W, b in heads32]),
        V,
        yv,
        K,
        ref_logits_per_ckpt=np.stack([V @ W.T + b for W, b in heads32]),
    )
    try:
        theirs = _authors_votes(a, X, y, V, yv, heads32, K)
    finally:
        torch.set_default_dtype(old)
    assert np.abs(ours - theirs).max() < 1e-4


def test_masks_equal_authors_script(authors64):
    """One round of TrainRef against the authors' train_script.py steps (their vote, the 0.5 split,
    scipy Mahalanobis with the 95th percentile of D_ref, their compute_knn_distances with the 95th
    percentile of a calibration set) on the same head checkpoints."""
    from scipy.linalg import inv
    from scipy.spatial.distance import mahalanobis

    from iclr26.trainref import TrainRef
    from iclr26.trainref._train import voting_head_checkpoints

    rng = np.random.default_rng(7)
    K, d, n = 4, 6, 600
    centers = rng.normal(size=(K, d)) * 3
    true = rng.integers(0, K, n)
    X = centers[true] + rng.normal(size=(n, d))
    X[:20] += 12  # some far / OOD rows
    y = np.where(rng.random(n) < 0.4, rng.integers(0, K, n), true)
    yv = np.repeat(np.arange(K), 5)
    V = centers[yv] + rng.normal(size=(len(yv), d))
    calib = centers[rng.integers(0, K, 200)] + rng.normal(size=(200, d))

    est = TrainRef(n_rounds=1, head_epochs=6, checkpoint_every=2, keep_zero_votes=True, random_state=3).fit(
        X, y, V, yv, calib
    )
    heads = voting_head_checkpoints(X, y, K, epochs=6, checkpoint_every=2, n_checkpoints=3, seed=3)
    a = authors64
    votes = _authors_votes(a, X, y, V, yv, heads, K)
    np.testing.assert_allclose(est.soft_labels_, votes, atol=1e-5, rtol=0)
    clean = votes[np.arange(n), y] >= 0.5
    feats = X[clean]
    mean, cov_inv = feats.mean(axis=0), inv(np.cov(feats, rowvar=False))
    dist = np.array([mahalanobis(s, mean, cov_inv) for s in X])
    thr = np.percentile([mahalanobis(s, mean, cov_inv) for s in V], 95)
    ood = dist > thr
    knn = a.compute_knn_distances(X, V, k=10)
    far = knn >= np.percentile(a.compute_knn_distances(calib, V, k=10), 95)
    np.testing.assert_array_equal(est.clean_mask_, clean)
    np.testing.assert_array_equal(est.noisy_mask_, ~clean)
    np.testing.assert_array_equal(est.ood_mask_, ood)
    np.testing.assert_array_equal(est.far_mask_, far)
    expected = np.concatenate(
        [
            np.setdiff1d(np.flatnonzero(clean), np.flatnonzero(ood)),
            np.intersect1d(np.setdiff1d(np.flatnonzero(~far), np.flatnonzero(ood)), np.flatnonzero(~clean)),
        ]
    )
    np.testing.assert_array_equal(est.train_index_, expected)
    assert ood.any() and far.any() and clean.any()
