"""Properties of the closed-form vote and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.trainref import influence_votes
from iclr26.trainref._train import logits, voting_head_checkpoints


def _setup(seed=0, K=4, d=8, n=200, per_class=3):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(K, d)) * 3
    true = rng.integers(0, K, n)
    X = centers[true] + rng.normal(size=(n, d))
    noisy = np.where(rng.random(n) < 0.3, rng.integers(0, K, n), true)
    yv = np.repeat(np.arange(K), per_class)
    V = centers[yv] + rng.normal(size=(len(yv), d))
    heads = voting_head_checkpoints(X, noisy, K, epochs=30, checkpoint_every=10, n_checkpoints=3, seed=seed)
    tl = np.stack([logits(X, h) for h in heads])
    rl = np.stack([logits(V, h) for h in heads])
    return X, true, noisy, V, yv, tl, rl, K


@pytest.mark.parametrize("seed", range(5))
def test_rows_are_distributions_or_zero(seed):
    X, _, _, V, yv, tl, rl, K = _setup(seed)
    q = influence_votes(X, tl, V, yv, K, ref_logits_per_ckpt=rl)
    assert q.shape == (len(X), K) and np.all(q >= 0)
    sums = q.sum(axis=1)
    assert np.all(np.isclose(sums, 1.0) | (sums == 0))


def test_votes_point_to_true_class():
    X, true, _, V, yv, tl, rl, K = _setup(1)
    q = influence_votes(X, tl, V, yv, K, ref_logits_per_ckpt=rl)
    assert np.mean(q.argmax(axis=1) == true) > 0.8


def test_relabel_to_nearest_cluster_increases_vote():
    """Relabel mislabelled samples to the true class of their nearest reference cluster, retrain the
    head, and their vote mass on that class increases (the all-ones vote sees labels only through the
    trained head)."""
    rng = np.random.default_rng(3)
    K, d, n = 3, 5, 300
    centers = np.eye(K, d) * 1.5
    true = rng.integers(0, K, n)
    X = centers[true] + rng.normal(size=(n, d))
    yv = np.repeat(np.arange(K), 4)
    V = centers[yv] + rng.normal(size=(len(yv), d))
    noisy = true.copy()
    wrong = np.flatnonzero(true == 0)[:45]
    noisy[wrong] = 1
    nearest = np.array(
        [np.argmin([np.linalg.norm(x - V[yv == k].mean(0)) for k in range(K)]) for x in X[wrong]]
    )

    def vote(labels):
        heads = voting_head_checkpoints(X, labels, K, epochs=30, checkpoint_every=10, n_checkpoints=3, seed=0)
        return influence_votes(
            X,
            np.stack([logits(X, h) for h in heads]),
            V,
            yv,
            K,
            ref_logits_per_ckpt=np.stack([logits(V, h) for h in heads]),
        )

    before = vote(noisy)[wrong, nearest]
    fixed = noisy.copy()
    fixed[wrong] = nearest
    after = vote(fixed)[wrong, nearest]
    assert after.mean() > before.mean() + 0.2


def test_duplicating_reference_leaves_votes_unchanged():
    X, _, _, V, yv, tl, rl, K = _setup(2)
    q = influence_votes(X, tl, V, yv, K, ref_logits_per_ckpt=rl)
    q2 = influence_votes(
        X,
        tl,
        np.vstack([V, V]),
        np.concatenate([yv, yv]),
        K,
        ref_logits_per_ckpt=np.concatenate([rl, rl], axis=1),
    )
    np.testing.assert_allclose(q, q2, atol=1e-12)


def test_chunking_does_not_change_votes():
    X, _, _, V, yv, tl, rl, K = _setup(4)
    a = influence_votes(X, tl, V, yv, K, ref_logits_per_ckpt=rl, chunk_size=7)
    b = influence_votes(X, tl, V, yv, K, ref_logits_per_ckpt=rl)
    np.testing.assert_allclose(a, b, atol=1e-12)


def test_single_checkpoint_2d_logits():
    X, _, _, V, yv, tl, rl, K = _setup(0)
    a = influence_votes(X, tl[0], V, yv, K, ref_logits_per_ckpt=rl[0])
    b = influence_votes(X, tl[:1], V, yv, K, ref_logits_per_ckpt=rl[:1])
    np.testing.assert_array_equal(a, b)


def test_missing_class_raises_unless_allowed():
    X, _, _, V, yv, tl, rl, K = _setup(0)
    keep = yv != 2
    with pytest.raises(ValueError, match="ref_labels.*class"):
        influence_votes(X, tl, V[keep], yv[keep], K, ref_logits_per_ckpt=rl[:, keep])
    with pytest.warns(UserWarning, match="no reference"):
        q = influence_votes(
            X, tl, V[keep], yv[keep], K, ref_logits_per_ckpt=rl[:, keep], allow_missing_classes=True
        )
    assert np.all(q[:, 2] == 0)


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda a: a.update(ref_labels=np.where(a["ref_labels"] == 0, 9, a["ref_labels"])), "ref_labels"),
        (
            lambda a: a.update(train_emb=np.where(np.eye(*a["train_emb"].shape) > 0, np.nan, a["train_emb"])),
            "train_emb",
        ),
        (lambda a: a.update(ref_emb=a["ref_emb"][:, :3]), "ref_emb"),
        (
            lambda a: a.update(train_logits_per_ckpt=a["train_logits_per_ckpt"][:, :5]),
            "train_logits_per_ckpt",
        ),
        (lambda a: a.update(ref_logits_per_ckpt=a["ref_logits_per_ckpt"][:2]), "ref_logits_per_ckpt"),
        (lambda a: a.update(ref_labels=a["ref_labels"][:-1]), "ref_labels"),
        (lambda a: a.update(n_classes=1), "n_classes"),
    ],
)
def test_bad_input(mutate, match):
    X, _, _, V, yv, tl, rl, K = _setup(0)
    args = dict(
        train_emb=X, train_logits_per_ckpt=tl, ref_emb=V, ref_labels=yv, n_classes=K, ref_logits_per_ckpt=rl
    )
    mutate(args)
    with pytest.raises(ValueError, match=match):
        influence_votes(**args)
