"""TrainRef (ICLR 2026): training-time label curation into class distributions, guided by a small
extrinsic reference set D_ref.

- :func:`influence_votes`: the authors' all-ones influence vote in closed form, chunked;
- :class:`TrainRef`: the full curation (vote, clean split, OOD and far filters, reference augmentation,
  co-evolving backbone), scikit-learn style;
- metrics: accuracy, ECE, class-wise ECE, NLL, Brier, detection scores, selected-clean precision, JS;
- :mod:`iclr26.trainref.baselines`: the paper's baselines on the same head budget;
- :mod:`iclr26.trainref.data`: the embedded data (mnist_5k, digits), noise models, blended images.

See docs/trainref.md.
"""

from __future__ import annotations

import numpy as np

from ..validation import check_array, check_bool, check_int, check_labels
from ._estimator import (
    CuratedDataset,
    TrainRef,
    check_in_range,
    check_ref_classes,
    check_row_norms,
)
from ._metrics import (
    accuracy,
    brier,
    classwise_ece,
    detection_scores,
    expected_calibration_error,
    js_divergence,
    nll,
    reliability_curve,
    selected_clean_precision,
)
from ._votes import class_influence, votes_from_influence

__all__ = [
    "CuratedDataset",
    "TrainRef",
    "accuracy",
    "brier",
    "classwise_ece",
    "detection_scores",
    "expected_calibration_error",
    "influence_votes",
    "js_divergence",
    "nll",
    "reliability_curve",
    "selected_clean_precision",
]


def _check_logits(logits, name: str, n: int, n_classes: int) -> np.ndarray:
    arr = check_array(logits, name, ndim=None)
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3 or arr.shape[1:] != (n, n_classes):
        raise ValueError(f"{name} must be (n_checkpoints, {n}, {n_classes}), got shape {arr.shape}")
    return arr


def influence_votes(
    train_emb,
    train_logits_per_ckpt,
    ref_emb,
    ref_labels,
    n_classes: int,
    *,
    ref_logits_per_ckpt,
    allow_missing_classes: bool = False,
    chunk_size: int = 4096,
) -> np.ndarray:
    """TrainRef's all-ones influence vote of each training sample over the classes.

    For a linear head with cross-entropy, the authors' hook-based score of a training sample ``x`` on a
    reference ``v`` (cosine of embeddings times cosine of per-sample weight gradients, the training
    sample's gradient taken for the all-ones target) is, per checkpoint,
    ``cos(e_x, e_v)^2 * cos(K p_x - 1, p_v - onehot(y_v))`` with ``p = softmax(logits)``. It is averaged
    over checkpoints and over the references of each class, L2-normalised per row, negated, clipped at
    0 and renormalised; rows with no positive entry stay all zero.

    Parameters
    ----------
    train_emb : (n, d) embeddings of the training samples (the head's inputs).
    train_logits_per_ckpt : (C, n, K) head logits of the training samples at C checkpoints
        (a single (n, K) array is one checkpoint).
    ref_emb : (m, d) embeddings of the reference samples.
    ref_labels : (m,) their labels in [0, K).
    n_classes : K.
    ref_logits_per_ckpt : (C, m, K) head logits of the reference samples at the same checkpoints.
    allow_missing_classes : accept a reference set without some class (zero vote for it) instead of
        raising ``ValueError``.
    chunk_size : training rows per chunk; memory is O(chunk_size x m).

    Returns
    -------
    (n, K) array: each row a distribution over classes, or all zero.

    References
    ----------
    ``utils.get_influence_scores`` and ``train_script.get_voting_results_optimized`` of
    github.com/xaimm/TrainRef.
    """
    n_classes = check_int(n_classes, "n_classes", minimum=2)
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    train_emb = check_array(train_emb, "train_emb")
    ref_emb = check_array(ref_emb, "ref_emb")
    check_row_norms(train_emb, "train_emb")
    check_row_norms(ref_emb, "ref_emb")
    allow_missing_classes = check_bool(allow_missing_classes, "allow_missing_classes")
    if ref_emb.shape[1] != train_emb.shape[1]:
        raise ValueError(
            f"ref_emb must have {train_emb.shape[1]} columns like train_emb, got {ref_emb.shape[1]}"
        )
    ref_labels = check_labels(ref_labels, len(ref_emb), "ref_labels")
    check_in_range(ref_labels, n_classes, "ref_labels")
    check_ref_classes(ref_labels, n_classes, allow_missing_classes)
    train_logits = _check_logits(train_logits_per_ckpt, "train_logits_per_ckpt", len(train_emb), n_classes)
    ref_logits = _check_logits(ref_logits_per_ckpt, "ref_logits_per_ckpt", len(ref_emb), n_classes)
    if len(ref_logits) != len(train_logits):
        raise ValueError(
            f"ref_logits_per_ckpt must have as many checkpoints as train_logits_per_ckpt "
            f"({len(train_logits)}), got {len(ref_logits)}"
        )
    inf = class_influence(train_emb, train_logits, ref_emb, ref_logits, ref_labels, n_classes, chunk_size)
    return votes_from_influence(inf)
